"""How money, numbers, durations and unknown values are written, the same on screen, in the
CLI and in reports (``ui/format.py`` adds what only the screens need)."""

from __future__ import annotations

import math

UNKNOWN = "unknown"
"""What a value that is not known reads as: never 0, never blank."""


def usd(value: float | None, decimals: int = 2) -> str:
    """Dollars with ``decimals`` places (cents by default): ``$1,234.56``; unknown when not
    known."""
    return UNKNOWN if value is None else f"${value:,.{decimals}f}"


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


def number(value: float | None, digits: int = 4) -> str:
    """A measured or derived figure to ``digits`` significant digits: ``1,234``, ``0.5``;
    unknown when not known."""
    return UNKNOWN if value is None else f"{value:,.{digits}g}"


def duration(seconds: float | None) -> str:
    """Seconds in the unit a person reads best; an unknown duration says so."""
    if seconds is None:
        return UNKNOWN
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def wall_clock(hours: float | None) -> str:
    """A wall clock as a person checks it against a day: ``50 min``, ``7 h 05 min`` below a
    day, ``1.52 days`` from a day on; unknown when not known."""
    if hours is None:
        return UNKNOWN
    if hours >= 24:
        return f"{hours / 24:,.2f} days"
    minutes = round(hours * 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"
