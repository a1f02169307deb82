"""Time-weighted utilization averages: steady window and whole run, gaps never 0 %."""

from __future__ import annotations

import polars as pl
import pytest

from trntui.core.utilization import (
    Metric,
    Telemetry,
    TelemetryMetadata,
    TelemetryTime,
    conform_samples,
    per_sample,
    utilization_over,
    utilization_report,
)


def _telemetry(rows: list[tuple[float, float, str, float | None]]) -> Telemetry:
    frame = pl.DataFrame(
        {
            "t_s": [r[0] for r in rows],
            "period_s": [r[1] for r in rows],
            "device": [r[2] for r in rows],
            "metric": [str(Metric.UTILIZATION_PCT)] * len(rows),
            "value": [r[3] for r in rows],
            "error": [None if r[3] is not None else "err" for r in rows],
        },
        schema_overrides={"value": pl.Float64, "error": pl.String},
    )
    meta = TelemetryMetadata("test", "x", "0", TelemetryTime.LINE_ORDER, "test method", 1.0)
    return Telemetry(conform_samples(frame), meta)


def test_unequal_periods_weigh_by_time() -> None:
    # 9 s at 100 % then 1 s at 0 %: time-weighted 90 %, a plain mean of samples would say 50 %.
    telemetry = _telemetry([(9.0, 9.0, "nc0", 100.0), (10.0, 1.0, "nc0", 0.0)])
    assert utilization_over(telemetry, 0.0, 10.0, "w").mean_pct == pytest.approx(90.0)


def test_gap_is_left_out_and_reported() -> None:
    telemetry = _telemetry([(1.0, 1.0, "nc0", 50.0), (2.0, 1.0, "nc0", None)])
    figure = utilization_over(telemetry, 0.0, 2.0, "w")
    assert figure.mean_pct == pytest.approx(50.0)
    assert figure.gap_s == pytest.approx(1.0)
    assert figure.coverage == pytest.approx(0.5)


def test_all_gaps_is_unknown_not_zero() -> None:
    figure = utilization_over(_telemetry([(1.0, 1.0, "nc0", None)]), 0.0, 1.0, "w")
    assert figure.mean_pct is None


def test_device_spread() -> None:
    telemetry = _telemetry([(1.0, 1.0, "nc0", 20.0), (1.0, 1.0, "nc1", 80.0)])
    figure = utilization_over(telemetry, 0.0, 1.0, "w")
    assert (figure.min_device_pct, figure.mean_pct, figure.max_device_pct) == (20.0, 50.0, 80.0)
    row = per_sample(telemetry.samples).row(0, named=True)
    assert (row["min_pct"], row["mean_pct"], row["max_pct"]) == (20.0, 50.0, 80.0)


def test_report_shows_steady_and_whole_run_in_run_time() -> None:
    # Capture starts 10 s into the run: 0-10 s of capture idle, 10-30 s busy.
    rows = [(float(t), 1.0, "nc0", 0.0 if t <= 10 else 100.0) for t in range(1, 31)]
    report = utilization_report(
        _telemetry(rows), offset_s=10.0, run_end_s=40.0, steady_start_s=20.0, steady_end_s=40.0
    )
    assert report.steady.mean_pct == pytest.approx(100.0)
    assert report.whole_run.mean_pct == pytest.approx(20 / 30 * 100)
    assert report.whole_run.window == "whole run"
    assert report.whole_run.method == "test method"
    no_steady = utilization_report(_telemetry(rows), 0.0, None, None, None)
    assert no_steady.steady is None
    assert no_steady.whole_run.window == "whole capture"
