"""Model FLOPs utilization: the same yardstick for Trainium and GPU trials.

    MFU = 6 x parameters x tokens/s  /  (chips x peak dense FLOP/s per chip)

6 FLOPs per parameter per token is the usual estimate of a dense transformer's forward and
backward pass (attention's sequence-length term is left out, so MFU is slightly understated for
long sequences). It is a *derived* figure: every factor must be known (the inventory's
parameter count, the run's measured steady tokens/s, the instance's chip count and the chip's
peak at the run's precision); when any is unknown, MFU is unknown and says which factor is
missing, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from trntui.core.hardware import instance_hardware

FORMULA = "MFU = 6 x parameters x tokens/s / (chips x peak dense TFLOPS x 1e12)"
FLOPS_PER_PARAMETER_TOKEN = 6


@dataclass(frozen=True)
class Mfu:
    value: float | None
    """Fraction (0.42 = 42 %); None when a factor is unknown."""
    formula: str
    parameters_billion: float | None
    tokens_per_s: float | None
    chips: int | None
    peak_tflops_per_chip: float | None
    precision: str
    missing: tuple[str, ...]
    label: str = "derived"


def model_flops_utilization(
    parameters_billion: float | None,
    tokens_per_s: float | None,
    chips: int | None,
    peak_tflops_per_chip: float | None,
    precision: str = "bf16",
) -> Mfu:
    missing = tuple(
        name
        for name, value in (
            ("parameter count (inventory: model.parameters_billion)", parameters_billion),
            ("measured tokens/s on the steady window", tokens_per_s),
            ("accelerator chips in the run", chips),
            (f"peak {precision} TFLOPS of the chip", peak_tflops_per_chip),
        )
        if not value
    )
    value = None
    if not missing:
        achieved = FLOPS_PER_PARAMETER_TOKEN * parameters_billion * 1e9 * tokens_per_s
        value = achieved / (chips * peak_tflops_per_chip * 1e12)
    return Mfu(
        value,
        FORMULA,
        parameters_billion,
        tokens_per_s,
        chips,
        peak_tflops_per_chip,
        precision,
        missing,
    )


def run_mfu(
    parameters_billion: float | None,
    tokens_per_s: float | None,
    instance_type: str | None,
    instance_count: int = 1,
    precision: str = "bf16",
    run_chips: int | None = None,
) -> Mfu:
    """MFU of a run on ``instance_count`` instances of ``instance_type``, from the hardware
    table (chips per instance and peak per chip; unknown entries stay unknown).

    ``run_chips``: the chips the run itself measured or stated it ran on (its system size),
    which take the place of the table's count times ``instance_count``: the MFU is of the
    run, and a table without the instance's chip count (trn3) leaves it unknown otherwise.
    """
    row = instance_hardware(instance_type) if instance_type else None
    chips = run_chips or (row.chips * instance_count if row is not None and row.chips else None)
    peak = None
    if row is not None:
        spec = row.accelerator
        peak = (
            spec.fp8_dense_tflops if precision.lower().startswith("fp8") else spec.bf16_dense_tflops
        )
    return model_flops_utilization(parameters_billion, tokens_per_s, chips, peak, precision)
