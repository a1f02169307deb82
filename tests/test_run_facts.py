"""Run facts from timelines, checked against what the log generator simulated and the real
MLPerf files' own timestamps."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import MLPERF_DATA, loggen
from trntui.core.run_facts import (
    ABORTED,
    INCOMPLETE,
    SUCCEEDED,
    SUSPECT,
    QualityTarget,
    run_facts,
    spread,
    summarize_set,
)
from trntui.core.timeline import (
    ImportedRun,
    RunMetadata,
    TimeSource,
    conform,
    timeline_problems,
)
from trntui.importers import import_file

SPEC = loggen.MegatronSpec()
TARGET = QualityTarget("validation lm loss", SPEC.target_loss, higher_is_better=False)
MLPERF = MLPERF_DATA


def megatron(tmp_path: Path, spec: loggen.MegatronSpec = SPEC) -> tuple[ImportedRun, loggen.Truth]:
    path = tmp_path / "megatron.log"
    truth = loggen.write_megatron(path, spec)
    return import_file(path), truth


def test_megatron_with_timestamps(tmp_path: Path) -> None:
    run, truth = megatron(tmp_path)
    facts = run_facts(run, TARGET)
    assert facts.status == SUCCEEDED
    assert facts.counts_as_completed
    assert facts.init_s == pytest.approx(truth.init_s, abs=1.0)
    assert facts.steady_throughput == pytest.approx(truth.steady_samples_per_s, rel=0.01)
    assert facts.throughput_unit == "samples/s"
    assert facts.steady_tokens_per_s == pytest.approx(truth.steady_tokens_per_s, rel=0.01)
    assert facts.median_step_time_s == pytest.approx(truth.steady_step_time_s, rel=0.01)
    assert facts.warmup_steps == truth.warmup_steps
    assert facts.restarts == truth.restarts
    assert facts.redone_steps == truth.redone_steps
    assert len(facts.stalls) == truth.stalls
    assert facts.stalls[0].lost_s == pytest.approx(truth.stall_s, rel=0.05)
    assert facts.phases.checkpoint_s == pytest.approx(truth.checkpoint_s)
    assert facts.phases.eval_s == pytest.approx(truth.eval_s, abs=SPEC.eval_s)
    downtime = SPEC.restart_downtime_s + SPEC.init_s + SPEC.setup_s
    assert facts.phases.recovery_s == pytest.approx(downtime, abs=SPEC.step_time_s * 20)
    assert facts.phases.redone_s == pytest.approx(truth.redone_steps * SPEC.step_time_s, rel=0.02)
    assert facts.quality_reached is True
    assert facts.launch_to_result_s == pytest.approx(truth.target_reached_at_s, abs=SPEC.eval_s)
    assert facts.total_s == pytest.approx(truth.end_s, abs=1.0)
    assert facts.run_s == pytest.approx(truth.end_s - truth.init_s, abs=1.0)
    parts = facts.phases
    total = sum(
        v
        for v in (
            parts.init_compile_s,
            parts.warmup_s,
            parts.training_s,
            parts.checkpoint_s,
            parts.eval_s,
            parts.stall_s,
            parts.recovery_s,
            parts.redone_s,
        )
        if v is not None
    )
    assert total == pytest.approx(facts.total_s, abs=1.0)
    assert facts.effective_throughput is not None
    assert facts.effective_throughput < facts.steady_throughput


def test_megatron_without_timestamps_rebuilds_the_same_speed(tmp_path: Path) -> None:
    run, truth = megatron(tmp_path, replace(SPEC, timestamps=False))
    facts = run_facts(run, TARGET)
    assert facts.steady_throughput == pytest.approx(truth.steady_samples_per_s, rel=0.01)
    assert facts.restarts == truth.restarts
    assert facts.redone_steps == truth.redone_steps
    assert len(facts.stalls) == truth.stalls
    assert facts.warmup_steps == truth.warmup_steps
    assert facts.quality_reached is True


def test_clean_run_has_no_stall_restart_or_redone_work(tmp_path: Path) -> None:
    run, truth = megatron(tmp_path, replace(SPEC, crash_at=None, stall_at=None))
    facts = run_facts(run, TARGET)
    assert facts.restarts == 0
    assert facts.redone_steps == 0
    assert facts.stalls == ()
    assert facts.phases.recovery_s == 0.0
    assert facts.steady_throughput == pytest.approx(truth.steady_samples_per_s, rel=0.01)


def test_missed_quality_target_is_a_failure(tmp_path: Path) -> None:
    run, _ = megatron(tmp_path)
    strict = QualityTarget("validation lm loss", 1.0, higher_is_better=False)
    facts = run_facts(run, strict)
    assert facts.status == SUCCEEDED
    assert facts.quality_reached is False
    assert not facts.counts_as_completed
    assert facts.launch_to_result_s is None
    assert facts.effective_throughput == 0.0


def test_crashed_run_that_never_resumed_is_incomplete(tmp_path: Path) -> None:
    lines = loggen.megatron_lines(SPEC)
    crash = next(i for i, line in enumerate(lines) if line.startswith("Traceback"))
    path = tmp_path / "crashed.log"
    path.write_text("\n".join(lines[: crash + 2]) + "\n")
    facts = run_facts(import_file(path), TARGET)
    assert facts.status == INCOMPLETE
    assert not facts.counts_as_completed
    assert facts.run_s is None


def test_nxd_run(tmp_path: Path) -> None:
    spec = loggen.NxdSpec(states_plan=False)
    path = tmp_path / "nxd.log"
    truth = loggen.write_nxd(path, spec)
    run = import_file(path)
    facts = run_facts(run)
    assert facts.status == INCOMPLETE
    assert run_facts(run, planned_steps=spec.total_steps).status == SUCCEEDED
    assert facts.steady_throughput == pytest.approx(truth.steady_samples_per_s, rel=0.03)
    assert facts.restarts == truth.restarts
    assert facts.redone_steps == truth.redone_steps
    assert len(facts.stalls) == truth.stalls
    assert facts.stalls[0].lost_s == pytest.approx(truth.stall_s, abs=3.0)
    # Compile end is known to the next stamped line only: at most one first step late.
    assert truth.compile_s <= facts.init_s <= truth.compile_s + spec.warmup_step_times_s[0] + 1
    assert truth.warmup_steps <= facts.warmup_steps <= truth.warmup_steps + 10
    # No run stop in the format: unknown until the planned steps say when training ended.
    assert facts.run_s is None
    done = run_facts(run, planned_steps=spec.total_steps)
    first_step_s = spec.warmup_step_times_s[0]
    assert done.run_s is not None and done.run_ends_at_planned_step
    assert truth.end_s - truth.compile_s - first_step_s - 1 <= done.run_s
    assert done.run_s <= truth.end_s - truth.compile_s + 1
    assert done.init_s + done.run_s == pytest.approx(truth.end_s, abs=1.0)
    short = run_facts(run, planned_steps=spec.total_steps + 1)
    assert short.status == INCOMPLETE and short.run_s is None


def test_a_trial_is_judged_by_the_plan_its_log_states(tmp_path: Path) -> None:
    """The inventory's work is the job to estimate; a trial that reached the steps its own
    arguments planned is complete whatever the inventory asks for (issue: raising the work
    to finish made every trial 'incomplete')."""
    spec = loggen.NxdSpec(total_steps=384, batch=8, seq_len=8192, crash_at=None, stall_at=None)
    path = tmp_path / "nxd.log"
    loggen.write_nxd(path, spec)
    run = import_file(path)
    assert run.metadata.planned_steps == 384
    assert run.metadata.protocol == {"global_batch_size": "8", "sequence_length": "8192"}
    for inventory_plan in (None, 384, 768):
        facts = run_facts(run, planned_steps=inventory_plan)
        assert facts.status == SUCCEEDED and facts.planned_steps == 384
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(path.read_text().splitlines()[:-20]) + "\n")
    assert run_facts(import_file(cut), planned_steps=300).status == INCOMPLETE


def _raw(path: Path) -> list[dict]:
    return [json.loads(m.group(1)) for m in re.finditer(r":::MLLOG (\{.*\})", path.read_text())]


def test_mlperf_runs() -> None:
    dell = MLPERF / "v3.0/Dell/results/XE9680x8H100-SXM-80GB/resnet"
    for path in sorted(dell.glob("result_*.txt")):
        facts = run_facts(import_file(path))
        events = _raw(path)
        stop = next(e for e in events if e["key"] == "run_stop")
        start = next(e for e in events if e["key"] == "run_start")
        init = next(e for e in events if e["key"] == "init_start")
        assert facts.run_s == pytest.approx((stop["time_ms"] - start["time_ms"]) / 1000)
        assert facts.init_s == pytest.approx((start["time_ms"] - init["time_ms"]) / 1000)
        if stop["metadata"]["status"] == "success":
            assert facts.status == SUCCEEDED and facts.counts_as_completed
            assert facts.quality_reached is True
            assert facts.launch_to_result_s is not None
        else:
            assert facts.status == ABORTED and not facts.counts_as_completed
            assert facts.effective_throughput == 0.0
        stats = [e["value"]["throughput"] for e in events if e["key"] == "tracked_stats"]
        assert min(stats) <= facts.steady_throughput <= max(stats)
    tiny = run_facts(
        import_file(MLPERF / "v4.0/tinycorp/results/tinybox_green/resnet/result_0.txt")
    )
    assert tiny.status == INCOMPLETE
    assert not tiny.counts_as_completed
    assert tiny.run_s is None


def test_quality_target_on_mlperf_accuracy() -> None:
    path = MLPERF / "v3.0/Dell/results/XE9680x8H100-SXM-80GB/resnet/result_0.txt"
    if not path.is_file():
        pytest.skip("MLPerf sample logs not available")
    events = _raw(path)
    accuracies = [(e["time_ms"], e["value"]) for e in events if e["key"] == "eval_accuracy"]
    first_ms = min(e["time_ms"] for e in events)
    target = QualityTarget("eval_accuracy", 0.759, higher_is_better=True)
    hit_ms = next(t for t, v in accuracies if v >= 0.759)
    facts = run_facts(import_file(path), target)
    assert facts.launch_to_result_s == pytest.approx((hit_ms - first_ms) / 1000)
    assert facts.quality_value == max(v for _, v in accuracies)


def _stepped_run(steps: list[tuple[float, int]], *, prints_run_stop: bool) -> ImportedRun:
    """Compilation for 50 s, then ``(t_s, step)`` rows; no run stop anywhere."""
    timeline = conform(
        pl.DataFrame(
            {
                "t_s": [0.0, 50.0, *(t for t, _ in steps)],
                "kind": ["compile_start", "compile_stop", *(["step"] * len(steps))],
                "step": [None, None, *(n for _, n in steps)],
            }
        )
    )
    meta = RunMetadata(
        "mlperf" if prints_run_stop else "nxd",
        "x",
        "0" * 64,
        TimeSource.WALL_CLOCK,
        throughput_unit="steps/s",
        prints_run_stop=prints_run_stop,
    )
    return ImportedRun(timeline, meta)


def test_without_a_run_stop_training_ends_at_the_last_logged_step() -> None:
    straight = [(50.0 + 10 * i, i) for i in range(1, 11)]
    # Reached step 10 at 150 s, crashed, resumed from step 5 and redid 6-10 by 500 s.
    redone = [*straight, *((450.0 + 10 * (i - 5), i) for i in range(6, 11))]
    for steps, planned, end in ((straight, 10, 150.0), (straight, 5, 150.0), (redone, 10, 500.0)):
        facts = run_facts(_stepped_run(steps, prints_run_stop=False), planned_steps=planned)
        assert facts.status == SUCCEEDED
        assert facts.run_ends_at_planned_step
        assert facts.run_s == pytest.approx(end - 50.0)
    short = run_facts(_stepped_run(straight, prints_run_stop=False), planned_steps=11)
    assert short.status == INCOMPLETE and short.run_s is None


def test_a_format_that_prints_run_stop_is_unfinished_without_one() -> None:
    """An MLPerf log cut before run_stop did not finish, whatever step it had reached."""
    steps = [(50.0 + 10 * i, i) for i in range(1, 11)]
    facts = run_facts(_stepped_run(steps, prints_run_stop=True), planned_steps=10)
    assert facts.status == INCOMPLETE
    assert not facts.counts_as_completed
    assert facts.run_s is None


def test_no_clock_run_keeps_unknowns_unknown() -> None:
    timeline = conform(
        pl.DataFrame(
            {
                "kind": ["step", "step", "run_stop"],
                "step": [10, 20, 20],
                "duration_s": [None, None, 600.0],
                "throughput": [None, None, 42.0],
                "status": [None, None, "success"],
            }
        )
    )
    meta = RunMetadata("hf", "x", "0" * 64, TimeSource.NONE, throughput_unit="samples/s")
    facts = run_facts(ImportedRun(timeline, meta))
    assert facts.run_s == 600.0
    assert facts.steady_throughput == 42.0
    assert facts.init_s is None
    assert facts.launch_to_result_s is None
    assert facts.warmup_end_s is None
    assert facts.phases.init_compile_s is None


def test_spread_and_set_summary(tmp_path: Path) -> None:
    summary = spread([4.0, None, 1.0, 100.0, 2.0, 3.0])
    assert summary is not None
    assert (summary.n, summary.min, summary.median, summary.max) == (5, 1.0, 3.0, 100.0)
    assert summary.trimmed_mean == pytest.approx(3.0)
    assert summary.mean == pytest.approx(22.0)
    assert spread([None]) is None
    assert spread([5.0, 7.0]).trimmed_mean == 6.0
    good, _ = megatron(tmp_path)
    facts = [
        run_facts(good, TARGET),
        run_facts(good, TARGET),
        run_facts(good, QualityTarget(None, 0.5, False)),
    ]
    result = summarize_set(facts)
    assert (result.runs, result.succeeded, result.counted) == (3, 3, 2)
    assert result.steady_throughput.n == 2
    assert result.throughput_unit == "samples/s"


_KINDS = [
    "step",
    "run_start",
    "run_stop",
    "eval",
    "eval_start",
    "eval_stop",
    "checkpoint_start",
    "checkpoint_stop",
    "checkpoint_load",
    "compile_stop",
    "epoch_stop",
    "init_start",
]
_maybe_float = st.one_of(st.none(), st.floats(-1e6, 1e9, allow_nan=False))
_event = st.fixed_dictionaries(
    {
        "t_s": _maybe_float,
        "kind": st.sampled_from(_KINDS),
        "step": st.one_of(st.none(), st.integers(-3, 10**6)),
        "samples": _maybe_float,
        "step_time_s": st.one_of(st.none(), st.floats(0, 100, allow_nan=False)),
        "throughput": _maybe_float,
        "metric": _maybe_float,
        "duration_s": _maybe_float,
        "status": st.sampled_from([None, "success", "aborted"]),
    }
)


@settings(max_examples=200)
@given(
    events=st.lists(_event, max_size=25),
    target=st.one_of(
        st.none(), st.builds(QualityTarget, st.none(), st.floats(0, 5), st.booleans())
    ),
    planned=st.one_of(st.none(), st.integers(0, 100)),
)
def test_any_timeline_gives_facts_without_crashing(events, target, planned) -> None:
    frame = conform(pl.DataFrame(events, schema_overrides={"kind": pl.String}))
    if not events:
        frame = conform(pl.DataFrame({"kind": []}, schema={"kind": pl.String}))
    meta = RunMetadata("x", "x", "0" * 64, TimeSource.WALL_CLOCK, throughput_unit="samples/s")
    facts = run_facts(ImportedRun(frame, meta), target, planned)
    # Negative steps or durations, NaN, and a clock running back between steps are not what any
    # log gives: such a timeline is suspect (issue 16, case 14), and says why.
    assert facts.status in (SUCCEEDED, ABORTED, INCOMPLETE, SUSPECT)
    assert (facts.status == SUSPECT) == bool(timeline_problems(frame))
    if not facts.counts_as_completed:
        assert facts.effective_throughput == 0.0


def test_stored_mlperf_metadata_without_the_run_stop_flag_keeps_mlperf_rules() -> None:
    """Metadata stored before ``prints_run_stop`` existed reads it from the format."""
    for fmt, expected in (("mlperf", True), ("nxd", False)):
        stored = json.loads(RunMetadata(fmt, "x", "0" * 64, TimeSource.WALL_CLOCK).to_json())
        del stored["prints_run_stop"]
        assert RunMetadata.from_json(json.dumps(stored)).prints_run_stop is expected


def test_warm_up_is_found_per_segment_including_a_one_row_segment() -> None:
    """Rule 4 per segment (a restart starts one): three segments, the middle of one row.

    Median 1.0 (steady up to 1.25). Segment 1: 5, 1, 1, 1 s per step: the first interval is
    warm-up, the second starts three steady ones. Segment 2 (one row, 1 s): a segment of one
    interval has no first interval held back, so it is steady at once. Segment 3: 1, 5, 1: its
    first interval is always warm-up, the second is slow, the third is steady.
    """
    from trntui.core.run_facts.steady import with_phases

    per_step = [5.0, 1.0, 1.0, 1.0, 1.0, 1.0, 5.0, 1.0]
    iv = pl.DataFrame(
        {
            "segment": [1, 1, 1, 1, 2, 3, 3, 3],
            "per_step_s": per_step,
            "busy_s": per_step,
            "interval_steps": [1.0] * 8,
            "t_s": [float(t) for t in range(8)],
            "restart": [False, False, False, False, True, True, False, False],
            "highest_before": [None, 1, 2, 3, 4, 4, 4, 4],
            "step": [1, 2, 3, 4, 4, 3, 4, 5],
            "since_previous_s": [None, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        }
    )
    phases = with_phases(iv, 1.0)
    assert phases["warm"].to_list() == [True, False, False, False, False, True, True, False]
    assert phases["stall"].to_list() == [False] * 8
