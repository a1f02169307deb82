"""neuronx-distributed importer against generated logs with known truth."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import loggen
from trntui.core.errors import InputFileError
from trntui.core.timeline import TIMELINE_SCHEMA, Kind
from trntui.importers import detect_format, import_file

SPEC = loggen.NxdSpec()
_STEP_LINE = "LOG {} - ({}, {}) step_loss : {} learning_rate : 1e-4 throughput : {} seq/s"


@pytest.fixture(scope="module")
def nxd_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, loggen.Truth]:
    path = tmp_path_factory.mktemp("nxd") / "train.log"
    return path, loggen.write_nxd(path, SPEC)


def test_steps_times_and_compiles(nxd_log: tuple[Path, loggen.Truth]) -> None:
    path, truth = nxd_log
    assert detect_format(path) == "nxd"
    run = import_file(path)
    assert run.timeline.schema == TIMELINE_SCHEMA
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)
    assert SPEC.crash_at is not None
    resumed_from = SPEC.crash_at - SPEC.crash_at % SPEC.save_interval
    expected = [*range(1, SPEC.crash_at + 1), *range(resumed_from + 1, SPEC.total_steps + 1)]
    assert steps["step"].to_list() == expected
    # asctime has one-second resolution: the last step is at the simulated end, floored.
    assert steps["t_s"].max() == pytest.approx(truth.end_s, abs=1.0)
    assert run.metadata.launch_time == loggen.LAUNCH
    assert (run.timeline["kind"] == Kind.COMPILE_START).sum() == SPEC.graphs
    stops = run.timeline.filter(pl.col("kind") == Kind.COMPILE_STOP)
    assert stops["status"].to_list() == ["PASS"] * SPEC.graphs
    assert run.metadata.not_derivable


def test_single_digit_day_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "day.log"
    when = dt.datetime(2024, 3, 4, 10, 22, 33)
    lines = [
        f"LOG {when.strftime('%a %b ')}{when.day:2d}{when.strftime(' %H:%M:%S %Y')} - (0, {i}) "
        f"step_loss : 2.5000 learning_rate : 1.50e-04 throughput : 10.00 seq/s"
        for i in range(1, 4)
    ]
    path.write_text("\n".join(lines) + "\n")
    run = import_file(path)
    assert run.metadata.launch_time == when


def test_truncated_step_line_is_named(nxd_log: tuple[Path, loggen.Truth], tmp_path: Path) -> None:
    """A cut step line with more log after it is refused at its line (a cut-off last line,
    with no line break after it, is a killed job's: see test_hostile_inputs)."""
    path, _ = nxd_log
    lines = path.read_text().splitlines()
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join([*lines[:50], lines[50][:45], lines[51]]) + "\n")
    with pytest.raises(InputFileError) as caught:
        import_file(cut, format="nxd")
    assert caught.value.line == 51


def test_mlperf_log_forced_as_nxd(tmp_path: Path) -> None:
    path = tmp_path / "mlperf.txt"
    path.write_text(':::MLLOG {"key": "run_start", "time_ms": 1, "metadata": {}}\n')
    with pytest.raises(InputFileError) as caught:
        import_file(path, format="nxd")
    assert "step_loss" in (caught.value.expected or "")


@settings(max_examples=80)
@given(
    lines=st.lists(
        st.one_of(
            st.builds(
                _STEP_LINE.format,
                st.sampled_from(["Thu Mar 14 10:22:33 2024", "Fri Feb 30 25:61:61 2024", "x"]),
                st.integers(-5, 5),
                st.integers(-5, 10**20),
                st.one_of(st.floats(), st.text(max_size=5)),
                st.one_of(st.floats(), st.just("nan")),
            ),
            st.text(max_size=60),
        ),
        max_size=10,
    )
)
def test_any_text_imports_or_raises_input_file_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "fuzz.log"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    try:
        run = import_file(path, format="nxd")
    except InputFileError as error:
        assert str(path) in str(error)
    else:
        assert run.timeline.schema == TIMELINE_SCHEMA


def test_system_size_from_the_torchrun_launch(tmp_path: Path) -> None:
    """torchrun's --nnodes x --nproc_per_node; on Neuron the processes are NeuronCores."""
    from tests.loggen import NxdSpec, write_nxd

    launches = {
        "torchrun --nproc_per_node 32 --nnodes 4 --node_rank 0 tp_zero1.py": (4, 32),
        "DISTRIBUTED_ARGS=--nproc_per_node 64 --nnodes 2 --node_rank 0 --master_port 44000": (
            2,
            64,
        ),
        "+ torchrun --nproc-per-node=32 run_llama_nxd.py --seq_len 4096": (1, 32),
        # An echo of the arguments: the options after --nproc count too; no --nnodes in an
        # echo leaves the nodes unknown (torchrun's default of 1 applies to its own command).
        "DISTRIBUTED_ARGS=--nnodes 4 --nproc_per_node 32 --node_rank 0": (4, 32),
        "echo --nproc_per_node 32 --master_port 41000": (None, 32),
    }
    for index, (launch, (nodes, per_node)) in enumerate(launches.items()):
        path = tmp_path / f"run{index}.log"
        write_nxd(path, NxdSpec(launch=launch, crash_at=None, stall_at=None))
        size = import_file(path).metadata.system
        assert size is not None, launch
        assert (size.nodes, size.accelerators_per_node) == (nodes, per_node)
        assert "NeuronCore" in (size.accelerator or "")
    plain = tmp_path / "plain.log"
    write_nxd(plain, NxdSpec(crash_at=None, stall_at=None))
    assert import_file(plain).metadata.system is None
