"""Megatron-LM training logs (``megatron/training/training.py``).

Lines read (everything else is ignored):

* iteration lines, every ``--log-interval`` iterations, with or without the
  ``[YYYY-mm-dd HH:MM:SS(.ffffff)]`` prefix newer releases print: iteration/planned, consumed
  samples, elapsed time per iteration (ms) averaged over the interval, learning rate, global
  batch size, ``lm loss``;
* ``saving checkpoint at iteration N`` / ``successfully saved checkpoint from iteration N`` and
  the ``save-checkpoint ...: (min, max)`` timer (ms) that follows a save;
* ``successfully loaded checkpoint from ... at iteration N`` (a resume);
* ``validation loss at iteration N ... | lm loss value: X |`` (the quality check);
* ``time to initialize megatron (seconds): X`` and ``[label] datetime: YYYY-mm-dd HH:MM:SS``
  markers (``before the start of training step``, ``after training is done``);
* the arguments dump (``seq_length ..... 4096``) for tokens per sample.

Without timestamps the clock is rebuilt: each interval lasts elapsed-per-iteration x the
iterations it covers, plus stated init and checkpoint-save durations (``TimeSource.REBUILT``).
Parsing is vectorized. The usual log (every iteration line has its fields where the first one
has them) takes a fast path: Polars' CSV reader splits the file on ``|`` in parallel and each
value is the text after its field name. Any other log is read by the general parser, which
finds fields by name and names the line it cannot read; both give the same result, which the
tests check on generated and randomly damaged logs.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.timeline import (
    ImportedRun,
    Kind,
    RunMetadata,
    SystemSize,
    TimeSource,
    conform,
    with_interval_steps,
)
from trntui.importers._base import SourceFile, Steps, no_events_error, read_lines, read_source
from trntui.importers.launch import context_lines, first_size, launcher_size

NAME = "megatron"
_ITERATION_START = r"iteration\s+\d+\s*/"
_ITERATION_HEAD = r"iteration\s+(\d+)\s*/\s*(\d+)"
_TIMESTAMP = r"^\s*\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\]"
_ELAPSED = "elapsed time per iteration (ms):"
_MAX_FIELDS = 24
_FIELDS = {
    "consumed samples": "samples",
    "elapsed time per iteration (ms)": "step_ms",
    "global batch size": "batch",
    "lm loss": "loss",
}
_SNIFF = re.compile(r"iteration\s+\d+\s*/\s*\d+\s*\|\s*consumed (?:samples|tokens):")
_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S%.f"
_NUMBER = r"([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf))"
_EXPECTED_ITERATION = (
    "' iteration N/ TOTAL | consumed samples: N | elapsed time per iteration (ms): X | ... |'"
)


_COUNTS = (
    pl.col("it").str.strip_chars().cast(pl.Int64, strict=False).alias("step"),
    pl.col("of").str.strip_chars().cast(pl.Int64, strict=False).alias("planned"),
)
"""Iteration and planned iterations from the ``it`` / ``of`` halves of ``N/ TOTAL``."""


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def _float(pattern: str) -> pl.Expr:
    return pl.col("text").str.extract(pattern, 1).cast(pl.Float64, strict=False)


def _int(pattern: str) -> pl.Expr:
    return pl.col("text").str.extract(pattern, 1).cast(pl.Int64, strict=False)


def _timestamp(pattern: str) -> pl.Expr:
    return (
        pl.col("text")
        .str.extract(pattern, 1)
        .str.strptime(pl.Datetime("us"), _TIMESTAMP_FORMAT, strict=False)
    )


def _iterations(lines: pl.DataFrame, path: str) -> pl.DataFrame:
    """Parse iteration lines; a line that starts like one but is incomplete is an error."""
    text = pl.col("text")
    not_validation = ~text.str.contains("validation loss", literal=True)
    complete = text.str.contains(_ELAPSED, literal=True)
    broken = (
        lines.filter(text.str.contains("iteration", literal=True) & ~complete & not_validation)
        .filter(text.str.contains(_ITERATION_START))
        .head(1)
    )
    if not broken.is_empty():
        raise InputFileError(
            path,
            "iteration line is incomplete or malformed (truncated?)",
            line=int(broken["line"][0]),
            expected=_EXPECTED_ITERATION,
        )
    # Validation lines ("validation loss at iteration N | lm loss value: ...") carry no elapsed
    # time, so every line that does is an iteration line.
    iterations = lines.filter(complete)
    if iterations.is_empty():
        return iterations
    parsed, laid_out = _split_fields(iterations)
    # A line is re-read by name when a field the first line has is not readable where it was.
    required = dict.fromkeys(["step", "samples", "step_ms", *laid_out])
    misfits = parsed.filter(pl.any_horizontal(pl.col(name).is_null() for name in required))
    if not misfits.is_empty():
        # Lines whose fields are not where the first line had them: read them by name.
        fixed = _extract_fields(iterations.join(misfits.select("line"), on="line", how="semi"))
        parsed = pl.concat(
            [parsed.join(misfits.select("line"), on="line", how="anti"), fixed]
        ).sort("line")
    return _checked(parsed, path)


def _checked(parsed: pl.DataFrame, path: str) -> pl.DataFrame:
    """Refuse unreadable or impossible iteration values; add step time and throughput."""
    unreadable = parsed.filter(
        pl.any_horizontal(pl.col(name).is_null() for name in ("step", "samples", "step_ms"))
    )
    if not unreadable.is_empty():
        raise InputFileError(
            path,
            "iteration line lacks the iteration number, consumed samples or elapsed time",
            line=int(unreadable["line"][0]),
            expected=_EXPECTED_ITERATION,
        )
    nonsense = parsed.filter(
        ~pl.col("step_ms").is_finite()
        | (pl.col("step_ms") < 0)
        | ~pl.col("samples").is_finite()
        | (pl.col("batch").is_not_null() & ~pl.col("batch").is_finite())
    )
    if not nonsense.is_empty():
        raise InputFileError(
            path,
            "iteration line holds a number that is not finite or is negative",
            line=int(nonsense["line"][0]),
            expected="finite, non-negative elapsed time, consumed samples and batch size",
        )
    # One chunk: Polars may divide a one-row chunk differently in the last bit, and both
    # parsers must give the same numbers.
    return (
        parsed.rechunk()
        .with_columns(
            pl.lit(str(Kind.STEP)).alias("kind"),
            (pl.col("step_ms") / 1000.0).alias("step_time_s"),
        )
        .with_columns(
            pl.when(pl.col("step_time_s") > 0)
            .then(pl.col("batch") / pl.col("step_time_s"))
            .alias("throughput")
        )
    )


def _layout(data: bytes) -> dict[str, tuple[int, str]] | None:
    """Where the first iteration line has each field: column -> (index after ``|``, name)."""
    at = data.find(_ELAPSED.encode())
    if at < 0:
        return None
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    line = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")
    fields = line.split("|")
    if not re.search(_ITERATION_START, fields[0]):
        return None
    where = _field_positions(fields)
    return where if {"samples", "step_ms"} <= where.keys() else None


def _field_positions(fields: list[str]) -> dict[str, tuple[int, str]]:
    """Column -> (index, printed name) of each known field among an iteration line's pieces
    (split on ``|``; piece 0 is the head). The first occurrence of a name wins."""
    where: dict[str, tuple[int, str]] = {}
    for index, value in enumerate(fields[1:], start=1):
        name = value.split(":", 1)[0].strip()
        if name in _FIELDS and _FIELDS[name] not in where:
            where[_FIELDS[name]] = (index, name)
    return where


def _fast_split(
    source: SourceFile, lines: pl.DataFrame, path: str
) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Fast path for the usual log: every iteration line has the fields where the first has.

    Polars' CSV reader splits the whole file on ``|`` in parallel, keeping only the head and
    the wanted fields; each value is then the text after its name. Returns the parsed iteration
    rows and the other lines, or ``None`` when any iteration line differs from that layout or
    the split disagrees with the line reader, so that the general parser (which reads fields
    by name and names a bad line) decides instead: the result is the same either way.
    """
    layout = _layout(source.data)
    if layout is None:
        return None
    wanted = sorted(index for index, _ in layout.values())
    try:
        split = pl.read_csv(
            source.data,
            has_header=False,
            separator="|",
            quote_char=None,
            schema={f"column_{i + 1}": pl.String for i in range(wanted[-1] + 1)},
            columns=[0, *wanted],
            truncate_ragged_lines=True,
            missing_columns="insert",
            extra_columns="ignore",
            comment_prefix=None,
        )
    except (pl.exceptions.ComputeError, pl.exceptions.SchemaError):
        return None
    if split.height != lines.height:
        return None
    head = pl.col("column_1")
    index, name = layout["step_ms"]
    is_iteration = split.select(
        pl.col(f"column_{index + 1}").str.starts_with(f" {name}:").fill_null(False)
    ).to_series()
    # One lazy query: Polars computes the columns in parallel, sharing the splits of the head.
    halves = head.str.split_exact("iteration", 1)
    counts = halves.struct.field("field_1").str.split_exact("/", 1)
    stamp = halves.struct.field("field_0").str.strip_chars(" []")
    columns = [
        pl.col("line").cast(pl.Int64),
        stamp.alias("stamp"),
        counts.struct.field("field_0").str.strip_chars().cast(pl.Int64, strict=False).alias("step"),
        counts.struct.field("field_1")
        .str.strip_chars()
        .cast(pl.Int64, strict=False)
        .alias("planned"),
    ]
    for column in _FIELDS.values():
        if column not in layout:
            columns.append(pl.lit(None, pl.Float64).alias(column))
            continue
        index, name = layout[column]
        columns.append(
            pl.col(f"column_{index + 1}")
            .str.strip_prefix(f" {name}:")
            .str.strip_chars()
            .cast(pl.Float64, strict=False)
            .alias(column)
        )
    wall = stamp.str.to_datetime(
        "%Y-%m-%d %H:%M:%S.%6f", time_unit="us", strict=False, cache=False
    ).alias("wall")
    parsed = (
        split.lazy()
        .with_row_index("line", offset=1)
        .filter(is_iteration)
        .select(*columns, wall)
        .collect()
    )
    # Every field of every iteration line must read as a number here; else the general parser
    # reads the file (it reads fields by name, or names the line it cannot read).
    misfit = pl.any_horizontal(pl.col(name).is_null() for name in ("step", *layout))
    if parsed.is_empty() or parsed.select(misfit.any()).item():
        return None
    rest = lines.filter(~is_iteration)
    text = pl.col("text")
    # Lines the general parser would read as (or refuse as) iteration lines: let it decide.
    unusual = rest.filter(
        text.str.contains(_ELAPSED, literal=True)
        | (
            text.str.contains("iteration", literal=True)
            & ~text.str.contains("validation loss", literal=True)
            & text.str.contains(_ITERATION_START)
        )
    )
    if not unusual.is_empty():
        return None
    return _checked(_fix_stamps(parsed), path), rest


