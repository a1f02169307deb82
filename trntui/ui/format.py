"""How durations and cut labels are written on screen, the same in every table, plot and
detail."""

from __future__ import annotations

UNKNOWN = "unknown"


def duration(seconds: float | None) -> str:
    """Seconds in the unit a person reads best; an unknown duration says so."""
    if seconds is None:
        return UNKNOWN
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def fit(text: str, width: int | None) -> str:
    """``text`` in at most ``width`` cells, ending in an ellipsis where it was cut."""
    return text if width is None or len(text) <= width else text[: width - 1] + "…"
