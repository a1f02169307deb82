"""Imported runs inside a project directory.

Layout::

    runs/runs.parquet                 one row per imported run (the source of truth)
    runs/timelines/<run_id>.parquet   each run's normalized timeline

``run_id`` is the start of the log's SHA-256, so importing the same bytes again (from any path)
is recognised as a duplicate and adds nothing. Each file is imported all-or-nothing: it is
parsed and its facts derived before anything is written; then its timeline is written, then the
runs table (both atomically); a failure in between removes the timeline again, and a timeline
without a row in the runs table is never read. A batch continues past a bad file and reports
it. Callers hold the project's write lock (``trntui.store.project.Project``).

A batch of files and folders is imported by ``trntui.store.run_import``, which also stores
the new runs' facts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import polars as pl

from trntui.core.errors import InputFileError, UserError
from trntui.core.mlperf_score import (
    MlperfRunTime,
    MlperfScore,
    benchmark_of,
    max_dropped_runs,
    olympic_score,
    read_scaling_factor,
    required_runs,
    run_minutes,
)
from trntui.core.run_facts import SUCCEEDED, SUSPECT, RunFacts
from trntui.core.scaling import FAMILY_PARTS_VERSION, family_parts
from trntui.core.text import as_name, name_problem
from trntui.core.timeline import IMPORTER_VERSION, TIMELINE_SCHEMA, ImportedRun, RunMetadata
from trntui.store.atomic import atomic_write_with, remove_file
from trntui.store.paths import project_path
from trntui.store.paths import timeline_file as _timeline_file
from trntui.store.project import writes_project
from trntui.store.tables import present_or_null, read_table

RUNS_FOLDER = "runs"
RUNS_FILE = "runs.parquet"
TIMELINES_FOLDER = "timelines"
RUN_ID_LENGTH = 16

RUNS_SCHEMA = pl.Schema(
    {  # type: ignore[arg-type]  # dtype classes and an instance: mypy joins to object
        "run_id": pl.String,
        "set_name": pl.String,
        "format": pl.String,
        "source": pl.String,
        "sha256": pl.String,
        "imported_at": pl.Datetime("us", "UTC"),
        "status": pl.String,
        "init_s": pl.Float64,
        "run_s": pl.Float64,
        "launch_to_result_s": pl.Float64,
        "steady_throughput": pl.Float64,
        "throughput_unit": pl.String,
        "restarts": pl.Int64,
        "redone_steps": pl.Int64,
        "mlperf_minutes": pl.Float64,
        "scaling_factor": pl.Float64,
        "metadata_json": pl.String,
        "protocol_json": pl.String,
        "logged_accelerator": pl.String,
        "family_parts_version": pl.Int64,
    }
)
"""The runs table. The last three columns are each run's parts of its set's scaling family
key (``core.scaling.family_parts``, made with ``FAMILY_PARTS_VERSION``), so an estimate finds
the sets its targets' families could hold from those small columns alone. A table stored
before them lacks them: read, they are null (unknown), and the next write of the table
(an import, a set assignment, a removal) stores them for every run (``load_runs``)."""

_PART_COLUMNS = ("protocol_json", "logged_accelerator", "family_parts_version")
FAMILY_COLUMNS = frozenset(_PART_COLUMNS)

ADDED = "added"
DUPLICATE = "duplicate"
REFRESHED = "refreshed"
"""The log was stored by older reading rules and was read again (same run id and set)."""
FAILED = "failed"
SKIPPED = "skipped"


@dataclass(frozen=True)
class ImportOutcome:
    """What importing one file did (``add_run``, ``import_paths``): the outcome, and the run id and
    run set it is stored under, or the error."""

    path: str
    outcome: str
    """``added``, ``duplicate`` (same content already imported), ``refreshed`` (imported
    before, read again under newer importer rules), ``failed`` or ``skipped`` (a file inside a
    given folder that is not a recognised log)."""
    run_id: str | None = None
    set_name: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class RunSetInfo:
    """One run set (``run_sets``): its name, how many runs and how many succeeded, and its MLPerf
    score when it is a set of MLPerf logs."""

    name: str
    runs: int
    succeeded: int
    mlperf_score: MlperfScore | None
    """Only for sets of MLPerf logs (``None`` otherwise); its ``minutes`` are ``None`` when
    the set is invalid, and ``complete`` says whether it has the runs a submission holds."""
    is_mlperf: bool

    @property
    def mlperf_score_minutes(self) -> float | None:
        """The MLPerf score's minutes (``None`` when invalid or not MLPerf)."""
        return None if self.mlperf_score is None else self.mlperf_score.minutes


