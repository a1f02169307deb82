"""``run_facts``: one imported run -> its ``RunFacts``, by the rules in turn (outcome,
clocks, steady state, phase split, useful work); a suspect timeline gets no facts at all."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import polars as pl

from trntui.core.quality import QualityTarget, RecordedQuality
from trntui.core.run_facts.facts import (
    ABORTED,
    SUCCEEDED,
    SUSPECT,
    TOKENS_FROM_SEQUENCE_LENGTH,
    PhaseSplit,
    RunFacts,
    Stall,
)
from trntui.core.run_facts.outcome import (
    first_t,
    last_t,
    misses_own_rule,
    own_target_of,
    quality_of,
    status_of,
    stops_at_planned_step,
)
from trntui.core.run_facts.steady import (
    STARTS,
    classified,
    intervals_of,
    median_step,
    overheads_of,
    paired_durations,
    progress_kind_of,
    steady_throughput_of,
    sum_overheads,
    unstated_eval_time,
    useful_work_of,
    with_phases,
)
from trntui.core.scalars import number
from trntui.core.timeline import (
    ImportedRun,
    Kind,
    RunMetadata,
    timeline_problems,
)


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


@dataclass(frozen=True)
class _Judged:
    """The quality verdict (the outcome rule): the target judged against, the best value,
    whether it was reached and when, and an evaluation recorded outside the log."""

    target: QualityTarget | None
    value: float | None
    reached: bool | None
    reached_at: float | None
    outside_eval_s: float | None
    work: float | None = None
    """The work the verifying evaluation evaluated, where the log states it."""


def _judged(
    tl: pl.DataFrame,
    meta: RunMetadata,
    target: QualityTarget | None,
    status: str,
    recorded: RecordedQuality | None,
    total_s: float | None,
    notes: list[str],
) -> _Judged:
    """The quality verdict: the given target, else the log's own (MLPerf's compliance target);
    a success that breaks the format's own rule is missed; a recorded evaluation stands in
    where the log holds none, and overrides the log's own where it holds one (a person can
    see an evaluation is wrong: the override says whose source and what the log said)."""
    own_target = own_target_of(meta)
    if target is None:
        target = own_target
    quality = quality_of(tl, meta, target, status)
    quality_value, reached, reached_at = quality.value, quality.reached, quality.reached_at
    rule_missed = misses_own_rule(tl, meta, own_target, status)
    if rule_missed is not None:
        notes.append(rule_missed)
        reached = False
    outside_eval_s = None
    if recorded is not None:
        logged = quality_value
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
        said = "" if logged is None else f", over the log's own {logged:.4g}"
        notes.append(f"quality from a recorded evaluation: {recorded.source}{said}")
    work = quality.work if reached and outside_eval_s is None else None
    return _Judged(target, quality_value, reached, reached_at, outside_eval_s, work)


@dataclass(frozen=True)
class _Clocks:
    """The two clocks: ``init_s`` before training, ``run_s`` "training running"."""

    run_stop: float | None
    init_s: float | None
    run_s: float | None
    ends_at_planned_step: bool
    before_init_s: float | None = None


def _clocks(
    tl: pl.DataFrame,
    iv: pl.DataFrame | None,
    status: str,
    planned: int | None,
    has_clock: bool,
) -> _Clocks:
    """Training starts at run start, else when the last compile before the first progress
    ended; it runs until the run stop, else (no stop printed) the last logged step of a run
    that reached its planned steps. ``iv`` is the progress intervals, ``None`` if none."""
    run_start = first_t(tl, Kind.RUN_START)
    run_stop = last_t(tl, Kind.RUN_STOP)
    first_progress_t = iv["t_s"][0] if iv is not None else None
    training_start = run_start
    if training_start is None and first_progress_t is not None:
        compiles = tl.filter(
            (pl.col("kind") == Kind.COMPILE_STOP) & (pl.col("t_s") <= first_progress_t)
        )["t_s"]
        training_start = number(compiles.max()) if compiles.len() else first_progress_t
    init_start = first_t(tl, Kind.INIT_START)
    init_s = (
        training_start - (init_start if init_start is not None and run_start else 0.0)
        if training_start is not None
        else None
    )
    # Lines before init_start (a cache clear, a container's first words) are on the clock too:
    # t_s counts from the log's first timestamp, whether or not that line is a timeline row.
    before_init_s = (
        max(0.0, init_start) if init_start is not None and run_start is not None else None
    )
    run_s = None
    ends_at_planned_step = False
    start = run_start if run_start is not None else training_start
    if run_stop is not None and start is not None:
        run_s = run_stop - start
    elif (
        stops_at_planned_step(tl, status, planned) and iv is not None and training_start is not None
    ):
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
    return _Clocks(run_stop, init_s, run_s, ends_at_planned_step, before_init_s)


@dataclass(frozen=True)
class _Steady:
    """What rules 3-5 find: restarts and their cost, warm-up, stalls, the steady window."""

    iv: pl.DataFrame | None
    """The intervals with their phases (``with_phases``), when there is a median pace."""
    restarts: int = 0
    redone: int | None = None
    recovery_s: float = 0.0
    warmup_s: float = 0.0
    stall_s: float = 0.0
    redone_s: float = 0.0
    stalls: tuple[Stall, ...] = ()
    warmup_end_s: float | None = None
    steady_start: float | None = None
    steady_end: float | None = None
    warmup_steps: int | None = None
    steady_throughput: float | None = None
    unit: str | None = None


_STEADY_COLUMNS = (
    "t_s",
    "busy_s",
    "interval_steps",
    "delta_samples",
    "delta_tokens",
    "throughput",
    "logged_step",
    "epoch",
)
"""The columns of the steady rows that the steady window and throughput read."""


def _rows(iv: pl.DataFrame, keep: pl.Expr, *columns: str) -> pl.DataFrame:
    """The rows of ``iv`` where ``keep`` holds, with only ``columns`` (and ``interval_steps``)."""
    names = list(dict.fromkeys([*columns, "interval_steps"]))
    return iv.lazy().filter(keep).select(names).collect()


def _steady_state(
    tl: pl.DataFrame,
    meta: RunMetadata,
    iv: pl.DataFrame | None,
    median: float | None,
    has_clock: bool,
    notes: list[str],
) -> _Steady:
    """Rules 3-5 of the module docstring over the intervals ``iv`` (``None`` if none); a log
    with no clock has only its whole-run average throughput."""
    unit = meta.throughput_unit
    if iv is not None and median:
        iv = with_phases(iv, median)
        restart_rows = iv.filter(pl.col("restart"))
        redone = int(restart_rows["redone"].sum())
        # Only the columns read below: the steady rows are nearly all of a long run.
        warm = _rows(iv, pl.col("warm") & ~pl.col("restart"), "excess_s", "segment")
        stall_rows = iv.filter(pl.col("stall"))
        steady = _rows(iv, pl.col("steady"), *_STEADY_COLUMNS)
        warmup_end_s = steady_start = steady_end = steady_throughput = None
        if not steady.is_empty():
            warmup_end_s = steady_start = float(steady["t_s"][0] - steady["busy_s"][0])
            steady_end = float(steady["t_s"][-1])
            steady_throughput, unit = steady_throughput_of(steady, meta)
        return _Steady(
            iv=iv,
            restarts=restart_rows.height,
            redone=redone,
            recovery_s=float(restart_rows["recovery_s"].sum()),
            warmup_s=float(warm["excess_s"].clip(lower_bound=0.0).sum()),
            stall_s=float(stall_rows["excess_s"].sum()),
            redone_s=redone * median,
            stalls=tuple(
                Stall(t, step, lost)
                for t, step, lost in stall_rows.select("t_s", "step", "excess_s").iter_rows()
            ),
            warmup_end_s=warmup_end_s,
            steady_start=steady_start,
            steady_end=steady_end,
            warmup_steps=int(warm.filter(pl.col("segment") == 1)["interval_steps"].sum()),
            steady_throughput=steady_throughput,
            unit=unit,
        )
    if iv is not None:
        return _Steady(iv=None, redone=0, unit=unit)
    if not has_clock:
        summary = tl.filter(pl.col("kind") == Kind.RUN_STOP)["throughput"].drop_nulls()
        if summary.len():
            notes.append("throughput is the whole-run average (no clock to find warm-up)")
            return _Steady(iv=None, steady_throughput=float(summary[-1]), unit=unit)
    return _Steady(iv=None, unit=unit)


def _phase_split(
    tl: pl.DataFrame,
    progress_kind: str | None,
    between: pl.DataFrame | None,
    total_s: float | None,
    has_clock: bool,
    has_rows: bool,
    clocks: _Clocks,
    steady: _Steady,
) -> PhaseSplit:
    """Where the launch-to-end time went; training is what the other phases leave."""
    checkpoint_s = sum_overheads(tl, Kind.CHECKPOINT_START, Kind.CHECKPOINT_STOP)
    eval_s = sum_overheads(tl, Kind.EVAL_START, Kind.EVAL_STOP)
    if steady.iv is not None and not (tl["kind"] == Kind.EVAL_STOP).any():
        end_t = clocks.run_stop if clocks.run_stop is not None else total_s
        unstated = unstated_eval_time(tl, steady.iv, end_t)
        if unstated is not None:
            eval_s = (eval_s or 0.0) + unstated
    between_s = after_s = None
    if has_rows and progress_kind in STARTS and between is not None:
        between_s = float(between["overhead_s"].sum())
        after_s = _after_training(tl, steady.iv, total_s)
    if not has_clock:
        return PhaseSplit(None, None, clocks.run_s, None, None, None, None, None)
    known = [
        clocks.before_init_s or 0.0,
        clocks.init_s or 0.0,
        steady.warmup_s,
        checkpoint_s or 0.0,
        eval_s or 0.0,
        steady.stall_s,
        steady.recovery_s,
        steady.redone_s,
        between_s or 0.0,
        after_s or 0.0,
    ]
    training_s = None if total_s is None else max(0.0, total_s - sum(known))
    return PhaseSplit(
        init_compile_s=clocks.init_s,
        warmup_s=steady.warmup_s if has_rows else None,
        training_s=training_s,
        checkpoint_s=checkpoint_s,
        eval_s=eval_s,
        stall_s=steady.stall_s if has_rows else None,
        recovery_s=steady.recovery_s if has_rows else None,
        redone_s=steady.redone_s if has_rows else None,
        between_blocks_s=between_s,
        before_init_s=clocks.before_init_s,
        after_training_s=after_s,
    )


def _after_training(
    tl: pl.DataFrame, iv: pl.DataFrame | None, total_s: float | None
) -> float | None:
    """Time from the last training block's end to the log's end that no evaluation or
    checkpoint save after it accounts for: a run evaluated offline restarts its processes to
    load each checkpoint; every run tears down."""
    if iv is None or total_s is None:
        return None
    ends = iv["t_s"].drop_nulls()
    if not ends.len():
        return None
    last = number(ends.max())
    later = pl.concat(
        [
            paired_durations(tl, Kind.EVAL_START, Kind.EVAL_STOP),
            paired_durations(tl, Kind.CHECKPOINT_START, Kind.CHECKPOINT_STOP),
        ]
    ).filter(pl.col("t_s") > last)
    return max(0.0, total_s - last - float(later["overhead_s"].sum()))


def _counter_unit(tl: pl.DataFrame, progress_kind: str | None) -> str | None:
    """The unit of the counter progress intervals are counted in (``steady.intervals_of``: the
    step, else the epoch, else samples, else tokens of the progress rows)."""
    if progress_kind is None:
        return None
    units = {"step": "steps", "epoch": "epochs", "samples": "samples", "tokens": "tokens"}
    present = [column for column in units if column in tl.columns]
    if not present:
        return None
    # How many values each counter has on the progress rows (only those columns filtered).
    counts = (
        tl.lazy()
        .filter(pl.col("kind") == progress_kind)
        .select(pl.col(column).count() for column in present)
        .collect()
    )
    return next((units[column] for column in present if counts[column][0]), None)


def judged_plan(meta: RunMetadata, planned_steps: int | None) -> int | None:
    """The steps a run is judged by: its own plan (the steps its log says it will run), the
    inventory's ``planned_steps`` only where the log states none."""
    return meta.planned_steps if meta.planned_steps is not None else planned_steps


