"""A price typed in by a person: a Trainium3 price not yet in the price list, a negotiated
discount, a Capacity Block offer or a spot price. It must say where it comes from and when.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import ClassVar

from trntui.core.fields import spec_field
from trntui.core.inventory import PURCHASE_OPTIONS, check_instance_type, check_region
from trntui.core.quotes import (
    HOURS_PER_YEAR,
    InvalidQuoteError,
    PriceQuote,
    reserved_term_years,
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
        help="the recurring hourly part; 0 for an all-upfront reservation",
    )
    upfront_usd: float | None = spec_field("float", "Upfront fee", unit="USD", minimum=0)
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
        upfront = self.upfront_usd or 0.0
        return PriceQuote(
            instance_type=self.instance_type,
            region=self.region,
            purchase_option=self.purchase_option,
            usd_per_hour=effective_hourly(self.purchase_option, self.usd_per_hour, upfront),
            retrieved_at=when,
            manual=True,
            upfront_usd=upfront,
            recurring_usd_per_hour=self.usd_per_hour,
            source_note=self.source_note,
        )


def effective_hourly(
    purchase_option: str, recurring_usd_per_hour: float, upfront_usd: float
) -> float:
    """The recurring hourly price plus an upfront fee spread over the reserved term's hours."""
    if not upfront_usd:
        return recurring_usd_per_hour
    years = reserved_term_years(purchase_option)
    if years is None:
        raise InvalidQuoteError(
            f"an upfront fee needs a reserved term to spread over; {purchase_option} has none "
            "(put it into the hourly price)"
        )
    return recurring_usd_per_hour + upfront_usd / (years * HOURS_PER_YEAR)
