"""Back-test: does the estimate's model reproduce the trials it was built from?

The estimate prices a job as launch + startup + work / steady throughput x (1 + overhead
ratio + retry ratio), with each input the run set's median (the retry ratio its mean). Applied
to each counted trial's own work, that model must give back the trial's measured time from
launch to the job's end where the logs carry the job's own clock (the billed attempt), else
from its first log line to its result (the end of the run, which for MLPerf is the verified
result, or the outside evaluation that verified it afterwards), else the inputs do not
describe the runs and an estimate built on them cannot be defended. A set whose modelled
time differs from the measured one by more than ``TOLERANCE`` is flagged with the stage that
explains most of the difference.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import polars as pl

from trntui.core.scalars import number

TOLERANCE = 0.03

_STAGES = (
    ("launch", "launch and teardown outside the logs"),
    ("before_init", "time before init_start (container start, cache clearing)"),
    ("startup", "startup and compile"),
    ("training", "steady training"),
    ("overhead", "checkpoints, evaluation, warm-up, stalls, time between blocks and after"),
    ("retry", "restart recovery and redone work"),
)


@dataclass(frozen=True)
class RunBacktest:
    run_id: str
    work: float
    measured_s: float
    model_s: float

    @property
    def gap(self) -> float:
        return self.model_s / self.measured_s - 1.0


@dataclass(frozen=True)
class Backtest:
    set_name: str
    runs: tuple[RunBacktest, ...]
    measured_s: float
    """Sum over the runs of the measured time to the result."""
    model_s: float
    from_launch: bool
    """Times count from launch (the job clock shows it), else from the first log line."""
    cause: str | None
    """The stage that explains most of a flagged gap, in words."""

    @property
    def gap(self) -> float:
        return self.model_s / self.measured_s - 1.0

    @property
    def flagged(self) -> bool:
        return abs(self.gap) > TOLERANCE

    def text(self) -> str:
        """``model 6.1 min vs measured 6.0 min (+1.2%)`` per run on average."""
        n = len(self.runs)
        model, measured = self.model_s / n / 60, self.measured_s / n / 60
        text = f"model {model:,.1f} min vs measured {measured:,.1f} min ({self.gap:+.1%})"
        if self.flagged and self.cause:
            text += f"; {self.cause}"
        return text


def backtest(observations: pl.DataFrame, set_name: str) -> Backtest | None:
    """The back-test of one run set, or ``None`` when its counted runs lack what it needs
    (a throughput, the work done and the time to the result or end)."""
    runs = observations.filter(
        (pl.col("set_name") == set_name)
        & pl.col("counted")
        & pl.col("steady_throughput").is_not_null()
        & pl.col("work_done").is_not_null()
        & pl.col("training_s").is_not_null()
    )
    if runs.is_empty() or runs["throughput_unit"].n_unique() != 1:
        return None
    rate = number(runs["steady_throughput"].median())
    startup = runs["startup_s"].median()
    before_init = number(runs["before_init_s"].fill_null(0.0).median() or 0.0)
    overhead = runs["overhead_ratio"].median()
    retry = runs["retry_ratio"].mean()
    if None in (startup, overhead, retry) or rate <= 0:
        return None
    # With the job's own clock on every run, an attempt is timed as it is billed: from launch
    # to the job's end, the time outside the logs (``launch_s``) modelled by its median.
    outside = runs["launch_s"]
    from_launch = outside.null_count() == 0
    launch = number(outside.median()) if from_launch else 0.0
    modelled: dict[str, float] = dict.fromkeys((name for name, _ in _STAGES), 0.0)
    measured: dict[str, float] = dict.fromkeys(modelled, 0.0)
    results = []
    for row in runs.iter_rows(named=True):
        # The trial's own work is all it did, so its time runs to its end (or to the outside
        # evaluation that verified it afterwards, which ``result_s`` then includes).
        ends = [t for t in (row["result_s"], row["total_s"]) if t is not None]
        if not ends:
            continue
        end = max(ends)
        training = row["work_done"] / rate
        parts = {
            "launch": launch,
            "before_init": before_init,
            "startup": number(startup) - before_init,
            "training": training,
            "overhead": training * number(overhead),
            "retry": training * number(retry),
        }
        training_i = row["training_s"]
        seen_before_init = row["before_init_s"] or 0.0
        seen = {
            "launch": row["launch_s"] or 0.0,
            "before_init": seen_before_init,
            "startup": (row["startup_s"] or 0.0) - seen_before_init,
            "training": training_i,
            "overhead": training_i * (row["overhead_ratio"] or 0.0),
            "retry": training_i * (row["retry_ratio"] or 0.0),
        }
        for name in modelled:
            modelled[name] += parts[name]
            measured[name] += seen[name]
        total = end + (seen["launch"] if from_launch else 0.0)
        results.append(RunBacktest(row["run_id"], row["work_done"], total, sum(parts.values())))
    if not results:
        return None
    measured_s = sum(r.measured_s for r in results)
    model_s = sum(r.model_s for r in results)
    name, label = max(_STAGES, key=lambda stage: abs(modelled[stage[0]] - measured[stage[0]]))
    n = len(results)
    cause = (
        f"{label} differs most: model {modelled[name] / n / 60:,.1f} min, measured "
        f"{measured[name] / n / 60:,.1f} min per run"
    )
    return Backtest(set_name, tuple(results), measured_s, model_s, from_launch, cause)


def median_gap(result: Backtest) -> float:
    return statistics.median(run.gap for run in result.runs)
