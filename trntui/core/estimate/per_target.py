"""Every input of one target with its provenance (``target_inputs``), then a scenario's
overrides applied on top (``apply_overrides``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from trntui.core.capacity_block import MAX_BLOCK_INSTANCES_TOTAL
from trntui.core.estimate.at_size import sized_inputs
from trntui.core.estimate.inputs import (
    ASSUMPTION,
    DERIVED,
    INPUT_SPECS,
    Input,
    InvalidInputError,
    Override,
    Provenance,
    check_value,
    unknown_input,
)
from trntui.core.estimate.measured import checkpoint_input, run_set_inputs, work_range
from trntui.core.estimate.observations import EstimateContext
from trntui.core.estimate.prices import (
    RATES,
    block_input,
    data_prep_instance_type,
    price_input,
    rate_input,
    rate_quantity,
    whole_ultraservers,
)
from trntui.core.inventory import Inventory, TrainingTarget
from trntui.core.quotes import CAPACITY_BLOCK, ON_DEMAND, SPOT, PriceQuote, QuoteFlag, quote_flags
from trntui.core.scaling import family_of


def _assumed(inventory: Inventory, key: str, value: float | None, field: str) -> Input:
    if value is None:
        return unknown_input(key, f"not set in the inventory ({field})")
    owner = inventory.project.owner or "the project owner"
    return Input(key, float(value), Provenance(ASSUMPTION, owner, f"inventory {field}"))


def global_inputs(inventory: Inventory) -> dict[str, Input]:
    """Project-wide inputs: the training goal, side-cost quantities, data preparation."""
    goal, side, prep = inventory.goal, inventory.side_costs, inventory.data_prep
    inputs = {"work_amount": _assumed(inventory, "work_amount", goal.work_amount, "goal")}
    if goal.work_amount is not None and goal.work_unit is None:
        inputs["work_amount"] = unknown_input("work_amount", "the goal's work unit is not set")
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
    quote_reason: str = ""
    """Why the target's quote is the one used (or why there is none)."""
    context: EstimateContext | None = dataclasses.field(default=None, compare=False, repr=False)
    """What they were built from: an instance-count override builds them again at that
    count (``core.estimate.at_size``)."""


def target_inputs(context: EstimateContext, target: TrainingTarget) -> TargetInputs:
    inventory, book = context.inventory, context.book
    name = target.name
    measured, samples = run_set_inputs(context, target)
    inputs = global_inputs(inventory)
    inputs["instance_count"] = Input(
        "instance_count",
        float(target.instance_count),
        Provenance(ASSUMPTION, inventory.project.owner or "the project owner", "target"),
        name,
    )
    price, quote, quote_reason = price_input(
        "usd_per_hour", target.instance_type, target.region, target.purchase_option, book, name
    )
    inputs["usd_per_hour"] = whole_ultraservers(price, quote, target.instance_count)
    if (
        target.purchase_option == CAPACITY_BLOCK
        and target.instance_count > MAX_BLOCK_INSTANCES_TOTAL
    ):
        why = (
            f"Capacity Blocks hold at most {MAX_BLOCK_INSTANCES_TOTAL} instances across blocks; "
            f"{target.instance_count} cannot be bought that way"
        )
        inputs["usd_per_hour"] = unknown_input("usd_per_hour", why, name)
    inputs["capacity_block"] = block_input(target, quote, inventory)
    inputs["restart_cost_s"] = unknown_input(
        "restart_cost_s",
        f"no run of {target.run_set!r} restarted, so no restart was measured: state one "
        "as a scenario override (Inputs tab) or import a run that restarted"
        if target.run_set
        else "no run set measures this target",
        name,
    )
    inputs.update(measured)
    inputs["work_amount"] = work_range(inputs["work_amount"], context, target)
    inputs["spot_interruptions_per_day"] = _spot_input(target, inventory)
    inputs["checkpoint_s"] = checkpoint_input(context, target)
    family = family_of(context.families(), target.run_set) if target.run_set else None
    scaling = (
        inventory.distribution.scaling_efficiency_per_doubling,
        inventory.project.owner or "the project owner",
    )
    if context.ties_system_size:
        sized = sized_inputs(context, target, quote, inputs, samples, family, scaling)
        inputs.update(sized.inputs)
        samples = sized.samples
    for key, service in RATES.items():
        quantity = rate_quantity(key, inputs, target.instance_count)
        rate = book.rate(service, target.region)
        inputs[key] = rate_input(key, rate, quantity, target.region, name)
    prep_type = data_prep_instance_type(inventory.data_prep.runs_on)
    if prep_type is None:
        runs_on = inventory.data_prep.runs_on
        why = (
            f"data preparation runs on {runs_on!r}, not an EC2 instance type: "
            "set its hourly cost in a scenario"
            if runs_on
            else "data_prep.runs_on is not set"
        )
        inputs["data_prep_usd_per_hour"] = unknown_input("data_prep_usd_per_hour", why, name)
    else:
        prep_price, _, _ = price_input(
            "data_prep_usd_per_hour", prep_type, target.region, ON_DEMAND, book, name
        )
        inputs["data_prep_usd_per_hour"] = prep_price
    flags: tuple[QuoteFlag, ...] = ()
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
        quote_reason,
        context,
    )


def _spot_input(target: TrainingTarget, inventory: Inventory) -> Input:
    """Expected spot interruptions per instance-day: stated on a spot target, else 0."""
    key, name = "spot_interruptions_per_day", target.name
    if target.purchase_option != SPOT:
        why = f"{target.purchase_option}: not interrupted by AWS"
        return Input(key, 0.0, Provenance(DERIVED, "target", why), name)
    if target.spot_interruptions_per_day is None:
        why = "state the interruptions per instance-day you expect on this spot target"
        return unknown_input(key, why, name)
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
    prepared = [_at_overridden_count(item, overrides) for item in prepared]
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
    return result


def _at_overridden_count(item: TargetInputs, overrides: Sequence[Override]) -> TargetInputs:
    """The target's inputs built again at the instance count an override sets, so they are
    what that count measured (or interpolated, or unknown: ``at_size``), as Scale prices it;
    an invalid count is left for ``check_value`` to refuse."""
    count = next(
        (
            o.value
            for o in overrides
            if o.input == "instance_count" and o.target == item.target.name
        ),
        None,
    )
    context = item.context
    if (
        context is None
        or not context.ties_system_size
        or not isinstance(count, int | float)
        or isinstance(count, bool)
        or count < 1
        or count != int(count)
        or int(count) == item.target.instance_count
    ):
        return item
    rebuilt = target_inputs(context, dataclasses.replace(item.target, instance_count=int(count)))
    return dataclasses.replace(rebuilt, target=item.target)


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
