"""The price quotes a project uses, kept in ``prices/quotes.toml`` inside the project.

Quotes are copied here (not referenced from the download cache) so an estimate can be redone
later even when the cache is gone or the price list has moved on. TOML is used because a price
change then shows as a one-line ``git diff``. Unknown values are left out of the file (TOML has
no null), and read back as unknown.

Layout::

    schema_version = 1

    [[quote]]            # one per instance type x region x purchase option x manual/fetched
    instance_type = "p5.48xlarge"
    ...

    [[rate]]             # side-service rates (S3, EBS gp3, CloudWatch Logs, inter-AZ)
    service = "s3-standard-storage"
    tiers = [{ start = 0.0, end = 51200.0, usd_per_unit = 0.023 }, ...]

    [[miss]]             # a price-list lookup that found no row (v2): "not offered" evidence
    instance_type = "p5.48xlarge"
    region = "ap-south-2"
    looked_up_at = 2026-11-30T10:00:00Z

Every function takes the project root and assumes the caller holds the project write lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

import tomli_w

from trntui.core.errors import InputFileError, UserError
from trntui.core.quotes import (
    SAVINGS_PLAN_OFFER,
    InvalidQuoteError,
    PriceLookup,
    PriceQuote,
    QuoteBook,
    RateTier,
    ServiceRate,
    SideService,
)
from trntui.store.atomic import atomic_write_text
from trntui.store.paths import project_path
from trntui.store.project import writes_project
from trntui.store.toml_file import decode_utf8, locate, parse_toml, previous_text, updated_toml

SCHEMA_VERSION = 2
"""v2 adds ``[[miss]]`` and a quote's ``pinned``; a v1 file reads as it is."""
QUOTES_FILE = Path("prices") / "quotes.toml"

_QUOTE_FIELDS = {f.name: f for f in dataclasses.fields(PriceQuote)}
_RATE_FIELDS = {f.name: f for f in dataclasses.fields(ServiceRate)}
_QUOTE_ORDER = (
    "instance_type", "region", "purchase_option", "usd_per_hour", "upfront_usd",
    "recurring_usd_per_hour", "accelerator_count", "manual", "source_note", "retrieved_at",
    "offer_code", "source_url", "publication_date", "version", "sku", "rate_code",
    "effective_date", "etag", "last_modified", "pinned", "block_days", "block_instances",
    "availability_zone", "start_date", "ultraserver_instances",
)  # fmt: skip
_FLOAT_KEYS = {"usd_per_hour", "upfront_usd", "recurring_usd_per_hour"}
_INT_KEYS = {"accelerator_count", "block_days", "block_instances", "ultraserver_instances"}
_BOOL_KEYS = {"manual", "pinned"}


def quotes_path(root: Path) -> Path:
    return project_path(root, *QUOTES_FILE.parts)


def load_quote_book(root: Path) -> QuoteBook:
    """Read the project's quotes: no file is an empty book; a bad one an ``InputFileError``."""
    path = quotes_path(root)
    if not path.is_file():
        return QuoteBook()
    text = decode_utf8(path, path.read_bytes())
    document = parse_toml(path, text)
    version = document.get("schema_version")
    if version not in (1, SCHEMA_VERSION):
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise UserError(
                f"{path} was written by a newer trntui (schema_version {version}); upgrade trntui"
            )
        raise InputFileError(
            str(path),
            f"schema_version is {version!r}",
            line=locate(text, "", "schema_version") or 1,
            key="schema_version",
            expected=str(SCHEMA_VERSION),
        )
    unknown = set(document) - {"schema_version", "quote", "rate", "miss"}
    if unknown:
        name = sorted(unknown)[0]
        raise InputFileError(
            str(path), f"unknown key {name!r}", line=locate(text, "", name), key=name,
            expected="schema_version, [[quote]], [[rate]] or [[miss]]",
        )  # fmt: skip
    quotes = tuple(
        _quote_from_table(path, text, index, table)
        for index, table in enumerate(_tables(path, text, document, "quote"))
    )
    rates = tuple(
        _rate_from_table(path, text, index, table)
        for index, table in enumerate(_tables(path, text, document, "rate"))
    )
    misses = tuple(
        _miss_from_table(path, text, index, table)
        for index, table in enumerate(_tables(path, text, document, "miss"))
    )
    _refuse_repeats(path, text, "quote", [q.key for q in quotes], "type, region, option and origin")
    rates_keys = [(r.service, r.region, r.manual) for r in rates]
    _refuse_repeats(path, text, "rate", rates_keys, "service, region and origin")
    miss_keys = [(m.key, m.offer_code == SAVINGS_PLAN_OFFER) for m in misses]
    _refuse_repeats(path, text, "miss", miss_keys, "type, region and price list")
    return QuoteBook(quotes=quotes, rates=rates, misses=misses)


