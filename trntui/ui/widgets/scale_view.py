"""The Scale tab's text: a target at each instance count, from its run set's scaling family,
and a plot of the total against the count.

Measured counts are marked apart from interpolated and assumed ones; the goal's deadline,
wall-clock limit and budget are the lines each count meets or misses; the recommended count is
the cheapest that meets them (``core.scale_plan``). Wall clocks below a day read in hours and
minutes, so the on-time column can be checked by eye; the one efficiency is that of the time
to the verified result the totals bill. Everything here fits 80 columns.
"""

from __future__ import annotations

from rich.text import Text

from trntui.core.format import distinct_labels, plural, usd, wall_clock
from trntui.core.scale_plan import ScalePlan, ScalePoint, unknown_reasons
from trntui.ui.format import title_name

_SOURCE_STYLE = {"measured": "green", "interpolated": "cyan", "assumed": "magenta"}
_MARK = {"measured": "●", "interpolated": "◆", "assumed": "▲"}
PLOT_ROWS = 7
PLOT_WIDTH = 74


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "-"}[value]


def _overrides_line(plan: ScalePlan) -> str:
    """How many of the scenario overrides in force (the number the estimate bar shows) apply
    to this target, so the two counts never seem to disagree."""
    total, here = plan.overrides_in_force, plan.overrides
    if not total:
        return ""
    overrides = plural(total, "override")
    if here == total:
        return f"With the working scenario's {overrides}, at every count.\n"
    return (
        f"{here} of the working scenario's {overrides} apply to this target, at "
        "every count (the others are other targets').\n"
    )


def scale_text(plan: ScalePlan, targets: int) -> Text:
    text = Text()
    text.append(f"Scale: {title_name(plan.target)}", style="bold")
    text.append("  (t: next target)\n" if targets > 1 else "\n", style="dim")
    text.append(_overrides_line(plan), style="yellow")
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
        text.append("  nodes  runs  median to train  run set\n", style="dim")
        names = distinct_labels([measured.run_set for measured in family.points], 40)
        for measured in family.points:
            text.append(
                f"  {measured.nodes:>5}  {measured.runs:>4}  {measured.time_s / 60:10.2f} min   "
                f"{names[measured.run_set]}\n"
            )
    limits = []
    if plan.deadline is not None:
        limits.append(f"deadline {plan.deadline}")
    if plan.max_wall_clock_days is not None:
        limits.append(f"at most {plan.max_wall_clock_days:g} days")
    limits.append("no budget" if plan.budget_usd is None else f"budget ${plan.budget_usd:,.0f}")
    text.append("Goal: " + ", ".join(limits) + "\n", style="dim")
    text.append(
        "  count  inputs          to result  eff.        total  on time  budget\n", style="bold"
    )
    for point in plan.points:
        marked = plan.recommended is not None and point is plan.recommended
        eff = "-" if point.efficiency is None else f"{point.efficiency:.2f}"
        text.append(("> " if marked else "  ") + f"{point.instance_count:>5}  ")
        text.append(f"{point.source:13}", style=_SOURCE_STYLE.get(point.source, "yellow"))
        text.append(f" {wall_clock(point.wall_clock_hours):>11}  {eff:>4}  ")
        text.append(f"{usd(point.total_usd):>11}  ")
        text.append(f"{_yes_no(point.meets_deadline):7}  {_yes_no(point.within_budget)}\n")
    if plan.reference is not None:
        text.append(
            f"  eff.: time to the verified result x instances at {plan.reference}, over "
            "the same here\n",
            style="dim",
        )
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
    text.append("\n")
    text.append_text(cost_plot(plan))
    return text


def cost_plot(plan: ScalePlan, width: int = PLOT_WIDTH, rows: int = PLOT_ROWS) -> Text:
    """The total against the instance count: one column of ``width`` a count, a row of
    ``rows`` a step of cost, the recommended count ``★``, a count that misses the time limits
    in red, the budget a dashed line where it falls; unknown totals read ``?`` on the axis."""
    text = Text()
    text.append("Total by instance count\n", style="bold")
    points = list(plan.points)
    priced = [p.total_usd for p in points if p.total_usd is not None]
    if not priced or not points:
        text.append("  no count has a known total\n", style="dim")
        return text
    budget = plan.budget_usd
    top = max(priced + ([budget] if budget is not None else []))
    bottom = min(priced + ([budget] if budget is not None else []))
    span = (top - bottom) or max(top, 1.0)
    label = max(len(usd(top, 0)), len(usd(bottom, 0)))
    slot = max(4, (width - label - 2 - len(" budget")) // len(points))

    def row_of(value: float) -> int:
        return round((top - value) / span * (rows - 1))

    budget_row = row_of(budget) if budget is not None else None
    for row in range(rows):
        left = usd(top, 0) if row == 0 else usd(bottom, 0) if row == rows - 1 else ""
        text.append(f"{left:>{label}} │", style="dim")
        for point in points:
            text.append_text(_cell(plan, point, row, row_of, budget_row, slot))
        text.append(" budget\n" if row == budget_row else "\n", style="dim")
    text.append(" " * label + " └" + "─" * (slot * len(points)) + "\n", style="dim")
    text.append(" " * (label + 2))
    for point in points:
        text.append(f"{point.instance_count:^{slot}}")
    text.append("\n")
    text.append("  ● measured ◆ interpolated ▲ assumed ★ recommended red: late", style="dim")
    text.append(" ? unknown\n" if len(priced) < len(points) else "\n", style="dim")
    return text


def _cell(
    plan: ScalePlan, point: ScalePoint, row: int, row_of, budget_row: int | None, slot: int
) -> Text:
    fill = "╌" if row == budget_row else " "
    middle = slot // 2
    if point.total_usd is None:
        mark = "?" if row == PLOT_ROWS - 1 else fill
        return Text(fill * middle + mark + fill * (slot - middle - 1), style="dim")
    if row_of(point.total_usd) != row:
        return Text(fill * slot, style="dim")
    chosen = plan.recommended is not None and point is plan.recommended
    mark = "★" if chosen else _MARK.get(point.source, "●")
    style = "bold red" if point.meets_deadline is False else "bold yellow" if chosen else "bold"
    cell = Text(fill * middle, style="dim")
    cell.append(mark, style=style)
    cell.append(fill * (slot - middle - 1), style="dim")
    return cell
