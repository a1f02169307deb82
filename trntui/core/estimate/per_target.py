"""Every input of one target with its provenance (``target_inputs``), then a scenario's
overrides applied on top (``apply_overrides``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from trntui.core.capacity_block import MAX_BLOCK_INSTANCES_TOTAL
from trntui.core.estimate.inputs import (
    ASSUMPTION,
    DERIVED,
    INPUT_SPECS,
    Input,
    InvalidInputError,
    Override,
    Provenance,
    _unknown,
    check_value,
)
from trntui.core.estimate.measured import _checkpoint_input, _run_set_inputs, _tied_to_size
from trntui.core.estimate.observations import EstimateContext
from trntui.core.estimate.prices import (
    _RATES,
    _block_input,
    _price_input,
    _rate_input,
    _rate_quantity,
    _whole_ultraservers,
    data_prep_instance_type,
)
from trntui.core.inventory import Inventory, TrainingTarget
from trntui.core.quotes import CAPACITY_BLOCK, ON_DEMAND, SPOT, PriceQuote, QuoteFlag, quote_flags
from trntui.core.scaling import Family, family_of
from trntui.core.system_size import SetSize


def _assumed(inventory: Inventory, key: str, value: float | None, field: str) -> Input:
    if value is None:
        return _unknown(key, f"not set in the inventory ({field})")
    owner = inventory.project.owner or "the project owner"
    return Input(key, float(value), Provenance(ASSUMPTION, owner, f"inventory {field}"))


def global_inputs(inventory: Inventory) -> dict[str, Input]:
    """Project-wide inputs: the training goal, side-cost quantities, data preparation."""
    goal, side, prep = inventory.goal, inventory.side_costs, inventory.data_prep
    inputs = {"work_amount": _assumed(inventory, "work_amount", goal.work_amount, "goal")}
    if goal.work_amount is not None and goal.work_unit is None:
        inputs["work_amount"] = _unknown("work_amount", "the goal's work unit is not set")
    for key in (
        "dataset_gb",
        "checkpoint_gb",
        "checkpoints_kept",
        "months_stored",
        "ebs_gb_per_instance",
        "data_moved_gb",
        "log_gb",
    ):
        inputs[key] = _assumed(inventory, key, getattr(side, key), f"side_costs.{key}")
    inputs["data_prep_hours"] = _assumed(inventory, "data_prep_hours", prep.hours, "data_prep")
    inputs["data_prep_instance_count"] = _assumed(
        inventory, "data_prep_instance_count", prep.instance_count, "data_prep.instance_count"
    )
    return inputs


def _work_range(work: Input, context: EstimateContext, target: TrainingTarget) -> Input:
    """The goal's work with the range its run set's verified runs show, scaled to the goal.

    The goal's work stays the value (an assumption, with its provenance); when two or more
    runs of the target's set reached the quality target after different amounts of work in
    the goal's unit, ``low``/``high`` are the goal's work times the lowest and highest of
    them over their median, so the sensitivity analysis varies it over what was observed.
    """
    if work.value is None or not target.run_set:
        return work
    stats = context.run_set(target.run_set)
    spread = stats.spreads.get("work_to_target")
    unit = context.inventory.goal.work_unit
    units = {u.removesuffix("/s") for u in stats.units}
    if (
        spread is None
        or spread.n < 2
        or not spread.median
        or spread.min is None
        or spread.max is None
        or spread.min == spread.max
        or units != {unit}
    ):
        return work
    return dataclasses.replace(
        work,
        low=work.value * spread.min / spread.median,
        high=work.value * spread.max / spread.median,
        runs=spread.n,
    )


@dataclass(frozen=True)
class TargetInputs:
    """One target's inputs with their provenance, its quote and the quote's flags: built by
    ``target_inputs`` before a scenario's overrides; ``apply_overrides`` returns them with the
    overrides applied."""

    target: TrainingTarget
    inputs: dict[str, Input]
    quote: PriceQuote | None
    flags: tuple[QuoteFlag, ...]
    samples: pl.DataFrame
    """Each counted run's ``SAMPLE_COLUMNS`` (the prediction band draws them); empty when
    none."""
    measured_throughput: Input | None = None
    """The run set's throughput before it was tied to the target's size (an instance-count
    override ties it again)."""
    set_size: SetSize = dataclasses.field(default_factory=lambda: SetSize(None))
    family: Family | None = None
    scaling: tuple[float | None, str] = (None, "")
    """The stated efficiency per doubling of nodes (``None``: none) and who states it."""
    quote_reason: str = ""
    """Why the target's quote is the one used (or why there is none)."""


