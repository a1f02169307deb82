"""``trntui map``: import any CSV/JSONL run log through a column mapping, headless.

``map DIR PATH [--time COL --time-unit U --step COL --samples COL --tokens COL --per-row
--loss COL --metric COL --lower-is-better] [--preview] [--set NAME] [--json]``

The mapping starts from the one remembered for files with the same columns (else a suggestion
from the column names); options override it. ``--preview`` prints the mapping, its problems and
the first rows as they would be imported, and stores nothing. Otherwise the file is imported as
a run and the mapping remembered for the next file of the same shape. Exit code 0 imported (or
previewed without problems), 1 mapping or file problem, 2 project problem.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from trntui.commands import fail, help_of, name_argument
from trntui.core.errors import InputFileError, UserError
from trntui.importers.mapped import (
    PER_ROW,
    TIME_UNITS,
    ColumnMapping,
    mapped_run,
    preview,
    read_table,
    suggest_mapping,
)
from trntui.store.mappings import remember_mapping, remembered_mapping
from trntui.store.runs import add_run, default_set_name

_ROLE_OPTIONS = ("time", "step", "samples", "tokens", "loss", "metric")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "map",
        help=help_of("map"),
        description=(
            "Import a CSV or JSONL run log (PyTorch Lightning metrics.csv, tracker exports) by "
            "saying which column is the time, step, samples, tokens, loss and metric. The "
            "mapping is remembered per project for files with the same columns."
        ),
    )
    parser.add_argument("dir", help="project folder")
    parser.add_argument("path", help="CSV or JSONL file")
    for role in _ROLE_OPTIONS:
        parser.add_argument(f"--{role}", metavar="COLUMN", help=f"column holding the {role}")
    parser.add_argument("--time-unit", choices=TIME_UNITS, help="unit of the time column")
    parser.add_argument(
        "--per-row", action="store_true", help="samples/tokens are per row, not running totals"
    )
    parser.add_argument(
        "--lower-is-better", action="store_true", help="the metric improves downwards"
    )
    parser.add_argument("--preview", action="store_true", help="show, store nothing")
    parser.add_argument(
        "--set", dest="set_name", metavar="NAME", type=name_argument, help="run set to add to"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=map_command)


def _mapping(args: argparse.Namespace, base: ColumnMapping) -> ColumnMapping:
    changes = {role: getattr(args, role) for role in _ROLE_OPTIONS if getattr(args, role)}
    if args.time_unit:
        changes["time_unit"] = args.time_unit
    if args.per_row:
        changes["counts"] = PER_ROW
    if args.lower_is_better:
        changes["metric_higher_is_better"] = False
    elif "metric" in changes:
        changes.setdefault("metric_higher_is_better", True)
    return dataclasses.replace(base, **changes)


def map_command(args: argparse.Namespace) -> int:
    from trntui.store.project import Project

    root = Path(args.dir)
    try:
        with Project.open(root, read_only=args.preview) as project:
            table = read_table(Path(args.path))
            remembered = remembered_mapping(root, table.columns)
            mapping = _mapping(args, remembered or suggest_mapping(table.columns))
            shown = preview(table, mapping)
            outcome = None
            if not args.preview and not shown.problems:
                project.require_writable()
                run = mapped_run(table, mapping)
                outcome = add_run(root, run, args.set_name or default_set_name(Path(args.path)))
                remember_mapping(root, table.columns, mapping)
    except InputFileError as error:
        return fail(error, status=1)
    except UserError as error:
        return fail(error)
    report = {
        "columns": list(shown.columns),
        "shape": shown.shape,
        "mapping": mapping.to_dict(),
        "remembered": remembered is not None,
        "problems": list(shown.problems),
        "rows": shown.rows,
        "preview": shown.timeline_head.to_dicts() if shown.timeline_head is not None else None,
        "imported": dataclasses.asdict(outcome) if outcome is not None else None,
    }
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        origin = "remembered" if remembered else "suggested"
        print(f"mapping ({origin}, options applied): {json.dumps(mapping.to_dict())}")
        for problem in shown.problems:
            print(f"problem: {problem}")
        if shown.timeline_head is not None:
            print(shown.timeline_head)
        if outcome is not None:
            print(f"{outcome.outcome} {outcome.path}: {outcome.run_id} in set {outcome.set_name}")
    return 1 if shown.problems else 0
