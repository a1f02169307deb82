"""The estimate of SPEC.md §4, per training target, with the provenance of every input.

    cost = instance price x billed time (per stage, summed)
         + storage + transfers + logs/monitoring + data preparation + failures and retries

Billed time per instance has four stages, each from a measured run set or a stated input:

* **launch, startup and compile**: ``launch_s``, the time the job holds the machine outside
  the framework's own lines (container start and imports before the first log line, teardown
  after the last), from the job wrapper's clock where the logs carry it, else stated in the
  inventory (``software.launch_minutes``), never a silent 0; plus ``startup_s``, the median
  first-log-line-to-first-step time (compilation included: it is billed and recurs on every
  launch);
* **training**: ``work_amount / steady_throughput`` (useful work only, at the steady pace);
* **checkpoints, evaluation, warm-up and stalls**: training time x ``overhead_ratio``, the
  ratio those phases had to steady training time in the measured runs, plus ``checkpoint_s``:
  the planned checkpoint saves when the trial logs do not show any (planned steps / interval x
  the inventory's save time, an assumption; unknown when the inventory states no save time;
  0 when no interval is planned or the logs show the saves, which the ratio then holds);
* **failures and retries**: training time x ``retry_ratio`` (recovery and redone work after
  restarts inside a run) plus, for the runs of the set that did not count (failed, or quality
  missed), ``failed_fraction / (1 - failed_fraction)`` extra attempts of ``failed_run_s`` (plus
  their ``launch_s``) each.

A measurement holds for the system it was taken on: a target's instances x accelerators per
instance must equal its run set's nodes x accelerators per node (``core.system_size``), or
the measured throughput does not apply and the total is incomplete, naming both sizes.

Side costs: S3 keeps the dataset and the kept checkpoints for ``months_stored``; EBS is billed
per instance for the wall-clock time of the training (730 hours a month, AWS's convention);
inter-AZ transfer is charged on both sides of a crossing (the rate is per direction); logs pay
ingestion once and storage per month; data preparation is its own instance time.

A target bought as a Capacity Block (``capacity_block`` = 1) pays whole blocks up front: the
wall clock (all four stages) is rounded up to the block lengths AWS sells (1-14 days, then
7-day steps to 182; ``core.capacity_block``), and the hours paid but not used are their own
term, ``idle_usd``, so "pays 24 h, uses 5.2 h" is visible rather than folded into the rate.

An input nobody knows stays ``None`` and every term that needs it stays ``None``: the estimate
then reads "incomplete: <inputs>" instead of a number that looks final. The arithmetic is one
set of Polars expressions (``cost_frame``) applied to a frame whose rows are variants of the
inputs, so the estimate, the sensitivity bars and the resampled draws share the same formula.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import polars as pl

from trntui.core.capacity_block import (
    END_MARGIN_H,
    MAX_BLOCK_INSTANCES_TOTAL,
    billed_days_expr,
    blocks_text,
    extension_hint,
)
from trntui.core.errors import UserError
from trntui.core.hardware import target_size
from trntui.core.inventory import Inventory, MigrationRisk, TrainingTarget, effort_text
from trntui.core.quotes import (
    CAPACITY_BLOCK,
    HOURS_PER_YEAR,
    ON_DEMAND,
    SPOT,
    LookupStatus,
    PriceQuote,
    QuoteBook,
    QuoteFlag,
    ServiceRate,
    SideService,
    find_quote,
    quote_flags,
    term_years,
)
from trntui.core.run_facts import SUSPECT, RunFacts
from trntui.core.scaling import INTERPOLATED, Family, families, family_of, throughput_at
from trntui.core.scaling import MEASURED as SCALE_MEASURED
from trntui.core.system_size import SetSize, set_size, size_problem
from trntui.core.timeline import RunMetadata, SystemSize

HOURS_PER_MONTH = 730.0
"""AWS prices GB-months over 730 hours."""

MEASURED = "measured"
DERIVED = "derived"
ASSUMPTION = "assumption"
QUOTED = "quoted"
UNKNOWN = "unknown"
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


def _times(*factors: pl.Expr) -> pl.Expr:
    """The product of ``factors``; 0 when any of them is a known 0, even if another is unknown
    (nothing times zero costs nothing: no stored data needs no storage rate)."""
    product = factors[0]
    for factor in factors[1:]:
        product = product * factor
    return pl.when(pl.any_horizontal([f == 0 for f in factors])).then(0.0).otherwise(product)


def _formula() -> tuple[list[pl.Expr], ...]:
    """The formula as Polars expressions over the input columns (one row = one variant).

    Built once, in layers of shallow expressions (intermediate hours first, then the terms,
    then the total): on one-row frames Polars' cost is per expression node, and this runs on
    every keystroke. Null inputs give null terms and a null total: unknown stays unknown,
    except that a side cost whose quantity is 0 costs 0 whatever its rate.
    """
    c = pl.col
    hours = [
        ((c("launch_s") + c("startup_s")) / 3600.0).alias("startup_h"),
        (c("work_amount") / c("steady_throughput") / 3600.0).alias("training_h"),
        pl.when(c("failed_fraction") == 0)
        .then(pl.lit(0.0))
        .otherwise(
            c("failed_fraction")
            / (1.0 - c("failed_fraction"))
            * (c("failed_run_s") + c("launch_s"))
            / 3600
        )
        .alias("failed_h"),
        (c("dataset_gb") + c("checkpoint_gb") * c("checkpoints_kept")).alias("s3_gb"),
    ]
    stages = [
        (c("training_h") * c("overhead_ratio") + c("checkpoint_s") / 3600.0).alias("overhead_h"),
        (c("training_h") * c("retry_ratio") + c("failed_h")).alias("restart_h"),
    ]
    billed = [
        (c("startup_h") + c("training_h") + c("overhead_h")).alias("billed_h"),
    ]
    interrupted = [
        # Expected spot interruptions over the billed time, each costing one observed restart.
        _times(
            c("billed_h") / 24.0,
            c("spot_interruptions_per_day"),
            c("instance_count"),
            c("restart_cost_s") / 3600.0,
        ).alias("interrupt_h")
    ]
    retried = [(c("restart_h") + c("interrupt_h")).alias("retry_h")]
    wall = [(c("billed_h") + c("retry_h")).alias("wall_h")]
    paid = [
        pl.when(c("capacity_block") > 0)
        .then(billed_days_expr((c("wall_h") + END_MARGIN_H) / 24.0) * 24.0)
        .otherwise(c("wall_h"))
        .alias("paid_h")
    ]
    terms = [
        (c("wall_h") * c("instance_count")).alias("instance_hours"),
        pl.when(c("capacity_block") == 0)
        .then(pl.lit(0.0))
        .otherwise((c("paid_h") - c("wall_h")) * c("instance_count") * c("usd_per_hour"))
        .alias("idle_usd"),
        (c("billed_h") * c("instance_count") * c("usd_per_hour")).alias("instance_usd"),
        (c("retry_h") * c("instance_count") * c("usd_per_hour")).alias("retries_usd"),
        (
            _times(c("s3_gb"), c("months_stored"), c("s3_usd_per_gb_month"))
            + _times(
                c("ebs_gb_per_instance"),
                c("instance_count"),
                c("wall_h") / HOURS_PER_MONTH,
                c("ebs_usd_per_gb_month"),
            )
        ).alias("storage_usd"),
        _times(c("data_moved_gb"), c("transfer_usd_per_gb") * 2.0).alias("transfer_usd"),
        (
            _times(c("log_gb"), c("logs_ingest_usd_per_gb"))
            + _times(c("log_gb"), c("months_stored"), c("logs_store_usd_per_gb_month"))
        ).alias("logs_usd"),
        _times(
            c("data_prep_hours"), c("data_prep_instance_count"), c("data_prep_usd_per_hour")
        ).alias("data_prep_usd"),
    ]
    total = [pl.sum_horizontal(TERMS, ignore_nulls=False).alias("total_usd")]
    return hours, stages, billed, interrupted, retried, wall, paid, terms, total


_FORMULA = _formula()


def cost_frame(inputs: pl.DataFrame) -> pl.DataFrame:
    """Apply the formula to every row of ``inputs`` (columns named as ``INPUT_SPECS``)."""
    frame = inputs
    for layer in _FORMULA:
        frame = frame.with_columns(layer)
    return frame


def input_frame(rows: Sequence[Mapping[str, float | None]]) -> pl.DataFrame:
    """A frame of input variants with every input column as Float64 (missing = unknown)."""
    return pl.DataFrame(
        {key: [row.get(key) for row in rows] for key in INPUT_SPECS},
        schema={key: pl.Float64 for key in INPUT_SPECS},
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


# --- observed runs -------------------------------------------------------------------------

OBSERVATION_SCHEMA = pl.Schema(
    {
        "run_id": pl.String,
        "set_name": pl.String,
        "status": pl.String,
        "counted": pl.Boolean,
        "quality_reached": pl.Boolean,
        "quality_metric": pl.String,
        "benchmark": pl.String,
        "throughput_unit": pl.String,
        "steady_throughput": pl.Float64,
        "startup_s": pl.Float64,
        "training_s": pl.Float64,
        "overhead_ratio": pl.Float64,
        "retry_ratio": pl.Float64,
        "total_s": pl.Float64,
        "restarts": pl.Int64,
        "redone_steps": pl.Int64,
        "limit": pl.String,
        "steady_utilization_pct": pl.Float64,
        "checkpoint_measured": pl.Boolean,
        "launch_s": pl.Float64,
        "before_first_line_s": pl.Float64,
        "work_done": pl.Float64,
        "result_s": pl.Float64,
        "nodes": pl.Int64,
        "accelerators_per_node": pl.Int64,
        "accelerators": pl.Int64,
        "accelerator": pl.String,
        "size_source": pl.String,
        "size_stated_by": pl.String,
        "protocol_json": pl.String,
        "format": pl.String,
        "run_s": pl.Float64,
    }
)
"""One row per imported run: what the estimate needs from its facts, derived once per import
(or project load), never from the logs on each edit."""


def observation_row(
    run_id: str,
    set_name: str,
    facts: RunFacts,
    metadata: RunMetadata | None = None,
    *,
    limit: str | None = None,
    steady_utilization_pct: float | None = None,
    system: SystemSize | None = None,
) -> dict[str, Any]:
    """The estimate's view of one run's facts.

    ``quality_metric`` is the metric the log itself reports (for the protocol check), not the
    goal's criterion the facts were judged against.

    Checkpoint, evaluation, warm-up and stall time become ``overhead_ratio`` and recovery plus
    redone work ``retry_ratio``, both relative to the run's own training time, so that they scale
    with the amount of work. Phases a log cannot tell are inside its training time already
    (``PhaseSplit.training_s`` is the remainder), so they count as 0 here, consistently.
    """
    phases = facts.phases
    training_s = phases.training_s
    overhead = sum(
        value or 0.0
        for value in (
            phases.warmup_s,
            phases.checkpoint_s,
            phases.eval_s,
            phases.stall_s,
            phases.data_loading_s,
            phases.between_blocks_s,
        )
    )
    retry = (phases.recovery_s or 0.0) + (phases.redone_s or 0.0)
    has_training = training_s is not None and training_s > 0
    facts_text = metadata.facts if metadata is not None else {}
    benchmark = next((facts_text[k] for k in PROTOCOL_FACT_KEYS if k in facts_text), None)
    if system is None and metadata is not None:
        system = metadata.system
    clock = metadata.job_clock if metadata is not None else None
    log_span = facts.total_s if facts.total_s is not None else facts.run_s
    # A wrapper span shorter than the log (beyond its one-second resolution) did not cover
    # the whole job: the time outside the log is then unknown, not 0.
    outside = (
        max(0.0, clock.span_s - log_span)
        if clock is not None and log_span is not None and clock.span_s >= log_span - 1.0
        else None
    )
    protocol = dict(metadata.protocol) if metadata is not None else {}
    return {
        "run_id": run_id,
        "set_name": set_name,
        "status": facts.status,
        "counted": facts.counts_as_completed,
        "quality_reached": facts.quality_reached,
        "quality_metric": metadata.quality_metric if metadata is not None else None,
        "benchmark": benchmark,
        "throughput_unit": facts.throughput_unit,
        "steady_throughput": facts.steady_throughput,
        "startup_s": facts.init_s,
        "training_s": training_s,
        "overhead_ratio": overhead / training_s if has_training else None,
        "retry_ratio": retry / training_s if has_training else None,
        "total_s": facts.total_s if facts.total_s is not None else facts.run_s,
        "restarts": facts.restarts,
        "redone_steps": facts.redone_steps,
        "limit": limit,
        "steady_utilization_pct": steady_utilization_pct,
        "checkpoint_measured": phases.checkpoint_s is not None,
        "launch_s": outside,
        "before_first_line_s": clock.before_first_line_s if clock is not None else None,
        "work_done": facts.useful_work,
        "result_s": facts.launch_to_result_s,
        "nodes": system.nodes if system else None,
        "accelerators_per_node": system.accelerators_per_node if system else None,
        "accelerators": system.accelerators if system else None,
        "accelerator": system.accelerator if system else None,
        "size_source": system.source if system else None,
        "size_stated_by": system.stated_by if system else None,
        "protocol_json": json.dumps(protocol, sort_keys=True) if protocol else None,
        "format": metadata.format if metadata is not None else None,
        "run_s": facts.run_s,
    }


def observations_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(list(rows), schema=OBSERVATION_SCHEMA)


@dataclass(frozen=True)
class EstimateContext:
    """Everything an estimate reads; built once per project load or import, not per edit."""

    inventory: Inventory
    book: QuoteBook
    observations: pl.DataFrame = dataclasses.field(
        default_factory=lambda: pl.DataFrame(schema=OBSERVATION_SCHEMA), compare=False
    )
    today: date = dataclasses.field(default_factory=date.today)
    max_quote_age_days: int = 30
    stats_cache: dict[str, tuple[pl.DataFrame, RunSetStats]] = dataclasses.field(
        default_factory=dict, compare=False, repr=False
    )
    ties_system_size: bool = True
    """False for a snapshot saved before run sizes were recorded: its runs carry none, and it
    is read back as it was priced then."""
    family_names: dict[str, str] = dataclasses.field(default_factory=dict, compare=False)
    """Run set -> scaling family name a person gave (``core.scaling``)."""
    families_cache: list = dataclasses.field(default_factory=list, compare=False, repr=False)

    def families(self) -> tuple[Family, ...]:
        """The scaling families of the observations (computed once per observations frame)."""
        if not self.families_cache or self.families_cache[0] is not self.observations:
            self.families_cache[:] = [
                self.observations,
                families(self.observations, self.family_names),
            ]
        return self.families_cache[1]

    """Run-set statistics by set name, kept while ``observations`` is the same frame (so an
    edited copy made with ``dataclasses.replace`` reuses them)."""

    def run_set(self, set_name: str) -> RunSetStats:
        cached = self.stats_cache.get(set_name)
        if cached is None or cached[0] is not self.observations:
            cached = (self.observations, run_set_stats(self.observations, set_name))
            self.stats_cache[set_name] = cached
        return cached[1]


# --- inputs --------------------------------------------------------------------------------


def _unknown(key: str, why: str, target: str | None = None) -> Input:
    return Input(key, None, Provenance(UNKNOWN, why), target)


def _assumed(inventory: Inventory, key: str, value: float | None, field: str) -> Input:
    if value is None:
        return _unknown(key, f"not set in the inventory ({field})")
    owner = inventory.project.owner or "the project owner"
    return Input(key, float(value), Provenance(ASSUMPTION, owner, f"inventory {field}"))


def global_inputs(inventory: Inventory) -> dict[str, Input]:
    """Project-wide inputs: the training goal, side-cost quantities, data preparation."""
    goal, side, prep = inventory.goal, inventory.side_costs, inventory.data_prep
    inputs = {"work_amount": _assumed(inventory, "work_amount", goal.work_amount, "goal")}
    if goal.work_amount is not None and goal.work_unit is None:
        inputs["work_amount"] = _unknown("work_amount", "the goal's work unit is not set")
    for key in (
        "dataset_gb",
        "checkpoint_gb",
        "checkpoints_kept",
        "months_stored",
        "ebs_gb_per_instance",
        "data_moved_gb",
        "log_gb",
    ):
        inputs[key] = _assumed(inventory, key, getattr(side, key), f"side_costs.{key}")
    inputs["data_prep_hours"] = _assumed(inventory, "data_prep_hours", prep.hours, "data_prep")
    inputs["data_prep_instance_count"] = _assumed(
        inventory, "data_prep_instance_count", prep.instance_count, "data_prep.instance_count"
    )
    return inputs


def quote_id(quote: PriceQuote) -> str:
    """Stable id of a quote in the project's book (type, region, option, origin)."""
    origin = "manual" if quote.manual else "price-list"
    return f"{quote.instance_type}/{quote.region}/{quote.purchase_option}/{origin}"


