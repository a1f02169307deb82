"""``TextField``: the app's one-line input. Every field of every form and dialog is one.

What a person types or pastes is kept only as ``core.text.typed_text`` makes it: a terminal
control (ESC, a C1 byte, a bidirectional override) pasted into a name would be stored raw and
then shown, or written into a report, to whoever opens the project; a byte that was not UTF-8
could not be saved at all. ``replace`` is where Textual's ``Input`` makes every edit (typing,
paste, cut, completion), so cleaning there covers them all. A paste of several lines keeps
them all, on one line, and says so (Textual's own keeps the first line without a word).
A field made with ``select_on_focus=False`` takes the cursor to its end when focused.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from trntui.core.text import typed_text


class TextField(Input):
    """A Textual ``Input`` that keeps only text a file can hold and a terminal only shows."""

    def replace(self, text: str, start: int, end: int) -> None:
        super().replace(typed_text(text), start, end)

    def _on_focus(self, event: events.Focus) -> None:
        """A field that does not select its text on focus (a list of paths) is come back to
        for more: the cursor goes to the end (a field left shows its start, ``Dialog``)."""
        if not self.select_on_focus:
            self.cursor_position = len(self.value)

    def _on_paste(self, event: events.Paste) -> None:
        lines = [line.strip() for line in event.text.splitlines() if line.strip()]
        if len(lines) > 1:
            self.notify(
                f"Pasted {len(lines)} lines as one: this field holds one line.",
                severity="warning",
            )
        if lines:
            start, end = self.selection
            self.replace(" ".join(lines), start, end)
        event.stop()
        event.prevent_default()  # Input's own handler would paste the first line again
