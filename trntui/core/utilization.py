"""Accelerator telemetry: one schema for every utilization capture, and its averages.

A capture (neuron-monitor, nvidia-smi) becomes a long table, one row per sample and device and
metric (``TELEMETRY_SCHEMA``). A sample covers the collection period that *ends* at ``t_s``:
``[t_s - period_s, t_s]``. A sample whose collection failed has ``value`` null and its reason in
``error``: it is a gap in the data, never 0 % utilization, and averages leave it out while saying
how much of the window it left uncovered.

Columns:

``t_s``       seconds since the capture's first sample started (end of this sample's period)
``period_s``  length of the collection period the value covers
``device``    accelerator (``nc0`` ... for NeuronCores, ``gpu0`` ... for GPUs) or ``host``
``metric``    one of ``Metric``
``value``     the measurement (null in a gap)
``error``     why the value is missing (null when measured)
``line``      1-based line of the source file, to trace a figure to its origin

Averages are time-weighted: each sample weighs by how much of its period falls inside the
window, so a window edge cutting a sample, or samples of unequal periods, count for the time
they cover. The mean over devices is the mean of each device's time-weighted mean.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

import polars as pl

from trntui.core.scalars import number

TELEMETRY_SCHEMA = pl.Schema(
    {
        "t_s": pl.Float64,
        "period_s": pl.Float64,
        "device": pl.String,
        "metric": pl.String,
        "value": pl.Float64,
        "error": pl.String,
        "line": pl.Int64,
    }
)

HOST = "host"


class Metric(StrEnum):
    UTILIZATION_PCT = "utilization_pct"
    """Percent of the period the accelerator was executing (per device)."""
    MEMORY_USED_BYTES = "memory_used_bytes"
    HOST_CPU_BUSY_PCT = "host_cpu_busy_pct"
    """Host vCPUs, average over all vCPUs: 100 - idle - io_wait."""
    HOST_IO_WAIT_PCT = "host_io_wait_pct"


class TelemetryTime(StrEnum):
    """Where a capture's ``t_s`` comes from."""

    WRAPPER_TIMESTAMP = "wrapper_timestamp"
    """A timestamp field added around each report by the capturing script."""
    LINE_ORDER = "line_order_x_period"
    """No timestamps: report N ends at the sum of the first N reports' collection periods; the
    capture's absolute start is unknown, so it cannot be placed against a run's clock."""
    WALL_CLOCK = "wall_clock"
    """Timestamps printed on every sample (nvidia-smi)."""


@dataclass(frozen=True)
class TelemetryMetadata:
    """Capture-level facts; unknown ones are ``None``."""

    format: str
    source: str
    sha256: str
    time_source: TelemetryTime
    method: str
    """How utilization was measured, in words (which counter, what it means)."""
    period_s: float | None
    """Median collection period."""
    start_time: dt.datetime | None = None
    """Wall clock of ``t_s == 0`` when the capture carries absolute times."""
    instance_id: str | None = None
    instance_type: str | None = None
    devices: int = 0
    reports: int = 0
    gap_reports: int = 0
    notes: tuple[str, ...] = ()
    devices_on_instance: int | None = None
    """Accelerators (NeuronCores) the instance has, as the capture states it (neuron-monitor's
    ``neuron_hardware_info``): ``devices`` counts only the ones an application used."""

    def to_json(self) -> str:
        data = asdict(self)
        data["time_source"] = str(self.time_source)
        data["start_time"] = self.start_time.isoformat() if self.start_time else None
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TelemetryMetadata:
        data: dict[str, Any] = json.loads(text)
        start = data.get("start_time")
        data["start_time"] = dt.datetime.fromisoformat(start) if start else None
        data["time_source"] = TelemetryTime(data["time_source"])
        data["notes"] = tuple(data.get("notes", ()))
        return cls(**data)


@dataclass(frozen=True)
class Telemetry:
    """What a telemetry importer returns."""

    samples: pl.DataFrame
    metadata: TelemetryMetadata

    @property
    def span_s(self) -> float:
        return number(self.samples["t_s"].max() or 0.0) if self.samples.height else 0.0


