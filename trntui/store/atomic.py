"""Atomic file replacement.

A reader, or a process killed at any instant, sees either the complete old file or the complete
new one: the bytes go to a temporary file in the same folder (same file system, so the rename is
atomic), are flushed and fsynced, and only then renamed over the target with ``os.replace``. The
folder is fsynced afterwards so the rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

_TMP_PREFIX = ".trntui-tmp-"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically."""
    atomic_write_with(path, lambda handle: handle.write(data))


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (newlines kept as given)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_with(path: Path, write: Callable[[object], object]) -> None:
    """Replace ``path`` with whatever ``write(handle)`` writes to a binary file handle.

    Useful for writers that want a file object, such as ``polars.DataFrame.write_parquet``.
    """
    path = Path(path)
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=path.suffix, dir=folder)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
            else:
                os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
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
