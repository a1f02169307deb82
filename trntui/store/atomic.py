"""Atomic file replacement, and the only way trntui creates or deletes files in a project.

A reader, or a process killed at any instant, sees either the complete old file or the complete
new one: the bytes go to a temporary file in the same folder (same file system, so the rename is
atomic), are flushed and fsynced, and only then renamed over the target with ``os.replace``. The
folder is fsynced afterwards so the rename itself survives a power cut.

Symbolic links are never followed for what trntui writes: a target that is a link (or not a
regular file) is refused with ``UnsafePath``, and so, when the project ``root`` is given, is any
folder between the root and the file that is a link, dangling or not. The walk from the root
holds each folder open (``O_DIRECTORY | O_NOFOLLOW``) and the temporary file, the rename and a
deletion are done relative to that open folder, so a link swapped in meanwhile cannot redirect
them outside the project.

A write the system refuses (a full disk, a file-size limit, a permission) raises
``StorageError`` naming the file, after the temporary file is removed: the old file is whole.
Polars reports an I/O error of its own writer as a ``ComputeError``; the handle given to a
writer records the ``OSError`` underneath, so that case names the file the same way.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, cast

from trntui.core.errors import StorageError, UserError

_TMP_PREFIX = ".trntui-tmp-"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafePath(UserError):
    """A file or folder trntui would write through is a symbolic link or not a plain file."""


def _link_refusal(path: Path, what: str) -> UnsafePath:
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return UnsafePath(
        f"{path} is a symbolic link{target}; trntui keeps a project's {what} inside the project "
        f"and does not follow links: replace the link by a real {what}"
    )


def check_part(root: Path, part: str) -> None:
    if part in ("", ".", "..") or "/" in part or "\0" in part:
        raise UnsafePath(f"{part!r} is not a usable name for a file in {root}")


def open_folder(root: Path, parts: tuple[str, ...], *, create: bool) -> int | None:
    """An open descriptor of ``root/<parts...>``, never through a symbolic link below ``root``.

    Missing folders are made when ``create``; otherwise ``None`` says one is missing. A link
    (dangling or not) or a file in the way raises ``UnsafePath`` naming it. ``root`` itself is
    the user's choice and may be reached through links.
    """
    root = Path(root)
    try:
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        if not create:
            return None
        raise UserError(f"{root}: no such folder") from None
    except OSError as error:
        raise UserError(f"{root} cannot be opened ({error.strerror})") from None
    here = root
    try:
        for part in parts:
            check_part(root, part)
            here = here / part
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = _open_existing_folder(fd, part, here)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise UserError(f"{here} cannot be opened ({error.strerror})") from None
                child = _open_existing_folder(fd, part, here)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_existing_folder(parent: int, part: str, here: Path) -> int:
    try:
        return os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=parent)
    except OSError as error:
        try:
            info = os.lstat(part, dir_fd=parent)
        except OSError:
            raise UserError(f"{here} cannot be opened ({error.strerror})") from None
        if stat.S_ISLNK(info.st_mode):
            raise _link_refusal(here, "folder") from None
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafePath(f"{here} is in the way: trntui needs a folder there") from None
        raise UserError(f"{here} cannot be opened ({error.strerror})") from None


def check_inside(root: Path, path: Path) -> None:
    """Refuse ``path`` (below ``root``) when it or a folder on the way is a symbolic link, or
    when it is there but is neither a regular file nor a folder (a FIFO, a device).

    For reading: a project's files are read only from inside the project, as they are written.
    """
    root = Path(root)
    relative = _relative(root, path)
    here = root
    for part in relative.parts:
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return
        except OSError:
            return  # the reader reports what is wrong with it
        if stat.S_ISLNK(info.st_mode):
            raise _link_refusal(here, "folder" if here != Path(path) else "file")
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            # A FIFO or device put in place of a project file would block its reader forever.
            raise UnsafePath(f"{here} is not a regular file or folder; trntui will not read it")


def _relative(root: Path, path: Path) -> Path:
    try:
        return Path(path).relative_to(Path(root))
    except ValueError:
        raise UnsafePath(f"{path} is outside the project {root}") from None


@contextlib.contextmanager
def _target_folder(path: Path, root: Path | None) -> Iterator[int]:
    if root is None:
        folder = path.parent
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    else:
        parts = _relative(root, path).parts
        if not parts:
            raise UnsafePath(f"{path} is the project folder itself, not a file in it")
        opened = open_folder(root, parts[:-1], create=True)
        assert opened is not None  # created when missing
        fd = opened
    try:
        yield fd
    finally:
        os.close(fd)


def _check_target(fd: int, path: Path) -> int | None:
    """The mode bits of an existing regular file at ``path`` (None when absent)."""
    try:
        info = os.lstat(path.name, dir_fd=fd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise _link_refusal(path, "file")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{path} is not a regular file; trntui will not write over it")
    return info.st_mode & 0o777


def atomic_write_bytes(path: Path, data: bytes, *, root: Path | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (``root``: the project it must stay in)."""
    atomic_write_with(path, lambda handle: handle.write(data), root=root)


