"""One line above the footer: where the project is saved, or what went wrong."""

from __future__ import annotations

from textual.widgets import Static

from trntui.ui.signals import Held
from trntui.ui.text import shown


class StatusLine(Static):
    """Shows ``status`` (the session's ``signals.status``) as it is and as it changes."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    StatusLine.-error { color: $error; text-style: bold; }
    StatusLine.-warning { color: $warning; }
    """

    def __init__(self, status: Held[tuple[str, str]]) -> None:
        super().__init__()
        self.status = status

    def on_mount(self) -> None:
        self.status.subscribe(self, self._app_status)
        self._app_status(self.status.value)

    def _app_status(self, status: tuple[str, str]) -> None:
        text, level = status
        self.show_message(text, error=level == "error", warning=level == "warning")

    def show_message(self, text: str, *, error: bool = False, warning: bool = False) -> None:
        self.set_class(error, "-error")
        self.set_class(warning and not error, "-warning")
        self.update(shown(text))
