"""A price typed in by a person: a Trainium3 price not yet in the price list, a negotiated
discount, a Capacity Block offer or a spot price. It must say where it comes from and when.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import ClassVar

from trntui.core.fields import spec_field
from trntui.core.inventory import PURCHASE_OPTIONS, check_instance_type, check_region
from trntui.core.quotes import PriceQuote


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
        "float", "Price", unit="USD/hour", greater_than=0, maximum=100_000, required=True
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
        """The quote, dated at the start of ``quoted_on`` (UTC) so its age is counted from then."""
        assert self.quoted_on is not None
        when = dt.datetime.combine(self.quoted_on, dt.time(), tzinfo=dt.UTC)
        return PriceQuote(
            instance_type=self.instance_type,
            region=self.region,
            purchase_option=self.purchase_option,
            usd_per_hour=self.usd_per_hour,
            retrieved_at=when,
            manual=True,
            upfront_usd=self.upfront_usd or 0.0,
            source_note=self.source_note,
        )
