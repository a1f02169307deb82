"""Oracle's v5.0 logs (``tests/data/mlperf-rounds/v5.0/Oracle``): the v5.0 wrapper clock,
the time before ``init_start``, and Stable Diffusion's offline evaluation.

Expectations are read from the files here, independently of trntui: the wrapper's epoch
seconds, the MLLOG records' own times and counts, and MLCommons' rules for the benchmark.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests import DATA
from tests.test_mlperf_rounds import records
from trntui.importers import import_file

ORACLE = DATA / "mlperf-rounds" / "v5.0" / "Oracle" / "results"
GB200 = sorted(ORACLE.glob("*GB200*/llama2_70b_lora/result_*.txt"))
SD = sorted((ORACLE / "1xBM.GPU.B200.8" / "stable_diffusion").glob("result_*.txt"))


def wrapper_seconds(path: Path) -> tuple[int, int]:
    """The plain ``RUNANDTIME_START/STOP <epoch s>`` lines (not their ``+ echo`` twins)."""
    text = path.read_text(encoding="utf-8")
    start = re.search(r"^RUNANDTIME_START (\d+)$", text, re.M)
    stop = re.search(r"^RUNANDTIME_STOP (\d+)$", text, re.M)
    assert start and stop
    return int(start.group(1)), int(stop.group(1))


@pytest.mark.parametrize("path", [*GB200, *SD], ids=lambda p: "/".join(p.parts[-3:]))
def test_the_v5_wrapper_clock_is_the_billed_attempt(path: Path) -> None:
    start, stop = wrapper_seconds(path)
    times = [r["time_ms"] / 1000 for r in records(path)]
    clock = import_file(path).metadata.job_clock
    assert clock is not None
    assert clock.span_s == pytest.approx(stop - start, abs=1.0)
    assert any(seconds == stop - start for _, seconds in clock.clocks)
    assert "RUNANDTIME" in clock.source
    # Epoch seconds are on the log's own clock: the wrapper starts just before the first line.
    assert clock.before_first_line_s == pytest.approx(max(0.0, min(times) - start), abs=1.0)


def test_every_clock_a_job_prints_is_kept_and_the_longest_is_billed() -> None:
    import polars as pl

    from trntui.importers.launch import job_clock

    lines = pl.DataFrame(
        {
            "line": [3, 4, 90, 91, 92],
            "text": [
                "+ echo 'RUNANDTIME_START 1745971133'",
                "RUNANDTIME_START 1745971133",
                "+ echo 'RUNANDTIME_STOP 1745972694'",
                "RUNANDTIME_STOP 1745972694",
                "RESULT,LLAMA2_70B_LORA,,1600,root,2025-04-30 12:00:00 AM",
            ],
        }
    )
    clock = job_clock(lines, "log.txt", 1745971140.0, 1745972600.0)
    assert clock is not None
    assert [seconds for _, seconds in clock.clocks] == [1561.0, 1600.0]
    assert clock.span_s == 1600.0
    assert "lines 3-91 (RUNANDTIME_START/STOP)" in clock.clocks_text()
    # A stop before the start is no clock.
    backwards = lines.head(4).with_columns(pl.col("text").str.replace("1745972694", "1745971000"))
    assert job_clock(backwards, "log.txt", None, None) is None


def test_nested_wrappers_bill_the_outer_one_and_report_the_inner_one() -> None:
    import polars as pl

    from trntui.importers.launch import job_clock

    lines = pl.DataFrame(
        {
            "line": [89, 92, 894, 895, 898],
            "text": [
                "RUNANDTIME_START 1745539359",
                "0: STARTING TIMING RUN AT 2025-04-24 07:02:41 PM",
                "0: ENDING TIMING RUN AT 2025-04-24 07:31:59 PM",
                "0: RESULT,LLM_FINETUNING,,1758,nvidia,2025-04-24 07:02:41 PM",
                "RUNANDTIME_STOP 1745541123",
            ],
        }
    )
    clock = job_clock(lines, "log.txt", None, None)
    assert clock is not None
    assert (clock.span_s, clock.wrapper_s) == (1764.0, 1758.0)


@pytest.mark.parametrize("path", GB200, ids=lambda p: "/".join(p.parts[-3:]))
def test_time_before_init_start_is_its_own_stage_and_the_backtest_holds(path: Path) -> None:
    from trntui.core.backtest import backtest
    from trntui.core.estimate import observation_row, observations_frame
    from trntui.core.run_facts import run_facts

    raw = records(path)
    first_ms = min(r["time_ms"] for r in raw)
    init_ms = next(r["time_ms"] for r in raw if r["key"] == "init_start")
    run = import_file(path)
    facts = run_facts(run)
    assert facts.phases.before_init_s == pytest.approx((init_ms - first_ms) / 1000, abs=0.01)
    assert facts.phases.before_init_s > 5.0  # the cache clear and the container's start
    row = observation_row("r", "s", facts, run.metadata)
    assert row["startup_s"] == pytest.approx(facts.init_s + facts.phases.before_init_s)
    check = backtest(observations_frame([row]), "s")
    assert check is not None and check.from_launch
    assert abs(check.gap) <= 0.03


def test_a_flagged_backtest_names_the_stage_that_differs() -> None:
    from trntui.core.backtest import backtest
    from trntui.core.estimate import observations_frame

    def row(run_id: str, before_init_s: float) -> dict:
        # 1,000 samples at 10/s: 100 s of training, 50 s of init, the rest before init.
        return {
            "run_id": run_id,
            "set_name": "s",
            "counted": True,
            "quality_reached": True,
            "throughput_unit": "samples/s",
            "steady_throughput": 10.0,
            "startup_s": 50.0 + before_init_s,
            "before_init_s": before_init_s,
            "training_s": 100.0,
            "overhead_ratio": 0.0,
            "retry_ratio": 0.0,
            "total_s": 150.0 + before_init_s,
            "work_done": 1000.0,
        }

    check = backtest(observations_frame([row("a", 5.0), row("b", 5.0), row("c", 200.0)]), "s")
    assert check is not None and check.flagged
    assert check.cause is not None and check.cause.startswith("time before init_start")


def sd_evaluations(path: Path) -> dict[int, dict[str, tuple[float, int]]]:
    """FID and CLIP per checkpoint (samples_count): (value, time_ms)."""
    out: dict[int, dict[str, tuple[float, int]]] = {}
    for r in records(path):
        if r["key"] == "eval_accuracy":
            meta = r["metadata"]
            out.setdefault(meta["samples_count"], {})[meta["metric"]] = (r["value"], r["time_ms"])
    return out


@pytest.mark.parametrize("path", SD, ids=lambda p: p.name)
def test_offline_evaluation_stable_diffusion(path: Path) -> None:
    """Training ends, its checkpoints are evaluated afterwards, run_stop comes last and
    back-dated: the steady rate is the training blocks' own, the result is verified when the
    CLIP line of the first checkpoint meeting both FID <= 90 and CLIP >= 0.15 is printed, the
    billed time runs to the last line, and the work to the target is that checkpoint's."""
    from trntui.core.run_facts import run_facts

    raw = records(path)
    t0 = min(r["time_ms"] for r in raw)
    rates = [
        r["value"]["throughput"]
        for r in raw
        if r["key"] == "tracked_stats" and "throughput" in r["value"]
    ]
    evaluations = sd_evaluations(path)
    reached = min(
        count
        for count, metrics in evaluations.items()
        if metrics["FID"][0] <= 90.0 and metrics["CLIP"][0] >= 0.15
    )
    verified_ms = max(evaluations[reached]["FID"][1], evaluations[reached]["CLIP"][1])
    stop = next(r for r in raw if r["key"] == "run_stop")
    assert stop["time_ms"] < verified_ms  # back-dated, printed last
    facts = run_facts(import_file(path))
    assert facts.counts_as_completed
    assert facts.throughput_unit == "samples/s"
    assert facts.steady_throughput == pytest.approx(sorted(rates)[len(rates) // 2], rel=0.02)
    assert facts.launch_to_result_s == pytest.approx((verified_ms - t0) / 1000)
    assert facts.total_s == pytest.approx((max(r["time_ms"] for r in raw) - t0) / 1000)
    assert facts.work_to_target == reached
    starts = [r["metadata"]["samples_count"] for r in raw if r["key"] == "block_start"]
    assert facts.useful_work > starts[-1]  # the last block was trained too
    # MLPerf's own clock is still run_start to the back-dated run_stop.
    start = next(r for r in raw if r["key"] == "run_start")
    assert facts.run_s == pytest.approx((stop["time_ms"] - start["time_ms"]) / 1000)


def test_the_work_to_the_target_of_offline_runs_is_a_measured_spread() -> None:
    from trntui.core.estimate import observation_row, observations_frame
    from trntui.core.estimate.observations import run_set_stats
    from trntui.core.run_facts import run_facts

    rows = []
    for index, path in enumerate(SD):
        run = import_file(path)
        rows.append(observation_row(str(index), "sd", run_facts(run), run.metadata))
    spread = run_set_stats(observations_frame(rows), "sd").spreads["work_to_target"]
    reached = sorted(
        min(c for c, m in sd_evaluations(p).items() if m["FID"][0] <= 90 and m["CLIP"][0] >= 0.15)
        for p in SD
    )
    assert (spread.min, spread.max) == (reached[0], reached[-1])
    assert spread.min < spread.max


def test_an_evaluation_whose_clip_misses_does_not_reach_the_target(tmp_path: Path) -> None:
    """FID met, CLIP below 0.15 at the same checkpoint: MLCommons' checker needs both."""
    from trntui.core.run_facts import run_facts

    source = SD[0]
    reached = min(
        c for c, m in sd_evaluations(source).items() if m["FID"][0] <= 90 and m["CLIP"][0] >= 0.15
    )
    lines = source.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if f'"samples_count": {reached}, "metric": "CLIP"' in line:
            lines[i] = re.sub(r'"value": [0-9.]+', '"value": 0.149', line)
    edited = tmp_path / "stable_diffusion" / "result_0.txt"
    edited.parent.mkdir()
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    facts = run_facts(import_file(edited))
    assert facts.status == "succeeded"
    assert not facts.counts_as_completed
    assert facts.launch_to_result_s is None
    assert any("CLIP 0.149" in note and "CLIP >= 0.15" in note for note in facts.notes)


SD_SYSTEM = "1xBM.GPU.B200.8"


def helper_saw_no_device(root: Path, with_systems_file: bool = True) -> Path:
    """A copy of a shared Stable Diffusion log in the MLCommons layout whose ``:::SYSJSON``
    line is edited as a helper step that ran where no GPU was visible prints it."""
    source = SD[0]
    folder = root / "sub" / "results" / SD_SYSTEM / "stable_diffusion"
    folder.mkdir(parents=True)
    text = source.read_text(encoding="utf-8")
    said = '"accelerators_per_node":"8","accelerator_model_name":"NVIDIA B200"'
    assert said in text
    text = text.replace(
        said, '"accelerators_per_node":"1","accelerator_model_name":"No devices were found"'
    )
    (folder / source.name).write_text(text, encoding="utf-8")
    if with_systems_file:
        systems = root / "sub" / "systems"
        systems.mkdir()
        shutil.copy(ORACLE.parent / "systems" / f"{SD_SYSTEM}.json", systems)
    return folder / source.name


def test_a_sysjson_naming_no_device_does_not_win_over_the_systems_file(tmp_path: Path) -> None:
    log = helper_saw_no_device(tmp_path)
    system = json.loads((ORACLE.parent / "systems" / f"{SD_SYSTEM}.json").read_text())
    size = import_file(log).metadata.system
    assert size is not None
    assert (size.nodes, size.accelerators_per_node) == (
        int(system["number_of_nodes"]),
        int(system["accelerators_per_node"]),
    )
    assert size.source == f"systems/{SD_SYSTEM}.json"
    # The disagreement is shown, with the line that said otherwise.
    assert any(
        "1 x 1 No devices were found" in c and ":::SYSJSON" in c and "names no device" in c
        for c in size.conflicts
    )


def cli(*args: str) -> int:
    from trntui.cli import main

    return main(list(args))


def test_a_stated_size_overrides_any_logged_size_with_its_provenance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = helper_saw_no_device(tmp_path / "logs", with_systems_file=False)
    project = tmp_path / "p"
    assert cli("init", str(project)) == 0
    assert cli("import", str(project), str(log), "--set", "sd") == 0
    capsys.readouterr()
    assert cli("runs", str(project), "--json") == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert (run["nodes"], run["accelerators_per_node"]) == (1, 1)  # what the log says
    assert cli(
        "size", str(project), "sd", "1", "8", "--accelerator", "B200",
        "--source", "systems/1xBM.GPU.B200.8.json", "--who", "alice",
    ) == 0  # fmt: skip
    capsys.readouterr()
    assert cli("runs", str(project), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    (run,) = report["runs"]
    assert (run["nodes"], run["accelerators_per_node"], run["accelerator"]) == (1, 8, "B200")
    assert run["size_stated_by"] == "alice"
    assert run["size_overrides"].startswith("1 x 1 No devices were found = 1 (")
    assert report["sets"][0]["accelerators"] == 8
    assert cli("runs", str(project)) == 0
    out = " ".join(capsys.readouterr().out.split())  # lines wrap at 80 columns
    assert "1 x 8 B200 = 8 (systems/1xBM.GPU.B200.8.json, stated by alice; logs said 1 x 1" in out


def test_the_run_detail_gives_warm_up_once_in_the_logs_own_unit() -> None:
    """It read 'warm-up 0 s' above 'Warm-up 1536 steps, ends at 10.0 min': 1,536 is samples
    (NeMo counts samples; the plan is 384 steps of 4), and two warm-ups."""
    from trntui.core.run_facts import run_facts
    from trntui.ui.screens.run_detail import facts_text

    path = GB200[0]
    raw = records(path)
    first_block_end = next(
        r["metadata"]["samples_count"]
        for r in raw
        if r["key"] == "eval_start"  # the first evaluation follows the first block
    )
    run = import_file(path)
    facts = run_facts(run)
    assert facts.warmup_unit == "samples"
    assert facts.warmup_steps == first_block_end
    text = facts_text(facts, run.metadata, "<= 0.925").plain
    warmups = [line for line in text.splitlines() if "warm-up" in line.lower()]
    assert len(warmups) == 1
    assert f"the first {first_block_end:,} samples" in warmups[0]
    assert "steps" not in warmups[0]


def test_a_recorded_quality_result_overrides_the_logs_own_evaluation(tmp_path: Path) -> None:
    """A derived fact a person sees is wrong is never a dead end: the CLIP edit makes the run
    miss; a recorded re-evaluation (who and why in its source) makes it count, and says what
    the log said."""
    from trntui.core.quality import RecordedQuality
    from trntui.core.run_facts import run_facts

    source = SD[0]
    lines = source.read_text(encoding="utf-8").splitlines()
    lines = [
        re.sub(r'"value": [0-9.]+', '"value": 0.149', line) if '"metric": "CLIP"' in line else line
        for line in lines
    ]
    edited = tmp_path / "stable_diffusion" / "result_0.txt"
    edited.parent.mkdir()
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = import_file(edited)
    assert not run_facts(run).counts_as_completed
    fid = min(m["FID"][0] for m in sd_evaluations(source).values())
    recorded = RecordedQuality(fid, "alice: CLIP re-scored with the reference model", 12 * 60)
    facts = run_facts(run, recorded=recorded)
    assert facts.counts_as_completed and facts.quality_reached
    assert facts.quality_value == fid
    assert any(
        "alice: CLIP re-scored" in note and "over the log's own" in note for note in facts.notes
    )
    assert facts.launch_to_result_s == pytest.approx(facts.total_s + 12 * 60)
