"""The one sanitiser for text that came from a file or a log and is shown to a person.

A set name, a fact from a log, a path or a line quoted in an error message may hold terminal
control sequences (``ESC [ 2 J`` clears the screen, ``ESC ] 52`` writes the clipboard) or
characters that rewrite what was printed before them (CR, backspace, bidirectional overrides).
``printable`` shows each such character as a visible escape (``\\x1b``) instead; the CLI passes
everything it prints through it (``cli.py``) and the app shows names through it. What reaches
the terminal from the app passes ``without_controls`` as its last step (``ui/text.py``
``TerminalSafe``), and so does what a person types or pastes into a field, before it is kept.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and line feed, DEL, C1 controls (``\\x9b`` is a one-byte CSI), and the
bidirectional marks and overrides that reorder what a terminal shows."""
_CONTROL_OR_BREAK = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


_SPACE_LIKE = re.compile("[\t\n\r\v\f\u2028\u2029]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def without_controls(text: str) -> str:
    """``text`` with nothing a terminal would act on: every character ``printable`` escapes
    (C0 and C1 controls, DEL, line and paragraph separators, bidirectional overrides) is
    dropped. For typed text, ``typed_text`` keeps the words apart."""
    return _CONTROL_OR_BREAK.sub("", text)


def typed_text(text: str) -> str:
    """A value typed or pasted into a one-line field, as it may be kept: tabs and line breaks
    become one space, every other control character goes, and so does a lone surrogate (a
    byte that was not UTF-8, which no file could store)."""
    return _SURROGATE.sub("", without_controls(_SPACE_LIKE.sub(" ", text)))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``); tab and line
    feed are kept unless ``one_line`` (a name in a table cell or one line of output)."""
    value = str(text)
    pattern = _CONTROL_OR_BREAK if one_line else _CONTROL
    return pattern.sub(_escape, value)


MAX_NAME_LENGTH = 200


def name_problem(value: object) -> str | None:
    """Why ``value`` cannot be a name a person gives (a run set, a scaling family), or None.

    A name is one line of text that can be stored and shown as it is: not blank, no control
    characters or bidirectional overrides (``printable`` would have to change it), no lone
    surrogate (bytes that were not UTF-8, from a command line), at most 200 characters.
    """
    if not isinstance(value, str) or not value.strip():
        return "a name needs some text (it is empty or only spaces)"
    if _SURROGATE.search(value):
        return "the name holds bytes that are not UTF-8 text"
    if printable(value, one_line=True) != value:
        return f"the name holds control characters ({printable(value, one_line=True)})"
    if len(value) > MAX_NAME_LENGTH:
        return f"the name is {len(value)} characters long; at most {MAX_NAME_LENGTH} are kept"
    return None


def as_name(text: str) -> str:
    """``text`` (a folder's name, say) made a name ``name_problem`` accepts: control characters
    and bytes that were not UTF-8 shown as escapes, cut to the longest name kept."""
    shown = printable(text, one_line=True).encode("utf-8", "backslashreplace").decode("utf-8")
    return shown.strip()[:MAX_NAME_LENGTH] or "unnamed"
