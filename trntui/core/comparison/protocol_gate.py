"""The protocol gate: what a target's result is a result of (``Protocol``), each fact the two
sides state checked against the other (``fact_checks``), and every reason two results cannot
be merged into one ratio (``protocol_differences``; the work to finish: ``work_difference``).

The work to finish is compared as the estimate used it, per target: the inventory goal, the
goal read at another size of a scaling family, or a scenario override (``work_source`` says
which, and who). Two amounts are the same work when their units match and they agree to
``WORK_REL_TOLERANCE``: the values are stored as floats (TOML, overrides as typed, a family's
ratio multiplied in), so only floating-point noise is forgiven, never a difference a person
typed, however small; the reason writes both amounts with as many digits as tell them apart.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from trntui.core.estimate import (
    ASSUMPTION,
    DERIVED,
    EstimateContext,
    Override,
    TargetEstimate,
)
from trntui.core.inventory import Inventory
from trntui.core.timeline import PROTOCOL_FACTS


@dataclass(frozen=True)
class Protocol:
    """What a target's result is a result *of*; ``None`` = not recorded."""

    target: str
    model_version: str | None
    benchmark: str | None
    """The benchmark or dataset the run set's logs state."""
    quality_metric: str | None
    """The metric the run set's logs report."""
    goal_metric: str | None
    quality_threshold: float | None
    quality_direction: str | None
    work_amount: float | None
    """The work to finish the target's estimate used (the goal's, or an override's)."""
    work_unit: str | None
    measured_unit: str | None
    """The throughput unit of the run set (what its finished work is counted in)."""
    runs: int
    counted_runs: int
    verified_runs: int
    """Counted runs whose log shows the quality target reached."""
    facts: dict[str, str] = dataclasses.field(default_factory=dict)
    """``PROTOCOL_FACTS`` the run set's logs state (several values joined with " / ")."""
    formats: frozenset[str] = frozenset()
    work_source: str = ""
    """Where ``work_amount`` came from, in words (``work_source``)."""


CONFIRMED = "confirmed"
NOT_CONFIRMED = "not confirmed"
DIFFERS = "differs"

FACT_LABELS = {
    "benchmark": "benchmark",
    "global_batch_size": "global batch size",
    "sequence_length": "sequence length",
    "quality_metric": "quality metric",
    "quality_target": "quality target",
}


@dataclass(frozen=True)
class FactCheck:
    """One protocol fact on both sides: confirmed only when both logs state it and agree."""

    fact: str
    trainium: str | None
    gpu: str | None
    status: str

    @property
    def label(self) -> str:
        return FACT_LABELS.get(self.fact, self.fact)

    def text(self) -> str:
        if self.status == CONFIRMED:
            return f"{self.label} {self.trainium}: confirmed"
        if self.status == DIFFERS:
            return f"{self.label} differs: Trainium3 {self.trainium}, GPU {self.gpu}"
        if self.trainium is not None and self.gpu is not None:
            return (
                f"{self.label}: not confirmed (the two log formats name it differently: "
                f"{self.trainium} / {self.gpu})"
            )
        side = "Trainium3" if self.trainium is not None else "GPU"
        return f"{self.label}: not confirmed (only the {side} logs state it)"


def work_source(item: TargetEstimate, overrides: Sequence[Override] = ()) -> str:
    """Where a target's work to finish came from, in words: the scenario override that set it
    (the last one applied to the target, as ``apply_overrides`` applies them) and who made it,
    the goal read at another size of a scaling family, or the inventory goal and who set it."""
    override = next(
        (
            o
            for o in reversed(overrides)
            if o.input == "work_amount" and o.target in (None, item.name)
        ),
        None,
    )
    if override is not None:
        scope = "" if override.target is not None else " for every target"
        return f"an override by {override.who or 'unnamed'}{scope}"
    provenance = item.input("work_amount").provenance
    if provenance.kind == DERIVED:
        return f"derived from the {provenance.source}"
    if provenance.kind == ASSUMPTION and provenance.detail:
        return f"the {provenance.detail}, set by {provenance.source}"
    return str(provenance)


def protocol(
    context: EstimateContext, item: TargetEstimate, overrides: Sequence[Override] = ()
) -> Protocol:
    """What ``item``'s result is a result of; ``overrides`` (the estimate's) say where an
    overridden work to finish came from."""
    inventory = context.inventory
    goal = inventory.goal
    name = item.target.run_set
    stats = context.run_set(name) if name else None

    def single(values: frozenset[str] | None) -> str | None:
        return " / ".join(sorted(values)) if values else None

    work = item.input("work_amount").value
    return Protocol(
        target=item.name,
        model_version=inventory.model.version,
        benchmark=single(stats.benchmarks if stats else None),
        quality_metric=single(stats.quality_metrics if stats else None),
        goal_metric=goal.quality_metric,
        quality_threshold=goal.quality_threshold,
        quality_direction=goal.quality_direction,
        work_amount=work,
        work_unit=item.work_unit or goal.work_unit,
        measured_unit=single(stats.units if stats else None),
        runs=stats.runs if stats else 0,
        counted_runs=stats.counted if stats else 0,
        verified_runs=stats.verified if stats else 0,
        facts={
            fact: " / ".join(sorted(values))
            for fact, values in (stats.protocol if stats else {}).items()
        },
        formats=stats.formats if stats else frozenset(),
        work_source=work_source(item, overrides),
    )


