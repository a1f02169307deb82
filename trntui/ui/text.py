"""Text from files shown in the app: through ``core.text.printable``, never as markup.

A set name, a path or an error message quoting a log may hold control characters (``ESC``
sequences that would be written to the terminal as they are) or square brackets that Textual
would read as markup (``[/]`` even raises). ``shown`` gives a Rich ``Text``: printable, and
drawn literally. The status line, notifications, dialogs' messages and the runs table use it.
"""

from __future__ import annotations

from rich.text import Text

from trntui.core.text import printable


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
