"""The top line of every area's screen: the four areas by key and name, the current one
marked, then the project (read-only first, where a cut at 80 columns never hides it).

It replaces Textual's ``Header``, whose title said only "trntui" and the project: after
pressing 2, nothing on screen named where one was. The keys are those in force (a key a
``keymap.toml`` remaps reads as remapped), taken from the commands that switch areas, so the
line, the footer, Help and the palette agree; an area's name can be clicked.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from trntui.core.text import printable
from trntui.ui.commands import APP_COMMANDS
from trntui.ui.session import Session

AREAS = tuple(
    (command.id, command.key, command.title, command.action)
    for command in APP_COMMANDS
    if command.id.startswith("screen.")
)
"""(binding id, default key, name, action) of each area, in the order of their keys."""


class AreaBar(Static):
    """``trntui  1 Inventory  [2 Runs]  3 Prices  4 Scenarios  project name``."""

    DEFAULT_CSS = """
    AreaBar {
        height: 1; width: 1fr; background: $panel; color: $text-muted; link-style: none;
    }
    """

    def __init__(self, current: str, session: Session) -> None:
        super().__init__()
        self.current = current
        """The binding id of this screen's area (``screen.runs``)."""
        self.session = session

    def on_mount(self) -> None:
        # The project's name, or whether it is read-only, changes with the inventory (an
        # edit, a reload that took the lock).
        self.session.signals.inventory.subscribe(self, lambda _: self.refresh())

    def render(self) -> Text:
        keymap: dict[str, str] = getattr(self.app, "keymap", {})
        line = Text(" trntui ", style="bold", no_wrap=True, overflow="ellipsis")
        for binding_id, key, name, action in AREAS:
            shown_key = keymap.get(binding_id, key).split(",")[0]
            style = Style.parse("reverse bold" if binding_id == self.current else "")
            line.append(f" {shown_key} {name} ", style=style + Style.from_meta({"@click": action}))
        line.append("  ")
        line.append(printable(self.session.title, one_line=True), style="dim")
        return line
