"""Model FLOPs utilization: the same yardstick for Trainium and GPU trials.

    MFU = FLOPs per token x tokens/s  /  (chips x peak dense FLOP/s per chip)

FLOPs per token are the model's real ones for the work it does, counted per parameter (a
matrix multiply costs 2 FLOPs per weight per token; attention's sequence-length term is left
out, so MFU is slightly understated for long sequences):

* every parameter runs forward (2 N) and passes the gradient on to the layer below (2 N);
* only a *trainable* parameter also gets its own weight gradient (2 T).

So ``4 N + 2 T`` FLOPs per token: ``6 N`` for full training (T = N), about ``4 N`` for a LoRA
fine-tune whose base is frozen (T a fraction of a percent of N). Where the inventory does not
state the trainable parameters, all are taken as trained (6 N), and the formula says so.

It is a *derived* figure: every factor must be known (the inventory's parameter count, the
run's measured steady tokens/s, the chips the run used and the chip's peak at its precision);
when any is unknown, MFU is unknown and says which factor is missing, never a guess. An MFU
above ``IMPLAUSIBLE_ABOVE`` is beyond what published training runs reach: it is shown flagged,
naming the input that most likely made it so.
"""

from __future__ import annotations

from dataclasses import dataclass

from trntui.core.hardware import instance_hardware

FORMULA = "MFU = (4 x parameters + 2 x trainable) x tokens/s / (chips x peak dense TFLOPS x 1e12)"
FORWARD_AND_INPUT_GRADIENT_FLOPS = 4
"""Per parameter per token: forward (2) and the gradient passed to the layer below (2)."""
WEIGHT_GRADIENT_FLOPS = 2
"""Per trainable parameter per token: its own weight gradient."""
IMPLAUSIBLE_ABOVE = 0.70


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
    trainable_parameters_billion: float | None = None
    """The trained parameters the FLOPs count (``None``: not stated, all taken as trained)."""
    implausible: str | None = None
    """Why the value cannot be right (above ``IMPLAUSIBLE_ABOVE``) and which input most likely
    made it so; ``None`` when it is plausible or unknown."""

    def worked(self) -> str:
        """The formula with this run's numbers in it (or the formula alone when unknown)."""
        if self.value is None:
            return self.formula
        n = self.parameters_billion or 0.0
        t = self.trainable_parameters_billion
        flops = f"6 x {n:g}e9" if t is None or t >= n else f"(4 x {n:g}e9 + 2 x {t:g}e9 trainable)"
        return (
            f"{flops} x {self.tokens_per_s:,.0f} tokens/s / "
            f"({self.chips} x {self.peak_tflops_per_chip:g} TFLOPS)"
        )


def flops_per_token(parameters_billion: float, trainable_billion: float | None) -> float:
    """``4 N + 2 T`` (``6 N`` when T is not stated or not below N), in FLOPs."""
    trained = parameters_billion if trainable_billion is None else trainable_billion
    trained = min(trained, parameters_billion)
    return (
        FORWARD_AND_INPUT_GRADIENT_FLOPS * parameters_billion + WEIGHT_GRADIENT_FLOPS * trained
    ) * 1e9


def _likely_cause(
    trainable_billion: float | None,
    parameters_billion: float,
    tokens_assume_full_sequences: bool,
    precision: str,
) -> str:
    """The input that most likely made an MFU implausible, most likely first."""
    if trainable_billion is None:
        return (
            "the trainable parameters are not stated (inventory: model."
            "trainable_parameters_billion), so every parameter is taken as trained; a frozen "
            "base (LoRA) computes no weight gradients"
        )
    if tokens_assume_full_sequences:
        return (
            "tokens/s counts every sample as a full sequence of the log's sequence length; "
            "padded or shorter samples carry fewer tokens"
        )
    if not precision.lower().startswith("fp8"):
        return f"the peak is the chip's {precision}; a run in FP8 has a higher peak"
    return "the chip count of the run's system size (state it with z on Runs if it is wrong)"


def model_flops_utilization(
    parameters_billion: float | None,
    tokens_per_s: float | None,
    chips: int | None,
    peak_tflops_per_chip: float | None,
    precision: str = "bf16",
    trainable_parameters_billion: float | None = None,
    tokens_assume_full_sequences: bool = False,
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
    trainable = trainable_parameters_billion
    formula = FORMULA if trainable is not None else FORMULA + " (trainable not stated: all)"
    value = implausible = None
    if parameters_billion and tokens_per_s and chips and peak_tflops_per_chip:  # none missing
        achieved = flops_per_token(parameters_billion, trainable) * tokens_per_s
        value = achieved / (chips * peak_tflops_per_chip * 1e12)
        if value > IMPLAUSIBLE_ABOVE:
            cause = _likely_cause(
                trainable, parameters_billion, tokens_assume_full_sequences, precision
            )
            implausible = (
                f"above {IMPLAUSIBLE_ABOVE:.0%}, beyond what published training runs reach; "
                f"most likely: {cause}"
            )
    return Mfu(
        value,
        formula,
        parameters_billion,
        tokens_per_s,
        chips,
        peak_tflops_per_chip,
        precision,
        missing,
        trainable_parameters_billion=trainable,
        implausible=implausible,
    )


def run_mfu(
    parameters_billion: float | None,
    tokens_per_s: float | None,
    instance_type: str | None,
    instance_count: int = 1,
    precision: str = "bf16",
    run_chips: int | None = None,
    trainable_parameters_billion: float | None = None,
    tokens_assume_full_sequences: bool = False,
) -> Mfu:
    """MFU of a run on ``instance_count`` instances of ``instance_type``, from the hardware
    table (chips per instance and peak per chip; unknown entries stay unknown).

    ``run_chips``: the chips the run itself measured or stated it ran on (its system size),
    which take the place of the table's count times ``instance_count``: the MFU is of the
    run, and a table without the instance's chip count (trn3) leaves it unknown otherwise.
    ``tokens_assume_full_sequences``: the run's tokens/s is its samples/s times the sequence
    length (named when the value is implausible).
    """
    row = instance_hardware(instance_type) if instance_type else None
    chips = run_chips or (row.chips * instance_count if row is not None and row.chips else None)
    peak = None
    if row is not None:
        spec = row.accelerator
        peak = (
            spec.fp8_dense_tflops if precision.lower().startswith("fp8") else spec.bf16_dense_tflops
        )
    return model_flops_utilization(
        parameters_billion,
        tokens_per_s,
        chips,
        peak,
        precision,
        trainable_parameters_billion,
        tokens_assume_full_sequences,
    )
