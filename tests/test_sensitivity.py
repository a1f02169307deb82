"""Sensitivity over the observed range (ranking known by hand)."""

from __future__ import annotations

import pytest

from tests.test_estimate import GPU, TRN, context, gpu_runs, run, trn_runs
from trntui.core.estimate import Override, estimate
from trntui.core.sensitivity import sensitivity

FAILED_H = (1 / 3) / (2 / 3) * 1800 / 3600  # the one failed run of three, 0.5 h each


def trn_total(
    throughput: float, startup_s: float, overhead: float, retry: float, failed_h: float = FAILED_H
) -> float:
    """The Trainium3 target's total by hand (2 instances, $10/h, 7200 samples)."""
    training_h = 7200 / throughput / 3600
    billed_h = startup_s / 3600 + training_h * (1 + overhead)
    retry_h = training_h * retry + failed_h
    wall_h = billed_h + retry_h
    storage = (100 + 10 * 5) * 2 * 0.023 + 500 * 2 * wall_h / 730 * 0.08
    side = storage + 50 * 2 * 0.01 + (2 * 0.5 + 2 * 2 * 0.03) + 3 * 1.428
    return (billed_h + retry_h) * 2 * 10.0 + side


def test_ranking_and_swings_over_the_observed_range():
    result = {s.target: s for s in sensitivity(estimate(context()))}[TRN]
    assert [bar.key for bar in result.bars] == [
        "steady_throughput",
        "overhead_ratio",
        "startup_s",
        "retry_ratio",
        "launch_s",  # the same in every run: no range, no swing
        "failed_run_s",  # one failed run: no range, no swing
    ]
    bars = {bar.key: bar for bar in result.bars}
    throughput = bars["steady_throughput"]
    assert (throughput.low, throughput.high) == (1.0, 3.0)
    assert throughput.total_at_low == pytest.approx(trn_total(1.0, 600, 0.2, 0.05))
    assert throughput.total_at_high == pytest.approx(trn_total(3.0, 600, 0.2, 0.05))
    assert bars["startup_s"].swing_usd == pytest.approx(
        trn_total(2.0, 900, 0.2, 0.05) - trn_total(2.0, 300, 0.2, 0.05)
    )
    assert bars["retry_ratio"].swing_usd == pytest.approx(
        trn_total(2.0, 600, 0.2, 0.1) - trn_total(2.0, 600, 0.2, 0.0)
    )
    assert result.base_total_usd == pytest.approx(trn_total(2.0, 600, 0.2, 0.05))
    assert bars["failed_run_s"].swing_usd == 0.0


def test_failed_attempts_vary_over_the_failed_runs_range():
    runs = [*trn_runs(), run("trn", counted=False, total_s=5400.0, run_id="f2"), *gpu_runs()]
    result = {s.target: s for s in sensitivity(estimate(context(runs=runs)))}[TRN]
    bar = next(b for b in result.bars if b.key == "failed_run_s")
    assert (bar.low, bar.high) == (1800.0, 5400.0)
    # 2 failed of 4 runs: one extra attempt per success, 2 instances at $10/h (+ EBS time)
    per_hour = 2 * 10.0 + 500 * 2 * 0.08 / 730
    assert bar.swing_usd == pytest.approx((5400 - 1800) / 3600 * per_hour)


def test_no_fixed_percent_margin_identical_runs_have_no_swing():
    result = {s.target: s for s in sensitivity(estimate(context()))}[GPU]
    assert all(bar.swing_usd == pytest.approx(0.0) for bar in result.bars)


def test_overridden_input_is_not_varied():
    override = Override("steady_throughput", 2.5, TRN, who="bob", why="guess")
    result = {s.target: s for s in sensitivity(estimate(context(), [override]))}[TRN]
    assert "steady_throughput" not in [bar.key for bar in result.bars]
    assert any(label == "Useful throughput" for label, _ in result.not_varied)
