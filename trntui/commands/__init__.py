"""Headless subcommands of ``trntui``.

Each module here exposes ``register(subparsers)`` which adds its subcommands; every subcommand
sets ``func(args) -> int`` with ``set_defaults``. They call the same core and store as the UI.

``COMMANDS`` names each subcommand, the module that registers it and its one-line help, so that
``trntui --help``, ``--version`` and opening the app import no command module (and so neither
Polars nor the importers), and a subcommand imports only its own module.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import NamedTuple

from trntui.core.fields import FieldValueError, parse_number
from trntui.core.text import name_problem, printable


class Command(NamedTuple):
    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "import": Command("trntui.commands.import_logs", "import training run logs into a project"),
    "runs": Command("trntui.commands.runs", "list imported runs and run sets"),
    "quality": Command(
        "trntui.commands.runs", "record a run's quality result measured outside its log"
    ),
    "size": Command(
        "trntui.commands.runs", "state the system size of a run set whose logs print none"
    ),
    "price": Command("trntui.commands.price", "look up, add and list price quotes"),
    "estimate": Command(
        "trntui.commands.estimate", "print the cost estimate of each training target"
    ),
    "report": Command("trntui.commands.estimate", "write the estimate report for budget approval"),
    "scenario": Command(
        "trntui.commands.scenario", "save, list, show and compare scenario snapshots"
    ),
    "scale": Command(
        "trntui.commands.scale", "a target's cost and wall clock at each instance count"
    ),
    "family": Command(
        "trntui.commands.scale",
        "put run sets in a named scaling family (or back to automatic grouping)",
    ),
    "telemetry": Command(
        "trntui.commands.telemetry", "attach utilization captures or compiler logs to a run"
    ),
    "verdict": Command("trntui.commands.telemetry", "utilization and what limits each run"),
    "map": Command(
        "trntui.commands.mapping", "import a CSV/JSONL run log through a column mapping"
    ),
}
"""Every subcommand, in the order ``trntui --help`` lists them."""


def help_of(name: str) -> str:
    """The one-line help of subcommand ``name`` (each module registers its parser with it)."""
    return COMMANDS[name].help


USAGE_ERROR = 2
"""Exit status for a refused command (bad input or arguments), as argparse uses."""


_JSON_ERRORS = [False]
"""Whether the command was asked for JSON (``--json``): its errors are JSON too."""


def json_errors(wanted: bool) -> None:
    """Say whether this command's errors are to be written as JSON (``main`` sets it)."""
    _JSON_ERRORS[0] = wanted


def wants_json() -> bool:
    return _JSON_ERRORS[0]


def fail(message: object, status: int = USAGE_ERROR) -> int:
    """Print ``trntui: error: <message>`` to stderr (the one error format); return ``status``.

    A command asked for ``--json`` also writes ``{"error": <message>}`` to stdout, so a
    script reading its output always reads JSON, and finds the error there."""
    if _JSON_ERRORS[0]:
        print(json.dumps({"error": str(message)}))
    print(f"trntui: error: {printable(message)}", file=sys.stderr)
    return status


def refuse_unless_forced(doubts: list[str], force: bool) -> None:
    """Stop before storing a price-like number that looks like a mistake (``doubts``: why each
    one does, by ``core.quotes``' plausibility band), unless ``--force`` says it is meant: the
    same for every command that stores one."""
    if not doubts or force:
        return
    more = f" (and {len(doubts) - 1} more)" if len(doubts) > 1 else ""
    from trntui.core.errors import UserError

    raise UserError(
        f"not stored: {doubts[0]}{more}; check the figure, or pass --force to store it anyway"
    )


_SCALARS = (str, int, float, bool, type(None))


def json_text(document: object) -> str:
    """``json.dumps(document, indent=2)``, character for character, faster for big documents.

    The standard library encodes in C only without ``indent``; with it, every value goes
    through Python (about 1 s for the 30,000 quotes of a regional price list). A dict or list
    of plain values here is encoded in C with the line break and indentation as its separator,
    and only the nesting above it in Python.
    """
    try:
        return _json_text(document, 0)
    except ValueError:  # a float that is not finite: JSON has no such number
        return _json_text(_finite(document), 0)


def _finite(value: object) -> object:
    """``value`` with every NaN or infinite float made ``None`` (null: not known)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _json_text(value: object, level: int) -> str:
    outer, inner = "\n" + "  " * level, "\n" + "  " * (level + 1)
    if isinstance(value, dict) and value:
        if _flat_dict(value):
            flat = _encoder("," + inner).encode(value)
            return "{" + inner + flat[1:-1] + outer + "}"
        items = (
            f"{json.dumps(key) if isinstance(key, str) else json.dumps({key: 0})[1:-4]}: "
            f"{_json_text(item, level + 1)}"
            for key, item in value.items()
        )
        return "{" + inner + ("," + inner).join(items) + outer + "}"
    if isinstance(value, list | tuple) and value:
        if all(_flat_dict(item) for item in value):
            # One C call for the whole list: with plain values, "}," + separator + "{" occurs
            # only between two dicts (a string holds no raw line break), so it is re-indented.
            deep = "\n" + "  " * (level + 2)
            flat = _encoder("," + deep).encode(value)[2:-2]
            between = inner + "}," + inner + "{" + deep
            body = flat.replace("}," + deep + "{", between)
            return "[" + inner + "{" + deep + body + inner + "}" + outer + "]"
        if all(isinstance(item, _SCALARS) for item in value):
            flat = _encoder("," + inner).encode(value)
            return "[" + inner + flat[1:-1] + outer + "]"
        items = (_json_text(item, level + 1) for item in value)
        return "[" + inner + ("," + inner).join(items) + outer + "]"
    return json.dumps(value, indent=2, allow_nan=False)


def _encoder(separator: str) -> json.JSONEncoder:
    return json.JSONEncoder(separators=(separator, ": "), allow_nan=False)


def _flat_dict(value: object) -> bool:
    """A non-empty dict of plain values under text keys."""
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(v, _SCALARS) and isinstance(k, str) for k, v in value.items())
    )


def finite_float(text: str) -> float:
    """An argument type: a number that is not nan or infinite (a quality value, an offset)."""
    try:
        return parse_number(text)
    except FieldValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def non_negative_float(text: str) -> float:
    """An argument type: a finite number, 0 or more (a duration, a price)."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must not be negative")
    return value


def name_argument(text: str) -> str:
    """An argument type: a name a person gives (a run set, a family), by ``name_problem``'s
    rule; refused here, before a log is read, not after."""
    problem = name_problem(text)
    if problem is not None:
        shown = repr(text).encode("ascii", "backslashreplace").decode("ascii")
        raise argparse.ArgumentTypeError(f"{shown}: {problem}")
    return text
