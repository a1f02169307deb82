"""The Prices screen against a real HTTP server on 127.0.0.1: fetch, pick, manual quote."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, ProgressBar

from tests import SIZE, copy_sample
from tests.test_pricing_support import P5_ON_DEMAND, FakePriceList, sp_csv_path
from tests.ui_support import settle
from trntui.core.quotes import LookupStatus, find_quote
from trntui.pricing.settings import CACHE_DIR_ENV, PRICING_URL_ENV
from trntui.store.project import Project
from trntui.store.quotes import load_quote_book
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.fetch_prices import FetchPricesScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.screens.prices import PricesScreen


@pytest.fixture
def price_list(
    price_server: FakePriceList, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> FakePriceList:
    """The fake price list, where the app looks for prices, with an empty cache."""
    monkeypatch.setenv(PRICING_URL_ENV, price_server.base_url)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return price_server


@pytest.fixture
def project(tmp_path: Path):
    """The sample project without its prices, runs and logs."""
    with Project.open(copy_sample(tmp_path / "proj", "prices", "runs", "logs")) as opened:
        yield opened


def targets_text(app: TrnTuiApp) -> str:
    """Every target's line on Prices, whole, as the detail line shows it when highlighted."""
    screen = app.screen
    assert isinstance(screen, PricesScreen)
    today = dt.datetime.now(dt.UTC).date()
    return "\n".join(
        str(screen.target_detail(target, today)) for target in app.session.inventory.targets
    )


async def open_fetch(app: TrnTuiApp, pilot: Pilot[object]) -> FetchPricesScreen:
    """The Fetch prices dialog, opened as a user does: the Prices screen (3), then f."""
    await pilot.press("3")
    await settle(pilot)
    assert isinstance(app.screen, PricesScreen)
    await pilot.press("f")
    await settle(pilot)
    assert isinstance(app.screen, FetchPricesScreen)
    return app.screen


async def fetch_types(pilot: Pilot[object], screen: FetchPricesScreen, types: str) -> None:
    """Fetch ``types`` (space-separated) in the open dialog and wait for the answer."""
    screen.query_one("#types", Input).value = types
    await pilot.press("enter")
    await settle(pilot)


async def test_fetch_preselects_the_target_quote_and_keeps_it(
    project: Project, price_list: FakePriceList
) -> None:
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        await fetch_types(pilot, await open_fetch(app, pilot), "p5.48xlarge trn3.48xlarge")
        results = app.screen.query_one("#results", DataTable)
        assert results.row_count >= 2
        message = str(app.screen.query_one("#message").content)
        assert "trn3.48xlarge" in message and "not in the price list yet" in message
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PricesScreen)
    book = load_quote_book(project.root)
    lookup = find_quote(book.quotes, "p5.48xlarge", "us-east-1", "on-demand")
    assert lookup.status == LookupStatus.FOUND
    assert lookup.usd_per_hour == pytest.approx(P5_ON_DEMAND)
    assert lookup.quote is not None and lookup.quote.source_url.startswith(price_list.base_url)
    reserved = [q for q in book.quotes if q.purchase_option != "on-demand"]
    assert reserved == [], "only the picked (target) quote is kept"
    assert book.rates, "the side-service rates are kept with the quotes"


async def test_a_savings_plan_target_gets_its_plan_rate_fetched_and_preselected(
    project: Project, price_list: FakePriceList
) -> None:
    """Both targets are bought with a 3-year all-upfront Compute Savings Plan: the fetch reads
    the Savings Plans file too, preselects that plan's p5 row ($26.97 in the fixture's
    us-east-1 file) and keeps it; Trainium3 has no plan rate and is said to be not listed yet."""
    plan = "savings-plan-compute-3yr-all-upfront"
    targets = tuple(
        dataclasses.replace(target, purchase_option=plan) for target in project.inventory.targets
    )
    project.save_inventory(dataclasses.replace(project.inventory, targets=targets))
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fetch(app, pilot)
        await fetch_types(pilot, screen, "p5.48xlarge trn3.48xlarge")
        results = screen.query_one("#results", DataTable)
        rows = [results.get_row_at(i) for i in range(results.row_count)]
        picked = [row for row in rows if row[0] == "✓"]
        assert [(row[1], row[2], row[3]) for row in picked] == [
            ("p5.48xlarge", "CSP-3yr-all", "$26.97")
        ]
        assert len([row for row in rows if str(row[2]).startswith(("CSP-", "EC2SP-"))]) == 12
        message = str(screen.query_one("#message").content)
        assert "trn3.48xlarge (savings-plan, us-east-1) is not in the price list yet" in message
        assert price_list.hits(sp_csv_path("us-east-1"))
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PricesScreen)
    book = load_quote_book(project.root)
    assert [(q.instance_type, q.purchase_option) for q in book.quotes] == [("p5.48xlarge", plan)]
    lookup = find_quote(book.quotes, "p5.48xlarge", "us-east-1", plan, book.misses)
    assert lookup.usd_per_hour == pytest.approx(26.97)
    assert lookup.quote is not None and lookup.quote.offer_code == "AWSComputeSavingsPlan"


