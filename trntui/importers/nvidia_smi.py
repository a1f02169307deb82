"""nvidia-smi GPU utilization captures, so the GPU target gets the same treatment.

Produced by ``nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 1``
(optionally with ``index`` or ``uuid`` among the fields): a header naming each field with its
unit (``utilization.gpu [%]``, ``memory.used [MiB]``), then one row per GPU per sample, values
with their unit (``87 %``, ``40536 MiB``; ``nounits`` leaves them bare). Timestamps look like
``2024/01/15 10:00:00.123``, host local time with no zone. A value nvidia-smi could not read
(``[N/A]``, ``[Not Supported]``, ``[Unknown Error]``) is a gap, not 0 %.

Without an ``index`` field, the rows of one sample are the GPUs in order: the i-th row sharing
a timestamp is ``gpu<i>``. Each sample covers the time since that GPU's previous sample
(``utilization.gpu`` is the percent of that period a kernel was running); a GPU's first sample
covers the median period.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.scalars import moment, number
from trntui.core.utilization import (
    Metric,
    Telemetry,
    TelemetryMetadata,
    TelemetryTime,
    conform_samples,
)
from trntui.importers._base import Steps, read_lines, read_source

NAME = "nvidia-smi"
METHOD = (
    "nvidia-smi utilization.gpu: percent of the sample period one or more kernels were running "
    "on the GPU, per GPU"
)
_EXPECTED = "nvidia-smi --query-gpu=timestamp,utilization.gpu,... --format=csv output"
_UNITS = {"mib": 2**20, "kib": 2**10, "gib": 2**30, "b": 1}


def sniff(head: str) -> bool:
    first = head.lstrip().split("\n", 1)[0]
    return "utilization.gpu" in first and "timestamp" in first


def _field(name: str) -> tuple[str, str | None]:
    name = name.strip()
    if name.endswith("]") and "[" in name:
        base, unit = name[:-1].split("[", 1)
        return base.strip(), unit.strip()
    return name, None


def import_nvidia_smi(path: Path, steps: Steps | None = None) -> Telemetry:
    steps = steps or Steps(str(path))
    source = read_source(path)
    lines = read_lines(source).filter(pl.col("text").str.strip_chars() != "")
    if lines.is_empty():
        raise InputFileError(source.name, "file is empty", expected=_EXPECTED)
    header_line, header = lines.row(0)
    fields = [_field(part) for part in header.split(",")]
    names = [name for name, _ in fields]
    if "timestamp" not in names or "utilization.gpu" not in names:
        raise InputFileError(
            source.name,
            "header lacks timestamp or utilization.gpu",
            line=header_line,
            expected=_EXPECTED,
        )
    body = lines.slice(1)
    if body.is_empty():
        raise InputFileError(source.name, "no samples after the header", line=header_line)
    parts = body.with_columns(pl.col("text").str.split(",").alias("parts"))
    ragged = parts.filter(pl.col("parts").list.len() != len(names))
    if ragged.height:
        raise InputFileError(
            source.name,
            f"row has {ragged['parts'].list.len()[0]} fields, the header has {len(names)}",
            line=int(ragged["line"][0]),
            expected=_EXPECTED,
        )
    steps.at(0.4)
    columns = {name: pl.col("parts").list.get(i).str.strip_chars() for i, name in enumerate(names)}
    frame = parts.select(
        "line",
        columns["timestamp"]
        .str.replace_all("/", "-", literal=True)
        .str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S%.f", strict=False)
        .alias("wall"),
        columns["timestamp"].alias("raw_time"),
        columns["utilization.gpu"].alias("raw_util"),
        (columns["memory.used"] if "memory.used" in names else pl.lit(None, pl.String)).alias(
            "raw_mem"
        ),
        (
            columns["index"]
            if "index" in names
            else columns["uuid"]
            if "uuid" in names
            else pl.lit(None, pl.String)
        ).alias("gpu"),
    )
    # A damaged year (``-26``, ``0002``) parses but is no capture's clock.
    bad_time = frame.filter(
        pl.col("wall").is_null() | ~pl.col("wall").dt.year().is_between(1970, 2200)
    )
    if bad_time.height:
        raise InputFileError(
            source.name,
            f"timestamp {bad_time['raw_time'][0]!r} is not a date-time",
            line=int(bad_time["line"][0]),
            expected="YYYY/MM/DD HH:MM:SS.mmm",
        )
    quantity = r"^\s*([-+]?\d+(?:\.\d+)?)\s*(%|[A-Za-z]+)?\s*$"
    util = pl.col("raw_util").str.extract(quantity, 1).cast(pl.Float64, strict=False)
    not_read = pl.col("raw_util").str.starts_with("[")
    frame = frame.with_columns(util.alias("util"), not_read.alias("gap"))
    broken = frame.filter(pl.col("util").is_null() & ~pl.col("gap"))
    if broken.height:
        raise InputFileError(
            source.name,
            f"utilization {broken['raw_util'][0]!r} is not a percentage",
            line=int(broken["line"][0]),
            expected="a number with or without '%', or [N/A]",
        )
    out_of_range = frame.filter((pl.col("util") < 0) | (pl.col("util") > 100))
    if out_of_range.height:
        raise InputFileError(
            source.name,
            "utilization outside 0-100 %",
            line=int(out_of_range["line"][0]),
            expected="a percentage",
        )
    mem_unit = dict(fields).get("memory.used") or "MiB"
    scale = _UNITS.get(mem_unit.lower(), 2**20)
    frame = frame.with_columns(
        (pl.col("raw_mem").str.extract(quantity, 1).cast(pl.Float64, strict=False) * scale).alias(
            "mem"
        ),
        pl.coalesce(pl.col("gpu"), pl.int_range(pl.len()).over("wall").cast(pl.String)).alias(
            "gpu"
        ),
    )
    backwards = frame.filter(pl.col("wall") < pl.col("wall").shift(1))
    if backwards.height:
        raise InputFileError(
            source.name,
            "timestamp goes back in time",
            line=int(backwards["line"][0]),
            expected="samples in time order",
        )
    steps.at(0.7)
    frame = frame.with_columns(
        (pl.col("wall") - pl.col("wall").shift(1).over("gpu"))
        .dt.total_microseconds()
        .truediv(1e6)
        .alias("period_s")
    )
    periods = frame["period_s"].drop_nulls().filter(frame["period_s"].drop_nulls() > 0)
    period = number(periods.median()) if periods.len() else 1.0
    frame = frame.with_columns(
        pl.when(pl.col("period_s") > 0).then(pl.col("period_s")).otherwise(period).alias("period_s")
    )
    start = moment(frame["wall"].min()) - dt.timedelta(seconds=period)
    frame = frame.with_columns(
        ((pl.col("wall") - pl.lit(start)).dt.total_microseconds() / 1e6).alias("t_s"),
        (pl.lit("gpu") + pl.col("gpu")).alias("device"),
    )
    util_rows = frame.select(
        "t_s",
        "period_s",
        "device",
        pl.lit(str(Metric.UTILIZATION_PCT)).alias("metric"),
        pl.when(~pl.col("gap")).then(pl.col("util")).alias("value"),
        pl.when(pl.col("gap")).then(pl.col("raw_util")).alias("error"),
        "line",
    )
    mem_rows = frame.filter(pl.col("mem").is_not_null()).select(
        "t_s",
        "period_s",
        "device",
        pl.lit(str(Metric.MEMORY_USED_BYTES)).alias("metric"),
        pl.col("mem").alias("value"),
        "line",
    )
    samples = pl.concat([conform_samples(util_rows), conform_samples(mem_rows)])
    gaps = int(frame["gap"].sum())
    metadata = TelemetryMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TelemetryTime.WALL_CLOCK,
        method=METHOD,
        period_s=period,
        start_time=start,
        devices=frame["device"].n_unique(),
        reports=frame["wall"].n_unique(),
        gap_reports=gaps,
        notes=(
            "timestamps are the host's local time (nvidia-smi prints no time zone)",
            *((f"{gaps} samples could not be read: kept as gaps, not as 0 %",) if gaps else ()),
        ),
    )
    steps.at(0.9)
    return Telemetry(samples.sort("t_s", "device", "metric"), metadata)
