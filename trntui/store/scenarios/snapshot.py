"""A saved snapshot (``Scenario``), its name and path, and reading it back from
``scenarios/<name>.toml`` (``load_scenario``, ``list_scenarios``), including snapshots saved
before an input existed.
"""

from __future__ import annotations

import datetime as dt
import getpass
import math
import socket
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError, UserError
from trntui.core.estimate import (
    OBSERVATION_SCHEMA,
    Estimate,
    EstimateContext,
    Override,
    estimate,
    observations_frame,
)
from trntui.core.inventory import Inventory, InventoryInvalid, TrainingTarget
from trntui.core.quotes import (
    CAPACITY_BLOCK,
    SPOT,
    PriceQuote,
    QuoteBook,
    RateTier,
    ServiceRate,
    SideService,
)
from trntui.store.paths import SCENARIO_NAME, project_path, scenario_file
from trntui.store.toml_file import decode_utf8, locate, parse_toml

SCHEMA_VERSION = 1
SCENARIOS_FOLDER = "scenarios"


class ScenarioNotFound(UserError):
    """No snapshot of that name in the project."""


@dataclass(frozen=True)
class Scenario:
    """A saved snapshot: the context as it was, the overrides, and the totals then written."""

    name: str
    saved_at: dt.datetime
    saved_by: str
    note: str
    overrides: tuple[Override, ...]
    context: EstimateContext
    saved_totals: dict[str, float | None]
    gpu_target: str | None = None
    """The GPU target Trainium3 was compared with, as the working scenario chose it (None: no
    choice, the first GPU target; also every snapshot saved before the choice was kept)."""

    def estimate(self) -> Estimate:
        """The snapshot's estimate, rebuilt from its own recorded inputs (once: the snapshot is
        frozen, and the Scenarios screen asks again on every recompute while it is open)."""
        cached = self.__dict__.get("_estimate")
        if cached is None:
            cached = self.__dict__["_estimate"] = estimate(self.context, self.overrides)
        return cached


@dataclass(frozen=True)
class ScenarioInfo:
    name: str
    saved_at: dt.datetime | None
    note: str
    totals: dict[str, float | None]


def check_name(name: str) -> str:
    """``name`` when it is a usable scenario name (the whole of it: a trailing newline is not)."""
    if name == "":
        raise UserError("a name is required")
    if not isinstance(name, str) or not SCENARIO_NAME.fullmatch(name):
        raise UserError(
            f"{name!r} is not a usable scenario name: use letters, digits, '.', '_' or '-' "
            "(up to 80 characters, not starting with a dot or dash)"
        )
    return name


def scenario_path(root: Path, name: str) -> Path:
    """``scenarios/<name>.toml``: the one way a snapshot's path is built from its name."""
    return scenario_file(root, check_name(name))


