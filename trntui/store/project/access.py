"""This process's open sessions per project, and every store write under the write lock
(``write_access``, ``writes_project``); whether derived data may be stored
(``may_store_derived``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from trntui.store.project.lock import (
    BRIEF_WAIT_S,
    NOBODY,
    Lock,
    acquire_lock,
    release_lock,
    why_nobody,
)
from trntui.store.project.project_file import ProjectLocked, ReadOnlyProject, read_inventory

_REGISTRY = threading.Lock()
_SESSIONS: dict[Path, list[Lock]] = {}
"""The locks of this process's open writable ``Project`` objects, by resolved root."""
_BRIEF_GUARDS: dict[Path, threading.RLock] = {}
"""Per root: serialises this process's threads that write without an open ``Project``."""
_BRIEF_HELD: dict[Path, list[Any]] = {}
"""Per root: ``[lock handle, depth]`` while a thread writes under a lock taken for one write."""


_LOOKING: dict[Path, int] = {}
"""Open read-only ``Project`` objects of this process, by resolved root."""


def count_looking(key: Path, change: int) -> None:
    with _REGISTRY:
        count = _LOOKING.get(key, 0) + change
        if count > 0:
            _LOOKING[key] = count
        else:
            _LOOKING.pop(key, None)


def may_store_derived(root: Path) -> bool:
    """Whether derived data (a cache of what stored files imply) may be written now: this
    process has the project open for writing, or has not opened it read-only."""
    key = Path(root).resolve()
    with _REGISTRY:
        return bool(_SESSIONS.get(key)) or _LOOKING.get(key, 0) == 0


def count_session(key: Path, change: int, lock: Lock) -> None:
    with _REGISTRY:
        locks = _SESSIONS.setdefault(key, [])
        if change > 0:
            locks.append(lock)
        elif lock in locks:
            locks.remove(lock)
        if not locks:
            _SESSIONS.pop(key, None)


def end_session(key: Path, lock: Lock) -> None:
    count_session(key, -1, lock)
    release_lock(lock)


@contextmanager
def write_access(root: Path) -> Iterator[None]:
    """Run one store write under the project's write lock.

    A session that opened the project for writing holds the lock already (the UI, the CLI):
    its writes, from any of its threads, go ahead. Any other caller, such as a script or a
    test, takes the lock for the duration of the write (nested writes share it; other threads
    of the process wait their turn), waiting briefly for another such one-write holder. If a
    session has the project open for writing, the write is refused with ``ProjectLocked``
    naming it, and nothing is written.
    """
    root = Path(root)
    key = root.resolve()
    with _REGISTRY:
        session = next(iter(_SESSIONS.get(key, ())), None)
        guard = None if session is not None else _BRIEF_GUARDS.setdefault(key, threading.RLock())
    if session is not None:
        session.reassert()  # a deleted lock file is put back before the write
        yield
        return
    assert guard is not None
    with guard:
        entry = _BRIEF_HELD.get(key)
        if entry is None:
            read_inventory(root)  # not a project, or unreadable: say so, not "locked"
            lock, holder = acquire_lock(root, brief=True, wait_s=BRIEF_WAIT_S)
            if lock is None:
                if holder.startswith(NOBODY):
                    raise ReadOnlyProject(f"{root} cannot be written: {why_nobody(holder)}")
                raise ProjectLocked(root, holder)
            entry = _BRIEF_HELD[key] = [lock, 0]
        else:
            entry[0].reassert()
        entry[1] += 1
        try:
            yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del _BRIEF_HELD[key]
                release_lock(entry[0])


_P = ParamSpec("_P")
_R = TypeVar("_R")


def writes_project(
    function: Callable[Concatenate[Path, _P], _R],
) -> Callable[Concatenate[Path, _P], _R]:
    """Decorate a store writer whose first argument is the project root: see ``write_access``."""

    @functools.wraps(function)
    def write(root: Path, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with write_access(root):
            return function(root, *args, **kwargs)

    return write
