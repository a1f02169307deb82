"""Above the footer: where the project is saved, or what went wrong.

A message is read in full: one longer than the line wraps (up to ``MAX_LINES`` lines, the
screen above gives them back when the next short message comes); one longer still is also
put in a notification, which holds the whole text."""

from __future__ import annotations

from rich.text import Text
from textual.notifications import SeverityLevel
from textual.widgets import Static

from trntui.ui.signals import Held
from trntui.ui.text import shown

MAX_LINES = 3


class StatusLine(Static):
    """Shows ``status`` (the session's ``signals.status``) as it is and as it changes."""

    DEFAULT_CSS = f"""
    StatusLine {{ height: auto; max-height: {MAX_LINES}; padding: 0 1; background: $panel;
                 color: $text-muted; }}
    StatusLine.-error {{ color: $error; text-style: bold; }}
    StatusLine.-warning {{ color: $warning; }}
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
        message = shown(text)
        self.update(message)
        # Every screen has a status line following the same status: the one shown notifies.
        if self.screen.is_current and self.lines_needed(message) > MAX_LINES:
            severity: SeverityLevel = "error" if error else "warning" if warning else "information"
            self.notify(message.plain, severity=severity, timeout=max(8, len(text) / 15))

    def lines_needed(self, message: Text) -> int:
        """How many lines ``message`` takes wrapped at this line's width."""
        width = self.content_size.width or max(1, self.app.size.width - 2)
        return len(message.wrap(self.app.console, width))
