"""Quotes copied into the project (prices/quotes.toml): round trip, replacement, strict reading."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from trntui.core.errors import InputFileError, UserError
from trntui.core.quotes import PriceQuote, QuoteBook, RateTier, ServiceRate, SideService
from trntui.store.project import init_project
from trntui.store.quotes import (
    add_quotes,
    add_rates,
    load_quote_book,
    quotes_path,
    remove_quote,
    save_quote_book,
)

FETCHED = PriceQuote(
    instance_type="p5.48xlarge",
    region="us-east-1",
    purchase_option="reserved-1yr-standard-partial-upfront",
    usd_per_hour=40.0,
    recurring_usd_per_hour=20.0,
    upfront_usd=175200.0,
    accelerator_count=8,
    retrieved_at=datetime(2026, 11, 21, 9, 30, 5, tzinfo=UTC),
    manual=False,
    source_url="https://pricing.example/offers/v1.0/aws/AmazonEC2/1/us-east-1/index.csv",
    offer_code="AmazonEC2",
    publication_date="2026-11-20T18:02:11Z",
    version="20261120180211",
    sku="P5SHARED",
    rate_code="P5SHARED.HU7G6KETJZ.6YS6EN2CT7",
    effective_date="2026-11-01T00:00:00Z",
    etag='"abc"',
    last_modified="Fri, 20 Nov 2026 18:02:11 GMT",
)
MANUAL = PriceQuote(
    instance_type="trn3.48xlarge",
    region="us-east-1",
    purchase_option="on-demand",
    usd_per_hour=61.5,
    retrieved_at=datetime(2026, 11, 25, tzinfo=UTC),
    manual=True,
    source_note="AWS account team quote, email of 2026-11-25",
)
RATE = ServiceRate(
    service=SideService.S3_STANDARD_STORAGE,
    region="us-east-1",
    tiers=(RateTier(0.0, 51200.0, 0.023), RateTier(51200.0, None, 0.022)),
    retrieved_at=datetime(2026, 11, 21, 9, 30, tzinfo=UTC),
    usage_type="TimedStorage-ByteHrs",
    offer_code="AmazonS3",
    sku="S3STD",
)


@pytest.fixture(autouse=True)
def _project(tmp_path: Path) -> None:
    """Quote books live in a project: the store refuses to write anywhere else."""
    init_project(tmp_path)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    save_quote_book(tmp_path, QuoteBook(quotes=(MANUAL, FETCHED), rates=(RATE,)))
    book = load_quote_book(tmp_path)
    assert set(book.quotes) == {MANUAL, FETCHED}
    assert book.rates == (RATE,)


def test_file_is_plain_toml_without_unknowns_written_as_values(tmp_path: Path) -> None:
    save_quote_book(tmp_path, QuoteBook(quotes=(MANUAL,)))
    text = quotes_path(tmp_path).read_text()
    assert quotes_path(tmp_path) == tmp_path / "prices" / "quotes.toml"
    assert text.count("[[quote]]") == 1
    assert 'instance_type = "trn3.48xlarge"' in text
    assert "usd_per_hour = 61.5" in text
    assert "sku" not in text  # unknown, so absent rather than an empty or zero value
    assert "null" not in text.lower()


def test_missing_file_is_an_empty_book(tmp_path: Path) -> None:
    assert load_quote_book(tmp_path) == QuoteBook()


def test_add_replaces_the_same_key_and_keeps_the_rest(tmp_path: Path) -> None:
    add_quotes(tmp_path, [FETCHED, MANUAL])
    cheaper = PriceQuote(**{**MANUAL.__dict__, "usd_per_hour": 58.0})
    listed_trn3 = PriceQuote(**{**MANUAL.__dict__, "manual": False, "usd_per_hour": 60.0})
    book = add_quotes(tmp_path, [cheaper, listed_trn3])
    assert load_quote_book(tmp_path) == book
    by_key = {quote.key: quote.usd_per_hour for quote in book.quotes}
    assert by_key == {FETCHED.key: 40.0, MANUAL.key: 58.0, listed_trn3.key: 60.0}


def test_add_rates_and_remove_quote(tmp_path: Path) -> None:
    add_quotes(tmp_path, [FETCHED, MANUAL])
    add_rates(tmp_path, [RATE])
    assert remove_quote(tmp_path, MANUAL.key) is True
    assert remove_quote(tmp_path, MANUAL.key) is False
    book = load_quote_book(tmp_path)
    assert book.quotes == (FETCHED,)
    assert book.rates == (RATE,)


def test_saved_order_is_stable_for_diffs(tmp_path: Path) -> None:
    save_quote_book(tmp_path, QuoteBook(quotes=(MANUAL, FETCHED)))
    first = quotes_path(tmp_path).read_text()
    save_quote_book(tmp_path, QuoteBook(quotes=(FETCHED, MANUAL)))
    assert quotes_path(tmp_path).read_text() == first


def write(tmp_path: Path, text: str) -> None:
    path = quotes_path(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


GOOD_HEAD = """schema_version = 1

