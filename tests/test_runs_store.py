"""Runs stored in a project: duplicates, all-or-nothing imports, sets, and the CLI commands."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from tests import MLPERF_DATA, loggen
from trntui.commands import import_logs
from trntui.commands import runs as runs_commands
from trntui.core.mlperf_score import run_minutes
from trntui.importers import Cancelled, import_file
from trntui.store import runs as store
from trntui.store.project import Project
from trntui.store.run_import import import_paths

DATA = MLPERF_DATA
DELL = DATA / "v3.0/Dell/results/XE9680x8H100-SXM-80GB/resnet"


@pytest.fixture()
def megatron_log(tmp_path: Path) -> Path:
    path = tmp_path / "logs" / "megatron.log"
    path.parent.mkdir()
    loggen.write_megatron(path)
    return path


def test_round_trip_and_duplicates(new_project: Path, megatron_log: Path, tmp_path: Path) -> None:
    outcomes = import_paths(new_project, [megatron_log], set_name="trial")
    assert [o.outcome for o in outcomes] == [store.ADDED]
    run_id = outcomes[0].run_id
    stored = store.load_run(new_project, run_id)
    fresh = import_file(megatron_log)
    assert stored.timeline.equals(fresh.timeline)
    assert stored.metadata == fresh.metadata
    copy = tmp_path / "copy.log"
    shutil.copy(megatron_log, copy)
    again = import_paths(new_project, [copy, megatron_log])
    assert [o.outcome for o in again] == [store.DUPLICATE, store.DUPLICATE]
    assert {o.run_id for o in again} == {run_id}
    table = store.load_runs(new_project)
    assert table.height == 1
    assert table["set_name"].to_list() == ["trial"]
    assert table["restarts"].to_list() == [1]


def test_timelines_with_kind_as_text_still_load(new_project: Path, megatron_log: Path) -> None:
    """Projects written before ``kind`` became an enum keep loading; a stray kind is an error."""
    run_id = import_paths(new_project, [megatron_log])[0].run_id
    path = store.timeline_path(new_project, run_id)
    enum_timeline = pl.read_parquet(path)
    as_text = enum_timeline.with_columns(pl.col("kind").cast(pl.String))
    as_text.write_parquet(path)
    assert pl.read_parquet_schema(path)["kind"] == pl.String
    loaded = store.load_run(new_project, run_id).timeline
    assert loaded.equals(enum_timeline)
    assert isinstance(loaded.schema["kind"], pl.Enum)
    as_text.with_columns(pl.lit("teleport").alias("kind")).write_parquet(path)
    with pytest.raises(store.InputFileError) as caught:
        store.load_run(new_project, run_id)
    assert str(path) in str(caught.value)


def test_bad_file_in_a_batch_fails_alone(new_project: Path, megatron_log: Path, tmp_path: Path):
    bad = tmp_path / "logs" / "truncated.log"
    lines = megatron_log.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if "elapsed time per iteration" in line)
    bad.write_text("\n".join([*lines[:last], lines[last][:50]]))
    outcomes = import_paths(new_project, [bad, megatron_log], format="megatron")
    assert [o.outcome for o in outcomes] == [store.FAILED, store.ADDED]
    assert f"{bad}:{last + 1}" in outcomes[0].error
    assert store.load_runs(new_project).height == 1
    timelines = list((new_project / "runs" / "timelines").glob("*.parquet"))
    assert len(timelines) == 1


@pytest.mark.parametrize("fails", ["facts", "timeline"])
def test_a_failure_deriving_facts_or_writing_the_timeline_leaves_nothing_behind(
    new_project: Path, megatron_log: Path, monkeypatch: pytest.MonkeyPatch, fails: str
) -> None:
    """Whichever of the two fails, the import fails whole and leaves no timeline."""
    import trntui.core.run_facts as run_facts_module

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError(f"{fails} broke")

    if fails == "facts":
        monkeypatch.setattr(run_facts_module, "run_facts", broken)
    else:
        monkeypatch.setattr(store, "write_timeline", broken)
    with pytest.raises(RuntimeError, match=f"{fails} broke"):
        import_paths(new_project, [megatron_log])
    monkeypatch.undo()
    assert store.load_runs(new_project).is_empty()
    assert not list((new_project / "runs" / "timelines").glob("*"))
    assert [o.outcome for o in import_paths(new_project, [megatron_log])] == [store.ADDED]


def test_failed_table_write_leaves_nothing_behind(
    new_project: Path, megatron_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = store.atomic_write_with

    def failing(path: Path, write, **kwargs) -> None:
        if Path(path).name == store.RUNS_FILE:
            raise OSError("disk full")
        real_write(path, write, **kwargs)

    monkeypatch.setattr(store, "atomic_write_with", failing)
    with pytest.raises(OSError):
        import_paths(new_project, [megatron_log])
    monkeypatch.undo()
    assert store.load_runs(new_project).is_empty()
    assert not list((new_project / "runs" / "timelines").glob("*"))
    assert [o.outcome for o in import_paths(new_project, [megatron_log])] == [store.ADDED]


def test_cancel_keeps_earlier_files(new_project: Path, tmp_path: Path) -> None:
    paths = []
    for seed in (1, 2):
        path = tmp_path / f"run{seed}.log"
        loggen.write_megatron(path, loggen.MegatronSpec(seed=seed))
        paths.append(path)
    imported = []

    def cancel() -> bool:
        return len(store.load_runs(new_project)) >= 1 and len(imported) > 0

    def progress(fraction: float) -> None:
        if store.load_runs(new_project).height:
            imported.append(fraction)

    with pytest.raises(Cancelled):
        import_paths(new_project, paths, progress=progress, cancel=cancel)
    assert store.load_runs(new_project).height == 1


def _mllog(ms: int, key: str, value: object = None, **metadata: object) -> str:
    event = {"namespace": "", "time_ms": ms, "event_type": "POINT_IN_TIME", "key": key,
             "value": value, "metadata": {"file": "train.py", "lineno": 1, **metadata}}  # fmt: skip
    return ":::MLLOG " + json.dumps(event)


def _mlperf_result(benchmark: str, minutes: float, success: bool) -> str:
    start = 1_700_000_000_000
    stop = start + 60_000 + round(minutes * 60_000)
    lines = [
        _mllog(start, "submission_benchmark", benchmark),
        _mllog(start, "init_start"),
        _mllog(start + 60_000, "init_stop"),
        _mllog(start + 60_000, "run_start"),
        _mllog(stop - 1, "eval_accuracy", 0.91, epoch_num=10),
        _mllog(stop, "run_stop", status="success" if success else "aborted"),
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("benchmark", ["unet3d", "resnet"])
def test_mlperf_score_drops_four_runs_for_unet3d_only(
    new_project: Path, tmp_path: Path, benchmark: str
) -> None:
    """MLCommons' summarizer drops 4 fastest (and, for failures, slowest) unet3d runs, else 1."""
    folder = tmp_path / "results" / "system" / benchmark
    folder.mkdir(parents=True)
    minutes = [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0]
    for index, value in enumerate(minutes):
        (folder / f"result_{index}.txt").write_text(_mlperf_result(benchmark, value, True))
    for index in range(len(minutes), len(minutes) + 2):
        (folder / f"result_{index}.txt").write_text(_mlperf_result(benchmark, index, False))
    import_paths(new_project, [folder], set_name="set")
    (info,) = store.run_sets(new_project)
    assert info.is_mlperf and info.runs == 10
    if benchmark == "unet3d":
        # Two failures take two of the four slowest places: drop 4 fastest and 2 slowest.
        assert info.mlperf_score_minutes == pytest.approx((24.0 + 25.0) / 2)
    else:
        assert info.mlperf_score_minutes is None, "more than one failure: no score"


