"""Every store write under the write lock (``write_access``, ``writes_project``), and whether
derived data may be stored (``may_store_derived``).

The lock of an open project belongs to its ``Project`` handle (``open_project``); the store's
writers are functions of the project root, so this module keeps an index of the handles this
process has open, by resolved root (``open_handle``, ``close_handle``), through which a writer
finds the lock it writes under. A caller with no writable handle open (a script, a test) takes
the lock for its one write (``_one_write``).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from trntui.store.project.lock import (
    BRIEF_WAIT_S,
    NOBODY,
    Lock,
    acquire_lock,
    release_lock,
    why_nobody,
)
from trntui.store.project.project_file import ProjectLocked, ReadOnlyProject, read_inventory


class OpenHandle(Protocol):
    """What the index needs of an open project (``open_project.Project``)."""

    @property
    def held_lock(self) -> Lock | None:
        """The write lock it holds (None when read-only)."""


_REGISTRY = threading.Lock()
_OPEN: dict[Path, weakref.WeakSet[OpenHandle]] = {}
"""This process's open ``Project`` handles, by resolved root (a dropped one leaves by itself;
its lock is released by its own finalizer)."""


@dataclass
class _OneWrite:
    """The lock a caller without a writable handle took for one write, and how deep the writes
    nested under it go."""

    lock: Lock
    depth: int = 0


_ONE_WRITE_GUARDS: dict[Path, threading.RLock] = {}
"""Per root: serialises this process's threads that write without an open ``Project``."""
_ONE_WRITE: dict[Path, _OneWrite] = {}
"""Per root: the lock taken for one write, while a thread writes under it."""


def open_handle(key: Path, handle: OpenHandle) -> None:
    """Index ``handle`` as open on the project at ``key`` (a resolved root)."""
    with _REGISTRY:
        _OPEN.setdefault(key, weakref.WeakSet()).add(handle)


def close_handle(key: Path, handle: OpenHandle) -> None:
    with _REGISTRY:
        handles = _OPEN.get(key)
        if handles is not None:
            handles.discard(handle)
            if not handles:
                del _OPEN[key]


def holds_a_lock() -> bool:
    """Whether a handle of this process still holds a project's write lock (released by its
    ``close``, or else by its finalizer as the interpreter exits)."""
    with _REGISTRY:
        return any(handle.held_lock is not None for found in _OPEN.values() for handle in found)


def _writer_lock(key: Path) -> Lock | None:
    """The lock of a handle this process has open for writing on ``key``, if any."""
    return next(
        (lock for handle in _OPEN.get(key, ()) if (lock := handle.held_lock) is not None), None
    )


def may_store_derived(root: Path) -> bool:
    """Whether derived data (a cache of what stored files imply) may be written now: this
    process has the project open for writing, or has not opened it read-only."""
    key = Path(root).resolve()
    with _REGISTRY:
        return _writer_lock(key) is not None or not _OPEN.get(key)


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
        held = _writer_lock(key)
        guard = None if held is not None else _ONE_WRITE_GUARDS.setdefault(key, threading.RLock())
    if held is not None:
        held.reassert()  # a deleted lock file is put back before the write
        yield
        return
    assert guard is not None
    with guard:
        entry = _ONE_WRITE.get(key)
        if entry is None:
            read_inventory(root)  # not a project, or unreadable: say so, not "locked"
            lock, holder = acquire_lock(root, brief=True, wait_s=BRIEF_WAIT_S)
            if lock is None:
                if holder.startswith(NOBODY):
                    raise ReadOnlyProject(f"{root} cannot be written: {why_nobody(holder)}")
                raise ProjectLocked(root, holder)
            entry = _ONE_WRITE[key] = _OneWrite(lock)
        else:
            entry.lock.reassert()
        entry.depth += 1
        try:
            yield
        finally:
            entry.depth -= 1
            if entry.depth == 0:
                del _ONE_WRITE[key]
                release_lock(entry.lock)


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
