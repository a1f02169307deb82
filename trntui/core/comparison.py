"""Trainium3 vs GPU: the cost to reach the same quality result, never the price per hour.

The protocol gate comes first. Two estimates merge into one ratio only when they
describe an equally acceptable result: the same model version, the same dataset/benchmark, the
same quality metric and threshold, and the same amount of finished work, each run set having
reached the quality target. The goal's model version, criterion and amount of work must be
recorded; both run sets are judged against that one goal. What the logs themselves state (a
benchmark name, the metric they print, the unit of work) must not differ where both state it;
a fact only one side's logs state is shown side by side but cannot contradict the other. When
anything differs or a required fact is missing, the two results are shown side by side with
the reason, and no ratio is given.

The break-even throughput is the useful throughput at which the Trainium3 total equals the GPU
total. The total is affine in training time, which is ``work / throughput``, so two evaluations
of the formula give the line and the break-even follows exactly.

The decision note says *pause* when quality was missed, a price for the region is
unverified or side costs are incomplete; *try another option* when the target configuration
costs more to the result than the GPU (its best observed run does not reach break-even), which
makes the porting effort unjustified; *continue the trial* when quality is reached, the
operations are supported (no open porting question) and measurements cover every cost stage.
A pause lists every missing condition, not only the first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from trntui.core.estimate import (
    MEASURED,
    OBSERVED_INPUTS,
    Estimate,
    EstimateContext,
    RunSetStats,
    TargetEstimate,
    cost_frame,
    input_frame,
)
from trntui.core.format import usd
from trntui.core.inventory import Inventory, effort_text
from trntui.core.plan_check import Payback, PlanCheck, check_plan, payback, plan_facts
from trntui.core.quotes import FlagKind
from trntui.core.timeline import PROTOCOL_FACTS

CONTINUE = "continue the trial"
TRY_ANOTHER = "try another option"
PAUSE = "pause"

_UNVERIFIED = {
    FlagKind.STALE,
    FlagKind.OTHER_REGION,
    FlagKind.OTHER_PURCHASE_OPTION,
    FlagKind.UNKNOWN_PRICE,
    FlagKind.UNVERIFIED,
}


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


@dataclass(frozen=True)
class BreakEven:
    required_throughput: float | None
    """Useful throughput at which the Trainium3 total equals the GPU total (None: unreachable)."""
    observed_throughput: float | None
    observed_low: float | None
    observed_high: float | None
    unit: str
    note: str
    basis: str = "observed"
    """``observed`` (the run set's measurement) or ``assumed`` (a person's override): an
    overridden throughput is never called observed."""


@dataclass(frozen=True)
class Decision:
    action: str
    """``continue the trial``, ``try another option`` or ``pause``."""
    facts: tuple[str, ...]
    """The facts that triggered it."""


@dataclass(frozen=True)
class Comparison:
    trainium: TargetEstimate | None
    gpu: TargetEstimate | None
    protocols: tuple[Protocol, ...]
    comparable: bool
    reasons: tuple[str, ...]
    """Why no ratio is given (empty when comparable)."""
    cost_ratio: float | None
    """Trainium3 total / GPU total, to the same quality result."""
    saving_usd: float | None
    """GPU total minus Trainium3 total (negative: Trainium3 costs more)."""
    break_even: BreakEven | None
    decision: Decision
    fact_checks: tuple[FactCheck, ...] = ()
    """The protocol facts either side's logs state, compared."""
    plans: tuple[PlanCheck, ...] = ()
    """Deadline, wall clock and budget of each side (``core.plan_check``)."""
    payback: Payback | None = None
    """The porting cost and after how many trainings it pays off."""

    @property
    def protocol_confirmed(self) -> bool:
        """Every protocol fact is stated by both sides and agrees (and at least one is)."""
        return bool(self.fact_checks) and all(c.status == CONFIRMED for c in self.fact_checks)


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
        benchmark=single(stats and stats.benchmarks),
        quality_metric=single(stats and stats.quality_metrics),
        goal_metric=goal.quality_metric,
        quality_threshold=goal.quality_threshold,
        quality_direction=goal.quality_direction,
        work_amount=work,
        work_unit=goal.work_unit,
        measured_unit=single(stats and stats.units),
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
        if p.counted_runs == 0:
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


