"""The Prices screen: what each target costs per hour, where that number came from, and when.

The project's quote book (``store.quotes``) is the only source the estimate reads. Fetching
from the AWS Price List happens in a modal with a worker (progress, cancel); manual quotes are
typed in a form that requires a source and a date. A price that is not known is shown as
unknown with the reason, never as $0.
"""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Static

from trntui.core.errors import UserError
from trntui.core.estimate import quote_lookups, quote_users, why_quote_unused
from trntui.core.format import UNKNOWN, plural, usd_per_unit, usd_price
from trntui.core.inventory import TrainingTarget
from trntui.core.manual_quote import ManualQuoteEntry
from trntui.core.manual_rate import ManualRateEntry
from trntui.core.quotes import (
    ON_DEMAND,
    LookupStatus,
    PriceQuote,
    QuoteBook,
    QuoteLookup,
    SideService,
    find_quote,
    implausible_price,
    implausible_rate,
    quote_flags,
    usd_per_accelerator_hour,
)
from trntui.store.quotes import load_quote_book, unpriced_quotes
from trntui.ui.format import distinct_labels, fit_middle, short_option
from trntui.ui.screens.base import SessionScreen, edits
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.fetch_prices import Fetched, FetchPricesScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.session import Session
from trntui.ui.widgets.area_bar import AreaBar
from trntui.ui.widgets.estimate_bar import EstimateBar
from trntui.ui.widgets.status_line import StatusLine

SIDE_LABELS = {
    SideService.S3_STANDARD_STORAGE: "S3 Standard",
    SideService.EBS_GP3_STORAGE: "EBS gp3",
    SideService.CLOUDWATCH_LOGS_INGESTION: "Logs ingestion",
    SideService.CLOUDWATCH_LOGS_STORAGE: "Logs storage",
    SideService.INTER_AZ_TRANSFER: "Inter-AZ",
}
"""Each side service as the estimate's inputs name it (``S3 Standard rate``)."""


def chosen(lookup: QuoteLookup) -> str:
    """Which quote a target uses, in a few words (``find_quote``'s reason in full is in the
    estimate and the report). Read from the quote, not the reason's words: "used over the
    manual quote(s) that nobody pinned" names pinning too."""
    quote = lookup.quote
    if quote is not None and quote.manual and quote.pinned:
        return "pinned manual"
    if quote is not None and not quote.manual:
        return "price list, over manual" if "manual" in lookup.reason else "price list"
    return "manual, none listed"


def quote_origin(quote: PriceQuote) -> str:
    if quote.manual:
        return "pinned" if quote.pinned else "manual"
    return f"list {(quote.publication_date or '')[:10]}".strip()


def _missing_hint(status: LookupStatus) -> str:
    """What to do about a target without a quote. Absent from this project's book is not the
    same as absent from the price list: only a lookup that found no row (or Trainium3, known
    to be missing) says so."""
    hints = {
        LookupStatus.NOT_LISTED_YET: "not in the price list yet: add a manual quote (a)",
        LookupStatus.NOT_OFFERED: "not offered here, per the price list: another region, or "
        "a manual quote (a)",
    }
    return hints.get(status, "price unknown: no quote yet; fetch (f) or add a manual quote (a)")


_SHORT_HINTS = {
    LookupStatus.NOT_LISTED_YET: "not listed yet: a",
    LookupStatus.NOT_OFFERED: "not offered here",
}
"""``_missing_hint`` in a table cell (the detail line holds it whole)."""


def _warnings(quote: PriceQuote, target: TrainingTarget, today: dt.date) -> list[str]:
    """Why the quote a target uses is not current (its flags other than "manual")."""
    flags = quote_flags(
        quote,
        target_region=target.region,
        today=today,
        target_purchase_option=target.purchase_option,
    )
    return [flag.message for flag in flags if flag.kind != "manual"]


FOOTER_LEAVES_OUT = {"targets": ("delete",), "quotes": ("edit_rate",), "rates": ("pin",)}
"""Per list in focus, the keys the footer does not offer there (they still work): five keys
and the app's do not fit 80 columns, so each list shows the four that matter on it (``d``
deletes nothing on a target, ``p`` pins no rate, and ``r`` from the quotes only opens the
first unknown rate)."""

DETAIL_LINES = 5
"""The detail line's height (``#detail``'s max-height): a longer text ends with how to read
the rest."""


