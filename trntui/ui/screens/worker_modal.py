"""A modal dialog whose slow work runs in a worker: esc cancels the work, or closes."""

from __future__ import annotations

from typing import TypeVar

from textual.widgets import Static
from textual.worker import Worker, WorkerState

from trntui.ui.screens.dialog import Dialog
from trntui.ui.text import shown

ResultType = TypeVar("ResultType")


class WorkerModal(Dialog[ResultType]):
    """Subclasses keep their running worker in ``_worker`` and a ``#message`` Static."""

    def __init__(self) -> None:
        super().__init__()
        self._worker: Worker | None = None

    @property
    def busy(self) -> bool:
        return self._worker is not None and self._worker.state == WorkerState.RUNNING

    def action_cancel(self) -> None:
        """First esc stops the work in progress (nothing is stored); the next one closes."""
        if self.busy:
            assert self._worker is not None
            self._worker.cancel()
            self._message("Cancelling...")
            return
        self.dismiss(None)

    def _message(self, text: str, *, error: bool = False) -> None:
        widget = self.query_one("#message", Static)
        widget.styles.color = "red" if error else None
        widget.update(shown(text))
