"""Before a Trainium3 trial: the sample with its Trainium3 runs removed (GPU measured,
Trainium3 only priced) says what Trainium3 must reach, and "run a trial"."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from trntui.core.analysis import analyze
from trntui.core.comparison import RUN_TRIAL
from trntui.core.estimate import Override, estimate
from trntui.core.report import render_markdown, report_document
from trntui.store.estimate_context import derive_and_store_context
from trntui.store.project import Project
from trntui.store.runs import load_runs, remove_run
from trntui.ui.widgets.estimate_bar import estimate_line

TRN = "Trainium3 trial"
ZERO = ("startup_s", "overhead_ratio", "retry_ratio", "failed_fraction", "failed_run_s")


@pytest.fixture
def before_trial(sample_dir: Path):
    runs = load_runs(sample_dir)
    for run_id in runs.filter(pl.col("set_name") == "trn3-example")["run_id"]:
        remove_run(sample_dir, run_id)
    with Project.open(sample_dir, read_only=True) as project:
        return derive_and_store_context(sample_dir, project.inventory)


def test_the_sample_without_trainium3_runs_says_run_a_trial_with_the_break_even(
    before_trial,
) -> None:
    analysis = analyze(before_trial)
    comparison = analysis.comparison
    assert comparison.decision.action == RUN_TRIAL
    needs = comparison.requirement
    assert needs is not None and needs.throughput is not None
    gpu = analysis.estimate.target(comparison.gpu.name)
    assert needs.gpu_total_usd == pytest.approx(gpu.total_usd)
    # Checked through the estimate itself: at the required throughput, with the stages no run
    # measured at 0, Trainium3 costs what the GPU costs, and its wall clock is the required time.
    at_even = [Override("steady_throughput", needs.throughput, TRN, who="t", why="t")]
    at_even += [Override(key, 0.0, TRN, who="t", why="t") for key in ZERO]
    trn = estimate(before_trial, at_even).target(TRN)
    assert trn.total_usd == pytest.approx(gpu.total_usd, rel=1e-9)
    assert trn.wall_hours == pytest.approx(needs.time_to_result_h, rel=1e-9)
    labels = {trn.input(key).label for key in ZERO}
    assert set(needs.counted_as_zero) == labels
    facts = " | ".join(comparison.decision.facts)
    assert "requirement (not a measurement)" in facts
    assert f"at least {needs.throughput:,.4g} samples/s" in facts
    assert "from launch to the verified result" in facts
    assert "to answer in the trial:" in facts
    # From the GPU runs' spread: no Trainium3 run shows one yet.
    assert comparison.trial_runs is not None and comparison.trial_runs.have == 0
    assert "GPU runs" in comparison.trial_runs.basis
    assert comparison.trial_runs.needed is not None and comparison.trial_runs.needed >= 3
    document = report_document(before_trial, analysis)
    assert document["comparison"]["requirement"]["kind"] == "requirement, not a measurement"
    assert "**Before the trial, Trainium3 must reach**" in render_markdown(document)


def test_an_estimate_made_only_of_assumptions_is_labelled_so_never_complete(
    before_trial,
) -> None:
    stated = [Override("steady_throughput", 2.0, TRN, who="t", why="vendor figure")]
    stated += [Override(key, 0.0, TRN, who="t", why="guess") for key in ZERO]
    analysis = analyze(before_trial, stated)
    trn = analysis.estimate.target(TRN)
    assert trn.complete and trn.assumptions_only
    assert not analysis.estimate.targets[1].assumptions_only  # the GPU is measured
    assert "assumptions only" in estimate_line(analysis, width=78, lines=3).plain
    markdown = render_markdown(report_document(before_trial, analysis))
    summary = next(line for line in markdown.splitlines() if line.startswith(f"| {TRN} |"))
    assert "assumptions only" in summary and "complete" not in summary
    assert analysis.comparison.decision.action == RUN_TRIAL
    assert any("assumptions only" in fact for fact in analysis.comparison.decision.facts)
