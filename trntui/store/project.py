"""The project directory, format v1.

Layout (everything but the lock file is meant to be committed)::

    trntui.toml              schema_version + the workload inventory (this module)
    runs/                    imported runs: runs.parquet, timelines/<run_id>.parquet, facts.parquet
    prices/                  the price quotes the project uses
    scenarios/<name>.toml    saved scenario snapshots
    .trntui.lock             who has the project open for writing (git-ignored)

Rules this module enforces:

* Writes are atomic (``store.atomic``): a killed writer leaves the old or the new file.
* One writer at a time. ``Project.open`` takes an exclusive ``flock`` on ``.trntui.lock`` and
  writes who holds it; a second session gets the project read-only (or ``ProjectLocked``) with
  the holder's name. The kernel drops the lock when the holder dies, so there are no stale locks.
  Every store writer runs under ``write_access``: it proceeds when this process holds the lock
  and otherwise takes it for the one write, so no caller can write beside another session.
* No lost update: a save first checks that ``trntui.toml`` still holds what this session last
  read or wrote; if someone changed it by hand meanwhile, the save is refused, not merged.
* A file from a newer ``schema_version`` is refused and never rewritten; a malformed file raises
  ``InputFileError`` naming the file, line and key, and nothing on disk is touched.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import functools
import getpass
import hashlib
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Concatenate, ParamSpec, TypeVar

from trntui.core.errors import InputFileError, UserError
from trntui.core.inventory import Inventory, InventoryInvalid, ProjectInfo
from trntui.store.atomic import atomic_write_bytes, atomic_write_text, remove_stale_temp_files
from trntui.store.toml_file import decode_utf8, dump_toml, locate, parse_toml

SCHEMA_VERSION = 2
"""v2 adds the plan's limits and prices (goal budget, start date and capacity lead time, the
engineer day rate), the time outside the logs, the accelerators per instance and the scaling
assumption. A v1 file opens as it is; the first save writes v2 and keeps the v1 file beside it
as ``trntui.toml.v1.bak``."""
PROJECT_FILE = "trntui.toml"
LOCK_FILE = ".trntui.lock"
_GITIGNORE = f"{LOCK_FILE}\n.trntui-tmp-*\n"


class NotAProject(UserError):
    """The folder has no ``trntui.toml``."""


class NewerSchemaError(UserError):
    """The file was written by a newer trntui; we refuse rather than risk rewriting it."""


class ProjectLocked(UserError):
    """Another session holds the write lock."""

    def __init__(self, root: Path, holder: str) -> None:
        self.holder = holder
        super().__init__(
            f"{root} is open for writing by {holder}; close it there first (or open it read-only)"
        )


class ReadOnlyProject(UserError):
    """A write was attempted on a project opened read-only."""


class ChangedOnDisk(UserError):
    """``trntui.toml`` changed since this session read it; saving would lose that change."""


@dataclass(frozen=True)
class LoadedInventory:
    inventory: Inventory
    digest: str
    version: int = SCHEMA_VERSION


def project_file(root: Path) -> Path:
    return Path(root) / PROJECT_FILE


def render_project_toml(inventory: Inventory) -> str:
    """The file's text: ``schema_version`` first, then the sections in their fixed order."""
    document = {"schema_version": SCHEMA_VERSION, **inventory.to_dict()}
    header = (
        f"# trntui project file (format v{SCHEMA_VERSION}): the workload inventory.\n"
        "# Edit here or in the app (`trntui <this folder>`); keys are documented in the README.\n"
    )
    return header + dump_toml(document)


def read_inventory(root: Path) -> LoadedInventory:
    """Load and check ``trntui.toml``; raises a ``UserError`` describing any problem."""
    path = project_file(root)
    if Path(root).is_file():
        raise NotAProject(f"{root} is a file; a trntui project is a folder holding {PROJECT_FILE}")
    if not Path(root).is_dir():
        raise NotAProject(f"{root}: no such folder; create a project with `trntui init {root}`")
    if not path.is_file():
        raise NotAProject(
            f"{root} is not a trntui project: it has no {PROJECT_FILE} "
            f"(create one with `trntui init {root}`)"
        )
    data = path.read_bytes()
    text = decode_utf8(path, data)
    document = parse_toml(path, text)
    version = document.get("schema_version")
    inventory = _inventory_from_document(path, text, document)
    return LoadedInventory(inventory, _digest(data), version)


