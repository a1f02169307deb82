"""neuronx-distributed training logs (the Llama/GPT examples' ``logger.py``).

Step lines: ``LOG {time.asctime()} - ({epoch}, {step}) step_loss : X learning_rate : X
throughput : X seq/s`` (throughput is the example's moving average over 10 steps; clock
resolution is one second). Neuron compiler lines, when present, give compile intervals:
``<YYYY-mm-dd HH:MM:SS.ffffff>: <pid> INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: ...``
then ``Compiler status PASS`` (``FAIL``; a line without its own timestamp takes the next
stamped line's time, an upper bound). Times are the host's local time; the log carries no time zone.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from trntui.core.compile_telemetry import parse_asctime
from trntui.core.errors import InputFileError
from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource, conform
from trntui.importers._base import Steps, no_events_error, read_lines, read_source

NAME = "nxd"
_STEP = (
    r"^LOG (\w{3} \w{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}) - \((\d+), (\d+)\) "
    r"step_loss : (\S+) learning_rate : (\S+) throughput : (\S+) seq/s"
)
_SNIFF = re.compile(r"(?m)^LOG \w{3} \w{3} +\d{1,2} [\d:]{8} \d{4} - \(\d+, \d+\) step_loss")
_EXPECTED = "'LOG <asctime> - (epoch, step) step_loss : X learning_rate : X throughput : X seq/s'"
_COMPILER_TIME = r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)"


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def _step_rows(lines: pl.DataFrame, path: str) -> pl.DataFrame:
    candidates = lines.filter(
        pl.col("text").str.starts_with("LOG ")
        & (
            pl.col("text").str.contains("step_loss", literal=True)
            | pl.col("text").str.contains(" - (", literal=True)
        )
    )
    groups = pl.col("text").str.extract_groups(_STEP)
    parsed = candidates.select(
        "line",
        groups.struct.field("1").alias("raw_time"),
        groups.struct.field("2").cast(pl.Int64, strict=False).alias("epoch"),
        groups.struct.field("3").cast(pl.Int64, strict=False).alias("step"),
        groups.struct.field("4").cast(pl.Float64, strict=False).alias("loss"),
        groups.struct.field("6").cast(pl.Float64, strict=False).alias("throughput"),
    ).with_columns(parse_asctime(pl.col("raw_time")).alias("wall"))
    broken = parsed.filter(
        pl.col("wall").is_null() | pl.col("step").is_null() | pl.col("throughput").is_null()
    )
    if not broken.is_empty():
        raise InputFileError(
            path,
            "step line is incomplete or malformed (truncated?)",
            line=int(broken["line"][0]),
            expected=_EXPECTED,
        )
    return parsed.drop("raw_time").with_columns(pl.lit(str(Kind.STEP)).alias("kind"))


def _compile_rows(lines: pl.DataFrame) -> pl.DataFrame:
    text = pl.col("text")
    small = lines.filter(
        text.str.contains("||NEURON_CC_WRAPPER||", literal=True)
        | text.str.contains("Compiler status", literal=True)
    )
    kind = (
        pl.when(text.str.contains("Call compiler with cmd", literal=True))
        .then(pl.lit(str(Kind.COMPILE_START)))
        .when(text.str.contains(r"Compiler status (PASS|FAIL)"))
        .then(pl.lit(str(Kind.COMPILE_STOP)))
        .when(text.str.contains("Failed compilation", literal=True))
        .then(pl.lit(str(Kind.ERROR)))
    )
    return small.select(
        "line",
        kind.alias("kind"),
        text.str.extract(_COMPILER_TIME, 1)
        .str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S%.f", strict=False)
        .alias("wall"),
        text.str.extract(r"Compiler status (PASS|FAIL)", 1).alias("status"),
    ).filter(pl.col("kind").is_not_null())


def import_nxd(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    lines = read_lines(source)
    steps.at(0.3)
    step_rows = _step_rows(lines, source.name)
    if step_rows.is_empty():
        raise no_events_error(source, "neuronx-distributed 'LOG ... step_loss'", _EXPECTED)
    events = pl.concat([step_rows, _compile_rows(lines)], how="diagonal_relaxed").sort("line")
    steps.at(0.7)
    start = events["wall"].min()
    # A compiler line without its own timestamp finished before the next stamped line.
    filled = pl.col("wall").backward_fill().forward_fill()
    events = events.with_columns(((filled - start).dt.total_microseconds() / 1e6).alias("t_s"))
    compiles = int((events["kind"] == Kind.COMPILE_START).sum())
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.WALL_CLOCK,
        launch_time=start,
        throughput_unit="samples/s",
        facts={"compiler_invocations": str(compiles)} if compiles else {},
        not_derivable=(
            "planned steps (not in the log)",
            "samples per step (not in the log; throughput is in sequences per second)",
            "checkpoint save time",
            "validation quality (the example logs training loss only)",
        ),
        notes=(
            "timestamps have one-second resolution and are the host's local time",
            "throughput is the example's moving average over 10 steps",
        ),
    )
    steps.at(0.95)
    return ImportedRun(conform(events), metadata)
