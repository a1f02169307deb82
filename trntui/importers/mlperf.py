"""MLPerf Training result logs (``:::MLLOG {json}`` lines, as written by ``mlperf_logging``).

Interpretation follows MLCommons' own tools (``compliance_checker`` and ``result_summarizer``):

* a line counts when it carries ``:::MLLOG`` followed by a JSON object, whatever prefix a
  launcher added (``0: ``, ``[1,0]<stdout>:``); every other line is ignored;
* the same event printed by several ranks is one event (identical key, time, value and
  metadata); events are ordered by ``time_ms`` (stable, so ties keep file order);
* the timed run is the last ``run_start`` before the first ``run_stop``; a run without
  ``run_stop`` is not a completed run, and only ``metadata.status == "success"`` is a success;
* the run time is ``run_stop.time_ms - run_start.time_ms``; ``init_*`` is untimed set-up.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource
from trntui.importers._base import (
    Steps,
    json_number,
    json_whole,
    no_events_error,
    read_lines,
    read_source,
    rows_timeline,
)

NAME = "mlperf"
MARKER = ":::MLLOG"
_INTERVAL_KEYS = {
    "init_start",
    "init_stop",
    "run_start",
    "run_stop",
    "block_start",
    "block_stop",
    "epoch_start",
    "epoch_stop",
    "eval_start",
    "eval_stop",
}
_FACT_KEYS_SKIPPED = {"weights_initialization", "cache_clear", "tracked_stats", "eval_accuracy"}
_MAX_FACT_CHARS = 200
_LATEST_MS = 32_503_680_000_000.0


_SNIFF = re.compile(r':::MLLOG\s*\{\s*"')


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def _parse_events(path: str, frame: pl.DataFrame, steps: Steps) -> list[dict[str, Any]]:
    events = []
    total = max(1, frame.height)
    for index, (line, payload) in enumerate(frame.iter_rows()):
        if index % 2000 == 0:
            steps.at(0.2 + 0.5 * index / total)
        try:
            event = json.loads(payload)
        except (json.JSONDecodeError, RecursionError):
            raise InputFileError(
                path,
                "the MLLOG record is not valid JSON (truncated line?)",
                line=line,
                expected='":::MLLOG {"key": ..., "time_ms": ..., ...}"',
            ) from None
        if not isinstance(event, dict):
            raise InputFileError(
                path, "the MLLOG record is not a JSON object", line=line, expected="{...}"
            )
        key = event.get("key")
        time_ms = json_number(event.get("time_ms"))
        if time_ms is not None and not 0.0 <= time_ms <= _LATEST_MS:
            raise InputFileError(
                path,
                f"time_ms {time_ms!r} is not a plausible time",
                line=line,
                key="time_ms",
                expected="milliseconds since 1970, before the year 3000",
            )
        if not isinstance(key, str) or time_ms is None:
            raise InputFileError(
                path,
                "the MLLOG record lacks a key or a numeric time_ms",
                line=line,
                key="time_ms" if isinstance(key, str) else "key",
                expected="both 'key' (text) and 'time_ms' (milliseconds since the epoch)",
            )
        metadata = event.get("metadata")
        event["metadata"] = metadata if isinstance(metadata, dict) else {}
        event["time_ms"] = time_ms
        event["line"] = line
        events.append(event)
    return events


def _deduplicate(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    seen = set()
    unique = []
    for event in events:
        identity = (
            event["key"],
            event["time_ms"],
            json.dumps(event.get("value"), sort_keys=True),
            json.dumps(event["metadata"], sort_keys=True),
        )
        if identity in seen:
            continue
        seen.add(identity)
        unique.append(event)
    return unique, len(events) - len(unique)


def _timed_run(events: list[dict[str, Any]]) -> tuple[int | None, int | None, int]:
    """Indexes of the run_start and run_stop that bound the timed run, and run_start count."""
    starts = [i for i, e in enumerate(events) if e["key"] == "run_start"]
    stops = [i for i, e in enumerate(events) if e["key"] == "run_stop"]
    if not starts:
        return None, stops[0] if stops else None, 0
    if stops:
        stop = stops[0]
        before = [i for i in starts if i <= stop]
        return (before[-1] if before else starts[0]), stop, len(starts)
    return starts[0], None, len(starts)


def _row(event: dict[str, Any], t0_ms: float, train_samples: float | None) -> dict | None:
    key = event["key"]
    meta = event["metadata"]
    value = event.get("value")
    kind: str | None = None
    row: dict[str, Any] = {
        "t_s": (event["time_ms"] - t0_ms) / 1000.0,
        "line": event["line"],
        "epoch": json_whole(meta.get("epoch_num", meta.get("first_epoch_num"))),
        "samples": json_number(meta.get("samples_count")),
    }
    if key in _INTERVAL_KEYS:
        kind = key
        if key == "run_stop":
            status = meta.get("status")
            row["status"] = str(status) if status is not None else None
        if key == "epoch_stop" and row["samples"] is None and train_samples and row["epoch"]:
            row["samples"] = row["epoch"] * train_samples
    elif key == "eval_accuracy":
        kind = Kind.EVAL
        row["metric"] = json_number(value)
    elif key == "tracked_stats":
        kind = Kind.STEP
        stats = value if isinstance(value, dict) else {}
        row["step"] = json_whole(meta.get("step"))
        row["throughput"] = json_number(stats.get("throughput"))
        row["step_time_s"] = json_number(stats.get("train_step_time"))
    if kind is None:
        return None
    row["kind"] = str(kind)
    return row


def _facts(events: list[dict[str, Any]]) -> dict[str, str]:
    facts: dict[str, str] = {}
    for event in events:
        key = event["key"]
        if key in _INTERVAL_KEYS or key in _FACT_KEYS_SKIPPED or key in facts:
            continue
        value = event.get("value")
        if isinstance(value, dict | list):
            continue
        facts[key] = str(value)[:_MAX_FACT_CHARS]
    return facts


def import_mlperf(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    steps.at(0.05)
    lines = read_lines(source)
    steps.at(0.15)
    records = lines.filter(pl.col("text").str.contains(MARKER, literal=True)).select(
        "line", pl.col("text").str.split_exact(MARKER, 1).struct.field("field_1").str.strip_chars()
    )
    if records.is_empty():
        raise no_events_error(source, "MLPerf", '":::MLLOG {json}" lines')
    events = _parse_events(source.name, records, steps)
    events, duplicates = _deduplicate(events)
    events.sort(key=lambda e: e["time_ms"])
    steps.at(0.75)

    start_index, stop_index, run_starts = _timed_run(events)
    facts = _facts(events)
    train_samples = json_number(_first_value(events, "train_samples"))
    t0_ms = events[0]["time_ms"]
    rows = []
    for index, event in enumerate(events):
        if event["key"] in ("run_start", "run_stop") and index not in (start_index, stop_index):
            continue
        row = _row(event, t0_ms, train_samples)
        if row is not None:
            rows.append(row)
    timeline = rows_timeline(rows)

    notes = []
    if duplicates:
        notes.append(
            f"{duplicates} duplicate MLLOG records (same event from several ranks) dropped"
        )
    if run_starts > 1:
        notes.append(f"{run_starts} run_start records; the last one before run_stop starts the run")
    if stop_index is None:
        notes.append("no run_stop: the run did not finish, so it is not a completed run")
    steps.at(0.95)
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.WALL_CLOCK,
        launch_time=dt.datetime.fromtimestamp(t0_ms / 1000.0, tz=dt.UTC),
        throughput_unit="samples/s",
        quality_metric="eval_accuracy",
        success_means_target_reached=True,
        prints_run_stop=True,
        facts=facts,
        notes=tuple(notes),
    )
    return ImportedRun(timeline, metadata)


def _first_value(events: list[dict[str, Any]], key: str) -> Any:
    for event in events:
        if event["key"] == key:
            return event.get("value")
    return None
