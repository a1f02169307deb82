"""Turning an AWS Price List CSV offer file into quotes and side-service rates.

A regional EC2 file is several hundred MB, so it is never loaded whole: it is cut into blocks
of whole records, and Polars scans each block lazily with the filters and the column selection
pushed into the scan, on the streaming engine (see ``filter_offer``).
Every value is read as text (prices included) and converted after filtering, so a new column
or an odd value elsewhere in the file cannot break type inference.

Which rows are an on-demand Linux price (all must hold): ``TermType=OnDemand``,
``Tenancy=Shared``, ``Operating System=Linux``, ``CapacityStatus=Used`` (not unused or allocated
capacity reservations), ``Pre Installed S/W`` empty or ``NA`` (no SQL Server etc.),
``MarketOption=OnDemand`` (Capacity Block rows share the file), ``Unit=Hrs``, ``Currency=USD``
and a price above zero. Reserved rows pass the same product filters with ``TermType=Reserved``;
each offer (SKU + OfferTermCode) has an hourly row and, for partial/all upfront, an upfront fee
row (``Unit=Quantity``).

The Savings Plans file (``AWSComputeSavingsPlan``, both Compute and EC2 Instance Savings Plans)
has one row per plan and discounted EC2 product, its rate already the effective hourly rate
(any upfront payment spread over the term). Which rows are a plan's rate for a Linux instance
in the region: ``DiscountedServiceCode=AmazonEC2``, ``DiscountedOperation=RunInstances``,
``DiscountedUsageType`` exactly ``[<prefix>-]BoxUsage:<type>`` (not HostBoxUsage, UnusedBox or
DedicatedUsage), ``Unit=Hrs``, ``Currency=USD``, and the region and type in
``DiscountedRegionCode`` and ``DiscountedInstanceType`` where the file states them.
"""

from __future__ import annotations

import contextlib
import csv
import io
import threading
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from queue import Empty, Full, Queue

import polars as pl

from trntui.core.quotes import (
    HOURS_PER_YEAR,
    ON_DEMAND,
    SAVINGS_PLAN_OFFER,
    PriceQuote,
    RateTier,
    ServiceRate,
    SideService,
    reserved_option,
    savings_plan_option,
)
from trntui.pricing.errors import PricingFormatError

PREAMBLE_KEYS = ("FormatVersion", "Disclaimer", "Publication Date", "Version", "OfferCode")
PREAMBLE_ROWS = len(PREAMBLE_KEYS)
BLOCK_BYTES = 16 * 1024 * 1024

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

_PURCHASE_PAYMENT = {"No Upfront": "no", "Partial Upfront": "partial", "All Upfront": "all"}
_LEASE_YEARS = {"1yr": 1, "3yr": 3}


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
    for the offers named otherwise in their file), and the columns this module filters on all
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


_TAIL_BYTES = 1024 * 1024
_LINE = "line"


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


def price_problem(text: object) -> str | None:
    """Why the text in a price column is not a usable price (None when it is one): not a
    number, not finite, or negative. Such a row is skipped with a note, never priced."""
    try:
        value = float(str(text))
    except ValueError:
        return "not a number"
    if value != value or value in (float("inf"), float("-inf")):
        return "not a finite number"
    if value < 0:
        return "negative"
    return None


def _skip_bad_prices(
    path: Path, rows: pl.DataFrame, column: str, notes: list[str] | None
) -> pl.DataFrame:
    """``rows`` without those whose ``column`` is not a usable price, each noted in ``notes``
    (the file's line, the row's SKU and type, the text); a blank price is no price, silently."""
    value = pl.col(column).cast(pl.Float64, strict=False)
    usable = (
        pl.col(column).is_null()
        | (pl.col(column).str.strip_chars() == "")
        | (value.is_not_null() & value.is_finite() & (value >= 0))
    )
    bad = rows.filter(~usable)
    if bad.height and notes is not None:
        shown = bad.head(5).iter_rows(named=True)
        for row in shown:
            what = row.get("Instance Type") or row.get("DiscountedUsageType") or ""
            notes.append(
                f"{path}:{row.get(_LINE, '?')}: {column} {row[column]!r} of "
                f"{row.get('RateCode') or row['SKU']} ({what}) is "
                f"{price_problem(row[column]) or 'not a number'}; "
                "row skipped"
            )
        if bad.height > 5:
            notes.append(f"{path}: {bad.height - 5} more rows with no usable price skipped")
    return rows.filter(usable)


