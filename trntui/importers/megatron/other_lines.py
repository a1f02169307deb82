"""The other lines read: checkpoint saves and loads with their timers, evaluations, init and
``datetime`` markers, the arguments dump, and the system size they give.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from trntui.core.timeline import Kind, SystemSize
from trntui.importers.launch import context_lines, first_size, launcher_size
from trntui.importers.megatron.patterns import NUMBER, float_expr, int_expr, timestamp_expr


def other_events(lines: pl.DataFrame) -> pl.DataFrame:
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
        timestamp_expr(r"\] datetime:\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)").alias(
            "wall"
        ),
        int_expr(r"iteration\s+(\d+)").alias("step"),
        pl.col("text").str.extract(r"\|\s*([\w ]+?) value:", 1).alias("metric_name"),
        float_expr(r"value:\s*" + NUMBER).alias("metric"),
        pl.coalesce(
            float_expr(r"time to initialize megatron \(seconds\):\s*" + NUMBER),
            float_expr(r"save-checkpoint\s*\.*\s*:\s*\(\s*[0-9.]+\s*,\s*([0-9.]+)\s*\)") / 1000.0,
        ).alias("duration_s"),
    ).filter(pl.col("kind").is_not_null())


def attach_save_timers(events: pl.DataFrame) -> pl.DataFrame:
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


def arguments_of(lines: pl.DataFrame) -> dict[str, float]:
    head = lines.filter(pl.col("text").str.contains(" ...", literal=True)).head(20_000)
    values = head.select(
        float_expr(rf"^[>\s]*{name}\s*\.+\s*(\d+)\s*$").drop_nulls().first().alias(name)
        for name in _ARG_NAMES
    ).row(0, named=True)
    found = {key: value for key, value in values.items() if value is not None}
    if "world_size" not in found:
        # Older releases print only "using world size: 8, data-parallel size: 8, ...".
        world = lines.head(20_000).select(
            float_expr(r"using world size:\s*(\d+)").drop_nulls().first()
        )
        if world.item() is not None:
            found["world_size"] = float(world.item())
    return found


def system_of(lines: pl.DataFrame, args: dict[str, float], path: str) -> SystemSize | None:
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


def protocol_of(
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
