"""Scenario snapshots in ``scenarios/<name>.toml`` (what an estimate reads from the project is
``trntui.store.estimate_context``).

A snapshot keeps **everything** its estimate used, by id *and* by value: the inventory as it
was, every override (value, who, why), the price quotes and side rates (by their id in the
project's book, with their values, source and date), and the run sets (by name and run ids,
with the run facts the estimate used). Reopening it therefore rebuilds the very same estimate
even after runs were re-imported or prices changed; ``staleness`` then says what differs from
the project today, so an old snapshot opens flagged stale instead of failing or silently
showing today's numbers. The totals are written too, for a person reading the file.

Files are TOML (a changed override shows as a one-line diff) written atomically; TOML has no
null, so unknown values are left out and read back as unknown. Writers hold the project lock.

The package, in the order data flows (each module imports only the ones above it):

1. ``snapshot``: a saved snapshot (``Scenario``, ``ScenarioInfo``), its name and path, and
   reading it back (``load_scenario``, ``list_scenarios``), snapshots saved by older versions
   included.
2. ``write``: a snapshot written with every value its estimate used (``render_scenario``,
   ``save_scenario``).
3. ``compare``: what changed since a snapshot (``staleness``) and two estimates side by side
   (``diff_estimates``, ``diff_scenarios``).

Every public name is re-exported here: import from ``trntui.store.scenarios``. Each module
loads when one of its names is first used (``trntui.lazy``): a command that only lists
snapshots loads neither the writing nor the comparing code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trntui.lazy import lazy_exports

if TYPE_CHECKING:
    from trntui.store.scenarios.compare import (
        ABSENT,
        OVERRIDE,
        DiffRow,
        compared_target,
        comparison_change,
        diff_estimates,
        diff_scenarios,
        staleness,
    )
    from trntui.store.scenarios.snapshot import (
        SCENARIOS_FOLDER,
        SCHEMA_VERSION,
        Scenario,
        ScenarioInfo,
        ScenarioNotFound,
        check_name,
        current_user,
        list_scenarios,
        load_scenario,
        scenario_path,
    )
    from trntui.store.scenarios.write import (
        render_scenario,
        save_scenario,
    )

_EXPORTS = {
    "ABSENT": "compare",
    "OVERRIDE": "compare",
    "DiffRow": "compare",
    "comparison_change": "compare",
    "compared_target": "compare",
    "diff_estimates": "compare",
    "diff_scenarios": "compare",
    "staleness": "compare",
    "SCENARIOS_FOLDER": "snapshot",
    "SCHEMA_VERSION": "snapshot",
    "Scenario": "snapshot",
    "ScenarioInfo": "snapshot",
    "ScenarioNotFound": "snapshot",
    "check_name": "snapshot",
    "current_user": "snapshot",
    "list_scenarios": "snapshot",
    "load_scenario": "snapshot",
    "scenario_path": "snapshot",
    "render_scenario": "write",
    "save_scenario": "write",
}
__all__ = [
    "ABSENT",
    "OVERRIDE",
    "SCENARIOS_FOLDER",
    "SCHEMA_VERSION",
    "DiffRow",
    "Scenario",
    "ScenarioInfo",
    "ScenarioNotFound",
    "check_name",
    "compared_target",
    "comparison_change",
    "current_user",
    "diff_estimates",
    "diff_scenarios",
    "list_scenarios",
    "load_scenario",
    "render_scenario",
    "save_scenario",
    "scenario_path",
    "staleness",
]
__getattr__ = lazy_exports(__name__, _EXPORTS)
