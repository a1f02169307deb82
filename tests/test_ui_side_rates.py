"""Issue 26, item 3: side-service rates (S3, EBS, CloudWatch Logs, inter-AZ) entered, edited
and deleted on the Prices screen, with a source and a date, undone with ctrl+z, by the rules
``trntui price rate`` keeps (one function makes the rate for both)."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from tests import SIZE
from tests.ui_support import settle
from trntui.commands.price import register
from trntui.core.inventory import TrainingTarget
from trntui.core.quotes import SideService
from trntui.store.project import Project, init_project
from trntui.store.quotes import load_quote_book
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.screens.prices import PricesScreen

S3 = SideService.S3_STANDARD_STORAGE


@pytest.fixture
def with_target(new_session: Project) -> Project:
    """A new project with one GPU target and nothing priced: every side rate is unknown."""
    target = TrainingTarget("GPU", "p5.48xlarge", 1, "us-east-1", "on-demand")
    inventory = dataclasses.replace(new_session.inventory, targets=(target,))
    new_session.save_inventory(inventory)
    new_session.inventory = inventory
    return new_session


def missing(app: TrnTuiApp) -> tuple[str, ...]:
    assert app.session.analysis is not None
    return app.session.analysis.estimate.targets[0].incomplete_inputs


async def rate_form(pilot: Pilot) -> ItemFormScreen:
    await pilot.press("r")
    await settle(pilot)
    form = pilot.app.screen
    assert isinstance(form, ItemFormScreen)
    return form


def fill(form: ItemFormScreen, **values: str) -> None:
    for name, value in values.items():
        form.query_one(f"#field-{name}", Input).value = value


async def keep(pilot: Pilot) -> None:
    await pilot.press("ctrl+s")
    await settle(pilot)


def rate_cells(app: TrnTuiApp) -> list[str]:
    table = app.screen.query_one("#rates", DataTable)
    return [str(table.get_row_at(i)[2]) for i in range(table.row_count)]


async def test_a_new_projects_missing_s3_rate_is_entered_edited_and_deleted_on_prices(
    with_target: Project,
) -> None:
    root = with_target.root
    app = TrnTuiApp(with_target)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await settle(pilot)
        assert "S3 Standard rate" in missing(app)
        detail = str(app.screen.query_one("#detail", Static).render())
        assert "side rates unknown in us-east-1: S3 Standard" in detail
        assert "r enters them" in detail
        # From the targets list, r opens the first unknown rate: S3 Standard in the region.
        form = await rate_form(pilot)
        assert form.query_one("#field-region", Input).value == "us-east-1"
        fill(form, usd_per_unit="0.023")
        await keep(pilot)
        assert app.screen is form, "no source: refused, the dialog stays with what was typed"
        assert "Source is required" in str(form.query_one(".error", Static).render())
        tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=2)
        fill(form, source_note="AWS S3 pricing page", rated_on=tomorrow.isoformat())
        await keep(pilot)
        assert app.screen is form, "a date in the future is refused"
        assert "Not kept" in str(form.query_one(".error", Static).render())
        fill(form, rated_on="2026-11-20")
        await keep(pilot)
        assert isinstance(app.screen, PricesScreen)
        stored = load_quote_book(root).rate(S3, "us-east-1")
        assert stored is not None and stored.manual
        assert (stored.first_tier_usd_per_unit, stored.source_note) == (
            0.023,
            "AWS S3 pricing page",
        )
        assert stored.retrieved_at == dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
        assert rate_cells(app)[0] == "$0.023/GB-Mo"
        assert "S3 Standard rate" not in missing(app), "the estimate has it"
        assert "Set the S3 Standard rate in us-east-1" in app.session.signals.status.value[0]

        # Edit: tab to the rates, the S3 row is highlighted; r opens it as stored.
        await pilot.press("tab", "tab")
        await settle(pilot)
        assert app.screen.focused is app.screen.query_one("#rates", DataTable)
        form = await rate_form(pilot)
        assert form.query_one("#field-usd_per_unit", Input).value == "0.023"
        assert form.query_one("#field-source_note", Input).value == "AWS S3 pricing page"
        fill(form, usd_per_unit="0.021", source_note="EDP rate card")
        await keep(pilot)
        stored = load_quote_book(root).rate(S3, "us-east-1")
        assert stored is not None and stored.first_tier_usd_per_unit == 0.021
        assert len(load_quote_book(root).rates) == 1, "replaced, not added"

        # Undo puts the first entry back; delete removes it; undo brings it back.
        await pilot.press("ctrl+z")
        await settle(pilot)
        stored = load_quote_book(root).rate(S3, "us-east-1")
        assert stored is not None and stored.first_tier_usd_per_unit == 0.023
        said = app.session.signals.status.value[0]
        assert said == "Undid: setting the S3 Standard rate in us-east-1"
        await pilot.press("d")
        await settle(pilot)
        assert load_quote_book(root).rates == ()
        assert rate_cells(app)[0] == "unknown"
        assert "S3 Standard rate" in missing(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert load_quote_book(root).rate(S3, "us-east-1") is not None
        said = app.session.signals.status.value[0]
        assert said == "Undid: deleting the manual S3 Standard rate in us-east-1"


async def test_an_implausible_rate_asks_and_no_goes_back_to_the_form_as_typed(
    with_target: Project,
) -> None:
    app = TrnTuiApp(with_target)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await settle(pilot)
        form = await rate_form(pilot)
        fill(form, usd_per_unit="23", source_note="typed in a hurry")  # dollars, not cents
        await keep(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "implausible" in app.screen.question
        await pilot.press("n")
        await settle(pilot)
        again = app.screen
        assert isinstance(again, ItemFormScreen)
        assert again.query_one("#field-usd_per_unit", Input).value == "23"
        assert load_quote_book(with_target.root).rates == ()


async def test_the_form_and_price_rate_store_the_same_rate(tmp_path: Path) -> None:
    """One rule for both: the CLI's rate and the form's, for the same values, are equal."""
    cli_project = init_project(tmp_path / "cli", "cli")
    parser = argparse.ArgumentParser(prog="trntui")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args([
        "price", "rate", str(cli_project), "--service", "inter-az-transfer", "--region",
        "eu-west-1", "--usd-per-unit", "0.01", "--source", " EDP rate card ", "--date",
        "2026-10-01",
    ])  # fmt: skip
    assert args.func(args) == 0
    with Project.open(init_project(tmp_path / "ui", "ui")) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await settle(pilot)
            form = await rate_form(pilot)
            form.query_one("#field-service").value = "inter-az-transfer"  # type: ignore[attr-defined]
            fill(
                form,
                region="eu-west-1",
                usd_per_unit="0.01",
                source_note=" EDP rate card ",
                rated_on="2026-10-01",
            )
            await keep(pilot)
        assert load_quote_book(project.root).rates == load_quote_book(cli_project).rates