class PricesScreen(SessionScreen):
    """Three lists that scroll (the targets, the quotes, the side rates; tab moves between
    them) and a detail line that holds, wrapped, the whole text of the highlighted row of the
    list in focus: a target's price with why it is chosen and every warning, a quote's
    origin, a side rate's source. A row is cut at the screen's edge; its detail never is."""

    DEFAULT_CSS = """
    PricesScreen #targets { height: auto; max-height: 35%; overflow-x: hidden; }
    PricesScreen #quotes { height: 1fr; min-height: 3; }
    PricesScreen #rates { height: auto; max-height: 35%; }
    PricesScreen #detail { height: auto; max-height: 5; padding: 0 1; }
    """

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset(
        {"fetch", "add_manual", "edit_rate", "pin"}
    )
    """Actions that open a dialog: keys typed right after wait for it (``ui/key_hold.py``)."""

    BINDINGS = [
        Binding(
            "f", "fetch", "Fetch", tooltip="Fetch prices from the AWS Price List", id="prices.fetch"
        ),
        Binding(
            "a",
            "add_manual",
            "Quote",
            tooltip="Add a manual quote: a price entered by hand, with its source and date",
            id="prices.add",
        ),
        Binding(
            "r",
            "edit_rate",
            "Rate",
            tooltip="Enter or edit the highlighted side-service rate (rate, source, date)",
            id="prices.rate",
        ),
        Binding(
            "d",
            "delete",
            "Delete",
            tooltip="Delete the highlighted quote or side rate",
            id="prices.delete",
        ),
        Binding(
            "p",
            "pin",
            "Pin",
            tooltip="Pin the highlighted quote entered by hand (or the highlighted target's), "
            "or unpin it: a pinned quote is used over the price list's and counts as verified "
            "(as trntui price add --pin)",
            id="prices.pin",
        ),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__(session, id="prices-screen")
        self.book = QuoteBook()
        self._shown_targets: tuple[TrainingTarget, ...] = ()
        self._target_details: list[Text] = []
        self._detail_text = Text()
        self._detail_cut = False
        self._rate_rows: list[tuple[SideService, str]] = []
        self._name_width = 0

    def compose(self) -> ComposeResult:
        yield AreaBar("screen.prices", self.session)
        with Vertical():
            targets: DataTable[str | Text] = DataTable(id="targets", cursor_type="row")
            yield targets
            table: DataTable[str] = DataTable(id="quotes", cursor_type="row", zebra_stripes=True)
            yield table
            rates: DataTable[str | Text] = DataTable(id="rates", cursor_type="row")
            yield rates
            yield Static("", id="detail")
        yield EstimateBar(self.session)
        yield StatusLine(self.session.signals.status)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#quotes", DataTable)
        for label in ("Instance", "Region", "Option", "$/h", "$/acc-h", "Source", "Age"):
            table.add_column(label)
        rates = self.query_one("#rates", DataTable)
        for label in ("Side service", "Region", "Rate", "Source", "Age"):
            rates.add_column(label)
        self.reload()
        signals = self.session.signals
        signals.quotes.subscribe(self, lambda _: self.reload())  # also an undo
        signals.inventory.subscribe(self, lambda _: self._targets_changed())

    def on_screen_resume(self) -> None:
        self.reload()

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """What the footer offers: every binding but those ``FOOTER_LEAVES_OUT`` for the list
        in focus (keys are dispatched from the bindings themselves, not from this)."""
        active = super().active_bindings
        focused = self.focused
        which = focused.id if isinstance(focused, DataTable) and focused.id else "targets"
        hidden = FOOTER_LEAVES_OUT.get(which, ())
        return {key: b for key, b in active.items() if b.binding.action not in hidden}

    def on_resize(self) -> None:
        if max(15, min(40, self.app.size.width - 65)) != self._name_width:
            self._show_targets(dt.datetime.now(dt.UTC).date())
        else:
            self._show_detail()  # the detail wraps at the new width

    def _targets_changed(self) -> None:
        """The inventory changed elsewhere (an edit, an undo): redraw what depends on the
        targets, from the book already read; every other edit changes nothing here."""
        targets = self.session.inventory.targets
        if targets != self._shown_targets:
            self._show_targets(dt.datetime.now(dt.UTC).date())
            self._show_rates()
            self._show_detail()

    def reload(self) -> None:
        try:
            self.book = load_quote_book(self.session.root)
        except UserError as error:
            self.set_status(str(error), "error")
            self.book = QuoteBook()
        today = dt.datetime.now(dt.UTC).date()
        self._show_targets(today)
        self._show_quotes(today)
        self._show_rates()
        self._show_detail()

    def target_detail(self, target: TrainingTarget, today: dt.date) -> Text:
        """One target's price in full: the quote it uses and why, or what to do; warnings."""
        line = Text(f"{target.name}: {target.instance_type} {target.purchase_option} in "
                    f"{target.region}: ")  # fmt: skip
        lookup = find_quote(
            self.book.quotes,
            target.instance_type,
            target.region,
            target.purchase_option,
            self.book.misses,
        )
        unknown = [SIDE_LABELS[s] for s in SideService if self.book.rate(s, target.region) is None]
        rates = (
            f"; side rates unknown in {target.region}: {', '.join(unknown)} (r enters them, "
            "f fetches them)"
            if unknown
            else ""
        )
        if lookup.status != LookupStatus.FOUND or lookup.quote is None:
            line.append(_missing_hint(lookup.status) + rates, style="bold yellow")
            return line
        quote = lookup.quote
        stated = target.accelerators_per_instance
        per_chip = usd_per_accelerator_hour(quote, stated)
        line.append(f"{usd_price(quote.usd_per_hour)}/h", style="bold")
        how = (
            f", {stated} per instance stated on the target"
            if per_chip is not None and usd_per_accelerator_hour(quote) is None
            else ""
        )
        line.append(f" ({usd_per_unit(per_chip)}/accelerator-h{how}), {chosen(lookup)}")
        warnings = _warnings(quote, target, today)
        if warnings:
            line.append("; ")  # unstyled: a space at a style change was lost in the wrap
            line.append("; ".join(warnings), style="yellow")
        if rates:
            line.append(rates, style="bold yellow")
        return line

    def _show_targets(self, today: dt.date) -> None:
        table = self.query_one("#targets", DataTable)
        row_before = table.cursor_row
        # The name takes what the other columns leave (15 cells at 80 columns).
        width = max(15, min(40, self.app.size.width - 65))
        table.clear(columns=width != self._name_width)
        if width != self._name_width:
            self._name_width = width
            table.add_columns("Target", "Instance", "Option", "$/h", "Quote")
        targets = self._shown_targets = self.session.inventory.targets
        self._target_details = [self.target_detail(target, today) for target in targets]
        names = distinct_labels([target.name for target in targets], width)
        for index, target in enumerate(targets):
            lookup = find_quote(
                self.book.quotes,
                target.instance_type,
                target.region,
                target.purchase_option,
                self.book.misses,
            )
            quote = lookup.quote if lookup.status == LookupStatus.FOUND else None
            if quote is None:
                price = Text(UNKNOWN, style="bold yellow")
                note = Text(_SHORT_HINTS.get(lookup.status, "no quote: f or a"), style="yellow")
            else:
                price = Text(usd_price(quote.usd_per_hour), style="bold")
                warned = bool(_warnings(quote, target, today))
                note = Text(chosen(lookup) + (" (!)" if warned else ""),
                            style="yellow" if warned else "")  # fmt: skip
            table.add_row(
                names[target.name],
                target.instance_type,
                fit_middle(short_option(target.purchase_option), 12),
                price,
                note,
                key=str(index),
            )
        if not targets:
            self._target_details = [
                Text("No training targets yet: add them on the Inventory screen (1).")
            ]
        if row_before > 0 and table.row_count:
            table.move_cursor(row=min(row_before, table.row_count - 1))

    def _show_quotes(self, today: dt.date) -> None:
        table = self.query_one("#quotes", DataTable)
        row_before = table.cursor_row
        table.clear()
        stated = {
            t.instance_type: t.accelerators_per_instance
            for t in self.session.inventory.targets
            if t.accelerators_per_instance
        }
        for index, quote in enumerate(self.book.quotes):
            table.add_row(
                quote.instance_type,
                quote.region,
                short_option(quote.purchase_option)[:18],
                usd_price(quote.usd_per_hour),
                usd_per_unit(usd_per_accelerator_hour(quote, stated.get(quote.instance_type))),
                quote_origin(quote),
                f"{quote.age_days(today)} d",
                key=str(index),
            )
        if row_before > 0 and table.row_count:
            table.move_cursor(row=min(row_before, table.row_count - 1))

    def quote_detail(self, quote: PriceQuote) -> str:
        when = quote.retrieved_at.strftime("%Y-%m-%d %H:%M UTC")
        if quote.manual:
            pin = (
                "pinned: used over the price list's (p unpins it)"
                if quote.pinned
                else "p pins it (used over the price list's)"
            )
            origin = f"Manual quote dated {when}, {pin}: {quote.source_note}"
        else:
            origin = (
                f"{quote.offer_code} price list {quote.publication_date} (version "
                f"{quote.version}), SKU {quote.sku}, retrieved {when} from {quote.source_url}"
            )
        if quote.upfront_usd:
            origin += f"; upfront fee ${quote.upfront_usd:,.0f}"
        return origin

    def _show_rates(self) -> None:
        """One row per side service and region a target is in (us-east-1 without targets),
        the rate the estimate uses or unknown."""
        table = self.query_one("#rates", DataTable)
        row_before = table.cursor_row
        table.clear()
        regions = sorted({t.region for t in self.session.inventory.targets}) or ["us-east-1"]
        today = dt.datetime.now(dt.UTC).date()
        self._rate_rows = [(service, region) for region in regions for service in SideService]
        for index, (service, region) in enumerate(self._rate_rows):
            rate = self.book.rate(service, region)
            if rate is None:
                table.add_row(SIDE_LABELS[service], region, Text(UNKNOWN, style="bold yellow"),
                              "", "", key=str(index))  # fmt: skip
                continue
            table.add_row(
                SIDE_LABELS[service],
                region,
                f"{usd_price(rate.first_tier_usd_per_unit)}/{rate.unit}",
                "manual" if rate.manual else f"list {(rate.publication_date or '')[:10]}".strip(),
                f"{(today - rate.retrieved_at.date()).days} d",
                key=str(index),
            )
        if row_before > 0 and table.row_count:
            table.move_cursor(row=min(row_before, table.row_count - 1))

    def rate_detail(self, service: SideService, region: str) -> Text:
        rate = self.book.rate(service, region)
        line = Text(f"{service.value} in {region}: ")
        if rate is None:
            line.append(
                "unknown: enter it (r), with its source and date, or fetch side rates (f)",
                style="bold yellow",
            )
            return line
        tiers = ", ".join(
            f"{usd_price(tier.usd_per_unit)}/{rate.unit}"
            + ("" if len(rate.tiers) == 1 else f" from {tier.start:g}")
            for tier in rate.tiers
        )
        when = rate.retrieved_at.strftime("%Y-%m-%d")
        if rate.manual:
            line.append(f"{tiers}, manual, dated {when}: {rate.source_note}")
        else:
            line.append(
                f"{tiers}, {rate.offer_code} price list {rate.publication_date}, SKU "
                f"{rate.sku}, retrieved {when}"
            )
        if (why := implausible_rate(rate)) is not None:
            line.append(f" - implausible rate: {why}", style="yellow")
        return line

    def _show_detail(self) -> None:
        """The whole text of the highlighted row of the list in focus (the targets' when no
        list has focus)."""
        focused = self.focused
        which = focused.id if isinstance(focused, DataTable) else "targets"
        table = self.query_one(f"#{which}", DataTable)
        row = table.cursor_row
        text: Text | str = ""
        if which == "targets":
            if self._target_details:
                text = self._target_details[min(max(row, 0), len(self._target_details) - 1)]
        elif which == "quotes":
            if 0 <= row < len(self.book.quotes):
                text = self.quote_detail(self.book.quotes[row])
            else:
                text = "No quotes yet: fetch (f) or add a manual quote (a)."
        elif 0 <= row < len(self._rate_rows):
            text = self.rate_detail(*self._rate_rows[row])
        self._detail_text = Text(text) if isinstance(text, str) else text
        detail = self.query_one("#detail", Static)
        width = max(20, self.app.size.width - 2)  # the screen's width, less the padding
        lines = self._detail_text.wrap(self.app.console, width)
        self._detail_cut = len(lines) > DETAIL_LINES
        if self._detail_cut:
            # Never cut silently: the last line says how to read the rest.
            shown = Text("\n").join(list(lines)[: DETAIL_LINES - 1])
            shown.append("\n... enter shows the whole text", style="dim")
            detail.update(shown)
        else:
            detail.update(text)

    @on(DataTable.RowSelected)
    def _whole_detail(self, event: DataTable.RowSelected) -> None:
        """enter on a row whose detail is longer than the detail line: the whole text, held
        in a notification."""
        if self._detail_cut:
            self.notify(self._detail_text.plain, timeout=30, markup=False)

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table is self.focused or event.data_table.id == "targets":
            self._show_detail()

    def on_descendant_focus(self) -> None:
        self._show_detail()

    @edits
    def action_fetch(self) -> None:
        targets = self.session.inventory.targets
        region = targets[0].region if targets else "us-east-1"
        wanted = [(t.instance_type, t.purchase_option) for t in targets]
        self.app.push_screen(FetchPricesScreen(region, wanted), self._fetched)

    def _fetched(self, result: Fetched | None) -> None:
        if not result:
            return
        quotes, rates, misses = result
        unknown = unpriced_quotes(quotes)
        done = (
            f"Added {plural(len(quotes) - len(unknown), 'quote')} and "
            f"{plural(len(rates), 'side rate')}"
        )
        if unknown:
            done += f"; {len(unknown)} with an unknown price not kept"

        def keep() -> None:
            session = self.session
            problem = session.keep_fetched_prices(
                quotes, rates, misses, label="keeping the fetched prices"
            )
            self._report_book(problem, done)

        doubts = [reason for quote in quotes if (reason := implausible_price(quote))]
        doubts += [
            f"{rate.service.value} in {why}" for rate in rates if (why := implausible_rate(rate))
        ]
        if not doubts:
            keep()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                keep()
            else:
                self.set_status("Fetched prices not stored (implausible price)", "error")

        listed = "\n".join(f"- {reason}" for reason in doubts[:4])
        more = f"\n(and {len(doubts) - 4} more)" if len(doubts) > 4 else ""
        self.app.push_screen(
            ConfirmScreen(f"Prices that look implausible:\n{listed}{more}\n\nStore them anyway?"),
            answered,
        )

    def _report_book(self, problem: str | None, done: str) -> bool:
        """Say how a change of the project's quote book (one undo step, made by the session)
        went: ``done``, or why not.

        A quote file that cannot be read or written (a bad hand edit, a full disk) is reported
        on the status line; nothing else changes.
        """
        if problem is not None:
            self.set_status(f"Prices not changed: {problem}", "error")
            self.notify(problem, title="Prices not changed", severity="error")
            return False
        self.set_status(done)
        return True

    @edits
    def action_add_manual(self) -> None:
        wanted = quote_lookups(self.session.inventory)
        missing = next(
            (
                key
                for key in wanted
                if find_quote(self.book.quotes, *key).status != LookupStatus.FOUND
            ),
            wanted[0] if wanted else None,
        )
        instance_type, region, option = missing or ("", "us-east-1", ON_DEMAND)
        entry = ManualQuoteEntry(
            instance_type=instance_type,
            region=region,
            purchase_option=option,
            quoted_on=dt.date.today(),
        )
        self._manual_form(entry)

    def _manual_form(self, entry: ManualQuoteEntry) -> None:
        self.app.push_screen(
            ItemFormScreen(
                ManualQuoteEntry,
                entry,
                title="Manual quote",
                check=lambda entry: entry.to_quote(),  # a refusal keeps the dialog and its text
            ),
            self._manual_added,
        )

    def _manual_added(self, entry: ManualQuoteEntry | None) -> None:
        if entry is None:
            return
        try:
            quote = entry.to_quote()
        except UserError as error:
            self.set_status(str(error), "error")
            return

        # The one manual quote for its type, region and option, if there is one: replaced.
        before = next((q for q in self.book.quotes if q.key == quote.key), None)
        what = f"{quote.instance_type} {quote.purchase_option} in {quote.region}"
        done = f"Added manual quote for {quote.instance_type}"
        if before is not None:
            was = UNKNOWN if before.usd_per_hour is None else f"{usd_price(before.usd_per_hour)}/h"
            done = f"Replaced the {was} manual quote for {quote.instance_type} (ctrl+z: back)"

        def store(confirmed: bool | None = True) -> None:
            if confirmed:
                stored = self._report_book(
                    self.session.add_quote(
                        quote,
                        label=f"{'replacing' if before else 'adding'} the manual quote for {what}",
                    ),
                    done,
                )
                unused = why_quote_unused(quote, self.session.inventory)
                if stored and unused:
                    self.set_status(f"Added, but {unused}", "warning")
            else:
                # Back to the form as typed, to correct the price (nothing typed is lost).
                self.set_status("Manual quote not stored (implausible price): correct it", "error")
                self._manual_form(entry)

        doubt = implausible_price(quote)
        if doubt is None:
            store()
            return
        self.app.push_screen(
            ConfirmScreen(f"The price looks implausible:\n{doubt}\n\nStore it anyway?"), store
        )

    @edits
    def action_delete(self) -> None:
        """Delete the highlighted row of the list in focus: a quote or a side rate."""
        if self.focused is self.query_one("#rates", DataTable):
            self._delete_rate()
            return
        table = self.query_one("#quotes", DataTable)
        if self.focused is not table:
            self.set_status("Nothing deleted: tab to a quote or a side rate, then d")
            return
        if not self.book.quotes or table.cursor_row < 0:
            return
        quote = self.book.quotes[table.cursor_row]
        if self._report_book(
            self.session.remove_quote(quote, label=f"deleting the quote for {quote.instance_type}"),
            f"Deleted the quote for {quote.instance_type}; ctrl+z undoes it",
        ):
            self.notify(f"Deleted the quote for {quote.instance_type}. ctrl+z undoes it.")

    def _quote_to_pin(self) -> PriceQuote | None:
        """The quote ``p`` acts on: the highlighted quote, or the manual quote of the
        highlighted target's type, region and option (the target is what a person wants
        priced); None, with why on the status line, when there is none."""
        quotes = self.query_one("#quotes", DataTable)
        if self.focused is quotes:
            if 0 <= quotes.cursor_row < len(self.book.quotes):
                return self.book.quotes[quotes.cursor_row]
            self.set_status("Nothing pinned: no quote yet (a types one)")
            return None
        targets = self.query_one("#targets", DataTable)
        # No list in focus: the targets', as the detail line shows.
        on_targets = self.focused is targets or not isinstance(self.focused, DataTable)
        if not on_targets or not 0 <= targets.cursor_row < len(self._shown_targets):
            self.set_status("Nothing pinned: tab to a quote or a target, then p")
            return None
        target = self._shown_targets[targets.cursor_row]
        key = (target.instance_type, target.region, target.purchase_option, True)
        found = next((quote for quote in self.book.quotes if quote.key == key), None)
        if found is None:
            self.set_status(
                f"Nothing pinned: {target.name} has no manual quote for {target.instance_type} "
                f"{target.purchase_option} in {target.region} (a types one)"
            )
        return found

    @edits
    def action_pin(self) -> None:
        """Pin the chosen manual quote for the targets that look it up, or unpin a pinned one
        (one undo step each). A price outside the plausibility band asks first, as ``price add
        --pin`` refuses it without ``--force``: pinned, it wins over the price list's."""
        quote = self._quote_to_pin()
        if quote is None:
            return
        try:
            quote.with_pin(not quote.pinned)
        except UserError as error:
            self.set_status(f"Not pinned: {error}", "warning")
            return
        if quote.pinned:
            self._set_pin(quote, False)
            return
        doubt = implausible_price(quote)
        if doubt is None:
            self._set_pin(quote, True)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._set_pin(quote, True)
            else:
                self.set_status("Not pinned (implausible price)", "error")

        self.app.push_screen(
            ConfirmScreen(
                f"The price looks implausible:\n{doubt}\n\nPin it anyway? It will be used over "
                "the price list's."
            ),
            answered,
        )

    def _set_pin(self, quote: PriceQuote, pinned: bool) -> None:
        """Pin or unpin ``quote`` through the session and say what it does to the estimate:
        which targets it is for, and which price they use now."""
        users = quote_users(quote, self.session.inventory)
        what = f"{quote.instance_type} {quote.purchase_option} in {quote.region}"
        for_whom = f" for {', '.join(users)}" if users else ""
        listed = next(
            (
                q
                for q in self.book.quotes
                if not q.manual and q.key[:3] == quote.key[:3] and q.usd_per_hour is not None
            ),
            None,
        )
        listed_price = f" {usd_price(listed.usd_per_hour)}/h" if listed is not None else ""
        price = f"{usd_price(quote.usd_per_hour)}/h"
        if pinned:
            over = f"the price list's{listed_price}" if listed is not None else "any list quote"
            done = f"Pinned: {what} at {price}{for_whom}, used over {over}"
            if quote.is_example:
                done += "; still unverified: its source says EXAMPLE"
        else:
            verified = quote.with_pin(False).verified
            now = (
                f"the price list's{listed_price} is used again"
                if listed is not None
                else f"still used at {price} (no price-list quote)"
                + ("" if verified else ", unverified")
            )
            done = f"Unpinned: {what}{for_whom}: {now}"
        verb = "pinning" if pinned else "unpinning"
        stored = self._report_book(
            self.session.pin_quote(quote, pinned, label=f"{verb} {what}{for_whom}"),
            f"{done}; ctrl+z undoes it",
        )
        unused = why_quote_unused(quote, self.session.inventory)
        if stored and pinned and unused:
            self.set_status(f"Pinned, but {unused}", "warning")

    def _highlighted_rate(self) -> tuple[SideService, str] | None:
        """The side service and region of the highlighted rate row, when the rates have focus;
        else the first whose rate is unknown (what a new project lacks first)."""
        table = self.query_one("#rates", DataTable)
        if self.focused is table and 0 <= table.cursor_row < len(self._rate_rows):
            return self._rate_rows[table.cursor_row]
        unknown = [row for row in self._rate_rows if self.book.rate(*row) is None]
        return unknown[0] if unknown else None

    @edits
    def action_edit_rate(self) -> None:
        """The side rate form for the highlighted rate (a new project: the first unknown)."""
        picked = self._highlighted_rate()
        if picked is None:
            self.set_status("Every side rate is known: tab to one and press r to change it")
            return
        service, region = picked
        rate = self.book.rate(service, region)
        entry = (
            ManualRateEntry(service=service.value, region=region, rated_on=dt.date.today())
            if rate is None
            else ManualRateEntry.of(rate)
        )
        self._rate_form(entry)

    def _rate_form(self, entry: ManualRateEntry) -> None:
        self.app.push_screen(
            ItemFormScreen(
                ManualRateEntry,
                entry,
                title=f"Side-service rate: {entry.service} in {entry.region}",
                check=lambda entry: entry.to_rate(),  # a refusal keeps the dialog and its text
                opens_on="usd_per_unit",
            ),
            self._rate_entered,
        )

    def _rate_entered(self, entry: ManualRateEntry | None) -> None:
        if entry is None:
            return
        try:
            rate = entry.to_rate()
        except UserError as error:
            self.set_status(str(error), "error")
            return
        what = f"{SIDE_LABELS[rate.service]} rate in {rate.region}"

        def store(confirmed: bool | None = True) -> None:
            if confirmed:
                self._report_book(
                    self.session.add_rate(rate, label=f"setting the {what}"),
                    f"Set the {what}: {usd_price(rate.first_tier_usd_per_unit)}/{rate.unit} "
                    f"({rate.source_note}); ctrl+z undoes it",
                )
            else:
                self.set_status("Side rate not stored (implausible rate): correct it", "error")
                self._rate_form(entry)

        doubt = implausible_rate(rate)
        if doubt is None:
            store()
            return
        self.app.push_screen(
            ConfirmScreen(f"The rate looks implausible:\n{doubt}\n\nStore it anyway?"), store
        )

    def _delete_rate(self) -> None:
        table = self.query_one("#rates", DataTable)
        if not 0 <= table.cursor_row < len(self._rate_rows):
            return
        service, region = self._rate_rows[table.cursor_row]
        rate = self.book.rate(service, region)
        what = f"{SIDE_LABELS[service]} rate in {region}"
        if rate is None:
            self.set_status(f"Nothing deleted: the {what} is unknown (r enters it)")
            return
        origin = "manual" if rate.manual else "fetched"
        if self._report_book(
            self.session.remove_rate(rate, label=f"deleting the {origin} {what}"),
            f"Deleted the {origin} {what}; ctrl+z undoes it",
        ):
            self.notify(f"Deleted the {origin} {what}. ctrl+z undoes it.")
