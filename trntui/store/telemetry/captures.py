"""The telemetry folder: its layout, the captures table (``CAPTURES_SCHEMA``, one row per
capture), and a capture read back (``load_captures``, ``load_telemetry``).

The telemetry rules (``core.utilization``, ``core.compile_telemetry``) load when a capture is
read back, not with the table: opening a project reads the table only.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import polars as pl

from trntui.core.errors import InputFileError, UserError
from trntui.store.paths import project_path, samples_file
from trntui.store.tables import read_table

T = TypeVar("T")

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

if TYPE_CHECKING:
    from trntui.core.compile_telemetry import CompileSummary
    from trntui.core.utilization import Telemetry

CAPTURES_SCHEMA = pl.Schema(
    {  # type: ignore[arg-type]  # dtype classes and an instance: mypy joins to object
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
    """What attaching one telemetry capture to a run did (``attach_capture``): the outcome and its
    message, and the capture's id, kind and placement on the run."""

    path: str
    outcome: str
    """``attached``, ``mismatch`` (not stored: no overlap, another instance, unknown clock),
    ``duplicate`` (already attached to this run) or ``failed`` (bad file)."""
    message: str
    capture_id: str | None = None
    kind: str | None = None
    """What was attached (``utilization`` or ``compile``); on a mismatch, how the file was
    read (``neuron-monitor``, ``nvidia-smi`` or ``compile``)."""
    offset_s: float | None = None
    coverage: float | None = None
    """Fraction of the run's launch-to-end time the capture covers."""


OFFSET_HINT = " (seconds after the run's start: the attach dialog's Offset, or --offset)"


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
        frame = read_table(
            path,
            CAPTURES_SCHEMA,
            "captures table",
            ids=("capture_id", "capture id"),
            unique=("run_id", "capture_id"),
            twice="its measured time would count twice",
        )
    return frame if run_id is None else frame.filter(pl.col("run_id") == run_id)


def load_telemetry(root: Path, capture_id: str) -> Telemetry:
    from trntui.core.utilization import TELEMETRY_SCHEMA, Telemetry, TelemetryMetadata

    rows = load_captures(root).filter(
        (pl.col("capture_id") == capture_id) & (pl.col("kind") == UTILIZATION)
    )
    if rows.is_empty():
        raise UserError(f"no utilization capture {capture_id!r} in {root}")
    samples = read_table(samples_path(root, capture_id), TELEMETRY_SCHEMA, "samples table")
    return Telemetry(
        samples,
        stored_metadata(root, rows["metadata_json"][0], TelemetryMetadata.from_json),
    )


def stored_metadata(root: Path, text: str, parse: Callable[[str], T]) -> T:
    """A capture's ``metadata_json`` read with ``parse``; text trntui did not write (edited or
    damaged) is refused naming the captures table, never a traceback."""
    try:
        return parse(text)
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise InputFileError(
            str(captures_path(root)),
            f"a capture's metadata cannot be read ({type(error).__name__}: {error})",
            key="metadata_json",
            expected="the JSON trntui wrote when the capture was attached (attach it again)",
        ) from None


def summary_to_json(summary: CompileSummary) -> str:
    data = dataclasses.asdict(summary)
    data["start_time"] = summary.start_time.isoformat() if summary.start_time else None
    return json.dumps(data, sort_keys=True)


def summary_from_json(text: str) -> CompileSummary:
    from trntui.core.compile_telemetry import Compilation, CompileSummary

    data = json.loads(text)
    data["start_time"] = (
        dt.datetime.fromisoformat(data["start_time"]) if data["start_time"] else None
    )
    data["items"] = tuple(Compilation(**item) for item in data.get("items", ()))
    return CompileSummary(**data)
