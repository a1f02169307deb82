"""The inputs of the estimate: what each one is (``InputSpec``), which cost terms need it,
how an edited value is checked, and an input's value with its provenance (``Input``).

First in the flow: every later module of ``trntui.core.estimate`` speaks in these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from trntui.core.errors import UserError
from trntui.core.format import UNKNOWN

MEASURED = "measured"
DERIVED = "derived"
ASSUMPTION = "assumption"
QUOTED = "quoted"
PROVENANCE_KINDS = (MEASURED, DERIVED, ASSUMPTION, QUOTED, UNKNOWN)

THROUGHPUT_UNITS = {"samples/s": "samples", "tokens/s": "tokens", "steps/s": "steps"}
"""Throughput units a run set can state, and the work unit each one counts."""

# Fact names importers record that identify the benchmark, model or dataset of a run.
PROTOCOL_FACT_KEYS = ("submission_benchmark", "benchmark", "model", "dataset")


class InvalidInputError(UserError):
    """An edited input is not acceptable (negative hours, zero throughput, unknown unit...).

    The UI shows the message inline and keeps the last valid estimate on screen.
    """


@dataclass(frozen=True)
class Provenance:
    """Where an input comes from.

    ``kind`` is one of ``PROVENANCE_KINDS``. ``source`` names the origin: the run set (measured),
    the inputs it is computed from (derived), who set it (assumption), the quote id (quoted) or
    why nobody knows it (unknown). ``detail`` says how, or why.
    """

    kind: str
    source: str
    detail: str = ""

    def __str__(self) -> str:
        text = f"{self.kind}: {self.source}"
        return f"{text} ({self.detail})" if self.detail else text


@dataclass(frozen=True)
class InputSpec:
    """What one estimate input is: its label and unit, whether it is set per target, and the rule
    an edited value must meet (``check_value``)."""

    key: str
    label: str
    unit: str
    per_target: bool
    rule: str
    """``positive``, ``non-negative``, ``fraction`` (0 <= x < 1), ``count`` (whole, >= 1) or
    ``flag`` (1 yes, 0 no)."""
    observed: bool = False
    """Measured per run, so it has a range over the repeated runs."""


_SPECS = (
    InputSpec("work_amount", "Work to finish", "work units", False, "positive"),
    InputSpec("instance_count", "Instances", "instances", True, "count"),
    InputSpec("usd_per_hour", "Instance price", "USD/instance-hour", True, "positive"),
    InputSpec(
        "capacity_block", "Billed as whole Capacity Block days", "1 = yes, 0 = no", True, "flag"
    ),
    InputSpec("steady_throughput", "Useful throughput", "work units/s", True, "positive", True),
    InputSpec("startup_s", "Startup and compile", "s", True, "non-negative", True),
    InputSpec("launch_s", "Launch + teardown outside logs", "s", True, "non-negative", True),
    InputSpec(
        "overhead_ratio",
        "Checkpoint/eval/warm-up/stall ratio",
        "x training time",
        True,
        "non-negative",
        True,
    ),
    InputSpec("checkpoint_s", "Checkpoint saves not in the logs", "s", True, "non-negative"),
    InputSpec(
        "retry_ratio",
        "Restart recovery and redone work ratio",
        "x training time",
        True,
        "non-negative",
        True,
    ),
    InputSpec(
        "spot_interruptions_per_day",
        "Spot interruptions",
        "per instance-day",
        True,
        "non-negative",
    ),
    InputSpec("restart_cost_s", "Cost of one restart", "s", True, "non-negative"),
    InputSpec("failed_fraction", "Share of runs that did not count", "fraction", True, "fraction"),
    InputSpec("failed_run_s", "Billed time of a run that did not count", "s", True, "non-negative"),
    InputSpec("dataset_gb", "Dataset size", "GB", False, "non-negative"),
    InputSpec("checkpoint_gb", "Checkpoint size", "GB", False, "non-negative"),
    InputSpec("checkpoints_kept", "Checkpoints kept", "checkpoints", False, "non-negative"),
    InputSpec("months_stored", "Months stored", "months", False, "non-negative"),
    InputSpec("ebs_gb_per_instance", "Block storage", "GB/instance", False, "non-negative"),
    InputSpec("data_moved_gb", "Data moved between zones", "GB", False, "non-negative"),
    InputSpec("log_gb", "Log volume", "GB", False, "non-negative"),
    InputSpec("s3_usd_per_gb_month", "S3 Standard rate", "USD/GB-month", True, "non-negative"),
    InputSpec("ebs_usd_per_gb_month", "EBS gp3 rate", "USD/GB-month", True, "non-negative"),
    InputSpec(
        "transfer_usd_per_gb",
        "Inter-AZ transfer rate",
        "USD/GB per direction",
        True,
        "non-negative",
    ),
    InputSpec(
        "logs_ingest_usd_per_gb", "CloudWatch Logs ingestion rate", "USD/GB", True, "non-negative"
    ),
    InputSpec(
        "logs_store_usd_per_gb_month",
        "CloudWatch Logs storage rate",
        "USD/GB-month",
        True,
        "non-negative",
    ),
    InputSpec("data_prep_hours", "Data preparation time", "hours", False, "non-negative"),
    InputSpec(
        "data_prep_instance_count", "Data preparation instances", "instances", False, "count"
    ),
    InputSpec(
        "data_prep_usd_per_hour",
        "Data preparation instance price",
        "USD/instance-hour",
        True,
        "positive",
    ),
)
INPUT_SPECS: dict[str, InputSpec] = {spec.key: spec for spec in _SPECS}
OBSERVED_INPUTS = tuple(spec.key for spec in _SPECS if spec.observed)

TERM_INPUTS: dict[str, tuple[str, ...]] = {
    "instance_usd": ("work_amount", "steady_throughput", "startup_s", "launch_s",
                     "overhead_ratio", "checkpoint_s", "instance_count", "usd_per_hour"),
    "retries_usd": ("work_amount", "steady_throughput", "retry_ratio", "failed_fraction",
                    "failed_run_s", "launch_s", "instance_count", "usd_per_hour",
                    "spot_interruptions_per_day", "restart_cost_s", "startup_s",
                    "overhead_ratio", "checkpoint_s"),
    "storage_usd": ("dataset_gb", "checkpoint_gb", "checkpoints_kept", "months_stored",
                    "s3_usd_per_gb_month", "ebs_gb_per_instance", "ebs_usd_per_gb_month",
                    "instance_count", "work_amount", "steady_throughput", "startup_s",
                    "launch_s", "overhead_ratio", "checkpoint_s", "retry_ratio",
                    "failed_fraction", "failed_run_s", "spot_interruptions_per_day",
                    "restart_cost_s"),
    "transfer_usd": ("data_moved_gb", "transfer_usd_per_gb"),
    "logs_usd": ("log_gb", "months_stored", "logs_ingest_usd_per_gb",
                 "logs_store_usd_per_gb_month"),
    "data_prep_usd": ("data_prep_hours", "data_prep_instance_count", "data_prep_usd_per_hour"),
    "idle_usd": ("capacity_block", "work_amount", "steady_throughput", "startup_s", "launch_s",
                 "overhead_ratio", "checkpoint_s", "retry_ratio", "failed_fraction",
                 "failed_run_s", "instance_count", "usd_per_hour", "spot_interruptions_per_day",
                 "restart_cost_s"),
}  # fmt: skip
"""Which inputs each cost term needs (an unknown one leaves the term unknown)."""

ZERO_GATES: dict[str, tuple[str, ...]] = {
    "restart_cost_s": ("spot_interruptions_per_day",),
    "spot_interruptions_per_day": ("restart_cost_s",),
}
"""Inputs that only matter when another input is not 0 (nothing times zero): an unknown
restart cost on a target that is never interrupted keeps nothing unknown."""

TERMS = (
    "instance_usd",
    "storage_usd",
    "transfer_usd",
    "logs_usd",
    "data_prep_usd",
    "retries_usd",
    "idle_usd",
)
STAGES = (
    ("startup_h", "Launch, startup and compile"),
    ("training_h", "Training (steady useful work)"),
    ("overhead_h", "Checkpoints, evaluation, warm-up, stalls"),
    ("retry_h", "Failures and retries"),
)


def shown_unit(unit: str, work_unit: str | None) -> str:
    """An input's unit with the goal's work unit in place of "work units"."""
    return unit.replace("work units", work_unit) if work_unit else unit


@dataclass(frozen=True)
class Input:
    """One input value with its unit and provenance; ``low``/``high`` is the observed range."""

    key: str
    value: float | None
    provenance: Provenance
    target: str | None = None
    low: float | None = None
    high: float | None = None
    runs: int | None = None
    """How many runs the measurement covers."""

    @property
    def spec(self) -> InputSpec:
        return INPUT_SPECS[self.key]

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def unit(self) -> str:
        return self.spec.unit

    @property
    def name(self) -> str:
        """``key`` for project-wide inputs, ``<target>: key`` for per-target ones."""
        return self.key if self.target is None else f"{self.target}: {self.key}"

    @property
    def is_unknown(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class Override:
    """A scenario parameter: a value set by a person, for a reason (an assumption)."""

    input: str
    value: float
    target: str | None = None
    who: str = ""
    why: str = ""
    unit: str | None = None


def check_value(key: str, value: Any, *, where: str = "", unit: str | None = None) -> float:
    """Validate an edited value for ``key``; raise ``InvalidInputError`` with a message."""
    spec = INPUT_SPECS.get(key)
    prefix = f"{where}: " if where else ""
    if spec is None:
        raise InvalidInputError(
            f"{prefix}unknown input {key!r}; known inputs: {', '.join(INPUT_SPECS)}"
        )
    if unit is not None and unit != spec.unit:
        raise InvalidInputError(
            f"{prefix}{spec.label}: unknown unit {unit!r}; this input is in {spec.unit}"
        )
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{prefix}{spec.label}: {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidInputError(f"{prefix}{spec.label}: {value!r} is not a finite number")
    if spec.rule == "positive" and number <= 0:
        raise InvalidInputError(f"{prefix}{spec.label} must be above 0 (got {value})")
    if spec.rule == "non-negative" and number < 0:
        raise InvalidInputError(f"{prefix}{spec.label} cannot be negative (got {value})")
    if spec.rule == "fraction" and not 0 <= number < 1:
        raise InvalidInputError(
            f"{prefix}{spec.label} must be at least 0 and below 1 (got {value})"
        )
    if spec.rule == "flag" and number not in (0, 1):
        raise InvalidInputError(f"{prefix}{spec.label} is 1 (yes) or 0 (no) (got {value})")
    if spec.rule == "count" and (number < 1 or number != int(number)):
        raise InvalidInputError(f"{prefix}{spec.label} must be a whole number >= 1 (got {value})")
    return number


def unknown_input(key: str, why: str, target: str | None = None) -> Input:
    return Input(key, None, Provenance(UNKNOWN, why), target)
