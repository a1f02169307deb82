"""The predictive band: each counted run priced as a training, a t interval on their logs.

Per-run totals come from ``trn_total`` (the formula by hand, in ``test_sensitivity``); the t
quantiles are the published table values, never the code's own.
"""

from __future__ import annotations

import math
import statistics

import pytest

from tests.test_estimate import TRN, book, context, gpu_runs, run
from tests.test_sensitivity import trn_total
from trntui.core.estimate import Override, estimate
from trntui.core.prediction import prediction_bands, runs_for_width
from trntui.core.student_t import t_cdf, t_quantile

# Student's t, 90th percentile, from printed tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
T90 = {1: 3.078, 2: 1.886, 3: 1.638, 4: 1.533, 9: 1.383, 29: 1.311}


@pytest.mark.parametrize("df", sorted(T90))
def test_the_t_quantile_matches_the_printed_table(df: int) -> None:
    assert t_quantile(0.9, df) == pytest.approx(T90[df], abs=5e-4)
    assert t_quantile(0.1, df) == pytest.approx(-T90[df], abs=5e-4)
    assert t_cdf(T90[df], df) == pytest.approx(0.9, abs=2e-4)


def band_by_hand(totals: list[float]) -> tuple[float, float, float]:
    logs = [math.log(t) for t in totals]
    n = len(logs)
    half = T90[n - 1] * statistics.stdev(logs) * math.sqrt(1 + 1 / n)
    mean = statistics.fmean(logs)
    return math.exp(mean - half), math.exp(mean), math.exp(mean + half)


THREE = [
    run("trn", throughput=1.0, startup_s=300.0, overhead=0.1, retry=0.0, run_id="a"),
    run("trn", throughput=3.0, startup_s=900.0, overhead=0.3, retry=0.1, run_id="b"),
    run("trn", throughput=2.0, startup_s=600.0, overhead=0.2, retry=0.05, run_id="c"),
]


def test_three_runs_give_a_t_band_wider_than_their_range() -> None:
    band = {b.target: b for b in prediction_bands(estimate(context(runs=THREE + gpu_runs())))}[TRN]
    totals = [
        trn_total(1.0, 300, 0.1, 0.0, failed_h=0.0),
        trn_total(3.0, 900, 0.3, 0.1, failed_h=0.0),
        trn_total(2.0, 600, 0.2, 0.05, failed_h=0.0),
    ]
    assert sorted(band.per_run_usd) == pytest.approx(sorted(totals))
    low, middle, high = band_by_hand(totals)
    assert (band.p10_usd, band.p50_usd, band.p90_usd) == pytest.approx(
        (low, middle, high), rel=2e-4
    )
    assert band.p10_usd < min(totals) and band.p90_usd > max(totals)
    assert band.runs == 3
    shown = band.text()  # the hand band to the table's 3 decimals of t: within a cent
    assert shown.startswith("P10-P90 $") and shown.endswith(" (t, n=3)")
    p10, p90 = (float(x) for x in shown[9:].split(" ")[0].replace("$", "").split("-"))
    assert (p10, p90) == pytest.approx((low, high), abs=0.015)


def test_fewer_than_three_counted_runs_give_no_band_and_say_why() -> None:
    bands = prediction_bands(estimate(context()))  # Trainium3: 2 counted runs and a failed one
    trn = bands[0]
    assert trn.p10_usd is None and trn.runs == 2
    assert "2 counted runs" in trn.reason and "at least 3" in trn.reason
    assert trn.text().startswith("no band: ")


def test_an_incomplete_estimate_has_no_band() -> None:
    band = prediction_bands(estimate(context(quotes=book(trn_price=None))))[0]
    assert band.p50_usd is None and "incomplete" in band.reason


def test_an_overridden_input_is_the_same_in_every_run() -> None:
    override = Override("steady_throughput", 2.5, TRN, who="bob", why="guess")
    band = prediction_bands(estimate(context(runs=THREE + gpu_runs()), [override]))[0]
    totals = [
        trn_total(2.5, 300, 0.1, 0.0, failed_h=0.0),
        trn_total(2.5, 900, 0.3, 0.1, failed_h=0.0),
        trn_total(2.5, 600, 0.2, 0.05, failed_h=0.0),
    ]
    assert sorted(band.per_run_usd) == pytest.approx(sorted(totals))
    assert "Useful throughput" not in band.drawn


def with_work(row: dict, work: float, end_s: float) -> dict:
    return {**row, "work_done": work, "work_to_target": work, "result_s": end_s, "total_s": end_s}


def test_each_run_needs_its_own_work_to_the_target_and_its_unexplained_time() -> None:
    """Runs that stopped at 6000, 7200 and 9600 samples (the goal is 7200): each is priced at
    its own share of the goal; the clock of each shows 60 s its stages do not explain."""
    rows = []
    for work, rid in ((6000.0, "a"), (7200.0, "b"), (9600.0, "c")):
        # stages: startup 600 s + work / 2 samples/s x (1 + 0.2 + 0.05)
        end = 600.0 + work / 2.0 * 1.25 + 60.0
        rows.append(with_work(run("trn", run_id=rid), work, end))
    result = estimate(context(runs=rows + gpu_runs()))
    band = prediction_bands(result)[0]
    assert band.unexplained_s == pytest.approx(60.0)
    assert "Work to finish" in band.drawn

    def total(work: float) -> float:
        # more work: more of every stage that scales with it, and 60 s more startup
        hours = (660.0 / 3600 + work / 2.0 / 3600 * 1.25) * 2 * 10.0
        side = (
            trn_total(2.0, 600, 0.2, 0.05, failed_h=0.0)
            - (600 / 3600 + 7200 / 2.0 / 3600 * 1.25) * 2 * 10.0
        )
        ebs = 500 * 2 * 0.08 / 730 * ((660.0 - 600.0) / 3600 + (work - 7200) / 2.0 / 3600 * 1.25)
        return hours + side + ebs

    assert sorted(band.per_run_usd) == pytest.approx(sorted(total(w) for w in (6000, 7200, 9600)))


def test_how_many_runs_narrow_the_band_to_ten_percent() -> None:
    # log(1.1) = 0.0953. log sd 0.03: n = 3 gives t(2) x 0.03 x sqrt(4/3) = 0.0653: fits
    assert runs_for_width(0.03) == 3
    # log sd 0.06: n=3: 1.886*0.06*1.155 = 0.131; n=4: 1.638*0.06*1.118 = 0.110;
    # n=5: 1.533*0.06*1.095 = 0.1008; n=6: 1.476*0.06*1.080 = 0.0957; n=7: 1.440*.06*1.069=0.0923
    assert runs_for_width(0.06) == 7
    # no number of runs narrows a spread wider than the band allows: 1.2816 x 0.08 > 0.0953
    assert runs_for_width(0.08) is None
    assert runs_for_width(None) is None
