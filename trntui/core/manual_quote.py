"""A price typed in by a person: a Trainium3 price not yet in the price list, a negotiated
discount, a Capacity Block offer or a spot price. It must say where it comes from and when.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import ClassVar

from trntui.core.capacity_block import MAX_BLOCK_INSTANCES
from trntui.core.fields import spec_field
from trntui.core.inventory import PURCHASE_OPTIONS, check_instance_type, check_region
from trntui.core.quotes import (
    CAPACITY_BLOCK,
    HOURS_PER_YEAR,
    InvalidQuoteError,
    PriceQuote,
    term_years,
)


@dataclass(frozen=True)
class ManualQuoteEntry:
    TITLE: ClassVar[str] = "Manual quote"
    instance_type: str = spec_field(
        "text", "Instance type", required=True, default="", validator=check_instance_type
    )
    region: str = spec_field(
        "text", "Region", required=True, default="us-east-1", validator=check_region
    )
    purchase_option: str = spec_field(
        "choice", "Purchase option", choices=PURCHASE_OPTIONS, required=True, default="on-demand"
    )
    usd_per_hour: float | None = spec_field(
        "float",
        "Hourly price",
        unit="USD/hour",
        minimum=0,
        maximum=100_000,
        required=True,
        help="the recurring hourly part; 0 for an all-upfront reservation or a block",
    )
    upfront_usd: float | None = spec_field(
        "float", "Upfront fee", unit="USD", minimum=0, help="a Capacity Block's whole price"
    )
    block_days: int | None = spec_field(
        "int", "Block length", unit="days", minimum=1, maximum=182, help="Capacity Block only"
    )
    block_instances: int | None = spec_field(
        "int", "Block instances", minimum=1, maximum=64, help="Capacity Block only"
    )
    source_note: str = spec_field(
        "text",
        "Source",
        required=True,
        default="",
        placeholder="e.g. AWS account team offer of 2026-11-20",
    )
    quoted_on: dt.date | None = spec_field("date", "Quote date", required=True, help="YYYY-MM-DD")

    def to_quote(self) -> PriceQuote:
        """The quote, dated at the start of ``quoted_on`` (UTC) so its age counts from then.

        As for fetched reserved quotes, ``usd_per_hour`` is the effective rate: the recurring
        hourly part plus the upfront fee spread over the term's hours, so that it compares with
        on-demand and the estimate bills the fee; both parts are kept too.
        """
        assert self.quoted_on is not None and self.usd_per_hour is not None
        when = dt.datetime.combine(self.quoted_on, dt.time(), tzinfo=dt.UTC)
        return manual_quote(
            instance_type=self.instance_type,
            region=self.region,
            purchase_option=self.purchase_option,
            usd_per_hour=self.usd_per_hour or None,
            upfront_usd=self.upfront_usd or 0.0,
            retrieved_at=when,
            source_note=self.source_note,
            block_days=self.block_days,
            block_instances=self.block_instances,
        )


def manual_quote(
    *,
    instance_type: str,
    region: str,
    purchase_option: str,
    usd_per_hour: float | None,
    upfront_usd: float,
    retrieved_at: dt.datetime,
    source_note: str,
    pinned: bool = False,
    block_days: int | None = None,
    block_instances: int | None = None,
    availability_zone: str | None = None,
    start_date: str | None = None,
    source_url: str | None = None,
    ultraserver_instances: int | None = None,
) -> PriceQuote:
    """A quote a person typed in, with its effective hourly rate worked out.

    ``usd_per_hour`` is the recurring hourly part (None or 0 when there is none). A reserved
    term or Savings Plan spreads its upfront fee over the term's hours; a Capacity Block's
    upfront total pays the whole block, so its rate is that total per instance-hour of the
    block (and a block quoted by its hourly equivalent gets the total it implies).

    With ``ultraserver_instances`` N the figures given are per UltraServer: the hourly price
    is one UltraServer's and ``block_instances`` counts UltraServers; the quote keeps them per
    instance (hourly / N, block instances x N).
    """
    if ultraserver_instances is not None:
        if ultraserver_instances < 2:
            raise InvalidQuoteError(
                f"an UltraServer joins 2 or more instances; got {ultraserver_instances}"
            )
        if usd_per_hour:
            usd_per_hour /= ultraserver_instances
        if block_instances is not None:
            if block_instances * ultraserver_instances > MAX_BLOCK_INSTANCES:
                raise InvalidQuoteError(
                    f"{block_instances} UltraServers of {ultraserver_instances} are "
                    f"{block_instances * ultraserver_instances} instances, more than the "
                    f"{MAX_BLOCK_INSTANCES} a Capacity Block holds"
                )
            block_instances *= ultraserver_instances
    if purchase_option == CAPACITY_BLOCK:
        hourly, upfront = _block_price(usd_per_hour, upfront_usd, block_days, block_instances)
        recurring = None
    else:
        if not usd_per_hour and not upfront_usd:
            raise InvalidQuoteError(
                f"quote for {instance_type}: give the hourly price (or an upfront fee for a "
                "reserved term)"
            )
        hourly = effective_hourly(purchase_option, usd_per_hour or 0.0, upfront_usd)
        upfront, recurring = upfront_usd, usd_per_hour or 0.0
    return PriceQuote(
        instance_type=instance_type,
        region=region,
        purchase_option=purchase_option,
        usd_per_hour=hourly,
        recurring_usd_per_hour=recurring,
        upfront_usd=upfront,
        retrieved_at=retrieved_at,
        manual=True,
        source_note=source_note,
        pinned=pinned,
        block_days=block_days,
        block_instances=block_instances,
        availability_zone=availability_zone,
        start_date=start_date,
        source_url=source_url,
        ultraserver_instances=ultraserver_instances,
    )


def _block_price(
    usd_per_hour: float | None, upfront_usd: float, days: int | None, instances: int | None
) -> tuple[float, float]:
    """(USD per instance-hour, upfront total) of a Capacity Block quote."""
    if upfront_usd and usd_per_hour:
        raise InvalidQuoteError(
            "a Capacity Block is quoted by its upfront total or by its hourly equivalent, not both"
        )
    if upfront_usd:
        if days is None or instances is None:
            raise InvalidQuoteError(
                "a Capacity Block's upfront total is a price only with the block's length and "
                "instance count (block days and block instances)"
            )
        return upfront_usd / (days * 24 * instances), upfront_usd
    if not usd_per_hour:
        raise InvalidQuoteError(
            "a Capacity Block needs its upfront total (with the block's length) or its hourly "
            "equivalent per instance"
        )
    total = (
        usd_per_hour * days * 24 * instances if days is not None and instances is not None else 0.0
    )
    return usd_per_hour, total


def effective_hourly(
    purchase_option: str, recurring_usd_per_hour: float, upfront_usd: float
) -> float:
    """The recurring hourly price plus an upfront fee spread over the term's hours (a reserved
    instance or a Savings Plan)."""
    if not upfront_usd:
        return recurring_usd_per_hour
    years = term_years(purchase_option)
    if years is None:
        raise InvalidQuoteError(
            f"an upfront fee needs a term to spread over; {purchase_option} has none "
            "(put it into the hourly price)"
        )
    return recurring_usd_per_hour + upfront_usd / (years * HOURS_PER_YEAR)
