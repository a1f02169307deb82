"""The Sensitivity tab: one target's total over each input's observed range (a tornado chart),
where the next training's cost lands (the predictive band) and what was not varied.

The screen chooses the target (``t`` steps through them) and passes the analysis down with its
index (``show``).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static, TabPane

from trntui.core.report import Analysis
from trntui.ui.format import title_name
from trntui.ui.screens.scenarios.rendering import band_text
from trntui.ui.widgets.tornado import TornadoChart


class SensitivityPane(TabPane):
    DEFAULT_CSS = """
    SensitivityPane .muted { color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__("Sensitivity", id="sensitivity")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="sens-scroll"):
            yield Static("", id="sens-title")
            yield TornadoChart(id="tornado")
            yield Static("", id="distribution")
            yield Static("", id="not-varied", classes="muted")

    def show(self, analysis: Analysis, index: int) -> None:
        """Show the target at ``index`` of ``analysis`` (an index in range; nothing without
        targets)."""
        targets = analysis.estimate.targets
        if not targets:
            self.query_one(TornadoChart).show(None)
            return
        item = targets[index]
        sens = analysis.sensitivities[index]
        title = Text()
        title.append(f"{title_name(item.name)} {item.headline()}", style="bold")
        title.append(": total over each input's observed range")
        if len(targets) > 1:
            title.append("  t: target", style="dim")
        self.query_one("#sens-title", Static).update(title)
        self.query_one(TornadoChart).show(sens)
        self.query_one("#distribution", Static).update(band_text(analysis, index))
        not_varied = "\n".join(
            [f"Block step: {step}" for step in sens.block_steps]
            + [f"Not varied: {label} ({why})" for label, why in sens.not_varied]
        )
        self.query_one("#not-varied", Static).update(not_varied)