async def test_unreachable_price_list_says_what_to_do(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Nothing listens on this port: the dialog stops, and points to the way forward."""
    monkeypatch.setenv(PRICING_URL_ENV, "http://127.0.0.1:9")
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fetch(app, pilot)
        bar = screen.query_one("#progress", ProgressBar)
        assert bar.total is not None, "no busy animation before anything started"
        await pilot.press("enter")
        await settle(pilot)
        message = str(screen.query_one("#message").content)
        assert "could not reach" in message
        assert "TRNTUI_PRICING_URL" in message and "by hand" in message
        assert bar.total is not None and bar.progress == 0


async def open_manual_quote(pilot: Pilot) -> ItemFormScreen:
    """Prices (3), then the manual quote form (a)."""
    await pilot.press("3")
    await settle(pilot)
    await pilot.press("a")
    await settle(pilot)
    form = pilot.app.screen
    assert isinstance(form, ItemFormScreen)
    return form


async def test_manual_trainium3_quote_requires_a_source(project: Project) -> None:
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_manual_quote(pilot)
        price = form.query_one("#field-usd_per_hour", Input)
        price.value = "61.5"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ItemFormScreen), "no source: the quote is not kept"
        assert "Source is required" in str(app.screen.query_one(".error").content)
        form.query_one("#field-source_note", Input).value = "account team offer (example)"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PricesScreen)
        assert "$61.50/h" in targets_text(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
    book = load_quote_book(project.root)
    lookup = find_quote(book.quotes, "trn3.48xlarge", "us-east-1", "on-demand")
    assert lookup.status == LookupStatus.NOT_LISTED_YET, "ctrl+z removed the manual quote"


async def test_unknown_prices_are_shown_as_unknown_not_zero(project: Project) -> None:
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await settle(pilot)
        text = targets_text(app)
        assert "not in the price list yet" in text
        assert "price unknown" in text
        assert "$0" not in text
        rates = app.screen.query_one("#rates", DataTable)
        assert [str(rates.get_row_at(i)[2]) for i in range(rates.row_count)] == ["unknown"] * 5


def test_prices_screen_snapshot(project: Project, snap_compare) -> None:
    async def to_prices(pilot) -> None:
        await pilot.press("3")
        await settle(pilot)

    assert snap_compare(TrnTuiApp(project), terminal_size=SIZE, run_before=to_prices)


async def test_a_refused_manual_quote_keeps_the_dialog_and_a_region_typo_is_named(
    project: Project,
) -> None:
    import datetime as dt

    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_manual_quote(pilot)
        form.query_one("#field-usd_per_hour", Input).value = "61.5"
        form.query_one("#field-source_note", Input).value = "account team offer (example)"
        future = dt.date.today() + dt.timedelta(days=30)
        form.query_one("#field-quoted_on", Input).value = future.isoformat()
        form.query_one("#field-region", Input).value = "us-eest-1"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form, "a refused quote keeps the dialog open"
        assert "Not kept:" in str(form.query_one(".error").content)
        assert form.query_one("#field-source_note", Input).value.startswith("account team")
        form.query_one("#field-quoted_on", Input).value = dt.date.today().isoformat()
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PricesScreen)
        message, level = app.status
        assert level == "warning" and "us-eest-1" in message and "check the region" in message


async def test_every_note_of_a_fetch_can_be_read(
    project: Project, price_list: FakePriceList
) -> None:
    """One line per note, in a box that scrolls: a fetch for many types has more notes than
    fit, and the last one (here a side rate's) is reached by scrolling."""
    del price_list.site["/offers/v1.0/aws/AWSDataTransfer/current/region_index.json"]
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fetch(app, pilot)
        unknown = ["trn9.48xlarge", "trn8.48xlarge", "trn7.48xlarge", "trn6.48xlarge"]
        await fetch_types(pilot, screen, " ".join(["p5.48xlarge", *unknown]))
        lines = str(screen.query_one("#message").content).splitlines()
        assert lines[0].endswith(" 4 side rates."), lines[0]
        for instance_type in unknown:
            assert sum(line.startswith(instance_type) for line in lines) == 1
        assert lines[-1].startswith("inter-AZ data transfer:")
        notes = screen.query_one("#notes")
        assert notes.max_scroll_y > 0  # more than the box shows
        notes.focus()
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()  # the scroll is animated
        await settle(pilot)
        assert notes.scroll_y == notes.max_scroll_y


async def test_price_per_accelerator_uses_the_count_a_target_states(
    sample_project: Project,
) -> None:
    """trn3.48xlarge is not in the hardware table; the sample's target states 16 accelerators
    per instance, which the estimate uses, but Prices showed $/accelerator-h as unknown."""
    target = next(t for t in sample_project.inventory.targets if t.instance_type == "trn3.48xlarge")
    quote = next(
        q
        for q in load_quote_book(sample_project.root).quotes
        if q.instance_type == target.instance_type
    )
    per_chip = quote.usd_per_hour / target.accelerators_per_instance
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await settle(pilot)
        text = targets_text(app)
        assert (
            f"${per_chip:,.2f}/accelerator-h, "
            f"{target.accelerators_per_instance} per instance stated on the target" in text
        )
        table = app.screen.query_one("#quotes", DataTable)
        row = next(
            table.get_row_at(i)
            for i in range(table.row_count)
            if table.get_row_at(i)[0] == quote.instance_type
        )
        assert f"${per_chip:,.2f}" in [str(cell) for cell in row]


async def test_no_to_an_implausible_price_goes_back_to_the_form_as_typed(
    project: Project,
) -> None:
    """Answering n threw the whole form away; now it comes back with what was typed, to
    correct the price, and nothing is stored."""
    from trntui.ui.screens.confirm import ConfirmScreen

    before = load_quote_book(project.root)
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_manual_quote(pilot)
        form.query_one("#field-usd_per_hour", Input).value = "9999"
        form.query_one("#field-source_note", Input).value = "typed in a hurry"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        again = app.screen
        assert isinstance(again, ItemFormScreen)
        assert again.query_one("#field-usd_per_hour", Input).value == "9999"
        assert again.query_one("#field-source_note", Input).value == "typed in a hurry"
    assert load_quote_book(project.root) == before


async def test_the_fetch_dialog_refuses_a_region_that_is_not_a_region_code(
    project: Project, price_list: FakePriceList, tmp_path: Path
) -> None:
    """Issue 30, item 2: the form's region becomes a folder of the cache; '../../x' is
    refused with the inventory's rule before anything is asked of the server."""
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fetch(app, pilot)
        screen.query_one("#region", Input).value = "../../x"
        await fetch_types(pilot, screen, "p5.48xlarge")
        message = str(screen.query_one("#message").content)
        assert "'../../x' is not an AWS region code" in message
    assert not price_list.requests
    assert not (tmp_path / "cache").exists()


async def test_the_data_preparation_instance_is_offered_and_priced_like_a_target(
    project: Project,
) -> None:
    """The estimate prices data preparation on the instance type the inventory names (the
    sample: c7i.8xlarge), on demand in each target's region. Once every target had a quote,
    `a` offered the first target again, and a quote for c7i.8xlarge was stored with "Added,
    but no target uses c7i.8xlarge (check the instance type)": a false alarm on the way to a
    complete estimate."""
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        offered = []
        for price in ("61.5", "55.04", "1.428"):
            form = await open_manual_quote(pilot)
            offered.append(form.query_one("#field-instance_type", Input).value)
            form.query_one("#field-usd_per_hour", Input).value = price
            form.query_one("#field-source_note", Input).value = "AWS pricing page (example)"
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, PricesScreen)
        assert offered == ["trn3.48xlarge", "p5.48xlarge", "c7i.8xlarge"]
        status = str(app.screen.query_one("StatusLine").content)
        assert status == "Added manual quote for c7i.8xlarge", status


async def test_a_quote_or_a_rate_form_opens_on_the_field_still_missing(project: Project) -> None:
    """`a` offers the quote with its instance type, region and option filled, `r` the rate
    with its service and region: the form opened on its first field, so the price a user typed
    went in front of the instance type ("40trn3.48xlarge", refused) or into the service
    picker (lost). It opens on the first required field still empty."""
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_manual_quote(pilot)
        await pilot.press(*"61.5")
        assert form.query_one("#field-usd_per_hour", Input).value == "61.5"
        assert form.query_one("#field-instance_type", Input).value == "trn3.48xlarge"
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        rate = app.screen
        assert isinstance(rate, ItemFormScreen)
        await pilot.press(*"0.023")
        assert rate.query_one("#field-usd_per_unit", Input).value == "0.023"


NARROW = (64, 24)


async def test_a_detail_longer_than_its_line_says_so_and_enter_shows_it_whole(
    tmp_path: Path,
) -> None:
    """Issue 26 item 2 (at 64 columns, where it happens with a shorter text than at 80): the
    detail line holds five lines; a longer text (here a target with a
    long name, no side rates and an EXAMPLE quote) ends with how to read the rest, and enter
    on the row shows the whole text in a notification (it was cut after "(r enters them, f")."""
    from rich.console import Console
    from textual.widgets import Static

    from trntui.store.quotes import save_quote_book

    root = copy_sample(tmp_path / "proj", "runs", "logs")
    with Project.open(root) as project:
        book = load_quote_book(root)
        save_quote_book(root, dataclasses.replace(book, rates=()))
        first = project.inventory.targets[0]
        long_name = first.name + " on the negotiated capacity of the research cluster in Q3"
        targets = (dataclasses.replace(first, name=long_name), *project.inventory.targets[1:])
        project.save_inventory(dataclasses.replace(project.inventory, targets=targets))
        app = TrnTuiApp(project)
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)
            await pilot.press("3")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, PricesScreen)
            today = dt.datetime.now(dt.UTC).date()
            whole = screen.target_detail(app.session.inventory.targets[0], today)
            console = Console(width=NARROW[0] - 2)
            assert len(whole.wrap(console, NARROW[0] - 2)) > 5  # the case under test
            assert whole.plain.endswith("f fetches them)")
            shown = str(screen.query_one("#detail", Static).content)
            assert "f fetches them)" not in shown and "enter shows the whole text" in shown
            screen.query_one("#targets", DataTable).focus()
            await pilot.press("enter")
            await settle(pilot)
            messages = [n.message for n in app._notifications]
            assert whole.plain in messages, messages


