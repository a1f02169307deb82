"""Reading the project's TOML with messages that point at the file, the line and the key.

``tomllib`` reports syntax errors with a line and column but gives no positions for values, so
a wrong type found later is located by scanning the text for the table header and the key.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from trntui.core.errors import InputFileError

_AT_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")
_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')\s*=")


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """Parse ``text`` (the content of ``path``); a syntax error names its line and column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _AT_LINE.search(message)
        line = int(match.group(1)) if match else None
        problem = _AT_LINE.sub("", message).strip()
        if match:
            problem += f" (column {match.group(2)})"
        raise InputFileError(
            str(path), f"TOML syntax error: {problem}", line=line, expected="valid TOML"
        ) from None
    except RecursionError:
        # tomllib recurses per nested array or inline table: a hand edit (or garbage) nested
        # a few thousand deep exhausts Python's stack.
        raise InputFileError(
            str(path),
            "arrays or tables nested too deeply to read",
            expected="valid TOML as trntui writes it (nested a few levels at most)",
        ) from None


def decode_utf8(path: Path, data: bytes) -> str:
    """TOML files are UTF-8; say which line breaks that rule instead of a UnicodeDecodeError."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputFileError(
            str(path), "the file is not UTF-8 text", line=line, expected="UTF-8 encoded TOML"
        ) from None


def locate(text: str, table: str, key: str | None, index: int | None = None) -> int | None:
    """Line number (1-based) of ``key`` in ``[table]`` (or the ``index``-th ``[[table]]``).

    Falls back to the table header's line when the key is absent (e.g. a missing required key),
    and to ``None`` when the table is not in the file at all.
    """
    current: str | None = None
    seen_items = -1
    header_line: int | None = None
    in_target = False
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header and not _KEY.match(line):
            current = header.group(2).strip().strip("\"'")
            if current == table and header.group(1) == "[[":
                seen_items += 1
            in_target = current == table and (index is None or seen_items == index)
            if in_target and header_line is None:
                header_line = number
            continue
        if table == "" and current is None and key is not None:
            found = _KEY.match(line)
            if found and found.group(1).strip("\"'") == key:
                return number
        if in_target and key is not None:
            found = _KEY.match(line)
            if found and found.group(1).strip("\"'") == key:
                return number
    return header_line


def dump_toml(document: dict[str, Any]) -> str:
    """TOML text with every top-level list of tables written as ``[[name]]`` blocks.

    ``tomli_w`` writes a list of short tables as one inline array, so a file's layout would
    change with the length of its values; one block per item keeps diffs small and lets error
    messages point at a line. Items must be flat (no nested tables), as the project's are.
    """
    plain = {key: value for key, value in document.items() if not _is_table_list(value)}
    parts = [tomli_w.dumps(plain)] if plain else []
    for key, value in document.items():
        if _is_table_list(value):
            for item in value:
                if any(isinstance(v, dict) or _is_table_list(v) for v in item.values()):
                    raise ValueError(f"[[{key}]] items must be flat tables")
                parts.append(f"[[{key}]]\n{tomli_w.dumps(item)}")
    return "\n".join(parts)


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def check_schema_version(path: Path, text: str, document: dict[str, Any], version: int) -> None:
    """Refuse a file whose ``schema_version`` is missing or not ``version``, naming its line
    (line 1 when it is missing: where it goes)."""
    found = document.get("schema_version")
    if found == version and not isinstance(found, bool):
        return
    raise InputFileError(
        str(path),
        "schema_version is missing" if found is None else f"unsupported schema_version {found!r}",
        line=locate(text, "", "schema_version") or 1,
        expected=f"schema_version = {version}",
    )
