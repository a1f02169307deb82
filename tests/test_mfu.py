"""Model FLOPs utilization: derived, with its formula; unknown when a factor is unknown."""

from __future__ import annotations

import pytest

from trntui.core.mfu import model_flops_utilization, run_mfu


def test_formula_by_hand() -> None:
    # 8B params, all trained, 10,000 tokens/s, 16 chips at 191 TFLOPS:
    # 6*8e9*1e4 / (16*191e12) = 15.7 %
    mfu = model_flops_utilization(8.0, 10_000.0, 16, 191.0)
    assert mfu.value == pytest.approx(0.15707, rel=1e-4)
    assert mfu.label == "derived"
    assert "(4 x parameters + 2 x trainable) x tokens/s" in mfu.formula
    assert "trainable not stated" in mfu.formula
    assert mfu.missing == ()
    assert mfu.implausible is None
    assert model_flops_utilization(
        8.0, 10_000.0, 16, 191.0, trainable_parameters_billion=8.0
    ).value == pytest.approx(mfu.value)


def test_a_frozen_base_computes_no_weight_gradients() -> None:
    """The sample's LoRA fine-tune: 70e9 parameters, 0.045e9 trainable, 21,488 tokens/s on 16
    Trainium3 chips at 671 TFLOPS bf16: (4 x 70e9 + 2 x 0.045e9) x 21,488 / (16 x 671e12)
    = 56.0 %, where 6 x 70e9 counted a full backward pass (84.1 %)."""
    lora = model_flops_utilization(70.0, 21_488.0, 16, 671.0, trainable_parameters_billion=0.045)
    assert lora.value == pytest.approx((4 * 70e9 + 2 * 0.045e9) * 21_488 / (16 * 671e12))
    assert lora.value == pytest.approx(0.5606, abs=1e-4)
    assert lora.implausible is None
    assert "2 x 0.045e9 trainable" in lora.worked() and "21,488 tokens/s" in lora.worked()
    full = model_flops_utilization(70.0, 21_488.0, 16, 671.0)
    assert full.value == pytest.approx(0.8406, abs=1e-4)


def test_an_mfu_above_70_percent_is_flagged_with_its_likely_cause() -> None:
    full = model_flops_utilization(70.0, 21_488.0, 16, 671.0)
    assert full.implausible is not None
    assert "above 70%" in full.implausible and "trainable parameters" in full.implausible
    padded = model_flops_utilization(
        70.0, 40_000.0, 16, 671.0, trainable_parameters_billion=0.045,
        tokens_assume_full_sequences=True,
    )  # fmt: skip
    assert padded.value is not None and padded.value > 0.7
    assert padded.implausible is not None and "full sequence" in padded.implausible


@pytest.mark.parametrize(
    "factors",
    [(None, 1e5, 16, 191.0), (8.0, None, 16, 191.0), (8.0, 1e5, None, 191.0), (8.0, 1e5, 16, None)],
)
def test_any_unknown_factor_makes_it_unknown(factors) -> None:
    mfu = model_flops_utilization(*factors)
    assert mfu.value is None
    assert len(mfu.missing) == 1


def test_from_instance_table() -> None:
    trn1 = run_mfu(8.0, 100_000.0, "trn1.32xlarge")
    assert trn1.chips == 16
    assert trn1.value is not None
    # GPU peak is not in the sources consulted: stays unknown, never guessed.
    assert run_mfu(8.0, 100_000.0, "p5.48xlarge").value is None
    # trn3 chip count unpublished: unknown.
    assert run_mfu(8.0, 100_000.0, "trn3.48xlarge").value is None
    assert run_mfu(8.0, 100_000.0, "trn1.32xlarge", instance_count=2).chips == 32
