"""ctrl+z and the run edits: a set renamed, a size stated, a quality result recorded are undo
steps of the one history; a removed run, an import and an attached capture are barriers that
say so, never passed over in silence."""

from __future__ import annotations

import polars as pl
import pytest
from textual.widgets import DataTable, Input

from tests import SIZE
from tests.ui_support import open_section, settle, wait_until
from trntui.core.quality import RecordedQuality
from trntui.core.timeline import SystemSize
from trntui.store.project import Project, read_inventory
from trntui.store.quality import load_recorded_quality
from trntui.store.runs import load_runs
from trntui.store.set_sizes import load_stated_sizes, sets_path
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.session import Session

pytestmark = pytest.mark.usefixtures("instant_saves")

TRN_SET = "trn3-example"
"""The sample's Trainium set: a target is measured by it and its size is stated."""


def set_names(project: Project) -> set[str]:
    return set(load_runs(project.root)["set_name"].to_list())


def messages(app: TrnTuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def type_owner(pilot, app: TrnTuiApp, owner: str) -> None:
    """Project > Owner typed on Inventory and left with tab, as a person edits it."""
    await pilot.press("1")
    await open_section(pilot, "project")
    field = app.screen.query_one("#section-project #field-owner", Input)
    field.focus()
    await settle(pilot)
    await pilot.press("home", "ctrl+k", *owner, "tab")
    await settle(pilot)
    assert app.session.inventory.project.owner == owner


async def highlight_run_of(pilot, app: TrnTuiApp, set_name: str) -> str:
    """On Runs (2), highlight a run of ``set_name``; its id."""
    await pilot.press("2")
    await settle(pilot)
    table = app.screen.query_one("#runs", DataTable)
    runs = load_runs(app.session.root)
    run_id = runs.filter(pl.col("set_name") == set_name)["run_id"][0]
    table.move_cursor(row=table.get_row_index(run_id))
    table.focus()
    await settle(pilot)
    return run_id


async def test_ctrl_z_after_a_set_rename_undoes_the_rename_not_an_older_edit(
    sample_project: Project,
) -> None:
    """The review's keys: the Owner typed, then the Trainium set renamed with m, then ctrl+z.
    It said "Undid: Project > Owner", took the Owner back and left the rename. The rename is
    the newest change: ctrl+z puts the runs, the stated size and the target back on the old
    name and keeps the Owner; the next ctrl+z takes the Owner back."""
    trainium = next(t for t in sample_project.inventory.targets if t.run_set == TRN_SET)
    stated = load_stated_sizes(sample_project.root)[TRN_SET]
    owner = sample_project.inventory.project.owner
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await type_owner(pilot, app, "alice")
        await highlight_run_of(pilot, app, TRN_SET)
        await pilot.press("m")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ItemFormScreen)
        form.query_one("#field-set_name", Input).value = "trn3-trial"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "trn3-trial" in set_names(sample_project)
        assert TRN_SET not in load_stated_sizes(sample_project.root)

        await pilot.press("ctrl+z")
        await settle(pilot)
        names = set_names(sample_project)
        assert TRN_SET in names and "trn3-trial" not in names, "the rename is taken back"
        assert load_stated_sizes(sample_project.root).get(TRN_SET) == stated
        assert "trn3-trial" not in load_stated_sizes(sample_project.root)
        target = next(t for t in app.session.inventory.targets if t.name == trainium.name)
        assert target.run_set == TRN_SET, "the target follows the set back"
        assert app.session.inventory.project.owner == "alice", "the older edit is kept"
        undid = f"Undid: renaming run set {TRN_SET!r} to 'trn3-trial'"
        assert messages(app)[-1] == undid  # (the status line then says the inventory saved)
        await wait_until(
            pilot,
            lambda: (
                read_inventory(sample_project.root).inventory.targets
                == app.session.inventory.targets
            ),
            "the target's set saved",
        )

        await pilot.press("ctrl+z")
        await settle(pilot)
        assert app.session.inventory.project.owner == owner
        assert messages(app)[-1] == "Undid: Project > Owner"
        assert TRN_SET in set_names(sample_project)