def target_inputs(context: EstimateContext, target: TrainingTarget) -> TargetInputs:
    inventory, book = context.inventory, context.book
    name = target.name
    measured, samples = _run_set_inputs(context, target)
    inputs = global_inputs(inventory)
    inputs["instance_count"] = Input(
        "instance_count",
        float(target.instance_count),
        Provenance(ASSUMPTION, inventory.project.owner or "the project owner", "target"),
        name,
    )
    price, quote, quote_reason = _price_input(
        "usd_per_hour", target.instance_type, target.region, target.purchase_option, book, name
    )
    inputs["usd_per_hour"] = _whole_ultraservers(price, quote, target.instance_count)
    if (
        target.purchase_option == CAPACITY_BLOCK
        and target.instance_count > MAX_BLOCK_INSTANCES_TOTAL
    ):
        why = (
            f"Capacity Blocks hold at most {MAX_BLOCK_INSTANCES_TOTAL} instances across blocks; "
            f"{target.instance_count} cannot be bought that way"
        )
        inputs["usd_per_hour"] = _unknown("usd_per_hour", why, name)
    inputs["capacity_block"] = _block_input(target, quote, inventory)
    inputs["restart_cost_s"] = _unknown(
        "restart_cost_s",
        f"no run of {target.run_set!r} restarted, so no restart was measured: state one "
        "as a scenario override (Inputs tab) or import a run that restarted"
        if target.run_set
        else "no run set measures this target",
        name,
    )
    inputs.update(measured)
    inputs["work_amount"] = _work_range(inputs["work_amount"], context, target)
    inputs["spot_interruptions_per_day"] = _spot_input(target, inventory)
    inputs["checkpoint_s"] = _checkpoint_input(context, target)
    measured_throughput = inputs["steady_throughput"]
    size = context.run_set(target.run_set).size if target.run_set else SetSize(None)
    family = family_of(context.families(), target.run_set) if target.run_set else None
    scaling = (
        inventory.distribution.scaling_efficiency_per_doubling,
        inventory.project.owner or "the project owner",
    )
    if context.ties_system_size:
        inputs["steady_throughput"] = _tied_to_size(
            measured_throughput, target, target.instance_count, quote, size, family, scaling
        )
    else:
        measured_throughput = None
    for key, service in _RATES.items():
        quantity = _rate_quantity(key, inputs, target.instance_count)
        rate = book.rate(service, target.region)
        inputs[key] = _rate_input(key, rate, quantity, target.region, name)
    prep_type = data_prep_instance_type(inventory.data_prep.runs_on)
    if prep_type is None:
        runs_on = inventory.data_prep.runs_on
        why = (
            f"data preparation runs on {runs_on!r}, not an EC2 instance type: "
            "set its hourly cost in a scenario"
            if runs_on
            else "data_prep.runs_on is not set"
        )
        inputs["data_prep_usd_per_hour"] = _unknown("data_prep_usd_per_hour", why, name)
    else:
        prep_price, _, _ = _price_input(
            "data_prep_usd_per_hour", prep_type, target.region, ON_DEMAND, book, name
        )
        inputs["data_prep_usd_per_hour"] = prep_price
    flags = ()
    if quote is not None:
        flags = quote_flags(
            quote,
            target_region=target.region,
            today=context.today,
            max_age_days=context.max_quote_age_days,
            target_purchase_option=target.purchase_option,
        )
    return TargetInputs(
        target,
        inputs,
        quote,
        flags,
        samples,
        measured_throughput,
        size,
        family,
        scaling,
        quote_reason,
    )