def runs_path(root: Path) -> Path:
    return project_path(root, RUNS_FOLDER, RUNS_FILE)


def timeline_path(root: Path, run_id: str) -> Path:
    """``runs/timelines/<run_id>.parquet``; a ``run_id`` that is not 16 hex digits is refused."""
    return _timeline_file(root, run_id)


def load_runs(root: Path) -> pl.DataFrame:
    """The runs table (empty when nothing was imported yet), every row checked. The family
    parts of a table stored before them are null here: a writer stores them
    (``with_family_parts``)."""
    return check_metadata(root, read_runs_table(root), whole=True)


def with_family_parts(runs: pl.DataFrame) -> pl.DataFrame:
    """``runs`` (the runs table, its metadata checked) with the family parts of every run
    made again from its metadata when any row's are missing or of another
    ``FAMILY_PARTS_VERSION`` (a table stored before them): what every write of the table
    stores (``_write_runs``)."""
    if runs["family_parts_version"].eq_missing(FAMILY_PARTS_VERSION).all():
        return runs
    parts = [family_parts(RunMetadata.from_json(text)) for text in runs["metadata_json"]]
    return runs.with_columns(
        pl.Series("protocol_json", [part[0] for part in parts], pl.String),
        pl.Series("logged_accelerator", [part[1] for part in parts], pl.String),
        pl.lit(FAMILY_PARTS_VERSION, pl.Int64).alias("family_parts_version"),
    )


def read_runs_table(root: Path, sets: Collection[str] | None = None) -> pl.DataFrame:
    """The runs table with its columns, types, ids and uniqueness checked, but not each run's
    metadata: a reader that needs a few runs (``store.estimate_context``'s estimate of the
    targets) checks those (``check_metadata``), never the JSON of every run of an archive.

    ``sets``: only the runs of these run sets are read (a scan that filters as it reads, so
    the other runs' metadata texts are never loaded); the table is still checked whole."""
    path = runs_path(root)
    if not path.is_file():
        return pl.DataFrame(schema=RUNS_SCHEMA)
    return read_table(
        path,
        RUNS_SCHEMA,
        "runs table",
        ids=("run_id", "run id"),
        unique=("run_id",),
        twice="the run would count twice",
        added=FAMILY_COLUMNS,
        where=None
        if sets is None
        else pl.col("set_name").is_in(pl.Series(sorted(sets), dtype=pl.String).implode()),
    )


