"""Run facts: what one trial run measured, derived from its normalized timeline.

Two clocks are kept apart: ``run_s`` is "training running" time (run start to run
stop, diagnoses speed) and ``launch_to_result_s`` is launch to the evaluation that verified the
quality target (what the team pays for). A format that prints no run stop (neuronx-distributed)
has one only when the run reached its planned steps: training ran until its last logged step.
A run that never got there has no ``run_s``; it does not count anyway. A format that always
prints a stop (MLPerf) did not finish without one, whatever step it reached.

How the steady state is found (``run_facts``):

1. Progress rows are ``step`` rows (else ``epoch_stop``, else ``block_stop``), counted by step
   (else epoch, else samples). Each closes an interval since the previous progress row or, at
   the start of a segment, since the latest ``run_start`` / ``compile_stop`` /
   ``checkpoint_load``. A segment ends where the step counter goes back: that is a restart; the
   steps between the point resumed from (the loaded checkpoint, else one printing interval
   earlier) and the highest step reached are redone work, and the time from the last progress
   before the restart to the first one after it, less that interval's own work, is recovery.
2. Each interval's time per step is the log's own step time when it prints one, else wall time
   minus the checkpoint saves and evaluations that fall inside it, divided by its steps.
3. ``median_step_time_s`` is the median over all intervals; the median is used because it
   ignores the few slow intervals (warm-up, stalls) that a mean would absorb.
4. Warm-up of each segment lasts until the first interval that starts a run of three
   consecutive intervals (fewer at the end) at most 1.25x the median, and always holds the
   segment's first interval (when it has more than one); compilation and graph tracing of the
   first steps therefore fall in warm-up, never in steady throughput, also in logs that report
   only coarse blocks (MLPerf) where that cost hides inside the first block.
5. After warm-up, an interval slower than 3x the median is a stall; its time beyond the median
   pace is counted as stall time. The steady window is every remaining post-warm-up interval,
   and ``steady_throughput`` is their work divided by their time (samples/s when the log counts
   samples or states samples per step, else the log's own throughput's median, else steps/s).

A run counts as completed work only when it finished (``status == "succeeded"``) and did not
miss its quality target; otherwise its effective throughput is 0: a failed run produced no
usable result, however fast it ran. Without a target (given, or implied as by an MLPerf
``success``) ``quality_reached`` is ``None`` ("not verified") and a note says so.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from trntui.core.quality import QualityTarget, RecordedQuality
from trntui.core.timeline import (
    ImportedRun,
    Kind,
    RunMetadata,
    timeline_problems,
    with_interval_steps,
)

FACTS_VERSION = 2
"""Version of the rules below. Raise it with any change that can alter a run's facts: stored
facts (``trntui.store.facts``) of another version are derived again, and the user is told."""

WARMUP_TOLERANCE = 1.25
WARMUP_CONFIRM_INTERVALS = 3
STALL_FACTOR = 3.0

SUCCEEDED = "succeeded"
ABORTED = "aborted"
INCOMPLETE = "incomplete"
MISSED = "missed"
SUSPECT = "suspect"
"""The timeline holds values no log gives (NaN or infinite times, a clock running backwards,
negative steps): nothing is derived from it, and it counts neither as done nor as failed."""
_SUCCESS_WORDS = {"success", "succeeded", "pass", "passed", "ok", "completed"}


@dataclass(frozen=True)
class Stall:
    at_s: float
    step: int | None
    lost_s: float
    """Time beyond the median pace spent in the interval."""


@dataclass(frozen=True)
class PhaseSplit:
    """Where the launch-to-end time went, in seconds; ``None`` where the log cannot tell."""

    init_compile_s: float | None
    warmup_s: float | None
    training_s: float | None
    checkpoint_s: float | None
    eval_s: float | None
    stall_s: float | None
    recovery_s: float | None
    """Downtime, re-initialization and recompilation after a crash, before progress resumed."""
    redone_s: float | None
    """Time spent recomputing steps already done before a restart."""
    data_loading_s: float | None = None
    between_blocks_s: float | None = None
    """Time between training blocks (after a block's stop, before the next block's start)
    that no evaluation or checkpoint save inside it accounts for."""


@dataclass(frozen=True)
class RunFacts:
    status: str
    counts_as_completed: bool
    init_s: float | None
    run_s: float | None
    launch_to_result_s: float | None
    total_s: float | None
    phases: PhaseSplit
    median_step_time_s: float | None
    warmup_end_s: float | None
    warmup_steps: int | None
    steady_start_s: float | None
    steady_end_s: float | None
    steady_throughput: float | None
    throughput_unit: str | None
    steady_tokens_per_s: float | None
    effective_throughput: float | None
    """Useful work per second from launch to end; 0 for a run that does not count."""
    stalls: tuple[Stall, ...]
    restarts: int
    redone_steps: int | None
    completed_steps: int | None
    planned_steps: int | None
    quality_metric: str | None
    quality_value: float | None
    quality_target: QualityTarget | None
    quality_reached: bool | None
    notes: tuple[str, ...] = ()
    useful_work: float | None = None
    """Work counted once (redone work adds none), in the unit of ``throughput_unit``."""
    run_ends_at_planned_step: bool = False
    """``run_s`` ends at the last logged step of a run that reached its planned steps (the log
    prints no run stop)."""

    @property
    def outcome(self) -> str:
        """The status as lists show it: a finished run that missed its quality target is
        ``missed`` (it finished, but does not count)."""
        if self.status == SUCCEEDED and not self.counts_as_completed:
            return MISSED
        return self.status


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


def _progress_kind(timeline: pl.DataFrame) -> str | None:
    """Step rows, else epoch stops, else block stops: the first kind with two rows that
    carry a count of work (an epoch stop without one says nothing about progress), else the
    first kind present at all."""
    counted = pl.any_horizontal(
        pl.col(name).is_not_null() for name in ("step", "epoch", "samples", "tokens")
    )
    present = None
    for kind in (Kind.STEP, Kind.EPOCH_STOP, Kind.BLOCK_STOP):
        rows = timeline.filter(pl.col("kind") == kind)
        if rows.is_empty():
            continue
        present = present or str(kind)
        if rows.filter(counted).height >= 2:
            return str(kind)
    return present


def _paired_durations(timeline: pl.DataFrame, start: str, stop: str) -> pl.DataFrame:
    """``t_s`` (the stop) and ``duration_s`` of each start/stop pair, or a stated duration."""
    rows = timeline.filter(pl.col("kind").is_in([start, stop]) & pl.col("t_s").is_not_null())
    rows = rows.with_columns(
        pl.when(pl.col("kind") == stop)
        .then(
            pl.coalesce(
                pl.col("duration_s"),
                pl.when(pl.col("kind").shift(1) == start).then(
                    pl.col("t_s") - pl.col("t_s").shift(1)
                ),
            )
        )
        .alias("overhead_s")
    )
    return rows.filter((pl.col("kind") == stop) & pl.col("overhead_s").is_not_null()).select(
        "t_s", "overhead_s"
    )


_STARTS = {str(Kind.EPOCH_STOP): str(Kind.EPOCH_START), str(Kind.BLOCK_STOP): str(Kind.BLOCK_START)}


def _between_blocks(
    timeline: pl.DataFrame, progress_kind: str, inner: pl.DataFrame
) -> pl.DataFrame:
    """Time between a training block's stop and the next block's start that no evaluation or
    checkpoint save inside that gap accounts for (``t_s`` at the next start).

    Logs that bracket their training in start/stop events (MLPerf blocks and epochs) say when
    training was *not* running; that time is not steady training, whatever it was spent on.
    """
    start_kind = _STARTS.get(progress_kind)
    empty = pl.DataFrame(schema={"t_s": pl.Float64, "overhead_s": pl.Float64})
    if start_kind is None:
        return empty
    rows = timeline.filter(
        pl.col("kind").is_in([progress_kind, start_kind]) & pl.col("t_s").is_not_null()
    ).select("t_s", "kind")
    gaps = rows.with_columns(pl.col("t_s").shift(1).alias("stop_t")).filter(
        (pl.col("kind") == start_kind) & (pl.col("kind").shift(1) == progress_kind)
    )
    if gaps.is_empty():
        return empty
    within = (
        gaps.select("t_s", "stop_t")
        .join(inner.select(pl.col("t_s").alias("inner_t"), "overhead_s"), how="cross")
        .filter((pl.col("inner_t") > pl.col("stop_t")) & (pl.col("inner_t") <= pl.col("t_s")))
        .group_by("t_s")
        .agg(pl.col("overhead_s").sum().alias("inner_s"))
    )
    return (
        gaps.join(within, on="t_s", how="left")
        .select(
            "t_s",
            (pl.col("t_s") - pl.col("stop_t") - pl.col("inner_s").fill_null(0.0))
            .clip(lower_bound=0.0)
            .alias("overhead_s"),
        )
        .filter(pl.col("overhead_s") > 0)
    )


def _overheads(timeline: pl.DataFrame, progress_kind: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Checkpoint saves and evaluations (``t_s`` of their end, ``overhead_s``), and the time
    between blocks that they do not account for (``_between_blocks``)."""
    inner = pl.concat(
        [
            _paired_durations(timeline, Kind.CHECKPOINT_START, Kind.CHECKPOINT_STOP),
            _paired_durations(timeline, Kind.EVAL_START, Kind.EVAL_STOP),
        ]
    )
    return inner, _between_blocks(timeline, progress_kind, inner)


