"""``trntui estimate``, ``report`` and ``scenario`` on a project with imported Megatron logs."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import shutil
from pathlib import Path

import pytest

from tests.loggen import MegatronSpec, write_megatron
from tests.test_estimate import TRN, book, inventory
from trntui.commands import estimate as commands
from trntui.commands import scenario as scenario_commands
from trntui.store.project import Project, init_project
from trntui.store.quotes import add_quotes, add_rates, remove_quote
from trntui.store.run_import import import_paths

GLOBAL_BATCH = 256
TRN_STEP_TIMES = (2.0, 2.3, 2.6)


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="trntui")
    subparsers = parser.add_subparsers()
    commands.register(subparsers)
    scenario_commands.register(subparsers)
    args = parser.parse_args(list(argv))
    return args.func(args)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("cli")
    root = base / "project"
    init_project(root)
    logs = base / "logs"
    logs.mkdir()
    for i, step in enumerate(TRN_STEP_TIMES):
        spec = MegatronSpec(seed=10 + i, step_time_s=step, train_iters=800, crash_at=None,
                            stall_at=None, global_batch=GLOBAL_BATCH)  # fmt: skip
        write_megatron(logs / f"trn{i}.log", spec)
        gpu = MegatronSpec(seed=i, step_time_s=1.0, train_iters=800, crash_at=None, stall_at=None)
        write_megatron(logs / f"gpu{i}.log", gpu)
    import_paths(root, [logs / f"trn{i}.log" for i in range(3)], set_name="trn")
    import_paths(root, [logs / f"gpu{i}.log" for i in range(3)], set_name="gpu")
    inv = inventory()
    goal = dataclasses.replace(
        inv.goal, work_amount=204800.0, quality_metric="validation lm loss", quality_threshold=3.0
    )
    # The generated Megatron logs print a world size of 8: two instances of 4 (stated).
    targets = tuple(
        dataclasses.replace(t, accelerators_per_instance=4) if t.name == TRN
        else t
        for t in inv.targets
    )  # fmt: skip
    # Megatron logs carry no job clock: the time outside them is stated.
    software = dataclasses.replace(inv.software, launch_minutes=2.0)
    with Project.open(root) as project:
        project.save_inventory(
            dataclasses.replace(inv, goal=goal, targets=targets, software=software)
        )
    quotes = book()
    add_quotes(root, list(quotes.quotes))
    add_rates(root, list(quotes.rates))
    write_megatron(base / "extra.log", MegatronSpec(seed=99, step_time_s=3.0, train_iters=800,
                                                     crash_at=None, stall_at=None))  # fmt: skip
    return root


@pytest.fixture
def project(built, tmp_path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(built, copy)
    return copy


def test_estimate_json_has_every_term_and_provenance(project, capsys):
    assert cli("estimate", str(project), "--json") == 0
    document = json.loads(capsys.readouterr().out)
    trn = next(t for t in document["targets"] if t["name"] == TRN)
    keys = ("total_usd", "incomplete_inputs", "instance_hours", "instance_usd", "storage_usd",
            "transfer_usd", "logs_usd", "data_prep_usd", "retries_usd")  # fmt: skip
    assert all(key in trn for key in keys)
    assert trn["incomplete_inputs"] == []
    terms = sum(trn[k] for k in ("instance_usd", "storage_usd", "transfer_usd", "logs_usd",
                                 "data_prep_usd", "retries_usd"))  # fmt: skip
    assert trn["total_usd"] == pytest.approx(terms)
    throughput = trn["inputs"]["steady_throughput"]
    assert throughput["provenance"] == "measured"
    assert throughput["source"] == "trn"
    # the median run of the simulated set ran at 256 samples / 2.3 s
    assert throughput["value"] == pytest.approx(GLOBAL_BATCH / 2.3, rel=0.03)
    assert throughput["low"] == pytest.approx(GLOBAL_BATCH / 2.6, rel=0.03)
    assert trn["inputs"]["usd_per_hour"]["provenance"] == "quoted"
    assert trn["inputs"]["work_amount"]["provenance"] == "assumption"
    # training hours: the goal's samples at the measured pace, on 2 instances
    training = next(s for s in trn["stages"] if s["key"] == "training_h")
    assert training["hours_per_instance"] == pytest.approx(204800 / throughput["value"] / 3600)
    assert training["usd"] == pytest.approx(training["hours_per_instance"] * 2 * 10.0)


def test_estimate_json_total_is_null_when_a_price_is_unknown(project, capsys):
    remove_quote(project, ("trn3.48xlarge", "us-east-1", "on-demand", True))
    assert cli("estimate", str(project), "--json") == 0
    document = json.loads(capsys.readouterr().out)
    trn = next(t for t in document["targets"] if t["name"] == TRN)
    assert trn["total_usd"] is None
    assert trn["incomplete_inputs"] == ["Instance price"]
    assert trn["inputs"]["usd_per_hour"]["provenance"] == "unknown"
    assert document["comparison"]["cost_ratio"] is None
    assert document["comparison"]["decision"] == "pause"


def test_estimate_text(project, capsys):
    assert cli("estimate", str(project)) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = lines.index("Trainium3 trial: 2 x trn3.48xlarge, us-east-1, on-demand")
    assert lines[header + 1].split() == ["total", lines[header + 1].split()[-1]]
    assert lines[header + 1].split()[-1].startswith("$")
    assert lines[header + 2].split()[:3] == ["next", "training", "P10-P90"]
    assert lines[header + 2].endswith("(t, n=3)")
    assert "Training (steady useful work)" in lines[header + 5]
    assert "Decision:" in out
    assert "Porting risks: 10 days over 1 open risk, kept apart from the totals" in out


def test_report_files(project, tmp_path, capsys):
    md, js, cs = tmp_path / "r.md", tmp_path / "r.json", tmp_path / "r.csv"
    assert cli("report", str(project), "--format", "md", "-o", str(md)) == 0
    assert cli("report", str(project), "--format", "json", "-o", str(js)) == 0
    assert cli("report", str(project), "--format", "csv", "-o", str(cs)) == 0
    text = md.read_text()
    for heading in ("# Training cost estimate", "## Summary", "## Formula",
                    "## Price quotes", "## Sensitivity over the range seen in the repeated runs",
                    "## Trainium3 vs GPU", "## Porting risks", "## Caveats"):  # fmt: skip
        assert heading in text
    assert "| Useful throughput |" in text
    assert "manual: test price for trn3.48xlarge, dated 2026-11-20" in text
    assert "trn3.48xlarge/us-east-1/on-demand/manual" in text
    assert "**Decision:" in text
    document = json.loads(js.read_text())
    band = document["targets"][0]["band"]
    assert band["runs"] == 3 and band["method"].startswith("t prediction interval")
    assert band["p10_usd"] < document["targets"][0]["total_usd"] < band["p90_usd"]
    assert document["formula"].startswith("cost = instance price x billed time")
    assert document["quotes"][0]["retrieved_at"].startswith("2026-11-20")
    rows = list(csv.DictReader(io.StringIO(cs.read_text())))
    totals = {r["target"]: r["value"] for r in rows if r["section"] == "total"
              and r["item"] == "total_usd"}  # fmt: skip
    assert float(totals[TRN]) == pytest.approx(document["targets"][0]["total_usd"])
    assert any(r["section"] == "sensitivity_swing" for r in rows)
    assert any(r["section"] == "risk" and r["unit"] == "days" for r in rows)
    # The back-test of each target's run set: the generated runs are reproduced by the model
    # (their clocks hold no hidden time), from the first log line (no job clock in Megatron).
    tests = {b["run_set"]: b for b in document["backtests"]}
    assert set(tests) == {"trn", "gpu"}
    assert tests["trn"]["runs"] == 3 and not tests["trn"]["from_launch"]
    assert abs(tests["trn"]["gap"]) < 0.03 and not tests["trn"]["flagged"]
    assert "## Back-test" in text and "| trn | 3 | model " in text
    assert "Launch + teardown outside logs" in text


def test_scenario_save_list_show_diff(project, capsys):
    assert cli("scenario", "save", str(project), "base", "--note", "as measured") == 0
    assert cli("scenario", "save", str(project), "fast", "--set", f"{TRN}:steady_throughput=200",
               "--why", "SDK 2.x kernels", "--who", "bob") == 0  # fmt: skip
    assert (project / "scenarios" / "fast.toml").is_file()
    capsys.readouterr()
    assert cli("scenario", "list", str(project), "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in listed] == ["base", "fast"]
    assert cli("scenario", "show", str(project), "fast", "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    trn = next(t for t in shown["targets"] if t["name"] == TRN)
    assert trn["inputs"]["steady_throughput"]["value"] == 200.0
    assert trn["inputs"]["steady_throughput"]["source"] == "bob"
    assert shown["stale"] == []
    assert cli("scenario", "diff", str(project), "base", "fast", "--json") == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    throughput = next(c for c in changes if c["item"] == "Useful throughput")
    assert throughput["b"] == 200.0
    assert throughput["delta"] == pytest.approx(200.0 - throughput["a"])
    assert any(c["item"] == "total_usd" and c["delta"] < 0 for c in changes)


def test_scenario_diff_against_the_project_now_shows_the_overrides(project, capsys):
    """A snapshot whose override makes every total differ is not 'No difference' from the
    project now: the override is listed, then the input and the totals it moved."""
    assert cli("scenario", "save", str(project), "fast", "--set", f"{TRN}:steady_throughput=200",
               "--why", "SDK 2.x kernels", "--who", "bob") == 0  # fmt: skip
    capsys.readouterr()
    assert cli("scenario", "diff", str(project), "fast") == 0
    out = capsys.readouterr().out
    assert "No difference" not in out
    lines = out.splitlines()
    assert lines.pop(0) == "Working scenario: no override (working_scenario.toml)"
    assert lines[0] == f"{TRN}: override: Useful throughput: 200 -> absent"
    assert lines[1] == "    was bob: SDK 2.x kernels; now not set"
    assert any(line.startswith(f"{TRN}: Useful throughput: 200 -> ") for line in lines)
    assert any(line.startswith(f"{TRN}: Total: ") for line in lines)
    assert cli("scenario", "diff", str(project), "fast", "--json") == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    override = changes[0]
    assert (override["item"], override["a"], override["b_absent"]) == (
        "override: Useful throughput",
        200.0,
        True,
    )


def test_scenario_opens_stale_after_a_new_run(built, project, capsys):
    assert cli("scenario", "save", str(project), "base") == 0
    outcomes = import_paths(project, [built.parent / "extra.log"], set_name="trn")
    assert [o.outcome for o in outcomes] == ["added"]
    capsys.readouterr()
    assert cli("scenario", "show", str(project), "base") == 0
    out = capsys.readouterr().out
    assert "STALE: run set 'trn' changed: 1 run added, 0 removed" in out


def test_scenario_report(project, tmp_path):
    assert cli("scenario", "save", str(project), "base") == 0
    out = tmp_path / "r.md"
    assert cli("report", str(project), "--scenario", "base", "--format", "md", "-o", str(out)) == 0
    assert "scenario **base**" in out.read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", f"{TRN}:steady_throughput=0", "--why", "x"], "must be above 0"),
        (["--set", f"{TRN}:steady_throughput=2"], "say why"),
        (["--set", "bogus=1", "--why", "x"], "unknown input"),
        (["--set", f"{TRN}:startup_s=-1", "--why", "x"], "cannot be negative"),
    ],
)
def test_bad_overrides_exit_2_and_save_nothing(project, capsys, argv, message):
    assert cli("scenario", "save", str(project), "bad", *argv) == 2
    assert message in capsys.readouterr().err
    assert not (project / "scenarios" / "bad.toml").exists()


def test_unknown_scenario_exits_2(project, capsys):
    assert cli("estimate", str(project), "--scenario", "nope") == 2
    assert "no scenario 'nope'" in capsys.readouterr().err


def test_run_facts_are_derived_once_per_import(built, project):
    from trntui.store.project import read_inventory
    from trntui.store.project_store import ProjectStore

    inv = read_inventory(project).inventory
    with ProjectStore.open(project) as store:
        first = store.derive_and_store_observations(inv).frame
        assert store.derive_and_store_observations(inv).frame is first  # an edit: runs untouched
        import_paths(project, [built.parent / "extra.log"], set_name="trn")
        again = store.derive_and_store_observations(inv).frame
    assert again is not first and again.height == first.height + 1


def test_saving_over_an_existing_scenario_needs_replace(sample_dir, capsys):
    from trntui.cli import main

    root = sample_dir
    path = root / "scenarios" / "as-measured.toml"
    before = path.read_bytes()
    assert main(["scenario", "save", str(root), "as-measured"]) == 2
    assert "already saved" in capsys.readouterr().err
    assert path.read_bytes() == before
    assert main(["scenario", "save", str(root), "as-measured", "--replace"]) == 0
    assert path.read_bytes() != before


def test_the_sample_on_another_instance_count_names_both_sizes(tmp_path, capsys):
    """The sample's GPU runs were measured on 1 node x 8 H100 (systems/1xBM.GPU.H100.8.json):
    priced on 2 x p5.48xlarge they do not apply, and the estimate says why."""
    sample = Path(__file__).resolve().parents[1] / "sample_runs" / "llama2-70b-lora"
    root = tmp_path / "sample"
    shutil.copytree(sample, root, ignore=shutil.ignore_patterns(".trntui.lock"))
    assert cli("estimate", str(root), "--json") == 0
    gpu = next(t for t in json.loads(capsys.readouterr().out)["targets"] if "GPU" in t["name"])
    assert gpu["total_usd"] is not None
    with Project.open(root) as project:
        targets = tuple(
            dataclasses.replace(t, instance_count=2) if "GPU" in t.name else t
            for t in project.inventory.targets
        )
        project.save_inventory(dataclasses.replace(project.inventory, targets=targets))
    assert cli("estimate", str(root)) == 0
    text = capsys.readouterr().out
    assert "incomplete: Useful throughput" in text
    assert (
        "measured on 1 x 8 NVIDIA H100-SXM5-80GB = 8; target is 2 x p5.48xlarge "
        "(8 NVIDIA H100 each) = 16" in text
    )


def test_example_data_is_marked_in_the_plain_and_the_json_estimate(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trntui.cli import main

    assert main(["estimate", str(sample_dir)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("EXAMPLE DATA")
    assert main(["estimate", str(sample_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["example"] is True


@pytest.mark.parametrize(
    "inside", ["trntui.toml", "prices/quotes.toml", "runs/runs.parquet", "scenarios/new.md"]
)
def test_a_report_never_replaces_the_projects_own_files(project, capsys, inside):
    """`report -o` over a project's data (here the one reported on) is refused and changes
    nothing; a report next to trntui.toml is fine."""
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    target = project / inside
    assert cli("report", str(project), "--format", "md", "-o", str(target)) == 2
    assert "is part of the project" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
    beside = project / "report.md"
    assert cli("report", str(project), "--format", "md", "-o", str(beside)) == 0
    assert beside.read_text().startswith("# Training cost estimate")


def test_a_report_into_a_missing_folder_creates_nothing(project, tmp_path, capsys):
    target = tmp_path / "no" / "such" / "r.md"
    assert cli("report", str(project), "--format", "md", "-o", str(target)) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_the_estimate_text_flags_a_doubtful_price_beside_its_total(tmp_path, capsys):
    """price list flagged an implausible price; the estimate printed its total without a word
    (a hand edit of 4000 for 40 gave $2,195.84)."""
    from tests import copy_sample

    root = copy_sample(tmp_path / "sample")
    path = root / "prices" / "quotes.toml"
    text = path.read_text()
    assert "usd_per_hour = 40.0" in text
    path.write_text(text.replace("usd_per_hour = 40.0", "usd_per_hour = 4000.0", 1))
    assert cli("estimate", str(root)) == 0
    lines = capsys.readouterr().out.splitlines()
    flagged = [n for n, line in enumerate(lines) if line.startswith("  price: implausible price")]
    assert len(flagged) == 1
    header = max(n for n, line in enumerate(lines[: flagged[0]]) if not line.startswith(" "))
    assert "trn3.48xlarge" in lines[header]
