"""HTTP access to the AWS Price List Bulk API, through the local cache.

Every download is conditional when a cached copy exists (``If-None-Match`` /
``If-Modified-Since``; a 304 reuses the file and only refreshes its confirmation time). A body is
streamed to a temporary file in the cache folder, checked (complete, within the size limit, the
expected format), and only then renamed over the cached file, so a failed, partial or cancelled
download never replaces a good one. Each piece of an offer file is also handed, as it is
written, to the thread that filters it by the extraction's plan (``extract.records.OfferRows``):
that the whole file parsed and has rows is part of the check before the rename
(``accept_offer``, which also measures it against the cached copy of the same version), so the
file is parsed once and its rows are ready when it is kept. A cached copy is used only if it
passes the same checks (``read_cached_offer``); one that does not, on a 304, is downloaded
whole. Redirects are not followed: the price list does not use them, and following one could
leave the checked host.

The checks of a server's answer (status, content type, framing, gzip decoding in bounded
pieces, the region index) are in ``pricing.responses``.

What a hostile or broken server cannot do:

- hold a fetch forever: one deadline (``PricingSettings.deadline_s``, 15 minutes by default)
  covers every file of a fetch, checked between the pieces of a body as they arrive and
  bounding each read's timeout; and a body that brings less than 1 KB a second over 30 s is
  given up sooner (``_LowSpeed``, curl's ``--speed-limit``/``--speed-time``): a server
  dripping a byte a second is cut off within the minute;
- pass off a cut body as whole: a body must be framed (``Content-Length`` or chunked, which the
  HTTP layer checks); a close-delimited one, whose end cannot be told from a cut, is refused;
  an offer file's last record must also be whole (``check_offer_complete``), and a file cut at
  a record boundary, its length to match, must not be much smaller than the cached copy of its
  version (``check_not_shrunk``) nor be a header alone;
- replace a good copy with one that does not parse (a byte that is not UTF-8, a quote left
  open), which would leave every later fetch failing on the cached copy;
- fill the disk: the decoded size is capped (``max_offer_bytes``) and so is how far a
  compressed body may expand (``max_expansion`` times its size beyond 16 MB);
- crash the parser: JSON is refused beyond ``core.safe_json.MAX_JSON_DEPTH`` levels of nesting;
- leave partial files: the temporary file is removed on any failure, and one a killed process
  left behind is removed by the next fetch (a running download holds a lock on its file).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from trntui.core.errors import StorageError, UserError
from trntui.core.quotes import SAVINGS_PLAN_OFFER
from trntui.pricing import extract  # its names load their module when first used
from trntui.pricing.cache import (
    CachedFile,
    meta_path,
    offer_csv_path,
    read_cached,
    region_index_path,
    write_meta,
)
from trntui.pricing.errors import (
    PricingCancelledError,
    PricingDeadlineError,
    PricingError,
    PricingFormatError,
    PricingNetworkError,
    PricingTooLargeError,
    PricingTooSlowError,
    RegionNotInPriceListError,
)
from trntui.pricing.extract.offer import OfferPreamble, check_not_shrunk, checked_offer
from trntui.pricing.extract.records import OfferRows, Plan
from trntui.pricing.responses import (
    check_framed,
    check_not_html,
    check_status,
    content_length,
    decoded_body,
    load_region_index,
)
from trntui.pricing.settings import (
    SPEED_LIMIT_ENV,
    SPEED_TIME_ENV,
    PricingSettings,
    check_pricing_url,
)
from trntui.store.atomic import open_folder

ProgressCallback = Callable[[int, int | None], None]
"""Called with (bytes downloaded so far, total bytes if the server said)."""
CancelCheck = Callable[[], bool]
"""Returns True when the caller wants the download abandoned."""

_TMP_PREFIX = ".trntui-download-"
_EXPANSION_FLOOR_BYTES = 16 * 1024**2
_ATOMIC_PREFIX = ".trntui-tmp-"  # store/atomic.py's temporary files (the cache sidecars)
_SIDECAR_GRACE_S = 60.0
_PARTIAL_GRACE_S = 5.0
"""A temporary file younger than this is left alone even if unlocked (its download may have
just created it and not yet taken its lock)."""
_USER_AGENT = "trntui (price lookup)"


@dataclass(frozen=True)
class OfferFile:
    """A validated offer CSV in the cache, its metadata, and whether the server was reached."""

    offer_code: str
    region: str
    cached: CachedFile
    preamble: OfferPreamble
    not_modified: bool
    rows: Any = None
    """The rows of the plan given to ``offer_file`` (or ``read_cached_offer``): gathered while
    the file downloaded, or read from the cached copy."""


_DOWNLOADED = "the downloaded file"
"""How a download's faults name it: it never reached the cache, so no path would help."""