def _intervals(timeline: pl.DataFrame, progress_kind: str, overheads: pl.DataFrame) -> pl.DataFrame:
    """Progress rows with their interval: steps, wall time, busy time and time per step."""
    anchors = timeline.filter(
        pl.col("kind").is_in(
            [progress_kind, Kind.RUN_START, Kind.COMPILE_STOP, Kind.CHECKPOINT_LOAD]
        )
    ).with_row_index("order")
    anchors = anchors.with_columns(
        pl.col("step").alias("logged_step"),
        pl.when(pl.col("kind") == progress_kind)
        .then(
            pl.coalesce(
                "step",
                "epoch",
                pl.col("samples").cast(pl.Int64, strict=False),
                pl.col("tokens").cast(pl.Int64, strict=False),
            )
        )
        .otherwise(pl.col("step"))
        .alias("step"),
    )
    # A progress row without any counter cannot be placed in the run.
    anchors = anchors.filter((pl.col("kind") != progress_kind) | pl.col("step").is_not_null())
    loads = anchors.filter(pl.col("kind").is_in([progress_kind, Kind.CHECKPOINT_LOAD]))
    loads = with_interval_steps(
        loads.with_columns(
            pl.when(pl.col("kind") == progress_kind)
            .then(pl.lit(str(Kind.STEP)))
            .otherwise(pl.col("kind"))
            .alias("kind")
        ).select("order", "kind", "step")
    )
    anchors = anchors.join(loads.select("order", "interval_steps"), on="order", how="left")
    anchors = anchors.with_columns(
        (pl.col("t_s") - pl.col("t_s").shift(1)).alias("wall_s"),
        (pl.col("kind").shift(1) != progress_kind).fill_null(True).alias("segment_first"),
        (pl.col("samples") - pl.col("samples").shift(1)).alias("delta_samples"),
        (pl.col("tokens") - pl.col("tokens").shift(1)).alias("delta_tokens"),
    )
    progress = anchors.filter(pl.col("kind") == progress_kind)
    overheads = overheads.sort("t_s")
    if not overheads.is_empty() and progress["t_s"].drop_nulls().len():
        assigned = overheads.join_asof(
            progress.select(pl.col("t_s").alias("row_t"), "order").sort("row_t"),
            left_on="t_s",
            right_on="row_t",
            strategy="forward",
        )
        per_row = assigned.group_by("order").agg(pl.col("overhead_s").sum())
        progress = progress.join(per_row, on="order", how="left")
    else:
        progress = progress.with_columns(pl.lit(None, pl.Float64).alias("overhead_s"))
    restart = pl.col("step") <= pl.col("step").shift(1)
    return (
        progress.with_columns(
            pl.col("overhead_s").fill_null(0.0),
            restart.fill_null(False).alias("restart"),
        )
        .with_columns(
            pl.coalesce(
                pl.col("step_time_s"),
                (pl.col("wall_s") - pl.col("overhead_s")) / pl.col("interval_steps"),
            ).alias("per_step_s"),
        )
        .with_columns((pl.col("per_step_s") * pl.col("interval_steps")).alias("busy_s"))
    )


