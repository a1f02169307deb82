"""MLPerf Training result logs (``:::MLLOG {json}`` lines, as written by ``mlperf_logging``).

Interpretation follows MLCommons' own tools (``compliance_checker``, ``result_summarizer``):

* a line counts when it carries ``:::MLLOG`` followed by a JSON object, whatever prefix a
  launcher added (``0: ``, ``[1,0]<stdout>:``) and whatever text another process glued after
  it; every other line is ignored; a log with bytes that are not UTF-8 is read as Latin-1, as
  the checker reads it (MLLOG records are ASCII JSON, so no number can be misread);
* the same event printed by several ranks is one event (identical key, time, value and
  metadata);
* the timed run is the last ``run_start`` before the first ``run_stop`` *in file order* (some
  implementations stamp ``run_stop`` earlier than lines printed before it); a run without
  ``run_stop`` is not a completed run, and only ``metadata.status == "success"`` is a success,
  and only when an evaluation met the benchmark's target (``mlperf_rules``);
* the run time is ``run_stop.time_ms - run_start.time_ms``; ``init_*`` is untimed set-up.

How progress is read (the unit differs by benchmark and by implementation version):

* The unit is samples where the log states ``samples_count``, steps where it states only
  ``step_num`` (samples = steps x ``global_batch_size``), else what the benchmark's epoch keys
  count (``mlperf_rules``): epochs (samples = epochs x ``train_samples``), samples or tokens.
  Epoch keys whose blocks are whole multiples of ``train_samples`` count samples (unet3d from
  v3.1 on). No sample count is made up where the log cannot support it.
* Cumulative work is trusted from evaluations and the run stop (they state the work done so
  far); block lines are not, because implementations disagree on what a block's count means
  (its start, its end, or its length). A block's end is the first such count after its stop.
* Progress rows are the epoch stops, else the block stops, else the evaluations, whichever
  gives at least two points; work must rise from one row to the next (a result file holds one
  run, so a count that does not rise is not a restart and is dropped with a note).
* ``tracked_stats`` with a ``throughput`` are the log's own training rate, attached to the
  progress row they report on; the set-up kinds (``before_model_init``, ``warmup_time``, ...)
  are set-up phases, ``validation_throughput`` belongs to evaluation.
* The system size and the job wrapper's clock come from the lines around the records
  (``importers.launch``).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import statistics
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.mlperf_rules import EPOCHS, SAMPLES, STEPS, TOKENS, BenchmarkRules, rules_for
from trntui.core.mlperf_score import benchmark_of
from trntui.core.safe_json import parse_json
from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource
from trntui.importers._base import (
    Steps,
    json_number,
    no_events_error,
    read_lines,
    read_source,
    rows_timeline,
)
from trntui.importers.launch import (
    context_lines,
    first_size,
    job_clock,
    launcher_size,
    submission_size,
    sysjson_size,
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


def _parse_events(path: str, frame: pl.DataFrame, steps: Steps) -> list[dict[str, Any]]:
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


_TRAINING_STATS = "throughput"
_VALIDATION_STATS = "validation_throughput"
_TRUSTED = ("eval_start", "eval_accuracy", "eval_stop", "run_stop")
"""Events whose count is the work done so far in every implementation seen."""
_EPOCH_KEYS = ("epoch_num", "first_epoch_num")


def _work_unit(
    events: list[dict[str, Any]], rules: BenchmarkRules | None, per_epoch: float | None
) -> str:
    """The unit the log counts progress in (module docstring)."""
    metas = [e["metadata"] for e in events]
    if any("samples_count" in m for m in metas):
        return SAMPLES
    has_epoch_keys = any(key in m for m in metas for key in _EPOCH_KEYS)
    if not has_epoch_keys and any("step_num" in m for m in metas):
        return STEPS
    if rules is not None and rules.epoch_unit != EPOCHS:
        return rules.epoch_unit
    counts = [
        json_number(e["metadata"].get("epoch_count")) for e in events if e["key"] == "block_start"
    ]
    known = [c for c in counts if c]
    if (
        per_epoch
        and per_epoch > 1
        and known
        and all(c >= per_epoch and c % per_epoch == 0 for c in known)
    ):
        return SAMPLES
    return EPOCHS


def _epoch_base(events: list[dict[str, Any]]) -> float:
    """The number of the first epoch (0 or 1: implementations differ)."""
    for event in events:
        meta = event["metadata"]
        if event["key"] == "epoch_start" and json_number(meta.get("epoch_num")) is not None:
            return json_number(meta["epoch_num"]) or 0.0
        if event["key"] == "block_start" and json_number(meta.get("first_epoch_num")) is not None:
            return json_number(meta["first_epoch_num"]) or 0.0
    return 0.0


def _position(event: dict[str, Any], unit: str, base: float) -> float | None:
    """Work done when ``event`` happened, as it states it (``None`` when it does not).

    Counts of samples, steps or tokens are positions already. A whole epoch number names an
    epoch: an epoch stop, evaluation or run stop after epoch ``n`` means ``n - base + 1``
    epochs done, a block start at epoch ``n`` means ``n - base`` done before it. Fractional
    epoch numbers (DLRM, GNN) are positions, counted from the first epoch's number.
    """
    meta = event["metadata"]
    key = event["key"]
    if unit == SAMPLES and json_number(meta.get("samples_count")) is not None:
        return json_number(meta["samples_count"])
    if unit == STEPS:
        return json_number(meta.get("step_num"))
    number = json_number(meta.get("first_epoch_num" if key == "block_start" else "epoch_num"))
    if number is None or key == "epoch_start":
        return None
    if unit != EPOCHS:
        return number
    if not float(number).is_integer():
        return number - base if number >= base else number
    return number - base if key == "block_start" else number - base + 1


def _first_epoch(event: dict[str, Any], unit: str, base: float) -> float | None:
    """Work done before a block starts, from its ``first_epoch_num`` (never from a block's
    ``samples_count``, whose meaning differs between implementations)."""
    first = json_number(event["metadata"].get("first_epoch_num"))
    if first is None or (unit in (SAMPLES, STEPS) and "samples_count" in event["metadata"]):
        return None
    return first - base if unit == EPOCHS else first


def _block_end(events: list[dict[str, Any]], index: int, unit: str, base: float) -> float | None:
    """Work done at the progress stop ``events[index]``: the first count an evaluation or the
    run stop states after it, else the next block's first epoch, else its own block's first
    epoch plus count, else its own count when that is above its start's."""
    stop = events[index]
    start_key = stop["key"].replace("_stop", "_start")
    for event in events[index + 1 :]:
        if event["key"] in _TRUSTED:
            position = _position(event, unit, base)
            if position is not None:
                return position
        if event["key"] == start_key:
            if unit != STEPS and (position := _first_epoch(event, unit, base)) is not None:
                return position
            break
        if event["key"] == "run_stop":
            break
    own_start = next((e for e in reversed(events[:index]) if e["key"] == start_key), None)
    if own_start is None:
        return None
    first = _first_epoch(own_start, unit, base)
    count = json_number(own_start["metadata"].get("epoch_count"))
    if first is not None and count is not None and unit != STEPS:
        return first + count
    began, ended = _position(own_start, unit, base), _position(stop, unit, base)
    return ended if began is not None and ended is not None and ended > began else None


