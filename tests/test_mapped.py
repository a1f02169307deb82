"""CSV/JSONL run logs through a column mapping: suggestion, preview, import, remembered mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trntui.core.errors import InputFileError
from trntui.core.run_facts import QualityTarget, run_facts
from trntui.core.timeline import TIMELINE_SCHEMA, Kind, TimeSource
from trntui.importers.mapped import (
    PER_ROW,
    ColumnMapping,
    import_mapped,
    preview,
    read_table,
    shape_key,
    suggest_mapping,
)
from trntui.store.mappings import remember_mapping, remembered_mapping
from trntui.store.project import init_project

STEP_S = 2.0
INTERVAL = 50


def lightning_csv(path: Path, intervals: int = 20, eval_every: int = 5) -> Path:
    """metrics.csv as Lightning's CSVLogger writes it: sparse train and validation rows."""
    rows = ["epoch,step,train_loss,val_acc,elapsed_s"]
    for i in range(1, intervals + 1):
        step = i * INTERVAL - 1
        rows.append(f"{i // 10},{step},{3.0 - 0.05 * i:.3f},,{i * INTERVAL * STEP_S:.1f}")
        if i % eval_every == 0:
            rows.append(f"{i // 10},{step},,{0.5 + 0.02 * i:.3f},{i * INTERVAL * STEP_S + 5:.1f}")
    path.write_text("\n".join(rows) + "\n")
    return path


MAPPING = ColumnMapping(
    time="elapsed_s", step="step", loss="train_loss", metric="val_acc", metric_higher_is_better=True
)


def test_suggestion_for_lightning_columns(tmp_path: Path) -> None:
    table = read_table(lightning_csv(tmp_path / "metrics.csv"))
    suggested = suggest_mapping(table.columns)
    assert suggested.step == "step"
    assert suggested.loss == "train_loss"
    assert suggested.metric == "val_acc"
    assert suggested.metric_higher_is_better is True


def test_preview_shows_rows_before_import(tmp_path: Path) -> None:
    table = read_table(lightning_csv(tmp_path / "metrics.csv"))
    shown = preview(table, MAPPING, rows=6)
    assert shown.problems == ()
    assert shown.raw_head.height == 6
    assert shown.timeline_head["kind"].to_list() == ["step"] * 5 + ["eval"]
    assert shown.rows == 24
    bad = preview(table, ColumnMapping(step="nope"))
    assert bad.timeline_head is None
    assert any("nope" in problem for problem in bad.problems)


def test_import_gives_run_facts(tmp_path: Path) -> None:
    run = import_mapped(lightning_csv(tmp_path / "metrics.csv"), MAPPING)
    assert run.metadata.time_source == TimeSource.WALL_CLOCK
    assert run.metadata.quality_metric == "val_acc"
    evals = run.timeline.filter(run.timeline["kind"] == Kind.EVAL)
    assert evals["metric"].to_list() == pytest.approx([0.6, 0.7, 0.8, 0.9])
    facts = run_facts(run, QualityTarget("val_acc", 0.75, True))
    assert facts.median_step_time_s == pytest.approx(STEP_S)
    assert facts.quality_reached is True


