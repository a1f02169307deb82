"""The result: the formula evaluated once for all targets (one row per target), assembled
into ``TargetEstimate``s (stages, terms, total, what is missing) and an ``Estimate``; and
which of a scenario's overrides of a price look like a mistake (``implausible_overrides``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from trntui.core.capacity_block import blocks_text, extension_hint
from trntui.core.estimate.formula import cost_frame, input_frame
from trntui.core.estimate.inputs import (
    DERIVED,
    INPUT_SPECS,
    MEASURED,
    OBSERVED_INPUTS,
    STAGES,
    TERM_INPUTS,
    TERMS,
    ZERO_GATES,
    Input,
    Override,
)
from trntui.core.estimate.observations import EstimateContext
from trntui.core.estimate.per_target import TargetInputs, apply_overrides, target_inputs
from trntui.core.estimate.prices import RATES, data_prep_instance_type
from trntui.core.format import usd
from trntui.core.inventory import Inventory, MigrationRisk, TrainingTarget, effort_text
from trntui.core.quotes import (
    HOURS_PER_YEAR,
    PriceQuote,
    QuoteFlag,
    implausible_hourly_usd,
    implausible_rate_usd,
    term_years,
)


@dataclass(frozen=True)
class Stage:
    """One stage of a target's time (``STAGES``): its hours per instance, the instance-hours over
    all instances, and their cost in USD at the instance price."""

    key: str
    label: str
    hours: float | None
    """Wall-clock hours per instance."""
    instance_hours: float | None
    usd: float | None


@dataclass(frozen=True)
class RiskLine:
    """A porting risk: engineering effort in days, never instance hours."""

    title: str
    kind: str | None
    status: str
    effort_days: float | None
    owner: str | None


@dataclass(frozen=True)
class TargetEstimate:
    """One target's estimate: its inputs, stages and cost terms in USD, the total and the cost per
    work unit, and the price quote used with its flags."""

    target: TrainingTarget
    inputs: tuple[Input, ...]
    stages: tuple[Stage, ...]
    instance_hours: float | None
    instance_usd: float | None
    storage_usd: float | None
    transfer_usd: float | None
    logs_usd: float | None
    data_prep_usd: float | None
    retries_usd: float | None
    total_usd: float | None
    usd_per_unit: float | None
    work_unit: str | None
    quote: PriceQuote | None
    quote_flags: tuple[QuoteFlag, ...]
    samples: pl.DataFrame = dataclasses.field(compare=False, repr=False)
    quote_reason: str = ""
    idle_usd: float | None = 0.0
    """Capacity Block time paid and not used (0 when billed for the time used)."""
    wall_hours: float | None = None
    """Wall clock per instance the work needs (retries included)."""
    paid_hours: float | None = None
    """Hours paid per instance: the wall clock, or the whole block days that cover it."""
    term_years: int | None = None
    """The reserved term or Savings Plan term the target is bought under (None: no term)."""
    commitment_beyond_usd: float | None = None
    """What the term still owes after this training's hours: instances x rate x (term hours -
    wall clock). Not part of the total (other work can use it), never hidden either."""

    def commitment_text(self) -> str:
        """The term's remaining commitment in words; empty without a term."""
        if self.term_years is None:
            return ""
        if self.commitment_beyond_usd is None:
            return f"{self.term_years}-year term: what it still owes is unknown"
        return (
            f"{self.term_years}-year term still owes {usd(self.commitment_beyond_usd)} beyond "
            "this training (not in the total)"
        )

    @property
    def block_billed(self) -> bool:
        return bool(self.input("capacity_block").value)

    def block_text(self) -> str:
        """ "pays 24 h, uses 5.2 h (1 block of 1 day)" for a block; empty otherwise."""
        if not self.block_billed:
            return ""
        if self.paid_hours is None or self.wall_hours is None:
            return "block length unknown: the wall clock the work needs is unknown"
        days = round(self.paid_hours / 24)
        hint = extension_hint(self.wall_hours)
        return (
            f"pays {self.paid_hours:,.0f} h, uses {self.wall_hours:,.1f} h per instance "
            f"({blocks_text(days)}{'; ' + hint if hint else ''})"
        )

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def incomplete_inputs(self) -> tuple[str, ...]:
        """Labels of the unknown inputs that keep a cost term unknown; empty when the total
        is a number (an unknown rate for a quantity of 0 is not missing)."""
        missing = dict.fromkeys(label for term in TERMS for label in self.term_unknowns(term))
        return tuple(missing)

    @property
    def complete(self) -> bool:
        return self.total_usd is not None

    @property
    def assumptions_only(self) -> bool:
        """Its total is known but no run measured it: every input a run measures is a
        person's assumption (an estimate before any trial run, or every measurement
        overridden), not measured nor derived from measurements (interpolated between
        measured sizes). Such a total is labelled so wherever it is shown, never "complete"."""
        return self.complete and not any(
            i.provenance.kind in (MEASURED, DERIVED)
            for i in self.inputs
            if i.key in OBSERVED_INPUTS or i.key == "failed_fraction"
        )

    def input(self, key: str) -> Input:
        return next(i for i in self.inputs if i.key == key)

    def values(self) -> dict[str, float | None]:
        return {i.key: i.value for i in self.inputs}

    def term(self, key: str) -> float | None:
        value: float | None = getattr(self, key)
        return value

    def term_unknowns(self, key: str) -> tuple[str, ...]:
        """Unknown inputs that keep one cost term from being a number (none when it is one)."""
        if self.term(key) is not None:
            return ()
        needed = TERM_INPUTS[key]
        return tuple(i.label for i in self.unknown_inputs() if i.key in needed)

    def unknown_inputs(self) -> tuple[Input, ...]:
        """Unknown inputs that matter: not those another input's 0 makes irrelevant."""
        values = self.values()
        return tuple(
            i
            for i in self.inputs
            if i.is_unknown and not any(values.get(gate) == 0 for gate in ZERO_GATES.get(i.key, ()))
        )

    def headline(self) -> str:
        """The total as a person should read it: a number, or what is missing."""
        if self.total_usd is None:
            return "incomplete: " + ", ".join(self.incomplete_inputs)
        return usd(self.total_usd)