def goal_free(
    run: ImportedRun,
    target: QualityTarget | None,
    planned_steps: int | None,
    recorded: RecordedQuality | None,
) -> bool:
    """Whether ``run_facts(run, target, planned_steps, recorded)`` is ``run_facts(run)``: no
    quality target, no recorded result, and the inventory's planned steps not used."""
    unused = judged_plan(run.metadata, planned_steps) == run.metadata.planned_steps
    return target is None and recorded is None and unused


def _diverged(tl: pl.DataFrame, status: str, notes: list[str]) -> str:
    """A run whose last logged training loss is NaN or infinite diverged: it failed (aborted),
    whatever its step count says, unless its own run stop reports success. A loss that was
    not finite for a while and came back is a note."""
    steps = (
        tl.lazy()
        .filter((pl.col("kind") == Kind.STEP) & pl.col("loss").is_not_null())
        .select(name for name in ("loss", "line") if name in tl.columns)
        .collect()
    )
    if steps.is_empty():
        return status
    bad = steps.filter(pl.col("loss").is_nan() | pl.col("loss").is_infinite())
    if bad.is_empty():
        return status
    where = f"log line {bad['line'][0]}" if "line" in bad.columns else "a logged step"
    first = f"the training loss is {bad['loss'][0]} at {where}"
    last = steps["loss"][-1]
    if math.isfinite(last):
        notes.append(f"{first}; later steps log a finite loss again")
        return status
    stopped = tl.filter(pl.col("kind") == Kind.RUN_STOP)["status"].to_list()
    if status == SUCCEEDED and stopped:
        notes.append(f"{first}, though the run's own stop reports success")
        return status
    notes.append(f"diverged: {first} and stays so to the last step; the run failed")
    return ABORTED