def filter_offer(
    path: Path,
    predicate: pl.Expr,
    columns: Sequence[str],
    *,
    block_bytes: int = BLOCK_BYTES,
    line_column: str | None = None,
) -> pl.DataFrame:
    """Rows of the offer file matching ``predicate``, with ``columns``, all as text.

    The file is read in blocks of whole records (a newline counts as a record end only outside
    quotes) and each block is scanned lazily with the filter and projection pushed down, on the
    streaming engine. Scanning the path directly would map the whole file into memory (a few
    hundred MB resident for a regional EC2 file); blocks keep the peak near one block.
    ``line_column`` (if given, and named in ``columns``) holds each row's line in the file,
    counting one line per record as in the price list's files, whose values hold no line breaks.
    A file that cannot be read as CSV is a ``PricingFormatError`` naming the line at fault.
    """
    parts: list[pl.DataFrame] = []
    with open(path, "rb") as handle:
        header, line = _read_header_records(handle)
        schema = dict.fromkeys(header, pl.String)
        blocks = _read_ahead(iter_record_blocks(handle, block_bytes))
        block = b""
        try:
            for block in blocks:
                parts.append(
                    pl.scan_csv(
                        block,
                        has_header=False,
                        schema=schema,
                        quote_char='"',
                        missing_columns="insert",  # a last row cut short is read with nulls
                        row_index_name=line_column,
                        row_index_offset=line,
                    )
                    .filter(predicate)
                    .select(columns)
                    .collect(engine="streaming")
                )
                line += block.count(b"\n")
        except pl.exceptions.PolarsError as error:
            at = _bad_record_line(block, len(header), line)
            raise PricingFormatError(
                f"{path}:{at}: the price list file cannot be read as CSV ({error}); "
                "delete it from the cache and fetch again"
            ) from None
        finally:
            blocks.close()  # stops the reading thread before the file closes
    if not parts:
        return pl.DataFrame(
            schema={name: pl.UInt32 if name == line_column else pl.String for name in columns}
        )
    return pl.concat(parts, how="vertical")


def _bad_record_line(block: bytes, width: int, first_line: int) -> int:
    """The line where the first record of ``block`` that is not CSV of ``width`` columns
    starts (an unclosed quote, extra values); the block's first line when none is found."""
    reader = csv.reader(io.StringIO(block.decode("utf-8", "replace"), newline=""), strict=True)
    start = 1
    try:
        for row in reader:
            if len(row) > width:
                break
            start = reader.line_num + 1
        else:
            return first_line
    except csv.Error:
        pass
    return first_line + start - 1


def _read_header_records(handle: io.BufferedReader) -> tuple[list[str], int]:
    """Skip the metadata rows and return the column names and the line the first row is on,
    leaving ``handle`` on that row."""
    records: list[bytes] = []
    while len(records) < PREAMBLE_ROWS + 1:
        record = handle.readline()
        if not record:
            raise PricingFormatError(f"{handle.name}: ends before the header row")
        while record.count(b'"') % 2:
            more = handle.readline()
            if not more:
                raise PricingFormatError(f"{handle.name}: unterminated quote near the top")
            record += more
        records.append(record)
    text = records[-1].decode("utf-8").lstrip("\ufeff")
    return next(csv.reader(io.StringIO(text))), 1 + sum(r.count(b"\n") for r in records)


def iter_record_blocks(
    handle: io.BufferedReader, block_bytes: int = BLOCK_BYTES
) -> Iterator[bytes]:
    """Yield the rest of ``handle`` in pieces of about ``block_bytes``, each ending at a record end.

    Every piece starts at a record start, so the parity of the quotes counted from its start
    tells whether a newline is inside a quoted field (odd) or ends a record (even).
    """
    carry = b""
    while True:
        data = handle.read(block_bytes)
        if not data:
            if carry.strip():
                yield carry
            return
        cut = _last_record_end(data, carry.count(b'"') % 2)
        if cut == 0:
            carry += data
            continue
        yield b"".join((carry, memoryview(data)[:cut]))
        carry = data[cut:]


