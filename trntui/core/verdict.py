"""What limits a run: each cause with the share of billed time it explains, and the evidence.

Billed time is the run's launch-to-end time (``RunFacts.total_s``), or the job's own clock when
the log prints one that spans longer (``JobClock``: container start and teardown around the
framework's lines). Each cause is measured on its own and never double counted:

- **compilation-bound**: time compiling graphs (the compiler lines' bounded intervals, else the
  run log's compile intervals, else the run's init time, said to include initialisation);
- **restart-bound**: recovery after crashes plus the time spent redoing steps (run facts);
- with a utilization capture attached to the run, every sample of the training part (after
  init/compile) splits its period by the per-core utilizations: the mean is **accelerator**
  time (less the redone steps, already counted as restarts); the gap between the busiest core
  and the mean is time cores spent waiting for others, **synchronisation/communication**;
  the rest, when even the busiest core was idle, is time waiting on something outside the
  accelerators: **input/data** (less the checkpoint saves, evaluations and recovery the run
  log accounts for). Host CPU and I/O wait during those idle stretches are shown as evidence.
  Samples that are gaps explain nothing. The shares are of the accelerators the run used; when
  the capture says the instance has more, a note says how many were billed and never used;
- without a capture, accelerator and synchronisation time are unknown, and input/data time is
  only what the log itself states (data loading phases) plus stalls, flagged as possibly
  synchronisation.

The verdict is the cause with the largest share; when some causes are not measured, only a
cause larger than all the unexplained time (which they could take) is a verdict. A low
accelerator share is a finding to
explain, not something a bigger instance fixes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import polars as pl

from trntui.core.compile_telemetry import CompileSummary
from trntui.core.format import plural
from trntui.core.run_facts import RunFacts
from trntui.core.scalars import number, number_or_none
from trntui.core.timeline import JobClock
from trntui.core.utilization import Telemetry, per_sample

IDLE_PCT = 20.0
"""A sample whose busiest core is below this is a data-starved stretch in the evidence."""


class Limit(StrEnum):
    ACCELERATOR = "accelerator-bound"
    INPUT = "input/data-bound"
    SYNC = "synchronisation/communication-bound"
    COMPILATION = "compilation-bound"
    RESTART = "restart-bound"


@dataclass(frozen=True)
class LimitShare:
    limit: Limit
    seconds: float | None
    """None when this run's data cannot measure it."""
    share: float | None
    """Fraction of billed time."""
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Stretch:
    """A contiguous period (run time) when even the busiest accelerator was nearly idle."""

    start_s: float
    end_s: float
    host_cpu_pct: float | None
    io_wait_pct: float | None


@dataclass(frozen=True)
class Verdict:
    limit: Limit | None
    """The cause with the largest share; None when nothing could be measured."""
    billed_s: float | None
    shares: tuple[LimitShare, ...]
    """Largest share first; unmeasurable causes last."""
    unexplained_s: float | None
    """Billed time no cause accounts for (init other than compiling, gaps, ...)."""
    starved: tuple[Stretch, ...] = ()
    notes: tuple[str, ...] = ()

    def share_of(self, limit: Limit) -> LimitShare:
        return next(s for s in self.shares if s.limit == limit)

    @property
    def headline(self) -> str:
        if self.limit is None:
            return "not measured"
        share = self.share_of(self.limit).share
        return f"{self.limit} ({share:.0%} of billed time)" if share is not None else self.limit


def _compile_share(
    facts: RunFacts, compile: CompileSummary | None, timeline_compile_s: float | None
) -> LimitShare:
    if compile is not None and compile.found and compile.compile_s is not None:
        evidence = [
            f"{plural(compile.compilations, 'graph')} compiled, "
            f"{compile.cache_hits} loaded from the "
            f"cache, {compile.failures} failed",
            f"compile time {compile.compile_min_s or 0:.0f}-{compile.compile_s:.0f} s "
            "(bounded by the timestamps around the compiler lines; the upper bound is used)",
        ]
        if compile.unfinished:
            evidence.append(f"{plural(compile.unfinished, 'compilation')} never finished")
        return LimitShare(Limit.COMPILATION, compile.compile_s, None, tuple(evidence))
    if timeline_compile_s is not None:
        return LimitShare(
            Limit.COMPILATION,
            timeline_compile_s,
            None,
            ("compile intervals from the run log's compiler lines",),
        )
    if facts.init_s is not None:
        return LimitShare(
            Limit.COMPILATION,
            facts.init_s,
            None,
            ("time before training started; includes initialisation (compile not separated)",),
        )
    return LimitShare(Limit.COMPILATION, None, None, ("no compile or init time in the log",))