def rate_id(rate: ServiceRate) -> str:
    origin = "manual" if rate.manual else "price-list"
    return f"{rate.service.value}/{rate.region}/{origin}"


def quote_source(quote: PriceQuote | ServiceRate) -> str:
    """Where a price comes from and when it was retrieved, in words."""
    when = quote.retrieved_at.date().isoformat()
    if quote.manual:
        return f"manual: {quote.source_note.strip()}, dated {when}"
    parts = ["AWS Price List"]
    if quote.offer_code:
        parts.append(quote.offer_code)
    if quote.publication_date:
        parts.append(f"published {quote.publication_date}")
    if quote.sku:
        parts.append(f"SKU {quote.sku}")
    return f"{', '.join(parts)}; retrieved {when}"


def _price_input(
    key: str, lookup_type: str, region: str, option: str, book: QuoteBook, target: str
) -> tuple[Input, PriceQuote | None, str]:
    """The price input, the quote it comes from and why that quote (``find_quote``)."""
    found = find_quote(book.quotes, lookup_type, region, option, book.misses)
    if found.status is not LookupStatus.FOUND or found.quote is None:
        return _unknown(key, found.message, target), None, found.message
    if found.quote.usd_per_hour is None:
        why = f"the quote {quote_id(found.quote)} has no hourly price"
        return _unknown(key, why, target), None, why
    quote = found.quote
    provenance = Provenance(QUOTED, quote_id(quote), quote_source(quote))
    return Input(key, quote.usd_per_hour, provenance, target), quote, found.reason


