"""What can go wrong while fetching the AWS Price List, as typed errors a person can act on.

Every fault the network or the server can cause is a ``PricingError`` (a ``UserError``), so the
CLI prints it and the UI shows it without a traceback; the last good cached file stays in place.
"""

from __future__ import annotations

from trntui.core.errors import UserError


class PricingError(UserError):
    """Base class for price list problems; ``url`` names what was being fetched, if anything."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        self.url = url
        super().__init__(message)


class InsecurePricingURLError(PricingError):
    """Plain http (or another scheme) for a host that is not this machine."""


class PricingNetworkError(PricingError):
    """No answer in time, connection refused or reset, DNS failure."""


class PricingDeadlineError(PricingNetworkError):
    """The whole fetch did not finish within its deadline (a server that drips bytes)."""


class PricingTooSlowError(PricingNetworkError):
    """A download brought less than the low-speed limit over its time (a server that drips)."""


class PricingSettingsError(PricingError):
    """A pricing setting (deadline, ...) given on the command line or in the environment is
    not usable."""


class PricingHTTPError(PricingError):
    """The server answered with an error status (4xx/5xx) or an unexpected redirect."""

    def __init__(self, message: str, *, url: str | None = None, status_code: int) -> None:
        self.status_code = status_code
        super().__init__(message, url=url)


class PricingFormatError(PricingError):
    """The body is not what the price list publishes: HTML, truncated, wrong header or JSON."""


class PricingTooLargeError(PricingError):
    """The body is larger than the configured maximum size."""


class PricingCancelledError(PricingError):
    """The caller asked to stop; nothing partial was kept."""


class PricingNameError(PricingError):
    """A region or offer code that cannot name a folder of the cache (``../x``, a space)."""


class RegionNotInPriceListError(PricingError):
    """The offer's region index does not list the region (unknown code, or not offered)."""


class NoCachedPriceListError(PricingError):
    """Offline use was asked for, but no price list file was ever downloaded for this region."""
