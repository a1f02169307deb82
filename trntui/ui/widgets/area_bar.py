"""The top line of every area's screen: the four areas by key and name, the current one
marked, then the project (read-only first, where a cut at 80 columns never hides it).

It replaces Textual's ``Header``, whose title said only "trntui" and the project: after
pressing 2, nothing on screen named where one was. The keys are those in force (a key a
``keymap.toml`` remaps reads as remapped), taken from the bindings that switch areas, so the
line, the footer, Help and the palette agree (read from the App's bindings, which the
commands make); an area's name can be clicked.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from trntui.core.text import printable
from trntui.ui.session import Session


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
        for area in self.app.BINDINGS:
            if not isinstance(area, Binding) or not (area.id or "").startswith("screen."):
                continue
            shown_key = keymap.get(area.id or "", area.key).split(",")[0]
            style = Style.parse("reverse bold" if area.id == self.current else "")
            click = Style.from_meta({"@click": f"app.{area.action}"})
            line.append(f" {shown_key} {area.description} ", style=style + click)
        line.append("  ")
        line.append(printable(self.session.title, one_line=True), style="dim")
        return line