def _whole_ultraservers(price: Input, quote: PriceQuote | None, count: int) -> Input:
    """A price per UltraServer holds for whole UltraServers only: another count is unknown."""
    size = quote.ultraserver_instances if quote is not None else None
    if size is None or price.value is None:
        return price
    if count % size:
        why = (
            f"{quote.instance_type} is sold as UltraServers of {size} instances; "  # type: ignore[union-attr]
            f"{count} instances is not a whole number of them"
        )
        return _unknown(price.key, why, price.target)
    how = (
        f"{count // size} UltraServer(s) of {size} at "
        f"${quote.usd_per_ultraserver_hour:,.4g}/h each; {price.provenance.detail}"  # type: ignore[union-attr]
    )
    return dataclasses.replace(price, provenance=dataclasses.replace(price.provenance, detail=how))


_RATES = {
    "s3_usd_per_gb_month": SideService.S3_STANDARD_STORAGE,
    "ebs_usd_per_gb_month": SideService.EBS_GP3_STORAGE,
    "transfer_usd_per_gb": SideService.INTER_AZ_TRANSFER,
    "logs_ingest_usd_per_gb": SideService.CLOUDWATCH_LOGS_INGESTION,
    "logs_store_usd_per_gb_month": SideService.CLOUDWATCH_LOGS_STORAGE,
}