async def test_a_manual_quote_that_replaces_one_says_so_and_undo_brings_it_back(
    sample_project: Project,
) -> None:
    """The sample has a manual quote for trn3.48xlarge. Entering another for the same type,
    region and option replaced it with only "Added manual quote for trn3.48xlarge": now the
    status names the price it replaced and that ctrl+z brings it back, which it does."""
    from trntui.core.format import usd_price

    def trn3() -> float | None:
        book = load_quote_book(sample_project.root)
        found = [q for q in book.quotes if q.instance_type == "trn3.48xlarge" and q.manual]
        assert len(found) == 1, found
        return found[0].usd_per_hour

    before = trn3()
    assert isinstance(before, float)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_manual_quote(pilot)
        assert form.query_one("#field-instance_type", Input).value == "trn3.48xlarge"
        form.query_one("#field-usd_per_hour", Input).value = str(before + 1)
        form.query_one("#field-source_note", Input).value = "account team, second offer"
        await pilot.press("ctrl+s")
        await settle(pilot)
        status = str(app.screen.query_one("StatusLine").content)
        assert status.startswith(f"Replaced the {usd_price(before)}/h manual quote"), status
        assert "ctrl+z" in status and len(status) <= SIZE[0], status
        assert trn3() == before + 1
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert trn3() == before
