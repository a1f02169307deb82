"""The Trn3 vs GPU tab: the cost of reaching the same quality result on each, whether the two
can be compared, break-even throughput, the limits each plan meets, and the decision.

The screen passes the analysis down (``show``); the text is ``rendering.comparison_text``.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static, TabPane

from trntui.core.report import Analysis
from trntui.ui.screens.scenarios.rendering import comparison_text


class ComparePane(TabPane):
    def __init__(self) -> None:
        super().__init__("Trn3 vs GPU", id="compare")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="compare-scroll"):
            yield Static("", id="compare-body")

    def show(self, analysis: Analysis) -> None:
        self.query_one("#compare-body", Static).update(comparison_text(analysis))
