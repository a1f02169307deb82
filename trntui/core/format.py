"""How money and unknown values are written, the same on screen, in the CLI and in reports."""

from __future__ import annotations

import math

UNKNOWN = "unknown"
"""What a value that is not known reads as: never 0, never blank."""


def usd(value: float | None) -> str:
    """Dollars and cents: ``$1,234.56``; unknown when not known."""
    return UNKNOWN if value is None else f"${value:,.2f}"


def usd_per_unit(value: float | None) -> str:
    """A small amount with the digits that matter: ``$0.0048``, ``$0.013``, ``$2.50``.

    Cents from $1 on; below that, two significant digits (a price per sample or per token is
    a fraction of a cent, and eight decimals of it say nothing more).
    """
    if value is None:
        return UNKNOWN
    if value == 0 or abs(value) >= 1:
        return f"${value:,.2f}"
    decimals = max(2, 1 - math.floor(math.log10(abs(value))))
    return f"${value:.{decimals}f}"
