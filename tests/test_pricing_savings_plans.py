"""Savings Plans rates from the price list's AWSComputeSavingsPlan offer, over real HTTP on
127.0.0.1: the twelve plans, the rows left out, the region index's list, the cache, bad files."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.test_pricing_support import (
    ALL,
    COMPUTE,
    NO,
    SP_FILE_OFFER_CODE,
    SP_HEADER,
    SP_OFFER,
    SP_PUBLICATION_DATE,
    SP_REGION_INDEX,
    SP_VERSION,
    TRN1_ON_DEMAND,
    FakePriceList,
    Fault,
    offer_csv,
    plan_row,
    savings_plan_csv,
    savings_plan_rows,
    sp_csv_path,
)
from trntui.core.quotes import LookupStatus, PriceLookup, PriceQuote, find_quote
from trntui.pricing.errors import (
    PricingCancelledError,
    PricingFormatError,
    PricingHTTPError,
    RegionNotInPriceListError,
)
from trntui.pricing.extract import OfferSource, savings_plan_quotes
from trntui.pricing.service import fetch_instance_quotes, fetch_savings_plan_quotes
from trntui.pricing.settings import PricingSettings
from trntui.store.project import init_project
from trntui.store.quotes import load_quote_book, record_lookups

US_EAST_1 = sp_csv_path("us-east-1")

# Written from the rows of ``savings_plan_rows("us-east-1")``, not from the code under test.
P5_PLANS = {
    "savings-plan-compute-1yr-no-upfront": 41.28,
    "savings-plan-compute-1yr-partial-upfront": 39.63,
    "savings-plan-compute-1yr-all-upfront": 38.80,
    "savings-plan-compute-3yr-no-upfront": 30.27,
    "savings-plan-compute-3yr-partial-upfront": 28.07,
    "savings-plan-compute-3yr-all-upfront": 26.97,
    "savings-plan-ec2-instance-1yr-no-upfront": 37.15,
    "savings-plan-ec2-instance-1yr-partial-upfront": 35.67,
    "savings-plan-ec2-instance-1yr-all-upfront": 34.92,
    "savings-plan-ec2-instance-3yr-no-upfront": 24.77,
    "savings-plan-ec2-instance-3yr-partial-upfront": 22.94,
    "savings-plan-ec2-instance-3yr-all-upfront": 22.02,
}
TRN2_PLANS = {
    "savings-plan-compute-1yr-no-upfront": 31.29,
    "savings-plan-compute-3yr-all-upfront": 20.12,
}
DECOY_RATES = {45.10, 12.40, 45.41, 47.02, 43.33, 49.50}
"""Host, unused capacity, dedicated, Windows, us-west-2 and Dallas Local Zone rows."""


def settings_for(server: FakePriceList, cache: Path, **changes: object) -> PricingSettings:
    return PricingSettings(base_url=server.base_url, cache_dir=cache, **changes)  # type: ignore[arg-type]


def rates(quotes: tuple[PriceQuote, ...] | list[PriceQuote], instance_type: str) -> dict:
    return {q.purchase_option: q.usd_per_hour for q in quotes if q.instance_type == instance_type}


def test_each_of_the_twelve_plans_gets_its_own_rate(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    before = datetime.now(UTC)
    result = fetch_savings_plan_quotes(
        "us-east-1",
        ["p5.48xlarge", "trn2.48xlarge"],
        settings=settings_for(price_server, tmp_path),
    )
    assert rates(result.quotes, "p5.48xlarge") == pytest.approx(P5_PLANS)
    assert rates(result.quotes, "trn2.48xlarge") == pytest.approx(TRN2_PLANS)
    assert result.missing == () and result.misses == ()
    quote = next(
        q for q in result.quotes if q.purchase_option == "savings-plan-compute-3yr-partial-upfront"
    )
    assert quote.instance_type == "p5.48xlarge" and quote.region == "us-east-1"
    assert quote.offer_code == "AWSComputeSavingsPlan"
    assert quote.publication_date == SP_PUBLICATION_DATE
    assert quote.version == SP_VERSION
    assert quote.sku == "CSP3PUGLOBALXXXX"
    assert quote.rate_code == "CSP3PUGLOBALXXXX.P5SHARED"
    assert quote.effective_date == "2026-10-01T00:00:00Z"
    assert quote.source_url == price_server.base_url + US_EAST_1
    assert quote.etag == price_server.etag_for(US_EAST_1)
    assert before <= quote.retrieved_at <= datetime.now(UTC)
    # The listed rate already holds the upfront payment: nothing is added on top of it.
    assert quote.upfront_usd == 0.0
    assert quote.recurring_usd_per_hour is None
    assert quote.manual is False and quote.verified
    assert not quote.source_note
    instance = next(
        q for q in result.quotes if q.purchase_option == "savings-plan-ec2-instance-1yr-no-upfront"
    )
    assert instance.sku == "ISP1NUP5USEAST1X"


def test_rows_for_other_usage_tenancy_systems_and_places_are_left_out(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    """Every type in the file: only p5 and trn2 Linux shared-tenancy rows of us-east-1 count;
    a leaked decoy would add a rate or make its plan's rate unknown."""
    settings = settings_for(price_server, tmp_path)
    result = fetch_savings_plan_quotes("us-east-1", None, settings=settings)
    assert {q.instance_type for q in result.quotes} == {"p5.48xlarge", "trn2.48xlarge"}
    assert len(result.quotes) == len(P5_PLANS) + len(TRN2_PLANS)
    assert all(q.usd_per_hour is not None for q in result.quotes)
    found = {round(q.usd_per_hour or 0, 2) for q in result.quotes}
    assert found.isdisjoint(DECOY_RATES)


