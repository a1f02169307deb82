"""Generators of telemetry captures and compiler logs whose truth is known by construction.

A capture is described by its phases (how long, how busy each core, host CPU and I/O wait);
the generator writes the reports and returns the truth the importers must recover.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

START = dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Phase:
    seconds: int
    core_pct: tuple[float, ...] | float
    """One value for all cores, or one per core."""
    cpu_pct: float = 20.0
    io_wait_pct: float = 0.0
    error: str | None = None
    """When set, every report of the phase carries this error (a gap)."""


@dataclass(frozen=True)
class MonitorSpec:
    phases: tuple[Phase, ...]
    cores: int = 4
    period_s: float = 1.0
    wrapper_timestamp: bool = True
    start: dt.datetime = START
    instance_id: str = "i-0123456789abcdef0"
    instance_type: str = "trn1.32xlarge"
    compact: bool = True
    error_lines: tuple[int, ...] = ()
    """0-based report indices whose application reports an error (extra gaps)."""


@dataclass
class MonitorTruth:
    reports: int = 0
    gap_reports: int = 0
    busy_core_seconds: float = 0.0
    measured_core_seconds: float = 0.0
    per_phase_mean: list[float] = field(default_factory=list)

    @property
    def mean_pct(self) -> float:
        return self.busy_core_seconds / self.measured_core_seconds


def _core_values(phase: Phase, cores: int) -> list[float]:
    if isinstance(phase.core_pct, tuple):
        return list(phase.core_pct)
    return [float(phase.core_pct)] * cores


def monitor_lines(spec: MonitorSpec) -> tuple[list[str], MonitorTruth]:
    truth = MonitorTruth()
    lines: list[str] = []
    t = 0.0
    index = 0
    for phase in spec.phases:
        values = _core_values(phase, spec.cores)
        truth.per_phase_mean.append(sum(values) / len(values))
        for _ in range(phase.seconds):
            t += spec.period_s
            error = phase.error or ("runtime not responding" if index in spec.error_lines else None)
            counters = {
                "period": spec.period_s,
                "neuroncores_in_use": {}
                if error
                else {
                    str(core): {"neuroncore_utilization": value, "flops": 1000}
                    for core, value in enumerate(values)
                },
                "error": "",
            }
            report = {
                "neuron_runtime_data": [
                    {
                        "pid": 4242,
                        "address": "",
                        "neuron_runtime_tag": "train",
                        "error": error or "",
                        "report": {}
                        if error
                        else {
                            "neuroncore_counters": counters,
                            "memory_used": {
                                "period": spec.period_s,
                                "neuron_runtime_used_bytes": {
                                    "host": 1000,
                                    "neuron_device": 12_000_000_000,
                                },
                                "error": "",
                            },
                        },
                    }
                ],
                "system_data": {
                    "vcpu_usage": {
                        "period": spec.period_s,
                        "average_usage": {
                            "user": phase.cpu_pct * 0.8,
                            "nice": 0,
                            "system": phase.cpu_pct * 0.2,
                            "idle": 100.0 - phase.cpu_pct - phase.io_wait_pct,
                            "io_wait": phase.io_wait_pct,
                            "irq": 0,
                            "soft_irq": 0,
                        },
                        "error": "",
                    }
                },
                "instance_info": {
                    "instance_id": spec.instance_id,
                    "instance_type": spec.instance_type,
                    "error": "",
                },
                "neuron_hardware_info": {
                    "neuron_device_type": "trainium",
                    "neuron_device_count": 16,
                    "neuroncore_per_device_count": 2,
                    "error": "",
                },
            }
            if spec.wrapper_timestamp:
                report = {
                    "timestamp": (spec.start + dt.timedelta(seconds=t)).isoformat(),
                    **report,
                }
            separators = (",", ":") if spec.compact else (", ", ": ")
            lines.append(json.dumps(report, separators=separators))
            truth.reports += 1
            if error:
                truth.gap_reports += 1
            else:
                truth.busy_core_seconds += sum(values) * spec.period_s
                truth.measured_core_seconds += len(values) * spec.period_s
            index += 1
    return lines, truth


def write_monitor(path: Path, spec: MonitorSpec) -> MonitorTruth:
    lines, truth = monitor_lines(spec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return truth


def nvidia_smi_lines(
    phases: list[tuple[int, list[int]]], start: dt.datetime = START, period_s: int = 1
) -> list[str]:
    """nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv, one row per
    GPU per sample; ``phases`` = (seconds, utilization per GPU)."""
    out = ["timestamp, utilization.gpu [%], memory.used [MiB]"]
    t = 0
    for seconds, values in phases:
        for _ in range(seconds):
            t += period_s
            stamp = (start.replace(tzinfo=None) + dt.timedelta(seconds=t)).strftime(
                "%Y/%m/%d %H:%M:%S.%f"
            )[:-3]
            out.extend(f"{stamp}, {value} %, {40000 + gpu} MiB" for gpu, value in enumerate(values))
    return out


def compiler_log(graphs: int, cached: bool, start: dt.datetime, seconds_each: int) -> list[str]:
    """A training log's compile section: each graph compiled (or loaded from the cache)."""
    lines = []
    now = start.replace(tzinfo=None)
    for graph in range(graphs):
        stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f")
        if cached:
            lines.append(
                f"{stamp}:  4242  INFO ||NCC_WRAPPER||: Using a cached neff at "
                f"/var/tmp/neuron-compile-cache/MODULE_{graph}/model.neff. Exiting with a "
                "successfully compiled graph."
            )
            now += dt.timedelta(seconds=1)
        else:
            lines.append(
                f"{stamp}:  4242  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: "
                f"neuronx-cc compile --framework=XLA /tmp/MODULE_{graph}.hlo_module.pb"
            )
            lines.append(".....")
            lines.append("Compiler status PASS")
            now += dt.timedelta(seconds=seconds_each)
        lines.append(f"{now.strftime('%Y-%m-%d %H:%M:%S.%f')}:  4242  INFO graph {graph} loaded")
    return lines


def stepped_run(segments: list[tuple[int, float]], compile_s: float = 60.0):
    """A run timeline: compile from 0 to ``compile_s``, then ``(steps, seconds_per_step)``
    segments; a segment of one step with a long time is a stretch without progress."""
    import polars as pl

    from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource, conform

    rows = [
        {"t_s": 0.0, "kind": str(Kind.COMPILE_START), "line": 1},
        {"t_s": compile_s, "kind": str(Kind.COMPILE_STOP), "line": 2},
    ]
    t = compile_s
    step = 0
    for steps, seconds in segments:
        for _ in range(steps):
            t += seconds
            step += 1
            rows.append({"t_s": t, "kind": str(Kind.STEP), "step": step, "line": len(rows) + 1})
    meta = RunMetadata(
        format="test",
        source="generated",
        sha256="0" * 64,
        time_source=TimeSource.WALL_CLOCK,
        launch_time=START.replace(tzinfo=None),
        throughput_unit="steps/s",
    )
    return ImportedRun(conform(pl.DataFrame(rows)), meta)
