"""``trntui price``: fetch quotes from the AWS Price List, add manual quotes, list a project's.

``fetch`` works without a project (it prints what the price list says, and can ``--save`` the
quotes into a project); ``add`` (an instance quote), ``rate`` (a side-service rate) and ``list``
work on a project folder. ``--json`` prints one JSON
document for scripts; times are ISO 8601 in UTC, unknown values are ``null``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from trntui.commands import help_of, json_text
from trntui.core.capacity_block import MAX_BLOCK_INSTANCES, block_days_help, is_block_days
from trntui.core.errors import UserError
from trntui.core.hardware import usd_per_accelerator_hour
from trntui.core.quotes import (
    CAPACITY_BLOCK,
    DEFAULT_MAX_AGE_DAYS,
    ON_DEMAND,
    PriceQuote,
    RateTier,
    ServiceRate,
    SideService,
    implausible_price,
    is_known_purchase_option,
    purchase_option_help,
    quote_flags,
)
from trntui.pricing.service import (
    FetchResult,
    SideRatesResult,
    fetch_instance_quotes,
    fetch_savings_plan_quotes,
    fetch_side_rates,
)
from trntui.pricing.settings import (
    DEADLINE_ENV,
    DEFAULT_DEADLINE_S,
    PRICING_URL_ENV,
    PricingSettings,
)

DEFAULT_REGION = "us-east-1"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``price fetch|add|rate|list`` to the main parser."""
    price = subparsers.add_parser("price", help=help_of("price"))
    price.set_defaults(func=lambda _args: _usage(price))
    sub = price.add_subparsers(dest="price_command", metavar="ACTION")

    fetch = sub.add_parser("fetch", help="get current prices from the AWS Price List")
    fetch.add_argument(
        "--region", default=DEFAULT_REGION, help=f"region code (default {DEFAULT_REGION})"
    )
    fetch.add_argument(
        "--instance-type", action="append", dest="instance_types", metavar="TYPE",
        help="instance type to price (repeatable; default: every type in the region)",
    )  # fmt: skip
    fetch.add_argument(
        "--pricing-url", help=f"price list base URL (default: ${PRICING_URL_ENV} or AWS)"
    )
    fetch.add_argument(
        "--side-rates", action="store_true",
        help="also fetch S3, EBS gp3, CloudWatch Logs and inter-AZ transfer rates",
    )  # fmt: skip
    fetch.add_argument(
        "--savings-plans", action="store_true",
        help="also fetch the Compute and EC2 Instance Savings Plans rates of the same types",
    )  # fmt: skip
    fetch.add_argument(
        "--offline", action="store_true", help="use the cached price list only, no network"
    )
    fetch.add_argument(
        "--save", metavar="DIR", help="copy the fetched quotes into the project in DIR"
    )
    fetch.add_argument(
        "--deadline", type=_positive_float, metavar="S",
        help=f"seconds the whole fetch may take (default: ${DEADLINE_ENV} or "
        f"{DEFAULT_DEADLINE_S:g}); past it the cached copy is used",
    )  # fmt: skip
    fetch.add_argument(
        "--force", action="store_true",
        help="with --save: store prices that look implausible (see `price add --force`)",
    )  # fmt: skip
    fetch.add_argument("--json", action="store_true", help="print JSON")
    fetch.set_defaults(func=cmd_fetch)

    add = sub.add_parser("add", help="add a manual quote (Trainium3, negotiated, spot...)")
    add.add_argument("dir", metavar="DIR", help="project folder")
    add.add_argument("--instance-type", required=True)
    add.add_argument("--region", required=True)
    add.add_argument(
        "--usd-per-hour",
        type=_positive_float,
        metavar="X",
        help="the hourly price (recurring part of a term; a Capacity Block's hourly equivalent "
        "per instance)",
    )
    add.add_argument("--source", required=True, help="where the price comes from (who, what)")
    add.add_argument("--url", help="where the offer can be read again")
    add.add_argument(
        "--purchase-option", default=ON_DEMAND, help=f"one of: {purchase_option_help()}"
    )
    add.add_argument(
        "--upfront-usd",
        type=_non_negative_float,
        default=0.0,
        metavar="X",
        help="upfront fee of a reserved term or Savings Plan; a Capacity Block's whole price",
    )
    add.add_argument(
        "--ultraserver",
        type=int,
        metavar="N",
        help="the price is for one UltraServer of N instances (Trn2: 4 x trn2u.48xlarge); "
        "--block-instances then counts UltraServers",
    )
    block = add.add_argument_group("Capacity Block (--purchase-option capacity-block)")
    block.add_argument("--block-days", type=_block_days, metavar="D", help=block_days_help())
    block.add_argument(
        "--block-instances", type=_block_instances, metavar="N", help="instances in the block"
    )
    block.add_argument("--availability-zone", metavar="AZ", help="the block's zone")
    block.add_argument("--start-date", type=_date, help="the block's start, YYYY-MM-DD")
    add.add_argument("--date", type=_date, help="date of the quote, YYYY-MM-DD (default today)")
    add.add_argument(
        "--pin",
        action="store_true",
        help="vouch for this price (a signed or negotiated offer): it is used over the price "
        "list's and counts as verified",
    )
    add.add_argument(
        "--force",
        action="store_true",
        help="store a price outside $0.05 to $200 per accelerator-hour (implausible: usually "
        "a typing or unit mistake)",
    )
    add.set_defaults(func=cmd_add)

    rate = sub.add_parser(
        "rate", help="add a manual side-service rate (S3, EBS, CloudWatch Logs, inter-AZ)"
    )
    rate.add_argument("dir", metavar="DIR", help="project folder")
    rate.add_argument(
        "--service", required=True, choices=[service.value for service in SideService],
        help="the side service (its unit is fixed: GB-Mo for storage, GB for the others)",
    )  # fmt: skip
    rate.add_argument("--region", required=True)
    rate.add_argument(
        "--usd-per-unit", required=True, type=_non_negative_float, metavar="X",
        help="one flat rate (inter-AZ: per GB in each direction)",
    )  # fmt: skip
    rate.add_argument("--source", required=True, help="where the rate comes from (who, what)")
    rate.add_argument("--date", type=_date, help="date of the rate, YYYY-MM-DD (default today)")
    rate.set_defaults(func=cmd_rate)

    listing = sub.add_parser("list", help="list the project's quotes, with warnings")
    listing.add_argument("dir", metavar="DIR", help="project folder")
    listing.add_argument("--region", help="target region (flags quotes for other regions)")
    listing.add_argument(
        "--max-age-days", type=int, default=DEFAULT_MAX_AGE_DAYS,
        help=f"flag quotes older than this (default {DEFAULT_MAX_AGE_DAYS})",
    )  # fmt: skip
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=cmd_list)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _positive_float(text: str) -> float:
    value = _float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be above 0 (unknown prices are not entered)"
        )
    return value


