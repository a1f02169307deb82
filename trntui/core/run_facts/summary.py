"""A run set's range over its counted runs (``summarize_set``) and the one ``Spread`` of a
figure over repeated runs."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from trntui.core.run_facts.facts import SUCCEEDED, RunFacts


@dataclass(frozen=True)
class Spread:
    """One figure over repeated runs: its median and range (report the range, not one lucky
    run). ``n`` runs show it; ``min``, ``median`` and ``max`` are ``None`` only when none do.

    The one spread both the Runs screen (``summarize_set``) and the estimate
    (``core.estimate`` ``run_set_stats``) use.
    """

    n: int
    min: float | None
    median: float | None
    max: float | None
    mean: float | None = None
    trimmed_mean: float | None = None
    """Mean after dropping the lowest and highest value (when at least 3 values)."""


@dataclass(frozen=True)
class RunSetSummary:
    """A run set at a glance (``summarize_set``): how many runs, succeeded and counted, and the
    spread over the counted runs of steady throughput and both clocks."""

    runs: int
    succeeded: int
    counted: int
    steady_throughput: Spread | None
    throughput_unit: str | None
    run_s: Spread | None
    launch_to_result_s: Spread | None


def spread(values: Sequence[float | None]) -> Spread | None:
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    trimmed = known[1:-1] if len(known) >= 3 else known
    return Spread(
        n=len(known),
        min=known[0],
        median=statistics.median(known),
        max=known[-1],
        mean=statistics.fmean(known),
        trimmed_mean=statistics.fmean(trimmed),
    )


def summarize_set(facts: Sequence[RunFacts]) -> RunSetSummary:
    """Range of steady throughput and durations over the runs that count."""
    counted = [f for f in facts if f.counts_as_completed]
    units = {f.throughput_unit for f in counted if f.steady_throughput is not None}
    unit = units.pop() if len(units) == 1 else None
    return RunSetSummary(
        runs=len(facts),
        succeeded=sum(f.status == SUCCEEDED for f in facts),
        counted=len(counted),
        steady_throughput=spread([f.steady_throughput for f in counted]) if unit else None,
        throughput_unit=unit,
        run_s=spread([f.run_s for f in counted]),
        launch_to_result_s=spread([f.launch_to_result_s for f in counted]),
    )
