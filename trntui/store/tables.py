"""Reading a project's Parquet table back, whatever was done to it since trntui wrote it.

A table edited or damaged by hand (a column dropped or renamed, a type changed, a row
repeated) is refused with ``InputFileError`` naming the file and what is wrong, never a Polars
traceback from whichever computation meets it first; and a row repeated under the same id
would count what it measured twice, so it is refused too (``key``).
"""

from __future__ import annotations

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
) -> pl.DataFrame:
    """The table at ``path`` with exactly ``schema``'s columns and types.

    ``what`` names the table in messages ("runs table"); ``ids`` is ``(column, kind)`` of a
    column of ids that become file names (``store.paths`` kinds: "run id", "capture id"),
    each checked; no two rows may agree on all of ``unique`` (``twice`` says what a repeat
    would do).
    """
    try:
        frame = pl.read_parquet(path)
    except _READ_ERRORS as error:
        raise InputFileError(str(path), f"{what} cannot be read ({error})") from None
    missing = [name for name in schema if name not in frame.columns]
    if missing:
        raise InputFileError(
            str(path), f"{what} lacks columns", key=missing[0], expected=", ".join(schema)
        )
    try:
        frame = frame.select(list(schema)).cast(schema)
    except pl.exceptions.PolarsError as error:
        raise InputFileError(str(path), f"{what} has wrong column types ({error})") from None
    if ids is not None:
        check_column(path, ids[1], ids[0], frame[ids[0]])
    if unique:
        again = ~frame.select(pl.struct(unique).is_first_distinct()).to_series()
        if again.any():
            row = int(again.arg_true()[0]) + 1
            shown = ", ".join(f"{name} {frame[name][row - 1]!r}" for name in unique)
            raise InputFileError(
                str(path),
                f"row {row} repeats {shown}, which trntui never writes (was it edited?); {twice}",
                key=unique[0],
                expected=f"one row per {' and '.join(unique)}",
            )
    return frame
