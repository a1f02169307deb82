"""Turning an AWS Price List CSV offer file into quotes and side-service rates.

A regional EC2 file is several hundred MB, so it is never loaded whole: it is cut into blocks
of whole records, and Polars scans each block lazily with the filters and the column selection
pushed into the scan, on the streaming engine (see ``scan_offer_file``).
Every value is read as text (prices included) and converted after filtering, so a new column
or an odd value elsewhere in the file cannot break type inference.

Which rows are an on-demand Linux price (all must hold): ``TermType=OnDemand``,
``Tenancy=Shared``, ``Operating System=Linux``, ``CapacityStatus=Used`` (not unused or allocated
capacity reservations), ``Pre Installed S/W`` empty or ``NA`` (no SQL Server etc.),
``MarketOption=OnDemand`` (Capacity Block rows share the file), ``Unit=Hrs``, ``Currency=USD``
and a price above zero. Reserved rows pass the same product filters with ``TermType=Reserved``;
each offer (SKU + OfferTermCode) has an hourly row and, for partial/all upfront, an upfront fee
row (``Unit=Quantity``).

The Savings Plans file (``AWSComputeSavingsPlan``, both Compute and EC2 Instance Savings Plans)
has one row per plan and discounted EC2 product, its rate already the effective hourly rate
(any upfront payment spread over the term). Which rows are a plan's rate for a Linux instance
in the region: ``DiscountedServiceCode=AmazonEC2``, ``DiscountedOperation=RunInstances``,
``DiscountedUsageType`` exactly ``[<prefix>-]BoxUsage:<type>`` (not HostBoxUsage, UnusedBox or
DedicatedUsage), ``Unit=Hrs``, ``Currency=USD``, and the region and type in
``DiscountedRegionCode`` and ``DiscountedInstanceType`` where the file states them.

The package, in the order data flows (each module imports only the ones above it):

1. ``offer``: the file's metadata rows and header, checked (``read_preamble``,
   ``OfferPreamble``, ``check_offer_complete``, both: ``checked_offer``), a file measured
   against the cached copy of its version (``check_not_shrunk``), the provenance
   quotes carry (``OfferSource``) and why a price text is unusable (``price_problem``).
2. ``records``: a file's bytes, in any pieces (read from the cache or as a download arrives),
   cut into its header and blocks of whole records, each block filtered in a thread of its own
   by a plan's query (``RecordBlocks``, ``OfferRows``, ``Plan``; no Polars). ``scan``: the
   queries (``RowQuery``; several from one parse: ``RowQueries``; none: ``parse_only``) and a
   cached file read through them (``scan_offer_file``).
3. ``instances``: on-demand and reserved quotes: which rows (``instance_plan``), the quotes
   they make (``quotes_from_instance_rows``), both from a cached file (``instance_quotes``).
4. ``savings_plans``: Savings Plans quotes, split the same way (``savings_plan_plan``,
   ``quotes_from_savings_plan_rows``, ``savings_plan_quotes``).
5. ``side_services``: side-service rates, split the same way (``side_plan``: one query per
   service of a file, one pass; ``rates_from_side_rows``; ``side_rates``, ``side_services_in``).

Every public name is re-exported here: import from ``trntui.pricing.extract``. Each module
loads when one of its names is first used (``trntui.lazy``): a download checks the preamble and
starts before Polars, which only the queries and the quotes need, has loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trntui.lazy import lazy_exports

if TYPE_CHECKING:
    from trntui.pricing.extract.instances import (
        instance_plan,
        instance_price_rows,
        instance_quotes,
        quotes_from_instance_rows,
    )
    from trntui.pricing.extract.offer import (
        PREAMBLE_KEYS,
        PREAMBLE_ROWS,
        REQUIRED_COLUMNS,
        SAME_VERSION_SHRINK,
        OfferPreamble,
        OfferSource,
        check_not_shrunk,
        check_offer_complete,
        checked_offer,
        price_problem,
        read_preamble,
    )
    from trntui.pricing.extract.records import (
        BLOCK_BYTES,
        OfferRows,
        Plan,
        RecordBlocks,
    )
    from trntui.pricing.extract.savings_plans import (
        quotes_from_savings_plan_rows,
        savings_plan_plan,
        savings_plan_quotes,
    )
    from trntui.pricing.extract.scan import (
        RowQueries,
        RowQuery,
        parse_only,
        scan_offer_file,
    )
    from trntui.pricing.extract.side_services import (
        rates_from_side_rows,
        side_plan,
        side_rates,
        side_services_in,
    )

_EXPORTS = {
    "instance_plan": "instances",
    "instance_price_rows": "instances",
    "instance_quotes": "instances",
    "quotes_from_instance_rows": "instances",
    "PREAMBLE_KEYS": "offer",
    "PREAMBLE_ROWS": "offer",
    "REQUIRED_COLUMNS": "offer",
    "SAME_VERSION_SHRINK": "offer",
    "OfferPreamble": "offer",
    "OfferSource": "offer",
    "check_not_shrunk": "offer",
    "check_offer_complete": "offer",
    "checked_offer": "offer",
    "price_problem": "offer",
    "read_preamble": "offer",
    "BLOCK_BYTES": "records",
    "OfferRows": "records",
    "Plan": "records",
    "RecordBlocks": "records",
    "quotes_from_savings_plan_rows": "savings_plans",
    "savings_plan_plan": "savings_plans",
    "savings_plan_quotes": "savings_plans",
    "RowQueries": "scan",
    "RowQuery": "scan",
    "parse_only": "scan",
    "scan_offer_file": "scan",
    "rates_from_side_rows": "side_services",
    "side_plan": "side_services",
    "side_rates": "side_services",
    "side_services_in": "side_services",
}
__all__ = [
    "BLOCK_BYTES",
    "PREAMBLE_KEYS",
    "PREAMBLE_ROWS",
    "REQUIRED_COLUMNS",
    "SAME_VERSION_SHRINK",
    "OfferPreamble",
    "OfferRows",
    "OfferSource",
    "Plan",
    "RecordBlocks",
    "RowQueries",
    "RowQuery",
    "check_not_shrunk",
    "check_offer_complete",
    "checked_offer",
    "instance_plan",
    "instance_price_rows",
    "instance_quotes",
    "parse_only",
    "price_problem",
    "quotes_from_instance_rows",
    "quotes_from_savings_plan_rows",
    "rates_from_side_rows",
    "read_preamble",
    "savings_plan_plan",
    "savings_plan_quotes",
    "scan_offer_file",
    "side_plan",
    "side_rates",
    "side_services_in",
]
__getattr__ = lazy_exports(__name__, _EXPORTS)
