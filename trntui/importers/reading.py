"""Reading a log file the user named: safely, once, with its SHA-256; progress and
cancellation of an import.

A log is read once. Before that, its line lengths are checked from small windows around a
point every half line cap (a line longer than the cap holds one of them): a file of one 1 GB
line is refused without being held. A file that fails that check is read in chunks instead,
each checked as it arrives, to refuse it naming the line after reading at most the cap of it
(or to read it when its lines end in CR alone). The bytes read are checked again, in memory,
so a file changed in between is still judged by what was read. Training logs fit in memory (a
100 MB Megatron log is read in about 0.05 s); a background thread computes their SHA-256.

``read_ahead(path)`` starts that read in a background thread; the next ``read_source(path)``
takes its result. ``trntui import`` reads the log it is given this way while Python loads
Polars and the parsers (one core would otherwise wait), so neither waits for the other.

Nothing here imports Polars.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import io
import os
import queue
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from trntui.core.errors import InputFileError, UserError

Progress = Callable[[float], object]
"""Called with the fraction done, 0.0 to 1.0."""
CancelCheck = Callable[[], bool]
"""Returns True when the caller wants the import abandoned."""
T = TypeVar("T")


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


class _Digest:
    """The SHA-256 of bytes given piece by piece, and whether every byte is ASCII and none is
    NUL (``plain``): each piece is checked just after it is hashed, while it is in the CPU's
    cache, instead of in passes of their own over the whole file."""

    def __init__(self) -> None:
        self._hasher = hashlib.sha256()
        self._plain = True

    def add(self, piece: bytes) -> None:
        self._hasher.update(piece)
        self._plain = self._plain and piece.isascii() and b"\x00" not in piece

    def result(self) -> tuple[str, bool]:
        return self._hasher.hexdigest(), self._plain


_DIGEST_PIECE = 1 << 18
"""The bytes hashed and checked at a time: small enough to stay in the CPU's cache between the
two (hashing copies of such pieces also took less CPU than hashing the file in one call)."""


def _digest_of(data: bytes) -> tuple[str, bool]:
    digest = _Digest()
    for start in range(0, len(data), _DIGEST_PIECE):
        digest.add(data[start : start + _DIGEST_PIECE])
    return digest.result()


class SourceFile:
    """A log file's bytes, their SHA-256, and whether they are plain ASCII.

    The hash is computed on a background thread (hashlib releases the GIL) while the parser
    works (or from the chunks as they are read, for a file read in chunks); ``sha256`` and
    ``plain`` wait for it. ``data`` has LF line breaks; a file whose lines end in CR alone (old
    Mac style) is read with them turned into LF, while the hash is that of the file's own bytes.
    """

    def __init__(
        self, path: Path, data: bytes, digest: concurrent.futures.Future[tuple[str, bool]]
    ) -> None:
        self.path = path
        self.data = data
        self._digest = digest

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def sha256(self) -> str:
        return self._digest.result()[0]

    @property
    def plain(self) -> bool:
        """Whether every byte is ASCII and none is NUL (such bytes are valid UTF-8 text)."""
        return self._digest.result()[1]


_Call = tuple[concurrent.futures.Future[Any], Callable[[], Any]]
"""A call to make (``_InOrder``) and the future its outcome goes to."""


class _InOrder:
    """Runs the calls it is given one after another, in order, on one daemon thread started
    by the first: a process that is done never waits for it, as it waits for an idle
    ``ThreadPoolExecutor`` worker (which would keep ``trntui import`` from ending at once,
    ``cli.run``). Each call's result or error comes back in its future."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._calls: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        self._start = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, call: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._calls.put((future, functools.partial(call, *args)))
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
        return future

    def _run(self) -> None:
        while True:
            future, call = self._calls.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as error:  # handed to whoever waits for the future
                future.set_exception(error)


_HASHER = _InOrder("trntui-hash")

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


_PEEK = 4096
"""Bytes first read on each side of a sample point (widened up to the cap around long lines)."""


