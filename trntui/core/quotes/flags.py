"""Why a quote should not be used as-is: an implausible price, by the one band every
price-like number passes (``implausible_hourly_usd`` for an instance-hour, of a quote with
``implausible_price``; ``implausible_rate_usd`` for a side rate, of a rate with
``implausible_rate``), and every reason an estimate shows beside a quote (``quote_flags``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import date

from trntui.core.hardware import HARDWARE, instance_hardware
from trntui.core.quotes.options import DEFAULT_MAX_AGE_DAYS
from trntui.core.quotes.quote import PriceQuote
from trntui.core.quotes.rates import ServiceRate, SideService

PLAUSIBLE_USD_PER_ACCELERATOR_HOUR = (0.05, 200.0)
"""Bounds per accelerator-hour. The instances in ``core/hardware.py`` bill roughly $0.3
(Trainium on a 3-year term) to $15 (B200 on demand) per accelerator-hour; a price several times
outside that on either side is taken for a typing or unit mistake (cents for dollars, a monthly
figure, a vCPU count in the price column of a one-chip type) and must be confirmed."""
PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR = 0.0005
"""For a type whose accelerator count is unknown (a CPU type, a new trn3 size): below the
cheapest EC2 instance (t4g.nano, about $0.004 on demand and $0.0015 on a 3-year term)."""


def implausible_price(quote: PriceQuote) -> str | None:
    """Why ``quote``'s hourly price looks like a mistake, or None when it is plausible
    (``implausible_hourly_usd`` of its type, accelerators and price)."""
    if quote.usd_per_hour is None:
        return None
    return implausible_hourly_usd(quote.instance_type, quote.usd_per_hour, quote.accelerator_count)


def implausible_hourly_usd(
    instance_type: str, usd_per_hour: float, accelerator_count: int | None = None
) -> str | None:
    """Why an instance-hour price looks like a mistake, or None when it is plausible: the one
    band every instance price passes (a quote from the price list or typed in, a scenario's
    override of an instance price).

    The rule (from the facts in ``core/hardware.py``): per accelerator-hour the price must lie
    within ``PLAUSIBLE_USD_PER_ACCELERATOR_HOUR`` ($0.05 to $200); the accelerators are
    ``accelerator_count`` (the price list's GPU column) or the hardware table's. When the
    type's accelerator count is unknown, per instance-hour it must lie between
    ``PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR`` and $200 x the most accelerators any known
    instance carries (16). An implausible price is flagged (``quote_flags``) and stored only
    when a person confirms it (``--force``, or a confirmation in the app); a price that is not
    a finite positive number is refused outright (``check_amount``).
    """
    low, high = PLAUSIBLE_USD_PER_ACCELERATOR_HOUR
    row = instance_hardware(instance_type) if instance_type else None
    chips = accelerator_count or (row.chips if row is not None else None)
    price = usd_per_hour
    if chips:
        per_chip = price / chips
        if low <= per_chip <= high:
            return None
        return (
            f"${per_chip:,.6g} per accelerator-hour ({instance_type}, {chips} "
            f"accelerators, ${price:,.6g}/hour) is outside ${low:g} to ${high:g}, the span "
            "around every known instance's price: a typing or unit mistake?"
        )
    most = max(row.chips or 1 for row in HARDWARE.values())
    floor, ceiling = PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR, high * most
    if floor <= price <= ceiling:
        return None
    return (
        f"${price:,.6g} per instance-hour ({instance_type or 'instance type unknown'}) is "
        f"outside ${floor:g} to ${ceiling:,.0f}, the span around every known instance's price: "
        "a typing or unit mistake?"
    )


SIDE_RATE_USD_PER_UNIT = {
    SideService.S3_STANDARD_STORAGE: 0.023,
    SideService.EBS_GP3_STORAGE: 0.08,
    SideService.CLOUDWATCH_LOGS_INGESTION: 0.50,
    SideService.CLOUDWATCH_LOGS_STORAGE: 0.03,
    SideService.INTER_AZ_TRANSFER: 0.01,
}
"""Each side service's us-east-1 list price per unit (``SideService.unit``; inter-AZ per GB
and direction), as the AWS Price List gives it: the middle of its plausible span."""
PLAUSIBLE_SIDE_RATE_FACTOR = 10.0
"""A side rate may be this many times below or above ``SIDE_RATE_USD_PER_UNIT``. Regions and
tiers stay within about 2 times of it (S3 Standard $0.021 to $0.0405, gp3 $0.08 to $0.152);
the usual mistakes land far outside: a price per TB for one per GB (1,000 times), cents for
dollars (100), a GB-hour for a GB-month (730)."""


def implausible_rate_usd(service: SideService, usd_per_unit: float) -> str | None:
    """Why a side-service rate looks like a mistake, or None when it is plausible: the one
    band every side rate passes (fetched, typed in with ``price rate``, a scenario override),
    ``PLAUSIBLE_SIDE_RATE_FACTOR`` times around ``SIDE_RATE_USD_PER_UNIT`` either way. A rate
    of exactly 0 says the service costs nothing (a free tier, a quantity already paid for):
    a statement, not a slip of the unit."""
    if usd_per_unit == 0:
        return None
    middle = SIDE_RATE_USD_PER_UNIT[service]
    low, high = middle / PLAUSIBLE_SIDE_RATE_FACTOR, middle * PLAUSIBLE_SIDE_RATE_FACTOR
    if low <= usd_per_unit <= high:
        return None
    return (
        f"${usd_per_unit:,.6g} per {service.unit} of {service.value} is outside ${low:g} to "
        f"${high:g}, {PLAUSIBLE_SIDE_RATE_FACTOR:g} times around its list price (${middle:g}): "
        "a typing or unit mistake?"
    )


def implausible_rate(rate: ServiceRate) -> str | None:
    """Why one of ``rate``'s tiers looks like a mistake (``implausible_rate_usd``), or None."""
    for tier in rate.tiers:
        doubt = implausible_rate_usd(rate.service, tier.usd_per_unit)
        if doubt is not None:
            return f"{rate.region}: {doubt}"
    return None


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
