"""neuronx-distributed training logs (the Llama/GPT examples' ``logger.py``).

Step lines: ``LOG {time.asctime()} - ({epoch}, {step}) step_loss : X learning_rate : X
throughput : X seq/s`` (throughput is the example's moving average over 10 steps; clock
resolution is one second). Neuron compiler lines, when present, give compile intervals:
``<YYYY-mm-dd HH:MM:SS.ffffff>: <pid> INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: ...``
then ``Compiler status PASS`` (``FAIL``; a line without its own timestamp takes the next
stamped line's time, an upper bound). Times are the host's local time; the log carries no time zone.

The run's own plan and protocol come from what the example scripts print before training: the
``Namespace(...)`` of their arguments (``max_steps``, ``steps_this_run``, ``seq_len``,
``batch_size`` = the micro batch per worker) and the launcher's echo lines (``GBS=``,
``SEQ_LEN=``). The system size comes from torchrun's ``--nnodes`` x ``--nproc_per_node``,
which on Neuron counts logical NeuronCores, not chips.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from trntui.core.compile_telemetry import parse_asctime
from trntui.core.errors import InputFileError
from trntui.core.scalars import moment_or_none
from trntui.core.timeline import ImportedRun, Kind, RunMetadata, SystemSize, TimeSource, conform
from trntui.importers._base import Steps, no_events_error, read_lines, read_source
from trntui.importers.launch import context_lines, launcher_size, torchrun_arguments_size

NAME = "nxd"
NEURON_CORE = "NeuronCore (logical)"
_FACT_ARGS = (
    "batch_size",
    "grad_accum_usteps",
    "max_steps",
    "steps_this_run",
    "seq_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "GBS",
    "MBS",
)
_STEP = (
    r"^LOG (\w{3} \w{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}) - \((\d+), (\d+)\) "
    r"step_loss : (\S+) learning_rate : (\S+) throughput : (\S+) seq/s"
)
_SNIFF = re.compile(r"(?m)^LOG \w{3} \w{3} +\d{1,2} [\d:]{8} \d{4} - \(\d+, \d+\) step_loss")
_EXPECTED = "'LOG <asctime> - (epoch, step) step_loss : X learning_rate : X throughput : X seq/s'"
_COMPILER_TIME = r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)"


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def _candidates(lines: pl.DataFrame) -> pl.DataFrame:
    """Lines that look like step lines (parsed, or refused when malformed)."""
    return lines.filter(
        pl.col("text").str.starts_with("LOG ")
        & (
            pl.col("text").str.contains("step_loss", literal=True)
            | pl.col("text").str.contains(" - (", literal=True)
        )
    )


def _step_rows(lines: pl.DataFrame, path: str, ends_with_newline: bool) -> pl.DataFrame:
    """The step lines, parsed. A malformed one is refused with its line, except the file's
    last line when the file does not end with a line break: a job killed while writing it.
    That line is left out (``cut_off_last_line`` says so)."""
    candidates = _candidates(lines)
    groups = pl.col("text").str.extract_groups(_STEP)
    parsed = candidates.select(
        "line",
        groups.struct.field("1").alias("raw_time"),
        groups.struct.field("2").cast(pl.Int64, strict=False).alias("epoch"),
        groups.struct.field("3").cast(pl.Int64, strict=False).alias("step"),
        groups.struct.field("4").cast(pl.Float64, strict=False).alias("loss"),
        groups.struct.field("6").cast(pl.Float64, strict=False).alias("throughput"),
    ).with_columns(parse_asctime(pl.col("raw_time")).alias("wall"))
    broken = parsed.filter(
        pl.col("wall").is_null() | pl.col("step").is_null() | pl.col("throughput").is_null()
    )
    last = lines["line"].max() if lines.height else None
    if not ends_with_newline and broken.height == 1 and broken["line"][0] == last:
        parsed = parsed.filter(pl.col("line") != last)
        broken = broken.clear()
    if not broken.is_empty():
        raise InputFileError(
            path,
            "step line is incomplete or malformed (truncated?)",
            line=int(broken["line"][0]),
            expected=_EXPECTED,
        )
    return parsed.drop("raw_time").with_columns(pl.lit(str(Kind.STEP)).alias("kind"))


def _compile_rows(lines: pl.DataFrame) -> pl.DataFrame:
    text = pl.col("text")
    small = lines.filter(
        text.str.contains("||NEURON_CC_WRAPPER||", literal=True)
        | text.str.contains("Compiler status", literal=True)
    )
    kind = (
        pl.when(text.str.contains("Call compiler with cmd", literal=True))
        .then(pl.lit(str(Kind.COMPILE_START)))
        .when(text.str.contains(r"Compiler status (PASS|FAIL)"))
        .then(pl.lit(str(Kind.COMPILE_STOP)))
        .when(text.str.contains("Failed compilation", literal=True))
        .then(pl.lit(str(Kind.ERROR)))
    )
    return small.select(
        "line",
        kind.alias("kind"),
        text.str.extract(_COMPILER_TIME, 1)
        .str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S%.f", strict=False)
        .alias("wall"),
        text.str.extract(r"Compiler status (PASS|FAIL)", 1).alias("status"),
    ).filter(pl.col("kind").is_not_null())


_NAMESPACE = re.compile(r"Namespace\((.*)\)\s*$")
_PAIR = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\[[^\]]*\]|[^,]*)")
_ECHO = re.compile(r"^\s*(?:\+\s*)?(?:export\s+)?(GBS|MBS|SEQ_LEN|TOTAL_STEPS)=(\d+)\s*$")


def _arguments(lines: pl.DataFrame) -> dict[str, str]:
    """The script's arguments: its ``Namespace(...)`` print (parsed by key: the order depends
    on the Python version) and the launcher's ``GBS=``/``SEQ_LEN=`` echo lines."""
    found: dict[str, str] = {}
    head = lines.head(5_000)
    for (text,) in (
        head.filter(pl.col("text").str.contains("Namespace(", literal=True))
        .select("text")
        .iter_rows()
    ):
        match = _NAMESPACE.search(text)
        if match:
            for key, value in _PAIR.findall(match.group(1)):
                found.setdefault(key, value.strip().strip("'\""))
            break
    for (text,) in (
        head.filter(pl.col("text").str.contains("=", literal=True)).select("text").iter_rows()
    ):
        match = _ECHO.match(text)
        if match:
            found.setdefault(match.group(1), match.group(2))
    return found


