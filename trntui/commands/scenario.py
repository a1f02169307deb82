"""``trntui scenario``: named snapshots of an estimate, headless.

``scenario save DIR NAME [--set [TARGET:]INPUT=VALUE]... --why TEXT [--who NAME] [--note TEXT]
[--gpu-target NAME] [--force]`` snapshots the project with the working scenario's overrides and
GPU target compared (``working_scenario.toml``, as the app saves what is in force) and those
given, each ``--set`` replacing the working one of the same input and target (an override of a
price outside the plausibility band of ``price add``/``price rate`` only with ``--force``);
``scenario list DIR``, ``scenario show DIR NAME``
(``estimate --scenario NAME``) and ``scenario diff DIR A [B]`` (B omitted: the project as it is
now with its working scenario, as the app's bar shows it, not A's overrides) do from the shell
what the Scenarios screen does: every override and input that differs, then the cost terms and
totals. Each line that uses the working scenario says so.

Exit codes: 0 done, 2 a problem the user can fix (bad folder, bad override, unknown scenario).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trntui.commands import help_of, refuse_unless_forced, wrapped
from trntui.commands.estimate import (
    compared_gpu,
    estimate_command,
    estimate_with_working,
    project_context,
    user_errors,
    working_note,
)
from trntui.core.errors import UserError
from trntui.core.estimate import (
    INPUT_SPECS,
    InvalidInputError,
    Override,
    implausible_overrides,
    prepare,
)
from trntui.core.format import UNKNOWN, number, plural, usd
from trntui.core.report_document import TERM_LABELS
from trntui.store import scenarios  # lazy: a name loads its module when first used

if TYPE_CHECKING:
    from trntui.store.scenarios import DiffRow


def register(subparsers: argparse._SubParsersAction) -> None:
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
        "--gpu-target",
        metavar="NAME",
        help="the GPU target Trainium3 is compared with (default: the working scenario's "
        "choice, as the app compares)",
    )
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


@user_errors
def scenario_save_command(args: argparse.Namespace) -> int:
    from trntui.store.project_store import ProjectStore
    from trntui.store.working_scenario import read_working_scenario

    if args.overrides and not args.why.strip():
        raise UserError("an override is an assumption: say why with --why")
    who = args.who or scenarios.current_user()
    given = [parse_override(text, who, args.why) for text in args.overrides]
    root = Path(args.dir)
    # The working scenario first (as the app saves what is in force), each --set replacing
    # the override of the same input and target.
    replaced = {(o.input, o.target) for o in given}
    working = read_working_scenario(root)
    overrides = [o for o in working.overrides if (o.input, o.target) not in replaced] + given
    with ProjectStore.open(root) as store:
        store.require_writable()
        if scenarios.scenario_path(root, args.name).exists() and not args.replace:
            raise UserError(
                f"a scenario named {args.name!r} is already saved; nothing changed "
                "(choose another name, or --replace it)"
            )
        gpu_target = compared_gpu(args, root, store.inventory, None)  # before anything is derived
        context = store.derive_and_store_context()
        doubts = implausible_overrides(prepare(context), given, context.inventory)
        refuse_unless_forced(doubts, args.force)
        scenario = scenarios.save_scenario(
            root, args.name, context, overrides, note=args.note, gpu_target=gpu_target
        )
    print(working_note(working.overrides, working.gpu_target))
    compared = f"; Trainium3 compared with {gpu_target!r}" if gpu_target else ""
    print(f"Saved scenario {scenario.name!r} ({plural(len(overrides), 'override')}{compared}):")
    for name, total in scenario.saved_totals.items():
        print(f"  {name}: {usd(total)}")
    return 0


@user_errors
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
        # Name, time and note on the first line; the totals by target under it: 80 columns.
        when = f"{info.saved_at:%Y-%m-%d %H:%M}" if info.saved_at else f"{UNKNOWN:16}"
        totals = ", ".join(f"{name} {usd(total)}" for name, total in info.totals.items())
        if info.saved_at is None:  # unreadable: the file and line whole, for a copy or a grep
            print(f"{info.name:20} {when}\n    {info.note}")
            continue
        print("\n".join(wrapped(f"{info.name:20} {when}  {info.note}".rstrip(), hang=4)))
        if totals:
            print("\n".join(wrapped(totals, indent=4)))
    return 0


@user_errors
def scenario_show_command(args: argparse.Namespace) -> int:
    args.scenario = args.name
    return estimate_command(args)


@user_errors
def scenario_diff_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    a = scenarios.load_scenario(root, args.a)
    if args.b is None:
        # The project as it is now, as the app's bar shows it: with the working scenario's
        # overrides, not the snapshot's (those are a difference too, listed first).
        from trntui.store.working_scenario import read_working_scenario

        working = read_working_scenario(root)
        b_name = "project now" + (" (working scenario)" if working.overrides else "")
        b_estimate = estimate_with_working(project_context(root), working.overrides)
        b_compared = working.gpu_target
        if not args.json:
            print(working_note(working.overrides, working.gpu_target))
    else:
        b_name = args.b
        b = scenarios.load_scenario(root, args.b)
        b_estimate, b_compared = b.estimate(), b.gpu_target
    rows = scenarios.diff_estimates(a.estimate(), b_estimate)
    a_gpu = scenarios.compared_target(a.estimate(), a.gpu_target)
    b_gpu = scenarios.compared_target(b_estimate, b_compared)
    compared = scenarios.comparison_change(a_gpu, b_gpu)
    if args.json:
        document = {
            "a": a.name,
            "b": b_name,
            "gpu_target": {"a": a_gpu, "b": b_gpu},
            "changes": [_row_json(r) for r in rows],
        }
        print(json.dumps(document, indent=2))
        return 0
    if compared:
        print(compared)
    if not rows and not compared:
        print(f"No difference between {a.name!r} and {b_name!r}.")
    for row in rows:
        change = ""
        if row.delta == 0 and row.a_note != row.b_note:
            change = " (the same value, from another source)"
        elif row.delta is not None:
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
