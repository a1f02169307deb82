"""Captures attached to runs in a project: overlap and instance checks, all-or-nothing, CLI."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from tests import loggen
from tests.telemetry_gen import MonitorSpec, Phase, nvidia_smi_lines, write_monitor
from trntui.commands import telemetry as telemetry_commands
from trntui.core.verdict import Limit
from trntui.store import telemetry as store
from trntui.store.run_import import import_paths

NXD = loggen.NxdSpec()


@pytest.fixture()
def run_id(new_project: Path, tmp_path: Path) -> str:
    path = tmp_path / "logs" / "nxd.log"
    path.parent.mkdir()
    loggen.write_nxd(path, NXD)
    (outcome,) = import_paths(new_project, [path])
    assert outcome.run_id
    return outcome.run_id


def _capture(tmp_path: Path, name: str = "nm.jsonl", **changes) -> Path:
    changes.setdefault("start", loggen.LAUNCH)
    spec = MonitorSpec(phases=(Phase(120, 0.0, cpu_pct=100.0), Phase(2000, 85.0)), **changes)
    path = tmp_path / name
    write_monitor(path, spec)
    return path


def test_attach_overlapping_capture_and_detail(
    new_project: Path, run_id: str, tmp_path: Path
) -> None:
    outcome = store.attach_capture(new_project, run_id, _capture(tmp_path))
    assert outcome.outcome == store.ATTACHED, outcome.message
    assert outcome.offset_s == pytest.approx(0.0)
    assert outcome.coverage == pytest.approx(1.0)
    detail = store.run_detail(new_project, run_id)
    util = detail.utilization
    assert util is not None
    assert util.steady is not None
    assert util.steady.mean_pct == pytest.approx(85.0)
    # Whole run includes the 120 s of compilation at 0 %.
    assert util.whole_run.mean_pct < util.steady.mean_pct
    assert "neuron-monitor" in util.whole_run.method
    assert util.whole_run.period_s == pytest.approx(1.0)
    assert detail.verdict.share_of(Limit.ACCELERATOR).share is not None
    assert detail.mfu.value is None and detail.mfu.missing
    again = store.attach_capture(new_project, run_id, _capture(tmp_path))
    assert again.outcome == store.DUPLICATE


def test_no_overlap_is_reported_and_not_stored(new_project: Path, run_id: str, tmp_path: Path):
    later = _capture(tmp_path, start=loggen.LAUNCH + dt.timedelta(days=1))
    outcome = store.attach_capture(new_project, run_id, later)
    assert outcome.outcome == store.MISMATCH
    assert "no time overlap" in outcome.message
    assert store.load_captures(new_project).is_empty()
    assert not (new_project / store.TELEMETRY_FOLDER / store.SAMPLES_FOLDER).exists()


def test_capture_without_clock_needs_an_offset(new_project: Path, run_id: str, tmp_path: Path):
    path = _capture(tmp_path, wrapper_timestamp=False)
    refused = store.attach_capture(new_project, run_id, path)
    assert refused.outcome == store.MISMATCH
    assert "--offset" in refused.message
    placed = store.attach_capture(new_project, run_id, path, offset_s=10.0)
    assert placed.outcome == store.ATTACHED
    assert placed.offset_s == pytest.approx(10.0)


def test_zoned_and_local_clocks_are_not_compared(new_project: Path, run_id: str, tmp_path: Path):
    path = _capture(tmp_path, start=loggen.LAUNCH.replace(tzinfo=dt.UTC))
    outcome = store.attach_capture(new_project, run_id, path)
    assert outcome.outcome == store.MISMATCH
    assert "time zone" in outcome.message


def test_another_instance_is_a_mismatch(new_project: Path, run_id: str, tmp_path: Path) -> None:
    other_type = store.attach_capture(
        new_project, run_id, _capture(tmp_path), instance_type="trn2.48xlarge"
    )
    assert other_type.outcome == store.MISMATCH
    assert "another instance type" in other_type.message
    assert store.attach_capture(new_project, run_id, _capture(tmp_path)).outcome == store.ATTACHED
    other_host = _capture(tmp_path, name="b.jsonl", instance_id="i-ffffffffffffffff0")
    outcome = store.attach_capture(new_project, run_id, other_host)
    assert outcome.outcome == store.MISMATCH
    assert "i-ffffffffffffffff0" in outcome.message


def test_compile_log_attached_feeds_the_verdict(new_project: Path, run_id: str, tmp_path: Path):
    log = tmp_path / "logs" / "nxd.log"
    outcome = store.attach_capture(new_project, run_id, log)
    assert outcome.outcome == store.ATTACHED, outcome.message
    assert outcome.kind == store.COMPILE
    summary = store.run_compile_summary(new_project, run_id)
    assert summary is not None
    assert (summary.compilations, summary.cache_hits) == (NXD.graphs, NXD.graphs)
    verdict = store.run_detail(new_project, run_id).verdict
    compile = verdict.share_of(Limit.COMPILATION)
    assert compile.seconds >= NXD.graphs * NXD.compile_s_per_graph


def test_bad_file_fails_alone(new_project: Path, run_id: str, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("nothing to see\n")
    outcome = store.attach_capture(new_project, run_id, path)
    assert outcome.outcome == store.FAILED
    assert "notes.txt" in outcome.message


def test_failed_table_write_leaves_no_samples(
    new_project: Path, run_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = store.attach.atomic_write_with  # attach_capture writes through it there

    def failing(path: Path, write, **kwargs) -> None:
        if path.name == store.CAPTURES_FILE:
            raise OSError("disk full")
        real(path, write, **kwargs)

    monkeypatch.setattr(store.attach, "atomic_write_with", failing)
    with pytest.raises(OSError):
        store.attach_capture(new_project, run_id, _capture(tmp_path))
    samples = new_project / store.TELEMETRY_FOLDER / store.SAMPLES_FOLDER
    assert not list(samples.glob("*.parquet"))
    assert store.load_captures(new_project).is_empty()


def test_nvidia_smi_capture_attaches(new_project: Path, run_id: str, tmp_path: Path) -> None:
    path = tmp_path / "smi.csv"
    path.write_text("\n".join(nvidia_smi_lines([(600, [70, 70])], start=loggen.LAUNCH)) + "\n")
    outcome = store.attach_capture(new_project, run_id, path)
    assert outcome.outcome == store.ATTACHED, outcome.message
    detail = store.run_detail(new_project, run_id)
    assert "nvidia-smi" in detail.utilization.whole_run.method


def _cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    telemetry_commands.register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return args.func(args)


def test_cli_attach_and_verdict_json(
    new_project: Path, run_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    far = _capture(tmp_path, name="far.jsonl", start=loggen.LAUNCH + dt.timedelta(days=2))
    code = _cli("telemetry", str(new_project), str(_capture(tmp_path)), str(far), "--run", run_id)
    assert code == 1
    out = capsys.readouterr().out
    assert "attached" in out and "mismatch" in out
    assert _cli("verdict", str(new_project), "--json") == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["run_id"] == run_id
    assert report["utilization"]["steady"]["mean_pct"] == pytest.approx(85.0)
    assert report["verdict"]["limit"] in {str(limit) for limit in Limit}
    assert report["mfu"]["label"] == "derived"
    assert _cli("verdict", str(new_project)) == 0
    text = capsys.readouterr().out
    assert "steady window 85%" in text
    assert _cli("verdict", str(new_project), "--run", "nope") == 2


def test_compile_recurrence_over_repeated_runs(new_project: Path, tmp_path: Path) -> None:
    from tests.telemetry_gen import compiler_log

    run_ids = []
    for index, cached in enumerate((False, True)):
        launch = loggen.LAUNCH + dt.timedelta(days=index)
        spec = loggen.NxdSpec(crash_at=None, stall_at=None)
        path = tmp_path / f"run{index}" / "nxd.log"
        path.parent.mkdir()
        loggen.write_nxd(path, spec)
        # Shift the generated log to its launch day.
        text = path.read_text()
        for fmt in ("%a %b %d", "%Y-%m-%d"):
            text = text.replace(loggen.LAUNCH.strftime(fmt), launch.strftime(fmt))
        path.write_text(text)
        (outcome,) = import_paths(new_project, [path])
        run_ids.append(outcome.run_id)
        log = tmp_path / f"run{index}" / "compile.log"
        log.write_text("\n".join(compiler_log(5, cached, launch, seconds_each=60)) + "\n")
        attached = store.attach_capture(new_project, outcome.run_id, log)
        assert attached.outcome == store.ATTACHED, attached.message
    recurrence = store.compile_recurrence_of(new_project, list(reversed(run_ids)))
    assert recurrence.runs == 2
    assert recurrence.first_compile_s == pytest.approx(300.0)
    assert recurrence.recurring_s == pytest.approx(0.0)
    assert recurrence.one_off_s == pytest.approx(300.0)


def test_a_capture_attached_to_a_second_run_says_which_run_has_it_too(sample_dir: Path) -> None:
    """The sample's runs share a clock, so run 2's capture overlaps run 1 and may be attached
    there; the outcome names the run that already has it, in the CLI and the app alike."""
    from trntui.store.runs import load_runs
    from trntui.store.telemetry import load_captures

    runs = {Path(s).name: r for r, s in load_runs(sample_dir).select("run_id", "source").rows()}
    first, second = runs["trn3-run1.log"], runs["trn3-run2.log"]
    capture = sample_dir / "logs" / "trn3-example" / "trn3-run2.neuron-monitor.jsonl"
    owners = set(load_captures(sample_dir).filter(pl.col("kind") == "utilization")["run_id"])
    assert second in owners and first in owners
    outcome = store.attach_capture(sample_dir, first, capture)
    assert outcome.outcome == store.ATTACHED
    assert f"also attached to run {second}" in outcome.message
    again = store.attach_capture(sample_dir, first, capture)
    assert again.outcome == store.DUPLICATE


@pytest.mark.parametrize("caller_type", [None, "trn3.48xlarge"])
def test_one_instance_rule_whether_or_not_the_caller_names_the_type(
    sample_dir: Path, caller_type: str | None
) -> None:
    """The CLI names no type, the app names the target's: either way the run's type comes
    from the target measured by its set. A label that is no instance type name is attached
    with a note; a capture from another instance type is refused."""
    from trntui.store.runs import load_runs
    from trntui.store.telemetry import captures_path, load_captures

    runs = {Path(s).name: r for r, s in load_runs(sample_dir).select("run_id", "source").rows()}
    run = runs["trn3-run3.log"]
    kept = load_captures(sample_dir).filter(pl.col("run_id") != run)
    kept.write_parquet(captures_path(sample_dir))
    capture = sample_dir / "logs" / "trn3-example" / "trn3-run3.neuron-monitor.jsonl"
    labelled = capture.read_text()
    assert '"trn3 (example)"' in labelled, "the sample's capture labels its instance"

    outcome = store.attach_capture(sample_dir, run, capture, instance_type=caller_type)
    assert outcome.outcome == store.ATTACHED, outcome.message
    assert "names its instance 'trn3 (example)', not an instance type" in outcome.message

    kept.write_parquet(captures_path(sample_dir))
    other = capture.with_name("from-a-gpu.jsonl")
    other.write_text(labelled.replace('"trn3 (example)"', '"p5.48xlarge"'))
    refused = store.attach_capture(sample_dir, run, other, instance_type=caller_type)
    assert refused.outcome == store.MISMATCH
    assert "(p5.48xlarge) than the run's (trn3.48xlarge)" in refused.message
    assert load_captures(sample_dir).equals(kept), "nothing stored"


@pytest.mark.parametrize("damage", ["{x", '{"format": "neuron-monitor"}', "[]"])
def test_a_damaged_capture_record_is_one_line_naming_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """metadata_json that trntui did not write (here in the sample's captures table): verdict
    ended in a JSONDecodeError, KeyError or TypeError traceback."""
    from tests import copy_sample
    from trntui.cli import main
    from trntui.store.telemetry.captures import captures_path

    root = copy_sample(tmp_path / "sample")
    path = captures_path(root)
    table = pl.read_parquet(path)
    table.with_columns(pl.lit(damage).alias("metadata_json")).write_parquet(path)
    assert main(["verdict", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: a capture's metadata cannot be read" in err
    assert "Traceback" not in err


def test_mfu_uses_the_chips_the_run_set_states(tmp_path: Path, capsys) -> None:
    """The sample's Trainium3 runs: the set states 1 x 16 Trainium3 and the logs give seq/s
    and the sequence length, yet MFU said 'missing: accelerator chips in the run' (it took
    chips from the hardware table, which has no trn3 count)."""
    from tests import copy_sample
    from trntui.cli import main
    from trntui.core.hardware import TRAINIUM3
    from trntui.core.run_facts import run_facts
    from trntui.store.project import read_inventory
    from trntui.store.runs import load_run

    root = copy_sample(tmp_path / "sample")
    run_id = "5ee331c9fa0f575a"
    assert main(["verdict", str(root), "--run", run_id, "--json"]) == 0
    (detail,) = json.loads(capsys.readouterr().out)
    facts = run_facts(load_run(root, run_id))
    model = read_inventory(root).inventory.model
    params, trainable = model.parameters_billion, model.trainable_parameters_billion
    chips = 16  # sets.toml: nodes = 1, accelerators_per_node = 16, Trainium3
    # A LoRA fine-tune: the frozen base runs forward and passes gradients on (4 FLOPs per
    # parameter per token); only the adapters get weight gradients (2 more each).
    flops = (4 * params + 2 * trainable) * 1e9
    expected = flops * facts.steady_tokens_per_s / (chips * TRAINIUM3.bf16_dense_tflops * 1e12)
    assert detail["mfu"]["value"] == pytest.approx(expected)
    assert detail["mfu"]["implausible"] is None


# --- issue 30, items 11, 13 and 15: tables edited by hand ----------------------------------


def _utilization_capture(sample_dir: Path) -> tuple[str, str]:
    """A utilization capture of the sample: (its run id, its capture id)."""
    rows = store.load_captures(sample_dir).filter(pl.col("kind") == "utilization")
    return rows["run_id"][0], rows["capture_id"][0]


@pytest.mark.parametrize(
    "damage",
    [
        lambda samples: samples.drop("value"),
        lambda samples: samples.rename({"metric": "what"}),
        lambda samples: samples.with_columns(pl.lit("high").alias("value")),
    ],
    ids=["column-missing", "column-renamed", "wrong-type"],
)
def test_a_samples_file_with_another_schema_is_refused_naming_it(
    sample_dir: Path, capsys, damage
) -> None:
    from trntui.cli import main

    _, capture_id = _utilization_capture(sample_dir)
    path = store.samples_path(sample_dir, capture_id)
    damage(pl.read_parquet(path)).write_parquet(path)
    assert main(["verdict", str(sample_dir)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{path}: samples table" in err


def test_a_repeated_capture_row_is_refused_and_attach_rewrites_nothing(
    sample_dir: Path, capsys
) -> None:
    """The same row twice made `verdict` count the measured time twice (2,324 s for a run of
    1,373 s); `telemetry` rewrote the table `verdict` refused."""
    from trntui.cli import main

    path = store.captures_path(sample_dir)
    table = pl.read_parquet(path)
    pl.concat([table, table.head(1)]).write_parquet(path)
    damaged = path.read_bytes()
    assert main(["verdict", str(sample_dir)]) == 2
    assert f"row {table.height + 1} repeats run_id" in capsys.readouterr().err
    capture = sample_dir / "logs" / "trn3-example" / "trn3-run2.neuron-monitor.jsonl"
    assert main(["telemetry", str(sample_dir), str(capture), "--run", table["run_id"][0]]) == 2
    assert "repeats" in capsys.readouterr().err
    assert path.read_bytes() == damaged
