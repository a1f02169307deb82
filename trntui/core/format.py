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


def usd_price(value: float | None) -> str:
    """A rate as its source states it, to the tenth of a cent where it has one: ``$1.428``,
    ``$55.04``, ``$0.0116`` (cents at least; AWS prices have up to four decimals, and rounding
    $1.428 to $1.43 is a different price)."""
    if value is None:
        return UNKNOWN
    text = f"{value:,.4f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"${whole}.{decimals.ljust(2, '0')}"


def ratio(value: float | None) -> str:
    """A ratio of two costs or times (Trainium3 / GPU): two decimals, in every view."""
    return UNKNOWN if value is None else f"{value:.2f}"


def with_unit(value: float | None, unit: str, work_unit: str | None = None) -> str:
    """An estimate input with its unit, as a person reads it: ``$113.93/h``, ``195 s``,
    ``2.041 samples/s``, ``$0.023/GB-month``, ``yes``; unknown when not known. ``unit`` is
    the input's (``InputSpec.unit``); "work units" reads as the goal's ``work_unit``."""
    if value is None:
        return UNKNOWN
    if unit == "1 = yes, 0 = no":
        return "yes" if value else "no"
    if unit.startswith("USD/"):
        per = unit.removeprefix("USD/").replace("instance-hour", "h")
        return f"{usd_price(value)}/{per}"
    if unit == "USD":
        return usd(value)
    shown = unit.replace("work units", work_unit or "work units")
    if unit == "fraction":
        return f"{value:.1%}"
    if value == 1 and shown in ("instances", work_unit) and shown.endswith("s"):
        shown = shown[:-1]  # one instance, one sample
    return f"{number(value)} {shown}"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and its noun, plural unless it is one: ``1 run``, ``3 runs``, ``0 runs``
    (``nouns``: a plural that is not the noun and an ``s``)."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


_SHORT_UNITS = {"tokens/s": "tok", "samples/s": "smp", "steps/s": "step", "epochs/s": "ep"}


def short_unit(unit: str | None) -> str:
    """A throughput unit in at most four characters, for a number in a narrow column whose
    header names another unit: ``tok`` for tokens/s, ``smp`` for samples/s."""
    known = unit or UNKNOWN
    return _SHORT_UNITS.get(known, known.removesuffix("/s")[:4])


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


# --- names in a fixed width ----------------------------------------------------------------


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


def fit_words(text: str, width: int | None) -> str:
    """``text`` in at most ``width`` cells, cut between words: its first words and its last
    words around one ``…`` (``GPU…p5.48xlarge)``, ``Trainium3 trial…``), so no word reads
    cut; the cut that keeps the most of the name wins, both ends on a tie (names that share a
    beginning stay apart by their ends). A name whose words are all too long for that is cut
    in the middle (``fit_middle``)."""
    if width is None or len(text) <= width:
        return text
    words = text.split(" ")
    best, best_key = "", (0, False)
    for head_count in range(len(words)):
        head = " ".join(words[:head_count])
        for tail_start in range(max(head_count, 1), len(words) + 1):
            tail = " ".join(words[tail_start:])
            label = f"{head}…{tail}"
            key = (len(head) + len(tail), bool(head and tail))
            if len(label) <= width and key > best_key:
                best, best_key = label, key
    return best if best_key[0] >= width // 2 else fit_middle(text, width)


_BOUNDARIES = "/_-. "


def distinct_labels(names: list[str], width: int) -> dict[str, str]:
    """A label of at most ``width`` cells for each name, chosen so that names sharing a long
    beginning still read apart: a cut name starts (after ``…``) at the word where it first
    differs from the most similar other name, e.g. ``…n2_24.09/llam…`` and ``…n4_24.09/llam…``
    for two MLPerf systems that differ only in their node count."""
    unique = sorted(set(names))
    shared_by = shared_starts(unique)
    labels = {}
    for name in unique:
        if len(name) <= width:
            labels[name] = name
            continue
        shared = shared_by[name]
        start = max(name.rfind(mark, 0, shared + 1) for mark in _BOUNDARIES) + 1
        start = max(0, min(start, len(name) - (width - 1)))
        if shared - start >= width - 2:  # no word boundary near the difference: cut there
            start = max(0, shared - width // 2)
        labels[name] = fit(("…" if start else "") + name[start:], width)
    return _still_distinct(labels, width)


def shared_starts(unique: list[str]) -> dict[str, int]:
    """For each of the sorted, distinct ``unique`` names, how many characters it shares at its
    start with the most similar other name. That name is a neighbour in sorted order (a name
    between two others shares at least as long a beginning with each as they share with each
    other), so two comparisons per name do: comparing every pair took a million comparisons
    for a team's thousand run sets, half of the time the Runs table took to fill."""
    shared = {}
    for index, name in enumerate(unique):
        neighbours = unique[max(index - 1, 0) : index + 2]
        shared[name] = max(
            (_shared_start(name, other) for other in neighbours if other != name), default=0
        )
    return shared


def _still_distinct(labels: dict[str, str], width: int) -> dict[str, str]:
    """``labels``, where two came out the same, those cut in the middle instead (their ends
    differ), and a name that still meets another's label numbered: never two the same."""
    seen: dict[str, list[str]] = {}
    for name, label in labels.items():
        seen.setdefault(label, []).append(name)
    for names in seen.values():
        if len(names) > 1:
            for name in names:
                labels[name] = fit_middle(name, width)
    taken: set[str] = set()
    for name in sorted(labels):
        label, number = labels[name], 1
        while label in taken:
            number += 1
            suffix = f"#{number}"
            label = fit(labels[name], width - len(suffix)) + suffix
        taken.add(label)
        labels[name] = label
    return labels


def _shared_start(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count
