"""The help screen: every key, generated from the same command table as the bindings."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from trntui.ui.commands import APP_COMMANDS, keymap_path

_INTRO = """\
trntui turns measured trial runs into a training cost estimate. Fill the
**Inventory** first, import **Runs**, look up **Prices**, then read the
estimate on **Scenarios**.

Every valid edit is saved to `trntui.toml` at once; an invalid value shows
its error under the field and is not saved. Over SSH everything works with
letters, digits, F-keys, arrows and ctrl: no mouse, Alt or Cmd needed.
"""

_SCREEN_KEYS = """\
| Where | Key | What it does |
|---|---|---|
| Inventory | up/down, enter | choose a section, enter its form |
| Inventory | tab, shift+tab | move between fields |
| Inventory | esc | leave a field (then 1-4 switch screens) |
| Risks/Targets | a, e or enter, d | add, edit, delete (ctrl+z undoes) |
| Item form | ctrl+s, esc | keep the item, discard it |
| Runs | i, x | import logs (preview first), remove a run |
| Runs | enter | the run in full; there q records a quality result |
| Import | enter, ctrl+s, esc | preview, store the previewed runs, cancel |
| Prices | f, a, d | fetch from the AWS Price List, manual quote, delete |
| Fetch | enter, space, ctrl+s | fetch, pick a row, keep the picked quotes |
| Scenarios | ] [ | next / previous tab |
| Scenarios | a, x | override an input (who, why), drop an override |
| Scenarios | t | the tornado chart of the other target |
| Scenarios | s, o, m, c, u | save, open, mark A, compare, use a snapshot |
| Anywhere | ctrl+p | command palette |
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: 78; height: 22; border: round $accent; background: $surface;
    }
    """

    BINDINGS = [
        Binding("escape", "close", "Close", id="help.close"),
        Binding("f1", "close", "Close", show=False, id="help.close_f1"),
        Binding("q", "close", "Close", show=False, id="help.close_q"),
    ]

    def compose(self) -> ComposeResult:
        rows = "\n".join(f"| `{c.key}` | {c.title} | {c.help} |" for c in APP_COMMANDS)
        text = (
            f"{_INTRO}\n| Key | Command | What it does |\n|---|---|---|\n{rows}\n\n"
            f"{_SCREEN_KEYS}\n"
            f"Keys can be remapped by binding id in `{keymap_path()}`, "
            'for example `"screen.runs" = "f3"`.'
        )
        with Vertical() as box:
            box.border_title = "Help (esc closes)"
            with VerticalScroll():
                yield Markdown(text)

    def action_close(self) -> None:
        self.dismiss(None)
