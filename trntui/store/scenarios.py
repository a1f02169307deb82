"""Scenario snapshots in ``scenarios/<name>.toml``, and loading what an estimate reads.

A snapshot keeps **everything** its estimate used, by id *and* by value: the inventory as it
was, every override (value, who, why), the price quotes and side rates (by their id in the
project's book, with their values, source and date), and the run sets (by name and run ids,
with the run facts the estimate used). Reopening it therefore rebuilds the very same estimate
even after runs were re-imported or prices changed; ``staleness`` then says what differs from
the project today, so an old snapshot opens flagged stale instead of failing or silently
showing today's numbers. The totals are written too, for a person reading the file.

Files are TOML (a changed override shows as a one-line diff) written atomically; TOML has no
null, so unknown values are left out and read back as unknown. Writers hold the project lock.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import getpass
import math
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import tomli_w

from trntui.core.errors import InputFileError, UserError
from trntui.core.estimate import (
    INPUT_SPECS,
    OBSERVATION_SCHEMA,
    TERMS,
    Estimate,
    EstimateContext,
    InvalidInputError,
    Override,
    estimate,
    observation_row,
    observations_frame,
    quote_id,
    rate_id,
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
from trntui.core.system_size import effective_size
from trntui.store.atomic import atomic_write_text
from trntui.store.facts import DerivedRuns, derived_runs
from trntui.store.paths import SCENARIO_NAME, project_path, scenario_file
from trntui.store.project import read_inventory, writes_project
from trntui.store.quality import quality_path
from trntui.store.quotes import load_quote_book
from trntui.store.runs import runs_path
from trntui.store.set_sizes import load_family_names, load_stated_sizes, sets_path
from trntui.store.telemetry import captures_path
from trntui.store.toml_file import decode_utf8, parse_toml

SCHEMA_VERSION = 1
SCENARIOS_FOLDER = "scenarios"


class ScenarioNotFound(UserError):
    """No snapshot of that name in the project."""


# --- what an estimate reads ----------------------------------------------------------------

_OBSERVATION_CACHE: dict[tuple, tuple[pl.DataFrame, DerivedRuns]] = {}


def load_observations(root: Path, inventory: Inventory) -> pl.DataFrame:
    """The estimate's view of every imported run (``load_derived``'s frame)."""
    return load_derived(root, inventory)[0]


def load_derived(root: Path, inventory: Inventory) -> tuple[pl.DataFrame, DerivedRuns]:
    """Every imported run's facts, and the estimate's view of them, derived once per import.

    Run facts are derived from the stored timelines (never the logs) against the goal's quality
    criterion and planned steps, as the Runs screen does; the result is cached in memory until
    the runs table, the criterion or the plan changes, so editing an input never touches the
    runs again.
    """
    target = inventory.goal.quality_target()
    planned = inventory.planned_steps()
    stamps = tuple(
        (stat.st_mtime_ns, stat.st_size) if path.is_file() and (stat := path.stat()) else None
        for path in (runs_path(root), quality_path(root), captures_path(root), sets_path(root))
    )
    key = (str(Path(root).resolve()), stamps, target, planned)
    cached = _OBSERVATION_CACHE.get(key)
    if cached is not None:
        return cached
    stated = load_stated_sizes(root)
    rows = []
    derived = derived_runs(root, target, planned)
    for run in derived:
        rows.append(
            observation_row(
                run.run_id,
                run.set_name,
                run.facts,
                run.metadata,
                limit=run.limit,
                steady_utilization_pct=run.steady_utilization_pct,
                system=effective_size(run.metadata.system, stated.get(run.set_name)),
            )
        )
    frame = observations_frame(rows)
    _OBSERVATION_CACHE.clear()
    _OBSERVATION_CACHE[key] = (frame, derived)
    return frame, derived


def load_context(
    root: Path, inventory: Inventory | None = None, today: dt.date | None = None
) -> EstimateContext:
    """Inventory, quotes and run observations of a project: what ``estimate`` reads."""
    inventory = inventory if inventory is not None else read_inventory(root).inventory
    return EstimateContext(
        inventory=inventory,
        book=load_quote_book(root),
        observations=load_observations(root, inventory),
        today=today or dt.date.today(),
        family_names=load_family_names(root),
    )


# --- snapshots -----------------------------------------------------------------------------


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


def _who() -> str:
    return f"{current_user()}@{socket.gethostname()}"


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    """Drop unknowns (TOML has no null) and non-finite numbers."""
    return {
        k: v
        for k, v in values.items()
        if v is not None and not (isinstance(v, float) and not math.isfinite(v)) and v != ()
    }


def _quote_table(quote: PriceQuote) -> dict[str, Any]:
    return {"id": quote_id(quote), **_clean(dataclasses.asdict(quote))}


def _rate_table(rate: ServiceRate) -> dict[str, Any]:
    values = dataclasses.asdict(rate)
    values["service"] = rate.service.value
    values["tiers"] = [_clean(dataclasses.asdict(tier)) for tier in rate.tiers]
    return {"id": rate_id(rate), **_clean(values)}


def render_scenario(
    name: str,
    context: EstimateContext,
    overrides: tuple[Override, ...],
    result: Estimate,
    *,
    note: str,
    saved_by: str,
    saved_at: dt.datetime,
) -> str:
    used_sets = {t.target.run_set for t in result.targets if t.target.run_set}
    runs = context.observations.filter(pl.col("set_name").is_in(sorted(used_sets)))
    used_quotes = {t.quote for t in result.targets if t.quote is not None}
    prep = next(
        (
            q
            for q in context.book.quotes
            for t in result.targets
            if quote_id(q) == t.input("data_prep_usd_per_hour").provenance.source
        ),
        None,
    )
    if prep is not None:
        used_quotes.add(prep)
    regions = {t.target.region for t in result.targets}
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "saved_at": saved_at,
        "saved_by": saved_by,
        "note": note,
        "today": context.today,
        "max_quote_age_days": context.max_quote_age_days,
        "override": [_clean(dataclasses.asdict(o)) for o in overrides],
        "result": [
            _clean(
                {
                    "target": t.name,
                    "total_usd": t.total_usd,
                    "incomplete_inputs": list(t.incomplete_inputs),
                    **{term: t.term(term) for term in TERMS},
                    "instance_hours": t.instance_hours,
                    "usd_per_unit": t.usd_per_unit,
                    "commitment_beyond_usd": t.commitment_beyond_usd,
                }
            )
            for t in result.targets
        ],
        "inputs": [
            _clean(
                {
                    "target": t.name,
                    "key": i.key,
                    "value": i.value,
                    "kind": i.provenance.kind,
                    "source": i.provenance.source,
                    "detail": i.provenance.detail,
                    "low": i.low,
                    "high": i.high,
                    "runs": i.runs,
                }
            )
            for t in result.targets
            for i in t.inputs
        ],
        "quote": [_quote_table(q) for q in sorted(used_quotes, key=quote_id)],
        "rate": [_rate_table(r) for r in context.book.rates if r.region in regions],
        "run_set": [
            {"name": set_name, "run_ids": _run_ids(runs, set_name)}
            for set_name in sorted(used_sets)
        ],
        "run": [_clean(row) for row in runs.to_dicts()],
        "inventory": context.inventory.to_dict(),
    }
    header = (
        f"# trntui scenario snapshot {name!r}: every input, override, quote and run it used.\n"
        "# Reopen with `trntui scenario show DIR NAME`; values absent here were unknown.\n"
    )
    return header + tomli_w.dumps(_clean(document))


def _run_ids(observations: pl.DataFrame, set_name: str) -> list[str]:
    return sorted(observations.filter(pl.col("set_name") == set_name)["run_id"].to_list())


@writes_project
def save_scenario(
    root: Path,
    name: str,
    context: EstimateContext,
    overrides: tuple[Override, ...] | list[Override] = (),
    *,
    note: str = "",
    saved_by: str | None = None,
) -> Scenario:
    """Write ``scenarios/<name>.toml`` atomically (replacing one of that name).

    The overrides are checked first (``InvalidInputError``), so a bad edit is never saved.
    """
    overrides = tuple(overrides)
    result = estimate(context, overrides)
    saved_at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    who = saved_by or _who()
    text = render_scenario(
        name, context, overrides, result, note=note, saved_by=who, saved_at=saved_at
    )
    path = scenario_path(root, name)
    try:
        # Read back before anything on disk changes: a snapshot that would not reopen is
        # never written, and one saved under this name before stays whole.
        _scenario_from_document(path, _document(path, text), name)
    except UserError as error:
        raise UserError(
            f"scenario {name!r} was not saved: it would not read back ({error}); "
            + (f"{path} is unchanged" if path.exists() else "nothing was written")
        ) from None
    atomic_write_text(path, text, root=root)
    return load_scenario(root, name)


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
    return _document(path, decode_utf8(path, path.read_bytes()))


def _document(path: Path, text: str) -> dict[str, Any]:
    document = parse_toml(path, text)
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


def load_scenario(root: Path, name: str) -> Scenario:
    """Reopen a snapshot with the values it recorded (``ScenarioNotFound`` if absent)."""
    path = scenario_path(root, name)
    if not path.is_file():
        known = ", ".join(info.name for info in list_scenarios(root)) or "none saved yet"
        raise ScenarioNotFound(f"no scenario {name!r} in {root} (scenarios: {known})")
    return _scenario_from_document(path, _read(path), name)


def _scenario_from_document(path: Path, document: dict[str, Any], name: str) -> Scenario:
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
    except (InventoryInvalid, TypeError, KeyError, ValueError, UserError) as error:
        raise InputFileError(str(path), f"snapshot cannot be read back ({error})") from None
    return Scenario(
        name=saved_name,
        saved_at=saved_at,
        saved_by=document.get("saved_by", ""),
        note=document.get("note", ""),
        overrides=overrides,
        context=context,
        saved_totals=totals,
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


# --- stale flags and diffs -----------------------------------------------------------------


def staleness(scenario: Scenario, current: EstimateContext) -> tuple[str, ...]:
    """What changed in the project since the snapshot: runs, quotes, inventory inputs.

    Empty when the snapshot still describes the project. The snapshot's own numbers are not
    touched; this only says why they may no longer hold.
    """
    notes: list[str] = []
    then = scenario.estimate()
    for set_name, saved_ids in _run_sets(scenario):
        ids = set(saved_ids)
        now = set(current.observations.filter(pl.col("set_name") == set_name)["run_id"].to_list())
        if now != ids:
            added, removed = len(now - ids), len(ids - now)
            notes.append(f"run set {set_name!r} changed: {added} run(s) added, {removed} removed")
    try:
        today = estimate(current, scenario.overrides)
    except InvalidInputError as error:
        return (*notes, f"the overrides no longer apply: {error}")
    now_targets = {t.name: t for t in today.targets}
    then_names = {t.name for t in then.targets}
    notes += [
        f"target {name!r} was added since the snapshot (not in it)"
        for name in now_targets
        if name not in then_names
    ]
    for old in then.targets:
        new = now_targets.get(old.name)
        if new is None:
            notes.append(f"target {old.name!r} no longer exists")
            continue
        for before in old.inputs:
            after = new.input(before.key)
            if before.value != after.value or before.provenance != after.provenance:
                notes.append(
                    f"{old.name}: {before.label} {_show(before.value)} -> {_show(after.value)}"
                    f" ({after.provenance})"
                )
        notes += [
            f"{old.name}: {flag.message} (as of {current.today.isoformat()})"
            for flag in new.quote_flags
            if flag not in old.quote_flags
        ]
        for q in scenario.context.book.quotes:
            if new.quote is not None and quote_id(new.quote) == quote_id(q) and new.quote != q:
                notes.append(f"quote {quote_id(q)} changed since the snapshot")
    return tuple(dict.fromkeys(notes))


def _run_sets(scenario: Scenario) -> list[tuple[str, list[str]]]:
    observations = scenario.context.observations
    names = sorted({t.run_set for t in scenario.context.inventory.targets if t.run_set})
    return [
        (name, observations.filter(pl.col("set_name") == name)["run_id"].to_list())
        for name in names
    ]


def _show(value: float | None) -> str:
    return "unknown" if value is None else f"{value:,.6g}"


ABSENT = "absent"
"""A snapshot's side of a target it does not have: nothing to know, so not "unknown"."""