def _classified(iv: pl.DataFrame) -> pl.DataFrame:
    """Mark segments; a restart's first interval without a stated step time has no pace."""
    unknown_pace = pl.col("restart") & pl.col("step_time_s").is_null()
    return iv.with_columns(
        (pl.col("segment_first") | pl.col("restart")).alias("segment_first"),
        pl.when(unknown_pace).then(None).otherwise(pl.col("per_step_s")).alias("per_step_s"),
        pl.when(unknown_pace).then(None).otherwise(pl.col("busy_s")).alias("busy_s"),
        (pl.col("t_s") - pl.col("t_s").shift(1)).alias("since_previous_s"),
        pl.col("step").cum_max().shift(1).alias("highest_before"),
    ).with_columns(pl.col("segment_first").cast(pl.Int64).cum_sum().alias("segment"))


def _median_step(iv: pl.DataFrame) -> float | None:
    paces = iv.filter(pl.col("t_s").is_not_null())["per_step_s"].drop_nulls()
    return float(paces.median()) if paces.len() else None


def _with_phases(iv: pl.DataFrame, median: float) -> pl.DataFrame:
    """Flag warm-up, stall and steady intervals and the cost of each restart."""
    ok = (pl.col("per_step_s") <= WARMUP_TOLERANCE * median).fill_null(False)
    confirmed = ok
    for ahead in range(1, WARMUP_CONFIRM_INTERVALS):
        confirmed = confirmed & ok.shift(-ahead).over("segment").fill_null(True)
    # The first interval after a (re)start holds the first steps' compilation and caching: in a
    # log that reports coarse blocks it can look almost steady while hiding that cost.
    first = (pl.int_range(pl.len()).over("segment") == 0) & (pl.len().over("segment") > 1)
    confirmed = confirmed & ~first
    iv = iv.with_columns(
        pl.col("busy_s").fill_null(median * pl.col("interval_steps")),
        ((pl.col("per_step_s") - median) * pl.col("interval_steps")).alias("excess_s"),
        (confirmed.cast(pl.Int64).cum_sum().over("segment") == 0).alias("warm"),
    )
    timed = pl.col("per_step_s").is_not_null() & pl.col("t_s").is_not_null()
    stall = ~pl.col("warm") & timed & (pl.col("per_step_s") > STALL_FACTOR * median)
    return iv.with_columns(
        stall.alias("stall"),
        (~pl.col("warm") & timed & ~stall).alias("steady"),
        pl.when(pl.col("restart"))
        .then(
            (pl.col("highest_before") - (pl.col("step") - pl.col("interval_steps")))
            .clip(lower_bound=0)
            .fill_null(0)
        )
        .otherwise(0)
        .alias("redone"),
        pl.when(pl.col("restart"))
        .then((pl.col("since_previous_s") - pl.col("busy_s")).clip(lower_bound=0.0))
        .otherwise(0.0)
        .fill_null(0.0)
        .alias("recovery_s"),
    )


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