def _rate_quantity(key: str, inputs: Mapping[str, Input], instance_count: int) -> float | None:
    """The monthly (or one-off) quantity a rate is applied to, for walking its tiers."""

    def value(name: str) -> float | None:
        return inputs[name].value

    if key == "s3_usd_per_gb_month":
        parts = (value("dataset_gb"), value("checkpoint_gb"), value("checkpoints_kept"))
        if None in parts:
            return None
        return parts[0] + parts[1] * parts[2]  # type: ignore[operator]
    if key == "ebs_usd_per_gb_month":
        gb = value("ebs_gb_per_instance")
        return None if gb is None else gb * instance_count
    if key == "transfer_usd_per_gb":
        return value("data_moved_gb")
    return value("log_gb")


def _rate_input(
    key: str, rate: ServiceRate | None, quantity: float | None, region: str, target: str
) -> Input:
    """The rate per unit, quoted as is; a quantity that reaches past the first price tier
    gets the average rate over the tiers it spans, a figure derived from the quote."""
    service = _RATES[key]
    if rate is None:
        return _unknown(
            key, f"no {service.value} rate for {region} in the project's prices", target
        )
    first = rate.tiers[0]
    if quantity and first.end is not None and quantity > first.end:
        value = rate.cost_usd(quantity) / quantity
        how = f"average over the price tiers for {quantity:g} {rate.unit}; {quote_source(rate)}"
        return Input(key, value, Provenance(DERIVED, f"rate {rate_id(rate)}", how), target)
    how = f"{quote_source(rate)}; first tier" if len(rate.tiers) > 1 else quote_source(rate)
    return Input(key, first.usd_per_unit, Provenance(QUOTED, rate_id(rate), how), target)


_INSTANCE_IN_TEXT = re.compile(
    r"\b([a-z][a-z0-9-]*\.(?:\d*xlarge|large|medium|small|micro|nano|metal[a-z0-9-]*))(?![\w-]|\.\w)"
)


def data_prep_instance_type(runs_on: str | None) -> str | None:
    """The EC2 instance type named in the free-text ``data_prep.runs_on`` (None if none)."""
    if not runs_on:
        return None
    match = _INSTANCE_IN_TEXT.search(runs_on)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Spread:
    """Median, mean and range of one figure over some runs (``n`` runs show it)."""

    n: int
    median: float | None
    low: float | None
    high: float | None
    mean: float | None = None


@dataclass(frozen=True)
class RunSetStats:
    """What the estimate and the comparison need from one run set, computed once per import.

    ``spreads`` cover the counted runs (finished, quality reached) for the observed inputs and
    the runs that did not count for ``failed_run_s``; ``samples`` are the counted runs'
    observed inputs, which resampling draws from.
    """

    runs: int
    counted: int
    verified: int
    """Counted runs whose log shows the quality target reached (the rest did not measure it)."""
    spreads: dict[str, Spread]
    units: frozenset[str]
    benchmarks: frozenset[str]
    quality_metrics: frozenset[str]
    samples: pl.DataFrame = dataclasses.field(compare=False, repr=False)
    limits: tuple[tuple[str, int], ...] = ()
    """What limits the counted runs (from their telemetry verdicts), most frequent first."""
    steady_utilization_pct: float | None = None
    """Median accelerator utilization over the counted runs' steady windows, where measured."""
    checkpoint_measured: bool = False
    """Whether any counted run's log shows its checkpoint saves (else they are in no stage)."""
    size: SetSize = dataclasses.field(default_factory=lambda: SetSize(None))
    """The system the set's runs measured (the same for all, or flagged)."""
    protocol: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    """``PROTOCOL_FACTS`` the set's logs state: every value seen, by fact."""
    formats: frozenset[str] = frozenset()
    """The log formats of the set's runs (fact names differ between formats)."""
    suspect: tuple[str, ...] = ()
    """Ids of runs left out because their timelines cannot be trusted (``run_facts.SUSPECT``)."""


def _spread_exprs(key: str, alias: str, mask: pl.Expr) -> list[pl.Expr]:
    column = pl.col(key).filter(mask)
    return [
        column.count().alias(f"{alias}/n"),
        column.median().alias(f"{alias}/median"),
        column.min().alias(f"{alias}/low"),
        column.max().alias(f"{alias}/high"),
        column.mean().alias(f"{alias}/mean"),
    ]


def run_set_stats(observations: pl.DataFrame, set_name: str) -> RunSetStats:
    """Medians and ranges of one run set in one Polars pass (no per-run Python loop)."""
    in_set = observations.filter(pl.col("set_name") == set_name)
    trusted = pl.col("status").fill_null("") != SUSPECT
    runs = in_set.filter(trusted).with_columns(
        (pl.col("retry_ratio") * pl.col("training_s") / pl.col("restarts")).alias("restart_cost_s")
    )
    counted = pl.col("counted")
    restarted = pl.col("restarts").fill_null(0) > 0
    row = runs.select(
        *(e for key in OBSERVED_INPUTS for e in _spread_exprs(key, key, counted)),
        *_spread_exprs("total_s", "failed_run_s", ~counted),
        *_spread_exprs("restart_cost_s", "restart_cost_s", restarted),
    ).row(0, named=True)
    spreads = {
        alias: Spread(
            row[f"{alias}/n"],
            row[f"{alias}/median"],
            row[f"{alias}/low"],
            row[f"{alias}/high"],
            row[f"{alias}/mean"],
        )
        for alias in (*OBSERVED_INPUTS, "failed_run_s", "restart_cost_s")
    }
    kept = runs.filter(counted)
    with_throughput = kept.filter(pl.col("steady_throughput").is_not_null())
    protocol: dict[str, set[str]] = {}
    for text in runs["protocol_json"].drop_nulls():
        for fact, value in json.loads(text).items():
            protocol.setdefault(fact, set()).add(str(value))
    return RunSetStats(
        runs=runs.height,
        counted=kept.height,
        verified=kept.filter(pl.col("quality_reached").fill_null(False)).height,
        spreads=spreads,
        units=frozenset(with_throughput["throughput_unit"].drop_nulls().to_list()),
        benchmarks=frozenset(kept["benchmark"].drop_nulls().to_list()),
        quality_metrics=frozenset(kept["quality_metric"].drop_nulls().to_list()),
        samples=kept.select(OBSERVED_INPUTS),
        limits=tuple(
            (str(limit), int(count))
            for limit, count in kept["limit"].drop_nulls().value_counts(sort=True).iter_rows()
        ),
        steady_utilization_pct=kept["steady_utilization_pct"].median(),
        checkpoint_measured=bool(kept["checkpoint_measured"].fill_null(False).any()),
        size=set_size([_observed_size(row) for row in runs.iter_rows(named=True)]),
        protocol={fact: frozenset(values) for fact, values in protocol.items()},
        formats=frozenset(runs["format"].drop_nulls().to_list()),
        suspect=tuple(in_set.filter(~trusted)["run_id"].to_list()),
    )


