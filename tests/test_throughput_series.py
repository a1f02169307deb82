"""Throughput over time as a step function, resampled to plot columns."""

from __future__ import annotations

import polars as pl
import pytest

from trntui.core.throughput_series import throughput_series
from trntui.core.timeline import ImportedRun, RunMetadata, TimeSource, conform


def run_of(rows: list[dict]) -> ImportedRun:
    frame = conform(pl.DataFrame(rows).with_row_index("line", offset=1))
    meta = RunMetadata(format="test", source="x", sha256="0", time_source=TimeSource.WALL_CLOCK)
    return ImportedRun(frame, meta)


def test_each_column_shows_the_rate_of_the_interval_covering_it() -> None:
    # 0-100 s: 100 samples in 100 s (1/s); 100-200 s: 400 samples in 100 s (4/s).
    run = run_of(
        [
            {"t_s": 0.0, "kind": "step", "step": 1, "samples": 0.0},
            {"t_s": 100.0, "kind": "step", "step": 2, "samples": 100.0},
            {"t_s": 200.0, "kind": "step", "step": 3, "samples": 500.0},
        ]
    )
    series = throughput_series(run, 4)
    assert series is not None
    assert series.unit == "samples/s"
    assert series.rates == pytest.approx((1.0, 1.0, 4.0, 4.0))


def test_a_restart_is_marked_and_not_drawn_as_negative_work() -> None:
    run = run_of(
        [
            {"t_s": 0.0, "kind": "step", "step": 10},
            {"t_s": 10.0, "kind": "step", "step": 20},
            {"t_s": 20.0, "kind": "step", "step": 10},
            {"t_s": 30.0, "kind": "step", "step": 20},
            {"t_s": 40.0, "kind": "step", "step": 30},
        ]
    )
    series = throughput_series(run, 4)
    assert series is not None
    assert series.unit == "steps/s"
    assert series.restart_columns == (2,)
    assert all(rate is None or rate >= 0 for rate in series.rates)
    assert series.rates[0] == pytest.approx(1.0)
    assert series.rates[-1] == pytest.approx(1.0)


def test_without_a_clock_there_is_nothing_to_plot() -> None:
    run = run_of([{"t_s": None, "kind": "step", "step": s} for s in (1, 2, 3)])
    assert throughput_series(run, 10) is None


def test_block_samples_are_preferred_to_unitless_step_counters() -> None:
    run = run_of(
        [
            {"t_s": 0.0, "kind": "run_start"},
            {"t_s": 50.0, "kind": "step", "step": 999},
            {"t_s": 50.0, "kind": "block_stop", "samples": 100.0},
            {"t_s": 100.0, "kind": "step", "step": 1999},
            {"t_s": 100.0, "kind": "block_stop", "samples": 200.0},
        ]
    )
    series = throughput_series(run, 2)
    assert series is not None
    assert series.unit == "samples/s"
    assert series.rates == pytest.approx((2.0, 2.0))


def test_a_step_counter_with_the_logs_own_throughput_is_drawn_in_that_unit() -> None:
    """neuronx-distributed counts steps and prints seq/s: the plot uses the printed rate."""
    rows = [
        {"t_s": 10.0 * i, "kind": "step", "step": i, "throughput": 3.0 if i <= 2 else 5.0}
        for i in range(5)
    ]
    frame = conform(pl.DataFrame(rows).with_row_index("line", offset=1))
    meta = RunMetadata(
        format="nxd",
        source="x",
        sha256="0",
        time_source=TimeSource.WALL_CLOCK,
        throughput_unit="samples/s",
    )
    series = throughput_series(ImportedRun(frame, meta), 4)
    assert series is not None
    assert series.unit == "samples/s"
    assert series.rates == pytest.approx((3.0, 3.0, 5.0, 5.0))
    unitless = throughput_series(run_of(rows), 4)
    assert unitless is not None and unitless.unit == "steps/s"
    assert unitless.rates == pytest.approx((0.1, 0.1, 0.1, 0.1))


def test_a_block_is_timed_from_its_own_start_and_the_evaluation_before_it_is_a_gap() -> None:
    """MLPerf logs a block_start after each evaluation: timed from the previous block_stop,
    the 20 s evaluation was spread over the next block as slow training (100 samples in 60 s
    read 1.67/s instead of 2.5/s in its 40 s)."""
    run = run_of(
        [
            {"t_s": 0.0, "kind": "run_start"},
            {"t_s": 0.0, "kind": "block_start", "samples": 0.0},
            {"t_s": 40.0, "kind": "block_stop", "samples": 100.0},
            {"t_s": 60.0, "kind": "block_start", "samples": 100.0},
            {"t_s": 100.0, "kind": "block_stop", "samples": 200.0},
        ]
    )
    series = throughput_series(run, 10)
    assert series is not None
    assert series.rates[:4] == pytest.approx((2.5,) * 4)
    assert series.rates[4:6] == (None, None), "the evaluation is a gap"
    assert series.rates[6:] == pytest.approx((2.5,) * 4)
