"""Price quotes: what an instance hour (or a side-service unit) costs, and where that came from.

A quote keeps its provenance (offer file, SKU, rate code, publication date, retrieval time) so an
estimate can be redone later and audited. Three honesty rules live here, because every screen and
command must apply them the same way:

- an instance type with no row for the region is **not offered** there; it never becomes $0;
  and it is called not offered only when a price-list lookup said so (``PriceLookup``, kept
  with its date): a project that simply has no quote yet says that instead;
- a Trainium3 (``trn3*``) type missing from the price list is **not in the price list yet**: the
  user adds a manual quote, nothing is filled in from another region or instance;
- a quote older than a maximum age, from another region or for another purchase option than the
  target is **flagged** (``quote_flags``) so the estimate can show it is not current.

The package, in the order data flows (each module imports only the ones above it):

1. ``options``: the purchase options by name (``ON_DEMAND``, reserved terms, Savings Plans,
   ``is_known_purchase_option``), the error a broken quote raises (``InvalidQuoteError``) and
   the checks every amount and date passes (``check_amount``).
2. ``quote``: the price of one instance type (``PriceQuote``), checked as it is made; its
   accelerators and their hourly price (``accelerators_per_instance``,
   ``usd_per_accelerator_hour``): the price list's count, else ``core/hardware.py``'s table.
3. ``rates``: side-service prices (``SideService``, ``RateTier``, ``ServiceRate``).
4. ``flags``: the one plausibility band of every price-like number (``implausible_hourly_usd``,
   ``implausible_rate_usd``; of a quote or rate: ``implausible_price``, ``implausible_rate``)
   and why a quote should not be used as-is (``quote_flags``).
5. ``lookup``: which quote a target uses and why, or why there is none (``find_quote``,
   ``missing_quote``, ``PriceLookup``), over a project's ``QuoteBook``.

Every public name is re-exported here: import from ``trntui.core.quotes``.
"""

from __future__ import annotations

from trntui.core.quotes.flags import (
    PLAUSIBLE_SIDE_RATE_FACTOR,
    PLAUSIBLE_USD_PER_ACCELERATOR_HOUR,
    PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR,
    SIDE_RATE_USD_PER_UNIT,
    FlagKind,
    QuoteFlag,
    implausible_hourly_usd,
    implausible_price,
    implausible_rate,
    implausible_rate_usd,
    quote_flags,
)
from trntui.core.quotes.lookup import (
    LookupStatus,
    PriceLookup,
    QuoteBook,
    QuoteLookup,
    find_quote,
    missing_quote,
)
from trntui.core.quotes.options import (
    CAPACITY_BLOCK,
    DEFAULT_MAX_AGE_DAYS,
    HOURS_PER_YEAR,
    NEGOTIATED,
    ON_DEMAND,
    SAVINGS_PLAN_OFFER,
    SAVINGS_PLANS,
    SPOT,
    InvalidQuoteError,
    check_amount,
    is_known_purchase_option,
    is_savings_plan,
    is_trainium3,
    purchase_option_help,
    reserved_option,
    reserved_term_years,
    savings_plan_option,
    term_years,
)
from trntui.core.quotes.quote import PriceQuote, accelerators_per_instance, usd_per_accelerator_hour
from trntui.core.quotes.rates import RateTier, ServiceRate, SideService

__all__ = [
    "CAPACITY_BLOCK",
    "DEFAULT_MAX_AGE_DAYS",
    "HOURS_PER_YEAR",
    "NEGOTIATED",
    "ON_DEMAND",
    "PLAUSIBLE_SIDE_RATE_FACTOR",
    "PLAUSIBLE_USD_PER_ACCELERATOR_HOUR",
    "PLAUSIBLE_USD_PER_INSTANCE_HOUR_FLOOR",
    "SAVINGS_PLANS",
    "SAVINGS_PLAN_OFFER",
    "SIDE_RATE_USD_PER_UNIT",
    "SPOT",
    "FlagKind",
    "InvalidQuoteError",
    "LookupStatus",
    "PriceLookup",
    "PriceQuote",
    "QuoteBook",
    "QuoteFlag",
    "QuoteLookup",
    "RateTier",
    "ServiceRate",
    "SideService",
    "accelerators_per_instance",
    "check_amount",
    "find_quote",
    "implausible_hourly_usd",
    "implausible_price",
    "implausible_rate",
    "implausible_rate_usd",
    "is_known_purchase_option",
    "is_savings_plan",
    "is_trainium3",
    "missing_quote",
    "purchase_option_help",
    "quote_flags",
    "reserved_option",
    "reserved_term_years",
    "savings_plan_option",
    "term_years",
    "usd_per_accelerator_hour",
]
