"""Why a quote should not be used as-is: an implausible price (``implausible_price``), and
every reason an estimate shows beside it (``quote_flags``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import date

from trntui.core.quotes.options import DEFAULT_MAX_AGE_DAYS
from trntui.core.quotes.quote import PriceQuote

PLAUSIBLE_USD_PER_ACCELERATOR_HOUR = (0.05, 200.0)
"""Bounds per accelerator-hour. The instances in ``core/hardware.py`` bill roughly $0.3
(Trainium on a 3-year term) to $15 (B200 on demand) per accelerator-hour; a price several times
outside that on either side is taken for a typing or unit mistake (cents for dollars, a monthly
figure, a vCPU count in the price column of a one-chip type) and must be confirmed."""
PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR = 0.0005
"""For a type whose accelerator count is unknown (a CPU type, a new trn3 size): below the
cheapest EC2 instance (t4g.nano, about $0.004 on demand and $0.0015 on a 3-year term)."""


def implausible_price(quote: PriceQuote) -> str | None:
    """Why ``quote``'s hourly price looks like a mistake, or None when it is plausible.

    The rule (from the facts in ``core/hardware.py``): per accelerator-hour the price must lie
    within ``PLAUSIBLE_USD_PER_ACCELERATOR_HOUR`` ($0.05 to $200). When the type's accelerator
    count is unknown, per instance-hour it must lie between
    ``PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR`` and $200 x the most accelerators any known
    instance carries (16). An implausible price is flagged (``quote_flags``) and stored only when
    a person confirms it (``--force``, or a confirmation in the app); a price that is not a
    finite positive number is refused outright (``check_amount``).
    """
    from trntui.core.hardware import HARDWARE, accelerators_per_instance

    if quote.usd_per_hour is None:
        return None
    low, high = PLAUSIBLE_USD_PER_ACCELERATOR_HOUR
    chips = accelerators_per_instance(quote)
    price = quote.usd_per_hour
    if chips:
        per_chip = price / chips
        if low <= per_chip <= high:
            return None
        return (
            f"${per_chip:,.6g} per accelerator-hour ({quote.instance_type}, {chips} "
            f"accelerators, ${price:,.6g}/hour) is outside ${low:g} to ${high:g}, the span "
            "around every known instance's price: a typing or unit mistake?"
        )
    most = max(row.chips or 1 for row in HARDWARE.values())
    floor, ceiling = PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR, high * most
    if floor <= price <= ceiling:
        return None
    return (
        f"${price:,.6g} per instance-hour ({quote.instance_type}) is outside ${floor:g} to "
        f"${ceiling:,.0f}, the span around every known instance's price: a typing or unit "
        "mistake?"
    )


class FlagKind(enum.StrEnum):
    STALE = "stale"
    OTHER_REGION = "other-region"
    OTHER_PURCHASE_OPTION = "other-purchase-option"
    UNKNOWN_PRICE = "unknown-price"
    MANUAL = "manual"
    UNVERIFIED = "unverified"
    IMPLAUSIBLE = "implausible"


@dataclass(frozen=True)
class QuoteFlag:
    """One reason a quote should not be used as-is (``quote_flags``): its kind and the message
    shown beside the quote."""

    kind: FlagKind
    message: str


def quote_flags(
    quote: PriceQuote,
    *,
    target_region: str,
    today: date,
    max_age_days: int = DEFAULT_MAX_AGE_DAYS,
    target_purchase_option: str | None = None,
) -> tuple[QuoteFlag, ...]:
    """Reasons a quote should not be used as-is for an estimate in ``target_region``.

    The section 3 rule: the price must be current and for the chosen region and purchase option.
    A quote is stale when it was retrieved (or, for a manual quote, dated) more than
    ``max_age_days`` days before ``today``. A manual quote is flagged too, so the estimate shows
    that a person, not the price list, supplied it.
    """
    flags: list[QuoteFlag] = []
    age = quote.age_days(today)
    if age > max_age_days:
        flags.append(
            QuoteFlag(
                FlagKind.STALE,
                f"price is {age} days old (limit {max_age_days}); look it up again",
            )
        )
    if quote.region != target_region:
        flags.append(
            QuoteFlag(
                FlagKind.OTHER_REGION,
                f"price is for {quote.region}, not the target region {target_region}",
            )
        )
    if target_purchase_option is not None and quote.purchase_option != target_purchase_option:
        flags.append(
            QuoteFlag(
                FlagKind.OTHER_PURCHASE_OPTION,
                f"price is {quote.purchase_option}, not {target_purchase_option}",
            )
        )
    if quote.usd_per_hour is None:
        flags.append(QuoteFlag(FlagKind.UNKNOWN_PRICE, "hourly price is unknown"))
    doubt = implausible_price(quote)
    if doubt is not None:
        flags.append(QuoteFlag(FlagKind.IMPLAUSIBLE, f"implausible price: {doubt}"))
    if quote.manual:
        note = quote.source_note.strip()
        flags.append(QuoteFlag(FlagKind.MANUAL, f"manual quote: {note}"))
    if not quote.verified:
        why = (
            "an EXAMPLE figure, not a price"
            if quote.is_example
            else "a manual quote nobody vouched for (pin it when it is a signed or negotiated "
            "price, or fetch the official one)"
        )
        flags.append(QuoteFlag(FlagKind.UNVERIFIED, why))
    return tuple(flags)
