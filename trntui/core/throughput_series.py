"""Throughput over time, resampled onto a fixed number of columns for a terminal plot.

Between two progress rows of the timeline the run advanced at one rate (work done / time taken),
so throughput is a step function of time; a block or epoch that logs its start is timed from
it (the evaluation before it is a gap, as the run facts keep it out of training). Each plot
column shows the rate of the interval that covers the column's middle instant: a sparse log
(an MLPerf block every few minutes) and a dense one (a Megatron line every iteration) are
drawn the same way, and a long stall shows as a dip as wide as the stall itself. Restarts (the
step counter going back) are returned separately so the plot can mark them; time with no
covering interval (initialisation, evaluation gaps, downtime) is null, never 0. A log that
counts only steps but prints its own throughput in samples per second (neuronx-distributed)
is drawn with that throughput, in the unit the run facts use.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from trntui.core.scalars import number
from trntui.core.timeline import ImportedRun, Kind

# Which rows measure progress, best first: rows that count samples or tokens beat rows that
# only count steps (an MLPerf ``tracked_stats`` step number is not a sample count).
_PROGRESS_KINDS = (Kind.STEP, Kind.BLOCK_STOP, Kind.EPOCH_STOP)


@dataclass(frozen=True)
class ThroughputSeries:
    start_s: float
    end_s: float
    rates: tuple[float | None, ...]
    """Work per second in each column; ``None`` where no progress interval covers it."""
    unit: str
    """'samples/s', 'tokens/s' or 'steps/s'."""
    restart_columns: tuple[int, ...]


def throughput_series(run: ImportedRun, columns: int) -> ThroughputSeries | None:
    """The run's throughput in ``columns`` equal time slices; ``None`` without a clock."""
    if columns < 1:
        return None
    chosen = _progress_rows(run)
    if chosen is None:
        return None
    progress, work, unit = chosen
    steps = progress.select(
        pl.col("t_s").alias("end_s"),
        pl.col("begin_s"),
        (work - work.shift(1)).alias("work"),
        (pl.col("step") < pl.col("step").shift(1)).fill_null(False).alias("restart"),
        pl.col("throughput").alias("own_rate"),
    ).slice(1)
    counted = (pl.col("end_s") > pl.col("begin_s")) & (pl.col("work") >= 0) & ~pl.col("restart")
    own_unit = run.metadata.throughput_unit
    if unit == "steps/s" and own_unit and own_unit != unit and steps["own_rate"].null_count() == 0:
        # Only a step counter, but the log prints its own throughput in a work unit (the
        # neuronx-distributed seq/s): draw that, in the unit the run facts report.
        rate, unit = pl.col("own_rate"), own_unit
    else:
        rate = pl.col("work") / (pl.col("end_s") - pl.col("begin_s"))
    steps = steps.with_columns(pl.when(counted).then(rate).alias("rate"))
    start_s = number(progress["t_s"].min())
    end_s = number(progress["t_s"].max())
    width = (end_s - start_s) / columns
    if width <= 0:
        return None
    centres = pl.DataFrame(
        {"at_s": [start_s + (i + 0.5) * width for i in range(columns)]}
    ).with_row_index("column")
    covering = (
        centres.join_asof(
            steps.filter(~pl.col("restart")).sort("end_s"),
            left_on="at_s",
            right_on="end_s",
            strategy="forward",
        )
        .with_columns(
            pl.when(pl.col("begin_s") <= pl.col("at_s")).then(pl.col("rate")).alias("rate")
        )
        .sort("column")
    )
    restarts = steps.filter(pl.col("restart"))["end_s"]
    restart_columns = tuple(
        sorted({min(columns - 1, int((t - start_s) / width)) for t in restarts.to_list()})
    )
    return ThroughputSeries(
        start_s=start_s,
        end_s=end_s,
        rates=tuple(covering["rate"].to_list()),
        unit=unit,
        restart_columns=restart_columns,
    )


def _progress_rows(run: ImportedRun) -> tuple[pl.DataFrame, pl.Expr, str] | None:
    """Timed progress rows and their cumulative work, in the best unit the log allows."""
    timed = run.timeline.filter(pl.col("t_s").is_not_null()).sort("line")
    per_step = run.metadata.samples_per_step
    fallback = None
    for kind in _PROGRESS_KINDS:
        rows = timed.filter(pl.col("kind") == kind)
        if rows.height < 2:
            continue
        rows = _with_begins(timed, _from_run_start(timed, rows), kind)
        for column, unit in (("samples", "samples/s"), ("tokens", "tokens/s")):
            if rows[column].null_count() == 0:
                return rows, pl.col(column), unit
        if kind == Kind.STEP and rows["step"].null_count() == 0 and fallback is None:
            steps = pl.col("step").cast(pl.Float64)
            fallback = (
                (rows, steps * per_step, "samples/s") if per_step else (rows, steps, "steps/s")
            )
    return fallback


_STARTS = {Kind.BLOCK_STOP: Kind.BLOCK_START, Kind.EPOCH_STOP: Kind.EPOCH_START}


def _with_begins(timed: pl.DataFrame, rows: pl.DataFrame, kind: Kind) -> pl.DataFrame:
    """Each progress row's interval (``begin_s``) begins at the previous progress row; a block
    or an epoch whose start is logged (after that row) begins at its start, so the time between
    two blocks (an MLPerf evaluation, a checkpoint save) is a gap in the plot, not slow training
    spread over the next block."""
    rows = rows.with_columns(pl.col("t_s").shift(1).alias("begin_s"))
    start_kind = _STARTS.get(kind)
    starts = timed.filter(pl.col("kind") == start_kind) if start_kind else timed.clear()
    if starts.is_empty():
        return rows
    starts = starts.select(pl.col("line").alias("start_line"), pl.col("t_s").alias("start_s"))
    joined = rows.join_asof(starts.sort("start_line"), left_on="line", right_on="start_line")
    logged = pl.col("start_line") > pl.col("line").shift(1)
    return joined.with_columns(
        pl.when(logged).then(pl.col("start_s")).otherwise(pl.col("begin_s")).alias("begin_s")
    ).drop("start_line", "start_s")


def _from_run_start(timed: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """Add the run start as a zero-work origin, so the first interval is drawn too."""
    starts = timed.filter(
        (pl.col("kind") == Kind.RUN_START) & (pl.col("line") < rows["line"].min())
    )
    if starts.is_empty():
        return rows
    origin = starts.tail(1).with_columns(
        pl.lit(0.0).alias("samples"), pl.lit(0.0).alias("tokens"), pl.lit(0).alias("step")
    )
    return pl.concat([origin.select(rows.columns), rows], how="vertical_relaxed")