def accept_offer(
    path: Path, offer_code: str, rows: OfferRows, cached: Path | None
) -> OfferPreamble:
    """The one check a downloaded offer file passes before it may replace the cached copy
    (``cached``; None: none to compare with), else a ``PricingFormatError`` saying why (the
    cached copy is then kept):

    - its preamble reads and its last record is whole (``checked_offer``);
    - it parses whole and has rows: ``rows``, which scanned it while it downloaded, finishes
      (so the file is parsed once, and its rows are ready when it is kept);
    - it is not much smaller than the cached copy of the same version (``check_not_shrunk``).
    """
    preamble = checked_offer(path, offer_code)
    rows.finish()
    if cached is not None:
        check_not_shrunk(path, preamble, cached, offer_code)
    return preamble


def read_cached_offer(path: Path, offer_code: str, plan: Plan) -> tuple[OfferPreamble, Any]:
    """The preamble and ``plan``'s rows of a cached copy, which must pass what a download
    passed to be kept (it reads, it is whole, it parses, it has rows), else a
    ``PricingFormatError`` (without a ``url``: the copy's fault) naming the file and line."""
    return checked_offer(path, offer_code), extract.scan_offer_file(path, plan)


def offer_csv_url(base_url: str, version_url: str) -> str:
    """The region's CSV: the ``currentVersionUrl`` path with ``.json`` replaced by ``.csv``.

    The index gives a path from the host root; it is appended to the base URL (not resolved
    against it) so a mirror under a path prefix keeps working. A full URL is accepted only if
    it passes the same https/loopback check as the base URL.
    """
    csv_path = re.sub(r"\.json$", ".csv", version_url.strip())
    if "://" in csv_path:
        return check_pricing_url(csv_path)
    return f"{base_url}/{csv_path.lstrip('/')}"