def _observed_size(row: Mapping[str, Any]) -> SystemSize | None:
    if row["nodes"] is None and row["accelerators_per_node"] is None and not row["accelerators"]:
        return None
    both = row["nodes"] is not None and row["accelerators_per_node"] is not None
    return SystemSize(
        row["nodes"],
        row["accelerators_per_node"],
        row["accelerator"],
        row["size_source"] or "",
        None if both else row["accelerators"],
        row["size_stated_by"],
    )


def _run_set_inputs(
    context: EstimateContext, target: TrainingTarget
) -> tuple[dict[str, Input], pl.DataFrame]:
    """Measured inputs of a target from its run set: medians of the runs that count, with the
    min-max range (report the range, not one lucky run)."""
    name = target.name
    keys = (*OBSERVED_INPUTS, "failed_fraction", "failed_run_s")
    empty = pl.DataFrame(schema={key: pl.Float64 for key in OBSERVED_INPUTS})
    if not target.run_set:
        why = "no run set measures this target (set 'Measured by run set' on the target)"
        return {key: _unknown(key, why, name) for key in keys}, empty
    source = target.run_set
    stats = context.run_set(source)
    ids = ", ".join(stats.suspect)
    left_out = f"; suspect run(s) left out: {ids} (`trntui runs` says why)" if stats.suspect else ""
    if stats.runs == 0:
        why = f"run set {source!r} has no imported runs"
        if stats.suspect:
            why = f"every run of {source!r} is suspect: {ids} (`trntui runs` says why)"
        return {key: _unknown(key, why, name) for key in keys}, empty
    failed = stats.runs - stats.counted
    inputs = {
        "failed_fraction": Input(
            "failed_fraction",
            failed / stats.runs,
            Provenance(MEASURED, source, f"{failed} of {stats.runs} runs did not count{left_out}"),
            name,
            runs=stats.runs,
        )
    }
    times = stats.spreads["failed_run_s"]
    if failed == 0:
        inputs["failed_run_s"] = Input(
            "failed_run_s", 0.0, Provenance(MEASURED, source, "no run failed"), name
        )
    elif times.n == 0:
        why = "the runs that did not count have no clock"
        inputs["failed_run_s"] = _unknown("failed_run_s", why, name)
    else:
        inputs["failed_run_s"] = _measured(
            "failed_run_s", times, source, name, "runs that did not count"
        )
    if stats.counted == 0:
        why = (
            f"none of the {stats.runs} runs in {source!r} finished with the quality target reached"
        )
        inputs.update({key: _unknown(key, why, name) for key in OBSERVED_INPUTS})
        return inputs, empty
    for key in OBSERVED_INPUTS:
        spread = stats.spreads[key]
        problem = None
        if spread.n == 0:
            problem = f"the counted runs of {source!r} do not show it"
        elif key == "steady_throughput":
            problem = _unit_problem(set(stats.units), context.inventory.goal.work_unit, source)
        inputs[key] = (
            _unknown(key, problem, name)
            if problem
            else _measured(key, spread, source, name, "counted runs")
        )
    if inputs["launch_s"].is_unknown:
        inputs["launch_s"] = _launch_stated(context.inventory, source, name)
    restart = stats.spreads["restart_cost_s"]
    if restart.n:
        inputs["restart_cost_s"] = _measured(
            "restart_cost_s", restart, source, name, "runs that restarted (recovery + redone work)"
        )
    return inputs, stats.samples


def _launch_stated(inventory: Inventory, source: str, target: str) -> Input:
    """Time outside the logs when they carry no job clock: the inventory's statement, or an
    explicit unknown (never a silent 0)."""
    minutes = inventory.software.launch_minutes
    if minutes is None:
        why = (
            f"the logs of {source!r} do not show the time before their first line (no job "
            "wrapper clock): state it in the inventory (software.launch_minutes)"
        )
        return _unknown("launch_s", why, target)
    owner = inventory.project.owner or "the project owner"
    how = f"inventory software.launch_minutes ({minutes:g} min); the logs do not show it"
    return Input("launch_s", minutes * 60.0, Provenance(ASSUMPTION, owner, how), target)


MEAN_INPUTS = frozenset({"retry_ratio"})
"""Inputs taken as the mean over runs, not the median: restarts are rare events, and the
median of three runs with one crash is zero, which would price failures at nothing."""


def _measured(key: str, spread: Spread, source: str, target: str, which: str) -> Input:
    if key in MEAN_INPUTS:
        value, how = spread.mean, "mean"
    else:
        value, how = spread.median, "median"
    return Input(
        key,
        value,
        Provenance(MEASURED, source, f"{how} of {spread.n} {which}"),
        target,
        low=spread.low,
        high=spread.high,
        runs=spread.n,
    )


def _unit_problem(units: set[str | None], work_unit: str | None, source: str) -> str | None:
    if not units:
        return f"run set {source!r} does not state its throughput unit"
    if len(units) > 1:
        return f"run set {source!r} mixes throughput units {sorted(map(str, units))}"
    unit = units.pop()
    if unit not in THROUGHPUT_UNITS:
        return f"run set {source!r} measures throughput in {unit!r}, not a known work unit"
    if work_unit is None:
        return "the goal's work unit is not set"
    if THROUGHPUT_UNITS[unit] != work_unit:
        return (
            f"run set {source!r} measures {unit}, the goal counts {work_unit}: "
            "no conversion is assumed"
        )
    return None


def _checkpoint_input(context: EstimateContext, target: TrainingTarget) -> Input:
    """Time for the planned checkpoint saves that the trial logs do not show (see the module
    docstring); saves the logs show are already in ``overhead_ratio``."""
    inventory, name = context.inventory, target.name
    distribution = inventory.distribution
    every = distribution.checkpoint_interval_steps
    owner = inventory.project.owner or "the project owner"
    if not every:
        how = "no checkpoint interval planned (distribution.checkpoint_interval_steps)"
        return Input("checkpoint_s", 0.0, Provenance(ASSUMPTION, owner, how), name)
    stats = context.run_set(target.run_set) if target.run_set else None
    if stats is not None and stats.counted and stats.checkpoint_measured:
        how = "the logs show the saves: they are in the overhead ratio"
        return Input("checkpoint_s", 0.0, Provenance(MEASURED, target.run_set, how), name)
    planned = inventory.planned_steps()
    if planned is None:
        why = "planned steps are not known (goal work and batch size)"
        return _unknown("checkpoint_s", why, name)
    minutes = distribution.checkpoint_save_minutes
    if minutes is None:
        why = (
            f"checkpoints every {every} steps are planned, the trial logs do not show a save, "
            "and the inventory states no save time (distribution.checkpoint_save_minutes)"
        )
        return _unknown("checkpoint_s", why, name)
    saves = planned // every
    noun = "save" if saves == 1 else "saves"
    how = f"{saves} {noun} ({planned} steps / every {every}) x {minutes:g} min, inventory"
    return Input("checkpoint_s", saves * minutes * 60.0, Provenance(ASSUMPTION, owner, how), name)