def stored_family_parts(
    root: Path,
) -> tuple[frozenset[str], list[tuple[str, str | None, str | None]]]:
    """The names of the run sets that hold stored runs, and the family parts their runs
    store (``(run set, protocol text, logged accelerator)``, each distinct one once), read
    from those columns alone once the table is checked (``read_runs_table`` with no run
    kept). A set with a run whose parts are unknown (a table, or a row, stored before them or
    by another ``FAMILY_PARTS_VERSION``) has no parts here: any family key may be its."""
    path = runs_path(root)
    if not path.is_file():
        return frozenset(), []
    read_runs_table(root, sets=())
    try:
        scan = pl.scan_parquet(path)
        wanted = pl.Schema({name: RUNS_SCHEMA[name] for name in ("set_name", *_PART_COLUMNS)})
        frame = (
            scan.select(present_or_null(wanted, scan.collect_schema().names()))
            .cast(wanted)
            .with_columns(pl.col("family_parts_version").eq_missing(FAMILY_PARTS_VERSION))
            .rename({"family_parts_version": "known"})
            .unique()
            .collect()
        )
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError) as error:
        raise InputFileError(str(path), f"runs table cannot be read ({error})") from None
    unknown = set(frame.filter(~pl.col("known"))["set_name"].to_list())
    # A protocol text that is no JSON object (the table edited by hand) says nothing: its set
    # is read whole, and its runs' metadata (checked when read) gives the key.
    unknown |= {
        run_set
        for run_set, protocol in frame.select("set_name", "protocol_json").unique().rows()
        if protocol is not None and not _json_object(protocol)
    }
    known = frame.filter(
        ~pl.col("set_name").is_in(pl.Series(sorted(unknown), dtype=pl.String).implode())
    )
    parts = known.select("set_name", "protocol_json", "logged_accelerator").rows()
    return frozenset(frame["set_name"].to_list()), parts


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def check_metadata(root: Path, runs: pl.DataFrame, whole: bool = False) -> pl.DataFrame:
    """``runs`` (rows of ``read_runs_table``) when each row's metadata reads, else
    ``InputFileError`` naming the run and its row in the file (``whole``: ``runs`` is the
    whole table, so the row is its index; else it is looked up by the run's id)."""
    for index, (run_id, text) in enumerate(runs.select("run_id", "metadata_json").iter_rows()):
        try:
            RunMetadata.from_json(text)
        except UserError as error:
            path = runs_path(root)
            if not whole:
                ids = pl.scan_parquet(path).select(pl.col("run_id").cast(pl.String)).collect()
                index = int(ids["run_id"].index_of(run_id) or 0)
            raise InputFileError(
                str(path), f"run {run_id!r}: {error}", line=index + 1, key="metadata_json"
            ) from None
    return runs


def _write_runs(root: Path, runs: pl.DataFrame) -> None:
    """Store ``runs`` as the runs table (atomically), every run's family parts with it."""
    table = with_family_parts(runs)
    atomic_write_with(runs_path(root), lambda handle: table.write_parquet(handle), root=root)


def write_timeline(timeline: pl.DataFrame, handle: BinaryIO) -> None:
    """Zstandard level 1: as small as the default level for timelines, and faster to write."""
    timeline.write_parquet(handle, compression="zstd", compression_level=1)


def load_run(root: Path, run_id: str, runs: pl.DataFrame | None = None) -> ImportedRun:
    """A stored run's timeline and metadata (``runs``: the runs table, when already read)."""
    runs = (load_runs(root) if runs is None else runs).filter(pl.col("run_id") == run_id)
    if runs.is_empty():
        raise UserError(f"no run {run_id!r} in {root}")
    path = timeline_path(root, run_id)
    try:
        # Timelines written before ``kind`` became an enum hold it as text: cast on reading.
        timeline = pl.read_parquet(path).select(list(TIMELINE_SCHEMA)).cast(TIMELINE_SCHEMA)
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError) as error:
        raise InputFileError(str(path), f"timeline cannot be read ({error})") from None
    metadata = RunMetadata.from_json(runs["metadata_json"][0])
    return ImportedRun(timeline, metadata)


def default_set_name(path: Path) -> str:
    """Folder and parent folder of a log: ``XE9680x8H100-SXM-80GB/resnet``."""
    parent = Path(path).resolve().parent
    return as_name(f"{parent.parent.name}/{parent.name}" if parent.parent.name else parent.name)


def check_set_name(name: str, what: str = "run set") -> str:
    """``name`` when it may name a run set (``core.text.name_problem``), else ``UserError``
    saying why: checked before anything is stored under it, so a name no command could read
    back (only spaces, a control character, bytes that are not UTF-8) is never written."""
    problem = name_problem(name)
    if problem is not None:
        shown = repr(name).encode("ascii", "backslashreplace").decode("ascii")
        raise UserError(f"{shown} cannot name a {what}: {problem}")
    return name


