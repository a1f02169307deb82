"""Trainium3 vs GPU: the cost to reach the same quality result, never the price per hour.

The protocol gate comes first. Two estimates merge into one ratio only when they
describe an equally acceptable result: the same model version, the same dataset/benchmark, the
same quality metric and threshold, and the same amount of finished work, each run set having
reached the quality target. The goal's model version, criterion and amount of work must be
recorded; both run sets are judged against that one goal. What the logs themselves state (a
benchmark name, the metric they print, the unit of work) must not differ where both state it;
a fact only one side's logs state is shown side by side but cannot contradict the other. When
anything differs or a required fact is missing, the two results are shown side by side with
the reason, and no ratio is given.

The break-even throughput is the useful throughput at which the Trainium3 total equals the GPU
total. The total is affine in training time, which is ``work / throughput``, so two evaluations
of the formula give the line and the break-even follows exactly.

The decision note says *pause* when quality was missed, a price for the region is
unverified or side costs are incomplete; *try another option* when the target configuration
costs more to the result than the GPU (its best observed run does not reach break-even), which
makes the porting effort unjustified; *continue the trial* when quality is reached, the
operations are supported (no open porting question) and measurements cover every cost stage.
A pause lists every missing condition, not only the first. Before any Trainium3 run, with
the GPU measured and Trainium3 priced, it says *run a trial* with what Trainium3 must reach
(the break-even time to the result and useful throughput, requirements, not measurements) and
how many runs a band of a stated width needs.

The package, in the order data flows (each module imports only the ones above it):

1. ``protocol_gate``: what a target's result is a result of (``protocol``), fact by fact
   (``fact_checks``), and every reason two results cannot be merged (``protocol_differences``).
2. ``breakeven``: the throughput at which the Trainium3 total equals the GPU total
   (``break_even``), exactly, or searched when block billing makes the total stepped.
3. ``before_trial``: what Trainium3 must reach when no run of it is measured
   (``requirement``) and how many trial runs a narrow band needs (``trial_runs``).
4. ``decision``: continue, try another option, pause or run a trial, with every missing
   condition (``decide``).
5. ``result``: all together for a project's estimate (``compare`` -> ``Comparison``): the
   first Trainium3 target against the GPU target chosen (``pick_gpu``), else the first.

Every public name is re-exported here: import from ``trntui.core.comparison``.
"""

from __future__ import annotations

from trntui.core.comparison.before_trial import (
    Requirement,
    TrialRuns,
    requirement,
    trial_runs,
)
from trntui.core.comparison.breakeven import BreakEven, break_even
from trntui.core.comparison.decision import (
    CONTINUE,
    PAUSE,
    RUN_TRIAL,
    TRY_ANOTHER,
    Decision,
    decide,
)
from trntui.core.comparison.protocol_gate import (
    CONFIRMED,
    DIFFERS,
    FACT_LABELS,
    NOT_CONFIRMED,
    FactCheck,
    Protocol,
    fact_checks,
    inventory_differences,
    protocol,
    protocol_differences,
)
from trntui.core.comparison.result import (
    CHOSEN,
    FIRST_GPU,
    Comparison,
    compare,
    gpu_target_names,
    pick_gpu,
)

__all__ = [
    "CHOSEN",
    "CONFIRMED",
    "CONTINUE",
    "DIFFERS",
    "FACT_LABELS",
    "FIRST_GPU",
    "NOT_CONFIRMED",
    "PAUSE",
    "RUN_TRIAL",
    "TRY_ANOTHER",
    "BreakEven",
    "Comparison",
    "Decision",
    "FactCheck",
    "Protocol",
    "Requirement",
    "TrialRuns",
    "break_even",
    "compare",
    "decide",
    "fact_checks",
    "gpu_target_names",
    "inventory_differences",
    "pick_gpu",
    "protocol",
    "protocol_differences",
    "requirement",
    "trial_runs",
]
