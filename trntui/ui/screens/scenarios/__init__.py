"""The Scenarios screen: the estimate, its inputs, its sensitivity, Trainium3 vs GPU, scale and
snapshots.

Everything shown is the session's last valid ``Analysis`` (``Session.analysis``), rendered,
never computed here. Six tabs keep it inside 80x24; ``[`` and ``]`` move between them without a
mouse. Scenario parameters (overrides) are set in a modal form that checks the value against
the current inputs before it closes, so an invalid value shows its error there and the last
valid estimate stays on screen. Snapshots are saved, reopened (flagged stale with what changed
since) and compared through ``store.scenarios``.

The package, in the order the screen uses it:

- ``screen``: ``ScenariosScreen``, its keys, and every change it makes to the app's state;
- one tab widget a module, each showing only what the screen passes down: ``estimate``,
  ``inputs``, ``sensitivity``, ``compare`` (Trn3 vs GPU), ``scale``, ``snapshots``;
- ``modals``: the override form, the snapshot name form and the comparison of two estimates;
- ``rendering``: the Rich tables and texts the tabs and dialogs show.
"""

from trntui.ui.screens.scenarios.modals import DiffScreen, OverrideScreen, SaveSnapshotScreen
from trntui.ui.screens.scenarios.rendering import (
    EstimateTable,
    comparison_text,
    estimate_table,
    scenario_text,
)
from trntui.ui.screens.scenarios.screen import ScenariosScreen

__all__ = [
    "DiffScreen",
    "EstimateTable",
    "OverrideScreen",
    "SaveSnapshotScreen",
    "ScenariosScreen",
    "comparison_text",
    "estimate_table",
    "scenario_text",
]