def _metric(event: dict[str, Any]) -> float | None:
    """An evaluation's value; a benchmark that reports several at once (Mask R-CNN's
    ``{"BBOX": ..., "SEGM": ...}``) is read by its first one."""
    value = event.get("value")
    if isinstance(value, dict):
        value = next((v for v in value.values() if json_number(v) is not None), None)
    return json_number(value)


def _with_work(row: dict[str, Any], done: float | None, unit: str, per_unit: float | None) -> None:
    """Put the work done at ``row`` in the timeline's columns (samples where they can be
    known: epochs x samples per epoch, steps x global batch)."""
    if done is None:
        return
    if unit == SAMPLES:
        row["samples"] = done
    elif unit == TOKENS:
        row["tokens"] = done
    elif unit == STEPS:
        row["step"] = round(done)
        row["samples"] = done * per_unit if per_unit else None
    else:
        if float(done).is_integer():
            row["epoch"] = round(done)
        row["samples"] = done * per_unit if per_unit else None


def _training_stats(event: dict[str, Any]) -> dict[str, Any] | None:
    value = event.get("value")
    if isinstance(value, dict) and _TRAINING_STATS in value:
        return value
    return None


def _setup_phases(events: list[dict[str, Any]]) -> dict[str, float]:
    """Set-up timings that NeMo logs print as ``tracked_stats`` before the run starts
    (``before_model_init``, ``warmup_time``, ...): seconds by name."""
    phases: dict[str, float] = {}
    for event in events:
        if event["key"] == "run_start":
            break
        value = event.get("value")
        if event["key"] != "tracked_stats" or not isinstance(value, dict):
            continue
        for name, seconds in value.items():
            number = json_number(seconds)
            if number is not None and name not in (_TRAINING_STATS, _VALIDATION_STATS):
                phases[str(name)] = number
    return phases