def conform_samples(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(
        [
            (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
            for name, dtype in TELEMETRY_SCHEMA.items()
        ]
    )


@dataclass(frozen=True)
class UtilizationFigure:
    """Time-weighted mean utilization over one window, with what it is based on."""

    window: str
    """``steady window`` or ``whole run`` (or ``whole capture`` when not attached to a run)."""
    start_s: float
    end_s: float
    mean_pct: float | None
    """None when no sample covers the window."""
    min_device_pct: float | None
    max_device_pct: float | None
    covered_s: float
    """Window time covered by measured samples (averaged over devices)."""
    gap_s: float
    """Window time whose samples were errors (kept as gaps, not as 0 %)."""
    devices: int
    method: str
    period_s: float | None
    devices_on_instance: int | None = None
    """Accelerators the instance has (``TelemetryMetadata.devices_on_instance``)."""

    @property
    def unused_devices(self) -> int:
        """Accelerators of the instance no application used during the capture (billed, idle)."""
        if self.devices_on_instance is None or self.devices >= self.devices_on_instance:
            return 0
        return self.devices_on_instance - self.devices

    @property
    def instance_pct(self) -> float | None:
        """The mean over every accelerator of the instance, the unused ones at 0 % (``None``
        when the capture does not say how many the instance has, or the mean is unknown)."""
        if self.mean_pct is None or not self.devices_on_instance or not self.devices:
            return None
        return (
            self.mean_pct * min(self.devices, self.devices_on_instance) / (self.devices_on_instance)
        )

    @property
    def coverage(self) -> float | None:
        length = self.end_s - self.start_s
        return self.covered_s / length if length > 0 else None


def _overlap(start_s: float, end_s: float) -> pl.Expr:
    """Seconds of each sample's period inside ``[start_s, end_s]``."""
    lo = pl.max_horizontal(pl.col("t_s") - pl.col("period_s"), pl.lit(start_s))
    hi = pl.min_horizontal(pl.col("t_s"), pl.lit(end_s))
    return (hi - lo).clip(lower_bound=0.0)


def device_means(
    samples: pl.DataFrame, start_s: float, end_s: float, metric: str = Metric.UTILIZATION_PCT
) -> pl.DataFrame:
    """Per device: time-weighted mean over the window, covered and gap seconds."""
    rows = samples.filter(pl.col("metric") == metric).with_columns(
        _overlap(start_s, end_s).alias("w")
    )
    rows = rows.filter(pl.col("w") > 0)
    measured = pl.col("value").is_not_null()
    return (
        rows.group_by("device")
        .agg(
            (pl.col("value") * pl.col("w")).filter(measured).sum().alias("weighted"),
            pl.col("w").filter(measured).sum().alias("covered_s"),
            pl.col("w").filter(~measured).sum().alias("gap_s"),
        )
        .with_columns(
            pl.when(pl.col("covered_s") > 0)
            .then(pl.col("weighted") / pl.col("covered_s"))
            .alias("mean")
        )
        .sort("device")
    )


def utilization_over(
    telemetry: Telemetry, start_s: float, end_s: float, window: str
) -> UtilizationFigure:
    """Time-weighted mean accelerator utilization over ``[start_s, end_s]`` (capture clock)."""
    per_device = device_means(telemetry.samples, start_s, end_s)
    means = per_device["mean"].drop_nulls()
    meta = telemetry.metadata
    return UtilizationFigure(
        window=window,
        start_s=start_s,
        end_s=end_s,
        mean_pct=number(means.mean()) if means.len() else None,
        min_device_pct=number(means.min()) if means.len() else None,
        max_device_pct=number(means.max()) if means.len() else None,
        covered_s=number(per_device["covered_s"].mean() or 0.0) if per_device.height else 0.0,
        gap_s=number(per_device["gap_s"].mean() or 0.0) if per_device.height else 0.0,
        devices=per_device.height,
        method=meta.method,
        period_s=meta.period_s,
        devices_on_instance=meta.devices_on_instance,
    )


@dataclass(frozen=True)
class UtilizationReport:
    """Both averages the run detail shows: the steady window and the whole run."""

    steady: UtilizationFigure | None
    """None when the run has no steady window (too short, no clock)."""
    whole_run: UtilizationFigure
    offset_s: float
    """Run time = capture time + ``offset_s``."""


def utilization_report(
    telemetry: Telemetry,
    offset_s: float,
    run_end_s: float | None,
    steady_start_s: float | None,
    steady_end_s: float | None,
) -> UtilizationReport:
    """Averages over the run's steady window and over the whole run, both in run time.

    ``offset_s`` places the capture on the run's clock (run ``t_s`` = capture ``t_s`` +
    ``offset_s``); the whole run is ``[0, run_end_s]``, or the whole capture when the run's
    end is unknown.
    """
    if run_end_s is None:
        whole = utilization_over(telemetry, 0.0, telemetry.span_s, "whole capture")
    else:
        whole = utilization_over(telemetry, -offset_s, run_end_s - offset_s, "whole run")
    steady = None
    if steady_start_s is not None and steady_end_s is not None and steady_end_s > steady_start_s:
        steady = utilization_over(
            telemetry, steady_start_s - offset_s, steady_end_s - offset_s, "steady window"
        )
    return UtilizationReport(steady=steady, whole_run=whole, offset_s=offset_s)


def per_sample(samples: pl.DataFrame) -> pl.DataFrame:
    """One row per sample time: mean, max and min accelerator utilization, host CPU and I/O wait.

    Rows where every device is a gap have null statistics. Used by the verdict to tell apart
    time when all accelerators waited (input) from time when some waited for others (sync).
    """
    acc = (
        samples.filter(pl.col("metric") == Metric.UTILIZATION_PCT)
        .group_by("t_s")
        .agg(
            pl.col("period_s").max(),
            pl.col("value").mean().alias("mean_pct"),
            pl.col("value").max().alias("max_pct"),
            pl.col("value").min().alias("min_pct"),
        )
    )
    host = (
        samples.filter(pl.col("device") == HOST)
        .group_by("t_s")
        .agg(
            pl.col("value")
            .filter(pl.col("metric") == Metric.HOST_CPU_BUSY_PCT)
            .mean()
            .alias("cpu_pct"),
            pl.col("value")
            .filter(pl.col("metric") == Metric.HOST_IO_WAIT_PCT)
            .mean()
            .alias("io_wait_pct"),
        )
    )
    return acc.join(host, on="t_s", how="left").sort("t_s")
