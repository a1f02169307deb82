"""Hugging Face ``Trainer`` console output (transformers, and optimum-neuron's
``NeuronTrainer``, which is a ``Trainer``): what a job's captured stdout and stderr hold.

What the Trainer prints (``transformers/trainer.py``, ``trainer_callback.py``):

- at each ``train()`` call, with ``log_level="info"``, a header: ``***** Running training
  *****``, ``Num examples``, ``Num Epochs``, ``Num update steps per epoch`` (5.x),
  ``Total train batch size (w. parallel, distributed & accumulation)``, ``Total optimization
  steps``; a resumed call adds ``Resuming training from checkpoint with epoch E and global step
  N`` (5.x) or ``Continuing training from global step N`` (4.x);
- one tqdm bar over the optimization steps (``ProgressCallback``: no label, ``total`` = the
  total optimization steps), updated at each step's end and redrawn after every message;
- one Python dict per logging step (``{'loss': ..., 'learning_rate': ..., 'epoch': ...}``;
  since 5.x every float as a 4-significant-digit string), one per evaluation
  (``{'eval_loss': ..., 'eval_runtime': ..., 'epoch': ...}``, after an evaluation bar of its
  own), and a closing one (``{'train_runtime': ..., 'train_samples_per_second': ...,
  'train_steps_per_second': ..., 'train_loss': ...}``); with ``include_num_input_tokens_seen``
  each carries ``num_input_tokens_seen``;
- ``Saving model checkpoint to ...`` before each save.

The clock is the training bar's: its elapsed time, whole seconds since the ``train()`` call
started (the bar is created right after ``train_runtime``'s start). The dicts carry no clock
of their own: each event takes the time of the bar's next draw (an upper bound, one draw
later at most). A second ``train()`` in the same file (a resumed job appended to its log) is
a new attempt with a new bar, whose clock is laid after the last time of the one before: the
time between attempts (the job's downtime) is not in the log and is left out (the clock is
then rebuilt, as ``TimeSource.REBUILT`` says).

Rules read from that:

- Progress is the training bar's step counter; a counter that goes back is a restart (the
  stated resume step is its checkpoint load). Each step's time is its first draw (later
  draws of the same step are redraws). Draws are kept at least ``MIN_INTERVAL_S`` apart:
  the bar's clock has whole seconds, so an interval of ten seconds or more carries at most a
  tenth of error, and the steady rules see paces, not rounding.
- Useful work is counted in the log's own units: samples from the header's total batch per
  step (an epoch's last partial batch counted once per epoch, where the header states the
  examples and the steps per epoch), or tokens where the dicts state ``num_input_tokens_seen``
  (then the rows are the logging steps that state them); never tqdm's it/s.
- An evaluation dict is an evaluation of the metric (``eval_loss`` first, else the first
  ``eval_<metric>``) that lasted its ``eval_runtime``; a checkpoint save lasts from the draw
  before its line to the draw after it (an upper bound: that gap includes one step).
- Neuron compiler lines (``||NEURON_CC_WRAPPER||: Call compiler with cmd``, ``Compiler status
  PASS``/``FAIL``) are compilation, not training: a compile starts no earlier than the draw
  before its line and ends no later than the draw after its status line. Compilation before the
  first training step is the run's compile phase (training starts when it ends).
- The closing dict ends the run (the job finished its ``train()``); its ``train_runtime`` and
  ``train_samples_per_second`` are checked against the bar's clock and the counted samples,
  and a disagreement over ``CHECK_TOLERANCE`` is a note with its figures.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource
from trntui.importers._base import Steps, no_events_error, read_source, rows_timeline
from trntui.importers.launch import context_lines, launcher_size
from trntui.importers.terminal import bar_draws, console_records, number, spaced

NAME = "hf-console"
MIN_INTERVAL_S = 10.0
"""The shortest interval between two kept draws, in the bar's whole seconds."""
CHECK_TOLERANCE = 0.03
"""How far HF's own summary may differ from the derived figures before a note says so."""

