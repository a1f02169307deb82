"""The normalized run timeline every importer produces.

One row per event a log tells us about, in one Polars schema whatever the source format, so that
run facts, storage and the UI never look at a log format again. A fact the log does not give is
null, never 0: a null ``t_s`` means "this format has no wall clock here", not "at launch".

Columns (see ``TIMELINE_SCHEMA``):

``t_s``          seconds since the log's first timestamp (null where the format has no clock)
``kind``         what happened, one of ``Kind`` (an interval is a ``*_start`` / ``*_stop`` pair)
``step``         optimizer step / iteration counter as the log prints it
``epoch``        epoch number where the log gives one
``samples``      cumulative samples consumed at this event
``tokens``       cumulative tokens consumed at this event
``step_time_s``  the log's own seconds per step for the interval ending here
``throughput``   the log's own throughput (unit in ``RunMetadata.throughput_unit``)
``loss``         training loss
``metric``       quality metric of an ``eval`` row (name in ``RunMetadata.quality_metric``)
``duration_s``   length of the interval this event closes, when the log states it
``status``       end state on ``run_stop`` rows (``success``, ``aborted``, ...)
``line``         1-based line number in the source file (for tracing a figure to its origin)
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.safe_json import parse_json
from trntui.core.scalars import number


class Kind(StrEnum):
    """Event kinds of the ``kind`` column."""

    INIT_START = "init_start"
    INIT_STOP = "init_stop"
    COMPILE_START = "compile_start"
    COMPILE_STOP = "compile_stop"
    RUN_START = "run_start"
    RUN_STOP = "run_stop"
    BLOCK_START = "block_start"
    BLOCK_STOP = "block_stop"
    EPOCH_START = "epoch_start"
    EPOCH_STOP = "epoch_stop"
    STEP = "step"
    EVAL_START = "eval_start"
    EVAL_STOP = "eval_stop"
    EVAL = "eval"
    CHECKPOINT_START = "checkpoint_start"
    CHECKPOINT_STOP = "checkpoint_stop"
    CHECKPOINT_LOAD = "checkpoint_load"
    ERROR = "error"


KIND_DTYPE = pl.Enum([str(kind) for kind in Kind])
"""``kind`` is an enum: run facts filter on it constantly, and integer compares are cheap."""

TIMELINE_SCHEMA = pl.Schema(
    {  # type: ignore[arg-type]  # dtype classes and an instance: mypy joins to object
        "t_s": pl.Float64,
        "kind": KIND_DTYPE,
        "step": pl.Int64,
        "epoch": pl.Int64,
        "samples": pl.Float64,
        "tokens": pl.Float64,
        "step_time_s": pl.Float64,
        "throughput": pl.Float64,
        "loss": pl.Float64,
        "metric": pl.Float64,
        "duration_s": pl.Float64,
        "status": pl.String,
        "line": pl.Int64,
    }
)


class TimeSource(StrEnum):
    """Where ``t_s`` comes from."""

    WALL_CLOCK = "wall_clock"
    """Timestamps printed in the log."""
    REBUILT = "rebuilt_from_step_times"
    """No timestamps: the clock is the running sum of the log's own durations (step time x
    iterations per interval, plus stated init and checkpoint durations); time the log does not
    account for, such as the downtime before a restart, is missing from it."""
    NONE = "none"
    """No per-event clock at all; ``t_s`` is null everywhere."""


@dataclass(frozen=True)
class SystemSize:
    """The system a run measured: nodes x accelerators per node (a measurement holds
    for the system it was taken on). Unknown parts are ``None``; ``total`` is known on its own
    when a log states only the world size (Megatron's ``using world size: N``)."""

    nodes: int | None
    accelerators_per_node: int | None
    accelerator: str | None
    source: str
    """Where it was read (``systems/<system>.json``, ``:::SYSJSON`` line N, the launcher line
    N), or who stated it."""
    total_stated: int | None = None
    """Accelerators in all, when stated without the split into nodes."""
    stated_by: str | None = None
    """Who stated the size, when a person did (an assumption, not a reading of a log)."""
    conflicts: tuple[str, ...] = ()
    """Other readings of the same log or submission that disagree with this one (``8 x 1
    No devices were found = 8 (result_0.txt line 6 (:::SYSJSON))``): shown, never averaged."""
    overrides: str | None = None
    """What the logs said, when a person's statement replaces it (``1 x 1 = 1 (...)``)."""

    @property
    def accelerators(self) -> int | None:
        if self.nodes is not None and self.accelerators_per_node is not None:
            return self.nodes * self.accelerators_per_node
        return self.total_stated

    @property
    def is_assumption(self) -> bool:
        return self.stated_by is not None

    def text(self) -> str:
        """``8 x 8 H100-SXM5-80GB = 64``; unknown parts are ``?``."""
        what = f" {self.accelerator}" if self.accelerator else ""
        if self.nodes is None and self.accelerators_per_node is None:
            total = self.total_stated
            return f"{total}{what} in all" if total is not None else "size unknown"
        nodes = "?" if self.nodes is None else str(self.nodes)
        per = "?" if self.accelerators_per_node is None else str(self.accelerators_per_node)
        total = self.accelerators
        return f"{nodes} x {per}{what}" + (f" = {total}" if total is not None else "")

    def same_size(self, other: SystemSize) -> bool:
        return (self.nodes, self.accelerators_per_node, self.accelerators) == (
            other.nodes,
            other.accelerators_per_node,
            other.accelerators,
        )


@dataclass(frozen=True)
class JobClock:
    """The job's own clock, printed by the wrapper around the training process (NVIDIA-derived
    ``run_and_time.sh``: v4.0 ``STARTING/ENDING TIMING RUN AT``, v5.0 ``RUNANDTIME_START/STOP``
    in epoch seconds, ``RESULT,...``).

    Its span covers container start, imports and teardown outside the framework's own lines:
    billed machine time is at least this span. Every clock the job prints is kept
    (``clocks``); the billed attempt spans the longest of them."""

    span_s: float
    """Launch to the end of the job: the longest of ``clocks`` (and, for a wrapper placed on
    the log's clock, of the wrapper and the log's lines together)."""
    before_first_line_s: float | None
    """Launch to the log's ``t_s == 0``; ``None`` when the wrapper's local time cannot be
    placed on the log's clock (its time zone is not printed)."""
    source: str
    clocks: tuple[tuple[str, float], ...] = ()
    """Every clock the job printed: (which lines, seconds), in the order read."""

    @property
    def wrapper_s(self) -> float:
        """The timing wrapper's own span: the innermost (shortest) clock printed. A job can
        nest wrappers (v5.0's ``RUNANDTIME`` around v4.0's ``STARTING/ENDING TIMING RUN``);
        the billed attempt (``span_s``) is the outermost."""
        return min((seconds for _, seconds in self.clocks), default=self.span_s)

    def clocks_text(self) -> str:
        """``RUNANDTIME_START/STOP lines 23-130 1,561 s; RESULT line 131 1,560 s``."""
        return "; ".join(f"{what} {seconds:,.0f} s" for what, seconds in self.clocks)


IMPORTER_VERSION = 3
"""The importers' reading rules version: 2 reads system size, the job clock, protocol facts
and the benchmark's own target; 3 reads the v5.0 wrapper clock (``RUNANDTIME_START/STOP``),
weighs the sources of system size, and reads offline evaluations. A run stored by an older
version is read again when its log is imported again (``store.runs``), instead of being
skipped as a duplicate."""

PROTOCOL_FACTS = (
    "benchmark",
    "global_batch_size",
    "sequence_length",
    "quality_metric",
    "quality_target",
)
"""Facts of what a run's result is a result *of*, as logs state them (normalized names).
Two run sets are the same protocol only where both state a fact and it agrees."""


@dataclass(frozen=True)
class RunMetadata:
    """Run-level facts of one imported log; unknown facts are ``None``."""

    format: str
    source: str
    sha256: str
    time_source: TimeSource
    launch_time: dt.datetime | None = None
    """Wall-clock time of ``t_s == 0`` when the log gives absolute times: time-zone aware (UTC)
    when the log says so (MLPerf's epoch milliseconds), naive host local time for text logs
    that print no zone (Megatron-LM, neuronx-distributed)."""
    throughput_unit: str | None = None
    quality_metric: str | None = None
    quality_higher_is_better: bool | None = None
    samples_per_step: float | None = None
    tokens_per_step: float | None = None
    planned_steps: int | None = None
    success_means_target_reached: bool = False
    """True where the format only writes a successful end after the quality target was
    verified (MLPerf ``run_stop`` with ``status: success``)."""
    prints_run_stop: bool = False
    """True where the format always writes a run stop when training ends (MLPerf): a log without
    one did not finish, however many steps it shows."""
    facts: dict[str, str] = field(default_factory=dict)
    """Other facts the log states (benchmark, submitter, batch size, ...), as text."""
    not_derivable: tuple[str, ...] = ()
    """Figures this format cannot give, said explicitly so the UI can show them as unknown."""
    notes: tuple[str, ...] = ()
    """How the importer interpreted the log (deduplication, rebuilt clock, ...)."""
    system: SystemSize | None = None
    """The system the run measured, where the log (or its submission) states it."""
    job_clock: JobClock | None = None
    protocol: dict[str, str] = field(default_factory=dict)
    """``PROTOCOL_FACTS`` the log states, as text (``global_batch_size``: ``"8"``)."""
    setup_phases: dict[str, float] = field(default_factory=dict)
    """Set-up timings the log states inside its initialization (seconds by name)."""
    quality_target_value: float | None = None
    """The quality target the log's own rules set (MLPerf: the benchmark's compliance
    target), used when the project states none."""
    importer_version: int = IMPORTER_VERSION
    """The reading rules the run was imported with (runs stored before versions: 1)."""

    def to_json(self) -> str:
        data = asdict(self)
        data["time_source"] = str(self.time_source)
        data["launch_time"] = self.launch_time.isoformat() if self.launch_time else None
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunMetadata:
        """The metadata stored as ``text``; text that does not give one raises
        ``InputFileError`` (a hand-edited or damaged runs table), never a traceback."""
        try:
            return _metadata_from_json(text)
        except InputFileError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise InputFileError(
                "run metadata", f"cannot be read ({type(error).__name__}: {error})"
            ) from None

    @classmethod
    def _from_json(cls, text: str) -> RunMetadata:
        data: dict[str, Any] = parse_json(text, path="run metadata")
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        launch = data.get("launch_time")
        data["launch_time"] = dt.datetime.fromisoformat(launch) if launch else None
        data["time_source"] = TimeSource(data["time_source"])
        data["not_derivable"] = tuple(data.get("not_derivable", ()))
        data["notes"] = tuple(data.get("notes", ()))
        data.setdefault("importer_version", 1)
        if data.get("system") is not None:
            system = dict(data["system"])
            system["conflicts"] = tuple(system.get("conflicts", ()))
            data["system"] = SystemSize(**system)
        if data.get("job_clock") is not None:
            clock = dict(data["job_clock"])
            clock["clocks"] = tuple(tuple(pair) for pair in clock.get("clocks", ()))
            data["job_clock"] = JobClock(**clock)
        # Runs stored before ``prints_run_stop`` existed: MLPerf was the one such format.
        data.setdefault("prints_run_stop", data.get("format") == "mlperf")
        return cls(**data)


@functools.lru_cache(maxsize=1 << 16)
def _metadata_from_json(text: str) -> RunMetadata:
    """Parsed once per text: the runs table is checked when read and its metadata used again by
    every reader. The cache holds a team's archive (tens of thousands of runs): a smaller one,
    read through in table order, would keep none of it. The metadata is frozen, but its dict
    fields (``facts``, ``protocol``, ``setup_phases``) are shared between the readers of one
    text: read them, never change them (nothing does)."""
    return RunMetadata._from_json(text)


@dataclass(frozen=True)
class ImportedRun:
    """What an importer returns: the timeline plus run-level metadata."""

    timeline: pl.DataFrame
    metadata: RunMetadata


def conform(frame: pl.DataFrame) -> pl.DataFrame:
    """Give ``frame`` exactly the timeline columns, in order; missing columns become null."""
    return frame.select(
        [
            (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
            for name, dtype in TIMELINE_SCHEMA.items()
        ]
    )


def with_interval_steps(progress: pl.DataFrame) -> pl.DataFrame:
    """Add ``interval_steps``: how many steps the interval ending at each ``step`` row covers.

    ``progress`` holds ``step`` rows and ``checkpoint_load`` rows in log order. Logs print every
    N-th step, so the count is the difference to the previous printed step; after a checkpoint
    load it is counted from the loaded step; the first row counts from step 0; where the counter
    went back without a load line (a restart the log does not explain), the typical printing
    interval (median difference) is assumed, never more than the step number itself.
    """
    prev = pl.col("step").shift(1)
    delta = pl.col("step") - prev
    diffs = progress.filter(pl.col("kind") == Kind.STEP)["step"].diff().drop_nulls()
    diffs = diffs.filter(diffs > 0)
    typical_steps = number(diffs.median()) if diffs.len() else 1.0
    return progress.with_columns(
        pl.when(prev.is_not_null() & (delta > 0))
        .then(delta.cast(pl.Float64))
        .when(prev.is_null())
        .then(pl.col("step").cast(pl.Float64))
        .otherwise(pl.min_horizontal(pl.lit(typical_steps), pl.col("step").cast(pl.Float64)))
        .clip(lower_bound=1.0)
        .alias("interval_steps")
    )


_CLOCK_SLACK_S = 1.0
"""Lines of one log may be stamped by clocks of different resolution (Megatron stamps a
checkpoint save to the second): a step is out of order only when it is more than this before
the step printed above it."""
_NON_NEGATIVE = ("step", "epoch", "samples", "tokens", "step_time_s", "duration_s")


_ON_CLOCK = pl.col("t_s").is_not_null() & pl.col("t_s").is_finite()
"""Rows with a usable time (the clock rules read only these)."""


_LOGGED_AS_IS = frozenset({"loss"})
"""Figures a log prints as they are, NaN included: a training loss of ``nan`` is a diverged
run (``run_facts`` judges it failed), not a timeline to distrust."""


def _value_rules(columns: list[str]) -> list[tuple[str, str, pl.Expr]]:
    """(column, what is wrong, the rows where it is) for every figure rule: NaN or infinite
    floats, negative steps and durations. The quick check and the detailed one both read this,
    so a rule is written once."""
    rules = []
    for name, dtype in TIMELINE_SCHEMA.items():
        if name not in columns:
            continue
        column = pl.col(name)
        if dtype == pl.Float64 and name not in _LOGGED_AS_IS:
            rules.append((name, "not finite", ~column.is_finite()))
        if name in _NON_NEGATIVE:
            rules.append((name, "negative", column < 0))
    return rules


def _backwards(t: pl.Expr) -> pl.Expr:
    """Printed steps whose time runs back more than the slack (over the steps' times ``t``)."""
    return t < t.shift(1) - _CLOCK_SLACK_S


def _any_problem(columns: list[str]) -> pl.Expr:
    """Whether ``timeline_problems`` finds anything, in one query (the usual answer is no)."""
    flags = [rows.any() for _, _, rows in _value_rules(columns)]
    t = pl.col("t_s")
    steps = t.filter(_ON_CLOCK & (pl.col("kind") == Kind.STEP))
    flags.append((t.filter(_ON_CLOCK) < 0).any())
    flags.append(_backwards(steps).any())
    return pl.any_horizontal(flags)


def timeline_problems(timeline: pl.DataFrame) -> tuple[str, ...]:
    """Why a timeline cannot be trusted, or ``()``: a time or figure that is NaN or infinite,
    a clock that runs backwards between printed steps or before the start, a negative step or
    duration.

    Importers never produce these (they refuse or drop such values), except a loss the log
    printed as ``nan`` or ``inf`` (a diverged run, judged failed by ``run_facts``); a timeline
    that has them was edited by hand or read by a bug, and the run is shown as suspect instead
    of priced.
    """
    if not timeline.select(_any_problem(timeline.columns)).item():
        return ()
    problems: list[str] = []

    def where(frame: pl.DataFrame) -> str:
        line = frame["line"][0] if "line" in frame.columns else None
        return f"log line {line}" if line is not None else f"row {frame['row'][0] + 1}"

    frame = timeline.with_row_index("row")
    flagged: set[str] = set()  # one problem per column: a NaN is not also called negative
    for name, wrong, rows in _value_rules(frame.columns):
        if name in flagged:
            continue
        bad = frame.filter(rows)
        if not bad.height:
            continue
        flagged.add(name)
        value = bad[name][0]
        problems.append(
            f"{name} is {value} at {where(bad)}"
            if wrong == "not finite"
            else f"{name} is negative ({value}) at {where(bad)}"
        )
    clock = frame.filter(_ON_CLOCK)
    if not problems and clock.height:
        before = clock.filter(pl.col("t_s") < 0)
        if before.height:
            problems.append(
                f"t_s is before the log's start ({before['t_s'][0]}) at {where(before)}"
            )
        steps = clock.filter(pl.col("kind") == Kind.STEP)
        back = steps.with_columns(pl.col("t_s").shift(1).alias("previous")).filter(
            _backwards(pl.col("t_s"))
        )
        if back.height:
            problems.append(
                f"time runs backwards at {where(back)} "
                f"({back['previous'][0]:g} s, then {back['t_s'][0]:g} s)"
            )
    return tuple(problems)
