"""What every importer shares: the file's lines as a column, JSON numbers, timelines.

Reading a file safely (once, hashed, with its line lengths checked), progress and cancellation
are in ``reading`` (re-exported here). Polars splits the bytes into lines, so each format's
parser works on a column of lines with vectorized string expressions instead of a Python loop
per line, while a background thread computes their SHA-256.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.timeline import conform
from trntui.importers.reading import (
    CancelCheck,
    Cancelled,
    Progress,
    SourceFile,
    Steps,
    open_regular,
    read_source,
)

__all__ = [
    "CancelCheck",
    "Cancelled",
    "Progress",
    "SourceFile",
    "Steps",
    "decode_text",
    "json_number",
    "json_whole",
    "line_of_offset",
    "no_events_error",
    "open_regular",
    "read_lines",
    "read_numbered_lines",
    "read_source",
    "rows_timeline",
]

_SEPARATOR = b"\x1f"
"""A control byte that logs do not contain; a file that does is split in Python instead."""


def line_of_offset(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_text(source: SourceFile) -> str:
    """The file as text; binary data or bytes that are not UTF-8 raise ``InputFileError``.

    Logs with a mix of encodings are refused rather than guessed at: a misread byte in a number
    would silently change a measurement.
    """
    nul = source.data.find(b"\x00")
    if nul >= 0:
        raise InputFileError(
            source.name,
            "contains binary data (NUL byte)",
            line=line_of_offset(source.data, nul),
            expected="a text log",
        )
    try:
        return source.data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputFileError(
            source.name,
            "text is not valid UTF-8 (binary data or a mix of encodings)",
            line=line_of_offset(source.data, error.start),
            expected="UTF-8 text",
        ) from None


_AS_LINES: dict[str, Any] = {
    "has_header": False,
    "separator": _SEPARATOR.decode(),
    "quote_char": None,
    "new_columns": ["text"],
    "schema": {"text": pl.String},
    "truncate_ragged_lines": True,
    "comment_prefix": None,
}
"""Polars' CSV reader's options that make a file's bytes a column of its lines (``text``)."""


def read_lines(source: SourceFile, *, latin1: bool = False) -> pl.DataFrame:
    """One row per line: ``line`` (1-based) and ``text`` (without the line break, never null).

    ``latin1``: a file that is not UTF-8 is read as Latin-1 instead of refused (for formats
    whose records are ASCII, so a stray byte elsewhere cannot change a number).

    Polars' CSV reader splits the bytes (in parallel) with a separator byte that logs do not
    contain: the fastest way to get a column of lines. It refuses bytes that are not
    UTF-8; only then, or when the file holds NUL or the separator byte, is the text decoded in
    Python, to name the offending line or to split it safely.
    """
    try:
        frame = pl.read_csv(source.data, **_AS_LINES)
    except (pl.exceptions.ComputeError, pl.exceptions.SchemaError):
        frame = None
    if frame is None or b"\x00" in source.data or _SEPARATOR in source.data:
        try:
            text = decode_text(source)
        except InputFileError:
            if not latin1 or b"\x00" in source.data:
                raise
            text = source.data.decode("latin-1")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        frame = pl.DataFrame({"text": [line.removesuffix("\r") for line in lines]})
    frame = frame.select(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("line"),
        pl.col("text").fill_null(""),
    )
    return frame


def read_numbered_lines(source: SourceFile, numbers: pl.Series, count: int) -> pl.DataFrame | None:
    """The rows of ``read_lines(source)`` whose ``line`` is in ``numbers``, when the file has
    ``count`` lines (else ``None``).

    For a parser that knows which few lines it still needs the text of: Polars scans the
    lines and keeps only those as it reads, so a big log's other lines are never held (for a
    100 MB log that is 100 MB less memory to fault in and fill). A file whose lines
    ``read_lines`` splits in Python is read by it whole, then filtered: the rows are the same.
    """
    wanted = numbers.cast(pl.Int64).implode()
    frame = None
    if b"\x00" not in source.data and _SEPARATOR not in source.data:
        try:
            frame = (
                pl.scan_csv(source.data, **_AS_LINES, row_index_name="line", row_index_offset=1)
                .select(pl.col("line").cast(pl.Int64), pl.col("text").fill_null(""))
                # The lines from ``count`` on tell whether the file has ``count`` lines.
                .filter(pl.col("line").is_in(wanted) | (pl.col("line") >= count))
                .collect()
            )
        except (pl.exceptions.ComputeError, pl.exceptions.SchemaError):
            frame = None
    if frame is None:
        lines = read_lines(source)
        frame = lines.filter(pl.col("line").is_in(wanted) | (pl.col("line") >= count))
    if frame.is_empty() or frame["line"][-1] != count:
        return None
    return frame.filter(pl.col("line").is_in(wanted))


def no_events_error(source: SourceFile, format_name: str, expected: str) -> InputFileError:
    return InputFileError(
        source.name,
        f"no {format_name} lines found (is this the right format?)",
        line=1,
        expected=expected,
    )


def json_number(value: Any) -> float | None:
    """A finite number from parsed JSON, or ``None`` (JSON also admits NaN and Infinity)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def json_whole(value: Any) -> int | None:
    """A whole number from parsed JSON, or ``None`` when absent or out of range."""
    number = json_number(value)
    if number is None or abs(number) > 2**62:
        return None
    return int(number)


def rows_timeline(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """The timeline of an importer's event rows; no rows give an empty timeline (with its
    columns), not a one-row frame of nulls."""
    if not rows:
        return conform(pl.DataFrame({"kind": []}))
    return conform(pl.DataFrame(rows, infer_schema_length=None))
