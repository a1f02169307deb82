"""Trainium3 against the GPU for a project's estimate (``compare``): the protocol gate, the
ratio and saving when comparable, the break-even, the plan checks and the decision, in one
``Comparison``.
"""

from __future__ import annotations

from dataclasses import dataclass

from trntui.core.comparison.before_trial import Requirement, TrialRuns, requirement, trial_runs
from trntui.core.comparison.breakeven import BreakEven, break_even
from trntui.core.comparison.decision import Decision, decide
from trntui.core.comparison.protocol_gate import (
    CONFIRMED,
    FactCheck,
    Protocol,
    fact_checks,
    inventory_differences,
    protocol,
    protocol_differences,
    work_difference,
)
from trntui.core.estimate import Estimate, EstimateContext, TargetEstimate
from trntui.core.plan_check import Payback, PlanCheck, check_plan, payback
from trntui.core.prediction import Band, prediction_bands

CHOSEN = "chosen"
"""``Comparison.gpu_choice`` when the GPU target compared is the one asked for."""
FIRST_GPU = "the first GPU target"
"""``Comparison.gpu_choice`` when none was asked for (Inventory > Training targets' order)."""


@dataclass(frozen=True)
class Comparison:
    """Trainium3 against the GPU for one estimate (``compare``): the protocols, whether the
    results are comparable, the ratio, saving and break-even when they are, the plan checks,
    the payback and the decision."""

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
    requirement: Requirement | None = None
    """Before any Trainium3 run: what it must reach to cost no more than the GPU."""
    trial_runs: TrialRuns | None = None
    """How many Trainium3 runs a band within +/-10% needs, from the spread observed."""
    gpu_choice: str = FIRST_GPU
    """How the GPU side was picked, in words: ``CHOSEN``, ``FIRST_GPU``, or why a chosen
    name was not used (``pick_gpu``)."""

    @property
    def protocol_confirmed(self) -> bool:
        """Every protocol fact is stated by both sides and agrees (and at least one is)."""
        return bool(self.fact_checks) and all(c.status == CONFIRMED for c in self.fact_checks)


def _pick(estimate: Estimate, family: str) -> TargetEstimate | None:
    return next((t for t in estimate.targets if t.target.accelerator_family == family), None)


def gpu_target_names(estimate: Estimate) -> list[str]:
    """The GPU targets Trainium3 can be compared with, in the inventory's order."""
    return [t.name for t in estimate.targets if t.target.accelerator_family == "GPU"]


def pick_gpu(estimate: Estimate, wanted: str | None) -> tuple[TargetEstimate | None, str]:
    """The GPU target to compare with, and how it was picked: ``wanted`` when it names a GPU
    target; else the first GPU target, saying why a ``wanted`` name was not used (a target
    renamed, deleted or of another family since it was chosen: never silently)."""
    first = _pick(estimate, "GPU")
    if wanted is None:
        return first, FIRST_GPU
    found = next((t for t in estimate.targets if t.name == wanted), None)
    if found is not None and found.target.accelerator_family == "GPU":
        return found, CHOSEN
    why = "is not a target now" if found is None else "is not a GPU target"
    return first, f"{FIRST_GPU} ({wanted!r}, the one chosen, {why})"


def compare(
    context: EstimateContext,
    estimate: Estimate,
    bands: tuple[Band, ...] | None = None,
    *,
    gpu_target: str | None = None,
) -> Comparison:
    """The Trainium3-vs-GPU comparison of an estimate: the first Trainium3 target against the
    GPU target named ``gpu_target`` (``pick_gpu``: the first GPU target when none is named);
    its ``bands`` (``core.prediction``) are computed when not given."""
    trainium = _pick(estimate, "Trainium3")
    gpu, gpu_choice = pick_gpu(estimate, gpu_target)
    protocols = tuple(
        protocol(context, t, estimate.overrides) for t in (trainium, gpu) if t is not None
    )
    reasons: list[str] = []
    if trainium is None:
        reasons.append("no Trainium3 target")
    if gpu is None:
        reasons.append("no GPU target")
    checks: tuple[FactCheck, ...] = ()
    other_work = None
    if trainium is not None and gpu is not None:
        other_work = work_difference(protocols[0], protocols[1])
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
        # no reasons: both targets are there and priced
        assert trainium is not None and gpu is not None
        assert trainium.total_usd is not None and gpu.total_usd is not None
        ratio = trainium.total_usd / gpu.total_usd
        saving = gpu.total_usd - trainium.total_usd
        even = break_even(trainium, gpu.total_usd)
    plans = tuple(check_plan(context, item) for item in (trainium, gpu) if item is not None)
    needs = trial = None
    if trainium is not None:
        bands = prediction_bands(estimate) if bands is None else bands
        by_name = {band.target: band for band in bands}
        trial = trial_runs(by_name.get(trainium.name), by_name.get(gpu.name) if gpu else None)
        run_set = trainium.target.run_set
        # What Trainium3 must reach to cost no more than the GPU is a break-even too: only
        # for the same amount of work.
        untried = not run_set or context.run_set(run_set).runs == 0
        if gpu is not None and untried and other_work is None:
            needs = requirement(trainium, gpu)
    decision = decide(
        context,
        trainium,
        gpu,
        comparable,
        reasons,
        even,
        checks,
        plans,
        needs,
        trial,
        other_work=other_work,
    )
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
        needs,
        trial,
        gpu_choice,
    )
