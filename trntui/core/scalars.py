"""One value taken out of a Polars column, with the type the column holds.

Polars types an aggregate or a cell (``max``, ``median``, ``series[0]``) as any Python value,
since a column may hold anything. trntui's columns have fixed types (``TIMELINE_SCHEMA`` and the
stored tables), so a numeric column gives a number and a datetime column a ``datetime``; these
functions say so to the type checker and check it, so a column of the wrong type is a
``TypeError`` where it is read (as ``float(None)`` was), never a wrong number further on.
"""

from __future__ import annotations

from datetime import datetime


def number(value: object) -> float:
    """A numeric column's value as a float; anything else (None too) is a ``TypeError``."""
    if isinstance(value, int | float):
        return float(value)
    raise TypeError(f"expected a number from a numeric column, not {value!r}")


def number_or_none(value: object) -> float | None:
    """A numeric column's value as a float, None (a null, an empty column's mean) as None."""
    return None if value is None else number(value)


def moment(value: object) -> datetime:
    """A datetime column's value; anything else (None too) is a ``TypeError``."""
    if isinstance(value, datetime):
        return value
    raise TypeError(f"expected a datetime from a datetime column, not {value!r}")


def moment_or_none(value: object) -> datetime | None:
    """A datetime column's value, None (a null, an empty column's min) as None."""
    return None if value is None else moment(value)