def _suspect_facts(meta: RunMetadata, problems: tuple[str, ...]) -> RunFacts:
    """Facts of a run whose timeline cannot be trusted: all unknown, and why."""
    unknown = PhaseSplit(None, None, None, None, None, None, None, None)
    return RunFacts(
        status=SUSPECT,
        counts_as_completed=False,
        init_s=None,
        run_s=None,
        launch_to_result_s=None,
        total_s=None,
        phases=unknown,
        median_step_time_s=None,
        warmup_end_s=None,
        warmup_steps=None,
        steady_start_s=None,
        steady_end_s=None,
        steady_throughput=None,
        throughput_unit=meta.throughput_unit,
        steady_tokens_per_s=None,
        effective_throughput=0.0,
        stalls=(),
        restarts=0,
        redone_steps=None,
        completed_steps=None,
        planned_steps=meta.planned_steps,
        quality_metric=meta.quality_metric,
        quality_value=None,
        quality_target=None,
        quality_reached=None,
        notes=tuple(f"suspect: {problem}" for problem in problems),
    )


def run_facts(
    run: ImportedRun,
    target: QualityTarget | None = None,
    planned_steps: int | None = None,
    recorded: RecordedQuality | None = None,
) -> RunFacts:
    """Derive the run facts of one imported run (rules in the module docstring).

    ``recorded`` is a quality result measured outside the log (an evaluation job run on the
    final checkpoint); it is used only when the log itself holds no evaluation.
    """
    tl = run.timeline
    meta = run.metadata
    problems = timeline_problems(tl)
    if problems:
        return _suspect_facts(meta, problems)
    # A trial is judged by its own plan (the steps its log says it will run); the inventory's
    # planned steps only where the log states none.
    planned = meta.planned_steps if meta.planned_steps is not None else planned_steps
    notes: list[str] = []
    has_clock = tl["t_s"].drop_nulls().len() > 0
    progress_kind = _progress_kind(tl)
    steps_series = tl.filter(pl.col("kind") == Kind.STEP)["step"].drop_nulls()
    final_step = int(steps_series[-1]) if steps_series.len() else None
    status = _status(tl, meta, final_step, planned)
    own_target = _own_target(meta)
    if target is None:
        target = own_target
    quality_value, reached, reached_at = _quality(tl, meta, target, status)
    rule_missed = _misses_own_rule(tl, meta, own_target, status)
    if rule_missed is not None:
        notes.append(rule_missed)
        reached = False
    total_s = float(tl["t_s"].max()) if has_clock else None
    outside_eval_s = None
    if quality_value is None and recorded is not None:
        outside_eval_s = recorded.evaluation_s
        quality_value = recorded.value
        reached = target.met_by(recorded.value) if target is not None else None
        # Verified on the final checkpoint: the result exists once the run ended and the
        # evaluation job took its recorded time (unknown evaluation time makes it unknown).
        reached_at = (
            total_s + recorded.evaluation_s
            if reached and total_s is not None and recorded.evaluation_s is not None
            else None
        )
        notes.append(f"quality from a recorded evaluation: {recorded.source}")
    counts = status == SUCCEEDED and reached is not False

    run_start = _first_t(tl, Kind.RUN_START)
    run_stop = _last_t(tl, Kind.RUN_STOP)

    between = None
    iv = None
    if progress_kind and has_clock:
        inner, between = _overheads(tl, progress_kind)
        iv = _classified(_intervals(tl, progress_kind, pl.concat([inner, between])))
    has_rows = iv is not None and not iv.is_empty()
    median = _median_step(iv) if has_rows else None

    # Training starts at run_start; else when the last compile before the first step ended.
    first_progress_t = iv["t_s"][0] if has_rows else None
    training_start = run_start
    if training_start is None and first_progress_t is not None:
        compiles = tl.filter(
            (pl.col("kind") == Kind.COMPILE_STOP) & (pl.col("t_s") <= first_progress_t)
        )["t_s"]
        training_start = float(compiles.max()) if compiles.len() else first_progress_t
    init_start = _first_t(tl, Kind.INIT_START)
    init_s = (
        training_start - (init_start if init_start is not None and run_start else 0.0)
        if training_start is not None
        else None
    )
    run_s = None
    ends_at_planned_step = False
    if run_stop is not None and (run_start is not None or training_start is not None):
        run_s = run_stop - (run_start if run_start is not None else training_start)
    elif _ends_at_planned_step(tl, status, planned) and has_rows and training_start is not None:
        # The format prints no run stop (neuronx-distributed): the run succeeded by reaching
        # the planned steps, and training ran until its last logged step (which includes any
        # restart and redone work after the planned step was first reached).
        last = iv["t_s"].drop_nulls()
        if last.len():
            run_s = float(last[-1]) - training_start
            ends_at_planned_step = True
    elif not has_clock:
        durations = tl.filter(pl.col("kind") == Kind.RUN_STOP)["duration_s"].drop_nulls()
        run_s = float(durations[-1]) if durations.len() else None

    restarts = 0
    redone: int | None = None
    recovery_s = warmup_s = stall_s = redone_s = 0.0
    stalls: tuple[Stall, ...] = ()
    warmup_end_s = steady_start = steady_end = None
    warmup_steps = None
    steady_throughput = None
    unit = meta.throughput_unit
    if has_rows and median:
        iv = _with_phases(iv, median)
        restart_rows = iv.filter(pl.col("restart"))
        restarts = restart_rows.height
        redone = int(restart_rows["redone"].sum())
        recovery_s = float(restart_rows["recovery_s"].sum())
        warm = iv.filter(pl.col("warm") & ~pl.col("restart"))
        warmup_s = float(warm["excess_s"].clip(lower_bound=0.0).sum())
        warmup_steps = int(warm.filter(pl.col("segment") == 1)["interval_steps"].sum())
        stall_rows = iv.filter(pl.col("stall"))
        stalls = tuple(
            Stall(t, step, lost)
            for t, step, lost in stall_rows.select("t_s", "step", "excess_s").iter_rows()
        )
        stall_s = float(stall_rows["excess_s"].sum())
        steady = iv.filter(pl.col("steady"))
        if not steady.is_empty():
            warmup_end_s = steady_start = float(steady["t_s"][0] - steady["busy_s"][0])
            steady_end = float(steady["t_s"][-1])
            steady_throughput, unit = _steady_throughput(steady, meta)
        redone_s = redone * median
    elif has_rows:
        redone = 0
    elif not has_clock:
        summary = tl.filter(pl.col("kind") == Kind.RUN_STOP)["throughput"].drop_nulls()
        if summary.len():
            steady_throughput = float(summary[-1])
            notes.append("throughput is the whole-run average (no clock to find warm-up)")

    tokens_per_s = None
    if (
        steady_throughput is not None
        and unit == "samples/s"
        and meta.tokens_per_step
        and meta.samples_per_step
    ):
        tokens_per_s = steady_throughput * meta.tokens_per_step / meta.samples_per_step

    checkpoint_s = _sum_overheads(tl, Kind.CHECKPOINT_START, Kind.CHECKPOINT_STOP)
    eval_s = _sum_overheads(tl, Kind.EVAL_START, Kind.EVAL_STOP)
    if has_rows and median and not (tl["kind"] == Kind.EVAL_STOP).any():
        end_t = run_stop if run_stop is not None else total_s
        unstated = _unstated_eval_time(tl, iv, end_t)
        if unstated is not None:
            eval_s = (eval_s or 0.0) + unstated
    between_s = None
    if has_rows and progress_kind in _STARTS and between is not None:
        between_s = float(between["overhead_s"].sum())
    phases = None
    if has_clock:
        known = [
            init_s or 0.0,
            warmup_s,
            checkpoint_s or 0.0,
            eval_s or 0.0,
            stall_s,
            recovery_s,
            redone_s,
            between_s or 0.0,
        ]
        training_s = None if total_s is None else max(0.0, total_s - sum(known))
        phases = PhaseSplit(
            init_compile_s=init_s,
            warmup_s=warmup_s if has_rows else None,
            training_s=training_s,
            checkpoint_s=checkpoint_s,
            eval_s=eval_s,
            stall_s=stall_s if has_rows else None,
            recovery_s=recovery_s if has_rows else None,
            redone_s=redone_s if has_rows else None,
            between_blocks_s=between_s,
        )
    else:
        phases = PhaseSplit(None, None, run_s, None, None, None, None, None)

    useful = _useful_work(tl, meta, unit)
    effective = None
    if not counts:
        effective = 0.0
        notes.append("the run does not count (not finished or quality target missed)")
    elif useful is not None:
        span = reached_at if reached_at is not None else total_s
        effective = useful / span if span else None
    if reached is None:
        notes.append(
            "quality not verified: no target given and none implied by the log"
            if target is None
            else "quality not verified: the log holds no evaluation (record one measured "
            "outside the log to verify it)"
        )
    if outside_eval_s:
        # The evaluation that verified the result ran after the log ended, on the same
        # instances: it is billed time like an in-log evaluation.
        phases = dataclasses.replace(phases, eval_s=(phases.eval_s or 0.0) + outside_eval_s)

    return RunFacts(
        status=status,
        counts_as_completed=counts,
        init_s=init_s,
        run_s=run_s,
        launch_to_result_s=reached_at if reached else None,
        total_s=total_s,
        phases=phases,
        median_step_time_s=median,
        warmup_end_s=warmup_end_s,
        warmup_steps=warmup_steps,
        steady_start_s=steady_start,
        steady_end_s=steady_end,
        steady_throughput=steady_throughput,
        throughput_unit=unit if steady_throughput is not None else meta.throughput_unit,
        steady_tokens_per_s=tokens_per_s,
        effective_throughput=effective,
        stalls=stalls,
        restarts=restarts,
        redone_steps=redone,
        completed_steps=final_step,
        planned_steps=planned,
        quality_metric=(target.metric if target and target.metric else meta.quality_metric),
        quality_value=quality_value,
        quality_target=target,
        quality_reached=reached,
        notes=tuple(notes),
        run_ends_at_planned_step=ends_at_planned_step,
        useful_work=useful,
    )


