"""The steady-state rules 1-5 of ``trntui.core.run_facts``: progress intervals, their pace,
the median, warm-up, stalls and the steady window, with the overheads inside them (checkpoint
saves, evaluations, time between blocks), the steady throughput and the useful work."""

from __future__ import annotations

import polars as pl

from trntui.core.run_facts.facts import STALL_FACTOR, WARMUP_CONFIRM_INTERVALS, WARMUP_TOLERANCE
from trntui.core.scalars import number
from trntui.core.timeline import (
    Kind,
    RunMetadata,
    with_interval_steps,
)


def progress_kind_of(timeline: pl.DataFrame) -> str | None:
    """Step rows, else epoch stops, else block stops: the first kind with two rows that
    carry a count of work (an epoch stop without one says nothing about progress), else the
    first kind present at all."""
    counted = pl.any_horizontal(
        pl.col(name).is_not_null() for name in ("step", "epoch", "samples", "tokens")
    )
    present = None
    for kind in (Kind.STEP, Kind.EPOCH_STOP, Kind.BLOCK_STOP):
        # Only the flag is carried through the filter (a long run has a step row per step).
        rows = timeline.lazy().filter(pl.col("kind") == kind).select(counted).collect()
        if rows.is_empty():
            continue
        present = present or str(kind)
        if rows.to_series().sum() >= 2:
            return str(kind)
    return present


def paired_durations(timeline: pl.DataFrame, start: str, stop: str) -> pl.DataFrame:
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


STARTS = {str(Kind.EPOCH_STOP): str(Kind.EPOCH_START), str(Kind.BLOCK_STOP): str(Kind.BLOCK_START)}


def _between_blocks(
    timeline: pl.DataFrame, progress_kind: str, inner: pl.DataFrame
) -> pl.DataFrame:
    """Time between a training block's stop and the next block's start that no evaluation or
    checkpoint save inside that gap accounts for (``t_s`` at the next start).

    Logs that bracket their training in start/stop events (MLPerf blocks and epochs) say when
    training was *not* running; that time is not steady training, whatever it was spent on.
    """
    start_kind = STARTS.get(progress_kind)
    empty = pl.DataFrame(schema={"t_s": pl.Float64, "overhead_s": pl.Float64})
    if start_kind is None:
        return empty
    rows = (
        timeline.lazy()
        .filter(pl.col("kind").is_in([progress_kind, start_kind]) & pl.col("t_s").is_not_null())
        .select("t_s", "kind")
        .collect()
    )
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


