"""An offer file's bytes, in whatever pieces they come (read from disk or arriving from the
network), cut into its header and blocks of whole records, each block filtered by a plan's
query in a thread of its own (``OfferRows``). This module does not import Polars (the query
does, when first run), so a download can start before Polars has loaded.

A CSV record ends at a newline outside quotes. Each piece's quotes are counted once, as it
comes; the parity of the quotes since the last cut (always a record start) then says whether a
newline ends a record, looking back only from the end of what has gathered.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import threading
from collections.abc import Callable, Sequence
from queue import Empty, Full, Queue
from typing import Any, Protocol

from trntui.pricing.errors import PricingFormatError
from trntui.pricing.extract.offer import PREAMBLE_ROWS

_HEAD_LIMIT = 1024 * 1024
"""The metadata rows and the header must end within this many bytes."""


class OfferHeader:
    """The header of an offer file: its column names and the line its first row is on."""

    __slots__ = ("columns", "first_line")

    def __init__(self, columns: list[str], first_line: int) -> None:
        self.columns = columns
        self.first_line = first_line


def split_head(data: bytes, name: str) -> tuple[OfferHeader, bytes] | None:
    """The header of the file that starts with ``data`` and the bytes after it; None when
    ``data`` does not yet hold the metadata rows and the header (more must come)."""
    position, parity, records = 0, 0, 0
    while records < PREAMBLE_ROWS + 1:
        end = data.find(b"\n", position)
        if end < 0:
            if len(data) > _HEAD_LIMIT:
                raise PricingFormatError(
                    f"{name}: no header row within the first {_HEAD_LIMIT:,} bytes"
                )
            return None
        parity ^= data.count(b'"', position, end) & 1
        position = end + 1
        if not parity:
            records += 1
            if records == PREAMBLE_ROWS:
                header_start = position
    text = data[header_start:position].decode("utf-8", "replace").lstrip("\ufeff")
    columns = next(csv.reader(io.StringIO(text)), [])
    return OfferHeader(columns, 1 + data.count(b"\n", 0, position)), data[position:]


def head_missing(name: str, data: bytes) -> PricingFormatError:
    """The error for a whole file (``data``) in which ``split_head`` found no header."""
    if data.count(b'"') % 2:
        return PricingFormatError(f"{name}: unterminated quote near the top")
    return PricingFormatError(f"{name}: ends before the header row")


class RecordBlocks:
    """Gathers the bytes after the header and hands them back in blocks of whole records.

    ``add`` takes the next piece and returns a block once about ``block_bytes`` have gathered
    (None before); ``rest`` returns what is left at the end. Every block starts at a record
    start and ends at a record end, so a block can be parsed on its own. A newline found not
    to end a record never does later (the parity before it does not change), so each piece is
    searched once, however long a record runs.
    """

    def __init__(self, block_bytes: int) -> None:
        self.block_bytes = block_bytes
        self._pieces: list[bytes] = []
        self._counts: list[int] = []
        self._size = 0
        self._searched = 0
        """How many of the first pieces hold no record end."""

    @property
    def waiting(self) -> int:
        """Bytes gathered and not yet handed back."""
        return self._size

    def add(self, data: bytes) -> bytes | None:
        if not data:
            return None
        self._pieces.append(data)
        self._counts.append(data.count(b'"'))
        self._size += len(data)
        if self._size < self.block_bytes:
            return None
        return self._cut()

    def rest(self) -> bytes:
        block = b"".join(self._pieces)
        self._pieces, self._counts, self._size, self._searched = [], [], 0, 0
        return block

    def _cut(self) -> bytes | None:
        """The gathered bytes up to the last record end, or None when none has ended yet."""
        parity = sum(self._counts) & 1  # of the quotes since the last cut, a record start
        after = 0  # quotes after the newline being looked at, to the end of what gathered
        for index in range(len(self._pieces) - 1, self._searched - 1, -1):
            piece = self._pieces[index]
            end = len(piece)
            newline = piece.rfind(b"\n", 0, end)
            while newline >= 0:
                after += piece.count(b'"', newline + 1, end)
                if not (parity ^ after) & 1:
                    return self._take(index, newline + 1)
                end = newline
                newline = piece.rfind(b"\n", 0, end)
            after += piece.count(b'"', 0, end)
        self._searched = len(self._pieces)
        return None

    def _take(self, index: int, cut: int) -> bytes:
        piece = self._pieces[index]
        head, tail = piece[:cut], piece[cut:]
        block = b"".join([*self._pieces[:index], head])
        later = self._pieces[index + 1 :]
        self._pieces = [tail, *later] if tail else later
        later_counts = self._counts[index + 1 :]
        self._counts = [tail.count(b'"'), *later_counts] if tail else later_counts
        self._size = sum(len(each) for each in self._pieces)
        self._searched = len(self._pieces)  # searched back to the cut, which moved no parity
        return block


class Query(Protocol):
    """What ``OfferRows`` needs of a query (``scan.RowQuery`` and ``scan.RowQueries`` are
    ones): the rows wanted from one block, and all blocks' rows put together."""

    def scan(self, block: bytes, header: Sequence[str], first_line: int, name: str) -> Any: ...

    def combine(self, parts: list[Any]) -> Any: ...


Plan = Callable[[Sequence[str]], Query]
"""The query to run on a file with these columns (a filter may depend on which it has)."""

