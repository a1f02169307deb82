"""One set of inputs analysed: the estimate, the Trainium3-vs-GPU comparison, the
sensitivity bars and the predictive P10-P90 band, computed together after every edit
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
from trntui.core.prediction import Band, prediction_bands
from trntui.core.sensitivity import Sensitivity, sensitivity


@dataclass(frozen=True)
class Analysis:
    """Everything the Scenarios screen and the report show for one set of inputs."""

    estimate: Estimate
    comparison: Comparison
    sensitivities: tuple[Sensitivity, ...]
    bands: tuple[Band, ...]


def analyze(
    context: EstimateContext,
    overrides: Sequence[Override] = (),
    *,
    prepared: Sequence[TargetInputs] | None = None,
    gpu_target: str | None = None,
) -> Analysis:
    """Estimate, comparison, tornado bars and the P10-P90 band after an edit, in one call.

    Raises ``InvalidInputError`` for a bad override, before anything is computed, so the
    caller keeps showing its last valid ``Analysis``. Pass ``prepared`` (``prepare(context)``)
    when only overrides changed since the last call. ``gpu_target`` names the GPU target
    Trainium3 is compared with (``compare``; the first GPU target when None).
    """
    result = estimate(context, overrides, prepared)
    bands = prediction_bands(result)
    comparison = compare(context, result, bands, gpu_target=gpu_target)
    return Analysis(result, comparison, sensitivity(result), bands)
