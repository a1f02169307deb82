"""``trntui import``: run logs into a project, headless.

``import DIR PATH... [--format F] [--set NAME] [--json]`` imports log files (a PATH may be a
folder: every recognised log inside it is imported; other files are skipped). Exit code 0 when
every named file was imported or already present, 1 when some failed, 2 for a project problem.
``--json`` prints ``trntui runs --json``'s document with ``"imported"``: one outcome per file.

Only the argument parser is loaded when this module is: the command starts reading the first
named log (``importers.reading.read_ahead``) and then loads Polars and the parsers, so the
read and its hash use the core that would otherwise wait for Python to import them (with the
garbage collector paused: what they load lives as long as the process; ``trntui.loading``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trntui.commands import fail, help_of, name_argument
from trntui.core.errors import UserError
from trntui.importers import FORMATS
from trntui.loading import collector_paused

if TYPE_CHECKING:
    from trntui.store.project_store import ProjectStore
    from trntui.store.runs import ImportOutcome


def register(subparsers: argparse._SubParsersAction) -> None:
    importer = subparsers.add_parser(
        "import",
        help=help_of("import"),
        description=(
            "Import training run logs (MLPerf, Megatron-LM, neuronx-distributed, Hugging Face "
            "trainer_state.json) into a project. A PATH may be a folder: every recognised log "
            "in it is imported, other files are skipped. The same file content is imported "
            "once. Exit code: 0 all imported or already present, 1 some files failed, "
            "2 project problem."
        ),
    )
    importer.add_argument("dir", help="project folder")
    importer.add_argument("paths", nargs="+", metavar="PATH", help="log file or folder")
    importer.add_argument("--format", choices=sorted(FORMATS), help="skip format detection")
    importer.add_argument(
        "--set", dest="set_name", metavar="NAME", type=name_argument, help="run set to add to"
    )
    importer.add_argument(
        "--json",
        action="store_true",
        help="print JSON: each file's outcome, and the runs and sets it touched",
    )
    importer.set_defaults(func=import_command)


def import_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    paths = [Path(p) for p in args.paths]
    _read_first_file_ahead(paths)
    with collector_paused(unless_loaded="polars"):  # the command line: Polars loads now
        from trntui.store.project_store import ProjectStore
        from trntui.store.run_import import import_paths
        from trntui.store.runs import FAILED

    try:
        with ProjectStore.open(root) as store:
            store.require_writable()
            outcomes = import_paths(
                root,
                paths,
                format=args.format,
                set_name=args.set_name,
            )
            report = _runs_report(store) if args.json else {}
    except UserError as error:
        return fail(error)
    if not outcomes:
        # An empty folder (or one holding nothing readable): an import of nothing is an error,
        # not a silent success, so a script notices the wrong path.
        return fail(f"no files to import in {', '.join(map(str, paths))}")
    if args.json:
        print(
            json.dumps(
                {"imported": [_outcome_json(o) for o in outcomes], **_of(report, outcomes)},
                indent=2,
            )
        )
    else:
        for outcome in outcomes:
            detail = outcome.error or f"{outcome.run_id} in set {outcome.set_name}"
            if outcome.outcome == "skipped":
                detail = outcome.error or "not a recognised log"
            print(f"{outcome.outcome:9} {outcome.path}: {detail}")
    return 1 if any(o.outcome == FAILED for o in outcomes) else 0


def _read_first_file_ahead(paths: list[Path]) -> None:
    """Start reading the first named path when it is a file (a folder's files, or the files
    after the first, are read in turn as before: memory holds one log at a time)."""
    from trntui.importers.reading import read_ahead

    if paths[0].is_file():  # argparse gives at least one; a FIFO is refused by the read
        read_ahead(paths[0])


def _runs_report(store: ProjectStore) -> dict[str, Any]:
    """``trntui runs --json``'s document (its module, and what it reads, load only for
    ``--json``)."""
    from trntui.commands.runs import runs_report

    return runs_report(store)


def _of(report: dict[str, Any] | None, outcomes: list[ImportOutcome]) -> dict[str, Any]:
    """``runs --json``'s document cut to what this import touched: the runs it named (added,
    refreshed or already there) and the sets they are in, as those sets are now."""
    assert report is not None
    ids = {outcome.run_id for outcome in outcomes if outcome.run_id}
    sets = {outcome.set_name for outcome in outcomes if outcome.set_name}
    return {
        **report,
        "runs": [run for run in report["runs"] if run["run_id"] in ids],
        "sets": [entry for entry in report["sets"] if entry["name"] in sets],
    }


def _outcome_json(outcome: ImportOutcome) -> dict[str, Any]:
    return {
        "path": outcome.path,
        "outcome": outcome.outcome,
        "run_id": outcome.run_id,
        "set": outcome.set_name,
        "error": outcome.error,
    }
