"""Price look-ups as the UI and the CLI ask for them: fetch if possible, else the last good cache.

A network or server fault does not leave the user without prices when a file was downloaded
before: the cached copy is used, and the result carries the error and the copy's age so the
screen can say "price list unreachable; showing prices retrieved 3 days ago". Faults the user
must fix (a cancelled fetch, an unsafe URL, an unknown region) are raised, never papered over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import httpx

from trntui.core.quotes import (
    ON_DEMAND,
    SAVINGS_PLAN_OFFER,
    SAVINGS_PLANS,
    PriceLookup,
    PriceQuote,
    QuoteLookup,
    ServiceRate,
    SideService,
    find_quote,
)
from trntui.pricing import extract  # its names load their module when first used
from trntui.pricing.cache import offer_csv_path, read_cached
from trntui.pricing.client import (
    CancelCheck,
    OfferFile,
    PriceListClient,
    ProgressCallback,
    read_cached_offer,
)
from trntui.pricing.errors import (
    NoCachedPriceListError,
    PricingCancelledError,
    PricingError,
    PricingFormatError,
    PricingHTTPError,
    PricingNetworkError,
    PricingTooLargeError,
)
from trntui.pricing.extract.offer import OfferSource
from trntui.pricing.extract.records import Plan
from trntui.pricing.settings import PricingSettings

if TYPE_CHECKING:
    from trntui.pricing.extract.scan import RowPlan, RowQueries

EC2_OFFER = "AmazonEC2"
SIDE_OFFERS = ("AmazonEC2", "AmazonS3", "AmazonCloudWatch", "AWSDataTransfer")


class FetchOptions(TypedDict, total=False):
    """How a fetch runs, the same for every fetch function here (each takes them by keyword:
    ``fetch_instance_quotes(region, types, settings=..., cancel=...)``); each may be left out."""

    settings: PricingSettings | None
    """Where and how to download (default: ``PricingSettings.from_env()``)."""
    progress: ProgressCallback | None
    """Called with the bytes done and the total (None while unknown) as a file downloads."""
    cancel: CancelCheck | None
    """Polled while downloading and scanning: True stops the fetch (``PricingCancelledError``)."""
    offline: bool
    """Use the cached copy only; never ask the server."""
    transport: httpx.BaseTransport | None
    """The HTTP transport (tests serve a fake price list through it)."""


# Faults where the cached copy is still the best answer: the server or the path to it failed.
_RECOVERABLE = (PricingNetworkError, PricingHTTPError, PricingFormatError, PricingTooLargeError)


@dataclass(frozen=True)
class OfferStatus:
    """Where one offer file's prices came from this time."""

    offer_code: str
    region: str
    url: str
    retrieved_at: datetime
    from_cache_after_error: bool
    not_modified: bool
    error: PricingError | None = None
    publication_date: str | None = None
    """The price list's publication date of the copy in use."""

    def age_s(self, now: datetime | None = None) -> float:
        return ((now or datetime.now(UTC)) - self.retrieved_at).total_seconds()

    def describe(self, now: datetime | None = None) -> str:
        age = format_age(self.age_s(now))
        if self.error is not None:
            published = f"published {self.publication_date}, " if self.publication_date else ""
            return (
                f"{self.offer_code}: no new price list ({self.error}); using the cached copy "
                f"({published}retrieved {age} ago)"
            )
        if self.not_modified:
            return f"{self.offer_code}: unchanged since the cached copy (confirmed now)"
        return f"{self.offer_code}: downloaded now"


@dataclass(frozen=True)
class FetchResult:
    """Instance quotes for one region, the types asked for that have none, and their origin."""

    region: str
    quotes: tuple[PriceQuote, ...]
    missing: tuple[QuoteLookup, ...]
    status: OfferStatus
    misses: tuple[PriceLookup, ...] = ()
    """The asked-for types the price list has no row for (kept in the project on save)."""
    notes: tuple[str, ...] = ()
    """Rows skipped because their price is not a usable number (file and line of each)."""
    side_rates: SideRatesResult | None = None
    """The side-service rates priced in the same file (EBS gp3 in the EC2 file), read in the
    same pass when asked for (``fetch_instance_quotes(side_rates=True)``)."""

    @property
    def error(self) -> PricingError | None:
        return self.status.error


