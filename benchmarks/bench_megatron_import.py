"""Megatron import speed, as a ratio to Polars reading the same file's lines.

Generates a 300k-iteration Megatron-LM log (log interval 1, timestamps, about 100 MB) in a
temporary folder, then times, in the same process:

* baseline: ``pl.read_csv`` of the file as one text column (the cheapest way to get its lines);
* import: ``import_file`` (read + parse + derive the run facts) + writing the timeline Parquet.

Prints both times and the ratio (target: at most 3x), then, for scale, two costs the import
cannot avoid timed alone: reading the file's bytes and their SHA-256 (duplicate detection). Run:
``/work/venv/bin/python benchmarks/bench_megatron_import.py``.
"""

from __future__ import annotations

import hashlib
import io
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import loggen
from trntui.core.run_facts import run_facts
from trntui.importers import import_file
from trntui.store.runs import write_timeline

ITERATIONS = 300_000
REPEATS = 3


def _baseline(path: Path) -> float:
    start = time.perf_counter()
    pl.read_csv(
        path,
        has_header=False,
        separator="\x1f",
        quote_char=None,
        new_columns=["line"],
        schema={"line": pl.String},
        truncate_ragged_lines=True,
    )
    return time.perf_counter() - start


def _floors(path: Path) -> dict[str, float]:
    """Costs the import cannot avoid, each timed alone (best of ``REPEATS``)."""

    def best(work: Callable[[], object]) -> float:
        times = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
        return min(times)

    data = path.read_bytes()
    return {
        "read the bytes": best(path.read_bytes),
        "SHA-256 of the bytes (duplicate detection)": best(
            lambda: hashlib.sha256(data).hexdigest()
        ),
    }


def _import(path: Path) -> dict[str, float]:
    """Seconds per stage of one import; ``total`` is what the ratio uses."""
    start = time.perf_counter()
    run = import_file(path, format="megatron")
    parsed = time.perf_counter()
    run_facts(run)
    derived = time.perf_counter()
    write_timeline(run.timeline, io.BytesIO())
    written = time.perf_counter()
    return {
        "read + parse (incl. SHA-256)": parsed - start,
        "run facts": derived - parsed,
        "Parquet write": written - derived,
        "total": written - start,
    }


def megatron_spec() -> loggen.MegatronSpec:
    """The benchmark's log: 300k iterations logged every one, a stall, saves, evals, a crash."""
    return replace(
        loggen.MegatronSpec(),
        train_iters=ITERATIONS,
        log_interval=1,
        stall_at=150_000,
        save_interval=10_000,
        eval_interval=5_000,
        crash_at=200_005,
    )


def main() -> int:
    spec = megatron_spec()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "megatron.log"
        loggen.write_megatron(path, spec)
        size_mb = path.stat().st_size / 1e6
        _baseline(path)
        baseline = min(_baseline(path) for _ in range(REPEATS))
        stages = min((_import(path) for _ in range(REPEATS)), key=lambda s: s["total"])
        floors = _floors(path)
    imported = stages["total"]
    print(f"log: {ITERATIONS} iterations, {size_mb:.0f} MB")
    print(f"pl.read_csv of its lines: {baseline:.3f} s")
    for name, seconds in stages.items():
        if name != "total":
            print(f"  {name}: {seconds:.3f} s")
    print(f"import + run facts + Parquet: {imported:.3f} s")
    print(f"ratio: {imported / baseline:.2f}x (target <= 3x)")
    print("for scale, each alone:")
    for name, seconds in floors.items():
        print(f"  {name}: {seconds:.3f} s = {seconds / baseline:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
