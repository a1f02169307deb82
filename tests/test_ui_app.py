"""The app driven like a user drives it: keys in, screens and files checked."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList

from trntui.store.project import Project, read_inventory
from trntui.ui.app import SAVE_DELAY_S, TrnTuiApp
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.help import HelpScreen
from trntui.ui.screens.inventory import InventoryScreen, ItemFormScreen
from trntui.ui.widgets.field_form import IDLE_COMMIT_S, FieldRow

SAMPLE = Path(__file__).resolve().parents[1] / "sample_runs" / "llama2-70b-lora"
SIZE = (80, 24)


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    target = tmp_path / "llama2-70b-lora"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".trntui.lock"))
    return target


@pytest.fixture
def project(project_dir: Path) -> Iterator[Project]:
    with Project.open(project_dir) as opened:
        yield opened


async def open_section(pilot, app: TrnTuiApp, section: str) -> None:
    """Highlight ``section`` in the section list with the arrow keys and enter it."""
    nav = app.screen.query_one("#nav", OptionList)
    nav.focus()
    ids = [nav.get_option_at_index(i).id for i in range(nav.option_count)]
    await pilot.press("home", *["down"] * ids.index(section), "enter")
    await pilot.pause()


async def focus_field(pilot, app: TrnTuiApp, section: str, key: str) -> Input:
    await open_section(pilot, app, section)
    field = app.screen.query_one(f"#section-{section} #field-{key}", Input)
    while app.focused is not field:
        await pilot.press("tab")
    return field


async def type_into(pilot, text: str) -> None:
    await pilot.press("home", "ctrl+k", *text)


async def test_each_screen_is_reached_by_its_key(project: Project) -> None:
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, InventoryScreen)
        for key, mode in [("2", "runs"), ("3", "prices"), ("4", "scenarios"), ("1", "inventory")]:
            await pilot.press(key)
            await pilot.pause()
            assert app.current_mode == mode
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, InventoryScreen)


async def test_screens_are_offered_in_the_command_palette(project: Project) -> None:
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"prices")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_mode == "prices"


async def test_the_palette_offers_one_quit_the_one_that_asks_about_unsaved_work(
    project: Project,
) -> None:
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE):
        system = [command.title for command in app.get_system_commands(app.screen)]
    assert "Quit" not in system and "Theme" in system


async def test_valid_edit_is_saved_and_survives_reopening(project_dir: Path) -> None:
    with Project.open(project_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await focus_field(pilot, app, "model", "parameters_billion")
            await type_into(pilot, "13")
            await pilot.press("enter")
            await pilot.pause(SAVE_DELAY_S + 0.3)
            assert read_inventory(project_dir).inventory.model.parameters_billion == 13.0
            await pilot.press("ctrl+q")
    with Project.open(project_dir) as reopened:
        app = TrnTuiApp(reopened)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, app, "model")
            field = app.screen.query_one("#section-model #field-parameters_billion", Input)
            assert field.value == "13"


async def test_entry_is_saved_when_typing_pauses(project_dir: Path) -> None:
    with Project.open(project_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await focus_field(pilot, app, "side_costs", "log_gb")
            await type_into(pilot, "7.5")
            await pilot.pause(IDLE_COMMIT_S + SAVE_DELAY_S + 0.4)
            assert read_inventory(project_dir).inventory.side_costs.log_gb == 7.5


async def test_invalid_value_shows_inline_error_and_is_not_saved(project_dir: Path) -> None:
    before = (project_dir / "trntui.toml").read_bytes()
    with Project.open(project_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await focus_field(pilot, app, "side_costs", "dataset_gb")
            await type_into(pilot, "-5")
            await pilot.pause(SAVE_DELAY_S + 0.3)
            row = app.screen.query_one("#section-side_costs #row-dataset_gb", FieldRow)
            assert row.has_class("-invalid")
            assert "at least 0 GB" in (row.error or "")
            assert app.status[1] == "error"
            assert (project_dir / "trntui.toml").read_bytes() == before
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen), "quitting must warn about the bad entry"
            await pilot.press("y")
    assert (project_dir / "trntui.toml").read_bytes() == before


async def test_putting_back_the_saved_value_clears_the_not_saved_message(
    project_dir: Path,
) -> None:
    with Project.open(project_dir) as project:
        saved = project.inventory.distribution.global_batch_size
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await focus_field(pilot, app, "distribution", "global_batch_size")
            await type_into(pilot, "xyz")
            await pilot.press("enter")
            await pilot.pause(SAVE_DELAY_S + 0.3)
            assert app.status[0].startswith("Not saved")
            await type_into(pilot, str(saved))
            await pilot.press("enter")
            await pilot.pause(SAVE_DELAY_S + 0.3)
            assert not app.status[0].startswith("Not saved"), app.status
            assert app.status[1] != "error"


async def test_add_target_then_delete_and_undo(project_dir: Path) -> None:
    with Project.open(project_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, app, "targets")
            await pilot.press("a")
            await pilot.pause()
            assert isinstance(app.screen, ItemFormScreen)
            await pilot.press(*"Trn2 fallback", "tab", *"trn2.48xlarge")
            await pilot.press("ctrl+s")
            await pilot.pause(SAVE_DELAY_S + 0.3)
            names = [t.name for t in read_inventory(project_dir).inventory.targets]
            assert names[-1] == "Trn2 fallback"
            table = app.screen.query_one("#section-targets DataTable", DataTable)
            assert table.row_count == len(names)

            table.move_cursor(row=0)
            await pilot.press("d")
            await pilot.pause(SAVE_DELAY_S + 0.3)
            after_delete = [t.name for t in read_inventory(project_dir).inventory.targets]
            assert after_delete == names[1:]
            await pilot.press("ctrl+z")
            await pilot.pause(SAVE_DELAY_S + 0.3)
            assert [t.name for t in read_inventory(project_dir).inventory.targets] == names


async def test_item_form_refuses_an_invalid_target(project_dir: Path) -> None:
    with Project.open(project_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, app, "targets")
            await pilot.press("a")
            await pilot.pause()
            await pilot.press(*"bad", "tab", *"eight H100s")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, ItemFormScreen)
            assert "family.size" in str(app.screen.query_one(".modal-error").content)
            await pilot.press("escape")
            await pilot.pause()
    names = [t.name for t in read_inventory(project_dir).inventory.targets]
    assert "bad" not in names


async def test_second_session_is_read_only_and_names_the_holder(project_dir: Path) -> None:
    with Project.open(project_dir) as first:
        second = Project.open(project_dir, allow_read_only=True)
        try:
            app = TrnTuiApp(second)
            async with app.run_test(size=SIZE) as pilot:
                await open_section(pilot, app, "model")
                field = app.screen.query_one("#section-model #field-parameters_billion", Input)
                assert field.disabled
                assert first.holder in app.status[0]
                await pilot.press("escape")
                await open_section(pilot, app, "targets")
                await pilot.press("d")
                await pilot.pause()
        finally:
            second.close()
    assert len(read_inventory(project_dir).inventory.targets) == 2


def test_inventory_screen_snapshot(project: Project, snap_compare) -> None:
    assert snap_compare(TrnTuiApp(project), terminal_size=SIZE)


def test_target_list_snapshot(project: Project, snap_compare) -> None:
    async def show_targets(pilot) -> None:
        app = pilot.app
        nav = app.screen.query_one("#nav", OptionList)
        ids = [nav.get_option_at_index(i).id for i in range(nav.option_count)]
        await pilot.press(*["down"] * ids.index("targets"))
        await pilot.pause()

    assert snap_compare(TrnTuiApp(project), terminal_size=SIZE, run_before=show_targets)
