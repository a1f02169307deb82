"""The working scenario: the overrides in force, kept in ``working_scenario.toml`` in the
project folder.

An override is an assumption a person made (a value, who, why); it is work, so it is kept like
any edit: the app writes this file at once when an override is set, dropped, taken from a
snapshot or undone (through the ``Session``, the one writer path), and reads it when the
project opens, so a restart finds the same estimate. ``trntui estimate``, ``report`` and
``scenario save``/``diff`` read it too (and say so), so the app and the CLI show one estimate.
A snapshot (``store/scenarios``) is a frozen copy with every value; this file holds only the
overrides, applied to the project as it is today, and which GPU target Trainium3 is compared
with (``gpu_target``, when one was chosen: the app's Trn3 vs GPU tab, ``t``). The choice is
kept here, not in ``trntui.toml``, because it is part of what the estimate shown is (the
comparison, the decision, the report), as the overrides are, and not a fact of the workload:
kept like them, it survives a restart and ``trntui estimate`` and ``report`` compare the same
two targets as the app.

Layout (TOML, written atomically; comments a person adds are kept by later saves)::

    schema_version = 1
    gpu_target = "B200 p6"       # optional: the GPU target compared (else the first one)

    [[override]]                 # one per input and target
    input = "steady_throughput"  # a key of the estimate's inputs (`trntui scenario save --help`)
    target = "Trainium3 trial"   # left out: the whole project
    value = 5.2
    unit = "samples/s"           # optional: refused when it is not the input's unit
    who = "ana"
    why = "vendor's figure for the final kernel"

A hand edit that does not read is refused with the file, the line and what was expected; the
values are checked as an override typed in the app is (an unknown input, a value out of
range). An override whose target is not in the inventory (renamed since) still reads: the app
shows it and ``x`` drops it; a ``gpu_target`` that is no GPU target now reads too, and the
comparison says it compared the first GPU target instead (``core.comparison.pick_gpu``).
``gpu_target`` is an optional key of schema version 1: a file without it reads as before.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trntui.core.errors import InputFileError
from trntui.core.format import plural
from trntui.store.atomic import atomic_write_text
from trntui.store.paths import project_path
from trntui.store.project import writes_project
from trntui.store.toml_file import (
    check_schema_version,
    check_top_level,
    decode_utf8,
    dump_toml,
    locate,
    parse_toml,
    previous_text,
    updated_toml,
)

if TYPE_CHECKING:
    from trntui.core.estimate import Override

WORKING_SCENARIO_FILE = "working_scenario.toml"
SCHEMA_VERSION = 1
_KEYS = ("input", "target", "value", "unit", "who", "why")
_TEXT_KEYS = ("target", "unit", "who", "why")
_HEADER = (
    "# The working scenario: the overrides in force in the app and in `trntui estimate`.\n"
    "# One [[override]] per input and target; trntui writes this file when one is set,\n"
    "# dropped or undone (see README, Scenarios). gpu_target: the GPU target Trainium3 is\n"
    "# compared with (Scenarios > Trn3 vs GPU, t); without it, the first GPU target.\n"
)


def working_scenario_path(root: Path) -> Path:
    return project_path(root, WORKING_SCENARIO_FILE)


@dataclasses.dataclass(frozen=True)
class WorkingScenario:
    """What ``working_scenario.toml`` holds: the overrides in force and the GPU target chosen
    for the comparison (None: the first GPU target)."""

    overrides: tuple[Override, ...] = ()
    gpu_target: str | None = None


def load_working_scenario(root: Path) -> tuple[Override, ...]:
    """The overrides in force (none when there is no file); ``InputFileError`` for a file
    that does not read, naming the line and what was expected."""
    return read_working_scenario(root).overrides


def read_working_scenario(root: Path) -> WorkingScenario:
    """The whole working scenario (empty when there is no file); ``InputFileError`` for a
    file that does not read, naming the line and what was expected."""
    path = working_scenario_path(root)
    if not path.is_file():
        return WorkingScenario()
    text = decode_utf8(path, path.read_bytes())
    document = parse_toml(path, text)
    check_schema_version(path, text, document, SCHEMA_VERSION)
    check_top_level(path, text, document, ("schema_version", "gpu_target", "override"))
    gpu_target = document.get("gpu_target")
    if gpu_target is not None and (not isinstance(gpu_target, str) or not gpu_target.strip()):
        raise InputFileError(
            str(path),
            f"gpu_target is {gpu_target!r}",
            line=locate(text, "", "gpu_target"),
            key="gpu_target",
            expected="a GPU target's name, quoted, or no gpu_target key (the first GPU target)",
        )
    tables = document.get("override", [])
    if not isinstance(tables, list):
        raise InputFileError(
            str(path),
            "override is not a list of tables",
            line=locate(text, "", "override"),
            key="override",
            expected="[[override]] tables, one per input and target",
        )
    overrides: list[Override] = []
    seen: dict[tuple[str, str | None], int] = {}
    for index, table in enumerate(tables):
        override = _override(path, text, index, table)
        where = (override.input, override.target)
        if where in seen:
            raise InputFileError(
                str(path),
                f"override #{index + 1} sets the same input and target as override "
                f"#{seen[where] + 1}",
                line=locate(text, "override", None, index),
                key=f"override[{index}]",
                expected="one [[override]] per input and target: delete one of them",
            )
        seen[where] = index
        overrides.append(override)
    return WorkingScenario(tuple(overrides), gpu_target)


def _override(path: Path, text: str, index: int, table: object) -> Override:
    # The estimate's inputs are imported for an override to check, not with this module:
    # the app reads this file before its first frame, and a project without overrides
    # then draws 10 ms sooner (``benchmarks/bench_first_frame.py``).
    from trntui.core.estimate import INPUT_SPECS, InvalidInputError, Override

    def fail(key: str | None, problem: str, expected: str) -> InputFileError:
        return InputFileError(
            str(path),
            problem,
            line=locate(text, "override", key, index),
            key=f"override[{index}]" + (f".{key}" if key else ""),
            expected=expected,
        )

    if not isinstance(table, dict):
        raise fail(None, "an override is not a table", "[[override]] with input and value")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise fail(unknown[0], f"unknown key {unknown[0]!r}", ", ".join(_KEYS))
    key = table.get("input")
    if not isinstance(key, str) or key not in INPUT_SPECS:
        problem = "input is missing" if key is None else f"unknown input {key!r}"
        raise fail("input", problem, "one of: " + ", ".join(INPUT_SPECS))
    if "value" not in table:
        raise fail("value", "value is missing", f"a number in {INPUT_SPECS[key].unit}")
    for name in _TEXT_KEYS:
        if name in table and not isinstance(table[name], str):
            raise fail(name, f"{name} is {table[name]!r}", "a quoted text")
    target = table.get("target")
    if target is not None and not target.strip():
        raise fail("target", "target is empty", "a target's name, or no target key at all")
    spec = INPUT_SPECS[key]
    if spec.per_target and target is None:
        raise fail(None, f"{spec.label} is set per target", 'target = "<a target\'s name>"')
    override = Override(
        key,
        table["value"],
        target,
        who=table.get("who", ""),
        why=table.get("why", ""),
        unit=table.get("unit"),
    )
    try:
        value = checked_value(override)
    except InvalidInputError as error:
        name = "unit" if "unknown unit" in str(error) else "value"
        raise fail(name, str(error), f"a number in {spec.unit}") from None
    return dataclasses.replace(override, value=value)


def checked_value(override: Override) -> float:
    """The override's value as the file keeps it; ``InvalidInputError`` for what the file
    would refuse on reading (an unknown input or unit, a value out of range, an input set per
    target without one), so nothing is written that would not read back."""
    from trntui.core.estimate import INPUT_SPECS, InvalidInputError, check_value

    spec = INPUT_SPECS.get(override.input)
    if spec is not None and spec.per_target and override.target is None:
        raise InvalidInputError(f"{spec.label} is set per target: name the target")
    return check_value(override.input, override.value, unit=override.unit)


@writes_project
def save_working_scenario(
    root: Path, overrides: tuple[Override, ...], gpu_target: str | None = None
) -> None:
    """Write ``overrides`` and ``gpu_target`` (None: no choice, the first GPU target) as the
    working scenario, atomically, keeping a person's comments; an override the file would
    refuse on reading raises ``InvalidInputError`` (nothing written)."""
    entries: list[dict[str, Any]] = []
    for override in overrides:
        entry: dict[str, Any] = {"input": override.input}
        if override.target is not None:
            entry["target"] = override.target
        entry["value"] = checked_value(override)
        if override.unit is not None:
            entry["unit"] = override.unit
        entry["who"] = override.who
        entry["why"] = override.why
        entries.append(entry)
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if gpu_target is not None:
        document["gpu_target"] = gpu_target
    if entries:
        document["override"] = entries
    path = working_scenario_path(root)
    fresh = _HEADER + dump_toml(document)
    text = updated_toml(
        previous_text(path), document, fresh, identity={"override": ("input", "target")}
    )
    atomic_write_text(path, text, root=root)


def working_scenario_note(overrides: tuple[Override, ...], gpu_target: str | None = None) -> str:
    """One line saying which overrides the working scenario holds, and the GPU target chosen
    for the comparison if one is (the CLI prints it)."""
    compared = f"; Trainium3 compared with {gpu_target!r}" if gpu_target is not None else ""
    if not overrides:
        return f"Working scenario: no override{compared} ({WORKING_SCENARIO_FILE})"
    count = len(overrides)
    return (
        f"Working scenario: {plural(count, 'override')}{compared} from "
        f"{WORKING_SCENARIO_FILE} (app: Scenarios > Inputs)"
    )
