"""The scalars of a run's event files (``folder.py``) -> the normalized timeline.

Which scalars mean what is read from their tags, by words rather than by one writer's names
(a tag is split into words at ``/``, ``_``, ``-``, spaces and dots):

- a **training loss**: a tag with the word ``loss`` and none of ``eval``, ``val``, ``valid``,
  ``validation``, ``test``, ``scale`` (the tag with the most points: HF's ``train/loss``, NeMo's
  and NxD Training's ``reduced_train_loss``, Megatron's ``lm loss``);
- an **evaluation**: a tag with one of those evaluation words (``eval/loss``, ``val_loss``,
  ``lm loss validation``); its loss (not a perplexity) is the quality metric, else its first
  other metric; ``runtime`` among them is the evaluation's duration;
- **work counted**: ``consumed_samples`` (NeMo, NxD Training) or a samples counter, tokens
  seen (HF's ``train/num_input_tokens_seen``); else the samples per step of a batch-size tag
  (Megatron's ``batch-size``, ``global_batch_size``) or of HF's closing summary
  (``train_samples_per_second`` over ``train_steps_per_second``, when a whole number);
- the log's **own rate**: a tag with ``throughput`` or ``per second`` in it (NxD Training's
  ``throughput``, HF's ``train_tokens_per_second``); it is checked, not used: the rate is the
  work counted over the wall clock;
- HF's **closing summary** (``train/train_runtime`` with ``train_steps_per_second`` or
  ``train_loss``): the run finished its ``train()``; ``train_runtime`` is its duration.

A step row is each step at which training scalars were written (in file order: a step that
goes back is a restart), at the wall time of its first training scalar. Every event carries
its own wall time (seconds since the epoch, UTC), so the clock is the writer's; ``t_s`` counts
from the first file's first event (the writer's creation); ``line`` holds the record's number
counted through the run's files. A run of several files (a job resumed into its log folder)
is one timeline: each later file starts with a checkpoint load row at the step its process
resumed from (``_resume_point``; 0 when its steps start over), carrying the work counted up to
that step, so the steps done again before the crash are the restart's redone work, counted
by the run facts as for every format, and the time between the attempts is in the wall
clock. A first file whose process itself resumed counts its work from its resume step. The
log's own rates are compared with the derived one over the same steps; a gap over
``CHECK_TOLERANCE`` is a note with its figures.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import statistics
from pathlib import Path
from typing import Any

from trntui.core.errors import InputFileError
from trntui.core.timeline import ImportedRun, Kind, RunMetadata, TimeSource
from trntui.importers._base import Steps, rows_timeline
from trntui.importers.tensorboard.events import FILE_VERSION_PREFIX, EventFile, Scalar
from trntui.importers.tensorboard.folder import RunFiles, read_run_files

NAME = "tensorboard"
CHECK_TOLERANCE = 0.03
_EVAL_WORDS = {"eval", "val", "valid", "validation", "test"}
_SPLIT = re.compile(r"[^a-z0-9]+")


def sniff(head: str) -> bool:
    """Every event file starts with an ``Event`` whose ``file_version`` is
    ``brain.Event:<n>``, within its first record."""
    return FILE_VERSION_PREFIX in head[:256]


def words(tag: str) -> set[str]:
    return set(_SPLIT.split(tag.lower())) - {""}


def _is_eval(tag: str) -> bool:
    return bool(words(tag) & _EVAL_WORDS)


def _is_rate(tag: str) -> bool:
    said = words(tag)
    return "throughput" in said or ("per" in said and bool(said & {"second", "sec", "s"}))


def _summary_tags(tags: set[str]) -> dict[str, str]:
    """HF's closing summary tags, by the summary's own key."""
    found = {}
    for tag in tags:
        leaf = tag.rsplit("/", 1)[-1]
        if leaf in ("train_runtime", "train_samples_per_second", "train_steps_per_second",
                    "train_loss"):  # fmt: skip
            found[leaf] = tag
    return found if {"train_steps_per_second", "train_loss"} & found.keys() else {}


def _most(points: dict[str, list[Scalar]], tags: list[str]) -> str | None:
    return max(tags, key=lambda tag: (len(points[tag]), tag), default=None)


def _roles(points: dict[str, list[Scalar]]) -> dict[str, str | None]:
    """Which tag plays which part (module docstring)."""
    tags = set(points)
    summary = _summary_tags(tags)
    bookkeeping = set(summary.values())
    losses = [t for t in tags if "loss" in words(t) and not (words(t) & (_EVAL_WORDS | {"scale"}))
              and t not in bookkeeping]  # fmt: skip
    evals = [t for t in tags if _is_eval(t)]
    eval_losses = [t for t in evals if "loss" in words(t) and "ppl" not in words(t)]
    eval_other = sorted(t for t in evals if not words(t) & {"runtime", "per", "epoch", "ppl"})
    samples = [t for t in tags if {"consumed", "samples"} <= words(t) and not _is_rate(t)]
    tokens = [t for t in tags if "tokens" in words(t) and words(t) & {"seen", "consumed", "num"}
              and not _is_rate(t)]  # fmt: skip
    batch = [t for t in tags if "batch" in words(t) and "size" in words(t)]
    return {
        "loss": _most(points, losses),
        "metric": _most(points, eval_losses) or (eval_other[0] if eval_other else None),
        "eval_runtime": next((t for t in sorted(evals) if "runtime" in words(t)), None),
        "samples": _most(points, samples),
        "tokens": _most(points, tokens),
        "batch": _most(points, batch),
        **{f"summary:{key}": tag for key, tag in summary.items()},
    }


def _step_groups(events: EventFile, skip: set[str]) -> list[list[Scalar]]:
    """Runs of training scalars (tags not in ``skip``) written at one step, in file order."""
    groups: list[list[Scalar]] = []
    for scalar in events.scalars:
        if scalar.tag in skip:
            continue
        if groups and groups[-1][0].step == scalar.step:
            groups[-1].append(scalar)
        else:
            groups.append([scalar])
    return groups


def _whole_ratio(a: float | None, b: float | None) -> int | None:
    if not a or not b:
        return None
    ratio = a / b
    whole = round(ratio)
    return whole if whole >= 1 and abs(ratio - whole) <= 0.0025 * whole else None


def _last(points: dict[str, list[Scalar]], tag: str | None) -> Scalar | None:
    return points[tag][-1] if tag and points.get(tag) else None


def _points(scalars: list[Scalar]) -> dict[str, list[Scalar]]:
    points: dict[str, list[Scalar]] = {}
    for scalar in scalars:
        points.setdefault(scalar.tag, []).append(scalar)
    return points


def _step_rows(
    events: EventFile,
    skip: set[str],
    roles: dict[str, str | None],
    unit: str | None,
    batch: int | None,
    summary_step: Scalar | None,
    start: float,
) -> list[dict[str, Any]]:
    """One file's step rows (module docstring)."""
    rows: list[dict[str, Any]] = []
    for group in _step_groups(events, skip):
        by_tag = {scalar.tag: scalar for scalar in group}
        if (
            summary_step is not None
            and group[0].step == summary_step.step
            and not (
                roles["loss"] in by_tag or roles["samples"] in by_tag or roles["tokens"] in by_tag
            )
        ):
            continue
        first = min(group, key=lambda s: s.wall_time)
        samples = by_tag.get(roles["samples"] or "")
        tokens = by_tag.get(roles["tokens"] or "")
        loss = by_tag.get(roles["loss"] or "")
        if unit == "tokens/s" and tokens is None:
            continue
        if roles["samples"] and samples is None and unit == "samples/s":
            continue
        rows.append({
            "line": first.offset,
            "kind": str(Kind.STEP),
            "t_s": first.wall_time - start,
            "step": first.step,
            "loss": loss.value if loss else None,
            "samples": samples.value if samples else (
                first.step * batch if batch and unit == "samples/s" else None),
            "tokens": tokens.value if tokens else None,
        })  # fmt: skip
    return rows


