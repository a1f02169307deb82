"""TensorBoard event files: real ones written by the Hugging Face Trainer's TensorBoard
callback (tests/data/frameworks/tensorboard, the same runs as the console logs in
tests/data/frameworks/hf), and the reader held to the format's specification: the CRC-32C
check value, the mask, varints, packed and unpacked repeated numbers, a truncated tail."""

from __future__ import annotations

import struct
from pathlib import Path

import polars as pl
import pytest

from trntui.core.errors import InputFileError
from trntui.core.run_facts import run_facts
from trntui.core.timeline import Kind, TimeSource
from trntui.importers import detect_format, import_file
from trntui.importers.tensorboard.records import crc32c, masked_crc32c
from trntui.importers.tensorboard.wire import fields, repeated_numbers, signed64, varint

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


def test_crc32c_is_castagnolis() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the published check value of CRC-32C
    assert crc32c(b"") == 0
    crc = crc32c(b"abc")
    assert masked_crc32c(b"abc") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_varints_and_packed_fields_follow_the_encoding_guide() -> None:
    assert varint(b"\x96\x01", 0) == (150, 2)  # the guide's example
    assert varint(b"\x01", 0) == (1, 1)
    minus_two = b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"
    assert signed64(varint(minus_two, 0)[0]) == -2
    # field 5 (float_val) packed: key 0x2a, length 8, two floats
    packed = b"\x2a\x08" + struct.pack("<2f", 1.5, 2.5)
    ((number, kind, raw),) = list(fields(packed))
    assert number == 5 and repeated_numbers(kind, raw, "f") == [1.5, 2.5]
    # the same field unpacked: one fixed32 per value
    unpacked = b"\x2d" + struct.pack("<f", 1.5) + b"\x2d" + struct.pack("<f", 2.5)
    values = [v for n, k, r in fields(unpacked) for v in repeated_numbers(k, r, "f")]
    assert values == [1.5, 2.5]
    # int64_val (field 10) packed varints
    ((_, kind, raw),) = list(fields(b"\x52\x03\x96\x01\x07"))
    assert repeated_numbers(kind, raw, "v") == [150.0, 7.0]


def _record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return (
        length
        + struct.pack("<I", masked_crc32c(length))
        + data
        + struct.pack("<I", masked_crc32c(data))
    )


def _message(*parts: tuple[int, int, bytes | int]) -> bytes:
    out = b""
    for number, kind, value in parts:
        out += _varint(number << 3 | kind)
        if kind == 0:
            assert isinstance(value, int)
            out += _varint(value)
        elif kind == 2:
            assert isinstance(value, bytes)
            out += _varint(len(value)) + value
        else:
            assert isinstance(value, bytes)
            out += value
    return out


def _varint(value: int) -> bytes:
    out = b""
    while True:
        byte, value = value & 0x7F, value >> 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def _event(wall: float, step: int, *what: tuple[int, int, bytes | int]) -> bytes:
    return _record(_message((1, 1, struct.pack("<d", wall)), (2, 0, step), *what))


def _tensor_scalar(tag: str, value: float, with_metadata: bool) -> tuple[int, int, bytes]:
    """A TF2-style scalar: a rank-0 DT_FLOAT tensor, plugin ``scalars`` on the first value."""
    tensor = _message((1, 0, 1), (2, 2, b""), (4, 2, struct.pack("<f", value)))
    plugin = _message((1, 2, _message((1, 2, b"scalars"))))
    value_message = _message(
        (1, 2, tag.encode()), *([(9, 2, plugin)] if with_metadata else []), (8, 2, tensor)
    )
    return (5, 2, _message((1, 2, value_message)))


def _simple_scalar(tag: str, value: float) -> tuple[int, int, bytes]:
    value_message = _message((1, 2, tag.encode()), (2, 5, struct.pack("<f", value)))
    return (5, 2, _message((1, 2, value_message)))


def _tf2_file(path: Path) -> bytes:
    data = _event(1_700_000_000.0, 0, (3, 2, b"brain.Event:2"))
    for step in range(1, 41):
        wall = 1_700_000_010.0 + 2.0 * step
        data += _event(wall, step, _tensor_scalar("loss", 3.0 - step / 100, step == 1))
        data += _event(wall, step, _simple_scalar("consumed_samples", step * 32.0))
        if step % 20 == 0:
            data += _event(wall + 1, step, _tensor_scalar("val_loss", 2.5, step == 20))
    path.write_bytes(data)
    return data


def test_tensor_scalars_and_counters_from_any_writer(tmp_path: Path) -> None:
    path = tmp_path / "events.out.tfevents.1.host"
    _tf2_file(path)
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
    data = _tf2_file(tmp_path / "whole")
    path = tmp_path / "events.out.tfevents.2.host"
    path.write_bytes(data[:-7])  # the writer killed inside its last record
    run = import_file(path, format="tensorboard")
    assert any("the file ends inside a record" in note for note in run.metadata.notes)
    assert run_facts(run).completed_steps == 40  # the last record was a validation


def test_a_damaged_record_stops_the_reading_there(tmp_path: Path) -> None:
    data = bytearray(_tf2_file(tmp_path / "whole"))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "events.out.tfevents.3.host"
    path.write_bytes(bytes(data))
    run = import_file(path, format="tensorboard")
    assert any("fails its CRC" in note for note in run.metadata.notes)
    assert 0 < run_facts(run).completed_steps < 40


def test_a_file_without_scalars_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.out.tfevents.4.host"
    path.write_bytes(_event(1.0, 0, (3, 2, b"brain.Event:2")))
    with pytest.raises(InputFileError, match="no scalars"):
        import_file(path)
