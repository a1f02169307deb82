"""``trntui price add``, ``rate`` and ``list``: a project's manual quotes and side rates."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, time
from pathlib import Path

from trntui.commands import wrapped
from trntui.commands.price.arguments import refuse_implausible
from trntui.commands.price.output import print_table, quote_to_json, rate_to_json
from trntui.core.errors import UserError
from trntui.core.format import plural, usd, usd_price
from trntui.core.quotes import (
    CAPACITY_BLOCK,
    PriceQuote,
    SideService,
    implausible_rate,
    is_known_purchase_option,
    purchase_option_help,
    quote_flags,
)


def _stated_date(args: argparse.Namespace) -> datetime:
    """``--date`` at midnight UTC, or now."""
    return datetime.combine(args.date, time(), tzinfo=UTC) if args.date else datetime.now(UTC)


def cmd_add(args: argparse.Namespace) -> int:
    from trntui.core.manual_quote import manual_quote
    from trntui.store.project import Project
    from trntui.store.quotes import add_quotes

    if not is_known_purchase_option(args.purchase_option):
        raise UserError(
            f"unknown purchase option {args.purchase_option!r}; expected one of "
            f"{purchase_option_help()}"
        )
    block_options = ("block_days", "block_instances", "availability_zone", "start_date")
    given = [name for name in block_options if getattr(args, name) is not None]
    if given and args.purchase_option != CAPACITY_BLOCK:
        flag = "--" + given[0].replace("_", "-")
        raise UserError(f"{flag} is for --purchase-option {CAPACITY_BLOCK}")
    when = _stated_date(args)
    quote = manual_quote(
        instance_type=args.instance_type.strip(),
        region=args.region.strip(),
        purchase_option=args.purchase_option,
        usd_per_hour=args.usd_per_hour,
        upfront_usd=args.upfront_usd,
        retrieved_at=when,
        source_note=args.source.strip(),
        pinned=args.pin,
        block_days=args.block_days,
        block_instances=args.block_instances,
        availability_zone=args.availability_zone,
        start_date=args.start_date.isoformat() if args.start_date else None,
        source_url=args.url.strip() if args.url else None,
        ultraserver_instances=args.ultraserver,
    )
    refuse_implausible([quote], args.force)
    with Project.open(Path(args.dir)) as project:
        project.require_writable()
        add_quotes(project.root, [quote])
    block = ""
    if quote.ultraserver_instances:
        block = (
            f", {usd_price(quote.usd_per_ultraserver_hour)}/hour per UltraServer of "
            f"{plural(quote.ultraserver_instances, 'instance')}"
        )
    if quote.block_days is not None:
        count = quote.block_instances or 1
        block += (
            f", a {quote.block_days}-day block of {plural(count, 'instance')} for "
            f"{usd(quote.upfront_usd, 2)} up front"
        )
    print(
        f"Added manual quote: {quote.instance_type} {quote.purchase_option} in {quote.region} "
        f"at {usd_price(quote.usd_per_hour)}/instance-hour{block} ({quote.source_note}, "
        f"{when:%Y-%m-%d})"
    )
    return 0


def cmd_rate(args: argparse.Namespace) -> int:
    """Add a manual side rate; it wins over a fetched rate for the same service and region."""
    from trntui.core.manual_rate import manual_rate
    from trntui.store.project import Project
    from trntui.store.quotes import add_rates

    if not args.source.strip():
        raise UserError("--source must say where the rate comes from")
    when = _stated_date(args)
    service = SideService(args.service)
    rate = manual_rate(  # the rules the Prices screen's side rate form keeps too
        service=service,
        region=args.region,
        usd_per_unit=args.usd_per_unit,
        retrieved_at=when,
        source_note=args.source,
    )
    refuse_implausible([], args.force, [rate])
    with Project.open(Path(args.dir)) as project:
        project.require_writable()
        add_rates(project.root, [rate])
    print(
        f"Added manual rate: {service.value} in {rate.region} at "
        f"{usd_price(args.usd_per_unit)}/{service.unit} ({rate.source_note}, {when:%Y-%m-%d})"
    )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from trntui.store.quotes import load_quote_book

    root = Path(args.dir)
    if not root.is_dir():
        raise UserError(f"{root}: no such project folder")
    book = load_quote_book(root)
    today = datetime.now(UTC).date()

    def flags(quote: PriceQuote) -> list[str]:
        return [
            flag.message
            for flag in quote_flags(
                quote, target_region=args.region or quote.region, today=today,
                max_age_days=args.max_age_days,
            )
        ]  # fmt: skip

    if args.json:
        document = {
            "quotes": [{**quote_to_json(quote), "flags": flags(quote)} for quote in book.quotes],
            "rates": [
                {**rate_to_json(rate), "flags": [f"implausible rate: {why}"] if why else []}
                for rate in book.rates
                for why in [implausible_rate(rate)]
            ],
        }
        print(json.dumps(document, indent=2))
        return 0
    if not book.quotes and not book.rates:
        print(f"No quotes in {root} yet (add one with `trntui price add` or `price fetch --save`).")
        return 0
    # Each table within 80 columns; what is long (the notes, a rate's source) is said under
    # it, one entry per row, wrapped.
    rows = [
        (
            quote.instance_type,
            quote.region,
            quote.purchase_option
            + (f" {quote.block_days}d x{quote.block_instances or 1}" if quote.block_days else ""),
            usd_price(quote.usd_per_hour),
            ("manual, pinned" if quote.pinned else "manual") if quote.manual else "price list",
            f"{quote.retrieved_at:%Y-%m-%d}",
        )
        for quote in book.quotes
    ]
    print_table(("instance type", "region", "option", "USD/hour", "source", "date"), rows)
    for quote in book.quotes:
        notes = "; ".join(flags(quote))
        if notes:
            what = f"{quote.instance_type} {quote.purchase_option} in {quote.region}"
            print("\n".join(wrapped(f"{what}: {notes}", indent=2, hang=4)))
    if book.rates:
        print()
        print_table(
            ("side service", "region", "unit", "USD/unit", "source", "date"),
            [
                (rate.service.value, rate.region, rate.unit,
                 usd_price(rate.first_tier_usd_per_unit),
                 "manual" if rate.manual else "price list",
                 f"{rate.retrieved_at:%Y-%m-%d}")
                for rate in book.rates
            ],
        )  # fmt: skip
        for rate in book.rates:
            said = []
            if (why := implausible_rate(rate)) is not None:
                said.append(f"implausible rate: {why}")
            if len(rate.tiers) > 1:
                said.append(f"{len(rate.tiers)} tiers, the first one's rate shown")
            if rate.manual and rate.source_note:
                said.append(rate.source_note)
            if said:
                where = "manual" if rate.manual else "price list"
                text = f"{rate.service.value} ({where}): " + "; ".join(said)
                print("\n".join(wrapped(text, indent=2, hang=4)))
    return 0