def _inventory_from_document(path: Path, text: str, document: dict[str, Any]) -> Inventory:
    version = document.pop("schema_version", None)
    if version is None:
        raise InputFileError(
            str(path),
            "missing schema_version",
            line=1,
            key="schema_version",
            expected=f"schema_version = {SCHEMA_VERSION} at the top of the file",
        )
    if isinstance(version, bool) or not isinstance(version, int):
        raise InputFileError(
            str(path),
            f"schema_version must be a whole number, not {version!r}",
            line=locate(text, "", "schema_version"),
            key="schema_version",
            expected=f"schema_version = {SCHEMA_VERSION}",
        )
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"{path} has schema_version {version}, written by a newer trntui; this version "
            f"reads up to {SCHEMA_VERSION}. Upgrade trntui to open it; the file was not changed."
        )
    if version < 1:
        raise InputFileError(
            str(path),
            f"schema_version {version} is not a valid format version",
            line=locate(text, "", "schema_version"),
            key="schema_version",
            expected=f"schema_version = {SCHEMA_VERSION}",
        )
    try:
        return Inventory.from_dict(document)
    except InventoryInvalid as invalid:
        first = invalid.problems[0]
        more = len(invalid.problems) - 1
        problem = first.message + (f" (and {more} more problem(s))" if more else "")
        raise InputFileError(
            str(path),
            problem,
            line=locate(text, first.section, first.key, first.index),
            key=first.path,
            expected=first.expected,
        ) from None


def init_project(root: Path, name: str | None = None) -> Path:
    """Create a new project folder (or fill an empty one); refuses to overwrite a project."""
    root = Path(root)
    path = project_file(root)
    if path.exists():
        raise UserError(f"{root} already holds a trntui project ({PROJECT_FILE}); nothing changed")
    if root.exists() and not root.is_dir():
        raise UserError(f"{root} exists and is not a folder")
    root.mkdir(parents=True, exist_ok=True)
    inventory = Inventory(project=ProjectInfo(name=name or root.resolve().name))
    atomic_write_text(path, render_project_toml(inventory))
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        atomic_write_text(gitignore, _GITIGNORE)
    return root


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_BRIEF = "for one write"
"""In the holder text of a process that holds the lock for a single store write only."""
_BRIEF_WAIT_S = 2.0
"""How long to wait for a holder that writes once before reporting the project as locked."""


def _holder_text(brief: bool = False) -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    since = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    when = _BRIEF if brief else f"since {since}"
    return f"{user}@{socket.gethostname()} (pid {os.getpid()}, {when})"


class Project:
    """An open project directory: the inventory plus, unless read-only, the write lock.

    Use as a context manager, or call ``close`` to release the lock.
    """

    def __init__(self, root: Path, loaded: LoadedInventory, lock: IO[str] | None, holder: str):
        self.root = Path(root)
        self.inventory = loaded.inventory
        self._digest = loaded.digest
        self._version = loaded.version
        self._lock = lock
        self.holder = holder
        """Who holds the write lock: this session's text when writable, the other one's if not."""
        self._session: weakref.finalize | None = None
        if lock is not None:
            # Registered under the path resolved now (a later chdir cannot change the key), and
            # ended exactly once: by ``close`` or, for a dropped Project, by the collector.
            key = self.root.resolve()
            _count(_SESSIONS, key, +1)
            self._session = weakref.finalize(self, _end_session, key, lock)
        else:
            key = self.root.resolve()
            _count(_LOOKING, key, +1)
            self._session = weakref.finalize(self, _count, _LOOKING, key, -1)

    @classmethod
    def open(cls, root: Path, *, allow_read_only: bool = False, read_only: bool = False) -> Project:
        """Open ``root``; with the lock taken by someone else, read-only or ``ProjectLocked``.

        ``read_only=True`` never takes the lock (for looking without blocking a colleague).
        """
        root = Path(root)
        loaded = read_inventory(root)
        if read_only:
            return cls(root, loaded, None, "")
        lock, holder = _acquire_lock(root, wait_s=_BRIEF_WAIT_S)
        if lock is None and not allow_read_only:
            raise ProjectLocked(root, holder)
        if lock is not None:
            try:
                remove_stale_temp_files(root)
            except BaseException:
                _release_lock(lock)
                raise
        return cls(root, loaded, lock, holder)

    @property
    def read_only(self) -> bool:
        return self._lock is None

    @property
    def path(self) -> Path:
        return project_file(self.root)

    @property
    def read_only_reason(self) -> str:
        """Why this session cannot write, in words ('' when it can)."""
        if not self.read_only:
            return ""
        if not self.holder:
            return "opened read-only on request"
        return f"{self.holder} has it open for writing"

    def require_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyProject(f"{self.root} is open read-only: {self.read_only_reason}")

    def save_inventory(self, inventory: Inventory) -> None:
        """Write the inventory atomically, unless the file changed on disk since we read it."""
        self.require_writable()
        current = self.path.read_bytes() if self.path.exists() else b""
        if _digest(current) != self._digest:
            raise ChangedOnDisk(
                f"{self.path} was changed outside this session since it was opened; "
                "your edit was not saved (reload to see the file's content, then edit again)"
            )
        text = render_project_toml(inventory)
        data = text.encode("utf-8")
        if self._version < SCHEMA_VERSION and current:
            # The first save in the new format keeps the old file, for an older trntui.
            atomic_write_bytes(self.path.with_name(f"{PROJECT_FILE}.v{self._version}.bak"), current)
        atomic_write_bytes(self.path, data)
        self.inventory = inventory
        self._digest = _digest(data)
        self._version = SCHEMA_VERSION

    def reload(self) -> Inventory:
        """Read the file again (after a hand edit); raises like ``open`` on a bad file."""
        loaded = read_inventory(self.root)
        self.inventory = loaded.inventory
        self._digest = loaded.digest
        self._version = loaded.version
        return self.inventory

    def close(self) -> None:
        if self._session is not None:
            self._session()
            self._session = None
        self._lock = None

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_REGISTRY = threading.Lock()
_SESSIONS: dict[Path, int] = {}
"""Open writable ``Project`` objects of this process, by resolved root."""
_BRIEF_GUARDS: dict[Path, threading.RLock] = {}
"""Per root: serialises this process's threads that write without an open ``Project``."""
_BRIEF_HELD: dict[Path, list[Any]] = {}
"""Per root: ``[lock handle, depth]`` while a thread writes under a lock taken for one write."""


