"""A yes/no question as a modal screen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from trntui.ui.screens.dialog import Dialog
from trntui.ui.text import shown_markup


class ConfirmScreen(Dialog[bool]):
    """A yes/no question (y / n or esc)."""

    DEFAULT_CSS = """
    ConfirmScreen > Vertical { width: 70; height: auto; border: round $warning; padding: 1 2; }
    """
    BINDINGS: ClassVar = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n", "answer(False)", "No", id="confirm.no"),
        Binding("escape", "answer(False)", "No", show=False, id="confirm.escape"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(shown_markup(self.question) + "\n\n[b]y[/b] yes   [b]n[/b] no")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
