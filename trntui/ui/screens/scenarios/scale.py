"""The Scale tab: one target priced at each instance count (``core.scale_plan``).

Pricing takes one estimate per count, so it runs in a worker when the screen asks (``show``,
while the tab is shown); the tab keeps the last table until the new one is ready.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static, TabPane
from textual.worker import get_current_worker

from trntui.core.errors import UserError
from trntui.core.estimate import EstimateContext, Override
from trntui.core.scale_plan import scale_plan
from trntui.ui.text import Hanging
from trntui.ui.widgets.scale_view import scale_text


class ScalePane(TabPane):
    def __init__(self) -> None:
        super().__init__("Scale", id="scale")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="scale-scroll"):
            yield Static("Pick this tab to price each instance count.", id="scale-body")

    def show(
        self, context: EstimateContext | None, index: int, overrides: Sequence[Override] = ()
    ) -> None:
        """Price the target at ``index`` of ``context``'s inventory (an index in range), with
        the scenario ``overrides`` in force, as the estimate bar has them."""
        targets = context.inventory.targets if context is not None else ()
        if context is None or not targets:
            self.query_one("#scale-body", Static).update("No training target to scale yet.")
            return
        self._compute_scale(context, targets[index].name, len(targets), tuple(overrides))

    @work(thread=True, exclusive=True, group="scale", exit_on_error=False)
    def _compute_scale(
        self,
        context: EstimateContext,
        target: str,
        targets: int,
        overrides: tuple[Override, ...],
    ) -> None:
        try:
            text: Hanging | Text = Hanging(
                scale_text(scale_plan(context, target, overrides=overrides), targets)
            )
        except UserError as error:
            text = Text(str(error), style="yellow")
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.query_one("#scale-body", Static).update, text)
