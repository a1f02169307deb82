"""``trntui.toml``: the schema version and the workload inventory, read (a newer schema
refused, a malformed file named with its line and key) and written (``init_project``), and
the errors a project raises.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trntui.core.errors import InputFileError, UserError
from trntui.core.format import plural
from trntui.core.inventory import Inventory, InventoryInvalid, ProjectInfo
from trntui.store.atomic import atomic_write_text
from trntui.store.toml_file import decode_utf8, dump_toml, locate, parse_toml, updated_toml

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
    """``trntui.toml`` as read (``read_inventory``): the inventory, the SHA-256 of the file's bytes
    (a save refuses a file changed since) and the file's ``schema_version``."""

    inventory: Inventory
    digest: str
    version: int = SCHEMA_VERSION


def project_file(root: Path) -> Path:
    return Path(root) / PROJECT_FILE


def render_project_toml(inventory: Inventory, previous: str | None = None) -> str:
    """The file's text: ``schema_version`` first, then the sections in their fixed order; with
    the file's ``previous`` text, that text changed only where a value did (comments kept)."""
    document = {"schema_version": SCHEMA_VERSION, **inventory.to_dict()}
    header = (
        f"# trntui project file (format v{SCHEMA_VERSION}): the workload inventory.\n"
        "# Edit here or in the app (`trntui <this folder>`); keys are documented in the README.\n"
    )
    return updated_toml(previous, document, header + dump_toml(document), identity=_IDENTITY)


_IDENTITY: dict[str, tuple[str, ...]] = {"targets": ("name",), "risks": ("title",)}
"""What tells the items of each list apart (a target's name is unique in an inventory)."""


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
    assert isinstance(version, int)  # _inventory_from_document refuses any other
    return LoadedInventory(inventory, file_digest(data), version)


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
        problem = first.message + (f" (and {plural(more, 'more problem')})" if more else "")
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


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
