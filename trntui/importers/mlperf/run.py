"""The imported run: records, progress and rows put together, with its notes, system size, job
clock and metadata (``import_mlperf``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.mlperf_rules import EPOCHS, SAMPLES, STEPS, TOKENS, rules_for
from trntui.core.mlperf_score import benchmark_of
from trntui.core.timeline import ImportedRun, RunMetadata, TimeSource
from trntui.importers._base import (
    Steps,
    json_number,
    no_events_error,
    read_lines,
    read_source,
    rows_timeline,
)
from trntui.importers.launch import (
    context_lines,
    folder_size,
    job_clock,
    launcher_size,
    submission_size,
    sysjson_size,
    weighed_size,
)
from trntui.importers.mlperf.progress import (
    epoch_base,
    implied_samples_per_epoch,
    progress_of,
    rising_work,
    work_unit,
)
from trntui.importers.mlperf.records import MARKER, NAME, deduplicate, parse_events, timed_run
from trntui.importers.mlperf.rows import (
    evaluations_of,
    facts_of,
    protocol_of,
    rows_of,
    setup_phases_of,
)

MAX_RECORD_BYTES = 64 * 1024
"""The longest MLLOG line taken: real ones are a JSON object of a key, a value and a little
metadata (the longest in the shared MLPerf results is 353 characters). Beyond this a file is
not an MLPerf log; checked before any record is decoded, as decoding a few lines of 15 MB each
took 6.7 times the file's size in memory."""


def _refuse_oversized(name: str, records: pl.DataFrame) -> None:
    longest = records.filter(pl.col("text").str.len_bytes() > MAX_RECORD_BYTES).head(1)
    if longest.height:
        line, text = longest.row(0)
        raise InputFileError(
            name,
            f"an MLLOG record of {len(text.encode('latin-1')):,} bytes (real ones are a few "
            "hundred)",
            line=line,
            expected=f"MLLOG records of at most {MAX_RECORD_BYTES:,} bytes",
        )


def import_mlperf(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    steps.at(0.05)
    lines = read_lines(source, latin1=True)
    steps.at(0.15)
    marked = pl.col("text").str.contains(MARKER, literal=True)
    _refuse_oversized(source.name, lines.filter(marked))
    records = lines.filter(marked).select(
        "line", pl.col("text").str.split_exact(MARKER, 1).struct.field("field_1").str.strip_chars()
    )
    if records.is_empty():
        raise no_events_error(source, "MLPerf", '":::MLLOG {json}" lines')
    around = context_lines(lines.filter(~marked))
    events = parse_events(source.name, records, steps)
    events, duplicates = deduplicate(events)
    steps.at(0.75)

    start_index, stop_index, run_starts = timed_run(events)
    facts = facts_of(events)
    benchmark = benchmark_of(facts, str(path))
    rules = rules_for(benchmark)
    per_epoch = json_number(_first_value(events, "samples_per_epoch")) or json_number(
        _first_value(events, "train_samples")
    )
    unit = work_unit(events, rules, per_epoch)
    per_unit = (
        json_number(_first_value(events, "global_batch_size")) if unit == STEPS else per_epoch
    )
    key, done, by_rate = progress_of(events, unit, epoch_base(events), stop_index)
    done, dropped = rising_work(done)
    by_rate &= set(done)
    implied = implied_samples_per_epoch(events, done) if unit == EPOCHS else None
    unsupported = implied is not None and per_unit and not 0.5 <= per_unit / implied <= 2.0
    keep = {i for i in (start_index, stop_index) if i is not None}
    evaluations = evaluations_of(events, rules, unit, epoch_base(events))
    timeline = rows_timeline(
        rows_of(events, keep, unit, None if unsupported else per_unit, (key, done), evaluations)
    )

    notes = []
    if duplicates:
        notes.append(
            f"{duplicates} duplicate MLLOG records (same event from several ranks) dropped"
        )
    if run_starts > 1:
        notes.append(f"{run_starts} run_start records; the last one before run_stop starts the run")
    if stop_index is None:
        notes.append("no run_stop: the run did not finish, so it is not a completed run")
    if dropped:
        notes.append(f"{dropped} progress records whose work did not rise were left out")
    for index in sorted(by_rate):
        notes.append(
            f"the block ending at line {events[index]['line']} states no count of its end: "
            f"{done[index]:,.0f} {unit} is its start plus the log's own rate x its time"
        )
    if unsupported:
        notes.append(
            f"samples per epoch left unknown: the log states {per_unit:,.0f} (train_samples), "
            f"its own training rate implies about {implied:,.0f}"
        )
    if unit in (EPOCHS, STEPS) and not per_unit:
        what = "train_samples" if unit == EPOCHS else "global_batch_size"
        notes.append(f"progress is counted in {unit} and the log states no {what}")
    submitted, problem = submission_size(path)
    if problem:
        notes.append(problem)
    sysjson, doubt = sysjson_size(around, source.name)
    system = weighed_size(
        sysjson, doubt, submitted, launcher_size(around, source.name), folder_size(path)
    )
    times = [e["time_ms"] for e in events]
    t0_ms = min(times)
    clock = job_clock(around, source.name, t0_ms / 1000.0, max(times) / 1000.0)
    steps.at(0.95)
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.WALL_CLOCK,
        launch_time=dt.datetime.fromtimestamp(t0_ms / 1000.0, tz=dt.UTC),
        throughput_unit="tokens/s" if unit == TOKENS else f"{SAMPLES}/s",
        quality_metric="eval_accuracy",
        quality_higher_is_better=rules.higher_is_better if rules is not None else None,
        success_means_target_reached=True,
        prints_run_stop=True,
        facts=facts,
        notes=tuple(notes),
        system=system,
        job_clock=clock,
        protocol=protocol_of(facts, benchmark, rules),
        setup_phases=setup_phases_of(events),
        quality_target_value=rules.target if rules is not None else None,
    )
    return ImportedRun(timeline, metadata)


def _first_value(events: list[dict[str, Any]], key: str) -> Any:
    for event in events:
        if event["key"] == key:
            return event.get("value")
    return None
