"""Derived run facts are stored (``runs/facts.parquet``) and read back instead of derived again,
while everything they depend on is unchanged; otherwise they are derived again."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest

from tests import MLPERF_DATA, loggen
from trntui.cli import main
from trntui.core.quality import QualityTarget, RecordedQuality
from trntui.core.run_facts import facts_from_json, facts_to_json, run_facts
from trntui.importers import import_file
from trntui.store import facts as stored_facts
from trntui.store.estimate_context import derive_and_store_observations
from trntui.store.facts import derive_and_store_facts, derive_and_store_runs, facts_path
from trntui.store.project import Project, read_inventory
from trntui.store.quality import load_recorded_quality, record_quality
from trntui.store.run_import import import_paths
from trntui.store.runs import load_run

MLPERF_LOGS = sorted(MLPERF_DATA.rglob("result_*.txt"))[:6]


def goal(root: Path) -> tuple[QualityTarget | None, int | None]:
    inventory = read_inventory(root).inventory
    return inventory.goal.quality_target(), inventory.planned_steps()


def count_timeline_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []

    def counting(root: Path, run_id: str, runs: pl.DataFrame | None = None):
        reads.append(run_id)
        return load_run(root, run_id, runs)

    monkeypatch.setattr(stored_facts, "load_run", counting)
    return reads


@pytest.mark.parametrize("log", MLPERF_LOGS, ids=lambda p: p.parent.name + "/" + p.name)
def test_stored_facts_read_back_equal_to_the_derived_ones(log: Path) -> None:
    target = QualityTarget("eval_accuracy", 0.5, True)
    for facts in (run_facts(import_file(log)), run_facts(import_file(log), target, 10)):
        assert facts_from_json(facts_to_json(facts)) == facts
    with pytest.raises(ValueError, match="not stored run facts"):
        facts_from_json('{"status": "succeeded"}')


def test_an_import_stores_the_facts_and_the_next_open_reads_no_timeline(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts_path(sample_dir).unlink()
    outcomes = import_paths(sample_dir, MLPERF_LOGS[:2], set_name="mlperf")
    assert {o.outcome for o in outcomes} == {"added"}
    stored = pl.read_parquet(facts_path(sample_dir))
    run_ids = set(pl.read_parquet(sample_dir / "runs" / "runs.parquet")["run_id"])
    assert set(stored["run_id"]) == run_ids

    target, planned = goal(sample_dir)
    recorded = load_recorded_quality(sample_dir)
    by_derivation = {
        run_id: run_facts(load_run(sample_dir, run_id), target, planned, recorded.get(run_id))
        for run_id in run_ids
    }
    reads = count_timeline_reads(monkeypatch)
    assert derive_and_store_facts(sample_dir, target, planned) == by_derivation
    assert reads == []


def count_derivations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``run_facts`` call of an import (the runs table's and the facts table's: both
    take it from ``trntui.core.run_facts`` when they derive)."""
    import trntui.core.run_facts as rules

    calls: list[str] = []

    def counting(run, *args, **kwargs):
        calls.append(run.metadata.sha256)
        return run_facts(run, *args, **kwargs)

    monkeypatch.setattr(rules, "run_facts", counting)
    return calls


