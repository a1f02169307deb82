"""The outcome rules: how a run ended (``status_of``) and whether it reached its quality
target, judged by the given target, the log's own rule or a recorded evaluation (``_judged``)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from trntui.core.quality import QualityTarget
from trntui.core.run_facts.facts import ABORTED, INCOMPLETE, SUCCEEDED, SUCCESS_WORDS
from trntui.core.timeline import (
    Kind,
    RunMetadata,
)


def status_of(
    timeline: pl.DataFrame, meta: RunMetadata, final_step: int | None, planned: int | None
) -> str:
    stops = timeline.filter(pl.col("kind") == Kind.RUN_STOP)["status"].to_list()
    if stops:
        words = {str(s).lower() for s in stops if s is not None}
        if words & SUCCESS_WORDS:
            return SUCCEEDED
        return ABORTED
    if meta.prints_run_stop:
        return INCOMPLETE
    if planned is not None and final_step is not None and final_step >= planned:
        return SUCCEEDED
    return INCOMPLETE


def stops_at_planned_step(timeline: pl.DataFrame, status: str, planned: int | None) -> bool:
    """True when success comes from reaching the planned steps in a log with no run stop."""
    return (
        status == SUCCEEDED
        and planned is not None
        and not (timeline["kind"] == Kind.RUN_STOP).any()
    )


def first_t(timeline: pl.DataFrame, kind: str) -> float | None:
    values = timeline.filter(pl.col("kind") == kind)["t_s"].drop_nulls()
    return float(values[0]) if values.len() else None


def last_t(timeline: pl.DataFrame, kind: str) -> float | None:
    values = timeline.filter(pl.col("kind") == kind)["t_s"].drop_nulls()
    return float(values[-1]) if values.len() else None


_COUNTS = pl.col("status").is_null()
"""An evaluation row counts toward a target unless its ``status`` says why not (another
metric its benchmark requires missed, ``importers.mlperf``)."""


@dataclass(frozen=True)
class Quality:
    """The quality verdict of a log's evaluations against a target."""

    value: float | None
    reached: bool | None
    reached_at: float | None
    """When the result was verified: the time of the evaluation's last metric line."""
    work: float | None = None
    """The work the verifying evaluation evaluated (its checkpoint's), where it states it."""


def _hits(evals: pl.DataFrame, target: QualityTarget) -> pl.DataFrame:
    met = (
        pl.col("metric") >= target.threshold
        if target.higher_is_better
        else pl.col("metric") <= target.threshold
    )
    return evals.filter(met & _COUNTS)


def _work(row: pl.DataFrame) -> float | None:
    for column in ("samples", "tokens"):
        if column in row.columns and row[column][0] is not None:
            return float(row[column][0])
    return None


def quality_of(
    timeline: pl.DataFrame, meta: RunMetadata, target: QualityTarget | None, status: str
) -> Quality:
    """The best value, whether the target was reached, and when: the first evaluation that
    meets it (in time). Without a target, a format whose success means the target was reached
    was verified by its last evaluation printed before the run stop *in the file* (a run stop
    may be back-dated to the checkpoint that reached it, after which its evaluations are
    printed: the result is not known before they are), else at the run stop."""
    evals = timeline.filter((pl.col("kind") == Kind.EVAL) & pl.col("metric").is_not_null())
    if target is not None:
        if evals.is_empty():
            # The log measured no quality at all: unknown, not missed. Such a run has no
            # verified result (launch_to_result_s stays None), and the estimate says so.
            return Quality(None, None, None)
        values = evals["metric"].to_list()
        best = max(values) if target.higher_is_better else min(values)
        hits = _hits(evals, target).filter(pl.col("t_s").is_not_null()).sort("t_s")
        if hits.is_empty():
            return Quality(best, False, None)
        return Quality(best, True, float(hits["t_s"][0]), _work(hits.head(1)))
    last = float(evals["metric"][-1]) if not evals.is_empty() else None
    if meta.success_means_target_reached and status == SUCCEEDED:
        stops = timeline.filter(pl.col("kind") == Kind.RUN_STOP)
        stop_t = last_t(timeline, Kind.RUN_STOP)
        verified = evals
        if not stops.is_empty() and "line" in stops.columns and stops["line"][-1] is not None:
            verified = evals.filter(pl.col("line") < stops["line"][-1])
        verified = verified.filter(pl.col("t_s").is_not_null() & _COUNTS).sort("t_s")
        if verified.is_empty():
            return Quality(last, True, stop_t)
        return Quality(last, True, float(verified["t_s"][-1]))
    return Quality(last, None, None)


def own_target_of(meta: RunMetadata) -> QualityTarget | None:
    """The target the log's own rules set (MLPerf's compliance target for its benchmark)."""
    if meta.quality_target_value is None or meta.quality_higher_is_better is None:
        return None
    return QualityTarget(
        meta.quality_metric, meta.quality_target_value, meta.quality_higher_is_better
    )


def misses_own_rule(
    timeline: pl.DataFrame, meta: RunMetadata, own: QualityTarget | None, status: str
) -> str | None:
    """Why a run whose log says success does not succeed by its format's own rule (MLPerf's
    compliance checker: an evaluation must meet the benchmark's target), or ``None``."""
    if own is None or status != SUCCEEDED or not meta.success_means_target_reached:
        return None
    evals = timeline.filter((pl.col("kind") == Kind.EVAL) & pl.col("metric").is_not_null())
    if not _hits(evals, own).is_empty():
        return None
    metrics = evals["metric"].to_list()
    rule = f"{'>=' if own.higher_is_better else '<='} {own.threshold:g}"
    seen = f"no evaluation (last {metrics[-1]:g})" if metrics else "no evaluation at all"
    why = evals.filter(~_COUNTS)["status"].to_list()
    also = f" ({why[-1]})" if why else ""
    return f"the log says success, but {seen} meets the benchmark's target {rule}{also}"
