"""How much the total moves with each observed input, and its spread over the observed runs.

Vary **only observed inputs**, over **the range seen in the repeated runs** (the
minimum and maximum of the run set's counted runs; for the billed time of a failed attempt, of
its runs that did not count), never an arbitrary "+20 %". An input set
by a scenario override is an assumption, not an observation, so it is not varied; neither are
inventory quantities (storage, transfer, logs), which no run log measures.

Resampling draws whole runs, with replacement, from the counted runs of each target's run set:
each draw takes the throughput, startup, overhead and retry figures of one observed run
together (they are not independent: a slow run is often a stalling one), keeps every other
input as in the estimate, and applies the same formula. P10/P50/P90 of the drawn totals show
what one training will cost given the run-to-run variation seen. The draws are a Polars
sample with replacement (no per-draw Python loop); the same seed gives the same draws.
"""

from __future__ import annotations

from dataclasses import dataclass

from trntui.core.estimate import (
    MEASURED,
    OBSERVED_INPUTS,
    Estimate,
    Input,
    TargetEstimate,
    cost_frame,
    input_frame,
    shown_unit,
)

DEFAULT_DRAWS = 10_000


@dataclass(frozen=True)
class SensitivityBar:
    """One bar of the tornado chart: the total at the low and the high end of an input."""

    key: str
    label: str
    unit: str
    base: float
    low: float
    high: float
    total_at_low: float
    total_at_high: float

    @property
    def swing_usd(self) -> float:
        return abs(self.total_at_high - self.total_at_low)


@dataclass(frozen=True)
class Sensitivity:
    target: str
    base_total_usd: float | None
    bars: tuple[SensitivityBar, ...]
    """Largest swing first."""
    not_varied: tuple[tuple[str, str], ...]
    """(input label, why it is not varied)."""
    block_steps: tuple[str, ...] = ()
    """For a target paid in Capacity Blocks: each observed range that crosses a block length,
    in words (the total jumps there by whole days, not smoothly)."""


@dataclass(frozen=True)
class Distribution:
    target: str
    draws: int
    runs: int
    """Counted runs the draws come from."""
    seed: int
    p10_usd: float | None
    p50_usd: float | None
    p90_usd: float | None
    reason: str = ""
    """Why there is no distribution (an incomplete estimate, no counted runs)."""


VARIED_INPUTS = (*OBSERVED_INPUTS, "failed_run_s")
"""Inputs measured per run, so with a range over the repeated runs."""


def _varied(item: TargetEstimate) -> tuple[list[Input], list[tuple[str, str]]]:
    varied: list[Input] = []
    skipped: list[tuple[str, str]] = []
    keys = list(VARIED_INPUTS)
    if item.input("spot_interruptions_per_day").value != 0:
        # Only a target that can be interrupted pays restarts beyond its own runs' retries.
        keys.append("restart_cost_s")
    work = item.input("work_amount")
    if work.low is not None and work.high is not None and work.value is not None:
        # An assumption, but the run set's verified runs show how much the work to the
        # quality target varies (``per_target._work_range``): varied over that.
        varied.append(work)
    else:
        skipped.append(
            (
                work.label,
                "an assumption; the verified runs of its set show no spread of the work to "
                "the target",
            )
        )
    for key in keys:
        value = item.input(key)
        if value.provenance.kind != MEASURED:
            skipped.append((value.label, f"{value.provenance.kind}, not a measurement"))
        elif value.low is None or value.high is None:
            skipped.append((value.label, "no range observed"))
        else:
            varied.append(value)
    skipped += [
        (item.input("failed_fraction").label, "one share over the whole run set, not per run"),
        ("Storage, transfer and log quantities", "inventory values: no run log measures them"),
        (
            "Accelerator utilization",
            "it explains the throughput, it is not priced: what limits the runs is in the decision",
        ),
    ]
    return varied, skipped


def _variant(
    estimate: Estimate,
    item: TargetEstimate,
    base: dict[str, float | None],
    key: str,
    value: float | None,
) -> dict[str, float | None]:
    """``base`` with ``key`` at ``value``; more work also takes more planned checkpoint saves,
    as an override of the work does (``per_target._checkpoints_for_work``), unless the
    checkpoint time is itself overridden."""
    row = {**base, key: value}
    old, checkpoint = base.get("work_amount"), base.get("checkpoint_s")
    overridden = any(
        o.input == "checkpoint_s" and o.target in (None, item.name) for o in estimate.overrides
    )
    if key == "work_amount" and old and value is not None and checkpoint and not overridden:
        row["checkpoint_s"] = checkpoint * value / old
    return row


