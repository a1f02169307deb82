"""How durations, purchase options and cut labels are written on screen, the same in every
table, plot and detail."""

from __future__ import annotations

from trntui.core.format import UNKNOWN, duration

__all__ = ["UNKNOWN", "distinct_labels", "duration", "fit", "fit_middle", "short_option"]


def fit(text: str, width: int | None) -> str:
    """``text`` in at most ``width`` cells, ending in an ellipsis where it was cut."""
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def fit_middle(text: str, width: int | None) -> str:
    """``text`` in at most ``width`` cells, cut in the middle (``Trainium…reserved``): names
    that share a beginning stay apart by their ends."""
    if width is None or len(text) <= width:
        return text
    tail = (width - 1) // 3
    return text[: width - 1 - tail] + "…" + (text[-tail:] if tail else "")


_BOUNDARIES = "/_-. "


def distinct_labels(names: list[str], width: int) -> dict[str, str]:
    """A label of at most ``width`` cells for each name, chosen so that names sharing a long
    beginning still read apart: a cut name starts (after ``…``) at the word where it first
    differs from the most similar other name, e.g. ``…n2_24.09/llam…`` and ``…n4_24.09/llam…``
    for two MLPerf systems that differ only in their node count."""
    unique = sorted(set(names))
    labels = {}
    for name in unique:
        if len(name) <= width:
            labels[name] = name
            continue
        shared = max((_shared_start(name, other) for other in unique if other != name), default=0)
        start = max(name.rfind(mark, 0, shared + 1) for mark in _BOUNDARIES) + 1
        start = max(0, min(start, len(name) - (width - 1)))
        labels[name] = fit(("…" if start else "") + name[start:], width)
    return labels


def _shared_start(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


_SHORT_OPTIONS = (
    ("reserved-", "RI-"),
    ("savings-plan-compute-", "CSP-"),
    ("savings-plan-ec2-instance-", "EC2SP-"),
)


def short_option(option: str) -> str:
    """A purchase option for a narrow column: ``savings-plan-ec2-instance-3yr-partial-upfront``
    is ``EC2SP-3yr-partial``, ``savings-plan-compute-1yr-no-upfront`` ``CSP-1yr-no`` and
    ``reserved-1yr-standard-no-upfront`` ``RI-1yr-standard-no-upfront``."""
    for long, short in _SHORT_OPTIONS:
        option = option.replace(long, short)
    return option.removesuffix("-upfront") if option.startswith(("CSP-", "EC2SP-")) else option
