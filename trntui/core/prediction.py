"""The predictive band: where the next training's cost lands, P10 to P90, from the runs.

A budget approver reads "P10-P90" as "8 times in 10 the bill lands here", so the band is a
*prediction interval* for one more training, not a spread of the runs already seen.

**Each run, priced as a training.** Every counted run of the target's set gives one total:
the estimate's formula with that run's own measured inputs (useful throughput, startup and
compile, time outside the logs, the overhead and restart ratios: each input the estimate
measured, per run; an input a person set, or the inventory states, stays as in the
estimate), the goal's work times the work that run needed to reach the quality target over
the median of the verified runs (``per_target._work_range``: MLPerf runs stop at one of
several evaluations, the largest run-to-run variation they show), with its planned checkpoint
saves, and the time of that run that no stage explains (its clock to the result or the end,
minus startup and its training at its own pace with its ratios; the back-test's gap, per
run), so what the stages miss is drawn too, not assumed away. Failed attempts are paid as in
the estimate: the set's share of runs that did not count, each billed at their time; one share
over the set, not a per-run figure.

**The band.** With n >= 3 such totals, the band is the t prediction interval of their
logarithms: exp(mean +/- t(0.9; n - 1) x sd x sqrt(1 + 1/n)). The log keeps the band positive
and lets it be lopsided as costs are; ``t`` with n - 1 degrees of freedom and the
``sqrt(1 + 1/n)`` make it wider than the runs' own range when it rests on few of them (from 3
runs, the range of three holds a fourth run only half the time). P50 is the geometric mean of
the totals. Fewer than 3 runs give no band, and say why: two points cannot tell how often
a third lands between them. How well it holds is measured, not assumed:
``benchmarks/calibrate_band.py`` estimates each shared MLPerf set from 3 of its runs and
counts how many of the others land inside (README, "How sure is the band").

``runs_for_width`` answers "how many trial runs until the band is within +/-10%?" from the
spread observed, where the runs' own variation allows it at all.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from trntui.core.estimate import (
    MEASURED,
    OBSERVED_INPUTS,
    Estimate,
    TargetEstimate,
    cost_frame,
    input_frame,
    input_variant,
)
from trntui.core.format import usd
from trntui.core.student_t import t_quantile

MIN_RUNS = 3
"""Fewer counted runs give no band."""
LOW_Q, HIGH_Q = 0.10, 0.90
TARGET_HALF_WIDTH = 0.10
"""The width ``runs_for_width`` aims at: P10 and P90 within 10% of P50."""
METHOD = "t prediction interval"
METHOD_TEXT = (
    "t prediction interval on the log of each counted run's total "
    "(n - 1 degrees of freedom, x sqrt(1 + 1/n) for the next run)"
)


@dataclass(frozen=True)
class Band:
    """Where the next training's cost lands (``prediction_bands``), or why nobody can say."""

    target: str
    runs: int
    """Counted runs the band rests on (n)."""
    p10_usd: float | None
    p50_usd: float | None
    p90_usd: float | None
    reason: str = ""
    """Why there is no band (fewer than 3 runs, an incomplete estimate)."""
    log_sd: float | None = None
    """Standard deviation of the log of the per-run totals: the run-to-run spread (known from
    2 runs, a band only from 3)."""
    per_run_usd: tuple[float, ...] = ()
    """Each counted run priced as a training (see the module docstring)."""
    drawn: tuple[str, ...] = ()
    """Labels of the inputs taken from each run."""
    unexplained_s: float | None = None
    """Median time per run that no stage explains (drawn with each run)."""

    @property
    def method(self) -> str:
        return f"{METHOD}, n={self.runs}"

    @property
    def width(self) -> float | None:
        """P90 - P10 over P50: the band's width relative to its middle."""
        if self.p10_usd is None or self.p90_usd is None or not self.p50_usd:
            return None
        return (self.p90_usd - self.p10_usd) / self.p50_usd

    def text(self, decimals: int = 2) -> str:
        """``P10-P90 $37.91-$44.02 (t, n=10)``, or ``no band: <why>``."""
        if self.p10_usd is None:
            return f"no band: {self.reason}"
        return (
            f"P10-P90 {usd(self.p10_usd, decimals)}-{usd(self.p90_usd, decimals)} "
            f"(t, n={self.runs})"
        )


def prediction_bands(estimate: Estimate) -> tuple[Band, ...]:
    """Each target's band; every counted run of every target priced in one frame."""
    rows: list[dict[str, float | None]] = []
    plan: list[tuple[int, int, int, tuple[str, ...], float | None]] = []
    bands: dict[int, Band] = {}
    for index, item in enumerate(estimate.targets):
        runs = item.samples.height
        if item.total_usd is None:
            bands[index] = _none(item, runs, "the estimate is incomplete")
            continue
        if runs < 2:
            bands[index] = _none(item, runs, _too_few(item, runs))
            continue
        per_run, drawn, unexplained = _run_rows(estimate, item)
        plan.append((index, len(rows), runs, drawn, unexplained))
        rows += per_run
    totals = cost_frame(input_frame(rows))["total_usd"].to_list() if rows else []
    for index, start, runs, drawn, unexplained in plan:
        item = estimate.targets[index]
        values = totals[start : start + runs]
        if any(v is None or v <= 0 for v in values):
            bands[index] = _none(item, runs, "a run's total is unknown")
        elif runs < MIN_RUNS:
            # No band, but the spread of the runs there are says how many more it needs.
            spread = statistics.stdev(math.log(v) for v in values)
            bands[index] = Band(
                item.name, runs, None, None, None, _too_few(item, runs), log_sd=spread
            )
        else:
            bands[index] = _band(item.name, values, drawn, unexplained)
    return tuple(bands[index] for index in range(len(estimate.targets)))


