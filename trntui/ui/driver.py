"""Keys that reach the app as the user typed them: bytes that are not UTF-8 must not end it,
and esc then a digit is esc then the digit.

Textual's terminal drivers decode what the terminal sends with a strict UTF-8 decoder, so one
byte that is not UTF-8 (pasted from a Latin-1 terminal, binary on stdin) raises in the input
thread and the app panics, losing edits inside the autosave delay (Textual issue 6456, open
as of Textual 8.2). Until Textual decodes with ``errors="replace"`` itself, the driver the
app uses is given a decoder that does: such a byte arrives as U+FFFD, which a field keeps as
it is and a binding ignores.

Esc then a key typed quickly arrives as one sequence, ``ESC 2``: tmux joins them (within its
``escape-time``, 500 ms by default) and so may SSH or Textual's own read (within its
``ESCDELAY``, 100 ms); no delay the app sets can split bytes that arrive together. Textual
reads ``ESC`` and a letter as alt+letter, but ``ESC`` and a digit (or ``-``, ``=``, ``§``) as
the character macOS types for Option and that key (``™`` for 2), which went into the focused
field. trntui binds no Alt key and no such character: ``read_escape_then_key_as_alt`` drops
those readings, so ``ESC 2`` is alt+2 too, and the app takes an alt+key nothing is bound to
as esc then the key (``TrnTuiApp.on_event``). ``ESC`` and a sign (``?``, ``/``, ``-``, space)
lost the esc: Textual's alt applies to letters and digits only, so the pair read as the sign
alone (esc then ``?`` in the Runs filter typed a ``?`` into it). ``read_escape_then_sign``
makes that pair esc then the sign.

A paste that holds an escape sequence (text copied from a coloured terminal) came apart:
Textual's parser reads an ``ESC`` inside a bracketed paste as the start of a sequence, takes
the characters after it out of the paste and, when the sequence means nothing, sends them as
keys, ahead of the paste's text: ``E ESC [31m F`` reached the field as ``^[31mFE``, and a
tab in the rest moved the focus to the next field. ``keep_pastes_whole`` makes every ``ESC``
inside a paste, but the one that ends it, a NUL, which Textual drops from a paste: the paste
arrives whole, in order, without its control characters (a field drops those too).
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Callable, Iterator
from typing import Any


def _replacing_decoder(encoding: str) -> Callable[..., codecs.IncrementalDecoder]:
    decoder = codecs.getincrementaldecoder(encoding)

    def make(errors: str = "replace", **options: Any) -> codecs.IncrementalDecoder:
        return decoder(errors="replace" if errors == "strict" else errors, **options)

    return make


def tolerate_bytes_that_are_not_utf8(driver_class: type) -> type:
    """``driver_class``, its module's decoder factory made to replace bytes it cannot decode
    (a driver that makes its decoder otherwise is left as it is)."""
    module = sys.modules.get(driver_class.__module__)
    if module is not None and getattr(module, "getincrementaldecoder", None) is not None:
        module.getincrementaldecoder = _replacing_decoder  # type: ignore[attr-defined]
    return driver_class


def read_escape_then_key_as_alt() -> None:
    """Textual reads ``ESC`` and a digit, ``-``, ``=`` or ``§`` as a macOS Option character
    (its table of sequences, ``ANSI_SEQUENCES_KEYS``): drop those two-character readings, so
    that such a pair reads as alt+key, as ``ESC`` and a letter already does. The table's other
    entries (``ESC b``/``ESC f`` word moves, ``ESC ESC``, ``ESC tab``) name keys and stay."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS as table

    if not isinstance(table, dict):  # a table Textual made read-only is left as it is
        return
    option_characters = [
        sequence
        for sequence, keys in table.items()
        if len(sequence) == 2 and sequence[0] == "\x1b" and isinstance(keys, str)
    ]
    for sequence in option_characters:
        del table[sequence]


def _is_sign(character: str) -> bool:
    """A printable key that is no letter or digit, other than ``[`` and ``]``: ``ESC [`` and
    ``ESC ]`` begin the terminal's own sequences (keys, mouse reports, paste, colour
    replies), and one that arrives in two parts (a slow link) must not read as esc, which
    closes a form; nor does a control character after ``ESC`` (alt+enter)."""
    return (
        len(character) == 1
        and character.isprintable()
        and not character.isalnum()
        and character not in "[]"
    )


