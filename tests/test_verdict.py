"""The verdict of what limits a run, on generated runs + captures whose causes are known."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loggen import NxdSpec, write_nxd
from tests.telemetry_gen import MonitorSpec, Phase, stepped_run, write_monitor
from trntui.core.run_facts import run_facts
from trntui.core.verdict import Limit, run_verdict
from trntui.importers import import_file
from trntui.importers.neuron_monitor import import_neuron_monitor

COMPILE_S = 60
TRAIN_A = 300  # steps of 1 s before the data-starved stretch
STARVED = 600  # seconds without progress, accelerators at 2 %
TRAIN_B = 300


def _capture(tmp_path: Path, phases: tuple[Phase, ...]):
    path = tmp_path / "nm.jsonl"
    write_monitor(path, MonitorSpec(phases=phases))
    return import_neuron_monitor(path)


def _starved_run(tmp_path: Path):
    """A run that waits STARVED seconds for data between two busy stretches, and its capture."""
    run = stepped_run([(TRAIN_A, 1.0), (1, float(STARVED)), (TRAIN_B, 1.0)], COMPILE_S)
    phases = (
        Phase(COMPILE_S, 0.0, cpu_pct=100.0),
        Phase(TRAIN_A, 90.0),
        Phase(STARVED, 2.0, cpu_pct=95.0, io_wait_pct=3.0),
        Phase(TRAIN_B + 1, 90.0),
    )
    return run, _capture(tmp_path, phases)


def test_data_starved_run_is_input_bound(tmp_path: Path) -> None:
    run, telemetry = _starved_run(tmp_path)
    facts = run_facts(run)
    verdict = run_verdict(facts, telemetry, 0.0)
    billed = COMPILE_S + TRAIN_A + STARVED + TRAIN_B
    assert verdict.billed_s == pytest.approx(billed)
    assert verdict.limit == Limit.INPUT
    busy = 0.90 * (TRAIN_A + TRAIN_B) + 0.02 * STARVED
    idle = 0.10 * (TRAIN_A + TRAIN_B) + 0.98 * STARVED
    assert verdict.share_of(Limit.INPUT).seconds == pytest.approx(idle, rel=0.01)
    assert verdict.share_of(Limit.ACCELERATOR).seconds == pytest.approx(busy, rel=0.01)
    assert verdict.share_of(Limit.INPUT).share == pytest.approx(idle / billed, rel=0.01)
    assert verdict.share_of(Limit.COMPILATION).seconds == pytest.approx(COMPILE_S)
    assert verdict.share_of(Limit.SYNC).seconds == pytest.approx(0.0, abs=1e-6)
    longest = verdict.starved[0]
    assert longest.start_s == pytest.approx(COMPILE_S + TRAIN_A)
    assert longest.end_s == pytest.approx(COMPILE_S + TRAIN_A + STARVED)
    assert longest.host_cpu_pct == pytest.approx(95.0)
    assert any("host CPU averaged 95" in line for line in verdict.share_of(Limit.INPUT).evidence)


def test_busy_run_is_accelerator_bound(tmp_path: Path) -> None:
    run = stepped_run([(900, 1.0)], COMPILE_S)
    telemetry = _capture(tmp_path, (Phase(COMPILE_S, 0.0), Phase(900, 92.0)))
    verdict = run_verdict(run_facts(run), telemetry, 0.0)
    assert verdict.limit == Limit.ACCELERATOR
    assert verdict.share_of(Limit.ACCELERATOR).share == pytest.approx(0.92 * 900 / 960, rel=0.01)
    assert "accelerator-bound" in verdict.headline


def test_imbalanced_cores_are_sync_bound(tmp_path: Path) -> None:
    run = stepped_run([(900, 1.0)], COMPILE_S)
    telemetry = _capture(tmp_path, (Phase(COMPILE_S, 0.0), Phase(900, (95.0, 5.0, 5.0, 5.0))))
    verdict = run_verdict(run_facts(run), telemetry, 0.0)
    assert verdict.limit == Limit.SYNC
    assert verdict.share_of(Limit.SYNC).seconds == pytest.approx((95 - 27.5) / 100 * 900, rel=0.01)


def test_long_compile_is_compilation_bound() -> None:
    run = stepped_run([(100, 1.0)], compile_s=900.0)
    verdict = run_verdict(run_facts(run), timeline_compile_s=900.0)
    assert verdict.limit == Limit.COMPILATION
    assert verdict.share_of(Limit.COMPILATION).share == pytest.approx(0.9)
    assert verdict.share_of(Limit.ACCELERATOR).share is None  # no capture: not measured


def test_capture_offset_places_samples_on_the_run_clock(tmp_path: Path) -> None:
    run = stepped_run([(900, 1.0)], COMPILE_S)
    # Capture started 60 s into the run: only the training part, all busy.
    telemetry = _capture(tmp_path, (Phase(900, 92.0),))
    verdict = run_verdict(run_facts(run), telemetry, float(COMPILE_S))
    assert verdict.share_of(Limit.ACCELERATOR).seconds == pytest.approx(0.92 * 900, rel=0.01)


def test_restarts_without_capture(tmp_path: Path) -> None:
    path = tmp_path / "nxd.log"
    spec = NxdSpec()
    write_nxd(path, spec)
    facts = run_facts(import_file(path))
    verdict = run_verdict(facts)
    restart = verdict.share_of(Limit.RESTART)
    assert restart.seconds is not None
    assert restart.seconds >= spec.restart_downtime_s
    assert verdict.share_of(Limit.SYNC).seconds is None


def test_no_verdict_when_unmeasured_causes_could_outrank() -> None:
    run = stepped_run([(800, 1.0)], compile_s=200.0)
    verdict = run_verdict(run_facts(run), timeline_compile_s=200.0)
    assert verdict.share_of(Limit.COMPILATION).share == pytest.approx(0.2)
    assert verdict.limit is None
    assert "not measured" in verdict.headline
    assert any("largest measured cause" in note for note in verdict.notes)


def test_shares_that_add_up_to_more_than_the_billed_time_say_they_overlap() -> None:
    from trntui.core.verdict import Limit, LimitShare, overlap_note

    def share(limit: Limit, fraction: float | None) -> LimitShare:
        seconds = None if fraction is None else fraction * 100.0
        return LimitShare(limit, seconds, fraction, ())

    apart = [share(Limit.ACCELERATOR, 0.6), share(Limit.INPUT, 0.3), share(Limit.SYNC, None)]
    assert overlap_note(apart) is None
    overlapping = [share(Limit.INPUT, 0.7), share(Limit.RESTART, 0.5)]
    note = overlap_note(overlapping)
    assert note is not None and note.startswith("the shares add up to 120%")
    assert "overlap" in note


def test_an_evaluation_run_after_the_log_is_not_taken_off_its_idle_time(tmp_path: Path) -> None:
    """A quality result recorded with its evaluation time (run after the log ended, outside
    the capture) was subtracted from the idle time the capture measured inside the log: the
    sample's input/data share read 1% where the capture shows 12%."""
    from trntui.core.quality import QualityTarget
    from trntui.core.run_facts import RecordedQuality

    run, telemetry = _starved_run(tmp_path)
    alone = run_verdict(run_facts(run), telemetry, 0.0)
    target = QualityTarget("loss", 1.0, higher_is_better=False)
    evaluated = run_facts(run, target, None, RecordedQuality(0.5, "eval job", 400.0))
    assert evaluated.phases.outside_eval_s == pytest.approx(400.0)
    verdict = run_verdict(evaluated, telemetry, 0.0)
    assert verdict.share_of(Limit.INPUT).seconds == pytest.approx(
        alone.share_of(Limit.INPUT).seconds
    )


