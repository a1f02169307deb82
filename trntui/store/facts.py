"""Each run's derived facts, stored so that opening a project reads one small table.

Layout::

    runs/facts.parquet   one row per run: the facts derived from its timeline, what limits it and
                         its steady-window utilization, with the key they were derived under

A run's facts follow from its timeline (the stored file's SHA-256, so a timeline edited by hand
is derived again) and from inputs outside it: the goal's quality criterion
and planned steps, a quality result recorded for the run, the telemetry captures attached to it,
and the rules themselves (``FACTS_VERSION``). The key is a hash of all of these, so a stored row
is used only while every one of them is unchanged; otherwise the run is derived again from its
stored timeline (never the log). The table is derived data: deleting it loses nothing, and a
stale or unreadable one is rebuilt.

After an import the new runs come from memory (``store_facts``): their timelines are not read
back, and the facts the runs table has (derived without the goal) are reused when the goal
cannot change them: no quality criterion, no recorded quality result, and no planned steps, or a
log that states its own (``run_facts`` uses the inventory's planned steps only where the log
states none).

Rows are written after an import, and whenever facts had to be derived and this process can
write the project (it holds the write lock, or takes it for the one write because nobody else
holds it and it has not opened the project read-only); otherwise the facts are derived in
memory and nothing is written. Writes are atomic like every other project file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import polars as pl

from trntui.core.errors import UserError
from trntui.core.quality import QualityTarget, RecordedQuality
from trntui.core.run_facts import (
    FACTS_VERSION,
    RunFacts,
    facts_from_json,
    facts_to_json,
)
from trntui.core.timeline import RunMetadata
from trntui.store.atomic import atomic_write_with
from trntui.store.paths import project_path, timeline_files
from trntui.store.project import may_store_derived, read_inventory, write_access
from trntui.store.quality import load_recorded_quality
from trntui.store.runs import RUNS_FOLDER, StoredRun, load_run, load_runs
from trntui.store.telemetry import load_captures

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_BYTES = 1 << 20
FACTS_FILE = "facts.parquet"
FACTS_SCHEMA = pl.Schema(
    {
        "run_id": pl.String,
        "key": pl.String,
        "facts_version": pl.Int64,
        "facts_json": pl.String,
        "limit": pl.String,
        "steady_utilization_pct": pl.Float64,
    }
)


@dataclass(frozen=True)
class DerivedRun:
    """One stored run with its facts against the current goal."""

    run_id: str
    set_name: str
    metadata: RunMetadata
    facts: RunFacts
    limit: str | None
    """What limits the run (the verdict's limit), when the verdict can tell."""
    steady_utilization_pct: float | None


@dataclass(frozen=True)
class DerivedRuns:
    """Every stored run with its facts against the current goal (``derive_and_store_runs``):
    how many were derived rather than read back, how many because the rules changed, and
    whether what was derived got stored."""

    runs: tuple[DerivedRun, ...]
    derived: int
    """How many runs were derived rather than read back from the table (from their stored
    timelines, or from memory for runs just imported)."""
    by_new_rules: int
    """Of those, how many had stored facts from other rules (``FACTS_VERSION``)."""
    stored: bool = True
    """False when facts were derived but could not be stored (read-only, or locked)."""

    def __iter__(self) -> Iterator[DerivedRun]:
        return iter(self.runs)

    @property
    def note(self) -> str | None:
        """What to tell the user when the rules changed since the facts were stored."""
        if not self.by_new_rules:
            return None
        runs = "run" if self.by_new_rules == 1 else "runs"
        note = f"facts of {self.by_new_rules} {runs} derived again: the rules changed"
        return note if self.stored else f"{note} (stored when the project is opened for writing)"


_WRITE_LOCK = threading.Lock()


def facts_path(root: Path) -> Path:
    return project_path(root, RUNS_FOLDER, FACTS_FILE)


def timeline_digest(path: Path | str) -> str:
    """The SHA-256 of a stored timeline file, so a timeline edited by hand is derived again
    (``missing`` or ``unreadable`` when it cannot be read: deriving it then says why)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOFOLLOW)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "unreadable"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "unreadable"  # a FIFO or device in its place is never read here
        # Plain reads: ``hashlib.file_digest`` zeroes a 256 KiB buffer for every file, which
        # costs more than hashing a timeline of a few KiB (measured on 10,000: 0.7 s vs 0.3 s).
        digest = hashlib.sha256()
        while chunk := os.read(fd, _READ_BYTES):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


def run_key(
    sha256: str,
    timeline: str,
    importer_version: int,
    target: QualityTarget | None,
    planned_steps: int | None,
    recorded: RecordedQuality | None,
    captures: list[tuple[object, ...]],
) -> str:
    """The hash of everything a run's stored facts depend on."""
    parts = [
        FACTS_VERSION,
        sha256,
        timeline,
        importer_version,
        None if target is None else [target.metric, target.threshold, target.higher_is_better],
        planned_steps,
        None if recorded is None else [recorded.value, recorded.source, recorded.evaluation_s],
        sorted(captures, key=repr),
    ]
    text = json.dumps(parts, default=repr, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class _StoredRow(NamedTuple):
    """One run's row of ``facts.parquet`` (``FACTS_SCHEMA`` after the run id)."""

    key: str
    facts_version: int
    facts_json: str
    limit: str | None
    steady_utilization_pct: float | None


def _stored(root: Path, run_ids: pl.Series | None = None) -> dict[str, _StoredRow]:
    """The stored rows by run id (``run_ids``: only those runs' rows, read by a scan that
    filters as it reads)."""
    path = facts_path(root)
    if not path.is_file():
        return {}
    try:
        frame = pl.scan_parquet(path).select(list(FACTS_SCHEMA))
        if run_ids is not None:
            frame = frame.filter(pl.col("run_id").is_in(run_ids.implode()))
        table = frame.cast(FACTS_SCHEMA).collect()
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError):
        return {}  # derived data: an unreadable table is rebuilt, never trusted
    return {row[0]: _StoredRow(*row[1:]) for row in table.iter_rows()}


def derive_and_store_runs(
    root: Path,
    target: QualityTarget | None,
    planned_steps: int | None,
    fresh: Mapping[str, StoredRun] | None = None,
) -> DerivedRuns:
    """Every stored run with its facts against ``target`` and ``planned_steps``, the facts
    not stored yet written to ``facts.parquet`` (the name says so: a read that writes).

    Facts stored under the same key are read; the others are derived from the timelines and
    stored when this process may write the project. ``fresh``: runs this process has just
    stored, by run id, derived from memory instead of their timeline files.
    """
    root = Path(root)
    stored = _stored(root)
    found = _with_facts(root, load_runs(root), stored, target, planned_steps, fresh)
    written = True
    if found.derived or set(stored) != {row["run_id"] for row in found.rows}:
        written = _store(root, pl.DataFrame(found.rows, schema=FACTS_SCHEMA))
    return DerivedRuns(found.runs, found.derived, found.by_new_rules, written)


def read_runs(
    root: Path, runs: pl.DataFrame, target: QualityTarget | None, planned_steps: int | None
) -> DerivedRuns:
    """The runs of ``runs`` (rows of the runs table, their metadata checked) with their facts
    against ``target`` and ``planned_steps``: a read that writes nothing.

    Only these runs' stored facts are read (a scan filtered by run id) and only their
    timelines hashed; a run whose stored facts do not hold is derived in memory, as a
    read-only session does (``stored`` is then False). For a reader that needs a few run sets
    of a big project (``store.estimate_context.read_target_observations``).
    """
    root = Path(root)
    stored = _stored(root, runs["run_id"])
    found = _with_facts(root, runs, stored, target, planned_steps, None)
    return DerivedRuns(found.runs, found.derived, found.by_new_rules, not found.derived)


class _Found(NamedTuple):
    runs: tuple[DerivedRun, ...]
    rows: list[dict]
    """Each run's row of ``facts.parquet`` as it is to be stored."""
    derived: int
    by_new_rules: int


def _with_facts(
    root: Path,
    runs: pl.DataFrame,
    stored: dict[str, _StoredRow],
    target: QualityTarget | None,
    planned_steps: int | None,
    fresh: Mapping[str, StoredRun] | None,
) -> _Found:
    """Each run of ``runs`` with its facts: ``stored``'s where its key still holds, else
    derived (from ``fresh`` or the stored timeline)."""
    recorded = load_recorded_quality(root)
    captures: dict[str, list[tuple[object, ...]]] = {}
    for run_id, *capture in (
        load_captures(root).select("run_id", "capture_id", "kind", "sha256", "offset_s").iter_rows()
    ):
        captures.setdefault(run_id, []).append(tuple(capture))
    result: list[DerivedRun] = []
    rows: list[dict] = []
    derived = by_new_rules = 0
    timelines = timeline_files(root, runs["run_id"])  # the folder checked once, not per run
    for run_id, set_name, metadata_json in runs.select(
        "run_id", "set_name", "metadata_json"
    ).iter_rows():
        metadata = RunMetadata.from_json(metadata_json)
        key = run_key(
            metadata.sha256,
            timeline_digest(timelines[run_id]),
            metadata.importer_version,
            target,
            planned_steps,
            recorded.get(run_id),
            captures.get(run_id, []),
        )
        entry = stored.get(run_id)
        facts = None
        text = None
        if entry is not None and entry.key == key:
            text = entry.facts_json
            try:
                facts = facts_from_json(entry.facts_json)
            except ValueError:
                facts = text = None
            limit, steady_pct = entry.limit, entry.steady_utilization_pct
        if facts is None:
            text = None
            just_stored = (fresh or {}).get(run_id)
            run = load_run(root, run_id, runs) if just_stored is None else just_stored.run
            # The rules and the telemetry rules load here: reading stored facts needs neither.
            from trntui.core.run_facts import goal_free, run_facts
            from trntui.store.telemetry import run_limit

            if just_stored is not None and goal_free(
                run, target, planned_steps, recorded.get(run_id)
            ):
                facts = just_stored.facts
            else:
                facts = run_facts(run, target, planned_steps, recorded.get(run_id))

            limit, steady_pct = run_limit(root, run_id, run, facts, captured=run_id in captures)
            derived += 1
            by_new_rules += entry is not None and entry.facts_version != FACTS_VERSION
        result.append(DerivedRun(run_id, set_name, metadata, facts, limit, steady_pct))
        rows.append(
            {
                "run_id": run_id,
                "key": key,
                "facts_version": FACTS_VERSION,
                "facts_json": facts_to_json(facts) if text is None else text,
                "limit": limit,
                "steady_utilization_pct": steady_pct,
            }
        )
    return _Found(tuple(result), rows, derived, by_new_rules)


def _store(root: Path, table: pl.DataFrame) -> bool:
    """Write the table if this process may write the project now; whether it was written."""
    if not may_store_derived(root):
        return False  # opened read-only here: look, never write
    with _WRITE_LOCK:
        try:
            with write_access(root):
                atomic_write_with(
                    facts_path(root), lambda handle: table.write_parquet(handle), root=root
                )
        except (UserError, OSError):
            return False  # another session writes, or the folder is read-only
    return True


def derive_and_store_facts(
    root: Path, target: QualityTarget | None, planned_steps: int | None
) -> dict[str, RunFacts]:
    """Every stored run's facts against the goal's quality criterion and planned steps (the
    facts not stored yet are stored: ``derive_and_store_runs``).

    The runs table keeps the facts computed without the project's goal; what counts as finished
    and as verified depends on that goal, so the facts here are judged against it.
    """
    return {run.run_id: run.facts for run in derive_and_store_runs(root, target, planned_steps)}


def store_facts(root: Path, fresh: Mapping[str, StoredRun] | None = None) -> None:
    """Derive and store the facts of runs not yet stored, against the project's goal (after an
    import, so that the next open reads them; ``fresh``: the runs just imported, as for
    ``derive_and_store_runs``). Never fails the import: what cannot be derived now is derived, and
    reported, when the project is read."""
    try:
        inventory = read_inventory(root).inventory
        derive_and_store_runs(
            root, inventory.goal.quality_target(), inventory.planned_steps(), fresh
        )
    except UserError:
        pass  # e.g. another run's timeline is unreadable: reading the project will say so
