"""Quality results measured outside a run's log, kept in ``runs/quality.toml``.

Some training logs never evaluate (the neuronx-distributed examples print training loss only);
the team then evaluates the final checkpoint separately. Such a result is recorded here with
its source, so the run can count as a verified result without inventing an evaluation event in
its timeline. The file is small, hand-readable TOML, written atomically; the caller holds the
project's write lock.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from trntui.core.errors import InputFileError, UserError
from trntui.core.run_facts import RecordedQuality
from trntui.store.atomic import atomic_write_text
from trntui.store.paths import is_valid, project_path
from trntui.store.project import writes_project
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

QUALITY_FILE = "quality.toml"
SCHEMA_VERSION = 1
_KEYS = {"run_id", "value", "source", "evaluation_minutes"}


def quality_path(root: Path) -> Path:
    return project_path(root, "runs", QUALITY_FILE)


def load_recorded_quality(root: Path) -> dict[str, RecordedQuality]:
    """run_id -> recorded result (empty when nothing was recorded)."""
    path = quality_path(root)
    if not path.is_file():
        return {}
    text = decode_utf8(path, path.read_bytes())
    document = parse_toml(path, text)
    check_schema_version(path, text, document, SCHEMA_VERSION)
    check_top_level(path, text, document, ("schema_version", "result"))
    results: dict[str, RecordedQuality] = {}
    for index, entry in enumerate(document.get("result", [])):
        run_id = _text(path, text, index, entry, "run_id")
        if not is_valid("run id", run_id) or run_id in results:
            raise InputFileError(
                str(path),
                f"run_id {run_id!r} "
                + ("is recorded twice" if run_id in results else "is not a run id"),
                line=locate(text, "result", "run_id", index),
                key=f"result[{index}].run_id",
                expected="one [[result]] per run id, 16 hex digits as `trntui runs` lists them",
            )
        results[run_id] = _entry(path, text, index, entry)
    return results


def _entry(path: Path, text: str, index: int, entry: dict[str, Any]) -> RecordedQuality:
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise InputFileError(
            str(path),
            "unknown key",
            line=locate(text, "result", unknown[0], index),
            key=f"result[{index}].{unknown[0]}",
            expected=", ".join(sorted(_KEYS)),
        )
    value = entry.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputFileError(
            str(path),
            f"quality value {value!r} is not a number",
            line=locate(text, "result", "value", index),
            key=f"result[{index}].value",
            expected="the measured metric as a number",
        )
    minutes = entry.get("evaluation_minutes")
    if minutes is not None and (
        isinstance(minutes, bool)
        or not isinstance(minutes, int | float)
        or not math.isfinite(minutes)
        or minutes < 0
    ):
        raise InputFileError(
            str(path),
            f"evaluation_minutes {minutes!r} is not a duration",
            line=locate(text, "result", "evaluation_minutes", index),
            key=f"result[{index}].evaluation_minutes",
            expected="minutes, 0 or more",
        )
    return RecordedQuality(
        value=float(value),
        source=_text(path, text, index, entry, "source"),
        evaluation_s=None if minutes is None else float(minutes) * 60.0,
    )


def _text(path: Path, text: str, index: int, entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputFileError(
            str(path),
            f"{key} must be a non-empty text",
            line=locate(text, "result", key, index),
            key=f"result[{index}].{key}",
            expected="a text string",
        )
    return value


@writes_project
def record_quality(root: Path, run_id: str, result: RecordedQuality | None) -> None:
    """Set (or with ``None`` remove) the recorded result of ``run_id``; a value or duration
    that is not a finite number is refused (``UserError``) before anything is written."""
    if result is not None and not (
        math.isfinite(result.value)
        and (
            result.evaluation_s is None
            or (math.isfinite(result.evaluation_s) and result.evaluation_s >= 0)
        )
    ):
        raise UserError(
            f"not recorded: the quality value and the evaluation time must be finite numbers "
            f"(the evaluation 0 or more), got {result.value!r} and {result.evaluation_s!r} s"
        )
    results = load_recorded_quality(root)
    if result is None:
        results.pop(run_id, None)
    else:
        results[run_id] = result
    entries = []
    for key in sorted(results):
        recorded = results[key]
        entry: dict[str, Any] = {"run_id": key, "value": recorded.value, "source": recorded.source}
        if recorded.evaluation_s is not None:
            entry["evaluation_minutes"] = recorded.evaluation_s / 60.0
        entries.append(entry)
    header = (
        "# Quality results measured outside the run logs (e.g. an evaluation of the final\n"
        "# checkpoint), one [[result]] per run id; see `trntui quality`.\n"
    )
    document = {"schema_version": SCHEMA_VERSION, "result": entries}
    path = quality_path(root)
    fresh = header + dump_toml(document)
    text = updated_toml(previous_text(path), document, fresh, identity={"result": ("run_id",)})
    atomic_write_text(path, text, root=root)
