"""The imported run: every event on one clock (the wall clock, or a rebuilt one), the run's
end and status, and its metadata (``import_megatron``).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from trntui.core.scalars import moment_or_none, number_or_none
from trntui.core.timeline import (
    TIMELINE_SCHEMA,
    ImportedRun,
    Kind,
    RunMetadata,
    TimeSource,
    conform,
    with_interval_steps,
)
from trntui.importers._base import Steps, no_events_error, read_lines, read_source
from trntui.importers.megatron.iterations import fast_split, iteration_rows
from trntui.importers.megatron.other_lines import (
    arguments_of,
    attach_save_timers,
    other_events,
    protocol_of,
    system_of,
)
from trntui.importers.megatron.patterns import EXPECTED_ITERATION, NAME


def _clock(events: pl.DataFrame) -> tuple[pl.DataFrame, TimeSource]:
    """Give every event ``t_s`` from the wall clock, or a rebuilt one when there is none.

    The wall clock is used when iteration lines carry timestamps (datetime markers alone are
    too sparse to time the training intervals). Only a rebuilt clock needs the iterations
    each interval covers (``with_interval_steps``): a stamped log skips that work.
    """
    stamped_step = (pl.col("kind") == Kind.STEP) & pl.col("wall").is_not_null()
    if events.select(stamped_step.any()).item():
        # init_stop is stamped by the next datetime marker; init_start lies its duration before.
        wall = (
            pl.when(pl.col("kind") == Kind.INIT_STOP)
            .then(pl.col("wall").backward_fill())
            .otherwise(pl.col("wall"))
        )
        events = events.with_columns(wall.alias("wall"))
        events = events.with_columns(
            pl.when(pl.col("kind") == Kind.INIT_START)
            .then(
                pl.col("wall").shift(-1)
                - pl.duration(microseconds=(pl.col("duration_s").shift(-1) * 1e6).cast(pl.Int64))
            )
            .otherwise(pl.col("wall"))
            .alias("wall")
        )
        # An untimed event happened after the last stamped line (a stop, by its stated duration).
        filled = pl.col("wall").forward_fill().backward_fill()
        stop_offset = (
            pl.when(pl.col("wall").is_null() & (pl.col("kind") == Kind.CHECKPOINT_STOP))
            .then(pl.col("duration_s").fill_null(0.0))
            .otherwise(0.0)
        )
        start = events.select(pl.col("wall").min()).item()
        events = events.with_columns(
            ((filled - start).dt.total_microseconds() / 1e6 + stop_offset).alias("t_s")
        )
        return events, TimeSource.WALL_CLOCK
    progress = with_interval_steps(
        events.lazy()
        .filter(pl.col("kind").is_in([Kind.STEP, Kind.CHECKPOINT_LOAD]))
        .select("order", "kind", "step")
        .collect()
    )
    events = events.join(progress.select("order", "interval_steps"), on="order", how="left")
    contribution = (
        pl.when(pl.col("kind") == Kind.STEP)
        .then(pl.col("step_time_s") * pl.col("interval_steps"))
        .when(pl.col("kind").is_in([Kind.INIT_STOP, Kind.CHECKPOINT_STOP]))
        .then(pl.col("duration_s"))
        .otherwise(0.0)
        .fill_null(0.0)
    )
    return events.with_columns(contribution.cum_sum().alias("t_s")), TimeSource.REBUILT


def _distinct_in_order(values: pl.Series) -> bool:
    """Whether ``values`` rise strictly (a sort would not move a row, whatever its ties)."""
    return values.null_count() == 0 and bool((values.diff().slice(1) > 0).all())


_FEW_ROWS = 5_000
"""The most other rows ``_in_order`` places one by one (a log's checkpoints, evaluations and
restarts: hundreds in a long run); more are sorted with the steps."""


def _in_order(steps: pl.DataFrame, *others: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``steps`` (in ``order`` already) and of ``others`` (a few) together, by
    ``order``.

    The few other rows are put in their places between runs of step rows: a sort would gather
    every column of every step row. Where that cannot be done the same way (a step row's order
    out of place, or an other row with a step row's order), or the other rows are not few (a
    slice per row would cost more than the sort), the whole is sorted.
    """
    events = pl.concat([steps, *others], how="diagonal_relaxed")
    few = events.slice(steps.height).sort("order")
    order = steps["order"]
    places = order.search_sorted(few["order"])
    if (
        few.height > _FEW_ROWS
        or not _distinct_in_order(order)
        or not _distinct_in_order(few["order"])
        or (
            steps.height
            and (order.gather(places.clip(upper_bound=steps.height - 1)) == few["order"]).any()
        )
    ):
        return events.sort("order")
    pieces = []
    start = 0
    for index, place in enumerate(places.to_list()):
        pieces.append(events.slice(start, place - start))
        pieces.append(few.slice(index, 1))
        start = place
    pieces.append(events.slice(start, steps.height - start))
    return pl.concat(pieces, rechunk=True).with_columns(pl.col("order").set_sorted())


