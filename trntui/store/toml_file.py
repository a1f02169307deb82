"""The project's TOML: read with messages that point at the file, the line and the key, and
written again without losing what a person wrote by hand.

``tomllib`` reports syntax errors with a line and column but gives no positions for values, so
a wrong type found later is located by scanning the text for the table header and the key.

A file people edit by hand (the README invites it) keeps their comments, blank lines and
layout when trntui saves it: ``updated_toml`` changes the previous text only where a value
changed, through ``tomlkit`` (the style-preserving TOML library Poetry maintains and writes
``pyproject.toml`` with; ``tomllib`` and ``tomli_w`` keep no comments). An item of an array of
tables (``[[targets]]``) keeps its comments when it moves, matched by its identity keys. What
comes out is read back and compared with what was meant; if they differ, the file is written
fresh, as it is when there is no file yet.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli_w

from trntui.core.errors import InputFileError

if TYPE_CHECKING:
    from tomlkit.container import Container
    from tomlkit.items import AoT, Table

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


def updated_toml(
    previous: str | None,
    document: dict[str, Any],
    fresh: str,
    *,
    identity: dict[str, tuple[str, ...]] | None = None,
) -> str:
    """``document`` as TOML text: ``previous`` (the file as it is) changed where its values
    differ, comments and layout kept; without a previous text (or one that does not parse),
    ``fresh`` (the file written anew). ``identity`` names, per array of tables, the keys that
    tell its items apart (a target's ``name``): an item that moved keeps its comments."""
    if previous is None:
        return fresh
    # Loaded by the first save, not with this module: reading a project never needs it, and
    # it takes about a third as long to import as Textual (the app's first frame waits).
    import tomlkit

    try:
        kept = tomlkit.parse(previous)
        _merge(kept, document, identity or {})
        text = tomlkit.dumps(kept).rstrip("\n") + "\n"
        same = tomllib.loads(text) == tomllib.loads(fresh)
    except (tomlkit.exceptions.TOMLKitError, tomllib.TOMLDecodeError, ValueError, TypeError):
        return fresh
    return text if same else fresh


def previous_text(path: Path) -> str | None:
    """The text of the file a save replaces, for ``updated_toml``; None when there is no
    regular file there or it is not UTF-8 (then the file is written anew)."""
    try:
        return (
            path.read_bytes().decode("utf-8") if path.is_file() and not path.is_symlink() else None
        )
    except (OSError, UnicodeDecodeError):
        return None


def _merge(
    kept: Container | Table, new: dict[str, Any], identity: dict[str, tuple[str, ...]]
) -> None:
    from tomlkit.container import Container
    from tomlkit.items import AoT, Table

    for key in [key for key in kept if key not in new]:
        del kept[key]
    for key, value in new.items():
        old = kept.get(key)
        if old is not None and _plain(old) == value:
            continue  # unchanged: its text stays as it is
        if isinstance(value, dict) and isinstance(old, Table | Container):
            _merge(old, value, identity)
        elif _is_table_list(value) and isinstance(old, AoT):
            kept[key] = _merged_items(old, value, identity.get(key, ()), identity)
        else:
            kept[key] = value


def _merged_items(
    old: AoT, new: list[dict[str, Any]], keys: tuple[str, ...], identity: dict[str, Any]
) -> AoT:
    """The items of ``new`` as tables: the one of ``old`` it is (unchanged, or with the same
    ``keys``; without keys, the one at the same position), updated; else a new table. Matches
    are found for every item before any table is taken by position, so a new item never takes
    the table (and the comments) of one that only moved."""
    import tomlkit
    from tomlkit.items import AoT

    unused = list(old)

    def take(match: Any) -> Table | None:
        found = next((table for table in unused if match(table)), None)
        if found is not None:
            unused.remove(found)
        return found

    tables: list[Table | None] = [take(lambda t, item=item: _plain(t) == item) for item in new]
    for index, item in enumerate(new):
        if tables[index] is None and keys:
            tables[index] = take(
                lambda t, item=item: all(_plain(t.get(k)) == item.get(k) for k in keys)
            )
        elif tables[index] is None and index < len(old):
            tables[index] = take(lambda t, index=index: t is old[index])
    merged = []
    for table, item in zip(tables, new, strict=True):
        table = tomlkit.table() if table is None else table
        _merge(table, item, identity)
        merged.append(table)
    return AoT(merged)


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


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


def check_top_level(
    path: Path, text: str, document: dict[str, Any], known: tuple[str, ...]
) -> None:
    """Refuse a top-level key or table trntui does not know (a typo, another tool's table):
    a save would drop it, so it is named, with its line, before anything is written."""
    unknown = [key for key in document if key not in known]
    if unknown:
        raise InputFileError(
            str(path),
            f"unknown key {unknown[0]!r}",
            line=locate(text, unknown[0], None) or locate(text, "", unknown[0]),
            key=unknown[0],
            expected=" or ".join(known),
        )
