"""What an estimate reads from a project: every imported run's facts and the observations
frame derived from them (once per import, cached in memory), with the inventory and the
quote book (``load_context``). The CLI's estimate, the app's recompute, the Scale view and a
snapshot (``trntui.store.scenarios``, which saves what this loaded) all start here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from trntui.core.estimate import EstimateContext, observation_row, observations_frame
from trntui.core.inventory import Inventory
from trntui.core.system_size import effective_size
from trntui.core.timeline import SystemSize
from trntui.store.facts import DerivedRuns, derive_and_store_runs
from trntui.store.project import read_inventory
from trntui.store.quality import quality_path
from trntui.store.quotes import load_quote_book
from trntui.store.runs import runs_path
from trntui.store.set_sizes import load_family_names, load_stated_sizes, sets_path
from trntui.store.telemetry import captures_path

_OBSERVATION_CACHE: dict[tuple, tuple[pl.DataFrame, DerivedRuns]] = {}


def load_observations(root: Path, inventory: Inventory) -> pl.DataFrame:
    """The estimate's view of every imported run (``load_derived``'s frame)."""
    return load_derived(root, inventory)[0]


def load_derived(root: Path, inventory: Inventory) -> tuple[pl.DataFrame, DerivedRuns]:
    """Every imported run's facts, and the estimate's view of them, derived once per import.

    Run facts are derived from the stored timelines (never the logs) against the goal's quality
    criterion and planned steps, as the Runs screen does, and those not stored yet are written
    to ``facts.parquet`` when this process may write (``derive_and_store_runs``: a load that
    stores derived data); the result is cached in memory until the runs table, the criterion or
    the plan changes, so editing an input never touches the runs again.
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
    derived = derive_and_store_runs(root, target, planned)
    sizes: dict[tuple[SystemSize | None, SystemSize | None], SystemSize | None] = {}
    for run in derived:
        # Once per logged and stated size, not per run: the runs of a set share both.
        pair = (run.metadata.system, stated.get(run.set_name))
        if pair not in sizes:
            sizes[pair] = effective_size(*pair)
        rows.append(
            observation_row(
                run.run_id,
                run.set_name,
                run.facts,
                run.metadata,
                limit=run.limit,
                steady_utilization_pct=run.steady_utilization_pct,
                system=sizes[pair],
            )
        )
    frame = observations_frame(rows)
    _OBSERVATION_CACHE.clear()
    _OBSERVATION_CACHE[key] = (frame, derived)
    return frame, derived


def load_context(
    root: Path,
    inventory: Inventory | None = None,
    today: dt.date | None = None,
    observations: pl.DataFrame | None = None,
) -> EstimateContext:
    """Inventory, quotes and run observations of a project: what ``estimate`` reads
    (``observations``: ``load_derived``'s frame, when the caller has it already; without it,
    the run facts not stored yet are stored as ``load_derived`` does)."""
    inventory = inventory if inventory is not None else read_inventory(root).inventory
    if observations is None:
        observations = load_observations(root, inventory)
    return EstimateContext(
        inventory=inventory,
        book=load_quote_book(root),
        observations=observations,
        today=today or dt.date.today(),
        family_names=load_family_names(root),
    )
