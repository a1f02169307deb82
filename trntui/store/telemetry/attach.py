"""Attaching a capture to a run (``attach_capture``): placed by time overlap and instance,
checked before anything is written, stored all-or-nothing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path

import polars as pl

from trntui.core.compile_telemetry import compile_summary
from trntui.core.errors import InputFileError, UserError
from trntui.core.inventory import is_instance_type
from trntui.core.run_facts import run_facts
from trntui.core.timeline import ImportedRun
from trntui.core.utilization import TelemetryTime
from trntui.importers import capture_kind
from trntui.importers._base import CancelCheck, Progress, Steps, read_lines, read_source
from trntui.importers.neuron_monitor import import_neuron_monitor
from trntui.importers.nvidia_smi import import_nvidia_smi
from trntui.store.atomic import atomic_write_with, remove_file
from trntui.store.project import read_inventory, writes_project
from trntui.store.runs import load_run, load_runs, stored_source
from trntui.store.telemetry.captures import (
    ATTACHED,
    CAPTURE_ID_LENGTH,
    CAPTURES_SCHEMA,
    COMPILE,
    DUPLICATE,
    FAILED,
    MISMATCH,
    OFFSET_HINT,
    UTILIZATION,
    AttachOutcome,
    captures_path,
    load_captures,
    samples_path,
    summary_to_json,
)


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
                "checked; state where it starts in run time" + OFFSET_HINT
            ),
            "",
        )
    elif run.metadata.launch_time is None:
        return (
            None,
            None,
            (
                "the run's log has no absolute time, so the overlap cannot be checked; state the "
                "capture's start in run time" + OFFSET_HINT
            ),
            "",
        )
    elif not _comparable(start, run.metadata.launch_time):
        return (
            None,
            None,
            (
                "one clock has a time zone and the other is host local time, so they cannot be "
                "compared; state the capture's start in run time" + OFFSET_HINT
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


def _run_instance_type(root: Path, set_name: str) -> str | None:
    """The instance type of the project's target measured by the run's set (one type among
    the targets measured by it), else None."""
    try:
        targets = read_inventory(root).inventory.targets
    except UserError:
        return None  # an inventory that does not read names no type: nothing to compare
    types = {t.instance_type for t in targets if t.run_set == set_name}
    return types.pop() if len(types) == 1 else None


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
    runs = load_runs(root)
    run = load_run(root, run_id, runs)
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
    if instance_type is None:
        set_name = runs.filter(pl.col("run_id") == run_id)["set_name"][0]
        instance_type = _run_instance_type(root, set_name)
    label_note = ""
    if captured_type and not is_instance_type(captured_type):
        label_note = f"; the capture names its instance {captured_type!r}, not an instance type"
    elif captured_type and instance_type and captured_type != instance_type:
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
    facts = run_facts(run)  # only its length is needed, and only from here
    placed, coverage, problem, note = _placement(
        run, facts.total_s, start, span, offset_s, has_clock
    )
    if problem is not None:
        return AttachOutcome(str(path), MISMATCH, problem + "; not attached", kind=kind)
    if kind == COMPILE:
        coverage = None  # a compiler log covers its compilations, not a share of the run
    metadata_json = summary_to_json(summary) if telemetry is None else telemetry.metadata.to_json()
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
    message += label_note
    elsewhere = sorted(
        set(existing.filter((pl.col("sha256") == sha256) & (pl.col("run_id") != run_id))["run_id"])
    )
    if elsewhere:
        # Allowed (one capture can span runs that followed each other on one machine), but
        # rarely meant: say so, so a capture given to the wrong run is noticed.
        message += (
            f"; note: also attached to run {', '.join(elsewhere)}, whose time it overlaps too"
        )
    return AttachOutcome(str(path), ATTACHED, message, capture_id, row["kind"][0], placed, coverage)
