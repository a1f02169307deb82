"""The queries that pick an offer file's rows, each block of whole records scanned lazily by
Polars with the filter and projection pushed down.

``RowQuery`` is one query, ``RowQueries`` several answered from one parse of each block; both
are what ``records.OfferRows`` runs on a download as it arrives, and ``scan_offer_file`` on a
cached file. ``mark_prices`` marks (and notes) rows whose price is not usable.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from trntui.pricing.errors import PricingFormatError
from trntui.pricing.extract.offer import price_problem
from trntui.pricing.extract.records import BLOCK_BYTES, OfferRows, Plan

_READ_BYTES = 1024 * 1024
_SMALLEST_READ = 1024
LINE_COLUMN = "line"
_ROW = "\x00line"


USABLE = "\x00usable price"
"""The column ``mark_prices`` adds: whether the row's price is usable."""


def mark_prices(
    path: Path,
    rows: pl.DataFrame,
    column: str,
    notes: list[str] | None,
    *,
    zero_is_a_price: pl.Expr | bool = True,
) -> pl.DataFrame:
    """``rows`` with a ``USABLE`` column: whether ``column`` holds a usable price
    (``price_problem`` states the rule; zero is one where ``zero_is_a_price`` holds). Every
    row that does not is noted in ``notes``: the file's line, the row's rate code and type,
    the text and why (the first five, then how many more). The rows are kept, so a type
    whose rows exist but have no usable price can be said so."""
    text = pl.col(column).str.strip_chars()
    value = text.cast(pl.Float64, strict=False)
    usable = (
        value.is_not_null()
        & value.is_finite()
        & (value >= 0)
        & ~text.str.starts_with("-")
        & ((value > 0) | zero_is_a_price)
    ).fill_null(False)
    marked = rows.with_columns(usable.alias(USABLE))
    bad = marked.filter(~pl.col(USABLE))
    if bad.height and notes is not None:
        for row in bad.head(5).iter_rows(named=True):
            notes.append(f"{unusable_price(path, row, column)}; row skipped")
        if bad.height > 5:
            notes.append(f"{path}: {bad.height - 5} more rows with no usable price skipped")
    return marked


def unusable_price(path: Path, row: dict[str, Any], column: str) -> str:
    """Where a row's unusable price is, what it says and why it is no price, in words."""
    what = row.get("Instance Type") or row.get("DiscountedUsageType")
    problem = price_problem(row[column], zero_is_a_price=False) or "not a number"
    return (
        f"{path}:{row.get(LINE_COLUMN, '?')}: {column} {row[column]!r} of "
        f"{row.get('RateCode') or row['SKU']}{f' ({what})' if what else ''} is {problem}"
    )


@dataclass(frozen=True)
class RowQuery:
    """Rows an extraction wants from an offer file: those matching ``predicate``, with
    ``columns`` (all text); ``line_column``, if named in ``columns``, holds each row's line.
    A ``records.Query``: ``scan`` one block, ``combine`` the blocks' rows."""

    predicate: pl.Expr
    columns: tuple[str, ...]
    line_column: str | None = None

    def scan(self, block: bytes, header: Sequence[str], first_line: int, name: str) -> pl.DataFrame:
        """The wanted rows of ``block`` (whole records of a file with the columns ``header``,
        the first on line ``first_line`` of the file ``name``)."""
        return _read_block(
            block, header, first_line, name, self.line_column,
            lambda rows: rows.filter(self.predicate).select(self.columns),
        )  # fmt: skip

    def combine(self, parts: list[pl.DataFrame]) -> pl.DataFrame:
        """The rows of all blocks, in order."""
        if parts:
            return pl.concat(parts, how="vertical")
        return pl.DataFrame(
            schema={
                name: pl.UInt32 if name == self.line_column else pl.String for name in self.columns
            }
        )


RowPlan = Callable[[Sequence[str]], RowQuery]
"""A ``Plan`` of one query: an extraction's rows, for a file with these columns."""


