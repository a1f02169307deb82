"""Priced inputs: the instance price from the quote ``find_quote`` picks, the side-service
rates over their tiers, and whether the time is paid in whole Capacity Block days.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from trntui.core.estimate.inputs import DERIVED, QUOTED, Input, Provenance, unknown_input
from trntui.core.format import plural, usd
from trntui.core.inventory import Inventory, TrainingTarget
from trntui.core.quotes import (
    CAPACITY_BLOCK,
    ON_DEMAND,
    LookupStatus,
    PriceQuote,
    QuoteBook,
    ServiceRate,
    SideService,
    find_quote,
)


def quote_id(quote: PriceQuote) -> str:
    """Stable id of a quote in the project's book (type, region, option, origin)."""
    origin = "manual" if quote.manual else "price-list"
    return f"{quote.instance_type}/{quote.region}/{quote.purchase_option}/{origin}"


def rate_id(rate: ServiceRate) -> str:
    origin = "manual" if rate.manual else "price-list"
    return f"{rate.service.value}/{rate.region}/{origin}"


def quote_source(quote: PriceQuote | ServiceRate) -> str:
    """Where a price comes from and when it was retrieved, in words."""
    when = quote.retrieved_at.date().isoformat()
    if quote.manual:
        return f"manual: {quote.source_note.strip()}, dated {when}"
    parts = ["AWS Price List"]
    if quote.offer_code:
        parts.append(quote.offer_code)
    if quote.publication_date:
        parts.append(f"published {quote.publication_date}")
    if quote.sku:
        parts.append(f"SKU {quote.sku}")
    return f"{', '.join(parts)}; retrieved {when}"


def price_input(
    key: str, lookup_type: str, region: str, option: str, book: QuoteBook, target: str
) -> tuple[Input, PriceQuote | None, str]:
    """The price input, the quote it comes from and why that quote (``find_quote``)."""
    found = find_quote(book.quotes, lookup_type, region, option, book.misses)
    if found.status is not LookupStatus.FOUND or found.quote is None:
        return unknown_input(key, found.message, target), None, found.message
    if found.quote.usd_per_hour is None:
        why = f"the quote {quote_id(found.quote)} has no hourly price"
        return unknown_input(key, why, target), None, why
    quote = found.quote
    provenance = Provenance(QUOTED, quote_id(quote), quote_source(quote))
    return Input(key, quote.usd_per_hour, provenance, target), quote, found.reason


def whole_ultraservers(price: Input, quote: PriceQuote | None, count: int) -> Input:
    """A price per UltraServer holds for whole UltraServers only: another count is unknown."""
    size = quote.ultraserver_instances if quote is not None else None
    if size is None or price.value is None:
        return price
    if count % size:
        why = (
            f"{quote.instance_type} is sold as UltraServers of {size} instances; "  # type: ignore[union-attr]
            f"{count} instances is not a whole number of them"
        )
        return unknown_input(price.key, why, price.target)
    how = (
        f"{plural(count // size, 'UltraServer')} of {size} at "
        f"${quote.usd_per_ultraserver_hour:,.4g}/h each; {price.provenance.detail}"  # type: ignore[union-attr]
    )
    return dataclasses.replace(price, provenance=dataclasses.replace(price.provenance, detail=how))


RATES = {
    "s3_usd_per_gb_month": SideService.S3_STANDARD_STORAGE,
    "ebs_usd_per_gb_month": SideService.EBS_GP3_STORAGE,
    "transfer_usd_per_gb": SideService.INTER_AZ_TRANSFER,
    "logs_ingest_usd_per_gb": SideService.CLOUDWATCH_LOGS_INGESTION,
    "logs_store_usd_per_gb_month": SideService.CLOUDWATCH_LOGS_STORAGE,
}


def rate_quantity(key: str, inputs: Mapping[str, Input], instance_count: int) -> float | None:
    """The monthly (or one-off) quantity a rate is applied to, for walking its tiers."""

    def value(name: str) -> float | None:
        return inputs[name].value

    if key == "s3_usd_per_gb_month":
        parts = (value("dataset_gb"), value("checkpoint_gb"), value("checkpoints_kept"))
        if None in parts:
            return None
        return parts[0] + parts[1] * parts[2]  # type: ignore[operator]
    if key == "ebs_usd_per_gb_month":
        gb = value("ebs_gb_per_instance")
        return None if gb is None else gb * instance_count
    if key == "transfer_usd_per_gb":
        return value("data_moved_gb")
    return value("log_gb")