def test_folder_import_groups_sets_and_scores_mlperf(new_project: Path) -> None:
    outcomes = import_paths(new_project, [DELL])
    kinds = {Path(o.path).name: o.outcome for o in outcomes}
    assert kinds["scaling.json"] == store.SKIPPED
    assert sum(o.outcome == store.ADDED for o in outcomes) == 5
    first = next(o for o in outcomes if o.outcome == store.ADDED)
    stored = store.load_run(new_project, first.run_id)
    assert stored.metadata == import_file(Path(first.path)).metadata
    assert stored.metadata.launch_time.tzinfo is not None
    (dell_set,) = store.run_sets(new_project)
    assert (dell_set.runs, dell_set.succeeded, dell_set.is_mlperf) == (5, 4, True)
    published = pl.read_csv(DATA / "PUBLISHED.csv").filter(
        pl.col("set") == "v3.0/Dell/results/XE9680x8H100-SXM-80GB/resnet"
    )["published_minutes"][0]
    assert round(dell_set.mlperf_score_minutes, 3) == round(published, 3)
    assert dell_set.mlperf_score.complete, "5 resnet runs: what a submission holds"


def test_a_partial_mlperf_set_is_scored_by_the_rules_and_flagged(new_project: Path) -> None:
    """3 of Oracle's 10 llama2_70b_lora runs: the olympic mean of 3 (the middle run, scaled),
    not comparable with the published score of all 10, and said to be so."""
    folder = DATA / "v4.0/Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora"
    picked = [folder / f"result_{n}.txt" for n in (1, 5, 10)]
    import_paths(new_project, picked, set_name="three")
    (info,) = store.run_sets(new_project)
    minutes = sorted(run_minutes(import_file(path).timeline) for path in picked)
    factor = json.loads((folder / "scaling.json").read_text())["scaling_factor"]
    assert info.mlperf_score_minutes == pytest.approx(minutes[1] * factor)
    assert (info.mlperf_score.runs, info.mlperf_score.required) == (3, 10)
    assert not info.mlperf_score.complete
    assert "from 3 of the 10 runs" in info.mlperf_score.text()


