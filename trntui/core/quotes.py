"""Price quotes: what an instance hour (or a side-service unit) costs, and where that came from.

A quote keeps its provenance (offer file, SKU, rate code, publication date, retrieval time) so an
estimate can be redone later and audited. Three honesty rules live here, because every screen and
command must apply them the same way:

- an instance type with no row for the region is **not offered** there; it never becomes $0;
  and it is called not offered only when a price-list lookup said so (``PriceLookup``, kept
  with its date): a project that simply has no quote yet says that instead;
- a Trainium3 (``trn3*``) type missing from the price list is **not in the price list yet**: the
  user adds a manual quote, nothing is filled in from another region or instance;
- a quote older than a maximum age, from another region or for another purchase option than the
  target is **flagged** (``quote_flags``) so the estimate can show it is not current.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from trntui.core.errors import UserError

DEFAULT_MAX_AGE_DAYS = 30
HOURS_PER_YEAR = 8760  # AWS amortises reserved upfront fees over 365-day years

ON_DEMAND = "on-demand"
SPOT = "spot"
CAPACITY_BLOCK = "capacity-block"
NEGOTIATED = "negotiated"
SAVINGS_PLANS = "savings-plan"
"""Any Savings Plan: what a Savings Plans lookup that found no rate for a type looked for."""
SAVINGS_PLAN_OFFER = "AWSComputeSavingsPlan"
"""The price list offer holding the Compute and the EC2 Instance Savings Plans rates."""
_RESERVED_PATTERN = re.compile(
    r"^reserved-(?P<years>[13])yr-(?P<klass>standard|convertible)-(?P<payment>no|partial|all)-upfront$"
)
_SAVINGS_PLAN_PATTERN = re.compile(
    r"^savings-plan-(?:compute|ec2-instance)-(?P<years>[13])yr-(?:no|partial|all)-upfront$"
)
_TRAINIUM3_PATTERN = re.compile(r"^trn3", re.IGNORECASE)
_EXAMPLE = re.compile(r"\bEXAMPLE\b")


class InvalidQuoteError(UserError):
    """A quote the user entered (or a stored one) breaks a rule; the message says which,
    and ``key`` names the field when one is to blame (for pointing at its line in a file)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def check_amount(
    value: object, what: str, *, key: str | None = None, above_zero: bool = False
) -> None:
    """The one check every price and rate passes, whichever way it came in (the price list, a
    manual entry, a hand-edited ``prices/quotes.toml``): a finite number, not negative (above
    zero when ``above_zero``). ``inf``, ``nan`` and negative amounts are refused, never stored."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidQuoteError(f"{what}: {value!r} is not a number", key=key)
    if not math.isfinite(value):
        raise InvalidQuoteError(f"{what}: {value!r} is not a finite number", key=key)
    if above_zero and not value > 0:
        raise InvalidQuoteError(
            f"{what} must be above $0 (got {value}); leave it unknown instead", key=key
        )
    if value < 0:
        raise InvalidQuoteError(f"{what} cannot be negative (got {value})", key=key)


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


def reserved_option(years: int, offering_class: str, payment: str) -> str:
    """Name a reserved purchase option, e.g. ``reserved-1yr-standard-partial-upfront``."""
    name = f"reserved-{years}yr-{offering_class}-{payment}-upfront"
    if not _RESERVED_PATTERN.match(name):
        raise InvalidQuoteError(f"not a reserved purchase option: {name!r}")
    return name


def savings_plan_option(kind: str, years: int, payment: str) -> str:
    """Name a Savings Plan option, e.g. ``savings-plan-compute-3yr-no-upfront``."""
    name = f"{SAVINGS_PLANS}-{kind}-{years}yr-{payment}-upfront"
    if not _SAVINGS_PLAN_PATTERN.match(name):
        raise InvalidQuoteError(f"not a Savings Plan purchase option: {name!r}")
    return name


def is_savings_plan(purchase_option: str) -> bool:
    return (
        purchase_option == SAVINGS_PLANS or _SAVINGS_PLAN_PATTERN.match(purchase_option) is not None
    )


def reserved_term_years(purchase_option: str) -> int | None:
    """Years in a reserved term (1 or 3), or None for options that are not reserved instances."""
    match = _RESERVED_PATTERN.match(purchase_option)
    return int(match["years"]) if match else None


def term_years(purchase_option: str) -> int | None:
    """Years in a reserved term or a Savings Plan (1 or 3); None for options without a term."""
    match = _RESERVED_PATTERN.match(purchase_option) or _SAVINGS_PLAN_PATTERN.match(purchase_option)
    return int(match["years"]) if match else None


def is_known_purchase_option(purchase_option: str) -> bool:
    """Options the app understands: on-demand, reserved and savings-plan terms, spot,
    capacity blocks and negotiated (private) pricing."""
    return (
        purchase_option in {ON_DEMAND, SPOT, CAPACITY_BLOCK, NEGOTIATED}
        or _RESERVED_PATTERN.match(purchase_option) is not None
        or _SAVINGS_PLAN_PATTERN.match(purchase_option) is not None
    )


def purchase_option_help() -> str:
    """A one-line list of accepted purchase options, for error messages and ``--help``."""
    return (
        f"{ON_DEMAND}, reserved-<1|3>yr-<standard|convertible>-<no|partial|all>-upfront, "
        f"savings-plan-<compute|ec2-instance>-<1|3>yr-<no|partial|all>-upfront, "
        f"{SPOT}, {CAPACITY_BLOCK}, {NEGOTIATED}"
    )


def is_trainium3(instance_type: str) -> bool:
    return _TRAINIUM3_PATTERN.match(instance_type) is not None


@dataclass(frozen=True)
class PriceQuote:
    """The price of one instance type, in one region, under one purchase option.

    ``usd_per_hour`` is the effective hourly rate: for reserved terms it is the recurring hourly
    part plus the upfront fee spread over the term's hours, so ``usd_per_hour x hours`` compares
    with on-demand; the upfront fee and the recurring part are kept too (``upfront_usd``,
    ``recurring_usd_per_hour``). ``None`` means unknown, never zero.
    """

    instance_type: str
    region: str
    purchase_option: str
    usd_per_hour: float | None
    retrieved_at: datetime
    manual: bool
    upfront_usd: float = 0.0
    recurring_usd_per_hour: float | None = None
    accelerator_count: int | None = None
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
    pinned: bool = False
    """A person vouches for this manual quote (a negotiated or private price, a signed offer):
    it is used over the price list's and counts as verified."""
    block_days: int | None = None
    """A Capacity Block offer's duration (``BLOCK_DAYS``); its ``upfront_usd`` pays the whole
    block and ``usd_per_hour`` is that total per instance-hour of the block."""
    block_instances: int | None = None
    """Instances in the quoted block (1 to 64)."""
    availability_zone: str | None = None
    start_date: str | None = None
    """When the quoted block starts (YYYY-MM-DD), if the offer says."""
    ultraserver_instances: int | None = None
    """Sold as UltraServers of this many instances (Trn2: 4 x trn2u.48xlarge): a target takes
    whole UltraServers. ``usd_per_hour`` stays per instance (the UltraServer's price / this)."""

    def __post_init__(self) -> None:
        if not self.instance_type.strip():
            raise InvalidQuoteError("a quote needs an instance type")
        if not self.region.strip():
            raise InvalidQuoteError(f"quote for {self.instance_type}: a region is required")
        if not is_known_purchase_option(self.purchase_option):
            raise InvalidQuoteError(
                f"quote for {self.instance_type}: unknown purchase option "
                f"{self.purchase_option!r}; expected one of {purchase_option_help()}"
            )
        what = f"quote for {self.instance_type} in {self.region}"
        if self.usd_per_hour is not None:
            check_amount(
                self.usd_per_hour, f"{what}: the hourly price", key="usd_per_hour",
                above_zero=True,
            )  # fmt: skip
        check_amount(self.upfront_usd, f"{what}: the upfront fee", key="upfront_usd")
        if self.recurring_usd_per_hour is not None:
            check_amount(
                self.recurring_usd_per_hour, f"{what}: the recurring hourly price",
                key="recurring_usd_per_hour",
            )  # fmt: skip
        if self.accelerator_count is not None and not (
            isinstance(self.accelerator_count, int) and self.accelerator_count >= 1
        ):
            raise InvalidQuoteError(
                f"{what}: accelerators per instance must be a whole number from 1 "
                f"(got {self.accelerator_count!r})",
                key="accelerator_count",
            )
        if self.retrieved_at.tzinfo is None:
            raise InvalidQuoteError(
                f"quote for {self.instance_type}: retrieval time needs a time zone"
            )
        _refuse_future(self.retrieved_at, f"quote for {self.instance_type}")
        self._check_block()
        if self.ultraserver_instances is not None and self.ultraserver_instances < 2:
            raise InvalidQuoteError(
                f"quote for {self.instance_type}: an UltraServer joins 2 or more instances; "
                f"got {self.ultraserver_instances}",
                key="ultraserver_instances",
            )
        if self.manual and not self.source_note.strip():
            raise InvalidQuoteError(
                f"manual quote for {self.instance_type} in {self.region}: say where the price "
                "comes from (a source note is required)"
            )

    def _check_block(self) -> None:
        from trntui.core.capacity_block import MAX_BLOCK_INSTANCES, block_days_help, is_block_days

        what = f"quote for {self.instance_type} in {self.region}"
        block = (self.block_days, self.block_instances, self.availability_zone, self.start_date)
        if self.purchase_option != CAPACITY_BLOCK:
            if any(value is not None for value in block):
                raise InvalidQuoteError(
                    f"{what}: block days, instances, zone and start date are for a "
                    f"{CAPACITY_BLOCK} quote, not {self.purchase_option}",
                    key=next(
                        name
                        for name, value in zip(
                            ("block_days", "block_instances", "availability_zone", "start_date"),
                            block,
                            strict=True,
                        )
                        if value is not None
                    ),
                )
            return
        if self.block_days is not None and not is_block_days(self.block_days):
            raise InvalidQuoteError(
                f"{what}: a Capacity Block lasts {block_days_help()}; got {self.block_days} days",
                key="block_days",
            )
        if self.block_instances is not None and not 1 <= self.block_instances <= (
            MAX_BLOCK_INSTANCES
        ):
            raise InvalidQuoteError(
                f"{what}: a Capacity Block holds 1 to {MAX_BLOCK_INSTANCES} instances; "
                f"got {self.block_instances}",
                key="block_instances",
            )
        if self.upfront_usd and (self.block_days is None or self.block_instances is None):
            raise InvalidQuoteError(
                f"{what}: an upfront total is a price only with the block's length and "
                "instance count (block_days, block_instances)",
                key="block_days" if self.block_days is None else "block_instances",
            )
        if self.start_date is not None:
            try:
                date.fromisoformat(self.start_date)
            except ValueError:
                raise InvalidQuoteError(
                    f"{what}: start date {self.start_date!r} is not YYYY-MM-DD", key="start_date"
                ) from None

    @property
    def usd_per_ultraserver_hour(self) -> float | None:
        if self.usd_per_hour is None or self.ultraserver_instances is None:
            return None
        return self.usd_per_hour * self.ultraserver_instances

    @property
    def usd_per_instance_day(self) -> float | None:
        """A block's price per instance-day (what a whole day of one instance costs)."""
        return None if self.usd_per_hour is None else self.usd_per_hour * 24

    @property
    def is_example(self) -> bool:
        """Marked as illustration (``EXAMPLE`` in its source note): never a real price."""
        return _EXAMPLE.search(self.source_note) is not None

    @property
    def verified(self) -> bool:
        """From the price list, or a manual quote a person vouches for (pinned, or a
        negotiated price); an EXAMPLE quote never is."""
        if self.is_example:
            return False
        return not self.manual or self.pinned or self.purchase_option == NEGOTIATED

    @property
    def key(self) -> tuple[str, str, str, bool]:
        """Identity in a project's quote list: one quote per type, region, option and origin."""
        return (self.instance_type, self.region, self.purchase_option, self.manual)

    def age_days(self, today: date) -> int:
        return (today - self.retrieved_at.astimezone(UTC).date()).days


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