def _refuse_repeats(path: Path, text: str, name: str, keys: Sequence[Hashable], what: str) -> None:
    """A second ``[[name]]`` of the same key: which one applies could only be guessed (the
    first was used without a word), so the file is refused at the second's line."""
    seen: dict[Hashable, int] = {}
    for index, key in enumerate(keys):
        if key in seen:
            raise InputFileError(
                str(path),
                f"{name} #{index + 1} has the same {what} as {name} #{seen[key] + 1}",
                line=locate(text, name, None, index),
                expected=f"one [[{name}]] per {what}: delete or change one of them",
            )
        seen[key] = index


def _miss_from_table(path: Path, text: str, index: int, table: dict[str, Any]) -> PriceLookup:
    known = ("instance_type", "region", "looked_up_at", "publication_date", "offer_code")
    fail = _table_checks(path, text, "miss", index, table, known, known[:3])
    for key in ("instance_type", "region", "publication_date", "offer_code"):
        if key in table and (not isinstance(table[key], str) or not table[key].strip()):
            raise fail(key, f"{table[key]!r} is not a text", "a quoted string")
    when = _as_datetime(table["looked_up_at"])
    if when is None:
        raise fail("looked_up_at", "not a date or date-time", "a date such as 2026-11-29")
    return PriceLookup(
        table["instance_type"],
        table["region"],
        when,
        table.get("publication_date"),
        table.get("offer_code"),
    )


def sorted_book(book: QuoteBook) -> QuoteBook:
    """The book as written: file order (type, region, option, fetched first), whole seconds."""
    quotes = (
        dataclasses.replace(quote, retrieved_at=_to_second(quote.retrieved_at))
        for quote in book.quotes
    )
    rates = (
        dataclasses.replace(rate, retrieved_at=_to_second(rate.retrieved_at)) for rate in book.rates
    )
    misses = (
        dataclasses.replace(miss, looked_up_at=_to_second(miss.looked_up_at))
        for miss in book.misses
    )
    return QuoteBook(
        quotes=tuple(sorted(quotes, key=lambda quote: quote.key)),
        rates=tuple(sorted(rates, key=lambda rate: (rate.service.value, rate.region, rate.manual))),
        misses=tuple(sorted(misses, key=lambda miss: miss.key)),
    )


def _to_second(moment: datetime) -> datetime:
    """Retrieval times are kept to the second, in UTC: enough to audit, short to read."""
    return moment.astimezone(UTC).replace(microsecond=0)


@writes_project
def save_quote_book(root: Path, book: QuoteBook) -> QuoteBook:
    """Write the whole book atomically, sorted so unchanged quotes never move in a diff.

    Returns the book in the order written (what ``load_quote_book`` will read back).
    """
    unpriced = [quote for quote in book.quotes if quote.usd_per_hour is None]
    if unpriced:
        quote = unpriced[0]
        raise InvalidQuoteError(
            f"quote for {quote.instance_type} ({quote.purchase_option}, {quote.region}) has no "
            "known price; a price that is not known is never written as a quote "
            f"({quote.source_note or 'unknown'}); nothing was saved",
            key="usd_per_hour",
        )
    book = sorted_book(book)
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if book.quotes:
        document["quote"] = [_quote_to_table(quote) for quote in book.quotes]
    if book.rates:
        document["rate"] = [_rate_to_table(rate) for rate in book.rates]
    if book.misses:
        document["miss"] = [
            {key: value for key, value in dataclasses.asdict(miss).items() if value is not None}
            for miss in book.misses
        ]
    header = (
        "# Price quotes this project's estimates use (written by trntui; see `trntui price`).\n"
        "# Fetched quotes keep their AWS Price List provenance; manual ones a source note.\n"
    )
    path = quotes_path(root)
    fresh = header + tomli_w.dumps(document)
    text = updated_toml(previous_text(path), document, fresh, identity=_IDENTITY)
    atomic_write_text(path, text, root=root)
    return book