def _pick(estimate: Estimate, family: str) -> TargetEstimate | None:
    return next((t for t in estimate.targets if t.target.accelerator_family == family), None)


def break_even(trainium: TargetEstimate, gpu_total: float) -> BreakEven:
    """Solve total(throughput) = gpu_total; total = a + b / throughput exactly."""
    observed = trainium.input("steady_throughput")
    measured = observed.provenance.kind == MEASURED
    basis = "observed" if measured else "assumed"
    low, high = (observed.low, observed.high) if measured else (None, None)
    unit = f"{trainium.work_unit or 'work units'}/s"
    base = trainium.values()
    r1 = observed.value
    if trainium.block_billed:
        return _stepped_break_even(trainium, gpu_total, r1, (low, high), unit, basis)
    variants = [{**base, "steady_throughput": r1}, {**base, "steady_throughput": 2 * r1}]
    frame = cost_frame(input_frame(variants))
    t1, t2 = frame["total_usd"].to_list()
    # total = a + b * x with x = 1 / throughput: x1 = 1/r1, x2 = 1/(2 r1)
    b = (t1 - t2) / (1 / r1 - 1 / (2 * r1))
    a = t1 - b / r1
    if b <= 0 or gpu_total <= a:
        note = (
            f"unreachable: even at unlimited throughput the Trainium3 total stays above "
            f"${a:,.2f} (startup, side costs, data preparation), more than the GPU's "
            f"${gpu_total:,.2f}"
        )
        return BreakEven(None, r1, low, high, unit, note, basis)
    required = b / (gpu_total - a)
    side = "above" if r1 >= required else "below"
    note = f"{basis} {r1:,.4g} {unit} is {side} the break-even {required:,.4g} {unit}"
    return BreakEven(required, r1, low, high, unit, note, basis)


_SEARCH_POINTS = 400
_SEARCH_SPAN = 1000.0
"""The stepped break-even is searched from 1/1000 to 1000 x the observed throughput."""


def _stepped_break_even(
    trainium: TargetEstimate,
    gpu_total: float,
    r1: float,
    observed: tuple[float | None, float | None],
    unit: str,
    basis: str,
) -> BreakEven:
    """Break-even when the total moves in whole Capacity Block lengths (not a + b/throughput):
    the lowest throughput whose total is at most the GPU's, found on the formula itself (the
    total never rises with throughput), on a log grid refined once."""
    base = trainium.values()

    def totals(rates: list[float]) -> list[float | None]:
        rows = [{**base, "steady_throughput": rate} for rate in rates]
        return cost_frame(input_frame(rows))["total_usd"].to_list()

    def grid(lo: float, hi: float) -> list[float]:
        step = (hi / lo) ** (1 / (_SEARCH_POINTS - 1))
        return [lo * step**i for i in range(_SEARCH_POINTS)]

    rates = grid(r1 / _SEARCH_SPAN, r1 * _SEARCH_SPAN)
    values = totals(rates)
    low, high = observed
    floor = values[-1]
    if floor is None or floor > gpu_total:
        shown = usd(floor)
        note = (
            f"unreachable: billed in whole Capacity Block lengths, even at {_SEARCH_SPAN:g}x the "
            f"throughput the Trainium3 total stays at {shown}, more than the GPU's "
            f"${gpu_total:,.2f}"
        )
        return BreakEven(None, r1, low, high, unit, note, basis)
    first = next(i for i, v in enumerate(values) if v is not None and v <= gpu_total)
    if first > 0:
        fine = grid(rates[first - 1], rates[first])
        refined = totals(fine)
        required = next(
            r for r, v in zip(fine, refined, strict=True) if v is not None and v <= gpu_total
        )
    else:
        required = rates[0]
    side = "above" if r1 >= required else "below"
    note = (
        f"{basis} {r1:,.4g} {unit} is {side} the break-even {required:,.4g} {unit} (billed in "
        "whole Capacity Block lengths, the total moves in steps)"
    )
    return BreakEven(required, r1, low, high, unit, note, basis)


