"""Measured inputs: a target's inputs from its run set (medians of the runs that count, with
their range), the checkpoint time the logs do not show, and a measured throughput tied to the
system size it was measured on (or scaled along its family).
"""

from __future__ import annotations

import dataclasses

import polars as pl

from trntui.core.estimate.inputs import (
    ASSUMPTION,
    DERIVED,
    MEASURED,
    OBSERVED_INPUTS,
    THROUGHPUT_UNITS,
    Input,
    Provenance,
    unknown_input,
)
from trntui.core.estimate.observations import EMPTY_SAMPLES, EstimateContext
from trntui.core.format import plural
from trntui.core.inventory import Inventory, TrainingTarget
from trntui.core.quotes import PriceQuote
from trntui.core.run_facts import Spread
from trntui.core.scaling import INTERPOLATED, MEASURED_SIZE, Family, throughput_at
from trntui.core.system_size import SetSize, TargetSize, size_problem, target_size


def run_set_inputs(
    context: EstimateContext, target: TrainingTarget
) -> tuple[dict[str, Input], pl.DataFrame]:
    """Measured inputs of a target from its run set: medians of the runs that count, with the
    min-max range (report the range, not one lucky run)."""
    name = target.name
    keys = (*OBSERVED_INPUTS, "failed_fraction", "failed_run_s")
    empty = EMPTY_SAMPLES
    if not target.run_set:
        why = "no run set measures this target (set 'Measured by run set' on the target)"
        return _with_stated_launch(
            context, {key: unknown_input(key, why, name) for key in keys}
        ), empty
    source = target.run_set
    stats = context.run_set(source)
    ids = ", ".join(stats.suspect)
    suspects = plural(len(stats.suspect), "suspect run")
    left_out = f"; {suspects} left out: {ids} (`trntui runs` says why)" if stats.suspect else ""
    if stats.runs == 0:
        why = f"run set {source!r} has no imported runs"
        if stats.suspect:
            why = f"every run of {source!r} is suspect: {ids} (`trntui runs` says why)"
        return _with_stated_launch(
            context, {key: unknown_input(key, why, name) for key in keys}
        ), empty
    failed = stats.runs - stats.counted
    inputs = {
        "failed_fraction": Input(
            "failed_fraction",
            failed / stats.runs,
            Provenance(MEASURED, source, f"{failed} of {stats.runs} runs did not count{left_out}"),
            name,
            runs=stats.runs,
        )
    }
    times = stats.spreads["failed_run_s"]
    if failed == 0:
        inputs["failed_run_s"] = Input(
            "failed_run_s", 0.0, Provenance(MEASURED, source, "no run failed"), name
        )
    elif times.n == 0:
        why = "the runs that did not count have no clock"
        inputs["failed_run_s"] = unknown_input("failed_run_s", why, name)
    else:
        inputs["failed_run_s"] = _measured(
            "failed_run_s", times, source, name, "runs that did not count"
        )
    if stats.counted == 0:
        why = (
            f"no run in {source!r} finished with the quality target reached "
            f"({plural(stats.runs, 'run')} in it)"
        )
        inputs.update({key: unknown_input(key, why, name) for key in OBSERVED_INPUTS})
        return inputs, empty
    for key in OBSERVED_INPUTS:
        spread = stats.spreads[key]
        problem = None
        if spread.n == 0:
            problem = f"the counted runs of {source!r} do not show it"
        elif key == "steady_throughput":
            problem = _unit_problem(set(stats.units), context.inventory.goal.work_unit, source)
        inputs[key] = (
            unknown_input(key, problem, name)
            if problem
            else _measured(key, spread, source, name, "counted runs")
        )
    if inputs["launch_s"].is_unknown:
        inputs["launch_s"] = _launch_stated(context.inventory, source, name)
    restart = stats.spreads["restart_cost_s"]
    if restart.n:
        inputs["restart_cost_s"] = _measured(
            "restart_cost_s", restart, source, name, "runs that restarted (recovery + redone work)"
        )
    return inputs, stats.samples