async def test_ctrl_z_at_a_removed_run_says_it_stays_and_undoes_nothing_older(
    sample_project: Project,
) -> None:
    """A removed run's timeline is deleted: ctrl+z cannot bring it back. It says so, with how
    (re-import its log), and names what the next ctrl+z undoes; that key press undoes nothing
    else. The next one undoes the older edit."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await type_owner(pilot, app, "alice")
        run_id = await highlight_run_of(pilot, app, TRN_SET)
        source = load_runs(sample_project.root).filter(pl.col("run_id") == run_id)["source"][0]
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert run_id not in load_runs(sample_project.root)["run_id"].to_list()

        await pilot.press("ctrl+z")
        await settle(pilot)
        said = messages(app)[-1]
        log = source.rsplit("/", 1)[-1]
        kept = f"ctrl+z does not undo removing run {run_id}: re-import {log} (i on Runs)"
        assert app.status == (f"{kept} to restore it", "warning")
        assert said == f"{kept} to restore it; ctrl+z again undoes Project > Owner"
        assert app.session.inventory.project.owner == "alice", "nothing older is undone"
        assert run_id not in load_runs(sample_project.root)["run_id"].to_list()

        await pilot.press("ctrl+z")
        await settle(pilot)
        assert app.session.inventory.project.owner != "alice"
        assert messages(app)[-1] == "Undid: Project > Owner"


def test_a_stated_size_and_a_quality_result_are_undone_newest_first(
    sample_project: Project,
) -> None:
    """Each is one step of the one history: undo puts back what the file held before (no
    size stated, the quality result recorded before) through the same store writers."""
    session = Session(sample_project)
    heard: list[str] = []
    session.listen(heard.append)
    root = sample_project.root
    runs = load_runs(root)
    other = next(s for s in runs["set_name"].unique().to_list() if s != TRN_SET)
    run_id = runs["run_id"][0]
    recorded_before = load_recorded_quality(root).get(run_id)
    assert other not in load_stated_sizes(root)

    size = SystemSize(2, 8, None, "the job script", stated_by="me")
    session.state_size(other, size)
    session.record_quality(run_id, RecordedQuality(0.9, "eval of the last checkpoint", None))
    assert (load_stated_sizes(root)[other].nodes, load_recorded_quality(root)[run_id].value) == (
        2,
        0.9,
    )
    assert [step.kind for step in session.history] == ["runs", "runs"]

    step, problem = session.undo()
    assert problem is None and step is not None
    assert step.label == f"recording the quality result of run {run_id}"
    assert load_recorded_quality(root).get(run_id) == recorded_before
    assert load_stated_sizes(root)[other].nodes == 2, "only the newest step is undone"

    step, problem = session.undo()
    assert problem is None and step is not None
    assert other not in load_stated_sizes(root)
    assert session.history == []
    assert heard.count("runs") == 4, "each change and each undo has the runs read again"


def test_undoing_a_stated_size_never_overwrites_the_file_edited_since(
    sample_project: Project,
) -> None:
    """A size stated in the app, then sets.toml edited by hand: undoing would put the size
    before back over the hand edit. It is refused and the step stays."""
    session = Session(sample_project)
    root = sample_project.root
    session.state_size(TRN_SET, SystemSize(2, 16, "Trainium3", "a ticket", stated_by="me"))
    path = sets_path(root)
    edited = path.read_text().replace("nodes = 2", "nodes = 3")
    path.write_text(edited)
    step, problem = session.undo()
    assert step is None and problem is not None
    assert "changed since" in problem and "nothing was undone" in problem
    assert path.read_text() == edited
    assert [s.kind for s in session.history] == ["runs"]


def test_an_import_and_a_capture_are_barriers(sample_project: Project) -> None:
    """What an import or a capture changed is not taken back by ctrl+z: each is a barrier,
    passed by one ctrl+z that undoes nothing; an import that stored nothing new is none."""
    session = Session(sample_project)
    session.runs_imported(0)
    assert session.history == []
    session.runs_imported(1)
    session.capture_attached("r1", "monitor.json")
    assert [(s.kind, s.label) for s in session.history] == [
        ("kept", "importing 1 run"),
        ("kept", "attaching monitor.json to run r1"),
    ]
    step, problem = session.undo()
    assert problem is None and step is not None and step.kind == "kept"
    assert len(session.history) == 1