def _non_negative_float(text: str) -> float:
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must not be negative")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _block_days(text: str) -> int:
    days = _whole(text)
    if not is_block_days(days):
        raise argparse.ArgumentTypeError(f"a Capacity Block lasts {block_days_help()}; got {days}")
    return days


def _block_instances(text: str) -> int:
    count = _whole(text)
    if not 1 <= count <= MAX_BLOCK_INSTANCES:
        raise argparse.ArgumentTypeError(
            f"a Capacity Block holds 1 to {MAX_BLOCK_INSTANCES} instances; got {count}"
        )
    return count


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date as YYYY-MM-DD") from None


def quote_to_json(quote: PriceQuote) -> dict[str, Any]:
    """A quote as plain JSON values (the documented ``--json`` shape)."""
    return {
        "instance_type": quote.instance_type,
        "region": quote.region,
        "purchase_option": quote.purchase_option,
        "usd_per_hour": quote.usd_per_hour,
        "upfront_usd": quote.upfront_usd,
        "recurring_usd_per_hour": quote.recurring_usd_per_hour,
        "usd_per_accelerator_hour": usd_per_accelerator_hour(quote),
        "accelerator_count": quote.accelerator_count,
        "manual": quote.manual,
        "source_note": quote.source_note,
        "source_url": quote.source_url,
        "block_days": quote.block_days,
        "block_instances": quote.block_instances,
        "availability_zone": quote.availability_zone,
        "start_date": quote.start_date,
        "ultraserver_instances": quote.ultraserver_instances,
        "offer_code": quote.offer_code,
        "publication_date": quote.publication_date,
        "version": quote.version,
        "sku": quote.sku,
        "rate_code": quote.rate_code,
        "effective_date": quote.effective_date,
        "etag": quote.etag,
        "last_modified": quote.last_modified,
        "retrieved_at": quote.retrieved_at.astimezone(UTC).isoformat(),
    }


def rate_to_json(rate: ServiceRate) -> dict[str, Any]:
    return {
        "service": rate.service.value,
        "region": rate.region,
        "unit": rate.unit,
        "tiers": [
            {"start": tier.start, "end": tier.end, "usd_per_unit": tier.usd_per_unit}
            for tier in rate.tiers
        ],
        "usage_type": rate.usage_type,
        "manual": rate.manual,
        "source_note": rate.source_note,
        "source_url": rate.source_url,
        "publication_date": rate.publication_date,
        "version": rate.version,
        "sku": rate.sku,
        "rate_code": rate.rate_code,
        "retrieved_at": rate.retrieved_at.astimezone(UTC).isoformat(),
    }


