"""Hugging Face Trainer console output, from a real Trainer run (tests/data/frameworks).

Every expected figure is read off the log by hand: the closing dict, the header, the
evaluation dicts, the bar's counter where the first attempt stopped."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from trntui.core.run_facts import run_facts
from trntui.core.timeline import Kind, TimeSource
from trntui.importers import detect_format, import_file
from trntui.importers.hf_console import parse_dict, samples_at

DATA = Path(__file__).parent / "data" / "frameworks" / "hf"


def test_a_finished_run_matches_the_trainers_own_summary() -> None:
    path = DATA / "trainer.log"
    assert detect_format(path) == "hf-console"
    run = import_file(path)
    facts = run_facts(run)
    # {'train_runtime': '158.7', 'train_samples_per_second': '10.08',
    #  'train_steps_per_second': '1.26', ...}
    assert facts.run_s == pytest.approx(158.7, rel=0.03)
    assert facts.status == "succeeded"
    assert facts.completed_steps == facts.planned_steps == 200  # Total optimization steps
    # include_num_input_tokens_seen: the last logging dict says 204800 (200 x 8 x 128)
    assert facts.throughput_unit == "tokens/s"
    assert facts.useful_work == 204800
    assert facts.useful_work / facts.run_s == pytest.approx(1306, rel=0.03)  # its tokens/s
    # and in samples: 200 steps x the header's total batch of 8, over train_runtime
    assert 200 * run.metadata.samples_per_step / facts.run_s == pytest.approx(10.08, rel=0.03)
    assert facts.steady_throughput is not None and facts.steady_throughput > 1306
    assert run.metadata.time_source == TimeSource.WALL_CLOCK
    assert any("agrees" in note for note in run.metadata.notes)
    assert not any("differ" in note or "gives" in note for note in run.metadata.notes)


def test_evaluations_and_saves_are_read_from_the_dicts() -> None:
    run = import_file(DATA / "trainer.log")
    evals = run.timeline.filter(pl.col("kind") == Kind.EVAL)
    assert evals["step"].to_list() == [40, 80, 120, 160, 200]
    assert evals["metric"].to_list() == [6.211, 6.203, 6.197, 6.195, 6.193]
    stops = run.timeline.filter(pl.col("kind") == Kind.EVAL_STOP)
    assert stops["duration_s"].to_list() == [2.489, 2.266, 2.847, 2.842, 1.869]
    assert (run.timeline["kind"] == Kind.CHECKPOINT_START).sum() == 5
    assert run.metadata.quality_metric == "eval_loss"
    assert run.metadata.quality_higher_is_better is False
    facts = run_facts(run)
    assert facts.quality_value == 6.193
    assert facts.phases.eval_s == pytest.approx(2.489 + 2.266 + 2.847 + 2.842 + 1.869)


def test_a_crash_and_its_resume_are_one_run_with_a_restart() -> None:
    run = import_file(DATA / "trainer_resume.log")
    facts = run_facts(run)
    # attempt 1 drew step 129 and crashed (Traceback); attempt 2 says "Resuming training from
    # checkpoint with epoch 0 and global step 120"
    assert facts.restarts == 1
    assert facts.redone_steps == 129 - 120
    loads = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_LOAD)
    assert loads["step"].to_list() == [120]
    assert (run.timeline["kind"] == Kind.ERROR).sum() == 1
    assert facts.status == "succeeded" and facts.completed_steps == 200
    assert run.metadata.time_source == TimeSource.REBUILT
    assert any("downtime between attempts" in text for text in run.metadata.not_derivable)
    # the second attempt's summary: 80 steps x 8 samples in train_runtime 58.35 s
    assert run.metadata.facts["hf_train_runtime"] == "58.35"
    assert any(note.startswith("HF's summary agrees") for note in run.metadata.notes)
    # useful work counts each sample once: 200 steps x 8
    assert facts.useful_work == 1600
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)
    assert steps["samples"].max() == 1600


def test_the_trainers_dicts_are_read_old_and_new() -> None:
    assert parse_dict("{'loss': 1.0692, 'learning_rate': 4.9e-05, 'epoch': 0.21}") == {
        "loss": "1.0692",
        "learning_rate": "4.9e-05",
        "epoch": "0.21",
    }
    assert parse_dict("\x1b[A{'eval_loss': '6.211', 'epoch': '0.32'}") == {
        "eval_loss": "6.211",
        "epoch": "0.32",
    }
    assert parse_dict("{'loss': nan, 'epoch': 0.12}")["loss"] == "nan"
    assert parse_dict("Epoch 0: loss 1.0") is None


def test_an_epochs_last_partial_batch_counts_what_is_left() -> None:
    header = {"total_batch_size": 8, "num_examples": 1001, "steps_per_epoch": 126}
    assert samples_at(125, header) == 1000
    assert samples_at(126, header) == 1001  # the last batch held one example
    assert samples_at(127, header) == 1001 + 8
    assert samples_at(10, {"total_batch_size": 8}) == 80
    assert samples_at(10, {}) is None


def _console(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "console.log"
    path.write_text(text)
    return path


def test_a_log_without_a_bar_has_no_clock_and_says_so(tmp_path: Path) -> None:
    path = _console(
        tmp_path,
        "{'loss': '2.1', 'learning_rate': '5e-05', 'epoch': '0.5'}\n"
        "{'eval_loss': '1.9', 'eval_runtime': '3.0', 'epoch': '1.0'}\n"
        "{'train_runtime': '120.0', 'train_samples_per_second': '16.0', "
        "'train_steps_per_second': '2.0', 'train_loss': '2.0', 'epoch': '1.0'}\n",
    )
    run = import_file(path, format="hf-console")
    assert run.metadata.time_source == TimeSource.NONE
    facts = run_facts(run)
    assert facts.run_s == 120.0
    assert facts.steady_throughput == 16.0  # the summary's whole-run average, said so
    assert facts.quality_value == 1.9


def test_neuron_compilation_is_its_own_phase() -> None:
    """A Trainium-flavoured console: the compiler wrapper's lines around the first steps."""
    run = import_file(DATA / "trainer_neuron.log")
    facts = run_facts(run)
    # "Call compiler" after the bar's 0/200 draw, "Compiler status PASS", then the draw
    # "1/200 [00:26<...": the first step's graph took the first 26 s on the bar's clock
    assert facts.phases.init_compile_s == 26.0
    assert facts.init_s == 26.0
    starts = run.timeline.filter(pl.col("kind") == Kind.COMPILE_START)
    assert starts.height == 3  # step 1, step 2, the first evaluation
    assert run.metadata.facts["compiler_cache_hits"] == "2"  # "Using a cached neff" x 2
    # the closing dict: 'train_runtime': '323.8'; training runs after the compile phase
    assert facts.init_s + facts.run_s == pytest.approx(323.8, rel=0.03)
    assert facts.useful_work / (facts.init_s + facts.run_s) == pytest.approx(
        float(run.metadata.facts["hf_train_samples_per_second"]), rel=0.03
    )
    assert facts.steady_start_s is not None and facts.steady_start_s >= 26.0
