"""The whole inventory: a section read from a TOML table with every problem and its key path
(``section_from_dict``), written back (``section_to_dict``), and ``Inventory``, the
document they make.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from trntui.core.fields import FieldValueError, specs_of
from trntui.core.format import plural
from trntui.core.inventory.sections import (
    LIST_SECTIONS,
    SECTIONS,
    DataPreparation,
    Distribution,
    MigrationRisk,
    ModelInfo,
    ProjectInfo,
    SideCosts,
    SoftwareStack,
    TrainingGoal,
    TrainingTarget,
)


@dataclass(frozen=True)
class InventoryProblem:
    """One invalid value, with the key path that locates it in the file."""

    section: str
    key: str | None
    message: str
    index: int | None = None
    expected: str | None = None

    @property
    def path(self) -> str:
        where = self.section if self.index is None else f"{self.section}[{self.index}]"
        return f"{where}.{self.key}" if self.key else where


class InventoryInvalid(ValueError):
    """The document does not describe a valid inventory; ``problems`` says where and why."""

    def __init__(self, problems: list[InventoryProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))


def check_field_value(cls: type, key: str, value: Any) -> Any:
    """Validate one value for ``cls.key`` (type, range and extra rules); return it normalised."""
    return specs_of(cls)[key].check(value)


def parse_value(cls: type, key: str, text: str) -> Any:
    """Parse what a person typed for ``cls.key``; raises ``FieldValueError`` with a message."""
    return specs_of(cls)[key].parse_text(text)


def section_from_dict(
    cls: type, data: Any, section: str, index: int | None = None
) -> tuple[Any, list[InventoryProblem]]:
    """Build one section object from a TOML table; collect problems instead of stopping."""
    problems: list[InventoryProblem] = []
    if not isinstance(data, dict):
        problems.append(InventoryProblem(section, None, "expected a table", index, "a table"))
        return cls(), problems
    specs = specs_of(cls)
    values: dict[str, Any] = {}
    retired: dict[str, str] = getattr(cls, "RETIRED", {})
    for key, raw in data.items():
        if key in retired:
            problems.append(InventoryProblem(section, key, retired[key], index))
            continue
        if key not in specs:
            known = ", ".join(specs)
            problems.append(
                InventoryProblem(section, key, f"unknown key (known keys: {known})", index)
            )
            continue
        try:
            values[key] = check_field_value(cls, key, raw)
        except FieldValueError as error:
            problems.append(InventoryProblem(section, key, str(error), index, specs[key].expected))
    for key, spec in specs.items():
        if spec.required and key not in values and key not in data:
            problems.append(
                InventoryProblem(section, key, f"{spec.label} is required", index, spec.expected)
            )
    obj = cls(**{k: v for k, v in values.items() if v is not None})
    return obj, problems


def section_to_dict(obj: Any) -> dict[str, Any]:
    """A section as a TOML table: declared key order, unset values left out (TOML has no null)."""
    out: dict[str, Any] = {}
    for key in specs_of(type(obj)):
        value = getattr(obj, key)
        if value is None or value == ():
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True)
class Inventory:
    """The whole workload inventory ``trntui.toml`` holds: one object per section of ``SECTIONS``,
    then the migration risks and the training targets."""

    project: ProjectInfo = dataclasses.field(default_factory=ProjectInfo)
    model: ModelInfo = dataclasses.field(default_factory=ModelInfo)
    software: SoftwareStack = dataclasses.field(default_factory=SoftwareStack)
    distribution: Distribution = dataclasses.field(default_factory=Distribution)
    goal: TrainingGoal = dataclasses.field(default_factory=TrainingGoal)
    data_prep: DataPreparation = dataclasses.field(default_factory=DataPreparation)
    side_costs: SideCosts = dataclasses.field(default_factory=SideCosts)
    risks: tuple[MigrationRisk, ...] = ()
    targets: tuple[TrainingTarget, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Inventory:
        """Check a whole document (without ``schema_version``); raise ``InventoryInvalid``."""
        problems: list[InventoryProblem] = []
        parts: dict[str, Any] = {}
        for name, raw in data.items():
            if name in SECTIONS:
                parts[name], found = section_from_dict(SECTIONS[name], raw, name)
                problems += found
            elif name in LIST_SECTIONS:
                if not isinstance(raw, list):
                    problems.append(
                        InventoryProblem(
                            name, None, f"expected [[{name}]] entries", None, "an array of tables"
                        )
                    )
                    continue
                items = []
                for i, item in enumerate(raw):
                    obj, found = section_from_dict(LIST_SECTIONS[name], item, name, i)
                    items.append(obj)
                    problems += found
                parts[name] = tuple(items)
            else:
                known = ", ".join([*SECTIONS, *LIST_SECTIONS])
                problems.append(InventoryProblem(name, None, f"unknown table (known: {known})"))
        inventory = cls(**parts)
        problems += [
            InventoryProblem("targets", "name", message, index)
            for index, message in _duplicate_target_names(inventory.targets)
        ]
        if problems:
            raise InventoryInvalid(problems)
        return inventory

    def to_dict(self) -> dict[str, Any]:
        """The document in a stable key order, so that diffs of the file stay small."""
        out: dict[str, Any] = {}
        for name in SECTIONS:
            table = section_to_dict(getattr(self, name))
            if table:
                out[name] = table
        for name in LIST_SECTIONS:
            items = [section_to_dict(item) for item in getattr(self, name)]
            if items:
                out[name] = items
        return out

    def open_risk_effort(self) -> tuple[float, int]:
        """Engineering days of the risks not resolved yet, and how many have no estimate."""
        open_risks = [r for r in self.risks if r.status != "resolved"]
        days = sum(r.effort_days for r in open_risks if r.effort_days is not None)
        return days, sum(r.effort_days is None for r in open_risks)

    def planned_steps(self) -> int | None:
        """Optimizer steps the training goal needs, when the goal and batch size tell.

        Logs such as neuronx-distributed's do not say how many steps a run was meant to do;
        without this a run cannot be told finished from stopped.
        """
        goal, batch = self.goal, self.distribution.global_batch_size
        if goal.work_amount is None or goal.work_unit is None:
            return None
        if goal.work_unit == "steps":
            return math.ceil(goal.work_amount)
        if goal.work_unit == "samples" and batch:
            return math.ceil(goal.work_amount / batch)
        if goal.work_unit == "tokens" and batch and self.model.sequence_length:
            return math.ceil(goal.work_amount / (batch * self.model.sequence_length))
        return None

    def with_run_set_renamed(self, old: str, new: str) -> Inventory:
        """The inventory with every target measured by run set ``old`` measured by ``new``
        (a renamed set keeps the targets it measures)."""
        targets = tuple(
            dataclasses.replace(t, run_set=new) if t.run_set == old else t for t in self.targets
        )
        return self if targets == self.targets else dataclasses.replace(self, targets=targets)

    def warnings(self, run_sets: Collection[str] | None = None) -> list[str]:
        """What is missing before an estimate can be defended (not errors: the file stays valid).

        ``run_sets``: the imported run sets, when known; a target measured by a run set that
        is not among them is named (a typo would otherwise leave it unmeasured silently).
        """
        notes = []
        if run_sets is not None:
            for target in self.targets:
                if target.run_set and target.run_set not in run_sets:
                    known = ", ".join(sorted(run_sets)) or "none imported yet"
                    notes.append(
                        f"Target '{target.name}': no run set '{target.run_set}' "
                        f"(run sets: {known})."
                    )
        families = {t.accelerator_family for t in self.targets}
        if "Trainium3" not in families:
            notes.append("No Trainium3 target yet: add one under Targets (instance type trn3.*).")
        if "GPU" not in families:
            notes.append("No GPU target yet: add the GPU instance you would otherwise use.")
        goal = self.goal
        if goal.work_amount is None or goal.work_unit is None:
            notes.append("Training goal: the amount of work to finish and its unit are not set.")
        if goal.quality_metric and (goal.quality_threshold is None or not goal.quality_direction):
            notes.append("Training goal: the quality threshold or its direction is not set.")
        open_risks = [r for r in self.risks if r.status != "resolved" and r.effort_days is None]
        if open_risks:
            notes.append(
                f"{plural(len(open_risks), 'open migration risk')} "
                f"{'has' if len(open_risks) == 1 else 'have'} no effort estimate."
            )
        return notes


def effort_text(days: float, unestimated: int) -> str:
    """Open porting effort in words; a risk without an estimate is not counted as 0 days."""
    text = f"{days:g} days"
    if unestimated:
        text = f"at least {text} ({plural(unestimated, 'open risk')} without an estimate)"
    return text


def _duplicate_target_names(targets: tuple[TrainingTarget, ...]) -> list[tuple[int, str]]:
    seen: set[str] = set()
    duplicates = []
    for index, target in enumerate(targets):
        if target.name in seen:
            duplicates.append((index, f"target name '{target.name}' is used twice"))
        seen.add(target.name)
    return duplicates