def _progress_printer() -> Any:
    if not sys.stderr.isatty():
        return None
    last = [-1]

    def report(done: int, total: int | None) -> None:
        step = done * 100 // total if total else done // (50 * 1024 * 1024)
        if step != last[0]:
            last[0] = step
            shown = f"{step}%" if total else f"{done / 1024**2:.0f} MB"
            print(f"\rdownloading price list... {shown}", end="", file=sys.stderr, flush=True)

    return report


def refuse_implausible(quotes: list[PriceQuote] | tuple[PriceQuote, ...], force: bool) -> None:
    """Stop before storing a price that looks like a mistake, unless ``--force`` says it is
    meant (``implausible_price`` states the rule)."""
    doubts = [(quote, why) for quote in quotes if (why := implausible_price(quote)) is not None]
    if not doubts or force:
        return
    quote, why = doubts[0]
    more = f" (and {len(doubts) - 1} more)" if len(doubts) > 1 else ""
    raise UserError(
        f"not stored: {quote.instance_type} {quote.purchase_option} in {quote.region}: {why}"
        f"{more}; check the figure, or pass --force to store it anyway"
    )


def cmd_fetch(args: argparse.Namespace) -> int:
    overrides = {} if args.deadline is None else {"deadline_s": args.deadline}
    settings = PricingSettings.from_env(args.pricing_url, **overrides).started()
    progress = _progress_printer()
    try:
        result = fetch_instance_quotes(
            args.region, args.instance_types, settings=settings, progress=progress,
            offline=args.offline,
        )  # fmt: skip
        side = (
            fetch_side_rates(
                args.region, settings=settings, progress=progress, offline=args.offline
            )
            if args.side_rates
            else None
        )
        plans = (
            fetch_savings_plan_quotes(
                args.region, args.instance_types, settings=settings, progress=progress,
                offline=args.offline,
            )
            if args.savings_plans
            else None
        )  # fmt: skip
    finally:
        if progress is not None:
            print("\r", end="", file=sys.stderr)
    if args.save:
        _save_into_project(Path(args.save), result, side, plans, args.force)
    if args.json:
        print(json_text(_fetch_json(result, side, plans)))
    else:
        _print_fetch(result, side, plans)
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
    refuse_implausible([q for q in quotes if q.usd_per_hour is not None], force)
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
        if side is not None:
            add_rates(project.root, side.rates)


def _fetch_json(
    result: FetchResult, side: SideRatesResult | None, plans: FetchResult | None = None
) -> dict[str, Any]:
    document: dict[str, Any] = {"region": result.region, **_quotes_json(result)}
    if side is not None:
        document["side_rates"] = [rate_to_json(rate) for rate in side.rates]
        document["side_rates_missing"] = {
            service.value: message for service, message in side.missing.items()
        }
    if plans is not None:
        document["savings_plans"] = _quotes_json(plans)
    return document


def _quotes_json(result: FetchResult) -> dict[str, Any]:
    status = result.status
    return {
        "quotes": [quote_to_json(quote) for quote in result.quotes],
        "notes": list(result.notes),
        "implausible": [
            {
                "instance_type": quote.instance_type,
                "purchase_option": quote.purchase_option,
                "message": why,
            }
            for quote in result.quotes
            if (why := implausible_price(quote)) is not None
        ],
        "missing": [
            {
                "instance_type": lookup.instance_type,
                "purchase_option": lookup.purchase_option,
                "status": lookup.status.value,
                "message": lookup.message,
            }
            for lookup in result.missing
        ],
        "source": {
            "url": status.url,
            "retrieved_at": status.retrieved_at.astimezone(UTC).isoformat(),
            "age_s": round(status.age_s()),
            "from_cache_after_error": status.from_cache_after_error,
            "not_modified": status.not_modified,
            "error": None if status.error is None else str(status.error),
        },
    }


def _money(value: float | None, digits: int = 4) -> str:
    return "unknown" if value is None else f"${value:,.{digits}f}"


def _print_fetch(
    result: FetchResult, side: SideRatesResult | None, plans: FetchResult | None = None
) -> None:
    _print_quotes(result, "Prices")
    if plans is not None:
        print()
        _print_quotes(plans, "Savings Plans rates")
    if side is not None:
        print()
        _print_table(
            ("side service", "unit", "USD/unit (first tier)", "tiers"),
            [
                (rate.service.value, rate.unit, _money(rate.first_tier_usd_per_unit, 6),
                 str(len(rate.tiers)))
                for rate in side.rates
            ],
        )  # fmt: skip
        for message in side.missing.values():
            print(f"  {message}")


