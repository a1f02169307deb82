"""``trntui estimate``, ``trntui report`` and ``trntui scenario``: the estimate, headless.

``estimate DIR [--scenario NAME] [--json]`` prints each target's estimate (JSON: per target
``total_usd`` (null when incomplete), ``incomplete_inputs``, ``instance_hours``, each cost term
and every input with its ``provenance``), the Trainium3-vs-GPU comparison and the decision.

Each target's ``band`` is where the next training's cost lands (P10/P50/P90 with ``runs``
and ``method``, or ``reason`` when there is none: ``core.prediction``).

``report DIR [--scenario NAME] --format md|json|csv -o FILE`` writes the budget report
(``-o -`` prints it).

``scenario save DIR NAME [--set [TARGET:]INPUT=VALUE]... --why TEXT [--who NAME] [--note TEXT]
[--force]`` snapshots the project with those overrides (an override of a price outside the
plausibility band of ``price add``/``price rate`` only with ``--force``); ``scenario list
DIR``, ``scenario show DIR NAME`` and ``scenario diff DIR A [B]`` (B omitted: the project as it
is now, without A's overrides) do from the shell what the Scenarios screen does: every
override and input that differs, then the cost terms and totals.

Exit codes: 0 done (an incomplete estimate is still a result: it says what is missing), 2 a
problem the user can fix (bad folder, bad override, unknown scenario).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trntui.commands import fail, help_of, refuse_unless_forced
from trntui.core.comparison import compare
from trntui.core.errors import UserError
from trntui.core.estimate import (
    INPUT_SPECS,
    Estimate,
    EstimateContext,
    InvalidInputError,
    Override,
    estimate,
    implausible_overrides,
    prepare,
)
from trntui.core.format import UNKNOWN, number, ratio, usd, usd_per_unit
from trntui.core.plan_check import PlanCheck
from trntui.core.prediction import Band, prediction_bands
from trntui.core.quotes import FlagKind
from trntui.core.report_document import (
    TERM_LABELS,
    before_trial_document,
    estimate_document,
    shown_terms,
)
from trntui.store import scenarios  # lazy: a name loads its module when first used
from trntui.store.atomic import atomic_write_text

if TYPE_CHECKING:
    from trntui.store.scenarios import DiffRow, Scenario

REPORT_FORMATS = ("csv", "json", "md")
"""``report --format`` choices; the renderers (and the analysis) load when a report is made."""
_LABEL_WIDTH = 41
EXAMPLE_NOTE = "EXAMPLE DATA: the project is marked as an illustration; do not quote these figures."


def register(subparsers: argparse._SubParsersAction) -> None:
    est = subparsers.add_parser(
        "estimate",
        help=help_of("estimate"),
        description="Print each target's estimate: billed hours per stage, every cost term, "
        "the total (or 'incomplete: <inputs>'), the Trainium3-vs-GPU comparison and decision.",
    )
    est.add_argument("dir", help="project folder")
    est.add_argument("--scenario", metavar="NAME", help="use a saved scenario snapshot")
    est.add_argument("--json", action="store_true", help="print JSON")
    est.set_defaults(func=estimate_command)

    rep = subparsers.add_parser(
        "report",
        help=help_of("report"),
        description="Write the budget report: inputs with provenance, quotes with source and "
        "date, the formula, each stage, sensitivity, comparison and caveats.",
    )
    rep.add_argument("dir", help="project folder")
    rep.add_argument("--scenario", metavar="NAME", help="report a saved scenario snapshot")
    rep.add_argument("--format", choices=REPORT_FORMATS, required=True)
    rep.add_argument("-o", "--output", required=True, metavar="FILE", help="file ('-': stdout)")
    rep.set_defaults(func=report_command)

    scenario = subparsers.add_parser(
        "scenario",
        help=help_of("scenario"),
        description="Named snapshots of an estimate with every input, override and quote.",
    )
    actions = scenario.add_subparsers(dest="action", metavar="ACTION", required=True)
    save = actions.add_parser("save", help="snapshot the project with overrides")
    save.add_argument("dir", help="project folder")
    save.add_argument("name", help="scenario name (letters, digits, . _ -)")
    save.add_argument(
        "--replace", action="store_true", help="replace a saved scenario of the same name"
    )
    save.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="[TARGET:]INPUT=VALUE",
        help=f"override an input; inputs: {', '.join(INPUT_SPECS)}",
    )
    save.add_argument("--who", help="who sets the overrides (default: your user name)")
    save.add_argument("--why", default="", help="why (required with --set)")
    save.add_argument("--note", default="", help="a note stored with the snapshot")
    save.add_argument(
        "--force",
        action="store_true",
        help="keep an override of a price or side rate that looks implausible (the band of "
        "`price add` and `price rate`)",
    )
    save.set_defaults(func=scenario_save_command)

    lister = actions.add_parser("list", help="list saved scenarios")
    lister.add_argument("dir", help="project folder")
    lister.add_argument("--json", action="store_true", help="print JSON")
    lister.set_defaults(func=scenario_list_command)

    show = actions.add_parser("show", help="reopen a scenario (flagged stale if runs changed)")
    show.add_argument("dir", help="project folder")
    show.add_argument("name", help="scenario name")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=scenario_show_command)

    diff = actions.add_parser("diff", help="what changed between two scenarios")
    diff.add_argument("dir", help="project folder")
    diff.add_argument("a", metavar="A", help="scenario name")
    diff.add_argument("b", metavar="B", nargs="?", help="scenario name (default: project now)")
    diff.add_argument("--json", action="store_true", help="print JSON")
    diff.set_defaults(func=scenario_diff_command)


def _user_errors(
    command: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """A mistake the user can fix prints one line and exits 2; tracebacks are for bugs."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except UserError as error:
            return fail(error)

    return run


