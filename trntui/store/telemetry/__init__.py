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
- a capture from another instance than the run's (its ``instance_type`` against the run's, or
  its ``instance_id`` against captures already attached) is a mismatch. The run's instance type
  is the caller's, else that of the project's target measured by the run's set (one rule for
  the CLI and the app); only instance type names (``family.size``) are compared: a capture that
  labels its instance otherwise (``trn3 (example)``) is attached with a note saying so.

A mismatch is reported and nothing is stored; it is never silently joined. Each file is stored
all-or-nothing: samples file first, then the captures table (both atomic); a failure in between
removes the samples file. Callers hold the project's write lock.

The package, in the order data flows (each module imports only the ones above it):

1. ``captures``: the layout, the captures table and its schema, reading a capture back
   (``load_captures``, ``load_telemetry``).
2. ``attach``: placing a capture on a run's clock and storing it all-or-nothing
   (``attach_capture`` -> ``AttachOutcome``).
3. ``per_run``: what a run's captures say (``run_telemetry``, ``run_compile_summary``,
   ``run_limit``, ``run_detail``).

Every public name is re-exported here: import from ``trntui.store.telemetry``. Each module
loads when one of its names is first used (``trntui.lazy``): reading stored facts needs the
captures table, not the telemetry rules, and attaching brings the importers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trntui.lazy import lazy_exports

if TYPE_CHECKING:
    from trntui.store.telemetry.attach import attach_capture
    from trntui.store.telemetry.captures import (
        ATTACHED,
        CAPTURE_ID_LENGTH,
        CAPTURES_FILE,
        CAPTURES_SCHEMA,
        COMPILE,
        DUPLICATE,
        FAILED,
        MISMATCH,
        SAMPLES_FOLDER,
        TELEMETRY_FOLDER,
        UTILIZATION,
        AttachOutcome,
        captures_path,
        load_captures,
        load_telemetry,
        samples_path,
        summary_from_json,
        summary_to_json,
    )
    from trntui.store.telemetry.per_run import (
        RunTelemetryDetail,
        compile_recurrence_of,
        run_compile_summary,
        run_detail,
        run_limit,
        run_telemetry,
        timeline_compile_s,
    )

_EXPORTS = {
    **dict.fromkeys(
        (
            "ATTACHED", "CAPTURE_ID_LENGTH", "CAPTURES_FILE", "CAPTURES_SCHEMA", "COMPILE",
            "DUPLICATE", "FAILED", "MISMATCH", "SAMPLES_FOLDER", "TELEMETRY_FOLDER",
            "UTILIZATION", "AttachOutcome", "captures_path", "load_captures", "load_telemetry",
            "samples_path", "summary_from_json", "summary_to_json",
        ),
        "captures",
    ),
    **dict.fromkeys(
        (
            "RunTelemetryDetail", "compile_recurrence_of", "run_compile_summary", "run_detail",
            "run_limit", "run_telemetry", "timeline_compile_s",
        ),
        "per_run",
    ),
    "attach_capture": "attach",
}  # fmt: skip
__all__ = [
    "ATTACHED",
    "CAPTURES_FILE",
    "CAPTURES_SCHEMA",
    "CAPTURE_ID_LENGTH",
    "COMPILE",
    "DUPLICATE",
    "FAILED",
    "MISMATCH",
    "SAMPLES_FOLDER",
    "TELEMETRY_FOLDER",
    "UTILIZATION",
    "AttachOutcome",
    "RunTelemetryDetail",
    "attach_capture",
    "captures_path",
    "compile_recurrence_of",
    "load_captures",
    "load_telemetry",
    "run_compile_summary",
    "run_detail",
    "run_limit",
    "run_telemetry",
    "samples_path",
    "summary_from_json",
    "summary_to_json",
    "timeline_compile_s",
]
__getattr__ = lazy_exports(__name__, _EXPORTS)
