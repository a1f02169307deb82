"""``trntui runs``, ``quality`` and ``size``: the imported runs, headless.

``runs DIR [--json]`` lists the imported runs and their sets. JSON: ``{"runs": [...], "sets":
[...]}`` (``import --json``, in ``commands/import_logs.py``, prints this document too, with
``"imported"``: one outcome per file).

What only one subcommand uses (the estimate's observations, back-tests, stated sizes) is
imported where it is used.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from trntui.commands import (
    fail,
    finite_float,
    help_of,
    non_negative_float,
    table_lines,
    wrapped,
)
from trntui.core.errors import UserError
from trntui.core.format import UNKNOWN, fit_middle, number, short_unit
from trntui.core.run_facts import SUCCEEDED, RecordedQuality
from trntui.core.system_size import set_size
from trntui.core.timeline import SystemSize
from trntui.store.project import Project
from trntui.store.project_store import ProjectStore
from trntui.store.runs import RUNS_SCHEMA, load_runs, run_sets, stale_runs

if TYPE_CHECKING:
    from trntui.core.backtest import Backtest

STALE_RUNS_HINT = (
    "note: {n} run(s) were read by an older trntui: import their logs again (the same files) "
    "to read their system size, job clock and protocol"
)

_RUN_FIELDS = (
    "run_id",
    "set",
    "format",
    "source",
    "status",
    "init_s",
    "run_s",
    "launch_to_result_s",
    "steady_throughput",
    "throughput_unit",
    "restarts",
    "redone_steps",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    lister = subparsers.add_parser(
        "runs",
        help=help_of("runs"),
        description="List the imported runs, their facts and their run sets.",
    )
    lister.add_argument("dir", help="project folder")
    lister.add_argument("--json", action="store_true", help="print JSON")
    lister.set_defaults(func=runs_command)

    quality = subparsers.add_parser(
        "quality",
        help=help_of("quality"),
        description=(
            "Record the quality result of a run measured outside its log (for example an "
            "evaluation of its final checkpoint), with its source: for a log that holds no "
            "evaluation, or over one whose evaluation is wrong (the run's notes say what the "
            "log said). It decides whether the run counts as a verified result. --remove "
            "forgets it."
        ),
    )
    quality.add_argument("dir", help="project folder")
    quality.add_argument("run_id", help="run id as `trntui runs` lists it")
    quality.add_argument("value", nargs="?", type=finite_float, help="measured value of the metric")
    quality.add_argument("--source", help="where the result comes from (required to record)")
    quality.add_argument(
        "--evaluation-minutes",
        type=non_negative_float,
        help="how long the evaluation took after the run",
    )
    quality.add_argument("--remove", action="store_true", help="forget the recorded result")
    quality.set_defaults(func=quality_command)

    size = subparsers.add_parser(
        "size",
        help=help_of("size"),
        description=(
            "State the system a run set was measured on (nodes x accelerators per node) when "
            "its logs print no size. It is an assumption, shown with who stated it and on what "
            "basis; it fills in only runs whose logs state no size. --remove forgets it."
        ),
    )
    size.add_argument("dir", help="project folder")
    size.add_argument("set_name", metavar="SET", help="run set name as `trntui runs` lists it")
    size.add_argument("nodes", nargs="?", type=int, help="nodes (instances)")
    size.add_argument("per_node", nargs="?", type=int, help="accelerators per node")
    size.add_argument("--accelerator", help="accelerator model, e.g. 'Trainium3'")
    size.add_argument("--source", help="what it is based on (required to state a size)")
    size.add_argument("--who", help="who states it (default: your login name)")
    size.add_argument("--remove", action="store_true", help="forget the stated size")
    size.set_defaults(func=size_command)


def quality_command(args: argparse.Namespace) -> int:
    from trntui.store.quality import record_quality

    root = Path(args.dir)
    if not args.remove and (args.value is None or not (args.source or "").strip()):
        return fail("give the measured VALUE and --source (or --remove)")
    try:
        with Project.open(root) as project:
            project.require_writable()
            if args.run_id not in set(load_runs(root)["run_id"].to_list()):
                raise UserError(f"no run {args.run_id!r} in {root} (see `trntui runs {root}`)")
            result = None
            if not args.remove:
                minutes = args.evaluation_minutes
                result = RecordedQuality(
                    args.value, args.source.strip(), None if minutes is None else minutes * 60
                )
            record_quality(root, args.run_id, result)
    except UserError as error:
        return fail(error)
    print(f"{'removed' if args.remove else 'recorded'} quality result of run {args.run_id}")
    return 0


def size_command(args: argparse.Namespace) -> int:
    from trntui.store.scenarios import current_user
    from trntui.store.set_sizes import state_size

    root = Path(args.dir)
    if not args.remove and (
        args.nodes is None or args.per_node is None or not (args.source or "").strip()
    ):
        return fail("give NODES, PER_NODE and --source (or --remove)")
    try:
        with Project.open(root) as project:
            project.require_writable()
            stated = None
            if not args.remove:
                stated = SystemSize(
                    args.nodes,
                    args.per_node,
                    (args.accelerator or "").strip() or None,
                    args.source.strip(),
                    stated_by=(args.who or "").strip() or current_user(),
                )
            state_size(root, args.set_name, stated)
    except UserError as error:
        return fail(error)
    if stated is None:
        print(f"forgot the stated size of run set {args.set_name}")
    else:
        print(f"run set {args.set_name}: {stated.text()}, stated by {stated.stated_by}")
    return 0


def runs_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    try:
        with ProjectStore.open(root, read_only=True) as store:
            report = runs_report(store)
    except UserError as error:
        return fail(error)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for line in runs_text(report):
        print(line)
    return 0


def runs_text(report: dict[str, Any]) -> list[str]:
    """``trntui runs`` as text, in 80 columns: each run set's line (its runs, the MLPerf
    score, the system, the back-test), then a table of its runs under one header, the
    throughput in the set's unit (named in the header; a run in another unit says its own),
    the log's file name cut in the middle to the room the other columns leave (the JSON has
    its path). Runs read by an older trntui, and why the facts were not derived, come first."""
    lines: list[str] = []
    if report["stale_runs"]:
        lines.append(STALE_RUNS_HINT.format(n=report["stale_runs"]))
    if report["facts_note"]:
        lines.append(report["facts_note"])
    by_set: dict[str, list[dict[str, Any]]] = {}
    for run in report["runs"]:
        by_set.setdefault(run["set"], []).append(run)
    for run_set in report["sets"]:
        runs = by_set.get(run_set["name"], [])
        if lines:
            lines.append("")
        lines += _set_lines(run_set)
        units = [run["throughput_unit"] for run in runs if run["throughput_unit"]]
        unit = max(set(units), key=units.count) if units else None
        headings = ("run", "log", "format", "status", "run min", unit or "steady", "rst")
        rows = [
            [
                run["run_id"],
                Path(str(run["source"])).name,
                run["format"],
                run["outcome"],
                _minutes(run["run_s"]),
                _speed(run, unit),
                str(run["restarts"]),
            ]
            for run in runs
        ]
        # Two columns in, two between: the log's name gets what the others leave of 80.
        others = sum(max(len(row[i]) for row in [headings, *rows]) for i in (0, 2, 3, 4, 5, 6))
        room = max(8, 80 - 2 - 2 * (len(headings) - 1) - others)
        for row in rows:
            row[1] = fit_middle(row[1], room)
        table = table_lines(headings, rows, right={4, 5, 6})
        lines.append(table[0])
        for run, line in zip(runs, table[1:], strict=True):
            lines.append(line)
            if run["suspect"]:
                lines += wrapped(f"suspect, not counted: {'; '.join(run['suspect'])}", 4)
    return lines


def _speed(run: dict[str, Any], unit: str | None) -> str:
    """A run's steady throughput; with its short unit when it is not the set's (``unit``)."""
    throughput = run["steady_throughput"]
    if throughput is None:
        return UNKNOWN
    if run["throughput_unit"] != unit:
        return f"{number(throughput)} {short_unit(run['throughput_unit'])}"
    return number(throughput)


def _set_lines(run_set: dict[str, Any]) -> list[str]:
    """A run set's own lines: what its runs came to, its system, its back-test."""
    lines = wrapped(
        f"set {run_set['name']}: {run_set['succeeded']}/{run_set['runs']} succeeded, "
        f"{run_set['counted']} count as completed work",
        0,
    )
    score = run_set.get("mlperf_score_text")
    if score:
        lines += wrapped(f"MLPerf score {score}", 4)
    size = "mixed sizes" if run_set["mixed_sizes"] else _size_text(run_set)
    lines += wrapped(f"system: {size}", 4)
    check = run_set["backtest"]
    if check is not None:
        flag = "  FLAGGED: " + check["cause"] if check["flagged"] else ""
        lines += wrapped(
            f"back-test: model {check['model_s'] / 60:,.1f} min vs measured "
            f"{check['measured_s'] / 60:,.1f} min ({check['gap']:+.1%}){flag}",
            4,
        )
    return lines


