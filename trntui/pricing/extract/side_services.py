"""Side-service rates (storage, logs, inter-AZ transfer) from the S3, EC2, CloudWatch and
data transfer offer files: each service's usage type and unit, its tiers from one SKU."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from trntui.core.quotes import RateTier, ServiceRate, SideService
from trntui.pricing.extract.offer import OfferSource, provenance_fields
from trntui.pricing.extract.scan import RowQueries, RowQuery, rows_by, scan_offer_file


@dataclass(frozen=True)
class _SideFilter:
    offer_code: str
    usage_suffix: str
    unit: str
    equals: tuple[tuple[str, str], ...] = ()
    drop_zero_tiers: bool = False


_SIDE_FILTERS = {
    SideService.S3_STANDARD_STORAGE: _SideFilter(
        "AmazonS3",
        "TimedStorage-ByteHrs",
        "GB-Mo",
        (("Storage Class", "General Purpose"), ("Volume Type", "Standard")),
    ),
    SideService.EBS_GP3_STORAGE: _SideFilter(
        "AmazonEC2", "EBS:VolumeUsage.gp3", "GB-Mo", (("Volume API Name", "gp3"),)
    ),
    SideService.CLOUDWATCH_LOGS_INGESTION: _SideFilter(
        "AmazonCloudWatch", "DataProcessing-Bytes", "GB"
    ),
    SideService.CLOUDWATCH_LOGS_STORAGE: _SideFilter(
        "AmazonCloudWatch", "TimedStorage-ByteHrs", "GB-Mo"
    ),
    # The 2025 reorganisation added ...-xAZ-In/Out-Bytes rows priced $0.00; they do not match
    # this usage type, and a $0 tier is never taken as the inter-AZ charge.
    SideService.INTER_AZ_TRANSFER: _SideFilter(
        "AWSDataTransfer",
        "DataTransfer-Regional-Bytes",
        "GB",
        (("Transfer Type", "IntraRegion"),),
        drop_zero_tiers=True,
    ),
}


def side_services_in(offer_code: str) -> tuple[SideService, ...]:
    return tuple(
        service for service, spec in _SIDE_FILTERS.items() if spec.offer_code == offer_code
    )


def side_plan(offer_code: str) -> Callable[[Sequence[str]], RowQueries]:
    """One query per side service priced in ``offer_code``'s file, answered from one parse."""

    def plan(_columns: Sequence[str]) -> RowQueries:
        services = side_services_in(offer_code)
        return RowQueries(tuple(_side_query(_SIDE_FILTERS[service]) for service in services))

    return plan


def side_rates(path: Path, source: OfferSource, region: str) -> dict[SideService, ServiceRate]:
    """The side-service rates found in one cached offer file (``rates_from_side_rows`` of
    ``side_plan``'s rows)."""
    found = scan_offer_file(path, side_plan(source.offer_code))
    return rates_from_side_rows(found, source, region)


def rates_from_side_rows(
    found: Sequence[pl.DataFrame], source: OfferSource, region: str
) -> dict[SideService, ServiceRate]:
    """The rates of the rows ``side_plan`` picked, one frame per service in its order; a
    service absent here is simply missing.

    The usage type is matched exactly after an optional region prefix (``USE2-``, ``EUC1-``...),
    so look-alike usage types (other storage classes, xAZ rows) never match.
    """
    rates: dict[SideService, ServiceRate] = {}
    for service, rows in zip(side_services_in(source.offer_code), found, strict=True):
        rate = _side_rate(rows, service, _SIDE_FILTERS[service], source, region)
        if rate is not None:
            rates[service] = rate
    return rates


def _side_query(spec: _SideFilter) -> RowQuery:
    usage = rf"^(?:[A-Z]{{2,4}}[0-9]*-)?{_regex_escape(spec.usage_suffix)}$"
    expr = (
        (pl.col("TermType") == "OnDemand")
        & (pl.col("Currency") == "USD")
        & (pl.col("Unit") == spec.unit)
        & pl.col("usageType").str.contains(usage)
    )
    for column, value in spec.equals:
        expr = expr & (pl.col(column) == value)
    columns = (
        "SKU", "RateCode", "EffectiveDate", "StartingRange", "EndingRange", "PricePerUnit",
        "usageType",
    )  # fmt: skip
    return RowQuery(expr, columns)


def _side_rate(
    found: pl.DataFrame, service: SideService, spec: _SideFilter, source: OfferSource, region: str
) -> ServiceRate | None:
    rows = found.with_columns(
        pl.col("PricePerUnit").cast(pl.Float64, strict=False).alias("price_usd"),
        pl.col("StartingRange").cast(pl.Float64, strict=False).fill_null(0.0).alias("start"),
        pl.col("EndingRange").cast(pl.Float64, strict=False).fill_nan(None).alias("end"),
    ).filter(
        pl.col("price_usd").is_not_null()
        & pl.col("price_usd").is_finite()
        & (pl.col("price_usd") >= 0)
        & pl.col("start").is_finite()
        & (pl.col("start") >= 0)
        & (pl.col("end").is_null() | (pl.col("end") >= pl.col("start")))
    )
    if spec.drop_zero_tiers:
        rows = rows.filter(pl.col("price_usd") > 0)
    candidates = [
        group.sort("start")
        for _sku, group in rows_by(rows, ["SKU"])
        if (group["price_usd"] > 0).any()
    ]
    if len(candidates) != 1:
        return None
    group = candidates[0]
    tiers = tuple(
        RateTier(
            start=row["start"],
            end=None if row["end"] is None or row["end"] == float("inf") else row["end"],
            usd_per_unit=row["price_usd"],
        )
        for row in group.iter_rows(named=True)
    )
    first = group.row(0, named=True)
    return ServiceRate(
        service=service,
        region=region,
        tiers=tiers,
        usage_type=first["usageType"],
        sku=first["SKU"],
        rate_code=first["RateCode"],
        effective_date=first["EffectiveDate"],
        **provenance_fields(source),  # type: ignore[arg-type]
    )


def _regex_escape(text: str) -> str:
    return "".join(f"\\{char}" if char in r".^$*+?{}[]\|()" else char for char in text)