_CLOCK_SLACK = timedelta(days=1)
"""A date typed in a time zone ahead of UTC may be tomorrow in UTC."""


def _refuse_future(when: datetime, what: str) -> None:
    """A price is dated when it was given or retrieved, which cannot be in the future."""
    if when.tzinfo is not None and when > datetime.now(UTC) + _CLOCK_SLACK:
        raise InvalidQuoteError(
            f"{what} is dated {when.date().isoformat()}, in the future: date it when the price "
            "was given or retrieved"
        )


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
        _refuse_future(self.retrieved_at, f"{self.service} rate")

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


class LookupStatus(enum.StrEnum):
    FOUND = "found"
    NOT_OFFERED = "not-offered"
    NOT_LISTED_YET = "not-listed-yet"
    NO_QUOTE = "no-quote"


@dataclass(frozen=True)
class PriceLookup:
    """A price-list lookup that found no row for an instance type in a region: the evidence
    behind "not offered", with when it was looked up and which list said so."""

    instance_type: str
    region: str
    looked_up_at: datetime
    publication_date: str | None = None
    offer_code: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.instance_type, self.region)

    def covers(self, purchase_option: str) -> bool:
        """Whether this lookup speaks for ``purchase_option``: one in the Savings Plans list
        only for Savings Plans (a type can have a price and no plan rate yet); one in the EC2
        list for every option (no instance row, no rate of any kind)."""
        return self.offer_code != SAVINGS_PLAN_OFFER or is_savings_plan(purchase_option)