def stored_source(root: Path, source: str) -> str:
    """A log inside the project is recorded relative to it, so the committed project does not
    carry one machine's absolute paths; a log elsewhere keeps its absolute path."""
    try:
        return Path(source).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(Path(source).resolve())


@dataclass(frozen=True)
class StoredRun:
    """A run as this process just stored it: the timeline and metadata that ``load_run`` would
    read back, and its facts derived without the project's goal (the runs table's)."""

    run: ImportedRun
    facts: RunFacts


def _row(run: ImportedRun, facts: RunFacts, run_id: str, set_name: str, root: Path) -> dict:
    meta = run.metadata
    is_mlperf = meta.format == "mlperf"
    source = stored_source(root, meta.source)
    return {
        "run_id": run_id,
        "set_name": set_name,
        "format": meta.format,
        "source": source,
        "sha256": meta.sha256,
        "imported_at": dt.datetime.now(dt.UTC),
        "status": facts.status,
        "init_s": facts.init_s,
        "run_s": facts.run_s,
        "launch_to_result_s": facts.launch_to_result_s,
        "steady_throughput": facts.steady_throughput,
        "throughput_unit": facts.throughput_unit,
        "restarts": facts.restarts,
        "redone_steps": facts.redone_steps,
        # MLPerf's summarizer counts a run only when it passes the compliance check, which
        # includes an evaluation meeting the benchmark's target.
        "mlperf_minutes": (
            run_minutes(run.timeline)
            if is_mlperf and facts.quality_reached is not False and facts.status != SUSPECT
            else None
        ),
        "scaling_factor": read_scaling_factor(Path(meta.source).parent) if is_mlperf else None,
        "metadata_json": dataclasses.replace(meta, source=source).to_json(),
        **dict(zip(("protocol_json", "logged_accelerator"), family_parts(meta), strict=True)),
        "family_parts_version": FAMILY_PARTS_VERSION,
    }


_TABLE_LOCK = threading.RLock()
"""Serialises this process's read-modify-write of the runs table (a UI worker and the UI thread
may both write); other processes are kept out by the project's write lock."""


@writes_project
def add_run(
    root: Path,
    run: ImportedRun,
    set_name: str,
    kept: dict[str, StoredRun] | None = None,
) -> ImportOutcome:
    """Store one imported run under ``set_name`` unless its content is already stored.

    ``kept``: when given, a run that was stored is added to it under its run id."""
    check_set_name(set_name)
    with _TABLE_LOCK:
        return _add_run(root, run, set_name, kept)


def _add_run(
    root: Path, run: ImportedRun, set_name: str, kept: dict[str, StoredRun] | None
) -> ImportOutcome:
    runs = load_runs(root)
    run_id = run.metadata.sha256[:RUN_ID_LENGTH]
    existing = runs.filter(pl.col("sha256") == run.metadata.sha256)
    outcome = ADDED
    if not existing.is_empty():
        stored = RunMetadata.from_json(existing["metadata_json"][0])
        if stored.importer_version >= run.metadata.importer_version:
            return ImportOutcome(
                run.metadata.source, DUPLICATE, existing["run_id"][0], existing["set_name"][0]
            )
        # Read again with today's rules: same id, same set, the import time it had.
        run_id, set_name = existing["run_id"][0], existing["set_name"][0]
        runs = runs.filter(pl.col("sha256") != run.metadata.sha256)
        outcome = REFRESHED
    from trntui.core.run_facts import run_facts  # the rules load when a run is added

    facts = run_facts(run)
    row = pl.DataFrame([_row(run, facts, run_id, set_name, root)], schema=RUNS_SCHEMA)
    if outcome == REFRESHED:
        row = row.with_columns(pl.lit(existing["imported_at"][0]).alias("imported_at"))
    updated = pl.concat([runs, row])
    timeline_file = timeline_path(root, run_id)
    atomic_write_with(timeline_file, lambda handle: write_timeline(run.timeline, handle), root=root)
    try:
        _write_runs(root, updated)
    except BaseException:
        if outcome == ADDED:  # a refreshed run keeps its (re-read) timeline and its old row
            with contextlib.suppress(OSError, UserError):
                remove_file(timeline_file, root=root)
        raise
    if kept is not None:
        metadata = RunMetadata.from_json(row["metadata_json"][0])  # as load_run reads it
        timeline = run.timeline.select(list(TIMELINE_SCHEMA)).cast(TIMELINE_SCHEMA)
        kept[run_id] = StoredRun(ImportedRun(timeline, metadata), facts)
    return ImportOutcome(run.metadata.source, outcome, run_id, set_name)


