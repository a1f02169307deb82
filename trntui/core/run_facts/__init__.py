"""Run facts: what one trial run measured, derived from its normalized timeline.

Two clocks are kept apart: ``run_s`` is "training running" time (run start to run
stop, diagnoses speed) and ``launch_to_result_s`` is launch to the evaluation that verified the
quality target (what the team pays for). A format that prints no run stop (neuronx-distributed)
has one only when the run reached its planned steps: training ran until its last logged step.
A run that never got there has no ``run_s``; it does not count anyway. A format that always
prints a stop (MLPerf) did not finish without one, whatever step it reached.

How the steady state is found (``run_facts``, rules 1-5 in ``steady``):

1. Progress rows are ``step`` rows (else ``epoch_stop``, else ``block_stop``), counted by step
   (else epoch, else samples). Each closes an interval since the previous progress row or, at
   the start of a segment, since the latest ``run_start`` / ``compile_stop`` /
   ``checkpoint_load``. A segment ends where the step counter goes back: that is a restart; the
   steps between the point resumed from (the loaded checkpoint, else one printing interval
   earlier) and the highest step reached are redone work, and the time from the last progress
   before the restart to the first one after it, less that interval's own work, is recovery.
2. Each interval's time per step is the log's own step time when it prints one, else wall time
   minus the checkpoint saves and evaluations that fall inside it, divided by its steps.
3. ``median_step_time_s`` is the median over all intervals; the median is used because it
   ignores the few slow intervals (warm-up, stalls) that a mean would absorb.
4. Warm-up of each segment lasts until the first interval that starts a run of three
   consecutive intervals (fewer at the end) at most 1.25x the median, and always holds the
   segment's first interval (when it has more than one); compilation and graph tracing of the
   first steps therefore fall in warm-up, never in steady throughput, also in logs that report
   only coarse blocks (MLPerf) where that cost hides inside the first block.
5. After warm-up, an interval slower than 3x the median is a stall; its time beyond the median
   pace is counted as stall time. The steady window is every remaining post-warm-up interval,
   and ``steady_throughput`` is their work divided by their time (samples/s when the log counts
   samples or states samples per step, else the log's own throughput's median, else steps/s).

A run counts as completed work only when it finished (``status == "succeeded"``) and did not
miss its quality target; otherwise its effective throughput is 0: a failed run produced no
usable result, however fast it ran. Without a target (given, or implied as by an MLPerf
``success``) ``quality_reached`` is ``None`` ("not verified") and a note says so.

The package, in the order the rules run:

* ``facts``: what run facts are (``RunFacts``, ``PhaseSplit``), the outcome words,
  ``FACTS_VERSION`` and the stored JSON form;
* ``outcome``: how the run ended and whether its quality target was reached;
* ``steady``: rules 1-5 above (intervals, pace, median, warm-up, stalls, steady window), the
  overheads inside the intervals and the useful work;
* ``derive``: ``run_facts`` applies them in turn (clocks and phase split there);
* ``summary``: a run set's range over its counted runs (``summarize_set``, ``Spread``).

Every public name is re-exported here: import from ``trntui.core.run_facts`` (``derive`` and
``summary`` load when one of their names is first used, ``trntui.lazy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trntui.core.quality import QualityTarget, RecordedQuality
from trntui.core.run_facts.facts import (
    ABORTED,
    FACTS_VERSION,
    INCOMPLETE,
    MISSED,
    STALL_FACTOR,
    SUCCEEDED,
    SUSPECT,
    TOKENS_FROM_SEQUENCE_LENGTH,
    WARMUP_CONFIRM_INTERVALS,
    WARMUP_TOLERANCE,
    PhaseSplit,
    RunFacts,
    Stall,
    facts_from_json,
    facts_to_json,
)
from trntui.lazy import lazy_exports

if TYPE_CHECKING:
    from trntui.core.run_facts.derive import goal_free, judged_plan, run_facts
    from trntui.core.run_facts.summary import RunSetSummary, Spread, spread, summarize_set

# Deriving and summarizing load when first used: reading stored facts needs neither.
__getattr__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(("run_facts", "goal_free", "judged_plan"), "derive"),
        **dict.fromkeys(("RunSetSummary", "Spread", "spread", "summarize_set"), "summary"),
    },
)

__all__ = [
    "ABORTED",
    "FACTS_VERSION",
    "INCOMPLETE",
    "MISSED",
    "STALL_FACTOR",
    "SUCCEEDED",
    "SUSPECT",
    "TOKENS_FROM_SEQUENCE_LENGTH",
    "WARMUP_CONFIRM_INTERVALS",
    "WARMUP_TOLERANCE",
    "PhaseSplit",
    "QualityTarget",
    "RecordedQuality",
    "RunFacts",
    "RunSetSummary",
    "Spread",
    "Stall",
    "facts_from_json",
    "facts_to_json",
    "goal_free",
    "judged_plan",
    "run_facts",
    "spread",
    "summarize_set",
]
