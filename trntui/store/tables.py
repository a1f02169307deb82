"""Reading a project's Parquet table back, whatever was done to it since trntui wrote it.

A table edited or damaged by hand (a column dropped or renamed, a type changed, a row
repeated) is refused with ``InputFileError`` naming the file and what is wrong, never a Polars
traceback from whichever computation meets it first; and a row repeated under the same id
would count what it measured twice, so it is refused too (``key``).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import polars as pl

from trntui.core.errors import InputFileError
from trntui.store.paths import check_column

_READ_ERRORS = (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError)


def read_table(
    path: Path,
    schema: pl.Schema,
    what: str,
    *,
    ids: tuple[str, str] | None = None,
    unique: tuple[str, ...] = (),
    twice: str = "it would count twice",
    where: pl.Expr | None = None,
    added: frozenset[str] = frozenset(),
) -> pl.DataFrame:
    """The table at ``path`` with exactly ``schema``'s columns and types (a column of
    ``added``, which a table written before it lacks, read as nulls when it is missing; the
    columns the table has beyond ``schema``, a newer trntui's, are not read).

    ``what`` names the table in messages ("runs table"); ``ids`` is ``(column, kind)`` of a
    column of ids that become file names (``store.paths`` kinds: "run id", "capture id"),
    each checked; no two rows may agree on all of ``unique`` (``twice`` says what a repeat
    would do). ``where``: only the rows it keeps are read (a scan that filters as it reads,
    for a reader that needs a few rows of a big table); the columns, the ids and the repeats
    are still checked over the whole table, from those columns alone.
    """
    try:
        if where is None:
            frame = pl.read_parquet(path)
            columns = frame.columns
        else:
            scan = pl.scan_parquet(path)
            columns = scan.collect_schema().names()
    except _READ_ERRORS as error:
        raise InputFileError(str(path), f"{what} cannot be read ({error})") from None
    missing = [name for name in schema if name not in columns and name not in added]
    if missing:
        raise InputFileError(
            str(path), f"{what} lacks columns", key=missing[0], expected=", ".join(schema)
        )
    read = present_or_null(schema, columns)
    if where is None:
        frame = _cast(path, what, frame.select(read), schema)
        keys = frame
    else:
        keyed = [*dict.fromkeys([*([ids[0]] if ids else []), *unique])]
        keys = _cast(path, what, scan.select(keyed), pl.Schema({n: schema[n] for n in keyed}))
    if ids is not None:
        check_column(path, ids[1], ids[0], keys[ids[0]])
    if unique:
        again = ~keys.select(pl.struct(unique).is_first_distinct()).to_series()
        if again.any():
            row = int(again.arg_true()[0]) + 1
            shown = ", ".join(f"{name} {keys[name][row - 1]!r}" for name in unique)
            raise InputFileError(
                str(path),
                f"row {row} repeats {shown}, which trntui never writes (was it edited?); {twice}",
                key=unique[0],
                expected=f"one row per {' and '.join(unique)}",
            )
    if where is None:
        return frame
    return _cast(path, what, scan.select(read), schema, where)


def present_or_null(schema: pl.Schema, columns: Collection[str]) -> list[pl.Expr]:
    """``schema``'s columns to select from a table that has ``columns``: each it has as it
    is, each it lacks (one added after the table was written) as nulls of its type."""
    return [
        pl.col(name) if name in columns else pl.lit(None, dtype).alias(name)
        for name, dtype in schema.items()
    ]


def _cast(
    path: Path,
    what: str,
    frame: pl.DataFrame | pl.LazyFrame,
    schema: pl.Schema,
    where: pl.Expr | None = None,
) -> pl.DataFrame:
    """``frame`` cast to ``schema`` (a lazy one read, only the rows ``where`` keeps)."""
    try:
        cast = frame.cast(schema)
        if isinstance(cast, pl.DataFrame):
            return cast
        return (cast if where is None else cast.filter(where)).collect()
    except pl.exceptions.PolarsError as error:
        raise InputFileError(str(path), f"{what} has wrong column types ({error})") from None
    except _READ_ERRORS as error:
        raise InputFileError(str(path), f"{what} cannot be read ({error})") from None
