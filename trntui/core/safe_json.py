"""The one way trntui parses JSON that came from a file: bounded in nesting depth and size.

Python's parser recurses once per level of nesting, so a hostile or corrupt file of a few
kilobytes (``[[[[...``) ends in ``RecursionError``; a value nested just below the parser's
limit parses, and then breaks whatever walks it next (``json.dumps``, ``dataclasses.asdict``,
Polars). Every importer's JSON (``trainer_state.json``, ``:::MLLOG`` and ``:::SYSJSON`` lines,
``systems/<system>.json``, ``scaling.json``, JSON lines) goes through ``parse_json``, which
refuses anything nested deeper than ``MAX_JSON_DEPTH`` or longer than ``MAX_JSON_CHARS`` with
an ``InputFileError`` (file, line, what was expected) before the parser sees it.

No disk access here: callers read the file (``importers/_base.py`` bounds line lengths).
"""

from __future__ import annotations

import json
import re
from typing import Any

from trntui.core.errors import InputFileError

MAX_JSON_DEPTH = 64
"""Real files nest a handful of levels (trainer_state.json 4, a neuron-monitor report 8)."""
MAX_JSON_CHARS = 256 << 20
"""A trainer_state.json of a very long run is tens of MB; beyond this is not a training log."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DECODER = json.JSONDecoder()


def json_depth_exceeds(text: str, limit: int | None = None) -> bool:
    """True when ``text`` nests arrays/objects deeper than ``limit`` (default
    ``MAX_JSON_DEPTH``). Without recursion, and at C speed: strings are cut out, the brackets
    kept, and innermost pairs removed once per level; JSON lines can be checked whole."""
    limit = MAX_JSON_DEPTH if limit is None else limit
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        shorter = brackets.replace("[]", "").replace("{}", "")
        if shorter == brackets:
            return False
        brackets = shorter
    return "[]" in brackets or "{}" in brackets


def check_json_bounds(
    text: str, *, path: str, line: int | None = None, expected: str | None = None
) -> None:
    """Raise ``InputFileError`` when ``text`` is longer or nested deeper than JSON may be."""
    if len(text) > MAX_JSON_CHARS:
        raise InputFileError(
            path,
            f"JSON text of {len(text):,} characters is larger than the {MAX_JSON_CHARS:,} allowed",
            line=line,
            expected=expected,
        )
    if json_depth_exceeds(text):
        raise InputFileError(
            path,
            f"JSON nested more than {MAX_JSON_DEPTH} levels deep",
            line=line,
            expected=expected,
        )


def parse_json(
    text: str,
    *,
    path: str,
    line: int | None = None,
    expected: str | None = None,
    prefix: bool = False,
    what: str | None = None,
) -> Any:
    """The JSON value in ``text`` (``prefix``: the value at its start, text after it ignored).

    Malformed, too deep or too large JSON raises ``InputFileError``; ``line`` is the line of
    ``text`` in its file (a JSON line), else the parser's own line number is used; ``what``
    names the text in messages (``the MLLOG record``).
    """
    check_json_bounds(text, path=path, line=line or 1, expected=expected)
    try:
        if prefix:
            start = len(text) - len(text.lstrip())
            return _DECODER.raw_decode(text, start)[0]
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputFileError(
            path,
            f"{what + ' is ' if what else ''}not valid JSON ({error.msg})",
            line=line if line is not None else error.lineno,
            expected=expected,
        ) from None
    except RecursionError:
        # Unbalanced brackets (``[[[[`` with no end) still recurse in the parser.
        raise InputFileError(
            path,
            f"JSON nested more than {MAX_JSON_DEPTH} levels deep",
            line=line or 1,
            expected=expected,
        ) from None
