"""Fetch prices from the AWS Price List in a worker, then pick which quotes the project keeps.

The regional EC2 offer file is hundreds of MB on first download: the progress bar follows the
bytes, esc cancels (no partial file replaces a good cached one), and the rest of the app stays
usable. Rows matching a target's instance type and purchase option are preselected. The
Savings Plans rates are fetched too for the types of targets bought with a Savings Plan.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Input, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from trntui.core.errors import UserError
from trntui.core.fields import FieldValueError
from trntui.core.format import plural, usd_per_unit, usd_price
from trntui.core.inventory import check_region
from trntui.core.quotes import (
    PriceLookup,
    PriceQuote,
    ServiceRate,
    is_savings_plan,
    usd_per_accelerator_hour,
)
from trntui.pricing.errors import PricingCancelledError, PricingError
from trntui.pricing.service import (
    fetch_quotes_and_side_rates,
    fetch_savings_plan_quotes,
)
from trntui.pricing.settings import PRICING_URL_ENV, PricingSettings
from trntui.ui.format import short_option
from trntui.ui.screens.dialog import after_typing, field_row
from trntui.ui.screens.worker_modal import WorkerModal
from trntui.ui.widgets.text_field import TextField

COMMON_TYPES = (
    "trn1.32xlarge",
    "trn2.48xlarge",
    "p4d.24xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
)


_WAY_FORWARD = (
    f"Check the network, or set {PRICING_URL_ENV} to a reachable copy of the price list; "
    "a quote from elsewhere can be added by hand (a on Prices)"
)


Fetched = tuple[list[PriceQuote], list[ServiceRate], tuple[PriceLookup, ...]]
"""What a fetch hands back: the quotes picked, the side-service rates, the lookups that found
no quote."""


class FetchPricesScreen(WorkerModal[Fetched | None]):
    DEFAULT_CSS = """
    FetchPricesScreen .row > Label { width: 8; }
    FetchPricesScreen #results { height: 1fr; }
    FetchPricesScreen #notes { height: auto; max-height: 5; }
    FetchPricesScreen #message { height: auto; }
    """

    BINDINGS = [
        Binding("space", "pick", "Pick", id="fetch.toggle"),
        Binding("ctrl+s", "keep", "Keep picked", priority=True, id="fetch.keep"),
        Binding("escape", "cancel", "Cancel", id="fetch.cancel"),
    ]
    AUTO_FOCUS = "#types"

    def __init__(self, region: str, wanted: list[tuple[str, str]]) -> None:
        super().__init__()
        self.default_region = region
        self.wanted = wanted
        self.quotes: list[PriceQuote] = []
        self.rates: list[ServiceRate] = []
        self.misses: tuple[PriceLookup, ...] = ()
        """Types the price list has no row for: kept as evidence that they are not offered."""
        self.picked: set[int] = set()

    def compose(self) -> ComposeResult:
        types = list(dict.fromkeys([t for t, _ in self.wanted] + list(COMMON_TYPES)))
        with Vertical() as box:
            box.border_title = "Fetch prices from the AWS Price List"
            yield field_row("Region", TextField(self.default_region, compact=True, id="region"))
            yield field_row("Types", TextField(" ".join(types), compact=True, id="types"))
            # A full, still bar until a fetch starts (an unknown total would animate as busy).
            yield ProgressBar(total=1, show_eta=False, id="progress")
            table: DataTable[str] = DataTable(id="results", cursor_type="row")
            yield table
            # One line per note (a type not offered, a side rate not found...): a fetch for
            # many types has more than fit; the box scrolls (tab reaches it, or the wheel).
            with VerticalScroll(id="notes"):
                yield Static("", id="message")
            yield Static(
                "enter fetch   space pick   ctrl+s keep picked quotes   esc cancel/close",
                classes="hint",
            )

    def on_mount(self) -> None:
        # Show the start of the type list (the targets' types come first), not its end.
        self.call_after_refresh(setattr, self.query_one("#types", Input), "cursor_position", 0)
        table = self.query_one("#results", DataTable)
        for label in ("", "Instance", "Option", "$/h", "$/acc-h", "Upfront", "Published"):
            table.add_column(label)

    @on(Input.Submitted)
    def _start(self, event: Input.Submitted) -> None:
        event.stop()
        region = self.query_one("#region", Input).value.strip()
        types = self.query_one("#types", Input).value.split()
        if not region or not types:
            self._message("Give a region and at least one instance type.", error=True)
            return
        try:
            check_region(region)
        except FieldValueError as error:
            self._message(str(error), error=True)
            return
        self.query_one("#results", DataTable).clear()
        self.quotes, self.rates, self.picked = [], [], set()
        self._message(f"Fetching {region} prices...")
        self.query_one("#progress", ProgressBar).update(total=None, progress=0)
        self._worker = self._fetch(region, types)

    @work(thread=True, exclusive=True, group="fetch", exit_on_error=False)
    def _fetch(self, region: str, types: list[str]) -> str:
        worker = get_current_worker()

        def progress(done: int, total: int | None) -> None:
            self.app.call_from_thread(self._progress, done, total)

        def cancel() -> bool:
            return worker.is_cancelled

        settings = PricingSettings.from_env().started()  # one deadline for the whole fetch
        result, side = fetch_quotes_and_side_rates(
            region, types, settings=settings, progress=progress, cancel=cancel
        )
        found = [result]
        notes = [lookup.message for lookup in result.missing] + list(result.notes)
        notes += list(side.missing.values())
        plan_types = [t for t, option in self.wanted if is_savings_plan(option) and t in types]
        if plan_types:
            try:
                plans = fetch_savings_plan_quotes(
                    region, plan_types, settings=settings, progress=progress, cancel=cancel
                )
            except PricingCancelledError:
                raise
            except PricingError as error:
                notes.append(f"Savings Plans rates: {error}")
            else:
                found.append(plans)
                notes += [lookup.message for lookup in plans.missing] + list(plans.notes)
        self.misses = tuple(miss for each in found for miss in each.misses)
        quotes = tuple(quote for each in found for quote in each.quotes)
        self.app.call_from_thread(self._show, quotes, side.rates)
        notes[:0] = [each.status.describe() for each in found if each.error is not None]
        return "\n".join(notes)

    def _progress(self, done: int, total: int | None) -> None:
        self.query_one("#progress", ProgressBar).update(total=total, progress=done)

    def _show(self, quotes: tuple[PriceQuote, ...], rates: tuple[ServiceRate, ...]) -> None:
        self.quotes = sorted(quotes, key=lambda q: (q.instance_type, q.purchase_option))
        self.rates = list(rates)
        wanted = set(self.wanted)
        self.picked = {
            i for i, q in enumerate(self.quotes) if (q.instance_type, q.purchase_option) in wanted
        }
        table = self.query_one("#results", DataTable)
        for index, quote in enumerate(self.quotes):
            per_chip = usd_per_accelerator_hour(quote)
            table.add_row(
                "✓" if index in self.picked else " ",
                quote.instance_type,
                short_option(quote.purchase_option)[:22],
                usd_price(quote.usd_per_hour),
                usd_per_unit(per_chip),
                f"{quote.upfront_usd:,.0f}" if quote.upfront_usd else "-",
                (quote.publication_date or "")[:10],
                key=str(index),
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "fetch":
            return
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            done = 1 if event.state == WorkerState.SUCCESS else 0
            self.query_one("#progress", ProgressBar).update(total=1, progress=done)
        if event.state == WorkerState.SUCCESS:
            notes = [event.worker.result] if event.worker.result else []
            text = f"{plural(len(self.quotes), 'quote')}, {plural(len(self.rates), 'side rate')}"
            if not self.quotes and not self.rates:
                notes.append(_WAY_FORWARD)
            shown = (
                "\n".join([text + ".", *notes]) if notes else text + ". space picks, ctrl+s keeps."
            )
            self._message(shown)
        elif event.state == WorkerState.CANCELLED:
            self._message("Cancelled; the cached price list (if any) is unchanged.")
        elif event.state == WorkerState.ERROR:
            error = event.worker.error
            text = str(error) if isinstance(error, UserError) else f"Fetch failed: {error!r}"
            self._message(f"{text}. {_WAY_FORWARD}.", error=True)

    def action_pick(self) -> None:
        table = self.query_one("#results", DataTable)
        if not self.quotes or table.cursor_row < 0:
            return
        index = table.cursor_row
        self.picked ^= {index}
        table.update_cell_at(Coordinate(index, 0), "✓" if index in self.picked else " ")

    @after_typing
    def action_keep(self) -> None:
        if self.busy:
            self._message("Still fetching: wait, or esc to cancel.")
            return
        if not self.picked and not self.rates and not self.misses:
            self._message("Nothing to keep: fetch first (enter).", error=True)
            return
        self.dismiss(([self.quotes[i] for i in sorted(self.picked)], self.rates, self.misses))
