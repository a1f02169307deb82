"""System sizes stated by a person for run sets whose logs do not print one, in
``runs/sets.toml``.

A measurement holds for the system it was taken on (SPEC §2). Many formats never print that
system (Hugging Face state, plain training logs); the user then states it once per run set,
and it is an assumption everywhere it is used: who stated it and on what basis is kept with
it. A size stated for a set fills in only the runs whose logs state none; a log's own size is
never overwritten. The file is small hand-readable TOML written atomically; callers hold the
project's write lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError, UserError
from trntui.core.system_size import effective_size, is_complete
from trntui.core.timeline import RunMetadata, SystemSize
from trntui.store.atomic import atomic_write_text
from trntui.store.project import writes_project
from trntui.store.runs import load_runs
from trntui.store.toml_file import decode_utf8, dump_toml, locate, parse_toml

SETS_FILE = "sets.toml"
SCHEMA_VERSION = 1
_KEYS = {"name", "nodes", "accelerators_per_node", "accelerator", "stated_by", "source"}
_REQUIRED = ("name", "nodes", "accelerators_per_node", "stated_by", "source")
_MAX_COUNT = 100_000


def sets_path(root: Path) -> Path:
    return Path(root) / "runs" / SETS_FILE


def load_stated_sizes(root: Path) -> dict[str, SystemSize]:
    """Run set name -> the size a person stated for it (empty when none was stated)."""
    path = sets_path(root)
    if not path.is_file():
        return {}
    text = decode_utf8(path, path.read_bytes())
    document = parse_toml(path, text)
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputFileError(
            str(path),
            f"unsupported schema_version {version!r}",
            line=locate(text, "", "schema_version"),
            expected=f"schema_version = {SCHEMA_VERSION}",
        )
    sizes: dict[str, SystemSize] = {}
    for index, entry in enumerate(document.get("set", [])):
        name, size = _entry(path, text, index, entry)
        sizes[name] = size
    return sizes


def _problem(path: Path, text: str, index: int, key: str, message: str, expected: str) -> None:
    raise InputFileError(
        str(path),
        message,
        line=locate(text, "set", key, index),
        key=f"set[{index}].{key}",
        expected=expected,
    )


def _entry(path: Path, text: str, index: int, entry: Any) -> tuple[str, SystemSize]:
    if not isinstance(entry, dict):
        _problem(path, text, index, "name", "expected a [[set]] table", "a table")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        _problem(path, text, index, unknown[0], "unknown key", ", ".join(sorted(_KEYS)))
    for key in _REQUIRED:
        if key not in entry:
            _problem(path, text, index, key, f"{key} is required", key)
    for key in ("name", "stated_by", "source", "accelerator"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            _problem(path, text, index, key, f"{key} must be a non-empty text", "a text string")
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
    return entry["name"], size


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

    Refused for a set that does not exist, or whose logs all state a complete size (a stated
    size would never be used)."""
    if not set_name.strip():
        raise UserError("a run set needs a name")
    runs = load_runs(root).filter(pl.col("set_name") == set_name)
    if runs.is_empty():
        raise UserError(f"no run set {set_name!r} in {root} (see `trntui runs`)")
    logged = [RunMetadata.from_json(text).system for text in runs["metadata_json"]]
    if size is not None and all(is_complete(s) for s in logged):
        raise UserError(
            f"the logs of run set {set_name!r} state their size ({logged[0].text()}); "
            "a stated size would not be used"
        )
    if size is not None:
        for partial in logged:
            if partial is not None and effective_size(partial, size) is partial:
                raise UserError(
                    f"the logs of run set {set_name!r} state {partial.text()}; the stated "
                    f"{size.text()} contradicts them"
                )
    sizes = load_stated_sizes(root)
    if size is None:
        sizes.pop(set_name, None)
    else:
        if size.nodes is None or size.accelerators_per_node is None or not size.stated_by:
            raise UserError("a stated size needs nodes, accelerators per node and who states it")
        check_size(size.nodes, size.accelerators_per_node)
        if not size.source.strip():
            raise UserError("say what the stated size is based on (the job script, a ticket...)")
        sizes[set_name] = size
    entries = []
    for name in sorted(sizes):
        stated = sizes[name]
        entry: dict[str, Any] = {
            "name": name,
            "nodes": stated.nodes,
            "accelerators_per_node": stated.accelerators_per_node,
        }
        if stated.accelerator:
            entry["accelerator"] = stated.accelerator
        entry["stated_by"] = stated.stated_by
        entry["source"] = stated.source
        entries.append(entry)
    header = (
        "# System sizes stated for run sets whose logs print none (an assumption each), one\n"
        "# [[set]] per run set; see `trntui size`.\n"
    )
    document = {"schema_version": SCHEMA_VERSION, "set": entries}
    atomic_write_text(sets_path(root), header + dump_toml(document))
