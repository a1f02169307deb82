"""An offer file's bytes, in whatever pieces they come (read from disk or arriving from the
network), cut into its header and blocks of whole records, each block filtered by a plan's
query in a thread of its own (``OfferRows``). This module does not import Polars (the query
does, when first run), so a download can start before Polars has loaded.

A CSV record ends at a newline outside quotes. Each piece's quotes are counted once, as it
comes; the parity of the quotes since the last cut (always a record start) then says whether a
newline ends a record, looking back only from the end of what has gathered. Its line breaks
are counted once too, for the line each block starts on (a fault's line, a row's line).
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


def count_lines(data: bytes) -> int:
    """The line breaks in ``data``: found one by one while they are sparse (``bytes.find``
    skips the bytes between; a price list's records are hundreds of bytes long), counted byte
    by byte once they are not (``bytes.count``). Exact either way; 0.06 s instead of 0.16 s of
    CPU for the 263 MB benchmark file."""
    found = 0
    dense = len(data) >> 8  # more line breaks than one per 256 bytes
    at = data.find(b"\n")
    while at >= 0:
        found += 1
        if found > dense:
            return found + data.count(b"\n", at + 1)
        at = data.find(b"\n", at + 1)
    return found


class RecordBlocks:
    """Gathers the bytes after the header and hands them back in blocks of whole records.

    ``add`` takes the next piece and returns a block once about ``block_bytes`` have gathered
    (None before); ``rest`` returns what is left at the end; ``lines`` is then the number of
    line breaks in the block handed back. Every block starts at a record start and ends at a
    record end, so a block can be parsed on its own. A newline found not to end a record never
    does later (the parity before it does not change), so each piece is searched once, however
    long a record runs. A piece's quotes and line breaks are counted once: by ``add``, or by
    the caller, who may pass them (``OfferRows`` counts in the thread that hands the pieces
    over); the block's and the rest's counts are then found from the search back from the end.
    """

    def __init__(self, block_bytes: int) -> None:
        self.block_bytes = block_bytes
        self._pieces: list[bytes] = []
        self._quotes: list[int] = []
        self._lines: list[int] = []
        self._size = 0
        self._searched = 0
        """How many of the first pieces hold no record end."""
        self.lines = 0
        """The line breaks in the block last handed back."""

    @property
    def waiting(self) -> int:
        """Bytes gathered and not yet handed back."""
        return self._size

    def add(self, data: bytes, quotes: int | None = None, lines: int | None = None) -> bytes | None:
        """The next piece (with its quotes and line breaks, if counted): a block, or None."""
        if not data:
            return None
        self._pieces.append(data)
        self._quotes.append(data.count(b'"') if quotes is None else quotes)
        self._lines.append(count_lines(data) if lines is None else lines)
        self._size += len(data)
        if self._size < self.block_bytes:
            return None
        return self._cut()

    def rest(self) -> bytes:
        block = b"".join(self._pieces)
        self.lines = sum(self._lines)
        self._pieces, self._quotes, self._lines, self._size, self._searched = [], [], [], 0, 0
        return block

    def _cut(self) -> bytes | None:
        """The gathered bytes up to the last record end, or None when none has ended yet."""
        parity = sum(self._quotes) & 1  # of the quotes since the last cut, a record start
        after = 0  # quotes after the newline being looked at, to the end of what gathered
        lines_after = 0  # and line breaks
        for index in range(len(self._pieces) - 1, self._searched - 1, -1):
            piece = self._pieces[index]
            end = len(piece)
            newline = piece.rfind(b"\n", 0, end)
            while newline >= 0:
                after += piece.count(b'"', newline + 1, end)
                if not (parity ^ after) & 1:
                    return self._take(index, newline + 1, after, lines_after)
                lines_after += 1
                end = newline
                newline = piece.rfind(b"\n", 0, end)
            after += piece.count(b'"', 0, end)
        self._searched = len(self._pieces)
        return None

    def _take(self, index: int, cut: int, quotes_after: int, lines_after: int) -> bytes:
        """The pieces up to ``cut`` in piece ``index`` as a block; after it ``quotes_after``
        quotes and ``lines_after`` line breaks are left."""
        piece = self._pieces[index]
        head, tail = piece[:cut], piece[cut:]
        block = b"".join([*self._pieces[:index], head])
        self.lines = sum(self._lines) - lines_after
        later = self._pieces[index + 1 :]
        later_quotes = self._quotes[index + 1 :]
        later_lines = self._lines[index + 1 :]
        if tail:
            self._pieces = [tail, *later]
            self._quotes = [quotes_after - sum(later_quotes), *later_quotes]
            self._lines = [lines_after - sum(later_lines), *later_lines]
        else:
            self._pieces, self._quotes, self._lines = later, later_quotes, later_lines
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
"""Blocks of 4 MiB, one scanned while the next gathers, and 4 waiting pieces: a fetch of the
263 MB benchmark file peaks at 120-129 MiB, as the serial scan with 16 waiting pieces did
(``benchmarks/bench_price_fetch.py``, 2026-12-02). Each block is a Polars scan of its own,
about 1.3 ms of CPU besides the parse (the file's parse took 0.50 s of CPU in 2 MiB blocks,
0.42 s in 4 MiB ones, 0.38 s in 16 MiB ones): 3 MiB blocks peaked at 118-121 MiB, 2 MiB ones
at 115-119 MiB, 16 MiB ones (and 32 pieces) at 172 MiB."""
_THREAD = "trntui-offer-blocks"
_SCAN_THREAD = "trntui-offer-scan"
_SCANS_AHEAD = 1
"""Block scans left running while the next block is cut: one is parsed while the next
gathers; a second one gained nothing measurable and held 4-5 MiB more."""
_WAITING_PIECES = 4
"""Pieces (at most 1 MB each from a download) that may wait for the thread; a caller that is
faster waits (counting the piece it holds first), so memory stays bounded. 16 (before the
scan ran one block ahead) held 6-8 MiB more and was no faster."""
_Piece = tuple[bytes, int | None, int | None]
"""A piece of the file, with its quotes and line breaks when the caller counted them."""
_END: _Piece = (b"", 0, 0)
_LONGEST_RECORD_BLOCKS = 4
_LONGEST_RECORD_BYTES = 64 * 1024
"""A record still open after this many blocks (and at least this many bytes) is refused: an
unclosed quote, not a value; holding it would hold the rest of the file."""


class _Scan(threading.Thread):
    """One block's scan (``Query.scan``), run in a daemon thread of its own (as the thread
    that cuts the blocks is one: neither holds the interpreter's exit); ``result`` waits for
    it and gives its rows or raises its fault."""

    def __init__(self, scan: Callable[..., Any], *args: Any) -> None:
        super().__init__(name=_SCAN_THREAD, daemon=True)
        self._scan, self._args = scan, args
        self._rows: Any = None
        self._error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self._rows = self._scan(*self._args)
        except BaseException as error:  # raised by result, in the cutting thread
            self._error = error
        finally:
            del self._args  # the block's bytes, no longer needed

    def result(self) -> Any:
        self.join()
        if self._error is not None:
            raise self._error
        return self._rows


class OfferRows:
    """The rows ``plan``'s query wants from an offer file whose bytes come in pieces, in
    order: ``add`` each piece (as read, or as it arrives from the network), ``finish``, then
    ``close`` (always: it stops the thread).

    The caller's thread hands the pieces over; when the thread is behind (no room for the
    piece), the caller first counts the piece's quotes and line breaks, work it would
    otherwise wait through. A thread of its own cuts the pieces into the header and blocks of
    whole records and starts a thread for each block that scans it with the query, one block
    behind: Polars releases the interpreter while it parses, so the quotes of the next
    block are counted meanwhile, and a download is filtered while it arrives. A fault in
    the file (no header, a block that is not CSV, a record running on for more than
    ``_LONGEST_RECORD_BLOCKS`` blocks: an unclosed quote, no record after the header) is
    raised by ``finish`` (the first in the file first), never by ``add``: the download that
    feeds it goes on, and the thread stops taking pieces. So ``finish`` returning is the
    proof that the whole file parses and has rows, which a download must give before it
    replaces a cached copy (``pricing.client``). ``add`` waits while pieces are waiting for
    the thread; every 0.1 s of waiting it calls ``check`` (the download's cancel and deadline
    checks: what it raises, ``add`` raises).
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
        self._handoff: Queue[_Piece] = Queue(maxsize=_WAITING_PIECES)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=_THREAD, daemon=True)
        """Started by the first piece, or by ``finish`` (a download answered "not modified"
        never starts it)."""

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        if self._handoff.full() and self._thread.is_alive():
            # The thread is behind: count here rather than wait idle (not once it has ended
            # on a fault: the count would be for nothing).
            self._put((piece, piece.count(b'"'), count_lines(piece)))
        else:
            self._put((piece, None, None))

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

    def _put(self, piece: _Piece, *, checked: bool = True) -> None:
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
        for piece, _quotes, _lines in pieces:
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
        scans: list[_Scan] = []
        try:
            return self._scan_blocks(pieces, header, rest, query, scans)
        finally:
            for each in scans:  # a scan left running when a fault or close stopped the rest
                each.join()

    def _scan_blocks(
        self, pieces: Any, header: OfferHeader, rest: bytes, query: Query, scans: list[_Scan]
    ) -> Any:
        """Cut the pieces into blocks and scan each in a thread of its own, one block behind:
        while Polars parses a block (the interpreter released), this thread gathers the next
        and counts its quotes."""
        columns = tuple(header.columns)
        parts: list[Any] = []
        line = header.first_line
        blocks = RecordBlocks(self._block_bytes)

        def scan(block: bytes) -> None:
            nonlocal line
            while len(scans) >= _SCANS_AHEAD:
                parts.append(scans.pop(0).result())
            scans.append(_Scan(query.scan, block, columns, line, self.name))
            line += blocks.lines

        def scanned() -> list[Any]:
            """All blocks' rows: an earlier block's fault is raised before a later one's."""
            while scans:
                parts.append(scans.pop(0).result())
            return parts

        longest = _LONGEST_RECORD_BLOCKS * self._block_bytes
        for piece, quotes, lines in itertools.chain(((rest, None, None),), pieces):
            if (block := blocks.add(piece, quotes, lines)) is not None:
                scan(block)
            elif blocks.waiting > max(longest, _LONGEST_RECORD_BYTES):
                scanned()
                raise PricingFormatError(
                    f"{self.name}:{line}: a record runs on for more than "
                    f"{blocks.waiting:,} bytes (an unclosed quote?)"
                )
        if self._stop.is_set():
            return None
        last = blocks.rest()
        if last.strip():
            scan(last)
        if not scanned():
            raise PricingFormatError(f"{self.name}: a header and no rows: not a whole price list")
        return query.combine(parts)
