"""The Snapshots tab: the saved scenario snapshots, and the one opened (stale or not).

The screen reads the snapshots from the project (``store.scenarios``) and passes them down
(``show_list``, ``show_opened``); it asks which one is selected (``selected``) when a key opens,
marks or compares one.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static, TabPane

from trntui.core.estimate import Estimate
from trntui.core.format import usd
from trntui.store.scenarios import Scenario, ScenarioInfo
from trntui.ui.screens.scenarios.rendering import scenario_text

SNAPSHOT_KEYS = (
    "o opens the highlighted snapshot; u makes its overrides and GPU target compared the "
    "working scenario; "
    "m marks it as A, c compares"
)
"""The tab's keys in words: the footer has room for o and u only at 80 columns."""


class SnapshotsPane(TabPane):
    DEFAULT_CSS = """
    SnapshotsPane #snapshots { height: auto; max-height: 7; }
    SnapshotsPane #snapshot-detail { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__("Snapshots", id="snapshots-tab")

    def compose(self) -> ComposeResult:
        snapshots: DataTable[str] = DataTable(id="snapshots", cursor_type="row")
        yield snapshots
        with VerticalScroll(id="snapshot-detail"):
            yield Static("", id="snapshot-body")

    def on_mount(self) -> None:
        snapshots = self.query_one("#snapshots", DataTable)
        for label in ("Name", "Saved (UTC)", "Totals", "Note"):
            snapshots.add_column(label)

    @property
    def row_count(self) -> int:
        """How many snapshots are listed."""
        return self.query_one("#snapshots", DataTable).row_count

    def show_list(self, infos: list[ScenarioInfo], marked: str | None, *, opened: bool) -> None:
        """List ``infos`` (``marked`` flagged A), keeping the selected row where it was; with
        none listed and none ``opened``, say how to save one."""
        table = self.query_one("#snapshots", DataTable)
        row_before = table.cursor_row
        table.clear()
        for info in infos:
            saved = f"{info.saved_at:%Y-%m-%d %H:%M}" if info.saved_at else "?"
            totals = " / ".join(usd(total) for total in info.totals.values())
            mark = "A " if info.name == marked else ""
            table.add_row(f"{mark}{info.name}"[:20], saved, totals, info.note[:30], key=info.name)
        if table.row_count:
            table.move_cursor(row=min(max(row_before, 0), table.row_count - 1))
            if not opened:
                self.query_one("#snapshot-body", Static).update(Text(SNAPSHOT_KEYS, style="dim"))
        elif not opened:
            self.query_one("#snapshot-body", Static).update(
                "No snapshot saved yet. Press s to save the estimate as it stands, with every "
                "input, override and quote it used."
            )

    def selected(self) -> str | None:
        """The name of the selected snapshot, if any."""
        table = self.query_one("#snapshots", DataTable)
        if not table.row_count or table.cursor_row < 0:
            return None
        return table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value

    def show_opened(self, scenario: Scenario, now: Estimate | None, stale: tuple[str, ...]) -> None:
        """``scenario`` as saved, the estimate ``now`` beside it, and what changed since."""
        text = scenario_text(scenario, now, stale)
        text.append(f"\n{SNAPSHOT_KEYS}", style="dim")
        self.query_one("#snapshot-body", Static).update(text)
