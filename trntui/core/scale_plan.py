"""How many instances? A target's cost and wall clock at each instance count.

For each count the target is estimated as it would be at that count: the throughput its
scaling family measured there, interpolated between measured counts, assumed from a stated
efficiency per doubling, or unknown (``core.scaling``); every other input as for the target.
The wall clock to the result is the billed time per instance of one job (launch, startup,
training, overheads, and the expected retries). Against the goal: it meets the deadline when
today plus that wall clock falls on or before ``goal.deadline`` and it is within
``goal.max_wall_clock_days``; with neither set, there is no deadline to meet.

The recommended count is the cheapest total among the counts whose total is known and that
meet the deadline (on a tie, fewer instances); "none" says what the deadline needs instead.
Each total also gets the range the observed spread of the runs gives (the lowest and the
highest run's throughput at the measured size it rests on), not a made-up band.
No budget is checked here: the inventory has no budget yet, so ``within_budget`` is unknown.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass

from trntui.core.errors import UserError
from trntui.core.estimate import (
    ASSUMPTION,
    DERIVED,
    MEASURED,
    EstimateContext,
    TargetEstimate,
    cost_frame,
    estimate_from_inputs,
    input_frame,
    target_inputs,
)
from trntui.core.scaling import ASSUMED, INTERPOLATED, Family, family_of

DEFAULT_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
_SOURCES = {MEASURED: "measured", DERIVED: INTERPOLATED, ASSUMPTION: ASSUMED}


@dataclass(frozen=True)
class ScalePoint:
    instance_count: int
    source: str
    """``measured``, ``interpolated``, ``assumed`` or ``unknown`` (the throughput's)."""
    detail: str
    time_to_result_s: float | None
    total_usd: float | None
    meets_deadline: bool | None
    within_budget: bool | None = None
    total_range_usd: tuple[float, float] | None = None
    """The total over the observed spread of the steady throughput at the measured size the
    count's throughput comes from (the family's sensitivity), when the total is known."""

    @property
    def wall_clock_days(self) -> float | None:
        return None if self.time_to_result_s is None else self.time_to_result_s / 86_400


@dataclass(frozen=True)
class ScalePlan:
    target: str
    family: Family | None
    points: tuple[ScalePoint, ...]
    recommended: ScalePoint | None
    reason: str
    """Why that count is recommended, or why none is."""
    deadline: dt.date | None
    max_wall_clock_days: float | None


def _wall_s(item: TargetEstimate) -> float | None:
    hours = [stage.hours for stage in item.stages]
    return None if any(h is None for h in hours) else sum(hours) * 3600.0  # type: ignore[misc]


def _meets(days: float | None, context: EstimateContext) -> bool | None:
    goal = context.inventory.goal
    if goal.deadline is None and goal.max_wall_clock_days is None:
        return None
    if days is None:
        return None
    if goal.max_wall_clock_days is not None and days > goal.max_wall_clock_days:
        return False
    return not (
        goal.deadline is not None and context.today + dt.timedelta(days=days) > goal.deadline
    )


def scale_plan(
    context: EstimateContext, target_name: str, counts: tuple[int, ...] | None = None
) -> ScalePlan:
    """The target at each instance count (``UserError`` for an unknown target name)."""
    target = next((t for t in context.inventory.targets if t.name == target_name), None)
    if target is None:
        names = ", ".join(t.name for t in context.inventory.targets) or "none"
        raise UserError(f"no target named {target_name!r} (targets: {names})")
    family = family_of(context.families(), target.run_set) if target.run_set else None
    measured = {p.nodes for p in family.points} if family else set()
    top = max([16, *(2 * n for n in measured)])
    wanted = counts or tuple(
        sorted({c for c in DEFAULT_COUNTS if c <= top} | measured | {target.instance_count})
    )
    goal = context.inventory.goal
    points = []
    for count in wanted:
        item = estimate_from_inputs(
            [target_inputs(context, dataclasses.replace(target, instance_count=count))],
            (),
            (),
            goal.work_unit,
        ).targets[0]
        throughput = item.input("steady_throughput")
        source = _SOURCES.get(throughput.provenance.kind, "unknown")
        wall = _wall_s(item)
        spread = _spread(family, count, item) if family is not None else None
        points.append(
            ScalePoint(
                instance_count=count,
                source=source,
                detail=throughput.provenance.detail or throughput.provenance.source,
                time_to_result_s=wall,
                total_usd=item.total_usd,
                meets_deadline=_meets(None if wall is None else wall / 86_400, context),
                total_range_usd=spread,
            )
        )
    recommended, reason = _recommend(points, context)
    return ScalePlan(
        target_name,
        family,
        tuple(points),
        recommended,
        reason,
        goal.deadline,
        goal.max_wall_clock_days,
    )


def _spread(family: Family, count: int, item: TargetEstimate) -> tuple[float, float] | None:
    """The total with the throughput scaled by the lowest and highest run of the measured size
    it comes from (the nearest measured size at or below the count, else the smallest)."""
    value = item.input("steady_throughput").value
    if item.total_usd is None or value is None:
        return None
    below = [p for p in family.points if p.nodes <= count and p.throughput]
    point = below[-1] if below else next((p for p in family.points if p.throughput), None)
    if point is None or not point.throughput_low or not point.throughput_high:
        return None
    values = item.values()
    variants = [
        {**values, "steady_throughput": value * point.throughput_low / point.throughput},
        {**values, "steady_throughput": value * point.throughput_high / point.throughput},
    ]
    totals = cost_frame(input_frame(variants))["total_usd"].to_list()
    if None in totals:
        return None
    return min(totals), max(totals)


def _recommend(points: list[ScalePoint], context: EstimateContext) -> tuple[ScalePoint | None, str]:
    priced = [p for p in points if p.total_usd is not None]
    if not priced:
        return None, "none: no count has a known total"
    fitting = [p for p in priced if p.meets_deadline is not False]
    if fitting:
        best = min(fitting, key=lambda p: (p.total_usd, p.instance_count))
        if best.meets_deadline is None:
            return (
                best,
                "the cheapest count with a known total (no deadline or wall-clock limit set)",
            )
        return best, "the cheapest count that meets the deadline and wall-clock limit"
    fastest = min(priced, key=lambda p: p.time_to_result_s or float("inf"))
    goal = context.inventory.goal
    limits = []
    if goal.max_wall_clock_days is not None:
        limits.append(f"at most {goal.max_wall_clock_days:g} days of wall clock")
    if goal.deadline is not None:
        left = (goal.deadline - context.today).days
        limits.append(f"the deadline {goal.deadline} ({left} days from {context.today})")
    return None, (
        f"none of the priced counts meets {' and '.join(limits)}; the fastest, "
        f"{fastest.instance_count} instances, needs {fastest.wall_clock_days:.2f} days: measure "
        "larger sizes or state a scaling assumption"
    )