def test_cli_runs_flags_a_partial_mlperf_set(
    new_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = DATA / "v4.0/Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora"
    import_paths(new_project, [folder / "result_1.txt", folder / "result_2.txt"], set_name="two")
    assert _cli("runs", str(new_project), "--json") == 0
    (entry,) = json.loads(capsys.readouterr().out)["sets"]
    # Two runs leave nothing once the fastest and slowest are dropped.
    assert entry["mlperf_score_minutes"] is None
    assert (entry["mlperf_runs_required"], entry["mlperf_score_complete"]) == (10, False)
    assert _cli("runs", str(new_project)) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(n for n, x in enumerate(lines) if x.startswith("set two"))
    assert "MLPerf score none: 2 successful runs leave nothing to average" in lines[at + 1]


def test_corrupt_runs_table_is_an_input_error(new_project: Path) -> None:
    path = store.runs_path(new_project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not parquet")
    with pytest.raises(store.InputFileError):
        store.load_runs(new_project)


def test_remove_run(new_project: Path, megatron_log: Path) -> None:
    (outcome,) = import_paths(new_project, [megatron_log])
    store.remove_run(new_project, outcome.run_id)
    assert store.load_runs(new_project).is_empty()
    assert not store.timeline_path(new_project, outcome.run_id).exists()
    with pytest.raises(store.UserError):
        store.remove_run(new_project, outcome.run_id)


def _cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    import_logs.register(subparsers)
    runs_commands.register(subparsers)
    args = parser.parse_args(list(argv))
    return args.func(args)


def test_cli_import_and_list_json(
    new_project: Path, megatron_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli("import", str(new_project), str(megatron_log), "--set", "trn3", "--json") == 0
    imported = json.loads(capsys.readouterr().out)
    assert imported["imported"][0]["outcome"] == "added"
    assert _cli("runs", str(new_project), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    (run,) = report["runs"]
    assert set(run) == {
        "run_id",
        "set",
        "format",
        "source",
        "status",
        "init_s",
        "run_s",
        "launch_to_result_s",
        "steady_throughput",
        "throughput_unit",
        "restarts",
        "redone_steps",
        "counts",
        "outcome",
        "suspect",
        "nodes",
        "accelerators_per_node",
        "accelerator",
        "accelerators",
        "size_source",
        "size_stated_by",
        "size_conflicts",
        "size_overrides",
        "job_clock_s",
        "billed_attempt_s",
        "before_first_line_s",
        "job_clocks",
        "protocol",
    }
    assert (run["set"], run["format"], run["status"]) == ("trn3", "megatron", "succeeded")
    assert (run["counts"], run["outcome"], run["suspect"]) == (True, "succeeded", [])
    (run_set,) = report["sets"]
    assert {k: run_set[k] for k in ("name", "runs", "succeeded", "counted")} == {
        "name": "trn3",
        "runs": 1,
        "succeeded": 1,
        "counted": 1,
    }
    # A quality target the run's validation loss never reaches: finished, but it does not count.
    with Project.open(new_project) as session:
        goal = dataclasses.replace(
            session.inventory.goal, quality_threshold=1e-6, quality_direction="lower is better"
        )
        session.save_inventory(dataclasses.replace(session.inventory, goal=goal))
    assert _cli("runs", str(new_project), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    (run,) = report["runs"]
    assert (run["status"], run["counts"], run["outcome"]) == ("succeeded", False, "missed")
    assert [(s["name"], s["runs"], s["succeeded"], s["counted"]) for s in report["sets"]] == [
        ("trn3", 1, 1, 0)
    ]
    assert _cli("runs", str(new_project)) == 0
    text = capsys.readouterr().out
    assert " missed " in text and "1/1 succeeded, 0 count as completed work" in text


def test_cli_reports_failures_and_missing_project(
    new_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert _cli("import", str(new_project), str(empty)) == 1
    assert "empty" in capsys.readouterr().out
    assert _cli("runs", str(tmp_path / "nowhere")) == 2
    assert "error:" in capsys.readouterr().err


def test_assign_set(new_project: Path, megatron_log: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.log"
    loggen.write_megatron(other, loggen.MegatronSpec(seed=99))
    outcomes = import_paths(new_project, [megatron_log, other], set_name="a")
    store.assign_set(new_project, [outcomes[1].run_id], "b")
    sets = {info.name: info.runs for info in store.run_sets(new_project)}
    assert sets == {"a": 1, "b": 1}
    with pytest.raises(store.UserError):
        store.assign_set(new_project, ["nope"], "b")
    with pytest.raises(store.UserError):
        store.assign_set(new_project, [outcomes[0].run_id], "  ")


def test_a_size_is_stated_for_a_set_whose_logs_print_none(
    new_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = new_project.parent / "nxd.log"
    loggen.write_nxd(log, loggen.NxdSpec(crash_at=None, stall_at=None))
    assert _cli("import", str(new_project), str(log), "--set", "trn3") == 0
    assert _cli("size", str(new_project), "trn3", "1") == 2  # per node and source missing
    assert _cli("size", str(new_project), "nope", "1", "16", "--source", "job script") == 2
    capsys.readouterr()
    assert (
        _cli("size", str(new_project), "trn3", "1", "16", "--accelerator", "Trainium3",
             "--source", "job script trn3-1.sh", "--who", "alice") == 0
    )  # fmt: skip
    assert "1 x 16 Trainium3 = 16, stated by alice" in capsys.readouterr().out
    assert _cli("runs", str(new_project), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    (run,) = report["runs"]
    assert (run["nodes"], run["accelerators_per_node"], run["size_stated_by"]) == (1, 16, "alice")
    (run_set,) = report["sets"]
    assert (run_set["accelerators"], run_set["mixed_sizes"]) == (16, False)
    assert _cli("size", str(new_project), "trn3", "--remove") == 0
    assert _cli("runs", str(new_project), "--json") == 0
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1])["runs"][0]["nodes"] is None


def test_a_size_the_logs_state_can_be_overruled_and_says_what_they_said(
    new_project: Path, megatron_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli("import", str(new_project), str(megatron_log), "--set", "gpu") == 0
    capsys.readouterr()
    # The log states a world size of 8 but not the nodes: 1 x 8 completes it, nothing said.
    assert _cli("size", str(new_project), "gpu", "1", "8", "--source", "job script") == 0
    capsys.readouterr()
    assert _cli("runs", str(new_project), "--json") == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert (run["nodes"], run["accelerators_per_node"]) == (1, 8) and run["size_stated_by"]
    assert run["size_overrides"] is None  # it completes the log, overriding nothing
    oracle = MLPERF_DATA / "v4.0/Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora"
    assert _cli("import", str(new_project), str(oracle), "--set", "oracle") == 0
    capsys.readouterr()
    assert _cli("size", str(new_project), "oracle", "2", "8", "--source", "guess") == 0
    capsys.readouterr()
    assert _cli("runs", str(new_project), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    oracle_runs = [r for r in report["runs"] if r["set"] == "oracle"]
    assert {(r["nodes"], r["accelerators_per_node"]) for r in oracle_runs} == {(2, 8)}
    assert all(
        r["size_overrides"] == "1 x 8 NVIDIA H100-SXM5-80GB = 8 (systems/1xBM.GPU.H100.8.json)"
        for r in oracle_runs
    )


def test_a_run_read_by_older_rules_is_read_again_when_imported_again(
    new_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oracle = MLPERF_DATA / "v4.0/Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora/result_1.txt"
    (outcome,) = import_paths(new_project, [oracle], set_name="gpu")
    runs = store.load_runs(new_project)
    old = json.loads(runs["metadata_json"][0])
    for key in ("system", "job_clock", "protocol", "importer_version"):
        old.pop(key)
    runs = runs.with_columns(pl.lit(json.dumps(old)).alias("metadata_json"))
    runs.write_parquet(store.runs_path(new_project))
    assert _cli("runs", str(new_project)) == 0
    assert "1 run(s) were read by an older trntui" in capsys.readouterr().out
    (again,) = import_paths(new_project, [oracle], set_name="elsewhere")
    assert (again.outcome, again.run_id, again.set_name) == ("refreshed", outcome.run_id, "gpu")
    meta = store.load_run(new_project, outcome.run_id).metadata
    assert meta.system is not None and meta.system.accelerators == 8
    (third,) = import_paths(new_project, [oracle])
    assert third.outcome == "duplicate"


def test_cli_import_of_an_empty_folder_is_an_error(
    new_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It printed nothing and exited 0: a script could not tell a wrong path from success."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _cli("import", str(new_project), str(empty)) == 2
    assert f"no files to import in {empty}" in capsys.readouterr().err
    assert store.load_runs(new_project).is_empty()


@pytest.mark.parametrize("writer", ["import", "assign set", "remove run"])
def test_a_write_stores_every_runs_family_parts(tmp_path: Path, writer: str) -> None:
    """A runs table stored before the family parts (the scaling key's parts of each run,
    ``store.runs.RUNS_SCHEMA``) reads, and the next write stores them for every run, the
    old runs' too: the protocol facts and the accelerator of each run's metadata."""
    from tests import copy_sample
    from trntui.core.scaling import FAMILY_PARTS_VERSION

    root = copy_sample(tmp_path / "project")
    path = store.runs_path(root)
    parts = ["protocol_json", "logged_accelerator", "family_parts_version"]
    old = pl.read_parquet(path).drop(parts, strict=False)
    old.write_parquet(path)
    assert store.read_runs_table(root)["family_parts_version"].null_count() == old.height
    with Project.open(root):
        if writer == "import":
            import_paths(root, [DELL], set_name="dell")
        elif writer == "assign set":
            store.assign_set(root, old["run_id"][:1].to_list(), "moved")
        else:
            store.remove_run(root, old["run_id"][0])
    table = pl.read_parquet(path)
    added = {"import": 1, "assign set": 0, "remove run": -1}[writer]
    assert (table.height > old.height) if added > 0 else table.height == old.height + added
    assert set(parts) <= set(table.columns)
    accelerators = set()
    for protocol, accelerator, version, text in table.select(*parts, "metadata_json").rows():
        metadata = json.loads(text)
        assert (json.loads(protocol) if protocol is not None else {}) == metadata["protocol"]
        assert accelerator == (metadata["system"] or {}).get("accelerator")
        assert version == FAMILY_PARTS_VERSION
        accelerators.add(accelerator)
    assert {"NVIDIA H100-SXM5-80GB", None} <= accelerators
