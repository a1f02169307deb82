"""Keys and pastes that are not UTF-8 must not end the app.

Textual's terminal drivers decode what the terminal sends with a strict UTF-8 decoder, so one
byte that is not UTF-8 (pasted from a Latin-1 terminal, binary on stdin) raises in the input
thread and the app panics, losing edits inside the autosave delay (Textual issue 6456, open
as of Textual 8.2). Until Textual decodes with ``errors="replace"`` itself, the driver the
app uses is given a decoder that does: such a byte arrives as U+FFFD, which a field keeps as
it is and a binding ignores.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Callable
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