@dataclass(frozen=True)
class SideRatesResult:
    region: str
    rates: tuple[ServiceRate, ...]
    missing: dict[SideService, str] = field(default_factory=dict)
    statuses: tuple[OfferStatus, ...] = ()


def format_age(seconds: float) -> str:
    if seconds < 120:
        return f"{max(0, int(seconds))} s"
    if seconds < 2 * 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


def load_offer(
    client: PriceListClient,
    offer_code: str,
    region: str,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelCheck | None = None,
    offline: bool = False,
    plan: Plan | None = None,
) -> tuple[OfferFile, OfferStatus]:
    """Refresh the offer file, falling back to the cached copy when the server fails; the
    offer comes with ``plan``'s rows (``OfferFile.rows``), gathered while a new file
    downloads or read from the copy in use.

    A cached copy that does not read (damaged on disk, or kept by an older trntui) is never
    used: the error names it and what to do (a fetch that reaches the server replaces it)."""
    error: PricingError | None = None
    if not offline:
        try:
            offer = client.offer_file(
                offer_code, region, progress=progress, cancel=cancel, plan=plan
            )
        except PricingCancelledError:
            raise
        except _RECOVERABLE as fault:
            error = fault
        else:
            status = OfferStatus(
                offer_code,
                region,
                offer.cached.url,
                offer.cached.retrieved_at,
                from_cache_after_error=False,
                not_modified=offer.not_modified,
                publication_date=offer.preamble.publication_date,
            )
            return offer, status
    try:
        kept = cached_offer(client.settings, offer_code, region, plan)
    except PricingFormatError as damage:
        if error is None:
            raise PricingFormatError(
                f"the cached {offer_code} price list for {region} is damaged, so it was not "
                f"used ({damage}): fetch again online (without --offline); the copy is then "
                "downloaded whole"
            ) from None
        raise type(error)(
            f"{error}; the cached copy is damaged too, so it was not used ({damage}): fetch "
            "again once the server answers; the copy is then downloaded whole",
            **_error_details(error),
        ) from None
    if kept is None:
        if error is not None:
            raise error
        raise NoCachedPriceListError(
            f"no {offer_code} price list for {region} has been downloaded yet; "
            "fetch it once while online"
        )
    status = OfferStatus(
        offer_code,
        region,
        kept.cached.url,
        kept.cached.retrieved_at,
        from_cache_after_error=error is not None,
        not_modified=False,
        error=error,
        publication_date=kept.preamble.publication_date,
    )
    return kept, status


def _error_details(error: PricingError) -> dict[str, Any]:
    """What it takes to make ``error``'s type again with another message."""
    details: dict[str, Any] = {"url": error.url}
    if isinstance(error, PricingHTTPError):
        details["status_code"] = error.status_code
    return details


def cached_offer(
    settings: PricingSettings, offer_code: str, region: str, plan: Plan | None = None
) -> OfferFile | None:
    """The cached offer file with ``plan``'s rows, None when none was downloaded (or its
    sidecar is gone); a copy that does not read is a ``PricingFormatError`` naming its file
    and line (``read_cached_offer``: the checks a download passed to be kept)."""
    cached = read_cached(offer_csv_path(settings.cache_path, offer_code, region))
    if cached is None:
        return None
    wanted = plan or (lambda columns: extract.parse_only(columns))
    try:
        preamble, rows = read_cached_offer(cached.path, offer_code, wanted)
    except OSError as error:
        raise PricingFormatError(f"{cached.path}: cannot be read ({error})") from None
    return OfferFile(offer_code, region, cached, preamble, not_modified=False, rows=rows)


def offer_source(offer: OfferFile) -> OfferSource:
    return OfferSource(
        offer_code=offer.offer_code,
        url=offer.cached.url,
        publication_date=offer.preamble.publication_date,
        version=offer.preamble.version,
        retrieved_at=offer.cached.retrieved_at,
        etag=offer.cached.etag,
        last_modified=offer.cached.last_modified,
    )