@dataclass(frozen=True)
class TargetInputs:
    target: TrainingTarget
    inputs: dict[str, Input]
    quote: PriceQuote | None
    flags: tuple[QuoteFlag, ...]
    samples: pl.DataFrame
    """Observed inputs of each counted run (for resampling); empty when none."""
    measured_throughput: Input | None = None
    """The run set's throughput before it was tied to the target's size (an instance-count
    override ties it again)."""
    set_size: SetSize = dataclasses.field(default_factory=lambda: SetSize(None))
    family: Family | None = None
    scaling: tuple[float | None, str] = (None, "")
    quote_reason: str = ""
    """Why the target's quote is the one used (or why there is none)."""
    """The stated efficiency per doubling of nodes (``None``: none) and who states it."""


def target_inputs(context: EstimateContext, target: TrainingTarget) -> TargetInputs:
    inventory, book = context.inventory, context.book
    name = target.name
    measured, samples = _run_set_inputs(context, target)
    inputs = global_inputs(inventory)
    inputs["instance_count"] = Input(
        "instance_count",
        float(target.instance_count),
        Provenance(ASSUMPTION, inventory.project.owner or "the project owner", "target"),
        name,
    )
    price, quote, quote_reason = _price_input(
        "usd_per_hour", target.instance_type, target.region, target.purchase_option, book, name
    )
    inputs["usd_per_hour"] = _whole_ultraservers(price, quote, target.instance_count)
    if (
        target.purchase_option == CAPACITY_BLOCK
        and target.instance_count > MAX_BLOCK_INSTANCES_TOTAL
    ):
        why = (
            f"Capacity Blocks hold at most {MAX_BLOCK_INSTANCES_TOTAL} instances across blocks; "
            f"{target.instance_count} cannot be bought that way"
        )
        inputs["usd_per_hour"] = _unknown("usd_per_hour", why, name)
    inputs["capacity_block"] = _block_input(target, quote, inventory)
    inputs["restart_cost_s"] = _unknown(
        "restart_cost_s",
        f"no run of {target.run_set!r} restarted, so no restart was measured: state one "
        "as a scenario override (Inputs tab) or import a run that restarted"
        if target.run_set
        else "no run set measures this target",
        name,
    )
    inputs.update(measured)
    inputs["spot_interruptions_per_day"] = _spot_input(target, inventory)
    inputs["checkpoint_s"] = _checkpoint_input(context, target)
    measured_throughput = inputs["steady_throughput"]
    size = context.run_set(target.run_set).size if target.run_set else SetSize(None)
    family = family_of(context.families(), target.run_set) if target.run_set else None
    scaling = (
        inventory.distribution.scaling_efficiency_per_doubling,
        inventory.project.owner or "the project owner",
    )
    if context.ties_system_size:
        inputs["steady_throughput"] = _tied_to_size(
            measured_throughput, target, target.instance_count, quote, size, family, scaling
        )
    else:
        measured_throughput = None
    for key, service in _RATES.items():
        quantity = _rate_quantity(key, inputs, target.instance_count)
        rate = book.rate(service, target.region)
        inputs[key] = _rate_input(key, rate, quantity, target.region, name)
    prep_type = data_prep_instance_type(inventory.data_prep.runs_on)
    if prep_type is None:
        runs_on = inventory.data_prep.runs_on
        why = (
            f"data preparation runs on {runs_on!r}, not an EC2 instance type: "
            "set its hourly cost in a scenario"
            if runs_on
            else "data_prep.runs_on is not set"
        )
        inputs["data_prep_usd_per_hour"] = _unknown("data_prep_usd_per_hour", why, name)
    else:
        prep_price, _, _ = _price_input(
            "data_prep_usd_per_hour", prep_type, target.region, ON_DEMAND, book, name
        )
        inputs["data_prep_usd_per_hour"] = prep_price
    flags = ()
    if quote is not None:
        flags = quote_flags(
            quote,
            target_region=target.region,
            today=context.today,
            max_age_days=context.max_quote_age_days,
            target_purchase_option=target.purchase_option,
        )
    return TargetInputs(
        target,
        inputs,
        quote,
        flags,
        samples,
        measured_throughput,
        size,
        family,
        scaling,
        quote_reason,
    )


def _spot_input(target: TrainingTarget, inventory: Inventory) -> Input:
    """Expected spot interruptions per instance-day: stated on a spot target, else 0."""
    key, name = "spot_interruptions_per_day", target.name
    if target.purchase_option != SPOT:
        why = f"{target.purchase_option}: not interrupted by AWS"
        return Input(key, 0.0, Provenance(DERIVED, "target", why), name)
    if target.spot_interruptions_per_day is None:
        why = "state the interruptions per instance-day you expect on this spot target"
        return _unknown(key, why, name)
    owner = inventory.project.owner or "the project owner"
    how = "target spot_interruptions_per_day"
    return Input(key, target.spot_interruptions_per_day, Provenance(ASSUMPTION, owner, how), name)


def _block_input(target: TrainingTarget, quote: PriceQuote | None, inventory: Inventory) -> Input:
    """Whether instance time is paid in whole Capacity Block days: it is for a target bought as
    a block (the purchase option says so, whatever the quote's own option is)."""
    name = target.name
    if target.purchase_option != CAPACITY_BLOCK:
        return Input(
            "capacity_block",
            0.0,
            Provenance(DERIVED, "target", f"{target.purchase_option}: billed for the time used"),
            name,
        )
    detail = "paid up front in whole blocks: 1-14 days, then 7-day steps to 182"
    if quote is not None and quote.block_days is not None:
        count = quote.block_instances or 1
        detail += (
            f"; the quote is a {quote.block_days}-day block of {count} instance(s) at "
            f"${quote.usd_per_instance_day:,.2f} per instance-day, applied to the length the "
            "work needs"
        )
    return Input("capacity_block", 1.0, Provenance(DERIVED, "target", detail), name)


