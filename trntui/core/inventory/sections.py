"""The inventory's sections: the vocabularies their fields accept and one frozen dataclass per
section, each field with its ``FieldSpec`` (label, unit, range, help).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import ClassVar, Protocol

from trntui.core.fields import FieldValueError, spec_field
from trntui.core.quality import QualityTarget

PRECISIONS = ("bf16", "fp16", "fp32", "fp8", "mxfp8", "mixed bf16/fp32", "other")
WORK_UNITS = ("tokens", "samples", "steps", "epochs")
DIRECTIONS = ("higher is better", "lower is better")
RISK_STATUSES = ("to-confirm", "confirmed", "resolved")
RISK_KINDS = (
    "op rewrite",
    "custom kernel",
    "library swap",
    "framework feature",
    "precision",
    "performance",
    "other",
)
PURCHASE_OPTIONS = (
    "on-demand",
    *(
        f"reserved-{years}yr-{offering}-{payment}-upfront"
        for years in (1, 3)
        for offering in ("standard", "convertible")
        for payment in ("no", "partial", "all")
    ),
    *(
        f"savings-plan-{plan}-{years}yr-{payment}-upfront"
        for plan in ("compute", "ec2-instance")
        for years in (1, 3)
        for payment in ("no", "partial", "all")
    ),
    "capacity-block",
    "spot",
    "negotiated",
)
"""The names price quotes use too, so a target finds its quote by exact match."""


class Section(Protocol):
    """A section class as a form and the TOML check use it: a frozen dataclass of
    ``spec_field``s with a title."""

    TITLE: ClassVar[str]


class ListSection(Section, Protocol):
    """An item of a list section (risks, targets): the columns its table shows."""

    COLUMNS: ClassVar[tuple[str, ...]]


_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")


def is_instance_type(value: str) -> bool:
    """An EC2 instance type name (family.size such as ``trn2.48xlarge``)."""
    return bool(_INSTANCE_TYPE.match(value))


def check_instance_type(value: str) -> None:
    if not is_instance_type(value):
        raise FieldValueError(
            f"'{value}' is not an EC2 instance type: expected family.size such as trn2.48xlarge"
        )


def check_region(value: str) -> None:
    if not _REGION.match(value):
        raise FieldValueError(f"'{value}' is not an AWS region code such as us-east-1")


@dataclass(frozen=True)
class ProjectInfo:
    """Who the project is for; ``example`` marks sample data so nobody mistakes it for a quote."""

    TITLE: ClassVar[str] = "Project"
    name: str = spec_field("text", "Project name", required=True, default="Untitled project")
    description: str | None = spec_field("text", "Description")
    owner: str | None = spec_field("text", "Owner", help="Who answers for these numbers")
    example: bool = spec_field(
        "bool", "Example data", default=False, help="yes marks every value as an illustration"
    )
    engineer_day_usd: float | None = spec_field(
        "float",
        "Engineer day rate",
        unit="USD/day",
        greater_than=0,
        maximum=100_000,
        help="prices the porting effort (an assumption)",
    )


@dataclass(frozen=True)
class ModelInfo:
    """The model being trained: what it is (name, architecture, version), its size, precision and
    sequence length, and its notable and custom operators."""

    TITLE: ClassVar[str] = "Model"
    name: str | None = spec_field("text", "Model", placeholder="e.g. Llama-2-70B LoRA")
    architecture: str | None = spec_field("text", "Architecture", placeholder="e.g. decoder-only")
    version: str | None = spec_field("text", "Model version", help="checkpoint or commit")
    parameters_billion: float | None = spec_field(
        "float", "Parameters", unit="billion", greater_than=0, maximum=100_000
    )
    trainable_parameters_billion: float | None = spec_field(
        "float", "Trainable parameters", unit="billion", minimum=0, maximum=100_000
    )
    precision: str | None = spec_field("choice", "Numeric precision", choices=PRECISIONS)
    tensor_types: str | None = spec_field(
        "text", "Tensor types", placeholder="e.g. bf16 weights, fp32 optimizer state"
    )
    sequence_length: int | None = spec_field(
        "int", "Sequence length", unit="tokens", greater_than=0, maximum=10_000_000
    )
    input_shape: str | None = spec_field("text", "Input size", help="for non-text inputs")
    operators: tuple[str, ...] = spec_field("list", "Notable operations", help="comma-separated")
    custom_operators: tuple[str, ...] = spec_field(
        "list", "Custom operators", help="comma-separated; each one is a porting question"
    )


@dataclass(frozen=True)
class SoftwareStack:
    """The software the training runs on: framework, library and Neuron SDK versions, compile
    steps, the launch time outside the logs, and the features needed and still missing."""

    TITLE: ClassVar[str] = "Software stack"
    framework: str | None = spec_field("text", "Framework", placeholder="e.g. PyTorch")
    framework_version: str | None = spec_field("text", "Framework version")
    libraries: tuple[str, ...] = spec_field(
        "list", "Libraries", help="name and version, comma-separated"
    )
    neuron_sdk_version: str | None = spec_field("text", "Neuron SDK version")
    compile_steps: str | None = spec_field(
        "text", "Compile steps", placeholder="e.g. neuron_parallel_compile before training"
    )
    launch_minutes: float | None = spec_field(
        "float",
        "Launch outside logs",
        unit="minutes",
        minimum=0,
        maximum=10_000,
        help="per attempt: container start and imports before the first log line, teardown "
        "after the last; used when the logs carry no job clock",
    )
    features_needed: tuple[str, ...] = spec_field("list", "Features needed")
    features_missing: tuple[str, ...] = spec_field(
        "list", "Missing features", help="needed features the target lacks today"
    )


@dataclass(frozen=True)
class Distribution:
    """How the training is spread and checkpointed: parallelism, sharding and batch sizes, the
    checkpoint interval and save time, and the scaling efficiency assumed per doubling."""

    TITLE: ClassVar[str] = "Distribution"
    data_parallel: int | None = spec_field("int", "Data parallel", unit="ways", minimum=1)
    tensor_parallel: int | None = spec_field("int", "Tensor parallel", unit="ways", minimum=1)
    pipeline_parallel: int | None = spec_field("int", "Pipeline parallel", unit="ways", minimum=1)
    context_parallel: int | None = spec_field("int", "Context parallel", unit="ways", minimum=1)
    sharding: str | None = spec_field("text", "Sharding", placeholder="e.g. ZeRO-1")
    synchronisation: str | None = spec_field(
        "text", "Synchronisation", placeholder="e.g. all-reduce over EFA"
    )
    global_batch_size: int | None = spec_field(
        "int", "Global batch size", unit="samples", greater_than=0
    )
    micro_batch_size: int | None = spec_field(
        "int", "Micro batch size", unit="samples", greater_than=0
    )
    data_layout: str | None = spec_field("text", "Data layout")
    checkpoint_interval_steps: int | None = spec_field(
        "int", "Checkpoint every", unit="steps", greater_than=0
    )
    checkpoint_save_minutes: float | None = spec_field(
        "float",
        "Checkpoint save time",
        unit="minutes",
        minimum=0,
        help="per save; the estimate uses it only when the trial logs do not show the saves",
    )
    scaling_efficiency_per_doubling: float | None = spec_field(
        "float",
        "Scaling per doubling",
        unit="efficiency",
        greater_than=0,
        maximum=1,
        help="assumed efficiency each doubling of nodes keeps, beyond the measured sizes "
        "(0.9 = 90%); blank: not measured means unknown",
    )
    checkpoint_method: str | None = spec_field("text", "Checkpoint method")
    resume_method: str | None = spec_field("text", "Resume method")


@dataclass(frozen=True)
class TrainingGoal:
    """What the training must reach, and within which limits: the work to finish, the quality
    criterion, and the dates, wall clock and budget the plan is checked against."""

    TITLE: ClassVar[str] = "Training goal"
    work_amount: float | None = spec_field(
        "float", "Work to finish", greater_than=0, help="in the work unit below"
    )
    work_unit: str | None = spec_field("choice", "Work unit", choices=WORK_UNITS)
    quality_metric: str | None = spec_field(
        "text", "Quality metric", placeholder="e.g. eval_accuracy"
    )
    quality_threshold: float | None = spec_field("float", "Quality threshold")
    quality_direction: str | None = spec_field("choice", "Quality direction", choices=DIRECTIONS)
    verification: str | None = spec_field(
        "text", "Quality verified by", help="how the quality result is verified"
    )
    stop_criteria: str | None = spec_field("text", "Stop criteria")
    deadline: dt.date | None = spec_field("date", "Deadline", help="YYYY-MM-DD")
    max_wall_clock_days: float | None = spec_field(
        "float", "Max wall clock", unit="days", greater_than=0
    )
    start_date: dt.date | None = spec_field("date", "Start date", help="YYYY-MM-DD; blank: today")
    capacity_lead_days: float | None = spec_field(
        "float", "Capacity lead time", unit="days", minimum=0, help="to get the instances"
    )
    budget_usd: float | None = spec_field(
        "float", "Budget", unit="USD", greater_than=0, help="for this training"
    )

    def quality_target(self) -> QualityTarget | None:
        """The criterion a run must meet; ``None`` until threshold and direction are set."""
        if self.quality_threshold is None or self.quality_direction is None:
            return None
        return QualityTarget(
            self.quality_metric,
            self.quality_threshold,
            self.quality_direction == "higher is better",
        )


@dataclass(frozen=True)
class DataPreparation:
    """The data preparation before training: its steps, where it runs, and how many instances for
    how long (priced as the estimate's data preparation term)."""

    TITLE: ClassVar[str] = "Data preparation"
    steps: tuple[str, ...] = spec_field(
        "list", "Steps", placeholder="e.g. cleaning, tokenization, packing"
    )
    runs_on: str | None = spec_field("text", "Runs on", placeholder="e.g. c7i.8xlarge or on-prem")
    instance_count: int | None = spec_field("int", "Instances", minimum=1)
    hours: float | None = spec_field("float", "Duration", unit="hours", minimum=0)
    notes: str | None = spec_field("text", "Notes")


@dataclass(frozen=True)
class SideCosts:
    """Quantities for the side costs (the method's step 3); their prices come from the price
    lookup."""

    TITLE: ClassVar[str] = "Side costs"
    dataset_gb: float | None = spec_field("float", "Dataset size", unit="GB", minimum=0)
    checkpoint_gb: float | None = spec_field(
        "float", "Checkpoint size", unit="GB", minimum=0, help="one checkpoint"
    )
    checkpoints_kept: int | None = spec_field("int", "Checkpoints kept", minimum=0)
    months_stored: float | None = spec_field("float", "Months stored", unit="months", minimum=0)
    ebs_gb_per_instance: float | None = spec_field(
        "float", "Block storage", unit="GB/instance", minimum=0
    )
    data_moved_gb: float | None = spec_field(
        "float", "Data moved", unit="GB", minimum=0, help="between zones or services"
    )
    log_gb: float | None = spec_field("float", "Log volume", unit="GB", minimum=0)


@dataclass(frozen=True)
class MigrationRisk:
    """One adaptation the port needs; its effort is engineering time, never instance hours."""

    TITLE: ClassVar[str] = "Migration risk"
    COLUMNS: ClassVar[tuple[str, ...]] = ("status", "effort_days", "kind", "title")
    title: str = spec_field("text", "Risk", required=True, default="")
    kind: str | None = spec_field("choice", "Kind", choices=RISK_KINDS)
    status: str = spec_field(
        "choice", "Status", choices=RISK_STATUSES, required=True, default="to-confirm"
    )
    effort_days: float | None = spec_field(
        "float", "Engineering effort", unit="days", minimum=0, maximum=3650, short="Days"
    )
    owner: str | None = spec_field("text", "Owner")
    notes: str | None = spec_field("text", "Notes")


@dataclass(frozen=True)
class TrainingTarget:
    """A candidate place to train: exact instance type, count, region and purchase option."""

    TITLE: ClassVar[str] = "Training target"
    COLUMNS: ClassVar[tuple[str, ...]] = (
        "name",
        "instance_type",
        "instance_count",
        "run_set",
        "region",
        "purchase_option",
    )
    RETIRED: ClassVar[dict[str, str]] = {
        "trial_instance_count": "no longer used: a target is tied to the system size its run "
        "set measured (read from the logs, or stated with `trntui size`); remove this key",
    }
    name: str = spec_field("text", "Name", required=True, default="")
    instance_type: str = spec_field(
        "text",
        "Instance type",
        required=True,
        default="",
        placeholder="e.g. trn3.48xlarge",
        validator=check_instance_type,
    )
    instance_count: int = spec_field(
        "int", "Instances", required=True, default=1, minimum=1, maximum=100_000, short="N"
    )
    region: str = spec_field(
        "text",
        "Region",
        required=True,
        default="us-east-1",
        placeholder="e.g. us-east-1",
        validator=check_region,
    )
    purchase_option: str = spec_field(
        "choice",
        "Purchase option",
        choices=PURCHASE_OPTIONS,
        required=True,
        default="on-demand",
        short="Purchase",
    )
    run_set: str | None = spec_field(
        "text",
        "Measured by run set",
        help="the imported run set that measures this target",
        short="Run set",
    )
    accelerators_per_instance: int | None = spec_field(
        "int",
        "Per instance",
        unit="accelerators",
        minimum=1,
        maximum=10_000,
        help="state it when the hardware table does not know the type (an assumption), "
        "counted as the run set counts them",
    )
    spot_interruptions_per_day: float | None = spec_field(
        "float",
        "Spot interruptions",
        unit="per instance-day",
        minimum=0,
        maximum=100,
        help="spot only: how often you expect an instance to be reclaimed; each costs the "
        "restart the runs showed",
    )
    notes: str | None = spec_field("text", "Notes")

    @property
    def accelerator_family(self) -> str:
        """ "Trainium3", "Trainium2", "Trainium", "GPU" or "other", from the instance type."""
        family = self.instance_type.split(".", 1)[0]
        if family.startswith("trn3"):
            return "Trainium3"
        if family.startswith("trn2"):
            return "Trainium2"
        if family.startswith("trn"):
            return "Trainium"
        if family.startswith(("p", "g")) and family[1:2].isdigit():
            return "GPU"
        return "other"


# The single-table sections in file order: TOML table name -> class.
SECTIONS: dict[str, type[Section]] = {
    "project": ProjectInfo,
    "model": ModelInfo,
    "software": SoftwareStack,
    "distribution": Distribution,
    "goal": TrainingGoal,
    "data_prep": DataPreparation,
    "side_costs": SideCosts,
}
# The list sections (TOML arrays of tables): table name -> item class.
LIST_SECTIONS: dict[str, type[ListSection]] = {"risks": MigrationRisk, "targets": TrainingTarget}