def _tokens_per_s(
    throughput: float | None, unit: str | None, meta: RunMetadata, notes: list[str]
) -> float | None:
    """Steady tokens per second: the throughput itself when counted in tokens; from samples
    per second with the log's tokens per step (Megatron), else with the sequence length the
    log states (each sample one sequence of that length: neuronx-distributed's seq/s, an
    MLPerf max_sequence_length); unknown otherwise."""
    if throughput is None:
        return None
    if unit == "tokens/s":
        return throughput
    if unit != "samples/s":
        return None
    if meta.tokens_per_step and meta.samples_per_step:
        return throughput * meta.tokens_per_step / meta.samples_per_step
    length = meta.protocol.get("sequence_length")
    if length is not None and length.isdigit() and int(length) > 0:
        notes.append(
            f"{TOKENS_FROM_SEQUENCE_LENGTH} the log states ({int(length)}): each "
            "sample one sequence of that length"
        )
        return throughput * int(length)
    return None


def run_facts(
    run: ImportedRun,
    target: QualityTarget | None = None,
    planned_steps: int | None = None,
    recorded: RecordedQuality | None = None,
) -> RunFacts:
    """Derive the run facts of one imported run (rules in the package docstring).

    ``recorded`` is a quality result measured outside the log (an evaluation job run on the
    final checkpoint); where the log holds its own evaluations, it overrides them (a person
    who sees the log's evaluation is wrong can always correct it), and the notes say so.

    The rules in turn: the outcome (``status_of``, ``_judged``), the intervals and their median
    (rules 1-3, ``steady``), the clocks (``_clocks``), warm-up, stalls and the steady window
    (rules 4-5, ``_steady_state``), the phase split (``_phase_split``), the useful work.
    """
    tl = run.timeline
    meta = run.metadata
    problems = timeline_problems(tl)
    if problems:
        return _suspect_facts(meta, problems)
    planned = judged_plan(meta, planned_steps)
    notes: list[str] = []
    has_clock = tl["t_s"].drop_nulls().len() > 0
    progress_kind = progress_kind_of(tl)
    steps_series = (
        tl.lazy().filter(pl.col("kind") == Kind.STEP).select("step").collect().to_series()
    ).drop_nulls()
    final_step = int(steps_series[-1]) if steps_series.len() else None
    status = _diverged(tl, status_of(tl, meta, final_step, planned), notes)
    total_s = number(tl["t_s"].max()) if has_clock else None
    judged = _judged(tl, meta, target, status, recorded, total_s, notes)
    target, reached = judged.target, judged.reached
    counts = status == SUCCEEDED and reached is not False

    between = None
    iv = None
    if progress_kind and has_clock:
        inner, between = overheads_of(tl, progress_kind)
        iv = classified(intervals_of(tl, progress_kind, pl.concat([inner, between])))
    has_rows = iv is not None and not iv.is_empty()
    rows = iv if has_rows else None
    median = median_step(rows) if rows is not None else None
    clocks = _clocks(tl, rows, status, planned, has_clock)
    steady = _steady_state(tl, meta, rows, median, has_clock, notes)
    steady_throughput, unit = steady.steady_throughput, steady.unit

    tokens_per_s = _tokens_per_s(steady_throughput, unit, meta, notes)
    phases = _phase_split(tl, progress_kind, between, total_s, has_clock, has_rows, clocks, steady)

    useful = useful_work_of(tl, meta, unit)
    effective = None
    if not counts:
        effective = 0.0
        notes.append("the run does not count (not finished or quality target missed)")
    elif useful is not None:
        span = judged.reached_at if judged.reached_at is not None else total_s
        effective = useful / span if span else None
    if reached is None:
        notes.append(
            "quality not verified: no target given and none implied by the log"
            if target is None
            else "quality not verified: the log holds no evaluation (record one measured "
            "outside the log to verify it)"
        )
    if judged.outside_eval_s:
        # The evaluation that verified the result ran after the log ended, on the same
        # instances: it is billed time like an in-log evaluation.
        phases = dataclasses.replace(
            phases,
            eval_s=(phases.eval_s or 0.0) + judged.outside_eval_s,
            outside_eval_s=judged.outside_eval_s,
        )

    return RunFacts(
        status=status,
        counts_as_completed=counts,
        init_s=clocks.init_s,
        run_s=clocks.run_s,
        launch_to_result_s=judged.reached_at if reached else None,
        total_s=total_s,
        phases=phases,
        median_step_time_s=median,
        warmup_end_s=steady.warmup_end_s,
        warmup_steps=steady.warmup_steps,
        steady_start_s=steady.steady_start,
        steady_end_s=steady.steady_end,
        steady_throughput=steady_throughput,
        throughput_unit=unit if steady_throughput is not None else meta.throughput_unit,
        steady_tokens_per_s=tokens_per_s,
        effective_throughput=effective,
        stalls=steady.stalls,
        restarts=steady.restarts,
        redone_steps=steady.redone,
        completed_steps=final_step,
        planned_steps=planned,
        quality_metric=(target.metric if target and target.metric else meta.quality_metric),
        quality_value=judged.value,
        quality_target=target,
        quality_reached=reached,
        notes=tuple(notes),
        run_ends_at_planned_step=clocks.ends_at_planned_step,
        useful_work=useful,
        warmup_unit=_counter_unit(tl, progress_kind),
        work_to_target=judged.work if judged.work is not None else (useful if reached else None),
    )