_LOOKING: dict[Path, int] = {}
"""Open read-only ``Project`` objects of this process, by resolved root."""


def _count(table: dict[Path, int], key: Path, change: int) -> None:
    with _REGISTRY:
        count = table.get(key, 0) + change
        if count > 0:
            table[key] = count
        else:
            table.pop(key, None)


def may_store_derived(root: Path) -> bool:
    """Whether derived data (a cache of what stored files imply) may be written now: this
    process has the project open for writing, or has not opened it read-only."""
    key = Path(root).resolve()
    with _REGISTRY:
        return _SESSIONS.get(key, 0) > 0 or _LOOKING.get(key, 0) == 0


def _end_session(key: Path, lock: IO[str]) -> None:
    _count(_SESSIONS, key, -1)
    _release_lock(lock)


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
        in_session = _SESSIONS.get(key, 0) > 0
        guard = None if in_session else _BRIEF_GUARDS.setdefault(key, threading.RLock())
    if guard is None:
        yield
        return
    with guard:
        entry = _BRIEF_HELD.get(key)
        if entry is None:
            read_inventory(root)  # not a project, or unreadable: say so, not "locked"
            lock, holder = _acquire_lock(root, brief=True, wait_s=_BRIEF_WAIT_S)
            if lock is None:
                if holder.startswith(_NOBODY):
                    raise ReadOnlyProject(f"{root} cannot be written: {holder}")
                raise ProjectLocked(root, holder)
            entry = _BRIEF_HELD[key] = [lock, 0]
        entry[1] += 1
        try:
            yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del _BRIEF_HELD[key]
                _release_lock(entry[0])


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


def _release_lock(handle: IO[str]) -> None:
    try:
        handle.seek(0)
        handle.truncate()
        handle.flush()
        fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        handle.close()


_NOBODY = "nobody"


def _acquire_lock(
    root: Path, *, brief: bool = False, wait_s: float = 0.0
) -> tuple[IO[str] | None, str]:
    """Take the exclusive lock; on failure return ``(None, <who holds it>)``.

    A holder that writes once (``brief``) is waited for, up to ``wait_s`` seconds.
    """
    path = root / LOCK_FILE
    try:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the session
    except OSError as error:
        return None, f"{_NOBODY} (the lock file cannot be created: {error.strerror})"
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                handle.close()
                raise
            handle.seek(0)
            holder = handle.read().strip() or "another trntui session"
            if _BRIEF not in holder or time.monotonic() >= deadline:
                handle.close()
                return None, holder
            time.sleep(0.02)
    holder = _holder_text(brief)
    handle.seek(0)
    handle.truncate()
    handle.write(holder + "\n")
    handle.flush()
    return handle, holder
