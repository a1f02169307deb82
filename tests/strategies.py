"""Hypothesis strategies that build inventories from the field specs themselves.

Every declared field gets values across its whole allowed range, so a new field is covered by
the round-trip test the moment it is declared.
"""

from __future__ import annotations

import datetime as dt

from hypothesis import strategies as st

from trntui.core.fields import FieldSpec, specs_of
from trntui.core.inventory import (
    LIST_SECTIONS,
    SECTIONS,
    Inventory,
    TrainingTarget,
)

_TEXT = st.text(
    alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() != "")

_SPECIAL = {
    (TrainingTarget, "instance_type"): st.from_regex(
        r"\A(trn3|trn2|p5|p5en|g6)\.[0-9]{1,2}xlarge\Z"
    ),
    (TrainingTarget, "region"): st.sampled_from(["us-east-1", "us-west-2", "eu-north-1"]),
}


def value_strategy(cls: type, key: str, spec: FieldSpec) -> st.SearchStrategy:
    if (cls, key) in _SPECIAL:
        return _SPECIAL[(cls, key)]
    if spec.kind == "text":
        return _TEXT
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind == "choice":
        return st.sampled_from(spec.choices)
    if spec.kind == "date":
        return st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2100, 1, 1))
    if spec.kind == "list":
        return st.lists(_TEXT, min_size=1, max_size=4).map(tuple)
    low = spec.minimum if spec.minimum is not None else spec.greater_than
    high = spec.maximum
    if spec.kind == "int":
        low_int = None if low is None else int(low) + (1 if spec.greater_than is not None else 0)
        return st.integers(min_value=low_int, max_value=int(high) if high is not None else 10**9)
    return st.floats(
        min_value=low,
        max_value=high if high is not None else 1e12,
        exclude_min=spec.greater_than is not None,
        allow_nan=False,
        allow_infinity=False,
    )


def section_strategy(cls: type) -> st.SearchStrategy:
    return st.builds(
        cls, **{key: value_strategy(cls, key, spec) for key, spec in specs_of(cls).items()}
    )


def inventories() -> st.SearchStrategy[Inventory]:
    parts = {name: section_strategy(cls) for name, cls in SECTIONS.items()}
    parts["risks"] = st.lists(section_strategy(LIST_SECTIONS["risks"]), max_size=3).map(tuple)
    parts["targets"] = st.lists(
        section_strategy(TrainingTarget), max_size=3, unique_by=lambda t: t.name
    ).map(tuple)
    return st.builds(Inventory, **parts)
