"""The MLLOG records of a log: each decoded and checked (a key, a plausible ``time_ms``), the
same event from several ranks kept once, and the run_start / run_stop that bound the timed run.
"""

from __future__ import annotations

import json
import re
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.safe_json import parse_json
from trntui.importers._base import Steps, json_number

NAME = "mlperf"
MARKER = ":::MLLOG"
INTERVAL_KEYS = {
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
FACT_KEYS_SKIPPED = {"weights_initialization", "cache_clear", "tracked_stats", "eval_accuracy"}
MAX_FACT_CHARS = 200
_LATEST_MS = 32_503_680_000_000.0
_RECORD = '":::MLLOG {"key": ..., "time_ms": ..., ...}"'

_SNIFF = re.compile(r':::MLLOG\s*\{\s*"')


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def _decode(payload: str, path: str, line: int) -> Any:
    """The JSON object at the start of ``payload``; text glued after it is ignored."""
    start = payload.find("{")
    if start < 0:
        raise InputFileError(
            path,
            "the MLLOG record is not valid JSON (truncated line?)",
            line=line,
            expected=_RECORD,
        )
    return parse_json(
        payload[start:],
        path=path,
        line=line,
        expected=_RECORD,
        prefix=True,
        what="the MLLOG record (truncated line?)",
    )


def parse_events(path: str, frame: pl.DataFrame, steps: Steps) -> list[dict[str, Any]]:
    events = []
    total = max(1, frame.height)
    for index, (line, payload) in enumerate(frame.iter_rows()):
        if index % 2000 == 0:
            steps.at(0.2 + 0.5 * index / total)
        event = _decode(payload, path, line)
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


def deduplicate(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
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


def timed_run(events: list[dict[str, Any]]) -> tuple[int | None, int | None, int]:
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
