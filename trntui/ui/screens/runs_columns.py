"""The Runs table's columns and cells: which columns show at which width, and how a run's
size, launch time and figures read in a cell (unknown reads 'unknown')."""

from __future__ import annotations

from trntui.core.format import short_unit
from trntui.core.timeline import RunMetadata, SystemSize
from trntui.ui.format import UNKNOWN


def size_cell(size: SystemSize | None) -> str:
    if size is None:
        return UNKNOWN
    if size.nodes is None or size.accelerators_per_node is None:
        return f"{size.accelerators or UNKNOWN}"
    return f"{size.nodes}x{size.accelerators_per_node}" + ("*" if size.is_assumption else "")


def launched(metadata_json: str) -> str:
    """When the run was launched, as its log tells (to the minute, in the log's zone)."""
    when = RunMetadata.from_json(metadata_json).launch_time
    return UNKNOWN if when is None else when.strftime("%Y-%m-%d %H:%M")


def minutes(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value / 60:.2f}"


SET_WIDTH = 16
"""Cells for a run set's name in the table (names are cut where they differ, see
``distinct_labels``; the line under the table names the highlighted run's set in full)."""
LOG_WIDTH = 14
NARROW_SET_WIDTH = 12
NARROW_LOG_WIDTH = 13
"""Set and log name cells when the table is narrow (an 80-column terminal)."""
WIDE_FROM = 110
"""Terminal width from which every column shows; below it the table leaves out what the line
under it says for the highlighted run's set (system size, throughput unit) and the launch
time (in the run detail), so that it fits without scrolling sideways."""

COLUMNS = (
    ("set", "Set", "Set"),
    ("log", "Log", "Log"),
    ("size", "Size", None),
    ("status", "Status", "Status"),
    ("run", "Run min", "Run min"),
    ("result", "Result min", "Res min"),
    ("steady", "Steady", "Steady"),
    ("unit", "Unit", None),
    ("restarts", "Rst", "Rst"),
    ("redo", "Redo", "Redo"),
    ("launched", "Launched", None),
)
"""Each column: its key, header when wide, header when narrow (``None``: left out)."""


def steady_cell(value: str, unit: str | None, mixed: bool) -> str:
    """A run's steady throughput in a narrow table (no Unit column): the number alone while
    every run's throughput has the same unit (the line under the table names it), with a
    short unit once they differ (``1,552 tok``, ``2.017 smp``), so no column mixes units
    unmarked. ``mixed`` is whether the project's runs have more than one unit."""
    if not mixed or value == UNKNOWN:
        return value
    return f"{value} {short_unit(unit)}"