def import_tensorboard(path: Path, steps: Steps) -> ImportedRun:
    run_files = read_run_files(path, steps)
    files = run_files.files
    events = files[0]
    steps.at(0.5)
    if events.file_version is None or not events.file_version.startswith(FILE_VERSION_PREFIX):
        raise InputFileError(
            str(path),
            "no TensorBoard file version record (is this an events.out.tfevents file?)",
            expected=f"a first record with file_version {FILE_VERSION_PREFIX}2",
        )
    if not events.scalars:
        raise InputFileError(
            str(path),
            "the event file holds no scalars"
            + (
                f" (the reading stopped at byte {events.bytes_read:,})"
                if events.unread_bytes
                else ""
            ),
            expected="scalars written with add_scalar or tf.summary.scalar",
        )
    points = _points([scalar for each in files for scalar in each.scalars])
    roles = _roles(points)
    start = events.first_wall_time or events.scalars[0].wall_time
    eval_tags = {tag for tag in points if _is_eval(tag)}
    summary_tags = {tag for key, tag in roles.items() if key.startswith("summary:") and tag}
    rate_tags = {tag for tag in points if _is_rate(tag)}
    summary_step = _last(points, roles.get("summary:train_runtime"))
    batch = _batch(points, roles)
    unit = "tokens/s" if roles["tokens"] else "samples/s" if roles["samples"] or batch else None
    skip = eval_tags | summary_tags | rate_tags
    rows: list[dict[str, Any]] = []
    base_note = None
    for index, each in enumerate(files):
        file_rows = _step_rows(each, skip, roles, unit, batch, summary_step, start)
        if not file_rows:
            continue
        resume = _resume_point(file_rows, _points(each.scalars), roles)
        if index == 0:
            rows += file_rows
            if resume is not None:
                base_note = _count_from(rows, *resume)
            continue
        start_step = resume[0] if resume else 0
        load: dict[str, Any] = {
            "line": run_files.first_lines[index],  # the file's first record: its start
            "kind": str(Kind.CHECKPOINT_LOAD),
            "t_s": (each.first_wall_time or file_rows[0]["t_s"] + start) - start,
            "step": start_step,
        }
        first_row = file_rows[0]
        for column in ("samples", "tokens"):
            if first_row.get(column) is not None and first_row["step"] > 0:
                load[column] = first_row[column] * start_step / first_row["step"]
        rows += [load, *file_rows]
    rows += _eval_rows(points, roles, start)
    if summary_step is not None:
        rows.append({
            "line": summary_step.offset,
            "kind": str(Kind.RUN_STOP),
            "t_s": summary_step.wall_time - start,
            "step": summary_step.step,
            "duration_s": summary_step.value,
            "status": "success",
        })  # fmt: skip
    rows.sort(key=lambda row: (row["line"], row["kind"] != Kind.STEP))
    steps.at(0.8)
    notes = _checks(rows, points, roles, rate_tags - eval_tags, unit)
    if base_note:
        notes.append(base_note)
    notes += run_files.notes
    for each in files:
        name = "" if len(files) == 1 else f"{Path(each.path).name}: "
        if each.unread_bytes:
            notes.append(
                f"{name}the reading stops at byte {each.bytes_read:,} of {each.size:,}: a record "
                f"there is truncated or fails its CRC; the {each.records:,} records before it "
                "are read (a writer still running or killed leaves such a tail)"
            )
        if each.skipped:
            notes.append(f"{name}{each.skipped} records are no TensorBoard event and were skipped")
    metric = roles["metric"]
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=run_files.sha256,
        time_source=TimeSource.WALL_CLOCK,
        launch_time=dt.datetime.fromtimestamp(start, dt.UTC),
        throughput_unit=unit,
        quality_metric=metric,
        quality_higher_is_better=False if metric and "loss" in words(metric) else None,
        samples_per_step=float(batch) if batch else None,
        facts=_facts(points, roles, run_files),
        protocol={"global_batch_size": str(batch)} if batch else {},
        not_derivable=(
            "the run's plan (an event file states no planned steps: the inventory's is used)",
            "compilation and set-up before the writer was created",
            "checkpoint save time",
            "system size (an event file states none: state it for the run set)",
            "restarts whose event file is in another folder (a resumed job that logs to a new "
            "folder: import that folder's run on its own)",
        ),
        notes=(
            "clock: each scalar's own wall time, counted from the file's first event",
            *notes,
        ),
    )
    steps.at(0.95)
    return ImportedRun(rows_timeline(rows), metadata)


