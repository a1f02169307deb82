"""How often the band holds (``core.calibration``, ``benchmarks/calibrate_band.py``).

A small set whose every count is worked out by hand, then the shared MLPerf sets copied into
``tests/data/mlperf``, run through the benchmark script the README quotes.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import statistics

import pytest

from tests import MLPERF_DATA, REPO
from tests.test_estimate import run
from trntui.core.calibration import calibrate_set
from trntui.core.estimate import observations_frame

T90_2 = 1.886  # Student's t, 90th percentile, 2 degrees of freedom (printed table)


def hours_run(run_id: str, hours: float) -> dict:
    """A counted run of one node that took ``hours`` from its first line to its result:
    100 s startup, then 3600 samples at 1 sample/s x (1 + 0.2 overhead) and the rest of its
    clock explained by no stage; the job clock shows no time outside the log."""
    row = run("s", throughput=1.0, startup_s=100.0, overhead=0.2, retry=0.0, run_id=run_id)
    return {**row, "work_done": 3600.0, "result_s": hours * 3600, "total_s": hours * 3600}


def test_a_set_of_four_runs_counted_by_hand() -> None:
    hours = {"a": 1.3, "b": 1.4, "c": 1.5, "d": 3.0}
    result = calibrate_set(observations_frame([hours_run(k, h) for k, h in hours.items()]), "s")
    inside = 0
    for chosen in itertools.combinations(sorted(hours), 3):
        logs = [math.log(hours[k]) for k in chosen]  # $1 an instance-hour, one instance
        half = T90_2 * statistics.stdev(logs) * math.sqrt(4 / 3)
        low, high = math.exp(statistics.fmean(logs) - half), math.exp(statistics.fmean(logs) + half)
        (other,) = set(hours) - set(chosen)
        inside += low <= hours[other] <= high
    assert inside == 3  # only the three quick runs miss the slow one
    assert (result.subsets, result.held_out, result.inside) == (4, 4, 3)
    assert result.coverage == pytest.approx(0.75)


def test_a_set_with_too_few_counted_runs_is_not_checked() -> None:
    rows = [hours_run(k, 1.0 + i / 10) for i, k in enumerate("abc")]
    result = calibrate_set(observations_frame(rows), "s")
    assert result.held_out == 0 and "at least 4" in result.reason


def test_the_shared_mlperf_sets_hold_70_to_90_percent() -> None:
    path = REPO / "benchmarks" / "calibrate_band.py"
    spec = importlib.util.spec_from_file_location("calibrate_band", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    results = script.calibrate([MLPERF_DATA], subsets=30)
    checked = [r for r in results if r.held_out]
    # 9 sets of 10 counted runs (30 of the 120 choices of 3, 7 runs held out each) and Dell's
    # resnet with 4 counted of 5 (4 choices, 1 held out each); gpt3 (3 runs) and tinybox (none
    # counted) are not checked.
    assert len(checked) == 10
    assert sum(r.held_out for r in checked) == 9 * 30 * 7 + 4 * 1
    inside = sum(r.inside for r in checked) / sum(r.held_out for r in checked)
    assert 0.70 <= inside <= 0.90
    widths = sorted(w for r in checked for w in r.widths)
    assert statistics.median(widths) < 0.25