def _head(column: pl.Expr) -> list[pl.Expr]:
    """Timestamp, iteration and planned iterations from the part before the first ``|``."""
    return [
        column.str.extract(_TIMESTAMP, 1)
        .str.strptime(pl.Datetime("us"), _TIMESTAMP_FORMAT, strict=False)
        .alias("wall"),
        column.str.extract(_ITERATION_HEAD, 1).cast(pl.Int64, strict=False).alias("step"),
        column.str.extract(_ITERATION_HEAD, 2).cast(pl.Int64, strict=False).alias("planned"),
    ]


def _fix_stamps(parsed: pl.DataFrame) -> pl.DataFrame:
    """Parse the timestamps the fast path could not (no or fewer fraction digits)."""
    odd = pl.col("wall").is_null() & (pl.col("stamp").str.len_bytes() > 0)
    if parsed.select(odd.any()).item():
        parsed = parsed.with_columns(
            pl.when(odd)
            .then(pl.col("stamp").str.strptime(pl.Datetime("us"), _TIMESTAMP_FORMAT, strict=False))
            .otherwise(pl.col("wall"))
            .alias("wall")
        )
    return parsed.drop("stamp")


def _split_fields(iterations: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Split on `` | `` and read each field at the position the first line has it.

    Megatron prints the same fields in the same order on every line of a run, so one literal
    split replaces a regex pass per field; a line where a field is not at that position gets
    null there and is re-read by name (``_extract_fields``). Also returns the fields the first
    line has.
    """
    positions = _field_positions(iterations["text"][0].split(" | "))
    where = {column: (f"field_{index}", name) for column, (index, name) in positions.items()}
    last = max((index for index, _ in positions.values()), default=1)
    # Each split is materialized once (an eager select does not share sub-expressions).
    parts = iterations.select(
        "line", pl.col("text").str.split_exact(" | ", last).alias("f")
    ).unnest("f")
    head = parts.select(
        pl.col("field_0")
        .str.split_exact("iteration", 1)
        .struct.rename_fields(["stamp", "counts"])
        .alias("h")
    ).unnest("h")
    counts = head.select(
        pl.col("counts").str.split_exact("/", 1).struct.rename_fields(["it", "of"]).alias("c")
    ).unnest("c")
    parts = pl.concat(
        [parts, head.select(pl.col("stamp").str.strip_chars(" []")), counts], how="horizontal"
    )
    # Megatron prints six fraction digits: that fixed format is the fast path; other stamps are
    # re-read by ``_fix_stamps``.
    columns = [
        pl.col("line"),
        pl.col("stamp"),
        pl.col("stamp")
        .str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S.%6f", strict=False)
        .alias("wall"),
        *_COUNTS,
    ]
    for column in _FIELDS.values():
        if column not in where:
            columns.append(pl.lit(None, pl.Float64).alias(column))
            continue
        field, name = where[column]
        value = pl.col(field)
        if field == f"field_{last}":
            value = value.str.split_exact(" | ", 1).struct.field("field_0")
        columns.append(
            value.str.strip_prefix(name + ":")
            .str.strip_chars(" |")
            .cast(pl.Float64, strict=False)
            .alias(column)
        )
    return _fix_stamps(parts.select(columns)), list(where)


def _extract_fields(iterations: pl.DataFrame) -> pl.DataFrame:
    """Slow path: find each field by its name with a regex."""
    return iterations.select(
        "line",
        *_head(pl.col("text")),
        _float(r"consumed samples:\s*(\d+)").alias("samples"),
        _float(r"elapsed time per iteration \(ms\):\s*" + _NUMBER).alias("step_ms"),
        _float(r"global batch size:\s*(\d+)").alias("batch"),
        _float(r"lm loss:\s*" + _NUMBER).alias("loss"),
    )


def _other_events(lines: pl.DataFrame) -> pl.DataFrame:
    text = pl.col("text")
    keep = (
        text.str.contains("checkpoint", literal=True)
        | text.str.contains("validation loss", literal=True)
        | text.str.contains("time to initialize megatron", literal=True)
        | text.str.contains("] datetime:", literal=True)
        | text.str.contains("save-checkpoint", literal=True)
    )
    small = lines.filter(keep)
    marker = text.str.extract(r"\[([^\]]+)\] datetime:", 1)
    kind = (
        pl.when(text.str.contains(r"saving checkpoint at iteration\s+\d+"))
        .then(pl.lit(str(Kind.CHECKPOINT_START)))
        .when(text.str.contains(r"successfully saved checkpoint from iteration\s+\d+"))
        .then(pl.lit(str(Kind.CHECKPOINT_STOP)))
        .when(text.str.contains(r"successfully loaded checkpoint from .* at iteration\s+\d+"))
        .then(pl.lit(str(Kind.CHECKPOINT_LOAD)))
        .when(text.str.contains(r"validation loss at iteration\s+\d+"))
        .then(pl.lit(str(Kind.EVAL)))
        .when(text.str.contains(r"time to initialize megatron \(seconds\):"))
        .then(pl.lit(str(Kind.INIT_STOP)))
        .when(marker == "before the start of training step")
        .then(pl.lit(str(Kind.RUN_START)))
        .when(marker == "after training is done")
        .then(pl.lit(str(Kind.RUN_STOP)))
        .when(text.str.contains(r"save-checkpoint\s*\.*\s*:"))
        .then(pl.lit("save_timer"))
        .when(marker.is_not_null())
        .then(pl.lit("marker"))
    )
    return small.select(
        "line",
        kind.alias("kind"),
        _timestamp(r"\] datetime:\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)").alias("wall"),
        _int(r"iteration\s+(\d+)").alias("step"),
        pl.col("text").str.extract(r"\|\s*([\w ]+?) value:", 1).alias("metric_name"),
        _float(r"value:\s*" + _NUMBER).alias("metric"),
        pl.coalesce(
            _float(r"time to initialize megatron \(seconds\):\s*" + _NUMBER),
            _float(r"save-checkpoint\s*\.*\s*:\s*\(\s*[0-9.]+\s*,\s*([0-9.]+)\s*\)") / 1000.0,
        ).alias("duration_s"),
    ).filter(pl.col("kind").is_not_null())


def _attach_save_timers(events: pl.DataFrame) -> pl.DataFrame:
    """Move each ``save-checkpoint`` timer onto the checkpoint_stop it follows."""
    timers = events.filter(pl.col("kind") == "save_timer").select(
        pl.col("line").alias("timer_line"), pl.col("duration_s").alias("timer_s")
    )
    events = events.filter(pl.col("kind") != "save_timer").sort("line")
    if timers.is_empty():
        return events
    stops = events.filter(pl.col("kind") == Kind.CHECKPOINT_STOP).select("line")
    matched = stops.join_asof(
        timers.sort("timer_line"), left_on="line", right_on="timer_line", strategy="forward"
    )
    return events.join(matched.select("line", "timer_s"), on="line", how="left").with_columns(
        pl.coalesce("duration_s", "timer_s").alias("duration_s")
    )


_ARG_NAMES = (
    "seq_length",
    "train_iters",
    "world_size",
    "global_batch_size",
    "micro_batch_size",
    "data_parallel_size",
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
)
"""Whole-number arguments of the dump (``  name ...... value``, rank 0 prints it once)."""


def _args(lines: pl.DataFrame) -> dict[str, float]:
    head = lines.filter(pl.col("text").str.contains(" ...", literal=True)).head(20_000)
    values = head.select(
        _float(rf"^[>\s]*{name}\s*\.+\s*(\d+)\s*$").drop_nulls().first().alias(name)
        for name in _ARG_NAMES
    ).row(0, named=True)
    found = {key: value for key, value in values.items() if value is not None}
    if "world_size" not in found:
        # Older releases print only "using world size: 8, data-parallel size: 8, ...".
        world = lines.head(20_000).select(_float(r"using world size:\s*(\d+)").drop_nulls().first())
        if world.item() is not None:
            found["world_size"] = float(world.item())
    return found


def _system(lines: pl.DataFrame, args: dict[str, float], path: str) -> SystemSize | None:
    """The launcher's nodes x processes per node, else the world size the arguments state
    (one process per accelerator, Megatron's rule)."""
    world = args.get("world_size")
    stated = (
        SystemSize(None, None, None, f"{Path(path).name}: world_size {int(world)}", int(world))
        if world
        else None
    )
    launched = launcher_size(context_lines(lines.head(20_000)), path)
    if launched is not None and world and launched.accelerators not in (None, int(world)):
        return stated  # the launcher line is another job's (or misread): trust the framework
    return first_size(launched, stated)


def _protocol(
    args: dict[str, float], batch: float | None, metric_name: str | None
) -> dict[str, str]:
    protocol = {}
    global_batch = args.get("global_batch_size", batch)
    if global_batch:
        protocol["global_batch_size"] = str(int(global_batch))
    if args.get("seq_length"):
        protocol["sequence_length"] = str(int(args["seq_length"]))
    if metric_name:
        protocol["quality_metric"] = f"validation {metric_name}"
    return protocol


def _clock(events: pl.DataFrame) -> tuple[pl.DataFrame, TimeSource]:
    """Give every event ``t_s`` from the wall clock, or a rebuilt one when there is none.

    The wall clock is used when iteration lines carry timestamps (datetime markers alone are
    too sparse to time the training intervals).
    """
    stamped_steps = events.filter((pl.col("kind") == Kind.STEP) & pl.col("wall").is_not_null())
    if not stamped_steps.is_empty():
        # init_stop is stamped by the next datetime marker; init_start lies its duration before.
        wall = (
            pl.when(pl.col("kind") == Kind.INIT_STOP)
            .then(pl.col("wall").backward_fill())
            .otherwise(pl.col("wall"))
        )
        events = events.with_columns(wall.alias("wall"))
        events = events.with_columns(
            pl.when(pl.col("kind") == Kind.INIT_START)
            .then(
                pl.col("wall").shift(-1)
                - pl.duration(microseconds=(pl.col("duration_s").shift(-1) * 1e6).cast(pl.Int64))
            )
            .otherwise(pl.col("wall"))
            .alias("wall")
        )
        # An untimed event happened after the last stamped line (a stop, by its stated duration).
        filled = pl.col("wall").forward_fill().backward_fill()
        stop_offset = (
            pl.when(pl.col("wall").is_null() & (pl.col("kind") == Kind.CHECKPOINT_STOP))
            .then(pl.col("duration_s").fill_null(0.0))
            .otherwise(0.0)
        )
        start = events.select(pl.col("wall").min()).item()
        events = events.with_columns(
            ((filled - start).dt.total_microseconds() / 1e6 + stop_offset).alias("t_s")
        )
        return events, TimeSource.WALL_CLOCK
    contribution = (
        pl.when(pl.col("kind") == Kind.STEP)
        .then(pl.col("step_time_s") * pl.col("interval_steps"))
        .when(pl.col("kind").is_in([Kind.INIT_STOP, Kind.CHECKPOINT_STOP]))
        .then(pl.col("duration_s"))
        .otherwise(0.0)
        .fill_null(0.0)
    )
    return events.with_columns(contribution.cum_sum().alias("t_s")), TimeSource.REBUILT


def import_megatron(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    lines = read_lines(source)
    steps.at(0.2)
    fast = _fast_split(source, lines, source.name)
    iterations, rest = fast if fast is not None else (_iterations(lines, source.name), lines)
    steps.at(0.5)
    if iterations.is_empty():
        raise no_events_error(source, "Megatron-LM iteration", _EXPECTED_ITERATION)
    others = _attach_save_timers(_other_events(rest))
    args = _args(rest)
    steps.at(0.6)

    init_starts = others.filter(pl.col("kind") == Kind.INIT_STOP).with_columns(
        pl.lit(str(Kind.INIT_START)).alias("kind"), (pl.col("line") - 0.5).alias("order")
    )
    events = pl.concat(
        [
            iterations.with_columns(pl.col("line").cast(pl.Float64).alias("order")),
            others.with_columns(pl.col("line").cast(pl.Float64).alias("order")),
            init_starts,
        ],
        how="diagonal_relaxed",
    ).sort("order")
    progress = with_interval_steps(
        events.filter(pl.col("kind").is_in([Kind.STEP, Kind.CHECKPOINT_LOAD])).select(
            "order", "kind", "step"
        )
    )
    events = events.join(progress.select("order", "interval_steps"), on="order", how="left")
    events, time_source = _clock(events)
    steps.at(0.8)

    planned = iterations["planned"].max()
    planned_steps = int(args.get("train_iters", planned)) if planned is not None else None
    seq_length = args.get("seq_length")
    batch = iterations["batch"].drop_nulls()
    samples_per_step = float(batch[0]) if batch.len() else None
    if seq_length is not None:
        events = events.with_columns((pl.col("samples") * seq_length).alias("tokens"))
    if planned_steps is not None and not (events["kind"] == Kind.RUN_STOP).any():
        last = events.filter(pl.col("kind") == Kind.STEP).tail(1)
        if last["step"][0] >= planned_steps:
            events = pl.concat(
                [
                    events,
                    last.with_columns(
                        pl.lit(str(Kind.RUN_STOP)).alias("kind"),
                        pl.col("order") + 0.25,
                    ),
                ],
                how="diagonal_relaxed",
            ).sort("order")
    # "after training is done" is also printed after an early exit (--exit-interval, time
    # limit): only reaching the planned iterations is a success.
    last_step = events.filter(pl.col("kind") == Kind.STEP)["step"][-1]
    finished = planned_steps is None or last_step >= planned_steps
    events = events.with_columns(
        pl.when(pl.col("kind") == Kind.RUN_STOP)
        .then(pl.lit("success" if finished else "stopped_before_planned_iterations"))
        .alias("status"),
        pl.col("line").cast(pl.Int64),
    )
    metric_names = events["metric_name"].drop_nulls() if "metric_name" in events.columns else None
    metric_name = metric_names[0] if metric_names is not None and metric_names.len() else None
    first_wall = events["wall"].min()

    notes = []
    if time_source is TimeSource.REBUILT:
        notes.append(
            "no timestamps: time rebuilt from elapsed time per iteration x iterations per "
            "interval plus stated init and checkpoint-save durations; downtime before a restart "
            "is not in the log and is missing from the total"
        )
    else:
        notes.append("timestamps are the training host's local time (no time zone in the log)")
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=time_source,
        launch_time=first_wall,
        throughput_unit="samples/s",
        quality_metric=f"validation {metric_name}" if metric_name else None,
        quality_higher_is_better=False if metric_name else None,
        samples_per_step=samples_per_step,
        tokens_per_step=samples_per_step * seq_length
        if samples_per_step is not None and seq_length is not None
        else None,
        planned_steps=planned_steps,
        facts={k: str(int(v)) for k, v in args.items()},
        notes=tuple(notes),
        system=_system(rest, args, source.name),
        protocol=_protocol(args, samples_per_step, metric_name),
    )
    steps.at(0.95)
    return ImportedRun(conform(events.filter(pl.col("kind") != "marker")), metadata)