@dataclass(frozen=True)
class Estimate:
    """The estimate of every target (``estimate``), with the porting risks, the scenario's
    overrides it applied and the goal's work unit."""

    targets: tuple[TargetEstimate, ...]
    risks: tuple[RiskLine, ...]
    overrides: tuple[Override, ...] = ()
    work_unit: str | None = None

    def target(self, name: str) -> TargetEstimate:
        for item in self.targets:
            if item.name == name:
                return item
        raise KeyError(name)

    @property
    def risk_effort_days(self) -> float:
        """Known effort of the risks not resolved yet (see ``risk_effort_text``)."""
        return sum(r.effort_days for r in self._open_risks if r.effort_days is not None)

    @property
    def risks_without_effort(self) -> int:
        return sum(r.effort_days is None for r in self._open_risks)

    @property
    def risk_effort_text(self) -> str:
        return effort_text(self.risk_effort_days, self.risks_without_effort)

    @property
    def _open_risks(self) -> list[RiskLine]:
        return [r for r in self.risks if r.status != "resolved"]


def _risk_line(risk: MigrationRisk) -> RiskLine:
    return RiskLine(risk.title, risk.kind, risk.status, risk.effort_days, risk.owner)


def _commitment_beyond(row: Mapping[str, Any], years: int | None) -> float | None:
    """USD a term (reserved or Savings Plan) commits to beyond this training's wall clock."""
    if years is None:
        return None
    rate, count, wall = row["usd_per_hour"], row["instance_count"], row["wall_h"]
    if rate is None or count is None or wall is None:
        return None
    beyond: float = max(0.0, rate * count * (years * HOURS_PER_YEAR - wall))
    return beyond


