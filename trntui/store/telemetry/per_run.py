"""What a run's attached captures say: its utilization and compile summary, how its compile
recurs, its limit (``run_limit``) and the run detail (``run_detail``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from trntui.core.compile_telemetry import CompileRecurrence, CompileSummary, compile_recurrence
from trntui.core.mfu import Mfu, run_mfu
from trntui.core.run_facts import TOKENS_FROM_SEQUENCE_LENGTH, RunFacts, run_facts
from trntui.core.timeline import ImportedRun, Kind, SystemSize
from trntui.core.utilization import Telemetry, UtilizationReport, utilization_report
from trntui.core.verdict import Verdict, run_verdict
from trntui.store.runs import load_run
from trntui.store.telemetry.captures import (
    COMPILE,
    UTILIZATION,
    load_captures,
    load_telemetry,
    stored_metadata,
    summary_from_json,
)


def run_telemetry(root: Path, run_id: str) -> Telemetry | None:
    """All utilization captures of a run merged on the run's clock (offset 0), or None.

    Devices of different captures are kept apart by prefixing them with the capture id.
    """
    rows = load_captures(root, run_id).filter(pl.col("kind") == UTILIZATION)
    if rows.is_empty():
        return None
    parts = []
    metas = []
    for capture_id, offset in rows.select("capture_id", "offset_s").iter_rows():
        telemetry = load_telemetry(root, capture_id)
        metas.append(telemetry.metadata)
        prefix = "" if rows.height == 1 else f"{capture_id[:6]}:"
        parts.append(
            telemetry.samples.with_columns(
                pl.col("t_s") + (offset or 0.0), (pl.lit(prefix) + pl.col("device")).alias("device")
            )
        )
    first = metas[0]
    merged = dataclasses.replace(
        first,
        devices=sum(m.devices for m in metas),
        devices_on_instance=(
            None
            if any(m.devices_on_instance is None for m in metas)
            else sum(m.devices_on_instance or 0 for m in metas)
        ),
        reports=sum(m.reports for m in metas),
        gap_reports=sum(m.gap_reports for m in metas),
        notes=tuple(note for m in metas for note in m.notes),
    )
    return Telemetry(pl.concat(parts).sort("t_s"), merged)


def run_compile_summary(root: Path, run_id: str) -> CompileSummary | None:
    rows = load_captures(root, run_id).filter(pl.col("kind") == COMPILE)
    if rows.is_empty():
        return None
    return stored_metadata(root, rows["metadata_json"][-1], summary_from_json)


def compile_recurrence_of(root: Path, run_ids: Sequence[str]) -> CompileRecurrence:
    """Recurring vs one-off compile time over repeated runs (e.g. a run set), taken in launch
    order; runs without an attached compiler log are left out (their compilation is unknown)."""
    dated = []
    for order, run_id in enumerate(run_ids):
        summary = run_compile_summary(root, run_id)
        if summary is None:
            continue
        launch = load_run(root, run_id).metadata.launch_time or summary.start_time
        key = launch.replace(tzinfo=None) if launch is not None else dt.datetime.max
        dated.append((key, order, summary))
    dated.sort(key=lambda item: (item[0], item[1]))
    return compile_recurrence([summary for _, _, summary in dated])


@dataclass(frozen=True)
class RunTelemetryDetail:
    """What the run detail shows next to the timeline."""

    utilization: UtilizationReport | None
    compile: CompileSummary | None
    verdict: Verdict
    mfu: Mfu


def timeline_compile_s(run: ImportedRun) -> float | None:
    """Compile time from the run log's own compile_start/compile_stop rows, when it has them."""
    tl = run.timeline.filter(pl.col("kind").is_in([Kind.COMPILE_START, Kind.COMPILE_STOP]))
    tl = tl.filter(pl.col("t_s").is_not_null())
    if tl.is_empty():
        return None
    paired = tl.with_columns(
        pl.when(
            (pl.col("kind") == Kind.COMPILE_STOP) & (pl.col("kind").shift(1) == Kind.COMPILE_START)
        )
        .then(pl.col("t_s") - pl.col("t_s").shift(1))
        .alias("d")
    )
    return float(paired["d"].drop_nulls().sum())


def _verdict(
    run: ImportedRun,
    facts: RunFacts,
    telemetry: Telemetry | None,
    compile: CompileSummary | None,
) -> Verdict:
    """The stored run's verdict, as the estimate and the run detail both take it."""
    return run_verdict(
        facts,
        telemetry,
        0.0,
        compile=compile,
        timeline_compile_s=timeline_compile_s(run),
        job_clock=run.metadata.job_clock,
    )


def run_limit(
    root: Path, run_id: str, run: ImportedRun, facts: RunFacts, *, captured: bool = True
) -> tuple[str | None, float | None]:
    """What limits an already loaded run, and its steady-window utilization (for the estimate).

    ``None`` where the verdict cannot name a limit or no capture measures utilization.
    ``captured=False``: the caller knows the run has no capture (the table is not read).
    """
    telemetry = run_telemetry(root, run_id) if captured else None
    verdict = _verdict(
        run, facts, telemetry, run_compile_summary(root, run_id) if captured else None
    )
    steady_pct = None
    if telemetry is not None:
        report = utilization_report(
            telemetry, 0.0, facts.total_s, facts.steady_start_s, facts.steady_end_s
        )
        if report.steady is not None:
            steady_pct = report.steady.mean_pct
    return (str(verdict.limit) if verdict.limit is not None else None), steady_pct


def run_chips(size: SystemSize | None) -> int | None:
    """The accelerator chips a run's system size counts (measured or stated); ``None`` when
    unknown or counted in NeuronCores (a core count is not a chip count)."""
    if size is None or "NeuronCore" in (size.accelerator or ""):
        return None
    return size.accelerators


def run_detail(
    root: Path,
    run_id: str,
    facts: RunFacts | None = None,
    *,
    parameters_billion: float | None = None,
    trainable_parameters_billion: float | None = None,
    instance_type: str | None = None,
    instance_count: int = 1,
    precision: str = "bf16",
    size: SystemSize | None = None,
) -> RunTelemetryDetail:
    """Utilization (steady window and whole run), compile telemetry, verdict and MFU of a run.

    ``facts`` may be passed in when the caller derived them with the project's goal
    (``trntui.store.facts.derive_and_store_facts``); otherwise they are derived without it.
    """
    run = load_run(root, run_id)
    facts = facts or run_facts(run)
    telemetry = run_telemetry(root, run_id)
    compile = run_compile_summary(root, run_id)
    utilization = None
    if telemetry is not None:
        utilization = utilization_report(
            telemetry, 0.0, facts.total_s, facts.steady_start_s, facts.steady_end_s
        )
    verdict = _verdict(run, facts, telemetry, compile)
    captured_type = None
    if telemetry is not None:
        captured_type = telemetry.metadata.instance_type
    mfu = run_mfu(
        parameters_billion,
        facts.steady_tokens_per_s,
        instance_type or captured_type,
        instance_count,
        precision,
        run_chips=run_chips(size),
        trainable_parameters_billion=trainable_parameters_billion,
        tokens_assume_full_sequences=any(
            note.startswith(TOKENS_FROM_SEQUENCE_LENGTH) for note in facts.notes
        ),
    )
    return RunTelemetryDetail(utilization, compile, verdict, mfu)
