"""How often the band holds: estimate a run set from a few of its runs, and count how many of
its other runs cost what the band said (``calibrate_set``).

A P10-P90 band promises that 8 next trainings in 10 cost something inside it. That promise is
checked on real repeated runs: for every choice of ``ESTIMATION_RUNS`` (3) counted runs of a
set (all combinations, or an even spread of ``MAX_SUBSETS`` of them), the set is estimated
from those runs alone, as a project would be that had measured only them: the goal's work is
what they needed to reach the quality target (their median), the target is the set's own
size at $1 an instance-hour, nothing else costs anything, and time outside the logs is 0
where the logs show none. Each other counted run is then a next training whose cost is known:
its own clock from launch to its result (or its end, when later), times its instances, at the
same $1. The share of those that land inside P10-P90 is the coverage; (P90 - P10) / P50 is
the width.

Runs that did not count are left out on both sides: a failed attempt is no training to a
result, and what it adds to the next training is the estimate's failure term, not the band's.
Nothing here is tuned to any set: the band is the one the app shows.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

import polars as pl

from trntui.core.estimate import THROUGHPUT_UNITS, EstimateContext, estimate
from trntui.core.inventory import (
    DataPreparation,
    Inventory,
    ProjectInfo,
    SideCosts,
    SoftwareStack,
    TrainingGoal,
    TrainingTarget,
)
from trntui.core.prediction import Band, prediction_bands
from trntui.core.quotes import PriceQuote, QuoteBook
from trntui.core.run_facts import SUSPECT
from trntui.core.scalars import number

ESTIMATION_RUNS = 3
MAX_SUBSETS = 200
_TYPE = "band.check"
_REGION = "us-east-1"


@dataclass(frozen=True)
class SetCalibration:
    """One run set's check (``calibrate_set``): how many held-out runs landed inside the band
    over every estimation subset, and each band's width."""

    set_name: str
    runs: int
    """Counted runs with a clock (the pool the subsets are drawn from)."""
    subsets: int
    inside: int
    held_out: int
    """Held-out runs checked, over all subsets (each subset checks every run not in it)."""
    widths: tuple[float, ...]
    reason: str = ""
    """Why the set was not checked (too few runs, an estimate that stays incomplete)."""
    no_band: int = 0
    """Subsets whose estimate gave no band (each says why in the app)."""

    @property
    def coverage(self) -> float | None:
        return self.inside / self.held_out if self.held_out else None

    @property
    def median_width(self) -> float | None:
        return statistics.median(self.widths) if self.widths else None


def calibrate_set(
    observations: pl.DataFrame,
    set_name: str,
    estimation_runs: int = ESTIMATION_RUNS,
    max_subsets: int = MAX_SUBSETS,
) -> SetCalibration:
    """The check of one run set of ``observations`` (see the module docstring), over at most
    ``max_subsets`` estimation subsets."""
    runs = observations.filter(
        (pl.col("set_name") == set_name)
        & pl.col("counted")
        & (pl.col("status").fill_null("") != SUSPECT)
        & (pl.col("result_s").is_not_null() | pl.col("total_s").is_not_null())
    ).sort("run_id")
    if runs.height <= estimation_runs:
        why = f"{runs.height} counted runs: at least {estimation_runs + 1} are needed"
        return SetCalibration(set_name, runs.height, 0, 0, 0, (), why)
    inside = held = no_band = 0
    widths: list[float] = []
    reason = ""
    subsets = _subsets(runs.height, estimation_runs, max_subsets)
    for chosen in subsets:
        picked = runs[list(chosen)]
        band, launch = _band(picked, set_name)
        if band is None or band.p10_usd is None:
            no_band += 1
            reason = reason or (band.reason if band is not None else "the estimate is incomplete")
            continue
        width = band.width
        assert width is not None  # a band with its P10 has its P50 and P90, all positive
        widths.append(width)
        nodes = _instances(picked)
        for position in set(range(runs.height)) - set(chosen):
            other = runs.row(position, named=True)
            ends = [t for t in (other["result_s"], other["total_s"]) if t is not None]
            outside = other["launch_s"] if other["launch_s"] is not None else launch
            actual = (max(ends) + outside) / 3600.0 * nodes
            held += 1
            inside += band.p10_usd <= actual <= band.p90_usd
    return SetCalibration(
        set_name,
        runs.height,
        len(subsets),
        inside,
        held,
        tuple(widths),
        "" if widths else reason,
        no_band,
    )


def _subsets(pool: int, size: int, most: int) -> list[tuple[int, ...]]:
    """Every combination of ``size`` of ``pool`` runs, or an even spread of ``most``."""
    every = list(itertools.combinations(range(pool), size))
    if len(every) <= most:
        return every
    step = len(every) / most
    return [every[int(i * step)] for i in range(most)]


def _instances(runs: pl.DataFrame) -> int:
    nodes = runs["nodes"].drop_nulls()
    return int(nodes[0]) if nodes.len() else 1


def _band(runs: pl.DataFrame, set_name: str) -> tuple[Band | None, float]:
    """The band of an estimate made from ``runs`` only, and the time outside the logs it used
    (``None`` band when the estimate cannot be made)."""
    units = runs["throughput_unit"].drop_nulls().unique().to_list()
    work_unit = THROUGHPUT_UNITS.get(units[0]) if len(units) == 1 else None
    verified = runs.filter(pl.col("quality_reached").fill_null(False))["work_done"].drop_nulls()
    if work_unit is None or verified.len() == 0:
        return None, 0.0
    target = TrainingTarget(
        "band check", _TYPE, _instances(runs), _REGION, "on-demand", run_set=set_name
    )
    inventory = Inventory(
        project=ProjectInfo(name="band check", owner="calibration"),
        goal=TrainingGoal(work_amount=number(verified.median()), work_unit=work_unit),
        software=SoftwareStack(launch_minutes=0.0),
        data_prep=DataPreparation(hours=0.0),
        side_costs=SideCosts(
            dataset_gb=0.0,
            checkpoint_gb=0.0,
            checkpoints_kept=0,
            months_stored=0.0,
            ebs_gb_per_instance=0.0,
            data_moved_gb=0.0,
            log_gb=0.0,
        ),
        targets=(target,),
    )
    quote = PriceQuote(
        instance_type=_TYPE,
        region=_REGION,
        purchase_option="on-demand",
        usd_per_hour=1.0,
        retrieved_at=datetime(2026, 1, 1, tzinfo=UTC),
        manual=True,
        source_note="calibration: $1 an instance-hour",
        pinned=True,
    )
    context = EstimateContext(
        inventory=inventory,
        book=QuoteBook((quote,), ()),
        observations=runs,
        today=date(2026, 1, 1),
        ties_system_size=False,
    )
    result = estimate(context)
    launch = result.targets[0].input("launch_s").value or 0.0
    return prediction_bands(result)[0], launch


def overall(results: Sequence[SetCalibration]) -> tuple[float | None, float | None]:
    """Coverage over every held-out run of every checked set, and the median band width."""
    inside = sum(r.inside for r in results)
    held = sum(r.held_out for r in results)
    widths = [w for r in results for w in r.widths]
    return (
        inside / held if held else None,
        statistics.median(widths) if widths else None,
    )