def test_billed_time_is_the_jobs_own_clock_when_it_spans_longer(tmp_path: Path) -> None:
    """An MLPerf log whose wrapper prints the job clock (2101 s) against 1797 s of log: the
    verdict's billed time was the log's, so every share was over 304 s too little."""
    from trntui.core.timeline import JobClock

    run = stepped_run([(900, 1.0)], COMPILE_S)
    telemetry = _capture(tmp_path, (Phase(COMPILE_S, 0.0), Phase(900, 92.0)))
    facts = run_facts(run)
    log_s = facts.total_s
    clock = JobClock(span_s=log_s + 300.0, before_first_line_s=240.0, source="job wrapper")
    plain = run_verdict(facts, telemetry, 0.0)
    verdict = run_verdict(facts, telemetry, 0.0, job_clock=clock)
    assert verdict.billed_s == pytest.approx(log_s + 300.0)
    busy = plain.share_of(Limit.ACCELERATOR).seconds
    assert verdict.share_of(Limit.ACCELERATOR).seconds == pytest.approx(busy)
    assert verdict.share_of(Limit.ACCELERATOR).share == pytest.approx(busy / (log_s + 300.0))
    assert verdict.unexplained_s == pytest.approx(plain.unexplained_s + 300.0)
    assert any("240 s before the log's first line" in note for note in verdict.notes)
    shorter = JobClock(span_s=log_s - 10.0, before_first_line_s=None, source="job wrapper")
    assert run_verdict(facts, telemetry, 0.0, job_clock=shorter).billed_s == pytest.approx(log_s)
