"""The column-mapping step for CSV/JSONL logs: preview, confirm, remembered next time."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Select

from tests import SIZE
from tests.test_mapped import lightning_csv
from tests.ui_support import settle
from trntui.store.mappings import remembered_mapping
from trntui.store.project import Project
from trntui.store.runs import load_runs
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.screens.mapping import MappingScreen
from trntui.ui.screens.runs import RunsScreen


async def preview_file(pilot, app: TrnTuiApp, path: Path) -> ImportRunsScreen:
    await pilot.press("2", "i")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, ImportRunsScreen)
    screen.query_one("#paths", Input).value = str(path)
    await pilot.press("enter")
    await settle(pilot)
    return screen


def cells(screen: ImportRunsScreen) -> list[str]:
    table = screen.query_one("#preview", DataTable)
    return [str(cell) for cell in table.get_row_at(0)]


async def test_csv_is_mapped_previewed_stored_and_remembered(
    new_project: Path, tmp_path: Path
) -> None:
    root = new_project
    (tmp_path / "a").mkdir()
    first = lightning_csv(tmp_path / "a" / "metrics.csv")
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            screen = await preview_file(pilot, app, first)
            assert "needs mapping" in cells(screen)
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, ImportRunsScreen), "an unmapped file is not stored"
            screen.query_one("#preview", DataTable).focus()
            await pilot.press("m")
            await settle(pilot)
            mapping = app.screen
            assert isinstance(mapping, MappingScreen)
            # The guess from the names maps step, loss and the metric; the preview shows rows.
            assert mapping.query_one("#role-step", Select).value == "step"
            assert mapping.query_one("#mapped", DataTable).row_count > 0
            # Mapping the same column twice is refused with a reason, not imported.
            mapping.query_one("#role-loss", Select).value = "step"
            await settle(pilot)
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, MappingScreen)
            assert "two roles" in str(mapping.query_one("#problems").content)
            mapping.query_one("#role-loss", Select).value = "train_loss"
            await settle(pilot)
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, ImportRunsScreen)
            assert "mapped columns" in " ".join(cells(screen))
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, RunsScreen)
    stored = load_runs(root)
    assert stored.height == 1
    columns = ("epoch", "step", "train_loss", "val_acc", "elapsed_s")
    remembered = remembered_mapping(root, columns)
    assert remembered is not None and remembered.loss == "train_loss"

    second = lightning_csv(tmp_path / "b.csv", intervals=12)
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            screen = await preview_file(pilot, app, second)
            assert "mapped columns" in " ".join(cells(screen)), "the mapping was remembered"