def read_escape_then_sign() -> None:
    """Make Textual's parser read ``ESC`` and a sign (``?``, ``/``, ``-``, space: any printable
    key it cannot write as alt+key, but ``[`` and ``]``, ``_is_sign``) as esc then that key,
    where it read the sign alone. Only where the parser says the key came after an ``ESC``
    (``alt``) and made no alt+key of it; every other reading is Textual's. Safe to call more
    than once."""
    from textual import events
    from textual._xterm_parser import XTermParser

    reading = XTermParser._sequence_to_key_events
    if getattr(reading, "keeps_escape", False):
        return

    def with_escape(parser: XTermParser, sequence: str, alt: bool = False) -> Iterator[events.Key]:
        keys = list(reading(parser, sequence, alt))
        if alt and _is_sign(sequence) and not any(key.key.startswith("alt+") for key in keys):
            yield events.Key("escape", "\x1b")
        yield from keys

    with_escape.keeps_escape = True  # type: ignore[attr-defined]
    XTermParser._sequence_to_key_events = with_escape  # type: ignore[method-assign,assignment]


_PASTE_START = "\x1b[200~"
_PASTE_END = "\x1b[201~"


class _PasteFilter:
    """What the terminal sends, with each ``ESC`` inside a bracketed paste made a NUL
    (``keep_pastes_whole``), read piece by piece as it arrives: a marker may come in two
    pieces. Outside a paste nothing is held back (a lone ``ESC`` is the esc key, whose
    timing the parser reads); inside one, a piece that ends in part of the end marker keeps
    that part for the next piece."""

    def __init__(self) -> None:
        self.pasting = False
        self._seen = ""
        """The last characters outside a paste (the start marker's beginning, if it is)."""
        self._held = ""
        """Inside a paste: the end of a piece that may be the end marker's beginning."""

    def __call__(self, data: str) -> str:
        out: list[str] = []
        text, self._held = self._held + data, ""
        while text:
            if not self.pasting:
                seen = self._seen + text
                at = seen.find(_PASTE_START)
                if at < 0:
                    out.append(text)
                    self._seen = seen[-(len(_PASTE_START) - 1) :]
                    return "".join(out)
                cut = at + len(_PASTE_START) - len(self._seen)  # the marker's end, in text
                out.append(text[:cut])
                text, self._seen, self.pasting = text[cut:], "", True
                continue
            at = text.find(_PASTE_END)
            if at < 0:
                body, self._held = _split_partial_end(text)
                out.append(body.replace("\x1b", "\x00"))
                return "".join(out)
            out.append(text[:at].replace("\x1b", "\x00") + _PASTE_END)
            text, self.pasting = text[at + len(_PASTE_END) :], False
        return "".join(out)


def _split_partial_end(text: str) -> tuple[str, str]:
    """``text`` less a last part that could begin the paste's end marker, and that part."""
    for size in range(min(len(_PASTE_END) - 1, len(text)), 0, -1):
        if _PASTE_END.startswith(text[-size:]):
            return text[:-size], text[-size:]
    return text, ""


def keep_pastes_whole() -> None:
    """Make Textual's parser read every ``ESC`` inside a bracketed paste as a NUL (dropped
    from the paste), so a paste holding an escape sequence arrives whole and nothing of it
    as keys (module docstring). Safe to call more than once."""
    from textual._xterm_parser import XTermParser

    feeding = XTermParser.feed
    if getattr(feeding, "keeps_pastes_whole", False):
        return

    def feed(parser: XTermParser, data: str) -> Iterator[Any]:
        pastes = parser.__dict__.get("_trntui_pastes")
        if pastes is None:
            pastes = parser.__dict__["_trntui_pastes"] = _PasteFilter()
        # Textual's feed of "" ends the input: a held part of a marker goes first.
        text = pastes(data) if data else pastes._held
        if not data:
            pastes._held = ""
        if text:
            yield from feeding(parser, text)
        if not data:
            yield from feeding(parser, data)

    feed.keeps_pastes_whole = True  # type: ignore[attr-defined]
    XTermParser.feed = feed  # type: ignore[method-assign,assignment]
