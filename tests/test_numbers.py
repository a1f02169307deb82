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


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [(113.93, "USD/instance-hour", "$113.93/h"), (1.428, "USD/instance-hour", "$1.428/h"),
     (40.0, "USD/instance-hour", "$40.00/h"), (0.0116, "USD/instance-hour", "$0.0116/h"),
     (195.0, "s", "195 s"), (5.2374, "work units/s", "5.237 samples/s"),
     (0.023, "USD/GB-month", "$0.023/GB-month"), (1.0, "1 = yes, 0 = no", "yes"),
     (0.25, "fraction", "25.0%"), (None, "s", "unknown"), (1.0, "instances", "1 instance"),
     (2.0, "instances", "2 instances"), (1.0, "work units", "1 sample"), (1.0, "s", "1 s")],
)  # fmt: skip
def test_an_input_is_shown_with_its_unit_and_the_digits_that_matter(
    value: float | None, unit: str, shown: str
) -> None:
    """Issue 26, item 5: Inputs showed `113.9` for $113.93/h and `195` with no unit; Prices
    `$1.43` for $1.428; the CLI `5.2` where the app showed 5.237."""
    from trntui.core.format import with_unit

    assert with_unit(value, unit, "samples") == shown


def test_a_count_says_its_noun_in_the_plural_unless_it_is_one() -> None:
    """A user review read "1 runs", "1 restarts" and "1 instances"."""
    from trntui.core.format import plural

    assert [plural(n, "run") for n in (0, 1, 2, 1200)] == [
        "0 runs",
        "1 run",
        "2 runs",
        "1,200 runs",
    ]
    assert plural(1, "stall") == "1 stall" and plural(3, "analysis", "analyses") == "3 analyses"


def test_a_ratio_reads_the_same_in_every_view() -> None:
    from trntui.core.format import ratio

    assert ratio(0.70961) == "0.71" and ratio(None) == "unknown"
