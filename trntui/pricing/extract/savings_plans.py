"""Compute and EC2 Instance Savings Plans quotes from the Savings Plans offer file.

Which rows count is in the package docstring; the listed rate is already the effective
hourly rate (any upfront payment spread over the term).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from trntui.core.quotes import PriceQuote, savings_plan_option
from trntui.pricing.extract.offer import PURCHASE_PAYMENT, OfferSource, provenance_fields
from trntui.pricing.extract.scan import (
    LINE_COLUMN,
    USABLE,
    RowPlan,
    RowQuery,
    mark_prices,
    rows_by,
    scan_offer_file,
    unusable_price,
)

_PLAN_KINDS = {"ComputeSavingsPlans": "compute", "EC2InstanceSavingsPlans": "ec2-instance"}
_BOX_USAGE = r"^(?:[A-Z0-9]+-)?BoxUsage:(.+)$"
_PLAN = ("Product Family", "LeaseContractLength", "LeaseContractLengthUnit", "PurchaseOption")
_ROW_COLUMNS = ("SKU", "RateCode", "EffectiveDate", "DiscountedRate", "DiscountedUsageType")


def _savings_plan_filter(
    instance_types: Sequence[str] | None, present: set[str], region: str
) -> pl.Expr:
    instance_type = pl.col("DiscountedUsageType").str.extract(_BOX_USAGE, 1)
    expr = (
        (pl.col("DiscountedServiceCode") == "AmazonEC2")
        & (pl.col("DiscountedOperation") == "RunInstances")
        & (pl.col("Unit") == "Hrs")
        & (pl.col("Currency") == "USD")
        & pl.col("Product Family").is_in(list(_PLAN_KINDS))
        & instance_type.is_not_null()
    )
    if instance_types is not None:
        expr = expr & instance_type.is_in(list(instance_types))
    stated = {"DiscountedRegionCode": pl.lit(region), "DiscountedInstanceType": instance_type}
    for column, value in stated.items():
        if column in present:
            expr = expr & (pl.col(column).is_null() | (pl.col(column) == value))
    return expr


def savings_plan_plan(instance_types: Sequence[str] | None, region: str) -> RowPlan:
    """The query for the Savings Plans rows of ``instance_types`` (all when None) in
    ``region``; the file's columns say which of region and type it states."""

    def plan(columns: Sequence[str]) -> RowQuery:
        predicate = _savings_plan_filter(instance_types, set(columns), region)
        return RowQuery(predicate, (*_ROW_COLUMNS, *_PLAN, LINE_COLUMN), LINE_COLUMN)

    return plan


def savings_plan_quotes(
    path: Path,
    source: OfferSource,
    region: str,
    instance_types: Sequence[str] | None = None,
    *,
    notes: list[str] | None = None,
) -> list[PriceQuote]:
    """Compute and EC2 Instance Savings Plans rates for ``instance_types`` (all when None)
    from the file at ``path`` (``quotes_from_savings_plan_rows`` of ``savings_plan_plan``'s)."""
    rows = scan_offer_file(path, savings_plan_plan(instance_types, region))
    return quotes_from_savings_plan_rows(rows, path, source, region, notes)


def quotes_from_savings_plan_rows(
    rows: pl.DataFrame,
    path: Path,
    source: OfferSource,
    region: str,
    notes: list[str] | None = None,
) -> list[PriceQuote]:
    """The quotes of the rows ``savings_plan_plan`` picked from the file at ``path``.

    One quote per type and plan (kind, 1 or 3 years, no/partial/all upfront), its hourly price
    the listed rate, which already spreads any upfront payment over the term. A type with no
    row gets no quote (it is not priced at $0); a plan with different rates for one type is
    left unknown, with a note. A rate that is not usable (``price_problem``: blank, not a
    number, not finite, negative or zero) is skipped, with a line in ``notes`` naming the
    file's line; a plan whose rows for a type all are gets a quote of unknown rate saying so.
    """
    rows = mark_prices(path, rows, "DiscountedRate", notes, zero_is_a_price=False).with_columns(
        pl.col("DiscountedUsageType").str.extract(_BOX_USAGE, 1).alias("type")
    )
    quotes = []
    for key, group in rows_by(rows, ["type", *_PLAN]):
        instance_type, family, length, unit, payment = (str(value or "") for value in key)
        years = int(length) if length in {"1", "3"} and unit.lower() == "year" else None
        if years is None or payment not in PURCHASE_PAYMENT:
            continue  # a term or payment this app has no purchase option for
        option = savings_plan_option(_PLAN_KINDS[family], years, PURCHASE_PAYMENT[payment])
        found = list(group.iter_rows(named=True))
        priced = [(float(row["DiscountedRate"]), row) for row in found if row[USABLE]]
        rates = sorted({rate for rate, _row in priced})
        first = priced[0][1] if priced else found[0]
        known = len(rates) == 1
        if known:
            note = ""
        elif rates:
            note = f"price list has {len(rates)} different rates for this plan and type"
            note += "; left unknown"
        else:
            note = "the price list has rows for it but no usable rate: " + unusable_price(
                path, first, "DiscountedRate"
            )
        quotes.append(
            PriceQuote(
                instance_type=instance_type,
                region=region,
                purchase_option=option,
                usd_per_hour=rates[0] if known else None,
                manual=False,
                sku=first["SKU"] if known else None,
                rate_code=first["RateCode"] if known else None,
                effective_date=first["EffectiveDate"] if priced else None,
                source_note=note,
                **provenance_fields(source),  # type: ignore[arg-type]
            )
        )
    return sorted(quotes, key=lambda quote: (quote.instance_type, quote.purchase_option))
