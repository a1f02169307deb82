"""An offer file's preamble and header, checked before anything is read from it.

``read_preamble`` checks the metadata rows and the columns this package filters on;
``check_offer_complete`` refuses a file cut mid-row; ``check_not_shrunk`` a file much smaller
than the cached copy of the same version (cut at a record boundary); ``OfferSource`` is the
provenance every quote made from the file carries (``provenance_fields``, as a quote's fields);
``price_problem`` says why a price column's text is unusable. The file's names for lease
terms and payments (``LEASE_YEARS``, ``PURCHASE_PAYMENT``) are here too, read by the quote
modules.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from trntui.core.quotes import SAVINGS_PLAN_OFFER
from trntui.pricing.errors import PricingFormatError

PREAMBLE_KEYS = ("FormatVersion", "Disclaimer", "Publication Date", "Version", "OfferCode")
PREAMBLE_ROWS = len(PREAMBLE_KEYS)

_PRICE_COLUMNS = (
    "SKU",
    "OfferTermCode",
    "RateCode",
    "TermType",
    "EffectiveDate",
    "StartingRange",
    "EndingRange",
    "Unit",
    "PricePerUnit",
    "Currency",
)
_INSTANCE_COLUMNS = (
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Instance Type",
    "Tenancy",
    "Operating System",
    "CapacityStatus",
    "MarketOption",
    "Pre Installed S/W",
)
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "AmazonEC2": (*_PRICE_COLUMNS, *_INSTANCE_COLUMNS, "usageType", "Volume API Name"),
    "AmazonS3": (*_PRICE_COLUMNS, "usageType", "Storage Class", "Volume Type"),
    "AmazonCloudWatch": (*_PRICE_COLUMNS, "usageType"),
    "AWSDataTransfer": (*_PRICE_COLUMNS, "usageType", "Transfer Type"),
    SAVINGS_PLAN_OFFER: (
        "SKU", "RateCode", "Unit", "EffectiveDate", "DiscountedRate", "Currency",
        "DiscountedServiceCode", "DiscountedUsageType", "DiscountedOperation", "PurchaseOption",
        "LeaseContractLength", "LeaseContractLengthUnit", "Product Family",
    ),
}  # fmt: skip
_NAMED_OTHERWISE = {SAVINGS_PLAN_OFFER}
"""Offers whose file calls itself by another code (the Savings Plans file says
``AmazonComputeSavingsPlan``): their own code is not checked, their columns are."""

PURCHASE_PAYMENT = {"No Upfront": "no", "Partial Upfront": "partial", "All Upfront": "all"}
LEASE_YEARS = {"1yr": 1, "3yr": 3}


@dataclass(frozen=True)
class OfferPreamble:
    """The five metadata rows and the column names of an offer file."""

    format_version: str
    publication_date: str
    version: str
    offer_code: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class OfferSource:
    """Provenance copied onto every quote extracted from one downloaded file."""

    offer_code: str
    url: str
    publication_date: str
    version: str
    retrieved_at: datetime
    etag: str | None = None
    last_modified: str | None = None


def read_preamble(path: Path, *, expected_offer: str | None = None) -> OfferPreamble:
    """Read and check the metadata rows and header; raise ``PricingFormatError`` if they are off.

    Checks: not an HTML page, the five metadata keys in order, the offer code expected (except
    for the offers named otherwise in their file), and the columns this package filters on all
    present in the header.
    """
    with open(path, "rb") as handle:
        head = handle.read(64 * 1024)
    stripped = head.lstrip()
    if stripped[:1] == b"<":
        raise PricingFormatError(
            f"{path}: got an HTML/XML page instead of a price list CSV "
            "(a proxy, login or error page?)"
        )
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    rows = list(csv.reader(io.StringIO(text)))[: PREAMBLE_ROWS + 1]
    if len(rows) < PREAMBLE_ROWS + 1:
        raise PricingFormatError(f"{path}: too short to be a price list CSV (no header row)")
    values: dict[str, str] = {}
    for number, (row, key) in enumerate(zip(rows, PREAMBLE_KEYS, strict=False), start=1):
        if len(row) < 2 or row[0] != key:
            raise PricingFormatError(
                f"{path}:{number}: expected the metadata row {key!r}, found {row[:2]!r}"
            )
        values[key] = row[1]
    offer = values["OfferCode"]
    named_otherwise = expected_offer in _NAMED_OTHERWISE
    if expected_offer is not None and not named_otherwise and offer != expected_offer:
        raise PricingFormatError(
            f"{path}: offer file is for {offer!r}, expected {expected_offer!r}"
        )
    columns = tuple(rows[PREAMBLE_ROWS])
    required = REQUIRED_COLUMNS.get(expected_offer or offer, _PRICE_COLUMNS)
    missing = [name for name in required if name not in columns]
    if missing:
        raise PricingFormatError(
            f"{path}:{PREAMBLE_ROWS + 1}: the header lacks the columns "
            + ", ".join(repr(name) for name in missing)
            + " (has the price list format changed?)"
        )
    return OfferPreamble(
        format_version=values["FormatVersion"],
        publication_date=values["Publication Date"],
        version=values["Version"],
        offer_code=offer,
        columns=columns,
    )


def checked_offer(path: Path, offer_code: str) -> OfferPreamble:
    """The preamble of the ``offer_code`` file at ``path``, refused (``PricingFormatError``)
    unless its preamble reads and its last record is whole: what a download must pass to
    replace the cache, and a cached copy to be used."""
    return check_offer_complete(path, read_preamble(path, expected_offer=offer_code))


_TAIL_BYTES = 1024 * 1024


def check_offer_complete(path: Path, preamble: OfferPreamble) -> OfferPreamble:
    """Refuse a file whose last record is cut short (a download cut mid-row); return
    ``preamble``. A price list file holds one record per line (its values have no line breaks),
    so the last line must have every column of the header and balanced quotes."""
    with open(path, "rb") as handle:
        handle.seek(0, io.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - _TAIL_BYTES))
        tail = handle.read()
    lines = tail.rstrip(b"\r\n").rsplit(b"\n", 1)
    last = lines[-1].rstrip(b"\r")
    if len(lines) == 1 and size > len(tail):
        raise PricingFormatError(f"{path}: the last line is longer than {_TAIL_BYTES:,} bytes")
    fields: list[str] = []
    with contextlib.suppress(csv.Error):
        fields = next(csv.reader([last.decode("utf-8", "replace")], strict=True), [])
    if last.count(b'"') % 2 or len(fields) != len(preamble.columns):
        raise PricingFormatError(
            f"{path}: the last row has {len(fields)} of the {len(preamble.columns)} columns "
            f"or an unclosed quote: the file is cut off"
        )
    return preamble


SAME_VERSION_SHRINK = 0.01
"""How much smaller than the cached copy a file of the same ``Version`` may be (1%). A version
is published once, so its file is the same bytes whoever serves it; what a re-encoding may
change (line ends: 1 byte in a record of 300 to 2,000) stays far below this, while a cut
that drops even a few records of a file shows."""


def check_not_shrunk(path: Path, preamble: OfferPreamble, cached: Path, offer_code: str) -> None:
    """Refuse (``PricingFormatError``) the ``offer_code`` file at ``path`` (its ``preamble``
    read) when the copy at ``cached`` has the
    same ``Version`` and ``path`` is more than ``SAME_VERSION_SHRINK`` smaller: a file cut
    exactly at a record boundary, with a length header to match, parses and looks whole, and
    would turn every type it lost into "not offered". A cached copy that is missing or does
    not read is no measure (nothing is compared)."""
    try:
        before = read_preamble(cached, expected_offer=offer_code)
        old_bytes = cached.stat().st_size
    except (PricingFormatError, OSError):
        return
    new_bytes = path.stat().st_size
    if before.version != preamble.version or new_bytes >= old_bytes * (1 - SAME_VERSION_SHRINK):
        return
    raise PricingFormatError(
        f"{path}: version {preamble.version} is {new_bytes:,} bytes, "
        f"{1 - new_bytes / old_bytes:.0%} smaller than the cached copy of the same version "
        f"({old_bytes:,} bytes): a file cut short (if the price list really shrank, delete "
        f"{cached} and fetch again)"
    )


def price_problem(text: object, *, zero_is_a_price: bool = True) -> str | None:
    """Why the text in a price column is not a usable price (None when it is one): blank, not
    a number, not finite, negative (a minus sign, ``-0.0`` too), or zero where zero is no
    price (an on-demand hour, a Savings Plan rate; a reserved term's hourly part may be zero,
    its upfront fee paying for it). Such a row is skipped with a note, never priced, and a
    type it leaves without a price is said so, never taken for one the list does not offer."""
    stripped = "" if text is None else str(text).strip()
    if not stripped:
        return "blank"
    try:
        value = float(stripped)
    except ValueError:
        return "not a number"
    if not math.isfinite(value):
        return "not a finite number"
    if value < 0 or stripped.startswith("-"):
        return "negative"
    if value == 0 and not zero_is_a_price:
        return "zero"
    return None


def provenance_fields(source: OfferSource) -> dict[str, object]:
    return {
        "source_url": source.url,
        "offer_code": source.offer_code,
        "publication_date": source.publication_date,
        "version": source.version,
        "retrieved_at": source.retrieved_at,
        "etag": source.etag,
        "last_modified": source.last_modified,
    }