@dataclass(frozen=True)
class RowQueries:
    """Several queries answered from one parse of each block (a ``records.Query`` too): the
    rows any of them wants, with every column any of them needs and a flag per query, split
    after. ``scan`` and ``combine`` give one frame per query, in their order."""

    queries: tuple[RowQuery, ...]

    def scan(
        self, block: bytes, header: Sequence[str], first_line: int, name: str
    ) -> list[pl.DataFrame]:
        flags = [f"\x00query {index}" for index in range(len(self.queries))]
        needed = dict.fromkeys(
            column
            for query in self.queries
            for column in query.columns
            if column != query.line_column
        )
        found = _read_block(
            block, header, first_line, name, _ROW,
            lambda rows: rows.with_columns(
                query.predicate.alias(flag)
                for query, flag in zip(self.queries, flags, strict=True)
            )
            .filter(pl.any_horizontal(flags))
            .select(*needed, *flags, _ROW),
        )  # fmt: skip
        return [
            found.filter(pl.col(flag)).select(
                pl.col(_ROW).alias(column) if column == query.line_column else pl.col(column)
                for column in query.columns
            )
            for query, flag in zip(self.queries, flags, strict=True)
        ]

    def combine(self, parts: list[list[pl.DataFrame]]) -> list[pl.DataFrame]:
        return [
            query.combine([found[index] for found in parts])
            for index, query in enumerate(self.queries)
        ]


def _read_block(
    block: bytes,
    header: Sequence[str],
    first_line: int,
    name: str,
    line_column: str | None,
    wanted: Callable[[pl.LazyFrame], pl.LazyFrame],
) -> pl.DataFrame:
    """``wanted`` of the block's rows (all text), read on the streaming engine; a block that
    is not CSV is a ``PricingFormatError`` naming the file and line.

    The kept text is copied out of the block (``+ ""``): a filtered String column is views
    into the parsed block's buffers, so the few rows kept from each block held every block's
    text until the file was read (40 MiB of a 263 MB file, read in 2 MB blocks)."""
    try:
        rows = pl.scan_csv(
            block,
            has_header=False,
            schema=dict.fromkeys(header, pl.String),
            quote_char='"',
            missing_columns="insert",  # a last row cut short is read with nulls
            row_index_name=line_column,
            row_index_offset=first_line,
        )
        kept = wanted(rows).with_columns(pl.col(pl.String) + pl.lit(""))  # copied: see above
        return kept.collect(engine="streaming")
    except pl.exceptions.PolarsError as error:
        at = _bad_record_line(block, len(header), first_line)
        raise PricingFormatError(
            f"{name}:{at}: the price list file cannot be read as CSV ({_gist(error)})"
        ) from None


def _gist(error: Exception, limit: int = 120) -> str:
    """The first line of a parser's error, cut short: Polars quotes whole records of the file
    in its messages, which belong in no one-line message (nor on a terminal)."""
    text = str(error).strip().split("\n", 1)[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_only(_columns: Sequence[str]) -> RowQuery:
    """The plan that keeps no row: the file is still parsed whole (every block is read as CSV
    of the header's columns), which is what a download must pass before it is kept."""
    return RowQuery(pl.lit(False), ("SKU",))


def scan_offer_file(path: Path, plan: Plan, *, block_bytes: int = BLOCK_BYTES) -> Any:
    """The rows ``plan``'s query wants from the offer file at ``path`` (a ``RowQuery``'s
    frame, a ``RowQueries``' frames).

    The file is read in blocks of whole records (a newline counts as a record end only outside
    quotes), and each block is scanned lazily with the filter and projection pushed down, on
    the streaming engine, in a thread of its own while the next block is read and cut.
    Scanning the path directly would map the whole file into memory (a few hundred MB resident
    for a regional EC2 file); blocks keep the peak near a few blocks. A query's
    ``line_column`` holds each row's line in the file, counting one line per record as in the
    price list's files, whose values hold no line breaks. A file that cannot be read as CSV is
    a ``PricingFormatError`` naming the line at fault.
    """
    rows = OfferRows(str(path), plan, block_bytes=block_bytes)
    try:
        with open(path, "rb") as handle:
            while piece := handle.read(max(_SMALLEST_READ, min(_READ_BYTES, block_bytes))):
                rows.add(piece)
        return rows.finish()
    finally:
        rows.close()


def _bad_record_line(block: bytes, width: int, first_line: int) -> int:
    """The line of the first fault in ``block``: a byte that is not UTF-8, or the start of the
    first record that is not CSV of ``width`` columns (an unclosed quote, extra values); the
    block's first line when none is found."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError as error:
        return first_line + block.count(b"\n", 0, error.start)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
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


def rows_by(
    frame: pl.DataFrame, keys: list[str]
) -> Iterable[tuple[tuple[object, ...], pl.DataFrame]]:
    """The rows of each value of ``keys``, in key order: (the values, the rows)."""
    yield from frame.sort(keys, maintain_order=True).group_by(keys, maintain_order=True)