def test_an_import_without_a_goal_derives_each_run_once_and_reads_no_timeline_back(
    new_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    megatron = tmp_path / "logs" / "megatron.log"
    megatron.parent.mkdir()
    loggen.write_megatron(megatron)
    assert goal(new_project) == (None, None)
    reads = count_timeline_reads(monkeypatch)
    calls = count_derivations(monkeypatch)
    outcomes = import_paths(new_project, [megatron, *MLPERF_LOGS[:2]])
    assert [o.outcome for o in outcomes] == ["added"] * 3
    assert reads == []
    assert sorted(calls) == sorted(set(calls)) and len(calls) == 3
    monkeypatch.undo()
    # What the import stored is what deriving from the stored timelines gives.
    by_import = pl.read_parquet(facts_path(new_project)).sort("run_id")
    facts_path(new_project).unlink()
    again = derive_and_store_runs(new_project, None, None)
    assert again.derived == 3
    assert pl.read_parquet(facts_path(new_project)).sort("run_id").equals(by_import)


def test_an_import_with_a_goal_derives_against_it_from_memory(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, planned = goal(sample_dir)
    assert target is not None
    reads = count_timeline_reads(monkeypatch)
    calls = count_derivations(monkeypatch)
    (outcome,) = import_paths(sample_dir, MLPERF_LOGS[:1], set_name="mlperf")
    assert outcome.outcome == "added" and reads == []
    assert len(calls) == 2, "the runs table's facts are without the goal, the stored ones with it"
    monkeypatch.undo()
    stored = derive_and_store_facts(sample_dir, target, planned)[outcome.run_id]
    run = load_run(sample_dir, outcome.run_id)
    assert stored == run_facts(run, target, planned) != run_facts(run)


def test_facts_are_derived_again_when_the_goal_or_a_recorded_result_changes(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, planned = goal(sample_dir)
    derive_and_store_runs(sample_dir, target, planned)  # stored
    reads = count_timeline_reads(monkeypatch)
    stricter = dataclasses.replace(target, threshold=target.threshold * 0.5)
    again = derive_and_store_runs(sample_dir, stricter, planned)
    assert again.derived == len(again.runs) == len(reads) > 0
    assert all(run.facts.quality_target == stricter for run in again)
    assert again.note is None, "the rules did not change, the goal did"

    reads.clear()
    run_id = again.runs[0].run_id
    record_quality(sample_dir, run_id, None)  # removing nothing recorded changes nothing
    assert derive_and_store_runs(sample_dir, stricter, planned).derived == 0
    record_quality(sample_dir, run_id, RecordedQuality(0.1, "a re-run of the evaluation"))
    third = derive_and_store_runs(sample_dir, stricter, planned)
    assert reads == [run_id] and third.derived == 1


def test_a_rule_change_derives_every_run_again_and_says_so(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, planned = goal(sample_dir)
    first = derive_and_store_runs(sample_dir, target, planned)
    monkeypatch.setattr(stored_facts, "FACTS_VERSION", stored_facts.FACTS_VERSION + 1)
    again = derive_and_store_runs(sample_dir, target, planned)
    assert again.by_new_rules == again.derived == len(first.runs)
    assert again.note == f"facts of {len(first.runs)} runs derived again: the rules changed"
    assert derive_and_store_runs(sample_dir, target, planned).derived == 0, (
        "stored under the new rules"
    )


def test_a_damaged_or_foreign_table_is_rebuilt_not_trusted(sample_dir: Path) -> None:
    target, planned = goal(sample_dir)
    truth = {run.run_id: run.facts for run in derive_and_store_runs(sample_dir, target, planned)}
    path = facts_path(sample_dir)
    table = pl.read_parquet(path)
    lied = json.loads(table["facts_json"][0])
    lied["steady_throughput"] = 1e9
    # Rows under a key nothing has today (a hand edit, a merge of two branches' tables), a
    # garbled file and a missing column: each is derived again, never read.
    table.with_columns(pl.lit(json.dumps(lied)).alias("facts_json")).with_columns(
        pl.lit("0" * 32).alias("key")
    ).write_parquet(path)
    assert {r.run_id: r.facts for r in derive_and_store_runs(sample_dir, target, planned)} == truth
    path.write_bytes(b"PAR1 not really")
    assert {r.run_id: r.facts for r in derive_and_store_runs(sample_dir, target, planned)} == truth
    table.drop("limit").write_parquet(path)
    assert {r.run_id: r.facts for r in derive_and_store_runs(sample_dir, target, planned)} == truth
    assert pl.read_parquet(path).columns == list(stored_facts.FACTS_SCHEMA)


def test_a_read_only_session_derives_in_memory_and_writes_nothing(sample_dir: Path) -> None:
    facts_path(sample_dir).unlink()
    before = sorted(p.relative_to(sample_dir) for p in sample_dir.rglob("*"))
    with Project.open(sample_dir, read_only=True) as project:
        observations = derive_and_store_observations(sample_dir, project.inventory).frame
    assert observations.height > 0
    assert sorted(p.relative_to(sample_dir) for p in sample_dir.rglob("*")) == before
    assert main(["estimate", str(sample_dir), "--json"]) == 0  # opens read-only too
    assert not facts_path(sample_dir).exists()


def test_the_estimate_is_the_same_from_stored_and_from_derived_facts(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert derive_and_store_runs(sample_dir, *goal(sample_dir)).derived == 0, (
        "the sample ships them"
    )
    assert main(["estimate", str(sample_dir), "--json"]) == 0
    from_table = capsys.readouterr().out
    facts_path(sample_dir).unlink()
    assert main(["estimate", str(sample_dir), "--json"]) == 0
    assert capsys.readouterr().out == from_table


def test_runs_says_when_the_rules_changed_and_read_only_cannot_store(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(stored_facts, "FACTS_VERSION", stored_facts.FACTS_VERSION + 1)
    assert main(["runs", str(sample_dir), "--json"]) == 0
    note = json.loads(capsys.readouterr().out)["facts_note"]
    runs = pl.read_parquet(sample_dir / "runs" / "runs.parquet").height
    assert note.startswith(f"facts of {runs} runs derived again: the rules changed")
    assert note.endswith("(stored when the project is opened for writing)")
    import_paths(sample_dir, MLPERF_LOGS[:1], set_name="mlperf")  # a writer stores them
    assert main(["runs", str(sample_dir)]) == 0
    assert "the rules changed" not in capsys.readouterr().out