@pytest.mark.parametrize("quoting", [csv.QUOTE_MINIMAL, csv.QUOTE_ALL])
def test_quoted_and_unquoted_files_read_the_same(tmp_path: Path, quoting: int) -> None:
    path = tmp_path / "index.csv"
    path.write_bytes(savings_plan_csv(savings_plan_rows("us-east-1"), quoting=quoting))
    assert (b'"SKU"' in path.read_bytes()) == (quoting == csv.QUOTE_ALL)
    source = OfferSource(SP_OFFER, "http://127.0.0.1/x.csv", "p", "v", datetime.now(UTC))
    quotes = savings_plan_quotes(path, source, "us-east-1", ["p5.48xlarge"])
    assert rates(quotes, "p5.48xlarge") == pytest.approx(P5_PLANS)


def test_one_plan_with_two_rates_for_a_type_is_left_unknown(tmp_path: Path) -> None:
    rows = [*savings_plan_rows("us-east-1"), plan_row(COMPUTE, "3", ALL, "26.5",
                                                        discounted_sku="P5TWIN")]  # fmt: skip
    path = tmp_path / "index.csv"
    path.write_bytes(savings_plan_csv(rows))
    source = OfferSource(SP_OFFER, "http://127.0.0.1/x.csv", "p", "v", datetime.now(UTC))
    quotes = savings_plan_quotes(path, source, "us-east-1", ["p5.48xlarge"])
    (quote,) = [q for q in quotes if q.purchase_option == "savings-plan-compute-3yr-all-upfront"]
    assert quote.usd_per_hour is None
    assert "2 different rates" in quote.source_note
    assert rates(quotes, "p5.48xlarge")["savings-plan-compute-1yr-no-upfront"] == 41.28


def test_the_region_index_is_a_list_and_the_region_is_picked_exactly(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    """The list holds us-west-2-den-1 before us-west-2 and us-east-1-wl1-chi1 (whose file the
    server does not have) before us-east-1: each region gets its own entry's file."""
    settings = settings_for(price_server, tmp_path)
    index = json.loads(price_server.site[SP_REGION_INDEX])
    assert isinstance(index["regions"], list)
    oregon = fetch_savings_plan_quotes("us-west-2", ["p5.48xlarge"], settings=settings)
    assert rates(oregon.quotes, "p5.48xlarge") == {
        "savings-plan-compute-1yr-no-upfront": 42.10,
        "savings-plan-ec2-instance-3yr-all-upfront": 23.10,
    }
    assert oregon.status.url == price_server.base_url + sp_csv_path("us-west-2")
    denver = fetch_savings_plan_quotes("us-west-2-den-1", ["p5.48xlarge"], settings=settings)
    assert rates(denver.quotes, "p5.48xlarge") == {"savings-plan-compute-1yr-no-upfront": 50.0}
    virginia = fetch_savings_plan_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    assert virginia.status.url.endswith("/us-east-1/index.csv")
    assert price_server.hits(sp_csv_path("us-east-1-wl1-chi1")) == []
    assert len(price_server.hits(SP_REGION_INDEX)) == 3
    for region in ("us-west", "eu-south-9"):
        with pytest.raises(RegionNotInPriceListError, match=f"{SP_OFFER} has no price list"):
            fetch_savings_plan_quotes(region, ["p5.48xlarge"], settings=settings)


@pytest.mark.parametrize("path", [US_EAST_1, SP_REGION_INDEX])
def test_a_failing_server_after_a_good_fetch_falls_back_to_the_cache(
    price_server: FakePriceList, tmp_path: Path, path: str
) -> None:
    settings = settings_for(price_server, tmp_path)
    first = fetch_savings_plan_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    cached = tmp_path / SP_OFFER / "us-east-1" / "index.csv"
    good = cached.read_bytes()
    meta = cached.with_name("index.csv.meta.json")
    document = json.loads(meta.read_text())
    document["retrieved_at"] = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    meta.write_text(json.dumps(document))
    price_server.faults[path] = Fault(status=503, body=b"Service Unavailable")

    result = fetch_savings_plan_quotes("us-east-1", ["p5.48xlarge"], settings=settings)

    assert isinstance(result.error, PricingHTTPError) and "503" in str(result.error)
    assert result.status.from_cache_after_error is True
    assert "2 days" in result.status.describe()
    assert cached.read_bytes() == good
    assert rates(result.quotes, "p5.48xlarge") == rates(first.quotes, "p5.48xlarge")
    offline = fetch_savings_plan_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings, offline=True
    )
    assert rates(offline.quotes, "p5.48xlarge") == pytest.approx(P5_PLANS)


