"""``trntui telemetry`` and ``trntui verdict``: utilization, compile telemetry and what limits
each run, headless.

``telemetry DIR PATH... --run RUN_ID [--offset SECONDS] [--instance-type TYPE] [--json]``
attaches neuron-monitor / nvidia-smi captures or training logs with Neuron compiler lines to a
run. A capture that does not overlap the run in time, comes from another instance or cannot be
placed is reported and not stored. Exit code 0 when every file was attached or already was,
1 when some were refused or failed, 2 for a project problem.

``verdict DIR [--run RUN_ID] [--json]`` prints, per run, the utilization over the steady window
and over the whole run (with method and collection period), compile counts, MFU and the
verdict with the share of billed time each cause explains.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from trntui.commands import fail, finite_float, help_of
from trntui.core.errors import UserError
from trntui.core.telemetry_text import telemetry_lines
from trntui.core.utilization import UtilizationFigure
from trntui.core.verdict import verdict_rows
from trntui.store.facts import derive_and_store_facts
from trntui.store.project import Project
from trntui.store.project_store import ProjectStore
from trntui.store.telemetry import (
    ATTACHED,
    DUPLICATE,
    RunTelemetryDetail,
    attach_capture,
    run_detail,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    attach = subparsers.add_parser(
        "telemetry",
        help=help_of("telemetry"),
        description=(
            "Attach neuron-monitor JSON captures, nvidia-smi CSV captures or training logs "
            "with Neuron compiler lines to an imported run. Captures are placed by time "
            "overlap and instance; a mismatch is reported and not stored. Exit code: 0 all "
            "attached, 1 some refused or failed, 2 project problem."
        ),
    )
    attach.add_argument("dir", help="project folder")
    attach.add_argument("paths", nargs="+", metavar="PATH", help="capture or log file")
    attach.add_argument("--run", required=True, dest="run_id", help="run id (see `trntui runs`)")
    attach.add_argument(
        "--offset",
        type=finite_float,
        metavar="SECONDS",
        help="run time at which the capture starts (for captures without absolute time)",
    )
    attach.add_argument(
        "--instance-type", help="the run's instance type; a capture from another is refused"
    )
    attach.add_argument("--json", action="store_true", help="print JSON")
    attach.set_defaults(func=telemetry_command)

    verdict = subparsers.add_parser(
        "verdict",
        help=help_of("verdict"),
        description=(
            "Per run: accelerator utilization over the steady window and the whole run, "
            "compilation counts, model FLOPs utilization and what limits the run, with the "
            "share of billed time each cause explains."
        ),
    )
    verdict.add_argument("dir", help="project folder")
    verdict.add_argument("--run", dest="run_id", help="only this run")
    verdict.add_argument("--json", action="store_true", help="print JSON")
    verdict.set_defaults(func=verdict_command)


def telemetry_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    try:
        with Project.open(root) as project:
            project.require_writable()
            outcomes = [
                attach_capture(
                    root,
                    args.run_id,
                    Path(path),
                    offset_s=args.offset,
                    instance_type=args.instance_type,
                )
                for path in args.paths
            ]
    except UserError as error:
        return fail(error)
    if args.json:
        print(json.dumps([dataclasses.asdict(o) for o in outcomes], indent=2))
    else:
        for outcome in outcomes:
            print(f"{outcome.outcome:9} {outcome.path}: {outcome.message}")
    return 0 if all(o.outcome in (ATTACHED, DUPLICATE) for o in outcomes) else 1


def _figure_json(figure: UtilizationFigure | None) -> dict[str, Any] | None:
    return None if figure is None else dataclasses.asdict(figure)


def detail_json(run_id: str, detail: RunTelemetryDetail) -> dict[str, Any]:
    util = detail.utilization
    compile = detail.compile
    return {
        "run_id": run_id,
        "utilization": None
        if util is None
        else {"steady": _figure_json(util.steady), "whole_run": _figure_json(util.whole_run)},
        "compile": None
        if compile is None
        else {
            "compilations": compile.compilations,
            "cache_hits": compile.cache_hits,
            "failures": compile.failures,
            "unfinished": compile.unfinished,
            "compile_s": compile.compile_s,
            "compile_min_s": compile.compile_min_s,
        },
        "mfu": {
            "value": detail.mfu.value,
            "label": detail.mfu.label,
            "formula": detail.mfu.formula,
            "worked": detail.mfu.worked() if detail.mfu.value is not None else None,
            "trainable_parameters_billion": detail.mfu.trainable_parameters_billion,
            "implausible": detail.mfu.implausible,
            "missing": list(detail.mfu.missing),
        },
        "verdict": {
            "limit": str(detail.verdict.limit) if detail.verdict.limit else None,
            "headline": detail.verdict.headline,
            "billed_s": detail.verdict.billed_s,
            "unexplained_s": detail.verdict.unexplained_s,
            "shares": list(verdict_rows(detail.verdict)),
            "notes": list(detail.verdict.notes),
        },
    }


def verdict_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    try:
        with ProjectStore.open(root, read_only=True) as store:
            inventory = store.inventory
            facts = derive_and_store_facts(
                root, inventory.goal.quality_target(), inventory.planned_steps()
            )
            run_ids = list(facts)  # every stored run, in the runs table's order
            if args.run_id is not None:
                if args.run_id not in run_ids:
                    raise UserError(f"no run {args.run_id!r} in {root}")
                run_ids = [args.run_id]
            from trntui.store.runs import load_runs
            from trntui.store.set_sizes import run_sizes

            sizes = run_sizes(load_runs(root), store.stated_sizes())
            details = {
                run_id: run_detail(
                    root,
                    run_id,
                    facts[run_id],
                    parameters_billion=inventory.model.parameters_billion,
                    trainable_parameters_billion=inventory.model.trainable_parameters_billion,
                    size=sizes.get(run_id),
                )
                for run_id in run_ids
            }
    except UserError as error:
        return fail(error)
    if args.json:
        print(json.dumps([detail_json(r, d) for r, d in details.items()], indent=2))
        return 0
    for run_id, detail in details.items():
        headline, *rest = telemetry_lines(
            detail.utilization, detail.compile, detail.verdict, detail.mfu
        )
        print(f"{run_id}: {headline}")
        for line in rest:
            print(line)
    return 0