def _with_stated_launch(context: EstimateContext, inputs: dict[str, Input]) -> dict[str, Input]:
    """Before any run is imported, the time outside the logs is what the inventory states
    (``software.launch_minutes``), when it states one: the other inputs stay unknown."""
    if context.inventory.software.launch_minutes is None:
        return inputs
    unknown = inputs["launch_s"]
    stated = _launch_stated(context.inventory, "", unknown.target or "")
    return {**inputs, "launch_s": dataclasses.replace(stated, target=unknown.target)}


def _launch_stated(inventory: Inventory, source: str, target: str) -> Input:
    """Time outside the logs when they carry no job clock: the inventory's statement, or an
    explicit unknown (never a silent 0)."""
    minutes = inventory.software.launch_minutes
    if minutes is None:
        why = (
            f"the logs of {source!r} do not show the time before their first line (no job "
            "wrapper clock): state it in the inventory (software.launch_minutes)"
        )
        return unknown_input("launch_s", why, target)
    owner = inventory.project.owner or "the project owner"
    how = f"inventory software.launch_minutes ({minutes:g} min); the logs do not show it"
    return Input("launch_s", minutes * 60.0, Provenance(ASSUMPTION, owner, how), target)


MEAN_INPUTS = frozenset({"retry_ratio"})
"""Inputs taken as the mean over runs, not the median: restarts are rare events, and the
median of three runs with one crash is zero, which would price failures at nothing."""


def _measured(key: str, spread: Spread, source: str, target: str, which: str) -> Input:
    if key in MEAN_INPUTS:
        value, how = spread.mean, "mean"
    else:
        value, how = spread.median, "median"
    return Input(
        key,
        value,
        Provenance(MEASURED, source, f"{how} of {spread.n} {which}"),
        target,
        low=spread.min,
        high=spread.max,
        runs=spread.n,
    )


def _unit_problem(units: set[str | None], work_unit: str | None, source: str) -> str | None:
    if not units:
        return f"run set {source!r} does not state its throughput unit"
    if len(units) > 1:
        return f"run set {source!r} mixes throughput units {sorted(map(str, units))}"
    unit = units.pop()
    if unit not in THROUGHPUT_UNITS:
        return f"run set {source!r} measures throughput in {unit!r}, not a known work unit"
    if work_unit is None:
        return "the goal's work unit is not set"
    if THROUGHPUT_UNITS[unit] != work_unit:
        return (
            f"run set {source!r} measures {unit}, the goal counts {work_unit}: "
            "no conversion is assumed"
        )
    return None


def checkpoint_input(context: EstimateContext, target: TrainingTarget) -> Input:
    """Time for the planned checkpoint saves that the trial logs do not show (see the module
    docstring); saves the logs show are already in ``overhead_ratio``."""
    inventory, name = context.inventory, target.name
    distribution = inventory.distribution
    every = distribution.checkpoint_interval_steps
    owner = inventory.project.owner or "the project owner"
    if not every:
        how = "no checkpoint interval planned (distribution.checkpoint_interval_steps)"
        return Input("checkpoint_s", 0.0, Provenance(ASSUMPTION, owner, how), name)
    stats = context.run_set(target.run_set) if target.run_set else None
    if target.run_set and stats is not None and stats.counted and stats.checkpoint_measured:
        how = "the logs show the saves: they are in the overhead ratio"
        return Input("checkpoint_s", 0.0, Provenance(MEASURED, target.run_set, how), name)
    planned = inventory.planned_steps()
    if planned is None:
        why = "planned steps are not known (goal work and batch size)"
        return unknown_input("checkpoint_s", why, name)
    minutes = distribution.checkpoint_save_minutes
    if minutes is None:
        why = (
            f"checkpoints every {every} steps are planned, the trial logs do not show a save, "
            "and the inventory states no save time (distribution.checkpoint_save_minutes)"
        )
        return unknown_input("checkpoint_s", why, name)
    saves = planned // every
    noun = "save" if saves == 1 else "saves"
    how = f"{saves} {noun} ({planned} steps / every {every}) x {minutes:g} min, inventory"
    return Input("checkpoint_s", saves * minutes * 60.0, Provenance(ASSUMPTION, owner, how), name)


