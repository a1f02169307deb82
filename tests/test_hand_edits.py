"""Issue 30, item 12: what a person writes into the project's TOML by hand survives trntui's
saves. Comments and layout stay where they were, with the entry they describe; a top-level
table trntui does not know is refused on reading (a save would drop it), in every file alike.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from trntui.cli import main
from trntui.core.errors import InputFileError
from trntui.core.estimate import Override
from trntui.store.project import Project, project_file
from trntui.store.quality import load_recorded_quality, quality_path
from trntui.store.quotes import quotes_path
from trntui.store.set_sizes import load_family_names, sets_path
from trntui.store.working_scenario import (
    load_working_scenario,
    save_working_scenario,
    working_scenario_path,
)


def _comment_each_target(text: str) -> str:
    """A comment inside each [[targets]] item naming it, and one at the top."""
    text = "# Reviewed by finance on 2026-11-30: do not change the region.\n" + text
    for name in ("Trainium3 trial", "GPU baseline (1 x p5.48xlarge)"):
        line = f'name = "{name}"\n'
        text = text.replace(line, f"# about {name}: negotiated\n{line}", 1)
    return text.replace("budget_usd = 100.0", "budget_usd = 100.0  # approved in ticket 42")


def test_an_inventory_save_keeps_the_comments_and_their_places(sample_dir: Path) -> None:
    path = project_file(sample_dir)
    path.write_text(_comment_each_target(path.read_text()))
    with Project.open(sample_dir) as project:
        inventory = project.inventory
        first, second = inventory.targets
        moved = dataclasses.replace(second, instance_count=2)
        goal = dataclasses.replace(inventory.goal, budget_usd=250.0)
        project.save_inventory(dataclasses.replace(inventory, targets=(moved, first), goal=goal))
    text = path.read_text()
    assert text.startswith("# Reviewed by finance on 2026-11-30")
    assert "budget_usd = 250.0  # approved in ticket 42" in text
    # Each target's comment moved with it: the GPU one now comes first.
    gpu = text.index("# about GPU baseline (1 x p5.48xlarge): negotiated")
    trn = text.index("# about Trainium3 trial: negotiated")
    assert gpu < trn
    assert text.index("instance_count = 2", gpu) < trn
    with Project.open(sample_dir) as reopened:
        assert [t.name for t in reopened.inventory.targets] == [second.name, first.name]
        assert reopened.inventory.goal.budget_usd == 250.0


def test_a_price_added_from_the_cli_keeps_the_quote_books_comments(
    sample_dir: Path, capsys
) -> None:
    path = quotes_path(sample_dir)
    marker = "# EDP discount applies from 2027-01; ask procurement before changing\n"
    text = path.read_text().replace('[[quote]]\ninstance_type = "p5.48xlarge"', (
        '[[quote]]\n' + marker + 'instance_type = "p5.48xlarge"'
    ), 1)  # fmt: skip
    path.write_text(text)
    code = main([
        "price", "add", str(sample_dir), "--instance-type", "p4d.24xlarge", "--region",
        "us-east-1", "--usd-per-hour", "21.96", "--source", "rate card 2026-11",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    written = path.read_text()
    assert marker in written
    entry = written[written.index(marker) :].split("[[", 1)[0]
    assert 'instance_type = "p5.48xlarge"' in entry  # still beside the quote it is about
    types = {q["instance_type"] for q in tomllib.loads(written)["quote"]}
    assert "p4d.24xlarge" in types


@pytest.mark.parametrize("which", ["quality", "sets"])
def test_an_unknown_table_is_refused_on_reading_not_dropped_on_writing(
    sample_dir: Path, which: str
) -> None:
    path = quality_path(sample_dir) if which == "quality" else sets_path(sample_dir)
    body = (
        'schema_version = 1\n\n[[result]]\nrun_id = "0123456789abcdef"\nvalue = 0.9\n'
        'source = "eval"\n'
        if which == "quality"
        else 'schema_version = 1\n\n[[set]]\nname = "trial"\nfamily = "f"\n'
    )
    path.write_text(body + '\n[reviewers]\nlead = "ana"\n')
    load = load_recorded_quality if which == "quality" else load_family_names
    with pytest.raises(InputFileError, match="unknown key 'reviewers'") as raised:
        load(sample_dir)
    assert raised.value.line == body.count("\n") + 2


def test_a_hand_edit_of_the_sets_file_is_read_again(sample_dir: Path) -> None:
    """The last read of ``sets.toml`` is kept while the file is unchanged: an edit in place
    of the same length (same inode, same size) is still seen."""
    path = sets_path(sample_dir)
    path.write_text('schema_version = 1\n\n[[set]]\nname = "trial"\nfamily = "f"\n')
    assert load_family_names(sample_dir) == {"trial": "f"}
    inode = path.stat().st_ino
    path.write_text(path.read_text().replace('family = "f"', 'family = "g"'))  # in place
    assert path.stat().st_ino == inode
    assert load_family_names(sample_dir) == {"trial": "g"}
    assert load_family_names(sample_dir) == {"trial": "g"}


_WORKING_GOOD = (
    "schema_version = 1\n\n[[override]]\n"
    'input = "steady_throughput"\ntarget = "Trainium3 trial"\nvalue = 2.5\n'
    'who = "ana"\nwhy = "vendor figure"\n'
)


@pytest.mark.parametrize(
    ("change", "line", "says", "expected"),
    [
        (("value = 2.5", 'value = "fast"'), 6, "'fast' is not a number", "a number in"),
        (("value = 2.5", "value = -1.0"), 6, "must be above 0", "a number in"),
        (('input = "steady_throughput"', 'input = "speed"'), 4, "unknown input 'speed'", "one of"),
        (("who = ", "whom = "), 7, "unknown key 'whom'", "input, target, value"),
        (('target = "Trainium3 trial"\n', ""), 3, "set per target", "target ="),
        (("schema_version = 1", "schema_version = 7"), 1, "schema_version", "schema_version = 1"),
        (("value = 2.5", "value = 2.5\nvalue = 3"), 7, "TOML syntax error", "valid TOML"),
    ],
)
def test_a_hand_edit_of_the_working_scenario_that_does_not_read_names_line_and_expected(
    sample_dir: Path, change: tuple[str, str], line: int, says: str, expected: str
) -> None:
    """Issue 26, item 4: working_scenario.toml is refused as every project TOML is: the
    file, the line and what was expected; the app does not open over it and the CLI says so
    in one line (exit 2)."""
    path = working_scenario_path(sample_dir)
    path.write_text(_WORKING_GOOD.replace(*change))
    with pytest.raises(InputFileError) as raised:
        load_working_scenario(sample_dir)
    error = raised.value
    assert error.path == str(path) and error.line == line
    assert says in str(error) and expected in (error.expected or "")
    assert main(["estimate", str(sample_dir)]) == 2


def test_the_same_override_twice_is_refused_at_the_second(sample_dir: Path) -> None:
    path = working_scenario_path(sample_dir)
    path.write_text(_WORKING_GOOD + _WORKING_GOOD.split("\n\n", 1)[1].replace("2.5", "3.0"))
    with pytest.raises(InputFileError, match="same input and target as override #1") as raised:
        load_working_scenario(sample_dir)
    assert raised.value.line == 9


def test_a_working_scenario_save_keeps_a_persons_comments(sample_dir: Path) -> None:
    path = working_scenario_path(sample_dir)
    note = "# agreed with the vendor on 2026-11-30\n"
    path.write_text(_WORKING_GOOD.replace('input = "steady', note + 'input = "steady'))
    (kept,) = load_working_scenario(sample_dir)
    more = Override("work_amount", 2e6, None, who="ana", why="a longer run")
    with Project.open(sample_dir):
        save_working_scenario(sample_dir, (kept, more))
    text = path.read_text()
    assert note + 'input = "steady_throughput"' in text
    assert load_working_scenario(sample_dir) == (kept, more)