def test_jsonl_with_per_row_tokens_and_epoch_time(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    rows = [{"_timestamp": 1_700_000_000 + 10 * i, "tokens": 1000, "loss": 2.0} for i in range(5)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    table = read_table(path)
    mapping = ColumnMapping(
        time="_timestamp", time_unit="epoch_s", tokens="tokens", counts=PER_ROW, loss="loss"
    )
    run = import_mapped(path, mapping)
    assert run.timeline["tokens"].to_list() == [1000, 2000, 3000, 4000, 5000]
    assert run.timeline["t_s"].to_list() == [0, 10, 20, 30, 40]
    assert run.metadata.launch_time is not None
    assert table.kind == "jsonl"


def test_bad_cell_names_line_and_column(tmp_path: Path) -> None:
    path = lightning_csv(tmp_path / "metrics.csv")
    lines = path.read_text().splitlines()
    lines[4] = lines[4].replace(",", ",oops", 2).replace("oops", "", 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFileError) as error:
        import_mapped(path, MAPPING)
    assert error.value.line == 5


def test_mapping_is_remembered_per_shape(tmp_path: Path) -> None:
    project = init_project(tmp_path / "project")
    first = read_table(lightning_csv(tmp_path / "a.csv"))
    assert remembered_mapping(project, first.columns) is None
    remember_mapping(project, first.columns, MAPPING)
    # Same columns in another order: same shape, the mapping comes back.
    reordered = list(reversed(first.columns))
    assert shape_key(reordered) == shape_key(first.columns)
    assert remembered_mapping(project, reordered) == MAPPING
    assert remembered_mapping(project, [*first.columns, "lr"]) is None
    changed = ColumnMapping(step="step", loss="train_loss")
    remember_mapping(project, first.columns, changed)
    assert remembered_mapping(project, first.columns) == changed
    with pytest.raises(ValueError):
        remember_mapping(project, first.columns, ColumnMapping())


@settings(max_examples=60)
@given(position=st.integers(0, 3000), junk=st.text(max_size=6), jsonl=st.booleans())
@example(position=330, junk="INF", jsonl=False)  # an infinite step once crashed the import
@example(position=742, junk="NAN", jsonl=True)  # and a NaN step (cast to an integer)
def test_damaged_files_import_or_raise_input_error(
    tmp_path: Path, position: int, junk: str, jsonl: bool
) -> None:
    path = lightning_csv(tmp_path / "metrics.csv", intervals=20, eval_every=5)
    text = path.read_text()
    if jsonl:
        table = [line.split(",") for line in text.splitlines()]
        text = "\n".join(json.dumps(dict(zip(table[0], row, strict=False))) for row in table[1:])
    position %= len(text)
    damaged = text[:position] + junk + text[position + len(junk) :]
    path.write_text(damaged, encoding="utf-8")
    lines = len(damaged.splitlines())
    try:
        run = import_mapped(path, MAPPING)
    except InputFileError as error:
        assert damaged != text, f"the undamaged file was refused: {error}"
        assert str(path) in str(error)
        assert error.line is None or 1 <= error.line <= lines
        return
    timeline = run.timeline
    assert timeline.schema == TIMELINE_SCHEMA
    assert set(timeline["kind"].to_list()) <= {Kind.STEP, Kind.EVAL}
    assert timeline["line"].is_between(1, lines).all()
    evals = timeline.filter(timeline["kind"] == Kind.EVAL)
    assert evals["metric"].null_count() == 0, "an eval row is a row with a metric value"
    if damaged == text:
        # lightning_csv wrote 20 training rows and an evaluation every 5th: 4 more.
        assert timeline.height == 24 and evals.height == 4


def _map_cli(*argv: str) -> int:
    import argparse

    from trntui.commands import mapping as mapping_commands

    parser = argparse.ArgumentParser()
    mapping_commands.register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return args.func(args)


def test_cli_preview_import_and_remember(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from trntui.store.runs import load_runs

    project = init_project(tmp_path / "project")
    (tmp_path / "a").mkdir()
    first = lightning_csv(tmp_path / "a" / "metrics.csv")
    args = ("--time", "elapsed_s", "--metric", "val_acc")
    assert _map_cli("map", str(project), str(first), *args, "--preview", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] == [] and report["imported"] is None
    assert load_runs(project).is_empty()
    assert _map_cli("map", str(project), str(first), *args) == 0
    capsys.readouterr()
    assert load_runs(project).height == 1
    # The next file of the same shape needs no options: the mapping is remembered.
    (tmp_path / "b").mkdir()
    second = lightning_csv(tmp_path / "b" / "metrics.csv", intervals=30)
    assert _map_cli("map", str(project), str(second), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["remembered"] is True
    assert report["mapping"]["time"] == "elapsed_s"
    assert report["imported"]["outcome"] == "added"
    assert _map_cli("map", str(project), str(second), "--step", "nope", "--preview") == 1
