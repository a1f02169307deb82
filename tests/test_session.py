"""The session: one owner of what the user changes, and one undo history for all of it."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import polars as pl
import pytest
from textual.widgets import DataTable

from tests import SIZE
from tests.ui_support import settle, wait_until
from trntui.core.estimate import Override
from trntui.store.project import Project, read_inventory
from trntui.store.quotes import load_quote_book, quotes_path, remove_quote
from trntui.store.runs import load_runs
from trntui.store.working_scenario import load_working_scenario
from trntui.ui.app import TrnTuiApp
from trntui.ui.session import UNDO_COALESCE_S, Session

TRNTUI = Path(__file__).resolve().parent.parent / "trntui"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def renamed(session: Session, name: str):
    return dataclasses.replace(
        session.inventory,
        project=dataclasses.replace(session.inventory.project, name=name),
    )


def test_one_history_undoes_every_kind_of_change_newest_first(sample_project: Project) -> None:
    """An inventory edit, an override and a quote deletion are three steps of one history;
    undo takes them back newest first, each restoring exactly what was there before."""
    session = Session(sample_project)
    heard: list[str] = []
    session.listen(heard.append)
    original = session.inventory
    book = load_quote_book(session.root)
    quote = book.quotes[0]

    assert session.edit_inventory(renamed(session, "Renamed"), label="Project > Name") is None
    faster = Override("steady_throughput", 2.0, "Trainium3 trial", who="me", why="a guess")
    assert session.set_overrides([faster], label="override of throughput") is None
    assert session.change_quotes(lambda root: remove_quote(root, quote.key), label="delete") is None
    assert quote not in load_quote_book(session.root).quotes
    assert heard == ["inventory", "overrides", "quotes"]
    assert [step.kind for step in session.history] == ["inventory", "overrides", "quotes"]

    step, problem = session.undo()
    assert problem is None and step is not None and step.label == "delete"
    assert load_quote_book(session.root).quotes == book.quotes, "the deleted quote is back"
    assert session.overrides == (faster,), "only the newest step was undone"

    step, _ = session.undo()
    assert step is not None and step.kind == "overrides" and session.overrides == ()
    assert session.inventory.project.name == "Renamed"

    step, _ = session.undo()
    assert step is not None and step.kind == "inventory" and session.inventory == original
    assert session.undo() == (None, None), "nothing left to undo"
    assert heard[3:] == ["quotes", "overrides", "inventory-replaced"]


def test_typing_in_one_field_is_one_undo_step_until_it_pauses(sample_project: Project) -> None:
    clock = Clock()
    session = Session(sample_project, clock=clock)
    original = session.inventory
    for name in ("A", "AB", "ABC"):
        session.edit_inventory(renamed(session, name), label="Project > Name")
        clock.now += UNDO_COALESCE_S / 4
    assert len(session.history) == 1, "one field typed in quick succession"
    clock.now += UNDO_COALESCE_S * 2
    session.edit_inventory(renamed(session, "ABCD"), label="Project > Name")
    session.edit_inventory(renamed(session, "ABCDE"), label="Project > Description")
    assert [step.label for step in session.history] == [
        "Project > Name",
        "Project > Name",
        "Project > Description",
    ]
    session.undo()
    session.undo()
    assert session.inventory.project.name == "ABC"
    session.undo()
    assert session.inventory == original


def test_an_invalid_change_is_refused_and_changes_nothing(sample_project: Project) -> None:
    session = Session(sample_project)
    heard: list[str] = []
    session.listen(heard.append)
    before = session.inventory
    target = before.targets[0]
    twin = dataclasses.replace(before, targets=(target, target))  # the same name twice
    problem = session.edit_inventory(twin, label="add target")
    assert problem is not None and problem.startswith("Not saved:")
    assert session.inventory == before and not session.dirty
    assert session.history == [] and heard == []

    def broken(root: Path) -> None:
        raise OSError(28, "No space left on device")

    book = quotes_path(session.root).read_bytes()
    problem = session.change_quotes(broken, label="delete")
    assert problem is not None and "No space left" in problem
    assert quotes_path(session.root).read_bytes() == book and session.history == []


def test_a_read_only_session_refuses_changes_and_names_the_holder(sample_dir: Path) -> None:
    with Project.open(sample_dir) as holder:
        second = Project.open(sample_dir, allow_read_only=True)
        try:
            session = Session(second)
            problem = session.edit_inventory(renamed(session, "Mine"), label="Project > Name")
            assert problem is not None and problem.startswith("Read-only")
            assert holder.holder in problem
            assert session.change_quotes(lambda root: None, label="x") == problem
            session.keep_typing()  # nothing to write, and no writer called
            assert session.history == [] and not session.dirty
        finally:
            second.close()
    assert read_inventory(sample_dir).inventory.project.name != "Mine"


def test_no_module_imports_the_app_class_outside_type_checking() -> None:
    """Screens get the session in their constructor and post messages up; the only import of
    the App module is the entry point that starts it (``cli.py``, inside its function)."""
    offenders = []
    for path in sorted(TRNTUI.rglob("*.py")):
        if path.name == "app.py" and path.parent.name == "ui":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                guarded |= {id(child) for child in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            if any(name == "trntui.ui.app" for name in names):
                offenders.append(f"{path.relative_to(TRNTUI.parent)}:{node.lineno}")
    assert all(o.startswith("trntui/cli.py:") for o in offenders), offenders


@pytest.mark.usefixtures("instant_saves")
async def test_ctrl_z_on_any_screen_undoes_the_newest_change(sample_project: Project) -> None:
    """A quote deleted on Prices, then ctrl+z on Inventory: the quote comes back (not the
    older inventory edit); the next ctrl+z takes back that edit."""
    app = TrnTuiApp(sample_project)
    root = sample_project.root
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        original = session.inventory
        assert session.edit_inventory(renamed(session, "Edited"), label="Project > Name") is None
        quotes = len(load_quote_book(root).quotes)
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("tab", "d")  # d deletes in the list in focus: the quotes
        await settle(pilot)
        assert len(load_quote_book(root).quotes) == quotes - 1
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert len(load_quote_book(root).quotes) == quotes, "the quote deletion was undone"
        assert session.inventory.project.name == "Edited", "the older edit stays"
        await pilot.press("ctrl+z")
        await wait_until(
            pilot,
            lambda: read_inventory(root).inventory == original,
            "the edit undone and saved",
        )
        assert "Undid: Project > Name" in app.status[0] or app.status[0].startswith("Saved")


def computed(session: Session) -> None:
    """What the App's worker does, done here in line."""
    session.computed_ready(session.compute(session.inventory, session.overrides))


