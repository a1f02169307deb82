"""PyTorch Lightning, NeMo and NxD Training console output: the training progress bar.

The bar (Lightning's ``TQDMProgressBar``; NeMo's ``MegatronProgressBar`` keeps its layout and
drops the rate): ``Epoch 0:   3%|▎  | 30/1000 [02:10<1:10:00, 0.23it/s, v_num=0,
reduced_train_loss=2.340, global_step=29.0, consumed_samples=1.63e+6]``. One bar serves the
whole fit and is reset at each epoch (its counter and its clock start again); ``n`` counts the
epoch's batches (Lightning) or optimizer steps (NeMo). The postfix holds the metrics logged
with ``prog_bar=True``, each printed with three significant digits (``1.63e+6`` once it is
shorter so: then it is no exact count). A validation pass draws its own bar
(``Validation DataLoader 0: ...``) whose elapsed time is the pass's duration; a sanity check
before training is not training. ``ModelCheckpoint(verbose=True)`` prints ``Epoch E, global
step S: 'val_loss' reached 6.20345 (best ...), saving model to ...`` with five decimals. A
process that resumes prints ``Restoring states from the checkpoint path at <path>`` (the
path names ``step=N`` in Lightning's and NeMo's checkpoint names).

Rules read from that:

- The clock of the bar: an epoch's draws are at the elapsed time of that epoch's bar, laid
  after the epoch before (the moments between two epochs are not on it: ``REBUILT``); draws are
  kept at least ``MIN_INTERVAL_S`` apart (the bar's clock has whole seconds).
- Progress is the step within the fit: the epoch's counter added to where the epoch before
  ended (a resumed process starts from its checkpoint's ``step=N``: a counter that goes back
  is a restart). A process resumed in mid-epoch draws the rest of that epoch under the bar's
  first label, ``Training: |  | 51/? [...]`` (Lightning does not start the epoch again, so the
  bar is never renamed ``Epoch N`` and knows no total), its counter the batch within the epoch.
  Work is in samples where the postfix states ``consumed_samples`` and
  ``global_step`` exactly (samples per step = their ratio), never from the bar's it/s.
- ```Trainer.fit` stopped: `max_epochs=3` reached`` (or ``max_steps``) is Lightning's word that
  the fit ran to its limit: the run finished there.
- A validation bar is an evaluation lasting its elapsed time, ending at the next training
  draw; its result is the checkpoint line's value (five decimals), else the first metric
  named ``val...`` in the postfix after it (three significant digits, said so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource
from trntui.importers._base import Steps, no_events_error, read_source, rows_timeline
from trntui.importers.launch import context_lines, launcher_size
from trntui.importers.terminal import (
    bar_draws,
    console_records,
    exact_number,
    number,
    postfix_pairs,
    spaced,
)

NAME = "lightning"
MIN_INTERVAL_S = 10.0
_SNIFF = re.compile(r"Epoch \d+:\s+\d{1,3}%\|[^|\n]*\|\s*\d+/\d+ \[")
_EPOCH = re.compile(r"Epoch (\d+)$")
_CHECKPOINT = re.compile(
    r"Epoch (\d+), global step (\d+): '([^']+)' (?:reached ([-+\d.eE]+)|was not in top)"
)
_STOPPED = re.compile(r"`Trainer\.fit` stopped: `(max_epochs|max_steps)=(\d+)` reached")
_RESTORE = re.compile(r"Restoring states from the checkpoint path at (\S+)")
_STEP_IN_PATH = re.compile(r"step=(\d+)")
_RESUMED_EPOCH = "Training"
"""The bar's label before an epoch names it (Lightning's ``train_description``): a process
resumed in mid-epoch skips ``on_train_epoch_start``, so that epoch's rest is drawn under it."""
_LOSSES = ("reduced_train_loss", "train_loss", "loss")
_EXPECTED = "a Lightning progress bar ('Epoch 0: ...| n/total [elapsed<...')"


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


