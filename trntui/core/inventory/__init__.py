"""The workload inventory: what must be recorded before any estimate (README, step 1).

Each section is a small frozen dataclass whose fields carry their ``FieldSpec`` (label, unit,
range). ``Inventory.from_dict`` checks a parsed TOML document against those specs and reports
every problem with its key path, so the store can point at the file and line. Migration risks
keep their engineering effort in days: it is never turned into instance hours.

The package, in the order data flows (each module imports only the ones above it):

1. ``sections``: the vocabularies (``PURCHASE_OPTIONS``, precisions, work units) and one
   frozen dataclass per section (``ProjectInfo`` ... ``TrainingTarget``), each field a
   ``spec_field``.
2. ``document``: a section from and to a TOML table, with every problem and its key path
   (``section_from_dict``, ``InventoryProblem``, ``InventoryInvalid``), and the whole
   ``Inventory``.

Every public name is re-exported here: import from ``trntui.core.inventory``.
"""

from __future__ import annotations

from trntui.core.fields import specs_of  # the field specs of a section, as before
from trntui.core.inventory.document import (
    Inventory,
    InventoryInvalid,
    InventoryProblem,
    check_field_value,
    effort_text,
    parse_value,
    section_from_dict,
    section_to_dict,
)
from trntui.core.inventory.sections import (
    DIRECTIONS,
    LIST_SECTIONS,
    PRECISIONS,
    PURCHASE_OPTIONS,
    RISK_KINDS,
    RISK_STATUSES,
    SECTIONS,
    WORK_UNITS,
    DataPreparation,
    Distribution,
    ListSection,
    MigrationRisk,
    ModelInfo,
    ProjectInfo,
    Section,
    SideCosts,
    SoftwareStack,
    TrainingGoal,
    TrainingTarget,
    check_instance_type,
    check_region,
    is_instance_type,
)

__all__ = [
    "DIRECTIONS",
    "LIST_SECTIONS",
    "PRECISIONS",
    "PURCHASE_OPTIONS",
    "RISK_KINDS",
    "RISK_STATUSES",
    "SECTIONS",
    "WORK_UNITS",
    "DataPreparation",
    "Distribution",
    "Inventory",
    "InventoryInvalid",
    "InventoryProblem",
    "ListSection",
    "MigrationRisk",
    "ModelInfo",
    "ProjectInfo",
    "Section",
    "SideCosts",
    "SoftwareStack",
    "TrainingGoal",
    "TrainingTarget",
    "check_field_value",
    "check_instance_type",
    "check_region",
    "effort_text",
    "is_instance_type",
    "parse_value",
    "section_from_dict",
    "section_to_dict",
    "specs_of",
]
