"""Reading an offer file's rows: blocks of whole records scanned lazily by Polars.

``filter_offer`` cuts the file into blocks of whole records (a helper thread cuts the next
while Polars parses this one) and scans each with the filter and projection pushed down;
``_skip_bad_prices`` drops (and notes) rows whose price is not usable.
"""

from __future__ import annotations

import contextlib
import csv
import io
import threading
from collections.abc import Generator, Iterable, Iterator, Sequence
from pathlib import Path
from queue import Empty, Full, Queue

import polars as pl

from trntui.pricing.errors import PricingFormatError
from trntui.pricing.extract.offer import PREAMBLE_ROWS, price_problem

BLOCK_BYTES = 16 * 1024 * 1024
_LINE = "line"


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


def _groups(frame: pl.DataFrame, by: str | list[str]) -> Iterable[tuple[object, pl.DataFrame]]:
    keys = [by] if isinstance(by, str) else by
    for key, group in frame.sort(keys, maintain_order=True).group_by(keys, maintain_order=True):
        yield (key[0] if isinstance(by, str) else key), group