def _steady_throughput(steady: pl.DataFrame, meta: RunMetadata) -> tuple[float | None, str | None]:
    """Work over busy time in the unit the log counts: samples, else tokens, else steps times
    the stated samples per step, else the log's own rate, else epochs or steps."""
    busy = float(steady["busy_s"].sum())
    for column, unit in (("delta_samples", "samples/s"), ("delta_tokens", "tokens/s")):
        deltas = steady[column]
        if busy > 0 and deltas.null_count() == 0 and (deltas >= 0).all() and deltas.sum() > 0:
            return float(deltas.sum()) / busy, unit
    steps = float(steady["interval_steps"].sum())
    if meta.samples_per_step and busy > 0:
        return steps * meta.samples_per_step / busy, "samples/s"
    own = steady["throughput"].drop_nulls()
    if own.len():
        return float(own.median()), meta.throughput_unit
    if busy > 0:
        counts_epochs = (
            steady["logged_step"].is_null().all() and steady["epoch"].is_not_null().all()
        )
        return steps / busy, "epochs/s" if counts_epochs else "steps/s"
    return None, None


def _sum_overheads(tl: pl.DataFrame, start: str, stop: str) -> float | None:
    if not (tl["kind"] == stop).any():
        return None
    pairs = _paired_durations(tl, start, stop)
    return float(pairs["overhead_s"].sum()) if not pairs.is_empty() else None