def fetch_instance_quotes(
    region: str,
    instance_types: Sequence[str] | None = None,
    *,
    side_rates: bool = False,
    **options: Unpack[FetchOptions],
) -> FetchResult:
    """On-demand and reserved Linux quotes for ``instance_types`` (all types when None).

    Blocking (a regional EC2 file is a few hundred MB on first download): run it in a worker
    thread, pass ``progress`` for a progress bar and ``cancel`` to stop it. With
    ``side_rates``, the EC2 file's side-service rates (EBS gp3) come from the same pass, in
    ``FetchResult.side_rates`` (``fetch_quotes_and_side_rates`` hands them to
    ``fetch_side_rates``, so the file is not read again for them).
    """
    wanted = _unique(instance_types)
    return _fetch_quotes(
        EC2_OFFER,
        lambda columns: extract.instance_plan(wanted, region)(columns),
        lambda *found: extract.quotes_from_instance_rows(*found),
        ON_DEMAND, region, wanted, side_rates=side_rates, **options,
    )  # fmt: skip


def fetch_savings_plan_quotes(
    region: str, instance_types: Sequence[str] | None = None, **options: Unpack[FetchOptions]
) -> FetchResult:
    """Compute and EC2 Instance Savings Plans rates (Linux) for ``instance_types`` (all when
    None), from the region's ``AWSComputeSavingsPlan`` file (``FetchOptions``): the file is
    cached, re-validated and used from the cache when the server fails, as the EC2 file is. A
    type with no plan rate is in ``misses``, which speak for Savings Plans only."""
    wanted = _unique(instance_types)
    return _fetch_quotes(
        SAVINGS_PLAN_OFFER,
        lambda columns: extract.savings_plan_plan(wanted, region)(columns),
        lambda *found: extract.quotes_from_savings_plan_rows(*found),
        SAVINGS_PLANS, region, wanted, **options,
    )  # fmt: skip


def _unique(instance_types: Sequence[str] | None) -> list[str] | None:
    return None if instance_types is None else list(dict.fromkeys(instance_types))


def _fetch_quotes(
    offer_code: str,
    plan: RowPlan,
    quotes_from_rows: Callable[..., list[PriceQuote]],
    looked_for: str,
    region: str,
    wanted: list[str] | None,
    *,
    side_rates: bool = False,
    **options: Unpack[FetchOptions],
) -> FetchResult:
    """Load the offer's file for ``region`` and make its quotes from ``plan``'s rows (gathered
    as the file downloads), and with ``side_rates`` its side-service rates from the same parse;
    ``looked_for`` names the purchase option(s) a type without a quote is reported missing for.
    ``plan`` and ``quotes_from_rows`` name the extraction's functions through the lazy
    ``extract`` package: its modules, and Polars, load in the scanning thread when the file's
    header has come, while the download goes on."""
    settings = options.get("settings") or PricingSettings.from_env()
    quotes_plan = plan
    if side_rates:

        def plan(columns: Sequence[str]) -> Any:
            side = _side_plan(offer_code)(columns).queries
            return extract.RowQueries((quotes_plan(columns), *side))

    with PriceListClient(settings, transport=options.get("transport")) as client:
        offer, status = load_offer(
            client, offer_code, region, progress=options.get("progress"),
            cancel=options.get("cancel"), offline=options.get("offline", False), plan=plan,
        )  # fmt: skip
    rows, *side_rows = offer.rows if side_rates else [offer.rows]
    source = offer_source(offer)
    notes: list[str] = []
    quotes = tuple(quotes_from_rows(rows, offer.cached.path, source, region, notes))
    looked_up = tuple(
        PriceLookup(
            instance_type,
            region,
            source.retrieved_at,
            source.publication_date,
            source.offer_code,
        )
        for instance_type in wanted or ()
        if not any(q.instance_type == instance_type for q in quotes)
    )
    missing = tuple(
        find_quote(quotes, lookup.instance_type, region, looked_for, looked_up)
        for lookup in looked_up
    )
    side_result = _offer_side_rates(offer, status, side_rows, region) if side_rates else None
    return FetchResult(region, quotes, missing, status, looked_up, tuple(notes), side_result)


