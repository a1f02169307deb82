"""Does a measurement apply to a target? The system a run set measured against the target's.

SPEC §2: a measurement holds for the system it was taken on (nodes x accelerators). A run
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

from collections.abc import Sequence
from dataclasses import dataclass

from trntui.core.timeline import SystemSize


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


def set_size(sizes: Sequence[SystemSize | None]) -> SetSize:
    known = [size for size in sizes if size is not None]
    unknown = len(sizes) - len(known)
    if not known:
        return SetSize(None, False, unknown)
    if any(not size.same_size(known[0]) for size in known[1:]):
        return SetSize(None, True, unknown)
    return SetSize(known[0] if not unknown else None, False, unknown)


@dataclass(frozen=True)
class TargetSize:
    """A target's instances and the accelerators each carries, with where that count is from."""

    instance_type: str
    instances: int
    per_instance: int | None
    unit: str
    """What ``per_instance`` counts (``GPUs``, ``Trainium3 chips``, ``NeuronCores``, ...)."""
    source: str

    def text(self) -> str:
        per = "?" if self.per_instance is None else str(self.per_instance)
        total = "" if self.per_instance is None else f" = {self.instances * self.per_instance}"
        return f"{self.instances} x {self.instance_type} ({per} {self.unit} each){total}"


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
