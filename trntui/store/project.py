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
  The lock file is opened with ``O_NOFOLLOW`` (a link there is refused, never truncated), and
  the lock is checked to be on the file at that name (a file deleted or replaced meanwhile is
  opened again). The project folder itself is locked too, so deleting ``.trntui.lock`` under a
  writer (``git clean -fdX``) admits no second one; the holder puts the file back before its
  next write.
  Every store writer runs under ``write_access``: it proceeds when this process holds the lock
  and otherwise takes it for the one write, so no caller can write beside another session.
* No lost update: a save first checks that ``trntui.toml`` still holds what this session last
  read or wrote; if someone changed it by hand meanwhile, the save is refused, not merged.
* A file from a newer ``schema_version`` is refused and never rewritten; a malformed file raises
  ``InputFileError`` naming the file, line and key, and nothing on disk is touched.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import functools
import getpass
import hashlib
import os
import socket
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

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
    atomic_write_text(path, render_project_toml(inventory), root=root)
    gitignore = root / ".gitignore"
    if not gitignore.exists() and not gitignore.is_symlink():
        atomic_write_text(gitignore, _GITIGNORE, root=root)
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

    def __init__(self, root: Path, loaded: LoadedInventory, lock: _Lock | None, holder: str):
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
            _count_session(key, +1, lock)
            self._session = weakref.finalize(self, _end_session, key, lock)
        else:
            key = self.root.resolve()
            _count_looking(key, +1)
            self._session = weakref.finalize(self, _count_looking, key, -1)

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
            if holder.startswith(_NOBODY):
                raise ReadOnlyProject(f"{root} cannot be written: {_why_nobody(holder)}")
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
        if self.holder.startswith(_NOBODY):
            return _why_nobody(self.holder)
        return f"{self.holder} has it open for writing"

    def require_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyProject(f"{self.root} is open read-only: {self.read_only_reason}")

    def save_inventory(self, inventory: Inventory) -> None:
        """Write the inventory atomically, unless the file changed on disk since we read it."""
        self.require_writable()
        if self._lock is not None:
            self._lock.reassert()
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
            atomic_write_bytes(
                self.path.with_name(f"{PROJECT_FILE}.v{self._version}.bak"), current, root=self.root
            )
        atomic_write_bytes(self.path, data, root=self.root)
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
_SESSIONS: dict[Path, list[_Lock]] = {}
"""The locks of this process's open writable ``Project`` objects, by resolved root."""
_BRIEF_GUARDS: dict[Path, threading.RLock] = {}
"""Per root: serialises this process's threads that write without an open ``Project``."""
_BRIEF_HELD: dict[Path, list[Any]] = {}
"""Per root: ``[lock handle, depth]`` while a thread writes under a lock taken for one write."""


_LOOKING: dict[Path, int] = {}
"""Open read-only ``Project`` objects of this process, by resolved root."""


def _count_looking(key: Path, change: int) -> None:
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


def _count_session(key: Path, change: int, lock: _Lock) -> None:
    with _REGISTRY:
        locks = _SESSIONS.setdefault(key, [])
        if change > 0:
            locks.append(lock)
        elif lock in locks:
            locks.remove(lock)
        if not locks:
            _SESSIONS.pop(key, None)


def _end_session(key: Path, lock: _Lock) -> None:
    _count_session(key, -1, lock)
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
            lock, holder = _acquire_lock(root, brief=True, wait_s=_BRIEF_WAIT_S)
            if lock is None:
                if holder.startswith(_NOBODY):
                    raise ReadOnlyProject(f"{root} cannot be written: {_why_nobody(holder)}")
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


_NOBODY = "nobody"
_BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
_LOCK_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
"""Never through a link (a linked lock file would be truncated wherever it points), and never
blocking on a FIFO put in its place."""
_LOCK_TRIES = 5
"""Attempts when the lock file is deleted or replaced between opening and locking it."""


