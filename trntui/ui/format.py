"""How durations, purchase options and cut labels are written on screen, the same in every
table, plot and detail."""

from __future__ import annotations

from trntui.core.format import (
    UNKNOWN,
    distinct_labels,
    duration,
    fit,
    fit_middle,
    fit_words,
    plural,
)

__all__ = [
    "UNKNOWN",
    "distinct_labels",
    "duration",
    "fit",
    "fit_middle",
    "fit_words",
    "name_labels",
    "plural",
    "short_option",
    "title_name",
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


def name_labels(names: list[str], width: int | None) -> dict[str, str]:
    """Each name a person gave (a target, a set, a snapshot) in at most ``width`` cells, cut
    between words; where two would read the same, the labels the rest of the app gives cut
    names (``distinct_labels``)."""
    labels = {name: fit_words(name, width) for name in names}
    if width is not None and len(set(labels.values())) < len(labels):
        return distinct_labels(names, width)
    return labels


TITLE_NAME_CELLS = 60
"""Cells a name a person gave may take in a title or a sentence: a 200-character target name
took four lines of the Sensitivity tab's title."""


def title_name(name: str) -> str:
    """A target's (or set's, or snapshot's) name for a title or a sentence, cut between words
    past ``TITLE_NAME_CELLS`` (the Estimate tab, and the status line when it is picked, write it
    in full)."""
    return fit_words(name, TITLE_NAME_CELLS)