_FORMAT_NAMED = frozenset({"quality_metric"})
"""Facts each log format names its own way (MLPerf's ``eval_accuracy``, Megatron's
``validation lm loss``, Hugging Face's ``eval_loss``): two formats' names prove nothing."""


def fact_checks(trainium: Protocol, gpu: Protocol) -> tuple[FactCheck, ...]:
    """Every protocol fact either side states; a fact whose runs disagree within one set
    counts as differing. A name that two different log formats give differently is not
    confirmed, not a difference."""
    checks = []
    other_formats = trainium.formats != gpu.formats
    for fact in PROTOCOL_FACTS:
        a, b = trainium.facts.get(fact), gpu.facts.get(fact)
        if a is None and b is None:
            continue
        if a is None or b is None:
            status = NOT_CONFIRMED
        elif a == b and " / " not in a:
            status = CONFIRMED
        elif fact in _FORMAT_NAMED and other_formats:
            status = NOT_CONFIRMED
        else:
            status = DIFFERS
        checks.append(FactCheck(fact, a, b, status))
    return tuple(checks)


def inventory_differences(inventory: Inventory, p: Protocol) -> list[str]:
    """Where a run set's logs contradict the inventory's protocol (batch, sequence length)."""
    reasons = []
    for fact, planned in (
        ("global_batch_size", inventory.distribution.global_batch_size),
        ("sequence_length", inventory.model.sequence_length),
    ):
        stated = p.facts.get(fact)
        if stated is not None and planned is not None and stated != str(planned):
            reasons.append(
                f"{p.target}: its logs state {FACT_LABELS[fact]} {stated}, the inventory {planned}"
            )
    return reasons


WORK_REL_TOLERANCE = 1e-9
"""Two amounts of work closer than this (relative) are the same work: floating-point noise
(a family's work ratio multiplied in), far below one sample of any training."""


def _amount(value: float, other: float) -> str:
    """``value`` with the fewest significant digits (at least 6) that tell it from ``other``."""
    for digits in range(6, 18):
        text = f"{value:,.{digits}g}"
        if text != f"{other:,.{digits}g}":
            return text
    return f"{value:,.17g}"


def work_difference(a: Protocol, b: Protocol) -> str | None:
    """Why a and b are not the same amount of completed work (both amounts with their units
    and where each came from), or None when they are, or when either is not set (a reason of
    its own)."""
    if a.work_amount is None or b.work_amount is None or a.work_unit is None or b.work_unit is None:
        return None
    if a.work_unit == b.work_unit and math.isclose(
        a.work_amount, b.work_amount, rel_tol=WORK_REL_TOLERANCE
    ):
        return None
    sides = ", ".join(
        f"{p.target} {_amount(p.work_amount, q.work_amount)} {p.work_unit} ({p.work_source})"
        for p, q in ((a, b), (b, a))
        if p.work_amount is not None and q.work_amount is not None
    )
    return f"work to finish differs: {sides}"


def protocol_differences(a: Protocol, b: Protocol) -> list[str]:
    """Why results a and b are not the same protocol; empty when they are."""
    reasons = []
    if a.model_version is None:
        reasons.append("the model version is not recorded (inventory model.version)")
    if a.goal_metric is None or a.quality_threshold is None or a.quality_direction is None:
        reasons.append("the quality criterion (metric, threshold, direction) is not set")
    if a.work_amount is None or a.work_unit is None:
        reasons.append("the amount of finished work is not set")
    work = work_difference(a, b)
    if work is not None:
        reasons.append(work)
    for p in (a, b):
        if p.runs == 0:
            reasons.append(f"{p.target}: its run set has no runs")
        elif p.counted_runs == 0:
            reasons.append(f"{p.target}: no run reached the quality target")
        elif p.verified_runs == 0:
            reasons.append(
                f"{p.target}: no run verified the quality target (its logs hold no evaluation "
                "against it)"
            )
    if (
        a.measured_unit is not None
        and b.measured_unit is not None
        and a.measured_unit != b.measured_unit
    ):
        reasons.append(
            f"unit of finished work differs: {a.target} {a.measured_unit!r}, "
            f"{b.target} {b.measured_unit!r}"
        )
    reasons += [
        f"protocol {check.text()}" for check in fact_checks(a, b) if check.status == DIFFERS
    ]
    return reasons