_IDENTITY = {
    "quote": ("instance_type", "region", "purchase_option", "manual"),
    "rate": ("service", "region", "manual"),
    "miss": ("instance_type", "region", "offer_code"),
}
"""What tells the entries of each list apart (a hand comment stays with its entry)."""


@writes_project
def add_quotes(root: Path, quotes: list[PriceQuote] | tuple[PriceQuote, ...]) -> QuoteBook:
    """Add or replace quotes (same type, region, option and manual/fetched) and save.

    A quote without a known price is refused (``save_quote_book``), nothing is written."""
    book = load_quote_book(root)
    replaced = {quote.key for quote in quotes}
    kept = [quote for quote in book.quotes if quote.key not in replaced]
    return save_quote_book(root, dataclasses.replace(book, quotes=(*kept, *quotes)))


@writes_project
def record_lookups(
    root: Path, quotes: tuple[PriceQuote, ...], misses: tuple[PriceLookup, ...]
) -> QuoteBook:
    """Keep what a price-list lookup said: the quotes it found, and the types it found no
    row for (replacing older misses of those types from the same list, EC2 or Savings Plans;
    a type found again drops the misses that spoke for the option it was found for).

    A quote whose price the list left unknown (two different rows for one type: ambiguous) is
    not kept: it never becomes a quote in the file, and an older quote for it stays as it was
    (``unpriced_quotes`` tells a caller which to report)."""
    quotes = tuple(quote for quote in quotes if quote.usd_per_hour is not None)
    book = load_quote_book(root)
    replaced = {quote.key for quote in quotes}

    def refuted(miss: PriceLookup) -> bool:
        return any(
            (quote.instance_type, quote.region) == miss.key and miss.covers(quote.purchase_option)
            for quote in quotes
        )

    def which(miss: PriceLookup) -> tuple[tuple[str, str], bool]:
        return miss.key, miss.offer_code == SAVINGS_PLAN_OFFER

    renewed = {which(miss) for miss in misses}
    kept_misses = [m for m in book.misses if not refuted(m) and which(m) not in renewed]
    return save_quote_book(
        root,
        dataclasses.replace(
            book,
            quotes=(*[q for q in book.quotes if q.key not in replaced], *quotes),
            misses=(*kept_misses, *misses),
        ),
    )


def unpriced_quotes(quotes: tuple[PriceQuote, ...] | list[PriceQuote]) -> list[PriceQuote]:
    """The quotes ``record_lookups`` leaves out: their price is not known."""
    return [quote for quote in quotes if quote.usd_per_hour is None]


@writes_project
def add_rates(root: Path, rates: list[ServiceRate] | tuple[ServiceRate, ...]) -> QuoteBook:
    """Add or replace side-service rates (same service, region and manual/fetched) and save."""
    book = load_quote_book(root)
    replaced = {(rate.service, rate.region, rate.manual) for rate in rates}
    kept = [rate for rate in book.rates if (rate.service, rate.region, rate.manual) not in replaced]
    return save_quote_book(root, dataclasses.replace(book, rates=(*kept, *rates)))


@writes_project
def remove_rate(root: Path, service: SideService, region: str, manual: bool) -> bool:
    """Remove the side rate of this service, region and origin; False when there was none."""
    book = load_quote_book(root)
    key = (service, region, manual)
    kept = tuple(rate for rate in book.rates if (rate.service, rate.region, rate.manual) != key)
    if len(kept) == len(book.rates):
        return False
    save_quote_book(root, dataclasses.replace(book, rates=kept))
    return True


