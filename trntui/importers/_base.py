"""What every importer shares: reading a file safely, progress and cancellation.

A log is first scanned in chunks (line lengths, line breaks: a file of one 1 GB line is refused
without holding it), then read whole (training logs fit in memory; a 100 MB Megatron log is
read in well under a second) and split into lines by Polars, so each format's parser works on a
column of lines with vectorized string expressions instead of a Python loop per line.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import polars as pl

from trntui.core.errors import InputFileError, UserError
from trntui.core.timeline import conform

Progress = Callable[[float], object]
"""Called with the fraction done, 0.0 to 1.0."""
CancelCheck = Callable[[], bool]
"""Returns True when the caller wants the import abandoned."""


class Cancelled(UserError):
    """The caller cancelled the import; nothing was imported."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"{path}: import cancelled")


@dataclass(frozen=True)
class Steps:
    """Reports progress and honours cancellation between the stages of one import."""

    path: str
    progress: Progress | None = None
    cancel: CancelCheck | None = None

    def at(self, fraction: float) -> None:
        if self.cancel is not None and self.cancel():
            raise Cancelled(self.path)
        if self.progress is not None:
            self.progress(min(1.0, max(0.0, fraction)))


class SourceFile:
    """A log file's bytes and their SHA-256.

    The hash runs on a background thread (hashlib releases the GIL) while the parser works:
    hashing a 100 MB log costs about as much as splitting it into lines. ``data`` has LF line
    breaks; a file whose lines end in CR alone (old Mac style) is read with them turned into
    LF (``line_breaks`` says so), while the hash is that of the file's own bytes.
    """

    def __init__(self, path: Path, data: bytes, *, raw: bytes | None = None) -> None:
        self.path = path
        self.data = data
        self.line_breaks = "LF" if raw is None else "CR"
        hashed = data if raw is None else raw
        self._hash: concurrent.futures.Future[str] = _HASHER.submit(
            lambda: hashlib.sha256(hashed).hexdigest()
        )

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def sha256(self) -> str:
        return self._hash.result()


_SEPARATOR = b"\x1f"
"""A control byte that logs do not contain; a file that does is split in Python instead."""
_HASHER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="trntui-hash")

MAX_LINE_BYTES = 16 << 20
"""The longest line a log may have. Real lines are short (a neuron-monitor report on the
largest instance is well under 1 MB); a file of one 1 GB line is not a log, and splitting it
would take many times its size in memory. Such a file is refused after reading at most this
much of it, naming the line."""
_READ_CHUNK = 1 << 20

_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _refuse_unless_regular(path: Path, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise InputFileError(str(path), "is a folder, not a log file")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
        raise InputFileError(
            str(path), f"is {kind}, not a file; trntui reads only regular files", expected="a file"
        )


def open_regular(path: Path) -> BinaryIO:
    """Open a file the user named, for reading; anything but a regular file is refused.

    A FIFO, socket or device would block a read forever (holding the project's write lock) or
    never end; it is refused from its ``stat`` before it is opened, and opened without blocking
    so one swapped in meanwhile is refused by ``fstat`` instead of hanging.
    """
    path = Path(path)
    try:
        _refuse_unless_regular(path, os.stat(path).st_mode)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputFileError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputFileError(str(path), "is a folder, not a log file") from None
    except OSError as error:
        raise InputFileError(str(path), f"cannot be read ({error.strerror})") from None
    try:
        _refuse_unless_regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _scan_lines(handle: BinaryIO, path: Path) -> tuple[int, bool]:
    """Read ``path`` once in chunks, holding one chunk at a time: its size, and whether its
    lines end in CR alone. A line longer than ``MAX_LINE_BYTES`` raises ``InputFileError``."""
    cap = MAX_LINE_BYTES
    chunk_size = max(1, min(_READ_CHUNK, cap))  # so no line inside one chunk exceeds the cap
    size = 0
    line = 1  # number of the line the current LF run belongs to
    has_cr = has_lf = False
    run_lf = run_any = 0  # bytes since the last LF / since the last CR or LF
    longest_any = 0
    too_long: int | None = None  # first line over the cap (unless CR turns out to end lines)
    while chunk := handle.read(chunk_size):
        size += len(chunk)
        lf_first, cr_first = chunk.find(b"\n"), chunk.find(b"\r")
        has_cr = has_cr or cr_first >= 0
        if lf_first < 0:
            run_lf += len(chunk)
        else:
            has_lf = True
            if run_lf + lf_first > cap and too_long is None:
                too_long = line
            line += chunk.count(b"\n")
            run_lf = len(chunk) - chunk.rfind(b"\n") - 1
        if run_lf > cap and too_long is None:
            too_long = line
        breaks = [i for i in (lf_first, cr_first) if i >= 0]
        if breaks:
            longest_any = max(longest_any, run_any + min(breaks))
            run_any = len(chunk) - max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) - 1
        else:
            run_any += len(chunk)
        if too_long is not None and (has_lf or max(longest_any, run_any) > cap):
            break
    cr_only = has_cr and not has_lf
    if too_long is not None and not (cr_only and max(longest_any, run_any) <= cap):
        raise InputFileError(
            str(path),
            f"line is longer than {cap:,} bytes (not a text log, or no line breaks); "
            "the file was not imported",
            line=too_long,
            expected="a training log of text lines",
        )
    return size, cr_only


def read_source(path: Path) -> SourceFile:
    """Open ``path``; a missing, unreadable, empty, not-line-shaped or non-regular file is the
    user's problem, not a bug. The file is scanned in chunks first (line lengths, line breaks),
    so a file that is refused never sits in memory whole."""
    path = Path(path)
    with open_regular(path) as handle:
        try:
            size, cr_only = _scan_lines(handle, path)
            handle.seek(0)
            data = handle.read() if size else b""
        except OSError as error:
            raise InputFileError(str(path), f"cannot be read ({error.strerror})") from None
    if not data or data.isspace():
        raise InputFileError(str(path), "file is empty", expected="a training log")
    if len(data) != size:
        raise InputFileError(str(path), "changed while it was read; try again")
    if cr_only:
        return SourceFile(path, data.replace(b"\r", b"\n"), raw=data)
    return SourceFile(path, data)


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
        frame = pl.read_csv(
            source.data,
            has_header=False,
            separator=_SEPARATOR.decode(),
            quote_char=None,
            new_columns=["text"],
            schema={"text": pl.String},
            truncate_ragged_lines=True,
            comment_prefix=None,
        )
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