def runs_report(store: ProjectStore) -> dict[str, Any]:
    """The JSON document of ``trntui runs --json``.

    Status, durations and throughput are derived with the project's goal (quality target and
    planned steps), exactly as the Runs screen shows them.
    """
    from trntui.core.backtest import backtest
    from trntui.store.set_sizes import run_sizes

    root = store.root
    observations, derived = store.derive_and_store_observations()  # one derivation for both
    facts = {run.run_id: run.facts for run in derived}
    stored = load_runs(root)
    runs = stored
    if facts:
        current = pl.DataFrame(
            [
                {
                    "run_id": run_id,
                    "status": f.status,
                    "init_s": f.init_s,
                    "run_s": f.run_s,
                    "launch_to_result_s": f.launch_to_result_s,
                    "steady_throughput": f.steady_throughput,
                    "throughput_unit": f.throughput_unit,
                    "restarts": f.restarts,
                    "redone_steps": f.redone_steps,
                }
                for run_id, f in facts.items()
            ],
            schema={name: RUNS_SCHEMA[name] for name in _DERIVED_FIELDS},
        )
        runs = runs.drop(_DERIVED_FIELDS[1:]).join(current, on="run_id", how="left")
    metadata = {run.run_id: run.metadata for run in derived}
    sized = run_sizes(stored, store.stated_sizes())
    runs = runs.rename({"set_name": "set"}).select(_RUN_FIELDS)
    succeeded: dict[str, int] = {}
    counted: dict[str, int] = {}
    sizes: dict[str, list[SystemSize | None]] = {}
    rows = []
    for row in runs.iter_rows(named=True):
        meta = metadata[row["run_id"]]
        system = sized[row["run_id"]]
        row.update(_size_json(system))
        clock = meta.job_clock
        row["job_clock_s"] = clock.wrapper_s if clock is not None else None
        row["billed_attempt_s"] = clock.span_s if clock is not None else None
        row["before_first_line_s"] = clock.before_first_line_s if clock is not None else None
        row["job_clocks"] = (  # every clock printed; the billed attempt spans the longest
            [{"lines": what, "seconds": seconds} for what, seconds in clock.clocks]
            if clock is not None
            else []
        )
        row["protocol"] = dict(meta.protocol)
        sizes.setdefault(row["set"], []).append(system)
        run_facts = facts.get(row["run_id"])
        # Counts as completed work: finished, and the quality target not missed.
        row["counts"] = run_facts.counts_as_completed if run_facts is not None else None
        row["outcome"] = run_facts.outcome if run_facts is not None else row["status"]
        row["suspect"] = (
            [
                note.removeprefix("suspect: ")
                for note in run_facts.notes
                if note.startswith("suspect: ")
            ]
            if run_facts is not None
            else []
        )
        succeeded[row["set"]] = succeeded.get(row["set"], 0) + (row["status"] == SUCCEEDED)
        counted[row["set"]] = counted.get(row["set"], 0) + bool(row["counts"])
        rows.append(row)
    sets = []
    for info in run_sets(root, stored):
        entry: dict[str, Any] = {
            "name": info.name,
            "runs": info.runs,
            "succeeded": succeeded.get(info.name, 0),
            "counted": counted.get(info.name, 0),
        }
        if info.mlperf_score is not None:
            score = info.mlperf_score
            entry["mlperf_score_minutes"] = score.minutes
            entry["mlperf_runs_required"] = score.required
            entry["mlperf_score_complete"] = score.complete
            entry["mlperf_score_text"] = score.text()
        entry.update(_set_size_json(sizes.get(info.name, [])))
        entry["backtest"] = _backtest_json(backtest(observations, info.name))
        sets.append(entry)
    stale = stale_runs(stored)
    return {
        "runs": [_clean(row) for row in rows],
        "sets": sets,
        "stale_runs": stale,
        "facts_note": derived.note,
    }


