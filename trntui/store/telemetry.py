"""Telemetry captures attached to imported runs, inside a project directory.

Layout::

    telemetry/captures.parquet            one row per attached capture (the source of truth)
    telemetry/samples/<capture_id>.parquet  a utilization capture's samples (TELEMETRY_SCHEMA)

A capture is a neuron-monitor or nvidia-smi utilization capture, or a training log whose
Neuron compiler lines are counted (its ``CompileSummary`` is kept as JSON in the row).

Attaching is by time overlap and instance, checked before anything is written:

- both clocks absolute (the capture's ``start_time`` and the run's ``launch_time``, both with a
  time zone or both without): the capture is placed at their difference; no overlap with the
  run is a mismatch;
- a capture without an absolute clock (neuron-monitor without wrapper timestamps), or clocks
  that cannot be compared (one zoned, one local), attaches only when the caller states the
  offset (``offset_s``: run time of the capture's start);
- a capture from another instance than the run's (its ``instance_type`` against the one the
  caller expects, or its ``instance_id`` against captures already attached) is a mismatch.

A mismatch is reported and nothing is stored; it is never silently joined. Each file is stored
all-or-nothing: samples file first, then the captures table (both atomic); a failure in between
removes the samples file. Callers hold the project's write lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from trntui.core.compile_telemetry import (
    Compilation,
    CompileRecurrence,
    CompileSummary,
    compile_recurrence,
    compile_summary,
)
from trntui.core.errors import InputFileError, UserError
from trntui.core.mfu import Mfu, run_mfu
from trntui.core.run_facts import RunFacts, run_facts
from trntui.core.timeline import ImportedRun, Kind
from trntui.core.utilization import (
    TELEMETRY_SCHEMA,
    Telemetry,
    TelemetryMetadata,
    TelemetryTime,
    UtilizationReport,
    utilization_report,
)
from trntui.core.verdict import Verdict, run_verdict
from trntui.importers import capture_kind
from trntui.importers._base import (
    CancelCheck,
    Progress,
    Steps,
    read_lines,
    read_source,
)
from trntui.importers.neuron_monitor import import_neuron_monitor
from trntui.importers.nvidia_smi import import_nvidia_smi
from trntui.store.atomic import atomic_write_with, remove_file
from trntui.store.paths import check_column, project_path, samples_file
from trntui.store.project import writes_project
from trntui.store.runs import load_run, stored_source

TELEMETRY_FOLDER = "telemetry"
CAPTURES_FILE = "captures.parquet"
SAMPLES_FOLDER = "samples"
CAPTURE_ID_LENGTH = 16

UTILIZATION = "utilization"
COMPILE = "compile"

ATTACHED = "attached"
MISMATCH = "mismatch"
DUPLICATE = "duplicate"
FAILED = "failed"

CAPTURES_SCHEMA = pl.Schema(
    {
        "capture_id": pl.String,
        "run_id": pl.String,
        "kind": pl.String,
        "format": pl.String,
        "source": pl.String,
        "sha256": pl.String,
        "imported_at": pl.Datetime("us", "UTC"),
        "offset_s": pl.Float64,
        "coverage": pl.Float64,
        "instance_id": pl.String,
        "instance_type": pl.String,
        "note": pl.String,
        "metadata_json": pl.String,
    }
)


@dataclass(frozen=True)
class AttachOutcome:
    path: str
    outcome: str
    """``attached``, ``mismatch`` (not stored: no overlap, another instance, unknown clock),
    ``duplicate`` (already attached to this run) or ``failed`` (bad file)."""
    message: str
    capture_id: str | None = None
    kind: str | None = None
    offset_s: float | None = None
    coverage: float | None = None
    """Fraction of the run's launch-to-end time the capture covers."""


_OFFSET_HINT = " (seconds after the run's start: the attach dialog's Offset, or --offset)"


def captures_path(root: Path) -> Path:
    return project_path(root, TELEMETRY_FOLDER, CAPTURES_FILE)


def samples_path(root: Path, capture_id: str) -> Path:
    """``telemetry/samples/<capture_id>.parquet``; an id that is not 16 hex digits is refused."""
    return samples_file(root, capture_id)