_SNIFF = re.compile(r"(?m)\*{5} Running training \*{5}|^\{'(?:loss|eval_loss|train_runtime)': ")
_DICT = re.compile(r"\{'[A-Za-z_/][^']*': .*\}")
_DICT_PAIR = re.compile(r"'([^']+)': ('[^']*'|\"[^\"]*\"|[^,{}]+)")
_HEADER = "***** Running training *****"
_FIELDS = {
    "Num examples": "num_examples",
    "Num Epochs": "num_epochs",
    "Num update steps per epoch": "steps_per_epoch",
    "Instantaneous batch size per device": "per_device_batch_size",
    "Total train batch size (w. parallel, distributed & accumulation)": "total_batch_size",
    "Gradient Accumulation steps": "gradient_accumulation_steps",
    "Total optimization steps": "max_steps",
    "Number of trainable parameters": "trainable_parameters",
}
_RESUMED = re.compile(
    r"Resuming training from checkpoint with epoch \d+ and global step (\d+)"
    r"|Continuing training from global step (\d+)"
)
_COMPILE_START = "Call compiler with cmd"
_COMPILE_STATUS = re.compile(r"Compiler status (PASS|FAIL)")
_CACHED = "Using a cached neff"
_EVAL_BOOKKEEPING = {"eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "epoch"}
_SUMMARY_KEYS = {"train_samples_per_second", "train_steps_per_second", "train_loss"}
_MARKERS = (
    "{'",
    "*****",
    " = ",
    "Resuming training",
    "Continuing training",
    "Saving model checkpoint",
    "NEURON_CC_WRAPPER",
    "NCC_WRAPPER",
    "Compiler status",
    "Traceback (most recent call last)",
)
_EXPECTED = "Hugging Face Trainer output: a tqdm bar over the steps and {'loss': ...} lines"


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def parse_dict(text: str) -> dict[str, str] | None:
    """The ``'key': value`` pairs of a dict the Trainer printed, values as printed (quotes
    removed); None when ``text`` holds none."""
    match = _DICT.search(text)
    if match is None:
        return None
    pairs = {key: value.strip().strip("'\"") for key, value in _DICT_PAIR.findall(match.group())}
    return pairs or None


def _loss(text: str | None) -> float | None:
    """A logged loss as printed, ``nan`` and ``inf`` kept (a diverged run)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def quality_metric(keys: set[str]) -> str | None:
    """``eval_loss`` when evaluated, else the first other ``eval_<metric>`` (sorted)."""
    metrics = sorted(key for key in keys if key.startswith("eval_") and key not in
                     _EVAL_BOOKKEEPING)  # fmt: skip
    if "eval_loss" in metrics:
        return "eval_loss"
    return metrics[0] if metrics else None


@dataclass
class _Attempt:
    """One ``train()`` call: its header, its bar and what it printed."""

    offset_s: float
    header: dict[str, int] = field(default_factory=dict)
    resumed_step: int | None = None
    resumed_line: int | None = None
    draws: list[tuple[int, int, float]] = field(default_factory=list)
    """(line, step, bar seconds) of the first draw of each step."""
    last_s: float = 0.0
    compiled_before_first_step: bool = False


@dataclass
class _Reading:
    """What a pass over the console found."""

    attempts: list[_Attempt] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    dicts: list[tuple[int, dict[str, str], float | None]] = field(default_factory=list)
    """(line, dict, the clock of the draw after it) of every Trainer dict."""
    cache_hits: int = 0
    compiles: int = 0


def _train_total(draws: pl.DataFrame, records: pl.DataFrame) -> int | None:
    """The training bar's total: the header's total optimization steps, else the total of the
    unlabelled bar drawn most often (evaluation bars are short)."""
    stated = records.filter(
        pl.col("text").str.contains("Total optimization steps = ", literal=True)
    )["text"]
    for text in stated:
        found = _header_field(text)
        if found is not None:
            return found[1]
    plain = draws.filter(pl.col("desc") == "")
    if plain.is_empty():
        return None
    counts = plain.group_by("total").len().sort(["len", "total"], descending=True)
    return int(counts["total"][0])


def _header_field(text: str) -> tuple[str, int] | None:
    for key, name in _FIELDS.items():
        at = text.find(key + " = ")
        if at >= 0:
            digits = re.match(r"[\d,]+", text[at + len(key) + 3 :])
            if digits:
                return name, int(digits.group().replace(",", ""))
    return None


def _read(records: pl.DataFrame, draws: pl.DataFrame, total: int | None) -> _Reading:
    """One pass over the records in order: attempts, their draws, and every event placed on
    the bar's clock (events between draws wait for the next draw's time)."""
    train = draws.filter((pl.col("desc") == "") & (pl.col("total") == (total or -1)))
    draw_at = {order: (n, seconds) for order, n, seconds in
               train.select("order", "n", "elapsed_s").iter_rows()}  # fmt: skip
    marked = pl.any_horizontal(pl.col("text").str.contains(m, literal=True) for m in _MARKERS)
    interesting = records.with_row_index("order").filter(
        pl.col("order").is_in(list(draw_at)) | marked
    )
    reading = _Reading()
    attempt: _Attempt | None = None
    pending: list[dict[str, Any]] = []
    last_bar_s: float | None = None
    open_compile = False

    def now() -> float:
        return attempt.offset_s + (last_bar_s or 0.0) if attempt else 0.0

    def new_attempt() -> _Attempt:
        nonlocal last_bar_s
        offset = max((a.offset_s + a.last_s for a in reading.attempts), default=0.0)
        last_bar_s = None
        started = _Attempt(offset_s=offset)
        reading.attempts.append(started)
        return started

    for order, line, text in interesting.select("order", "line", "text").iter_rows():
        if order in draw_at:
            n, seconds = draw_at[order]
            if attempt is None or (
                last_bar_s is not None and seconds < last_bar_s - 1.0 and attempt.draws
            ):
                attempt = new_attempt()
            last_bar_s = seconds
            attempt.last_s = max(attempt.last_s, seconds)
            t = attempt.offset_s + seconds
            for event in pending:
                event["t_s"] = t
                event["step"] = n
                reading.events.append(event)
            pending = []
            if n > 0 and (not attempt.draws or n != attempt.draws[-1][1]):
                attempt.draws.append((line, n, seconds))
            text = text[text.find("]") + 1 :]  # what the program wrote after the draw
        if _HEADER in text:
            if attempt is None or attempt.draws or attempt.header:
                attempt = new_attempt()
            continue
        if attempt is None:
            attempt = new_attempt()
        if (found := _header_field(text)) is not None and not attempt.draws:
            attempt.header.setdefault(*found)
            continue
        if (resumed := _RESUMED.search(text)) is not None:
            attempt.resumed_step = int(resumed.group(1) or resumed.group(2))
            attempt.resumed_line = line
            continue
        pairs = parse_dict(text) if "{'" in text else None
        if pairs is not None:
            pending.append({"line": line, "kind": None, "dict": pairs})
            continue
        if _COMPILE_START in text:
            reading.compiles += 1
            open_compile = True
            if not attempt.draws:
                attempt.compiled_before_first_step = True
            reading.events.append({"line": line, "kind": str(Kind.COMPILE_START), "t_s": now()})
        elif (status := _COMPILE_STATUS.search(text)) is not None and open_compile:
            open_compile = False
            pending.append({"line": line, "kind": str(Kind.COMPILE_STOP),
                            "status": status.group(1)})  # fmt: skip
        elif _CACHED in text:
            reading.cache_hits += 1
        elif "Saving model checkpoint" in text:
            reading.events.append({"line": line, "kind": str(Kind.CHECKPOINT_START), "t_s": now()})
            pending.append({"line": line, "kind": str(Kind.CHECKPOINT_STOP)})
        elif "Traceback (most recent call last)" in text:
            reading.events.append({"line": line, "kind": str(Kind.ERROR), "t_s": now()})
    for event in pending:  # nothing drawn after them: the last time known
        event["t_s"] = now() if last_bar_s is not None else None
        reading.events.append(event)
    return reading


def samples_at(step: int, header: dict[str, int]) -> float | None:
    """Samples trained after ``step`` optimization steps: the total batch per step, an
    epoch's last partial batch counted as what is left of its examples (where the header
    states the examples and the steps per epoch)."""
    batch = header.get("total_batch_size")
    if not batch:
        return None
    examples, per_epoch = header.get("num_examples"), header.get("steps_per_epoch")
    if examples and per_epoch and per_epoch * batch > examples:
        epochs, within = divmod(step, per_epoch)
        return float(epochs * examples + min(within * batch, examples))
    return float(step * batch)


def _dict_rows(
    reading: _Reading, metric: str | None
) -> tuple[list[dict[str, Any]], list[tuple[int, float | None]], dict[str, str]]:
    """Evaluation and run-stop rows from the dicts, the logged losses (line, loss), and the
    closing summary (empty when the run did not finish)."""
    rows: list[dict[str, Any]] = []
    losses: list[tuple[int, float | None]] = []
    summary: dict[str, str] = {}
    for event in reading.events:
        pairs = event.get("dict")
        if pairs is None:
            continue
        base = {"line": event["line"], "t_s": event.get("t_s"), "step": event.get("step")}
        if _SUMMARY_KEYS & pairs.keys():
            summary = pairs
            rows.append({**base, "kind": str(Kind.RUN_STOP), "status": "success",
                         "duration_s": number(pairs.get("train_runtime"))})  # fmt: skip
        elif metric is not None and metric in pairs:
            rows.append({**base, "kind": str(Kind.EVAL), "metric": number(pairs[metric])})
            runtime = number(pairs.get("eval_runtime"))
            if runtime is not None:
                rows.append({**base, "kind": str(Kind.EVAL_STOP), "duration_s": runtime})
        elif "loss" in pairs:
            losses.append((event["line"], _loss(pairs["loss"])))
    return rows, losses, summary


def _step_rows(reading: _Reading, tokens: bool) -> list[dict[str, Any]]:
    """The progress rows: kept draws of the training bar with their samples, or, where the
    dicts count tokens, the logging steps that state them; plus each attempt's start (the
    run start of the first, unless it compiled before its first step) and stated resume."""
    rows: list[dict[str, Any]] = []
    for index, attempt in enumerate(reading.attempts):
        if not attempt.draws:
            continue
        first_line = attempt.draws[0][0]
        if index == 0 and not attempt.compiled_before_first_step:
            rows.append({"line": first_line, "kind": str(Kind.RUN_START), "t_s": 0.0})
        if index > 0 and attempt.resumed_step is not None:
            rows.append({"line": attempt.resumed_line, "kind": str(Kind.CHECKPOINT_LOAD),
                         "t_s": attempt.offset_s, "step": attempt.resumed_step})  # fmt: skip
        if tokens:
            continue
        for index in spaced(attempt.draws, MIN_INTERVAL_S):
            line, step, seconds = attempt.draws[index]
            rows.append({"line": line, "kind": str(Kind.STEP), "t_s": attempt.offset_s + seconds,
                         "step": step, "samples": samples_at(step, attempt.header)})  # fmt: skip
    if tokens:
        for event in reading.events:
            pairs = event.get("dict") or {}
            if "loss" in pairs and "num_input_tokens_seen" in pairs and event.get("step"):
                rows.append({"line": event["line"], "kind": str(Kind.STEP), "t_s": event["t_s"],
                             "step": event["step"], "loss": _loss(pairs["loss"]),
                             "tokens": number(pairs["num_input_tokens_seen"])})  # fmt: skip
    return rows


def _with_losses(rows: list[dict[str, Any]], losses: list[tuple[int, float | None]]) -> None:
    """Each logged loss on the first step row at or after its line (the dict follows the
    draw of its step)."""
    steps = sorted((row["line"], i) for i, row in enumerate(rows) if row["kind"] == Kind.STEP)
    lines = [line for line, _ in steps]
    for line, loss in losses:
        at = bisect.bisect_left(lines, line)
        if at < len(steps) and "loss" not in rows[steps[at][1]]:
            rows[steps[at][1]]["loss"] = loss


def _disagreement(label: str, stated: float, derived: float, how: str) -> str | None:
    """A note when HF's summary and the derived figure differ by more than the tolerance."""
    if not stated or not math.isfinite(stated):
        return None
    gap = derived / stated - 1.0
    if abs(gap) <= CHECK_TOLERANCE:
        return None
    return f"HF's summary {label} is {stated:,.6g}; {how} gives {derived:,.6g} ({gap:+.1%})"


