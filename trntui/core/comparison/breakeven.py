"""The break-even throughput: the useful throughput at which the Trainium3 total equals the
GPU total (``break_even``); exact while the total is affine in training time, searched
when whole blocks make it stepped.
"""

from __future__ import annotations

from dataclasses import dataclass

from trntui.core.estimate import MEASURED, TargetEstimate, cost_frame, input_frame
from trntui.core.format import usd


@dataclass(frozen=True)
class BreakEven:
    """The Trainium3 throughput at which its total equals the GPU total (``break_even``), the
    throughput it has (with its range when measured) and a note comparing the two."""

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