def _unstated_eval_time(tl: pl.DataFrame, iv: pl.DataFrame, end_t: float | None) -> float | None:
    """Evaluation time a log leaves unstated (Megatron prints its own step time only): the
    part of an interval holding an ``eval`` row beyond its steps and stated overheads, and the
    time from the last step to the end when the final evaluation comes after it."""
    evals = tl.filter((pl.col("kind") == Kind.EVAL) & pl.col("t_s").is_not_null()).select(
        pl.col("t_s").alias("eval_t")
    )
    if evals.is_empty():
        return None
    rows = iv.filter(~pl.col("restart") & pl.col("t_s").is_not_null()).sort("t_s")
    matched = evals.sort("eval_t").join_asof(
        rows.select("t_s", "order"),
        left_on="eval_t",
        right_on="t_s",
        strategy="forward",
        allow_exact_matches=False,
    )
    holding = rows.join(matched.select("order").unique(), on="order", how="semi")
    gaps = holding.select(
        (pl.col("since_previous_s") - pl.col("busy_s") - pl.col("overhead_s"))
        .clip(lower_bound=0.0)
        .sum()
    ).item()
    total = float(gaps or 0.0)
    last_t = float(iv["t_s"].drop_nulls().max())
    if end_t is not None and (evals["eval_t"] >= last_t).any():
        later = _paired_durations(tl, Kind.CHECKPOINT_START, Kind.CHECKPOINT_STOP).filter(
            pl.col("t_s") > last_t
        )
        total += max(0.0, end_t - last_t - float(later["overhead_s"].sum()))
    return total


