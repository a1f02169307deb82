"""core/scalars.py: one value out of a Polars column, with the column's type or a TypeError."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from trntui.core.scalars import moment, moment_or_none, number, number_or_none


def test_a_numeric_columns_aggregate_is_a_float():
    column = pl.Series([3, 1, 2], dtype=pl.Int64)
    assert number(column.max()) == 3.0
    assert isinstance(number(column.max()), float)
    assert number_or_none(column.median()) == 2.0


def test_an_empty_columns_aggregate_is_unknown_or_refused():
    empty = pl.Series([], dtype=pl.Float64)
    assert number_or_none(empty.mean()) is None
    with pytest.raises(TypeError):
        number(empty.mean())


def test_a_column_of_another_type_is_refused_where_it_is_read():
    with pytest.raises(TypeError):
        number(pl.Series(["7"]).max())
    with pytest.raises(TypeError):
        moment(pl.Series([1.5]).min())


def test_a_datetime_columns_value_is_a_datetime():
    first = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    column = pl.Series([first, first + dt.timedelta(hours=1)])
    assert moment(column.min()) == first
    assert moment_or_none(pl.Series([None], dtype=pl.Datetime("us", "UTC")).min()) is None
    with pytest.raises(TypeError):
        moment(None)
