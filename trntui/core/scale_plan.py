"""How many instances? A target's cost and wall clock at each instance count.

For each count the target is estimated as it would be at that count (``core.estimate.at_size``):
every input of the run set its scaling family measured there (the same total as a target
measured by that set), each input interpolated between the two measured counts around it, or
the nearest measured count's with a throughput assumed from a stated efficiency per doubling,
or unknown; the goal's work grows as the sizes' runs needed more to reach the quality target.
The wall clock to the result is the billed time per instance of one job (launch, startup,
training, overheads, and the expected retries), and the efficiency of a count is that time
x instances at the family's smallest measured count over the same at this one: one
definition, the totals'. Against the goal, as the decision checks it
(``core.plan_check``): it meets the deadline when the start date (else today) plus the stated
capacity lead time plus that wall clock falls on or before ``goal.deadline`` and the wall clock
is within ``goal.max_wall_clock_days``; it is within budget when its total is at most
``goal.budget_usd``. A limit that is not set is not checked (``None``).

A target bought as Capacity Blocks pays whole block lengths at every count (the estimate's
formula), and a count above the 256 instances Capacity Blocks can hold across blocks cannot be
bought that way: its total is unknown and says why.

Scenario overrides in force (the app's Scale tab passes them) apply at every count as the
estimate applies them, except an override of this target's instance count: the count is what
varies.

The recommended count is the cheapest total among the counts whose total is known and that
meet the deadline and the budget (on a tie, fewer instances); "none" says what the limits need
instead. Each total also gets the range the observed spread of the runs gives (the lowest and
the highest run's throughput at the measured size it rests on), not a made-up band.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from trntui.core.errors import UserError
from trntui.core.estimate import (
    ASSUMPTION,
    DERIVED,
    MEASURED,
    EstimateContext,
    Override,
    TargetEstimate,
    apply_overrides,
    cost_frame,
    estimate_from_inputs,
    input_frame,
    target_inputs,
)
from trntui.core.format import plural, wall_clock
from trntui.core.plan_check import check_plan
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
    count's throughput comes from (the family's; without a family, the target's run set's),
    when the total is known."""
    commitment_beyond_usd: float | None = None
    """What a reserved term or Savings Plan still owes beyond this training at this count."""
    unknown_because: str | None = None
    """Why the total is unknown (``None`` when it is known)."""
    efficiency: float | None = None
    """Time to the verified result (the wall clock the total bills) x instances at the
    reference count over the same at this count: the one efficiency, of the totals
    (``ScalePlan.reference``)."""

    @property
    def wall_clock_days(self) -> float | None:
        return None if self.time_to_result_s is None else self.time_to_result_s / 86_400

    @property
    def wall_clock_hours(self) -> float | None:
        return None if self.time_to_result_s is None else self.time_to_result_s / 3600


def unknown_reasons(points: tuple[ScalePoint, ...]) -> list[str]:
    """Why the counts without a total have none, each reason once with its counts."""
    reasons: dict[str, list[int]] = {}
    for point in points:
        if point.total_usd is None:
            why = point.unknown_because or point.detail
            reasons.setdefault(why, []).append(point.instance_count)
    return [f"{', '.join(map(str, counts))}: {why}" for why, counts in reasons.items()]


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
    budget_usd: float | None = None
    overrides: int = 0
    """Scenario overrides in force for this target (an override of its instance count is not
    used: the count is what varies; a throughput override only at the target's own count)."""
    reference: int | None = None
    """The count efficiencies are relative to: the family's smallest measured one, else the
    target's own."""
    overrides_in_force: int = 0
    """Every scenario override in force (the estimate bar's count), this target's or not."""


def _meets(context: EstimateContext, item: TargetEstimate) -> tuple[bool | None, bool | None]:
    """(meets the deadline and wall-clock limit, within budget); None where nothing is set
    or the figure is unknown."""
    goal = context.inventory.goal
    check = check_plan(context, item)
    if goal.deadline is None and goal.max_wall_clock_days is None:
        meets = None
    elif check.late or check.over_wall_clock:
        meets = False
    elif check.wall_clock_days is None:
        meets = None
    else:
        meets = True
    budget = None if check.over_budget is None else not check.over_budget
    return meets, budget


def scale_plan(
    context: EstimateContext,
    target_name: str,
    counts: tuple[int, ...] | None = None,
    overrides: Sequence[Override] = (),
) -> ScalePlan:
    """The target at each instance count (``UserError`` for an unknown target name), with the
    scenario ``overrides`` in force that apply to it (``InvalidInputError`` if one is bad), as
    the estimate applies them."""
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
    applied = [
        o
        for o in overrides
        if o.target in (None, target_name)
        and not (o.input == "instance_count" and o.target == target_name)
    ]
    points = []
    for count in wanted:
        # A throughput override was stated for the target's own count: at another count the
        # throughput is the family's (or unknown), never that figure.
        here = [
            o for o in applied if count == target.instance_count or o.input != "steady_throughput"
        ]
        prepared = [target_inputs(context, dataclasses.replace(target, instance_count=count))]
        item = estimate_from_inputs(
            apply_overrides(prepared, here), (), here, goal.work_unit
        ).targets[0]
        throughput = item.input("steady_throughput")
        source = _SOURCES.get(throughput.provenance.kind, "unknown")
        wall = None if item.wall_hours is None else item.wall_hours * 3600.0
        detail = _block_limit(item) or throughput.provenance.detail or throughput.provenance.source
        meets, budget = _meets(context, item)
        spread = _spread(family, count, item) if family is not None else _own_spread(item)
        points.append(
            ScalePoint(
                instance_count=count,
                source=source,
                detail=detail,
                time_to_result_s=wall,
                total_usd=item.total_usd,
                meets_deadline=meets,
                within_budget=budget,
                total_range_usd=spread,
                commitment_beyond_usd=item.commitment_beyond_usd,
                unknown_because=None if item.total_usd is not None else _unknown_because(item),
            )
        )
    reference = family.points[0].nodes if family is not None else target.instance_count
    points = _with_efficiency(points, reference)
    recommended, reason = _recommend(points, context)
    return ScalePlan(
        target_name,
        family,
        tuple(points),
        recommended,
        reason,
        goal.deadline,
        goal.max_wall_clock_days,
        goal.budget_usd,
        len(applied),
        reference,
        len(overrides),
    )


