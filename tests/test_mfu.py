"""Model FLOPs utilization: derived, with its formula; unknown when a factor is unknown."""

from __future__ import annotations

import pytest

from trntui.core.mfu import model_flops_utilization, run_mfu


def test_formula_by_hand() -> None:
    # 8B params, 10,000 tokens/s, 16 chips at 191 TFLOPS: 6*8e9*1e4 / (16*191e12) = 15.7 %
    mfu = model_flops_utilization(8.0, 10_000.0, 16, 191.0)
    assert mfu.value == pytest.approx(0.15707, rel=1e-4)
    assert mfu.label == "derived"
    assert "6 x parameters x tokens/s" in mfu.formula
    assert mfu.missing == ()


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
