"""TensorBoard event files: real ones written by the Hugging Face Trainer's TensorBoard
callback (tests/data/frameworks/tensorboard, the same runs as the console logs in
tests/data/frameworks/hf); files written by TensorBoard's own writer (TF2-style tensor
scalars, a truncated tail, a damaged record); and the message that says what to install when
the tensorboard extra is missing."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import polars as pl
import pytest

from trntui.core.errors import InputFileError
from trntui.core.run_facts import run_facts
from trntui.core.timeline import Kind, TimeSource
from trntui.importers import detect_format, import_file
from trntui.store.run_import import import_paths
from trntui.store.runs import ADDED, DUPLICATE, FAILED

DATA = Path(__file__).parent / "data" / "frameworks" / "tensorboard"


def _one(folder: str) -> Path:
    (path,) = (DATA / folder).glob("events.out.tfevents.*")
    return path


def test_the_trainers_event_file_matches_its_console_summary() -> None:
    path = _one("hf_trainer")
    assert detect_format(path) == "tensorboard"
    run = import_file(path)
    facts = run_facts(run)
    assert run.metadata.time_source == TimeSource.WALL_CLOCK
    assert run.metadata.launch_time is not None and run.metadata.launch_time.tzinfo
    # the same run's console: train_runtime 158.7 s, 204800 tokens seen at step 200
    assert facts.total_s == pytest.approx(158.7, rel=0.03)
    assert facts.throughput_unit == "tokens/s"
    assert facts.useful_work == 204800
    assert facts.completed_steps == 200
    # the console's last logging dict: 'train_tokens_per_second': '1306'
    assert facts.useful_work / facts.total_s == pytest.approx(1306, rel=0.03)
    (check,) = [note for note in run.metadata.notes if "train_tokens_per_second" in note]
    assert "agrees" in check
    evals = run.timeline.filter(pl.col("kind") == Kind.EVAL)
    assert evals["step"].to_list() == [40, 80, 120, 160, 200]
    assert evals["metric"].round(3).to_list() == [6.211, 6.203, 6.197, 6.195, 6.193]
    assert run.metadata.quality_metric == "eval/loss"


def test_a_resumed_process_counts_its_own_work() -> None:
    run = import_file(_one("hf_resume_2"))
    facts = run_facts(run)
    # the console: "Resuming training from checkpoint with epoch 0 and global step 120",
    # then {'train_runtime': '58.35', 'train_samples_per_second': '10.97', ...}
    loads = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_LOAD)
    assert loads["step"].to_list() == [120]
    assert facts.useful_work == 80 * 8
    assert facts.useful_work / facts.total_s == pytest.approx(10.97, rel=0.03)
    assert any("train_samples_per_second agrees" in note for note in run.metadata.notes)


def test_a_crashed_process_is_not_finished() -> None:
    run = import_file(_one("hf_resume_1"))
    facts = run_facts(run)
    # the first attempt crashed after step 130, before logging it; loss every 10 steps
    assert facts.completed_steps == 120
    assert facts.status == "incomplete"
    assert facts.throughput_unit == "steps/s"  # no batch size in the file: samples unknown


def _writer_file(
    folder: Path, name_stamp: int = 1, steps: range = range(1, 41), began: float | None = None
) -> Path:
    """An event file written by TensorBoard's own writer: TF2-style scalars (a rank-0 tensor,
    plugin ``scalars`` on a tag's first value), ``add_scalar``-style simple values, a
    validation every 20 steps; 40 steps, 2 s apart."""
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.util.tensor_util import make_tensor_proto

    writer = EventFileWriter(str(folder), filename_suffix=f".{name_stamp}")
    if began is None:
        began = time.time() + 1  # the writer stamps its first event with its own clock
    scalars = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))

    def tensor(tag: str, value: float, first: bool) -> Summary.Value:
        proto = make_tensor_proto(value, dtype="float32")
        return Summary.Value(tag=tag, tensor=proto, metadata=scalars if first else None)

    for step in steps:
        wall = began + 10.0 + 2.0 * step
        loss = tensor("loss", 3.0 - step / 100, step == steps[0])
        writer.add_event(Event(wall_time=wall, step=step, summary=Summary(value=[loss])))
        samples = Summary.Value(tag="consumed_samples", simple_value=step * 32.0)
        writer.add_event(Event(wall_time=wall, step=step, summary=Summary(value=[samples])))
        if step % 20 == 0:
            val = tensor("val_loss", 2.5, step == steps[0] + 19 - (steps[0] - 1) % 20)
            writer.add_event(Event(wall_time=wall + 1, step=step, summary=Summary(value=[val])))
    writer.close()
    (path,) = folder.glob(f"events.out.tfevents.*.{name_stamp}")
    return path


def test_tensor_scalars_and_counters_from_any_writer(tmp_path: Path) -> None:
    path = _writer_file(tmp_path)
    run = import_file(path)
    facts = run_facts(run)
    assert facts.throughput_unit == "samples/s"
    assert facts.steady_throughput == pytest.approx(32 / 2.0)
    assert facts.useful_work == 40 * 32
    evals = run.timeline.filter(pl.col("kind") == Kind.EVAL)
    assert evals["step"].to_list() == [20, 40] and evals["metric"].to_list() == [2.5, 2.5]
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)
    assert steps["loss"][0] == pytest.approx(2.99)


def test_a_truncated_tail_keeps_what_was_read(tmp_path: Path) -> None:
    (tmp_path / "whole").mkdir()
    data = _writer_file(tmp_path / "whole").read_bytes()
    path = tmp_path / "events.out.tfevents.2.host"
    path.write_bytes(data[:-7])  # the writer killed inside its last record
    run = import_file(path, format="tensorboard")
    (note,) = [note for note in run.metadata.notes if "the reading stops" in note]
    assert f"of {len(data) - 7:,}: a record there is truncated or fails its CRC" in note
    assert run_facts(run).completed_steps == 40  # the last record was a validation


def test_a_damaged_record_stops_the_reading_there(tmp_path: Path) -> None:
    (tmp_path / "whole").mkdir()
    data = bytearray(_writer_file(tmp_path / "whole").read_bytes())
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "events.out.tfevents.3.host"
    path.write_bytes(bytes(data))
    run = import_file(path, format="tensorboard")
    assert any("truncated or fails its CRC" in note for note in run.metadata.notes)
    assert 0 < run_facts(run).completed_steps < 40


def test_a_file_without_scalars_is_refused(tmp_path: Path) -> None:
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    EventFileWriter(str(tmp_path)).close()  # the file version record only
    (path,) = tmp_path.glob("events.out.tfevents.*")
    with pytest.raises(InputFileError, match="no scalars"):
        import_file(path)


_READER_MODULES = (
    "tensorboard",
    "tensorboard.backend.event_processing.event_file_loader",
    "tensorboard.compat.proto.event_pb2",
    "tensorboard.util.tensor_util",
)


def _without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if ``pip install 'trntui[tensorboard]'`` had not been run: importing the reader
    fails (a ``None`` in ``sys.modules`` makes ``import`` raise ``ImportError``)."""
    for name in _READER_MODULES:
        monkeypatch.setitem(sys.modules, name, None)


