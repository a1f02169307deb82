"""How much the total moves with each observed input over its range in the repeated runs.

Vary **only observed inputs**, over **the range seen in the repeated runs** (the
minimum and maximum of the run set's counted runs; for the billed time of a failed attempt, of
its runs that did not count), never an arbitrary "+20 %". An input set
by a scenario override is an assumption, not an observation, so it is not varied; neither are
inventory quantities (storage, transfer, logs), which no run log measures.

Where the next training's total lands, all inputs of a run taken together, is the
prediction band's job (``core.prediction``).
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
    input_variant,
    shown_unit,
)


@dataclass(frozen=True)
class SensitivityBar:
    """One bar of the tornado chart: the total at the low and the high end of an input."""

    key: str
    label: str
    unit: str
    base: float | None
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
            rows.append(input_variant(estimate, item, base, value.key, value.low))
            rows.append(input_variant(estimate, item, base, value.key, value.high))
            plan.append((index, value))
    frame = cost_frame(input_frame(rows)) if rows else None
    totals = frame["total_usd"].to_list() if frame is not None else []
    paid = frame["paid_h"].to_list() if frame is not None else []
    bars: dict[int, list[SensitivityBar]] = {}
    steps: dict[int, list[str]] = {}
    for position, (index, value) in enumerate(plan):
        low_total, high_total = totals[2 * position], totals[2 * position + 1]
        item = estimate.targets[index]
        assert value.low is not None and value.high is not None  # _varied keeps ranges only
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
