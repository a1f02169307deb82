"""A target's measured inputs at its own instance count (``sized_inputs``).

A measurement holds for the system it was taken on (``core.system_size``). When the target's
instances are the size its run set measured, every measured input is that set's. Otherwise,
along the set's scaling family (``core.scaling``: the same workload measured at several node
counts, one instance a node):

* **a count the family measured** takes *every* input of the run set measured there
  (throughput, startup, time outside the logs, the overhead and restart ratios, the failed
  share and time, its planned checkpoints as that set shows them, and its runs for the
  band): the same total as a target measured by that set;
* **a count between two measured ones** takes each input interpolated linearly in log(nodes)
  between the two sets (the throughput in log(throughput), as ``scaling.throughput_at``),
  labelled "interpolated between measured 2 and 4 nodes", with no runs to draw a band from;
* **a count outside the measured range** takes the nearest measured set's inputs, said so,
  and a throughput assumed from the inventory's efficiency per doubling, else unknown.

**The work grows with the size.** MLPerf lets a larger system use a larger global batch, and a
larger batch needs more samples to reach the quality target (llama2_70b_lora: 3,072 on one
H200 node, 3,840 on four). The goal's work is read at the family's smallest measured size;
at another size it is scaled by what that size's verified runs needed over what the smallest
one's needed (their medians; interpolated like the other inputs between measured sizes). So
the time to the verified result, work included, is what each size measured, and a count has
one total whichever target of the family asks for it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from trntui.core.estimate.inputs import DERIVED, MEASURED, OBSERVED_INPUTS, Input, Provenance
from trntui.core.estimate.measured import (
    along_family,
    checkpoint_input,
    run_set_inputs,
    scaled_throughput,
    tied_to_size,
    work_range,
)
from trntui.core.estimate.observations import EMPTY_SAMPLES, EstimateContext
from trntui.core.inventory import TrainingTarget
from trntui.core.quotes import PriceQuote
from trntui.core.scaling import Family, MeasuredSize

SIZE_INPUTS = (*OBSERVED_INPUTS, "failed_fraction", "failed_run_s", "restart_cost_s")
"""Inputs a run set measures, so each size has its own."""


@dataclass(frozen=True)
class SizedInputs:
    """The inputs that replace the run set's own at the target's count, and the runs a band
    draws from there."""

    inputs: dict[str, Input]
    samples: pl.DataFrame


def sized_inputs(
    context: EstimateContext,
    target: TrainingTarget,
    quote: PriceQuote | None,
    own: Mapping[str, Input],
    own_samples: pl.DataFrame,
    family: Family | None,
    scaling: tuple[float | None, str],
) -> SizedInputs:
    """The target's measured inputs at ``target.instance_count`` (module docstring), from its
    run set's own (``own``, ``own_samples``) and its ``family``."""
    stats = context.run_set(target.run_set) if target.run_set else None
    size = stats.size if stats is not None else None
    throughput = own["steady_throughput"]
    if size is None or throughput.provenance.kind != MEASURED:
        return SizedInputs({}, own_samples)
    count = target.instance_count
    tied = tied_to_size(throughput, target, count, quote, size, family, scaling)
    if family is None or not along_family(target, count, quote, size):
        # The set's own size (or one it cannot scale to): its inputs, and the work scaled to
        # it along its family.
        inputs = {"steady_throughput": tied}
        if tied.provenance.kind == MEASURED and size.size is not None:
            nodes = size.size.nodes or count
            inputs.update(
                _scaled_work(context, target, family, target.run_set, nodes, own["work_amount"])
            )
        return SizedInputs(inputs, own_samples)
    point = family.point(count)
    if point is not None:
        return _measured_at(context, target, family, point, own["work_amount"])
    with_rate = [p for p in family.points if p.throughput is not None]
    below = [p for p in with_rate if p.nodes < count]
    above = [p for p in with_rate if p.nodes > count]
    if below and above:
        return _interpolated(context, target, family, below[-1], above[0], own["work_amount"])
    edge = (above[0] if above else below[-1]) if with_rate else None
    inputs = {"steady_throughput": scaled_throughput(family, count, target, scaling)}
    if edge is not None:
        at_edge, _ = run_set_inputs(context, dataclasses.replace(target, run_set=edge.run_set))
        note = f"as measured at {edge.nodes} nodes, the nearest measured size"
        for key in SIZE_INPUTS:
            if key != "steady_throughput" and key in at_edge:
                inputs[key] = _noted(at_edge[key], note)
        inputs.update(
            _scaled_work(context, target, family, edge.run_set, edge.nodes, own["work_amount"])
        )
    return SizedInputs(inputs, EMPTY_SAMPLES)


def _noted(item: Input, note: str) -> Input:
    if item.is_unknown:
        return item
    detail = f"{item.provenance.detail}, {note}" if item.provenance.detail else note
    return dataclasses.replace(item, provenance=dataclasses.replace(item.provenance, detail=detail))


