"""Does a measurement apply to a target? The system a run set measured against the target's.

A measurement holds for the system it was taken on (nodes x accelerators). A run
set's size is that of its runs when they all agree; a set that mixes sizes has none (its runs
are not repeats of one measurement) and is flagged, never averaged. A target's size is its
instance count x the accelerators per instance, taken from what the user stated on the target
(an assumption), else the price list's GPU column on its quote, else the hardware table; on
Neuron, where the launcher counts logical NeuronCores rather than chips, the table's
NeuronCores per instance are compared instead.

The measured inputs apply only when the two sizes are the same: the same number of instances
as nodes and, where both are known, the same accelerators per node. Scaling across sizes is
measured (a scaling family) or stated as an assumption, never done silently here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trntui.core.hardware import TRN_INSTANCES, instance_hardware
from trntui.core.timeline import SystemSize

if TYPE_CHECKING:
    # Only named in annotations: an import (runs table, family key) loads no price rules.
    from trntui.core.quotes import PriceQuote


@dataclass(frozen=True)
class SetSize:
    """The size of a run set: ``size`` when every run states the same one."""

    size: SystemSize | None
    mixed: bool = False
    """The runs state different sizes."""
    unknown_runs: int = 0
    """Runs whose size neither their log nor a statement gives."""

    def short_text(self) -> str:
        """``1 x 8 H100-SXM5-80GB`` (no vendor, no total): for one-line summaries."""
        if self.mixed or self.size is None:
            return self.text()
        size = self.size
        name = (size.accelerator or "").removeprefix("NVIDIA ")
        if size.nodes is None or size.accelerators_per_node is None:
            text = f"{size.accelerators} {name}".strip() + " in all"
        else:
            text = f"{size.nodes} x {size.accelerators_per_node} {name}".strip()
        return text + (" (stated)" if size.is_assumption else "")

    def text(self) -> str:
        if self.mixed:
            return "mixed sizes"
        if self.size is None:
            return "size unknown"
        text = self.size.text()
        return f"{text} (stated by {self.size.stated_by})" if self.size.is_assumption else text


def _same_system(a: SystemSize, b: SystemSize) -> bool:
    models = accelerator_model(a.accelerator), accelerator_model(b.accelerator)
    return a.same_size(b) and (None in models or models[0] == models[1])


def set_size(sizes: Sequence[SystemSize | None]) -> SetSize:
    """One size for the set when every run has the same (a size a log states is shown
    rather than the same size stated by a person)."""
    known = [size for size in sizes if size is not None]
    unknown = len(sizes) - len(known)
    if not known:
        return SetSize(None, False, unknown)
    if any(not _same_system(size, known[0]) for size in known[1:]):
        return SetSize(None, True, unknown)
    shown = next((size for size in known if not size.is_assumption), known[0])
    return SetSize(shown if not unknown else None, False, unknown)


def is_complete(size: SystemSize | None) -> bool:
    return size is not None and size.nodes is not None and size.accelerators_per_node is not None


def effective_size(logged: SystemSize | None, stated: SystemSize | None) -> SystemSize | None:
    """A run's size: the size a person stated for its set when there is one (an assumption
    with who stated it, which a person can always make: a log can be wrong), carrying what the
    log said when that differs (``overrides``); else what its log states."""
    if stated is None:
        return logged
    if logged is None:
        return stated
    parts = (
        (logged.nodes, stated.nodes),
        (logged.accelerators_per_node, stated.accelerators_per_node),
        (logged.accelerators, stated.accelerators),
    )
    differs = any(mine is not None and mine != theirs for mine, theirs in parts)
    if not differs and not logged.conflicts:
        return stated  # the statement completes what the log states
    return dataclasses.replace(stated, overrides=f"{logged.text()} ({logged.source})")


@dataclass(frozen=True)
class TargetSize:
    """A target's instances and the accelerators each carries, with where that count is from."""

    instance_type: str
    instances: int
    per_instance: int | None
    unit: str
    """What ``per_instance`` counts (``GPUs``, ``Trainium3 chips``, ``NeuronCores``, ...)."""
    source: str
    accelerator: str | None = None
    """The accelerator model the instance type carries, when the hardware table knows it."""

    def text(self) -> str:
        per = "?" if self.per_instance is None else str(self.per_instance)
        total = "" if self.per_instance is None else f" = {self.instances * self.per_instance}"
        return f"{self.instances} x {self.instance_type} ({per} {self.unit} each){total}"


def target_size(
    instance_type: str,
    instances: int,
    stated: int | None,
    quote: PriceQuote | None,
    counts_neuron_cores: bool = False,
) -> TargetSize:
    """The target's instances and accelerators per instance, in the unit the run set counts:
    stated on the target (an assumption) first, else the price list's GPU column, else the
    hardware table (its NeuronCores when the run set counts NeuronCores)."""
    row = instance_hardware(instance_type)
    name = row.accelerator.name if row is not None else None
    unit = "NeuronCores" if counts_neuron_cores else name or "accelerators"
    per: int | None
    if stated:
        per, source = stated, "stated on the target"
    elif counts_neuron_cores:
        per, source = (row.neuron_cores if row is not None else None), TRN_INSTANCES
    elif quote is not None and quote.accelerator_count:
        per, source = quote.accelerator_count, "the price list's GPU count"
    else:
        per, source = (row.chips if row is not None else None), (row.source if row else "unknown")
    return TargetSize(instance_type, instances, per, unit, source, name)


_MODEL = re.compile(r"\b(Trainium\d?|TPU[- ]?v\w+|[A-Z]{1,3}\d{2,4}[A-Z]?)\b", re.IGNORECASE)


def accelerator_model(name: str | None) -> str | None:
    """The model code in an accelerator's name (``NVIDIA H100-SXM5-80GB`` -> ``H100``,
    ``Trainium3`` -> ``TRAINIUM3``), to compare names written by different sources."""
    if not name:
        return None
    match = _MODEL.search(name)
    return match.group(1).upper().replace(" ", "-") if match else None


def size_problem(measured: SetSize, target: TargetSize, run_set: str) -> str | None:
    """Why the run set's measurements do not apply to the target, or ``None`` when they do."""
    if measured.mixed:
        return (
            f"run set {run_set!r} mixes system sizes: its runs are not repeats of one "
            "measurement (split the set by size)"
        )
    size = measured.size
    if size is None:
        missing = (
            f"{measured.unknown_runs} of its runs print no system size"
            if measured.unknown_runs
            else "its logs print no system size"
        )
        return (
            f"the system run set {run_set!r} measured is not known ({missing}): state it "
            f"with `trntui size` (an assumption) to tie it to {target.instance_type}"
        )
    both = f"measured on {size.text()}; target is {target.text()}"
    ran_on, offers = accelerator_model(size.accelerator), accelerator_model(target.accelerator)
    if ran_on is not None and offers is not None and ran_on != offers:
        return f"measured on {ran_on}, {target.instance_type} carries {offers}: {both}"
    if size.nodes is not None and size.nodes != target.instances:
        return both
    if target.per_instance is None:
        return (
            f"{both}: accelerators per {target.instance_type} are not known; state them on "
            "the target (an assumption)"
        )
    if size.nodes is not None and size.accelerators_per_node is not None:
        if size.accelerators_per_node != target.per_instance:
            return both
        return None
    if size.accelerators is not None and size.accelerators != target.instances * (
        target.per_instance
    ):
        return both
    return None if size.accelerators is not None else both
