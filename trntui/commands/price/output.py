"""What ``trntui price`` prints: quotes and rates as JSON (``quote_to_json``,
``rate_to_json``) or as text tables, and the download progress line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC
from typing import Any

from trntui.commands import table_lines
from trntui.core.format import usd, usd_per_unit, usd_price
from trntui.core.quotes import (
    PriceQuote,
    ServiceRate,
    implausible_price,
    usd_per_accelerator_hour,
)
from trntui.pricing.service import FetchResult, SideRatesResult


def quote_to_json(quote: PriceQuote) -> dict[str, Any]:
    """A quote as plain JSON values (the documented ``--json`` shape)."""
    return {
        "instance_type": quote.instance_type,
        "region": quote.region,
        "purchase_option": quote.purchase_option,
        "usd_per_hour": quote.usd_per_hour,
        "upfront_usd": quote.upfront_usd,
        "recurring_usd_per_hour": quote.recurring_usd_per_hour,
        "usd_per_accelerator_hour": usd_per_accelerator_hour(quote),
        "accelerator_count": quote.accelerator_count,
        "manual": quote.manual,
        "pinned": quote.pinned,
        "source_note": quote.source_note,
        "source_url": quote.source_url,
        "block_days": quote.block_days,
        "block_instances": quote.block_instances,
        "availability_zone": quote.availability_zone,
        "start_date": quote.start_date,
        "ultraserver_instances": quote.ultraserver_instances,
        "offer_code": quote.offer_code,
        "publication_date": quote.publication_date,
        "version": quote.version,
        "sku": quote.sku,
        "rate_code": quote.rate_code,
        "effective_date": quote.effective_date,
        "etag": quote.etag,
        "last_modified": quote.last_modified,
        "retrieved_at": quote.retrieved_at.astimezone(UTC).isoformat(),
    }


def rate_to_json(rate: ServiceRate) -> dict[str, Any]:
    return {
        "service": rate.service.value,
        "region": rate.region,
        "unit": rate.unit,
        "tiers": [
            {"start": tier.start, "end": tier.end, "usd_per_unit": tier.usd_per_unit}
            for tier in rate.tiers
        ],
        "usage_type": rate.usage_type,
        "manual": rate.manual,
        "source_note": rate.source_note,
        "source_url": rate.source_url,
        "publication_date": rate.publication_date,
        "version": rate.version,
        "sku": rate.sku,
        "rate_code": rate.rate_code,
        "retrieved_at": rate.retrieved_at.astimezone(UTC).isoformat(),
    }


def progress_printer() -> Any:
    if not sys.stderr.isatty():
        return None
    last = [-1]

    def report(done: int, total: int | None) -> None:
        step = done * 100 // total if total else done // (50 * 1024 * 1024)
        if step != last[0]:
            last[0] = step
            shown = f"{step}%" if total else f"{done / 1024**2:.0f} MB"
            print(f"\rdownloading price list... {shown}", end="", file=sys.stderr, flush=True)

    return report


def fetch_json(
    result: FetchResult, side: SideRatesResult | None, plans: FetchResult | None = None
) -> dict[str, Any]:
    document: dict[str, Any] = {"region": result.region, **_quotes_json(result)}
    if side is not None:
        document["side_rates"] = [rate_to_json(rate) for rate in side.rates]
        document["side_rates_missing"] = {
            service.value: message for service, message in side.missing.items()
        }
    if plans is not None:
        document["savings_plans"] = _quotes_json(plans)
    return document


def _quotes_json(result: FetchResult) -> dict[str, Any]:
    status = result.status
    return {
        "quotes": [quote_to_json(quote) for quote in result.quotes],
        "notes": list(result.notes),
        "implausible": [
            {
                "instance_type": quote.instance_type,
                "purchase_option": quote.purchase_option,
                "message": why,
            }
            for quote in result.quotes
            if (why := implausible_price(quote)) is not None
        ],
        "missing": [
            {
                "instance_type": lookup.instance_type,
                "purchase_option": lookup.purchase_option,
                "status": lookup.status.value,
                "message": lookup.message,
            }
            for lookup in result.missing
        ],
        "source": {
            "url": status.url,
            "retrieved_at": status.retrieved_at.astimezone(UTC).isoformat(),
            "age_s": round(status.age_s()),
            "from_cache_after_error": status.from_cache_after_error,
            "not_modified": status.not_modified,
            "error": None if status.error is None else str(status.error),
        },
    }


def print_fetch(
    result: FetchResult, side: SideRatesResult | None, plans: FetchResult | None = None
) -> None:
    _print_quotes(result, "Prices")
    if plans is not None:
        print()
        _print_quotes(plans, "Savings Plans rates")
    if side is not None:
        print()
        print_table(
            ("side service", "unit", "USD/unit (first tier)", "tiers"),
            [
                (rate.service.value, rate.unit, usd_price(rate.first_tier_usd_per_unit),
                 str(len(rate.tiers)))
                for rate in side.rates
            ],
        )  # fmt: skip
        for message in side.missing.values():
            print(f"  {message}")


def _print_quotes(result: FetchResult, what: str) -> None:
    status = result.status
    if status.error is not None:
        print(f"warning: {status.describe()}", file=sys.stderr)
    print(
        f"{what} for {result.region} (AWS Price List, "
        f"retrieved {status.retrieved_at:%Y-%m-%d %H:%M} UTC)"
    )
    publication = result.quotes[0].publication_date if result.quotes else None
    if publication:
        print(f"price list published {publication}, source {status.url}")
    rows = [
        (
            quote.instance_type,
            quote.purchase_option,
            usd_price(quote.usd_per_hour),
            usd(quote.upfront_usd, 2) if quote.upfront_usd else "-",
            usd_per_unit(usd_per_accelerator_hour(quote)),
        )
        for quote in result.quotes
    ]
    print_table(("instance type", "purchase option", "USD/hour", "upfront", "USD/accel-hour"), rows)
    for lookup in result.missing:
        print(f"  {lookup.message}")
    for quote in result.quotes:
        if quote.usd_per_hour is None:
            print(f"  {quote.instance_type} {quote.purchase_option}: unknown, {quote.source_note}")
        elif (why := implausible_price(quote)) is not None:
            print(f"  {quote.instance_type} {quote.purchase_option}: implausible price: {why}")
    for note in result.notes:
        print(f"  skipped: {note}")


def print_table(headings: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    if not rows:
        print("  (no prices found)")
        return
    for line in table_lines(headings, [tuple(map(str, row)) for row in rows]):
        print(line)