def _summary_checks(
    reading: _Reading, summary: dict[str, str], tokens: bool
) -> tuple[list[str], dict[str, str]]:
    """The closing summary against the bar's clock and the counted work of the attempt that
    printed it (``train_runtime`` counts that ``train()`` call only)."""
    notes: list[str] = []
    facts: dict[str, str] = {}
    closing = next((e for e in reversed(reading.events) if e.get("dict") is summary), None)
    if not summary or closing is None or not reading.attempts:
        return notes, facts
    attempt = reading.attempts[-1]
    runtime = number(summary.get("train_runtime"))
    for key in ("train_runtime", "train_samples_per_second", "train_steps_per_second",
                "train_tokens_per_second", "train_loss"):  # fmt: skip
        if number(summary.get(key)) is not None:
            facts[f"hf_{key}"] = summary[key]
    if runtime is None or closing.get("t_s") is None:
        return notes, facts
    bar_s = closing["t_s"] - attempt.offset_s
    checks = [_disagreement("train_runtime (s)", runtime, bar_s, "the training bar's clock")]
    final, start = closing.get("step"), attempt.resumed_step or 0
    if final is not None:
        rate = number(summary.get("train_samples_per_second"))
        done = samples_at(final, attempt.header)
        before = samples_at(start, attempt.header)
        if rate is not None and done is not None and before is not None:
            checks.append(
                _disagreement(
                    "train_samples_per_second",
                    rate,
                    (done - before) / runtime,
                    "the header's samples per step over train_runtime",
                )
            )
        steps_rate = number(summary.get("train_steps_per_second"))
        if steps_rate is not None:
            checks.append(_disagreement("train_steps_per_second", steps_rate,
                                        (final - start) / runtime,
                                        "the bar's steps over train_runtime"))  # fmt: skip
    logged = next((e for e in reversed(reading.events) if "train_tokens_per_second" in
                   (e.get("dict") or {}) and e.get("t_s") is not None), None)  # fmt: skip
    if logged is not None and attempt.resumed_step is None and logged["t_s"] > attempt.offset_s:
        pairs = logged["dict"]
        seen = number(pairs.get("num_input_tokens_seen"))
        rate = number(pairs.get("train_tokens_per_second"))
        if seen is not None and rate is not None:
            checks.append(_disagreement("train_tokens_per_second (its last logging step)", rate,
                                        seen / (logged["t_s"] - attempt.offset_s),
                                        "the tokens seen over the bar's clock"))  # fmt: skip
    notes.extend(note for note in checks if note is not None)
    if not notes:
        notes.append(
            f"HF's summary agrees with the bar's clock and the counted work within "
            f"{CHECK_TOLERANCE:.0%} (train_runtime {runtime:,.6g} s, bar {bar_s:,.0f} s)"
        )
    return notes, facts