@writes_project
def remove_quote(root: Path, key: tuple[str, str, str, bool]) -> bool:
    """Remove the quote with this key; False when there was none."""
    book = load_quote_book(root)
    kept = tuple(quote for quote in book.quotes if quote.key != key)
    if len(kept) == len(book.quotes):
        return False
    save_quote_book(root, dataclasses.replace(book, quotes=kept))
    return True


@writes_project
def pin_quote(root: Path, key: tuple[str, str, str, bool], pinned: bool) -> PriceQuote:
    """Pin (or unpin) the quote with this key as the book holds it now, and save; the quote as
    stored. ``UserError`` when the book has no such quote (deleted meanwhile),
    ``InvalidQuoteError`` for a price-list quote (``PriceQuote.with_pin``); nothing is
    written then."""
    book = load_quote_book(root)
    found = next((quote for quote in book.quotes if quote.key == key), None)
    if found is None:
        instance_type, region, option, manual = key
        origin = "manual" if manual else "price-list"
        raise UserError(
            f"{quotes_path(root)} has no {origin} quote for {instance_type} {option} in "
            f"{region} (deleted since?)"
        )
    changed = found.with_pin(pinned)
    quotes = tuple(changed if quote.key == key else quote for quote in book.quotes)
    save_quote_book(root, dataclasses.replace(book, quotes=quotes))
    return changed