class PriceListClient:
    """Downloads region indexes and offer files into the cache. Not thread-safe; one per worker."""

    def __init__(
        self, settings: PricingSettings, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.settings = settings
        self._deadline = (
            settings.deadline_at
            if settings.deadline_at is not None
            else time.monotonic() + settings.deadline_s
        )
        self._client = httpx.Client(
            timeout=httpx.Timeout(settings.timeout_s),
            follow_redirects=False,
            headers={"User-Agent": _USER_AGENT, "Accept-Encoding": "gzip"},
            transport=transport,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> PriceListClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def region_index_url(self, offer_code: str) -> str:
        """The offer's region index; the Savings Plans offer has its own tree (``savingsPlan``)."""
        tree = "savingsPlan" if offer_code == SAVINGS_PLAN_OFFER else "offers"
        return f"{self.settings.base_url}/{tree}/v1.0/aws/{offer_code}/current/region_index.json"

    def offer_csv_url(self, offer_code: str, region: str) -> str:
        """Look the region up in the offer's region index and return its CSV URL."""
        target = region_index_path(self.settings.cache_path, offer_code)
        remove_partial_downloads(self.settings.cache_path, target.parent)
        cached = self.download(
            self.region_index_url(offer_code),
            target,
            max_bytes=self.settings.max_index_bytes,
            validate=load_region_index,
        )
        regions = load_region_index(cached.path)
        version_url = regions.get(region)
        if not version_url:
            raise RegionNotInPriceListError(
                f"{offer_code} has no price list for region {region!r}; check the region code "
                f"(the index lists {len(regions)} regions)",
                url=cached.url,
            )
        return offer_csv_url(self.settings.base_url, version_url)

    def offer_file(
        self,
        offer_code: str,
        region: str,
        *,
        progress: ProgressCallback | None = None,
        cancel: CancelCheck | None = None,
        plan: Plan | None = None,
    ) -> OfferFile:
        """Bring the region's offer CSV up to date in the cache and return it with ``plan``'s
        rows (``OfferFile.rows``): filtered from a new file as it arrives, else read from the
        cached copy the server confirmed. Without a plan the file is still parsed whole (and
        no row kept): no file replaces the cached copy unparsed."""
        target = offer_csv_path(self.settings.cache_path, offer_code, region)  # names checked
        url = self.offer_csv_url(offer_code, region)
        remove_partial_downloads(self.settings.cache_path, target.parent)
        wanted = plan or (lambda columns: extract.parse_only(columns))

        def waiting() -> None:  # while the scanning thread is behind (OfferRows.add)
            self._time_left(url)
            if cancel is not None and cancel():
                raise PricingCancelledError(f"download of {url} cancelled", url=url)

        def fetch(*, measured: bool) -> OfferFile:
            rows = OfferRows(_DOWNLOADED, wanted, check=waiting)
            kept: list[OfferPreamble] = []
            try:
                cached = self.download(
                    url,
                    target,
                    max_bytes=self.settings.max_offer_bytes,
                    validate=lambda path: kept.append(
                        accept_offer(path, offer_code, rows, target if measured else None)
                    ),
                    progress=progress,
                    cancel=cancel,
                    tee=rows.add,
                )
                if cached.not_modified:
                    preamble, found = read_cached_offer(cached.path, offer_code, wanted)
                else:
                    preamble, found = kept[0], rows.finish()
            finally:
                rows.close()
            return OfferFile(offer_code, region, cached, preamble, cached.not_modified, found)

        try:
            return fetch(measured=True)
        except PricingFormatError as damage:
            if damage.url is not None:  # the download's fault, not the cached copy's
                raise
            # The server says "unchanged" but the cached copy does not read: fetch it whole,
            # measured against nothing (a damaged copy is no measure of a good one).
            meta_path(target).unlink(missing_ok=True)
            return fetch(measured=False)

    def download(
        self,
        url: str,
        target: Path,
        *,
        max_bytes: int,
        validate: Callable[[Path], object],
        progress: ProgressCallback | None = None,
        cancel: CancelCheck | None = None,
        tee: Callable[[bytes], None] | None = None,
    ) -> CachedFile:
        """Fetch ``url`` into ``target`` (conditionally), or raise a ``PricingError``; ``tee``
        is given every piece of a body as it is written (not a cached file's bytes)."""
        previous = read_cached(target)
        headers = {}
        if previous is not None and previous.url == url:
            if previous.etag:
                headers["If-None-Match"] = previous.etag
            if previous.last_modified:
                headers["If-Modified-Since"] = previous.last_modified
        left = self._time_left(url)
        timeout = httpx.Timeout(min(self.settings.timeout_s, left))
        try:
            with self._client.stream("GET", url, headers=headers, timeout=timeout) as response:
                if response.status_code == 304 and previous is not None and headers:
                    confirmed = CachedFile(
                        path=target,
                        url=url,
                        retrieved_at=datetime.now(UTC),
                        etag=response.headers.get("ETag", previous.etag),
                        last_modified=response.headers.get("Last-Modified", previous.last_modified),
                        not_modified=True,
                    )
                    write_meta(confirmed, root=self.settings.cache_path)
                    return confirmed
                check_status(response, url)
                check_not_html(response, url)
                check_framed(response, url)
                self._stream_to_cache(
                    response, url, target, max_bytes, validate, progress, cancel, tee
                )
                fetched = CachedFile(
                    path=target,
                    url=url,
                    retrieved_at=datetime.now(UTC),
                    etag=response.headers.get("ETag"),
                    last_modified=response.headers.get("Last-Modified"),
                )
        except httpx.TimeoutException as error:
            if left < self.settings.timeout_s:  # the deadline bounded the wait
                raise self._past_deadline(url) from None
            raise PricingNetworkError(
                f"no answer from {url} within {self.settings.timeout_s:g} s "
                f"({type(error).__name__})",
                url=url,
            ) from None
        except (httpx.RemoteProtocolError, httpx.DecodingError, zlib.error) as error:
            raise PricingFormatError(
                f"the download of {url} was cut off or garbled ({error}); nothing was replaced",
                url=url,
            ) from None
        except httpx.HTTPError as error:
            raise PricingNetworkError(f"could not reach {url}: {error}", url=url) from None
        except OSError as error:  # the cache's disk: full, a file-size limit, a permission
            raise StorageError(str(target), error) from None
        write_meta(fetched, root=self.settings.cache_path)
        return fetched

    def _time_left(self, url: str) -> float:
        """Seconds until the fetch's deadline; past it, a ``PricingDeadlineError``."""
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise self._past_deadline(url)
        return left

    def _past_deadline(self, url: str) -> PricingDeadlineError:
        return PricingDeadlineError(
            f"the price list fetch did not finish within its deadline of "
            f"{self.settings.deadline_s:g} s (still reading {url}); nothing was replaced "
            "(raise it with --deadline or TRNTUI_PRICING_DEADLINE_S)",
            url=url,
        )

    def _stream_to_cache(
        self,
        response: httpx.Response,
        url: str,
        target: Path,
        max_bytes: int,
        validate: Callable[[Path], object],
        progress: ProgressCallback | None,
        cancel: CancelCheck | None,
        tee: Callable[[bytes], None] | None = None,
    ) -> None:
        total = content_length(response)
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding in ("", "identity"):
            decoder = None
            if total is not None and total > max_bytes:
                raise PricingTooLargeError(
                    f"{url} is {total:,} bytes, above the limit of {max_bytes:,}", url=url
                )
        elif encoding in ("gzip", "x-gzip"):
            decoder = zlib.decompressobj(wbits=31)
        else:
            raise PricingFormatError(
                f"{url} came in an encoding that was not asked for ({encoding!r}); only gzip "
                "is accepted",
                url=url,
            )
        expansion = self.settings.max_expansion
        # The cache's folders are walked from its root without following a link, and the
        # temporary file, its lock and the rename are made relative to the open folder.
        root = self.settings.cache_path
        root.mkdir(parents=True, exist_ok=True)  # the user's choice: may be reached by a link
        folder = open_folder(root, target.parent.relative_to(root).parts, create=True)
        assert folder is not None  # created when missing
        tmp_name, fd = _create_download(folder, target.suffix)
        tmp = target.parent / tmp_name
        lock = os.open(tmp_name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        try:
            # "A download is running": see remove_partial_downloads.
            fcntl.flock(lock, fcntl.LOCK_EX)
            written = written_back = 0
            speed = _LowSpeed(self.settings, url)
            with os.fdopen(fd, "wb") as handle:
                # Raw reads, decoded here: the deadline and the caps are checked after every
                # read from the network and every bounded piece of decompressed output.
                for raw in response.iter_raw():
                    received = response.num_bytes_downloaded
                    speed.check(received)
                    for chunk in decoded_body(decoder, raw):
                        self._time_left(url)
                        if cancel is not None and cancel():
                            raise PricingCancelledError(f"download of {url} cancelled", url=url)
                        written += len(chunk)
                        if written > max_bytes:
                            raise PricingTooLargeError(
                                f"{url} is larger than the limit of {max_bytes:,} bytes", url=url
                            )
                        if decoder is not None and written > max(
                            _EXPANSION_FLOOR_BYTES, expansion * received
                        ):
                            raise PricingTooLargeError(
                                f"{url} expands from {received:,} compressed bytes to more "
                                f"than {written:,} ({expansion} times is the limit): a "
                                "decompression bomb or a broken server; nothing was replaced",
                                url=url,
                            )
                        handle.write(chunk)
                        if written - written_back >= _WRITEBACK_BYTES:
                            written_back = _start_writeback(handle, written_back, written)
                        if tee is not None:
                            tee(chunk)
                    if progress is not None:
                        progress(received, total)
                if decoder is not None and not decoder.eof:
                    raise PricingFormatError(
                        f"the gzip stream of {url} ends before its end marker: the download "
                        "was cut off; nothing was replaced",
                        url=url,
                    )
                handle.flush()
                os.fsync(handle.fileno())
            if total is not None and response.num_bytes_downloaded < total:
                raise PricingFormatError(
                    f"the download of {url} stopped at {response.num_bytes_downloaded:,} of "
                    f"{total:,} bytes; nothing was replaced",
                    url=url,
                )
            try:
                validate(tmp)
            except PricingFormatError as error:
                raise PricingFormatError(
                    f"{url} is not a usable price list file: "
                    f"{str(error).replace(str(tmp), _DOWNLOADED)}; nothing was replaced",
                    url=url,
                ) from None
            os.replace(tmp_name, target.name, src_dir_fd=folder, dst_dir_fd=folder)
            with contextlib.suppress(OSError):
                os.fsync(folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name, dir_fd=folder)
            raise
        finally:
            os.close(lock)
            os.close(folder)


_WRITEBACK_BYTES = 16 * 1024 * 1024
"""Every this many bytes written, the disk writes of them are started (``_start_writeback``),
so the fsync before the rename waits for the last few MB, not the whole file."""


def _start_writeback(handle: BinaryIO, start: int, end: int) -> int:
    """Start writing bytes ``start`` to ``end`` of the file being downloaded to disk, without
    waiting for them (``posix_fadvise`` ``DONTNEED`` starts the writeback of dirty pages and
    returns, and drops pages already written from the page cache: the fetch never reads the
    file back), and return ``end``; the fsync at the end still waits for all of it. A 263 MB
    offer file's fsync took 0.10-0.13 s at the end of the fetch when nothing was written
    before it, 5-10 ms when writes were started every 16 MB (2026-12-02). Where the call is
    missing or refused, the fsync does it all, as before."""
    if hasattr(os, "posix_fadvise"):
        handle.flush()
        with contextlib.suppress(OSError):
            os.posix_fadvise(handle.fileno(), start, end - start, os.POSIX_FADV_DONTNEED)
    return end


class _LowSpeed:
    """The low-speed limit, as curl's ``--speed-limit``/``--speed-time``: a body that brings
    fewer than ``speed_limit_bps`` bytes a second on average over a period of
    ``speed_time_s`` is given up (``PricingTooSlowError``), checked as each read returns. A
    server that sends a byte now and then passes the read timeout and would otherwise hold
    the fetch to its deadline; one that sends nothing meets the read timeout."""

    def __init__(self, settings: PricingSettings, url: str) -> None:
        self.limit_bps = settings.speed_limit_bps
        self.period_s = settings.speed_time_s
        self.url = url
        self.since = time.monotonic()
        self.received_then = 0

    def check(self, received: int) -> None:
        now = time.monotonic()
        elapsed = now - self.since
        if not self.limit_bps or elapsed < self.period_s:
            return
        if received - self.received_then < self.limit_bps * elapsed:
            raise PricingTooSlowError(
                f"{self.url} came slower than {self.limit_bps:,.0f} bytes/s for "
                f"{self.period_s:g} s ({(received - self.received_then) / elapsed:,.0f} "
                f"bytes/s): given up, nothing was replaced (set the limit with "
                f"{SPEED_LIMIT_ENV} and {SPEED_TIME_ENV}; 0 bytes/s turns it off)",
                url=self.url,
            )
        self.since, self.received_then = now, received


def _create_download(folder: int, suffix: str) -> tuple[str, int]:
    """A new temporary file in the open ``folder`` (never through a link): name, descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        name = f"{_TMP_PREFIX}{secrets.token_hex(6)}{suffix}"
        try:
            return name, os.open(name, flags, 0o600, dir_fd=folder)
        except FileExistsError:
            continue


def remove_partial_downloads(
    root: Path, folder: Path, *, grace_s: float = _PARTIAL_GRACE_S
) -> list[Path]:
    """Delete temporary files a killed or failed process left in ``folder`` (below the cache
    folder ``root``, reached without following a link: what is elsewhere is not ours).

    A running download holds an exclusive ``flock`` on its temporary file, so a file whose lock
    can be taken has no download behind it and goes (unless younger than ``grace_s``: its
    download may not have locked it yet). A cache sidecar's temporary file (``store/atomic.py``,
    written in milliseconds) goes once it is a minute old. Returns what was removed.
    """
    removed: list[Path] = []
    try:
        opened = open_folder(root, Path(folder).relative_to(root).parts, create=False)
    except UserError:
        return removed  # a link or a file in the way: the download that follows says so
    if opened is None:
        return removed
    now = time.time()
    try:
        for name in os.listdir(opened):
            if name.startswith(_TMP_PREFIX):
                grace = grace_s
            elif name.startswith(_ATOMIC_PREFIX):
                grace = _SIDECAR_GRACE_S
            else:
                continue
            if _remove_unlocked(opened, name, now - grace):
                removed.append(Path(folder) / name)
    finally:
        os.close(opened)
    return removed


def _remove_unlocked(folder: int, name: str, older_than: float) -> bool:
    """Delete ``name`` in ``folder`` when nobody holds its lock and it is older than that."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_mtime >= older_than:
            return False
        os.unlink(name, dir_fd=folder)
        return True
    except OSError:
        return False  # locked: a download is running
    finally:
        os.close(fd)


__all__ = [
    "CancelCheck",
    "OfferFile",
    "PriceListClient",
    "PricingError",
    "ProgressCallback",
    "offer_csv_url",
    "remove_partial_downloads",
]
