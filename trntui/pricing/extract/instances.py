"""On-demand and reserved quotes of instance types from a regional EC2 offer file.

The rows that count are listed in the package docstring; one quote per type for on-demand,
one per type, SKU and offer term for reserved (its hourly rate plus any upfront fee spread
over the term).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from trntui.core.quotes import HOURS_PER_YEAR, ON_DEMAND, PriceQuote, reserved_option
from trntui.pricing.extract.offer import (
    LEASE_YEARS,
    PURCHASE_PAYMENT,
    OfferSource,
    provenance_fields,
)
from trntui.pricing.extract.scan import (
    LINE_COLUMN,
    USABLE,
    RowPlan,
    RowQuery,
    mark_prices,
    scan_offer_file,
    unusable_price,
)


def _is_blank_or_na(column: str) -> pl.Expr:
    return pl.col(column).is_null() | pl.col(column).is_in(["", "NA"])


_REGION_ONLY = (
    ("Location Type", "AWS Region"),
    ("License Model", "No License required"),
)
"""Where the file has these columns: a region's file also lists its Local Zones and Wavelength
Zones (another price for the same type would make the region's price ambiguous, so unknown),
and rows for bring-your-own-license software."""


def _instance_filter(
    instance_types: Sequence[str] | None,
    present: set[str] | frozenset[str] = frozenset(),
    region: str | None = None,
) -> pl.Expr:
    expr = (
        pl.col("TermType").is_in(["OnDemand", "Reserved"])
        & (pl.col("Tenancy") == "Shared")
        & (pl.col("Operating System") == "Linux")
        & (pl.col("CapacityStatus") == "Used")
        & _is_blank_or_na("Pre Installed S/W")
        & (pl.col("MarketOption") == "OnDemand")
        & (pl.col("Currency") == "USD")
        & pl.col("Instance Type").is_not_null()
    )
    for column, value in _REGION_ONLY:
        if column in present:
            expr = expr & (pl.col(column).is_null() | (pl.col(column) == value))
    if region is not None and "Region Code" in present:
        expr = expr & (pl.col("Region Code").is_null() | (pl.col("Region Code") == region))
    if instance_types is not None:
        expr = expr & pl.col("Instance Type").is_in(list(instance_types))
    return expr


_ROW_COLUMNS = (
    "SKU",
    "OfferTermCode",
    "RateCode",
    "TermType",
    "EffectiveDate",
    "Unit",
    "PricePerUnit",
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Instance Type",
)


def instance_plan(
    instance_types: Sequence[str] | None = None, region: str | None = None
) -> RowPlan:
    """The query for the on-demand and reserved Linux rows of ``instance_types`` (all when
    None): the file's columns say whether Local Zone and licensed rows of ``region`` must be
    filtered out and whether a ``GPU`` count is there to read."""

    def plan(columns: Sequence[str]) -> RowQuery:
        present = set(columns)
        extra = tuple(name for name in ("GPU",) if name in present)
        predicate = _instance_filter(instance_types, present, region)
        return RowQuery(predicate, (*_ROW_COLUMNS, *extra, LINE_COLUMN), LINE_COLUMN)

    return plan


def instance_price_rows(
    path: Path, instance_types: Sequence[str] | None = None, *, region: str | None = None
) -> pl.DataFrame:
    """The on-demand and reserved Linux rows (all text) of the offer file at ``path``."""
    rows: pl.DataFrame = scan_offer_file(path, instance_plan(instance_types, region))
    return rows


def instance_quotes(
    path: Path,
    source: OfferSource,
    region: str,
    instance_types: Sequence[str] | None = None,
    *,
    notes: list[str] | None = None,
) -> list[PriceQuote]:
    """On-demand and reserved quotes for ``instance_types`` (all types when None) from the
    offer file at ``path`` (``quotes_from_instance_rows`` of ``instance_plan``'s rows)."""
    rows = instance_price_rows(path, instance_types, region=region)
    return quotes_from_instance_rows(rows, path, source, region, notes)


def quotes_from_instance_rows(
    rows: pl.DataFrame,
    path: Path,
    source: OfferSource,
    region: str,
    notes: list[str] | None = None,
) -> list[PriceQuote]:
    """The quotes of the rows ``instance_plan`` picked from the file at ``path``.

    A type with no qualifying row gets no quote here; ``find_quote`` then reports it as not
    offered. If one type has several on-demand rows with different prices the quote's price is
    left unknown, with a note, rather than picking one (such a quote is shown, never stored).
    A row whose price is not usable (``price_problem``: blank, not a number, not finite,
    negative, or zero for an on-demand hour) is skipped, with a line in ``notes``; a type whose
    on-demand rows all are gets an on-demand quote of unknown price saying so (file, line,
    text): its rows exist, so it is not "not offered". The rest of the file still counts.
    """
    rows = mark_prices(
        path, rows, "PricePerUnit", notes, zero_is_a_price=pl.col("TermType") == "Reserved"
    ).with_columns(pl.col("PricePerUnit").cast(pl.Float64, strict=False).alias("price_usd"))
    gpu = "GPU" if "GPU" in rows.columns else None
    on_demand = rows.filter((pl.col("TermType") == "OnDemand") & (pl.col("Unit") == "Hrs"))
    quotes = _on_demand_quotes(on_demand, path, source, region, gpu)
    reserved = rows.filter((pl.col("TermType") == "Reserved") & pl.col(USABLE))
    quotes.extend(_reserved_quotes(reserved, source, region, gpu))
    return sorted(quotes, key=lambda quote: (quote.instance_type, quote.purchase_option))


def _gpu_count_of(gpu: str | None, rows: pl.Expr) -> pl.Expr:
    """The one GPU count a group's ``rows`` (a filter) state, as an aggregation (None when
    they state none or several)."""
    if gpu is None:
        return pl.lit(None, pl.Int64).alias("gpus")
    values = pl.col(gpu).filter(rows).cast(pl.Float64, strict=False)
    counts = values.filter(values > 0).cast(pl.Int64, strict=False).unique()
    return pl.when(counts.len() == 1).then(counts.first()).alias("gpus")


def _on_demand_quotes(
    on_demand: pl.DataFrame, path: Path, source: OfferSource, region: str, gpu: str | None
) -> list[PriceQuote]:
    """One quote per instance type from its on-demand rows with a usable price (all groups in
    one aggregation): a type with several different prices, or with rows and none usable, gets
    an unknown price and a note saying which."""
    priced = pl.col(USABLE)
    groups = (
        on_demand.sort("Instance Type", maintain_order=True)
        .group_by("Instance Type", maintain_order=True)
        .agg(
            pl.col("price_usd").filter(priced).n_unique().alias("prices"),
            pl.col("price_usd").filter(priced).min().alias("price"),
            *(pl.col(name).filter(priced).first() for name in ("SKU", "RateCode", "EffectiveDate")),
            _gpu_count_of(gpu, priced),
            pl.struct(pl.all()).filter(~priced).first().alias("unusable"),
        )
    )
    provenance = provenance_fields(source)
    quotes = []
    for row in groups.iter_rows(named=True):
        ambiguous = row["prices"] > 1
        price = None if ambiguous or not row["prices"] else row["price"]
        note = ""
        if ambiguous:
            note = (
                f"price list has {row['prices']} different on-demand rates for this type; "
                "left unknown"
            )
        elif price is None:
            note = (
                "the price list has on-demand rows for it but no usable price: "
                + unusable_price(path, row["unusable"], "PricePerUnit")
            )
        quotes.append(
            PriceQuote(
                instance_type=str(row["Instance Type"]),
                region=region,
                purchase_option=ON_DEMAND,
                usd_per_hour=price,
                recurring_usd_per_hour=price,
                manual=False,
                accelerator_count=row["gpus"],
                sku=None if price is None else row["SKU"],
                rate_code=None if price is None else row["RateCode"],
                effective_date=row["EffectiveDate"],
                source_note=note,
                **provenance,  # type: ignore[arg-type]
            )
        )
    return quotes


def _reserved_quotes(
    reserved: pl.DataFrame, source: OfferSource, region: str, gpu: str | None
) -> list[PriceQuote]:
    """One quote per instance type, SKU and offer term: one hourly row and at most one upfront
    fee, the lease, payment and offering class of the term's first row (all groups in one
    aggregation)."""
    keys = ["Instance Type", "SKU", "OfferTermCode"]
    hourly = pl.col("Unit") == "Hrs"
    upfront = pl.col("Unit") == "Quantity"
    groups = (
        reserved.sort(keys, maintain_order=True)
        .group_by(keys, maintain_order=True)
        .agg(
            *(
                pl.col(name).first().alias(f"first_{name}")
                for name in ("LeaseContractLength", "PurchaseOption", "OfferingClass")
            ),
            hourly.sum().alias("hourly_rows"),
            upfront.sum().alias("upfront_rows"),
            pl.col("price_usd").filter(hourly).first().alias("hourly"),
            pl.col("price_usd").filter(upfront).first().alias("upfront"),
            *(
                pl.col(name).filter(hourly).first().alias(f"hourly_{name}")
                for name in ("SKU", "RateCode", "EffectiveDate")
            ),
            _gpu_count_of(gpu, pl.lit(True)),
        )
        .filter((pl.col("hourly_rows") == 1) & (pl.col("upfront_rows") <= 1))
    )
    provenance = provenance_fields(source)
    quotes = []
    for row in groups.iter_rows(named=True):
        years = LEASE_YEARS.get(row["first_LeaseContractLength"] or "")
        payment = PURCHASE_PAYMENT.get(row["first_PurchaseOption"] or "")
        offering_class = (row["first_OfferingClass"] or "").lower()
        if years is None or payment is None or offering_class not in {"standard", "convertible"}:
            continue
        hourly_usd = row["hourly"]
        upfront_usd = row["upfront"] if row["upfront_rows"] else 0.0
        if hourly_usd is None or upfront_usd is None:
            continue
        effective = hourly_usd + upfront_usd / (years * HOURS_PER_YEAR)
        if effective <= 0:
            continue
        quotes.append(
            PriceQuote(
                instance_type=str(row["Instance Type"]),
                region=region,
                purchase_option=reserved_option(years, offering_class, payment),
                usd_per_hour=effective,
                recurring_usd_per_hour=hourly_usd,
                upfront_usd=upfront_usd,
                manual=False,
                accelerator_count=row["gpus"],
                sku=row["hourly_SKU"],
                rate_code=row["hourly_RateCode"],
                effective_date=row["hourly_EffectiveDate"],
                **provenance,  # type: ignore[arg-type]
            )
        )
    return quotes