def _restart_share(facts: RunFacts) -> LimitShare:
    phases = facts.phases
    if phases.recovery_s is None and phases.redone_s is None:
        return LimitShare(Limit.RESTART, None, None, ("the log cannot tell restarts",))
    seconds = (phases.recovery_s or 0.0) + (phases.redone_s or 0.0)
    evidence = (
        f"{plural(facts.restarts, 'restart')}, {plural(facts.redone_steps or 0, 'step')} redone",
        f"recovery {phases.recovery_s or 0:.0f} s + redone work {phases.redone_s or 0:.0f} s",
    )
    return LimitShare(Limit.RESTART, seconds, None, evidence)


def _starved_stretches(rows: pl.DataFrame) -> tuple[Stretch, ...]:
    starved = rows.with_columns(
        (pl.col("max_pct") < IDLE_PCT).fill_null(False).alias("starved")
    ).with_columns(
        (pl.col("starved") != pl.col("starved").shift(1)).fill_null(True).cum_sum().alias("run")
    )
    out = []
    for _, group in starved.filter(pl.col("starved")).group_by("run", maintain_order=True):
        out.append(
            Stretch(
                start_s=float(group["run_t"][0] - group["period_s"][0]),
                end_s=float(group["run_t"][-1]),
                host_cpu_pct=number_or_none(group["cpu_pct"].mean()),
                io_wait_pct=number_or_none(group["io_wait_pct"].mean()),
            )
        )
    return tuple(sorted(out, key=lambda s: s.start_s - s.end_s)[:5])


def _telemetry_shares(
    facts: RunFacts, telemetry: Telemetry, offset_s: float, train_start_s: float, billed_s: float
) -> tuple[LimitShare, LimitShare, LimitShare, tuple[Stretch, ...], float]:
    rows = per_sample(telemetry.samples).with_columns((pl.col("t_s") + offset_s).alias("run_t"))
    lo = pl.max_horizontal(pl.col("run_t") - pl.col("period_s"), pl.lit(train_start_s))
    hi = pl.min_horizontal(pl.col("run_t"), pl.lit(billed_s))
    rows = rows.with_columns((hi - lo).clip(lower_bound=0.0).alias("w")).filter(pl.col("w") > 0)
    measured = rows.filter(pl.col("mean_pct").is_not_null())
    gap_s = float(rows.filter(pl.col("mean_pct").is_null())["w"].sum())
    training_s = max(0.0, billed_s - train_start_s)
    covered_s = float(measured["w"].sum())
    busy = float((measured["mean_pct"] / 100 * measured["w"]).sum())
    sync = float(((measured["max_pct"] - measured["mean_pct"]) / 100 * measured["w"]).sum())
    idle = float(((100 - measured["max_pct"]).clip(lower_bound=0) / 100 * measured["w"]).sum())
    phases = facts.phases
    redone = phases.redone_s or 0.0
    # What the log accounts for inside its own clock: an evaluation recorded as run after the
    # log ended is not in the capture's idle time, so it is not taken off it.
    in_log_eval = (phases.eval_s or 0.0) - (phases.outside_eval_s or 0.0)
    accounted = (phases.checkpoint_s or 0.0) + in_log_eval + (phases.recovery_s or 0.0)
    method = f"{telemetry.metadata.method}; period {telemetry.metadata.period_s or 0:g} s"
    accelerator = LimitShare(
        Limit.ACCELERATOR,
        max(0.0, busy - redone),
        None,
        (
            f"time-weighted mean utilization over the training part: "
            f"{busy / max(covered_s, 1e-9):.0%}",
            method,
            f"capture measured {covered_s:.0f} s of the {training_s:.0f} s training part",
        ),
    )
    sync_share = LimitShare(
        Limit.SYNC,
        sync,
        None,
        (
            "time cores spent idle while the busiest core worked (waiting for the slowest; "
            "collectives and stragglers)",
        ),
    )
    starved = _starved_stretches(measured)
    idle_rows = measured.filter(pl.col("max_pct") < IDLE_PCT)
    cpu = idle_rows["cpu_pct"].drop_nulls()
    io = idle_rows["io_wait_pct"].drop_nulls()
    evidence = [
        f"time even the busiest core was idle: {idle:.0f} s, less {accounted:.0f} s of "
        "checkpoint saves, evaluations and recovery the log accounts for",
    ]
    if cpu.len():
        evidence.append(
            f"while all accelerators were idle, host CPU averaged {number(cpu.mean()):.0f} % and "
            f"I/O wait {number(io.mean()) if io.len() else 0:.0f} % (data loading / preprocessing)"
        )
    elif measured["cpu_pct"].drop_nulls().len():
        evidence.append(
            f"no stretch with every accelerator below {IDLE_PCT:.0f} %: the idle time is spread "
            "over the steps (per-step host work or input waits)"
        )
    else:
        evidence.append("host CPU was not captured: the idle time could also be host-side work")
    for stretch in starved[:3]:
        evidence.append(f"data-starved {stretch.start_s:.0f}-{stretch.end_s:.0f} s")
    input_share = LimitShare(Limit.INPUT, max(0.0, idle - accounted), None, tuple(evidence))
    return accelerator, sync_share, input_share, starved, gap_s