def plan_json(plan: PlanCheck) -> dict[str, Any]:
    return {
        "target": plan.target,
        "wall_clock_days": plan.wall_clock_days,
        "capacity_lead_days": plan.lead_days,
        "finish": plan.finish.isoformat() if plan.finish else None,
        "late": plan.late,
        "over_wall_clock": plan.over_wall_clock,
        "over_budget": plan.over_budget,
    }


def _project_context(root: Path) -> EstimateContext:
    from trntui.store.estimate_context import load_context
    from trntui.store.project import Project

    with Project.open(root, read_only=True) as project:
        return load_context(root, project.inventory)


def _basis(
    root: Path, name: str | None
) -> tuple[EstimateContext, tuple[Override, ...], Scenario | None, tuple[str, ...]]:
    """What to show: the project now, or a snapshot (its own context and overrides) with the
    notes on what changed in the project since it was saved."""
    if name is None:
        return _project_context(root), (), None, ()
    scenario = scenarios.load_scenario(root, name)
    try:
        stale = scenarios.staleness(scenario, _project_context(root))
    except UserError as error:
        stale = (f"the project cannot be read to check ({error})",)
    return scenario.context, scenario.overrides, scenario, stale


@_user_errors
def estimate_command(args: argparse.Namespace) -> int:
    context, overrides, scenario, stale = _basis(Path(args.dir), args.scenario)
    result = estimate(context, overrides)
    bands = prediction_bands(result)
    comparison = compare(context, result, bands)
    if args.json:
        document = {
            "example": context.inventory.project.example,
            **estimate_document(result, bands),
        }
        document["scenario"] = scenario.name if scenario else None
        document["stale"] = list(stale)
        back = comparison.payback
        document["comparison"] = {
            "comparable": comparison.comparable,
            "reasons": list(comparison.reasons),
            "cost_ratio": comparison.cost_ratio,
            "decision": comparison.decision.action,
            "decision_facts": list(comparison.decision.facts),
            "porting_cost_usd": back.porting_cost_usd if back else None,
            "saving_per_training_usd": back.saving_per_training_usd if back else None,
            "payback_trainings": back.payback_trainings if back else None,
            "payback_reason": back.reason if back else None,
            "plans": [plan_json(plan) for plan in comparison.plans],
            **before_trial_document(comparison),
        }
        print(json.dumps(document, indent=2))
        return 0
    if context.inventory.project.example:
        print(EXAMPLE_NOTE)
    if scenario is not None:
        print(f"Scenario {scenario.name!r} saved {scenario.saved_at:%Y-%m-%d %H:%M} UTC")
    for note in stale:
        print(f"STALE: {note}")
    print(_estimate_text(result, bands))
    if comparison.comparable and comparison.break_even is not None:  # both set when comparable
        print(
            f"Trainium3 / GPU cost to the same result: {ratio(comparison.cost_ratio)} "
            f"({comparison.break_even.note})"
        )
    else:
        print("No Trainium3/GPU ratio: " + "; ".join(comparison.reasons))
    if comparison.trial_runs is not None:
        print(f"Trial runs: {comparison.trial_runs.text()}")
    back = comparison.payback
    if back is not None:
        cost = usd(back.porting_cost_usd)
        print(f"Porting cost: {cost} ({back.reason})")
    print(f"Decision: {comparison.decision.action}")
    for fact in comparison.decision.facts:
        print(f"  - {fact}")
    return 0


