"""``trntui scale`` and ``trntui family``: instance counts from measured scaling, headless.

``scale DIR --target NAME [--json]`` prices the target at each instance count from its run
set's scaling family (``core.scale_plan``). JSON: ``points`` (one per count:
``instance_count``, ``source``, ``time_to_result_s``, ``wall_clock_days``, ``wall_clock``
(hours and minutes below a day), ``efficiency`` (of the time to the verified result, against
``efficiency_reference_count``), ``total_usd``, ``meets_deadline``, ``within_budget``),
``recommended`` (a count, or null) with ``reason``, and ``family`` (its measured ``sizes``).

``family DIR NAME SET... | --auto SET...`` puts run sets in a named scaling family, or back
to the automatic grouping.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from trntui.commands import fail, help_of
from trntui.core.errors import UserError
from trntui.core.format import UNKNOWN, plural, usd, wall_clock
from trntui.core.scale_plan import ScalePlan, scale_plan, unknown_reasons
from trntui.store.project import Project
from trntui.store.project_store import ProjectStore
from trntui.store.set_sizes import name_family


def register(subparsers: argparse._SubParsersAction) -> None:
    scale = subparsers.add_parser(
        "scale",
        help=help_of("scale"),
        description=(
            "Price a target at each instance count from the scaling family of its run set: "
            "measured counts, counts interpolated between measured ones, counts assumed from "
            "the inventory's distribution.scaling_efficiency_per_doubling, unknown otherwise. "
            "Recommends the cheapest count that meets the goal's deadline, wall-clock limit and "
            "budget."
        ),
    )
    scale.add_argument("dir", help="project folder")
    scale.add_argument("--target", required=True, help="target name as in the inventory")
    scale.add_argument("--json", action="store_true", help="print JSON")
    scale.set_defaults(func=scale_command)

    family = subparsers.add_parser(
        "family",
        help=help_of("family"),
        description=(
            "Run sets of the same workload at different system sizes form a scaling family, "
            "found automatically (same protocol facts and accelerator). Name one yourself to "
            "group sets the logs cannot tie together; --auto returns sets to the automatic "
            "grouping."
        ),
    )
    family.add_argument("dir", help="project folder")
    family.add_argument("name", nargs="?", help="family name")
    family.add_argument("sets", nargs="*", metavar="SET", help="run sets")
    family.add_argument("--auto", nargs="+", metavar="SET", help="sets back to automatic")
    family.set_defaults(func=family_command)


def scale_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    try:
        with ProjectStore.open(root, read_only=True) as store:
            plan = scale_plan(store.derive_and_store_context(), args.target)
    except UserError as error:
        return fail(error)
    if args.json:
        print(json.dumps(plan_document(plan), indent=2))
        return 0
    print(plan_text(plan))
    return 0


def family_command(args: argparse.Namespace) -> int:
    if args.auto and (args.name or args.sets):
        return fail("give either NAME SET... or --auto SET...")
    if not args.auto and (not args.name or not args.sets):
        return fail("give a family NAME and at least one SET (or --auto SET...)")
    root = Path(args.dir)
    try:
        with Project.open(root) as project:
            project.require_writable()
            name_family(root, list(args.auto or args.sets), None if args.auto else args.name)
    except UserError as error:
        return fail(error)
    what = "automatic grouping" if args.auto else f"family {args.name!r}"
    print(f"{', '.join(args.auto or args.sets)}: {what}")
    return 0


def plan_document(plan: ScalePlan) -> dict[str, Any]:
    family = plan.family
    at = {p.instance_count: p for p in plan.points}
    return {
        "target": plan.target,
        "efficiency_reference_count": plan.reference,
        "family": None
        if family is None
        else {
            "name": family.name,
            "named_by_user": family.named_by_user,
            "sizes": [
                {
                    "run_set": p.run_set,
                    "nodes": p.nodes,
                    "runs": p.runs,
                    "median_time_to_train_s": p.time_s,
                    "time_low_s": p.time_low_s,
                    "time_high_s": p.time_high_s,
                    "time_to_result_s": at[p.nodes].time_to_result_s if p.nodes in at else None,
                    "efficiency": at[p.nodes].efficiency if p.nodes in at else None,
                    "steady_throughput": p.throughput,
                    "steady_throughput_range": [p.throughput_low, p.throughput_high],
                    "throughput_unit": p.throughput_unit,
                }
                for p in family.points
            ],
        },
        "deadline": plan.deadline.isoformat() if plan.deadline else None,
        "max_wall_clock_days": plan.max_wall_clock_days,
        "budget_usd": plan.budget_usd,
        "points": [
            {
                "instance_count": p.instance_count,
                "source": p.source,
                "detail": p.detail,
                "time_to_result_s": p.time_to_result_s,
                "wall_clock_days": p.wall_clock_days,
                "wall_clock": wall_clock(
                    None if p.wall_clock_days is None else 24 * p.wall_clock_days
                ),
                "efficiency": p.efficiency,
                "total_usd": p.total_usd,
                "total_range_usd": list(p.total_range_usd) if p.total_range_usd else None,
                "meets_deadline": p.meets_deadline,
                "within_budget": p.within_budget,
                "commitment_beyond_usd": p.commitment_beyond_usd,
                "unknown_because": p.unknown_because,
            }
            for p in plan.points
        ],
        "recommended": plan.recommended.instance_count if plan.recommended else None,
        "reason": plan.reason,
    }


def _yes_no(value: bool | None) -> str:
    return UNKNOWN if value is None else "yes" if value else "NO"


def plan_text(plan: ScalePlan) -> str:
    lines = [f"Target {plan.target}"]
    family = plan.family
    if family is None:
        lines.append("  no scaling family: its run set is the only size measured")
    else:
        lines.append(f"  family {family.name}")
        for m in family.points:
            lines.append(
                f"    {m.nodes:>3} nodes  {m.run_set:30.30}  {plural(m.runs, 'run')}, median "
                f"{m.time_s / 60:.2f} min to train ({m.time_low_s / 60:.2f}-"
                f"{m.time_high_s / 60:.2f})"
            )
    lines.append(
        f"  efficiency: time to the verified result x instances at {plan.reference} over the "
        "same at the count"
    )
    lines.append("  count  source        wall clock     eff.          total  on time  budget")
    for p in plan.points:
        eff = UNKNOWN if p.efficiency is None else f"{p.efficiency:.2f}"
        clock = wall_clock(p.wall_clock_hours)
        lines.append(
            f"  {p.instance_count:>5}  {p.source:12}  {clock:>12}  {eff:>7}  "
            f"{usd(p.total_usd):>11}  {_yes_no(p.meets_deadline):7}  {_yes_no(p.within_budget)}"
        )
    lines += [f"  unknown at {reason}" for reason in unknown_reasons(plan.points)]
    chosen = plan.recommended
    lines.append(
        f"Recommended: {plural(chosen.instance_count, 'instance')} ({plan.reason})"
        if chosen
        else f"Recommended: none ({plan.reason})"
    )
    return "\n".join(lines)
