"""Lightning console output from a real Lightning Trainer with its tqdm bar
(tests/data/frameworks/lightning/fit.log, made by tests/data/frameworks/make_samples.py).

Figures read off the log by hand: three epochs of 60 steps, each epoch's bar ending at
00:54, 00:37 and 00:42; ``global_step=179.0, consumed_samples=1432.0`` in the last draw (8
samples a step); ``'val_loss' reached 6.25385`` at global step 60, ``6.25178`` at 120, ``was
not in top 1`` at 180 with the bar showing ``val_loss=6.270``; each validation bar 00:01."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from trntui.core.run_facts import run_facts
from trntui.core.timeline import Kind, TimeSource
from trntui.importers import detect_format, import_file
from trntui.importers.terminal import exact_number, postfix_pairs

DATA = Path(__file__).parent / "data" / "frameworks"


def test_a_lightning_fit_reads_its_epochs_work_and_validations() -> None:
    path = DATA / "lightning" / "fit.log"
    assert detect_format(path) == "lightning"
    run = import_file(path)
    facts = run_facts(run)
    assert run.metadata.time_source == TimeSource.REBUILT
    assert facts.total_s == 54 + 37 + 42  # the epochs' bars laid end to end
    assert facts.completed_steps == 3 * 60
    assert run.metadata.samples_per_step == 8  # 1432 / 179, both printed in full
    assert facts.throughput_unit == "samples/s"
    assert facts.useful_work == 180 * 8
    assert facts.status == "succeeded"  # "`Trainer.fit` stopped: `max_epochs=3` reached."
    evals = run.timeline.filter(pl.col("kind") == Kind.EVAL)
    assert evals["step"].to_list() == [60, 120, 180]
    assert evals["metric"].to_list() == [6.25385, 6.25178, 6.27]
    assert facts.phases.eval_s == 3.0  # three validation bars of 00:01
    assert run.metadata.quality_metric == "val_loss"


def test_lightnings_tensorboard_file_agrees_with_its_console() -> None:
    (path,) = (DATA / "tensorboard" / "lightning").glob("events.out.tfevents.*")
    run = import_file(path)
    facts = run_facts(run)
    # consumed_samples is logged as NeMo logs it: the samples before the step, 179 x 8 last
    assert facts.useful_work == 1432
    assert run.metadata.facts["tag_samples"] == "consumed_samples"
    assert run.metadata.facts["tag_loss"] == "reduced_train_loss"
    # the same fit on the console took 133 s of bar time; the file's own clock also holds
    # the moments between epochs and before the first step
    assert facts.total_s == pytest.approx(133, rel=0.05)
    console = run_facts(import_file(DATA / "lightning" / "fit.log"))
    assert facts.steady_throughput == pytest.approx(console.steady_throughput, rel=0.1)


def test_postfix_numbers_in_exponent_form_are_no_counts() -> None:
    # the postfix of a NeMo bar as a public NeMo-Framework-Launcher issue (#55) quotes it
    pairs = postfix_pairs(
        ", 41.36s/it, loss=3.1, v_num=, reduced_train_loss=3.090, global_step=794.0, "
        "consumed_samples=1.63e+6"
    )
    assert pairs["global_step"] == "794.0"
    assert exact_number(pairs["global_step"]) == 794.0
    assert exact_number(pairs["consumed_samples"]) is None  # three digits: not a count


def test_a_fit_resumed_into_its_log_folder_is_one_tensorboard_run_with_a_restart() -> None:
    """lightning/fit_resume.log: a checkpoint every 50 steps, the first attempt stopped after
    step 75 ("simulated node failure after step 75"), the second "Restored all states from
    the checkpoint at .../epoch=0-step=50.ckpt"; the logger's fixed version keeps both event
    files in one folder, as NeMo's experiment manager does on resume."""
    paths = sorted((DATA / "tensorboard" / "lightning_resume").glob("events.out.tfevents.*"))
    run = import_file(paths[0])
    facts = run_facts(run)
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)["step"].to_list()
    # logged every 10 steps: 9 ... 69 before the failure, 59 ... 179 after the resume
    assert steps == [9, 19, 29, 39, 49, 59, 69, *range(59, 180, 10)]
    assert facts.restarts == 1
    loads = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_LOAD)
    assert loads["step"].to_list() == [49]  # one logging interval before the file's first, 59
    assert facts.redone_steps == 20  # 50-69 logged twice; 70-75 ran but were never logged
    # the console's last draw: global_step=179.0, consumed_samples=1432.0, counted once
    assert facts.useful_work == 1432
    assert run.metadata.facts["event_files"] == "2"


def test_a_fit_resumed_in_mid_epoch_continues_under_the_training_label() -> None:
    """lightning/fit_resume.log by hand: the first attempt's last draw is ``Epoch 1: 25%|...|
    15/60`` (step 75); the second restores ``epoch=0-step=50.ckpt`` and, resumed in mid-epoch,
    draws the rest of epoch 0 as ``Training: |          | 51/? [00:00<00:00, 56.40it/s]``
    up to 60 (Lightning does not start that epoch again), then ``Epoch 1`` and ``Epoch 2``."""
    run = import_file(DATA / "lightning" / "fit_resume.log")
    facts = run_facts(run)
    loads = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_LOAD)
    assert loads["step"].to_list() == [50]
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)["step"].to_list()
    after = steps[steps.index(75) + 1 :]
    assert after[0] == 51 and after[-1] == 180  # the resumed epoch 0 is placed at its steps
    assert facts.restarts == 1
    assert facts.redone_steps == 75 - 50
    assert facts.completed_steps == 180
    assert facts.useful_work == 180 * 8  # consumed_samples=1432.0 at global_step=179.0
    assert facts.status == "succeeded"
