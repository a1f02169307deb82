"""A folder's event files -> one run.

TensorBoard shows each folder of event files as one run, its files read in the order of their
names (``events.out.tfevents.<creation time, seconds>.<host>...``: name order is creation
order). A process writes a file of its own each time it starts, so a job resumed with the same
log folder (NeMo's and NxD Training's experiment manager, Lightning's logger with a fixed
version, HF's ``TENSORBOARD_LOGGING_DIR``) leaves one file per attempt in it: read together,
they are one run whose later files are its restarts.

Files are read in name order when each starts after the one before it ended (by their scalars'
wall times); files whose spans overlap were written at the same time by different processes
(ranks, or two jobs sharing a folder) and are no sequence: then only the named file is read,
with a note. A file in the folder that holds no scalars (a writer that started and wrote
nothing, an ``hparams``-only file) is left out with a note.

Each scalar's ``offset`` (the timeline's ``line``) is its record's number counted through the
files in that order, so it still points at one record; the facts list where each file starts.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path

from trntui.importers.reading import Steps
from trntui.importers.tensorboard.events import EventFile, read_event_file

FILE_PREFIX = "events.out.tfevents."


@dataclass
class RunFiles:
    """The event files read as one run, in order, and what was left out and why."""

    files: list[EventFile]
    first_lines: list[int]
    """The ``line`` of each file's first record (1 for the first file)."""
    notes: list[str] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        """One file's own hash; several files' hash is that of their hashes in order (the same
        run whichever of its files is named)."""
        if len(self.files) == 1:
            return self.files[0].sha256
        return hashlib.sha256("\n".join(f.sha256 for f in self.files).encode()).hexdigest()


def _siblings(path: Path) -> list[Path]:
    """The event files beside ``path`` (itself included), in name order."""
    if not path.name.startswith(FILE_PREFIX):
        return [path]
    found = sorted(
        (p for p in path.parent.glob(FILE_PREFIX + "*") if p.is_file()), key=lambda p: p.name
    )
    return found if path.name in {p.name for p in found} else [path]


def _span(events: EventFile) -> tuple[float, float]:
    walls = [scalar.wall_time for scalar in events.scalars]
    return min(walls), max(walls)


def read_run_files(path: Path, steps: Steps) -> RunFiles:
    """The files of ``path``'s folder that make its run (module docstring)."""
    named = read_event_file(path, steps)
    paths = _siblings(path)
    if len(paths) == 1:
        return RunFiles([named], [1])
    notes: list[str] = []
    files: list[EventFile] = []
    for other in paths:
        events = named if other.name == path.name else read_event_file(other, steps)
        if events.scalars:
            files.append(events)
        else:
            notes.append(f"{other.name} in the same folder holds no scalars: left out")
    if len(files) <= 1:
        return RunFiles(files or [named], [1], notes if files else [])
    if not all(_span(a)[1] <= _span(b)[0] for a, b in itertools.pairwise(files)):
        others = ", ".join(Path(f.path).name for f in files if f is not named)
        notes.append(
            f"the folder's other event files ({others}) were written at the same time as this "
            "one (their wall times overlap), by other processes: only this file is read"
        )
        return RunFiles([named], [1], notes)
    first_lines, shifted, before = [], [], 0
    for events in files:
        first_lines.append(before + 1)
        scalars = [replace(s, offset=s.offset + before) for s in events.scalars]
        starts = [(offset + before, wall, step) for offset, wall, step in events.session_starts]
        shifted.append(replace(events, scalars=scalars, session_starts=starts))
        before += events.records
    names = "; ".join(
        f"{Path(f.path).name} from line {line}" for f, line in zip(files, first_lines, strict=True)
    )
    notes.append(
        f"{len(files)} event files in one folder, read as one run in name order (TensorBoard's "
        f"rule; each later file is a process started again): {names}"
    )
    return RunFiles(shifted, first_lines, notes)