def _print_quotes(result: FetchResult, what: str) -> None:
    status = result.status
    if status.error is not None:
        print(f"warning: {status.describe()}", file=sys.stderr)
    print(
        f"{what} for {result.region} (AWS Price List, "
        f"retrieved {status.retrieved_at:%Y-%m-%d %H:%M} UTC)"
    )
    publication = result.quotes[0].publication_date if result.quotes else None
    if publication:
        print(f"price list published {publication}, source {status.url}")
    rows = [
        (
            quote.instance_type,
            quote.purchase_option,
            _money(quote.usd_per_hour),
            _money(quote.upfront_usd, 2) if quote.upfront_usd else "-",
            _money(usd_per_accelerator_hour(quote)),
        )
        for quote in result.quotes
    ]
    _print_table(
        ("instance type", "purchase option", "USD/hour", "upfront", "USD/accel-hour"), rows
    )
    for lookup in result.missing:
        print(f"  {lookup.message}")
    for quote in result.quotes:
        if quote.usd_per_hour is None:
            print(f"  {quote.instance_type} {quote.purchase_option}: unknown, {quote.source_note}")
        elif (why := implausible_price(quote)) is not None:
            print(f"  {quote.instance_type} {quote.purchase_option}: implausible price: {why}")
    for note in result.notes:
        print(f"  skipped: {note}")


def _print_table(headings: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    if not rows:
        print("  (no prices found)")
        return
    widths = [
        max(len(str(cell)) for cell in column) for column in zip(headings, *rows, strict=True)
    ]
    for row in (headings, *rows):
        print(
            "  "
            + "  ".join(
                str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)
            ).rstrip()
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
            f", {_money(quote.usd_per_ultraserver_hour)}/hour per UltraServer of "
            f"{quote.ultraserver_instances} instances"
        )
    if quote.block_days is not None:
        count = quote.block_instances or 1
        block += (
            f", a {quote.block_days}-day block of {count} instance(s) for "
            f"{_money(quote.upfront_usd, 2)} up front"
        )
    print(
        f"Added manual quote: {quote.instance_type} {quote.purchase_option} in {quote.region} "
        f"at {_money(quote.usd_per_hour)}/instance-hour{block} ({quote.source_note}, "
        f"{when:%Y-%m-%d})"
    )
    return 0


def cmd_rate(args: argparse.Namespace) -> int:
    """Add a manual side rate; it wins over a fetched rate for the same service and region."""
    from trntui.store.project import Project
    from trntui.store.quotes import add_rates

    if not args.source.strip():
        raise UserError("--source must say where the rate comes from")
    when = _stated_date(args)
    service = SideService(args.service)
    rate = ServiceRate(
        service=service,
        region=args.region.strip(),
        tiers=(RateTier(0.0, None, args.usd_per_unit),),
        retrieved_at=when,
        manual=True,
        source_note=args.source.strip(),
    )
    with Project.open(Path(args.dir)) as project:
        project.require_writable()
        add_rates(project.root, [rate])
    print(
        f"Added manual rate: {service.value} in {rate.region} at "
        f"{_money(args.usd_per_unit, 6)}/{service.unit} ({rate.source_note}, {when:%Y-%m-%d})"
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
            "rates": [rate_to_json(rate) for rate in book.rates],
        }
        print(json.dumps(document, indent=2))
        return 0
    if not book.quotes and not book.rates:
        print(f"No quotes in {root} yet (add one with `trntui price add` or `price fetch --save`).")
        return 0
    rows = [
        (
            quote.instance_type,
            quote.region,
            quote.purchase_option
            + (f" {quote.block_days}d x{quote.block_instances or 1}" if quote.block_days else ""),
            _money(quote.usd_per_hour),
            "manual" if quote.manual else "price list",
            f"{quote.retrieved_at:%Y-%m-%d}",
            "; ".join(flags(quote)) or "ok",
        )
        for quote in book.quotes
    ]
    _print_table(("instance type", "region", "option", "USD/hour", "source", "date", "notes"), rows)
    if book.rates:
        print()
        _print_table(
            ("side service", "region", "unit", "USD/unit (first tier)", "source", "date"),
            [
                (rate.service.value, rate.region, rate.unit,
                 _money(rate.first_tier_usd_per_unit, 6),
                 f"manual: {rate.source_note}" if rate.manual else "price list",
                 f"{rate.retrieved_at:%Y-%m-%d}")
                for rate in book.rates
            ],
        )  # fmt: skip
    return 0