class _Lock:
    """The write lock, held: an exclusive ``flock`` on ``.trntui.lock`` and on the folder.

    The lock file names the holder for others to read; the lock on the project folder itself is
    what a deleted or replaced lock file cannot take away (``git clean -fdX`` removes the file,
    not the folder), so a second writer that creates a new lock file still finds the folder
    locked. The holder re-creates a deleted lock file before each write (``reassert``).
    """

    def __init__(self, root: Path, file_fd: int, folder_fd: int, holder: str) -> None:
        self.root = root
        self.path = root / LOCK_FILE
        self.file_fd = file_fd
        self.folder_fd = folder_fd
        self.holder = holder
        self._guard = threading.Lock()

    def file_is_ours(self) -> bool:
        return _same_file(self.path, self.file_fd)

    def reassert(self) -> None:
        """Before a write: if the lock file was deleted or replaced, put ours back.

        The folder lock still keeps every other writer out; this restores the name others
        read (and the file lock an older trntui would look at).
        """
        with self._guard:
            if self.file_fd < 0 or self.file_is_ours():
                return
            try:
                fd = _open_lock_file(self.path)
            except _LockRefused:
                return self._lost()  # a link or a FIFO put there: never followed
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)  # someone is between opening and giving up on the folder lock
                return self._lost()
            if not _same_file(self.path, fd):
                os.close(fd)
                return self._lost()
            _write_holder(fd, self.holder)
            old, self.file_fd = self.file_fd, fd
            os.close(old)

    def _lost(self) -> None:
        """The lock file is not ours any more: fine while the folder lock holds, else refused."""
        if self.folder_fd < 0:
            raise ReadOnlyProject(
                f"{self.root} cannot be written: this session's lock file {self.path} was "
                "deleted or replaced and this file system cannot lock the folder, so nothing "
                "was written (close and reopen the project)"
            )

    def release(self) -> None:
        with self._guard:
            try:
                if self.file_fd >= 0:
                    with contextlib.suppress(OSError):
                        os.ftruncate(self.file_fd, 0)
                    fcntl.flock(self.file_fd, fcntl.LOCK_UN)
                if self.folder_fd >= 0:
                    fcntl.flock(self.folder_fd, fcntl.LOCK_UN)
            finally:
                self.close()

    def close(self) -> None:
        for fd in (self.file_fd, self.folder_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.file_fd = self.folder_fd = -1


class _LockRefused(Exception):
    """The lock file cannot be used; the message says why, in words."""


def _same_file(path: Path, fd: int) -> bool:
    """Whether ``path`` (not followed if a link) is the file open on ``fd``."""
    try:
        named = os.lstat(path)
        held = os.fstat(fd)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _open_lock_file(path: Path) -> int:
    try:
        fd = os.open(path, _LOCK_FLAGS, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP or path.is_symlink():
            try:
                target = f" (to {os.readlink(path)})"
            except OSError:
                target = ""
            raise _LockRefused(
                f"{path} is a symbolic link{target}; trntui never follows a link for a file it "
                "writes: delete the link"
            ) from None
        raise _LockRefused(f"the lock file cannot be created: {error.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _LockRefused(f"{path} is not a regular file; delete it")
    return fd


def _write_holder(fd: int, holder: str) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, (holder + "\n").encode("utf-8"), 0)


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 4096, 0).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


def _release_lock(lock: _Lock) -> None:
    lock.release()


def _why_nobody(holder: str) -> str:
    """Why nobody can hold the lock, from a holder text ``nobody (<why>)``."""
    return holder.removeprefix(_NOBODY).strip().removeprefix("(").removesuffix(")")


def _acquire_lock(
    root: Path, *, brief: bool = False, wait_s: float = 0.0
) -> tuple[_Lock | None, str]:
    """Take the exclusive lock; on failure return ``(None, <who holds it>)``.

    A holder that writes once (``brief``) is waited for, up to ``wait_s`` seconds. The lock
    file is never followed through a link; one deleted or replaced between being opened and
    being locked is opened again, so the lock taken is always on the file at that name.
    """
    root = Path(root)
    path = root / LOCK_FILE
    deadline = time.monotonic() + wait_s
    tries = 0
    while True:
        try:
            fd = _open_lock_file(path)
        except _LockRefused as refused:
            return None, f"{_NOBODY} ({refused})"
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _read_holder(fd) or "another trntui session"
            os.close(fd)
            if error.errno not in _BUSY:
                raise
            if _BRIEF not in holder or time.monotonic() >= deadline:
                return None, holder
            time.sleep(0.02)
            continue
        if not _same_file(path, fd):
            # Deleted or replaced since we opened it: a lock on it would keep nobody out.
            os.close(fd)
            tries += 1
            if tries >= _LOCK_TRIES:
                return None, f"{_NOBODY} ({path} keeps being deleted or replaced)"
            continue
        folder = _lock_folder(root)
        if isinstance(folder, str):
            # Another session holds the project although the lock file was ours to take: its
            # lock file was deleted under it. It is still the writer; wait like for any holder.
            os.close(fd)
            if time.monotonic() >= deadline:
                return None, folder
            time.sleep(0.02)
            continue
        holder = _holder_text(brief)
        _write_holder(fd, holder)
        return _Lock(root, fd, folder, holder), holder


def _lock_folder(root: Path) -> int | str:
    """The project folder, locked (its descriptor); or who holds it, in words."""
    try:
        folder = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError as error:
        return f"{_NOBODY} ({root} cannot be opened: {error.strerror})"
    try:
        fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(folder)
        if error.errno not in _BUSY:
            return -1  # a file system that cannot lock folders: the lock file alone, as before
        return "another trntui session (its lock file was deleted while it writes)"
    return folder
