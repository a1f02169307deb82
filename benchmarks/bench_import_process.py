"""``trntui import`` of a big Megatron log, whole process, against a bare line read.

Generates the same 300k-iteration Megatron-LM log as ``bench_megatron_import.py`` (log interval
1, about 100 MB), then runs pairs side by side, alternating so machine noise hits both alike:

* ``trntui import PROJECT LOG --format megatron`` on a fresh project (``trntui init`` first,
  not timed): start-up, read, hash, parse, run facts, the Parquet writes;
* ``python -c "import polars; pl.read_csv(LOG, ...)"``: the cheapest whole process that gets
  the file's lines.

Prints the median of each and their ratio (target: at most 3x, on a quiet machine and with
two CPU-bound processes beside it). Run:
``python benchmarks/bench_import_process.py [PAIRS] [--busy]`` (default 5 pairs) from the
repository root; ``--busy`` runs two processes that only spin (one per core of a 2-core machine)
for the whole measurement, yardstick included.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_cli_start import USER_ENV, child_usage, trntui_command
from benchmarks.bench_megatron_import import ITERATIONS, megatron_spec
from tests import loggen

TARGET = 3.0
READ_LINES = """
import sys
import polars as pl
pl.read_csv(
    sys.argv[1],
    has_header=False,
    separator="\\x1f",
    quote_char=None,
    new_columns=["line"],
    schema={"line": pl.String},
    truncate_ragged_lines=True,
)
"""


def _timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one child process."""
    seconds, usage = child_usage(command)
    return seconds, usage.ru_utime + usage.ru_stime


def _import_once(trntui: list[str], folder: Path, log: Path, index: int) -> tuple[float, float]:
    project = folder / f"project{index}"
    subprocess.run(
        [*trntui, "init", str(project)], check=True, stdout=subprocess.DEVNULL, env=USER_ENV
    )
    return _timed([*trntui, "import", str(project), str(log), "--format", "megatron"])


SPIN = "while True: pass"


def main() -> int:
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    count = int(numbers[0]) if numbers else 5
    busy = "--busy" in sys.argv[1:]
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(2 if busy else 0)]
    try:
        return _measure(count, busy)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _measure(count: int, busy: bool) -> int:
    trntui = trntui_command()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        log = folder / "logs" / "megatron.log"
        log.parent.mkdir()
        loggen.write_megatron(log, megatron_spec())
        size_mb = log.stat().st_size / 1e6
        read = [sys.executable, "-c", READ_LINES, str(log)]
        _import_once(trntui, folder, log, -1), _timed(read)  # warm the page and bytecode caches
        ours, theirs = [], []
        for index in range(count):
            ours.append(_import_once(trntui, folder, log, index))
            theirs.append(_timed(read))
    imported, baseline = (statistics.median(w for w, _ in runs) for runs in (ours, theirs))
    cpu_ours, cpu_theirs = (statistics.median(c for _, c in runs) for runs in (ours, theirs))
    ratio = imported / baseline
    verdict = "meets" if ratio <= TARGET else "misses"
    beside = "two CPU-bound processes beside it" if busy else "nothing of its own beside it"
    print(f"log: {ITERATIONS} iterations, {size_mb:.0f} MB; {count} pairs, median seconds; "
          f"{beside}")  # fmt: skip
    print(f"trntui import (whole process):       {imported:6.3f} s  (CPU {cpu_ours:.3f} s)")
    print(f"python + pl.read_csv of its lines:   {baseline:6.3f} s  (CPU {cpu_theirs:.3f} s)")
    print(f"ratio: {ratio:.2f}x ({verdict} <= {TARGET:g}x); CPU time {cpu_ours / cpu_theirs:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
