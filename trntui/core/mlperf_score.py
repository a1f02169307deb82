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
  the review committee put one there;
* a submission holds a set number of result files per benchmark (``REQUIRED_RUNS``, MLCommons'
  ``benchmark_meta``): MLCommons' score tool still computes the mean of a set with fewer runs but
  warns that it is not enough for an official submission, and so does trntui (``complete``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.safe_json import MAX_JSON_CHARS, parse_json
from trntui.core.scalars import number
from trntui.core.timeline import Kind

SCALING_FILE = "scaling.json"
MAX_SCALING_FACTOR = 100.0
"""MLCommons' factors stretch a score for reference convergence (about 1 to 2); a factor of
1e308 (or NaN, or Infinity, which Python's JSON reader accepts) made every score infinite."""
REQUIRED_RUNS = {
    "bert": 10,
    "dlrm": 5,
    "dlrm_dcnv2": 10,
    "flux1": 10,
    "gnmt": 10,
    "gnn": 10,
    "gpt3": 3,
    "llama2_70b_lora": 10,
    "llama31_405b": 3,
    "llama31_8b": 10,
    "maskrcnn": 5,
    "minigo": 10,
    "ncf": 10,
    "resnet": 5,
    "retinanet": 5,
    "rgat": 10,
    "rnnt": 10,
    "ssd": 5,
    "stable_diffusion": 10,
    "transformer": 10,
    "unet3d": 40,
}
"""Result files (runs) an MLPerf Training submission holds per benchmark (MLCommons
``mlperf_logging/benchmark_meta.py``). The benchmarks of v5.0 and v5.1 (llama31_405b,
llama31_8b, flux1) are not in the copy of that file found; their counts are those MLCommons'
own reference convergence points imply (``rcp_checker/training_5.1.0/rcps_<benchmark>.json``
hold twice a submission's runs: 6 for llama31_405b, 20 for llama31_8b and flux1), which the
training rules' olympic scoring and a 3-run 405B set agree with. A benchmark not listed has no
known count here: its mean is computed, and said to be of unknown completeness."""


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
    required: int | None = None
    """Runs a submission of this benchmark holds (``REQUIRED_RUNS``); ``None`` when unknown."""
    max_dropped: int = 1

    @property
    def complete(self) -> bool:
        """Whether the set has the runs an official score needs (unknown counts as not)."""
        return self.required is not None and self.runs >= self.required

    def text(self) -> str:
        """The score as a person reads it: a figure from fewer runs than a submission holds is
        said to be so, and a missing figure says why."""
        if self.minutes is None:
            if self.failed > self.max_dropped:
                return (
                    f"none: {self.failed} of {self.runs} runs failed, more than the "
                    f"{self.max_dropped} the score may drop"
                )
            succeeded = self.runs - self.failed
            runs = "run leaves" if succeeded == 1 else "runs leave"
            return (
                f"none: {succeeded} successful {runs} nothing to average once the fastest and "
                "slowest are dropped"
            )
        figure = f"{self.minutes:.3f} min"
        if self.complete:
            return figure
        if self.required is None:
            return f"{figure} from {self.runs} runs (the runs a submission needs are not known)"
        return f"{figure} from {self.runs} of the {self.required} runs a submission needs"


def run_minutes(timeline: pl.DataFrame) -> float | None:
    """Minutes from run_start to a successful run_stop, or ``None`` for a failed run."""
    starts = timeline.filter(pl.col("kind") == Kind.RUN_START)["t_s"].drop_nulls()
    stops = timeline.filter(pl.col("kind") == Kind.RUN_STOP)
    if starts.is_empty() or stops.is_empty():
        return None
    stop = stops.row(0, named=True)
    if str(stop["status"]).lower() != "success" or stop["t_s"] is None:
        return None
    return (number(stop["t_s"]) - number(starts[0])) / 60.0


def required_runs(benchmark: str | None) -> int | None:
    """The runs a submission of ``benchmark`` holds (``REQUIRED_RUNS``); ``None`` if unknown."""
    return REQUIRED_RUNS.get(benchmark or "")


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
    runs: Sequence[MlperfRunTime],
    scaling_factor: float = 1.0,
    max_dropped: int = 1,
    required: int | None = None,
) -> MlperfScore:
    """The scaled olympic mean of ``runs`` (see the module docstring); ``required``: the runs
    a submission of the benchmark holds, which the score reports against (``complete``)."""
    times = sorted(run.minutes for run in runs if run.minutes is not None)
    failed = len(runs) - len(times)
    counted: list[float] = []
    minutes = None
    if failed <= max_dropped:
        counted = times[max_dropped : len(times) - (max_dropped - failed)]
        if counted:
            minutes = sum(counted) / len(counted) * scaling_factor
    return MlperfScore(
        minutes, len(runs), failed, scaling_factor, tuple(counted), required, max_dropped
    )


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
    if (
        isinstance(factor, bool)
        or not isinstance(factor, int | float)
        or not 0 < factor <= MAX_SCALING_FACTOR  # NaN fails this too
    ):
        raise InputFileError(
            str(path),
            f"scaling_factor {factor!r} is not a positive number up to {MAX_SCALING_FACTOR:g}",
            line=1,
            key="scaling_factor",
            expected=f'{{"scaling_factor": <number above 0, at most {MAX_SCALING_FACTOR:g}>}}',
        )
    return float(factor)
