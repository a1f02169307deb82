"""Does the plan hold? Deadline, wall clock and budget per target, and the porting payback.

A plan has limits. Per target:

* **calendar time to the result** = the stated lead time to get capacity
  (``goal.capacity_lead_days``) + the job's wall clock (billed time per instance: launch,
  startup, training, overheads and the expected retries), from the start of
  ``goal.start_date`` (else today), in hours: a finish is a date and time, never a day rounded
  up. It must fall before the end of ``goal.deadline`` (a date: the whole day is allowed), and
  the wall clock must not exceed ``goal.max_wall_clock_days``;
* **the total** must not exceed ``goal.budget_usd``.

A limit that is not set is not checked (and says so); a figure that is unknown leaves the
check unknown, never passed.

**Porting cost** = open porting risks' effort (days) x ``project.engineer_day_usd``; unknown
when the rate or any open risk's effort is unknown. With the Trainium3 saving per training
(GPU total - Trainium3 total, on comparable results), the port pays off after
``ceil(porting cost / saving)`` trainings; never when Trainium3 saves nothing.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from trntui.core.estimate import EstimateContext, TargetEstimate
from trntui.core.format import plural, wall_clock


@dataclass(frozen=True)
class PlanCheck:
    """Whether one target's plan holds (``check_plan``): wall clock and lead time in days, the
    finish date, and whether it is late, over the wall clock limit or over budget (``None``
    where the limit is not set or a figure is unknown)."""

    target: str
    wall_clock_days: float | None
    lead_days: float | None
    finish: dt.datetime | None
    """Start (00:00 of the start date) + lead time + wall clock, when all are known
    (``dt.datetime.max`` when that falls past the last date the calendar holds: after any
    deadline)."""
    late: bool | None
    """After the deadline (``None``: no deadline, or the finish is unknown)."""
    over_wall_clock: bool | None
    over_budget: bool | None

    @property
    def fails(self) -> bool:
        return bool(self.late or self.over_wall_clock or self.over_budget)


def check_plan(context: EstimateContext, item: TargetEstimate) -> PlanCheck:
    goal = context.inventory.goal
    hours = [stage.hours for stage in item.stages]
    wall = None if any(h is None for h in hours) else sum(hours) / 24.0  # type: ignore[arg-type]
    lead = goal.capacity_lead_days
    start = goal.start_date or context.today
    finish = None if wall is None else _finish(start, (lead or 0.0) + wall)
    late = None if goal.deadline is None or finish is None else finish >= _end_of(goal.deadline)
    over_wall = (
        None
        if goal.max_wall_clock_days is None or wall is None
        else wall > goal.max_wall_clock_days
    )
    over_budget = (
        None
        if goal.budget_usd is None or item.total_usd is None
        else item.total_usd > goal.budget_usd
    )
    return PlanCheck(item.name, wall, lead, finish, late, over_wall, over_budget)


def _finish(start: dt.date, days: float) -> dt.datetime:
    """The moment ``days`` (fractional: hours count) after 00:00 of ``start``, to the minute,
    or ``dt.datetime.max`` past the calendar's end."""
    try:
        moment = dt.datetime.combine(start, dt.time()) + dt.timedelta(days=days)
    except (OverflowError, ValueError):
        return dt.datetime.max  # an enormous goal: past any date (and any deadline)
    return moment.replace(second=0, microsecond=0) + (
        dt.timedelta(minutes=1) if moment.second or moment.microsecond else dt.timedelta()
    )


def _end_of(day: dt.date) -> dt.datetime:
    """The first moment after ``day`` (a deadline date allows the whole day)."""
    if day == dt.date.max:
        return dt.datetime.max
    return dt.datetime.combine(day + dt.timedelta(days=1), dt.time())


def finish_text(finish: dt.datetime) -> str:
    if finish == dt.datetime.max:
        return "after the year 9999"
    return f"on {finish:%Y-%m-%d %H:%M}"


def plan_facts(context: EstimateContext, check: PlanCheck, total_usd: float | None) -> list[str]:
    """The numbers behind a failed limit, as decision facts."""
    goal = context.inventory.goal
    facts = []
    start = goal.start_date or context.today
    wall_days = check.wall_clock_days  # known whenever late or over the wall clock limit
    if check.late and check.finish is not None and wall_days is not None:
        lead = f" + {check.lead_days:g} days to get capacity" if check.lead_days else ""
        clock = wall_clock(wall_days * 24)
        facts.append(
            f"{check.target} is late: from {start}{lead} + {clock} of "
            f"wall clock it finishes {finish_text(check.finish)}, after the deadline "
            f"{goal.deadline}"
        )
    if check.over_wall_clock and wall_days is not None:
        facts.append(
            f"{check.target} needs {wall_clock(wall_days * 24)} of wall clock, more "
            f"than the {goal.max_wall_clock_days:g} days allowed"
        )
    if check.over_budget and total_usd is not None:
        facts.append(
            f"{check.target} costs ${total_usd:,.2f}, over the budget of ${goal.budget_usd:,.2f}"
        )
    return facts


@dataclass(frozen=True)
class Payback:
    """When the port pays for itself (``payback``): the porting cost and the saving per training
    in USD, and after how many trainings it pays off (``None``: never, or unknown)."""

    porting_cost_usd: float | None
    saving_per_training_usd: float | None
    payback_trainings: int | None
    reason: str
    """How the figures were reached, or why one is unknown."""


def payback(context: EstimateContext, saving_per_training_usd: float | None) -> Payback:
    inventory = context.inventory
    days, unestimated = inventory.open_risk_effort()
    rate = inventory.project.engineer_day_usd
    cost = None
    if unestimated:
        why = (
            f"{plural(unestimated, 'open porting risk')} "
            f"{'has' if unestimated == 1 else 'have'} no effort estimate"
        )
    elif rate is None:
        why = "no engineer day rate in the inventory (project.engineer_day_usd)"
    else:
        cost = days * rate
        why = f"{days:g} open porting days x ${rate:,.2f}/day"
    trainings = None
    if cost is not None:
        if saving_per_training_usd is None:
            why += "; no saving per training (the results are not comparable)"
        elif saving_per_training_usd <= 0:
            why += "; Trainium3 saves nothing per training, so the port never pays off"
        else:
            trainings = max(1, math.ceil(cost / saving_per_training_usd))
            why += (
                f"; ${saving_per_training_usd:,.2f} saved per training pays it after "
                f"{plural(trainings, 'training')}"
            )
    return Payback(cost, saving_per_training_usd, trainings, why)
