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
from trntui.store.project import Project, project_file
from trntui.store.quality import load_recorded_quality, quality_path
from trntui.store.quotes import quotes_path
from trntui.store.set_sizes import load_family_names, sets_path


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
