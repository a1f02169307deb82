"""``trntui import`` of a big Megatron log, whole process, against a bare line read.

Generates the same 300k-iteration Megatron-LM log as ``bench_megatron_import.py`` (log interval
1, about 100 MB), then runs rounds of these processes in turn, so machine noise hits them alike:

* ``trntui import PROJECT LOG --format megatron`` on a fresh project (``trntui init`` first,
  not timed): start-up, read, hash, parse, run facts, the Parquet writes;
* ``python -c "import polars; pl.read_csv(LOG, ...)"``: the cheapest whole process that gets
  the file's lines;
* the floor: a process of its own doing only what an import cannot leave out, in plain Polars
  (no trntui code): start Python, import Polars, read the log once and hash it (SHA-256 is the
  run id) on a second thread, parse its iteration lines (the fast path's ``|`` split and
  values) and write that timeline to Parquet as the store keeps it (Zstandard level 1). No
  run facts, runs table, other lines, checks or locking.

Prints the median of each (wall and CPU time) and the ratios (target: trntui at most 3x the
yardstick, on a quiet machine and with two CPU-bound processes beside it); the floor's ratio
says how much of that any import must spend. Run:
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

FLOOR = """
import hashlib
import sys
import threading
from pathlib import Path

import polars as pl

data = Path(sys.argv[1]).read_bytes()
hashing = threading.Thread(target=lambda: hashlib.sha256(data).hexdigest())
hashing.start()
halves = pl.col("column_1").str.split_exact("iteration", 1)
step = halves.struct.field("field_1").str.split_exact("/", 1).struct.field("field_0")
wall = halves.struct.field("field_0").str.strip_chars(" []").str.to_datetime(
    "%Y-%m-%d %H:%M:%S.%6f", time_unit="us", strict=False, cache=False
)


def value(column, name):
    text = pl.col(column).str.strip_prefix(f" {name}:").str.strip_chars()
    return text.cast(pl.Float64, strict=False)


rows = (
    pl.scan_csv(
        data,
        has_header=False,
        separator="|",
        quote_char=None,
        schema={f"column_{i}": pl.String for i in range(1, 8)},
        truncate_ragged_lines=True,
        missing_columns="insert",
        extra_columns="ignore",
        comment_prefix=None,
        row_index_name="line",
        row_index_offset=1,
    )
    .filter(pl.col("column_3").str.starts_with(" elapsed time per iteration (ms):"))
    .select(
        pl.col("line").cast(pl.Int64),
        wall.alias("wall"),
        step.str.strip_chars().cast(pl.Int64, strict=False).alias("step"),
        value("column_2", "consumed samples").alias("samples"),
        (value("column_3", "elapsed time per iteration (ms)") / 1000).alias("step_time_s"),
        value("column_6", "global batch size").alias("batch"),
        value("column_7", "lm loss").alias("loss"),
    )
    .collect()
)
nothing = pl.lit(None)
timeline = rows.select(
    ((pl.col("wall") - pl.col("wall").min()).dt.total_microseconds() / 1e6).alias("t_s"),
    pl.lit("step").alias("kind"),
    "step",
    nothing.alias("epoch"),
    "samples",
    (pl.col("samples") * SEQUENCE_LENGTH).alias("tokens"),
    "step_time_s",
    (pl.col("batch") / pl.col("step_time_s")).alias("throughput"),
    "loss",
    nothing.alias("metric"),
    nothing.alias("duration_s"),
    nothing.alias("status"),
    "line",
).cast(SCHEMA)
timeline.write_parquet(sys.argv[2], compression="zstd", compression_level=1)
hashing.join()
"""
"""The floor (see the module docstring); SEQUENCE_LENGTH and SCHEMA are filled in below."""


def _floor_script() -> str:
    from trntui.core.timeline import TIMELINE_SCHEMA

    kinds = TIMELINE_SCHEMA["kind"].categories.to_list()  # type: ignore[union-attr]
    schema = {name: dtype for name, dtype in TIMELINE_SCHEMA.items() if name != "kind"}
    names = ", ".join(f"{name!r}: pl.{dtype!r}" for name, dtype in schema.items())
    return FLOOR.replace("SEQUENCE_LENGTH", str(megatron_spec().seq_length)).replace(
        "SCHEMA", f"{{{names}, 'kind': pl.Enum({kinds!r})}}"
    )


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
        floor = [sys.executable, "-c", _floor_script(), str(log), str(folder / "floor.parquet")]
        # Warm the page and bytecode caches.
        _import_once(trntui, folder, log, -1), _timed(floor), _timed(read)
        ours, floors, theirs = [], [], []
        for index in range(count):
            ours.append(_import_once(trntui, folder, log, index))
            floors.append(_timed(floor))
            theirs.append(_timed(read))
    imported, least, baseline = (
        statistics.median(w for w, _ in runs) for runs in (ours, floors, theirs)
    )
    cpu_ours, cpu_least, cpu_theirs = (
        statistics.median(c for _, c in runs) for runs in (ours, floors, theirs)
    )
    ratio = imported / baseline
    verdict = "meets" if ratio <= TARGET else "misses"
    beside = "two CPU-bound processes beside it" if busy else "nothing of its own beside it"
    print(f"log: {ITERATIONS} iterations, {size_mb:.0f} MB; {count} rounds, median seconds; "
          f"{beside}")  # fmt: skip
    print(f"trntui import (whole process):       {imported:6.3f} s  (CPU {cpu_ours:.3f} s)")
    print(f"floor (read, hash, parse, write):    {least:6.3f} s  (CPU {cpu_least:.3f} s)")
    print(f"python + pl.read_csv of its lines:   {baseline:6.3f} s  (CPU {cpu_theirs:.3f} s)")
    print(f"ratio: {ratio:.2f}x ({verdict} <= {TARGET:g}x); CPU time {cpu_ours / cpu_theirs:.2f}x")
    print(f"floor: {least / baseline:.2f}x; CPU time {cpu_least / cpu_theirs:.2f}x")
    print(f"trntui over the floor: {imported / least:.2f}x; CPU time {cpu_ours / cpu_least:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