def _lines_fit(size: int, cap: int, window: Callable[[int, int], bytes]) -> bool:
    """Whether no line of a ``size``-byte text is longer than ``cap`` bytes (``window(start,
    end)``: its bytes in that range). Only the lines holding a point every ``cap // 2`` bytes
    are measured: any line longer than the cap holds one, the others are shorter than that."""
    step = max(1, cap // 2)
    for point in range(0, size, step):
        start = end = None
        reach = _PEEK
        while start is None or end is None:
            if start is None:
                low = max(0, point - reach)
                before = window(low, point).rfind(b"\n")
                if before >= 0 or low == 0:
                    start = low + before + 1
            if end is None:
                high = min(size, point + reach)
                after = window(point, high).find(b"\n")
                if after >= 0 or high == size:
                    end = point + after if after >= 0 else size
            if (start is None or end is None) and reach > cap:
                return False  # no line break within the cap on one side
            reach *= 4
        if end - start > cap:
            return False
    return True


class _LineCheck:
    """The line lengths and line breaks of a file seen chunk by chunk (offsets count from the
    file's start). A line inside one chunk is shorter than the chunk, so only the lines that
    cross a chunk's edges are measured: two searches per chunk, not a pass per line."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.has_cr = self.has_lf = False
        self.last_lf = -1  # offset of the last LF seen
        self.last_break = -1  # offset of the last CR or LF seen
        self.longest_any = 0  # longest line ended by a CR or LF that crossed a chunk's edge
        self.too_long: int | None = None  # where the first LF line over the cap starts

    def add(self, chunk: bytes) -> None:
        base, cap = self.size, self.cap
        self.size += len(chunk)
        lf_first, cr_first = chunk.find(b"\n"), chunk.find(b"\r")
        if lf_first >= 0:
            self.has_lf = True
            if base + lf_first - self.last_lf - 1 > cap and self.too_long is None:
                self.too_long = self.last_lf + 1
            self.last_lf = base + chunk.rfind(b"\n")
        if self.size - self.last_lf - 1 > cap and self.too_long is None:
            self.too_long = self.last_lf + 1
        if cr_first >= 0:
            self.has_cr = True
        breaks = [i for i in (lf_first, cr_first) if i >= 0]
        if breaks:
            self.longest_any = max(self.longest_any, base + min(breaks) - self.last_break - 1)
            last_cr = chunk.rfind(b"\r") if cr_first >= 0 else -1
            self.last_break = base + max(chunk.rfind(b"\n"), last_cr)

    @property
    def longest_seen(self) -> int:
        """The longest line ended by CR or LF so far, counting the one still open."""
        return max(self.longest_any, self.size - self.last_break - 1)

    @property
    def refused(self) -> bool:
        """Whether more bytes cannot change the verdict that a line is too long: once an LF is
        seen lines end in LF, and a CR-only file is judged by its CR-ended lines."""
        return self.too_long is not None and (self.has_lf or self.longest_seen > self.cap)

    @property
    def cr_only(self) -> bool:
        return self.has_cr and not self.has_lf


def _read_checked(
    handle: BinaryIO, path: Path
) -> tuple[bytes, concurrent.futures.Future[tuple[str, bool]], bool]:
    """Read ``path`` in one pass: its bytes, their SHA-256 (computed on ``_HASHER`` while the
    next chunk is read) and whether its lines end in CR alone. A line longer than
    ``MAX_LINE_BYTES`` raises ``InputFileError`` as soon as it is seen, having held at most
    about the cap of such a line."""
    cap = MAX_LINE_BYTES
    chunk_size = max(1, min(_READ_CHUNK, cap))  # so no line inside one chunk exceeds the cap
    check = _LineCheck(cap)
    digest = _Digest()
    chunks: list[bytes] = []
    while chunk := handle.read(chunk_size):
        chunks.append(chunk)
        _HASHER.submit(digest.add, chunk)  # one worker: the chunks are hashed in order
        check.add(chunk)
        if check.refused:
            break
    if check.too_long is not None and not (check.cr_only and check.longest_seen <= cap):
        line = _lines_before(chunks, check.too_long) + 1
        raise InputFileError(
            str(path),
            f"line is longer than {cap:,} bytes (not a text log, or no line breaks); "
            "the file was not imported",
            line=line,
            expected="a training log of text lines",
        )
    return b"".join(chunks), _HASHER.submit(digest.result), check.cr_only


def _lines_before(chunks: list[bytes], offset: int) -> int:
    """How many LFs the chunks hold before ``offset``."""
    count = base = 0
    for chunk in chunks:
        if base >= offset:
            break
        count += chunk.count(b"\n", 0, offset - base)
        base += len(chunk)
    return count


def _read(path: Path) -> SourceFile:
    """The read behind ``read_source`` (and ``read_ahead``, in its thread)."""
    path = Path(path)
    cap = MAX_LINE_BYTES
    with open_regular(path) as handle:
        try:
            fd = handle.fileno()
            size = os.fstat(fd).st_size
            if _lines_fit(size, cap, lambda start, end: os.pread(fd, end - start, start)):
                data = handle.read()
                if _lines_fit(len(data), cap, lambda start, end: data[start:end]):
                    digest = _HASHER.submit(_digest_of, data)
                    cr_only = b"\n" not in data and b"\r" in data
                else:  # changed since it was checked: judge what was read
                    data, digest, cr_only = _read_checked(io.BytesIO(data), path)
            else:
                data, digest, cr_only = _read_checked(handle, path)
        except OSError as error:
            raise InputFileError(str(path), f"cannot be read ({error.strerror})") from None
    if not data or data.isspace():
        raise InputFileError(str(path), "file is empty", expected="a training log")
    if cr_only:
        return SourceFile(path, data.replace(b"\r", b"\n"), digest)
    return SourceFile(path, data, digest)


_AHEAD: dict[str, concurrent.futures.Future[SourceFile]] = {}
"""Reads started by ``read_ahead``, by absolute path, each taken by the next ``read_source``."""


def read_ahead(path: Path) -> None:
    """Start reading ``path`` as ``read_source`` would, in a background thread.

    The next ``read_source(path)`` in this process returns that read (or raises its error). A
    FIFO or device is refused without being opened for a blocking read, exactly as a direct
    read does. The thread is a daemon: a process that ends first does not wait for it.
    """
    key = os.path.abspath(path)
    if key in _AHEAD:
        return
    future: concurrent.futures.Future[SourceFile] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(_read(Path(path)))
        except BaseException as error:  # handed to the reader in the main thread
            future.set_exception(error)

    _AHEAD[key] = future
    threading.Thread(target=run, name="trntui-read-ahead", daemon=True).start()


def read_source(path: Path) -> SourceFile:
    """Open ``path``; a missing, unreadable, empty, not-line-shaped or non-regular file is the
    user's problem, not a bug. A file whose line lengths are not checked from small windows is
    read in chunks and refused as soon as a line is too long, so it never sits in memory whole
    (see the module docstring). A read started by ``read_ahead`` is taken instead of reading
    again."""
    ahead = _AHEAD.pop(os.path.abspath(path), None)
    if ahead is not None:
        return ahead.result()
    return _read(Path(path))
