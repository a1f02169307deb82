"""Where the price list comes from, where it is cached, and the limits every request obeys.

The base URL can point at a mirror or a local test server (``--pricing-url`` or
``TRNTUI_PRICING_URL``). Prices decide money, so plain http is accepted only for this machine
(loopback), where nobody on the path can alter the file.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
import platformdirs

from trntui.pricing.errors import InsecurePricingURLError, PricingSettingsError

DEFAULT_PRICING_URL = "https://pricing.us-east-1.amazonaws.com"
PRICING_URL_ENV = "TRNTUI_PRICING_URL"
CACHE_DIR_ENV = "TRNTUI_CACHE_DIR"
DEADLINE_ENV = "TRNTUI_PRICING_DEADLINE_S"
SPEED_LIMIT_ENV = "TRNTUI_PRICING_SPEED_LIMIT_BPS"
SPEED_TIME_ENV = "TRNTUI_PRICING_SPEED_TIME_S"

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_OFFER_BYTES = 4 * 1024**3  # a regional EC2 offer file is a few hundred MB
DEFAULT_MAX_INDEX_BYTES = 32 * 1024**2
DEFAULT_DEADLINE_S = 900.0
"""The whole fetch (every file of it) ends by then: 15 minutes is a regional EC2 file at about
0.5 MB/s. A server that keeps sending a byte now and then cannot hold the fetch longer."""
DEFAULT_SPEED_LIMIT_BPS = 1024.0
DEFAULT_SPEED_TIME_S = 30.0
"""The low-speed limit, as curl's ``--speed-limit``/``--speed-time``: a download that brings
fewer than 1 KB a second over 30 seconds is given up (a server that sends a byte a second
within 30 s, not at the deadline). A regional EC2 file needs about 0.5 MB/s to finish within
the deadline at all, so no download that could succeed is cut."""
DEFAULT_MAX_EXPANSION = 100
"""A compressed body may decode to at most this many times its size (a price list CSV
compresses about 10 to 30 times; a decompression bomb 1,000 times), beyond a first 16 MB."""

_LOOPBACK_NAMES = {"localhost"}


def check_pricing_url(url: str) -> str:
    """Return ``url`` without a trailing slash, or raise if it is not safe to fetch prices from."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as error:
        raise InsecurePricingURLError(f"not a valid pricing URL: {url!r} ({error})") from None
    host = parsed.host
    if parsed.scheme == "https" and host:
        return url.rstrip("/")
    if parsed.scheme == "http" and host and _is_loopback(host):
        return url.rstrip("/")
    raise InsecurePricingURLError(
        f"refusing pricing URL {url!r}: use https, or http only for this machine "
        "(127.0.0.1, ::1 or localhost)",
        url=url,
    )


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    override = environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_cache_dir("trntui"))


@dataclass(frozen=True)
class PricingSettings:
    base_url: str = DEFAULT_PRICING_URL
    cache_dir: Path | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_offer_bytes: int = DEFAULT_MAX_OFFER_BYTES
    max_index_bytes: int = DEFAULT_MAX_INDEX_BYTES
    deadline_s: float = DEFAULT_DEADLINE_S
    """Seconds the whole fetch may take (``--deadline``, ``TRNTUI_PRICING_DEADLINE_S``)."""
    speed_limit_bps: float = DEFAULT_SPEED_LIMIT_BPS
    """Bytes a second a download must bring over ``speed_time_s`` (0: no limit;
    ``TRNTUI_PRICING_SPEED_LIMIT_BPS``)."""
    speed_time_s: float = DEFAULT_SPEED_TIME_S
    """Seconds over which the speed is measured (``TRNTUI_PRICING_SPEED_TIME_S``)."""
    max_expansion: int = DEFAULT_MAX_EXPANSION
    deadline_at: float | None = None
    """The fetch's end on ``time.monotonic()``, shared by every file of one fetch
    (``started``); None: each client starts its own ``deadline_s`` when it is made."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", check_pricing_url(self.base_url))
        cache_dir = default_cache_dir() if self.cache_dir is None else Path(self.cache_dir)
        object.__setattr__(self, "cache_dir", cache_dir)
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if not self.deadline_s > 0 or self.deadline_s == float("inf"):
            raise PricingSettingsError(
                f"the fetch deadline must be a number of seconds above 0, got {self.deadline_s!r}"
            )
        if not 0 <= self.speed_limit_bps < float("inf"):
            raise PricingSettingsError(
                f"the low-speed limit ({SPEED_LIMIT_ENV}) must be 0 (no limit) or more bytes a "
                f"second, got {self.speed_limit_bps!r}"
            )
        if not 0 < self.speed_time_s < float("inf"):
            raise PricingSettingsError(
                f"the low-speed time ({SPEED_TIME_ENV}) must be a number of seconds above 0, "
                f"got {self.speed_time_s!r}"
            )

    def started(self) -> PricingSettings:
        """These settings with the fetch's deadline counting from now (one for all its files)."""
        return dataclasses.replace(self, deadline_at=time.monotonic() + self.deadline_s)

    @property
    def cache_path(self) -> Path:
        assert self.cache_dir is not None
        return Path(self.cache_dir)

    @classmethod
    def from_env(
        cls,
        pricing_url: str | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        **overrides: object,
    ) -> PricingSettings:
        """Settings from ``--pricing-url``, else the environment, else the defaults."""
        environ = os.environ if environ is None else environ
        url = pricing_url or environ.get(PRICING_URL_ENV) or DEFAULT_PRICING_URL
        overrides.setdefault("cache_dir", default_cache_dir(environ))
        for name, key in (
            (DEADLINE_ENV, "deadline_s"),
            (SPEED_LIMIT_ENV, "speed_limit_bps"),
            (SPEED_TIME_ENV, "speed_time_s"),
        ):
            text = environ.get(name)
            if key in overrides or not text:
                continue
            try:
                overrides[key] = float(text)
            except ValueError:
                raise PricingSettingsError(f"{name}={text!r} is not a number") from None
        return cls(base_url=url, **overrides)  # type: ignore[arg-type]