def _spot_input(target: TrainingTarget, inventory: Inventory) -> Input:
    """Expected spot interruptions per instance-day: stated on a spot target, else 0."""
    key, name = "spot_interruptions_per_day", target.name
    if target.purchase_option != SPOT:
        why = f"{target.purchase_option}: not interrupted by AWS"
        return Input(key, 0.0, Provenance(DERIVED, "target", why), name)
    if target.spot_interruptions_per_day is None:
        why = "state the interruptions per instance-day you expect on this spot target"
        return _unknown(key, why, name)
    owner = inventory.project.owner or "the project owner"
    how = "target spot_interruptions_per_day"
    return Input(key, target.spot_interruptions_per_day, Provenance(ASSUMPTION, owner, how), name)


def apply_overrides(
    prepared: Sequence[TargetInputs], overrides: Sequence[Override]
) -> list[TargetInputs]:
    """Replace inputs by scenario overrides; each becomes an assumption by who, for why.

    Raises ``InvalidInputError`` for an unknown input or target, a wrong unit or a value out of
    range, so the caller can keep the last valid estimate.
    """
    names = {p.target.name for p in prepared}
    result = list(prepared)
    for override in overrides:
        spec = INPUT_SPECS.get(override.input)
        where = override.target or "project"
        value = check_value(override.input, override.value, where=where, unit=override.unit)
        if override.target is not None and override.target not in names:
            raise InvalidInputError(
                f"no target named {override.target!r}; targets: {', '.join(sorted(names))}"
            )
        if spec is not None and spec.per_target and override.target is None:
            raise InvalidInputError(
                f"{spec.label} is set per target: name the target the override applies to"
            )
        provenance = Provenance(
            ASSUMPTION, override.who or "unnamed", override.why or "scenario override"
        )
        for index, item in enumerate(result):
            if override.target is not None and item.target.name != override.target:
                continue
            inputs = dict(item.inputs)
            target = item.target.name if spec is not None and spec.per_target else None
            inputs[override.input] = Input(override.input, value, provenance, target)
            result[index] = dataclasses.replace(item, inputs=inputs)
    for index, (before, item) in enumerate(zip(prepared, result, strict=True)):
        scaled = _checkpoints_for_work(before, item)
        if scaled is not None:
            item = result[index] = dataclasses.replace(
                item, inputs={**item.inputs, "checkpoint_s": scaled}
            )
        count = item.inputs["instance_count"].value
        throughput = item.inputs["steady_throughput"]
        if (
            count is not None
            and count != item.target.instance_count
            and throughput is before.inputs["steady_throughput"]
            and item.measured_throughput is not None
        ):
            inputs = dict(item.inputs)
            inputs["steady_throughput"] = _tied_to_size(
                item.measured_throughput,
                item.target,
                int(count),
                item.quote,
                item.set_size,
                item.family,
                item.scaling,
            )
            result[index] = dataclasses.replace(item, inputs=inputs)
    return result


def _checkpoints_for_work(before: TargetInputs, after: TargetInputs) -> Input | None:
    """Planned checkpoint time rescaled when an override changed the work to finish (the
    saves were counted for the inventory's work); ``None`` when nothing needs rescaling."""
    old_work = before.inputs["work_amount"].value
    new_work = after.inputs["work_amount"].value
    checkpoint = after.inputs.get("checkpoint_s")
    if (
        checkpoint is None
        or checkpoint is not before.inputs.get("checkpoint_s")
        or not checkpoint.value
        or not old_work
        or new_work is None
        or new_work == old_work
    ):
        return None
    how = (
        f"{checkpoint.provenance.detail}; scaled to the overridden work "
        f"({new_work:,.6g} instead of {old_work:,.6g})"
    )
    return Input(
        "checkpoint_s",
        checkpoint.value * new_work / old_work,
        Provenance(DERIVED, checkpoint.provenance.source, how),
        checkpoint.target,
    )