@dataclass(frozen=True)
class QuoteLookup:
    """The answer to "what does this instance cost here?": a quote, or why there is none."""

    instance_type: str
    region: str
    purchase_option: str
    status: LookupStatus
    quote: PriceQuote | None = None
    message: str = ""
    reason: str = ""
    """Why this quote was chosen over the others that match (``find_quote``)."""

    @property
    def usd_per_hour(self) -> float | None:
        return None if self.quote is None else self.quote.usd_per_hour


def missing_quote(
    instance_type: str,
    region: str,
    purchase_option: str,
    misses: Iterable[PriceLookup] = (),
) -> QuoteLookup:
    """Explain a missing price without inventing one.

    Trainium3 types are expected to be missing from the price list for a while after launch, so
    the message asks for a manual quote. Any other type is **not offered** only when a price
    list lookup found no row for it there (``misses``); otherwise the project has no quote yet.
    """
    if is_trainium3(instance_type):
        return QuoteLookup(
            instance_type,
            region,
            purchase_option,
            LookupStatus.NOT_LISTED_YET,
            message=(
                f"{instance_type} ({purchase_option}, {region}) is not in the price list yet: "
                "add a manual quote"
            ),
        )
    miss = next(
        (m for m in misses if m.key == (instance_type, region) and m.covers(purchase_option)),
        None,
    )
    if miss is None:
        return QuoteLookup(
            instance_type,
            region,
            purchase_option,
            LookupStatus.NO_QUOTE,
            message=(
                f"no quote in the project for {instance_type} ({purchase_option}, {region}): "
                "fetch it from the price list or add a manual quote"
            ),
        )
    listed = f"published {miss.publication_date[:10]}, " if miss.publication_date else ""
    return QuoteLookup(
        instance_type,
        region,
        purchase_option,
        LookupStatus.NOT_OFFERED,
        message=(
            f"{instance_type} is not offered in {region} as {purchase_option}: the price list "
            f"({listed}looked up {miss.looked_up_at.date().isoformat()}) has no row for it"
        ),
    )