def load_captures(root: Path, run_id: str | None = None) -> pl.DataFrame:
    """The captures table, optionally only one run's (empty when nothing is attached)."""
    path = captures_path(root)
    if not path.is_file():
        frame = pl.DataFrame(schema=CAPTURES_SCHEMA)
    else:
        try:
            frame = pl.read_parquet(path)
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError) as error:
            raise InputFileError(str(path), f"captures table cannot be read ({error})") from None
        missing = [name for name in CAPTURES_SCHEMA if name not in frame.columns]
        if missing:
            raise InputFileError(str(path), "captures table lacks columns", key=missing[0])
        frame = frame.select(list(CAPTURES_SCHEMA)).cast(dict(CAPTURES_SCHEMA))
        # Capture ids become file names: one edited by hand is refused here, on reading.
        check_column(path, "capture id", "capture_id", frame["capture_id"])
    return frame if run_id is None else frame.filter(pl.col("run_id") == run_id)


def load_telemetry(root: Path, capture_id: str) -> Telemetry:
    rows = load_captures(root).filter(
        (pl.col("capture_id") == capture_id) & (pl.col("kind") == UTILIZATION)
    )
    if rows.is_empty():
        raise UserError(f"no utilization capture {capture_id!r} in {root}")
    path = samples_path(root, capture_id)
    try:
        samples = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError) as error:
        raise InputFileError(str(path), f"samples cannot be read ({error})") from None
    return Telemetry(
        samples.select(list(TELEMETRY_SCHEMA)),
        TelemetryMetadata.from_json(rows["metadata_json"][0]),
    )


def summary_to_json(summary: CompileSummary) -> str:
    data = dataclasses.asdict(summary)
    data["start_time"] = summary.start_time.isoformat() if summary.start_time else None
    return json.dumps(data, sort_keys=True)


def summary_from_json(text: str) -> CompileSummary:
    data = json.loads(text)
    data["start_time"] = (
        dt.datetime.fromisoformat(data["start_time"]) if data["start_time"] else None
    )
    data["items"] = tuple(Compilation(**item) for item in data.get("items", ()))
    return CompileSummary(**data)


def _comparable(a: dt.datetime, b: dt.datetime) -> bool:
    return (a.tzinfo is None) == (b.tzinfo is None)


def _placement(
    run: ImportedRun,
    run_end_s: float | None,
    start: dt.datetime | None,
    span_s: float,
    offset_s: float | None,
    has_clock: bool,
) -> tuple[float | None, float | None, str | None, str]:
    """(offset, coverage, mismatch reason or None, note) of a capture against a run."""
    if offset_s is not None:
        note = f"placed at run time {offset_s:g} s as stated by the user"
    elif not has_clock or start is None:
        return (
            None,
            None,
            (
                "the capture has no absolute time, so its overlap with the run cannot be "
                "checked; state where it starts in run time" + _OFFSET_HINT
            ),
            "",
        )
    elif run.metadata.launch_time is None:
        return (
            None,
            None,
            (
                "the run's log has no absolute time, so the overlap cannot be checked; state the "
                "capture's start in run time" + _OFFSET_HINT
            ),
            "",
        )
    elif not _comparable(start, run.metadata.launch_time):
        return (
            None,
            None,
            (
                "one clock has a time zone and the other is host local time, so they cannot be "
                "compared; state the capture's start in run time" + _OFFSET_HINT
            ),
            "",
        )
    else:
        offset_s = (start - run.metadata.launch_time).total_seconds()
        note = "placed by its timestamps against the run's launch time"
    if run_end_s is None:
        return offset_s, None, None, note + "; the run's end is unknown, overlap not checked"
    overlap = min(offset_s + span_s, run_end_s) - max(offset_s, 0.0)
    if overlap <= 0:
        return (
            None,
            0.0,
            (
                f"no time overlap: the capture spans run time {offset_s:.0f} to "
                f"{offset_s + span_s:.0f} s, the run 0 to {run_end_s:.0f} s"
            ),
            "",
        )
    coverage = overlap / run_end_s if run_end_s > 0 else None
    return offset_s, coverage, None, note


def _capture_kind(path: Path) -> str:
    return capture_kind(path) or COMPILE  # a log with compiler lines, or read_source says why