def _estimate_text(result: Estimate, bands: tuple[Band, ...]) -> str:
    """Each target as a short block that fits 80 columns."""
    lines = []
    for item, band in zip(result.targets, bands, strict=True):
        target = item.target
        lines.append(
            f"{item.name}: {target.instance_count} x {target.instance_type}, "
            f"{target.region}, {target.purchase_option}"
        )
        only = " (assumptions only: no input is measured)" if item.assumptions_only else ""
        lines.append(f"  {'total':{_LABEL_WIDTH}} {item.headline()}{only}")
        lines.append(f"  {'next training':{_LABEL_WIDTH}} {band.text()}")
        if item.usd_per_unit is not None:
            unit = (item.work_unit or "units").removesuffix("s")
            lines.append(f"  {'per ' + unit:{_LABEL_WIDTH}} {usd_per_unit(item.usd_per_unit)}")
        for stage in item.stages:
            hours = number(stage.instance_hours)
            lines.append(f"  {stage.label:{_LABEL_WIDTH}} {hours} instance-hours")
        if item.block_billed:
            lines.append(f"  {'Capacity Block':{_LABEL_WIDTH}} {item.block_text()}")
        for term in shown_terms(item.block_billed):
            lines.append(f"  {TERM_LABELS[term]:{_LABEL_WIDTH}} {usd(item.term(term))}")
        if item.term_years is not None:
            lines.append(f"  {'Term commitment':{_LABEL_WIDTH}} {item.commitment_text()}")
        kinds: dict[str, int] = {}
        ignored = {i.key for i in item.inputs if i.is_unknown} - {
            i.key for i in item.unknown_inputs()
        }
        for i in item.inputs:
            if i.key not in ignored:
                kinds[i.provenance.kind] = kinds.get(i.provenance.kind, 0) + 1
        lines.append(
            f"  {'inputs':{_LABEL_WIDTH}} " + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
        )
        lines += [f"  unknown: {i.label}: {i.provenance.source}" for i in item.unknown_inputs()]
        # What makes the price doubtful, beside the total it drives (a manual or unverified
        # quote is in the inputs' provenance; these say the price itself may be wrong).
        lines += [
            f"  price: {flag.message}"
            for flag in item.quote_flags
            if flag.kind not in (FlagKind.MANUAL, FlagKind.UNVERIFIED)
        ]
        suspect = {
            part.strip()
            for i in item.inputs
            for part in i.provenance.detail.split(";")
            if "suspect" in part
        }
        lines += [f"  {'runs left out':{_LABEL_WIDTH}} {note}" for note in sorted(suspect)]
    open_risks = sum(r.status != "resolved" for r in result.risks)
    lines.append(
        f"Porting risks: {result.risk_effort_text} over {open_risks} open risk(s), "
        "kept apart from the totals"
    )
    return "\n".join(lines)


@_user_errors
def report_command(args: argparse.Namespace) -> int:
    from trntui.core.report import (
        analyze,
        render_csv,
        render_json,
        render_markdown,
        report_document,
    )

    renderers = {"md": render_markdown, "json": render_json, "csv": render_csv}
    context, overrides, scenario, stale = _basis(Path(args.dir), args.scenario)
    analysis = analyze(context, overrides)
    document = report_document(
        context,
        analysis,
        scenario=scenario.name if scenario else None,
        saved_at=scenario.saved_at if scenario else None,
        stale=stale,
    )
    text = renderers[args.format](document)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(_report_path(args.output), text)
        print(f"Wrote {args.format} report to {args.output}")
    return 0


def _report_path(output: str) -> Path:
    """Where a report may go: never over a project's own files, into a folder that exists."""
    from trntui.store.paths import project_data_of

    path = Path(output)
    owner = project_data_of(path)
    if owner is not None:
        raise UserError(
            f"{output} is part of the project {owner} (its inventory, runs, prices, scenarios, "
            "telemetry, logs or lock): a report never replaces those; write it elsewhere, "
            "e.g. next to trntui.toml"
        )
    if not path.parent.is_dir():
        raise UserError(f"{output} was not written: the folder {path.parent} does not exist")
    if path.is_dir():
        raise UserError(f"{output} is a folder: name a file for the report")
    return path