def test_overrides_that_no_longer_apply_never_block_undo(sample_project: Project) -> None:
    """Override a target, delete it (the estimate now fails: the bar says so), drop the
    override: undo puts the stale override back, and the next undo the deleted target."""
    session = Session(sample_project)
    computed(session)
    target = session.inventory.targets[0]
    stale = Override("steady_throughput", 2.0, target.name, who="me", why="a guess")
    assert session.set_overrides([stale], label="override") is None
    others = tuple(t for t in session.inventory.targets if t.name != target.name)
    assert (
        session.edit_inventory(
            dataclasses.replace(session.inventory, targets=others), label="delete target"
        )
        is None
    )
    computed(session)
    assert session.computed is not None and session.computed.problem is not None
    assert session.computed.derived.runs, "the run facts arrive although the estimate failed"
    assert session.analysis is not None, "the last valid estimate is kept"
    assert session.set_overrides([], label="drop") is None
    assert session.undo()[1] is None and session.overrides == (stale,)
    step, problem = session.undo()
    assert problem is None and step is not None and step.label == "delete target"
    assert target in session.inventory.targets


def test_a_quote_change_that_fails_half_way_leaves_the_book_as_it_was(
    sample_project: Project,
) -> None:
    from trntui.store.quotes import add_quotes

    session = Session(sample_project)
    book = load_quote_book(session.root)
    extra = dataclasses.replace(book.quotes[0], region="eu-west-1")

    def two_writes(root: Path) -> None:
        add_quotes(root, [extra])  # the first write is made...
        raise OSError(28, "No space left on device")  # ...the second fails

    problem = session.change_quotes(two_writes, label="fetch")
    assert problem is not None and "No space left" in problem
    assert load_quote_book(session.root).quotes == book.quotes and session.history == []


def test_read_only_reload_leaves_nothing_to_undo(sample_dir: Path) -> None:
    with Project.open(sample_dir):
        second = Project.open(sample_dir, allow_read_only=True)
        try:
            path = sample_dir / "trntui.toml"
            text = path.read_text()
            name = second.inventory.project.name
            path.write_text(text.replace(f'name = "{name}"', 'name = "Edited by hand"', 1))
            session = Session(second)
            session.reload()
            assert session.inventory.project.name == "Edited by hand"
            assert session.history == [] and session.undo() == (None, None)
            assert not session.dirty
        finally:
            second.close()


