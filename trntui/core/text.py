"""The one sanitiser for text that came from a file or a log and is shown to a person.

A set name, a fact from a log, a path or a line quoted in an error message may hold terminal
control sequences (``ESC [ 2 J`` clears the screen, ``ESC ] 52`` writes the clipboard) or
characters that rewrite what was printed before them (CR, backspace, bidirectional overrides).
``printable`` shows each such character as a visible escape (``\\x1b``) instead; the CLI passes
everything it prints through it (``cli.py``) and the app shows names through it.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and line feed, DEL, C1 controls (``\\x9b`` is a one-byte CSI), and the
bidirectional marks and overrides that reorder what a terminal shows."""
_CONTROL_OR_BREAK = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``); tab and line
    feed are kept unless ``one_line`` (a name in a table cell or one line of output)."""
    value = str(text)
    pattern = _CONTROL_OR_BREAK if one_line else _CONTROL
    return pattern.sub(_escape, value)