def test_without_the_extra_the_file_is_recognised_and_refused_with_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_the_extra(monkeypatch)
    path = _one("hf_trainer")
    assert detect_format(path) == "tensorboard"  # the marker is read as text
    with pytest.raises(InputFileError) as raised:
        import_file(path)
    assert "pip install 'trntui[tensorboard]'" in str(raised.value)
    assert str(path) in str(raised.value)


def test_without_the_extra_an_import_changes_nothing_on_disk(
    monkeypatch: pytest.MonkeyPatch, new_project: Path
) -> None:
    before = {p: p.read_bytes() for p in new_project.rglob("*") if p.is_file()}
    _without_the_extra(monkeypatch)
    (outcome,) = import_paths(new_project, [_one("hf_trainer")])
    assert outcome.outcome == FAILED and outcome.run_id is None
    assert outcome.error is not None and "pip install 'trntui[tensorboard]'" in outcome.error
    after = {p: p.read_bytes() for p in new_project.rglob("*") if p.is_file()}
    assert after == before


def test_a_folders_later_file_is_a_restart_with_its_redone_steps(tmp_path: Path) -> None:
    # a job crashed after step 30 and resumed from a checkpoint at step 20 into the same folder
    began = time.time() + 1
    first = _writer_file(tmp_path, 1, range(1, 31), began)
    _writer_file(tmp_path, 2, range(21, 41), began + 100)
    run = import_file(first)
    facts = run_facts(run)
    loads = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_LOAD)
    assert loads["step"].to_list() == [20]  # one logging interval before the file's first step
    assert facts.restarts == 1
    assert facts.redone_steps == 10  # steps 21-30, done twice
    assert facts.useful_work == 40 * 32  # the work counted once
    assert facts.completed_steps == 40
    assert any("2 event files in one folder" in note for note in run.metadata.notes)


