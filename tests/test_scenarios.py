"""Scenario snapshots: save, reopen with the recorded values, stale flags, list and diff."""

from __future__ import annotations

import dataclasses
import tomllib
from datetime import date
from pathlib import Path

import pytest
import tomli_w

from tests.test_estimate import GPU, TRN, book, context, gpu_runs, inventory, run, trn_runs
from trntui.core.errors import UserError
from trntui.core.estimate import InvalidInputError, Override, estimate
from trntui.core.inventory import Distribution
from trntui.store.project import init_project
from trntui.store.scenarios import (
    ScenarioNotFound,
    diff_scenarios,
    list_scenarios,
    load_scenario,
    save_scenario,
    scenario_path,
    staleness,
)

FASTER = Override("steady_throughput", 4.0, TRN, who="bob", why="SDK 2.x kernels")


@pytest.fixture(autouse=True)
def _project(tmp_path: Path) -> None:
    """Scenarios live in a project: the store refuses to write anywhere else."""
    init_project(tmp_path)


def test_save_and_reopen_round_trip(tmp_path):
    ctx = context()
    saved = save_scenario(tmp_path, "faster", ctx, [FASTER], note="what if", saved_by="alice")
    path = scenario_path(tmp_path, "faster")
    assert path.is_file()
    reopened = load_scenario(tmp_path, "faster")
    assert reopened.overrides == (FASTER,)
    assert reopened.note == "what if" and reopened.saved_by == "alice"
    expected = estimate(ctx, [FASTER])
    for name in (TRN, GPU):
        assert reopened.estimate().target(name).total_usd == pytest.approx(
            expected.target(name).total_usd
        )
        assert reopened.saved_totals[name] == pytest.approx(expected.target(name).total_usd)
    assert saved.saved_totals == reopened.saved_totals
    assert staleness(reopened, ctx) == ()


def test_a_snapshot_from_before_the_checkpoint_input_reads_as_it_was_saved(tmp_path):
    """Saved when unlogged checkpoint saves counted 0: reopening keeps that, visibly."""
    plan = Distribution(global_batch_size=8, checkpoint_interval_steps=100)
    ctx = context(inventory(distribution=plan))
    saved = save_scenario(tmp_path, "old", ctx)
    path = scenario_path(tmp_path, "old")
    document = tomllib.loads(path.read_text())
    assert {row["key"] for row in document["inputs"]} >= {"checkpoint_s"}
    # Rewrite it as the previous version wrote it: no checkpoint input, totals without it.
    document["inputs"] = [row for row in document["inputs"] if row["key"] != "checkpoint_s"]
    before = estimate(ctx, [Override("checkpoint_s", 0.0, name) for name in (TRN, GPU)])
    for row in document["result"]:
        row["total_usd"] = before.target(row["target"]).total_usd
    path.write_text(tomli_w.dumps(document))
    assert saved.estimate().target(TRN).total_usd is None, "today's rule: unknown save time"
    reopened = load_scenario(tmp_path, "old")
    added = [o for o in reopened.overrides if o.input == "checkpoint_s"]
    assert {o.target for o in added} == {TRN, GPU}
    assert all(o.value == 0.0 and o.who == "trntui" and "before" in o.why for o in added)
    for name in (TRN, GPU):
        total = reopened.estimate().target(name).total_usd
        assert total == pytest.approx(reopened.saved_totals[name])


def test_file_keeps_inputs_quotes_and_runs_by_id_and_value(tmp_path):
    save_scenario(tmp_path, "base", context())
    text = scenario_path(tmp_path, "base").read_text()
    assert 'id = "trn3.48xlarge/us-east-1/on-demand/manual"' in text
    assert "usd_per_hour = 10.0" in text
    assert 'name = "trn"' in text and "run_ids = [" in text
    assert 'kind = "measured"' in text
    assert "steady_throughput = 3.0" in text  # a run's own fact, not only the median


def test_snapshot_still_opens_flagged_stale_when_quotes_and_runs_change(tmp_path):
    save_scenario(tmp_path, "base", context())
    changed = context(
        quotes=book(trn_price=12.5),
        runs=[*trn_runs(), run("trn", throughput=9.0, run_id="new"), *gpu_runs()],
    )
    reopened = load_scenario(tmp_path, "base")
    # the snapshot's own numbers are the ones it was saved with
    assert reopened.estimate().target(TRN).input("usd_per_hour").value == 10.0
    notes = staleness(reopened, changed)
    assert any("run set 'trn' changed: 1 run added, 0 removed" in n for n in notes)
    assert any("Instance price 10 -> 12.5" in n for n in notes)


def test_a_change_in_the_seventh_digit_is_shown_as_two_numbers(tmp_path):
    """A price that changed past six significant digits was said as "10 -> 10": the note
    shows as many digits as tell the two apart."""
    save_scenario(tmp_path, "base", context())
    notes = staleness(load_scenario(tmp_path, "base"), context(quotes=book(trn_price=10.0000004)))
    assert any("Instance price 10 -> 10.0000004" in n for n in notes), notes


