"""What run facts are (``RunFacts``, ``PhaseSplit``, ``Stall``), the outcome words, the
version of the rules, and the JSON form stored facts take (``facts_to_json``)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from trntui.core.quality import QualityTarget

FACTS_VERSION = 10
"""Version of the rules below. Raise it with any change that can alter a run's facts: stored
facts (``trntui.store.facts``) of another version are derived again, and the user is told."""

WARMUP_TOLERANCE = 1.25
WARMUP_CONFIRM_INTERVALS = 3
STALL_FACTOR = 3.0

SUCCEEDED = "succeeded"
ABORTED = "aborted"
INCOMPLETE = "incomplete"
MISSED = "missed"
SUSPECT = "suspect"
"""The timeline holds values no log gives (NaN or infinite times, a clock running backwards,
negative steps): nothing is derived from it, and it counts neither as done nor as failed."""
TOKENS_FROM_SEQUENCE_LENGTH = "tokens/s = samples/s x the sequence length"
"""The note that begins where steady tokens/s assume every sample is a full sequence."""
SUCCESS_WORDS = {"success", "succeeded", "pass", "passed", "ok", "completed"}


@dataclass(frozen=True)
class Stall:
    """One slow interval after warm-up (over ``STALL_FACTOR`` x the median time per step): the time
    (``at_s``) and step of the progress row that ends it, and the time it lost."""

    at_s: float
    step: int | None
    lost_s: float
    """Time beyond the median pace spent in the interval."""


@dataclass(frozen=True)
class PhaseSplit:
    """Where the launch-to-end time went, in seconds; ``None`` where the log cannot tell."""

    init_compile_s: float | None
    warmup_s: float | None
    training_s: float | None
    checkpoint_s: float | None
    eval_s: float | None
    stall_s: float | None
    recovery_s: float | None
    """Downtime, re-initialization and recompilation after a crash, before progress resumed."""
    redone_s: float | None
    """Time spent recomputing steps already done before a restart."""
    data_loading_s: float | None = None
    between_blocks_s: float | None = None
    """Time between training blocks (after a block's stop, before the next block's start)
    that no evaluation or checkpoint save inside it accounts for."""
    outside_eval_s: float | None = None
    """Of ``eval_s``, the evaluation that ran after the log ended (a recorded quality result's
    evaluation time): billed, but outside the log's clock and any capture of it."""
    after_training_s: float | None = None
    """From the last training progress to the end of the log, outside evaluation and
    checkpoint saves (a process restarted to evaluate checkpoints offline, teardown), in logs
    that bracket training in blocks or epochs; ``None`` elsewhere (it stays in training)."""
    before_init_s: float | None = None
    """From the log's first line to ``init_start`` (cache clearing, container start: 7-26 s
    in NeMo logs): billed like the rest, in no other stage. ``None`` where the log marks no
    start of initialization."""


@dataclass(frozen=True)
class RunFacts:
    """What one run measured, derived from its timeline (``run_facts``): how it ended and whether
    it counts, its clocks and phase split, warm-up, steady throughput, stalls, restarts and
    quality."""

    status: str
    counts_as_completed: bool
    init_s: float | None
    run_s: float | None
    launch_to_result_s: float | None
    total_s: float | None
    phases: PhaseSplit
    median_step_time_s: float | None
    warmup_end_s: float | None
    warmup_steps: int | None
    steady_start_s: float | None
    steady_end_s: float | None
    steady_throughput: float | None
    throughput_unit: str | None
    steady_tokens_per_s: float | None
    effective_throughput: float | None
    """Useful work per second from launch to end; 0 for a run that does not count."""
    stalls: tuple[Stall, ...]
    restarts: int
    redone_steps: int | None
    completed_steps: int | None
    planned_steps: int | None
    quality_metric: str | None
    quality_value: float | None
    quality_target: QualityTarget | None
    quality_reached: bool | None
    notes: tuple[str, ...] = ()
    useful_work: float | None = None
    """Work counted once (redone work adds none), in the unit of ``throughput_unit``."""
    run_ends_at_planned_step: bool = False
    """``run_s`` ends at the last logged step of a run that reached its planned steps (the log
    prints no run stop)."""
    warmup_unit: str | None = None
    """What ``warmup_steps`` counts: the progress counter of the log (``steps``, ``epochs``,
    ``samples`` or ``tokens``); a log that counts samples has no steps to count."""
    work_to_target: float | None = None
    """The work the quality target took: what the evaluation that verified it evaluated (a run
    evaluated offline trains past it, on checkpoints evaluated afterwards), else the useful
    work of a run that reached it; ``None`` when it was not reached."""

    @property
    def outcome(self) -> str:
        """The status as lists show it: a finished run that missed its quality target is
        ``missed`` (it finished, but does not count)."""
        if self.status == SUCCEEDED and not self.counts_as_completed:
            return MISSED
        return self.status


def facts_to_json(facts: RunFacts) -> str:
    """``facts`` as JSON text that ``facts_from_json`` turns back into an equal ``RunFacts``."""
    return json.dumps(dataclasses.asdict(facts), sort_keys=True, allow_nan=True)


def facts_from_json(text: str) -> RunFacts:
    """Inverse of ``facts_to_json``; raises ``ValueError`` on text that is not stored facts."""
    try:
        data = json.loads(text)
        target = data.pop("quality_target")
        return RunFacts(
            **{
                **data,
                "phases": PhaseSplit(**data["phases"]),
                "stalls": tuple(Stall(**stall) for stall in data["stalls"]),
                "notes": tuple(data["notes"]),
                "quality_target": None if target is None else QualityTarget(**target),
            }
        )
    except (TypeError, KeyError, AttributeError, json.JSONDecodeError) as error:
        raise ValueError(f"not stored run facts ({error})") from None
