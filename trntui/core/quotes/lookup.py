"""Which quote a target uses, and why (``find_quote``), or why there is none
(``missing_quote``: not offered only on a price-list lookup's word), over a project's
``QuoteBook``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from trntui.core.quotes.options import ON_DEMAND, SAVINGS_PLAN_OFFER, is_savings_plan, is_trainium3
from trntui.core.quotes.quote import PriceQuote
from trntui.core.quotes.rates import ServiceRate, SideService


class LookupStatus(enum.StrEnum):
    FOUND = "found"
    NOT_OFFERED = "not-offered"
    NOT_LISTED_YET = "not-listed-yet"
    NO_QUOTE = "no-quote"


@dataclass(frozen=True)
class PriceLookup:
    """A price-list lookup that found no row for an instance type in a region: the evidence
    behind "not offered", with when it was looked up and which list said so. Only a file that
    passed every check before it was kept (``pricing.client.accept_offer``: it parses, has
    rows, is not a cut copy of its version) is such evidence, and only of a type with no row
    at all: a type whose rows have no usable price is an unknown price, said so instead."""

    instance_type: str
    region: str
    looked_up_at: datetime
    publication_date: str | None = None
    offer_code: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.instance_type, self.region)

    def covers(self, purchase_option: str) -> bool:
        """Whether this lookup speaks for ``purchase_option``: one in the Savings Plans list
        only for Savings Plans (a type can have a price and no plan rate yet); one in the EC2
        list for every option (no instance row, no rate of any kind)."""
        return self.offer_code != SAVINGS_PLAN_OFFER or is_savings_plan(purchase_option)


@dataclass(frozen=True)
class QuoteLookup:
    """The answer to "what does this instance cost here?": a quote, or why there is none."""

    instance_type: str
    region: str
    purchase_option: str
    status: LookupStatus
    quote: PriceQuote | None = None
    message: str = ""
    reason: str = ""
    """Why this quote was chosen over the others that match (``find_quote``)."""

    @property
    def usd_per_hour(self) -> float | None:
        return None if self.quote is None else self.quote.usd_per_hour


def missing_quote(
    instance_type: str,
    region: str,
    purchase_option: str,
    misses: Iterable[PriceLookup] = (),
) -> QuoteLookup:
    """Explain a missing price without inventing one.

    Trainium3 types are expected to be missing from the price list for a while after launch, so
    the message asks for a manual quote. Any other type is **not offered** only when a price
    list lookup found no row for it there (``misses``); otherwise the project has no quote yet.
    """
    if is_trainium3(instance_type):
        return QuoteLookup(
            instance_type,
            region,
            purchase_option,
            LookupStatus.NOT_LISTED_YET,
            message=(
                f"{instance_type} ({purchase_option}, {region}) is not in the price list yet: "
                "add a manual quote"
            ),
        )
    miss = next(
        (m for m in misses if m.key == (instance_type, region) and m.covers(purchase_option)),
        None,
    )
    if miss is None:
        return QuoteLookup(
            instance_type,
            region,
            purchase_option,
            LookupStatus.NO_QUOTE,
            message=(
                f"no quote in the project for {instance_type} ({purchase_option}, {region}): "
                "fetch it from the price list or add a manual quote"
            ),
        )
    listed = f"published {miss.publication_date[:10]}, " if miss.publication_date else ""
    return QuoteLookup(
        instance_type,
        region,
        purchase_option,
        LookupStatus.NOT_OFFERED,
        message=(
            f"{instance_type} is not offered in {region} as {purchase_option}: the price list "
            f"({listed}looked up {miss.looked_up_at.date().isoformat()}) has no row for it"
        ),
    )


def find_quote(
    quotes: Iterable[PriceQuote],
    instance_type: str,
    region: str,
    purchase_option: str = ON_DEMAND,
    misses: Iterable[PriceLookup] = (),
) -> QuoteLookup:
    """Pick the quote for exactly this type, region and option, or say why there is none.

    Only exact matches count: a price from another region or option is never borrowed. When
    several match: a manual quote a person pinned (a negotiated or private price) wins; else
    the official price list's beats a manual one (an old manual figure must not outlive the
    published price); else the manual one. Among equals the most recently retrieved wins. The
    lookup says why (``reason``).
    """
    matches = [
        quote
        for quote in quotes
        if quote.instance_type == instance_type
        and quote.region == region
        and quote.purchase_option == purchase_option
    ]
    if not matches:
        return missing_quote(instance_type, region, purchase_option, misses)
    best = max(matches, key=lambda q: (q.manual and q.pinned, not q.manual, q.retrieved_at))
    others = len(matches) - 1
    when = best.retrieved_at.date().isoformat()
    if best.manual and best.pinned:
        reason = f"manual quote pinned by the user (dated {when})"
    elif not best.manual:
        reason = f"the AWS Price List's, retrieved {when}"
        if any(q.manual for q in matches):
            unpinned = sum(q.manual for q in matches)
            reason += (
                ", used over the manual quote that nobody pinned"
                if unpinned == 1
                else ", used over the manual quotes that nobody pinned"
            )
    else:
        reason = f"manual quote dated {when}: the project has no price-list quote for it"
    if others and not (not best.manual and any(q.manual for q in matches)):
        reason += f" (newest of {others + 1})"
    return QuoteLookup(
        instance_type, region, purchase_option, LookupStatus.FOUND, quote=best, reason=reason
    )


@dataclass(frozen=True)
class QuoteBook:
    """Everything priced for a project: instance quotes and side-service rates."""

    quotes: tuple[PriceQuote, ...] = ()
    rates: tuple[ServiceRate, ...] = field(default_factory=tuple)
    misses: tuple[PriceLookup, ...] = ()
    """Price-list lookups that found no row (the only ground for "not offered")."""

    def rate(self, service: SideService, region: str) -> ServiceRate | None:
        """The side rate for this region, manual entries first, else the newest; None if absent."""
        matches = [rate for rate in self.rates if rate.service == service and rate.region == region]
        if not matches:
            return None
        return max(matches, key=lambda rate: (rate.manual, rate.retrieved_at))
