"""The write lock: an exclusive ``flock`` on ``.trntui.lock`` (opened with ``O_NOFOLLOW``, and
refused when it has a second name: a hard link to a file elsewhere, which is written in place) and
on the project folder, the holder's text written into the file, and the checks that the lock
is still on the file at that name (``acquire_lock``, ``Lock``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import getpass
import os
import socket
import stat
import threading
import time
from pathlib import Path

from trntui.store.project.project_file import LOCK_FILE, ReadOnlyProject

_BRIEF = "for one write"
"""In the holder text of a process that holds the lock for a single store write only."""
BRIEF_WAIT_S = 2.0
"""How long to wait for a holder that writes once before reporting the project as locked."""


def _holder_text(brief: bool = False) -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    since = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    when = _BRIEF if brief else f"since {since}"
    return f"{user}@{socket.gethostname()} (pid {os.getpid()}, {when})"


NOBODY = "nobody"
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


class Lock:
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
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _LockRefused(f"{path} is not a regular file; delete it")
    if info.st_nlink > 1:
        # A second name of a file elsewhere: the holder's text is written in place, so locking
        # it would overwrite that file. Checked before anything is written to it.
        os.close(fd)
        raise _LockRefused(
            f"{path} is a hard link ({info.st_nlink} names for one file, the others outside "
            "trntui's control); trntui writes its lock file in place and would overwrite "
            "that file: delete it"
        )
    return fd


def _write_holder(fd: int, holder: str) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, (holder + "\n").encode("utf-8"), 0)


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 4096, 0).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


def release_lock(lock: Lock) -> None:
    lock.release()


def why_nobody(holder: str) -> str:
    """Why nobody can hold the lock, from a holder text ``nobody (<why>)``."""
    return holder.removeprefix(NOBODY).strip().removeprefix("(").removesuffix(")")


def acquire_lock(
    root: Path, *, brief: bool = False, wait_s: float = 0.0
) -> tuple[Lock | None, str]:
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
            return None, f"{NOBODY} ({refused})"
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
                return None, f"{NOBODY} ({path} keeps being deleted or replaced)"
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
        return Lock(root, fd, folder, holder), holder


def _lock_folder(root: Path) -> int | str:
    """The project folder, locked (its descriptor); or who holds it, in words."""
    try:
        folder = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError as error:
        return f"{NOBODY} ({root} cannot be opened: {error.strerror})"
    try:
        fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(folder)
        if error.errno not in _BUSY:
            return -1  # a file system that cannot lock folders: the lock file alone, as before
        return "another trntui session (its lock file was deleted while it writes)"
    return folder