def work_range(work: Input, context: EstimateContext, target: TrainingTarget) -> Input:
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


def _wanted(
    target: TrainingTarget, instances: int, quote: PriceQuote | None, size: SetSize
) -> TargetSize:
    measured = size.size
    counts_cores = measured is not None and "NeuronCore" in (measured.accelerator or "")
    return target_size(
        target.instance_type, instances, target.accelerators_per_instance, quote, counts_cores
    )


def along_family(
    target: TrainingTarget, instances: int, quote: PriceQuote | None, size: SetSize
) -> bool:
    """Whether ``instances`` of the target differ from the run set's size only in the node
    count (one instance a node, the same accelerators per node): the family scales to it."""
    measured = size.size
    if measured is None or measured.nodes is None or measured.nodes == instances:
        return False
    wanted = _wanted(target, instances, quote, size)
    same_nodes = dataclasses.replace(wanted, instances=measured.nodes)
    return size_problem(size, same_nodes, target.run_set or "") is None


def tied_to_size(
    throughput: Input,
    target: TrainingTarget,
    instances: int,
    quote: PriceQuote | None,
    size: SetSize,
    family: Family | None = None,
    scaling: tuple[float | None, str] = (None, ""),
) -> Input:
    """A measured throughput holds only on the system it was measured on (``system_size``).

    A target (or an instance-count override) of another node count gets the throughput its
    scaling family measured at that count, or interpolated between measured counts, or
    assumed from a stated efficiency per doubling (``core.scaling``); else an unknown
    throughput whose reason names both sizes, until a person's override gives one.
    """
    if throughput.provenance.kind != MEASURED:
        return throughput
    wanted = _wanted(target, instances, quote, size)
    problem = size_problem(size, wanted, target.run_set or "")
    if problem is not None and family is not None and along_family(target, instances, quote, size):
        return scaled_throughput(family, instances, target, scaling)
    if problem is not None:
        why = f"{problem}; the measured throughput does not apply (override it, with who and why)"
        return unknown_input("steady_throughput", why, target.name)
    detail = f"{throughput.provenance.detail}, on {size.text()}"
    if wanted.source == "stated on the target":
        detail += f" ({wanted.per_instance} per {target.instance_type} stated on the target)"
    return dataclasses.replace(
        throughput, provenance=dataclasses.replace(throughput.provenance, detail=detail)
    )


def scaled_throughput(
    family: Family, instances: int, target: TrainingTarget, scaling: tuple[float | None, str]
) -> Input:
    """The family's throughput at ``instances`` nodes, with its provenance: measured,
    interpolated, assumed from the stated efficiency per doubling, or unknown with why."""
    per_doubling, owner = scaling
    scaled = throughput_at(family, instances, per_doubling)
    if scaled.value is None:
        why = f"scaling family {family.name!r}: {scaled.detail}"
        return unknown_input("steady_throughput", why, target.name)
    if scaled.source == MEASURED_SIZE:
        provenance = Provenance(MEASURED, scaled.run_set or family.name, scaled.detail)
    elif scaled.source == INTERPOLATED:
        provenance = Provenance(DERIVED, f"scaling family {family.name!r}", scaled.detail)
    else:
        how = f"{scaled.detail} (inventory distribution.scaling_efficiency_per_doubling)"
        provenance = Provenance(ASSUMPTION, owner, how)
    return Input("steady_throughput", scaled.value, provenance, target.name)