@dataclass
class _Reading:
    rows: list[dict[str, Any]] = field(default_factory=list)
    samples_per_step: list[float] = field(default_factory=list)
    metric: str | None = None
    metric_exact: bool = False
    restarts: int = 0
    epochs: int = 0
    planned_steps: int | None = None


def _loss(pairs: dict[str, str]) -> float | None:
    for key in _LOSSES:
        if key in pairs:
            try:
                return float(pairs[key])
            except ValueError:
                return None
    return None


def _batch(pairs: dict[str, str], reading: _Reading) -> None:
    """Samples per step from an exact ``consumed_samples`` / ``global_step`` pair."""
    samples = exact_number(pairs.get("consumed_samples"))
    step = exact_number(pairs.get("global_step"))
    if samples and step and step > 0:
        reading.samples_per_step.append(samples / step)


def _val_metric(pairs: dict[str, str]) -> tuple[str, float] | None:
    for key, value in pairs.items():
        if key.startswith("val") and (parsed := number(value)) is not None:
            return key, parsed
    return None


def _read_bars(records: pl.DataFrame, draws: pl.DataFrame) -> _Reading:
    """The bar's draws in order: training draws kept ``MIN_INTERVAL_S`` apart on the chained
    epoch clock, validations as evaluations, checkpoint lines as results."""
    reading = _Reading()
    marks = records.with_row_index("order").filter(
        pl.col("text").str.contains("global step", literal=True)
        | pl.col("text").str.contains("Restoring states", literal=True)
        | pl.col("text").str.contains("`Trainer.fit` stopped", literal=True)
    )
    events: list[tuple[int, str, tuple[Any, ...]]] = sorted(
        [(o, "draw", tuple(row)) for o, *row in draws.select(
            "order", "line", "desc", "n", "elapsed_s", "rest").iter_rows()]
        + [(o, "mark", (line, text)) for o, line, text in marks.select(
            "order", "line", "text").iter_rows()],
        key=lambda item: item[0],
    )  # fmt: skip
    offset = 0.0  # clock of the current epoch's start
    epoch_seconds = 0.0  # the current epoch's last elapsed time
    epoch_key: tuple[int, int] | None = None  # (process, epoch) of the current bar
    process = 0
    base = 0  # steps before the current epoch
    last_n = 0
    val_s: float | None = None
    pending: list[dict[str, Any]] = []
    candidate: dict[str, Any] | None = None  # the bar's value of the last validation
    restored: int | None = None

    epoch_draws: list[tuple[int, int, float]] = []  # (line, step, seconds) of this epoch
    losses: list[float | None] = []

    def now() -> float:
        return offset + epoch_seconds

    def flush() -> None:
        """The epoch's kept draws as step rows, on the chained clock."""
        for index in spaced(epoch_draws, MIN_INTERVAL_S):
            line, step, seconds = epoch_draws[index]
            reading.rows.append({"line": line, "kind": str(Kind.STEP), "t_s": offset + seconds,
                                 "step": step, "loss": losses[index]})  # fmt: skip
        epoch_draws.clear()
        losses.clear()

    for _, kind, item in events:
        if kind == "mark":
            line, text = item
            if (match := _STOPPED.search(text)) is not None:
                # Lightning's own word that the fit ran to its limit: the run finished
                reading.rows.append({"line": line, "kind": str(Kind.RUN_STOP), "t_s": now(),
                                     "step": base + last_n, "status": "success"})  # fmt: skip
                if match.group(1) == "max_steps":
                    reading.planned_steps = int(match.group(2))
            elif (match := _RESTORE.search(text)) is not None:
                process += 1
                reading.restarts += 1
                step_match = _STEP_IN_PATH.search(match.group(1))
                restored = int(step_match.group(1)) if step_match else None
                if restored is not None:
                    reading.rows.append({"line": line, "kind": str(Kind.CHECKPOINT_LOAD),
                                         "t_s": now(), "step": restored})  # fmt: skip
            elif (match := _CHECKPOINT.search(text)) is not None:
                if match.group(4) is None:  # "was not in top k": the bar's value stands
                    candidate = None
                    continue
                # the checkpoint line's five decimals replace the bar's three digits
                reading.metric, reading.metric_exact = match.group(3), True
                exact = {"line": line, "kind": str(Kind.EVAL), "step": int(match.group(2)),
                         "metric": float(match.group(4))}  # fmt: skip
                if candidate is not None:
                    candidate.update(exact, t_s=candidate["t_s"])
                    candidate = None
                else:
                    pending.append(exact)
            continue
        line, desc, n, seconds, rest = item
        epoch_match = _EPOCH.search(desc)
        if epoch_match is None and desc != _RESUMED_EPOCH:
            if "Validation" in desc and "Sanity" not in desc:
                val_s, candidate = seconds, None
            continue
        key = (process, int(epoch_match.group(1)) if epoch_match else -1)
        if key != epoch_key:
            flush()
            if epoch_key is not None:
                offset += epoch_seconds
                base += last_n
            epoch_key, epoch_seconds, last_n = key, 0.0, 0
            reading.epochs += epoch_match is not None
        if restored is not None and n > 0:
            # the first step after the restore is the checkpoint's step + 1: where this
            # epoch's counter stands then places the epoch in the fit
            base, restored = restored - (n - 1), None
        epoch_seconds = max(epoch_seconds, seconds)
        t = offset + seconds
        pairs = postfix_pairs(rest)
        _batch(pairs, reading)
        if val_s is not None:
            pending.append({"line": line, "kind": str(Kind.EVAL_STOP), "duration_s": val_s})
            if (found := _val_metric(pairs)) is not None:
                reading.metric = reading.metric or found[0]
                if found[0] == reading.metric:
                    candidate = {"line": line, "kind": str(Kind.EVAL), "step": base + n,
                                 "metric": found[1]}  # fmt: skip
                    pending.append(candidate)
            val_s = None
        for event in pending:
            event["t_s"] = t
            reading.rows.append(event)
        pending = []
        if n <= 0 or n == last_n:
            continue
        last_n = n
        epoch_draws.append((line, base + n, seconds))
        losses.append(_loss(pairs))
    flush()
    for event in pending:
        event["t_s"] = now()
        reading.rows.append(event)
    return reading


