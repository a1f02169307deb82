"""Text from files shown in the app: through ``core.text.printable``, never as markup.

A set name, a path or an error message quoting a log may hold control characters (``ESC``
sequences that would be written to the terminal as they are) or square brackets that Textual
would read as markup (``[/]`` even raises). ``shown`` gives a Rich ``Text``: printable, and
drawn literally. The status line, notifications, dialogs' messages and the runs table use it.

``TerminalSafe`` is the rule that holds for everything else: the app's last line filter, it
drops from each rendered line whatever a terminal would act on instead of show (``ESC ] 0``
sets the window title, ``ESC ] 52`` the clipboard), whichever widget drew it and wherever its
text came from. A name shown through ``shown`` already reads ``\x1b``; one that was not loses
only the control characters, which take no cell, so the layout is unchanged.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

from trntui.core.text import printable, without_controls


class TerminalSafe(LineFilter):
    """Drops control characters from the text of every rendered segment (not from Textual's
    own control segments, which carry the cursor moves)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if all(without_controls(text) == text for text, _, control in segments if not control):
            return segments
        return [
            segment if segment.control else Segment(without_controls(segment.text), segment.style)
            for segment in segments
        ]


def shown(value: object, *, one_line: bool = False) -> Text:
    """``value`` as literal, printable text (``one_line``: line breaks shown as escapes)."""
    return Text(printable(value, one_line=one_line))


def shown_markup(value: object) -> str:
    """``value`` printable and escaped, to put inside a markup string."""
    from textual.markup import escape

    return escape(printable(value))


def cell(value: object) -> object:
    """A table cell: the text itself when it is plain, else ``shown(value, one_line=True)``
    (a control character, a line break or a ``[`` that markup would read)."""
    if not isinstance(value, str):
        return value
    if "[" not in value and printable(value, one_line=True) == value:
        return value
    return shown(value, one_line=True)


_VALUE_COLUMN = re.compile(r"^ *\S.*?\S {2,}(?=\S)")
"""``label   value``: where the value starts (after two or more spaces)."""


class Hanging:
    """``text`` line by line, a long line wrapped under its value (``label   value``) or its
    own indent, so it keeps its place in the outline instead of running back to the left
    edge. ``str()`` gives the text itself."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        for line in self.text.split("\n", allow_blank=True):
            plain = line.plain
            indent = len(plain) - len(plain.lstrip(" "))
            found = _VALUE_COLUMN.match(plain)
            hang = found.end() if found else indent
            if line.cell_len <= width or not 0 < hang <= width - 20:
                # Leading spaces as padding: Textual draws a line's own leading spaces away.
                yield Padding(line[indent:], (0, 0, 0, indent)) if indent else line
                continue
            pieces = line[hang:].wrap(console, width - hang)
            head = line[indent:hang]
            first = Text.assemble(head, pieces[0])
            yield Padding(first, (0, 0, 0, indent)) if indent else first
            for piece in pieces[1:]:
                yield Padding(piece, (0, 0, 0, hang))
