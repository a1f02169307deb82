"""Where a report may be written, and the write: shared by ``trntui report`` and the app's
Write report dialog, so both refuse the same paths with the same words.

A report is not project data: it goes where the user names (next to ``trntui.toml`` is the
usual place), never over a project's own files, and is written atomically.
"""

from __future__ import annotations

from pathlib import Path

from trntui.core.errors import UserError
from trntui.store.atomic import atomic_write_text
from trntui.store.paths import project_data_of


def report_path(output: str) -> Path:
    """Where a report may go: never over a project's own files, into a folder that exists."""
    path = Path(output).expanduser()
    owner = project_data_of(path)
    if owner is not None:
        raise UserError(
            f"{output} is part of the project {owner} (its inventory, runs, prices, scenarios, "
            "telemetry, logs or lock): a report never replaces those; write it elsewhere, "
            "e.g. next to trntui.toml"
        )
    if not path.parent.is_dir():
        raise UserError(f"{output} was not written: the folder {path.parent} does not exist")
    if path.is_dir():
        raise UserError(f"{output} is a folder: name a file for the report")
    return path


def write_report(output: str, text: str) -> Path:
    """Write ``text`` to ``output`` (checked by ``report_path``) atomically; the path written."""
    path = report_path(output)
    atomic_write_text(path, text)
    return path