def find_quote(
    quotes: Iterable[PriceQuote],
    instance_type: str,
    region: str,
    purchase_option: str = ON_DEMAND,
    misses: Iterable[PriceLookup] = (),
) -> QuoteLookup:
    """Pick the quote for exactly this type, region and option, or say why there is none.

    Only exact matches count: a price from another region or option is never borrowed. When
    several match: a manual quote a person pinned (a negotiated or private price) wins; else
    the official price list's beats a manual one (an old manual figure must not outlive the
    published price); else the manual one. Among equals the most recently retrieved wins. The
    lookup says why (``reason``).
    """
    matches = [
        quote
        for quote in quotes
        if quote.instance_type == instance_type
        and quote.region == region
        and quote.purchase_option == purchase_option
    ]
    if not matches:
        return missing_quote(instance_type, region, purchase_option, misses)
    best = max(matches, key=lambda q: (q.manual and q.pinned, not q.manual, q.retrieved_at))
    others = len(matches) - 1
    when = best.retrieved_at.date().isoformat()
    if best.manual and best.pinned:
        reason = f"manual quote pinned by the user (dated {when})"
    elif not best.manual:
        reason = f"the AWS Price List's, retrieved {when}"
        if any(q.manual for q in matches):
            reason += ", used over the manual quote(s) that nobody pinned"
    else:
        reason = f"manual quote dated {when}: the project has no price-list quote for it"
    if others and not (not best.manual and any(q.manual for q in matches)):
        reason += f" (newest of {others + 1})"
    return QuoteLookup(
        instance_type, region, purchase_option, LookupStatus.FOUND, quote=best, reason=reason
    )


@dataclass(frozen=True)
class QuoteBook:
    """Everything priced for a project: instance quotes and side-service rates."""

    quotes: tuple[PriceQuote, ...] = ()
    rates: tuple[ServiceRate, ...] = field(default_factory=tuple)
    misses: tuple[PriceLookup, ...] = ()
    """Price-list lookups that found no row (the only ground for "not offered")."""

    def rate(self, service: SideService, region: str) -> ServiceRate | None:
        """The side rate for this region, manual entries first, else the newest; None if absent."""
        matches = [rate for rate in self.rates if rate.service == service and rate.region == region]
        if not matches:
            return None
        return max(matches, key=lambda rate: (rate.manual, rate.retrieved_at))
