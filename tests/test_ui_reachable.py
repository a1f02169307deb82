"""Issue 26, item 2: every target can be reached on Prices, and no warning, refusal or
status is cut at 80x24 or 120x40: what does not fit its line wraps, or a detail line or a
notification holds the whole text."""

from __future__ import annotations

import dataclasses
import datetime as dt

import polars as pl
import pytest
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Static, TabbedContent

from tests import SIZE
from tests.ui_support import settle, wait_until
from trntui.core.timeline import SystemSize
from trntui.store.project import Project
from trntui.store.quotes import load_quote_book, save_quote_book
from trntui.store.runs import load_runs
from trntui.store.set_sizes import state_size
from trntui.ui.app import TrnTuiApp
from trntui.ui.widgets.status_line import StatusLine

WIDE = (120, 40)


def lines_needed(widget: Widget, text: Text | str) -> int:
    """How many lines ``text`` takes wrapped at ``widget``'s content width."""
    text = Text(text) if isinstance(text, str) else text
    return len(text.wrap(widget.app.console, widget.content_size.width))


def assert_whole(widget: Static) -> None:
    """The widget is as tall as its text wrapped at its width: nothing is cut."""
    text = str(widget.render())
    needed = lines_needed(widget, text)
    assert widget.content_size.height >= needed, (
        f"{widget.id}: {needed} lines of text in {widget.content_size.height}: {text}"
    )


def with_targets(project: Project, count: int) -> list[str]:
    """Give the project ``count`` targets, copies of its GPU one, whose names differ only at
    their end (the case a panel that clips, or a name cut at its end, loses)."""
    base = project.inventory.targets[1]
    targets = tuple(
        dataclasses.replace(base, name=f"GPU baseline on one p5.48xlarge, variant {i}")
        for i in range(count)
    )
    inventory = dataclasses.replace(project.inventory, targets=targets)
    project.save_inventory(inventory)
    project.inventory = inventory
    return [target.name for target in targets]


@pytest.mark.parametrize("size", [SIZE, WIDE])
async def test_every_target_on_prices_can_be_highlighted_and_read_whole(
    sample_project: Project, size: tuple[int, int]
) -> None:
    names = with_targets(sample_project, 14)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=size) as pilot:
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#targets", DataTable)
        assert app.screen.focused is table
        assert table.row_count == len(names)
        assert table.size.height < len(names) + 1, "the list scrolls, it is not all shown"
        detail = app.screen.query_one("#detail", Static)
        for index, name in enumerate(names):
            if index:
                await pilot.press("down")
                await settle(pilot)
            assert table.cursor_row == index
            top = round(table.scroll_y)
            assert top <= index < top + table.size.height - 1, f"row {index} not in view"
            assert str(detail.render()).startswith(f"{name}: p5.48xlarge on-demand")
            assert_whole(detail)