def _batch(points: dict[str, list[Scalar]], roles: dict[str, str | None]) -> int | None:
    """Samples per step: a batch-size tag's value when it never changes, else HF's summary
    samples over steps per second when that is a whole number."""
    tag = roles["batch"]
    if tag:
        values = {scalar.value for scalar in points[tag]}
        if len(values) == 1 and (value := values.pop()) >= 1 and value == int(value):
            return int(value)
    rate = _last(points, roles.get("summary:train_samples_per_second"))
    steps = _last(points, roles.get("summary:train_steps_per_second"))
    return _whole_ratio(rate.value if rate else None, steps.value if steps else None)


def _resume_point(
    rows: list[dict[str, Any]], points: dict[str, list[Scalar]], roles: dict[str, str | None]
) -> tuple[int, str] | None:
    """The step one file's process started at, and how it is known, when past 0: a process
    resumed from a checkpoint writes a file of its own.

    The start is HF's closing summary's own (its steps per second x runtime are the steps of
    that ``train()`` call), else, when the first logged step is past twice the usual logging
    interval, one such interval before the first row (the typical-interval rule of a
    restart)."""
    progress = [row for row in rows if row["kind"] == Kind.STEP]
    if not progress:
        return None
    first, last = progress[0], progress[-1]
    runtime = _last(points, roles.get("summary:train_runtime"))
    per_second = _last(points, roles.get("summary:train_steps_per_second"))
    diffs = [b["step"] - a["step"] for a, b in itertools.pairwise(progress)]
    typical = statistics.median([d for d in diffs if d > 0] or [first["step"]])
    if runtime and per_second:
        start_step = last["step"] - round(per_second.value * runtime.value)
        how = "HF's summary (train_steps_per_second x train_runtime)"
    elif first["step"] > 2 * typical:
        start_step = first["step"] - typical
        how = f"one logging interval ({typical:g} steps) before the first"
    else:
        return None
    return (int(start_step), how) if start_step > 0 else None