def _progress(
    events: list[dict[str, Any]], unit: str, base: float, stop: int | None
) -> tuple[str | None, dict[int, float]]:
    """Which events are progress rows and the work done at each (strictly rising).

    Epoch stops, else block stops, else evaluations: the first that gives two points. Lines
    after the run stop (in file order) are not part of the timed run."""
    end = len(events) if stop is None else stop
    for key in ("epoch_stop", "block_stop", "eval_accuracy"):
        done: dict[int, float] = {}
        for index, event in enumerate(events[:end]):
            if event["key"] != key:
                continue
            position = (
                _position(event, unit, base)
                if key == "eval_accuracy"
                else _block_end(events, index, unit, base)
            )
            if position is not None:
                done[index] = position
        if len(set(done.values())) >= 2:
            return key, done
    return None, {}


def _implied_samples_per_epoch(
    events: list[dict[str, Any]], done: dict[int, float]
) -> float | None:
    """Samples per epoch that the log's own training rate implies (its ``tracked_stats``
    throughput x the time between two progress rows / their epochs apart), to check a
    stated ``train_samples`` against; ``None`` when the log prints no rate."""
    stats = [
        (e["time_ms"], value[_TRAINING_STATS])
        for e in events
        if (value := _training_stats(e)) is not None and json_number(value[_TRAINING_STATS])
    ]
    points = sorted((events[i]["time_ms"], work) for i, work in done.items())
    implied = []
    for (t0, w0), (t1, w1) in itertools.pairwise(points):
        near = [rate for at, rate in stats if t0 < at <= t1 + 1000]
        if near and w1 > w0:
            implied.append(near[-1] * (t1 - t0) / 1000.0 / (w1 - w0))
    return statistics.median(implied) if implied else None


def _rising(done: dict[int, float]) -> tuple[dict[int, float], int]:
    """Keep the progress rows whose work rises above every row before them."""
    kept: dict[int, float] = {}
    highest = 0.0
    for index in sorted(done):
        if done[index] > highest:
            kept[index] = done[index]
            highest = done[index]
    return kept, len(done) - len(kept)


def _rows(
    events: list[dict[str, Any]],
    keep: set[int],
    unit: str,
    per_unit: float | None,
    progress: tuple[str | None, dict[int, float]],
) -> list[dict[str, Any]]:
    """Timeline rows: intervals, progress (with the work done at each), evaluations.

    Training ``tracked_stats`` (the log's own rate) are attached to the progress row they
    report on, the nearest in time.
    """
    t0_ms = min(e["time_ms"] for e in events)
    progress_key, done = progress
    first_metric = next(
        (e["metadata"]["metric"] for e in events if e["key"] == "eval_accuracy"
         and isinstance(e["metadata"].get("metric"), str)),
        None,
    )  # fmt: skip
    rows: list[dict[str, Any]] = []
    progress_rows: list[dict[str, Any]] = []
    stats: list[tuple[float, dict[str, Any]]] = []
    for index, event in enumerate(events):
        key = event["key"]
        if key in ("run_start", "run_stop") and index not in keep:
            continue
        meta = event["metadata"]
        row: dict[str, Any] = {"t_s": (event["time_ms"] - t0_ms) / 1000.0, "line": event["line"]}
        if key == "tracked_stats":
            value = _training_stats(event)
            if value is not None:
                stats.append((row["t_s"], value))
            continue
        if key == "eval_accuracy":
            if first_metric is not None and meta.get("metric") not in (None, first_metric):
                continue
            row["kind"] = str(Kind.EVAL)
            row["metric"] = _metric(event)
            if progress_key == key and index in done:
                step_row = {"t_s": row["t_s"], "line": row["line"], "kind": str(Kind.STEP)}
                _with_work(step_row, done[index], unit, per_unit)
                progress_rows.append(step_row)
                rows.append(step_row)
        elif key in _INTERVAL_KEYS:
            row["kind"] = key
            if key == "run_stop":
                status = meta.get("status")
                row["status"] = str(status) if status is not None else None
            elif key == "run_start":
                _with_work(row, 0.0, unit, per_unit)
            if key == progress_key and index in done:
                _with_work(row, done[index], unit, per_unit)
                progress_rows.append(row)
        else:
            continue
        rows.append(row)
    for at, value in stats:
        if not progress_rows:
            break
        nearest = min(progress_rows, key=lambda r: abs(r["t_s"] - at))
        nearest["throughput"] = json_number(value.get(_TRAINING_STATS))
    return sorted(rows, key=lambda r: r["t_s"])


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


