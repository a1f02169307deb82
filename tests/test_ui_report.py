"""Issue 26: the report written from the app (Scenarios, ``r``), with no CLI step.

What the file must hold is read from elsewhere than the code that writes it: the totals the
estimate bar shows, the targets of the inventory, and CSV as the ``csv`` module parses it."""

from __future__ import annotations

import csv
import io
import re

import pytest
from textual.widgets import Input, Select, Static

from tests import SIZE
from tests.ui_support import settle
from trntui.store.project import Project
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.scenarios.modals import ReportScreen
from trntui.ui.widgets.estimate_bar import EstimateBar

pytestmark = pytest.mark.usefixtures("instant_saves")

MONEY = re.compile(r"\$[0-9,]+\.[0-9]{2}")


async def open_report(app: TrnTuiApp, pilot) -> ReportScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    await pilot.press("4")
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)
    assert isinstance(app.screen, ReportScreen), app.screen
    return app.screen


def project_files(project: Project) -> dict[str, bytes]:
    return {
        str(p.relative_to(project.root)): p.read_bytes()
        for p in sorted(project.root.rglob("*"))
        if p.is_file() and p.name != ".trntui.lock"
    }


async def test_r_writes_the_markdown_report_of_the_estimate_shown(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_report(app, pilot)
        path = dialog.query_one("#path", Input).value
        assert path == str(sample_project.root / "estimate.md")
        bar = str(app.screen_stack[-2].query_one(EstimateBar).content)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, ReportScreen)
        text = (sample_project.root / "estimate.md").read_text()
        assert text.startswith("#")
        for target in sample_project.inventory.targets:
            assert target.name in text
        shown = MONEY.findall(bar)
        assert shown and all(total in text for total in shown), (shown, bar)
        assert "estimate.md" in app.status[0]


async def test_a_path_inside_the_project_data_is_refused_and_nothing_changes(
    sample_project: Project,
) -> None:
    before = project_files(sample_project)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_report(app, pilot)
        dialog.query_one("#path", Input).value = str(sample_project.root / "runs" / "x.md")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is dialog  # the dialog stays with the reason
        error = str(dialog.query_one("#error", Static).content)
        assert "Not written" in error and "part of the project" in error
        dialog.query_one("#path", Input).value = str(sample_project.root / "no-such" / "r.md")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "does not exist" in str(dialog.query_one("#error", Static).content)
        await pilot.press("escape")
        await settle(pilot)
    after = project_files(sample_project)
    assert after.keys() == before.keys()


async def test_csv_follows_the_format_and_an_existing_file_is_replaced_when_asked_twice(
    sample_project: Project,
) -> None:
    existing = sample_project.root / "estimate.csv"
    existing.write_text("keep me\n")
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_report(app, pilot)
        dialog.query_one("#format", Select).value = "csv"
        await settle(pilot)
        assert dialog.query_one("#path", Input).value == str(existing)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is dialog and "again replaces" in str(
            dialog.query_one("#error", Static).content
        )
        assert existing.read_text() == "keep me\n"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is not dialog
    rows = list(csv.reader(io.StringIO(existing.read_text())))
    assert len(rows) > 2 and len(rows[0]) > 1
    cells = {cell for row in rows for cell in row}
    for target in sample_project.inventory.targets:
        assert any(target.name in cell for cell in cells)