def estimate_from_inputs(
    prepared: Sequence[TargetInputs],
    risks: Iterable[MigrationRisk] = (),
    overrides: Sequence[Override] = (),
    work_unit: str | None = None,
) -> Estimate:
    """Evaluate the formula once for all targets (one Polars frame, one row per target)."""
    frame = cost_frame(input_frame([{k: i.value for k, i in p.inputs.items()} for p in prepared]))
    rows = frame.to_dicts()
    targets = []
    for item, row in zip(prepared, rows, strict=True):
        count = row["instance_count"]
        stages = tuple(
            Stage(
                key,
                label,
                row[key],
                None if row[key] is None or count is None else row[key] * count,
                None
                if row[key] is None or count is None or row["usd_per_hour"] is None
                else row[key] * count * row["usd_per_hour"],
            )
            for key, label in STAGES
        )
        total = row["total_usd"]
        work = row["work_amount"]
        years = term_years(item.target.purchase_option)
        targets.append(
            TargetEstimate(
                target=item.target,
                inputs=tuple(item.inputs[key] for key in INPUT_SPECS),
                stages=stages,
                instance_hours=row["instance_hours"],
                instance_usd=row["instance_usd"],
                storage_usd=row["storage_usd"],
                transfer_usd=row["transfer_usd"],
                logs_usd=row["logs_usd"],
                data_prep_usd=row["data_prep_usd"],
                retries_usd=row["retries_usd"],
                idle_usd=row["idle_usd"],
                wall_hours=row["wall_h"],
                paid_hours=row["paid_h"],
                term_years=years,
                commitment_beyond_usd=_commitment_beyond(row, years),
                total_usd=total,
                usd_per_unit=None if total is None or not work else total / work,
                work_unit=work_unit,
                quote=item.quote,
                quote_flags=item.flags,
                quote_reason=item.quote_reason,
                samples=item.samples,
            )
        )
    risk_lines = tuple(_risk_line(r) for r in risks)
    return Estimate(tuple(targets), risk_lines, tuple(overrides), work_unit)


def implausible_overrides(
    targets: Sequence[TargetInputs | TargetEstimate],
    overrides: Sequence[Override],
    inventory: Inventory,
) -> list[str]:
    """Why each override of a price (an instance price, a data preparation price, a side
    rate) looks like a mistake, by the one band every price passes (``core.quotes``): an
    instance price per accelerator-hour of each target it applies to (its type and its
    quote's accelerators), a side rate around its list price. Empty when all are plausible;
    like a typed or fetched price, an implausible override is kept only when a person
    confirms it (``--force``, a yes in the app)."""
    doubts = []
    prep_type = data_prep_instance_type(inventory.data_prep.runs_on)
    for override in overrides:
        service = RATES.get(override.input)
        label = INPUT_SPECS[override.input].label if override.input in INPUT_SPECS else ""
        if service is not None:
            why = implausible_rate_usd(service, override.value)
            doubts += [] if why is None else [f"{label}: {why}"]
        elif override.input == "data_prep_usd_per_hour":
            why = implausible_hourly_usd(prep_type or "", override.value)
            doubts += [] if why is None else [f"{label}: {why}"]
        elif override.input == "usd_per_hour":
            for item in targets:
                if override.target not in (None, item.target.name):
                    continue
                chips = item.quote.accelerator_count if item.quote is not None else None
                why = implausible_hourly_usd(item.target.instance_type, override.value, chips)
                doubts += [] if why is None else [f"{item.target.name}: {label}: {why}"]
    return doubts


def prepare(context: EstimateContext) -> list[TargetInputs]:
    """The inputs of every target before overrides (cache this between edits of overrides)."""
    return [target_inputs(context, target) for target in context.inventory.targets]


def estimate(
    context: EstimateContext,
    overrides: Sequence[Override] = (),
    prepared: Sequence[TargetInputs] | None = None,
) -> Estimate:
    """The estimate of every target, with ``overrides`` applied (``InvalidInputError`` if bad)."""
    base = prepare(context) if prepared is None else prepared
    inputs = apply_overrides(base, overrides)
    inventory = context.inventory
    return estimate_from_inputs(inputs, inventory.risks, overrides, inventory.goal.work_unit)


def input_variant(
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