def test_overrides_that_no_longer_apply_are_flagged(tmp_path):
    save_scenario(tmp_path, "faster", context(), [FASTER])
    inv = inventory()
    renamed = dataclasses.replace(inv.targets[0], name="Trn3 renamed")
    current = context(inv=dataclasses.replace(inv, targets=(renamed, inv.targets[1])))
    notes = staleness(load_scenario(tmp_path, "faster"), current)
    assert any("no longer apply" in n for n in notes)


def test_diff_shows_what_changed_and_by_how_much(tmp_path):
    a = save_scenario(tmp_path, "a", context())
    b = save_scenario(tmp_path, "b", context(), [FASTER])
    rows = diff_scenarios(load_scenario(tmp_path, "a"), load_scenario(tmp_path, "b"))
    by_item = {(r.target, r.item): r for r in rows}
    throughput = by_item[(TRN, "Useful throughput")]
    assert (throughput.a, throughput.b, throughput.delta) == (2.0, 4.0, 2.0)
    assert throughput.delta_pct == pytest.approx(100.0)
    assert "measured" in throughput.a_note and "bob" in throughput.b_note
    total = by_item[(TRN, "total_usd")]
    assert total.delta == pytest.approx(b.saved_totals[TRN] - a.saved_totals[TRN])
    assert not any(r.target == GPU for r in rows)


def test_list_scenarios(tmp_path):
    assert list_scenarios(tmp_path) == []
    save_scenario(tmp_path, "b", context(), note="second")
    save_scenario(tmp_path, "a", context(quotes=book(trn_price=None)))
    infos = list_scenarios(tmp_path)
    assert [i.name for i in infos] == ["a", "b"]
    assert infos[0].totals[TRN] is None  # incomplete stays unknown, not 0
    assert infos[1].note == "second"


def test_bad_names_and_missing_scenarios(tmp_path):
    with pytest.raises(UserError, match="not a usable scenario name"):
        save_scenario(tmp_path, "../escape", context())
    with pytest.raises(ScenarioNotFound, match="no scenario 'nope'"):
        load_scenario(tmp_path, "nope")


def test_invalid_override_is_never_saved(tmp_path):
    with pytest.raises(InvalidInputError):
        save_scenario(tmp_path, "bad", context(), [Override("steady_throughput", 0.0, TRN)])
    assert not scenario_path(tmp_path, "bad").exists()


def test_a_quote_that_aged_since_the_snapshot_is_flagged(tmp_path):
    save_scenario(tmp_path, "base", context())
    later = dataclasses.replace(context(), today=date(2027, 3, 1))
    notes = staleness(load_scenario(tmp_path, "base"), later)
    assert any(n.startswith(f"{TRN}: price is 101 days old") for n in notes)


def test_newer_or_broken_files_are_refused_with_a_message(tmp_path):
    save_scenario(tmp_path, "base", context())
    path = scenario_path(tmp_path, "base")
    path.write_text(path.read_text().replace("schema_version = 1", "schema_version = 9"))
    with pytest.raises(UserError, match="newer trntui"):
        load_scenario(tmp_path, "base")
    (tmp_path / "scenarios" / "broken.toml").write_text("name = [")
    infos = {i.name: i for i in list_scenarios(tmp_path)}
    assert infos["broken"].note.startswith("unreadable:")


def test_a_target_added_since_the_snapshot_is_stale_news_and_absent_in_the_diff(tmp_path):
    from trntui.store.scenarios import ABSENT, diff_estimates

    save_scenario(tmp_path, "before", context())
    inv = inventory()
    extra = dataclasses.replace(inv.targets[1], name="GPU two")
    current = context(inv=dataclasses.replace(inv, targets=(*inv.targets, extra)))
    reopened = load_scenario(tmp_path, "before")
    notes = staleness(reopened, current)
    assert "target 'GPU two' was added since the snapshot (not in it)" in notes
    (row,) = [r for r in diff_estimates(reopened.estimate(), estimate(current)) if r.a_absent]
    assert (row.target, row.item) == ("GPU two", "target")
    assert row.shown("a", str) == ABSENT and row.shown("b", lambda v: f"{v:.2f}") != ABSENT


DAMAGE = [
    ('total_usd = "cheap"', "result", "total_usd", None),
    ('saved_at = "whenever"', "", "saved_at", "saved_at"),
    ('today = "x"', "", "today", "today"),
    ('steady_throughput = "fast"', "run", "steady_throughput", "run[0].steady_throughput"),
    ('counted = "yes"', "run", "counted", "run[0].counted"),
    ("restarts = 1.5", "run", "restarts", "run[0].restarts"),
]