_SIDE_NAMES = {
    SideService.S3_STANDARD_STORAGE: "S3 Standard storage",
    SideService.EBS_GP3_STORAGE: "EBS gp3 storage",
    SideService.CLOUDWATCH_LOGS_INGESTION: "CloudWatch Logs ingestion",
    SideService.CLOUDWATCH_LOGS_STORAGE: "CloudWatch Logs storage",
    SideService.INTER_AZ_TRANSFER: "inter-AZ data transfer",
}


def fetch_side_rates(
    region: str,
    *,
    already: SideRatesResult | None = None,
    **options: Unpack[FetchOptions],
) -> SideRatesResult:
    """S3 Standard, EBS gp3, CloudWatch Logs and inter-AZ transfer rates for ``region``.

    A rate not found is reported in ``missing`` (and so stays unknown in the estimate); an offer
    file that cannot be had at all makes its services missing, with the reason. The offers
    ``already`` has read (a ``FetchResult.side_rates``) are taken from it, not read again.
    """
    settings = options.get("settings") or PricingSettings.from_env()
    if already is not None and already.region != region:
        raise ValueError(f"side rates read for {already.region} cannot serve {region}")
    done = {status.offer_code for status in already.statuses} if already is not None else set()
    parts: list[SideRatesResult] = []
    with PriceListClient(settings, transport=options.get("transport")) as client:
        for offer_code in SIDE_OFFERS:
            if offer_code in done and already is not None:
                if already not in parts:
                    parts.append(already)
                continue
            plan = _side_plan(offer_code)
            try:
                offer, status = load_offer(
                    client, offer_code, region, progress=options.get("progress"),
                    cancel=options.get("cancel"), offline=options.get("offline", False),
                    plan=plan,
                )  # fmt: skip
            except PricingCancelledError:
                raise
            except PricingError as error:
                services = extract.side_services_in(offer_code)
                missing = {service: f"{_SIDE_NAMES[service]}: {error}" for service in services}
                parts.append(SideRatesResult(region, (), missing))
                continue
            parts.append(_offer_side_rates(offer, status, offer.rows, region))
    return SideRatesResult(
        region,
        tuple(rate for part in parts for rate in part.rates),
        {service: why for part in parts for service, why in part.missing.items()},
        tuple(status for part in parts for status in part.statuses),
    )


def fetch_quotes_and_side_rates(
    region: str, instance_types: Sequence[str] | None = None, **options: Unpack[FetchOptions]
) -> tuple[FetchResult, SideRatesResult]:
    """Instance quotes and the side-service rates of ``region``, the EC2 file read once for
    both (its EBS gp3 rate comes with the quotes; ``FetchOptions``); a fault is handled as
    each of the two functions handles it."""
    result = fetch_instance_quotes(region, instance_types, side_rates=True, **options)
    return result, fetch_side_rates(region, already=result.side_rates, **options)


def _side_plan(offer_code: str) -> Callable[[Sequence[str]], RowQueries]:
    """``extract.side_plan``, loaded by the scanning thread (see ``_fetch_quotes``)."""
    return lambda columns: extract.side_plan(offer_code)(columns)


def _offer_side_rates(
    offer: OfferFile, status: OfferStatus, found: Sequence[Any], region: str
) -> SideRatesResult:
    """The side-service rates of one offer file from its side plan's rows (``found``)."""
    services = extract.side_services_in(offer.offer_code)
    rates = extract.rates_from_side_rows(found, offer_source(offer), region)
    missing = {
        service: (
            f"{_SIDE_NAMES[service]}: no single matching rate in the {offer.offer_code} "
            f"price list for {region}; add a manual rate"
        )
        for service in services
        if service not in rates
    }
    return SideRatesResult(
        region, tuple(rates[s] for s in services if s in rates), missing, (status,)
    )
