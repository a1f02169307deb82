"""The decision note (``decide``): *pause*, *try another option* or *continue the trial*, with
every missing condition a pause waits for; before any Trainium3 run, *run a trial* with what
it must reach.
"""

from __future__ import annotations

from dataclasses import dataclass

from trntui.core.comparison.before_trial import Requirement, TrialRuns
from trntui.core.comparison.breakeven import BreakEven
from trntui.core.comparison.protocol_gate import NOT_CONFIRMED, FactCheck
from trntui.core.estimate import (
    MEASURED,
    OBSERVED_INPUTS,
    EstimateContext,
    RunSetStats,
    TargetEstimate,
)
from trntui.core.format import plural
from trntui.core.inventory import effort_text
from trntui.core.plan_check import PlanCheck, plan_facts
from trntui.core.quotes import FlagKind

CONTINUE = "continue the trial"
TRY_ANOTHER = "try another option"
PAUSE = "pause"
RUN_TRIAL = "run a trial"

_UNVERIFIED = {
    FlagKind.STALE,
    FlagKind.OTHER_REGION,
    FlagKind.OTHER_PURCHASE_OPTION,
    FlagKind.UNKNOWN_PRICE,
    FlagKind.UNVERIFIED,
}


@dataclass(frozen=True)
class Decision:
    """The decision note (``decide``): the action to take and the facts that triggered it."""

    action: str
    """``continue the trial``, ``try another option`` or ``pause``."""
    facts: tuple[str, ...]
    """The facts that triggered it."""


def decide(
    context: EstimateContext,
    trainium: TargetEstimate | None,
    gpu: TargetEstimate | None,
    comparable: bool,
    reasons: list[str],
    even: BreakEven | None,
    checks: tuple[FactCheck, ...] = (),
    plans: tuple[PlanCheck, ...] = (),
    needs: Requirement | None = None,
    trial: TrialRuns | None = None,
    *,
    other_work: str | None = None,
) -> Decision:
    """The decision note (the method's step 5 in the README) with the facts that triggered it.
    ``other_work`` says why the two sides' work to finish differs (``work_difference``): no
    requirement is stated against a GPU total for other work.

    A protocol fact that only one side's logs state is not a difference, but it is not
    confirmed either: it keeps the decision from "continue". With no Trainium3 run measured
    yet, the decision is whether to run a trial (``_before_trial``)."""
    if trainium is None:
        return Decision(PAUSE, ("no Trainium3 target to decide on",))
    inventory = context.inventory
    pause: list[str] = []
    run_set = trainium.target.run_set
    stats = context.run_set(run_set) if run_set else None
    if stats is None or stats.runs == 0:
        return _before_trial(context, trainium, gpu, needs, trial, other_work)
    if stats.counted == 0:
        pause.append(
            f"quality missed: no run in {run_set!r} finished with the quality target reached "
            f"({plural(stats.runs, 'run')} in it)"
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
    # Comparable: both targets are there and priced.
    trainium_usd = trainium.total_usd if comparable else None
    gpu_usd = gpu.total_usd if comparable and gpu is not None else None
    if trainium_usd is not None and gpu_usd is not None and trainium_usd >= gpu_usd:
        facts = [
            f"Trainium3 costs ${trainium_usd:,.2f} to the result, the GPU ${gpu_usd:,.2f}",
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
    assert stats is not None  # no runs paused above
    facts = [
        f"quality reached in {plural(stats.verified, 'run')} of {run_set!r}",
        "no open porting question",
        "every cost stage is measured",
    ]
    if trainium_usd is not None and gpu_usd is not None:
        facts.append(f"Trainium3 ${trainium_usd:,.2f} vs GPU ${gpu_usd:,.2f} to the same result")
    else:
        facts.append("not compared with the GPU: " + "; ".join(reasons))
    return Decision(CONTINUE, tuple(facts + limits))


def _before_trial(
    context: EstimateContext,
    trainium: TargetEstimate,
    gpu: TargetEstimate | None,
    needs: Requirement | None,
    trial: TrialRuns | None,
    other_work: str | None = None,
) -> Decision:
    """No Trainium3 run is measured: *run a trial* when the GPU is measured and Trainium3
    priced, with what Trainium3 must reach (requirements) and how many runs a narrow band
    needs; *try another option* when no throughput is enough; else *pause* until the
    comparison has something to stand on (the same work to finish on both sides included)."""
    run_set = trainium.target.run_set
    first = f"{trainium.name}: no measured trial run yet (run set {run_set or 'not set'})"
    if gpu is None:
        return Decision(PAUSE, (first, "no GPU target to say what a trial must reach"))
    if other_work is not None:
        return Decision(
            PAUSE, (first, f"no requirement against the GPU's total for other work: {other_work}")
        )
    if gpu.total_usd is None:
        return Decision(PAUSE, (first, f"{gpu.name}: {gpu.headline()}: a trial's requirement "
                                "needs the GPU's total"))  # fmt: skip
    if needs is None:
        missing = [
            i.label
            for i in trainium.unknown_inputs()
            if i.key in ("usd_per_hour", "work_amount") or i.key.endswith("_per_gb_month")
            or i.key.endswith("_per_gb") or i.key.startswith("data_prep")
        ]  # fmt: skip
        why = ", ".join(missing) or "an input no trial measures"
        return Decision(PAUSE, (first, f"{trainium.name}: the requirement needs {why}"))
    if needs.throughput is None:
        return Decision(TRY_ANOTHER, (first, needs.note))
    facts = [first, *needs.lines()]
    if trial is not None:
        facts.append(trial.text())
    if trainium.assumptions_only:
        facts.append(
            f"{trainium.name}'s total {trainium.headline()} is made of assumptions only: no "
            "input of it is measured"
        )
    for item in (trainium, gpu):
        facts += [
            f"{item.name}: the requirement rests on an unverified price ({flag.message})"
            for flag in item.quote_flags
            if flag.kind in _UNVERIFIED
        ]
    facts += [
        f"to answer in the trial: {r.title}"
        for r in context.inventory.risks
        if r.status == "to-confirm"
    ]
    return Decision(RUN_TRIAL, tuple(facts))


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
        else f"; the accelerators in use {stats.steady_utilization_pct:.0f}% busy in the steady "
        "window"
    )
    return [f"what limits the runs of {run_set!r}: {counts} of {stats.counted}{busy}"]