def _band(
    target: str, totals: Sequence[float], drawn: tuple[str, ...], unexplained: float | None
) -> Band:
    logs = [math.log(v) for v in totals]
    n = len(logs)
    mean, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = t_quantile(HIGH_Q, n - 1) * sd * math.sqrt(1 + 1 / n)
    return Band(
        target,
        n,
        math.exp(mean - half),
        math.exp(mean),
        math.exp(mean + half),
        log_sd=sd,
        per_run_usd=tuple(totals),
        drawn=drawn,
        unexplained_s=unexplained,
    )


def _none(item: TargetEstimate, runs: int, reason: str) -> Band:
    return Band(item.name, runs, None, None, None, reason)


def _too_few(item: TargetEstimate, runs: int) -> str:
    if runs == 0:
        measured = any(i.provenance.kind == MEASURED for i in item.inputs)
        if not measured:
            return "no measured run: the estimate is made of assumptions only"
        return "no counted run to draw from"
    noun = "run" if runs == 1 else "runs"
    return (
        f"it would rest on {runs} counted {noun}; a band needs at least {MIN_RUNS} "
        "(fewer cannot say how often the next run lands inside)"
    )


def _run_rows(
    estimate: Estimate, item: TargetEstimate
) -> tuple[list[dict[str, float | None]], tuple[str, ...], float | None]:
    """One row of inputs per counted run (module docstring), the labels of the inputs drawn
    per run, and the median time per run no stage explains."""
    samples = item.samples
    base = item.values()
    drawn_keys = [k for k in OBSERVED_INPUTS if item.input(k).provenance.kind == MEASURED]
    work = item.input("work_amount")
    ratios = _work_ratios(samples) if work.low is not None and work.high is not None else None
    medians = {k: samples[k].median() for k in OBSERVED_INPUTS}
    rows = []
    unexplained = []
    for position, run in enumerate(samples.iter_rows(named=True)):
        row = dict(base)
        if ratios is not None and work.value is not None:
            row = input_variant(estimate, item, row, "work_amount", work.value * ratios[position])
        for key in drawn_keys:
            if run[key] is not None:
                row[key] = run[key]
        extra = _unexplained_s(run, medians)
        if extra is not None:
            unexplained.append(extra)
            startup = row.get("startup_s")
            if startup is not None:
                row["startup_s"] = max(0.0, startup + extra)
        rows.append(row)
    drawn = tuple(item.input(k).label for k in drawn_keys)
    if ratios is not None and any(r != 1.0 for r in ratios):
        drawn = (work.label, *drawn)
    return rows, drawn, statistics.median(unexplained) if unexplained else None


def _work_ratios(samples: pl.DataFrame) -> list[float]:
    """Each run's work to the quality target (what the evaluation that verified it evaluated:
    for a run evaluated offline, not all it trained) over the verified runs' median (1 for a
    run whose log does not show the target reached)."""
    verified = samples.filter(pl.col("quality_reached").fill_null(False))["work_to_target"]
    middle = verified.drop_nulls().median()
    if not middle:
        return [1.0] * samples.height
    return [
        work / middle if reached and work else 1.0
        for work, reached in zip(samples["work_to_target"], samples["quality_reached"], strict=True)
    ]


def _unexplained_s(run: Mapping[str, Any], medians: Mapping[str, Any]) -> float | None:
    """The run's time to its result or end that no stage explains: that clock minus startup
    and its own work at its own pace with its own ratios (the set's median where the run
    lacks one); ``None`` when the run lacks its clock, its work or a pace."""
    ends = [t for t in (run["result_s"], run["total_s"]) if t is not None]
    figures = {
        key: run[key] if run[key] is not None else medians[key]
        for key in ("startup_s", "steady_throughput", "overhead_ratio", "retry_ratio")
    }
    if not ends or not run["work_done"] or None in figures.values():
        return None
    if figures["steady_throughput"] <= 0:
        return None
    training = run["work_done"] / figures["steady_throughput"]
    ratios = 1.0 + figures["overhead_ratio"] + figures["retry_ratio"]
    outside: float = max(ends) - figures["startup_s"] - training * ratios
    return outside


def runs_for_width(log_sd: float | None, half_width: float = TARGET_HALF_WIDTH) -> int | None:
    """Counted runs after which a band with this run-to-run spread (``log_sd``) has P10 and P90
    within ``half_width`` of P50; ``None`` when no number of runs gets there (the runs' own
    spread is wider) or the spread is unknown."""
    if log_sd is None:
        return None
    limit = math.log(1 + half_width)
    if log_sd == 0:
        return MIN_RUNS
    if t_quantile(HIGH_Q, 10_000) * log_sd >= limit:
        return None
    n = MIN_RUNS
    while t_quantile(HIGH_Q, n - 1) * log_sd * math.sqrt(1 + 1 / n) > limit:
        n += 1
        if n > 10_000:
            return None
    return n