def apply_overrides(
    prepared: Sequence[TargetInputs], overrides: Sequence[Override]
) -> list[TargetInputs]:
    """Replace inputs by scenario overrides; each becomes an assumption by who, for why.

    Raises ``InvalidInputError`` for an unknown input or target, a wrong unit or a value out of
    range, so the caller can keep the last valid estimate.
    """
    names = {p.target.name for p in prepared}
    result = list(prepared)
    for override in overrides:
        spec = INPUT_SPECS.get(override.input)
        where = override.target or "project"
        value = check_value(override.input, override.value, where=where, unit=override.unit)
        if override.target is not None and override.target not in names:
            raise InvalidInputError(
                f"no target named {override.target!r}; targets: {', '.join(sorted(names))}"
            )
        if spec is not None and spec.per_target and override.target is None:
            raise InvalidInputError(
                f"{spec.label} is set per target: name the target the override applies to"
            )
        provenance = Provenance(
            ASSUMPTION, override.who or "unnamed", override.why or "scenario override"
        )
        for index, item in enumerate(result):
            if override.target is not None and item.target.name != override.target:
                continue
            inputs = dict(item.inputs)
            target = item.target.name if spec is not None and spec.per_target else None
            inputs[override.input] = Input(override.input, value, provenance, target)
            result[index] = dataclasses.replace(item, inputs=inputs)
    for index, (before, item) in enumerate(zip(prepared, result, strict=True)):
        scaled = _checkpoints_for_work(before, item)
        if scaled is not None:
            item = result[index] = dataclasses.replace(
                item, inputs={**item.inputs, "checkpoint_s": scaled}
            )
        count = item.inputs["instance_count"].value
        throughput = item.inputs["steady_throughput"]
        if (
            count is not None
            and count != item.target.instance_count
            and throughput is before.inputs["steady_throughput"]
            and item.measured_throughput is not None
        ):
            inputs = dict(item.inputs)
            inputs["steady_throughput"] = _tied_to_size(
                item.measured_throughput,
                item.target,
                int(count),
                item.quote,
                item.set_size,
                item.family,
                item.scaling,
            )
            result[index] = dataclasses.replace(item, inputs=inputs)
    return result


def _checkpoints_for_work(before: TargetInputs, after: TargetInputs) -> Input | None:
    """Planned checkpoint time rescaled when an override changed the work to finish (the
    saves were counted for the inventory's work); ``None`` when nothing needs rescaling."""
    old_work = before.inputs["work_amount"].value
    new_work = after.inputs["work_amount"].value
    checkpoint = after.inputs.get("checkpoint_s")
    if (
        checkpoint is None
        or checkpoint is not before.inputs.get("checkpoint_s")
        or not checkpoint.value
        or not old_work
        or new_work is None
        or new_work == old_work
    ):
        return None
    how = (
        f"{checkpoint.provenance.detail}; scaled to the overridden work "
        f"({new_work:,.6g} instead of {old_work:,.6g})"
    )
    return Input(
        "checkpoint_s",
        checkpoint.value * new_work / old_work,
        Provenance(DERIVED, checkpoint.provenance.source, how),
        checkpoint.target,
    )


def _tied_to_size(
    throughput: Input,
    target: TrainingTarget,
    instances: int,
    quote: PriceQuote | None,
    size: SetSize,
    family: Family | None = None,
    scaling: tuple[float | None, str] = (None, ""),
) -> Input:
    """A measured throughput holds only on the system it was measured on (``system_size``).

    A target (or an instance-count override) of another node count gets the throughput its
    scaling family measured at that count, or interpolated between measured counts, or
    assumed from a stated efficiency per doubling (``core.scaling``); else an unknown
    throughput whose reason names both sizes, until a person's override gives one.
    """
    if throughput.provenance.kind != MEASURED:
        return throughput
    measured = size.size
    counts_cores = measured is not None and "NeuronCore" in (measured.accelerator or "")
    wanted = target_size(
        target.instance_type, instances, target.accelerators_per_instance, quote, counts_cores
    )
    problem = size_problem(size, wanted, target.run_set or "")
    if problem is not None and family is not None and measured is not None:
        same_nodes = dataclasses.replace(wanted, instances=measured.nodes or 0)
        if size_problem(size, same_nodes, target.run_set or "") is None:
            return _scaled_throughput(family, instances, target, scaling)
    if problem is not None:
        why = f"{problem}; the measured throughput does not apply (override it, with who and why)"
        return _unknown("steady_throughput", why, target.name)
    detail = f"{throughput.provenance.detail}, on {size.text()}"
    if wanted.source == "stated on the target":
        detail += f" ({wanted.per_instance} per {target.instance_type} stated on the target)"
    return dataclasses.replace(
        throughput, provenance=dataclasses.replace(throughput.provenance, detail=detail)
    )


def _scaled_throughput(
    family: Family, instances: int, target: TrainingTarget, scaling: tuple[float | None, str]
) -> Input:
    """The family's throughput at ``instances`` nodes, with its provenance: measured,
    interpolated, assumed from the stated efficiency per doubling, or unknown with why."""
    per_doubling, owner = scaling
    scaled = throughput_at(family, instances, per_doubling)
    if scaled.value is None:
        why = f"scaling family {family.name!r}: {scaled.detail}"
        return _unknown("steady_throughput", why, target.name)
    if scaled.source == SCALE_MEASURED:
        provenance = Provenance(MEASURED, scaled.run_set or family.name, scaled.detail)
    elif scaled.source == INTERPOLATED:
        provenance = Provenance(DERIVED, f"scaling family {family.name!r}", scaled.detail)
    else:
        how = f"{scaled.detail} (inventory distribution.scaling_efficiency_per_doubling)"
        provenance = Provenance(ASSUMPTION, owner, how)
    return Input("steady_throughput", scaled.value, provenance, target.name)


# --- the estimate --------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    key: str
    label: str
    hours: float | None
    """Wall-clock hours per instance."""
    instance_hours: float | None
    usd: float | None


@dataclass(frozen=True)
class RiskLine:
    """A porting risk: engineering effort in days, never instance hours."""

    title: str
    kind: str | None
    status: str
    effort_days: float | None
    owner: str | None