def run_verdict(
    facts: RunFacts,
    telemetry: Telemetry | None = None,
    offset_s: float = 0.0,
    compile: CompileSummary | None = None,
    timeline_compile_s: float | None = None,
    job_clock: JobClock | None = None,
) -> Verdict:
    """What limits the run (rules in the module docstring).

    ``offset_s`` places the capture on the run's clock (run ``t_s`` = capture ``t_s`` +
    ``offset_s``), as ``trntui.store.telemetry`` computes when attaching it. ``job_clock``:
    the job's own clock when the log prints one; billed time is then its span when longer
    than the log's (container start and teardown are billed, and explained by nothing here).
    """
    log_end = facts.total_s
    billed = log_end
    notes: list[str] = []
    if job_clock is not None and log_end is not None and job_clock.span_s > log_end:
        billed = job_clock.span_s
        before = job_clock.before_first_line_s
        where = (
            f"{before:.0f} s before the log's first line"
            if before is not None
            else "before or after the log's lines"
        )
        notes.append(
            f"billed time is the job's own clock ({job_clock.source}): {billed:.0f} s, "
            f"{billed - log_end:.0f} s more than the log spans ({where}), explained by nothing"
        )
    compile_share = _compile_share(facts, compile, timeline_compile_s)
    restart_share = _restart_share(facts)
    starved: tuple[Stretch, ...] = ()
    if telemetry is not None and log_end is not None:
        train_start = facts.init_s or 0.0
        accelerator, sync, data, starved, gap_s = _telemetry_shares(
            facts, telemetry, offset_s, train_start, log_end
        )
        if gap_s:
            notes.append(f"{gap_s:.0f} s of the capture were gaps (errors): explained by nothing")
        meta = telemetry.metadata
        if meta.devices_on_instance and 0 < meta.devices < meta.devices_on_instance:
            notes.append(
                f"the run used {meta.devices} of the instance's {meta.devices_on_instance} "
                f"accelerators (the capture's hardware info); the other "
                f"{meta.devices_on_instance - meta.devices} were billed and never used: the "
                "shares above are of the ones in use"
            )
    else:
        accelerator = LimitShare(
            Limit.ACCELERATOR, None, None, ("no utilization capture attached to this run",)
        )
        sync = LimitShare(Limit.SYNC, None, None, ("needs a utilization capture",))
        stated = (facts.phases.data_loading_s or 0.0) + (facts.phases.stall_s or 0.0)
        data = LimitShare(
            Limit.INPUT,
            stated if facts.phases.stall_s is not None else None,
            None,
            (
                f"{plural(len(facts.stalls), 'stall')} in the log (slow intervals; "
                "without a utilization "
                "capture these may also be synchronisation waits)",
            ),
        )
    shares = []
    for item in (accelerator, data, sync, compile_share, restart_share):
        share = item.seconds / billed if item.seconds is not None and billed else None
        shares.append(LimitShare(item.limit, item.seconds, share, item.evidence))
    shares.sort(key=lambda s: (s.share is None, -(s.share or 0.0)))
    overlap = overlap_note(shares)
    if overlap:
        notes.append(overlap)
    known = [s.seconds for s in shares if s.seconds is not None]
    unexplained = max(0.0, billed - sum(known)) if billed is not None and known else None
    top = shares[0] if shares and shares[0].share else None
    unmeasured = [s for s in shares if s.seconds is None]
    if (
        top is not None
        and top.seconds is not None  # it has a share
        and unmeasured
        and (unexplained is None or top.seconds < unexplained)
    ):
        # The unmeasured causes could take the unexplained time and outrank it.
        notes.append(
            f"largest measured cause: {top.limit} ({top.share:.0%}); not a verdict, because "
            + ", ".join(str(s.limit) for s in unmeasured)
            + " could explain more (not measured)"
        )
        top = None
    return Verdict(
        limit=top.limit if top else None,
        billed_s=billed,
        shares=tuple(shares),
        unexplained_s=unexplained,
        starved=starved,
        notes=tuple(notes),
    )


def overlap_note(shares: Sequence[LimitShare]) -> str | None:
    """Say so when the measured shares add up to more than the billed time.

    Each cause is measured on its own, from its own evidence (compiler lines, the run log,
    the capture); where two sources see the same seconds (a stall during recovery, compilation
    inside a slow start) their shares overlap, and a reader adding them up must not conclude
    that more than all of the time was spent.
    """
    total = sum(s.share for s in shares if s.share is not None)
    if total <= 1.005:
        return None
    return (
        f"the shares add up to {total:.0%}: causes measured from different evidence overlap "
        "in time, so each is an upper bound of its own and they are not to be added"
    )


def verdict_rows(verdict: Verdict) -> Sequence[dict[str, Any]]:
    """Plain rows (limit, seconds, share, evidence) for tables and JSON."""
    return [
        {
            "limit": str(s.limit),
            "seconds": s.seconds,
            "share": s.share,
            "evidence": list(s.evidence),
        }
        for s in verdict.shares
    ]
