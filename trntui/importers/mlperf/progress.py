"""How far training got at each record: the unit the log counts in, the work each record
states, and which records are the progress rows (see the package docstring).
"""

from __future__ import annotations

import itertools
import statistics
from typing import Any

from trntui.core.mlperf_rules import EPOCHS, SAMPLES, STEPS, BenchmarkRules
from trntui.importers._base import json_number

TRAINING_STATS = "throughput"
VALIDATION_STATS = "validation_throughput"
_TRUSTED = ("eval_start", "eval_accuracy", "eval_stop", "run_stop")
"""Events whose count is the work done so far in every implementation seen."""
_EPOCH_KEYS = ("epoch_num", "first_epoch_num")


def work_unit(
    events: list[dict[str, Any]], rules: BenchmarkRules | None, per_epoch: float | None
) -> str:
    """The unit the log counts progress in (package docstring)."""
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


def epoch_base(events: list[dict[str, Any]]) -> float:
    """The number of the first epoch (0 or 1: implementations differ)."""
    for event in events:
        meta = event["metadata"]
        if event["key"] == "epoch_start" and json_number(meta.get("epoch_num")) is not None:
            return json_number(meta["epoch_num"]) or 0.0
        if event["key"] == "block_start" and json_number(meta.get("first_epoch_num")) is not None:
            return json_number(meta["first_epoch_num"]) or 0.0
    return 0.0


def work_position(event: dict[str, Any], unit: str, base: float) -> float | None:
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


def _start_positions(events: list[dict[str, Any]], unit: str) -> bool:
    """Whether the block starts' ``samples_count`` are positions (the work done before each
    block): every block start states one, the first is 0 and they rise. A count that means a
    block's length repeats instead; one that means its end does not start at 0."""
    if unit != SAMPLES:
        return False
    counts = [
        json_number(e["metadata"].get("samples_count")) for e in events if e["key"] == "block_start"
    ]
    if len(counts) < 2 or any(c is None for c in counts) or counts[0] != 0:
        return False
    return all(b > a for a, b in itertools.pairwise(counts))  # type: ignore[operator]


def _block_end(
    events: list[dict[str, Any]], index: int, unit: str, base: float, starts_are_positions: bool
) -> float | None:
    """Work done at the progress stop ``events[index]``: the first count an evaluation or the
    run stop states after it (above the block's own start: an offline evaluation of an earlier
    checkpoint says nothing about this block), else the next block's start (its first epoch,
    or its ``samples_count`` where those are positions), else its own block's first epoch plus
    count, else its own count when that is above its start's."""
    stop = events[index]
    start_key = stop["key"].replace("_stop", "_start")
    own_start = next((e for e in reversed(events[:index]) if e["key"] == start_key), None)
    began = work_position(own_start, unit, base) if own_start is not None else None
    for event in events[index + 1 :]:
        if event["key"] in _TRUSTED:
            position = work_position(event, unit, base)
            if position is not None and (began is None or position > began):
                return position
        if event["key"] == start_key:
            if unit != STEPS and (position := _first_epoch(event, unit, base)) is not None:
                return position
            if starts_are_positions and (position := work_position(event, unit, base)) is not None:
                return position
            break
    if own_start is None:
        return None
    first = _first_epoch(own_start, unit, base)
    count = json_number(own_start["metadata"].get("epoch_count"))
    if first is not None and count is not None and unit != STEPS:
        return first + count
    ended = work_position(stop, unit, base)
    return ended if began is not None and ended is not None and ended > began else None


def _own_rate_end(events: list[dict[str, Any]], index: int, unit: str, base: float) -> float | None:
    """The work done at a block stop that no count states (the last block of a run whose
    evaluations ran afterwards, on earlier checkpoints): its start plus the log's own training
    rate for the block (its ``tracked_stats`` throughput) times the block's time, or ``None``
    when the block's start or its own rate is not stated."""
    stop = events[index]
    start_key = stop["key"].replace("_stop", "_start")
    opened = next((i for i in range(index - 1, -1, -1) if events[i]["key"] == start_key), None)
    if opened is None:
        return None
    began = work_position(events[opened], unit, base)
    if began is None:
        return None
    # The block's own rate is printed inside it or right after its stop (within a second).
    rate = None
    for event in events[opened + 1 :]:
        if event["key"] == start_key or event["time_ms"] > stop["time_ms"] + 1000:
            break
        if (value := training_stats(event)) is not None:
            rate = json_number(value[TRAINING_STATS])
    if not rate or rate <= 0:
        return None
    return began + rate * (stop["time_ms"] - events[opened]["time_ms"]) / 1000.0


def training_stats(event: dict[str, Any]) -> dict[str, Any] | None:
    value = event.get("value")
    if isinstance(value, dict) and TRAINING_STATS in value:
        return value
    return None


def progress_of(
    events: list[dict[str, Any]], unit: str, base: float, stop: int | None
) -> tuple[str | None, dict[int, float], set[int]]:
    """Which events are progress rows, the work done at each (strictly rising), and which of
    them took their work from the log's own rate (``_own_rate_end``).

    Epoch stops, else block stops, else evaluations: the first that gives two points. Lines
    after the run stop (in file order) are not part of the timed run. The last block stop,
    when no count states its end, takes it from the block's own rate: a run whose
    evaluations came afterwards trained that block all the same."""
    end = len(events) if stop is None else stop
    positions = _start_positions(events, unit)
    for key in ("epoch_stop", "block_stop", "eval_accuracy"):
        done: dict[int, float] = {}
        for index, event in enumerate(events[:end]):
            if event["key"] != key:
                continue
            position = (
                work_position(event, unit, base)
                if key == "eval_accuracy"
                else _block_end(events, index, unit, base, positions)
            )
            if position is not None:
                done[index] = position
        by_rate: set[int] = set()
        stops = [i for i, e in enumerate(events[:end]) if e["key"] == key]
        if key == "block_stop" and positions and stops and stops[-1] not in done:
            position = _own_rate_end(events, stops[-1], unit, base)
            if position is not None and position > max(done.values(), default=0.0):
                done[stops[-1]] = position
                by_rate.add(stops[-1])
        if len(set(done.values())) >= 2:
            return key, done, by_rate
    return None, {}, set()


def implied_samples_per_epoch(events: list[dict[str, Any]], done: dict[int, float]) -> float | None:
    """Samples per epoch that the log's own training rate implies (its ``tracked_stats``
    throughput x the time between two progress rows / their epochs apart), to check a
    stated ``train_samples`` against; ``None`` when the log prints no rate."""
    stats = [
        (e["time_ms"], value[TRAINING_STATS])
        for e in events
        if (value := training_stats(e)) is not None and json_number(value[TRAINING_STATS])
    ]
    points = sorted((events[i]["time_ms"], work) for i, work in done.items())
    implied = []
    for (t0, w0), (t1, w1) in itertools.pairwise(points):
        near = [rate for at, rate in stats if t0 < at <= t1 + 1000]
        if near and w1 > w0:
            implied.append(near[-1] * (t1 - t0) / 1000.0 / (w1 - w0))
    return statistics.median(implied) if implied else None


def rising_work(done: dict[int, float]) -> tuple[dict[int, float], int]:
    """Keep the progress rows whose work rises above every row before them."""
    kept: dict[int, float] = {}
    highest = 0.0
    for index in sorted(done):
        if done[index] > highest:
            kept[index] = done[index]
            highest = done[index]
    return kept, len(done) - len(kept)
