"""Iteration lines: the fast path (Polars' CSV reader splits the file on ``|``) and the
general parser (fields found by name; names the line it cannot read), checked the same way.
"""

from __future__ import annotations

import re

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.timeline import Kind
from trntui.importers._base import SourceFile, read_numbered_lines
from trntui.importers.megatron.patterns import (
    COUNTS,
    ELAPSED,
    EXPECTED_ITERATION,
    FIELDS,
    ITERATION_HEAD,
    ITERATION_START,
    NUMBER,
    TIMESTAMP,
    TIMESTAMP_FORMAT,
    float_expr,
)


def iteration_rows(lines: pl.DataFrame, path: str) -> pl.DataFrame:
    """Parse iteration lines; a line that starts like one but is incomplete is an error."""
    text = pl.col("text")
    not_validation = ~text.str.contains("validation loss", literal=True)
    complete = text.str.contains(ELAPSED, literal=True)
    broken = (
        lines.filter(text.str.contains("iteration", literal=True) & ~complete & not_validation)
        .filter(text.str.contains(ITERATION_START))
        .head(1)
    )
    if not broken.is_empty():
        raise InputFileError(
            path,
            "iteration line is incomplete or malformed (truncated?)",
            line=int(broken["line"][0]),
            expected=EXPECTED_ITERATION,
        )
    # Validation lines ("validation loss at iteration N | lm loss value: ...") carry no elapsed
    # time, so every line that does is an iteration line.
    iterations = lines.filter(complete)
    if iterations.is_empty():
        return iterations
    parsed, laid_out = _split_fields(iterations)
    # A line is re-read by name when a field the first line has is not readable where it was.
    required = dict.fromkeys(["step", "samples", "step_ms", *laid_out])
    misfits = parsed.filter(pl.any_horizontal(pl.col(name).is_null() for name in required))
    if not misfits.is_empty():
        # Lines whose fields are not where the first line had them: read them by name.
        fixed = _extract_fields(iterations.join(misfits.select("line"), on="line", how="semi"))
        parsed = pl.concat(
            [parsed.join(misfits.select("line"), on="line", how="anti"), fixed]
        ).sort("line")
    return _checked(parsed, path)


def _checked(parsed: pl.DataFrame, path: str) -> pl.DataFrame:
    """Refuse unreadable or impossible iteration values; add step time and throughput."""
    unreadable = parsed.filter(
        pl.any_horizontal(pl.col(name).is_null() for name in ("step", "samples", "step_ms"))
    )
    if not unreadable.is_empty():
        raise InputFileError(
            path,
            "iteration line lacks the iteration number, consumed samples or elapsed time",
            line=int(unreadable["line"][0]),
            expected=EXPECTED_ITERATION,
        )
    nonsense = parsed.filter(
        ~pl.col("step_ms").is_finite()
        | (pl.col("step_ms") < 0)
        | ~pl.col("samples").is_finite()
        | (pl.col("batch").is_not_null() & ~pl.col("batch").is_finite())
    )
    if not nonsense.is_empty():
        raise InputFileError(
            path,
            "iteration line holds a number that is not finite or is negative",
            line=int(nonsense["line"][0]),
            expected="finite, non-negative elapsed time, consumed samples and batch size",
        )
    # One chunk: Polars may divide a one-row chunk differently in the last bit, and both
    # parsers must give the same numbers.
    return (
        parsed.rechunk()
        .with_columns(
            pl.lit(str(Kind.STEP)).alias("kind"),
            (pl.col("step_ms") / 1000.0).alias("step_time_s"),
        )
        .with_columns(
            pl.when(pl.col("step_time_s") > 0)
            .then(pl.col("batch") / pl.col("step_time_s"))
            .alias("throughput")
        )
    )


def _layout(data: bytes) -> dict[str, tuple[int, str]] | None:
    """Where the first iteration line has each field: column -> (index after ``|``, name)."""
    at = data.find(ELAPSED.encode())
    if at < 0:
        return None
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    line = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")
    fields = line.split("|")
    if not re.search(ITERATION_START, fields[0]):
        return None
    where = _field_positions(fields)
    return where if {"samples", "step_ms"} <= where.keys() else None


def _field_positions(fields: list[str]) -> dict[str, tuple[int, str]]:
    """Column -> (index, printed name) of each known field among an iteration line's pieces
    (split on ``|``; piece 0 is the head). The first occurrence of a name wins."""
    where: dict[str, tuple[int, str]] = {}
    for index, value in enumerate(fields[1:], start=1):
        name = value.split(":", 1)[0].strip()
        if name in FIELDS and FIELDS[name] not in where:
            where[FIELDS[name]] = (index, name)
    return where


