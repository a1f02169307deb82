"""Capacity Blocks for ML as they are billed (EC2 User Guide, "Capacity Blocks pricing and
billing"; see REFERENCE.md).

A block reserves 1 to 64 instances for a duration in **1-day steps up to 14 days, then 7-day
steps up to 182 days**, paid up front whether the instances run or not; an extension follows
the same steps. So a job on a block pays whole blocks: 5 hours of work on a 1-day block pays
24 hours, a 15-day need takes a 21-day block, and a need beyond 182 days takes 182-day blocks
plus the step that covers the rest.

EC2 begins terminating a block's instances 30 minutes before it ends (the EventBridge warning
comes 40 minutes before, termination 10 minutes later: "Monitor Capacity Blocks using
EventBridge"), so a job needs its wall clock plus that half hour inside the block. A block can
be extended later in the same steps, but only if capacity is available then; the estimate buys
the block that covers the need up front and says when extensions could do with fewer days.

The price of a block is quoted per instance-day (the upfront total / (days x instances)); the
estimate applies that day rate to the block length the work needs, and says so when that
length differs from the quoted one (AWS prices each offer separately).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from trntui.core.format import plural

if TYPE_CHECKING:
    import polars as pl

MAX_DAILY_STEP_DAYS = 14
WEEKLY_STEP_DAYS = 7
MAX_BLOCK_DAYS = 182
MAX_BLOCK_INSTANCES = 64
MAX_BLOCK_INSTANCES_TOTAL = 256
"""At most 256 instances across a account's Capacity Blocks ("Find and purchase Capacity
Blocks")."""
END_MARGIN_H = 0.5
"""Instances are terminated from 30 minutes before a block's end."""
_EPSILON_DAYS = 1e-9
"""Float noise tolerance: 24.000000001 hours of work is one day, not two."""

BLOCK_DAYS: tuple[int, ...] = (
    *range(1, MAX_DAILY_STEP_DAYS + 1),
    *range(MAX_DAILY_STEP_DAYS + WEEKLY_STEP_DAYS, MAX_BLOCK_DAYS + 1, WEEKLY_STEP_DAYS),
)
"""Every duration a block can be bought for, in days."""


def is_block_days(days: int) -> bool:
    return days in BLOCK_DAYS


def block_days_help() -> str:
    return (
        f"1 to {MAX_DAILY_STEP_DAYS} days, then {WEEKLY_STEP_DAYS}-day steps "
        f"({MAX_DAILY_STEP_DAYS + WEEKLY_STEP_DAYS}, {MAX_DAILY_STEP_DAYS + 2 * WEEKLY_STEP_DAYS}, "
        f"... {MAX_BLOCK_DAYS})"
    )


def _step_days(need: float) -> int:
    """The shortest block length covering ``need`` days (0 < need <= 182)."""
    if need <= MAX_DAILY_STEP_DAYS:
        return max(1, math.ceil(need - _EPSILON_DAYS))
    weeks = math.ceil((need - MAX_DAILY_STEP_DAYS) / WEEKLY_STEP_DAYS - _EPSILON_DAYS)
    return MAX_DAILY_STEP_DAYS + WEEKLY_STEP_DAYS * weeks


def billed_days(need_days: float) -> int:
    """Days paid for ``need_days`` of wall clock on blocks: the shortest block that covers it,
    or whole 182-day blocks plus the shortest one covering the rest. 0 needs no block."""
    if need_days < 0 or not math.isfinite(need_days):
        raise ValueError(f"a block cannot cover {need_days!r} days")
    if need_days <= _EPSILON_DAYS:
        return 0
    full = math.floor((need_days + _EPSILON_DAYS) / MAX_BLOCK_DAYS)
    rest = need_days - full * MAX_BLOCK_DAYS
    return full * MAX_BLOCK_DAYS + (_step_days(rest) if rest > _EPSILON_DAYS else 0)


def billed_days_expr(need_days: pl.Expr) -> pl.Expr:
    """``billed_days`` as a Polars expression (null stays null), for the cost formula."""
    import polars as pl  # the rest of the module is plain arithmetic, for the CLI's checks

    full = ((need_days + _EPSILON_DAYS) / MAX_BLOCK_DAYS).floor()
    rest = need_days - full * MAX_BLOCK_DAYS
    daily = pl.max_horizontal((rest - _EPSILON_DAYS).ceil(), pl.lit(1.0))
    weekly = (
        MAX_DAILY_STEP_DAYS
        + WEEKLY_STEP_DAYS
        * ((rest - MAX_DAILY_STEP_DAYS) / WEEKLY_STEP_DAYS - _EPSILON_DAYS).ceil()
    )
    step = (
        pl.when(rest <= _EPSILON_DAYS)
        .then(0.0)
        .when(rest <= MAX_DAILY_STEP_DAYS)
        .then(daily)
        .otherwise(weekly)
    )
    return pl.when(need_days.is_null()).then(None).otherwise(full * MAX_BLOCK_DAYS + step)


def need_days(wall_hours: float) -> float:
    """Days of block a job of ``wall_hours`` needs (its wall clock plus the end margin)."""
    return (wall_hours + END_MARGIN_H) / 24.0


def extension_hint(wall_hours: float) -> str:
    """When a shorter block plus extensions (if capacity allows then) would pay fewer days."""
    days = billed_days(need_days(wall_hours))
    whole = max(1, math.ceil(need_days(wall_hours) - _EPSILON_DAYS))
    if whole >= days:
        return ""
    return f"{whole} days would do with extensions, if capacity allows them then"


def blocks_text(days: int) -> str:
    """How ``days`` are bought: "1 block of 21 days", "2 blocks of 182 days + 1 of 7 days"."""
    full, rest = divmod(days, MAX_BLOCK_DAYS)
    parts = []
    if full:
        parts.append(f"{plural(full, 'block')} of {MAX_BLOCK_DAYS} days")
    if rest:
        parts.append(f"{'1' if full else '1 block'} of {plural(rest, 'day')}")
    return " + ".join(parts) if parts else "no block"
