"""Hugging Face trainer_state.json importer: no per-step clock, stated explicitly."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trntui.core.errors import InputFileError
from trntui.core.timeline import TIMELINE_SCHEMA, Kind, TimeSource
from trntui.importers import detect_format, import_file


def trainer_state(max_steps: int = 300, global_step: int = 300) -> dict:
    history: list[dict] = []
    for step in range(10, global_step + 1, 10):
        history.append(
            {
                "epoch": step / 100,
                "learning_rate": 1e-4,
                "loss": 3 - step / 200,
                "step": step,
                "grad_norm": 0.5,
            }
        )
        if step % 100 == 0:
            history.append(
                {
                    "epoch": step / 100,
                    "eval_loss": 2.5 - step / 1000,
                    "eval_runtime": 12.5,
                    "eval_samples_per_second": 80.0,
                    "step": step,
                }
            )
    history.append(
        {
            "epoch": 3.0,
            "step": global_step,
            "total_flos": 1.0e18,
            "train_loss": 2.1,
            "train_runtime": 1234.5,
            "train_samples_per_second": 31.1,
            "train_steps_per_second": 0.243,
        }
    )
    return {
        "log_history": history,
        "global_step": global_step,
        "max_steps": max_steps,
        "num_train_epochs": 3,
        "train_batch_size": 8,
        "best_metric": None,
    }


def write(tmp_path: Path, state: object, name: str = "trainer_state.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(state, indent=2))
    return path


def test_entries_and_summary(tmp_path: Path) -> None:
    path = write(tmp_path, trainer_state())
    assert detect_format(path) == "hf"
    run = import_file(path)
    tl = run.timeline
    assert tl.schema == TIMELINE_SCHEMA
    assert tl["t_s"].null_count() == tl.height
    assert run.metadata.time_source is TimeSource.NONE
    steps = tl.filter(pl.col("kind") == Kind.STEP)
    assert steps["step"].to_list() == list(range(10, 301, 10))
    evals = tl.filter(pl.col("kind") == Kind.EVAL)
    assert evals["metric"].to_list() == pytest.approx([2.4, 2.3, 2.2])
    assert run.metadata.quality_metric == "eval_loss"
    stop = tl.filter(pl.col("kind") == Kind.RUN_STOP).row(0, named=True)
    assert stop["duration_s"] == 1234.5
    assert stop["throughput"] == 31.1
    assert stop["status"] == "success"
    assert any("wall clock" in item for item in run.metadata.not_derivable)
    lines = path.read_text().splitlines()
    first_line = steps["line"][0]
    assert lines[first_line - 1].strip() == "{"
    assert '"loss"' in "".join(lines[first_line : first_line + 6])


def test_unfinished_run_has_no_success(tmp_path: Path) -> None:
    run = import_file(write(tmp_path, trainer_state(max_steps=1000, global_step=300)))
    stop = run.timeline.filter(pl.col("kind") == Kind.RUN_STOP)
    assert stop["status"].to_list() == [None]


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "trainer_state.json"
    text = json.dumps(trainer_state(), indent=2)
    path.write_text(text[: len(text) // 2])
    with pytest.raises(InputFileError) as caught:
        import_file(path, format="hf")
    assert caught.value.line is not None and caught.value.line > 1


@pytest.mark.parametrize("state", [[], {"log_history": {}}, {"log_history": [1, 2]}, {"x": 1}])
def test_wrong_shape(tmp_path: Path, state: object) -> None:
    with pytest.raises(InputFileError) as caught:
        import_file(write(tmp_path, state), format="hf")
    assert caught.value.key == "log_history"


_json = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "loss",
                    "step",
                    "eval_loss",
                    "train_runtime",
                    "train_samples_per_second",
                    "epoch",
                    "x",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=100)
@given(history=st.lists(_json, max_size=6), extra=_json)
def test_any_json_imports_or_raises_input_file_error(tmp_path: Path, history: list, extra) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"log_history": history, "max_steps": extra, "global_step": extra}))
    try:
        run = import_file(path, format="hf")
    except InputFileError as error:
        assert str(path) in str(error)
    else:
        assert run.timeline.schema == TIMELINE_SCHEMA


def test_braces_inside_strings_do_not_shift_lines(tmp_path: Path) -> None:
    state = trainer_state()
    state["log_history"].insert(0, {"note": "odd } { text [", "loss": 9.0, "step": 1})
    path = write(tmp_path, state)
    steps = import_file(path).timeline.filter(pl.col("kind") == Kind.STEP)
    lines = path.read_text().splitlines()
    # Every training entry (with a "loss") is a step row, the odd one included.
    assert steps.height == sum("loss" in entry for entry in state["log_history"])
    for line, step in steps.select("line", "step").iter_rows():
        block = "".join(lines[line - 1 : line + 8])
        assert f'"step": {step}' in block


def test_global_batch_is_read_only_when_the_summary_supports_it(tmp_path: Path) -> None:
    # 31.1 / 0.243 = 128.0 samples per step: 8 per device x 16 devices and accumulation.
    meta = import_file(write(tmp_path, trainer_state())).metadata
    assert meta.protocol == {"quality_metric": "eval_loss", "global_batch_size": "128"}
    assert meta.system is None
    odd = trainer_state()
    odd["log_history"][-1]["train_steps_per_second"] = 0.25  # 124.4 samples per step
    meta = import_file(write(tmp_path, odd, "odd.json")).metadata
    assert "global_batch_size" not in meta.protocol