def compare(context: EstimateContext, estimate: Estimate) -> Comparison:
    """The Trainium3-vs-GPU comparison of an estimate (first target of each family)."""
    trainium = _pick(estimate, "Trainium3")
    gpu = _pick(estimate, "GPU")
    protocols = tuple(protocol(context, t) for t in (trainium, gpu) if t is not None)
    reasons: list[str] = []
    if trainium is None:
        reasons.append("no Trainium3 target")
    if gpu is None:
        reasons.append("no GPU target")
    checks: tuple[FactCheck, ...] = ()
    if trainium is not None and gpu is not None:
        reasons += protocol_differences(protocols[0], protocols[1])
        checks = fact_checks(protocols[0], protocols[1])
        for proto in protocols:
            reasons += inventory_differences(context.inventory, proto)
        for item in (trainium, gpu):
            if item.total_usd is None:
                reasons.append(f"{item.name}: {item.headline()}")
    comparable = not reasons
    ratio = saving = even = None
    if comparable:
        ratio = trainium.total_usd / gpu.total_usd
        saving = gpu.total_usd - trainium.total_usd
        even = break_even(trainium, gpu.total_usd)
    plans = tuple(check_plan(context, item) for item in (trainium, gpu) if item is not None)
    decision = decide(context, trainium, gpu, comparable, reasons, even, checks, plans)
    return Comparison(
        trainium,
        gpu,
        protocols,
        comparable,
        tuple(reasons),
        ratio,
        saving,
        even,
        decision,
        checks,
        plans,
        payback(context, saving),
    )