def _backtest_json(result: Backtest | None) -> dict[str, Any] | None:
    """Model vs measured time to the result per counted run (``core.backtest``)."""
    if result is None:
        return None
    return {
        "model_s": result.model_s / len(result.runs),
        "measured_s": result.measured_s / len(result.runs),
        "gap": result.gap,
        "flagged": result.flagged,
        "from_launch": result.from_launch,
        "cause": result.cause if result.flagged else None,
        "runs": [
            {"run_id": r.run_id, "model_s": r.model_s, "measured_s": r.measured_s, "gap": r.gap}
            for r in result.runs
        ],
    }


_DERIVED_FIELDS = (
    "run_id",
    "status",
    "init_s",
    "run_s",
    "launch_to_result_s",
    "steady_throughput",
    "throughput_unit",
    "restarts",
    "redone_steps",
)


def _size_json(size: SystemSize | None) -> dict[str, Any]:
    return {
        "nodes": size.nodes if size else None,
        "accelerators_per_node": size.accelerators_per_node if size else None,
        "accelerator": size.accelerator if size else None,
        "accelerators": size.accelerators if size else None,
        "size_source": size.source if size else None,
        "size_stated_by": size.stated_by if size else None,
        "size_conflicts": list(size.conflicts) if size else [],
        "size_overrides": size.overrides if size else None,
    }


