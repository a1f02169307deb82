"""Observed runs: one row per run (``observation_row``) makes the observations frame, and
``run_set_stats`` turns a run set's rows into medians and ranges, once per import; the
``EstimateContext`` holds them with the inventory and the quote book.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import polars as pl

from trntui.core.estimate.inputs import OBSERVED_INPUTS, PROTOCOL_FACT_KEYS
from trntui.core.inventory import Inventory
from trntui.core.quotes import QuoteBook
from trntui.core.run_facts import SUSPECT, RunFacts, Spread
from trntui.core.scalars import number_or_none
from trntui.core.scaling import Family, families, protocol_text
from trntui.core.system_size import SetSize, set_size
from trntui.core.timeline import RunMetadata, SystemSize

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
        "before_init_s": pl.Float64,
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
        "work_to_target": pl.Float64,
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

SAMPLE_COLUMNS = (
    *OBSERVED_INPUTS,
    "work_done",
    "work_to_target",
    "quality_reached",
    "result_s",
    "total_s",
)
"""What the prediction band draws from each counted run (``core.prediction``): its observed
inputs, the work it had done when it stopped and the work its verifying evaluation evaluated
(with whether it reached the quality target), and its clocks, which say how much of its time
no input explains."""

EMPTY_SAMPLES = pl.DataFrame(schema={key: OBSERVATION_SCHEMA[key] for key in SAMPLE_COLUMNS})


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

    Startup is the time before training on the log's clock: its lines before ``init_start``
    (``before_init_s``, kept apart too so the back-test can name it) and initialization.
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
            phases.after_training_s,
        )
    )
    retry = (phases.recovery_s or 0.0) + (phases.redone_s or 0.0)
    # The ratios' base: the run's own training time, when it has some.
    base_s = training_s if training_s is not None and training_s > 0 else None
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
        "startup_s": (
            facts.init_s + (phases.before_init_s or 0.0) if facts.init_s is not None else None
        ),
        "before_init_s": phases.before_init_s,
        "training_s": training_s,
        "overhead_ratio": overhead / base_s if base_s is not None else None,
        "retry_ratio": retry / base_s if base_s is not None else None,
        "total_s": facts.total_s if facts.total_s is not None else facts.run_s,
        "restarts": facts.restarts,
        "redone_steps": facts.redone_steps,
        "limit": limit,
        "steady_utilization_pct": steady_utilization_pct,
        "checkpoint_measured": phases.checkpoint_s is not None,
        "launch_s": outside,
        "before_first_line_s": clock.before_first_line_s if clock is not None else None,
        "work_done": facts.useful_work,
        "work_to_target": facts.work_to_target,
        "result_s": facts.launch_to_result_s,
        "nodes": system.nodes if system else None,
        "accelerators_per_node": system.accelerators_per_node if system else None,
        "accelerators": system.accelerators if system else None,
        "accelerator": system.accelerator if system else None,
        "size_source": system.source if system else None,
        "size_stated_by": system.stated_by if system else None,
        "protocol_json": protocol_text(metadata.protocol) if metadata is not None else None,
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
    families_cache: list[tuple[pl.DataFrame, tuple[Family, ...]]] = dataclasses.field(
        default_factory=list, compare=False, repr=False
    )

    def families(self) -> tuple[Family, ...]:
        """The scaling families of the observations (computed once per observations frame)."""
        if not self.families_cache or self.families_cache[0][0] is not self.observations:
            self.families_cache[:] = [
                (self.observations, families(self.observations, self.family_names)),
            ]
        return self.families_cache[0][1]

    """Run-set statistics by set name, kept while ``observations`` is the same frame (so an
    edited copy made with ``dataclasses.replace`` reuses them)."""

    def run_set(self, set_name: str) -> RunSetStats:
        cached = self.stats_cache.get(set_name)
        if cached is None or cached[0] is not self.observations:
            cached = (self.observations, run_set_stats(self.observations, set_name))
            self.stats_cache[set_name] = cached
        return cached[1]


@dataclass(frozen=True)
class RunSetStats:
    """What the estimate and the comparison need from one run set, computed once per import.

    ``spreads`` cover the counted runs (finished, quality reached) for the observed inputs, the
    runs that did not count for ``failed_run_s``, and the counted runs whose log shows the
    target reached for ``work_to_target`` (the work the evaluation that verified it evaluated:
    for runs that stop at the target, as most MLPerf runs do, the work done; for runs evaluated
    offline, the checkpoint's, which differs from run to run); ``samples`` are the counted
    runs' ``SAMPLE_COLUMNS``, which the prediction band draws from.
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
        *_spread_exprs(
            "work_to_target",
            "work_to_target",
            counted & pl.col("quality_reached").fill_null(False),
        ),
    ).row(0, named=True)
    spreads = {
        alias: Spread(
            n=row[f"{alias}/n"],
            min=row[f"{alias}/low"],
            median=row[f"{alias}/median"],
            max=row[f"{alias}/high"],
            mean=row[f"{alias}/mean"],
        )
        for alias in (*OBSERVED_INPUTS, "failed_run_s", "restart_cost_s", "work_to_target")
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
        samples=kept.select(SAMPLE_COLUMNS),
        limits=tuple(
            (str(limit), int(count))
            for limit, count in kept["limit"].drop_nulls().value_counts(sort=True).iter_rows()
        ),
        steady_utilization_pct=number_or_none(kept["steady_utilization_pct"].median()),
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