BLOCK_BYTES = 4 * 1024 * 1024
"""Blocks of 4 MiB and 16 waiting pieces: a fetch of the 263 MB benchmark file takes 1.09-1.10 s
and peaks at 123-126 MiB (``benchmarks/bench_price_fetch.py``, quiet). Each block is a Polars
scan of its own: 2 MiB blocks peak 118-119 MiB but take 1.18-1.19 s (3.1x the bare download,
over its 3x); 16 MiB and 32 pieces take 1.08 s and peak 172 MiB."""
_THREAD = "trntui-offer-blocks"
_WAITING_PIECES = 16
"""Pieces (at most 1 MB each from a download) that may wait for the scanning thread; a
caller that is faster than the scan waits, so memory stays bounded."""
_END = b""
_LONGEST_RECORD_BLOCKS = 4
_LONGEST_RECORD_BYTES = 64 * 1024
"""A record still open after this many blocks (and at least this many bytes) is refused: an
unclosed quote, not a value; holding it would hold the rest of the file."""


class OfferRows:
    """The rows ``plan``'s query wants from an offer file whose bytes come in pieces, in
    order: ``add`` each piece (as read, or as it arrives from the network), ``finish``, then
    ``close`` (always: it stops the thread).

    The caller's thread only hands the pieces over. A thread of its own cuts them into the
    header and blocks of whole records and scans each block with the query (Polars releases
    the interpreter while it parses), so a download is filtered while it arrives. A fault in
    the file (no header, a block that is not CSV, a record running on for more than
    ``_LONGEST_RECORD_BLOCKS`` blocks: an unclosed quote, no record after the header) is
    raised by ``finish``, never by ``add``: the download that feeds it goes on, and the
    thread stops taking pieces. So ``finish`` returning is the proof that the whole file
    parses and has rows, which a download must give before it replaces a cached copy
    (``pricing.client``). ``add`` waits while pieces are waiting for the thread; every
    0.1 s of waiting it calls ``check`` (the download's cancel and deadline checks: what it
    raises, ``add`` raises).
    """

    def __init__(
        self,
        name: str,
        plan: Plan,
        *,
        block_bytes: int = BLOCK_BYTES,
        check: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self._plan = plan
        self._block_bytes = block_bytes
        self._check = check
        self._closed = False
        self._error: BaseException | None = None
        self._result: Any = None
        self._handoff: Queue[bytes] = Queue(maxsize=_WAITING_PIECES)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=_THREAD, daemon=True)
        """Started by the first piece, or by ``finish`` (a download answered "not modified"
        never starts it)."""

    def add(self, piece: bytes) -> None:
        if piece:
            self._put(piece)

    def finish(self) -> Any:
        """The query's rows (``Query.combine``); the file's fault if it has one."""
        if self._closed:
            raise RuntimeError(f"the rows of {self.name} were closed before they were finished")
        self._put(_END, checked=False)  # the body is whole: only the scan is left to wait for
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result

    def close(self) -> None:
        self._closed = True
        self._stop.set()
        while self._thread.is_alive():
            with contextlib.suppress(Empty):
                self._handoff.get_nowait()
            with contextlib.suppress(Full):
                self._handoff.put_nowait(_END)  # wakes the thread if it waits for a piece
            self._thread.join(timeout=0.05)

    def _put(self, piece: bytes, *, checked: bool = True) -> None:
        if self._thread.ident is None and not self._stop.is_set():
            self._thread.start()
        while not self._stop.is_set() and self._thread.is_alive():
            try:
                self._handoff.put(piece, timeout=0.1)
                return
            except Full:
                if checked and self._check is not None:
                    self._check()

    def _pieces(self) -> Any:
        while not self._stop.is_set():
            try:
                piece = self._handoff.get(timeout=0.1)
            except Empty:
                continue
            if piece is _END:
                return
            yield piece

    def _run(self) -> None:
        try:
            self._result = self._scan(self._pieces())
        except BaseException as error:  # raised by finish, in the caller's thread
            self._error = error

    def _scan(self, pieces: Any) -> Any:
        head = b""
        found = None
        for piece in pieces:
            head += piece
            if (found := split_head(head, self.name)) is not None:
                break
        if self._stop.is_set():  # closed: the pieces stopped, not the file
            return None
        if found is None and head and not head.endswith(b"\n"):
            found = split_head(head + b"\n", self.name)  # a header ending the file
        if found is None:
            raise head_missing(self.name, head)
        header, rest = found
        del head
        columns = tuple(header.columns)
        query = self._plan(columns)
        parts: list[Any] = []
        line = header.first_line
        blocks = RecordBlocks(self._block_bytes)

        def scan(block: bytes) -> None:
            nonlocal line
            parts.append(query.scan(block, columns, line, self.name))
            line += block.count(b"\n")

        longest = _LONGEST_RECORD_BLOCKS * self._block_bytes
        for piece in itertools.chain((rest,), pieces):
            if (block := blocks.add(piece)) is not None:
                scan(block)
            elif blocks.waiting > max(longest, _LONGEST_RECORD_BYTES):
                raise PricingFormatError(
                    f"{self.name}:{line}: a record runs on for more than "
                    f"{blocks.waiting:,} bytes (an unclosed quote?)"
                )
        if self._stop.is_set():
            return None
        last = blocks.rest()
        if last.strip():
            scan(last)
        if not parts:
            raise PricingFormatError(f"{self.name}: a header and no rows: not a whole price list")
        return query.combine(parts)