@writes_project
def attach_capture(
    root: Path,
    run_id: str,
    path: Path,
    *,
    offset_s: float | None = None,
    instance_type: str | None = None,
    progress: Progress | None = None,
    cancel: CancelCheck | None = None,
) -> AttachOutcome:
    """Import one capture and attach it to ``run_id`` (rules in the module docstring)."""
    path = Path(path)
    run = load_run(root, run_id)
    facts = run_facts(run)
    existing = load_captures(root)
    steps = Steps(str(path), progress, cancel)
    kind = _capture_kind(path)
    try:
        if kind == COMPILE:
            source = read_source(path)
            summary = compile_summary(read_lines(source))
            if not summary.found:
                raise InputFileError(
                    str(path),
                    "no Neuron compiler lines and not a utilization capture",
                    expected="a neuron-monitor JSON capture, an nvidia-smi CSV capture or a "
                    "training log with NEURON_CC_WRAPPER lines",
                )
            sha256, fmt = source.sha256, "neuron-compiler-log"
            start, span = (
                summary.start_time,
                max((i.end_s or i.start_s or 0.0 for i in summary.items), default=0.0),
            )
            has_clock, telemetry = start is not None, None
            instance_id = captured_type = None
        else:
            loader = import_neuron_monitor if kind == "neuron-monitor" else import_nvidia_smi
            telemetry = loader(path, steps)
            meta = telemetry.metadata
            sha256, fmt, start, span = meta.sha256, meta.format, meta.start_time, telemetry.span_s
            has_clock = meta.time_source != TelemetryTime.LINE_ORDER
            instance_id, captured_type = meta.instance_id, meta.instance_type
    except UserError as error:
        return AttachOutcome(str(path), FAILED, str(error))
    capture_id = sha256[:CAPTURE_ID_LENGTH]
    same = existing.filter((pl.col("sha256") == sha256) & (pl.col("run_id") == run_id))
    if not same.is_empty():
        return AttachOutcome(str(path), DUPLICATE, "already attached to this run", capture_id)
    if captured_type and instance_type and captured_type != instance_type:
        return AttachOutcome(
            str(path),
            MISMATCH,
            f"captured on another instance type ({captured_type}) than the run's "
            f"({instance_type}); not attached",
            kind=kind,
        )
    others = existing.filter((pl.col("run_id") == run_id) & pl.col("instance_id").is_not_null())[
        "instance_id"
    ].unique()
    if instance_id and others.len() and instance_id not in others.to_list():
        return AttachOutcome(
            str(path),
            MISMATCH,
            f"captured on instance {instance_id}, but this run's other captures come from "
            f"{', '.join(others.to_list())}; not attached",
            kind=kind,
        )
    placed, coverage, problem, note = _placement(
        run, facts.total_s, start, span, offset_s, has_clock
    )
    if problem is not None:
        return AttachOutcome(str(path), MISMATCH, problem + "; not attached", kind=kind)
    if kind == COMPILE:
        coverage = None  # a compiler log covers its compilations, not a share of the run
    metadata_json = summary_to_json(summary) if kind == COMPILE else telemetry.metadata.to_json()
    row = pl.DataFrame(
        [
            {
                "capture_id": capture_id,
                "run_id": run_id,
                "kind": COMPILE if kind == COMPILE else UTILIZATION,
                "format": fmt,
                "source": stored_source(root, str(path)),
                "sha256": sha256,
                "imported_at": dt.datetime.now(dt.UTC),
                "offset_s": placed,
                "coverage": coverage,
                "instance_id": instance_id,
                "instance_type": captured_type,
                "note": note,
                "metadata_json": metadata_json,
            }
        ],
        schema=CAPTURES_SCHEMA,
    )
    updated = pl.concat([existing, row])
    steps.at(0.99)  # the last moment a cancel is honoured: from here on the capture is stored
    written: Path | None = None
    if telemetry is not None:
        written = samples_path(root, capture_id)
        samples = telemetry.samples
        atomic_write_with(written, lambda handle: samples.write_parquet(handle), root=root)
    try:
        atomic_write_with(
            captures_path(root), lambda handle: updated.write_parquet(handle), root=root
        )
    except BaseException:
        if written is not None and existing.filter(pl.col("capture_id") == capture_id).is_empty():
            with contextlib.suppress(OSError, UserError):
                remove_file(written, root=root)
        raise
    steps.at(1.0)
    message = note + (f"; covers {coverage:.0%} of the run" if coverage is not None else "")
    return AttachOutcome(str(path), ATTACHED, message, capture_id, row["kind"][0], placed, coverage)


def run_telemetry(root: Path, run_id: str) -> Telemetry | None:
    """All utilization captures of a run merged on the run's clock (offset 0), or None.

    Devices of different captures are kept apart by prefixing them with the capture id.
    """
    rows = load_captures(root, run_id).filter(pl.col("kind") == UTILIZATION)
    if rows.is_empty():
        return None
    parts = []
    metas = []
    for capture_id, offset in rows.select("capture_id", "offset_s").iter_rows():
        telemetry = load_telemetry(root, capture_id)
        metas.append(telemetry.metadata)
        prefix = "" if rows.height == 1 else f"{capture_id[:6]}:"
        parts.append(
            telemetry.samples.with_columns(
                pl.col("t_s") + (offset or 0.0), (pl.lit(prefix) + pl.col("device")).alias("device")
            )
        )
    first = metas[0]
    merged = dataclasses.replace(
        first,
        devices=sum(m.devices for m in metas),
        reports=sum(m.reports for m in metas),
        gap_reports=sum(m.gap_reports for m in metas),
        notes=tuple(note for m in metas for note in m.notes),
    )
    return Telemetry(pl.concat(parts).sort("t_s"), merged)


