"""Opening a big project: ``trntui estimate DIR --json`` with 500 stored runs vs with 10.

Builds two projects in a temporary folder (simulated Megatron-LM logs, 200 iterations each, half
per run set, some with crashes and stalls; the inventory and quotes of ``bench_estimate``),
imports them (which stores each run's derived facts), then runs the whole command on each,
alternating, and prints the medians and their ratio (issue 15's target: <= 1.3x; before the
facts were stored it was about 9x, since every timeline was read and derived on every open).

Run: ``python benchmarks/bench_open_project.py [PAIRS]`` (default 5) from the repository root.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_cli_start import timed, trntui_command
from benchmarks.bench_estimate import configure
from tests.loggen import MegatronSpec, write_megatron
from trntui.store.project import init_project
from trntui.store.run_import import import_paths


def build_project(folder: Path, runs: int) -> Path:
    root = init_project(folder / f"project-{runs}")
    configure(root)
    logs = folder / f"logs-{runs}"
    logs.mkdir()
    for i in range(runs // 2):
        trouble = {"crash_at": 150 if i % 5 == 0 else None, "stall_at": 100 if i % 3 else None}
        for set_name, step in (("trn", 2.0 + 0.001 * i), ("gpu", 1.0 + 0.001 * i)):
            spec = MegatronSpec(seed=i, step_time_s=step, train_iters=200, **trouble)
            write_megatron(logs / f"{set_name}{i:03d}.log", spec)
    for set_name in ("trn", "gpu"):
        import_paths(root, sorted(logs.glob(f"{set_name}*.log")), set_name=set_name)
    return root


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    trntui = trntui_command()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        small, big = build_project(Path(tmp), 10), build_project(Path(tmp), 500)
        print(f"built projects of 10 and 500 runs in {time.perf_counter() - started:.0f} s")
        commands = [[*trntui, "estimate", str(root), "--json"] for root in (small, big)]
        for command in commands:
            timed(command)  # warm the page cache
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(count):
            for command, bucket in zip(commands, times, strict=True):
                bucket.append(timed(command))
    ten, five_hundred = (statistics.median(bucket) for bucket in times)
    ratio = five_hundred / ten
    print(
        f"trntui estimate --json, median of {count}: 500 runs {five_hundred:.3f} s, "
        f"10 runs {ten:.3f} s, ratio {ratio:.2f} ({'meets' if ratio <= 1.3 else 'misses'} <= 1.3)"
    )


if __name__ == "__main__":
    main()
