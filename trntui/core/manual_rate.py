"""A side-service rate typed in by a person (S3 Standard, EBS gp3, CloudWatch Logs, inter-AZ
transfer): one flat rate per unit, with where it comes from and when. The CLI (``trntui price
rate``) and the Prices screen make it here, by the same rules: a rate above 0 (an unknown
rate is not entered), a source, a date not in the future, a region code.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import ClassVar

from trntui.core.fields import spec_field
from trntui.core.inventory import check_region
from trntui.core.quotes import InvalidQuoteError, RateTier, ServiceRate, SideService

SERVICES = tuple(service.value for service in SideService)


@dataclass(frozen=True)
class ManualRateEntry:
    TITLE: ClassVar[str] = "Side-service rate"
    service: str = spec_field(
        "choice",
        "Service",
        choices=SERVICES,
        required=True,
        default=SideService.S3_STANDARD_STORAGE.value,
    )
    region: str = spec_field(
        "text", "Region", required=True, default="us-east-1", validator=check_region
    )
    usd_per_unit: float | None = spec_field(
        "float",
        "Rate",
        unit="USD/GB-month",  # the first service's; the form follows the service (units_of)
        greater_than=0,
        required=True,
        help="per GB-month (S3, EBS, logs storage) or per GB (logs ingestion; inter-AZ: each "
        "direction)",
    )
    source_note: str = spec_field(
        "text",
        "Source",
        required=True,
        default="",
        placeholder="e.g. AWS pricing page for us-east-1, 2026-11-20",
    )
    rated_on: dt.date | None = spec_field("date", "Rate date", required=True, help="YYYY-MM-DD")

    @staticmethod
    def units_of(values: dict[str, object]) -> dict[str, str]:
        """The rate's unit follows the service chosen (``rate_unit``): the form shows it next
        to the rate, and changes it when another service is picked."""
        service = values.get("service")
        if service not in SERVICES:
            return {}
        return {"usd_per_unit": rate_unit(SideService(str(service)))}

    @classmethod
    def of(cls, rate: ServiceRate) -> ManualRateEntry:
        """The entry that edits ``rate``: its first tier's price, and its source when a person
        typed it (a fetched rate's source is the price list: whoever edits says theirs)."""
        return cls(
            service=rate.service.value,
            region=rate.region,
            usd_per_unit=rate.first_tier_usd_per_unit,
            source_note=rate.source_note if rate.manual else "",
            rated_on=rate.retrieved_at.date() if rate.manual else dt.date.today(),
        )

    def to_rate(self) -> ServiceRate:
        """The rate, dated at the start of ``rated_on`` (UTC) so its age counts from then."""
        if self.rated_on is None or self.usd_per_unit is None:
            raise InvalidQuoteError("a side rate needs its price and its date")
        return manual_rate(
            service=SideService(self.service),
            region=self.region,
            usd_per_unit=self.usd_per_unit,
            retrieved_at=dt.datetime.combine(self.rated_on, dt.time(), tzinfo=dt.UTC),
            source_note=self.source_note,
        )


def rate_unit(service: SideService) -> str:
    """What a rate of ``service`` is typed in, named as the estimate's inputs name it:
    ``USD/GB-month`` for storage (S3, EBS, logs storage; the price list's ``GB-Mo``),
    ``USD/GB`` for logs ingestion, ``USD/GB each way`` for inter-AZ transfer (charged in each
    direction)."""
    per = "GB-month" if service.unit == "GB-Mo" else service.unit
    each_way = " each way" if service is SideService.INTER_AZ_TRANSFER else ""
    return f"USD/{per}{each_way}"


def manual_rate(
    *,
    service: SideService,
    region: str,
    usd_per_unit: float,
    retrieved_at: dt.datetime,
    source_note: str,
) -> ServiceRate:
    """One flat rate a person states; it wins over a fetched rate of the same service and
    region (``QuoteBook.rate``). Raises ``InvalidQuoteError`` naming what is wrong."""
    if not usd_per_unit > 0:
        raise InvalidQuoteError(
            f"{service.value} rate: must be above 0 (an unknown rate is not entered)"
        )
    if not source_note.strip():
        raise InvalidQuoteError(f"{service.value} rate: say where the rate comes from")
    return ServiceRate(
        service=service,
        region=region.strip(),
        tiers=(RateTier(0.0, None, usd_per_unit),),
        retrieved_at=retrieved_at,
        manual=True,
        source_note=source_note.strip(),
    )
