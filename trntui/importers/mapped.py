"""Any other CSV or JSONL run log, read through a column mapping the user confirms.

PyTorch Lightning's ``metrics.csv``, experiment-tracker exports and a team's own logger all
have columns by name but no fixed layout, so no sniffer can know which column is what. The
mapping says it: which column is the time (and its unit), the step, the samples and tokens
consumed (cumulative or per row), the loss and the evaluation metric. ``suggest_mapping``
proposes one from the column names, ``preview`` shows the first rows as they would be
imported (with the problems found) before anything is stored, and
``trntui.store.mappings`` remembers the confirmed mapping per project, keyed by the header's
column set (``shape_key``), for the next file of the same shape.

Elapsed times (``s``, ``ms``, ``min``, ``h``) are taken as time since launch; absolute times
(Unix time, date-time text) count from the first row's.

Rows: a row with a metric value becomes an ``eval`` row; a row with a step, loss, samples or
tokens becomes a ``step`` row (Lightning writes training and validation values on separate,
sparse rows). Empty cells are unknown, never 0. A non-empty cell that is not a number (or not
a time) raises ``InputFileError`` naming its line and column.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.safe_json import parse_json
from trntui.core.scalars import moment_or_none, number_or_none
from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource, conform
from trntui.importers._base import SourceFile, Steps, decode_text, read_source

NAME = "mapped"
TIME_UNITS = ("s", "ms", "min", "h", "epoch_s", "epoch_ms", "datetime")
"""Elapsed seconds / milliseconds / minutes / hours, Unix time in seconds or milliseconds, or
date-time text (ISO 8601)."""
CUMULATIVE = "cumulative"
PER_ROW = "per_row"
ROLES = ("time", "step", "samples", "tokens", "loss", "metric")

_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "min": 60.0, "h": 3600.0}
_SUGGESTIONS = {
    "time": ("timestamp", "time", "wall_time", "walltime", "elapsed", "elapsed_s", "_timestamp"),
    "step": ("step", "global_step", "iteration", "iter", "trainer/global_step", "_step"),
    "samples": ("samples", "consumed_samples", "train_samples", "num_samples"),
    "tokens": ("tokens", "consumed_tokens", "num_tokens", "train_tokens"),
    "loss": ("loss", "train_loss", "train/loss", "train_loss_step", "lm_loss"),
}
_METRIC_PREFIXES = ("val", "eval", "valid", "test")


@dataclass(frozen=True)
class ColumnMapping:
    """Which column plays which role; ``None`` = the file does not have it."""

    time: str | None = None
    time_unit: str = "s"
    step: str | None = None
    samples: str | None = None
    tokens: str | None = None
    counts: str = CUMULATIVE
    """Whether ``samples`` / ``tokens`` are running totals or per row."""
    loss: str | None = None
    metric: str | None = None
    metric_higher_is_better: bool | None = None

    def problems(self, columns: Iterable[str]) -> list[str]:
        """What is wrong with this mapping for a file with ``columns`` (empty when fine)."""
        names = set(columns)
        out = [
            f"{role}: no column named {getattr(self, role)!r}"
            for role in ROLES
            if getattr(self, role) is not None and getattr(self, role) not in names
        ]
        if self.time_unit not in TIME_UNITS:
            out.append(f"time unit {self.time_unit!r} is not one of {', '.join(TIME_UNITS)}")
        if self.counts not in (CUMULATIVE, PER_ROW):
            out.append(f"counts must be {CUMULATIVE} or {PER_ROW}")
        if self.step is None and self.time is None:
            out.append("map a step or a time column: without either there is no progress")
        used = [getattr(self, role) for role in ROLES if getattr(self, role) is not None]
        if len(used) != len(set(used)):
            out.append("one column is mapped to two roles")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ColumnMapping:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class RawTable:
    """A CSV or JSONL file as text cells, with the source line of each row."""

    source: SourceFile
    kind: str
    """``csv`` or ``jsonl``."""
    columns: tuple[str, ...]
    frame: pl.DataFrame
    """All columns as String, plus ``__line``."""


@dataclass(frozen=True)
class MappingPreview:
    columns: tuple[str, ...]
    shape: str
    raw_head: pl.DataFrame
    """The first rows as they are in the file."""
    timeline_head: pl.DataFrame | None
    """The same rows as they would be imported; None when the mapping has problems."""
    problems: tuple[str, ...]
    rows: int


def shape_key(columns: Iterable[str]) -> str:
    """Identity of a file's shape: its set of column names (order and rows do not matter)."""
    text = "\n".join(sorted(set(columns)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _read_jsonl(source: SourceFile) -> RawTable:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    columns: dict[str, None] = {}
    for number, text in enumerate(decode_text(source).split("\n"), start=1):
        if not text.strip():
            continue
        record = parse_json(
            text, path=source.name, line=number, expected="one JSON object a line", what="line"
        )
        if not isinstance(record, dict):
            raise InputFileError(
                source.name,
                "line is not a JSON object",
                line=number,
                expected="one JSON object a line",
            )
        cells = {
            str(k): None if v is None else v if isinstance(v, str) else json.dumps(v)
            for k, v in record.items()
        }
        columns.update(dict.fromkeys(cells))
        rows.append(cells)
        lines.append(number)
    if not rows:
        raise InputFileError(source.name, "no JSON rows", expected="one JSON object a line")
    names = tuple(columns)
    frame = pl.DataFrame(
        {name: [row.get(name) for row in rows] for name in names},
        schema=dict.fromkeys(names, pl.String),
    ).with_columns(pl.Series("__line", lines, dtype=pl.Int64))
    return RawTable(source, "jsonl", names, frame)


def _read_csv(source: SourceFile) -> RawTable:
    text = decode_text(source)
    try:
        frame = pl.read_csv(text.encode("utf-8"), infer_schema=False, truncate_ragged_lines=False)
    except pl.exceptions.PolarsError as error:
        raise InputFileError(
            source.name,
            f"not a readable CSV ({str(error).splitlines()[0]})",
            expected="CSV with a header row",
        ) from None
    names = tuple(frame.columns)
    if len(set(names)) != len(names) or not names:
        raise InputFileError(source.name, "header has empty or repeated column names", line=1)
    # One row per line after the header; blank lines are skipped by the reader.
    numbers = [i for i, line in enumerate(text.split("\n")[1:], start=2) if line.strip()]
    if len(numbers) != frame.height:
        numbers = list(range(2, frame.height + 2))
    frame = frame.with_columns(
        pl.Series("__line", numbers[: frame.height], dtype=pl.Int64),
        *(pl.col(n).str.strip_chars() for n in names),
    )
    return RawTable(source, "csv", names, frame)


def read_table(path: Path) -> RawTable:
    """Read a CSV or JSONL file's cells as text (JSONL when the first character is ``{``)."""
    source = read_source(path)
    if source.data.lstrip()[:1] == b"{":
        return _read_jsonl(source)
    return _read_csv(source)


def suggest_mapping(columns: Iterable[str]) -> ColumnMapping:
    """A first guess from column names, for the user to confirm or correct."""
    names = list(columns)
    lower = {name.lower(): name for name in names}
    found: dict[str, str | None] = {}
    for role, candidates in _SUGGESTIONS.items():
        found[role] = next((lower[c] for c in candidates if c in lower), None)
    metric = next(
        (
            name
            for name in names
            if name.lower().startswith(_METRIC_PREFIXES) and name != found.get("loss")
        ),
        None,
    )
    unit = "s"
    if found["time"] is not None and found["time"].lower() in ("timestamp", "_timestamp"):
        unit = "epoch_s"
    higher = None
    if metric is not None:
        higher = not any(word in metric.lower() for word in ("loss", "perplexity", "ppl", "error"))
    return ColumnMapping(
        time=found["time"],
        time_unit=unit,
        step=found["step"],
        samples=found["samples"],
        tokens=found["tokens"],
        loss=found["loss"],
        metric=metric,
        metric_higher_is_better=higher,
    )


def _number(table: RawTable, column: str, dtype: type[pl.DataType]) -> pl.Series:
    raw = table.frame[column]
    values = raw.cast(pl.Float64, strict=False)
    bad = table.frame.filter(raw.is_not_null() & (raw != "") & values.is_null())
    if bad.height:
        raise InputFileError(
            table.source.name,
            f"{bad[column][0]!r} is not a number",
            line=int(bad["__line"][0]),
            key=column,
            expected="a number or an empty cell",
        )
    if dtype == pl.Int64:
        fractional = table.frame.filter(
            # Not finite: infinite, or NaN (which Polars takes as equal to its own rounding).
            values.is_not_null() & (~values.is_finite() | (values != values.round(0)))
        )
        if fractional.height:
            raise InputFileError(
                table.source.name,
                "step is not a whole number",
                line=int(fractional["__line"][0]),
                key=column,
            )
        return values.cast(pl.Int64)
    return values


def _times(table: RawTable, mapping: ColumnMapping) -> tuple[pl.Series, dt.datetime | None]:
    column = mapping.time
    assert column is not None
    unit = mapping.time_unit
    if unit == "datetime":
        raw = table.frame[column]
        wall = raw.str.to_datetime(time_unit="us", strict=False)
        bad = table.frame.filter(raw.is_not_null() & (raw != "") & wall.is_null())
        if bad.height:
            raise InputFileError(
                table.source.name,
                f"{bad[column][0]!r} is not a date-time",
                line=int(bad["__line"][0]),
                key=column,
                expected="ISO 8601 date-time text",
            )
        start = moment_or_none(wall.min())
        return (wall - start).dt.total_microseconds() / 1e6, start
    values = _number(table, column, pl.Float64)
    if unit in ("epoch_s", "epoch_ms"):
        seconds = values * (1e-3 if unit == "epoch_ms" else 1.0)
        first = number_or_none(seconds.min())
        start = (
            dt.datetime.fromtimestamp(first, dt.UTC) if first is not None and first > 0 else None
        )
        return seconds - first if first is not None else seconds, start
    return values * _UNIT_SECONDS[unit], None


def mapped_run(table: RawTable, mapping: ColumnMapping, limit: int | None = None) -> ImportedRun:
    """The table as a run timeline under ``mapping`` (problems raise ``InputFileError``)."""
    problems = mapping.problems(table.columns)
    if problems:
        raise InputFileError(table.source.name, "column mapping: " + "; ".join(problems))
    if limit is not None:
        table = replace(table, frame=table.frame.head(limit))
    cols: dict[str, pl.Series] = {"line": table.frame["__line"]}
    start = None
    if mapping.time is not None:
        cols["t_s"], start = _times(table, mapping)
    if mapping.step is not None:
        cols["step"] = _number(table, mapping.step, pl.Int64)
    for role in ("samples", "tokens"):
        column = getattr(mapping, role)
        if column is not None:
            values = _number(table, column, pl.Float64)
            if mapping.counts == PER_ROW:
                running = values.fill_null(0.0).cum_sum()
                values = pl.select(pl.when(values.is_not_null()).then(running)).to_series()
            cols[role] = values
    if mapping.loss is not None:
        cols["loss"] = _number(table, mapping.loss, pl.Float64)
    if mapping.metric is not None:
        cols["metric"] = _number(table, mapping.metric, pl.Float64)
    frame = pl.DataFrame({name: series.alias(name) for name, series in cols.items()})
    has = lambda name: pl.col(name).is_not_null() if name in frame.columns else pl.lit(False)  # noqa: E731
    progress = has("step") | has("loss") | has("samples") | has("tokens")
    steps = frame.filter(progress & ~has("metric")).with_columns(
        pl.lit(str(Kind.STEP)).alias("kind")
    )
    evals = frame.filter(has("metric")).with_columns(pl.lit(str(Kind.EVAL)).alias("kind"))
    timeline = conform(pl.concat([steps, evals], how="diagonal_relaxed").sort("line"))
    if timeline.is_empty():
        raise InputFileError(
            table.source.name,
            "no row has a value in the mapped step, loss, samples, tokens or metric columns",
            line=2,
        )
    has_clock = mapping.time is not None
    metadata = RunMetadata(
        format=NAME,
        source=table.source.name,
        sha256=table.source.sha256,
        time_source=TimeSource.WALL_CLOCK if has_clock else TimeSource.NONE,
        launch_time=start,
        throughput_unit="samples/s" if mapping.samples else None,
        quality_metric=mapping.metric,
        quality_higher_is_better=mapping.metric_higher_is_better,
        facts={"column_mapping": json.dumps(mapping.to_dict(), sort_keys=True)},
        not_derivable=() if has_clock else ("times (no time column mapped)",),
        notes=(f"{table.kind} read through a column mapping confirmed by the user",),
    )
    return ImportedRun(timeline, metadata)


def preview(table: RawTable, mapping: ColumnMapping, rows: int = 8) -> MappingPreview:
    """The first ``rows`` rows raw and as imported, with the mapping's problems; never raises
    for a bad cell (the problem is listed instead)."""
    problems = list(mapping.problems(table.columns))
    head = None
    if not problems:
        try:
            head = mapped_run(table, mapping, limit=rows).timeline
        except InputFileError as error:
            problems.append(str(error))
    return MappingPreview(
        columns=table.columns,
        shape=shape_key(table.columns),
        raw_head=table.frame.head(rows),
        timeline_head=head,
        problems=tuple(problems),
        rows=table.frame.height,
    )


def import_mapped(path: Path, mapping: ColumnMapping, steps: Steps | None = None) -> ImportedRun:
    """Read ``path`` whole under ``mapping``: an ``ImportedRun`` to store with
    ``trntui.store.runs.add_run``, or ``InputFileError``."""
    steps = steps or Steps(str(path))
    table = read_table(path)
    steps.at(0.5)
    run = mapped_run(table, mapping)
    steps.at(0.95)
    return run