def _whole_arg(args: dict[str, str], *names: str) -> int | None:
    for name in names:
        value = args.get(name, "")
        if value.lstrip("-").isdigit() and int(value) > 0:
            return int(value)
    return None


def _distributed_size(lines: pl.DataFrame, path: str) -> SystemSize | None:
    """torchrun's ``--nnodes`` x ``--nproc_per_node`` (the launch line, or the script's echo of
    ``DISTRIBUTED_ARGS``). On Neuron a process runs per logical NeuronCore, not per chip."""
    head = lines.head(5_000)
    size = launcher_size(context_lines(head), path, accelerator=NEURON_CORE)
    if size is not None:
        return size
    echoed = head.filter(pl.col("text").str.contains("--nproc[_-]per[_-]node"))
    if echoed.is_empty():
        return None
    line, text = echoed.row(0)
    return torchrun_arguments_size(line, text, path, accelerator=NEURON_CORE)


def import_nxd(path: Path, steps: Steps) -> ImportedRun:
    source = read_source(path)
    lines = read_lines(source)
    steps.at(0.3)
    ends_with_newline = source.data.endswith((b"\n", b"\r"))
    step_rows = _step_rows(lines, source.name, ends_with_newline)
    cut_off = not ends_with_newline and step_rows.height < _candidates(lines).height
    if step_rows.is_empty():
        raise no_events_error(source, "neuronx-distributed 'LOG ... step_loss'", _EXPECTED)
    events = pl.concat([step_rows, _compile_rows(lines)], how="diagonal_relaxed").sort("line")
    steps.at(0.7)
    start = moment_or_none(events["wall"].min())
    # A compiler line without its own timestamp finished before the next stamped line.
    filled = pl.col("wall").backward_fill().forward_fill()
    events = events.with_columns(((filled - start).dt.total_microseconds() / 1e6).alias("t_s"))
    compiles = int((events["kind"] == Kind.COMPILE_START).sum())
    args = _arguments(lines)
    protocol = {}
    batch = _whole_arg(args, "GBS")
    if batch is not None:
        protocol["global_batch_size"] = str(batch)
    if (length := _whole_arg(args, "seq_len", "SEQ_LEN")) is not None:
        protocol["sequence_length"] = str(length)
    facts = {key: value for key, value in args.items() if key in _FACT_ARGS}
    if compiles:
        facts["compiler_invocations"] = str(compiles)
    metadata = RunMetadata(
        format=NAME,
        source=str(path),
        sha256=source.sha256,
        time_source=TimeSource.WALL_CLOCK,
        launch_time=start,
        throughput_unit="samples/s",
        facts=facts,
        planned_steps=_whole_arg(args, "steps_this_run", "max_steps", "TOTAL_STEPS"),
        samples_per_step=float(batch) if batch is not None else None,
        system=_distributed_size(lines, source.name),
        protocol=protocol,
        not_derivable=(
            "samples per step unless the launcher echoes GBS (the example's own throughput is "
            "in sequences per second)",
            "checkpoint save time",
            "validation quality (the example logs training loss only)",
        ),
        notes=(
            "timestamps have one-second resolution and are the host's local time",
            "throughput is the example's moving average over 10 steps",
            *(
                (
                    f"the last line ({lines.height}) is cut off: the log ends without a line "
                    "break, as when the job is killed while writing; it is left out",
                )
                if cut_off
                else ()
            ),
        ),
    )
    steps.at(0.95)
    return ImportedRun(conform(events), metadata)