def _useful_work(tl: pl.DataFrame, meta: RunMetadata, unit: str | None) -> float | None:
    """Work that counts once: the highest cumulative count reached (redone steps add none).
    The run start's count (where the work began) is no progress."""
    tl = tl.filter(pl.col("kind") != Kind.RUN_START)
    if unit == "samples/s":
        samples = tl["samples"].drop_nulls()
        if samples.len():
            return float(samples.max())
        steps = tl["step"].drop_nulls()
        if steps.len() and meta.samples_per_step:
            return float(steps.max()) * meta.samples_per_step
        return None
    if unit == "tokens/s":
        tokens = tl["tokens"].drop_nulls()
        return float(tokens.max()) if tokens.len() else None
    if unit == "steps/s":
        steps = tl["step"].drop_nulls()
        return float(steps.max()) if steps.len() else None
    if unit == "epochs/s":
        epochs = tl["epoch"].drop_nulls()
        return float(epochs.max()) if epochs.len() else None
    return None


@dataclass(frozen=True)
class Spread:
    """One figure over repeated runs: its median and range (report the range, not one lucky
    run). ``n`` runs show it; ``min``, ``median`` and ``max`` are ``None`` only when none do.

    The one spread both the Runs screen (``summarize_set``) and the estimate
    (``core.estimate`` ``run_set_stats``) use.
    """

    n: int
    min: float | None
    median: float | None
    max: float | None
    mean: float | None = None
    trimmed_mean: float | None = None
    """Mean after dropping the lowest and highest value (when at least 3 values)."""