def run_compile_summary(root: Path, run_id: str) -> CompileSummary | None:
    rows = load_captures(root, run_id).filter(pl.col("kind") == COMPILE)
    if rows.is_empty():
        return None
    return summary_from_json(rows["metadata_json"][-1])


def compile_recurrence_of(root: Path, run_ids: Sequence[str]) -> CompileRecurrence:
    """Recurring vs one-off compile time over repeated runs (e.g. a run set), taken in launch
    order; runs without an attached compiler log are left out (their compilation is unknown)."""
    dated = []
    for order, run_id in enumerate(run_ids):
        summary = run_compile_summary(root, run_id)
        if summary is None:
            continue
        launch = load_run(root, run_id).metadata.launch_time or summary.start_time
        key = launch.replace(tzinfo=None) if launch is not None else dt.datetime.max
        dated.append((key, order, summary))
    dated.sort(key=lambda item: (item[0], item[1]))
    return compile_recurrence([summary for _, _, summary in dated])


@dataclass(frozen=True)
class RunTelemetryDetail:
    """What the run detail shows next to the timeline."""

    utilization: UtilizationReport | None
    compile: CompileSummary | None
    verdict: Verdict
    mfu: Mfu


def timeline_compile_s(run: ImportedRun) -> float | None:
    """Compile time from the run log's own compile_start/compile_stop rows, when it has them."""
    tl = run.timeline.filter(pl.col("kind").is_in([Kind.COMPILE_START, Kind.COMPILE_STOP]))
    tl = tl.filter(pl.col("t_s").is_not_null())
    if tl.is_empty():
        return None
    paired = tl.with_columns(
        pl.when(
            (pl.col("kind") == Kind.COMPILE_STOP) & (pl.col("kind").shift(1) == Kind.COMPILE_START)
        )
        .then(pl.col("t_s") - pl.col("t_s").shift(1))
        .alias("d")
    )
    return float(paired["d"].drop_nulls().sum())


def run_limit(
    root: Path, run_id: str, run: ImportedRun, facts: RunFacts
) -> tuple[str | None, float | None]:
    """What limits an already loaded run, and its steady-window utilization (for the estimate).

    ``None`` where the verdict cannot name a limit or no capture measures utilization.
    """
    telemetry = run_telemetry(root, run_id)
    verdict = run_verdict(
        facts,
        telemetry,
        0.0,
        compile=run_compile_summary(root, run_id),
        timeline_compile_s=timeline_compile_s(run),
    )
    steady_pct = None
    if telemetry is not None:
        report = utilization_report(
            telemetry, 0.0, facts.total_s, facts.steady_start_s, facts.steady_end_s
        )
        if report.steady is not None:
            steady_pct = report.steady.mean_pct
    return (str(verdict.limit) if verdict.limit is not None else None), steady_pct


def run_detail(
    root: Path,
    run_id: str,
    facts: RunFacts | None = None,
    *,
    parameters_billion: float | None = None,
    instance_type: str | None = None,
    instance_count: int = 1,
    precision: str = "bf16",
) -> RunTelemetryDetail:
    """Utilization (steady window and whole run), compile telemetry, verdict and MFU of a run.

    ``facts`` may be passed in when the caller derived them with the project's goal
    (``trntui.store.facts.derive_facts``); otherwise they are derived without it.
    """
    run = load_run(root, run_id)
    facts = facts or run_facts(run)
    telemetry = run_telemetry(root, run_id)
    compile = run_compile_summary(root, run_id)
    utilization = None
    if telemetry is not None:
        utilization = utilization_report(
            telemetry, 0.0, facts.total_s, facts.steady_start_s, facts.steady_end_s
        )
    verdict = run_verdict(
        facts, telemetry, 0.0, compile=compile, timeline_compile_s=timeline_compile_s(run)
    )
    captured_type = None
    if telemetry is not None:
        captured_type = telemetry.metadata.instance_type
    mfu = run_mfu(
        parameters_billion,
        facts.steady_tokens_per_s,
        instance_type or captured_type,
        instance_count,
        precision,
    )
    return RunTelemetryDetail(utilization, compile, verdict, mfu)