[[quote]]
instance_type = "trn3.48xlarge"
region = "us-east-1"
purchase_option = "on-demand"
manual = true
source_note = "account team"
retrieved_at = 2026-11-25
"""


def test_hand_written_date_is_accepted(tmp_path: Path) -> None:
    write(tmp_path, GOOD_HEAD + "usd_per_hour = 61.5\n")
    (quote,) = load_quote_book(tmp_path).quotes
    assert quote.retrieved_at == datetime(2026, 11, 25, tzinfo=UTC)
    assert quote.usd_per_hour == 61.5


@pytest.mark.parametrize(
    ("extra", "key", "line"),
    [
        ('usd_per_hour = "sixty"\n', "usd_per_hour", 10),
        ("usd_per_hour = 0\n", "usd_per_hour", 10),
        ("colour = 1\n", "colour", 10),
        ("usd_per_hour = 1.0\naccelerator_count = 1.5\n", "accelerator_count", 11),
    ],
)
def test_bad_values_name_the_file_line_and_key(
    tmp_path: Path, extra: str, key: str, line: int
) -> None:
    write(tmp_path, GOOD_HEAD + extra)
    with pytest.raises(InputFileError) as raised:
        load_quote_book(tmp_path)
    assert raised.value.key == key
    assert raised.value.line == line
    assert str(quotes_path(tmp_path)) in str(raised.value)


def test_a_future_date_points_at_its_own_line(tmp_path: Path) -> None:
    write(tmp_path, GOOD_HEAD.replace("2026-11-25", "2099-01-01") + "usd_per_hour = 61.5\n")
    with pytest.raises(InputFileError) as raised:
        load_quote_book(tmp_path)
    assert (raised.value.key, raised.value.line) == ("retrieved_at", 9)
    assert "in the future" in str(raised.value)


def test_missing_required_key(tmp_path: Path) -> None:
    write(tmp_path, GOOD_HEAD.replace('region = "us-east-1"\n', ""))
    with pytest.raises(InputFileError, match="missing 'region'"):
        load_quote_book(tmp_path)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    write(tmp_path, GOOD_HEAD.replace("schema_version = 1", "schema_version = 7"))
    with pytest.raises(UserError, match="newer trntui"):
        load_quote_book(tmp_path)


def test_syntax_error_points_at_the_line(tmp_path: Path) -> None:
    write(tmp_path, "schema_version = 1\n[[quote]\n")
    with pytest.raises(InputFileError) as raised:
        load_quote_book(tmp_path)
    assert raised.value.line == 2


def test_retrieval_time_is_stored_to_the_second_in_utc(tmp_path: Path) -> None:
    from datetime import timedelta, timezone

    paris = timezone(timedelta(hours=1))
    quote = PriceQuote(
        **{**MANUAL.__dict__, "retrieved_at": datetime(2026, 11, 25, 10, 0, 1, 999, tzinfo=paris)}
    )
    saved = add_quotes(tmp_path, [quote])
    assert saved.quotes[0].retrieved_at == datetime(2026, 11, 25, 9, 0, 1, tzinfo=UTC)
    assert load_quote_book(tmp_path) == saved
    assert "retrieved_at = 2026-11-25 09:00:01+00:00" in quotes_path(tmp_path).read_text()
