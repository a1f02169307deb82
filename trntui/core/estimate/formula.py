"""The formula: one set of Polars expressions over a frame whose rows are variants of the
inputs (``cost_frame``), so the estimate, the sensitivity bars and the resampled draws share it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import polars as pl

from trntui.core.capacity_block import END_MARGIN_H, billed_days_expr
from trntui.core.estimate.inputs import INPUT_SPECS, TERMS, InvalidInputError

HOURS_PER_MONTH = 730.0
"""AWS prices GB-months over 730 hours."""


def _times(*factors: pl.Expr) -> pl.Expr:
    """The product of ``factors``; 0 when any of them is a known 0, even if another is unknown
    (nothing times zero costs nothing: no stored data needs no storage rate)."""
    product = factors[0]
    for factor in factors[1:]:
        product = product * factor
    return pl.when(pl.any_horizontal([f == 0 for f in factors])).then(0.0).otherwise(product)


def _formula() -> tuple[list[pl.Expr], ...]:
    """The formula as Polars expressions over the input columns (one row = one variant).

    Built once, in layers of shallow expressions (intermediate hours first, then the terms,
    then the total): on one-row frames Polars' cost is per expression node, and this runs on
    every keystroke. Null inputs give null terms and a null total: unknown stays unknown,
    except that a side cost whose quantity is 0 costs 0 whatever its rate.
    """
    c = pl.col
    hours = [
        ((c("launch_s") + c("startup_s")) / 3600.0).alias("startup_h"),
        (c("work_amount") / c("steady_throughput") / 3600.0).alias("training_h"),
        pl.when(c("failed_fraction") == 0)
        .then(pl.lit(0.0))
        .otherwise(
            c("failed_fraction")
            / (1.0 - c("failed_fraction"))
            * (c("failed_run_s") + c("launch_s"))
            / 3600
        )
        .alias("failed_h"),
        (c("dataset_gb") + c("checkpoint_gb") * c("checkpoints_kept")).alias("s3_gb"),
    ]
    stages = [
        (c("training_h") * c("overhead_ratio") + c("checkpoint_s") / 3600.0).alias("overhead_h"),
        (c("training_h") * c("retry_ratio") + c("failed_h")).alias("restart_h"),
    ]
    billed = [
        (c("startup_h") + c("training_h") + c("overhead_h")).alias("billed_h"),
    ]
    interrupted = [
        # Expected spot interruptions over the billed time, each costing one observed restart.
        _times(
            c("billed_h") / 24.0,
            c("spot_interruptions_per_day"),
            c("instance_count"),
            c("restart_cost_s") / 3600.0,
        ).alias("interrupt_h")
    ]
    retried = [(c("restart_h") + c("interrupt_h")).alias("retry_h")]
    wall = [(c("billed_h") + c("retry_h")).alias("wall_h")]
    paid = [
        pl.when(c("capacity_block") > 0)
        .then(billed_days_expr((c("wall_h") + END_MARGIN_H) / 24.0) * 24.0)
        .otherwise(c("wall_h"))
        .alias("paid_h")
    ]
    terms = [
        (c("wall_h") * c("instance_count")).alias("instance_hours"),
        pl.when(c("capacity_block") == 0)
        .then(pl.lit(0.0))
        .otherwise((c("paid_h") - c("wall_h")) * c("instance_count") * c("usd_per_hour"))
        .alias("idle_usd"),
        (c("billed_h") * c("instance_count") * c("usd_per_hour")).alias("instance_usd"),
        (c("retry_h") * c("instance_count") * c("usd_per_hour")).alias("retries_usd"),
        (
            _times(c("s3_gb"), c("months_stored"), c("s3_usd_per_gb_month"))
            + _times(
                c("ebs_gb_per_instance"),
                c("instance_count"),
                c("wall_h") / HOURS_PER_MONTH,
                c("ebs_usd_per_gb_month"),
            )
        ).alias("storage_usd"),
        _times(c("data_moved_gb"), c("transfer_usd_per_gb") * 2.0).alias("transfer_usd"),
        (
            _times(c("log_gb"), c("logs_ingest_usd_per_gb"))
            + _times(c("log_gb"), c("months_stored"), c("logs_store_usd_per_gb_month"))
        ).alias("logs_usd"),
        _times(
            c("data_prep_hours"), c("data_prep_instance_count"), c("data_prep_usd_per_hour")
        ).alias("data_prep_usd"),
    ]
    total = [pl.sum_horizontal(TERMS, ignore_nulls=False).alias("total_usd")]
    return hours, stages, billed, interrupted, retried, wall, paid, terms, total


_FORMULA = _formula()


class EstimateOverflowError(InvalidInputError):
    """Finite inputs whose cost is no number: a product past the largest float (about 1.8e308)
    is infinite, and infinite minus infinite is not a number (a price of 1e308 forced past the
    plausibility band, a throughput of 1e-300). A problem the user fixes, never a traceback."""


_OUTPUTS = tuple(expr.meta.output_name() for layer in _FORMULA for expr in layer)


def cost_frame(inputs: pl.DataFrame) -> pl.DataFrame:
    """Apply the formula to every row of ``inputs`` (columns named as ``INPUT_SPECS``).

    Eagerly, layer by layer: as one lazy query Polars sums ``total_usd`` in another order,
    which changed the last bit of about 2% of totals (and so a saved scenario's figures).
    Every figure it derives is checked to be finite (unknown, null, stays unknown): one that
    overflowed is an ``EstimateOverflowError`` naming it and the inputs furthest from 1 it came
    from, so no caller computes on (or rounds) an infinite or undefined cost."""
    frame = inputs
    for layer in _FORMULA:
        frame = frame.with_columns(layer)
    if frame.height == 1:  # the live estimate, on every keystroke: cheaper in Python
        if all(value is None or math.isfinite(value) for value in frame.select(_OUTPUTS).row(0)):
            return frame
    elif frame.select(_FINITE).to_series().all():
        return frame
    raise _overflow(frame)


_FINITE = pl.all_horizontal(pl.col(_OUTPUTS).is_finite().fill_null(True))


def _overflow(frame: pl.DataFrame) -> EstimateOverflowError:
    """The error for the first row of ``frame`` with a figure that is not finite."""
    row = frame.filter(~_FINITE).row(0, named=True)
    figure = next(name for name in _OUTPUTS if not math.isfinite(row[name]))
    extreme = sorted(
        (key for key in INPUT_SPECS if row[key]),
        key=lambda key: abs(math.log10(abs(row[key]))),
        reverse=True,
    )[:2]
    named = " and ".join(
        f"{INPUT_SPECS[key].label} = {row[key]:.6g} {INPUT_SPECS[key].unit}" for key in extreme
    )
    return EstimateOverflowError(
        f"the estimate's {figure} is {row[figure]} (beyond any number a float holds), from "
        f"finite inputs of which the furthest from 1 are {named}: check them, a typing or "
        "unit mistake?"
    )


def input_frame(rows: Sequence[Mapping[str, float | None]]) -> pl.DataFrame:
    """A frame of input variants with every input column as Float64 (missing = unknown)."""
    return pl.DataFrame(
        {key: [row.get(key) for row in rows] for key in INPUT_SPECS},
        schema={key: pl.Float64 for key in INPUT_SPECS},
    )
