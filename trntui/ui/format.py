"""How durations, purchase options and cut labels are written on screen, the same in every
table, plot and detail."""

from __future__ import annotations

from trntui.core.format import UNKNOWN, distinct_labels, duration, fit, fit_middle, fit_words

__all__ = [
    "UNKNOWN",
    "distinct_labels",
    "duration",
    "fit",
    "fit_middle",
    "fit_words",
    "short_option",
]


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
