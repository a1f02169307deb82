"""Log files and folders imported into a project as runs, and their facts stored.

Each file is imported all-or-nothing by ``trntui.store.runs.add_run``; a batch continues past a
bad file and reports it, and ``Cancelled`` stops it (the files already stored stay stored).
After a batch, the new runs' facts against the project's goal are stored
(``trntui.store.facts.store_facts``) from the runs still in memory: their timelines are not
read back, and the facts derived for the runs table are reused where the goal cannot change
them. Callers hold the project's write lock (``trntui.store.project.Project``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trntui.core.errors import InputFileError, UserError
from trntui.store.facts import store_facts
from trntui.store.runs import (
    FAILED,
    SKIPPED,
    ImportOutcome,
    StoredRun,
    add_run,
    check_set_name,
    default_set_name,
)

if TYPE_CHECKING:
    from trntui.importers import CancelCheck, Progress


def expand_paths(paths: Iterable[Path]) -> list[tuple[Path, bool]]:
    """Files to import, each with whether the user named it (True) or a folder held it."""
    files: list[tuple[Path, bool]] = []
    for path in map(Path, paths):
        if path.is_dir():
            inside = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.parts[-1:])
            )
            files.extend((p, False) for p in inside)
        else:
            files.append((path, True))
    return files


def import_paths(
    root: Path,
    paths: Sequence[Path],
    *,
    format: str | None = None,
    set_name: str | None = None,
    progress: Progress | None = None,
    cancel: CancelCheck | None = None,
) -> list[ImportOutcome]:
    """Import files and folders; one outcome per file. ``Cancelled`` stops the batch (the
    files already stored stay stored; the one in progress is not stored)."""
    # The parsers load here, not with this module: opening a project reads runs, never logs.
    from trntui.importers import CAPTURE_HINT, Cancelled, capture_kind, detect_format, import_file

    if set_name is not None:
        check_set_name(set_name)  # before a log is read
    files = expand_paths(paths)
    outcomes = []
    kept: dict[str, StoredRun] = {}
    for index, (path, named) in enumerate(files):

        def file_progress(fraction: float, index: int = index) -> None:
            if progress is not None:
                progress((index + fraction) / len(files))

        file_format = format
        if format is None and (kind := capture_kind(path)) is not None:
            outcomes.append(ImportOutcome(str(path), SKIPPED, error=CAPTURE_HINT.format(kind=kind)))
            continue
        if not named and format is None:
            try:
                file_format = detect_format(path)  # detected once, then passed on
            except InputFileError:
                outcomes.append(ImportOutcome(str(path), SKIPPED))
                continue
        try:
            run = import_file(path, format=file_format, progress=file_progress, cancel=cancel)
            outcomes.append(add_run(root, run, set_name or default_set_name(path), kept))
        except Cancelled:
            raise
        except UserError as error:
            outcomes.append(ImportOutcome(str(path), FAILED, error=str(error)))
    if kept:
        store_facts(root, kept)
    if progress is not None:
        progress(1.0)
    return outcomes
