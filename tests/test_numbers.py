"""One rule for a number a person types, in a form field, an override and on the command line
(issue 30, item 15): ASCII digits, a point for decimals, commas only between thousands.
Python's ``float`` alone took ``1_000``, full-width digits, ``nan`` and ``inf``, and the form
stripped every comma, so a decimal comma (``1,5``) became 15."""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trntui.commands import finite_float
from trntui.core.fields import FieldSpec, FieldValueError, parse_number


@pytest.mark.parametrize(
    ("text", "value"),
    [("6144", 6144), ("6,144", 6144), (" 1,234,567.5 ", 1234567.5), ("-3.5", -3.5),
     (".5", 0.5), ("5.", 5.0), ("+2e3", 2000.0), ("1E-3", 0.001)],
)  # fmt: skip
def test_numbers_as_people_write_them(text: str, value: float) -> None:
    assert parse_number(text) == value
    assert finite_float(text) == value


@pytest.mark.parametrize(
    ("text", "why"),
    [("1,5", "a point marks decimals"), ("12,34", "a point marks decimals"),
     ("1_000", "digits 0-9"), ("１２３", "digits 0-9"), ("nan", "not a number"),
     ("inf", "not a number"), ("1e999", "too large"), ("e5", "not a number"),
     ("", "not a number"), ("0x10", "not a number")],
)  # fmt: skip
def test_what_is_not_a_number_is_refused_saying_why(text: str, why: str) -> None:
    with pytest.raises(FieldValueError, match=why):
        parse_number(text)
    with pytest.raises(argparse.ArgumentTypeError, match=why):
        finite_float(text)


def test_a_form_field_takes_the_same_rule() -> None:
    count = FieldSpec("int", "Instances", minimum=1)
    budget = FieldSpec("float", "Budget", unit="USD")
    assert count.parse_text("1,024") == 1024
    assert budget.parse_text("12,500.75") == 12500.75
    with pytest.raises(FieldValueError, match="a point marks decimals"):
        budget.parse_text("1,5")
    with pytest.raises(FieldValueError, match="whole number"):
        count.parse_text("2.5")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_number_written_by_python_reads_back(value: float) -> None:
    assert parse_number(repr(value)) == value
    assert math.isfinite(parse_number(f"{value:,}")) and parse_number(f"{value:,}") == float(
        f"{value:,}".replace(",", "")
    )
