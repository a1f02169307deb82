"""The argument types of ``trntui price`` (a positive price, a whole number, a Capacity Block's
length and size, a date) and the check before a price is stored (``refuse_implausible``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import date

from trntui.commands import finite_float, refuse_unless_forced
from trntui.core.capacity_block import MAX_BLOCK_INSTANCES, block_days_help, is_block_days
from trntui.core.fields import FieldValueError
from trntui.core.inventory import check_region
from trntui.core.quotes import PriceQuote, ServiceRate, implausible_price, implausible_rate

DEFAULT_REGION = "us-east-1"


def region_code(text: str) -> str:
    """A region as the inventory takes it (``us-east-1``): it names a folder of the cache and
    the region a quote is saved for, so nothing else is passed on."""
    try:
        check_region(text)
    except FieldValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def positive_float(text: str) -> float:
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


def block_days(text: str) -> int:
    days = _whole(text)
    if not is_block_days(days):
        raise argparse.ArgumentTypeError(f"a Capacity Block lasts {block_days_help()}; got {days}")
    return days


def block_instances(text: str) -> int:
    count = _whole(text)
    if not 1 <= count <= MAX_BLOCK_INSTANCES:
        raise argparse.ArgumentTypeError(
            f"a Capacity Block holds 1 to {MAX_BLOCK_INSTANCES} instances; got {count}"
        )
    return count


def iso_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date as YYYY-MM-DD") from None


def refuse_implausible(
    quotes: Sequence[PriceQuote], force: bool, rates: Sequence[ServiceRate] = ()
) -> None:
    """Stop before storing a price or a side rate that looks like a mistake, unless
    ``--force`` says it is meant (``implausible_price`` and ``implausible_rate`` state the
    rule)."""
    doubts = [
        f"{quote.instance_type} {quote.purchase_option} in {quote.region}: {why}"
        for quote in quotes
        if (why := implausible_price(quote)) is not None
    ]
    doubts += [
        f"{rate.service.value} rate in {why}"
        for rate in rates
        if (why := implausible_rate(rate)) is not None
    ]
    refuse_unless_forced(doubts, force)
