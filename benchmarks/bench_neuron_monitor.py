"""Import a one-day neuron-monitor capture (1 s period, 16 devices x 2 NeuronCores = 86,400
reports) with progress, and print its time as a ratio to ``pl.read_ndjson`` of the same file.

Target: ratio <= 3. Run: ``python benchmarks/bench_neuron_monitor.py [--reports N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.telemetry_gen import MonitorSpec, Phase, monitor_lines
from trntui.importers._base import Steps
from trntui.importers.neuron_monitor import import_neuron_monitor

DEVICES = 16
CORES_PER_DEVICE = 2


def write_capture(path: Path, reports: int) -> None:
    """Repeat one generated hour-like pattern until ``reports`` lines are written."""
    cores = DEVICES * CORES_PER_DEVICE
    block = 3600
    spec = MonitorSpec(
        cores=cores,
        phases=(
            Phase(600, 0.0, cpu_pct=90.0),
            Phase(2400, tuple(80.0 + (c % 5) for c in range(cores))),
            Phase(300, 5.0, cpu_pct=95.0, io_wait_pct=4.0),
            Phase(300, 85.0),
        ),
        wrapper_timestamp=False,
    )
    lines, _ = monitor_lines(spec)
    text = "\n".join(lines[:block]) + "\n"
    with path.open("w", encoding="utf-8") as handle:
        remaining = reports
        while remaining > 0:
            if remaining >= block:
                handle.write(text)
            else:
                handle.write("\n".join(lines[:remaining]) + "\n")
            remaining -= block


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reports", type=int, default=86_400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "neuron-monitor.jsonl"
        write_capture(path, args.reports)
        size_mb = path.stat().st_size / 1e6

        started = time.perf_counter()
        baseline = pl.read_ndjson(path)
        baseline_s = time.perf_counter() - started

        seen: list[float] = []
        started = time.perf_counter()
        telemetry = import_neuron_monitor(path, Steps(str(path), progress=seen.append))
        import_s = time.perf_counter() - started

    print(f"capture: {args.reports} reports, {size_mb:.0f} MB, {baseline.height} rows")
    print(f"pl.read_ndjson:        {baseline_s:.2f} s")
    print(
        f"import_neuron_monitor: {import_s:.2f} s "
        f"({telemetry.samples.height} samples, {len(seen)} progress updates)"
    )
    ratio = import_s / baseline_s
    print(f"ratio: {ratio:.2f}x (target <= 3x)")
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
