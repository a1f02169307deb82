"""Column mappings remembered per project, for the next CSV/JSONL file of the same shape.

Layout: ``runs/mappings.toml``, one ``[[mapping]]`` per file shape, keyed by ``shape`` (the
hash of the header's column set, ``trntui.importers.mapped.shape_key``) with the column names
kept next to it so a person reading the file sees what it applies to. Written atomically;
callers hold the project's write lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trntui.core.errors import InputFileError
from trntui.importers.mapped import ColumnMapping, shape_key
from trntui.store.atomic import atomic_write_text
from trntui.store.paths import project_path
from trntui.store.project import writes_project
from trntui.store.toml_file import decode_utf8, dump_toml, parse_toml

MAPPINGS_FILE = Path("runs") / "mappings.toml"


def mappings_path(root: Path) -> Path:
    return project_path(root, *MAPPINGS_FILE.parts)


def _entries(root: Path) -> list[dict[str, Any]]:
    path = mappings_path(root)
    if not path.is_file():
        return []
    document = parse_toml(path, decode_utf8(path, path.read_bytes()))
    entries = document.get("mapping", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise InputFileError(str(path), "'mapping' must be a list of tables", key="mapping")
    return entries


def remembered_mapping(root: Path, columns: Iterable[str]) -> ColumnMapping | None:
    """The mapping confirmed earlier for a file with the same column set, if any."""
    shape = shape_key(columns)
    for entry in _entries(root):
        if entry.get("shape") == shape:
            data = {k: v for k, v in entry.items() if k not in ("shape", "columns")}
            mapping = ColumnMapping.from_dict(data)
            if not mapping.problems(columns):
                return mapping
    return None


@writes_project
def remember_mapping(root: Path, columns: Iterable[str], mapping: ColumnMapping) -> None:
    """Store (or replace) the mapping for this column set."""
    names = sorted(set(columns))
    problems = mapping.problems(names)
    if problems:
        raise ValueError("; ".join(problems))
    shape = shape_key(names)
    entries = [e for e in _entries(root) if e.get("shape") != shape]
    entries.append({"shape": shape, "columns": names, **mapping.to_dict()})
    atomic_write_text(mappings_path(root), dump_toml({"mapping": entries}), root=root)
