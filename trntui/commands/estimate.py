"""``trntui estimate`` and ``trntui report``: the estimate, headless.

``estimate DIR [--scenario NAME] [--json]`` prints each target's estimate (JSON: per target
``total_usd`` (null when incomplete), ``incomplete_inputs``, ``instance_hours``, each cost term
and every input with its ``provenance``), the Trainium3-vs-GPU comparison and the decision.

Each target's ``band`` is where the next training's cost lands (P10/P50/P90 with ``runs``
and ``method``, or ``reason`` when there is none: ``core.prediction``).

``report DIR [--scenario NAME] --format md|json|csv -o FILE`` writes the budget report
(``-o -`` prints it).

Both compare the first Trainium3 target with the GPU target ``--gpu-target NAME`` names, else
the one the working scenario keeps (chosen in the app: Scenarios > Trn3 vs GPU, ``t``; not for
a snapshot, which does not hold it), else the first GPU target: the app and the CLI compare the
same two.

``trntui scenario`` (``commands/scenario.py``) saves and reopens snapshots of it.

Exit codes: 0 done (an incomplete estimate is still a result: it says what is missing), 2 a
problem the user can fix (bad folder, unknown scenario).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trntui.commands import fail, help_of, wrapped
from trntui.core.comparison import compare
from trntui.core.errors import UserError
from trntui.core.estimate import (
    Estimate,
    EstimateContext,
    InvalidInputError,
    Override,
    estimate,
)
from trntui.core.format import number, plural, ratio, usd, usd_per_unit
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
from trntui.store.reports import write_report

if TYPE_CHECKING:
    from trntui.core.inventory import Inventory
    from trntui.store.scenarios import Scenario

REPORT_FORMATS = ("csv", "json", "md")
"""``report --format`` choices; the renderers (and the analysis) load when a report is made."""
_LABEL_WIDTH = 41
EXAMPLE_NOTE = "EXAMPLE DATA: the project is an illustration; do not quote these figures."


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
    _gpu_target_argument(est)
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
    _gpu_target_argument(rep)
    rep.set_defaults(func=report_command)


def _gpu_target_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gpu-target",
        metavar="NAME",
        help="the GPU target Trainium3 is compared with (default: the working scenario's, "
        "chosen in the app's Trn3 vs GPU tab; else the first GPU target)",
    )


def compared_gpu(
    args: argparse.Namespace, root: Path, inventory: Inventory, scenario: Scenario | None
) -> str | None:
    """The GPU target to compare with: ``--gpu-target`` (refused, with the GPU targets there
    are, when it names none), else the choice in force: the snapshot's (as it was saved) or,
    for the project as it is, the working scenario's; else None (the first GPU target).
    ``scenario show`` passes no ``--gpu-target``."""
    wanted = getattr(args, "gpu_target", None)
    if wanted is None:
        if scenario is not None:
            return scenario.gpu_target
        from trntui.store.working_scenario import read_working_scenario

        return read_working_scenario(root).gpu_target
    names = [t.name for t in inventory.targets if t.accelerator_family == "GPU"]
    if wanted not in names:
        raise UserError(
            f"--gpu-target {wanted!r} is not a GPU target of "
            f"{'the snapshot' if scenario else 'the project'}; GPU targets: "
            + (", ".join(repr(name) for name in names) or "none")
        )
    return str(wanted)


def user_errors(
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


def project_context(root: Path) -> EstimateContext:
    from trntui.store.project_store import ProjectStore

    with ProjectStore.open(root, read_only=True) as store:
        return store.derive_and_store_context()


def target_context(root: Path) -> EstimateContext:
    """What the estimate of the project's targets reads: their run sets' runs and those of
    the sets their scaling families could hold, not every run (``read_target_context``)."""
    from trntui.store.project_store import ProjectStore

    with ProjectStore.open(root, read_only=True) as store:
        return store.read_target_context()


def working_overrides(root: Path) -> tuple[Override, ...]:
    """The working scenario's overrides (``working_scenario.toml``), as the app applies them."""
    from trntui.store.working_scenario import load_working_scenario

    return load_working_scenario(root)


def estimate_with_working(context: EstimateContext, overrides: tuple[Override, ...]) -> Estimate:
    """``estimate`` with the working scenario; an override that no longer applies (its target
    renamed since) is named with the file it is in and how to drop it."""
    from trntui.store.working_scenario import WORKING_SCENARIO_FILE

    try:
        return estimate(context, overrides)
    except InvalidInputError as error:
        if not overrides:
            raise
        raise UserError(
            f"{WORKING_SCENARIO_FILE}: {error} (drop that override in the app, Scenarios > "
            "Inputs, x; or edit the file)"
        ) from None


