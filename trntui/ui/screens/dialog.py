"""The frame every dialog shares: centred over the screen it was opened from, one bordered box
(the dialog's first ``Vertical``), rows of a label and a field, a grey hint line and a red line
for what was refused (``refuse``: checked again at every edit until it is put right). A dialog
states only what differs (its size, its own parts)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from textual import events
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Label, OptionList, Select, Static

ResultType = TypeVar("ResultType")
_DROPDOWN_MAX_ROWS = 12
"""Textual's own limit for a Select's list (its borders included)."""
_DROPDOWN_MIN_ROWS = 3
"""One option between the list's two border rows."""
ScreenT = TypeVar("ScreenT", bound=ModalScreen[Any])


def after_typing(action: Callable[[ScreenT], None]) -> Callable[[ScreenT], None]:
    """For a dialog action bound with ``priority=True`` (ctrl+s keep): run it once the focused
    field has handled the keys typed before it.

    A priority binding runs as soon as its key reaches the app, ahead of the keys still queued
    for the field: a fast typist (or a laggy SSH link sending a burst) had ctrl+s keep the
    value from a few characters back. Queued on the focused widget, the action runs after them.
    """

    @functools.wraps(action)
    def run(screen: ScreenT) -> None:
        focused = screen.focused
        if focused is None:
            action(screen)
        else:
            focused.call_later(action, screen)

    return run


class Dialog(ModalScreen[ResultType]):
    DEFAULT_CSS = """
    Dialog { align: center middle; }
    Dialog > Vertical {
        width: 78; height: 22; border: round $accent; background: $surface; padding: 0 1;
    }
    Dialog Horizontal.row { height: 1; margin-bottom: 1; }
    Dialog .row > Label { width: 9; }
    Dialog .row > Label.muted { color: $text-muted; }
    Dialog .row > Input, Dialog .row > Select { width: 1fr; }
    Dialog .hint { color: $text-muted; }
    Dialog .error { color: $error; height: auto; }
    """

    _refused = False

    def refuse(self, message: str) -> None:
        """Show why the dialog was not kept on its error line. From then on every edit asks
        ``refusal`` again: the line follows what is typed (cleared once put right), where a
        line left as it was read "Name is required" next to the name being typed."""
        self._refused = True
        self.query_one(".error", Static).update(message)

    def refusal(self) -> str | None:
        """What keeping the dialog now would be refused for (the checks it makes itself, not
        those that ask the project); None when nothing."""
        return None

    def refused(self) -> bool:
        """Whether keeping the dialog now is refused (``refusal``); if so, it says why."""
        problem = self.refusal()
        if problem is not None:
            self.refuse(problem)
        return problem is not None

    def on_input_changed(self, event: Input.Changed) -> None:
        self.check_again()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.check_again()

    def check_again(self) -> None:
        """After a refusal, show what ``refusal`` says now (nothing: the line clears)."""
        if not self._refused:
            return
        message = self.refusal()
        self._refused = message is not None
        self.query_one(".error", Static).update(message or "")

    def on_input_blurred(self, event: Input.Blurred) -> None:
        """A field left shows its value from the start, not from where typing ended."""
        event.input.action_home()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A Select's list, opened (it takes the focus), is kept inside the dialog's box."""
        widget = event.widget
        if isinstance(widget, OptionList) and isinstance(widget.parent, Select):
            self.call_after_refresh(self._fit_dropdown, widget)

    def _fit_dropdown(self, dropdown: OptionList) -> None:
        """Textual opens a Select's list up to 12 rows below it, kept inside the screen only:
        low in a dialog it drew over the dialog's border and what lies under the dialog. It is
        made as tall as the rows left above the box's bottom border (it scrolls), and never
        shorter than one option between its own borders. The rows are counted from where the
        list opens once it fits, under its Select: measured from where it opened, 12 rows
        tall and pushed up by the screen's bottom, it came out one row too tall."""
        boxes = self.query(Vertical)
        select = dropdown.parent
        if not boxes or not dropdown.display or not isinstance(select, Widget):
            return
        room = boxes.first().region.bottom - 1 - select.region.bottom
        dropdown.styles.max_height = max(_DROPDOWN_MIN_ROWS, min(_DROPDOWN_MAX_ROWS, room))


def field_row(label: str, *fields: Widget, muted: bool = False) -> Horizontal:
    """A label and its field(s) on one line of a dialog (the label grey when ``muted``)."""
    return Horizontal(Label(label, classes="muted" if muted else ""), *fields, classes="row")
