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
from collections.abc import Collection, Iterator, Sequence
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


def wrapped(text: str, indent: int = 0, hang: int = 2) -> list[str]:
    """``text`` as lines of at most 80 columns (a terminal over SSH), the first indented by
    ``indent`` and the rest by ``hang`` more; a word longer than a line is not split."""
    import textwrap

    return textwrap.wrap(
        text,
        80,
        initial_indent=" " * indent,
        subsequent_indent=" " * (indent + hang),
        break_on_hyphens=False,
        break_long_words=False,
    ) or [" " * indent]


def table_lines(
    headings: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int] = ()
) -> list[str]:
    """``headings`` over ``rows``, each column as wide as its widest cell, two spaces apart and
    two in; the columns numbered in ``right`` (figures) aligned right, the others left."""
    widths = [max(map(len, column)) for column in zip(headings, *rows, strict=True)]
    return [
        "  "
        + "  ".join(
            cell.rjust(width) if index in right else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in (headings, *rows)
    ]


_SCALARS = (str, int, float, bool, type(None))


def print_json(document: object) -> None:
    """``print(json.dumps(document, indent=2))``, faster for big documents and written piece
    by piece (``json_pieces``): the 32 MB text of a regional price list's quotes is never
    held whole."""
    for piece in json_pieces(document):
        sys.stdout.write(piece)
    sys.stdout.write("\n")


_BATCH = 1000
"""Dicts encoded in one C call (about 1 MB of text for price quotes)."""


def json_pieces(document: object, batch: int = _BATCH) -> Iterator[str]:
    """The text of ``json.dumps(document, indent=2)`` in pieces, but a float that is not
    finite is null (JSON has no NaN).

    The standard library encodes in C only without ``indent``; with it, every value goes
    through Python (about 1 s for the 30,000 quotes of a regional price list). A dict or list
    of plain values here is encoded in C with the line break and indentation as its separator
    (a list of such dicts ``batch`` dicts at a time), and only the nesting above it in Python.
    """
    return _pieces(document, 0, batch)


def _pieces(value: object, level: int, batch: int) -> Iterator[str]:
    outer, inner = "\n" + "  " * level, "\n" + "  " * (level + 1)
    if isinstance(value, dict) and value:
        if _flat_dict(value):
            yield "{" + inner + _encoded(value, "," + inner)[1:-1] + outer + "}"
            return
        for index, (key, item) in enumerate(value.items()):
            text = json.dumps(key) if isinstance(key, str) else json.dumps({key: 0})[1:-4]
            yield ("," if index else "{") + inner + text + ": "
            yield from _pieces(item, level + 1, batch)
        yield outer + "}"
        return
    if isinstance(value, list | tuple) and value:
        if all(_flat_dict(item) for item in value):
            # With plain values, "}," + separator + "{" occurs only between two dicts (a
            # string holds no raw line break), so it is re-indented.
            deep = "\n" + "  " * (level + 2)
            between = inner + "}," + inner + "{" + deep
            yield "[" + inner + "{" + deep
            for start in range(0, len(value), batch):
                flat = _encoded(value[start : start + batch], "," + deep)[2:-2]
                yield (between if start else "") + flat.replace("}," + deep + "{", between)
            yield inner + "}" + outer + "]"
            return
        if all(isinstance(item, _SCALARS) for item in value):
            yield "[" + inner + _encoded(value, "," + inner)[1:-1] + outer + "]"
            return
        for index, item in enumerate(value):
            yield ("," if index else "[") + inner
            yield from _pieces(item, level + 1, batch)
        yield outer + "]"
        return
    yield _encoded(value, ", ")


def _encoded(value: object, separator: str) -> str:
    """``value`` encoded in one C call with ``separator`` between items; a float in it that
    is not finite is null."""
    encoder = json.JSONEncoder(separators=(separator, ": "), allow_nan=False)
    try:
        return encoder.encode(value)
    except ValueError:  # a float that is not finite: JSON has no such number
        return encoder.encode(_finite(value))


def _finite(value: object) -> object:
    """``value`` with every NaN or infinite float made ``None`` (null: not known)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


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