@pytest.mark.parametrize("size", [SIZE, WIDE])
async def test_a_price_warning_is_read_whole_in_the_detail_line(
    sample_project: Project, size: tuple[int, int]
) -> None:
    """The Trainium3 line was cut mid-sentence: the sample's quote is an example figure."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=size) as pilot:
        await pilot.press("3")
        await settle(pilot)
        detail = app.screen.query_one("#detail", Static)
        text = str(detail.render())
        assert text.startswith("Trainium3 trial: trn3.48xlarge on-demand in us-east-1: $")
        assert text.endswith("an EXAMPLE figure, not a price")
        assert_whole(detail)
        for table_id in ("quotes", "rates"):  # tab moves to the next list; its detail shows
            await pilot.press("tab")
            await settle(pilot)
            assert app.screen.focused is app.screen.query_one(f"#{table_id}", DataTable)
            assert "EXAMPLE figure for the sample project" in str(detail.render())
            assert_whole(detail)


@pytest.mark.parametrize("size", [SIZE, WIDE])
async def test_the_set_lines_on_runs_keep_the_back_test_when_the_first_wraps(
    sample_project: Project, size: tuple[int, int]
) -> None:
    """A stated size adds what the logs said to the set line, which wrapped and pushed the
    back-test line out at 80x24."""
    runs = load_runs(sample_project.root)
    mlperf = runs.filter(pl.col("set_name") != "trn3-example")
    set_name = str(mlperf["set_name"][0])
    state_size(
        sample_project.root,
        set_name,
        SystemSize(2, 8, "NVIDIA H100-SXM5-80GB", "the job script", stated_by="alice"),
    )
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(row=table.get_row_index(str(mlperf["run_id"][0])))
        await settle(pilot)
        summary = app.screen.query_one("#set-summary", Static)
        text = str(summary.render())
        assert "logs said" in text and "back-test" in text
        assert_whole(summary)


@pytest.mark.parametrize("size", [SIZE, WIDE])
async def test_a_long_refusal_on_the_status_line_is_read_whole(
    sample_project: Project, size: tuple[int, int]
) -> None:
    """A refusal that names a file (``z`` naming the project's folder) was cut at 80
    columns: a longer message wraps, and one longer than the status line's lines is also a
    notification holding it whole."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        await settle(pilot)
        status = app.screen.query_one(StatusLine)
        two_lines = "Size not stated: no run set 'x' in /home/alice/projects/llama (see " + (
            "`trntui runs`) " * 4
        )
        app.session.signals.status.set((two_lines, "error"))
        await settle(pilot)
        assert_whole(status)
        assert not app._notifications, "a message the line holds whole is not repeated"
        long = "Size not stated: " + " ".join(f"reason{i}" for i in range(80)) + " END"
        app.session.signals.status.set((long, "error"))
        await settle(pilot)
        assert status.content_size.height == 3
        held = [n.message for n in app._notifications]
        assert held == [long], "once, by the status line shown, whole"


@pytest.mark.parametrize("size", [SIZE, WIDE])
async def test_every_target_on_scale_is_reached_with_t_and_its_table_scrolls(
    sample_project: Project, size: tuple[int, int]
) -> None:
    names = with_targets(sample_project, 3)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        app.screen.query_one(TabbedContent).active = "scale"
        await settle(pilot)
        body = app.screen.query_one("#scale-body", Static)
        seen = []
        for _ in names:
            await wait_until(pilot, lambda: "Scale:" in str(body.content), "the Scale tab")
            seen.append(str(body.content).splitlines()[0])
            await pilot.press("t")
            await settle(pilot)
        assert seen == [f"Scale: {name}  (t: next target)" for name in names]
        scroll = app.screen.query_one("#scale-scroll", VerticalScroll)
        assert scroll.size.height >= lines_needed(scroll, str(body.content)) or (
            scroll.can_focus and scroll.max_scroll_y > 0
        ), "what does not fit scrolls"
        scroll.focus()
        await pilot.press("end")
        await settle(pilot)
        assert scroll.scroll_y == scroll.max_scroll_y


@pytest.mark.parametrize("size", [SIZE, WIDE])
def test_prices_with_three_targets_snapshot(
    sample_project: Project, snap_compare, size: tuple[int, int]
) -> None:
    """The sample's two targets and a third, reserved one without a quote: every row shows,
    the highlighted target's line whole below the lists."""
    base = sample_project.inventory.targets[1]
    reserved = dataclasses.replace(
        base,
        name="GPU 3-year reserved (1 x p5.48xlarge)",
        purchase_option="reserved-3yr-standard-no-upfront",
    )
    inventory = dataclasses.replace(
        sample_project.inventory, targets=(*sample_project.inventory.targets, reserved)
    )
    sample_project.save_inventory(inventory)
    sample_project.inventory = inventory
    # The ages shown are counted to today: the book is dated three days ago, every day.
    book = load_quote_book(sample_project.root)
    then = dt.datetime.combine(dt.datetime.now(dt.UTC).date(), dt.time(), tzinfo=dt.UTC)
    then -= dt.timedelta(days=3)
    save_quote_book(
        sample_project.root,
        dataclasses.replace(
            book,
            quotes=tuple(dataclasses.replace(q, retrieved_at=then) for q in book.quotes),
            rates=tuple(dataclasses.replace(r, retrieved_at=then) for r in book.rates),
        ),
    )

    async def to_prices(pilot) -> None:
        await pilot.press("3")
        await settle(pilot)

    assert snap_compare(TrnTuiApp(sample_project), terminal_size=size, run_before=to_prices)
