"""The break-even throughput: the useful throughput at which the Trainium3 total equals the
GPU total (``break_even``); exact while the total is affine in training time, searched
when whole blocks make it stepped (``solve_throughput``, which the requirement before a trial
uses too).
"""

from __future__ import annotations

from collections.abc import Mapping
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


@dataclass(frozen=True)
class Solved:
    """The throughput at which a total reaches a given amount (``solve_throughput``)."""

    required: float | None
    """``None``: unreachable at any throughput."""
    floor_usd: float | None
    """The total at unlimited throughput (or at the largest searched one, for blocks)."""
    stepped: bool = False


_SEARCH_POINTS = 400
_SEARCH_SPAN = 1000.0
"""The stepped break-even is searched from 1/1000 to 1000 x a reference throughput."""


def solve_throughput(
    values: Mapping[str, float | None], target_usd: float, reference: float, block_billed: bool
) -> Solved:
    """The lowest useful throughput at which the formula's total for ``values`` is at most
    ``target_usd``. Exact for hourly billing (total = a + b / throughput, fitted at
    ``reference`` and twice it); for whole Capacity Block lengths the total moves in steps,
    so it is found on the formula itself (the total never rises with throughput), on a log
    grid around ``reference`` refined once."""
    if block_billed:
        return _stepped(values, target_usd, reference)
    variants = [{**values, "steady_throughput": reference},
                {**values, "steady_throughput": 2 * reference}]  # fmt: skip
    t1, t2 = cost_frame(input_frame(variants))["total_usd"].to_list()
    # total = a + b * x with x = 1 / throughput: x1 = 1/r, x2 = 1/(2 r)
    b = (t1 - t2) / (1 / reference - 1 / (2 * reference))
    a = t1 - b / reference
    if b <= 0 or target_usd <= a:
        return Solved(None, a)
    return Solved(b / (target_usd - a), a)


def _stepped(values: Mapping[str, float | None], target_usd: float, reference: float) -> Solved:
    def totals(rates: list[float]) -> list[float | None]:
        rows = [{**values, "steady_throughput": rate} for rate in rates]
        return cost_frame(input_frame(rows))["total_usd"].to_list()

    def grid(lo: float, hi: float) -> list[float]:
        step = (hi / lo) ** (1 / (_SEARCH_POINTS - 1))
        return [lo * step**i for i in range(_SEARCH_POINTS)]

    rates = grid(reference / _SEARCH_SPAN, reference * _SEARCH_SPAN)
    found = totals(rates)
    floor = found[-1]
    if floor is None or floor > target_usd:
        return Solved(None, floor, stepped=True)
    first = next(i for i, v in enumerate(found) if v is not None and v <= target_usd)
    if first == 0:
        return Solved(rates[0], floor, stepped=True)
    fine = grid(rates[first - 1], rates[first])
    refined = totals(fine)
    required = next(
        r for r, v in zip(fine, refined, strict=True) if v is not None and v <= target_usd
    )
    return Solved(required, floor, stepped=True)


def break_even(trainium: TargetEstimate, gpu_total: float) -> BreakEven:
    """Solve total(throughput) = gpu_total for the Trainium3 target as estimated."""
    observed = trainium.input("steady_throughput")
    measured = observed.provenance.kind == MEASURED
    basis = "observed" if measured else "assumed"
    low, high = (observed.low, observed.high) if measured else (None, None)
    unit = f"{trainium.work_unit or 'work units'}/s"
    r1 = observed.value
    assert r1 is not None  # a priced total had its throughput
    solved = solve_throughput(trainium.values(), gpu_total, r1, trainium.block_billed)
    if solved.required is None:
        if solved.stepped:
            note = (
                f"unreachable: billed in whole Capacity Block lengths, even at "
                f"{_SEARCH_SPAN:g}x the throughput the Trainium3 total stays at "
                f"{usd(solved.floor_usd)}, more than the GPU's ${gpu_total:,.2f}"
            )
        else:
            note = (
                f"unreachable: even at unlimited throughput the Trainium3 total stays above "
                f"${solved.floor_usd:,.2f} (startup, side costs, data preparation), more than "
                f"the GPU's ${gpu_total:,.2f}"
            )
        return BreakEven(None, r1, low, high, unit, note, basis)
    required = solved.required
    side = "above" if r1 >= required else "below"
    note = f"{basis} {r1:,.4g} {unit} is {side} the break-even {required:,.4g} {unit}"
    if solved.stepped:
        note += " (billed in whole Capacity Block lengths, the total moves in steps)"
    return BreakEven(required, r1, low, high, unit, note, basis)
