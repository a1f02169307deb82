"""A captured console read as the terminal showed it, and the tqdm bars drawn on it.

A job's console (standard output and error in one file) holds more than lines: tqdm redraws
its bar in place with a carriage return, other output can follow a bar on the same line
(tqdm writes no line break after a draw), and a bar at another position moves the cursor
with escape sequences (``ESC [ A``). A terminal shows each carriage return as "back to the
start of the line": every piece between two returns is one draw, written over the one
before. So the text is read as those pieces (``console_records``): one row each, in the
order written, with the file's line number, escape sequences removed; a piece that only
blanks the line (tqdm clears a bar with spaces before writing a message) is dropped.

A tqdm draw (``bar_draws``) is ``{desc}: {pct}%|{bar}| {n}/{total} [{elapsed}<{remaining},
{rate}{postfix}]``; ``elapsed`` is ``[H:]MM:SS``, whole seconds cut down from the bar's own
clock (seconds since the bar was created or last reset). Lightning and NeMo keep the layout
and change what follows ``remaining``: a rate or none, then ``, key=value`` pairs.
"""

from __future__ import annotations

import re

import polars as pl

from trntui.importers._base import SourceFile, read_lines

ESCAPE = r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[@-Z\\-_])"
"""ANSI escape sequences (cursor moves, colours): what a terminal acts on, never shows."""

_BAR = (
    r"(?P<desc>[^\r]*?)\s*(?:(?P<pct>\d{1,3})%)?\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+|\?) "
    r"\[(?P<elapsed>\d+:\d{2}(?::\d{2})?)(?:<(?P<remaining>[^,\]]*))?(?P<rest>[^\]]*)\]"
)


def console_records(source: SourceFile) -> pl.DataFrame:
    """The pieces of text the program wrote, as a terminal shows them: ``line`` (1-based line
    of the file), ``text`` (escape sequences removed), in file order."""
    lines = read_lines(source, latin1=True)
    return (
        lines.lazy()
        .with_columns(pl.col("text").str.split("\r"))
        .explode("text")
        .with_columns(pl.col("text").str.replace_all(ESCAPE, ""))
        .filter(pl.col("text").str.strip_chars() != "")
        .collect()
    )


def elapsed_seconds(text: pl.Expr) -> pl.Expr:
    """tqdm's ``[H:]MM:SS`` in seconds (hours may exceed 24)."""
    parts = text.str.split(":").list.eval(pl.element().cast(pl.Int64, strict=False))
    return (
        pl.when(parts.list.len() == 3)
        .then(parts.list.get(0, null_on_oob=True) * 3600 + parts.list.get(1, null_on_oob=True) * 60
              + parts.list.get(2, null_on_oob=True))
        .otherwise(parts.list.get(0, null_on_oob=True) * 60 + parts.list.get(1, null_on_oob=True))
        .cast(pl.Float64)
    )  # fmt: skip


def bar_draws(records: pl.DataFrame) -> pl.DataFrame:
    """The tqdm draws among ``records``: ``line``, ``order`` (the record's place), ``desc``
    (the bar's label, ``""`` when it has none), ``n``, ``total`` (null for a bar that knows
    none: ``51/?``), ``elapsed_s`` and ``rest``
    (what follows the remaining time: a rate and any ``key=value`` postfix)."""
    groups = pl.col("text").str.extract_groups(_BAR)
    return (
        records.lazy()
        .with_row_index("order")
        # a bar with a total shows its percentage; one without (``51/?``) shows none
        .filter(
            pl.col("text").str.contains("%|", literal=True)
            | pl.col("text").str.contains("/? [", literal=True)
        )
        .select(
            "line",
            "order",
            groups.struct.field("desc").str.strip_chars().str.strip_suffix(":").alias("desc"),
            groups.struct.field("n").cast(pl.Int64, strict=False).alias("n"),
            groups.struct.field("total").cast(pl.Int64, strict=False).alias("total"),
            elapsed_seconds(groups.struct.field("elapsed")).alias("elapsed_s"),
            groups.struct.field("rest").alias("rest"),
        )
        .filter(pl.col("n").is_not_null() & pl.col("elapsed_s").is_not_null())
        .with_columns(pl.col("desc").fill_null(""))
        .collect()
    )


_PAIR = re.compile(r"(?:^|,)\s*([A-Za-z_][^=,\]]*?)\s*=\s*([^,\]]*)")


def postfix_pairs(rest: str) -> dict[str, str]:
    """The ``key=value`` pairs after a bar's rate (Lightning's metrics, ``v_num`` included)."""
    return {key: value.strip() for key, value in _PAIR.findall(rest or "")}


def exact_number(text: str | None) -> float | None:
    """A number printed in full, or None: tqdm and Lightning print large numbers with three
    significant digits in exponent form (``1.63e+6``), which is no count to subtract."""
    if text is None or "e" in text.lower():
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def number(text: str | None) -> float | None:
    """A number as printed, exponent form included; None when it is no finite number."""
    if text is None:
        return None
    try:
        value = float(text.strip().strip("'\"").replace(",", ""))
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def spaced(draws: list[tuple[int, int, float]], min_interval_s: float) -> list[int]:
    """Which of ``draws`` (line, step, seconds on the bar's clock) to keep as progress rows:
    the first, then each at least ``min_interval_s`` after the last kept, and the last (which
    replaces the kept draw before it when the two are closer than that). The bar's clock has
    whole seconds: an interval of ten of them carries at most a tenth of rounding."""
    kept: list[int] = []
    for index, draw in enumerate(draws):
        if not kept or draw[2] - draws[kept[-1]][2] >= min_interval_s:
            kept.append(index)
    if draws and kept[-1] != len(draws) - 1:
        if len(kept) > 1:
            kept.pop()
        kept.append(len(draws) - 1)
    return kept