def decide(
    context: EstimateContext,
    trainium: TargetEstimate | None,
    gpu: TargetEstimate | None,
    comparable: bool,
    reasons: list[str],
    even: BreakEven | None,
    checks: tuple[FactCheck, ...] = (),
    plans: tuple[PlanCheck, ...] = (),
) -> Decision:
    """The SPEC §5 decision note with the facts that triggered it.

    A protocol fact that only one side's logs state is not a difference, but it is not
    confirmed either: it keeps the decision from "continue"."""
    if trainium is None:
        return Decision(PAUSE, ("no Trainium3 target to decide on",))
    inventory = context.inventory
    pause: list[str] = []
    run_set = trainium.target.run_set
    stats = context.run_set(run_set) if run_set else None
    if stats is None or stats.runs == 0:
        pause.append(f"{trainium.name}: no measured trial run yet (run set {run_set or 'not set'})")
    elif stats.counted == 0:
        pause.append(
            f"quality missed: none of the {stats.runs} runs in {run_set!r} finished with the "
            "quality target reached"
        )
    elif stats.verified == 0:
        pause.append(
            f"quality not verified: no run in {run_set!r} shows the quality target reached"
        )
    for item in (trainium, gpu):
        if item is None:
            continue
        price = item.input("usd_per_hour")
        if price.value is None:
            pause.append(f"{item.name}: price unverified ({price.provenance.source})")
        pause += [
            f"{item.name}: price unverified ({flag.message})"
            for flag in item.quote_flags
            if flag.kind in _UNVERIFIED
        ]
    # Late, too long or over budget cannot be "continue": the numbers say by how much.
    own_plan = next((p for p in plans if p.target == trainium.name), None)
    if own_plan is not None and own_plan.fails:
        pause += plan_facts(context, own_plan, trainium.total_usd)
    for term in ("storage_usd", "transfer_usd", "logs_usd", "data_prep_usd"):
        missing = trainium.term_unknowns(term)
        if missing:
            pause.append(f"side costs incomplete: {term[:-4]} needs {', '.join(missing)}")
    open_risks = [r for r in inventory.risks if r.status == "to-confirm"]
    blockers = [f"operation support to confirm: {r.title}" for r in open_risks]
    blockers += [f"feature not available: {f}" for f in inventory.software.features_missing]
    not_measured = [
        trainium.input(key).label
        for key in OBSERVED_INPUTS
        if trainium.input(key).provenance.kind != MEASURED
    ]
    every = inventory.distribution.checkpoint_interval_steps
    if every and stats is not None and stats.counted and not stats.checkpoint_measured:
        assumed = trainium.input("checkpoint_s")
        priced = (
            f"; priced as an assumption: {assumed.provenance.detail}"
            if assumed.value is not None
            else ""
        )
        not_measured.append(
            f"checkpoint saves (planned every {every} steps; the logs of {run_set!r} do not "
            f"show them{priced})"
        )
    if not_measured:
        blockers.append("stages not measured: " + ", ".join(not_measured))
    unconfirmed = [c.label for c in checks if c.status == NOT_CONFIRMED]
    if unconfirmed:
        blockers.append(
            "same protocol not confirmed: " + ", ".join(unconfirmed) + " stated by one side only"
        )
    limits = _limit_facts(stats, run_set)
    if pause:
        return Decision(PAUSE, tuple(pause + blockers + limits))
    if stats is not None and stats.limits and stats.limits[0][0] in _NOT_FIXED_BY_TARGET:
        limit, count = stats.limits[0]
        if count * 2 > stats.counted:
            facts = [
                f"the Trainium3 runs are {limit} ({count} of {stats.counted} counted runs): "
                "the target configuration does not remove that bottleneck; fix it or try "
                "another option",
                *limits[1:],
            ]
            return Decision(TRY_ANOTHER, tuple(facts + blockers))
    effort, unestimated = inventory.open_risk_effort()
    if comparable and trainium.total_usd >= gpu.total_usd:
        facts = [
            f"Trainium3 costs ${trainium.total_usd:,.2f} to the result, the GPU "
            f"${gpu.total_usd:,.2f}",
        ]
        if even is not None:
            best = even.observed_high
            facts.append(even.note)
            if best is not None and even.required_throughput is not None:
                facts.append(
                    f"best observed run {best:,.4g} {even.unit} vs break-even "
                    f"{even.required_throughput:,.4g} {even.unit}"
                )
        if effort or unestimated:
            facts.append(f"{effort_text(effort, unestimated)} of open porting effort buy no saving")
        protocol_notes = [b for b in blockers if b.startswith("same protocol not confirmed")]
        return Decision(TRY_ANOTHER, tuple(facts + protocol_notes + limits))
    if blockers:
        return Decision(PAUSE, tuple(blockers + limits))
    facts = [
        f"quality reached in {stats.verified} run(s) of {run_set!r}",
        "no open porting question",
        "every cost stage is measured",
    ]
    if comparable:
        facts.append(
            f"Trainium3 ${trainium.total_usd:,.2f} vs GPU ${gpu.total_usd:,.2f} to the same result"
        )
    else:
        facts.append("not compared with the GPU: " + "; ".join(reasons))
    return Decision(CONTINUE, tuple(facts + limits))


_NOT_FIXED_BY_TARGET = ("input/data-bound", "synchronisation/communication-bound")
"""Bottlenecks a faster accelerator does not remove (a low utilization is a finding
to explain, not something a bigger instance fixes)."""


def _limit_facts(stats: RunSetStats | None, run_set: str | None) -> list[str]:
    """What limits the Trainium3 runs, from their telemetry verdicts, as decision facts."""
    if stats is None or not stats.limits:
        return []
    counts = ", ".join(f"{limit} in {count}" for limit, count in stats.limits)
    busy = (
        ""
        if stats.steady_utilization_pct is None
        else f"; accelerators {stats.steady_utilization_pct:.0f}% busy in the steady window"
    )
    return [f"what limits the runs of {run_set!r}: {counts} of {stats.counted}{busy}"]
