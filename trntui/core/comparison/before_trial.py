"""Before a Trainium3 trial: what Trainium3 must reach to cost no more than the measured GPU
(``requirement``), and how many trial runs a band of a stated width needs (``trial_runs``).

The usual question before any Trainium3 run is "should we try it at all?". The GPU side is
measured; Trainium3 is only priced. So instead of a ratio nobody can compute, the comparison
states **requirements**, never measurements:

* **the break-even time to the result**: the longest wall clock per instance, launch to the
  verified result with expected retries, at which Trainium3's total (its price, its
  instances, the same side costs) equals the GPU's total;
* **the break-even useful throughput**: the throughput that gives that time for the goal's
  work, with the inputs a person stated (the inventory's time outside the logs, its planned
  checkpoint saves, any scenario override) and each stage no Trainium3 run has measured yet
  (startup and compile, overheads, restarts, failed attempts) counted as 0, and named: each
  one Trainium3 turns out to spend raises the requirement, so these are the least it must do.

``trial_runs`` says how many runs a band within +/-10% of P50 needs (``core.prediction``
``runs_for_width``): from the Trainium3 runs' own spread once two are measured, else from the
GPU runs' spread, as the only one observed for this workload (said so).
"""

from __future__ import annotations

from dataclasses import dataclass

from trntui.core.comparison.breakeven import solve_throughput
from trntui.core.estimate import (
    MEASURED,
    OBSERVED_INPUTS,
    TargetEstimate,
    cost_frame,
    input_frame,
    shown_unit,
)
from trntui.core.format import plural, usd, wall_clock
from trntui.core.prediction import TARGET_HALF_WIDTH, Band, runs_for_width

_COUNTED_AS_ZERO = (*OBSERVED_INPUTS, "failed_fraction", "failed_run_s", "checkpoint_s")
"""Inputs only a trial run measures: before one, each counts as 0 in the requirement."""


@dataclass(frozen=True)
class Requirement:
    """What Trainium3 must reach to cost no more than the GPU (``requirement``)."""

    gpu_total_usd: float
    throughput: float | None
    """Break-even useful throughput (``None``: no throughput is enough)."""
    unit: str
    time_to_result_h: float | None
    """Break-even wall clock per instance, launch to the verified result, retries included."""
    counted_as_zero: tuple[str, ...]
    """Labels of the stages no Trainium3 run measured, counted as 0."""
    stated: tuple[str, ...]
    """The assumptions it rests on besides the price (label: value, who)."""
    note: str = ""
    """Why no throughput is enough, when none is."""

    def lines(self) -> list[str]:
        """The requirement in words, one fact a line (the decision's facts)."""
        if self.throughput is None:
            return [self.note]
        time = wall_clock(self.time_to_result_h)
        out = [
            f"requirement (not a measurement): useful throughput of at least "
            f"{self.throughput:,.4g} {self.unit}, i.e. at most {time} from launch to the "
            f"verified result, to cost no more than the GPU's {usd(self.gpu_total_usd)}"
        ]
        if self.counted_as_zero:
            out.append(
                "counted as 0 until a trial measures them (each one raises the requirement): "
                + ", ".join(self.counted_as_zero)
            )
        if self.stated:
            out.append("stated assumptions: " + "; ".join(self.stated))
        return out


def requirement(trainium: TargetEstimate, gpu: TargetEstimate) -> Requirement | None:
    """The requirement of the module docstring, or ``None`` when it cannot be stated: the GPU
    total is unknown, or a Trainium3 input no run measures (its price, a side-cost rate, the
    goal's work) is unknown."""
    if gpu.total_usd is None:
        return None
    values = trainium.values()
    zero = []
    for key in _COUNTED_AS_ZERO:
        item = trainium.input(key)
        if key != "steady_throughput" and item.provenance.kind != MEASURED and item.is_unknown:
            values[key] = 0.0
            zero.append(item.label)
    work = values.get("work_amount")
    if not work:
        return None
    # A reference pace: the goal's work in the GPU's wall clock (any positive one would do).
    reference = work / max(3600.0 * (gpu.wall_hours or 1.0), 1.0)
    probe = cost_frame(input_frame([{**values, "steady_throughput": reference}]))
    if probe["total_usd"][0] is None:
        return None  # its price, a side cost or data preparation is unknown
    solved = solve_throughput(values, gpu.total_usd, reference, trainium.block_billed)
    unit = f"{trainium.work_unit or 'work units'}/s"
    stated = tuple(
        f"{i.label} {i.value:,.4g} {shown_unit(i.unit, trainium.work_unit)} ({i.provenance.source})"
        for i in trainium.inputs
        if i.provenance.kind == "assumption"
        and i.key in ("launch_s", "checkpoint_s", *OBSERVED_INPUTS)
        and i.value
    )
    if solved.required is None:
        note = (
            f"no useful throughput is enough: even at unlimited throughput Trainium3 costs "
            f"{usd(solved.floor_usd)} (its startup as stated, side costs, data preparation), "
            f"more than the GPU's {usd(gpu.total_usd)}"
        )
        return Requirement(gpu.total_usd, None, unit, None, tuple(zero), stated, note)
    at = cost_frame(input_frame([{**values, "steady_throughput": solved.required}]))
    return Requirement(
        gpu.total_usd,
        solved.required,
        unit,
        at["wall_h"][0],
        tuple(zero),
        stated,
    )


@dataclass(frozen=True)
class TrialRuns:
    """How many Trainium3 runs a band within ``half_width`` of P50 needs (``trial_runs``)."""

    needed: int | None
    """Runs in all (``None``: no number of runs with that spread gets there)."""
    have: int
    log_sd: float
    basis: str
    """Whose run-to-run spread it is computed from, in words."""
    half_width: float = TARGET_HALF_WIDTH

    @property
    def more(self) -> int | None:
        return None if self.needed is None else max(0, self.needed - self.have)

    def text(self) -> str:
        spread = f"sd {self.log_sd:.1%} of a run's total"
        width = f"+/-{self.half_width:.0%} of P50"
        if self.needed is None:
            return (
                f"no number of Trainium3 runs narrows the band to {width}: {self.basis} vary "
                f"by {spread}"
            )
        if self.more == 0:
            return f"the {self.have} Trainium3 runs already give a band within {width}"
        more = plural(self.more or 0, "more Trainium3 run")  # needed is known here
        return (
            f"{more} ({self.needed} in all) would narrow the band to {width}, from the spread "
            f"of {self.basis} ({spread})"
        )


def trial_runs(trainium_band: Band | None, gpu_band: Band | None) -> TrialRuns | None:
    """From the Trainium3 runs' spread when there is one, else the GPU runs'; ``None`` when
    neither side has two runs to show a spread."""
    if trainium_band is not None and trainium_band.log_sd is not None:
        return TrialRuns(
            runs_for_width(trainium_band.log_sd),
            trainium_band.runs,
            trainium_band.log_sd,
            f"its {trainium_band.runs} runs",
        )
    if gpu_band is not None and gpu_band.log_sd is not None:
        have = trainium_band.runs if trainium_band is not None else 0
        return TrialRuns(
            runs_for_width(gpu_band.log_sd),
            have,
            gpu_band.log_sd,
            f"the {gpu_band.runs} GPU runs (no two Trainium3 runs show a spread yet)",
        )
    return None