def fast_split(source: SourceFile, path: str) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Fast path for the usual log: every iteration line has the fields where the first has.

    Polars' CSV reader splits the whole file on ``|`` in parallel, keeping only the head and
    the wanted fields; each value is then the text after its name, read as the file is scanned
    (the split text is never held whole). The other lines' text is cut from the bytes read
    (``_other_lines``: found from their first field), else read by ``read_numbered_lines``
    (a second scan of the file). Returns the parsed iteration rows and the other lines (as
    ``read_lines`` gives them), or ``None`` when any iteration line differs from that layout,
    when a second scan's line count disagrees with the split's (both are Polars' CSV reader
    with no quoting, so they number lines alike), or when an other line looks like an
    iteration line, so that the general parser (which reads fields by name and names a bad
    line) decides instead: the result is the same either way.
    """
    layout = _layout(source.data)
    if layout is None:
        return None
    wanted = sorted(index for index, _ in layout.values())
    head = pl.col("column_1")
    step_index, name = layout["step_ms"]
    step_field = pl.col(f"column_{step_index + 1}")
    is_iteration = (step_field.str.starts_with(f" {name}:").fill_null(False)).alias("is_iteration")
    # One lazy query: Polars computes the columns in parallel, sharing the splits of the head.
    halves = head.str.split_exact("iteration", 1)
    counts = halves.struct.field("field_1").str.split_exact("/", 1)
    stamp = halves.struct.field("field_0").str.strip_chars(" []")
    columns = [
        pl.col("line").cast(pl.Int64),
        counts.struct.field("field_0").str.strip_chars().cast(pl.Int64, strict=False).alias("step"),
        counts.struct.field("field_1")
        .str.strip_chars()
        .cast(pl.Int64, strict=False)
        .alias("planned"),
    ]
    for column in FIELDS.values():
        if column not in layout:
            columns.append(pl.lit(None, pl.Float64).alias(column))
            continue
        index, name = layout[column]
        columns.append(
            pl.col(f"column_{index + 1}")
            .str.strip_prefix(f" {name}:")
            .str.strip_chars()
            .cast(pl.Float64, strict=False)
            .alias(column)
        )
    wall = stamp.str.to_datetime(
        "%Y-%m-%d %H:%M:%S.%6f", time_unit="us", strict=False, cache=False
    ).alias("wall")
    try:
        rows = (
            pl.scan_csv(
                source.data,
                has_header=False,
                separator="|",
                quote_char=None,
                schema={f"column_{i + 1}": pl.String for i in range(wanted[-1] + 1)},
                truncate_ragged_lines=True,
                missing_columns="insert",
                extra_columns="ignore",
                comment_prefix=None,
                row_index_name="line",
                row_index_offset=1,
            )
            # Every row: the few other lines' values are dropped below, not filtered for first.
            # The head and the elapsed-time field as split tell the other lines apart (passed
            # on as the reader split them: cheaper than nulls in the iteration rows).
            .select(is_iteration, *columns, wall, head, step_field)
            .collect()
        )
    except (pl.exceptions.ComputeError, pl.exceptions.SchemaError):
        return None
    parsed = rows.drop("column_1", step_field.meta.output_name()).filter("is_iteration")
    if parsed["wall"].null_count():  # a stamp not in the usual format, or none: read its text
        stamps = rows.filter("is_iteration").select(stamp.alias("stamp"))
        parsed = _fix_stamps(parsed.with_columns(stamps["stamp"]))
    parsed = parsed.drop("is_iteration")
    # Every field of every iteration line must read as a number here; else the general parser
    # reads the file (it reads fields by name, or names the line it cannot read).
    misfit = pl.any_horizontal(pl.col(name).is_null() for name in ("step", *layout))
    if parsed.is_empty() or parsed.select(misfit.any()).item():
        return None
    other = rows.filter(~pl.col("is_iteration")).select(
        "line", "column_1", step_field.meta.output_name()
    )
    rest = _other_lines(source.data, other, step_index) if source.plain else None
    if rest is None:
        rest = read_numbered_lines(source, other["line"], rows.height)
    if rest is None:
        return None
    text = pl.col("text")
    # Lines the general parser would read as (or refuse as) iteration lines: let it decide.
    unusual = rest.filter(
        text.str.contains(ELAPSED, literal=True)
        | (
            text.str.contains("iteration", literal=True)
            & ~text.str.contains("validation loss", literal=True)
            & text.str.contains(ITERATION_START)
        )
    )
    if not unusual.is_empty():
        return None
    return _checked(parsed, path), rest


_MISSES = 1000
"""How many lines ``_other_lines`` may look at in vain before it leaves the work to
``read_numbered_lines``."""


def _other_lines(data: bytes, other: pl.DataFrame, step_index: int) -> pl.DataFrame | None:
    """The other lines' rows as ``read_lines`` gives them (``line``, ``text``), found in
    ``data`` from their fields as the ``|`` split read them; ``None`` when that cannot be
    sure (then ``read_numbered_lines`` reads them).

    ``other`` holds each other line's number, its first field (``column_1``) and its field at
    ``step_index`` (the elapsed time's place, which is not an elapsed time). Lines are looked
    for in order, each from the end of the one before: the first line after that point which
    starts a line with that first field and has that field at ``step_index`` is the line, since
    every line in between is an iteration line (its field there is an elapsed time). Only for
    a file of plain ASCII (``SourceFile.plain``): a file that is not ASCII (its text must be
    checked as UTF-8) or holds a NUL byte (refused by ``read_lines``) is left to
    ``read_numbered_lines``, as are lines this cannot find.
    """
    numbers: list[int] = []
    texts: list[str] = []
    at = 0  # where the line after the last one found starts
    misses = 0
    for number, first, stepped in other.iter_rows():
        head = (first or "").encode()
        start = 0 if at == 0 and data.startswith(head) else -1
        while True:
            if start < 0:
                found = data.find(b"\n" + head, max(at - 1, 0))
                if found < 0:
                    return None
                start = found + 1
            end = data.find(b"\n", start)
            line = data[start : end if end >= 0 else len(data)].removesuffix(b"\r")
            fields = line.split(b"|", step_index + 1)
            field = fields[step_index].decode() if len(fields) > step_index else ""
            if fields[0].decode() == (first or "") and field == (stepped or ""):
                numbers.append(number)
                texts.append(line.decode())
                at = end + 1 if end >= 0 else len(data)
                break
            misses += 1
            if misses > _MISSES:
                return None
            at, start = start + 1, -1
    return pl.DataFrame(
        {"line": numbers, "text": texts}, schema={"line": pl.Int64, "text": pl.String}
    )


def _head(column: pl.Expr) -> list[pl.Expr]:
    """Timestamp, iteration and planned iterations from the part before the first ``|``."""
    return [
        column.str.extract(TIMESTAMP, 1)
        .str.strptime(pl.Datetime("us"), TIMESTAMP_FORMAT, strict=False)
        .alias("wall"),
        column.str.extract(ITERATION_HEAD, 1).cast(pl.Int64, strict=False).alias("step"),
        column.str.extract(ITERATION_HEAD, 2).cast(pl.Int64, strict=False).alias("planned"),
    ]


def _fix_stamps(parsed: pl.DataFrame) -> pl.DataFrame:
    """Parse the timestamps the fast path could not (no or fewer fraction digits)."""
    odd = pl.col("wall").is_null() & (pl.col("stamp").str.len_bytes() > 0)
    if parsed.select(odd.any()).item():
        parsed = parsed.with_columns(
            pl.when(odd)
            .then(pl.col("stamp").str.strptime(pl.Datetime("us"), TIMESTAMP_FORMAT, strict=False))
            .otherwise(pl.col("wall"))
            .alias("wall")
        )
    return parsed.drop("stamp")


def _split_fields(iterations: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Split on `` | `` and read each field at the position the first line has it.

    Megatron prints the same fields in the same order on every line of a run, so one literal
    split replaces a regex pass per field; a line where a field is not at that position gets
    null there and is re-read by name (``_extract_fields``). Also returns the fields the first
    line has.
    """
    positions = _field_positions(iterations["text"][0].split(" | "))
    where = {column: (f"field_{index}", name) for column, (index, name) in positions.items()}
    last = max((index for index, _ in positions.values()), default=1)
    # Each split is materialized once (an eager select does not share sub-expressions).
    parts = iterations.select(
        "line", pl.col("text").str.split_exact(" | ", last).alias("f")
    ).unnest("f")
    head = parts.select(
        pl.col("field_0")
        .str.split_exact("iteration", 1)
        .struct.rename_fields(["stamp", "counts"])
        .alias("h")
    ).unnest("h")
    counts = head.select(
        pl.col("counts").str.split_exact("/", 1).struct.rename_fields(["it", "of"]).alias("c")
    ).unnest("c")
    parts = pl.concat(
        [parts, head.select(pl.col("stamp").str.strip_chars(" []")), counts], how="horizontal"
    )
    # Megatron prints six fraction digits: that fixed format is the fast path; other stamps are
    # re-read by ``_fix_stamps``.
    columns = [
        pl.col("line"),
        pl.col("stamp"),
        pl.col("stamp")
        .str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S.%6f", strict=False)
        .alias("wall"),
        *COUNTS,
    ]
    for column in FIELDS.values():
        if column not in where:
            columns.append(pl.lit(None, pl.Float64).alias(column))
            continue
        field, name = where[column]
        value = pl.col(field)
        if field == f"field_{last}":
            value = value.str.split_exact(" | ", 1).struct.field("field_0")
        columns.append(
            value.str.strip_prefix(name + ":")
            .str.strip_chars(" |")
            .cast(pl.Float64, strict=False)
            .alias(column)
        )
    return _fix_stamps(parts.select(columns)), list(where)


def _extract_fields(iterations: pl.DataFrame) -> pl.DataFrame:
    """Slow path: find each field by its name with a regex."""
    return iterations.select(
        "line",
        *_head(pl.col("text")),
        float_expr(r"consumed samples:\s*(\d+)").alias("samples"),
        float_expr(r"elapsed time per iteration \(ms\):\s*" + NUMBER).alias("step_ms"),
        float_expr(r"global batch size:\s*(\d+)").alias("batch"),
        float_expr(r"lm loss:\s*" + NUMBER).alias("loss"),
    )
