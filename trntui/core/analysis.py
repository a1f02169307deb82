"""One set of inputs analysed: the estimate, the Trainium3-vs-GPU comparison, the
sensitivity bars and the resampled P10/P50/P90, computed together after every edit
(``analyze``). The Scenarios screen shows an ``Analysis``; ``core.report`` renders one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trntui.core.comparison import Comparison, compare
from trntui.core.estimate import (
    Estimate,
    EstimateContext,
    Override,
    TargetInputs,
    estimate,
)
from trntui.core.sensitivity import (
    DEFAULT_DRAWS,
    Distribution,
    Sensitivity,
    resample,
    sensitivity,
)


@dataclass(frozen=True)
class Analysis:
    """Everything the Scenarios screen and the report show for one set of inputs."""

    estimate: Estimate
    comparison: Comparison
    sensitivities: tuple[Sensitivity, ...]
    distributions: tuple[Distribution, ...]


def analyze(
    context: EstimateContext,
    overrides: Sequence[Override] = (),
    *,
    prepared: Sequence[TargetInputs] | None = None,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> Analysis:
    """Estimate, comparison, tornado bars and P10/P50/P90 after an edit, in one call.

    Raises ``InvalidInputError`` for a bad override, before anything is computed, so the
    caller keeps showing its last valid ``Analysis``. Pass ``prepared`` (``prepare(context)``)
    when only overrides changed since the last call.
    """
    result = estimate(context, overrides, prepared)
    return Analysis(
        result,
        compare(context, result),
        sensitivity(result),
        resample(result, draws=draws, seed=seed),
    )
