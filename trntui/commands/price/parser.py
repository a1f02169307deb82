"""The ``price`` subcommands, their options and help (``register``)."""

from __future__ import annotations

import argparse
import sys

from trntui.commands import help_of, non_negative_float
from trntui.commands.price.arguments import (
    DEFAULT_REGION,
    block_days,
    block_instances,
    iso_date,
    positive_float,
    region_code,
)
from trntui.commands.price.fetch import cmd_fetch
from trntui.commands.price.project_quotes import cmd_add, cmd_list, cmd_rate
from trntui.core.capacity_block import block_days_help
from trntui.core.quotes import DEFAULT_MAX_AGE_DAYS, ON_DEMAND, SideService, purchase_option_help
from trntui.pricing.settings import DEADLINE_ENV, DEFAULT_DEADLINE_S, PRICING_URL_ENV


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``price fetch|add|rate|list`` to the main parser."""
    price = subparsers.add_parser("price", help=help_of("price"))
    price.set_defaults(func=lambda _args: _usage(price))
    sub = price.add_subparsers(dest="price_command", metavar="ACTION")

    fetch = sub.add_parser("fetch", help="get current prices from the AWS Price List")
    fetch.add_argument(
        "--region",
        default=DEFAULT_REGION,
        type=region_code,
        help=f"region code (default {DEFAULT_REGION})",
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
        "--deadline", type=positive_float, metavar="S",
        help=f"seconds the whole fetch may take (default: ${DEADLINE_ENV} or "
        f"{DEFAULT_DEADLINE_S:g}); past it the cached copy is used",
    )  # fmt: skip
    fetch.add_argument(
        "--force", action="store_true",
        help="with --save: store prices and side rates that look implausible (see "
        "`price add --force`, `price rate --force`)",
    )  # fmt: skip
    fetch.add_argument("--json", action="store_true", help="print JSON")
    fetch.set_defaults(func=cmd_fetch)

    add = sub.add_parser("add", help="add a manual quote (Trainium3, negotiated, spot...)")
    add.add_argument("dir", metavar="DIR", help="project folder")
    add.add_argument("--instance-type", required=True)
    add.add_argument("--region", required=True, type=region_code)
    add.add_argument(
        "--usd-per-hour",
        type=positive_float,
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
        type=non_negative_float,
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
    block.add_argument("--block-days", type=block_days, metavar="D", help=block_days_help())
    block.add_argument(
        "--block-instances", type=block_instances, metavar="N", help="instances in the block"
    )
    block.add_argument("--availability-zone", metavar="AZ", help="the block's zone")
    block.add_argument("--start-date", type=iso_date, help="the block's start, YYYY-MM-DD")
    add.add_argument("--date", type=iso_date, help="date of the quote, YYYY-MM-DD (default today)")
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
    rate.add_argument("--region", required=True, type=region_code)
    rate.add_argument(
        "--usd-per-unit", required=True, type=non_negative_float, metavar="X",
        help="one flat rate (inter-AZ: per GB in each direction)",
    )  # fmt: skip
    rate.add_argument("--source", required=True, help="where the rate comes from (who, what)")
    rate.add_argument("--date", type=iso_date, help="date of the rate, YYYY-MM-DD (default today)")
    rate.add_argument(
        "--force",
        action="store_true",
        help="store a rate more than 10 times off its us-east-1 list price (implausible: "
        "usually a typing or unit mistake, such as a price per TB for one per GB)",
    )
    rate.set_defaults(func=cmd_rate)

    listing = sub.add_parser("list", help="list the project's quotes, with warnings")
    listing.add_argument("dir", metavar="DIR", help="project folder")
    listing.add_argument(
        "--region", type=region_code, help="target region (flags quotes for other regions)"
    )
    listing.add_argument(
        "--max-age-days", type=int, default=DEFAULT_MAX_AGE_DAYS,
        help=f"flag quotes older than this (default {DEFAULT_MAX_AGE_DAYS})",
    )  # fmt: skip
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=cmd_list)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2
