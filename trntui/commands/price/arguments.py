"""The argument types of ``trntui price`` (a positive price, a whole number, a Capacity Block's
length and size, a date) and the check before a price is stored (``refuse_implausible``).
"""

from __future__ import annotations

import argparse
from datetime import date

from trntui.commands import finite_float
from trntui.core.capacity_block import MAX_BLOCK_INSTANCES, block_days_help, is_block_days
from trntui.core.errors import UserError
from trntui.core.fields import FieldValueError
from trntui.core.inventory import check_region
from trntui.core.quotes import PriceQuote, implausible_price

DEFAULT_REGION = "us-east-1"


def region_code(text: str) -> str:
    """A region as the inventory takes it (``us-east-1``): it names a folder of the cache and
    the region a quote is saved for, so nothing else is passed on."""
    try:
        check_region(text)
    except FieldValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _positive_float(text: str) -> float:
    value = finite_float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be above 0 (unknown prices are not entered)"
        )
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
