"""What the price list client checks in a server's answer before it keeps the body.

The status (200 only; redirects are not followed), the content type (no web page), the framing
(a body whose end only a closed connection marks is refused), the stated length, the gzip
decoding in bounded pieces, and the region index document (both of its shapes). Used by
``pricing.client``; see its docstring for what a hostile or broken server cannot do.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx

from trntui.pricing.cache import load_json_bounded
from trntui.pricing.errors import PricingFormatError, PricingHTTPError


def check_framed(response: httpx.Response, url: str) -> None:
    """Refuse a body whose end only the closing connection marks: a cut one looks the same."""
    if not response.http_version.upper().startswith("HTTP/1"):
        return  # HTTP/2 frames every body
    if "Content-Length" in response.headers:
        return
    if "chunked" in response.headers.get("Transfer-Encoding", "").lower():
        return
    raise PricingFormatError(
        f"{url} did not say how long its body is (no Content-Length, not chunked): a download "
        "cut off by a dropped connection could not be told from a whole one; nothing was "
        "replaced",
        url=url,
    )


_PIECE_BYTES = 1024 * 1024


def decoded_body(decoder: zlib._Decompress | None, raw: bytes) -> Iterator[bytes]:
    """``raw`` as it goes to the file: as it is, or gunzipped in pieces of at most 1 MB (so a
    bomb never sits whole in memory). Data after the gzip stream's end is refused."""
    if decoder is None:
        if raw:
            yield raw
        return
    data = raw
    while data:
        if decoder.eof:
            raise zlib.error("data after the end of the gzip stream")
        piece = decoder.decompress(data, _PIECE_BYTES)
        data = decoder.unconsumed_tail
        if piece:
            yield piece


def content_length(response: httpx.Response) -> int | None:
    """The body's length on the wire (compressed, when it is), as the server stated it."""
    value = response.headers.get("Content-Length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def check_status(response: httpx.Response, url: str) -> None:
    status = response.status_code
    if status == 200:
        return
    if 300 <= status < 400:
        where = response.headers.get("Location", "?")
        message = f"{url} redirected ({status}) to {where}; redirects are not followed"
    elif status == 404:
        message = f"{url} was not found (404); is the pricing URL right?"
    elif status in {403, 429}:
        message = f"{url} refused the request ({status}); try again later"
    elif status >= 500:
        message = f"the price list server failed ({status}) for {url}; try again later"
    else:
        message = f"{url} answered {status}"
    raise PricingHTTPError(message, url=url, status_code=status)


def check_not_html(response: httpx.Response, url: str) -> None:
    content_type = response.headers.get("Content-Type", "").lower()
    if "html" in content_type:
        raise PricingFormatError(
            f"{url} returned a web page ({content_type}) instead of price list data "
            "(a proxy or login page?)",
            url=url,
        )


def load_region_index(path: Path) -> dict[str, str | None]:
    """Each region's version URL (None when its entry has none).

    Two shapes: an offer's index keys ``regions`` by region code, each entry with a
    ``currentVersionUrl``; the Savings Plans index lists ``regions`` as entries with a
    ``regionCode`` and a ``versionUrl`` (Local Zones have their own entries: codes are taken as
    they are, never by prefix).
    """
    try:
        document = load_json_bounded(path.read_bytes())
    except (OSError, ValueError) as error:
        raise PricingFormatError(f"{path}: the region index is not valid JSON ({error})") from None
    regions = document.get("regions") if isinstance(document, dict) else None
    if isinstance(regions, dict):
        entries = [(code, entry, "currentVersionUrl") for code, entry in regions.items()]
    elif isinstance(regions, list):
        entries = [
            (entry.get("regionCode"), entry, "versionUrl")
            for entry in regions
            if isinstance(entry, dict)
        ]
    else:
        raise PricingFormatError(f"{path}: the region index has no 'regions' table or list")
    found: dict[str, str | None] = {}
    for code, entry, key in entries:
        url = entry.get(key) if isinstance(entry, dict) else None
        if not isinstance(code, str):
            continue
        url = str(url) if url else None
        if code in found and found[code] != url:
            raise PricingFormatError(f"{path}: the region index lists {code!r} twice")
        found[code] = url
    return found
