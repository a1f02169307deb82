"""The on-disk cache of price list files, with what is needed to re-validate them.

Each cached file has a JSON sidecar (``<name>.meta.json``) holding its URL, ``ETag``,
``Last-Modified`` and the time the server last confirmed it (a 200 or a 304). The data file is
replaced first and the sidecar second, so after a crash in between the sidecar can only be
older than the data: the next conditional request then misses and downloads again, never the
reverse (a sidecar claiming freshness for an old file).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trntui.core.safe_json import MAX_JSON_DEPTH, json_depth_exceeds
from trntui.pricing.errors import PricingNameError
from trntui.store.atomic import atomic_write_text

_META_SUFFIX = ".meta.json"
_MAX_META_BYTES = 64 * 1024


@dataclass(frozen=True)
class CachedFile:
    """A downloaded file and its validators. ``retrieved_at`` = last confirmed by the server."""

    path: Path
    url: str
    retrieved_at: datetime
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False
    """True when this copy was just confirmed by a 304 (not stored in the sidecar)."""

    def age_s(self, now: datetime | None = None) -> float:
        now = now or datetime.now(UTC)
        return (now - self.retrieved_at).total_seconds()


_CACHE_NAME = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
"""An offer code (``AmazonEC2``) or a region code (``us-east-1``, ``us-gov-west-1``): the
names that become folders of the cache. Nothing else may: no separator, no dot, no space."""


def cache_name(value: str, what: str) -> str:
    """``value`` when it may name a folder of the cache, else ``PricingNameError``.

    Held here, where names become paths, whatever they came from (the command line, a form, a
    server's index), so no name can lead a write or a delete outside the cache.
    """
    if not isinstance(value, str) or not _CACHE_NAME.fullmatch(value):
        raise PricingNameError(
            f"{value!r} is not a usable {what} code: the price cache keeps a folder per {what} "
            "and takes letters, digits and single hyphens only"
        )
    return value


def offer_csv_path(cache_dir: Path, offer_code: str, region: str) -> Path:
    offer = cache_name(offer_code, "offer")
    return Path(cache_dir) / offer / cache_name(region, "region") / "index.csv"


def region_index_path(cache_dir: Path, offer_code: str) -> Path:
    return Path(cache_dir) / cache_name(offer_code, "offer") / "region_index.json"


def meta_path(data_path: Path) -> Path:
    return data_path.with_name(data_path.name + _META_SUFFIX)


def read_cached(data_path: Path) -> CachedFile | None:
    """The cached file with its sidecar, or None when either is missing or unreadable."""
    sidecar = meta_path(data_path)
    if not data_path.is_file() or not sidecar.is_file():
        return None
    try:
        data = sidecar.read_bytes()
        if len(data) > _MAX_META_BYTES:
            return None
        meta = load_json_bounded(data)
        if not isinstance(meta, dict):
            return None
        return CachedFile(
            path=data_path,
            url=str(meta["url"]),
            retrieved_at=datetime.fromisoformat(meta["retrieved_at"]),
            etag=meta.get("etag"),
            last_modified=meta.get("last_modified"),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_meta(cached: CachedFile, *, root: Path) -> None:
    """Replace the sidecar of ``cached`` (inside the cache folder ``root``, no link followed)."""
    document = {
        "url": cached.url,
        "retrieved_at": cached.retrieved_at.isoformat(),
        "etag": cached.etag,
        "last_modified": cached.last_modified,
    }
    atomic_write_text(meta_path(cached.path), json.dumps(document, indent=2) + "\n", root=root)


def load_json_bounded(data: bytes, *, max_depth: int = MAX_JSON_DEPTH) -> object:
    """``json.loads`` for files from the network or the cache: nesting deeper than
    ``max_depth`` is a ``ValueError`` found by ``core.safe_json``'s scan before parsing, never a
    RecursionError."""
    if json_depth_exceeds(data.decode("utf-8", "replace"), max_depth):
        raise ValueError(f"nested more than {max_depth} levels deep")
    return json.loads(data)