def parse_override(text: str, who: str, why: str) -> Override:
    """``[TARGET:]INPUT=VALUE`` as an override (``InvalidInputError`` when malformed)."""
    where, sep, value_text = text.rpartition("=")
    if not sep or not where:
        raise InvalidInputError(f"--set {text!r}: expected [TARGET:]INPUT=VALUE")
    target, _, key = where.rpartition(":")
    try:
        value = float(value_text)
    except ValueError:
        raise InvalidInputError(f"--set {text!r}: {value_text!r} is not a number") from None
    return Override(key.strip(), value, target.strip() or None, who=who, why=why)


@_user_errors
def scenario_save_command(args: argparse.Namespace) -> int:
    from trntui.store.estimate_context import load_context
    from trntui.store.project import Project

    if args.overrides and not args.why.strip():
        raise UserError("an override is an assumption: say why with --why")
    who = args.who or scenarios.current_user()
    overrides = [parse_override(text, who, args.why) for text in args.overrides]
    root = Path(args.dir)
    with Project.open(root) as project:
        project.require_writable()
        if scenarios.scenario_path(root, args.name).exists() and not args.replace:
            raise UserError(
                f"a scenario named {args.name!r} is already saved; nothing changed "
                "(choose another name, or --replace it)"
            )
        context = load_context(root, project.inventory)
        doubts = implausible_overrides(prepare(context), overrides, context.inventory)
        refuse_unless_forced(doubts, args.force)
        scenario = scenarios.save_scenario(root, args.name, context, overrides, note=args.note)
    print(f"Saved scenario {scenario.name!r}:")
    for name, total in scenario.saved_totals.items():
        print(f"  {name}: {usd(total)}")
    return 0


@_user_errors
def scenario_list_command(args: argparse.Namespace) -> int:
    infos = scenarios.list_scenarios(Path(args.dir))
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": i.name,
                        "saved_at": i.saved_at.isoformat() if i.saved_at else None,
                        "note": i.note,
                        "totals": i.totals,
                    }
                    for i in infos
                ],
                indent=2,
            )
        )
        return 0
    if not infos:
        print("No scenario saved yet (trntui scenario save DIR NAME).")
    for info in infos:
        when = f"{info.saved_at:%Y-%m-%d %H:%M}" if info.saved_at else f"{UNKNOWN:16}"
        totals = ", ".join(f"{name} {usd(total)}" for name, total in info.totals.items())
        print(f"{info.name:20} {when}  {totals}  {info.note}")
    return 0


@_user_errors
def scenario_show_command(args: argparse.Namespace) -> int:
    args.scenario = args.name
    return estimate_command(args)


@_user_errors
def scenario_diff_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    a = scenarios.load_scenario(root, args.a)
    if args.b is None:
        # The project as it is now, as the bar shows it without the snapshot's overrides: they
        # are a difference too, listed first.
        b_name = "project now"
        b_estimate = estimate(_project_context(root))
    else:
        b_name = args.b
        b_estimate = scenarios.load_scenario(root, args.b).estimate()
    rows = scenarios.diff_estimates(a.estimate(), b_estimate)
    if args.json:
        print(
            json.dumps(
                {"a": a.name, "b": b_name, "changes": [_row_json(r) for r in rows]}, indent=2
            )
        )
        return 0
    if not rows:
        print(f"No difference between {a.name!r} and {b_name!r}.")
    for row in rows:
        change = ""
        if row.delta is not None:
            pct = f", {row.delta_pct:+.1f}%" if row.delta_pct is not None else ""
            change = f" ({row.delta:+,.6g}{pct})"
        label = {
            "total_usd": "Total",
            "commitment_beyond_usd": "Term still owes",
            **TERM_LABELS,
        }.get(row.item, row.item)
        before, after = row.shown("a", _value), row.shown("b", _value)
        print(f"{row.target}: {label}: {before} -> {after}{change}")
        if row.a_note != row.b_note:
            print(f"    was {row.a_note or 'not set'}; now {row.b_note or 'not set'}")
    return 0


def _value(value: float | None) -> str:
    return number(value, 6)


def _row_json(row: DiffRow) -> dict[str, Any]:
    return {
        "target": row.target,
        "item": row.item,
        "a": row.a,
        "b": row.b,
        "delta": row.delta,
        "delta_pct": row.delta_pct,
        "a_provenance": row.a_note,
        "b_provenance": row.b_note,
        "a_absent": row.a_absent,
        "b_absent": row.b_absent,
    }
