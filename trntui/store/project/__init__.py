"""The project directory, format v2 (``SCHEMA_VERSION``).

Layout (everything but the lock file is meant to be committed)::

    trntui.toml              schema_version + the workload inventory (``project_file``)
    runs/                    imported runs: runs.parquet, timelines/<run_id>.parquet, facts.parquet
    prices/                  the price quotes the project uses
    scenarios/<name>.toml    saved scenario snapshots
    .trntui.lock             who has the project open for writing (git-ignored)

Rules this package enforces:

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

The package, in the order data flows (each module imports only the ones above it):

1. ``project_file``: ``trntui.toml`` read and written (``read_inventory``,
   ``render_project_toml``, ``init_project``) and the errors a project raises.
2. ``lock``: the write lock on ``.trntui.lock`` and the folder (``acquire_lock``), and who
   holds it.
3. ``access``: every store write under the lock (``write_access``, ``writes_project``,
   ``may_store_derived``), found through this process's index of open handles
   (``holds_a_lock``: whether one still holds a lock).
4. ``open_project``: an open project (``Project``): the inventory, the lock it owns, no lost
   update. ``trntui.store.project_store.ProjectStore`` wraps one with what a session derived.

Every public name is re-exported here: import from ``trntui.store.project``.
"""

from __future__ import annotations

from trntui.store.project.access import (
    holds_a_lock,
    may_store_derived,
    write_access,
    writes_project,
)
from trntui.store.project.lock import acquire_lock
from trntui.store.project.open_project import Project
from trntui.store.project.project_file import (
    LOCK_FILE,
    PROJECT_FILE,
    SCHEMA_VERSION,
    ChangedOnDisk,
    LoadedInventory,
    NewerSchemaError,
    NotAProject,
    ProjectLocked,
    ReadOnlyProject,
    init_project,
    project_file,
    read_inventory,
    render_project_toml,
)

__all__ = [
    "LOCK_FILE",
    "PROJECT_FILE",
    "SCHEMA_VERSION",
    "ChangedOnDisk",
    "LoadedInventory",
    "NewerSchemaError",
    "NotAProject",
    "Project",
    "ProjectLocked",
    "ReadOnlyProject",
    "acquire_lock",
    "holds_a_lock",
    "init_project",
    "may_store_derived",
    "project_file",
    "read_inventory",
    "render_project_toml",
    "write_access",
    "writes_project",
]