def _tables(path: Path, text: str, document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    tables = document.get(name, [])
    if not isinstance(tables, list) or not all(isinstance(item, dict) for item in tables):
        raise InputFileError(
            str(path), f"'{name}' must be an array of tables", line=locate(text, "", name),
            key=name, expected=f"[[{name}]] sections",
        )  # fmt: skip
    return tables


def _quote_to_table(quote: PriceQuote) -> dict[str, Any]:
    values = dataclasses.asdict(quote)
    return {
        key: values[key]
        for key in _QUOTE_ORDER
        if values[key] is not None and not (key == "pinned" and not values[key])
    }


def _table_checks(
    path: Path,
    text: str,
    name: str,
    index: int,
    table: dict[str, Any],
    known: tuple[str, ...],
    required: tuple[str, ...],
) -> Callable[..., InputFileError]:
    """Refuse unknown or missing keys of the ``index``-th ``[[name]]`` table; return the
    function that builds its errors (file, line and key of the problem)."""

    def fail(key: str, problem: str, expected: str | None = None) -> InputFileError:
        return InputFileError(
            str(path), problem, line=locate(text, name, key, index), key=key, expected=expected
        )

    unknown = set(table) - set(known)
    if unknown:
        raise fail(sorted(unknown)[0], f"unknown key in {name} #{index + 1}")
    for key in required:
        if key not in table:
            raise fail(key, f"{name} #{index + 1} is missing {key!r}")
    return fail


def _quote_from_table(path: Path, text: str, index: int, table: dict[str, Any]) -> PriceQuote:
    required = ("instance_type", "region", "purchase_option", "retrieved_at")
    fail = _table_checks(path, text, "quote", index, table, tuple(_QUOTE_FIELDS), required)
    if "usd_per_hour" not in table:
        raise fail(
            "usd_per_hour",
            f"quote #{index + 1} has no 'usd_per_hour' (a price that is not known is never kept "
            "as a quote: delete this [[quote]], or fetch or add its price again)",
            "a price in USD above 0",
        )
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key in _FLOAT_KEYS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise fail(key, f"{value!r} is not a number", "a number in USD")
            value = float(value)
        elif key in _INT_KEYS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise fail(key, f"{value!r} is not a whole number", "a whole number")
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise fail(key, f"{value!r} is not true/false", "true or false")
        elif key == "retrieved_at":
            value = _as_datetime(value)
            if value is None:
                raise fail(key, "not a date or date-time", "a date such as 2026-11-29")
        elif not isinstance(value, str):
            raise fail(key, f"{value!r} is not text", "a quoted string")
        values[key] = value
    values.setdefault("manual", False)
    try:
        return PriceQuote(**values)
    except InvalidQuoteError as error:
        expected = _EXPECTED.get(error.key) if error.key else None
        raise fail(error.key or _key_of(str(error)), str(error), expected) from None
    except (TypeError, ValueError, OverflowError) as error:
        raise fail(_key_of(str(error)), f"quote #{index + 1} cannot be read ({error})") from None


_EXPECTED = {
    "usd_per_hour": "a finite price in USD above 0",
    "upfront_usd": "a finite amount in USD, 0 or more",
    "recurring_usd_per_hour": "a finite price in USD, 0 or more",
    "accelerator_count": "a whole number from 1",
    "tiers": "tiers of finite, non-negative start, end and usd_per_unit",
}


_PROBLEM_KEYS = (
    ("in the future", "retrieved_at"),
    ("time zone", "retrieved_at"),
    ("region", "region"),
    ("purchase option", "purchase_option"),
    ("hourly price", "usd_per_hour"),
    ("upfront", "upfront_usd"),
    ("source", "source_note"),
)


def _key_of(problem: str) -> str:
    """The key a quote's problem is about, so the message points at its line."""
    return next((key for words, key in _PROBLEM_KEYS if words in problem), "instance_type")


def _rate_to_table(rate: ServiceRate) -> dict[str, Any]:
    values = dataclasses.asdict(rate)
    values["service"] = rate.service.value
    values["tiers"] = [
        {k: v for k, v in dataclasses.asdict(tier).items() if v is not None} for tier in rate.tiers
    ]
    order = ["service", "region", "tiers", "manual", "source_note", "retrieved_at"]
    order += [name for name in _RATE_FIELDS if name not in order]
    return {key: values[key] for key in order if values[key] is not None}


def _rate_from_table(path: Path, text: str, index: int, table: dict[str, Any]) -> ServiceRate:
    required = ("service", "region", "tiers", "retrieved_at")
    fail = _table_checks(path, text, "rate", index, table, tuple(_RATE_FIELDS), required)
    values = dict(table)
    for key, value in table.items():
        if key == "manual":
            if not isinstance(value, bool):
                raise fail(key, f"{value!r} is not true/false", "true or false")
        elif key not in ("tiers", "retrieved_at") and not isinstance(value, str):
            raise fail(key, f"{value!r} is not text", "a quoted string")
    try:
        values["service"] = SideService(table["service"])
    except ValueError:
        raise fail(
            "service", f"unknown service {table['service']!r}",
            ", ".join(service.value for service in SideService),
        ) from None  # fmt: skip
    tiers = []
    expected = "tiers such as [{ start = 0.0, usd_per_unit = 0.023 }]"
    given = table["tiers"]
    if not isinstance(given, list) or not given:
        raise fail("tiers", f"rate #{index + 1}: 'tiers' must be a list of tables", expected)
    for tier in given:
        if not isinstance(tier, dict) or set(tier) - {"start", "end", "usd_per_unit"}:
            raise fail("tiers", "each tier has start, usd_per_unit (and end unless last)", expected)
        numbers = {key: tier.get(key) for key in ("start", "end", "usd_per_unit")}
        for key, value in numbers.items():
            if value is None and key != "usd_per_unit":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise fail("tiers", f"a tier's {key} {value!r} is not a number", expected)
        try:
            tiers.append(
                RateTier(
                    start=float(tier.get("start", 0.0)),
                    end=None if tier.get("end") is None else float(tier["end"]),
                    usd_per_unit=float(tier["usd_per_unit"]),
                )
            )
        except InvalidQuoteError as error:
            raise fail("tiers", f"rate #{index + 1}: {error}", _EXPECTED["tiers"]) from None
    values["tiers"] = tuple(tiers)
    values["retrieved_at"] = _as_datetime(table["retrieved_at"])
    if values["retrieved_at"] is None:
        raise fail("retrieved_at", "not a date or date-time", "a date such as 2026-11-29")
    try:
        return ServiceRate(**values)
    except (InvalidQuoteError, TypeError, ValueError) as error:
        key = getattr(error, "key", None) or _key_of(str(error))
        raise fail(key if key in table else "service", str(error)) from None


def _as_datetime(value: object) -> datetime | None:
    """TOML gives dates and date-times natively; a bare date means midnight UTC that day."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    if isinstance(value, str):
        try:
            return _as_datetime(datetime.fromisoformat(value))
        except ValueError:
            return None
    return None
