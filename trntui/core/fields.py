"""Field descriptions shared by the TOML loader, the CLI and the inventory form.

Every inventory value is declared once, with its label, unit, allowed range and help text. The
same declaration parses what a person types in the form, checks what a hand-edited TOML file
holds, and renders the label and unit on screen, so the rules cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

FieldKind = Literal["text", "int", "float", "date", "choice", "list", "bool"]

_KIND_EXPECTED = {
    "text": "a text string",
    "int": "a whole number",
    "float": "a number",
    "date": "a date as YYYY-MM-DD",
    "choice": "one of the listed choices",
    "list": "a list of text items",
    "bool": "true or false",
}


class FieldValueError(ValueError):
    """A value does not fit its field; the message is written for the person who typed it."""


_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
)
"""A number as people write one: ASCII digits, a point for decimals, commas only between
groups of three digits (``6,144``), an exponent. Python's ``float`` also takes ``1_000``,
full-width digits (``１２３``), ``nan`` and ``inf``; a comma anywhere else is likely a decimal
comma (``1,5``), which stripping would read as 15."""


def parse_number(text: str) -> float:
    """The finite number ``text`` writes (by ``_NUMBER``), or ``FieldValueError`` saying why."""
    raw = text.strip()
    if not _NUMBER.fullmatch(raw):
        hint = ""
        if "," in raw:
            hint = ": a point marks decimals (1.5); a comma only groups thousands (6,144)"
        elif "_" in raw or not raw.isascii():
            hint = ": write it with the digits 0-9 and no underscores"
        raise FieldValueError(f"'{text}' is not a number{hint}")
    value = float(raw.replace(",", ""))
    if not math.isfinite(value):
        raise FieldValueError(f"'{text}' is too large to be a number trntui can use")
    return value


@dataclass(frozen=True)
class FieldSpec:
    """How one value is entered, checked and shown."""

    kind: FieldKind
    label: str
    unit: str = ""
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    greater_than: float | None = None
    choices: tuple[str, ...] = ()
    required: bool = False
    placeholder: str = ""
    short: str = ""
    """Column header where space is tight (tables); defaults to the label."""
    validator: Callable[[Any], None] | None = None
    """A further rule beyond type and range (e.g. the shape of an AWS region code); raises
    ``FieldValueError``."""

    @property
    def expected(self) -> str:
        """What a valid value looks like, in words (used in error messages)."""
        if self.kind == "choice":
            return "one of " + ", ".join(f"'{c}'" for c in self.choices)
        text = _KIND_EXPECTED[self.kind]
        bounds = self._bounds_text()
        return f"{text} {bounds}".strip()

    def _bounds_text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.greater_than is not None and self.maximum is not None:
            return f"above {_num(self.greater_than)}{unit}, at most {_num(self.maximum)}{unit}"
        if self.greater_than is not None:
            return f"above {_num(self.greater_than)}{unit}"
        if self.minimum is not None and self.maximum is not None:
            return f"from {_num(self.minimum)} to {_num(self.maximum)}{unit}"
        if self.minimum is not None:
            return f"of at least {_num(self.minimum)}{unit}"
        if self.maximum is not None:
            return f"of at most {_num(self.maximum)}{unit}"
        return ""

    def _number(self, raw: str) -> float:
        try:
            return parse_number(raw)
        except FieldValueError as error:
            raise FieldValueError(f"{error}; expected {self.expected}") from None

    def parse_text(self, text: str) -> Any:
        """Turn what a person typed into a value (``None`` for an empty optional field)."""
        raw = text.strip()
        if not raw:
            if self.required:
                raise FieldValueError(f"{self.label} is required")
            return () if self.kind == "list" else None
        if self.kind == "text":
            return self.check(raw)
        if self.kind == "int":
            number = self._number(raw)
            if number != int(number):
                raise FieldValueError(f"'{raw}' is not {self.expected}")
            return self.check(int(number))
        if self.kind == "float":
            return self.check(self._number(raw))
        if self.kind == "date":
            try:
                value = dt.date.fromisoformat(raw)
            except ValueError:
                raise FieldValueError(f"'{raw}' is not a date: use YYYY-MM-DD") from None
            return self.check(value)
        if self.kind == "choice":
            lowered = {c.lower(): c for c in self.choices}
            if raw.lower() not in lowered:
                raise FieldValueError(f"'{raw}' is not {self.expected}")
            return lowered[raw.lower()]
        if self.kind == "list":
            return self.check(tuple(item.strip() for item in raw.split(",") if item.strip()))
        if self.kind == "bool":
            if raw.lower() in {"yes", "true", "y", "1"}:
                return True
            if raw.lower() in {"no", "false", "n", "0"}:
                return False
            raise FieldValueError(f"'{raw}' is not yes or no")
        raise AssertionError(f"unhandled field kind {self.kind}")

    def check(self, value: Any) -> Any:
        """Check a typed value (from TOML or from ``parse_text``); return it normalised."""
        value = self._check_type(value)
        if self.validator is not None and value not in (None, ()):
            self.validator(value)
        return value

    def _check_type(self, value: Any) -> Any:
        if value is None:
            if self.required:
                raise FieldValueError(f"{self.label} is required")
            return None
        kind = self.kind
        if kind in ("text", "choice"):
            if not isinstance(value, str):
                raise FieldValueError(f"expected {self.expected}, found {_type_name(value)}")
            if kind == "choice" and value not in self.choices:
                raise FieldValueError(f"'{value}' is not {self.expected}")
            if self.required and not value.strip():
                raise FieldValueError(f"{self.label} is required")
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                raise FieldValueError(f"expected {self.expected}, found {_type_name(value)}")
            return value
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise FieldValueError(f"expected {self.expected}, found {_type_name(value)}")
            self._check_range(value)
            return value
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise FieldValueError(f"expected {self.expected}, found {_type_name(value)}")
            value = float(value)
            if not math.isfinite(value):
                raise FieldValueError(f"expected a finite number, found {value}")
            self._check_range(value)
            return value
        if kind == "date":
            if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
                raise FieldValueError(f"expected {self.expected}, found {_type_name(value)}")
            return value
        if kind == "list":
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise FieldValueError(f"expected {self.expected}, found {_type_name(value)}")
            return tuple(value)
        raise AssertionError(f"unhandled field kind {kind}")

    def _check_range(self, value: float) -> None:
        too_low = (self.minimum is not None and value < self.minimum) or (
            self.greater_than is not None and value <= self.greater_than
        )
        too_high = self.maximum is not None and value > self.maximum
        if too_low or too_high:
            unit = f" {self.unit}" if self.unit else ""
            raise FieldValueError(
                f"{self.label} must be {self._bounds_text()}, not {_num(value)}{unit}"
            )

    def format_value(self, value: Any) -> str:
        """The text shown in an input for a stored value (inverse of ``parse_text``)."""
        if value is None:
            return ""
        if self.kind == "list":
            return ", ".join(value)
        if self.kind == "float":
            return _num(value)
        if self.kind == "bool":
            return "yes" if value else "no"
        if self.kind == "date":
            return str(value.isoformat())
        return str(value)


def spec_field(kind: FieldKind, label: str, **options: Any) -> Any:
    """Declare a dataclass field together with its ``FieldSpec``."""
    default = options.pop("default", () if kind == "list" else None)
    return dataclasses.field(default=default, metadata={"spec": FieldSpec(kind, label, **options)})


def specs_of(cls: type) -> dict[str, FieldSpec]:
    """The declared fields of a section class, in declaration order (= TOML key order)."""
    return {f.name: f.metadata["spec"] for f in dataclasses.fields(cls) if "spec" in f.metadata}


def _num(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the text '{value}'"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dt.datetime):
        return "a date-time"
    if isinstance(value, dt.date):
        return "a date"
    return type(value).__name__