async def test_only_the_newest_recompute_is_shown(sample_project: Project) -> None:
    """A recompute that fails after a newer one started does not replace its outcome."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = app.status
        app._estimate_failed("an older recompute failed", app._generation - 1)
        assert app.estimate_problem == "" and app.status == status
        app._estimate_failed("the newest recompute failed", app._generation)
        assert app.estimate_problem == "the newest recompute failed"


async def test_prices_follow_a_target_undone_elsewhere(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        gone = session.inventory.targets[-1]
        others = session.inventory.targets[:-1]
        session.edit_inventory(dataclasses.replace(session.inventory, targets=others), label="d")
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#targets", DataTable)
        shown = lambda: [str(table.get_row_at(i)[1]) for i in range(table.row_count)]  # noqa: E731
        assert gone.instance_type not in shown()
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert gone.instance_type in shown(), "the undone deletion shows on Prices at once"


def test_a_run_set_rename_is_undone_before_an_older_edit(sample_project: Project) -> None:
    """A run set renamed (the targets follow) is the newest step: undo takes it back, the
    runs and the targets on the old name, and keeps the older edit; undoing that next finds
    the targets naming the set the runs are in again."""
    session = Session(sample_project)
    old = session.inventory.targets[0].run_set
    assert old is not None
    members = load_runs(session.root).filter(pl.col("set_name") == old)["run_id"].to_list()
    assert session.edit_inventory(renamed(session, "Edited"), label="Project > Name") is None
    assert session.move_runs(members, old, "renamed-set", whole_set=True) is None
    assert session.inventory.targets[0].run_set == "renamed-set"
    assert [step.kind for step in session.history] == ["inventory", "runs"]

    step, problem = session.undo()
    assert problem is None and step is not None
    assert step.label == f"renaming run set {old!r} to 'renamed-set'"
    assert session.inventory.project.name == "Edited", "the older edit is kept"
    assert session.inventory.targets[0].run_set == old
    assert set(load_runs(session.root).filter(pl.col("set_name") == old)["run_id"]) == set(members)

    step, problem = session.undo()
    assert problem is None and step is not None and step.label == "Project > Name"
    assert session.inventory.project.name != "Edited"
    assert session.inventory.targets[0].run_set == old


def test_undo_never_overwrites_a_quote_file_edited_since(sample_project: Project) -> None:
    """A quote deleted in the app, then a price edited by hand: undoing the deletion would
    write the old book over the hand edit. It is refused, the file keeps the edit, and the
    step stays; once the file holds what the step left again, undo works."""
    session = Session(sample_project)
    book = load_quote_book(session.root)
    quote = book.quotes[0]
    assert session.change_quotes(lambda root: remove_quote(root, quote.key), label="delete") is None
    path = quotes_path(session.root)
    left = path.read_text()
    price = next(q for q in load_quote_book(session.root).quotes).usd_per_hour
    edited = left.replace(f"usd_per_hour = {price}", f"usd_per_hour = {price + 1}", 1)
    assert edited != left
    path.write_text(edited)
    step, problem = session.undo()
    assert step is None and problem is not None and "changed since 'delete'" in problem
    assert path.read_text() == edited, "the hand edit is kept"
    assert [s.label for s in session.history] == ["delete"]
    path.write_text(left)
    step, problem = session.undo()
    assert problem is None and step is not None
    assert load_quote_book(session.root).quotes == book.quotes


def test_the_working_scenario_is_written_at_each_change_and_undo_and_read_at_open(
    sample_dir: Path,
) -> None:
    """Issue 26, item 4: overrides are work, kept in the project like any edit. Each change
    and each undo writes working_scenario.toml at once; a new session (a restart) starts
    with what it holds."""
    first = (Override("steady_throughput", 2.0, "Trainium3 trial", who="me", why="a"),)
    second = (Override("steady_throughput", 3.0, "Trainium3 trial", who="me", why="b"),)
    with Project.open(sample_dir) as project:
        session = Session(project)
        assert session.overrides == ()
        assert session.set_overrides(first, label="first") is None
        assert session.set_overrides(second, label="second") is None
        assert load_working_scenario(sample_dir) == second
        step, problem = session.undo()
        assert problem is None and step is not None
        assert load_working_scenario(sample_dir) == first, "the undo is written too"
    with Project.open(sample_dir) as reopened:
        assert Session(reopened).overrides == first, "a restart keeps the working scenario"


def test_a_read_only_session_keeps_the_working_scenario_as_it_is(sample_dir: Path) -> None:
    override = (Override("steady_throughput", 2.0, "Trainium3 trial", who="me", why="a"),)
    with Project.open(sample_dir) as project:
        assert Session(project).set_overrides(override, label="x") is None
        with Project.open(sample_dir, allow_read_only=True) as second:
            looking = Session(second)
            assert looking.overrides == override, "a read-only session shows it"
            problem = looking.set_overrides((), label="drop")
            assert problem is not None and "Read-only" in problem
        assert load_working_scenario(sample_dir) == override
