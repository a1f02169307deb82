"""Issue 26: pinning a quote in the app. ``trntui price add --pin`` was the only way to say "use
this manual quote over the price list's"; on Prices, ``p`` pins the highlighted manual quote
(or the highlighted target's) and unpins a pinned one, through the session: stored in
``prices/quotes.toml``, one undo step, the estimate recomputed with it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from tests import SIZE
from tests.ui_support import settle, wait_until
from trntui.cli import main
from trntui.core.quotes import PriceQuote
from trntui.store.project import Project
from trntui.store.quotes import add_quotes, load_quote_book
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.prices import PricesScreen
from trntui.ui.widgets.estimate_bar import EstimateBar

GPU = "GPU baseline (1 x p5.48xlarge)"
LISTED_USD_PER_HOUR = 98.32
"""A price-list p5.48xlarge quote beside the sample's manual $55.04: the list's wins until the
manual one is pinned."""
MANUAL_USD_PER_HOUR = 55.04


@pytest.fixture
def listed(sample_dir: Path) -> Project:
    listed_quote = PriceQuote(
        instance_type="p5.48xlarge",
        region="us-east-1",
        purchase_option="on-demand",
        usd_per_hour=LISTED_USD_PER_HOUR,
        accelerator_count=8,
        retrieved_at=dt.datetime(2026, 11, 28, tzinfo=dt.UTC),
        manual=False,
        offer_code="AmazonEC2",
        publication_date="2026-11-27T00:00:00Z",
        sku="P5TEST",
    )
    add_quotes(sample_dir, [listed_quote])
    return Project.open(sample_dir)


def gpu_price(app: TrnTuiApp) -> float | None:
    analysis = app.session.analysis
    assert analysis is not None
    return analysis.estimate.target(GPU).input("usd_per_hour").value


def status(app: TrnTuiApp) -> str:
    return str(app.screen.query_one("StatusLine", Static).content)


def manual_p5(root: Path) -> PriceQuote:
    return next(
        q for q in load_quote_book(root).quotes if q.instance_type == "p5.48xlarge" and q.manual
    )


async def highlight_quote(pilot: Pilot, app: TrnTuiApp, *, manual: bool) -> None:
    """Focus the quotes list and walk down to the p5.48xlarge quote of that origin."""
    screen = app.screen
    assert isinstance(screen, PricesScreen)
    table = screen.query_one("#quotes", DataTable)
    table.focus()
    await pilot.pause()
    row = next(
        i
        for i, q in enumerate(screen.book.quotes)
        if q.instance_type == "p5.48xlarge" and q.manual is manual
    )
    table.move_cursor(row=row)
    await pilot.pause()


def target_note(app: TrnTuiApp) -> str:
    table = app.screen.query_one("#targets", DataTable)
    row = [str(cell) for cell in table.get_row_at(1)]
    assert row[1] == "p5.48xlarge", row
    return row[4]


async def test_p_pins_a_manual_quote_over_the_price_lists_and_ctrl_z_takes_it_back(
    listed: Project,
) -> None:
    with listed:
        app = TrnTuiApp(listed)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await settle(pilot)
            assert gpu_price(app) == LISTED_USD_PER_HOUR
            assert target_note(app).startswith("price list, over manual")
            bar_before = app.screen.query_one(EstimateBar).content

            await highlight_quote(pilot, app, manual=True)
            assert "p pins it" in str(app.screen.query_one("#detail", Static).content)
            await pilot.press("p")
            await settle(pilot)
            text = status(app)
            assert text.startswith(
                f"Pinned: p5.48xlarge on-demand in us-east-1 at $55.04/h for {GPU}, used over "
                "the price list's $98.32/h"
            ), text
            assert "still unverified: its source says EXAMPLE" in text, text
            assert manual_p5(listed.root).pinned
            await wait_until(
                pilot, lambda: gpu_price(app) == MANUAL_USD_PER_HOUR, "the pinned quote in use"
            )
            assert target_note(app).startswith("pinned manual")
            assert app.screen.query_one(EstimateBar).content != bar_before
            quotes = app.screen.query_one("#quotes", DataTable)
            assert str(quotes.get_row_at(quotes.cursor_row)[5]) == "pinned"

            await pilot.press("ctrl+z")
            await settle(pilot)
            undone = status(app)
            assert undone == f"Undid: pinning p5.48xlarge on-demand in us-east-1 for {GPU}", undone
            assert not manual_p5(listed.root).pinned
            await wait_until(
                pilot, lambda: gpu_price(app) == LISTED_USD_PER_HOUR, "the list's price again"
            )
            assert target_note(app).startswith("price list, over manual")
            await pilot.press("ctrl+q")


async def test_p_on_a_target_pins_its_manual_quote_and_again_unpins_it(listed: Project) -> None:
    with listed:
        app = TrnTuiApp(listed)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await settle(pilot)
            targets = app.screen.query_one("#targets", DataTable)
            targets.focus()
            targets.move_cursor(row=1)
            await pilot.press("p")
            await settle(pilot)
            assert manual_p5(listed.root).pinned, status(app)
            await wait_until(
                pilot, lambda: gpu_price(app) == MANUAL_USD_PER_HOUR, "the pinned quote in use"
            )
            await pilot.press("p")
            await settle(pilot)
            text = status(app)
            assert text.startswith(
                f"Unpinned: p5.48xlarge on-demand in us-east-1 for {GPU}: the price list's "
                "$98.32/h is used again"
            ), text
            assert not manual_p5(listed.root).pinned
            await wait_until(
                pilot, lambda: gpu_price(app) == LISTED_USD_PER_HOUR, "the list's price again"
            )
            assert len(app.session.history) == 2, "a pin and an unpin: two undo steps"
            await pilot.press("ctrl+q")


async def test_a_price_list_quote_is_not_pinned_and_says_why(listed: Project) -> None:
    with listed:
        app = TrnTuiApp(listed)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await settle(pilot)
            book_before = load_quote_book(listed.root)
            await highlight_quote(pilot, app, manual=False)
            await pilot.press("p")
            await settle(pilot)
            text = status(app)
            assert text.startswith("Not pinned:") and "AWS Price List's" in text, text
            assert load_quote_book(listed.root) == book_before
            assert not app.session.history
            await pilot.press("ctrl+q")


async def test_a_pin_in_the_app_stores_what_price_add_pin_stores(listed: Project, capsys) -> None:
    """The app's pin and the CLI's ``--pin`` are one rule: the same quote with ``pinned``."""
    from trntui.core.manual_quote import manual_quote

    before = manual_p5(listed.root)
    by_cli = manual_quote(
        instance_type=before.instance_type,
        region=before.region,
        purchase_option=before.purchase_option,
        usd_per_hour=before.usd_per_hour,
        upfront_usd=before.upfront_usd,
        retrieved_at=before.retrieved_at,
        source_note=before.source_note,
        pinned=True,
    )
    with listed:
        app = TrnTuiApp(listed)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await settle(pilot)
            await highlight_quote(pilot, app, manual=True)
            await pilot.press("p")
            await settle(pilot)
            await pilot.press("ctrl+q")
    pinned = manual_p5(listed.root)
    assert pinned.pinned and pinned.verified is False  # EXAMPLE: pinned, never verified
    assert main(["price", "list", str(listed.root), "--json"]) == 0
    listed_quotes = json.loads(capsys.readouterr().out)["quotes"]
    pins = {q["manual"]: q["pinned"] for q in listed_quotes if q["instance_type"] == "p5.48xlarge"}
    assert pins == {True: True, False: False}, "the CLI's list says which quote is pinned"
    assert main(["price", "list", str(listed.root)]) == 0
    assert "manual, pinned" in capsys.readouterr().out
    assert (pinned.usd_per_hour, pinned.region, pinned.purchase_option, pinned.manual) == (
        by_cli.usd_per_hour,
        by_cli.region,
        by_cli.purchase_option,
        by_cli.manual,
    )
