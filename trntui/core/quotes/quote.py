"""The price of one instance type in one region under one purchase option (``PriceQuote``),
with its provenance, checked as it is made.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, date, datetime

from trntui.core.capacity_block import MAX_BLOCK_INSTANCES, block_days_help, is_block_days
from trntui.core.hardware import instance_hardware
from trntui.core.quotes.options import (
    CAPACITY_BLOCK,
    EXAMPLE_MARK,
    NEGOTIATED,
    InvalidQuoteError,
    check_amount,
    is_known_purchase_option,
    purchase_option_help,
    refuse_future,
)


@dataclass(frozen=True)
class PriceQuote:
    """The price of one instance type, in one region, under one purchase option.

    ``usd_per_hour`` is the effective hourly rate: for reserved terms it is the recurring hourly
    part plus the upfront fee spread over the term's hours, so ``usd_per_hour x hours`` compares
    with on-demand; the upfront fee and the recurring part are kept too (``upfront_usd``,
    ``recurring_usd_per_hour``). ``None`` means unknown, never zero.
    """

    instance_type: str
    region: str
    purchase_option: str
    usd_per_hour: float | None
    retrieved_at: datetime
    manual: bool
    upfront_usd: float = 0.0
    recurring_usd_per_hour: float | None = None
    accelerator_count: int | None = None
    source_url: str | None = None
    source_note: str = ""
    offer_code: str | None = None
    publication_date: str | None = None
    version: str | None = None
    sku: str | None = None
    rate_code: str | None = None
    effective_date: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    pinned: bool = False
    """A person vouches for this manual quote (a negotiated or private price, a signed offer):
    it is used over the price list's and counts as verified."""
    block_days: int | None = None
    """A Capacity Block offer's duration (``BLOCK_DAYS``); its ``upfront_usd`` pays the whole
    block and ``usd_per_hour`` is that total per instance-hour of the block."""
    block_instances: int | None = None
    """Instances in the quoted block (1 to 64)."""
    availability_zone: str | None = None
    start_date: str | None = None
    """When the quoted block starts (YYYY-MM-DD), if the offer says."""
    ultraserver_instances: int | None = None
    """Sold as UltraServers of this many instances (Trn2: 4 x trn2u.48xlarge): a target takes
    whole UltraServers. ``usd_per_hour`` stays per instance (the UltraServer's price / this)."""

    def __post_init__(self) -> None:
        if not self.instance_type.strip():
            raise InvalidQuoteError("a quote needs an instance type")
        if not self.region.strip():
            raise InvalidQuoteError(f"quote for {self.instance_type}: a region is required")
        if not is_known_purchase_option(self.purchase_option):
            raise InvalidQuoteError(
                f"quote for {self.instance_type}: unknown purchase option "
                f"{self.purchase_option!r}; expected one of {purchase_option_help()}"
            )
        what = f"quote for {self.instance_type} in {self.region}"
        if self.usd_per_hour is not None:
            check_amount(
                self.usd_per_hour, f"{what}: the hourly price", key="usd_per_hour",
                above_zero=True,
            )  # fmt: skip
        check_amount(self.upfront_usd, f"{what}: the upfront fee", key="upfront_usd")
        if self.recurring_usd_per_hour is not None:
            check_amount(
                self.recurring_usd_per_hour, f"{what}: the recurring hourly price",
                key="recurring_usd_per_hour",
            )  # fmt: skip
        if self.accelerator_count is not None and not (
            isinstance(self.accelerator_count, int) and self.accelerator_count >= 1
        ):
            raise InvalidQuoteError(
                f"{what}: accelerators per instance must be a whole number from 1 "
                f"(got {self.accelerator_count!r})",
                key="accelerator_count",
            )
        if self.retrieved_at.tzinfo is None:
            raise InvalidQuoteError(
                f"quote for {self.instance_type}: retrieval time needs a time zone"
            )
        refuse_future(self.retrieved_at, f"quote for {self.instance_type}")
        self._check_block()
        if self.ultraserver_instances is not None and self.ultraserver_instances < 2:
            raise InvalidQuoteError(
                f"quote for {self.instance_type}: an UltraServer joins 2 or more instances; "
                f"got {self.ultraserver_instances}",
                key="ultraserver_instances",
            )
        if self.manual and not self.source_note.strip():
            raise InvalidQuoteError(
                f"manual quote for {self.instance_type} in {self.region}: say where the price "
                "comes from (a source note is required)"
            )

    def _check_block(self) -> None:
        what = f"quote for {self.instance_type} in {self.region}"
        block = (self.block_days, self.block_instances, self.availability_zone, self.start_date)
        if self.purchase_option != CAPACITY_BLOCK:
            if any(value is not None for value in block):
                raise InvalidQuoteError(
                    f"{what}: block days, instances, zone and start date are for a "
                    f"{CAPACITY_BLOCK} quote, not {self.purchase_option}",
                    key=next(
                        name
                        for name, value in zip(
                            ("block_days", "block_instances", "availability_zone", "start_date"),
                            block,
                            strict=True,
                        )
                        if value is not None
                    ),
                )
            return
        if self.block_days is not None and not is_block_days(self.block_days):
            raise InvalidQuoteError(
                f"{what}: a Capacity Block lasts {block_days_help()}; got {self.block_days} days",
                key="block_days",
            )
        if self.block_instances is not None and not 1 <= self.block_instances <= (
            MAX_BLOCK_INSTANCES
        ):
            raise InvalidQuoteError(
                f"{what}: a Capacity Block holds 1 to {MAX_BLOCK_INSTANCES} instances; "
                f"got {self.block_instances}",
                key="block_instances",
            )
        if self.upfront_usd and (self.block_days is None or self.block_instances is None):
            raise InvalidQuoteError(
                f"{what}: an upfront total is a price only with the block's length and "
                "instance count (block_days, block_instances)",
                key="block_days" if self.block_days is None else "block_instances",
            )
        if self.start_date is not None:
            try:
                date.fromisoformat(self.start_date)
            except ValueError:
                raise InvalidQuoteError(
                    f"{what}: start date {self.start_date!r} is not YYYY-MM-DD", key="start_date"
                ) from None

    @property
    def usd_per_ultraserver_hour(self) -> float | None:
        if self.usd_per_hour is None or self.ultraserver_instances is None:
            return None
        return self.usd_per_hour * self.ultraserver_instances

    @property
    def usd_per_instance_day(self) -> float | None:
        """A block's price per instance-day (what a whole day of one instance costs)."""
        return None if self.usd_per_hour is None else self.usd_per_hour * 24

    @property
    def is_example(self) -> bool:
        """Marked as illustration (``EXAMPLE`` in its source note): never a real price."""
        return EXAMPLE_MARK.search(self.source_note) is not None

    @property
    def verified(self) -> bool:
        """From the price list, or a manual quote a person vouches for (pinned, or a
        negotiated price); an EXAMPLE quote never is."""
        if self.is_example:
            return False
        return not self.manual or self.pinned or self.purchase_option == NEGOTIATED

    @property
    def key(self) -> tuple[str, str, str, bool]:
        """Identity in a project's quote list: one quote per type, region, option and origin."""
        return (self.instance_type, self.region, self.purchase_option, self.manual)

    def with_pin(self, pinned: bool) -> PriceQuote:
        """This quote pinned (or not): only a manual quote is, a price a person vouches for
        (``trntui price add --pin``); a price-list quote is already used over every manual
        one that nobody pinned, so pinning it would say nothing."""
        if not self.manual:
            raise InvalidQuoteError(
                f"the {self.instance_type} quote in {self.region} is the AWS Price List's: only "
                "a manual quote is pinned (a price you vouch for, used over the list's)",
                key="pinned",
            )
        return dataclasses.replace(self, pinned=pinned)

    def age_days(self, today: date) -> int:
        return (today - self.retrieved_at.astimezone(UTC).date()).days


def accelerators_per_instance(quote: PriceQuote) -> int | None:
    """Chips per instance: the price list's GPU column when the quote carries it, else the table."""
    if quote.accelerator_count:
        return quote.accelerator_count
    row = instance_hardware(quote.instance_type)
    return None if row is None else row.chips


def usd_per_accelerator_hour(quote: PriceQuote, stated: int | None = None) -> float | None:
    """Hourly price divided by chips; unknown when either the price or the chip count is.
    ``stated``: the chips per instance a target states, used when neither the price list nor
    the hardware table gives them (an instance type newer than the table)."""
    chips = accelerators_per_instance(quote) or stated
    if quote.usd_per_hour is None or not chips:
        return None
    return quote.usd_per_hour / chips
