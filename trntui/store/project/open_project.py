"""An open project (``Project``): the inventory plus, unless read-only, the write lock, which
the handle owns (``access`` indexes the open handles so that a store writer finds it); a save
that finds ``trntui.toml`` changed by someone else is refused, not merged.
"""

from __future__ import annotations

import weakref
from pathlib import Path

from trntui.core.inventory import Inventory
from trntui.store.atomic import atomic_write_bytes, remove_stale_temp_files
from trntui.store.project.access import close_handle, open_handle
from trntui.store.project.lock import (
    BRIEF_WAIT_S,
    NOBODY,
    Lock,
    acquire_lock,
    release_lock,
    why_nobody,
)
from trntui.store.project.project_file import (
    PROJECT_FILE,
    SCHEMA_VERSION,
    ChangedOnDisk,
    LoadedInventory,
    ProjectLocked,
    ReadOnlyProject,
    file_digest,
    project_file,
    read_inventory,
    render_project_toml,
)


class Project:
    """An open project directory: the inventory plus, unless read-only, the write lock.

    Use as a context manager, or call ``close`` to release the lock.
    """

    def __init__(self, root: Path, loaded: LoadedInventory, lock: Lock | None, holder: str):
        self.root = Path(root)
        self.inventory = loaded.inventory
        self._digest = loaded.digest
        self._version = loaded.version
        self._lock = lock
        self.holder = holder
        """Who holds the write lock: this session's text when writable, the other one's if not."""
        self._release: weakref.finalize | None = None
        if lock is not None:
            # Released exactly once: by ``close`` or, for a dropped Project, by the collector.
            self._release = weakref.finalize(self, release_lock, lock)
        # Indexed under the path resolved now (a later chdir cannot change the key); a dropped
        # Project leaves the index by itself.
        self._key = self.root.resolve()
        open_handle(self._key, self)

    @classmethod
    def open(cls, root: Path, *, allow_read_only: bool = False, read_only: bool = False) -> Project:
        """Open ``root``; with the lock taken by someone else, read-only or ``ProjectLocked``.

        ``read_only=True`` never takes the lock (for looking without blocking a colleague).
        """
        root = Path(root)
        loaded = read_inventory(root)
        if read_only:
            return cls(root, loaded, None, "")
        lock, holder = acquire_lock(root, wait_s=BRIEF_WAIT_S)
        if lock is None and not allow_read_only:
            if holder.startswith(NOBODY):
                raise ReadOnlyProject(f"{root} cannot be written: {why_nobody(holder)}")
            raise ProjectLocked(root, holder)
        if lock is not None:
            try:
                remove_stale_temp_files(root)
            except BaseException:
                release_lock(lock)
                raise
        return cls(root, loaded, lock, holder)

    def take_lock(self) -> bool:
        """Try again to take the write lock of a session that opened read-only because another
        held it (a CLI write that was under way, a colleague who has since closed): True when
        this session can write now. One opened read-only on request stays so."""
        if self._lock is not None:
            return True
        if not self.holder:
            return False
        lock, holder = acquire_lock(self.root, wait_s=BRIEF_WAIT_S)
        self.holder = holder
        if lock is None:
            return False
        try:
            remove_stale_temp_files(self.root)
        except BaseException:
            release_lock(lock)
            raise
        self._release = weakref.finalize(self, release_lock, lock)
        self._lock = lock  # no longer only looking: the index finds this handle's lock now
        open_handle(self._key, self)
        return True

    @property
    def read_only(self) -> bool:
        return self._lock is None

    @property
    def held_lock(self) -> Lock | None:
        """The write lock this handle holds (None when read-only or closed)."""
        return self._lock

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
        if self.holder.startswith(NOBODY):
            return why_nobody(self.holder)
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
        if file_digest(current) != self._digest:
            raise ChangedOnDisk(
                f"{self.path} was changed outside this session since it was opened; "
                "your edit was not saved (reload to see the file's content, then edit again)"
            )
        # The file as it is keeps its comments and layout; one in an older format is
        # written anew (its header names the format).
        previous = current.decode("utf-8") if current and self._version == SCHEMA_VERSION else None
        text = render_project_toml(inventory, previous)
        data = text.encode("utf-8")
        if self._version < SCHEMA_VERSION and current:
            # The first save in the new format keeps the old file, for an older trntui.
            atomic_write_bytes(
                self.path.with_name(f"{PROJECT_FILE}.v{self._version}.bak"), current, root=self.root
            )
        atomic_write_bytes(self.path, data, root=self.root)
        self.inventory = inventory
        self._digest = file_digest(data)
        self._version = SCHEMA_VERSION

    def reload(self) -> Inventory:
        """Read the file again (after a hand edit); raises like ``open`` on a bad file."""
        loaded = read_inventory(self.root)
        self.inventory = loaded.inventory
        self._digest = loaded.digest
        self._version = loaded.version
        return self.inventory

    def close(self) -> None:
        close_handle(self._key, self)
        if self._release is not None:
            self._release()
            self._release = None
        self._lock = None

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
