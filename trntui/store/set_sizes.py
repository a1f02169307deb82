"""What a person states about run sets, in ``runs/sets.toml``: the system size of a set (whose
logs print none, or print a wrong one), and the scaling family a set belongs to.

A measurement holds for the system it was taken on. Many formats never print that
system (Hugging Face state, plain training logs); the user then states it once per run set,
and it is an assumption everywhere it is used: who stated it and on what basis is kept with
it. A size stated for a set applies to every run of it, overriding what a log states (a log
can be wrong: a helper step that saw no device), and what the log said is shown beside it.
A family name groups sets into one scaling family (``core.scaling``) in place of the automatic
grouping. The file is small hand-readable TOML written atomically;
callers hold the project's write lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError, UserError
from trntui.core.system_size import effective_size, set_size
from trntui.core.text import name_problem
from trntui.core.timeline import RunMetadata, SystemSize
from trntui.store.atomic import atomic_write_text
from trntui.store.paths import project_path
from trntui.store.project import writes_project
from trntui.store.runs import check_set_name, load_runs
from trntui.store.toml_file import (
    check_schema_version,
    check_top_level,
    decode_utf8,
    dump_toml,
    locate,
    parse_toml,
    previous_text,
    updated_toml,
)

SETS_FILE = "sets.toml"
SCHEMA_VERSION = 1
_KEYS = {"name", "nodes", "accelerators_per_node", "accelerator", "stated_by", "source", "family"}
_SIZE_KEYS = ("nodes", "accelerators_per_node", "stated_by", "source")
_MAX_COUNT = 100_000


def sets_path(root: Path) -> Path:
    return project_path(root, "runs", SETS_FILE)


SetEntries = dict[str, tuple[SystemSize | None, str | None]]
"""Run set name -> (the size a person stated for it, the scaling family they put it in)."""


def load_stated_sizes(root: Path) -> dict[str, SystemSize]:
    """Run set name -> the size a person stated for it (empty when none was stated)."""
    return stated_sizes(read_set_entries(root))


def load_family_names(root: Path) -> dict[str, str]:
    """Run set name -> the scaling family a person put it in."""
    return family_names(read_set_entries(root))


def stated_sizes(entries: SetEntries) -> dict[str, SystemSize]:
    return {name: size for name, (size, _) in entries.items() if size is not None}


def family_names(entries: SetEntries) -> dict[str, str]:
    return {name: family for name, (_, family) in entries.items() if family is not None}


def sets_file_state(root: Path) -> tuple[str, int, int, int] | None:
    """The ``sets.toml`` as ``stat`` sees it (a write replaces the file: a new inode and time),
    so a reader can keep what it parsed until the file changes; None when there is none."""
    path = sets_path(root)
    if not path.is_file():
        return None
    stat = path.stat()
    return (str(path), stat.st_ino, stat.st_mtime_ns, stat.st_size)


def read_set_entries(root: Path) -> SetEntries:
    """Everything ``sets.toml`` states, by run set (empty when there is no file)."""
    path = sets_path(root)
    return _parse(path) if path.is_file() else {}


def _parse(path: Path) -> SetEntries:
    text = decode_utf8(path, path.read_bytes())
    document = parse_toml(path, text)
    check_schema_version(path, text, document, SCHEMA_VERSION)
    check_top_level(path, text, document, ("schema_version", "set"))
    entries: SetEntries = {}
    for index, entry in enumerate(document.get("set", [])):
        name, size, family = _entry(path, text, index, entry)
        if name in entries:
            _problem(
                path,
                text,
                index,
                "name",
                f"run set {name!r} is stated twice",
                "one [[set]] per run set name",
            )
        entries[name] = (size, family)
    return entries


def _problem(path: Path, text: str, index: int, key: str, message: str, expected: str) -> None:
    raise InputFileError(
        str(path),
        message,
        line=locate(text, "set", key, index),
        key=f"set[{index}].{key}",
        expected=expected,
    )


def _entry(
    path: Path, text: str, index: int, entry: Any
) -> tuple[str, SystemSize | None, str | None]:
    if not isinstance(entry, dict):
        _problem(path, text, index, "name", "expected a [[set]] table", "a table")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        _problem(path, text, index, unknown[0], "unknown key", ", ".join(sorted(_KEYS)))
    if "name" not in entry:
        _problem(path, text, index, "name", "name is required", "name")
    sized = [key in entry for key in _SIZE_KEYS]
    if any(sized) and not all(sized):
        missing = next(key for key in _SIZE_KEYS if key not in entry)
        _problem(path, text, index, missing, f"{missing} is required with a size", missing)
    for key in ("name", "stated_by", "source", "accelerator", "family"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            _problem(path, text, index, key, f"{key} must be a non-empty text", "a text string")
    for key in ("name", "family"):
        if key in entry and (problem := name_problem(entry[key])) is not None:
            _problem(path, text, index, key, problem, "a name on one line")
    family = entry.get("family")
    if not all(sized):
        return entry["name"], None, family
    for key in ("nodes", "accelerators_per_node"):
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_COUNT:
            _problem(
                path, text, index, key, f"{key} {value!r} is not a count", "a whole number >= 1"
            )
    size = SystemSize(
        nodes=entry["nodes"],
        accelerators_per_node=entry["accelerators_per_node"],
        accelerator=entry.get("accelerator"),
        source=entry["source"].strip(),
        stated_by=entry["stated_by"].strip(),
    )
    return entry["name"], size, family


def check_size(nodes: int, per_node: int) -> None:
    for what, value in (("nodes", nodes), ("accelerators per node", per_node)):
        if not 1 <= value <= _MAX_COUNT:
            raise UserError(f"{what} must be a whole number from 1 to {_MAX_COUNT} (got {value})")


def run_sizes(runs: pl.DataFrame, stated: dict[str, SystemSize]) -> dict[str, SystemSize | None]:
    """Each stored run's size: its log's, completed by its set's stated size
    (``core.system_size.effective_size``). ``runs`` is the runs table."""
    return {
        run_id: effective_size(RunMetadata.from_json(text).system, stated.get(set_name))
        for run_id, set_name, text in runs.select("run_id", "set_name", "metadata_json").iter_rows()
    }


@writes_project
def state_size(root: Path, set_name: str, size: SystemSize | None) -> None:
    """Record (or with ``None`` forget) the size a person states for ``set_name``.

    A person can always state it: a log's size can be wrong (a helper step that saw no
    device), and a stated size overrides it for every run of the set, shown with who stated it
    and what the logs said. Refused only for a set that does not exist or a size that is not
    one (no nodes, no accelerators per node, nobody stating it, no basis)."""
    check_set_name(set_name)
    runs = load_runs(root).filter(pl.col("set_name") == set_name)
    if runs.is_empty():
        raise UserError(f"no run set {set_name!r} in {root} (see `trntui runs`)")
    if size is not None:
        if size.nodes is None or size.accelerators_per_node is None or not size.stated_by:
            raise UserError("a stated size needs nodes, accelerators per node and who states it")
        check_size(size.nodes, size.accelerators_per_node)
        if not size.source.strip():
            raise UserError("say what the stated size is based on (the job script, a ticket...)")
    entries = read_set_entries(root)
    entries[set_name] = (size, entries.get(set_name, (None, None))[1])
    _save(root, entries)


@writes_project
def name_family(root: Path, set_names: list[str], family: str | None) -> None:
    """Put run sets in the scaling family ``family`` (``None``: back to automatic grouping)."""
    if family is not None:
        check_set_name(family.strip(), "scaling family")
    known = set(load_runs(root)["set_name"].to_list())
    for name in set_names:
        if name not in known:
            raise UserError(f"no run set {name!r} in {root} (see `trntui runs`)")
    entries = read_set_entries(root)
    for name in set_names:
        size = entries.get(name, (None, None))[0]
        entries[name] = (size, family.strip() if family else None)
    _save(root, entries)


@writes_project
def rename_set(root: Path, old: str, new: str) -> bool:
    """Carry what a person stated for run set ``old`` (its size, its scaling family) over to
    ``new`` when the whole set is renamed; what ``new`` already had stated is kept. Whether
    anything was carried over."""
    check_set_name(new)
    entries = read_set_entries(root)
    if old not in entries or new in entries:
        return False
    entries[new] = entries.pop(old)
    _save(root, entries)
    return True


def _save(root: Path, entries: dict[str, tuple[SystemSize | None, str | None]]) -> None:
    rows = []
    for name in sorted(entries):
        stated, family = entries[name]
        if stated is None and family is None:
            continue
        entry: dict[str, Any] = {"name": name}
        if stated is not None:
            entry["nodes"] = stated.nodes
            entry["accelerators_per_node"] = stated.accelerators_per_node
            if stated.accelerator:
                entry["accelerator"] = stated.accelerator
            entry["stated_by"] = stated.stated_by
            entry["source"] = stated.source
        if family is not None:
            entry["family"] = family
        rows.append(entry)
    header = (
        "# What people state about run sets: the system size of a set (it overrides its logs)\n"
        "# (an assumption each; `trntui size`) and its scaling family (`trntui family`).\n"
    )
    document = {"schema_version": SCHEMA_VERSION, "set": rows}
    path = sets_path(root)
    fresh = header + dump_toml(document)
    text = updated_toml(previous_text(path), document, fresh, identity={"set": ("name",)})
    atomic_write_text(path, text, root=root)


def set_summaries(root: Path) -> list[tuple[str, str, int]]:
    """Each stored run set as (name, its size in words, how many runs), by name."""
    runs = load_runs(root)
    sizes = run_sizes(runs, load_stated_sizes(root))
    summaries = []
    for (name,), group in runs.sort("set_name").group_by("set_name", maintain_order=True):
        members = group["run_id"].to_list()
        size = set_size([sizes.get(run_id) for run_id in members])
        summaries.append((str(name), size.short_text(), len(members)))
    return summaries