@dataclass(frozen=True)
class TargetEstimate:
    target: TrainingTarget
    inputs: tuple[Input, ...]
    stages: tuple[Stage, ...]
    instance_hours: float | None
    instance_usd: float | None
    storage_usd: float | None
    transfer_usd: float | None
    logs_usd: float | None
    data_prep_usd: float | None
    retries_usd: float | None
    total_usd: float | None
    usd_per_unit: float | None
    work_unit: str | None
    quote: PriceQuote | None
    quote_flags: tuple[QuoteFlag, ...]
    samples: pl.DataFrame = dataclasses.field(compare=False, repr=False)
    quote_reason: str = ""
    idle_usd: float | None = 0.0
    """Capacity Block time paid and not used (0 when billed for the time used)."""
    wall_hours: float | None = None
    """Wall clock per instance the work needs (retries included)."""
    paid_hours: float | None = None
    """Hours paid per instance: the wall clock, or the whole block days that cover it."""
    term_years: int | None = None
    """The reserved term or Savings Plan term the target is bought under (None: no term)."""
    commitment_beyond_usd: float | None = None
    """What the term still owes after this training's hours: instances x rate x (term hours -
    wall clock). Not part of the total (other work can use it), never hidden either."""

    def commitment_text(self) -> str:
        """The term's remaining commitment in words; empty without a term."""
        if self.term_years is None:
            return ""
        if self.commitment_beyond_usd is None:
            return f"{self.term_years}-year term: what it still owes is unknown"
        return (
            f"{self.term_years}-year term still owes ${self.commitment_beyond_usd:,.2f} beyond "
            "this training (not in the total)"
        )

    @property
    def block_billed(self) -> bool:
        return bool(self.input("capacity_block").value)

    def block_text(self) -> str:
        """ "pays 24 h, uses 5.2 h (1 block of 1 day)" for a block; empty otherwise."""
        if not self.block_billed:
            return ""
        if self.paid_hours is None or self.wall_hours is None:
            return "block length unknown: the wall clock the work needs is unknown"
        days = round(self.paid_hours / 24)
        hint = extension_hint(self.wall_hours)
        return (
            f"pays {self.paid_hours:,.0f} h, uses {self.wall_hours:,.1f} h per instance "
            f"({blocks_text(days)}{'; ' + hint if hint else ''})"
        )

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def incomplete_inputs(self) -> tuple[str, ...]:
        """Labels of the unknown inputs that keep a cost term unknown; empty when the total
        is a number (an unknown rate for a quantity of 0 is not missing)."""
        missing = dict.fromkeys(label for term in TERMS for label in self.term_unknowns(term))
        return tuple(missing)

    @property
    def complete(self) -> bool:
        return self.total_usd is not None

    def input(self, key: str) -> Input:
        return next(i for i in self.inputs if i.key == key)

    def values(self) -> dict[str, float | None]:
        return {i.key: i.value for i in self.inputs}

    def term(self, key: str) -> float | None:
        return getattr(self, key)

    def term_unknowns(self, key: str) -> tuple[str, ...]:
        """Unknown inputs that keep one cost term from being a number (none when it is one)."""
        if self.term(key) is not None:
            return ()
        needed = TERM_INPUTS[key]
        return tuple(i.label for i in self.unknown_inputs() if i.key in needed)

    def unknown_inputs(self) -> tuple[Input, ...]:
        """Unknown inputs that matter: not those another input's 0 makes irrelevant."""
        values = self.values()
        return tuple(
            i
            for i in self.inputs
            if i.is_unknown and not any(values.get(gate) == 0 for gate in ZERO_GATES.get(i.key, ()))
        )

    def headline(self) -> str:
        """The total as a person should read it: a number, or what is missing."""
        if self.total_usd is None:
            return "incomplete: " + ", ".join(self.incomplete_inputs)
        return f"${self.total_usd:,.2f}"


@dataclass(frozen=True)
class Estimate:
    targets: tuple[TargetEstimate, ...]
    risks: tuple[RiskLine, ...]
    overrides: tuple[Override, ...] = ()
    work_unit: str | None = None

    def target(self, name: str) -> TargetEstimate:
        for item in self.targets:
            if item.name == name:
                return item
        raise KeyError(name)

    @property
    def risk_effort_days(self) -> float:
        """Known effort of the risks not resolved yet (see ``risk_effort_text``)."""
        return sum(r.effort_days for r in self._open_risks if r.effort_days is not None)

    @property
    def risks_without_effort(self) -> int:
        return sum(r.effort_days is None for r in self._open_risks)

    @property
    def risk_effort_text(self) -> str:
        return effort_text(self.risk_effort_days, self.risks_without_effort)

    @property
    def _open_risks(self) -> list[RiskLine]:
        return [r for r in self.risks if r.status != "resolved"]


def _risk_line(risk: MigrationRisk) -> RiskLine:
    return RiskLine(risk.title, risk.kind, risk.status, risk.effort_days, risk.owner)


def _commitment_beyond(row: Mapping[str, Any], years: int | None) -> float | None:
    """USD a term (reserved or Savings Plan) commits to beyond this training's wall clock."""
    if years is None:
        return None
    rate, count, wall = row["usd_per_hour"], row["instance_count"], row["wall_h"]
    if rate is None or count is None or wall is None:
        return None
    return max(0.0, rate * count * (years * HOURS_PER_YEAR - wall))


def estimate_from_inputs(
    prepared: Sequence[TargetInputs],
    risks: Iterable[MigrationRisk] = (),
    overrides: Sequence[Override] = (),
    work_unit: str | None = None,
) -> Estimate:
    """Evaluate the formula once for all targets (one Polars frame, one row per target)."""
    frame = cost_frame(input_frame([{k: i.value for k, i in p.inputs.items()} for p in prepared]))
    rows = frame.to_dicts()
    targets = []
    for item, row in zip(prepared, rows, strict=True):
        count = row["instance_count"]
        stages = tuple(
            Stage(
                key,
                label,
                row[key],
                None if row[key] is None or count is None else row[key] * count,
                None
                if row[key] is None or count is None or row["usd_per_hour"] is None
                else row[key] * count * row["usd_per_hour"],
            )
            for key, label in STAGES
        )
        total = row["total_usd"]
        work = row["work_amount"]
        years = term_years(item.target.purchase_option)
        targets.append(
            TargetEstimate(
                target=item.target,
                inputs=tuple(item.inputs[key] for key in INPUT_SPECS),
                stages=stages,
                instance_hours=row["instance_hours"],
                instance_usd=row["instance_usd"],
                storage_usd=row["storage_usd"],
                transfer_usd=row["transfer_usd"],
                logs_usd=row["logs_usd"],
                data_prep_usd=row["data_prep_usd"],
                retries_usd=row["retries_usd"],
                idle_usd=row["idle_usd"],
                wall_hours=row["wall_h"],
                paid_hours=row["paid_h"],
                term_years=years,
                commitment_beyond_usd=_commitment_beyond(row, years),
                total_usd=total,
                usd_per_unit=None if total is None or not work else total / work,
                work_unit=work_unit,
                quote=item.quote,
                quote_flags=item.flags,
                quote_reason=item.quote_reason,
                samples=item.samples,
            )
        )
    risk_lines = tuple(_risk_line(r) for r in risks)
    return Estimate(tuple(targets), risk_lines, tuple(overrides), work_unit)


def prepare(context: EstimateContext) -> list[TargetInputs]:
    """The inputs of every target before overrides (cache this between edits of overrides)."""
    return [target_inputs(context, target) for target in context.inventory.targets]


def estimate(
    context: EstimateContext,
    overrides: Sequence[Override] = (),
    prepared: Sequence[TargetInputs] | None = None,
) -> Estimate:
    """The estimate of every target, with ``overrides`` applied (``InvalidInputError`` if bad)."""
    base = prepare(context) if prepared is None else prepared
    inputs = apply_overrides(base, overrides)
    inventory = context.inventory
    return estimate_from_inputs(inputs, inventory.risks, overrides, inventory.goal.work_unit)
