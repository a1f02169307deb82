"""The one place where a project's file paths are built from ids and names.

An id that becomes part of a path (a run id, a telemetry capture id, a scenario name) is
checked against a fixed pattern with ``fullmatch`` every time a path is built from it, and
stores check the ids they read back from their tables, so a hand-edited ``runs.parquet`` with
a ``../`` run id is refused with one line instead of reaching the disk. The built path is then
checked for symbolic links below the project root (``store.atomic.check_inside``); writes go
through ``store.atomic``, which walks the same folders without following links.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from trntui.core.errors import InputFileError, UserError
from trntui.store.atomic import check_inside, check_part

RUN_ID = re.compile(r"[0-9a-f]{16}")
"""A run id: the first 16 hex digits of the log's SHA-256."""
CAPTURE_ID = RUN_ID
"""A telemetry capture id: the first 16 hex digits of the capture's SHA-256."""
SCENARIO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
"""A scenario name: letters, digits, '.', '_' and '-', at most 80, starting with a letter or
digit (so never '.', '..' or a hidden file)."""

_EXPECTED = {
    "run id": "16 hex digits (0-9, a-f), as `trntui runs` lists them",
    "capture id": "16 hex digits (0-9, a-f)",
    "scenario name": (
        "letters, digits, '.', '_' or '-' (up to 80 characters, not starting with a dot or dash)"
    ),
}
_PATTERNS = {"run id": RUN_ID, "capture id": CAPTURE_ID, "scenario name": SCENARIO_NAME}


def is_valid(kind: str, value: object) -> bool:
    return isinstance(value, str) and _PATTERNS[kind].fullmatch(value) is not None


def check_id(kind: str, value: object) -> str:
    """``value`` when it is a usable ``kind`` ('run id', 'capture id', 'scenario name')."""
    if not is_valid(kind, value):
        raise UserError(f"{value!r} is not a usable {kind}: expected {_EXPECTED[kind]}")
    assert isinstance(value, str)
    return value


def check_column(path: Path, kind: str, column: str, values: Iterable[object]) -> None:
    """Refuse a table read from ``path`` whose ``column`` holds a value that is not a ``kind``.

    Raises ``InputFileError`` naming the file, the row (1-based) and the bad value.
    """
    for row, value in enumerate(values, start=1):
        if not is_valid(kind, value):
            raise InputFileError(
                str(path),
                f"row {row} has {kind} {value!r}, which trntui never writes (was it edited?)",
                key=column,
                expected=_EXPECTED[kind],
            )


PROJECT_DATA = frozenset(
    {"runs", "prices", "scenarios", "working_scenario.toml", "telemetry", "logs", ".trntui.lock"}
)
"""What a project keeps at its top besides ``trntui.toml`` (and its ``.bak`` copies): folders
and files trntui (or the person, for ``logs``) owns, that no output of a command may replace."""


def project_data_of(path: Path) -> Path | None:
    """The project folder whose own data ``path`` would replace (``trntui.toml`` or a copy of
    it, or anything under ``PROJECT_DATA``); ``None`` if none. The folders on the way are
    followed through links; ``path`` itself is not (a write replaces a link, not its target)."""
    path = Path(os.path.abspath(path))
    target = Path(os.path.realpath(path.parent)) / path.name
    for folder in target.parents:
        if (folder / "trntui.toml").is_file():
            top = target.relative_to(folder).parts[0]
            if top in PROJECT_DATA or top.startswith("trntui.toml"):
                return folder
    return None


def project_path(root: Path, *parts: str) -> Path:
    """``root/<parts...>``, refused (``UnsafePath``) if a link below ``root`` is on the way."""
    for part in parts:
        check_part(Path(root), part)
    path = Path(root, *parts)
    check_inside(Path(root), path)
    return path


def timeline_file(root: Path, run_id: str) -> Path:
    return project_path(root, "runs", "timelines", f"{check_id('run id', run_id)}.parquet")


def timeline_files(root: Path, run_ids: Iterable[str]) -> dict[str, str]:
    """Each run's timeline path (as text), its folder checked once (``project_path``): for
    reading every timeline of a big project. Each id is checked; the files themselves must be
    opened with ``O_NOFOLLOW`` by the reader."""
    folder = str(project_path(root, "runs", "timelines"))
    return {
        run_id: os.path.join(folder, f"{check_id('run id', run_id)}.parquet") for run_id in run_ids
    }


def samples_file(root: Path, capture_id: str) -> Path:
    name = f"{check_id('capture id', capture_id)}.parquet"
    return project_path(root, "telemetry", "samples", name)


def scenario_file(root: Path, name: str) -> Path:
    return project_path(root, "scenarios", f"{check_id('scenario name', name)}.toml")
