"""The workload inventory: what must be recorded before any estimate (SPEC.md §1).

Each section is a small frozen dataclass whose fields carry their ``FieldSpec`` (label, unit,
range). ``Inventory.from_dict`` checks a parsed TOML document against those specs and reports
every problem with its key path, so the store can point at the file and line. Migration risks
keep their engineering effort in days: it is never turned into instance hours.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, ClassVar

from trntui.core.fields import FieldValueError, spec_field, specs_of
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

_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")


def check_instance_type(value: str) -> None:
    if not _INSTANCE_TYPE.match(value):
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
    TITLE: ClassVar[str] = "Model"
    name: str | None = spec_field("text", "Model", placeholder="e.g. Llama-2-70B LoRA")
    architecture: str | None = spec_field("text", "Architecture", placeholder="decoder-only")
    version: str | None = spec_field("text", "Model version", help="checkpoint or commit")
    parameters_billion: float | None = spec_field(
        "float", "Parameters", unit="billion", greater_than=0, maximum=100_000
    )
    trainable_parameters_billion: float | None = spec_field(
        "float", "Trainable parameters", unit="billion", minimum=0, maximum=100_000
    )
    precision: str | None = spec_field("choice", "Numeric precision", choices=PRECISIONS)
    tensor_types: str | None = spec_field(
        "text", "Tensor types", placeholder="bf16 weights, fp32 optimizer state"
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
    TITLE: ClassVar[str] = "Software stack"
    framework: str | None = spec_field("text", "Framework", placeholder="PyTorch")
    framework_version: str | None = spec_field("text", "Framework version")
    libraries: tuple[str, ...] = spec_field(
        "list", "Libraries", help="name and version, comma-separated"
    )
    neuron_sdk_version: str | None = spec_field("text", "Neuron SDK version")
    compile_steps: str | None = spec_field(
        "text", "Compile steps", placeholder="neuron_parallel_compile before training"
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
    TITLE: ClassVar[str] = "Distribution"
    data_parallel: int | None = spec_field("int", "Data parallel", unit="ways", minimum=1)
    tensor_parallel: int | None = spec_field("int", "Tensor parallel", unit="ways", minimum=1)
    pipeline_parallel: int | None = spec_field("int", "Pipeline parallel", unit="ways", minimum=1)
    context_parallel: int | None = spec_field("int", "Context parallel", unit="ways", minimum=1)
    sharding: str | None = spec_field("text", "Sharding", placeholder="ZeRO-1")
    synchronisation: str | None = spec_field(
        "text", "Synchronisation", placeholder="all-reduce over EFA"
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
    TITLE: ClassVar[str] = "Training goal"
    work_amount: float | None = spec_field(
        "float", "Work to finish", greater_than=0, help="in the work unit below"
    )
    work_unit: str | None = spec_field("choice", "Work unit", choices=WORK_UNITS)
    quality_metric: str | None = spec_field("text", "Quality metric", placeholder="eval_accuracy")
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
    TITLE: ClassVar[str] = "Data preparation"
    steps: tuple[str, ...] = spec_field(
        "list", "Steps", placeholder="cleaning, tokenization, packing"
    )
    runs_on: str | None = spec_field("text", "Runs on", placeholder="c7i.8xlarge or on-prem")
    instance_count: int | None = spec_field("int", "Instances", minimum=1)
    hours: float | None = spec_field("float", "Duration", unit="hours", minimum=0)
    notes: str | None = spec_field("text", "Notes")


@dataclass(frozen=True)
class SideCosts:
    """Quantities for the side costs of SPEC.md §3; their prices come from the price lookup."""

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
        placeholder="trn3.48xlarge",
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
        placeholder="us-east-1",
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
SECTIONS: dict[str, type] = {
    "project": ProjectInfo,
    "model": ModelInfo,
    "software": SoftwareStack,
    "distribution": Distribution,
    "goal": TrainingGoal,
    "data_prep": DataPreparation,
    "side_costs": SideCosts,
}
# The list sections (TOML arrays of tables): table name -> item class.
LIST_SECTIONS: dict[str, type] = {"risks": MigrationRisk, "targets": TrainingTarget}


@dataclass(frozen=True)
class InventoryProblem:
    """One invalid value, with the key path that locates it in the file."""

    section: str
    key: str | None
    message: str
    index: int | None = None
    expected: str | None = None

    @property
    def path(self) -> str:
        where = self.section if self.index is None else f"{self.section}[{self.index}]"
        return f"{where}.{self.key}" if self.key else where


class InventoryInvalid(ValueError):
    """The document does not describe a valid inventory; ``problems`` says where and why."""

    def __init__(self, problems: list[InventoryProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))


def check_value(cls: type, key: str, value: Any) -> Any:
    """Validate one value for ``cls.key`` (type, range and extra rules); return it normalised."""
    return specs_of(cls)[key].check(value)


def parse_value(cls: type, key: str, text: str) -> Any:
    """Parse what a person typed for ``cls.key``; raises ``FieldValueError`` with a message."""
    return specs_of(cls)[key].parse_text(text)


def section_from_dict(
    cls: type, data: Any, section: str, index: int | None = None
) -> tuple[Any, list[InventoryProblem]]:
    """Build one section object from a TOML table; collect problems instead of stopping."""
    problems: list[InventoryProblem] = []
    if not isinstance(data, dict):
        problems.append(InventoryProblem(section, None, "expected a table", index, "a table"))
        return cls(), problems
    specs = specs_of(cls)
    values: dict[str, Any] = {}
    retired: dict[str, str] = getattr(cls, "RETIRED", {})
    for key, raw in data.items():
        if key in retired:
            problems.append(InventoryProblem(section, key, retired[key], index))
            continue
        if key not in specs:
            known = ", ".join(specs)
            problems.append(
                InventoryProblem(section, key, f"unknown key (known keys: {known})", index)
            )
            continue
        try:
            values[key] = check_value(cls, key, raw)
        except FieldValueError as error:
            problems.append(InventoryProblem(section, key, str(error), index, specs[key].expected))
    for key, spec in specs.items():
        if spec.required and key not in values and key not in data:
            problems.append(
                InventoryProblem(section, key, f"{spec.label} is required", index, spec.expected)
            )
    obj = cls(**{k: v for k, v in values.items() if v is not None})
    return obj, problems


def section_to_dict(obj: Any) -> dict[str, Any]:
    """A section as a TOML table: declared key order, unset values left out (TOML has no null)."""
    out: dict[str, Any] = {}
    for key in specs_of(type(obj)):
        value = getattr(obj, key)
        if value is None or value == ():
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True)
class Inventory:
    project: ProjectInfo = dataclasses.field(default_factory=ProjectInfo)
    model: ModelInfo = dataclasses.field(default_factory=ModelInfo)
    software: SoftwareStack = dataclasses.field(default_factory=SoftwareStack)
    distribution: Distribution = dataclasses.field(default_factory=Distribution)
    goal: TrainingGoal = dataclasses.field(default_factory=TrainingGoal)
    data_prep: DataPreparation = dataclasses.field(default_factory=DataPreparation)
    side_costs: SideCosts = dataclasses.field(default_factory=SideCosts)
    risks: tuple[MigrationRisk, ...] = ()
    targets: tuple[TrainingTarget, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Inventory:
        """Check a whole document (without ``schema_version``); raise ``InventoryInvalid``."""
        problems: list[InventoryProblem] = []
        parts: dict[str, Any] = {}
        for name, raw in data.items():
            if name in SECTIONS:
                parts[name], found = section_from_dict(SECTIONS[name], raw, name)
                problems += found
            elif name in LIST_SECTIONS:
                if not isinstance(raw, list):
                    problems.append(
                        InventoryProblem(
                            name, None, f"expected [[{name}]] entries", None, "an array of tables"
                        )
                    )
                    continue
                items = []
                for i, item in enumerate(raw):
                    obj, found = section_from_dict(LIST_SECTIONS[name], item, name, i)
                    items.append(obj)
                    problems += found
                parts[name] = tuple(items)
            else:
                known = ", ".join([*SECTIONS, *LIST_SECTIONS])
                problems.append(InventoryProblem(name, None, f"unknown table (known: {known})"))
        inventory = cls(**parts)
        problems += [
            InventoryProblem("targets", "name", message, index)
            for index, message in _duplicate_target_names(inventory.targets)
        ]
        if problems:
            raise InventoryInvalid(problems)
        return inventory

    def to_dict(self) -> dict[str, Any]:
        """The document in a stable key order, so that diffs of the file stay small."""
        out: dict[str, Any] = {}
        for name in SECTIONS:
            table = section_to_dict(getattr(self, name))
            if table:
                out[name] = table
        for name in LIST_SECTIONS:
            items = [section_to_dict(item) for item in getattr(self, name)]
            if items:
                out[name] = items
        return out

    def open_risk_effort(self) -> tuple[float, int]:
        """Engineering days of the risks not resolved yet, and how many have no estimate."""
        open_risks = [r for r in self.risks if r.status != "resolved"]
        days = sum(r.effort_days for r in open_risks if r.effort_days is not None)
        return days, sum(r.effort_days is None for r in open_risks)

    def planned_steps(self) -> int | None:
        """Optimizer steps the training goal needs, when the goal and batch size tell.

        Logs such as neuronx-distributed's do not say how many steps a run was meant to do;
        without this a run cannot be told finished from stopped.
        """
        goal, batch = self.goal, self.distribution.global_batch_size
        if goal.work_amount is None or goal.work_unit is None:
            return None
        if goal.work_unit == "steps":
            return math.ceil(goal.work_amount)
        if goal.work_unit == "samples" and batch:
            return math.ceil(goal.work_amount / batch)
        if goal.work_unit == "tokens" and batch and self.model.sequence_length:
            return math.ceil(goal.work_amount / (batch * self.model.sequence_length))
        return None

    def with_run_set_renamed(self, old: str, new: str) -> Inventory:
        """The inventory with every target measured by run set ``old`` measured by ``new``
        (a renamed set keeps the targets it measures)."""
        targets = tuple(
            dataclasses.replace(t, run_set=new) if t.run_set == old else t for t in self.targets
        )
        return self if targets == self.targets else dataclasses.replace(self, targets=targets)

    def warnings(self, run_sets: Collection[str] | None = None) -> list[str]:
        """What is missing before an estimate can be defended (not errors: the file stays valid).

        ``run_sets``: the imported run sets, when known; a target measured by a run set that
        is not among them is named (a typo would otherwise leave it unmeasured silently).
        """
        notes = []
        if run_sets is not None:
            for target in self.targets:
                if target.run_set and target.run_set not in run_sets:
                    known = ", ".join(sorted(run_sets)) or "none imported yet"
                    notes.append(
                        f"Target '{target.name}': no run set '{target.run_set}' "
                        f"(run sets: {known})."
                    )
        families = {t.accelerator_family for t in self.targets}
        if "Trainium3" not in families:
            notes.append("No Trainium3 target yet: add one under Targets (instance type trn3.*).")
        if "GPU" not in families:
            notes.append("No GPU target yet: add the GPU instance you would otherwise use.")
        goal = self.goal
        if goal.work_amount is None or goal.work_unit is None:
            notes.append("Training goal: the amount of work to finish and its unit are not set.")
        if goal.quality_metric and (goal.quality_threshold is None or not goal.quality_direction):
            notes.append("Training goal: the quality threshold or its direction is not set.")
        open_risks = [r for r in self.risks if r.status != "resolved" and r.effort_days is None]
        if open_risks:
            notes.append(f"{len(open_risks)} open migration risk(s) have no effort estimate.")
        return notes


def effort_text(days: float, unestimated: int) -> str:
    """Open porting effort in words; a risk without an estimate is not counted as 0 days."""
    text = f"{days:g} days"
    if unestimated:
        text = f"at least {text} ({unestimated} open risk(s) without an estimate)"
    return text


def _duplicate_target_names(targets: tuple[TrainingTarget, ...]) -> list[tuple[int, str]]:
    seen: set[str] = set()
    duplicates = []
    for index, target in enumerate(targets):
        if target.name in seen:
            duplicates.append((index, f"target name '{target.name}' is used twice"))
        seen.add(target.name)
    return duplicates