def sensitivity(estimate: Estimate) -> tuple[Sensitivity, ...]:
    """Tornado bars per target, all variants of all targets evaluated in one frame."""
    rows: list[dict[str, float | None]] = []
    plan: list[tuple[int, Input]] = []
    skipped_by_target = []
    for index, item in enumerate(estimate.targets):
        base = item.values()
        varied, skipped = _varied(item)
        skipped_by_target.append(skipped)
        if item.total_usd is None:
            continue
        for value in varied:
            rows.append(_variant(estimate, item, base, value.key, value.low))
            rows.append(_variant(estimate, item, base, value.key, value.high))
            plan.append((index, value))
    frame = cost_frame(input_frame(rows)) if rows else None
    totals = frame["total_usd"].to_list() if frame is not None else []
    paid = frame["paid_h"].to_list() if frame is not None else []
    bars: dict[int, list[SensitivityBar]] = {}
    steps: dict[int, list[str]] = {}
    for position, (index, value) in enumerate(plan):
        low_total, high_total = totals[2 * position], totals[2 * position + 1]
        item = estimate.targets[index]
        paid_low, paid_high = paid[2 * position], paid[2 * position + 1]
        if item.block_billed and paid_low != paid_high and None not in (paid_low, paid_high):
            unit = shown_unit(value.unit, estimate.work_unit)
            steps.setdefault(index, []).append(
                f"{value.label} {value.low:,.4g} to {value.high:,.4g} {unit} crosses a block "
                f"length: {paid_low / 24:,.0f} to {paid_high / 24:,.0f} days paid per instance "
                f"(${low_total:,.2f} to ${high_total:,.2f})"
            )
        bars.setdefault(index, []).append(
            SensitivityBar(
                key=value.key,
                label=value.label,
                unit=shown_unit(value.unit, estimate.work_unit),
                base=value.value,
                low=value.low,
                high=value.high,
                total_at_low=low_total,
                total_at_high=high_total,
            )
        )
    result = []
    for index, item in enumerate(estimate.targets):
        ranked = sorted(bars.get(index, []), key=lambda bar: bar.swing_usd, reverse=True)
        skipped = skipped_by_target[index]
        if item.total_usd is None:
            skipped = [("every input", "the estimate is incomplete"), *skipped]
        result.append(
            Sensitivity(
                item.name,
                item.total_usd,
                tuple(ranked),
                tuple(skipped),
                tuple(steps.get(index, ())),
            )
        )
    return tuple(result)


def resample(
    estimate: Estimate, draws: int = DEFAULT_DRAWS, seed: int = 0
) -> tuple[Distribution, ...]:
    """P10/P50/P90 of each target's total over ``draws`` runs drawn from its counted runs.

    A draw is one whole observed run, so the formula is applied once per observed run (all
    targets in one frame) and the draws pick among those totals with replacement, vectorized
    in Polars. Each target draws with its own seed (``seed`` + its position), so adding a
    target does not change the draws of the others.
    """
    if draws < 1:
        raise ValueError("draws must be at least 1")
    rows: list[dict[str, float | None]] = []
    plan: list[tuple[int, int, int]] = []
    results: dict[int, Distribution] = {}
    for index, item in enumerate(estimate.targets):
        if item.total_usd is None:
            results[index] = _none(item, draws, seed, "estimate incomplete")
            continue
        if item.samples.is_empty():
            results[index] = _none(item, draws, seed, "no counted runs to draw from")
            continue
        measured = [
            key
            for key in OBSERVED_INPUTS
            if item.input(key).provenance.kind == MEASURED and item.samples[key].null_count() == 0
        ]
        values = item.values()
        plan.append((index, len(rows), item.samples.height))
        rows += [{**values, **run} for run in item.samples.select(measured).iter_rows(named=True)]
    if rows:
        totals = cost_frame(input_frame(rows))["total_usd"]
        for index, start, runs in plan:
            drawn = totals.slice(start, runs).sample(
                n=draws, with_replacement=True, seed=seed + index
            )
            p10, p50, p90 = (drawn.quantile(q, interpolation="linear") for q in (0.1, 0.5, 0.9))
            results[index] = Distribution(
                estimate.targets[index].name, draws, runs, seed, p10, p50, p90
            )
    return tuple(results[index] for index in range(len(estimate.targets)))


def _none(item: TargetEstimate, draws: int, seed: int, reason: str) -> Distribution:
    return Distribution(item.name, draws, 0, seed, None, None, None, reason)