def import_hf_console(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    records = console_records(source)
    steps.at(0.3)
    draws = bar_draws(records)
    reading = _read(records, draws, _train_total(draws, records))
    steps.at(0.6)
    keys: set[str] = set()
    for event in reading.events:
        keys.update(event.get("dict") or ())
    has_bar = any(attempt.draws for attempt in reading.attempts)
    if not has_bar and not keys:
        raise no_events_error(source, "Hugging Face Trainer", _EXPECTED)
    metric = quality_metric(keys)
    tokens = has_bar and "num_input_tokens_seen" in keys
    rows = _step_rows(reading, tokens)
    dict_rows, losses, summary = _dict_rows(reading, metric)
    if not tokens:
        _with_losses(rows, losses)
    rows.extend(dict_rows)
    rows.extend(
        {key: event.get(key) for key in ("line", "kind", "t_s", "status")}
        for event in reading.events
        if event.get("kind") is not None
    )
    if not has_bar and summary:
        for row in rows:
            if row["kind"] == Kind.RUN_STOP:
                row["throughput"] = number(summary.get("train_samples_per_second"))
    rows.sort(key=lambda row: row["line"] or 0)
    frame = rows_timeline(rows)
    steps.at(0.8)
    header = next((a.header for a in reading.attempts if a.header), {})
    notes, facts = _summary_checks(reading, summary, tokens)
    facts.update({name: str(value) for name, value in header.items()})
    if reading.compiles or reading.cache_hits:
        facts["compiler_invocations"] = str(reading.compiles)
        facts["compiler_cache_hits"] = str(reading.cache_hits)
    attempts = sum(1 for attempt in reading.attempts if attempt.draws)
    clock = TimeSource.NONE if not has_bar else (
        TimeSource.WALL_CLOCK if attempts <= 1 else TimeSource.REBUILT)  # fmt: skip
    batch = header.get("total_batch_size")
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=clock,
        throughput_unit="tokens/s" if tokens else "samples/s",
        quality_metric=metric,
        quality_higher_is_better=False if metric == "eval_loss" else None,
        samples_per_step=float(batch) if batch else None,
        planned_steps=header.get("max_steps"),
        facts=facts,
        system=launcher_size(context_lines(records.head(5_000)), source.name),
        protocol={"global_batch_size": str(batch)} if batch else {},
        not_derivable=_not_derivable(has_bar, attempts, header),
        notes=tuple(notes) + _clock_notes(has_bar, attempts, reading),
    )
    steps.at(0.95)
    return ImportedRun(frame, metadata)


