"""Side-service prices: the services the estimate needs (``SideService``), with their tiered
rates and provenance (``RateTier``, ``ServiceRate``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from trntui.core.quotes.options import InvalidQuoteError, check_amount, refuse_future


@dataclass(frozen=True)
class RateTier:
    """One band of a tiered rate: units from ``start`` up to ``end`` (None = no upper end)."""

    start: float
    end: float | None
    usd_per_unit: float

    def __post_init__(self) -> None:
        check_amount(self.start, "a rate tier's start", key="tiers")
        if self.end is not None:
            check_amount(self.end, "a rate tier's end", key="tiers")
            if self.end < self.start:
                raise InvalidQuoteError(
                    f"a rate tier ends ({self.end}) before it starts ({self.start})", key="tiers"
                )
        check_amount(self.usd_per_unit, "a rate tier's price", key="tiers")


class SideService(enum.StrEnum):
    """Side costs the estimate needs, each priced per a fixed unit."""

    S3_STANDARD_STORAGE = "s3-standard-storage"
    EBS_GP3_STORAGE = "ebs-gp3-storage"
    CLOUDWATCH_LOGS_INGESTION = "cloudwatch-logs-ingestion"
    CLOUDWATCH_LOGS_STORAGE = "cloudwatch-logs-storage"
    INTER_AZ_TRANSFER = "inter-az-transfer"

    @property
    def unit(self) -> str:
        return _SIDE_SERVICE_UNITS[self]


_SIDE_SERVICE_UNITS = {
    SideService.S3_STANDARD_STORAGE: "GB-Mo",
    SideService.EBS_GP3_STORAGE: "GB-Mo",
    SideService.CLOUDWATCH_LOGS_INGESTION: "GB",
    SideService.CLOUDWATCH_LOGS_STORAGE: "GB-Mo",
    SideService.INTER_AZ_TRANSFER: "GB",
}


@dataclass(frozen=True)
class ServiceRate:
    """A side-service price with its tiers (ascending) and provenance.

    Inter-AZ transfer is charged per GB in each direction; ``tiers`` holds the per-direction rate.
    """

    service: SideService
    region: str
    tiers: tuple[RateTier, ...]
    retrieved_at: datetime
    manual: bool = False
    usage_type: str | None = None
    source_url: str | None = None
    source_note: str = ""
    offer_code: str | None = None
    publication_date: str | None = None
    version: str | None = None
    sku: str | None = None
    rate_code: str | None = None
    effective_date: str | None = None
    etag: str | None = None
    last_modified: str | None = None

    def __post_init__(self) -> None:
        if not self.region.strip():
            raise InvalidQuoteError(f"{self.service} rate: a region is required")
        if not self.tiers:
            raise InvalidQuoteError(f"{self.service} rate in {self.region} has no price tiers")
        if self.manual and not self.source_note.strip():
            raise InvalidQuoteError(
                f"manual {self.service} rate in {self.region}: say where the rate comes from"
            )
        if self.retrieved_at.tzinfo is None:
            raise InvalidQuoteError(f"{self.service} rate: retrieval time needs a time zone")
        refuse_future(self.retrieved_at, f"{self.service} rate")

    @property
    def unit(self) -> str:
        return self.service.unit

    @property
    def first_tier_usd_per_unit(self) -> float:
        return self.tiers[0].usd_per_unit

    def cost_usd(self, quantity: float) -> float:
        """Charge for ``quantity`` units, walking the tiers the way AWS bills tiered storage."""
        if quantity < 0:
            raise ValueError("quantity must not be negative")
        total = 0.0
        for tier in self.tiers:
            if quantity <= tier.start:
                break
            upper = quantity if tier.end is None else min(quantity, tier.end)
            total += (upper - tier.start) * tier.usd_per_unit
        return total