def _measured_at(
    context: EstimateContext,
    target: TrainingTarget,
    family: Family,
    point: MeasuredSize,
    goal_work: Input,
) -> SizedInputs:
    """Every input of the run set the family measured at the target's count."""
    there = dataclasses.replace(target, run_set=point.run_set)
    found, samples = run_set_inputs(context, there)
    note = f"measured at {point.nodes} nodes (run set {point.run_set!r})"
    inputs = {key: _noted(found[key], note) for key in SIZE_INPUTS if key in found}
    inputs["checkpoint_s"] = checkpoint_input(context, there)
    inputs.update(_scaled_work(context, there, family, point.run_set, point.nodes, goal_work))
    return SizedInputs(inputs, samples)


def _interpolated(
    context: EstimateContext,
    target: TrainingTarget,
    family: Family,
    low: MeasuredSize,
    high: MeasuredSize,
    goal_work: Input,
) -> SizedInputs:
    """Each input between the two measured sizes around the count, linear in log(nodes)."""
    count = target.instance_count
    share = (math.log(count) - math.log(low.nodes)) / (math.log(high.nodes) - math.log(low.nodes))
    sides = [
        run_set_inputs(context, dataclasses.replace(target, run_set=p.run_set))[0]
        for p in (low, high)
    ]
    detail = f"interpolated between measured {low.nodes} and {high.nodes} nodes"
    source = f"scaling family {family.name!r}"
    inputs: dict[str, Input] = {}
    for key in SIZE_INPUTS:
        a, b = (side[key].value if key in side else None for side in sides)
        if a is None or b is None:
            if key in sides[0] or key in sides[1]:
                why = f"{source}: not known at both {low.nodes} and {high.nodes} nodes"
                inputs[key] = Input(key, None, Provenance("unknown", why), target.name)
            continue
        if key == "steady_throughput":
            value = math.exp(math.log(a) + share * (math.log(b) - math.log(a)))
        else:
            value = a + share * (b - a)
        inputs[key] = Input(key, value, Provenance(DERIVED, source, detail), target.name)
    low_ratio, high_ratio = (_work_ratio(context, family, p.run_set) for p in (low, high))
    if low_ratio is not None and high_ratio is not None and goal_work.value is not None:
        ratio = math.exp(math.log(low_ratio) + share * (math.log(high_ratio) - math.log(low_ratio)))
        inputs["work_amount"] = _work_input(goal_work, ratio, family, detail, context)
    return SizedInputs(inputs, EMPTY_SAMPLES)


def _work_ratio(context: EstimateContext, family: Family, run_set: str) -> float | None:
    """What ``run_set``'s verified runs needed to reach the quality target over what the
    family's smallest measured size needed (medians), in the goal's unit; ``None`` when
    either is not known."""
    unit = context.inventory.goal.work_unit

    def needed(name: str) -> float | None:
        stats = context.run_set(name)
        spread = stats.spreads.get("work_to_target")
        if spread is None or not spread.median:
            return None
        if {u.removesuffix("/s") for u in stats.units} != {unit}:
            return None
        return spread.median

    reference = next((work for p in family.points if (work := needed(p.run_set))), None)
    here = needed(run_set)
    if reference is None or here is None:
        return None
    return here / reference


def _scaled_work(
    context: EstimateContext,
    target: TrainingTarget,
    family: Family | None,
    run_set: str | None,
    nodes: int,
    goal_work: Input,
) -> dict[str, Input]:
    """The goal's work at a measured size of ``family`` (``run_set``, ``nodes``), with the
    range that set's verified runs show; nothing when it is the goal's as stated."""
    if family is None or run_set is None or goal_work.value is None:
        return {}
    ratio = _work_ratio(context, family, run_set)
    ranged = work_range(goal_work, context, dataclasses.replace(target, run_set=run_set))
    if ratio is None or math.isclose(ratio, 1.0):
        return {"work_amount": ranged} if ranged is not goal_work else {}
    smallest = family.points[0].nodes
    why = (
        f"the verified runs at {_nodes(nodes)} needed {ratio:,.4g} times the work those at "
        f"{_nodes(smallest)} needed to reach the quality target (a larger global batch needs "
        "more)"
    )
    return {"work_amount": _work_input(ranged, ratio, family, why, context)}


def _nodes(count: int) -> str:
    return f"{count} node" if count == 1 else f"{count} nodes"


def _work_input(
    work: Input, ratio: float, family: Family, why: str, context: EstimateContext
) -> Input:
    goal = work.value
    assert goal is not None  # both callers pass a goal with a value
    smallest = family.points[0].nodes
    unit = context.inventory.goal.work_unit or "work units"
    detail = (
        f"goal {goal:,.6g} {unit}, read at {_nodes(smallest)} (the family's smallest "
        f"measured size) x {ratio:,.4g}: {why}"
    )
    return dataclasses.replace(
        work,
        value=goal * ratio,
        low=None if work.low is None else work.low * ratio,
        high=None if work.high is None else work.high * ratio,
        provenance=Provenance(DERIVED, f"goal and scaling family {family.name!r}", detail),
    )