def _with_efficiency(points: list[ScalePoint], reference: int) -> list[ScalePoint]:
    """Each point's efficiency against the reference count's time to the verified result."""
    base = next((p for p in points if p.instance_count == reference), None)
    if base is None or not base.time_to_result_s:
        return points
    work = base.time_to_result_s * base.instance_count
    return [
        dataclasses.replace(p, efficiency=work / (p.time_to_result_s * p.instance_count))
        if p.time_to_result_s
        else p
        for p in points
    ]


def _block_limit(item: TargetEstimate) -> str | None:
    """Why the price is unknown when the count is beyond what Capacity Blocks can hold."""
    price = item.input("usd_per_hour")
    if price.is_unknown and "Capacity Blocks hold" in price.provenance.source:
        return price.provenance.source
    return None


def _unknown_because(item: TargetEstimate) -> str:
    """Why ``item``'s total is unknown: the inputs that keep a cost term unknown (the limit of
    Capacity Blocks, or the throughput, when that is what is missing)."""
    block = _block_limit(item)
    if block is not None:
        return block
    throughput = item.input("steady_throughput")
    if throughput.is_unknown:
        return throughput.provenance.detail or throughput.provenance.source
    missing = item.incomplete_inputs
    if not missing:
        return "a cost term is unknown"
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return "unknown " + ", ".join(missing[:3]) + more


def _spread(family: Family, count: int, item: TargetEstimate) -> tuple[float, float] | None:
    """The total with the throughput scaled by the lowest and highest run of the measured size
    it comes from (the nearest measured size at or below the count, else the smallest)."""
    value = item.input("steady_throughput").value
    if item.total_usd is None or value is None:
        return None
    below = [p for p in family.points if p.nodes <= count and p.throughput]
    point = below[-1] if below else next((p for p in family.points if p.throughput), None)
    if (
        point is None
        or not point.throughput
        or not point.throughput_low
        or not point.throughput_high
    ):
        return None
    return _totals_between(
        item,
        value * point.throughput_low / point.throughput,
        value * point.throughput_high / point.throughput,
    )


def _own_spread(item: TargetEstimate) -> tuple[float, float] | None:
    """Without a scaling family: the total over the observed range of the throughput itself,
    where it has one (measured by the target's run set)."""
    throughput = item.input("steady_throughput")
    if item.total_usd is None or throughput.low is None or throughput.high is None:
        return None
    return _totals_between(item, throughput.low, throughput.high)


def _totals_between(item: TargetEstimate, low: float, high: float) -> tuple[float, float] | None:
    """The lowest and highest total with the steady throughput at ``low`` and at ``high``."""
    values = item.values()
    variants = [{**values, "steady_throughput": low}, {**values, "steady_throughput": high}]
    totals = cost_frame(input_frame(variants))["total_usd"].to_list()
    if None in totals:
        return None
    return min(totals), max(totals)


def _recommend(points: list[ScalePoint], context: EstimateContext) -> tuple[ScalePoint | None, str]:
    priced = [p for p in points if p.total_usd is not None]
    if not priced:
        return None, "no count has a known total"
    goal = context.inventory.goal
    fitting = [p for p in priced if p.meets_deadline is not False and p.within_budget is not False]
    if fitting:
        best = min(fitting, key=lambda p: (p.total_usd, p.instance_count))
        checked = []
        if best.meets_deadline is not None:
            checked.append("the time limits")
        if best.within_budget is not None:
            checked.append("the budget")
        if not checked:
            return best, "the cheapest count with a known total (no limit set)"
        return best, f"the cheapest count that meets {' and '.join(checked)}"
    on_time = [p for p in priced if p.meets_deadline is not False]
    if on_time:
        cheapest = min(on_time, key=lambda p: (p.total_usd, p.instance_count))
        return None, (
            f"no count that meets the time limits is within the budget "
            f"${goal.budget_usd:,.2f}; the cheapest, "
            f"{plural(cheapest.instance_count, 'instance')}, "
            f"costs ${cheapest.total_usd:,.2f}"
        )
    fastest = min(priced, key=lambda p: p.time_to_result_s or float("inf"))
    limits = []
    if goal.max_wall_clock_days is not None:
        limits.append(f"at most {goal.max_wall_clock_days:g} days of wall clock")
    if goal.deadline is not None:
        start = goal.start_date or context.today
        left = (goal.deadline - start).days
        lead = goal.capacity_lead_days
        after = f", {lead:g} of them to get capacity" if lead else ""
        limits.append(f"the deadline {goal.deadline} ({left} days from {start}{after})")
    return None, (
        f"no priced count meets {' and '.join(limits)}; the fastest, "
        f"{plural(fastest.instance_count, 'instance')}, "
        f"needs {wall_clock(fastest.wall_clock_hours)}: "
        "measure larger sizes or state a scaling assumption"
    )