def test_second_fetch_revalidates_with_the_etag(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    settings = settings_for(price_server, tmp_path)
    fetch_savings_plan_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    second = fetch_savings_plan_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    requests = price_server.hits(US_EAST_1)
    assert requests[1]["if-none-match"] == price_server.etag_for(US_EAST_1)
    assert second.status.not_modified is True
    assert rates(second.quotes, "p5.48xlarge") == pytest.approx(P5_PLANS)


def _line_of(data: bytes, needle: bytes) -> int:
    """The 1-based line of the file holding ``needle``, counted here from the bytes."""
    return next(n for n, line in enumerate(data.splitlines(), start=1) if needle in line)


def test_a_rate_that_is_not_a_number_is_skipped_with_its_file_and_line(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    rows = savings_plan_rows("us-east-1")
    rows[4] = {**rows[4], "DiscountedRate": "n/a"}  # compute 3yr partial upfront, p5
    data = savings_plan_csv(rows)
    price_server.site[US_EAST_1] = data
    line = _line_of(data, b",n/a,")
    assert line == 6 + 5  # five metadata lines, the header, then the fifth row
    result = fetch_savings_plan_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
    )
    (note,) = result.notes
    assert f"{tmp_path / SP_OFFER / 'us-east-1' / 'index.csv'}:{line}:" in note
    assert "'n/a'" in note and "CSP3PUGLOBALXXXX.P5SHARED" in note
    found = rates(result.quotes, "p5.48xlarge")
    # The plan's only row for p5 has no usable rate: said so (unknown, never stored), so
    # p5 is not taken for a type the plan does not cover.
    assert found["savings-plan-compute-3yr-partial-upfront"] is None
    (unknown,) = [q for q in result.quotes if q.usd_per_hour is None]
    assert f"index.csv:{line}:" in unknown.source_note and "no usable rate" in unknown.source_note
    assert result.misses == ()
    assert found["savings-plan-compute-1yr-no-upfront"] == 41.28


def test_an_unclosed_quote_names_the_file_and_line(tmp_path: Path) -> None:
    data = savings_plan_csv(savings_plan_rows("us-east-1"))
    lines = data.splitlines(keepends=True)
    lines[9] = lines[9].replace(b",3 year ", b',"3 year ')  # the 4th row's Description
    path = tmp_path / "index.csv"
    path.write_bytes(b"".join(lines))
    source = OfferSource(SP_OFFER, "http://127.0.0.1/x.csv", "p", "v", datetime.now(UTC))
    with pytest.raises(PricingFormatError, match=f"^{path}:10: .*cannot be read as CSV"):
        savings_plan_quotes(path, source, "us-east-1", ["p5.48xlarge"])


def test_a_header_without_a_needed_column_names_it(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    header = [name for name in SP_HEADER if name != "DiscountedOperation"]
    rows = [{k: v for k, v in row.items() if k in header} for row in savings_plan_rows()]
    price_server.site[US_EAST_1] = offer_csv(SP_FILE_OFFER_CODE, header, rows,
                                             quoting=csv.QUOTE_MINIMAL)  # fmt: skip
    with pytest.raises(PricingFormatError, match="'DiscountedOperation'") as raised:
        fetch_savings_plan_quotes(
            "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
        )
    assert ":6:" in str(raised.value)
    assert not (tmp_path / SP_OFFER / "us-east-1" / "index.csv").exists()


def test_a_type_without_plan_rates_is_never_zero_and_not_offered_only_as_a_plan(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    """trn3: not in the price list yet. trn1: on demand in the EC2 list, no plan rate: its
    Savings Plans miss must not make its other options 'not offered', nor be dropped when the
    EC2 list finds it again."""
    settings = settings_for(price_server, tmp_path / "cache")
    plans = fetch_savings_plan_quotes(
        "us-east-1", ["p5.48xlarge", "trn1.32xlarge", "trn3.48xlarge"], settings=settings
    )
    assert {q.instance_type for q in plans.quotes} == {"p5.48xlarge"}
    statuses = {lookup.instance_type: lookup for lookup in plans.missing}
    assert statuses["trn3.48xlarge"].status is LookupStatus.NOT_LISTED_YET
    assert "add a manual quote" in statuses["trn3.48xlarge"].message
    assert statuses["trn1.32xlarge"].status is LookupStatus.NOT_OFFERED
    assert [(m.instance_type, m.offer_code) for m in plans.misses] == [
        ("trn1.32xlarge", SP_OFFER),
        ("trn3.48xlarge", SP_OFFER),
    ]

    project = init_project(tmp_path / "proj")
    record_lookups(project, plans.quotes, plans.misses)
    book = load_quote_book(project)
    plan = "savings-plan-compute-1yr-no-upfront"
    on_demand = find_quote(book.quotes, "trn1.32xlarge", "us-east-1", "on-demand", book.misses)
    assert on_demand.status is LookupStatus.NO_QUOTE  # the EC2 list was not asked
    as_plan = find_quote(book.quotes, "trn1.32xlarge", "us-east-1", plan, book.misses)
    assert as_plan.status is LookupStatus.NOT_OFFERED
    assert "published 2026-11-18" in as_plan.message
    trn3 = find_quote(book.quotes, "trn3.48xlarge", "us-east-1", plan, book.misses)
    assert trn3.status is LookupStatus.NOT_LISTED_YET and trn3.quote is None

    ec2 = fetch_instance_quotes("us-east-1", ["trn1.32xlarge"], settings=settings)
    record_lookups(project, ec2.quotes, ec2.misses)
    book = load_quote_book(project)
    on_demand = find_quote(book.quotes, "trn1.32xlarge", "us-east-1", "on-demand", book.misses)
    assert on_demand.usd_per_hour == TRN1_ON_DEMAND
    as_plan = find_quote(book.quotes, "trn1.32xlarge", "us-east-1", plan, book.misses)
    assert as_plan.status is LookupStatus.NOT_OFFERED, "an on-demand price says nothing of plans"


def _big_plans_file(server: FakePriceList) -> int:
    filler = plan_row(COMPUTE, "1", NO, "1.0", instance_type="c5.large", discounted_sku="C5")
    rows = savings_plan_rows() + [{**filler, "DiscountedSKU": f"FILL{i}"} for i in range(12000)]
    server.site[US_EAST_1] = savings_plan_csv(rows)
    server.etags[US_EAST_1] = '"bigger"'
    return len(server.site[US_EAST_1])


def test_progress_and_cancel_work_as_for_the_ec2_file(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    settings = settings_for(price_server, tmp_path)
    size = _big_plans_file(price_server)
    assert size > 3 * 1024 * 1024
    seen: list[tuple[int, int | None]] = []
    fetch_savings_plan_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings,
        progress=lambda done, total: seen.append((done, total)),
    )  # fmt: skip
    assert len(seen) >= 3 and seen[-1] == (size, size)
    cached = tmp_path / SP_OFFER / "us-east-1" / "index.csv"
    good = cached.read_bytes()
    _big_plans_file(price_server)
    price_server.etags[US_EAST_1] = '"bigger still"'
    chunks: list[int] = []
    with pytest.raises(PricingCancelledError):
        fetch_savings_plan_quotes(
            "us-east-1", ["p5.48xlarge"], settings=settings,
            progress=lambda done, total: chunks.append(done), cancel=lambda: len(chunks) >= 1,
        )  # fmt: skip
    assert len(chunks) == 1
    assert cached.read_bytes() == good
    assert not [p for p in cached.parent.iterdir() if p.name.startswith(".trntui-download-")]


def test_misses_of_the_ec2_and_the_savings_plans_lists_are_kept_apart(tmp_path: Path) -> None:
    project = init_project(tmp_path / "proj")
    when = datetime(2026, 11, 20, tzinfo=UTC)
    ec2_miss = PriceLookup("g9.fictional", "us-east-1", when, "2026-11-20", "AmazonEC2")
    plan_miss = PriceLookup("g9.fictional", "us-east-1", when, "2026-11-18", SP_OFFER)
    record_lookups(project, (), (ec2_miss,))
    record_lookups(project, (), (plan_miss,))
    book = load_quote_book(project)
    assert sorted(m.offer_code or "" for m in book.misses) == [SP_OFFER, "AmazonEC2"]
    on_demand = find_quote(book.quotes, "g9.fictional", "us-east-1", "on-demand", book.misses)
    assert "published 2026-11-20" in on_demand.message, "the EC2 list's lookup speaks for it"
    found = PriceQuote(
        "g9.fictional", "us-east-1", "savings-plan-compute-1yr-no-upfront", 1.5, when, manual=False
    )
    record_lookups(project, (found,), ())
    assert load_quote_book(project).misses == (), "a plan rate found refutes both misses"