def overheads_of(timeline: pl.DataFrame, progress_kind: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Checkpoint saves and evaluations (``t_s`` of their end, ``overhead_s``), and the time
    between blocks that they do not account for (``_between_blocks``)."""
    inner = pl.concat(
        [
            paired_durations(timeline, Kind.CHECKPOINT_START, Kind.CHECKPOINT_STOP),
            paired_durations(timeline, Kind.EVAL_START, Kind.EVAL_STOP),
        ]
    )
    return inner, _between_blocks(timeline, progress_kind, inner)


_INTERVAL_COLUMNS = (
    "t_s",
    "kind",
    "step",
    "epoch",
    "samples",
    "tokens",
    "step_time_s",
    "throughput",
)
"""The timeline columns the intervals carry: what rules 1-5 and the throughput read."""


def intervals_of(
    timeline: pl.DataFrame, progress_kind: str, overheads: pl.DataFrame
) -> pl.DataFrame:
    """Progress rows with their interval: steps, wall time, busy time and time per step."""
    # One query over the columns the rules read (a long run has a row per step).
    query = (
        timeline.lazy()
        .select(name for name in _INTERVAL_COLUMNS if name in timeline.columns)
        .filter(
            pl.col("kind").is_in(
                [progress_kind, Kind.RUN_START, Kind.COMPILE_STOP, Kind.CHECKPOINT_LOAD]
            )
        )
        .with_row_index("order")
    )
    query = query.with_columns(
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
    anchors = query.filter(
        (pl.col("kind") != progress_kind) | pl.col("step").is_not_null()
    ).collect()
    is_load = pl.col("kind").is_in([progress_kind, Kind.CHECKPOINT_LOAD])
    loads = with_interval_steps(
        anchors.lazy()
        .filter(is_load)
        .select(
            "order",
            pl.when(pl.col("kind") == progress_kind)
            .then(pl.lit(str(Kind.STEP)))
            .otherwise(pl.col("kind"))
            .alias("kind"),
            "step",
        )
        .collect()
    )
    anchors = anchors.with_columns(
        (pl.col("t_s") - pl.col("t_s").shift(1)).alias("wall_s"),
        (pl.col("kind").shift(1) != progress_kind).fill_null(True).alias("segment_first"),
        (pl.col("samples") - pl.col("samples").shift(1)).alias("delta_samples"),
        (pl.col("tokens") - pl.col("tokens").shift(1)).alias("delta_tokens"),
    )
    progress = anchors.filter(pl.col("kind") == progress_kind)
    # The progress rows are the ``step`` rows of ``loads``, in the same order: their interval
    # steps are put in place by position, not joined by ``order``. One chunk: a sum over
    # several may differ from a sum over one in the last bit.
    if loads.height != progress.height:
        loads = loads.filter(pl.col("kind") == Kind.STEP)
    progress = progress.with_columns(loads["interval_steps"].rechunk())
    overheads = overheads.sort("t_s")
    if not overheads.is_empty() and progress["t_s"].drop_nulls().len():
        rows = progress.select(pl.col("t_s").alias("row_t"), "order")
        # Times that already rise strictly are in the one order a sort could give them.
        if rows["row_t"].null_count() or not (rows["row_t"].diff().slice(1) > 0).all():
            rows = rows.sort("row_t")
        assigned = overheads.join_asof(
            rows.with_columns(pl.col("row_t").set_sorted()),
            left_on="t_s",
            right_on="row_t",
            strategy="forward",
        )
        per_row = assigned.group_by("order").agg(pl.col("overhead_s").sum()).drop_nulls("order")
        # Each sum put in its row (``order`` rises with the rows), not joined by ``order``.
        overhead_s = (
            pl.Series("overhead_s", [], pl.Float64)
            .extend_constant(None, progress.height)
            .scatter(progress["order"].search_sorted(per_row["order"]), per_row["overhead_s"])
        )
        progress = progress.with_columns(overhead_s)
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


def classified(iv: pl.DataFrame) -> pl.DataFrame:
    """Mark segments; a restart's first interval without a stated step time has no pace."""
    unknown_pace = pl.col("restart") & pl.col("step_time_s").is_null()
    return iv.with_columns(
        (pl.col("segment_first") | pl.col("restart")).alias("segment_first"),
        pl.when(unknown_pace).then(None).otherwise(pl.col("per_step_s")).alias("per_step_s"),
        pl.when(unknown_pace).then(None).otherwise(pl.col("busy_s")).alias("busy_s"),
        (pl.col("t_s") - pl.col("t_s").shift(1)).alias("since_previous_s"),
        pl.col("step").cum_max().shift(1).alias("highest_before"),
    ).with_columns(pl.col("segment_first").cast(pl.Int64).cum_sum().alias("segment"))


def median_step(iv: pl.DataFrame) -> float | None:
    paces = iv.filter(pl.col("t_s").is_not_null())["per_step_s"].drop_nulls()
    return number(paces.median()) if paces.len() else None


def with_phases(iv: pl.DataFrame, median: float) -> pl.DataFrame:
    """Flag warm-up, stall and steady intervals and the cost of each restart."""
    # Segments are runs of consecutive rows (``segment`` counts up), so each window over a
    # segment is read from its neighbours: no grouping by ``segment`` is needed.
    segment = pl.col("segment")
    starts = (segment != segment.shift(1)).fill_null(True)
    ends = (segment != segment.shift(-1)).fill_null(True)
    ok = (pl.col("per_step_s") <= WARMUP_TOLERANCE * median).fill_null(False)
    confirmed = ok
    for ahead in range(1, WARMUP_CONFIRM_INTERVALS):
        same = segment.shift(-ahead) == segment
        confirmed = confirmed & pl.when(same).then(ok.shift(-ahead)).fill_null(True)
    # The first interval after a (re)start holds the first steps' compilation and caching: in a
    # log that reports coarse blocks it can look almost steady while hiding that cost.
    first = starts & ~ends  # a segment's first row, when the segment has more than one
    confirmed = (confirmed & ~first).cast(pl.Int64)
    # Each part once (an eager query does not share sub-expressions).
    counts = iv.select(starts.alias("starts"), confirmed.alias("confirmed")).with_columns(
        pl.col("confirmed").cum_sum().alias("so_far")
    )
    # Confirmed rows so far in the segment: the running count less its value before the start.
    so_far = pl.col("so_far")
    before = pl.when("starts").then(so_far - pl.col("confirmed")).forward_fill()
    iv = iv.with_columns(
        pl.col("busy_s").fill_null(median * pl.col("interval_steps")),
        ((pl.col("per_step_s") - median) * pl.col("interval_steps")).alias("excess_s"),
        counts.select((so_far - before == 0).alias("warm")).to_series(),
    )
    timed = pl.col("per_step_s").is_not_null() & pl.col("t_s").is_not_null()
    after_warmup = ~pl.col("warm") & timed
    slow = pl.col("per_step_s") > STALL_FACTOR * median
    return iv.with_columns(
        (after_warmup & slow).alias("stall"),
        (after_warmup & ~slow).alias("steady"),
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


def steady_throughput_of(
    steady: pl.DataFrame, meta: RunMetadata
) -> tuple[float | None, str | None]:
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
        return number(own.median()), meta.throughput_unit
    if busy > 0:
        counts_epochs = (
            steady["logged_step"].is_null().all() and steady["epoch"].is_not_null().all()
        )
        return steps / busy, "epochs/s" if counts_epochs else "steps/s"
    return None, None


def sum_overheads(tl: pl.DataFrame, start: str, stop: str) -> float | None:
    if not (tl["kind"] == stop).any():
        return None
    pairs = paired_durations(tl, start, stop)
    return float(pairs["overhead_s"].sum()) if not pairs.is_empty() else None


def unstated_eval_time(tl: pl.DataFrame, iv: pl.DataFrame, end_t: float | None) -> float | None:
    """Evaluation time a log leaves unstated (Megatron prints its own step time only): the
    part of an interval holding an ``eval`` row beyond its steps and stated overheads, and the
    time from the last step to the end when the final evaluation comes after it."""
    evals = tl.filter((pl.col("kind") == Kind.EVAL) & pl.col("t_s").is_not_null()).select(
        pl.col("t_s").alias("eval_t")
    )
    if evals.is_empty():
        return None
    rows = (
        iv.lazy()
        .filter(~pl.col("restart") & pl.col("t_s").is_not_null())
        .select("t_s", "order")
        .collect()
    )
    # Sorted by time; rows whose times already rise strictly (the usual log) are in the one
    # order a sort could give them, so only the others are sorted.
    if not rows.select((pl.col("t_s").diff() > 0).all()).item():
        rows = rows.sort("t_s")
    matched = evals.sort("eval_t").join_asof(
        rows.select("t_s", "order"),
        left_on="eval_t",
        right_on="t_s",
        strategy="forward",
        allow_exact_matches=False,
    )
    # The intervals holding an evaluation, in order: found by position (``order`` rises).
    held = matched["order"].drop_nulls().unique().sort()
    holding = iv.select("since_previous_s", "busy_s", "overhead_s").gather(
        iv["order"].search_sorted(held)
    )
    gaps = holding.select(
        (pl.col("since_previous_s") - pl.col("busy_s") - pl.col("overhead_s"))
        .clip(lower_bound=0.0)
        .sum()
    ).item()
    total = float(gaps or 0.0)
    last_t = number(iv["t_s"].drop_nulls().max())
    if end_t is not None and (evals["eval_t"] >= last_t).any():
        later = paired_durations(tl, Kind.CHECKPOINT_START, Kind.CHECKPOINT_STOP).filter(
            pl.col("t_s") > last_t
        )
        total += max(0.0, end_t - last_t - float(later["overhead_s"].sum()))
    return total


def useful_work_of(tl: pl.DataFrame, meta: RunMetadata, unit: str | None) -> float | None:
    """Work that counts once: the highest cumulative count reached (redone steps add none).
    The run start's count (where the work began) is no progress."""
    counters = [name for name in ("samples", "step", "tokens", "epoch") if name in tl.columns]
    tl = tl.lazy().filter(pl.col("kind") != Kind.RUN_START).select(counters).collect()
    if unit == "samples/s":
        samples = tl["samples"].drop_nulls()
        if samples.len():
            return number(samples.max())
        steps = tl["step"].drop_nulls()
        if steps.len() and meta.samples_per_step:
            return number(steps.max()) * meta.samples_per_step
        return None
    if unit == "tokens/s":
        tokens = tl["tokens"].drop_nulls()
        return number(tokens.max()) if tokens.len() else None
    if unit == "steps/s":
        steps = tl["step"].drop_nulls()
        return number(steps.max()) if steps.len() else None
    if unit == "epochs/s":
        epochs = tl["epoch"].drop_nulls()
        return number(epochs.max()) if epochs.len() else None
    return None
