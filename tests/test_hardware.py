"""Accelerator counts and peak specs, checked against the AWS Neuron architecture pages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from trntui.core.hardware import HARDWARE, instance_hardware
from trntui.core.quotes import PriceQuote, accelerators_per_instance, usd_per_accelerator_hour


def quote(instance_type: str, usd: float | None, count: int | None = None) -> PriceQuote:
    return PriceQuote(
        instance_type=instance_type,
        region="us-east-1",
        purchase_option="on-demand",
        usd_per_hour=usd,
        retrieved_at=datetime(2026, 11, 1, tzinfo=UTC),
        manual=False,
        accelerator_count=count,
    )


# (chips per instance, memory GiB, dense BF16 TFLOPS, FP8 TFLOPS) as the Neuron docs state them.
@pytest.mark.parametrize(
    ("instance_type", "chips", "memory", "bf16", "fp8"),
    [
        ("trn1.2xlarge", 1, 32, 191, 191),
        ("trn1.32xlarge", 16, 32, 191, 191),
        ("trn1n.32xlarge", 16, 32, 191, 191),
        ("trn2.48xlarge", 16, 96, 667, 1299),
        ("trn2u.48xlarge", 16, 96, 667, 1299),
    ],
)
def test_trainium_rows_match_the_neuron_docs(
    instance_type: str, chips: int, memory: int, bf16: int, fp8: int
) -> None:
    row = instance_hardware(instance_type)
    assert row is not None
    assert row.chips == chips
    assert row.accelerator.memory_gib == memory
    assert row.accelerator.bf16_dense_tflops == bf16
    assert row.accelerator.fp8_dense_tflops == fp8
    assert "Neuron" in row.source


@pytest.mark.parametrize(
    ("instance_type", "name"),
    [
        ("p4d.24xlarge", "A100"),
        ("p5.48xlarge", "H100"),
        ("p5e.48xlarge", "H200"),
        ("p5en.48xlarge", "H200"),
        ("p6-b200.48xlarge", "B200"),
    ],
)
def test_gpu_instances_have_eight_gpus_and_no_guessed_specs(instance_type: str, name: str) -> None:
    row = instance_hardware(instance_type)
    assert row is not None
    assert row.chips == 8
    assert name in row.accelerator.name
    # Not in the consulted sources, so unknown rather than remembered.
    assert row.accelerator.bf16_dense_tflops is None
    assert row.accelerator.fp8_dense_tflops is None


def test_trainium3_chip_is_known_but_instance_chip_count_is_not() -> None:
    row = instance_hardware("trn3.48xlarge")
    assert row is not None
    assert row.accelerator.name == "Trainium3"
    assert row.accelerator.bf16_dense_tflops == 671
    assert row.accelerator.fp8_dense_tflops == 2517
    assert row.accelerator.memory_gib == 144
    assert row.chips is None
    assert usd_per_accelerator_hour(quote("trn3.48xlarge", 100.0)) is None


def test_every_row_names_its_source() -> None:
    assert HARDWARE
    for row in HARDWARE.values():
        assert row.source.strip()
        assert row.accelerator.source.strip()


def test_price_per_accelerator_hour_divides_by_chips() -> None:
    assert usd_per_accelerator_hour(quote("trn2.48xlarge", 44.8)) == pytest.approx(2.8)
    assert usd_per_accelerator_hour(quote("trn1.2xlarge", 1.5)) == pytest.approx(1.5)


def test_price_list_gpu_column_wins_over_the_table() -> None:
    listed = quote("p5.48xlarge", 40.0, count=4)
    assert accelerators_per_instance(listed) == 4
    assert usd_per_accelerator_hour(listed) == pytest.approx(10.0)


def test_unknown_instance_or_price_gives_unknown() -> None:
    assert instance_hardware("m7i.large") is None
    assert usd_per_accelerator_hour(quote("m7i.large", 0.1)) is None
    assert usd_per_accelerator_hour(quote("p5.48xlarge", None)) is None
    assert usd_per_accelerator_hour(quote("m7i.large", 0.1, count=1)) == pytest.approx(0.1)
