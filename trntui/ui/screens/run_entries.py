"""The forms a person fills in about runs: a run set's system size, where a run (or its set)
goes, a quality result measured outside the log. Each field's label, unit and range is a
``spec_field``, so the form, its checks and its help follow from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from trntui.core.fields import spec_field


@dataclass(frozen=True)
class SetSizeEntry:
    """The system a run set was measured on, stated by a person (its logs print none, or a
    wrong one: the stated size overrides them)."""

    TITLE: ClassVar[str] = "System size"
    nodes: int | None = spec_field("int", "Nodes", required=True, minimum=1, maximum=100_000)
    accelerators_per_node: int | None = spec_field(
        "int", "Per node", unit="accelerators", required=True, minimum=1, maximum=100_000
    )
    accelerator: str | None = spec_field("text", "Accelerator", placeholder="e.g. Trainium3")
    source: str = spec_field(
        "text", "Based on", required=True, default="", placeholder="job script, ticket, link"
    )


@dataclass(frozen=True)
class MoveEntry:
    """Where the highlighted run (or its whole set) goes: a run set by name."""

    TITLE: ClassVar[str] = "Run set"
    set_name: str = spec_field(
        "text", "Move to run set", required=True, default="", help="an existing or a new set"
    )
    whole_set: bool = spec_field(
        "bool", "Whole set", required=True, default=True, help="no: only the highlighted run"
    )


@dataclass(frozen=True)
class QualityResultEntry:
    """What a person enters for a quality result measured outside the log."""

    TITLE: ClassVar[str] = "Quality result of the final checkpoint"
    value: float | None = spec_field("float", "Measured value", required=True)
    source: str = spec_field(
        "text", "Source", required=True, default="", placeholder="eval job, report, link"
    )
    evaluation_minutes: float | None = spec_field(
        "float", "Evaluation took", unit="minutes", minimum=0
    )