def _protocol(
    facts: dict[str, str], benchmark: str, rules: BenchmarkRules | None
) -> dict[str, str]:
    """The protocol facts the log states (``PROTOCOL_FACTS``), by their MLPerf keys."""
    protocol = {"quality_metric": "eval_accuracy"}
    if facts.get("submission_benchmark"):
        # Only what the log states: a folder's name is no protocol fact.
        protocol["benchmark"] = facts["submission_benchmark"]
    if rules is not None:
        protocol["quality_metric"] = f"eval_accuracy ({rules.metric})"
        if rules.target_text():
            protocol["quality_target"] = str(rules.target_text())
    for name, key in (("global_batch_size", "global_batch_size"),
                      ("sequence_length", "max_sequence_length")):  # fmt: skip
        if key in facts:
            protocol[name] = facts[key]
    return protocol


def import_mlperf(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    steps.at(0.05)
    lines = read_lines(source, latin1=True)
    steps.at(0.15)
    marked = pl.col("text").str.contains(MARKER, literal=True)
    records = lines.filter(marked).select(
        "line", pl.col("text").str.split_exact(MARKER, 1).struct.field("field_1").str.strip_chars()
    )
    if records.is_empty():
        raise no_events_error(source, "MLPerf", '":::MLLOG {json}" lines')
    around = context_lines(lines.filter(~marked))
    events = _parse_events(source.name, records, steps)
    events, duplicates = _deduplicate(events)
    steps.at(0.75)

    start_index, stop_index, run_starts = _timed_run(events)
    facts = _facts(events)
    benchmark = benchmark_of(facts, str(path))
    rules = rules_for(benchmark)
    per_epoch = json_number(_first_value(events, "samples_per_epoch")) or json_number(
        _first_value(events, "train_samples")
    )
    unit = _work_unit(events, rules, per_epoch)
    per_unit = (
        json_number(_first_value(events, "global_batch_size")) if unit == STEPS else per_epoch
    )
    key, done = _progress(events, unit, _epoch_base(events), stop_index)
    done, dropped = _rising(done)
    implied = _implied_samples_per_epoch(events, done) if unit == EPOCHS else None
    unsupported = implied is not None and per_unit and not 0.5 <= per_unit / implied <= 2.0
    keep = {i for i in (start_index, stop_index) if i is not None}
    timeline = rows_timeline(
        _rows(events, keep, unit, None if unsupported else per_unit, (key, done))
    )

    notes = []
    if duplicates:
        notes.append(
            f"{duplicates} duplicate MLLOG records (same event from several ranks) dropped"
        )
    if run_starts > 1:
        notes.append(f"{run_starts} run_start records; the last one before run_stop starts the run")
    if stop_index is None:
        notes.append("no run_stop: the run did not finish, so it is not a completed run")
    if dropped:
        notes.append(f"{dropped} progress records whose work did not rise were left out")
    if unsupported:
        notes.append(
            f"samples per epoch left unknown: the log states {per_unit:,.0f} (train_samples), "
            f"its own training rate implies about {implied:,.0f}"
        )
    if unit in (EPOCHS, STEPS) and not per_unit:
        what = "train_samples" if unit == EPOCHS else "global_batch_size"
        notes.append(f"progress is counted in {unit} and the log states no {what}")
    submitted, problem = submission_size(path)
    if problem:
        notes.append(problem)
    system = first_size(
        sysjson_size(around, source.name), submitted, launcher_size(around, source.name)
    )
    times = [e["time_ms"] for e in events]
    t0_ms = min(times)
    clock = job_clock(around, source.name, t0_ms / 1000.0, max(times) / 1000.0)
    steps.at(0.95)
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.WALL_CLOCK,
        launch_time=dt.datetime.fromtimestamp(t0_ms / 1000.0, tz=dt.UTC),
        throughput_unit="tokens/s" if unit == TOKENS else f"{SAMPLES}/s",
        quality_metric="eval_accuracy",
        quality_higher_is_better=rules.higher_is_better if rules is not None else None,
        success_means_target_reached=True,
        prints_run_stop=True,
        facts=facts,
        notes=tuple(notes),
        system=system,
        job_clock=clock,
        protocol=_protocol(facts, benchmark, rules),
        setup_phases=_setup_phases(events),
        quality_target_value=rules.target if rules is not None else None,
    )
    return ImportedRun(timeline, metadata)


def _first_value(events: list[dict[str, Any]], key: str) -> Any:
    for event in events:
        if event["key"] == key:
            return event.get("value")
    return None
