"""neuron-monitor captures: one JSON report per line (AWS Neuron ``neuron-monitor`` stdout).

Per report: ``neuron_runtime_data[]`` (one entry per monitored Neuron application, each with
``error`` and ``report.neuroncore_counters.neuroncores_in_use.<core>.neuroncore_utilization``
in percent of the group's ``period``, and ``report.memory_used.neuron_runtime_used_bytes``),
``system_data.vcpu_usage.average_usage`` (host vCPU percentages), ``instance_info`` and
``neuron_hardware_info``; every group has its own ``period`` (seconds actually captured) and
``error`` (empty when fine).

Rules applied:

- Reports carry no timestamp. When the capturing script wrapped each report with a top-level
  ``timestamp`` (ISO 8601 text or Unix seconds), that is the end of the report's period;
  otherwise report N ends at the sum of the first N ``neuroncore_counters`` periods, and the
  metadata says which clock was used.
- A report whose application or ``neuroncore_counters`` has a non-empty ``error`` is a gap for
  every core: kept as a null value with the error text, never as 0 % (which cores a failed
  application used is not in the report, so no core's value for that period is trusted).
- A core seen in the capture but absent from a successful report was not in use by any
  application during that period: 0 %, which is what it was (idle between runs, during
  compilation).
- Reports are decoded by Polars against a schema naming only the fields used, one column of
  lines at a time, so a day of reports imports in seconds; a line that is not a JSON object is
  located and reported with its line number.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import TypeGuard

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.safe_json import (
    MAX_JSON_DEPTH,
    check_json_bounds,
    json_depth_exceeds,
    parse_json,
)
from trntui.core.scalars import number
from trntui.core.utilization import (
    HOST,
    Metric,
    Telemetry,
    TelemetryMetadata,
    TelemetryTime,
    conform_samples,
)
from trntui.importers._base import SourceFile, Steps, read_lines, read_source

NAME = "neuron-monitor"
METHOD = (
    "neuron-monitor neuroncore_counters.neuroncore_utilization: percent of each collection "
    "period a NeuronCore was executing, per core"
)
_EXPECTED = "one neuron-monitor JSON report per line (with 'neuron_runtime_data')"
_WRAPPER_FIELDS = ("timestamp", "time")
_CORE_KEY = re.compile(rb'"(\d+)"\s*:\s*\{\s*"(?:neuroncore_utilization|flops|v\d\w*)"')
_PHYSICAL_CORE = re.compile(rb'"nc_[^"]*"\s*:\s*\{\s*"neuroncore_utilization"')
_UTILIZATION = b'"neuroncore_utilization"'
_CHUNK_ROWS = 8192
_MAX_PCT = 105.0
"""Above this a utilization is corrupt data; up to it, rounding of the period can overshoot 100."""


def sniff(head: str) -> bool:
    return '"neuron_runtime_data"' in head and head.lstrip().startswith("{")


def _group(fields: dict[str, pl.DataType]) -> pl.Struct:
    return pl.Struct({"period": pl.Float64, "error": pl.String, **fields})


def _schema(cores: list[str], stamp: type[pl.DataType] | None) -> pl.Struct:
    core = pl.Struct({"neuroncore_utilization": pl.Float64})
    report = pl.Struct(
        {
            "neuroncore_counters": _group(
                {"neuroncores_in_use": pl.Struct({key: core for key in cores})}
            ),
            "memory_used": _group(
                {"neuron_runtime_used_bytes": pl.Struct({"neuron_device": pl.Float64})}
            ),
        }
    )
    runtime = pl.Struct({"pid": pl.Int64, "error": pl.String, "report": report})
    fields: dict[str, pl.DataType | type[pl.DataType]] = {
        "neuron_runtime_data": pl.List(runtime),
        "system_data": pl.Struct(
            {
                "vcpu_usage": _group(
                    {"average_usage": pl.Struct({"idle": pl.Float64, "io_wait": pl.Float64})}
                )
            }
        ),
        "instance_info": pl.Struct(
            {"instance_id": pl.String, "instance_type": pl.String, "error": pl.String}
        ),
    }
    if stamp is not None:
        fields["timestamp"] = stamp
    return pl.Struct(fields)


def _first_report(lines: pl.DataFrame, path: str) -> tuple[int, dict]:
    for line, text in lines.head(50).iter_rows():
        if not text.strip():
            continue
        report = parse_json(text, path=path, line=line, expected=_EXPECTED, what="line")
        if not isinstance(report, dict) or "neuron_runtime_data" not in report:
            raise InputFileError(path, "not a neuron-monitor report", line=line, expected=_EXPECTED)
        return line, report
    raise InputFileError(path, "no neuron-monitor report found", line=1, expected=_EXPECTED)


def _check_depth(source: SourceFile, lines: pl.DataFrame) -> None:
    """Polars decodes the reports: a line nested deeper than JSON may be is refused first
    (all lines are checked at once; only a capture that fails is looked at line by line)."""
    many = lines.filter(pl.col("text").str.count_matches(r"[\[{]") > MAX_JSON_DEPTH)
    if many.is_empty() or not json_depth_exceeds("\n".join(many["text"])):
        return
    for line, text in many.iter_rows():
        check_json_bounds(text, path=source.name, line=line, expected=_EXPECTED)


def _wrapper_field(first: dict) -> tuple[str | None, type[pl.DataType] | None]:
    for name in _WRAPPER_FIELDS:
        value = first.get(name)
        if isinstance(value, str):
            return name, pl.String
        if isinstance(value, int | float) and not isinstance(value, bool):
            return name, pl.Float64
    return None, None


def _core_keys(data: bytes, lines: pl.DataFrame) -> list[str]:
    """Every NeuronCore index that reports a utilization anywhere in the capture.

    A byte scan finds the indices fast when each core's object starts with its utilization
    (or ``flops`` / the Trn2 ``v3d`` breakdown), as neuron-monitor writes it; when the count
    of utilization fields says some were missed (another key order), every report is parsed.
    """
    matches = _CORE_KEY.findall(data)
    if len(matches) + len(_PHYSICAL_CORE.findall(data)) == data.count(_UTILIZATION):
        keys = {int(match) for match in set(matches)}
    else:
        keys = set()
        for text in lines["text"]:
            try:
                report = parse_json(text, path="", line=0)
            except InputFileError:
                continue  # reported with its line number when the reports are decoded
            runtimes = report.get("neuron_runtime_data") if isinstance(report, dict) else None
            for runtime in runtimes if isinstance(runtimes, list) else ():
                try:
                    in_use = runtime["report"]["neuroncore_counters"]["neuroncores_in_use"]
                except (KeyError, TypeError):
                    continue
                if isinstance(in_use, dict):
                    keys.update(int(key) for key in in_use if str(key).isdigit())
    return [str(key) for key in sorted(keys)]


def _bad_line(source: SourceFile, lines: pl.DataFrame, schema: pl.Struct) -> InputFileError:
    """Find the first line Polars refused, by decoding line by line (only on this error path)."""
    for line, text in lines.iter_rows():
        try:
            report = parse_json(text, path=source.name, line=line, expected=_EXPECTED)
        except InputFileError as error:
            return error
        if not isinstance(report, dict):
            return InputFileError(
                source.name, "line is not a JSON object", line=line, expected=_EXPECTED
            )
        try:
            pl.Series([text]).str.json_decode(schema)
        except (pl.exceptions.PolarsError, ValueError) as error:
            return InputFileError(
                source.name,
                f"a field has the wrong type ({str(error).splitlines()[0]})",
                line=line,
                expected=_EXPECTED,
            )
    return InputFileError(source.name, "reports cannot be decoded", expected=_EXPECTED)


def _decode(
    source: SourceFile, lines: pl.DataFrame, schema: pl.Struct, steps: Steps
) -> pl.DataFrame:
    """Decode the reports in chunks: the chunks of one batch run on all of Polars' threads,
    and progress and cancellation are honoured between batches."""
    starts = pl.col("text").str.strip_chars_start().str.starts_with("{")
    if not lines.select(starts.all()).item():
        bad = lines.filter(~starts)["line"][0]
        raise InputFileError(
            source.name, "line is not a JSON object", line=int(bad), expected=_EXPECTED
        )
    chunks = [
        lines.slice(offset, _CHUNK_ROWS)
        .lazy()
        .select("line", pl.col("text").str.json_decode(schema).alias("r"))
        for offset in range(0, lines.height, _CHUNK_ROWS)
    ]
    batch = max(1, pl.thread_pool_size())
    parts: list[pl.DataFrame] = []
    for first in range(0, len(chunks), batch):
        try:
            parts.extend(pl.collect_all(chunks[first : first + batch]))
        except (pl.exceptions.PolarsError, ValueError):
            raise _bad_line(source, lines, schema) from None
        steps.at(0.2 + 0.4 * min(1.0, (first + batch) / len(chunks)))
    decoded = pl.concat(parts)
    nulls = decoded.filter(
        pl.col("r").is_null() | pl.col("r").struct.field("neuron_runtime_data").is_null()
    )
    if nulls.height:
        raise InputFileError(
            source.name,
            "line is not a neuron-monitor report (no 'neuron_runtime_data')",
            line=int(nulls["line"][0]),
            expected=_EXPECTED,
        )
    return decoded.unnest("r")


def _clock(
    reports: pl.DataFrame, source: SourceFile, stamp_field: str | None
) -> tuple[pl.DataFrame, TelemetryTime, dt.datetime | None, float | None]:
    """Add ``t_s`` (end of each report's period) and ``period_s``."""
    bad = reports.filter(pl.col("period_s") <= 0)
    if bad.height:
        raise InputFileError(
            source.name,
            f"collection period {bad['period_s'][0]:g} s is not positive",
            line=int(bad["line"][0]),
            key="neuroncore_counters.period",
            expected="a positive number of seconds",
        )
    periods = reports["period_s"].drop_nulls()
    median = number(periods.median()) if periods.len() else None
    if median is None or median <= 0:
        raise InputFileError(
            source.name,
            "no report states its collection period",
            key="neuroncore_counters.period",
            expected="a positive number of seconds",
        )
    reports = reports.with_columns(pl.col("period_s").fill_null(median))
    if stamp_field is None:
        return (
            reports.with_columns(pl.col("period_s").cum_sum().alias("t_s")),
            TelemetryTime.LINE_ORDER,
            None,
            median,
        )
    raw = reports["timestamp"]
    # Eager parsing: the Series parser infers the format and the time zone from the values.
    wall = (
        raw.str.to_datetime(time_unit="us", strict=False)
        if raw.dtype == pl.String
        else pl.from_epoch((raw * 1e6).cast(pl.Int64), time_unit="us").dt.replace_time_zone("UTC")
    )
    reports = reports.with_columns(wall.alias("wall"))
    missing = reports.filter(pl.col("wall").is_null())
    if missing.height:
        raise InputFileError(
            source.name,
            "wrapper timestamp is missing or not a date-time",
            line=int(missing["line"][0]),
            key=stamp_field,
            expected="ISO 8601 text or Unix seconds on every report",
        )
    first = reports.row(0, named=True)
    start = first["wall"] - dt.timedelta(seconds=first["period_s"])
    reports = reports.with_columns(
        ((pl.col("wall") - pl.lit(start)).dt.total_microseconds() / 1e6).alias("t_s")
    )
    backwards = reports.filter(pl.col("t_s") < pl.col("t_s").shift(1))
    if backwards.height:
        raise InputFileError(
            source.name,
            "wrapper timestamp goes back in time",
            line=int(backwards["line"][0]),
            key=stamp_field,
            expected="reports in time order",
        )
    return reports.drop("wall"), TelemetryTime.WRAPPER_TIMESTAMP, start, median


def _cores_on_instance(report: dict) -> int | None:
    """NeuronCores the instance has: ``neuron_hardware_info``'s device count times cores per
    device (``None`` when the report does not state both, or states an error)."""
    info = report.get("neuron_hardware_info")
    if not isinstance(info, dict) or info.get("error"):
        return None
    devices, per_device = info.get("neuron_device_count"), info.get("neuroncore_per_device_count")
    if not (_is_count(devices) and _is_count(per_device)):
        return None
    return devices * per_device


def _is_count(value: object) -> TypeGuard[int]:
    """A whole number above 0 (not a bool, which Python counts as an int)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def import_neuron_monitor(path: Path, steps: Steps | None = None) -> Telemetry:
    """Read one neuron-monitor capture into telemetry samples (rules in the module docstring)."""
    steps = steps or Steps(str(path))
    source = read_source(path)
    lines = read_lines(source)
    lines = lines.filter(pl.col("text").str.strip_chars() != "")
    steps.at(0.2)
    _, first = _first_report(lines, source.name)
    _check_depth(source, lines)
    stamp_field, stamp_type = _wrapper_field(first)
    if stamp_field is not None and stamp_field != "timestamp":
        lines = lines.with_columns(
            pl.col("text").str.replace(f'"{stamp_field}"', '"timestamp"', literal=True, n=1)
        )
    cores = _core_keys(source.data, lines)
    schema = _schema(cores, stamp_type)
    reports = _decode(source, lines, schema, steps)
    steps.at(0.6)

    runtimes = reports.select("line", pl.col("neuron_runtime_data").alias("rt")).explode("rt")
    runtimes = runtimes.select(
        "line",
        pl.col("rt").struct.field("error").alias("rt_error"),
        pl.col("rt").struct.field("report").struct.field("neuroncore_counters").alias("nc"),
        pl.col("rt")
        .struct.field("report")
        .struct.field("memory_used")
        .struct.field("neuron_runtime_used_bytes")
        .struct.field("neuron_device")
        .alias("device_bytes"),
    ).with_columns(
        pl.col("nc").struct.field("period").alias("period_s"),
        pl.when(pl.col("rt_error").fill_null("") != "")
        .then(pl.col("rt_error"))
        .when(pl.col("nc").is_not_null() & (pl.col("nc").struct.field("error").fill_null("") != ""))
        .then(pl.col("nc").struct.field("error"))
        .alias("error"),
    )
    per_report = runtimes.group_by("line").agg(
        pl.col("period_s").max(),
        pl.col("error").drop_nulls().first(),
        pl.col("device_bytes").sum().alias("device_bytes"),
        pl.col("device_bytes").is_not_null().any().alias("has_bytes"),
    )
    reports = reports.select(
        "line",
        *(["timestamp"] if stamp_type is not None else []),
        pl.col("system_data").struct.field("vcpu_usage").alias("cpu"),
        pl.col("instance_info").alias("instance"),
    ).join(per_report, on="line", how="left")
    reports, time_source, start, period = _clock(reports, source, stamp_field)
    steps.at(0.75)

    clock = reports.select("line", "t_s", "period_s", "error")
    if cores:
        in_use = (
            runtimes.filter(pl.col("error").is_null() & pl.col("nc").is_not_null())
            .select(
                "line",
                pl.col("nc").struct.field("neuroncores_in_use").struct.unnest(),
            )
            .unpivot(index="line", variable_name="core", value_name="c")
            .select(
                "line",
                "core",
                pl.col("c").struct.field("neuroncore_utilization").alias("value"),
            )
            .filter(pl.col("value").is_not_null())
            .group_by("line", "core")
            .agg(pl.col("value").mean())
        )
        impossible = in_use.filter((pl.col("value") < 0) | (pl.col("value") > _MAX_PCT))
        if impossible.height:
            row = impossible.sort("line").row(0, named=True)
            raise InputFileError(
                source.name,
                f"NeuronCore {row['core']} utilization {row['value']:g} % is impossible",
                line=int(row["line"]),
                key="neuroncore_utilization",
                expected="a percentage",
            )
        grid = clock.join(pl.DataFrame({"core": cores}), how="cross")
        util = grid.join(in_use, on=["line", "core"], how="left").select(
            "t_s",
            "period_s",
            (pl.lit("nc") + pl.col("core")).alias("device"),
            pl.lit(str(Metric.UTILIZATION_PCT)).alias("metric"),
            pl.when(pl.col("error").is_null()).then(pl.col("value").fill_null(0.0)).alias("value"),
            "error",
            "line",
        )
    else:
        util = pl.DataFrame()
    cpu = pl.col("cpu")
    cpu_ok = cpu.is_not_null() & (cpu.struct.field("error").fill_null("") == "")
    usage = cpu.struct.field("average_usage")
    host = reports.filter(cpu_ok).select(
        "t_s",
        "period_s",
        pl.lit(HOST).alias("device"),
        pl.concat_list(
            pl.struct(
                pl.lit(str(Metric.HOST_CPU_BUSY_PCT)).alias("metric"),
                (
                    100.0
                    - usage.struct.field("idle")
                    - usage.struct.field("io_wait").fill_null(0.0)
                ).alias("value"),
            ),
            pl.struct(
                pl.lit(str(Metric.HOST_IO_WAIT_PCT)).alias("metric"),
                usage.struct.field("io_wait").alias("value"),
            ),
        ).alias("m"),
        "line",
    )
    host = host.explode("m").unnest("m").filter(pl.col("value").is_not_null())
    memory = reports.filter(
        pl.col("has_bytes").fill_null(False) & pl.col("error").is_null()
    ).select(
        "t_s",
        "period_s",
        pl.lit("all").alias("device"),
        pl.lit(str(Metric.MEMORY_USED_BYTES)).alias("metric"),
        pl.col("device_bytes").alias("value"),
        "line",
    )
    frames = [conform_samples(f) for f in (util, host, memory) if f.height]
    samples = pl.concat(frames) if frames else conform_samples(pl.DataFrame())
    steps.at(0.9)

    instance = first.get("instance_info") or {}
    gaps = int(reports["error"].is_not_null().sum())
    notes = [
        "time of each report: "
        + (
            f"the wrapper field '{stamp_field}' (end of the report's period)"
            if stamp_field
            else "line order x the reported collection period (no absolute start time)"
        )
    ]
    if gaps:
        notes.append(f"{gaps} reports carried an error: kept as gaps, not as 0 %")
    if not cores:
        notes.append("no NeuronCore was in use in any report: utilization unknown")
    metadata = TelemetryMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=time_source,
        method=METHOD,
        period_s=period,
        start_time=start,
        instance_id=instance.get("instance_id") or None,
        instance_type=instance.get("instance_type") or None,
        devices=len(cores),
        reports=reports.height,
        gap_reports=gaps,
        notes=tuple(notes),
        devices_on_instance=_cores_on_instance(first),
    )
    return Telemetry(samples.sort("t_s", "device", "metric"), metadata)