def import_lightning(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    records = console_records(source)
    steps.at(0.3)
    draws = bar_draws(records)
    reading = _read_bars(records, draws)
    steps.at(0.7)
    if not any(row["kind"] == Kind.STEP for row in reading.rows):
        raise no_events_error(source, "Lightning progress", _EXPECTED)
    per_step = sorted(reading.samples_per_step)
    batch = per_step[len(per_step) // 2] if per_step else None
    whole = round(batch) if batch and abs(batch - round(batch)) < 1e-6 else None
    if whole:
        for row in reading.rows:
            if row["kind"] == Kind.STEP:
                row["samples"] = float(row["step"] * whole)
    reading.rows.sort(key=lambda row: row["line"])
    metric = reading.metric
    notes = ["clock: the bar's elapsed time per epoch (whole seconds), epochs laid end to end"]
    if metric and not reading.metric_exact:
        notes.append(f"{metric} is read from the bar: three significant digits")
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.REBUILT,
        throughput_unit="samples/s" if whole else "steps/s",
        quality_metric=metric,
        quality_higher_is_better=False if metric and "loss" in metric else None,
        samples_per_step=float(whole) if whole else None,
        planned_steps=reading.planned_steps,
        facts={"epochs_drawn": str(reading.epochs)},
        system=launcher_size(context_lines(records.head(5_000)), source.name),
        protocol={"global_batch_size": str(whole)} if whole else {},
        not_derivable=(
            "the run's plan and its end (the bar states each epoch's total only)",
            "time before the first epoch and between epochs",
            "samples (no exact consumed_samples and global_step in the log)"
            if not whole
            else "tokens (no sequence length in the log)",
            "system size (state it, or keep the launcher line in the log)",
            "checkpoint save time",
        ),
        notes=tuple(notes),
    )
    steps.at(0.95)
    return ImportedRun(rows_timeline(reading.rows), metadata)
