"""NeMo 2's ProgressPrinter lines from the real NeMo callback (tests/data/frameworks/nemo/
progress_printer.log, made by tests/data/frameworks/make_samples.py: NeMo's own
``fix_progress_bar`` put the printer in place of the tqdm bar, NeMo's ``TimingCallback`` timed
each step).

Figures read off the log by hand: 100 lines ``Training epoch 0, iteration 0/99`` ...
``iteration 99/99`` (one a step, ``global_step: 0`` ... ``99``), ``global_batch_size: 8`` on
each, ``consumed_samples: 800`` on the last; four ``Validation: iteration n/4`` lines after
iteration 49 and after iteration 99; ``val_loss: 6.26`` first on iteration 50's line;
``Trainer.fit` stopped: `max_steps=100` reached.`` at the end."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from trntui.core.run_facts import run_facts
from trntui.core.timeline import Kind, TimeSource
from trntui.importers import detect_format, import_file
from trntui.importers.nemo_printer import metrics

LOG = Path(__file__).parent / "data" / "frameworks" / "nemo" / "progress_printer.log"


def _timings() -> list[float]:
    """Every ``train_step_timing in s`` of the log, read with a pattern of this test's own."""
    return [float(x) for x in re.findall(r"train_step_timing in s: ([\d.e+-]+)", LOG.read_text())]


def test_the_printers_lines_make_a_run_of_step_times() -> None:
    assert detect_format(LOG) == "nemo-printer"
    run = import_file(LOG)
    facts = run_facts(run)
    assert run.metadata.time_source == TimeSource.REBUILT
    assert run.metadata.planned_steps == 100  # iteration I/99
    assert facts.completed_steps == 100
    assert facts.status == "succeeded"
    assert run.metadata.samples_per_step == 8
    assert facts.useful_work == 800  # consumed_samples: 800 on the last line
    timings = _timings()
    assert len(timings) == 100
    # the clock is the step times' sum: the run's time is that, nothing more
    assert facts.run_s == pytest.approx(sum(timings), rel=0.03)
    evals = run.timeline.filter(pl.col("kind") == Kind.EVAL)
    assert evals["step"].to_list() == [50, 100]
    assert evals["metric"].to_list()[0] == 6.26
    assert run.metadata.quality_metric == "val_loss"


def test_a_metric_name_may_hold_spaces() -> None:
    pairs = metrics(" | lr: 0.0005 | global_step: 50 | train_step_timing in s: 0.6251")
    assert pairs == {"lr": "0.0005", "global_step": "50", "train_step_timing in s": "0.6251"}
