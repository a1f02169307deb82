"""The Scale tab's text: a target at each instance count, from its run set's scaling family.

Measured counts are marked apart from interpolated and assumed ones; the goal's deadline,
wall-clock limit and budget are the lines each count meets or misses; the recommended count is
the cheapest that meets them (``core.scale_plan``). Everything here fits 80 columns.
"""

from __future__ import annotations

from rich.text import Text

from trntui.core.format import UNKNOWN, usd
from trntui.core.scale_plan import ScalePlan, unknown_reasons

_SOURCE_STYLE = {"measured": "green", "interpolated": "cyan", "assumed": "magenta"}


def wall_clock(days: float | None) -> str:
    """Hours below a day, days above; 'unknown' when unknown."""
    if days is None:
        return UNKNOWN
    return f"{days * 24:.1f} h" if days < 1 else f"{days:.2f} d"


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "-"}[value]


def scale_text(plan: ScalePlan, targets: int) -> Text:
    text = Text()
    text.append(f"Scale: {plan.target}", style="bold")
    text.append("  (t: next target)\n" if targets > 1 else "\n", style="dim")
    if plan.overrides:
        text.append(
            f"With the {plan.overrides} scenario override(s) in force at every count.\n",
            style="yellow",
        )
    family = plan.family
    if family is None:
        text.append(
            "No scaling family: only one system size of this workload is measured. Other "
            "counts are unknown unless an efficiency per doubling is stated "
            "(Inventory > Distribution).\n",
            style="yellow",
        )
    else:
        text.append(f"Family {family.name}\n", style="dim")
        text.append("  nodes  median to train   speed-up  efficiency  run set\n", style="dim")
        for point in family.points:
            text.append(
                f"  {point.nodes:>5}  {point.time_s / 60:8.2f} min      {point.speedup:6.2f}"
                f"  {point.efficiency:10.2f}  {point.run_set[-18:]}\n"
            )
    limits = []
    if plan.deadline is not None:
        limits.append(f"deadline {plan.deadline}")
    if plan.max_wall_clock_days is not None:
        limits.append(f"at most {plan.max_wall_clock_days:g} days")
    limits.append("no budget" if plan.budget_usd is None else f"budget ${plan.budget_usd:,.0f}")
    text.append("Goal: " + ", ".join(limits) + "\n", style="dim")
    text.append("  count  throughput     wall clock        total  on time  budget\n", style="bold")
    for point in plan.points:
        chosen = plan.recommended is not None and point is plan.recommended
        total = usd(point.total_usd)
        text.append(("> " if chosen else "  ") + f"{point.instance_count:>5}  ")
        text.append(f"{point.source:13}", style=_SOURCE_STYLE.get(point.source, "yellow"))
        text.append(f"  {wall_clock(point.wall_clock_days):>10}  {total:>11}  ")
        text.append(f"{_yes_no(point.meets_deadline):7}  {_yes_no(point.within_budget)}\n")
    chosen = plan.recommended
    text.append("Recommended: ", style="bold")
    if chosen is None:
        text.append(f"none: {plan.reason}\n", style="yellow")
    else:
        noun = "instance" if chosen.instance_count == 1 else "instances"
        text.append(f"{chosen.instance_count} {noun}", style="bold reverse")
        text.append(f", {plan.reason}\n")
    for reason in unknown_reasons(plan.points)[:2]:
        text.append(f"Unknown at {reason}\n", style="dim")
    return text