def current_user() -> str:
    """The login name of whoever runs trntui ("unknown" when the system cannot tell)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def user_at_host() -> str:
    return f"{current_user()}@{socket.gethostname()}"


def list_scenarios(root: Path) -> list[ScenarioInfo]:
    """Saved snapshots, by name; a file that cannot be read is listed with its problem."""
    folder = project_path(root, SCENARIOS_FOLDER)
    infos = []
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            document = _read(path)
        except UserError as error:
            infos.append(ScenarioInfo(path.stem, None, f"unreadable: {error}", {}))
            continue
        totals = {r["target"]: r.get("total_usd") for r in document.get("result", [])}
        infos.append(
            ScenarioInfo(path.stem, document.get("saved_at"), document.get("note", ""), totals)
        )
    return infos


def _read(path: Path) -> dict[str, Any]:
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode):
        raise UserError(f"{path} is a symbolic link; trntui reads snapshots only from the project")
    if not stat.S_ISREG(mode):
        raise UserError(f"{path} is not a regular file; trntui will not read it")
    return checked_document(path, decode_utf8(path, path.read_bytes()))


def checked_document(path: Path, text: str) -> dict[str, Any]:
    document = parse_toml(path, text)
    _check_fields(path, text, document)
    _check_runs(path, text, document)
    version = document.get("schema_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise UserError(
            f"{path} was written by a newer trntui (schema_version {version}); upgrade trntui"
        )
    if version != SCHEMA_VERSION:
        raise InputFileError(
            str(path),
            f"schema_version is {version!r}",
            line=1,
            key="schema_version",
            expected=str(SCHEMA_VERSION),
        )
    return document


_FIELDS: tuple[tuple[str, Any, str], ...] = (
    ("saved_at", dt.datetime, "the date and time it was saved, e.g. 2026-11-29T10:00:00Z"),
    ("today", dt.date, "the date the estimate was made, e.g. 2026-11-29"),
    ("saved_by", str, "text"),
    ("note", str, "text"),
    ("gpu_target", str, "a GPU target's name, quoted, or no gpu_target key (the first one)"),
)


def _check_fields(path: Path, text: str, document: dict[str, Any]) -> None:
    """The fields that ``list_scenarios`` shows, of the types trntui writes (a hand edit that
    changed one is named with its line, never a traceback later)."""
    for key, kind, expected in _FIELDS:
        value = document.get(key)
        wrong = not isinstance(value, kind) or (kind is dt.date and isinstance(value, dt.datetime))
        wrong = wrong or (key == "gpu_target" and not str(value).strip())
        if key in document and wrong:
            raise InputFileError(
                str(path),
                f"{key} is {value!r}",
                line=locate(text, "", key),
                key=key,
                expected=expected,
            )
    results = document.get("result", [])
    for index, row in enumerate(results if isinstance(results, list) else [None]):
        total = row.get("total_usd") if isinstance(row, dict) else None
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("target"), str)
            or ("total_usd" in row and (isinstance(total, bool) or not _finite(total)))
        ):
            raise InputFileError(
                str(path),
                "a saved result is not a target name with its total",
                line=locate(text, "result", "total_usd", index),
                key=f"result[{index}]",
                expected='[[result]] with target = "<name>" and total_usd = <dollars>',
            )


def _check_runs(path: Path, text: str, document: dict[str, Any]) -> None:
    """Each ``[[run]]`` value of the type its column holds (a number, true/false or text)."""
    runs = document.get("run", [])
    for index, row in enumerate(runs if isinstance(runs, list) else [None]):
        if not isinstance(row, dict):
            raise InputFileError(
                str(path), "a saved run is not a table", key=f"run[{index}]", expected="[[run]]"
            )
        for key, dtype in OBSERVATION_SCHEMA.items():
            value = row.get(key)
            if value is None:
                continue
            if dtype == pl.Boolean:
                ok, expected = isinstance(value, bool), "true or false"
            elif dtype == pl.String:
                ok, expected = isinstance(value, str), "text"
            else:
                ok, expected = _finite(value) and not isinstance(value, bool), "a number"
                if dtype.is_integer() and isinstance(value, float):
                    ok, expected = False, "a whole number"
            if not ok:
                raise InputFileError(
                    str(path),
                    f"{key} is {value!r}",
                    line=locate(text, "run", key, index),
                    key=f"run[{index}].{key}",
                    expected=expected,
                )


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def load_scenario(root: Path, name: str) -> Scenario:
    """Reopen a snapshot with the values it recorded (``ScenarioNotFound`` if absent)."""
    path = scenario_path(root, name)
    if not path.is_file():
        known = ", ".join(info.name for info in list_scenarios(root)) or "none saved yet"
        raise ScenarioNotFound(f"no scenario {name!r} in {root} (scenarios: {known})")
    return scenario_from_document(path, _read(path), name)


def scenario_from_document(path: Path, document: dict[str, Any], name: str) -> Scenario:
    """The snapshot a parsed file holds; ``InputFileError`` when it cannot be rebuilt."""
    saved_name = document.get("name", name)
    if not isinstance(saved_name, str) or not SCENARIO_NAME.fullmatch(saved_name):
        raise InputFileError(
            str(path),
            f"name {saved_name!r} is not a usable scenario name",
            key="name",
            expected="letters, digits, '.', '_' or '-' (up to 80 characters)",
        )
    try:
        inventory = Inventory.from_dict(_without_retired_keys(document.get("inventory", {})))
        overrides = tuple(Override(**o) for o in document.get("override", []))
        overrides += _before_checkpoint_input(document, inventory, overrides)
        before_sizes = _saved_before(document, "launch_s")
        overrides += _before_launch_input(document, inventory, overrides)
        overrides += _before_purchase_billing(document, inventory, overrides)
        quotes = tuple(_quote_from(q) for q in document.get("quote", []))
        rates = tuple(_rate_from(r) for r in document.get("rate", []))
        rows = [
            {key: row.get(key) for key in OBSERVATION_SCHEMA} for row in document.get("run", [])
        ]
        context = EstimateContext(
            inventory=inventory,
            book=QuoteBook(quotes, rates),
            observations=observations_frame(rows),
            today=document["today"],
            max_quote_age_days=document.get("max_quote_age_days", 30),
            ties_system_size=not before_sizes,
        )
        totals = {r["target"]: r.get("total_usd") for r in document.get("result", [])}
        saved_at = document["saved_at"]
    except (
        InventoryInvalid,
        TypeError,
        KeyError,
        ValueError,
        UserError,
        pl.exceptions.PolarsError,
    ) as error:
        raise InputFileError(str(path), f"snapshot cannot be read back ({error})") from None
    return Scenario(
        name=saved_name,
        saved_at=saved_at,
        saved_by=document.get("saved_by", ""),
        note=document.get("note", ""),
        overrides=overrides,
        context=context,
        saved_totals=totals,
        gpu_target=document.get("gpu_target"),
    )


def _before_checkpoint_input(
    document: dict[str, Any], inventory: Inventory, overrides: tuple[Override, ...]
) -> tuple[Override, ...]:
    """A snapshot saved before ``checkpoint_s`` existed priced unlogged checkpoint saves at 0.

    Reopened with today's formula it would lose its totals (or change them), so it gets that
    0 back as a visible override saying why; its numbers then read as they were saved.
    """
    saved_keys = {row.get("key") for row in document.get("inputs", [])}
    if not saved_keys or "checkpoint_s" in saved_keys:
        return ()
    overridden = {(o.input, o.target) for o in overrides}
    why = (
        "snapshot saved before this input existed: checkpoint saves the logs did not show "
        "counted 0 then"
    )
    return tuple(
        Override("checkpoint_s", 0.0, target.name, who="trntui", why=why)
        for target in inventory.targets
        if ("checkpoint_s", target.name) not in overridden
    )


def _saved_before(document: dict[str, Any], key: str) -> bool:
    """Whether the snapshot was saved before input ``key`` existed (its inputs lack it)."""
    saved_keys = {row.get("key") for row in document.get("inputs", [])}
    return bool(saved_keys) and key not in saved_keys


def _without_retired_keys(inventory: dict[str, Any]) -> dict[str, Any]:
    """A snapshot keeps the inventory as it was; keys retired since then are dropped when it
    is read back (they are refused only in the live ``trntui.toml``, where a person can act)."""
    targets = [
        {k: v for k, v in target.items() if k not in TrainingTarget.RETIRED}
        if isinstance(target, dict)
        else target
        for target in inventory.get("targets", [])
    ]
    return {**inventory, "targets": targets} if "targets" in inventory else inventory


def _before_launch_input(
    document: dict[str, Any], inventory: Inventory, overrides: tuple[Override, ...]
) -> tuple[Override, ...]:
    """A snapshot saved before ``launch_s`` existed billed no time outside the logs; it gets
    that 0 back as a visible override (as for ``checkpoint_s``), so its totals read as saved.
    Its runs carry no system size either: its context does not tie targets to sizes."""
    if not _saved_before(document, "launch_s"):
        return ()
    overridden = {(o.input, o.target) for o in overrides}
    why = "snapshot saved before this input existed: time outside the logs counted 0 then"
    return tuple(
        Override("launch_s", 0.0, target.name, who="trntui", why=why)
        for target in inventory.targets
        if ("launch_s", target.name) not in overridden
    )


def _before_purchase_billing(
    document: dict[str, Any], inventory: Inventory, overrides: tuple[Override, ...]
) -> tuple[Override, ...]:
    """A snapshot saved before Capacity Blocks were billed in whole days paid its block
    targets by the hour used, and one saved before spot interruptions were priced priced none;
    each gets that back as a visible override, so it reads as saved."""
    overridden = {(o.input, o.target) for o in overrides}
    kept = []
    for key, option, why in (
        ("capacity_block", CAPACITY_BLOCK, "Capacity Blocks were billed in whole days"),
        ("spot_interruptions_per_day", SPOT, "spot interruptions were priced"),
    ):
        if _saved_before(document, key):
            kept += [
                Override(key, 0.0, target.name, who="trntui", why=f"snapshot saved before {why}")
                for target in inventory.targets
                if target.purchase_option == option and (key, target.name) not in overridden
            ]
    return tuple(kept)


def _quote_from(table: dict[str, Any]) -> PriceQuote:
    values = {k: v for k, v in table.items() if k != "id"}
    return PriceQuote(**values)


def _rate_from(table: dict[str, Any]) -> ServiceRate:
    values = {k: v for k, v in table.items() if k != "id"}
    values["service"] = SideService(values["service"])
    values["tiers"] = tuple(
        RateTier(t.get("start", 0.0), t.get("end"), t["usd_per_unit"]) for t in values["tiers"]
    )
    return ServiceRate(**values)
