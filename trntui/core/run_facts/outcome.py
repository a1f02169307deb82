"""The outcome rules: how a run ended (``_status``) and whether it reached its quality
target, judged by the given target, the log's own rule or a recorded evaluation (``_judged``)."""

from __future__ import annotations

import polars as pl

from trntui.core.quality import QualityTarget
from trntui.core.run_facts.facts import _SUCCESS_WORDS, ABORTED, INCOMPLETE, SUCCEEDED
from trntui.core.timeline import (
    Kind,
    RunMetadata,
)


def _status(
    timeline: pl.DataFrame, meta: RunMetadata, final_step: int | None, planned: int | None
) -> str:
    stops = timeline.filter(pl.col("kind") == Kind.RUN_STOP)["status"].to_list()
    if stops:
        words = {str(s).lower() for s in stops if s is not None}
        if words & _SUCCESS_WORDS:
            return SUCCEEDED
        return ABORTED
    if meta.prints_run_stop:
        return INCOMPLETE
    if planned is not None and final_step is not None and final_step >= planned:
        return SUCCEEDED
    return INCOMPLETE


def _ends_at_planned_step(timeline: pl.DataFrame, status: str, planned: int | None) -> bool:
    """True when success comes from reaching the planned steps in a log with no run stop."""
    return (
        status == SUCCEEDED
        and planned is not None
        and not (timeline["kind"] == Kind.RUN_STOP).any()
    )


def _first_t(timeline: pl.DataFrame, kind: str) -> float | None:
    values = timeline.filter(pl.col("kind") == kind)["t_s"].drop_nulls()
    return float(values[0]) if values.len() else None


def _last_t(timeline: pl.DataFrame, kind: str) -> float | None:
    values = timeline.filter(pl.col("kind") == kind)["t_s"].drop_nulls()
    return float(values[-1]) if values.len() else None


def _quality(
    timeline: pl.DataFrame, meta: RunMetadata, target: QualityTarget | None, status: str
) -> tuple[float | None, bool | None, float | None]:
    evals = timeline.filter((pl.col("kind") == Kind.EVAL) & pl.col("metric").is_not_null())
    if target is not None:
        if evals.is_empty():
            # The log measured no quality at all: unknown, not missed. Such a run has no
            # verified result (launch_to_result_s stays None), and the estimate says so.
            return None, None, None
        values = evals["metric"].to_list()
        best = max(values) if target.higher_is_better else min(values)
        hits = evals.filter(
            pl.col("metric") >= target.threshold
            if target.higher_is_better
            else pl.col("metric") <= target.threshold
        )
        reached_at = hits["t_s"].drop_nulls()
        return best, not hits.is_empty(), float(reached_at[0]) if reached_at.len() else None
    last = float(evals["metric"][-1]) if not evals.is_empty() else None
    if meta.success_means_target_reached and status == SUCCEEDED:
        stop_t = _last_t(timeline, Kind.RUN_STOP)
        verified = evals.filter(pl.col("t_s") <= stop_t) if stop_t is not None else evals
        times = verified["t_s"].drop_nulls()
        return last, True, float(times[-1]) if times.len() else stop_t
    return last, None, None


def _own_target(meta: RunMetadata) -> QualityTarget | None:
    """The target the log's own rules set (MLPerf's compliance target for its benchmark)."""
    if meta.quality_target_value is None or meta.quality_higher_is_better is None:
        return None
    return QualityTarget(
        meta.quality_metric, meta.quality_target_value, meta.quality_higher_is_better
    )


def _misses_own_rule(
    timeline: pl.DataFrame, meta: RunMetadata, own: QualityTarget | None, status: str
) -> str | None:
    """Why a run whose log says success does not succeed by its format's own rule (MLPerf's
    compliance checker: an evaluation must meet the benchmark's target), or ``None``."""
    if own is None or status != SUCCEEDED or not meta.success_means_target_reached:
        return None
    metrics = timeline.filter(pl.col("kind") == Kind.EVAL)["metric"].drop_nulls().to_list()
    if any(own.met_by(float(value)) for value in metrics):
        return None
    rule = f"{'>=' if own.higher_is_better else '<='} {own.threshold:g}"
    seen = f"no evaluation (last {metrics[-1]:g})" if metrics else "no evaluation at all"
    return f"the log says success, but {seen} meets the benchmark's target {rule}"
