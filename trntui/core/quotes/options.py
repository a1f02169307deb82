"""Purchase options by name, the error a broken quote raises, and the checks every
amount and date of a quote passes (``check_amount``, no price dated in the future).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from trntui.core.errors import UserError

DEFAULT_MAX_AGE_DAYS = 30
HOURS_PER_YEAR = 8760  # AWS amortises reserved upfront fees over 365-day years

ON_DEMAND = "on-demand"
SPOT = "spot"
CAPACITY_BLOCK = "capacity-block"
NEGOTIATED = "negotiated"
SAVINGS_PLANS = "savings-plan"
"""Any Savings Plan: what a Savings Plans lookup that found no rate for a type looked for."""
SAVINGS_PLAN_OFFER = "AWSComputeSavingsPlan"
"""The price list offer holding the Compute and the EC2 Instance Savings Plans rates."""
_RESERVED_PATTERN = re.compile(
    r"^reserved-(?P<years>[13])yr-(?P<klass>standard|convertible)-(?P<payment>no|partial|all)-upfront$"
)
_SAVINGS_PLAN_PATTERN = re.compile(
    r"^savings-plan-(?:compute|ec2-instance)-(?P<years>[13])yr-(?:no|partial|all)-upfront$"
)
_TRAINIUM3_PATTERN = re.compile(r"^trn3", re.IGNORECASE)
EXAMPLE_MARK = re.compile(r"\bEXAMPLE\b")


class InvalidQuoteError(UserError):
    """A quote the user entered (or a stored one) breaks a rule; the message says which,
    and ``key`` names the field when one is to blame (for pointing at its line in a file)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def check_amount(
    value: object, what: str, *, key: str | None = None, above_zero: bool = False
) -> None:
    """The one check every price and rate passes, whichever way it came in (the price list, a
    manual entry, a hand-edited ``prices/quotes.toml``): a finite number, not negative (above
    zero when ``above_zero``). ``inf``, ``nan`` and negative amounts are refused, never stored."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidQuoteError(f"{what}: {value!r} is not a number", key=key)
    if not math.isfinite(value):
        raise InvalidQuoteError(f"{what}: {value!r} is not a finite number", key=key)
    if above_zero and not value > 0:
        raise InvalidQuoteError(
            f"{what} must be above $0 (got {value}); leave it unknown instead", key=key
        )
    if value < 0:
        raise InvalidQuoteError(f"{what} cannot be negative (got {value})", key=key)


def reserved_option(years: int, offering_class: str, payment: str) -> str:
    """Name a reserved purchase option, e.g. ``reserved-1yr-standard-partial-upfront``."""
    name = f"reserved-{years}yr-{offering_class}-{payment}-upfront"
    if not _RESERVED_PATTERN.match(name):
        raise InvalidQuoteError(f"not a reserved purchase option: {name!r}")
    return name


def savings_plan_option(kind: str, years: int, payment: str) -> str:
    """Name a Savings Plan option, e.g. ``savings-plan-compute-3yr-no-upfront``."""
    name = f"{SAVINGS_PLANS}-{kind}-{years}yr-{payment}-upfront"
    if not _SAVINGS_PLAN_PATTERN.match(name):
        raise InvalidQuoteError(f"not a Savings Plan purchase option: {name!r}")
    return name


def is_savings_plan(purchase_option: str) -> bool:
    return (
        purchase_option == SAVINGS_PLANS or _SAVINGS_PLAN_PATTERN.match(purchase_option) is not None
    )


def reserved_term_years(purchase_option: str) -> int | None:
    """Years in a reserved term (1 or 3), or None for options that are not reserved instances."""
    match = _RESERVED_PATTERN.match(purchase_option)
    return int(match["years"]) if match else None


def term_years(purchase_option: str) -> int | None:
    """Years in a reserved term or a Savings Plan (1 or 3); None for options without a term."""
    match = _RESERVED_PATTERN.match(purchase_option) or _SAVINGS_PLAN_PATTERN.match(purchase_option)
    return int(match["years"]) if match else None


def is_known_purchase_option(purchase_option: str) -> bool:
    """Options the app understands: on-demand, reserved and savings-plan terms, spot,
    capacity blocks and negotiated (private) pricing."""
    return (
        purchase_option in {ON_DEMAND, SPOT, CAPACITY_BLOCK, NEGOTIATED}
        or _RESERVED_PATTERN.match(purchase_option) is not None
        or _SAVINGS_PLAN_PATTERN.match(purchase_option) is not None
    )


def purchase_option_help() -> str:
    """A one-line list of accepted purchase options, for error messages and ``--help``."""
    return (
        f"{ON_DEMAND}, reserved-<1|3>yr-<standard|convertible>-<no|partial|all>-upfront, "
        f"savings-plan-<compute|ec2-instance>-<1|3>yr-<no|partial|all>-upfront, "
        f"{SPOT}, {CAPACITY_BLOCK}, {NEGOTIATED}"
    )


def is_trainium3(instance_type: str) -> bool:
    return _TRAINIUM3_PATTERN.match(instance_type) is not None


_CLOCK_SLACK = timedelta(days=1)
"""A date typed in a time zone ahead of UTC may be tomorrow in UTC."""


def refuse_future(when: datetime, what: str) -> None:
    """A price is dated when it was given or retrieved, which cannot be in the future."""
    if when.tzinfo is not None and when > datetime.now(UTC) + _CLOCK_SLACK:
        raise InvalidQuoteError(
            f"{what} is dated {when.date().isoformat()}, in the future: date it when the price "
            "was given or retrieved"
        )