def _set_size_json(sizes: list[SystemSize | None]) -> dict[str, Any]:
    """A set's size when every run states the same one; a set that mixes sizes is flagged,
    never averaged."""
    size = set_size(sizes)
    entry = _size_json(size.size)
    entry["mixed_sizes"] = size.mixed
    return entry


def _size_text(entry: dict[str, Any]) -> str:
    if entry["accelerators"] is None:
        return "unknown (state it with `trntui size`)"
    size = SystemSize(
        entry["nodes"], entry["accelerators_per_node"], entry["accelerator"], "", None
    ).text()
    if entry["nodes"] is None:
        size = f"{entry['accelerators']} accelerators in all"
    stated = f", stated by {entry['size_stated_by']}" if entry["size_stated_by"] else ""
    said = f"; logs said {entry['size_overrides']}" if entry["size_overrides"] else ""
    text = f"{size} ({entry['size_source']}{stated}{said})"
    for conflict in entry["size_conflicts"]:
        text += f"\n    the logs disagree: {conflict} (state the size with `trntui size`)"
    return text


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    return {
        key: None if isinstance(value, float) and not math.isfinite(value) else value
        for key, value in row.items()
    }


def _minutes(seconds: float | None) -> str:
    """A run's time in minutes (the column's header says so); unknown when not known."""
    return f"{seconds / 60:.2f}" if seconds is not None else UNKNOWN