@dataclass(frozen=True)
class DiffRow:
    target: str
    item: str
    """An input label, a cost term or ``total_usd``."""
    a: float | None
    b: float | None
    a_note: str = ""
    b_note: str = ""
    a_absent: bool = False
    """The target is not in ``a`` at all (its value is then not unknown, but absent)."""
    b_absent: bool = False

    def shown(self, side: str, value_text: Callable[[float | None], str]) -> str:
        """Side ``'a'`` or ``'b'`` as text: ``absent`` when that side has no such target."""
        if self.a_absent if side == "a" else self.b_absent:
            return ABSENT
        return value_text(self.a if side == "a" else self.b)

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def delta_pct(self) -> float | None:
        if self.a is None or self.b is None or self.a == 0:
            return None
        return (self.b - self.a) / abs(self.a) * 100.0


def diff_estimates(a: Estimate, b: Estimate) -> tuple[DiffRow, ...]:
    """What changed between two estimates, target by target: inputs (value or provenance),
    then each cost term and the total. Unchanged rows are left out."""
    rows: list[DiffRow] = []
    b_targets = {t.name: t for t in b.targets}
    for left in a.targets:
        right = b_targets.get(left.name)
        if right is None:
            rows.append(
                DiffRow(left.name, "target", left.total_usd, None, "", "not in b", b_absent=True)
            )
            continue
        for before in left.inputs:
            after = right.input(before.key)
            if before.value != after.value or before.provenance != after.provenance:
                rows.append(
                    DiffRow(
                        left.name,
                        INPUT_SPECS[before.key].label,
                        before.value,
                        after.value,
                        str(before.provenance),
                        str(after.provenance),
                    )
                )
        for term in (*TERMS, "total_usd", "commitment_beyond_usd"):
            x, y = left.term(term), right.term(term)
            if x != y and not (x is not None and y is not None and math.isclose(x, y)):
                rows.append(DiffRow(left.name, term, x, y))
    a_names = {t.name for t in a.targets}
    rows += [
        DiffRow(t.name, "target", None, t.total_usd, "not in a", "", a_absent=True)
        for t in b.targets
        if t.name not in a_names
    ]
    return tuple(rows)


def diff_scenarios(a: Scenario, b: Scenario) -> tuple[DiffRow, ...]:
    return diff_estimates(a.estimate(), b.estimate())