@dataclass(frozen=True)
class RunSetSummary:
    runs: int
    succeeded: int
    counted: int
    steady_throughput: Spread | None
    throughput_unit: str | None
    run_s: Spread | None
    launch_to_result_s: Spread | None


def spread(values: Sequence[float | None]) -> Spread | None:
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    trimmed = known[1:-1] if len(known) >= 3 else known
    return Spread(
        n=len(known),
        min=known[0],
        median=statistics.median(known),
        max=known[-1],
        mean=statistics.fmean(known),
        trimmed_mean=statistics.fmean(trimmed),
    )


def summarize_set(facts: Sequence[RunFacts]) -> RunSetSummary:
    """Range of steady throughput and durations over the runs that count."""
    counted = [f for f in facts if f.counts_as_completed]
    units = {f.throughput_unit for f in counted if f.steady_throughput is not None}
    unit = units.pop() if len(units) == 1 else None
    return RunSetSummary(
        runs=len(facts),
        succeeded=sum(f.status == SUCCEEDED for f in facts),
        counted=len(counted),
        steady_throughput=spread([f.steady_throughput for f in counted]) if unit else None,
        throughput_unit=unit,
        run_s=spread([f.run_s for f in counted]),
        launch_to_result_s=spread([f.launch_to_result_s for f in counted]),
    )


def facts_to_json(facts: RunFacts) -> str:
    """``facts`` as JSON text that ``facts_from_json`` turns back into an equal ``RunFacts``."""
    return json.dumps(dataclasses.asdict(facts), sort_keys=True, allow_nan=True)


def facts_from_json(text: str) -> RunFacts:
    """Inverse of ``facts_to_json``; raises ``ValueError`` on text that is not stored facts."""
    try:
        data = json.loads(text)
        target = data.pop("quality_target")
        return RunFacts(
            **{
                **data,
                "phases": PhaseSplit(**data["phases"]),
                "stalls": tuple(Stall(**stall) for stall in data["stalls"]),
                "notes": tuple(data["notes"]),
                "quality_target": None if target is None else QualityTarget(**target),
            }
        )
    except (TypeError, KeyError, AttributeError, json.JSONDecodeError) as error:
        raise ValueError(f"not stored run facts ({error})") from None