def test_files_written_at_the_same_time_are_not_one_run(tmp_path: Path) -> None:
    began = time.time() + 1
    first = _writer_file(tmp_path, 1, range(1, 41), began)
    _writer_file(tmp_path, 2, range(1, 41), began + 1)  # another process, same folder
    run = import_file(first)
    assert run_facts(run).restarts == 0
    assert any("written at the same time" in note for note in run.metadata.notes)


def test_importing_the_folder_stores_its_run_once(tmp_path: Path, new_project: Path) -> None:
    began = time.time() + 1
    logs = tmp_path / "tb"
    logs.mkdir()
    _writer_file(logs, 1, range(1, 31), began)
    _writer_file(logs, 2, range(21, 41), began + 100)
    outcomes = import_paths(new_project, [logs])
    assert [o.outcome for o in outcomes] == [ADDED, DUPLICATE]
    assert outcomes[0].run_id == outcomes[1].run_id


def test_a_job_resumed_into_its_log_folder_is_one_run_with_a_restart() -> None:
    """HF with TENSORBOARD_LOGGING_DIR: the first attempt crashed after step 135 (its last
    logged step 130), the second resumed in the same folder (hf/trainer_resume_same_dir.log:
    "Resuming training from checkpoint with epoch 0 and global step 120")."""
    first, second = sorted((DATA / "hf_resume_same_dir").glob("events.out.tfevents.*"))
    run = import_file(first)
    facts = run_facts(run)
    loads = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_LOAD)
    assert loads["step"].to_list() == [120]
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)["step"].to_list()
    assert steps.count(130) == 2  # {'loss': '6.194', ..., 'epoch': '1.04'} in both attempts
    assert facts.restarts == 1
    assert facts.redone_steps == 10  # 121-130, logged twice
    assert facts.completed_steps == 200 and facts.status == "succeeded"
    assert facts.useful_work == 200 * 8  # counted once
    # the second attempt's closing dict: 'train_runtime': '107', 'train_samples_per_second':
    # '5.981': its 80 steps of 8 samples over its own runtime
    stop = run.timeline.filter(pl.col("kind") == Kind.RUN_STOP)
    last = run.timeline.filter(pl.col("kind") == Kind.STEP)["samples"][-1]
    attempt = (last - loads["samples"][0]) / stop["duration_s"][0]
    assert attempt == pytest.approx(5.981, rel=0.03)
    (check,) = [note for note in run.metadata.notes if "train_samples_per_second" in note]
    assert "agrees" in check
    # whichever file is named, the folder is the same run
    assert import_file(second).metadata.sha256 == run.metadata.sha256
