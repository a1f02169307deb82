"""What an estimate reads from a project: every imported run's facts and the observations
frame derived from them (``derive_and_store_observations``: the facts not stored yet are
stored, as its name says), with the inventory and the quote book (``read_context``, a read
that writes nothing). The CLI's estimate, the app's recompute, the Scale view and a snapshot
(``trntui.store.scenarios``, which saves what this loaded) all start here; an open project
(``trntui.store.project_store.ProjectStore``) keeps what was derived until its inputs change.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import NamedTuple

import polars as pl

from trntui.core.estimate import EstimateContext, observation_row, observations_frame
from trntui.core.inventory import Inventory
from trntui.core.scaling import family_candidates, family_keys
from trntui.core.system_size import effective_size
from trntui.core.timeline import SystemSize
from trntui.store.facts import DerivedRuns, derive_and_store_runs, read_runs
from trntui.store.project import read_inventory
from trntui.store.quality import quality_path
from trntui.store.quotes import load_quote_book
from trntui.store.runs import check_metadata, read_runs_table, runs_path, stored_family_parts
from trntui.store.set_sizes import load_family_names, load_stated_sizes, sets_path
from trntui.store.telemetry import captures_path


class Observed(NamedTuple):
    """Every imported run's facts against the goal, and the estimate's view of them."""

    frame: pl.DataFrame
    """One row per run (``core.estimate.observation_row``): what the estimate reads."""
    runs: DerivedRuns


def observation_inputs(root: Path) -> tuple[tuple[int, int] | None, ...]:
    """What ``stat`` says of each file the observations follow from (the runs table, the
    recorded quality, the captures, the stated sizes): a write to any of them changes it."""
    return tuple(
        (stat.st_mtime_ns, stat.st_size) if path.is_file() and (stat := path.stat()) else None
        for path in (runs_path(root), quality_path(root), captures_path(root), sets_path(root))
    )


def derive_and_store_observations(
    root: Path, inventory: Inventory, stated: dict[str, SystemSize] | None = None
) -> Observed:
    """Every imported run's facts, and the estimate's view of them (a read that stores).

    Run facts are derived from the stored timelines (never the logs) against the goal's quality
    criterion and planned steps, as the Runs screen does, and those not stored yet are written
    to ``facts.parquet`` when this process may write (``derive_and_store_runs``). ``stated``:
    the sizes people stated for run sets, when the caller has read them already.
    """
    stated = load_stated_sizes(root) if stated is None else stated
    derived = derive_and_store_runs(
        root, inventory.goal.quality_target(), inventory.planned_steps()
    )
    return _observed(derived, stated)


def read_target_observations(
    root: Path,
    inventory: Inventory,
    stated: dict[str, SystemSize] | None = None,
    family_names: dict[str, str] | None = None,
) -> Observed:
    """The facts and the estimate's view of only the runs an estimate of ``inventory``'s
    targets reads (a read that writes nothing): the runs of the targets' run sets and of the
    sets their scaling families could hold (``core.scaling.family_candidates``, from the
    family parts the runs table stores for each run: ``store.runs.stored_family_parts``).

    The estimate of each target is the same as from every run (``derive_and_store_observations``);
    the other sets are not read beyond their names (no metadata parsed, no stored facts, no
    timeline hashed), so a team's archive of a thousand sets costs about what its targets'
    sets do. Facts that do not hold are derived in memory, never stored: a session that
    stores them reads every run (``derive_and_store_observations``). ``stated``,
    ``family_names``: what ``runs/sets.toml`` states, when the caller has read it already.
    """
    stated = load_stated_sizes(root) if stated is None else stated
    named = load_family_names(root) if family_names is None else family_names
    run_sets = [target.run_set for target in inventory.targets if target.run_set]
    every_set, parts = stored_family_parts(root)
    wanted = family_candidates(run_sets, named, every_set, family_keys(parts, stated))
    runs = check_metadata(root, read_runs_table(root, wanted))
    derived = read_runs(root, runs, inventory.goal.quality_target(), inventory.planned_steps())
    return _observed(derived, stated)


def _observed(derived: DerivedRuns, stated: dict[str, SystemSize]) -> Observed:
    """``derived`` runs as the observations frame, each at its effective size."""
    rows = []
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
    return Observed(observations_frame(rows), derived)


def read_context(
    root: Path,
    inventory: Inventory,
    observations: pl.DataFrame,
    today: dt.date | None = None,
    family_names: dict[str, str] | None = None,
) -> EstimateContext:
    """Inventory, quotes and run observations of a project: what ``estimate`` reads
    (``observations``: ``derive_and_store_observations``'s frame; ``family_names``: the
    scaling families people named, when the caller has read them already). Writes nothing."""
    return EstimateContext(
        inventory=inventory,
        book=load_quote_book(root),
        observations=observations,
        today=today or dt.date.today(),
        family_names=load_family_names(root) if family_names is None else family_names,
    )


def derive_and_store_context(
    root: Path, inventory: Inventory | None = None, today: dt.date | None = None
) -> EstimateContext:
    """What ``estimate`` reads, the run facts not stored yet stored on the way
    (``derive_and_store_observations``, then ``read_context``); ``inventory``: the project
    file's when not given."""
    inventory = inventory if inventory is not None else read_inventory(root).inventory
    observed = derive_and_store_observations(root, inventory)
    return read_context(root, inventory, observed.frame, today)
