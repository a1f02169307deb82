"""The protocol gate: what a target's result is a result of (``Protocol``), each fact the two
sides state checked against the other (``fact_checks``), and every reason two results cannot
be merged into one ratio (``protocol_differences``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from trntui.core.estimate import EstimateContext, TargetEstimate
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


def protocol(context: EstimateContext, item: TargetEstimate) -> Protocol:
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
        work_unit=goal.work_unit,
        measured_unit=single(stats.units if stats else None),
        runs=stats.runs if stats else 0,
        counted_runs=stats.counted if stats else 0,
        verified_runs=stats.verified if stats else 0,
        facts={
            fact: " / ".join(sorted(values))
            for fact, values in (stats.protocol if stats else {}).items()
        },
        formats=stats.formats if stats else frozenset(),
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


def protocol_differences(a: Protocol, b: Protocol) -> list[str]:
    """Why results a and b are not the same protocol; empty when they are."""
    reasons = []
    if a.model_version is None:
        reasons.append("the model version is not recorded (inventory model.version)")
    if a.goal_metric is None or a.quality_threshold is None or a.quality_direction is None:
        reasons.append("the quality criterion (metric, threshold, direction) is not set")
    if a.work_amount is None or a.work_unit is None:
        reasons.append("the amount of finished work is not set")
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
