"""Neuron compilation telemetry: how many graphs were compiled, loaded from the cache or failed,
and how long compiling took, read from the compiler lines inside a training log.

Lines recognised (Neuron SDK wrappers, any surrounding log format):

- ``||NEURON_CC_WRAPPER||: Call compiler with cmd: ...`` starts a compilation;
- ``Compiler status PASS`` / ``Compiler status FAIL`` ends the oldest one still open (a
  single process compiles one graph at a time);
- ``Failed compilation`` (``ERROR ||NEURON_CC_WRAPPER||``) marks the open one as failed;
- ``Using a cached neff`` is a cache hit (no compilation);
- ``neuron_parallel_compile`` summaries ``Total graphs: N`` / ``Total successful compilations:
  N`` / ``Total failed compilations: N`` are kept as the tool stated them.

Compiler status lines carry no timestamp, so a compilation's time is bounded by the stamped lines
around it: it started no earlier than the last stamped line at or before its start line and
ended no later than the first stamped line at or after its end line (the upper bound,
``compile_s``); the time between the first stamp after the start and the last stamp before the
end is surely inside it (the lower bound, ``compile_min_s``). Overlapping compilations are
counted once (union of intervals).

What recurs: with a persistent compile cache, the first launch compiles and later launches hit
the cache. Across repeated runs in launch order, the compile time of the later runs is what
every launch pays again (recurring, billed each time); the first run's excess over it is
one-off.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from trntui.core.scalars import moment_or_none

_ISO = r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)"
_ASCTIME = r"(\w{3} \w{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4})"
_STAMP_WINDOW = 48
"""A line's own timestamp is within its first characters (prefix or Megatron's ``[...]``)."""

COMPILED = "compiled"
FAILED = "failed"
CACHED = "cached"
UNFINISHED = "unfinished"


@dataclass(frozen=True)
class Compilation:
    outcome: str
    """``compiled``, ``failed``, ``cached`` (loaded from the cache) or ``unfinished``."""
    line: int
    start_s: float | None
    """Lower bound of the start (seconds since the log's first timestamp)."""
    end_s: float | None
    """Upper bound of the end."""


@dataclass(frozen=True)
class CompileSummary:
    compilations: int
    """Graphs the compiler was called for (cache misses)."""
    cache_hits: int
    failures: int
    unfinished: int
    compile_s: float | None
    """Upper bound of the time spent compiling (union of bounded intervals); None without
    timestamps around the compiler lines."""
    compile_min_s: float | None
    parallel_graphs: int | None
    parallel_succeeded: int | None
    parallel_failed: int | None
    start_time: dt.datetime | None
    """Wall clock of ``t_s == 0`` (the log's first timestamp)."""
    items: tuple[Compilation, ...] = ()

    @property
    def found(self) -> bool:
        return bool(self.compilations or self.cache_hits or self.parallel_graphs is not None)


def _stamps(lines: pl.DataFrame) -> pl.Series:
    head = pl.col("text").str.slice(0, _STAMP_WINDOW)
    iso = (
        head.str.extract(_ISO, 1)
        .str.replace(",", ".", literal=True)
        .str.replace("T", " ", literal=True)
        .str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S%.f", strict=False)
    )
    asc = parse_asctime(head.str.extract(_ASCTIME, 1))
    return lines.select(pl.coalesce(iso, asc).alias("wall"))["wall"]


def parse_asctime(text: pl.Expr) -> pl.Expr:
    """Python's ``time.asctime()`` text (``Tue Nov  4 08:15:02 2025``, a padded day) as a
    datetime; null where it does not parse."""
    return (
        text.str.replace_all(" +", " ")
        .str.replace(r"^(\w{3} \w{3}) (\d) ", "${1} 0${2} ")
        .str.strptime(pl.Datetime("us"), "%a %b %d %H:%M:%S %Y", strict=False)
    )


def _event_kind() -> pl.Expr:
    text = pl.col("text")
    return (
        pl.when(text.str.contains("Call compiler with cmd", literal=True))
        .then(pl.lit("call"))
        .when(text.str.contains("Compiler status PASS", literal=True))
        .then(pl.lit("pass"))
        .when(text.str.contains("Compiler status FAIL", literal=True))
        .then(pl.lit("fail"))
        .when(text.str.contains("Failed compilation", literal=True))
        .then(pl.lit("failed"))
        .when(text.str.contains("Using a cached neff", literal=True))
        .then(pl.lit("cached"))
        .when(text.str.contains(r"Total (graphs|successful compilations|failed compilations):"))
        .then(pl.lit("summary"))
    )


def compile_summary(lines: pl.DataFrame) -> CompileSummary:
    """Count and time the compilations in a log given as ``line`` / ``text`` rows."""
    lines = lines.select(pl.col("line").cast(pl.Int64), pl.col("text").cast(pl.String))
    frame = lines.with_columns(_stamps(lines).alias("wall"), _event_kind().alias("kind"))
    start = moment_or_none(frame["wall"].drop_nulls().min())
    frame = frame.with_columns(
        pl.col("wall").forward_fill().alias("before"),
        pl.col("wall").backward_fill().alias("after"),
    )
    events = frame.filter(pl.col("kind").is_not_null())

    def seconds(value: dt.datetime | None) -> float | None:
        return None if value is None or start is None else (value - start).total_seconds()

    items: list[Compilation] = []
    open_calls: list[dict[str, Any]] = []
    sure: list[tuple[float, float]] = []
    totals: dict[str, int] = {}
    for row in events.iter_rows(named=True):
        kind = row["kind"]
        if kind == "call":
            open_calls.append(row)
        elif kind in ("pass", "fail") and open_calls:
            call = open_calls.pop(0)
            failed = kind == "fail" or call.get("failed", False)
            items.append(
                Compilation(
                    FAILED if failed else COMPILED,
                    call["line"],
                    seconds(call["before"]),
                    seconds(row["after"]),
                )
            )
            lo, hi = seconds(call["after"]), seconds(row["before"])
            if lo is not None and hi is not None and hi > lo:
                sure.append((lo, hi))
        elif kind == "failed":
            if open_calls:
                open_calls[0]["failed"] = True
            elif items and items[-1].outcome in (COMPILED, FAILED):
                last = items[-1]
                items[-1] = Compilation(FAILED, last.line, last.start_s, last.end_s)
            else:
                items.append(Compilation(FAILED, row["line"], None, None))
        elif kind == "cached":
            items.append(
                Compilation(CACHED, row["line"], seconds(row["before"]), seconds(row["after"]))
            )
        elif kind == "summary":
            text = row["text"]
            for key, label in (
                ("graphs", "Total graphs:"),
                ("succeeded", "Total successful compilations:"),
                ("failed", "Total failed compilations:"),
            ):
                if label in text:
                    tail = text.split(label, 1)[1].strip().split()
                    if tail and tail[0].isdigit():
                        totals[key] = totals.get(key, 0) + int(tail[0])
    for call in open_calls:
        outcome = FAILED if call.get("failed") else UNFINISHED
        items.append(Compilation(outcome, call["line"], seconds(call["before"]), None))

    called = [i for i in items if i.outcome in (COMPILED, FAILED, UNFINISHED) and i.line]
    timed = [
        (i.start_s, i.end_s)
        for i in items
        if i.outcome in (COMPILED, FAILED) and i.start_s is not None and i.end_s is not None
    ]
    return CompileSummary(
        compilations=len(called),
        cache_hits=sum(1 for i in items if i.outcome == CACHED),
        failures=sum(1 for i in items if i.outcome == FAILED),
        unfinished=sum(1 for i in items if i.outcome == UNFINISHED),
        compile_s=union_length(timed) if timed else None,
        compile_min_s=union_length(sure) if timed else None,
        parallel_graphs=totals.get("graphs"),
        parallel_succeeded=totals.get("succeeded"),
        parallel_failed=totals.get("failed"),
        start_time=start,
        items=tuple(sorted(items, key=lambda i: i.line)),
    )


def union_length(intervals: Sequence[tuple[float, float]]) -> float:
    """Total length covered by possibly overlapping intervals."""
    total = 0.0
    current: tuple[float, float] | None = None
    for lo, hi in sorted(intervals):
        if current is None or lo > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = (lo, hi)
        else:
            current = (current[0], max(current[1], hi))
    if current is not None:
        total += current[1] - current[0]
    return total


@dataclass(frozen=True)
class CompileRecurrence:
    """How much compile time every launch pays again, from repeated runs in launch order."""

    runs: int
    first_compile_s: float | None
    recurring_s: float | None
    """Compile time of a launch with a warm cache (median of the later runs); None when it
    cannot be told (a single run that compiled)."""
    one_off_s: float | None
    explanation: str


def compile_recurrence(summaries: Sequence[CompileSummary]) -> CompileRecurrence:
    """Split compile time into recurring and one-off (rule in the module docstring)."""
    if not summaries:
        return CompileRecurrence(0, None, None, None, "no compiler lines found")
    first = summaries[0]
    later = [s.compile_s if s.compile_s is not None else 0.0 for s in summaries[1:]]
    first_s = first.compile_s if first.compile_s is not None else 0.0
    if not later:
        if first.compilations == 0 and first.cache_hits:
            return CompileRecurrence(
                1,
                first_s,
                first_s,
                0.0,
                f"every graph came from the cache ({first.cache_hits} hits): what remains "
                "recurs on every launch",
            )
        return CompileRecurrence(
            1,
            first.compile_s,
            None,
            None,
            "one run: whether its compilation recurs is not measured (repeat the run with the "
            "same compile cache to see cache hits)",
        )
    recurring = statistics.median(later)
    hits = sum(s.cache_hits for s in summaries[1:])
    misses = sum(s.compilations for s in summaries[1:])
    return CompileRecurrence(
        len(summaries),
        first_s,
        recurring,
        max(0.0, first_s - recurring),
        f"first run compiled {first.compilations} graphs; the {len(later)} later runs had "
        f"{hits} cache hits and {misses} compilations (median compile time of the later runs "
        "is what each launch pays again)",
    )
