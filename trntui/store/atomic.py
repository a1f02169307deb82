"""Atomic file replacement.

A reader, or a process killed at any instant, sees either the complete old file or the complete
new one: the bytes go to a temporary file in the same folder (same file system, so the rename is
atomic), are flushed and fsynced, and only then renamed over the target with ``os.replace``. The
folder is fsynced afterwards so the rename itself survives a power cut.

A write the system refuses (a full disk, a file-size limit, a permission) raises
``StorageError`` naming the file, after the temporary file is removed: the old file is whole.
Polars reports an I/O error of its own writer as a ``ComputeError``; the handle given to a
writer records the ``OSError`` underneath, so that case names the file the same way.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from trntui.core.errors import StorageError

_TMP_PREFIX = ".trntui-tmp-"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically."""
    atomic_write_with(path, lambda handle: handle.write(data))


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (newlines kept as given)."""
    atomic_write_bytes(path, text.encode("utf-8"))


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


def atomic_write_with(path: Path, write: Callable[[object], object]) -> None:
    """Replace ``path`` with whatever ``write(handle)`` writes to a binary file handle.

    Useful for writers that want a file object, such as ``polars.DataFrame.write_parquet``.
    An ``OSError`` on the way raises ``StorageError`` naming ``path``; nothing is left behind.
    """
    path = Path(path)
    folder = path.parent
    tmp: Path | None = None
    recorder: _RecordingHandle | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=path.suffix, dir=folder)
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb") as handle:
            recorder = _RecordingHandle(handle)
            write(recorder)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
            else:
                os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as error:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
        if isinstance(error, OSError):
            raise StorageError(str(path), error) from None
        if isinstance(error, Exception) and recorder is not None and recorder.error is not None:
            raise StorageError(str(path), recorder.error) from None
        raise
    fsync_folder(folder)


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
    """Delete temporary files a killed writer left behind in ``folder`` and below."""
    removed = []
    for leftover in Path(folder).rglob(f"{_TMP_PREFIX}*"):
        with contextlib.suppress(OSError):
            leftover.unlink()
            removed.append(leftover)
    return removed
