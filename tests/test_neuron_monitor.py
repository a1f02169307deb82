"""neuron-monitor importer against generated captures whose truth is known by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.telemetry_gen import START, MonitorSpec, Phase, monitor_lines, write_monitor
from trntui.core.errors import InputFileError
from trntui.core.utilization import TELEMETRY_SCHEMA, Metric, TelemetryTime, utilization_over
from trntui.importers._base import Cancelled, Steps
from trntui.importers.neuron_monitor import import_neuron_monitor, sniff

BUSY_IDLE = MonitorSpec(
    phases=(Phase(30, 0.0, cpu_pct=90.0), Phase(60, 80.0), Phase(30, 10.0, io_wait_pct=30.0))
)


def test_busy_and_idle_periods_average_to_the_truth(tmp_path: Path) -> None:
    path = tmp_path / "nm.jsonl"
    truth = write_monitor(path, BUSY_IDLE)
    telemetry = import_neuron_monitor(path)
    meta = telemetry.metadata
    assert meta.reports == 120
    assert meta.devices == 4
    assert meta.time_source == TelemetryTime.WRAPPER_TIMESTAMP
    assert meta.start_time == START
    assert meta.period_s == pytest.approx(1.0)
    assert meta.instance_type == "trn1.32xlarge"
    assert telemetry.span_s == pytest.approx(120.0)
    whole = utilization_over(telemetry, 0.0, 120.0, "whole capture")
    # 30 s at 0 %, 60 s at 80 %, 30 s at 10 %: (0 + 4800 + 300) / 120
    assert whole.mean_pct == pytest.approx(42.5)
    assert whole.mean_pct == pytest.approx(truth.mean_pct)
    busy = utilization_over(telemetry, 30.0, 90.0, "busy")
    assert busy.mean_pct == pytest.approx(80.0)
    # A window edge halfway through a sample weighs only the half inside.
    edge = utilization_over(telemetry, 29.5, 30.5, "edge")
    assert edge.mean_pct == pytest.approx(40.0)


def test_host_metrics_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "nm.jsonl"
    write_monitor(path, BUSY_IDLE)
    samples = import_neuron_monitor(path).samples
    cpu = samples.filter(samples["metric"] == Metric.HOST_CPU_BUSY_PCT)
    io = samples.filter(samples["metric"] == Metric.HOST_IO_WAIT_PCT)
    assert cpu["value"][0] == pytest.approx(90.0)
    assert io["value"][-1] == pytest.approx(30.0)


def test_error_report_is_a_gap_not_zero(tmp_path: Path) -> None:
    path = tmp_path / "nm.jsonl"
    spec = MonitorSpec(
        phases=(Phase(10, 60.0), Phase(10, 0.0, error="nrt timeout"), Phase(10, 60.0))
    )
    truth = write_monitor(path, spec)
    telemetry = import_neuron_monitor(path)
    figure = utilization_over(telemetry, 0.0, 30.0, "whole")
    assert truth.gap_reports == 10
    assert telemetry.metadata.gap_reports == 10
    assert figure.mean_pct == pytest.approx(60.0)  # 0 % would give 40 %
    assert figure.gap_s == pytest.approx(10.0)
    assert figure.covered_s == pytest.approx(20.0)
    gaps = telemetry.samples.filter(telemetry.samples["error"].is_not_null())
    assert set(gaps["error"].to_list()) == {"nrt timeout"}
    assert gaps["value"].null_count() == gaps.height


def test_without_wrapper_time_comes_from_line_order(tmp_path: Path) -> None:
    path = tmp_path / "nm.jsonl"
    write_monitor(
        path, MonitorSpec(phases=(Phase(20, 50.0),), wrapper_timestamp=False, period_s=5.0)
    )
    telemetry = import_neuron_monitor(path)
    assert telemetry.metadata.time_source == TelemetryTime.LINE_ORDER
    assert telemetry.metadata.start_time is None
    assert telemetry.span_s == pytest.approx(100.0)
    assert any("line order" in note for note in telemetry.metadata.notes)


def test_unix_seconds_wrapper_and_pretty_json(tmp_path: Path) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(5, 70.0),), compact=False))
    epoch = START.timestamp()
    rewritten = []
    for index, line in enumerate(lines):
        report = json.loads(line)
        report["timestamp"] = epoch + index + 1
        rewritten.append(json.dumps(report))
    path = tmp_path / "nm.jsonl"
    path.write_text("\n\n".join(rewritten) + "\n")
    telemetry = import_neuron_monitor(path)
    assert telemetry.metadata.start_time == START
    assert telemetry.metadata.reports == 5
    assert telemetry.samples["line"].max() == 9  # blank lines do not shift line numbers


def test_truncated_last_line_names_the_line(tmp_path: Path) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(5, 70.0),)))
    path = tmp_path / "nm.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[0][:50] + "\n")
    with pytest.raises(InputFileError) as error:
        import_neuron_monitor(path)
    assert error.value.line == 6


def test_wrong_field_type_names_the_line(tmp_path: Path) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(5, 70.0),)))
    lines[2] = lines[2].replace('"neuroncore_utilization":70.0', '"neuroncore_utilization":"x"', 1)
    path = tmp_path / "nm.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFileError) as error:
        import_neuron_monitor(path)
    assert error.value.line == 3


def test_not_a_report(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n')
    with pytest.raises(InputFileError):
        import_neuron_monitor(path)


def test_sniff_and_cancel(tmp_path: Path) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(3, 70.0),)))
    assert sniff(lines[0])
    assert not sniff("iteration 10/100 | consumed samples")
    path = tmp_path / "nm.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(Cancelled):
        import_neuron_monitor(path, Steps(str(path), cancel=lambda: True))


@settings(max_examples=60)
@given(
    mutation=st.sampled_from(["cut", "replace", "insert", "delete_key"]),
    position=st.integers(min_value=0, max_value=5000),
    junk=st.text(max_size=8),
)
def test_damaged_captures_import_or_raise_input_error(
    tmp_path: Path, mutation: str, position: int, junk: str
) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(3, 50.0), Phase(2, 0.0, error="e"))))
    original = text = "\n".join(lines) + "\n"
    position %= len(text)
    if mutation == "cut":
        text = text[:position]
    elif mutation == "replace":
        text = text[:position] + junk + text[position + len(junk) :]
    elif mutation == "insert":
        text = text[:position] + junk + text[position:]
    else:
        text = text.replace('"period":1.0', '"period":null')
    path = tmp_path / "damaged.jsonl"
    path.write_text(text, encoding="utf-8")
    count = len(text.splitlines())
    try:
        telemetry = import_neuron_monitor(path)
    except InputFileError as error:
        assert text != original, f"the undamaged capture was refused: {error}"
        assert str(path) in str(error)
        assert error.line is None or 1 <= error.line <= count
        return
    samples, meta = telemetry.samples, telemetry.metadata
    assert samples.schema == TELEMETRY_SCHEMA
    assert 1 <= meta.reports <= count
    assert 0 <= meta.gap_reports <= meta.reports
    assert samples["line"].is_between(1, count).all()
    # A gap has no value and says why; a measured sample has a value and no error.
    assert (samples["value"].is_null() == samples["error"].is_not_null()).all()
    util = samples.filter(samples["metric"] == Metric.UTILIZATION_PCT)["value"].drop_nulls()
    assert util.is_between(0.0, 100.0).all()
    if text == original:
        # Three measured reports, then two that failed (the spec above).
        assert (meta.reports, meta.gap_reports) == (5, 2)


def test_core_keys_found_whatever_the_key_order(tmp_path: Path) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(3, 70.0),)))
    reordered = []
    for line in lines:
        report = json.loads(line)
        in_use = report["neuron_runtime_data"][0]["report"]["neuroncore_counters"]
        in_use["neuroncores_in_use"] = {
            key: {"flops": 5, **value} if key != "2" else {"other": 1, **value}
            for key, value in in_use["neuroncores_in_use"].items()
        }
        reordered.append(json.dumps(report))
    path = tmp_path / "nm.jsonl"
    path.write_text("\n".join(reordered) + "\n")
    telemetry = import_neuron_monitor(path)
    assert telemetry.metadata.devices == 4
    assert utilization_over(telemetry, 0.0, 3.0, "w").mean_pct == pytest.approx(70.0)


def test_trn2_physical_core_breakdown_is_not_a_core(tmp_path: Path) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(3, 60.0),), cores=2))
    out = []
    for line in lines:
        report = json.loads(line)
        cores = report["neuron_runtime_data"][0]["report"]["neuroncore_counters"]
        for key, value in cores["neuroncores_in_use"].items():
            value["v3d"] = {
                f"nc_v3.{2 * int(key)}": {"neuroncore_utilization": 30.0},
                f"nc_v3.{2 * int(key) + 1}": {"neuroncore_utilization": 90.0},
            }
        out.append(json.dumps(report))
    path = tmp_path / "nm.jsonl"
    path.write_text("\n".join(out) + "\n")
    telemetry = import_neuron_monitor(path)
    assert telemetry.metadata.devices == 2
    assert utilization_over(telemetry, 0.0, 3.0, "w").mean_pct == pytest.approx(60.0)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"neuroncore_utilization":70.0', '"neuroncore_utilization":700.0'),
        ('"period":1.0,"neuroncores_in_use"', '"period":-1.0,"neuroncores_in_use"'),
    ],
)
def test_impossible_values_name_the_line(tmp_path: Path, old: str, new: str) -> None:
    lines, _ = monitor_lines(MonitorSpec(phases=(Phase(5, 70.0),)))
    assert old in lines[3]
    lines[3] = lines[3].replace(old, new, 1)
    path = tmp_path / "nm.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFileError) as error:
        import_neuron_monitor(path)
    assert error.value.line == 4


def test_cores_the_instance_has_but_the_run_never_used_are_counted(tmp_path: Path) -> None:
    """The capture's neuron_hardware_info (16 devices x 2 cores) against the 4 cores in use:
    the mean over the cores in use is what the verdict splits, and the mean over the whole
    instance (the unused ones at 0 %) is shown beside it, with a verdict note."""
    from trntui.core.run_facts import run_facts
    from trntui.core.telemetry_text import figure_text
    from trntui.core.verdict import run_verdict

    path = tmp_path / "nm.jsonl"
    write_monitor(path, BUSY_IDLE)
    report = json.loads(path.read_text().splitlines()[0])
    info = report["neuron_hardware_info"]
    on_instance = info["neuron_device_count"] * info["neuroncore_per_device_count"]
    telemetry = import_neuron_monitor(path)
    assert (telemetry.metadata.devices, telemetry.metadata.devices_on_instance) == (
        4,
        on_instance,
    )
    busy = utilization_over(telemetry, 30.0, 90.0, "busy")
    assert busy.mean_pct == pytest.approx(80.0)
    assert busy.instance_pct == pytest.approx(80.0 * 4 / on_instance)
    assert busy.unused_devices == on_instance - 4
    text = figure_text(busy)
    assert f"over all {on_instance} of the instance {80.0 * 4 / on_instance:.0f}%" in text
    assert f"({on_instance - 4} never used)" in text

    from tests.loggen import NxdSpec, write_nxd
    from trntui.importers import import_file

    log = tmp_path / "run.log"
    write_nxd(log, NxdSpec())
    facts = run_facts(import_file(log))
    verdict = run_verdict(facts, telemetry)
    assert any(f"the run used 4 of the instance's {on_instance}" in n for n in verdict.notes)

    # A capture whose hardware info is an error says nothing about the instance.
    broken = tmp_path / "broken.jsonl"
    reports = [json.loads(line) for line in path.read_text().splitlines()]
    for each in reports:
        each["neuron_hardware_info"]["error"] = "no access"
    broken.write_text("".join(json.dumps(each) + "\n" for each in reports))
    assert import_neuron_monitor(broken).metadata.devices_on_instance is None
