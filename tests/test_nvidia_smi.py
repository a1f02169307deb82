"""nvidia-smi CSV captures: same treatment as neuron-monitor for the GPU target."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.telemetry_gen import START, nvidia_smi_lines
from trntui.core.errors import InputFileError
from trntui.core.utilization import Metric, TelemetryTime, utilization_over
from trntui.importers.nvidia_smi import import_nvidia_smi, sniff


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_busy_idle_gpus(tmp_path: Path) -> None:
    path = _write(tmp_path / "smi.csv", nvidia_smi_lines([(20, [100, 60]), (20, [0, 0])]))
    telemetry = import_nvidia_smi(path)
    meta = telemetry.metadata
    assert meta.time_source == TelemetryTime.WALL_CLOCK
    assert meta.devices == 2
    assert meta.reports == 40
    assert meta.period_s == pytest.approx(1.0)
    assert meta.start_time == START.replace(tzinfo=None)
    whole = utilization_over(telemetry, 0.0, 40.0, "whole")
    assert whole.mean_pct == pytest.approx((50 + 30) / 2)
    assert whole.max_device_pct == pytest.approx(50.0)
    busy = utilization_over(telemetry, 0.0, 20.0, "busy")
    assert busy.mean_pct == pytest.approx(80.0)
    memory = telemetry.samples.filter(telemetry.samples["metric"] == Metric.MEMORY_USED_BYTES)
    assert memory["value"][0] == pytest.approx(40000 * 2**20)


def test_not_available_is_a_gap(tmp_path: Path) -> None:
    lines = nvidia_smi_lines([(10, [80])])
    lines[3] = lines[3].replace("80 %", "[N/A]")
    telemetry = import_nvidia_smi(_write(tmp_path / "smi.csv", lines))
    figure = utilization_over(telemetry, 0.0, 10.0, "whole")
    assert figure.mean_pct == pytest.approx(80.0)
    assert figure.gap_s == pytest.approx(1.0)
    assert telemetry.metadata.gap_reports == 1


def test_index_column_and_nounits(tmp_path: Path) -> None:
    lines = [
        "timestamp, index, utilization.gpu [%], memory.used [MiB]",
        "2026/03/02 09:00:01.000, 1, 10, 5",
        "2026/03/02 09:00:01.000, 0, 90, 5",
        "2026/03/02 09:00:02.000, 1, 10, 5",
        "2026/03/02 09:00:02.000, 0, 90, 5",
    ]
    telemetry = import_nvidia_smi(_write(tmp_path / "smi.csv", lines))
    util = telemetry.samples.filter(telemetry.samples["metric"] == Metric.UTILIZATION_PCT)
    by_device = dict(zip(util["device"], util["value"], strict=False))
    assert by_device == {"gpu0": 90.0, "gpu1": 10.0}


@pytest.mark.parametrize(
    ("line", "expected_line"),
    [
        ("2026/03/02 09:00:03.000, 70 %", 4),
        ("yesterday, 70 %, 1 MiB", 4),
        ("2026/03/02 09:00:03.000, lots, 1 MiB", 4),
        ("2026/03/02 09:00:03.000, 170 %, 1 MiB", 4),
        ("2026/03/02 08:00:03.000, 70 %, 1 MiB", 4),
    ],
)
def test_bad_rows_name_their_line(tmp_path: Path, line: str, expected_line: int) -> None:
    lines = [*nvidia_smi_lines([(2, [50])]), line]
    with pytest.raises(InputFileError) as error:
        import_nvidia_smi(_write(tmp_path / "smi.csv", lines))
    assert error.value.line == expected_line


def test_sniff() -> None:
    assert sniff(nvidia_smi_lines([(1, [1])])[0])
    assert not sniff('{"neuron_runtime_data": []}')


@settings(max_examples=60)
@given(position=st.integers(0, 2000), junk=st.text(max_size=6))
@example(position=428, junk="/")  # a timestamp damaged into the year -26 once crashed
def test_damaged_csv_imports_or_raises_input_error(tmp_path: Path, position: int, junk: str):
    text = "\n".join(nvidia_smi_lines([(4, [50, 20])])) + "\n"
    position %= len(text)
    path = tmp_path / "smi.csv"
    path.write_text(text[:position] + junk + text[position + len(junk) :], encoding="utf-8")
    try:
        telemetry = import_nvidia_smi(path)
    except InputFileError:
        return
    values = telemetry.samples.filter(telemetry.samples["metric"] == Metric.UTILIZATION_PCT)
    assert values["value"].drop_nulls().is_between(0, 100).all()