def rate_input(
    key: str, rate: ServiceRate | None, quantity: float | None, region: str, target: str
) -> Input:
    """The rate per unit, quoted as is; a quantity that reaches past the first price tier
    gets the average rate over the tiers it spans, a figure derived from the quote."""
    service = RATES[key]
    if rate is None:
        return unknown_input(
            key, f"no {service.value} rate for {region} in the project's prices", target
        )
    first = rate.tiers[0]
    if quantity and first.end is not None and quantity > first.end:
        value = rate.cost_usd(quantity) / quantity
        how = f"average over the price tiers for {quantity:g} {rate.unit}; {quote_source(rate)}"
        return Input(key, value, Provenance(DERIVED, f"rate {rate_id(rate)}", how), target)
    how = f"{quote_source(rate)}; first tier" if len(rate.tiers) > 1 else quote_source(rate)
    return Input(key, first.usd_per_unit, Provenance(QUOTED, rate_id(rate), how), target)


_INSTANCE_IN_TEXT = re.compile(
    r"\b([a-z][a-z0-9-]*\.(?:\d*xlarge|large|medium|small|micro|nano|metal[a-z0-9-]*))(?![\w-]|\.\w)"
)


def data_prep_instance_type(runs_on: str | None) -> str | None:
    """The EC2 instance type named in the free-text ``data_prep.runs_on`` (None if none)."""
    if not runs_on:
        return None
    match = _INSTANCE_IN_TEXT.search(runs_on)
    return match.group(1) if match else None


def quote_lookups(inventory: Inventory) -> list[tuple[str, str, str]]:
    """What the estimate looks a quote up for, as (instance type, region, purchase option):
    each target, then the data preparation instance on demand in each target's region (the
    rule of ``per_target.target_inputs``)."""
    wanted = [(t.instance_type, t.region, t.purchase_option) for t in inventory.targets]
    prep = data_prep_instance_type(inventory.data_prep.runs_on)
    if prep is not None:
        for region in dict.fromkeys(t.region for t in inventory.targets):
            wanted.append((prep, region, ON_DEMAND))
    return wanted


def quote_users(quote: PriceQuote, inventory: Inventory) -> list[str]:
    """Who looks ``quote`` up (the rule of ``quote_lookups``): each target of exactly its type,
    region and purchase option, by name, and "data preparation" when it is the data
    preparation instance on demand in a target's region. Empty when nobody does (then
    ``why_quote_unused`` says why)."""
    users = [
        target.name
        for target in inventory.targets
        if (target.instance_type, target.region, target.purchase_option)
        == (quote.instance_type, quote.region, quote.purchase_option)
    ]
    prep = data_prep_instance_type(inventory.data_prep.runs_on)
    if (
        quote.instance_type == prep
        and quote.purchase_option == ON_DEMAND
        and any(target.region == quote.region for target in inventory.targets)
    ):
        users.append("data preparation")
    return users


def why_quote_unused(quote: PriceQuote, inventory: Inventory) -> str | None:
    """Why neither a target nor data preparation would use ``quote`` (a region or type typed
    wrong), or None."""
    targets = inventory.targets
    if quote.instance_type == data_prep_instance_type(inventory.data_prep.runs_on) and targets:
        prep_regions = sorted({t.region for t in targets})
        if quote.region in prep_regions and quote.purchase_option == ON_DEMAND:
            return None
        if quote.region not in prep_regions:
            return (
                f"data preparation is priced in the targets' regions ({', '.join(prep_regions)}"
                f"), not {quote.region} (check the region code)"
            )
        return f"data preparation is priced on demand, not {quote.purchase_option}"
    matches = [t for t in targets if t.instance_type == quote.instance_type]
    if not matches:
        return f"no target uses {quote.instance_type} (check the instance type)"
    if not any(t.region == quote.region for t in matches):
        regions = ", ".join(sorted({t.region for t in matches}))
        return (
            f"no {quote.instance_type} target is in {quote.region} "
            f"(targets: {regions}; check the region code)"
        )
    if not any(t.purchase_option == quote.purchase_option for t in matches):
        return f"no {quote.instance_type} target buys {quote.purchase_option}"
    return None


def block_input(target: TrainingTarget, quote: PriceQuote | None, inventory: Inventory) -> Input:
    """Whether instance time is paid in whole Capacity Block days: it is for a target bought as
    a block (the purchase option says so, whatever the quote's own option is)."""
    name = target.name
    if target.purchase_option != CAPACITY_BLOCK:
        return Input(
            "capacity_block",
            0.0,
            Provenance(DERIVED, "target", f"{target.purchase_option}: billed for the time used"),
            name,
        )
    detail = "paid up front in whole blocks: 1-14 days, then 7-day steps to 182"
    if quote is not None and quote.block_days is not None:
        count = quote.block_instances or 1
        detail += (
            f"; the quote is a {quote.block_days}-day block of {plural(count, 'instance')} at "
            f"{usd(quote.usd_per_instance_day)} per instance-day, applied to the length the "
            "work needs"
        )
    return Input("capacity_block", 1.0, Provenance(DERIVED, "target", detail), name)
