"""Honesty rules for price quotes: no invented prices, no borrowed regions, stale quotes flagged."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta

import pytest

from trntui.core.quotes import (
    FlagKind,
    InvalidQuoteError,
    LookupStatus,
    PriceLookup,
    PriceQuote,
    QuoteBook,
    RateTier,
    ServiceRate,
    SideService,
    find_quote,
    is_known_purchase_option,
    quote_flags,
    reserved_option,
    reserved_term_years,
)

RETRIEVED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def make_quote(**changes: object) -> PriceQuote:
    values: dict[str, object] = {
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "purchase_option": "on-demand",
        "usd_per_hour": 55.04,
        "retrieved_at": RETRIEVED,
        "manual": False,
    }
    values.update(changes)
    return PriceQuote(**values)  # type: ignore[arg-type]


def test_not_offered_only_when_a_price_list_lookup_said_so() -> None:
    # No quote and no lookup: the project simply has no quote yet (nothing was looked up).
    lookup = find_quote([make_quote()], "p4d.24xlarge", "us-east-1")
    assert lookup.status is LookupStatus.NO_QUOTE
    assert lookup.quote is None and lookup.usd_per_hour is None
    assert "not offered" not in lookup.message and "no quote in the project" in lookup.message
    # A lookup of the price list that found no row: not offered, with its date.
    miss = PriceLookup("p4d.24xlarge", "us-east-1", RETRIEVED, "2026-11-12T22:53:08Z")
    lookup = find_quote([make_quote()], "p4d.24xlarge", "us-east-1", misses=[miss])
    assert lookup.status is LookupStatus.NOT_OFFERED
    assert "not offered in us-east-1" in lookup.message and "published 2026-11-12" in lookup.message
    # A lookup in another region says nothing about this one.
    elsewhere = dataclasses.replace(miss, region="eu-west-1")
    assert find_quote([], "p4d.24xlarge", "us-east-1", misses=[elsewhere]).status is (
        LookupStatus.NO_QUOTE
    )


def test_missing_trainium3_asks_for_a_manual_quote() -> None:
    lookup = find_quote([make_quote()], "trn3.48xlarge", "us-east-1")
    assert lookup.status is LookupStatus.NOT_LISTED_YET
    assert lookup.usd_per_hour is None
    assert "not in the price list yet: add a manual quote" in lookup.message


def test_trainium3_price_is_never_borrowed_from_another_region_or_option() -> None:
    quotes = [
        make_quote(instance_type="trn3.48xlarge", region="us-east-2", usd_per_hour=30.0),
        make_quote(
            instance_type="trn3.48xlarge",
            purchase_option="reserved-1yr-standard-no-upfront",
            usd_per_hour=20.0,
        ),
        make_quote(instance_type="trn2.48xlarge", usd_per_hour=44.7),
    ]
    lookup = find_quote(quotes, "trn3.48xlarge", "us-east-1", "on-demand")
    assert lookup.status is LookupStatus.NOT_LISTED_YET
    assert lookup.quote is None


def test_zero_price_is_refused() -> None:
    with pytest.raises(InvalidQuoteError, match="above \\$0"):
        make_quote(usd_per_hour=0.0)


def test_unknown_price_is_allowed_and_flagged() -> None:
    quote = make_quote(usd_per_hour=None)
    kinds = {
        flag.kind for flag in quote_flags(quote, target_region="us-east-1", today=date(2026, 11, 2))
    }
    assert kinds == {FlagKind.UNKNOWN_PRICE}


def test_manual_quote_needs_a_source_note() -> None:
    with pytest.raises(InvalidQuoteError, match="source"):
        make_quote(manual=True, source_note="  ")


def test_retrieval_time_must_carry_a_time_zone() -> None:
    with pytest.raises(InvalidQuoteError, match="time zone"):
        make_quote(retrieved_at=datetime(2026, 11, 1, 12, 0))


def test_a_price_dated_in_the_future_is_refused() -> None:
    now = datetime.now(UTC)
    with pytest.raises(InvalidQuoteError, match="in the future"):
        make_quote(retrieved_at=now + timedelta(days=3))
    with pytest.raises(InvalidQuoteError, match="in the future"):
        ServiceRate(
            SideService.S3_STANDARD_STORAGE, "us-east-1", (RateTier(0.0, None, 0.02),),
            now + timedelta(days=30), manual=True, source_note="rate card",
        )  # fmt: skip
    # Tomorrow in UTC is today somewhere east of it: accepted.
    assert make_quote(retrieved_at=now + timedelta(hours=20)).retrieved_at > now


def test_unknown_purchase_option_is_refused() -> None:
    with pytest.raises(InvalidQuoteError, match="purchase option"):
        make_quote(purchase_option="cheap")


def test_fresh_quote_for_the_target_has_no_flags() -> None:
    assert quote_flags(make_quote(), target_region="us-east-1", today=date(2026, 11, 15)) == ()


@pytest.mark.parametrize(
    ("today", "stale"),
    [(date(2026, 12, 1), False), (date(2026, 12, 2), True), (date(2027, 3, 1), True)],
)
def test_quote_older_than_30_days_is_stale(today: date, stale: bool) -> None:
    flags = quote_flags(make_quote(), target_region="us-east-1", today=today)
    assert (FlagKind.STALE in {flag.kind for flag in flags}) is stale


def test_maximum_age_is_configurable() -> None:
    flags = quote_flags(
        make_quote(), target_region="us-east-1", today=date(2026, 11, 9), max_age_days=7
    )
    assert [flag.kind for flag in flags] == [FlagKind.STALE]
    assert "8 days old" in flags[0].message


def test_quote_from_another_region_is_flagged() -> None:
    flags = quote_flags(
        make_quote(region="us-west-2"), target_region="eu-west-1", today=date(2026, 11, 2)
    )
    assert [flag.kind for flag in flags] == [FlagKind.OTHER_REGION]
    assert "us-west-2" in flags[0].message and "eu-west-1" in flags[0].message


def test_quote_for_another_purchase_option_is_flagged_when_a_target_option_is_given() -> None:
    flags = quote_flags(
        make_quote(),
        target_region="us-east-1",
        today=date(2026, 11, 2),
        target_purchase_option="reserved-1yr-standard-no-upfront",
    )
    assert [flag.kind for flag in flags] == [FlagKind.OTHER_PURCHASE_OPTION]


def test_manual_quote_is_flagged_with_its_source_and_unverified_until_pinned() -> None:
    quote = make_quote(manual=True, source_note="AWS account team, email 2026-11-01")
    flags = quote_flags(quote, target_region="us-east-1", today=date(2026, 11, 2))
    assert [flag.kind for flag in flags] == [FlagKind.MANUAL, FlagKind.UNVERIFIED]
    assert "AWS account team" in flags[0].message
    pinned = dataclasses.replace(quote, pinned=True)
    kinds = [
        f.kind for f in quote_flags(pinned, target_region="us-east-1", today=date(2026, 11, 2))
    ]
    assert kinds == [FlagKind.MANUAL]
    example = make_quote(manual=True, pinned=True, source_note="EXAMPLE figure, not a price")
    flags = quote_flags(example, target_region="us-east-1", today=date(2026, 11, 2))
    assert FlagKind.UNVERIFIED in [f.kind for f in flags]  # pinning never verifies an example
    assert "EXAMPLE" in flags[-1].message


def test_the_price_list_beats_a_manual_quote_unless_it_is_pinned() -> None:
    listed_old = make_quote(usd_per_hour=60.0)
    listed_new = make_quote(usd_per_hour=55.0, retrieved_at=datetime(2026, 11, 20, tzinfo=UTC))
    manual = make_quote(usd_per_hour=40.0, manual=True, source_note="EXAMPLE old figure")
    assert find_quote([listed_old, listed_new], "p5.48xlarge", "us-east-1").usd_per_hour == 55.0
    lookup = find_quote([listed_old, manual, listed_new], "p5.48xlarge", "us-east-1")
    assert lookup.usd_per_hour == 55.0
    assert "AWS Price List" in lookup.reason and "manual" in lookup.reason
    negotiated = dataclasses.replace(manual, pinned=True, source_note="private pricing, 2026")
    lookup = find_quote([listed_old, negotiated, listed_new], "p5.48xlarge", "us-east-1")
    assert lookup.usd_per_hour == 40.0 and "pinned" in lookup.reason
    alone = find_quote([manual], "p5.48xlarge", "us-east-1")
    assert alone.usd_per_hour == 40.0 and "no price-list quote" in alone.reason


def test_purchase_option_names() -> None:
    assert (
        reserved_option(3, "convertible", "partial") == "reserved-3yr-convertible-partial-upfront"
    )
    assert reserved_term_years("reserved-3yr-standard-all-upfront") == 3
    assert reserved_term_years("on-demand") is None
    for name in (
        "on-demand",
        "spot",
        "capacity-block",
        "negotiated",
        "savings-plan-compute-1yr-no-upfront",
    ):
        assert is_known_purchase_option(name)
    for name in ("reserved-2yr-standard-no-upfront", "ondemand", ""):
        assert not is_known_purchase_option(name)
    with pytest.raises(InvalidQuoteError):
        reserved_option(2, "standard", "no")


def s3_rate() -> ServiceRate:
    return ServiceRate(
        service=SideService.S3_STANDARD_STORAGE,
        region="us-east-1",
        tiers=(
            RateTier(0, 51200, 0.023),
            RateTier(51200, 512000, 0.022),
            RateTier(512000, None, 0.021),
        ),
        retrieved_at=RETRIEVED,
    )


@pytest.mark.parametrize(
    ("gb_month", "usd"),
    [
        (0, 0.0),
        (1000, 23.0),
        (51200, 1177.6),
        (100000, 51200 * 0.023 + 48800 * 0.022),
        (600000, 51200 * 0.023 + 460800 * 0.022 + 88000 * 0.021),
    ],
)
def test_tiered_rate_charges_each_band_at_its_price(gb_month: float, usd: float) -> None:
    assert s3_rate().cost_usd(gb_month) == pytest.approx(usd)


def test_quote_book_finds_side_rate_for_region_only() -> None:
    book = QuoteBook(rates=(s3_rate(),))
    assert book.rate(SideService.S3_STANDARD_STORAGE, "us-east-1") is not None
    assert book.rate(SideService.S3_STANDARD_STORAGE, "us-west-2") is None
    assert book.rate(SideService.EBS_GP3_STORAGE, "us-east-1") is None


def test_manual_reserved_quote_bills_its_upfront_fee_over_the_term():
    import datetime as dt

    from trntui.core.manual_quote import ManualQuoteEntry

    entry = ManualQuoteEntry(
        instance_type="p5.48xlarge",
        region="us-east-1",
        purchase_option="reserved-1yr-standard-partial-upfront",
        usd_per_hour=20.0,
        upfront_usd=87_600.0,
        source_note="account team",
        quoted_on=dt.date(2026, 11, 1),
    )
    quote = entry.to_quote()
    assert quote.usd_per_hour == pytest.approx(20.0 + 87_600.0 / 8760)
    assert quote.recurring_usd_per_hour == 20.0
    assert quote.upfront_usd == 87_600.0


def test_manual_upfront_fee_without_a_term_is_refused():
    import datetime as dt

    from trntui.core.manual_quote import ManualQuoteEntry

    entry = ManualQuoteEntry(
        instance_type="p5.48xlarge",
        usd_per_hour=20.0,
        upfront_usd=100.0,
        source_note="x",
        quoted_on=dt.date(2026, 11, 1),
    )
    with pytest.raises(InvalidQuoteError, match="needs a term"):
        entry.to_quote()