def import_megatron(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    steps.at(0.2)
    fast = fast_split(source, source.name)
    if fast is not None:
        iterations, rest = fast
    else:
        rest = read_lines(source)
        iterations = iteration_rows(rest, source.name)
    steps.at(0.5)
    if iterations.is_empty():
        raise no_events_error(source, "Megatron-LM iteration", EXPECTED_ITERATION)
    others = attach_save_timers(other_events(rest))
    args = arguments_of(rest)
    steps.at(0.6)

    init_starts = others.filter(pl.col("kind") == Kind.INIT_STOP).with_columns(
        pl.lit(str(Kind.INIT_START)).alias("kind"), (pl.col("line") - 0.5).alias("order")
    )
    events = _in_order(
        # Read from ``iterations`` below; not carried through the sort and joins.
        iterations.drop("planned", "step_ms", "batch").with_columns(
            pl.col("line").cast(pl.Float64).alias("order")
        ),
        others.with_columns(pl.col("line").cast(pl.Float64).alias("order")),
        init_starts,
    )
    events, time_source = _clock(events)
    steps.at(0.8)

    planned = number_or_none(iterations["planned"].max())
    planned_steps = int(args.get("train_iters", planned)) if planned is not None else None
    seq_length = args.get("seq_length")
    batch = iterations["batch"].drop_nulls()
    samples_per_step = float(batch[0]) if batch.len() else None
    if seq_length is not None:
        events = events.with_columns((pl.col("samples") * seq_length).alias("tokens"))
    if planned_steps is not None and not (events["kind"] == Kind.RUN_STOP).any():
        last = events.filter(pl.col("kind") == Kind.STEP).tail(1)
        if last["step"][0] >= planned_steps:
            events = pl.concat(
                [
                    events,
                    last.with_columns(
                        pl.lit(str(Kind.RUN_STOP)).alias("kind"),
                        pl.col("order") + 0.25,
                    ),
                ],
                how="diagonal_relaxed",
            ).sort("order")
    # "after training is done" is also printed after an early exit (--exit-interval, time
    # limit): only reaching the planned iterations is a success.
    last_step = events.select(pl.col("step").filter(pl.col("kind") == Kind.STEP).last()).item()
    finished = planned_steps is None or last_step >= planned_steps
    events = events.with_columns(
        pl.when(pl.col("kind") == Kind.RUN_STOP)
        .then(pl.lit("success" if finished else "stopped_before_planned_iterations"))
        .alias("status"),
        pl.col("line").cast(pl.Int64),
    )
    metric_names = events["metric_name"].drop_nulls() if "metric_name" in events.columns else None
    metric_name = metric_names[0] if metric_names is not None and metric_names.len() else None
    first_wall = moment_or_none(events["wall"].min())

    notes = []
    if time_source is TimeSource.REBUILT:
        notes.append(
            "no timestamps: time rebuilt from elapsed time per iteration x iterations per "
            "interval plus stated init and checkpoint-save durations; downtime before a restart "
            "is not in the log and is missing from the total"
        )
    else:
        notes.append("timestamps are the training host's local time (no time zone in the log)")
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=time_source,
        launch_time=first_wall,
        throughput_unit="samples/s",
        quality_metric=f"validation {metric_name}" if metric_name else None,
        quality_higher_is_better=False if metric_name else None,
        samples_per_step=samples_per_step,
        tokens_per_step=samples_per_step * seq_length
        if samples_per_step is not None and seq_length is not None
        else None,
        planned_steps=planned_steps,
        facts={k: str(int(v)) for k, v in args.items()},
        notes=tuple(notes),
        system=system_of(rest, args, source.name),
        protocol=protocol_of(args, samples_per_step, metric_name),
    )
    steps.at(0.95)
    # Only the timeline's columns are filtered (the parse leaves more behind).
    timeline = events.select(name for name in events.columns if name in TIMELINE_SCHEMA)
    return ImportedRun(conform(timeline.filter(pl.col("kind") != "marker")), metadata)