def _count_from(rows: list[dict[str, Any]], start_step: int, how: str) -> str:
    """Count work from where the first file's process started, whose counters carry the work
    done before it: the work before its first row at that row's rate per step (a batch a
    step) is taken off every count, and a checkpoint load row marks the start."""
    progress = [row for row in rows if row["kind"] == Kind.STEP]
    first = progress[0]
    for column in ("samples", "tokens"):
        if first.get(column) is None:
            continue
        base = first[column] * start_step / first["step"]
        for row in rows:
            if row.get(column) is not None:
                row[column] -= base
    rows.insert(0, {"line": first["line"], "kind": str(Kind.CHECKPOINT_LOAD), "t_s": 0.0,
                    "step": start_step})  # fmt: skip
    return (
        f"the file starts at step {first['step']}: a process resumed at step {start_step:g} "
        f"(from {how}); the work is counted from there"
    )


def _eval_rows(
    points: dict[str, list[Scalar]], roles: dict[str, str | None], start: float
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    metric = roles["metric"]
    if metric:
        rows += [{"line": s.offset, "kind": str(Kind.EVAL), "t_s": s.wall_time - start,
                  "step": s.step, "metric": s.value} for s in points[metric]]  # fmt: skip
    runtime = roles["eval_runtime"]
    if runtime:
        rows += [{"line": s.offset, "kind": str(Kind.EVAL_STOP), "t_s": s.wall_time - start,
                  "step": s.step, "duration_s": s.value} for s in points[runtime]]  # fmt: skip
    return rows


def _derived_rate(rows: list[dict[str, Any]], first: int, last: int, column: str) -> float | None:
    """Work over wall time between the step rows at steps ``first`` and ``last`` (the first
    row of each, in file order)."""
    at: dict[int, dict[str, Any]] = {}
    for row in rows:
        if row["kind"] == Kind.STEP and row.get(column) is not None:
            at.setdefault(row["step"], row)
    a, b = at.get(first), at.get(last)
    if a is None or b is None or b["t_s"] <= a["t_s"]:
        return None
    return (b[column] - a[column]) / (b["t_s"] - a["t_s"])


def _gap_note(label: str, stated: float, derived: float, how: str) -> str:
    gap = derived / stated - 1.0
    verdict = "agrees" if abs(gap) <= CHECK_TOLERANCE else "differs"
    return (f"{label} {verdict}: {stated:,.6g} stated, {derived:,.6g} from {how} "
            f"({gap:+.1%})")  # fmt: skip


def _checks(
    rows: list[dict[str, Any]],
    points: dict[str, list[Scalar]],
    roles: dict[str, str | None],
    rates: set[str],
    unit: str | None,
) -> list[str]:
    """The log's own rates against the work counted over the wall clock."""
    column = {"tokens/s": "tokens", "samples/s": "samples"}.get(unit or "")
    notes = []
    summary_tags = {tag for key, tag in roles.items() if key.startswith("summary:") and tag}
    for tag in sorted(rates - summary_tags):
        series = points[tag]
        if column is None or len(series) < 4:
            continue
        if tag.rsplit("/", 1)[-1].startswith("train_"):
            # HF's speed metrics: the work of the train() call over the time since it began
            progress = [r for r in rows if r["kind"] == Kind.STEP and r.get(column) is not None]
            loads = [r for r in rows if r["kind"] == Kind.CHECKPOINT_LOAD]
            start = loads[-1]["t_s"] if loads else 0.0
            end = next((r for r in reversed(progress) if r["step"] == series[-1].step), None)
            if end is not None and end["t_s"] > start:
                notes.append(
                    _gap_note(
                        f"the log's own {tag!r} (its last value)",
                        series[-1].value,
                        (end[column] - _work_at_last_load(rows, column)) / (end["t_s"] - start),
                        f"the {column} counted since the file began",
                    )
                )
            continue
        half = series[len(series) // 2 :]
        derived = _derived_rate(rows, half[0].step, half[-1].step, column)
        stated = statistics.median(s.value for s in half)
        if derived and stated:
            notes.append(
                _gap_note(
                    f"the log's own {tag!r} (median of its last {len(half)})",
                    stated,
                    derived,
                    f"the {column} counted over the wall clock",
                )
            )
    runtime = _last(points, roles.get("summary:train_runtime"))
    rate = _last(points, roles.get("summary:train_samples_per_second"))
    steps = [row for row in rows if row["kind"] == Kind.STEP]
    if runtime and rate and steps and column == "samples" and steps[-1].get("samples"):
        notes.append(_gap_note("HF's train_samples_per_second", rate.value,
                               (steps[-1]["samples"] - _work_at_last_load(rows, "samples"))
                               / runtime.value,
                               "the samples counted over train_runtime"))  # fmt: skip
    return notes


def _work_at_last_load(rows: list[dict[str, Any]], column: str) -> float:
    """The work counted when the last process started (0 when no count was carried over)."""
    loads = [row for row in rows if row["kind"] == Kind.CHECKPOINT_LOAD]
    return float(loads[-1].get(column) or 0.0) if loads else 0.0


def _facts(
    points: dict[str, list[Scalar]], roles: dict[str, str | None], run_files: RunFiles
) -> dict[str, str]:
    scalars = [scalar for each in run_files.files for scalar in each.scalars]
    facts = {"tags": str(len(points)), "scalars": str(len(scalars))}
    for role, tag in roles.items():
        if tag:
            facts[f"tag_{role.replace(':', '_')}"] = tag
    facts["steps_logged"] = str(len({scalar.step for scalar in scalars}))
    starts = sum(len(each.session_starts) for each in run_files.files)
    if starts:
        facts["session_starts"] = str(starts)
    if len(run_files.files) > 1:
        facts["event_files"] = str(len(run_files.files))
        facts["event_files_first_lines"] = ", ".join(map(str, run_files.first_lines))
    return facts