def stale_runs(runs: pl.DataFrame) -> int:
    """How many stored runs were read by older importer rules (re-import their logs)."""
    return sum(
        RunMetadata.from_json(text).importer_version < IMPORTER_VERSION
        for text in runs["metadata_json"]
    )


def run_sets(root: Path, runs: pl.DataFrame | None = None) -> list[RunSetInfo]:
    """Repeated runs grouped by set name, with the MLPerf score of MLPerf sets (``runs``: the
    runs table, when already read)."""
    runs = load_runs(root) if runs is None else runs
    infos = []
    for (name,), group in runs.sort("set_name").group_by("set_name", maintain_order=True):
        is_mlperf = bool((group["format"] == "mlperf").all())
        score: MlperfScore | None = None
        if is_mlperf:
            times = [
                MlperfRunTime(source, minutes)
                for source, minutes in group.select("source", "mlperf_minutes").iter_rows()
            ]
            factors = group["scaling_factor"].drop_nulls()
            benchmarks = {
                benchmark_of(meta.facts, meta.source)
                for meta in map(RunMetadata.from_json, group["metadata_json"])
            }
            score = olympic_score(
                times,
                float(factors[0]) if factors.len() else 1.0,
                max_dropped=max(map(max_dropped_runs, benchmarks)),
                # A set mixing benchmarks has no submission size.
                required=required_runs(benchmarks.pop()) if len(benchmarks) == 1 else None,
            )
        infos.append(
            RunSetInfo(
                name=str(name),
                runs=group.height,
                succeeded=int((group["status"] == SUCCEEDED).sum()),
                mlperf_score=score,
                is_mlperf=is_mlperf,
            )
        )
    return infos


@writes_project
def assign_set(root: Path, run_ids: Sequence[str], set_name: str) -> None:
    """Move runs to the run set ``set_name`` (created by naming it)."""
    with _TABLE_LOCK:
        _assign_set(root, run_ids, set_name)


def _assign_set(root: Path, run_ids: Sequence[str], set_name: str) -> None:
    runs = load_runs(root)
    unknown = set(run_ids) - set(runs["run_id"].to_list())
    if unknown:
        raise UserError(f"no run {sorted(unknown)[0]!r} in {root}")
    check_set_name(set_name)
    updated = runs.with_columns(
        pl.when(pl.col("run_id").is_in(list(run_ids)))
        .then(pl.lit(set_name))
        .otherwise(pl.col("set_name"))
        .alias("set_name")
    )
    _write_runs(root, updated)


@writes_project
def remove_run(root: Path, run_id: str) -> str:
    """Forget a run: drop its row first (atomically), then its timeline file; the path of the
    log it was read from (which stays where it is)."""
    with _TABLE_LOCK:
        return _remove_run(root, run_id)


def _remove_run(root: Path, run_id: str) -> str:
    runs = load_runs(root)
    row = runs.filter(pl.col("run_id") == run_id)
    if row.is_empty():
        raise UserError(f"no run {run_id!r} in {root}")
    timeline_file = timeline_path(root, run_id)  # a bad id is refused before anything changes
    remaining = runs.filter(pl.col("run_id") != run_id)
    _write_runs(root, remaining)
    with contextlib.suppress(OSError, UserError):
        remove_file(timeline_file, root=root)
    return str(row["source"][0])
