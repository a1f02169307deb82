"""Accelerators per instance type, and peak specs per accelerator, each with its public source.

Peak figures describe hardware, not a workload: they are shown next to measured throughput, never
used in its place. Where the sources consulted do not give a value, it stays ``None`` (unknown)
rather than a number remembered from elsewhere. Trainium figures come from the AWS Neuron
architecture pages; GPU counts per instance from the AWS instance type pages. GPU peak TFLOPS and
memory were not in those sources and are left unknown; the price list's ``GPU`` column, carried
on each fetched quote as ``accelerator_count``, takes precedence over this table for counts.
"""

from __future__ import annotations

from dataclasses import dataclass

_NEURON_ARCH = "AWS Neuron docs, about-neuron/arch/neuron-hardware/"
_EC2_ACCELERATED = "AWS EC2 accelerated computing instance types page"


@dataclass(frozen=True)
class AcceleratorSpec:
    """Peak dense throughput and memory of one accelerator chip."""

    name: str
    memory_gib: float | None
    bf16_dense_tflops: float | None
    fp8_dense_tflops: float | None
    source: str


@dataclass(frozen=True)
class InstanceHardware:
    """How many accelerators of which kind an instance type carries (``chips`` None = unknown)."""

    instance_type: str
    accelerator: AcceleratorSpec
    chips: int | None
    source: str
    neuron_cores: int | None = None
    """Logical NeuronCores a launcher starts one process each on (default LNC setting)."""


TRAINIUM1 = AcceleratorSpec(
    name="Trainium",
    memory_gib=32,
    bf16_dense_tflops=191,
    fp8_dense_tflops=191,
    source=_NEURON_ARCH + "trainium2.rst (Trainium vs Trainium2 comparison table)",
)
TRAINIUM2 = AcceleratorSpec(
    name="Trainium2",
    memory_gib=96,
    bf16_dense_tflops=667,
    fp8_dense_tflops=1299,
    source=_NEURON_ARCH + "trainium2.rst",
)
TRAINIUM3 = AcceleratorSpec(
    name="Trainium3",
    memory_gib=144,
    bf16_dense_tflops=671,
    fp8_dense_tflops=2517,  # MXFP8 dense
    source=_NEURON_ARCH + "trainium3.rst",
)
A100 = AcceleratorSpec("NVIDIA A100", None, None, None, _EC2_ACCELERATED + " (P4d)")
H100 = AcceleratorSpec("NVIDIA H100", None, None, None, _EC2_ACCELERATED + " (P5)")
H200 = AcceleratorSpec("NVIDIA H200", None, None, None, _EC2_ACCELERATED + " (P5e/P5en)")
B200 = AcceleratorSpec("NVIDIA B200", None, None, None, _EC2_ACCELERATED + " (P6-B200)")

TRN_INSTANCES = "AWS Neuron docs, Amazon EC2 Trn1 and Trn2 architecture pages"

HARDWARE: dict[str, InstanceHardware] = {
    row.instance_type: row
    for row in (
        InstanceHardware("trn1.2xlarge", TRAINIUM1, 1, TRN_INSTANCES, 2),
        InstanceHardware("trn1.32xlarge", TRAINIUM1, 16, TRN_INSTANCES, 32),
        InstanceHardware("trn1n.32xlarge", TRAINIUM1, 16, TRN_INSTANCES, 32),
        # 8 physical NeuronCores per Trainium2 chip, 4 logical at the default LNC=2.
        InstanceHardware("trn2.48xlarge", TRAINIUM2, 16, TRN_INSTANCES, 64),
        InstanceHardware("trn2u.48xlarge", TRAINIUM2, 16, TRN_INSTANCES, 64),
        InstanceHardware("p4d.24xlarge", A100, 8, A100.source),
        InstanceHardware("p5.48xlarge", H100, 8, H100.source),
        InstanceHardware("p5e.48xlarge", H200, 8, H200.source),
        InstanceHardware("p5en.48xlarge", H200, 8, H200.source),
        InstanceHardware("p6-b200.48xlarge", B200, 8, B200.source),
    )
}

# Trn3 instance type names were not published in the sources consulted (only UltraServer
# configurations of 64 and 144 chips), so any trn3 type maps to the chip with an unknown count.
_FAMILY_ACCELERATORS = {"trn3": TRAINIUM3}


def instance_hardware(instance_type: str) -> InstanceHardware | None:
    """The table row for ``instance_type``; trn3 types get the chip spec with unknown count."""
    row = HARDWARE.get(instance_type)
    if row is not None:
        return row
    family = instance_type.split(".", 1)[0]
    for prefix, accelerator in _FAMILY_ACCELERATORS.items():
        if family.startswith(prefix):
            return InstanceHardware(instance_type, accelerator, None, accelerator.source)
    return None
