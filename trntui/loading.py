"""The garbage collector while a command-line process loads what lives as long as it.

Python's cyclic collector runs a pass each time enough new objects have been made, and each
pass walks the objects made so far: while a process imports hundreds of modules (Polars,
Textual, the store) and builds its first screen, it passes over them again and again, though
none of them is garbage. ``collector_paused`` (and ``pause_collector`` with
``resume_collector``, for a pause that ends in another function) stops those passes while
that is loaded, then keeps what was loaded out of every later pass (``gc.freeze``) and runs
the collector as before.

Only in a process that has not loaded the named module yet (the command line: tests and other
callers in process have, and keep their collector as it is). The pause cut the collections of
an import of a 109 MB log from 13 ms to 2.5 ms of CPU, and the app's first frame by about
30 ms (README, "First frame").
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator

_paused = False
"""Whether ``pause_collector`` stopped the collector (and ``resume_collector`` has not run)."""


def pause_collector(unless_loaded: str) -> bool:
    """Stop the collector's passes, unless ``unless_loaded`` (a module's name) is loaded
    already, the collector is off, or it was paused here before; whether this call paused
    it."""
    global _paused
    if _paused or not gc.isenabled() or unless_loaded in sys.modules:
        return False
    gc.disable()
    _paused = True
    return True


def resume_collector() -> None:
    """After ``pause_collector``: keep every object made so far out of the collector's later
    passes, and run it again. Nothing otherwise."""
    global _paused
    if not _paused:
        return
    _paused = False
    gc.freeze()
    gc.enable()


@contextlib.contextmanager
def collector_paused(unless_loaded: str) -> Iterator[None]:
    """``pause_collector`` for the block, and ``resume_collector`` after it when this block
    paused it (inside a longer pause, as the app's start, the collector stays paused)."""
    paused = pause_collector(unless_loaded)
    try:
        yield
    finally:
        if paused:
            resume_collector()
