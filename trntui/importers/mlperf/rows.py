"""Timeline rows (intervals, progress with the work done, evaluations, the log's own rate),
the facts and protocol the log states, and its set-up phases.
"""

from __future__ import annotations

from typing import Any

from trntui.core.mlperf_rules import SAMPLES, STEPS, TOKENS, BenchmarkRules
from trntui.core.timeline import Kind
from trntui.importers._base import json_number, json_whole
from trntui.importers.mlperf.progress import (
    TRAINING_STATS,
    VALIDATION_STATS,
    training_stats,
    work_position,
)
from trntui.importers.mlperf.records import FACT_KEYS_SKIPPED, INTERVAL_KEYS, MAX_FACT_CHARS


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
        row["step"] = json_whole(done)  # None beyond what a step counter can be
        row["samples"] = done * per_unit if per_unit else None
    else:
        if float(done).is_integer():
            row["epoch"] = json_whole(done)
        row["samples"] = done * per_unit if per_unit else None


def setup_phases_of(events: list[dict[str, Any]]) -> dict[str, float]:
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
            if number is not None and name not in (TRAINING_STATS, VALIDATION_STATS):
                phases[str(name)] = number
    return phases


def evaluations_of(
    events: list[dict[str, Any]], rules: BenchmarkRules | None, unit: str, base: float
) -> dict[int, dict[str, Any]]:
    """One evaluation per ``eval_accuracy`` line, except where lines name their ``metric``
    (several per evaluation, as Stable Diffusion's FID and CLIP): those are one evaluation per
    work count, as MLCommons' checker aggregates them, kept at the line of the target's metric
    (the benchmark's, else the first named) with

    * ``t_s_ms``: when its last metric line was printed (the result is verified once every
      metric the target needs is known, whatever order the lines came in);
    * ``missed``: why it cannot reach the target although its own metric might (another
      metric the benchmark requires misses, or was never printed), else ``None``;
    * ``position``: the work evaluated.
    """
    named = [
        (i, e) for i, e in enumerate(events)
        if e["key"] == "eval_accuracy" and isinstance(e["metadata"].get("metric"), str)
    ]  # fmt: skip
    primary = rules.metric_name if rules is not None else None
    if primary is None or all(e["metadata"]["metric"] != primary for _, e in named):
        primary = named[0][1]["metadata"]["metric"] if named else None
    groups: dict[Any, list[dict[str, Any]]] = {}
    for _, event in named:
        groups.setdefault(work_position(event, unit, base), []).append(event)
    evaluations: dict[int, dict[str, Any]] = {}
    for index, event in enumerate(events):
        if event["key"] != "eval_accuracy":
            continue
        metric = event["metadata"].get("metric")
        if primary is not None and metric not in (None, primary):
            continue
        position = work_position(event, unit, base)
        group = groups.get(position, [event]) if metric is not None else [event]
        missed = None
        for requirement in rules.also if rules is not None and metric is not None else ():
            values = [
                _metric(e) for e in group if e["metadata"].get("metric") == requirement.metric
            ]
            value = next((v for v in values if v is not None), None)
            if value is None:
                missed = f"{requirement.metric} not evaluated (the target needs it)"
            elif not requirement.met_by(value):
                missed = f"{requirement.metric} {value:.4g} (the target needs {requirement.text()})"
        evaluations[index] = {
            "t_s_ms": max(e["time_ms"] for e in group),
            "missed": missed,
            "position": position,
        }
    return evaluations


def rows_of(
    events: list[dict[str, Any]],
    keep: set[int],
    unit: str,
    per_unit: float | None,
    progress: tuple[str | None, dict[int, float]],
    evaluations: dict[int, dict[str, Any]],
) -> list[dict[str, Any]]:
    """Timeline rows: intervals, progress (with the work done at each), evaluations (each
    with the work it evaluated, at the time its last metric was printed; ``status`` says why
    one cannot reach the target: ``evaluations_of``).

    Training ``tracked_stats`` (the log's own rate) are attached to the progress row they
    report on, the nearest in time.
    """
    t0_ms = min(e["time_ms"] for e in events)
    progress_key, done = progress
    rows: list[dict[str, Any]] = []
    progress_rows: list[dict[str, Any]] = []
    stats: list[tuple[float, dict[str, Any]]] = []
    for index, event in enumerate(events):
        key = event["key"]
        if key in ("run_start", "run_stop") and index not in keep:
            continue
        row: dict[str, Any] = {"t_s": (event["time_ms"] - t0_ms) / 1000.0, "line": event["line"]}
        if key == "tracked_stats":
            value = training_stats(event)
            if value is not None:
                stats.append((row["t_s"], value))
            continue
        if key == "eval_accuracy":
            evaluation = evaluations.get(index)
            if evaluation is None:
                continue
            row["kind"] = str(Kind.EVAL)
            row["metric"] = _metric(event)
            row["t_s"] = (evaluation["t_s_ms"] - t0_ms) / 1000.0
            row["status"] = evaluation["missed"]
            if evaluation["position"] is not None and progress_key != key:
                _with_work(row, evaluation["position"], unit, per_unit)
            if progress_key == key and index in done:
                step_row = {"t_s": row["t_s"], "line": row["line"], "kind": str(Kind.STEP)}
                _with_work(step_row, done[index], unit, per_unit)
                progress_rows.append(step_row)
                rows.append(step_row)
        elif key in INTERVAL_KEYS:
            row["kind"] = key
            if key == "run_stop":
                status = event["metadata"].get("status")
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
        nearest["throughput"] = json_number(value.get(TRAINING_STATS))
    return sorted(rows, key=lambda r: r["t_s"])


def facts_of(events: list[dict[str, Any]]) -> dict[str, str]:
    facts: dict[str, str] = {}
    for event in events:
        key = event["key"]
        if key in INTERVAL_KEYS or key in FACT_KEYS_SKIPPED or key in facts:
            continue
        value = event.get("value")
        if isinstance(value, dict | list):
            continue
        facts[key] = str(value)[:MAX_FACT_CHARS]
    return facts


def protocol_of(
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