@pytest.mark.parametrize(("edit", "table", "key", "named"), DAMAGE)
def test_a_hand_edited_snapshot_is_refused_at_its_line(tmp_path, capsys, edit, table, key, named):
    """A value of the wrong type in a snapshot gave tracebacks (ValueError, TypeError,
    polars' ComputeError) from list, show and report; now the line and key, and `scenario list`
    still lists the others."""
    from tests import copy_sample
    from trntui.cli import main

    root = copy_sample(tmp_path / "sample")
    path = root / "scenarios" / "as-measured.toml"
    lines = path.read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith(f"{key} = "))
    lines[at] = edit
    path.write_text("\n".join(lines) + "\n")
    assert main(["scenario", "show", str(root), "as-measured"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{at + 1}:" in err and "Traceback" not in err
    if named:
        assert f"key '{named}'" in err
    assert main(["scenario", "list", str(root)]) == 0
    listed = capsys.readouterr().out
    assert f"unreadable: {path}:{at + 1}" in listed and "bf16-attention" in listed


def test_a_source_that_changed_under_the_same_value_is_not_a_change_of_value(tmp_path):
    """Renaming the project's owner changes the source of every assumption: the snapshot read
    'Work to finish 3,072 -> 3,072' and 'Instances 1 -> 1'. It now says the value is the same
    and the source changed; a changed value still reads 'a -> b'."""
    ctx = context()
    save_scenario(tmp_path, "base", ctx)
    inventory = ctx.inventory
    owned = dataclasses.replace(
        inventory, project=dataclasses.replace(inventory.project, owner="someone else")
    )
    notes = staleness(load_scenario(tmp_path, "base"), dataclasses.replace(ctx, inventory=owned))
    assert notes, "the sources changed: the snapshot no longer says where each came from"
    assert not any(" -> " in n for n in notes)
    # One note for every input credited to the new name (the review saw 25 lines of it),
    # counting them: each assumption of each target.
    credited = [n for n in notes if "now credited to 'someone else'" in n]
    assumptions = [
        f"{t.name}: {i.label}"
        for t in load_scenario(tmp_path, "base").estimate().targets
        for i in t.inputs
        if i.provenance.kind == "assumption"
    ]
    assert len(credited) == 1 and len(notes) == 1, notes
    assert credited[0].startswith(f"{len(assumptions)} inputs keep their values"), credited
    assert assumptions[0] in credited[0] and f"and {len(assumptions) - 3} more" in credited[0]


def test_the_work_to_the_target_is_varied_over_what_the_verified_runs_needed(tmp_path):
    """Two of the sample's ten MLPerf runs stopped at 3,456 samples, the others at 3,072 (their
    run_stop lines): the goal's 3,072 was never varied. Now the GPU target's work is varied
    from 3,072 x min/median to 3,072 x max/median, as the report's sensitivity shows; the
    Trainium3 set (no spread) says why not."""
    import json
    import re
    import statistics

    from tests import copy_sample
    from trntui.core.sensitivity import sensitivity
    from trntui.store.estimate_context import derive_and_store_context

    root = copy_sample(tmp_path / "sample")
    logs = sorted((root / "logs" / "mlperf-v4.0").rglob("result_*.txt"))
    stops = []
    for log in logs:
        line = next(x for x in log.read_text().splitlines() if '"key": "run_stop"' in x)
        event = json.loads(re.sub(r"^.*?:::MLLOG ", "", line))
        assert event["metadata"]["status"] == "success"
        stops.append(event["metadata"]["samples_count"])
    assert len(set(stops)) > 1
    ctx = derive_and_store_context(root)
    result = estimate(ctx)
    gpu = next(t for t in result.targets if t.target.run_set == "gpu-1x8h100-mlperf-v4.0")
    work = gpu.input("work_amount")
    goal = ctx.inventory.goal.work_amount
    middle = statistics.median(stops)
    assert work.value == goal
    assert (work.low, work.high) == pytest.approx(
        (goal * min(stops) / middle, goal * max(stops) / middle)
    )
    bars = next(s for s in sensitivity(result) if s.target == gpu.name)
    bar = next(b for b in bars.bars if b.key == "work_amount")
    at_high = estimate(ctx, [Override("work_amount", work.high, None, who="t", why="x")])
    assert bar.total_at_high == pytest.approx(at_high.target(gpu.name).total_usd)
    trn = next(s for s in sensitivity(result) if s.target != gpu.name)
    assert any(label == work.label for label, _ in trn.not_varied)


def test_scenario_diff_says_a_value_from_another_source_is_the_same(sample_dir, capsys):
    """After the owner's rename, ``scenario diff`` listed each assumption as
    '3,072 -> 3,072 (+0, +0.0%)': now as the same value from another source."""
    from trntui.cli import main
    from trntui.store.project import Project

    with Project.open(sample_dir) as project:
        inventory = project.inventory
        renamed = dataclasses.replace(inventory.project, owner="alice")
        project.save_inventory(dataclasses.replace(inventory, project=renamed))
    assert main(["scenario", "diff", str(sample_dir), "as-measured"]) == 0
    out = capsys.readouterr().out
    assert "Work to finish: 3,072 -> 3,072 (the same value, from another source)" in out, out
    assert "(+0, +0.0%)" not in out and "assumption: alice" in out