def _not_derivable(has_bar: bool, attempts: int, header: dict[str, int]) -> tuple[str, ...]:
    said = [
        "time before the training bar (loading the model and data): the console prints "
        "no clock before it",
        "system size (the Trainer prints none: state it, or keep the launcher line in the log)",
        "sequence length (the Trainer prints none)",
    ]
    if not has_bar:
        said += [
            "per-step wall clock (no progress bar: the dicts carry no time)",
            "warm-up and steady-state window",
            "launch to verified result time",
        ]
    if attempts > 1:
        said.append("the downtime between attempts (each attempt's bar starts its own clock)")
    if "total_batch_size" not in header:
        said.append(
            "samples per step (no 'Total train batch size' header: log_level info prints it)"
        )
    return tuple(said)


def _clock_notes(has_bar: bool, attempts: int, reading: _Reading) -> tuple[str, ...]:
    if not has_bar:
        return ("no training bar: throughput is the summary's whole-run average",)
    said = [
        "clock: the training bar's elapsed time (whole seconds since train() started); a "
        "line between draws takes the next draw's time",
    ]
    if attempts > 1:
        said.append(
            f"{attempts} attempts: each later one is laid right after the one before (the "
            "time between them is not in the log)"
        )
    if reading.compiles:
        said.append(
            f"{reading.compiles} Neuron compilations, {reading.cache_hits} cache hits: each "
            "compile is bounded by the bar draws around its lines"
        )
    return tuple(said)
