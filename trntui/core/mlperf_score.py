"""MLPerf Training time-to-train score of a set of repeated runs.

The rules of MLCommons' ``result_summarizer``:

* a run's time is ``(run_stop.time_ms - run_start.time_ms) / 60000`` minutes, and only a run
  whose ``run_stop`` says ``status: success`` has one; any other run (aborted, no
  ``run_stop``) is a failed run;
* the score is an olympic mean: sort the successful runs, drop the fastest, drop the slowest,
  average the rest; each failed run takes the place of a slowest run (so with one failure only
  the fastest is dropped among the successes);
* more failed runs than may be dropped (one; four for unet3d, ``max_dropped_runs``) make the
  set invalid: no score;
* the mean is multiplied by ``scaling_factor`` from a ``scaling.json`` beside the logs, when
  the review committee put one there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.safe_json import MAX_JSON_CHARS, parse_json
from trntui.core.timeline import Kind

SCALING_FILE = "scaling.json"


@dataclass(frozen=True)
class MlperfRunTime:
    """One run's MLPerf time to train in minutes (``run_minutes``), with the log it came from."""

    source: str
    minutes: float | None
    """``None`` when the run did not succeed."""


@dataclass(frozen=True)
class MlperfScore:
    """A run set's MLPerf time-to-train score (``olympic_score``): the scaled olympic mean in
    minutes, with the runs, failed runs, scaling factor and times it was taken over."""

    minutes: float | None
    """``None`` when the set is invalid (too many failed runs, or nothing left to average)."""
    runs: int
    failed: int
    scaling_factor: float
    counted: tuple[float, ...]
    """The run times (minutes, before scaling) that the mean was taken over."""


def run_minutes(timeline: pl.DataFrame) -> float | None:
    """Minutes from run_start to a successful run_stop, or ``None`` for a failed run."""
    starts = timeline.filter(pl.col("kind") == Kind.RUN_START)["t_s"].drop_nulls()
    stops = timeline.filter(pl.col("kind") == Kind.RUN_STOP)
    if starts.is_empty() or stops.is_empty():
        return None
    stop = stops.row(0, named=True)
    if str(stop["status"]).lower() != "success" or stop["t_s"] is None:
        return None
    return (stop["t_s"] - float(starts[0])) / 60.0


def max_dropped_runs(benchmark: str | None) -> int:
    """How many of the fastest (and, with failures, slowest) runs the olympic mean drops: four
    for unet3d, whose sets hold 40 runs, else one (MLCommons' result summarizer)."""
    return 4 if benchmark == "unet3d" else 1


def benchmark_of(facts: dict[str, str], source: str) -> str:
    """The benchmark a result log belongs to: its ``submission_benchmark``, else the name of
    the folder it sits in, as the summarizer reads it (``mask`` is ``maskrcnn``)."""
    name = facts.get("submission_benchmark") or Path(source).parent.name
    return "maskrcnn" if name == "mask" else name


def olympic_score(
    runs: Sequence[MlperfRunTime], scaling_factor: float = 1.0, max_dropped: int = 1
) -> MlperfScore:
    times = sorted(run.minutes for run in runs if run.minutes is not None)
    failed = len(runs) - len(times)
    counted: list[float] = []
    minutes = None
    if failed <= max_dropped:
        counted = times[max_dropped : len(times) - (max_dropped - failed)]
        if counted:
            minutes = sum(counted) / len(counted) * scaling_factor
    return MlperfScore(minutes, len(runs), failed, scaling_factor, tuple(counted))


def read_scaling_factor(folder: Path) -> float:
    """``scaling_factor`` from ``folder/scaling.json``; 1.0 when there is no such file."""
    path = Path(folder) / SCALING_FILE
    if not path.is_file():
        return 1.0
    expected = '{"scaling_factor": <number>}'
    try:
        if path.stat().st_size > MAX_JSON_CHARS:
            raise InputFileError(str(path), "is too large", expected=expected)
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputFileError(str(path), "not UTF-8 text", expected=expected) from None
    except OSError as error:
        raise InputFileError(str(path), f"cannot be read ({error.strerror})") from None
    data = parse_json(text, path=str(path), expected=expected)
    factor = data.get("scaling_factor") if isinstance(data, dict) else None
    if isinstance(factor, bool) or not isinstance(factor, int | float) or factor <= 0:
        raise InputFileError(
            str(path),
            "no positive scaling_factor",
            line=1,
            key="scaling_factor",
            expected='{"scaling_factor": <positive number>}',
        )
    return float(factor)
