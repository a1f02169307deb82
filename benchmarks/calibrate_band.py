"""How often the predictive band holds, on real MLPerf result sets (``core.calibration``).

Imports every MLPerf result set under the given folders (a folder holding ``result_*.txt``,
in the MLCommons layout) into a temporary project, one run set per folder, then, for each set
with more counted runs than the estimate uses (3 by default), estimates the set from every
choice of 3 of its runs and counts how many of its other runs cost what the band said:
inside P10-P90. Prints per set the runs, the share inside and the band's median width
((P90 - P10) / P50), then the same over all sets. The aim: 70-90% inside, the width as narrow
as that allows.

Run: ``python benchmarks/calibrate_band.py [FOLDER ...] [--runs N] [--subsets M]`` (default:
the copies in ``tests/data/mlperf``; the shared set folder works the same).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from trntui.core.calibration import (
    ESTIMATION_RUNS,
    MAX_SUBSETS,
    SetCalibration,
    calibrate_set,
    overall,
)
from trntui.store.estimate_context import derive_and_store_context
from trntui.store.project import init_project
from trntui.store.run_import import import_paths

DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "data" / "mlperf"


def result_sets(folders: list[Path]) -> dict[str, Path]:
    """Each folder holding MLPerf result logs, named by its path below the folder given."""
    found = {}
    for base in folders:
        for folder in sorted({log.parent for log in base.rglob("result_*.txt")}):
            found[str(folder.relative_to(base)).replace("/results/", "/")] = folder
    return found


def calibrate(
    folders: list[Path], estimation_runs: int = ESTIMATION_RUNS, subsets: int = MAX_SUBSETS
) -> list[SetCalibration]:
    """Every result set under ``folders``, imported into a scratch project and checked over
    at most ``subsets`` choices of ``estimation_runs`` runs each."""
    sets = result_sets(folders)
    with tempfile.TemporaryDirectory() as scratch:
        root = init_project(Path(scratch) / "calibration")
        for name, folder in sets.items():
            import_paths(root, [folder], set_name=name)
        observations = derive_and_store_context(root).observations
    return [calibrate_set(observations, name, estimation_runs, subsets) for name in sets]


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[DEFAULT])
    parser.add_argument("--runs", type=int, default=ESTIMATION_RUNS, help="runs to estimate from")
    parser.add_argument(
        "--subsets", type=int, default=MAX_SUBSETS, help="most choices of runs per set"
    )
    args = parser.parse_args()
    results = calibrate(args.folders, args.runs, args.subsets)
    print(f"band from {args.runs} runs; coverage = held-out runs inside P10-P90")
    print(f"{'set':50} {'runs':>4} {'inside':>7} {'width':>6} {'no band':>8}")
    for r in results:
        if r.held_out:
            line = (
                f"{r.runs:>4} {percent(r.coverage):>7} {percent(r.median_width):>6} "
                f"{r.no_band:>3} of {r.subsets:<3}"
            )
        else:
            line = f"{r.runs:>4}  not checked: {r.reason}"
        print(f"{r.set_name[:50]:50} {line}")
    coverage, width = overall([r for r in results if r.held_out])
    checked = sum(1 for r in results if r.held_out)
    held = sum(r.held_out for r in results)
    print(
        f"overall: {checked} sets, {held} held-out runs, {percent(coverage)} inside P10-P90, "
        f"median width {percent(width)} of P50"
    )


if __name__ == "__main__":
    main()
