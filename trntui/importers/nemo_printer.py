"""NeMo 2's ``ProgressPrinter`` console output: one plain line per logged training step.

NeMo's ``MegatronStrategy`` puts ``nemo.lightning.pytorch.callbacks.ProgressPrinter`` in place
of Lightning's tqdm bar (``progress_interval``, 1 by default, is its ``log_interval``). It
prints, every ``log_interval`` optimizer steps, ``Training epoch 0, iteration 50/99 | lr:
0.0005 | global_batch_size: 8 | global_step: 50 | reduced_train_loss: 6.262 |
consumed_samples: 408 | train_step_timing in s: 0.6251 | val_loss: 6.26``, and for each
validation batch ``Validation: iteration 1/4``. The rules of that code:

- ``iteration I/T``: ``I`` is the optimizer steps completed in the epoch minus one (the
  strategy's ``current_epoch_step``), ``T`` is ``max_steps`` minus one when ``max_steps`` is
  set: the plan is ``T + 1`` steps.
- The metrics are Lightning's progress-bar metrics. A whole number prints as an integer, any
  other as ``{:.4}`` (four significant digits). Each is the mean over the ``log_interval``
  steps since the last line, except ``global_step`` (the latest): with an interval over 1, a
  counter such as ``consumed_samples`` prints a mean, no count.
- ``global_step`` is what NeMo's strategy logs inside the training step, the steps completed
  before it: the steps done after the line are ``global_step + 1`` (else ``I + 1`` added to
  the epochs before).
- ``train_step_timing in s`` (NeMo's ``TimingCallback``) is the step's time. The lines carry no
  other clock: the run's clock is rebuilt as the running sum of step time x steps per line
  (``REBUILT``); validation, checkpoints and anything between steps are not on it.
- Work: samples are steps x ``global_batch_size`` (what NeMo's data sampler logs each step)
  when it is a whole number that never changes; else ``consumed_samples`` when the lines are
  one step apart (then it is a count); else unknown.
- ``Validation: iteration n/total`` lines are an evaluation after the step before them; its
  result is the first ``val...`` metric of the next training line (four significant digits,
  said so). A step counter that goes back is a restart (the run facts' rule).
- ``Trainer.fit` stopped: `max_steps=N` reached`` (Lightning's) ends the run: it finished.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource
from trntui.importers._base import Steps, no_events_error, read_source, rows_timeline
from trntui.importers.launch import context_lines, launcher_size
from trntui.importers.terminal import console_records

NAME = "nemo-printer"
_LINE = re.compile(
    r"^(?P<what>Training epoch (?P<epoch>\d+),|Validation:) iteration (?P<i>\d+)/(?P<total>\d+)"
    r"(?P<rest>(?: \| [^|]+)*)\s*$"
)
_SNIFF = re.compile(r"^Training epoch \d+, iteration \d+/\d+ \| [^\n|]+: ", re.MULTILINE)
_STOPPED = re.compile(r"`Trainer\.fit` stopped: `(max_epochs|max_steps)=(\d+)` reached")
_TIMING = "train_step_timing in s"
_LOSSES = ("reduced_train_loss", "train_loss", "loss")
_EXPECTED = "NeMo ProgressPrinter lines ('Training epoch 0, iteration 29/999 | key: value ...')"


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def metrics(rest: str) -> dict[str, str]:
    """The ``| key: value`` pairs of a line (a key may hold spaces: ``train_step_timing in
    s``)."""
    pairs = {}
    for part in rest.split(" | "):
        key, sep, value = part.strip().strip("|").strip().rpartition(": ")
        if sep and key:
            pairs[key] = value.strip()
    return pairs


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


@dataclass
class _Reading:
    rows: list[dict[str, Any]] = field(default_factory=list)
    batches: set[float] = field(default_factory=set)
    counted: list[float | None] = field(default_factory=list)
    timed: int = 0
    planned_steps: int | None = None
    metric: str | None = None
    finished: bool = False


def _read(records: list[tuple[int, str]]) -> _Reading:
    reading = _Reading()
    clock = 0.0
    last_step = 0
    epoch_base = 0
    epoch_seen: int | None = None
    last_in_epoch = 0
    validation: dict[str, Any] | None = None
    for line, text in records:
        if (stopped := _STOPPED.search(text)) is not None:
            reading.finished = True
            reading.rows.append({"line": line, "kind": str(Kind.RUN_STOP), "t_s": clock,
                                 "step": last_step, "status": "success"})  # fmt: skip
            if stopped.group(1) == "max_steps":
                reading.planned_steps = int(stopped.group(2))
            continue
        match = _LINE.match(text)
        if match is None:
            continue
        if match.group("epoch") is None:  # a validation batch: one evaluation per pass
            if validation is None:
                validation = {"line": line, "kind": str(Kind.EVAL), "t_s": clock,
                              "step": last_step}  # fmt: skip
            continue
        pairs = metrics(match.group("rest"))
        epoch, iteration = int(match.group("epoch")), int(match.group("i"))
        if epoch != epoch_seen:
            if epoch_seen is not None:
                epoch_base += last_in_epoch
            epoch_seen = epoch
        last_in_epoch = iteration + 1
        global_step = _number(pairs.get("global_step"))
        step = int(global_step) + 1 if global_step is not None else epoch_base + iteration + 1
        reading.planned_steps = reading.planned_steps or int(match.group("total")) + 1
        timing = _number(pairs.get(_TIMING))
        steps_since = step - last_step if step > last_step else 1
        if timing is not None:
            clock += timing * steps_since
            reading.timed += 1
        if (batch := _number(pairs.get("global_batch_size"))) is not None:
            reading.batches.add(batch)
        reading.counted.append(_number(pairs.get("consumed_samples")))
        if validation is not None:
            found = next(((k, v) for k, v in pairs.items() if k.startswith("val")), None)
            if found is not None and (value := _number(found[1])) is not None:
                reading.metric = reading.metric or found[0]
                if found[0] == reading.metric:
                    validation["metric"] = value
            reading.rows.append(validation)
            validation = None
        reading.rows.append({
            "line": line,
            "kind": str(Kind.STEP),
            "t_s": clock if timing is not None else None,
            "step": step,
            "step_time_s": timing,
            "loss": next((_number(pairs[k]) for k in _LOSSES if k in pairs), None),
        })  # fmt: skip
        last_step = step
    if validation is not None:
        reading.rows.append(validation)
    return reading


def _samples(reading: _Reading) -> tuple[int | None, str | None]:
    """Samples per step (from ``global_batch_size``) or, failing that, whether
    ``consumed_samples`` is a count: (batch, how)."""
    if len(reading.batches) == 1:
        (batch,) = reading.batches
        if batch >= 1 and batch == int(batch):
            return int(batch), "global_batch_size"
    steps = [row["step"] for row in reading.rows if row["kind"] == Kind.STEP]
    one_apart = all(b - a == 1 for a, b in itertools.pairwise(steps))
    if one_apart and all(c is not None and c == int(c) for c in reading.counted):
        return None, "consumed_samples"
    return None, None


def import_nemo_printer(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    records = console_records(source)
    steps.at(0.3)
    reading = _read(list(records.select("line", "text").iter_rows()))
    steps.at(0.7)
    progress = [row for row in reading.rows if row["kind"] == Kind.STEP]
    if not progress:
        raise no_events_error(source, "ProgressPrinter training", _EXPECTED)
    batch, how = _samples(reading)
    if batch:
        for row in progress:
            row["samples"] = float(row["step"] * batch)
    elif how == "consumed_samples":
        for row, count in zip(progress, reading.counted, strict=True):
            row["samples"] = count
    timed = reading.timed == len(progress)
    if not timed:  # a clock with holes would misplace every later step
        for row in reading.rows:
            row["t_s"] = None
    reading.rows.sort(key=lambda row: row["line"])
    metric = reading.metric
    notes = [
        "clock: the running sum of train_step_timing in s x the steps of each line; "
        "validation, checkpoints and the time between steps are not on it"
        if timed
        else "clock: none (not every line prints train_step_timing in s)"
    ]
    if metric:
        notes.append(f"{metric} is read from the next training line: four significant digits")
    unit = "samples/s" if how else "steps/s"
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.REBUILT if timed else TimeSource.NONE,
        throughput_unit=unit,
        quality_metric=metric,
        quality_higher_is_better=False if metric and "loss" in metric else None,
        samples_per_step=float(batch) if batch else None,
        planned_steps=reading.planned_steps,
        facts={"lines": str(len(progress)), **({"samples_from": how} if how else {})},
        system=launcher_size(context_lines(records.head(5_000)), source.name),
        protocol={"global_batch_size": str(batch)} if batch else {},
        not_derivable=(
            "wall-clock time (the lines print step times only): validation, checkpoint, "
            "start-up and restart time",
            "evaluation time (validation lines carry no time)",
            *(() if how else ("samples (no global_batch_size and no exact consumed_samples)",)),
        ),
        notes=tuple(notes),
    )
    steps.at(0.95)
    return ImportedRun(rows_timeline(reading.rows), metadata)
