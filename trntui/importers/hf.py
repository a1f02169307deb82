"""Hugging Face ``trainer_state.json`` (transformers ``Trainer``, optimum-neuron).

``log_history`` holds training entries (``step``, ``epoch``, ``loss``, ``learning_rate``),
evaluation entries (``eval_loss``, ``eval_<metric>``, ``eval_runtime``) and a final summary
(``train_runtime``, ``train_samples_per_second``, ``train_steps_per_second``). optimum-neuron
adds ``train/tokens_per_sec`` and ``train/step_time``.

The file has no per-entry wall clock, so ``t_s`` stays null: warm-up, stalls, init/compile
time and launch-to-result time cannot be derived and are listed in ``not_derivable``. The
run's duration is the summary's ``train_runtime`` (put on the ``run_stop`` row as
``duration_s``) and its throughput is the summary's whole-run average, warm-up included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trntui.core.errors import InputFileError
from trntui.core.safe_json import parse_json
from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource
from trntui.importers._base import (
    Steps,
    decode_text,
    json_number,
    json_whole,
    read_source,
    rows_timeline,
)

NAME = "hf"
_EVAL_BOOKKEEPING = {"eval_runtime", "eval_samples_per_second", "eval_steps_per_second"}


def sniff(head: str) -> bool:
    return head.lstrip().startswith("{") and '"log_history"' in head


def _entry_lines(text: str) -> list[int]:
    """Line number where each ``log_history`` entry starts, for messages and tracing."""
    start = text.find('"log_history"')
    lines = []
    depth = 0
    line = text.count("\n", 0, start) + 1
    in_string = escaped = False
    for char in text[start + len('"log_history"') :]:
        if char == "\n":
            line += 1
        elif in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            if char == "{" and depth == 2:
                lines.append(line)
        elif char in "}]":
            depth -= 1
            if depth == 0:
                break
    return lines


def _quality_metric(history: list[dict[str, Any]]) -> str | None:
    names = [
        key
        for entry in history
        for key in entry
        if key.startswith("eval_") and key not in _EVAL_BOOKKEEPING
    ]
    if "eval_loss" in names:
        return "eval_loss"
    return names[0] if names else None


def import_hf(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    text = decode_text(source)
    state = parse_json(text, path=source.name, expected="a trainer_state.json object")
    steps.at(0.4)
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list) or not all(isinstance(e, dict) for e in history):
        raise InputFileError(
            source.name,
            "no log_history list of objects",
            line=1,
            key="log_history",
            expected='{"log_history": [{"step": ..., "loss": ...}, ...]}',
        )
    if not history:
        raise InputFileError(
            source.name, "log_history is empty", line=1, key="log_history", expected="entries"
        )
    entry_lines = _entry_lines(text)
    metric = _quality_metric(history)
    max_steps = json_whole(state.get("max_steps"))
    global_step = json_whole(state.get("global_step"))
    rows = []
    summary: dict[str, Any] = {}
    summary_line = None
    for index, entry in enumerate(history):
        line = entry_lines[index] if index < len(entry_lines) else None
        base = {"line": line, "step": json_whole(entry.get("step")), "epoch": None}
        if "train_runtime" in entry:
            summary, summary_line = entry, line
            continue
        if metric is not None and metric in entry:
            rows.append({**base, "kind": str(Kind.EVAL), "metric": json_number(entry[metric])})
        elif "loss" in entry or "train/step_time" in entry:
            rows.append(
                {
                    **base,
                    "kind": str(Kind.STEP),
                    "loss": json_number(entry.get("loss")),
                    "step_time_s": json_number(entry.get("train/step_time")),
                    "throughput": json_number(entry.get("train/tokens_per_sec")),
                }
            )
    tokens_unit = any("train/tokens_per_sec" in entry for entry in history)
    finished = max_steps is not None and global_step is not None and global_step >= max_steps
    if summary:
        rows.append(
            {
                "line": summary_line,
                "kind": str(Kind.RUN_STOP),
                "step": json_whole(summary.get("step")) or global_step,
                "duration_s": json_number(summary.get("train_runtime")),
                "throughput": None
                if tokens_unit
                else json_number(summary.get("train_samples_per_second")),
                "status": "success" if finished else None,
            }
        )
    steps.at(0.8)
    frame = rows_timeline(rows)
    facts = {
        key: str(state[key])
        for key in ("max_steps", "global_step", "num_train_epochs", "train_batch_size")
        if key in state and isinstance(state[key], int | float | str)
    }
    for key in ("train_samples_per_second", "train_steps_per_second", "total_flos"):
        if key in summary and json_number(summary[key]) is not None:
            facts[key] = str(summary[key])
    protocol = {"quality_metric": metric} if metric else {}
    batch = _global_batch(summary)
    if batch is not None:
        protocol["global_batch_size"] = str(batch)
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.NONE,
        protocol=protocol,
        throughput_unit="tokens/s" if tokens_unit else "samples/s",
        quality_metric=metric,
        quality_higher_is_better=False if metric == "eval_loss" else None,
        planned_steps=max_steps,
        facts=facts,
        not_derivable=(
            "per-step wall clock (trainer_state.json has none)",
            "warm-up and steady-state window",
            "stalls and waits",
            "init and compile time",
            "checkpoint save and evaluation time",
            "launch to verified result time",
            "system size (trainer_state.json states none: state it for the run set)",
        ),
        notes=("throughput is the whole-run average from the summary, warm-up included",),
    )
    return ImportedRun(frame, metadata)


def _global_batch(summary: dict[str, Any]) -> int | None:
    """Samples per optimizer step, all devices and accumulation included: the summary's
    samples per second over its steps per second, when that is a whole number (the state's
    ``train_batch_size`` is per device)."""
    samples = json_number(summary.get("train_samples_per_second"))
    steps = json_number(summary.get("train_steps_per_second"))
    if not samples or not steps:
        return None
    ratio = samples / steps
    whole = round(ratio)
    return whole if whole >= 1 and abs(ratio - whole) <= 0.0025 * whole else None