def atomic_write_text(path: Path, text: str, *, root: Path | None = None) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (newlines kept as given).

    Text holding a lone surrogate (bytes that were not UTF-8, passed on from a terminal) cannot
    be stored: refused with ``UserError`` before anything on disk changes.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = text[max(0, error.start - 20) : error.end].encode("utf-8", "backslashreplace")
        raise UserError(
            f"{path} was not written: it would hold characters that are not valid text "
            f"(from bytes that are not UTF-8) near {bad.decode('ascii', 'replace')!r}; "
            "the file is unchanged"
        ) from None
    atomic_write_bytes(path, data, root=root)


class _RecordingHandle:
    """A binary file handle that remembers the ``OSError`` a write raised (a writer such as
    Polars wraps it into an error of its own)."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        try:
            return self._handle.write(data)
        except OSError as error:
            self.error = error
            raise

    def flush(self) -> None:
        try:
            self._handle.flush()
        except OSError as error:
            self.error = error
            raise

    def __getattr__(self, name: str) -> object:
        if name == "fileno":  # writers that find a descriptor bypass write(): keep them on it
            raise AttributeError(name)
        return getattr(self._handle, name)


def atomic_write_with(
    path: Path, write: Callable[[BinaryIO], object], *, root: Path | None = None
) -> None:
    """Replace ``path`` with whatever ``write(handle)`` writes to a binary file handle.

    Useful for writers that want a file object, such as ``polars.DataFrame.write_parquet``.
    ``root``: the project folder; no folder between it and ``path`` may be a symbolic link.
    An ``OSError`` on the way raises ``StorageError`` naming ``path``; nothing is left behind.
    """
    path = Path(path)
    recorder: _RecordingHandle | None = None
    try:
        with _target_folder(path, root) as folder:
            mode = _check_target(folder, path)
            tmp_name, fd = _create_temp(folder, path.suffix)
            try:
                with os.fdopen(fd, "wb") as handle:
                    recorder = _RecordingHandle(handle)
                    # the recorder is the handle to a writer: write and flush recorded, the
                    # rest passed through (__getattr__)
                    write(cast(BinaryIO, recorder))
                    handle.flush()
                    os.fchmod(handle.fileno(), 0o644 if mode is None else mode)
                    os.fsync(handle.fileno())
                _check_target(folder, path)  # a link put there meanwhile is refused, not replaced
                os.replace(tmp_name, path.name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp_name, dir_fd=folder)
                raise
            with contextlib.suppress(OSError):
                os.fsync(folder)
    except UserError:
        raise
    except OSError as error:
        raise StorageError(str(path), error) from None
    except Exception:
        if recorder is not None and recorder.error is not None:
            raise StorageError(str(path), recorder.error) from None
        raise


def _create_temp(folder: int, suffix: str) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    while True:
        name = f"{_TMP_PREFIX}{secrets.token_hex(6)}{suffix}"
        try:
            return name, os.open(name, flags, 0o600, dir_fd=folder)
        except FileExistsError:
            continue


def remove_file(path: Path, *, root: Path) -> bool:
    """Delete ``path`` inside the project ``root`` without following a link on the way.

    A missing file (or folder) is not an error; returns whether something was deleted. A link
    at ``path`` itself is removed as a link (its target is not touched).
    """
    path = Path(path)
    parts = _relative(root, path).parts
    if not parts:
        raise UnsafePath(f"{path} is the project folder itself, not a file in it")
    folder = open_folder(root, parts[:-1], create=False)
    if folder is None:
        return False
    try:
        info = os.lstat(path.name, dir_fd=folder)
        if stat.S_ISDIR(info.st_mode):
            raise UnsafePath(f"{path} is a folder; trntui only deletes files it wrote")
        os.unlink(path.name, dir_fd=folder)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(folder)


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entry table so a completed rename is durable (no-op where unsupported)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete temporary files a killed writer left behind in ``folder`` and below.

    Folders reached through a symbolic link are not entered: what is outside is not ours.
    """
    removed = []
    for here, folders, files in os.walk(folder, followlinks=False):
        folders[:] = [name for name in folders if not os.path.islink(os.path.join(here, name))]
        for name in files:
            if not name.startswith(_TMP_PREFIX):
                continue
            leftover = Path(here) / name
            with contextlib.suppress(OSError):
                leftover.unlink()
                removed.append(leftover)
    return removed
