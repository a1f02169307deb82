"""The help screen: the keys of the screen it was opened on first (like k9s' ``?``), then the
keys that work everywhere, each as remapped by ``keymap.toml`` and with the binding id to write
there. Generated from the same bindings as the footer and the palette."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from trntui.ui import keys
from trntui.ui.keys import APP_COMMANDS, PLACES, bindings_of, current_key
from trntui.ui.screens.dialog import Dialog

_INTRO = (
    "trntui turns measured trial runs into a training cost estimate. Fill the Inventory (1) "
    "first, import Runs (2), look up Prices (3), then read the estimate on Scenarios (4).\n\n"
    "Every valid edit is saved to trntui.toml at once; an invalid value shows its error under "
    "the field and is not saved. Over SSH everything works with letters, digits, F-keys, "
    "arrows and ctrl: no mouse, Alt or Cmd needed."
)

_HABITS = (
    "\nq or esc goes back: it closes Help, the run detail and the snapshot comparison; a "
    "dialog with fields closes with esc (there q types a q). ctrl+q quits from anywhere (it "
    "asks first if something is not saved). Esc then a letter or a digit typed quickly (tmux or "
    "SSH may send them as one alt+key) is still esc, then the key: esc 2 switches to Runs; "
    "after esc, wait a moment before ? [ ] / or space (Textual reads those without the esc). "
    "a adds and d "
    "deletes on every screen that has items (x too on Runs and Scenarios). In the run "
    "detail, r records a quality result (it was q)."
)

_NOTES: dict[str, str] = {
    "InventoryScreen": (
        "up/down and enter choose a section and enter its form; tab and shift+tab move "
        "between fields; on Risks and Targets, enter also edits the highlighted item."
    ),
    "RunsScreen": "up/down choose a run (its plot follows); enter opens the run in full.",
    "PricesScreen": "up/down choose a quote; its source and date show below the table.",
    "ScenariosScreen": "Some keys act on one tab only: the footer shows those of this tab.",
    "FetchPricesScreen": "enter in a field fetches; space picks the highlighted row.",
    "ImportRunsScreen": "enter in the paths field previews what would be imported.",
    "SaveSnapshotScreen": "enter in a field saves too.",
}

_EXTRA_OWNERS = {"InventoryScreen": ("ItemTable",)}
"""Widgets whose keys belong to a screen's help (the Inventory's Risks and Targets tables)."""


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold underline")


def _table(rows: list[tuple[str, str, str]]) -> Table:
    """Key, what it does, binding id: aligned columns, the description wraps."""
    table = Table(box=None, show_header=True, header_style="dim", pad_edge=False, expand=True)
    table.add_column("Key", no_wrap=True, style="bold")
    table.add_column("What it does", ratio=1)
    table.add_column("Id (keymap.toml)", no_wrap=True, style="dim")
    for row in rows:
        table.add_row(*row)
    return table


class HelpScreen(Dialog[None]):
    DEFAULT_CSS = """
    HelpScreen > Vertical { padding: 0; }
    HelpScreen #help-text { padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "close", "Close", tooltip="Close Help", id="help.close"),
        Binding("f1", "close", "Close", show=False, tooltip="Close Help", id="help.close_f1"),
        Binding("q", "close", "Close", show=False, tooltip="Close Help", id="help.close_q"),
    ]

    def __init__(self, about: Screen[object] | None = None) -> None:
        super().__init__()
        self.about = about
        """The screen Help was opened on: its keys come first."""

    def _key(self, binding: Binding) -> str:
        return current_key(self.app, binding)

    def _screen_keys(self) -> list[RenderableType]:
        owner = type(self.about).__name__ if self.about is not None else ""
        place = PLACES.get(owner)
        if place is None:
            return []
        bindings = bindings_of(owner)
        for extra in _EXTRA_OWNERS.get(owner, ()):
            bindings += bindings_of(extra)
        rows = [(self._key(b), b.tooltip or b.description, b.id or "") for b in bindings]
        parts: list[RenderableType] = [_heading(f"Keys on {place.title}")]
        if rows:
            parts.append(_table(rows))
        if owner in _NOTES:
            parts.append(Text(_NOTES[owner]))
        return parts

    def _global_keys(self) -> list[RenderableType]:
        rows = [
            (
                self._key(Binding(c.key, c.action, key_display=c.key_display, id=c.id)),
                f"{c.title}: {c.help}",
                c.id,
            )
            for c in APP_COMMANDS
        ]
        rows.append(("^p", "Command palette: every command of every screen", ""))
        return [_heading("Keys everywhere"), _table(rows), Text(_HABITS)]

    def _remapping(self) -> list[RenderableType]:
        text = Text()
        text.append("Write ")
        text.append('"id" = "key"', style="bold")
        text.append(" lines (the ids above) in\n")
        text.append(str(keys.keymap_path()), style="bold")  # the one the app read
        text.append(
            '\n(read at start); for example "screen.runs" = "f3" or "runs.import" = "f5,i". '
            "The keys shown here are the ones in force now."
        )
        return [_heading("Remapping keys (keymap.toml)"), text]

    def compose(self) -> ComposeResult:
        parts = [
            *self._screen_keys(),
            *self._global_keys(),
            *self._remapping(),
            _heading("How the screens fit together"),
            Text(_INTRO),
        ]
        with Vertical() as box:
            box.border_title = "Help (q or esc closes)"
            with VerticalScroll():
                yield Static(Group(*parts), id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)
