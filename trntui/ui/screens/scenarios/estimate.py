"""The Estimate tab: the estimate table, what it cannot hold, and why it is not up to date.

The screen passes the session's last valid ``Analysis`` down (``show``) and the reason the latest
change gave no estimate (``show_problem``); the figures below a problem stay the last valid ones.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static, TabPane

from trntui.core.report import Analysis
from trntui.ui.screens.scenarios.rendering import EstimateTable, estimate_notes


class EstimatePane(TabPane):
    DEFAULT_CSS = """
    EstimatePane #estimate-problem { color: $error; text-style: bold; }
    """

    def __init__(self) -> None:
        super().__init__("Estimate", id="estimate")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="estimate-scroll"):
            yield Static("", id="estimate-problem")
            yield Static("", id="estimate-table")
            yield Static("", id="estimate-notes")

    def show(self, analysis: Analysis | None) -> None:
        if analysis is None:
            self.query_one("#estimate-table", Static).update("Computing the estimate...")
            return
        result = analysis.estimate
        if not result.targets:
            self.query_one("#estimate-table", Static).update(
                "No training target yet: add them on the Inventory screen (1)."
            )
        else:
            self.query_one("#estimate-table", Static).update(EstimateTable(result))
        self.query_one("#estimate-notes", Static).update(estimate_notes(result, analysis.bands))

    def show_problem(self, problem: str) -> None:
        notice = self.query_one("#estimate-problem", Static)
        notice.display = bool(problem)
        notice.update(f"Not updated, the figures below are the last valid ones: {problem}")