def _read_ahead(blocks: Iterator[bytes]) -> Generator[bytes, None, None]:
    """Cut the next block in a helper thread while Polars (GIL released) parses this one.

    Cutting is plain Python (reading, counting quotes); overlapping it with parsing saves most
    of its time. One block waits at most, so memory stays bounded.
    """
    handoff: Queue[tuple[bytes | None, BaseException | None]] = Queue(maxsize=1)
    stop = threading.Event()

    def offer(item: tuple[bytes | None, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def produce() -> None:
        try:
            for block in blocks:
                if not offer((block, None)):
                    return
            offer((None, None))
        except BaseException as error:  # re-raised in the consuming thread
            offer((None, error))

    worker = threading.Thread(target=produce, name="trntui-offer-blocks", daemon=True)
    worker.start()
    try:
        while True:
            block, error = handoff.get()
            if error is not None:
                raise error
            if block is None:
                return
            yield block
    finally:
        stop.set()
        while worker.is_alive():
            with contextlib.suppress(Empty):
                handoff.get_nowait()
            worker.join(timeout=0.05)


def _last_record_end(data: bytes, parity_before: int) -> int:
    """Offset just after the last newline of ``data`` that lies outside quotes, or 0."""
    position = data.rfind(b"\n")
    while position >= 0:
        if (parity_before + data.count(b'"', 0, position)) % 2 == 0:
            return position + 1
        position = data.rfind(b"\n", 0, position)
    return 0


def _is_blank_or_na(column: str) -> pl.Expr:
    return pl.col(column).is_null() | pl.col(column).is_in(["", "NA"])


_REGION_ONLY = (
    ("Location Type", "AWS Region"),
    ("License Model", "No License required"),
)
"""Where the file has these columns: a region's file also lists its Local Zones and Wavelength
Zones (another price for the same type would make the region's price ambiguous, so unknown),
and rows for bring-your-own-license software."""


def _instance_filter(
    instance_types: Sequence[str] | None,
    present: set[str] | frozenset[str] = frozenset(),
    region: str | None = None,
) -> pl.Expr:
    expr = (
        pl.col("TermType").is_in(["OnDemand", "Reserved"])
        & (pl.col("Tenancy") == "Shared")
        & (pl.col("Operating System") == "Linux")
        & (pl.col("CapacityStatus") == "Used")
        & _is_blank_or_na("Pre Installed S/W")
        & (pl.col("MarketOption") == "OnDemand")
        & (pl.col("Currency") == "USD")
        & pl.col("Instance Type").is_not_null()
    )
    for column, value in _REGION_ONLY:
        if column in present:
            expr = expr & (pl.col(column).is_null() | (pl.col(column) == value))
    if region is not None and "Region Code" in present:
        expr = expr & (pl.col("Region Code").is_null() | (pl.col("Region Code") == region))
    if instance_types is not None:
        expr = expr & pl.col("Instance Type").is_in(list(instance_types))
    return expr


def instance_price_rows(
    path: Path,
    instance_types: Sequence[str] | None = None,
    *,
    columns: Sequence[str] = (),
    present: set[str] | frozenset[str] = frozenset(),
    region: str | None = None,
) -> pl.DataFrame:
    """The on-demand and reserved Linux rows (all text), read with the streaming engine;
    ``present``: the file's columns, to filter out Local Zone and licensed rows of ``region``."""
    wanted = [
        "SKU",
        "OfferTermCode",
        "RateCode",
        "TermType",
        "EffectiveDate",
        "Unit",
        "PricePerUnit",
        "LeaseContractLength",
        "PurchaseOption",
        "OfferingClass",
        "Instance Type",
        *columns,
        _LINE,
    ]
    return filter_offer(
        path, _instance_filter(instance_types, present, region), wanted, line_column=_LINE
    )


def instance_quotes(
    path: Path,
    source: OfferSource,
    region: str,
    instance_types: Sequence[str] | None = None,
    *,
    columns: Sequence[str] | None = None,
    notes: list[str] | None = None,
) -> list[PriceQuote]:
    """On-demand and reserved quotes for ``instance_types`` (all types when None).

    A type with no qualifying row gets no quote here; ``find_quote`` then reports it as not
    offered. If one type has several on-demand rows with different prices the quote's price is
    left unknown, with a note, rather than picking one (such a quote is shown, never stored).
    A row whose price is not a number, not finite or negative is skipped, with a line in
    ``notes``; the rest of the file still counts.
    """
    present = set(columns) if columns is not None else set(read_preamble(path).columns)
    extra = [name for name in ("GPU",) if name in present]
    rows = instance_price_rows(path, instance_types, columns=extra, present=present, region=region)
    rows = _skip_bad_prices(path, rows, "PricePerUnit", notes).with_columns(
        pl.col("PricePerUnit").cast(pl.Float64, strict=False).alias("price_usd")
    )
    gpu = "GPU" if extra else None
    on_demand = rows.filter((pl.col("TermType") == "OnDemand") & (pl.col("Unit") == "Hrs"))
    quotes = _on_demand_quotes(on_demand, source, region, gpu)
    reserved = rows.filter(pl.col("TermType") == "Reserved")
    quotes.extend(_reserved_quotes(reserved, source, region, gpu))
    return sorted(quotes, key=lambda quote: (quote.instance_type, quote.purchase_option))


def _groups(frame: pl.DataFrame, by: str | list[str]) -> Iterable[tuple[object, pl.DataFrame]]:
    keys = [by] if isinstance(by, str) else by
    for key, group in frame.sort(keys).group_by(keys, maintain_order=True):
        yield (key[0] if isinstance(by, str) else key), group


def _gpu_count(group: pl.DataFrame, gpu: str | None) -> int | None:
    if gpu is None:
        return None
    counts = {
        int(value)
        for value in group[gpu].cast(pl.Float64, strict=False).drop_nulls().to_list()
        if value > 0
    }
    return counts.pop() if len(counts) == 1 else None


def _gpu_count_of(gpu: str | None, rows: pl.Expr) -> pl.Expr:
    """``_gpu_count`` of a group's ``rows`` (a filter), as an aggregation."""
    if gpu is None:
        return pl.lit(None, pl.Int64).alias("gpus")
    values = pl.col(gpu).filter(rows).cast(pl.Float64, strict=False)
    counts = values.filter(values > 0).cast(pl.Int64, strict=False).unique()
    return pl.when(counts.len() == 1).then(counts.first()).alias("gpus")


def _provenance(source: OfferSource) -> dict[str, object]:
    return {
        "source_url": source.url,
        "offer_code": source.offer_code,
        "publication_date": source.publication_date,
        "version": source.version,
        "retrieved_at": source.retrieved_at,
        "etag": source.etag,
        "last_modified": source.last_modified,
    }


def _on_demand_quotes(
    on_demand: pl.DataFrame, source: OfferSource, region: str, gpu: str | None
) -> list[PriceQuote]:
    """One quote per instance type from its on-demand rows priced above 0 (all groups in one
    aggregation; a type with several different prices gets an unknown price and a note)."""
    priced = pl.col("price_usd") > 0
    groups = (
        on_demand.sort("Instance Type")
        .group_by("Instance Type", maintain_order=True)
        .agg(
            pl.col("price_usd").filter(priced).n_unique().alias("prices"),
            pl.col("price_usd").filter(priced).min().alias("price"),
            *(pl.col(name).filter(priced).first() for name in ("SKU", "RateCode", "EffectiveDate")),
            _gpu_count_of(gpu, priced),
        )
        .filter(pl.col("prices") > 0)
    )
    provenance = _provenance(source)
    quotes = []
    for row in groups.iter_rows(named=True):
        ambiguous = row["prices"] > 1
        price = None if ambiguous else row["price"]
        quotes.append(
            PriceQuote(
                instance_type=str(row["Instance Type"]),
                region=region,
                purchase_option=ON_DEMAND,
                usd_per_hour=price,
                recurring_usd_per_hour=price,
                manual=False,
                accelerator_count=row["gpus"],
                sku=None if ambiguous else row["SKU"],
                rate_code=None if ambiguous else row["RateCode"],
                effective_date=row["EffectiveDate"],
                source_note=(
                    f"price list has {row['prices']} different on-demand rates for this type; "
                    "left unknown"
                    if ambiguous
                    else ""
                ),
                **provenance,  # type: ignore[arg-type]
            )
        )
    return quotes


def _reserved_quotes(
    reserved: pl.DataFrame, source: OfferSource, region: str, gpu: str | None
) -> list[PriceQuote]:
    """One quote per instance type, SKU and offer term: one hourly row and at most one upfront
    fee, the lease, payment and offering class of the term's first row (all groups in one
    aggregation)."""
    keys = ["Instance Type", "SKU", "OfferTermCode"]
    hourly = pl.col("Unit") == "Hrs"
    upfront = pl.col("Unit") == "Quantity"
    groups = (
        reserved.sort(keys)
        .group_by(keys, maintain_order=True)
        .agg(
            *(
                pl.col(name).first().alias(f"first_{name}")
                for name in ("LeaseContractLength", "PurchaseOption", "OfferingClass")
            ),
            hourly.sum().alias("hourly_rows"),
            upfront.sum().alias("upfront_rows"),
            pl.col("price_usd").filter(hourly).first().alias("hourly"),
            pl.col("price_usd").filter(upfront).first().alias("upfront"),
            *(
                pl.col(name).filter(hourly).first().alias(f"hourly_{name}")
                for name in ("SKU", "RateCode", "EffectiveDate")
            ),
            _gpu_count_of(gpu, pl.lit(True)),
        )
        .filter((pl.col("hourly_rows") == 1) & (pl.col("upfront_rows") <= 1))
    )
    provenance = _provenance(source)
    quotes = []
    for row in groups.iter_rows(named=True):
        years = _LEASE_YEARS.get(row["first_LeaseContractLength"] or "")
        payment = _PURCHASE_PAYMENT.get(row["first_PurchaseOption"] or "")
        offering_class = (row["first_OfferingClass"] or "").lower()
        if years is None or payment is None or offering_class not in {"standard", "convertible"}:
            continue
        hourly_usd = row["hourly"]
        upfront_usd = row["upfront"] if row["upfront_rows"] else 0.0
        if hourly_usd is None or upfront_usd is None:
            continue
        effective = hourly_usd + upfront_usd / (years * HOURS_PER_YEAR)
        if effective <= 0:
            continue
        quotes.append(
            PriceQuote(
                instance_type=str(row["Instance Type"]),
                region=region,
                purchase_option=reserved_option(years, offering_class, payment),
                usd_per_hour=effective,
                recurring_usd_per_hour=hourly_usd,
                upfront_usd=upfront_usd,
                manual=False,
                accelerator_count=row["gpus"],
                sku=row["hourly_SKU"],
                rate_code=row["hourly_RateCode"],
                effective_date=row["hourly_EffectiveDate"],
                **provenance,  # type: ignore[arg-type]
            )
        )
    return quotes


_PLAN_KINDS = {"ComputeSavingsPlans": "compute", "EC2InstanceSavingsPlans": "ec2-instance"}
_BOX_USAGE = r"^(?:[A-Z0-9]+-)?BoxUsage:(.+)$"
_PLAN = ["Product Family", "LeaseContractLength", "LeaseContractLengthUnit", "PurchaseOption"]


def _savings_plan_filter(
    instance_types: Sequence[str] | None, present: set[str], region: str
) -> pl.Expr:
    instance_type = pl.col("DiscountedUsageType").str.extract(_BOX_USAGE, 1)
    expr = (
        (pl.col("DiscountedServiceCode") == "AmazonEC2")
        & (pl.col("DiscountedOperation") == "RunInstances")
        & (pl.col("Unit") == "Hrs")
        & (pl.col("Currency") == "USD")
        & pl.col("Product Family").is_in(list(_PLAN_KINDS))
        & instance_type.is_not_null()
    )
    if instance_types is not None:
        expr = expr & instance_type.is_in(list(instance_types))
    stated = {"DiscountedRegionCode": pl.lit(region), "DiscountedInstanceType": instance_type}
    for column, value in stated.items():
        if column in present:
            expr = expr & (pl.col(column).is_null() | (pl.col(column) == value))
    return expr


def savings_plan_quotes(
    path: Path,
    source: OfferSource,
    region: str,
    instance_types: Sequence[str] | None = None,
    *,
    columns: Sequence[str] | None = None,
    notes: list[str] | None = None,
) -> list[PriceQuote]:
    """Compute and EC2 Instance Savings Plans rates for ``instance_types`` (all when None).

    One quote per type and plan (kind, 1 or 3 years, no/partial/all upfront), its hourly price
    the listed rate, which already spreads any upfront payment over the term. A type with no
    row gets no quote (it is not priced at $0); a plan with different rates for one type is
    left unknown, with a note. A rate that is not a number, not finite or negative is skipped,
    with a line in ``notes`` naming the file's line.
    """
    present = set(
        read_preamble(path, expected_offer=source.offer_code).columns
        if columns is None
        else columns
    )
    wanted = ["SKU", "RateCode", "EffectiveDate", "DiscountedRate", "DiscountedUsageType"]
    rows = filter_offer(
        path,
        _savings_plan_filter(instance_types, present, region),
        [*wanted, *_PLAN, _LINE],
        line_column=_LINE,
    )
    rows = _skip_bad_prices(path, rows, "DiscountedRate", notes).with_columns(
        pl.col("DiscountedUsageType").str.extract(_BOX_USAGE, 1).alias("type")
    )
    quotes = []
    for key, group in _groups(rows, ["type", *_PLAN]):
        instance_type, family, length, unit, payment = (str(value or "") for value in key)
        years = int(length) if length in {"1", "3"} and unit.lower() == "year" else None
        if years is None or payment not in _PURCHASE_PAYMENT:
            continue  # a term or payment this app has no purchase option for
        option = savings_plan_option(_PLAN_KINDS[family], years, _PURCHASE_PAYMENT[payment])
        rated = ((_rate(row), row) for row in group.iter_rows(named=True))
        priced = [(rate, row) for rate, row in rated if rate > 0]
        if not priced:
            continue
        rates = sorted({rate for rate, _row in priced})
        first = priced[0][1]
        ambiguous = len(rates) > 1
        quotes.append(
            PriceQuote(
                instance_type=instance_type,
                region=region,
                purchase_option=option,
                usd_per_hour=None if ambiguous else rates[0],
                manual=False,
                sku=None if ambiguous else first["SKU"],
                rate_code=None if ambiguous else first["RateCode"],
                effective_date=first["EffectiveDate"],
                source_note=(
                    f"price list has {len(rates)} different rates for this plan and type; "
                    "left unknown"
                    if ambiguous
                    else ""
                ),
                **_provenance(source),  # type: ignore[arg-type]
            )
        )
    return sorted(quotes, key=lambda quote: (quote.instance_type, quote.purchase_option))


def _rate(row: dict[str, object]) -> float:
    """The row's rate; a blank one (no rate) is 0, which no plan is priced at."""
    text = str(row["DiscountedRate"] or "").strip()
    return float(text) if text else 0.0


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


def side_rates(path: Path, source: OfferSource, region: str) -> dict[SideService, ServiceRate]:
    """The side-service rates found in one offer file; a service absent here is simply missing.

    The usage type is matched exactly after an optional region prefix (``USE2-``, ``EUC1-``...),
    so look-alike usage types (other storage classes, xAZ rows) never match.
    """
    found: dict[SideService, ServiceRate] = {}
    for service in side_services_in(source.offer_code):
        rate = _side_rate(path, service, _SIDE_FILTERS[service], source, region)
        if rate is not None:
            found[service] = rate
    return found


def _side_rate(
    path: Path, service: SideService, spec: _SideFilter, source: OfferSource, region: str
) -> ServiceRate | None:
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
    rows = (
        filter_offer(path, expr, columns)
        .with_columns(
            pl.col("PricePerUnit").cast(pl.Float64, strict=False).alias("price_usd"),
            pl.col("StartingRange").cast(pl.Float64, strict=False).fill_null(0.0).alias("start"),
            pl.col("EndingRange").cast(pl.Float64, strict=False).fill_nan(None).alias("end"),
        )
        .filter(
            pl.col("price_usd").is_not_null()
            & pl.col("price_usd").is_finite()
            & (pl.col("price_usd") >= 0)
            & pl.col("start").is_finite()
            & (pl.col("start") >= 0)
            & (pl.col("end").is_null() | (pl.col("end") >= pl.col("start")))
        )
    )
    if spec.drop_zero_tiers:
        rows = rows.filter(pl.col("price_usd") > 0)
    candidates = [
        group.sort("start")
        for _sku, group in _groups(rows, "SKU")
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
        **_provenance(source),  # type: ignore[arg-type]
    )


def _regex_escape(text: str) -> str:
    return "".join(f"\\{char}" if char in r".^$*+?{}[]\|()" else char for char in text)