def _basis(
    root: Path, name: str | None
) -> tuple[EstimateContext, tuple[Override, ...], Scenario | None, tuple[str, ...]]:
    """What to show: the project now with its working scenario's overrides (as the app shows
    it), or a snapshot (its own context and overrides) with the notes on what changed in the
    project since it was saved."""
    if name is None:
        return target_context(root), working_overrides(root), None, ()
    scenario = scenarios.load_scenario(root, name)
    try:
        stale = scenarios.staleness(scenario, project_context(root))
    except UserError as error:
        stale = (f"the project cannot be read to check ({error})",)
    return scenario.context, scenario.overrides, scenario, stale


@user_errors
def estimate_command(args: argparse.Namespace) -> int:
    context, overrides, scenario, stale = _basis(Path(args.dir), args.scenario)
    result = estimate_with_working(context, overrides) if scenario is None else None
    result = result or estimate(context, overrides)
    bands = prediction_bands(result)
    gpu_target = compared_gpu(args, Path(args.dir), context.inventory, scenario)
    comparison = compare(context, result, bands, gpu_target=gpu_target)
    if args.json:
        document = {
            "example": context.inventory.project.example,
            **estimate_document(result, bands),
        }
        document["scenario"] = scenario.name if scenario else None
        document["working_scenario"] = None if scenario else _working_json(overrides)
        document["stale"] = list(stale)
        back = comparison.payback
        document["comparison"] = {
            "trainium_target": comparison.trainium.name if comparison.trainium else None,
            "gpu_target": comparison.gpu.name if comparison.gpu else None,
            "gpu_choice": comparison.gpu_choice,
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
    else:
        chosen_here = getattr(args, "gpu_target", None) is not None
        print(working_note(overrides, None if chosen_here else gpu_target))
    for note in stale:
        print(f"STALE: {note}")
    print(_estimate_text(result, bands))
    lines: list[str] = []  # prose, wrapped at 80 columns
    if comparison.trainium is not None and comparison.gpu is not None:
        lines += wrapped(
            f"Compared: {comparison.trainium.name} against {comparison.gpu.name} (the GPU "
            f"target: {comparison.gpu_choice})"
        )
    if comparison.comparable and comparison.break_even is not None:  # both set when comparable
        lines += wrapped(
            f"Trainium3 / GPU cost to the same result: {ratio(comparison.cost_ratio)} "
            f"({comparison.break_even.note})"
        )
    else:
        lines += wrapped("No Trainium3/GPU ratio: " + "; ".join(comparison.reasons))
    if comparison.trial_runs is not None:
        lines += wrapped(f"Trial runs: {comparison.trial_runs.text()}")
    back = comparison.payback
    if back is not None:
        lines += wrapped(f"Porting cost: {usd(back.porting_cost_usd)} ({back.reason})")
    lines.append(f"Decision: {comparison.decision.action}")
    for fact in comparison.decision.facts:
        lines += wrapped(f"- {fact}", indent=2)
    print("\n".join(lines))
    return 0


def working_note(overrides: tuple[Override, ...], gpu_target: str | None = None) -> str:
    """The line that says which working scenario an estimate of the project applied."""
    from trntui.store.working_scenario import working_scenario_note

    return working_scenario_note(overrides, gpu_target)


def _working_json(overrides: tuple[Override, ...]) -> dict[str, Any]:
    from trntui.store.working_scenario import WORKING_SCENARIO_FILE

    # The overrides themselves are the document's "overrides", as every estimate lists them.
    return {"file": WORKING_SCENARIO_FILE, "overrides": len(overrides)}


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
        counts = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
        lines += wrapped(f"{'inputs':{_LABEL_WIDTH}} {counts}", indent=2, hang=_LABEL_WIDTH + 1)
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
        f"Porting risks: {result.risk_effort_text} over {plural(open_risks, 'open risk')}, "
        "kept apart from the totals"
    )
    return "\n".join(lines)


@user_errors
def report_command(args: argparse.Namespace) -> int:
    from trntui.core.report import analyze, render_report, report_document

    context, overrides, scenario, stale = _basis(Path(args.dir), args.scenario)
    if scenario is None:
        estimate_with_working(context, overrides)  # names the file when an override fails
    gpu_target = compared_gpu(args, Path(args.dir), context.inventory, scenario)
    analysis = analyze(context, overrides, gpu_target=gpu_target)
    document = report_document(
        context,
        analysis,
        scenario=scenario.name if scenario else None,
        saved_at=scenario.saved_at if scenario else None,
        stale=stale,
    )
    text = render_report(document, args.format)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        write_report(args.output, text)
        print(f"Wrote {args.format} report to {args.output}")
    return 0
