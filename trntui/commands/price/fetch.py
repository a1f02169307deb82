"""``trntui price fetch``: quotes from the AWS Price List, printed, and saved into a project
with ``--save``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trntui.commands import print_json
from trntui.commands.price.arguments import refuse_implausible
from trntui.commands.price.output import fetch_json, print_fetch, progress_printer
from trntui.pricing.service import (
    FetchOptions,
    FetchResult,
    SideRatesResult,
    fetch_instance_quotes,
    fetch_quotes_and_side_rates,
    fetch_savings_plan_quotes,
)
from trntui.pricing.settings import PricingSettings


def cmd_fetch(args: argparse.Namespace) -> int:
    overrides = {} if args.deadline is None else {"deadline_s": args.deadline}
    settings = PricingSettings.from_env(args.pricing_url, **overrides).started()
    progress = progress_printer()
    try:
        options: FetchOptions = {
            "settings": settings,
            "progress": progress,
            "offline": args.offline,
        }
        side: SideRatesResult | None = None
        if args.side_rates:
            result, side = fetch_quotes_and_side_rates(args.region, args.instance_types, **options)
        else:
            result = fetch_instance_quotes(args.region, args.instance_types, **options)
        plans = (
            fetch_savings_plan_quotes(args.region, args.instance_types, **options)
            if args.savings_plans
            else None
        )
    finally:
        if progress is not None:
            print("\r", end="", file=sys.stderr)
    if args.save:
        _save_into_project(Path(args.save), result, side, plans, args.force)
    if args.json:
        print_json(fetch_json(result, side, plans))
    else:
        print_fetch(result, side, plans)
    return 0


def _save_into_project(
    root: Path,
    result: FetchResult,
    side: SideRatesResult | None,
    plans: FetchResult | None,
    force: bool = False,
) -> None:
    from trntui.store.project import Project
    from trntui.store.quotes import add_rates, record_lookups, unpriced_quotes

    found = [result, *([plans] if plans is not None else [])]
    quotes = [quote for each in found for quote in each.quotes]
    rates = side.rates if side is not None else ()
    refuse_implausible([q for q in quotes if q.usd_per_hour is not None], force, rates)
    for quote in unpriced_quotes(quotes):
        print(
            f"not saved: {quote.instance_type} {quote.purchase_option} in {quote.region}: "
            f"the price is unknown ({quote.source_note or 'no usable row'})",
            file=sys.stderr,
        )
    with Project.open(root) as project:
        project.require_writable()
        record_lookups(
            project.root,
            tuple(quote for each in found for quote in each.quotes),
            tuple(miss for each in found for miss in each.misses),
        )
        if rates:
            add_rates(project.root, rates)
