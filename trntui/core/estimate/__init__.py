"""The estimate (README, the method's step 4) per training target, every input's provenance.

    cost = instance price x billed time (per stage, summed)
         + storage + transfers + logs/monitoring + data preparation + failures and retries

Billed time per instance has four stages, each from a measured run set or a stated input:

* **launch, startup and compile**: ``launch_s``, the time the job holds the machine outside
  the framework's own lines (container start and imports before the first log line, teardown
  after the last), from the job wrapper's clock where the logs carry it, else stated in the
  inventory (``software.launch_minutes``), never a silent 0; plus ``startup_s``, the median
  first-log-line-to-first-step time (compilation included: it is billed and recurs on every
  launch);
* **training**: ``work_amount / steady_throughput`` (useful work only, at the steady pace);
* **checkpoints, evaluation, warm-up and stalls**: training time x ``overhead_ratio``, the
  ratio those phases had to steady training time in the measured runs, plus ``checkpoint_s``:
  the planned checkpoint saves when the trial logs do not show any (planned steps / interval x
  the inventory's save time, an assumption; unknown when the inventory states no save time;
  0 when no interval is planned or the logs show the saves, which the ratio then holds);
* **failures and retries**: training time x ``retry_ratio`` (recovery and redone work after
  restarts inside a run) plus, for the runs of the set that did not count (failed, or quality
  missed), ``failed_fraction / (1 - failed_fraction)`` extra attempts of ``failed_run_s`` (plus
  their ``launch_s``) each.

A measurement holds for the system it was taken on: a target's instances x accelerators per
instance must equal its run set's nodes x accelerators per node (``core.system_size``), or
the measured throughput does not apply and the total is incomplete, naming both sizes.

Side costs: S3 keeps the dataset and the kept checkpoints for ``months_stored``; EBS is billed
per instance for the wall-clock time of the training (730 hours a month, AWS's convention);
inter-AZ transfer is charged on both sides of a crossing (the rate is per direction); logs pay
ingestion once and storage per month; data preparation is its own instance time.

A target bought as a Capacity Block (``capacity_block`` = 1) pays whole blocks up front: the
wall clock (all four stages) is rounded up to the block lengths AWS sells (1-14 days, then
7-day steps to 182; ``core.capacity_block``), and the hours paid but not used are their own
term, ``idle_usd``, so "pays 24 h, uses 5.2 h" is visible rather than folded into the rate.

An input nobody knows stays ``None`` and every term that needs it stays ``None``: the estimate
then reads "incomplete: <inputs>" instead of a number that looks final. The arithmetic is one
set of Polars expressions (``cost_frame``) applied to a frame whose rows are variants of the
inputs, so the estimate, the sensitivity bars and the resampled draws share the same formula.

The package, in the order data flows (each module imports only the ones above it):

1. ``inputs``: what each input is (``InputSpec``, ``INPUT_SPECS``), which cost terms need it
   (``TERM_INPUTS``), a value with its provenance (``Input``), a person's ``Override`` and the
   check of an edited value (``check_value``).
2. ``observations``: one row per imported run (``observation_row``) -> the observations frame
   -> per run set, medians and ranges (``run_set_stats``); the ``EstimateContext`` that holds
   them with the inventory and the quote book.
3. ``prices`` (the quote and the rates a target uses) and ``measured`` (its run set's inputs,
   tied to the system size they were measured on).
4. ``per_target``: every input of a target with its provenance (``target_inputs``), then the
   scenario's overrides (``apply_overrides``).
5. ``formula``: the Polars expressions over a frame of input rows (``cost_frame``; a figure
   that overflows from finite inputs is an ``EstimateOverflowError``, never infinite).
6. ``result``: the formula evaluated for every target -> ``TargetEstimate`` -> ``Estimate``
   (``estimate``, ``prepare``, ``estimate_from_inputs``); the overrides of a price outside
   the plausibility band (``implausible_overrides``).

Every public name is re-exported here: import from ``trntui.core.estimate``. Each module
loads when one of its names is first used (``trntui.lazy``): reading an ``Override`` (the
working scenario, when a project opens) loads ``inputs`` alone, not Polars and the formula.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trntui.core.format import UNKNOWN  # a provenance kind too (``PROVENANCE_KINDS``)
from trntui.core.run_facts import Spread
from trntui.lazy import lazy_exports

if TYPE_CHECKING:
    from trntui.core.estimate.formula import (
        HOURS_PER_MONTH,
        EstimateOverflowError,
        cost_frame,
        input_frame,
    )
    from trntui.core.estimate.inputs import (
        ASSUMPTION,
        DERIVED,
        INPUT_SPECS,
        MEASURED,
        OBSERVED_INPUTS,
        PROTOCOL_FACT_KEYS,
        PROVENANCE_KINDS,
        QUOTED,
        STAGES,
        TERM_INPUTS,
        TERMS,
        THROUGHPUT_UNITS,
        ZERO_GATES,
        Input,
        InputSpec,
        InvalidInputError,
        Override,
        Provenance,
        check_value,
        shown_unit,
    )
    from trntui.core.estimate.measured import (
        MEAN_INPUTS,
    )
    from trntui.core.estimate.observations import (
        OBSERVATION_SCHEMA,
        SAMPLE_COLUMNS,
        EstimateContext,
        RunSetStats,
        observation_row,
        observations_frame,
        run_set_stats,
    )
    from trntui.core.estimate.per_target import (
        TargetInputs,
        apply_overrides,
        global_inputs,
        target_inputs,
    )
    from trntui.core.estimate.prices import (
        data_prep_instance_type,
        quote_id,
        quote_lookups,
        quote_source,
        quote_users,
        rate_id,
        why_quote_unused,
    )
    from trntui.core.estimate.result import (
        Estimate,
        RiskLine,
        Stage,
        TargetEstimate,
        estimate,
        estimate_from_inputs,
        implausible_overrides,
        input_variant,
        prepare,
    )

_EXPORTS = {
    "ASSUMPTION": "inputs",
    "DERIVED": "inputs",
    "Estimate": "result",
    "EstimateContext": "observations",
    "EstimateOverflowError": "formula",
    "HOURS_PER_MONTH": "formula",
    "INPUT_SPECS": "inputs",
    "Input": "inputs",
    "InputSpec": "inputs",
    "InvalidInputError": "inputs",
    "MEAN_INPUTS": "measured",
    "MEASURED": "inputs",
    "OBSERVATION_SCHEMA": "observations",
    "OBSERVED_INPUTS": "inputs",
    "Override": "inputs",
    "PROTOCOL_FACT_KEYS": "inputs",
    "PROVENANCE_KINDS": "inputs",
    "Provenance": "inputs",
    "QUOTED": "inputs",
    "RiskLine": "result",
    "RunSetStats": "observations",
    "SAMPLE_COLUMNS": "observations",
    "STAGES": "inputs",
    "Stage": "result",
    "TERMS": "inputs",
    "TERM_INPUTS": "inputs",
    "THROUGHPUT_UNITS": "inputs",
    "TargetEstimate": "result",
    "TargetInputs": "per_target",
    "ZERO_GATES": "inputs",
    "apply_overrides": "per_target",
    "check_value": "inputs",
    "cost_frame": "formula",
    "data_prep_instance_type": "prices",
    "quote_lookups": "prices",
    "why_quote_unused": "prices",
    "estimate": "result",
    "estimate_from_inputs": "result",
    "global_inputs": "per_target",
    "implausible_overrides": "result",
    "input_frame": "formula",
    "input_variant": "result",
    "observation_row": "observations",
    "observations_frame": "observations",
    "prepare": "result",
    "quote_id": "prices",
    "quote_source": "prices",
    "quote_users": "prices",
    "rate_id": "prices",
    "run_set_stats": "observations",
    "shown_unit": "inputs",
    "target_inputs": "per_target",
}

__all__ = [
    "ASSUMPTION",
    "DERIVED",
    "HOURS_PER_MONTH",
    "INPUT_SPECS",
    "MEAN_INPUTS",
    "MEASURED",
    "OBSERVATION_SCHEMA",
    "OBSERVED_INPUTS",
    "PROTOCOL_FACT_KEYS",
    "PROVENANCE_KINDS",
    "QUOTED",
    "SAMPLE_COLUMNS",
    "STAGES",
    "TERMS",
    "TERM_INPUTS",
    "THROUGHPUT_UNITS",
    "UNKNOWN",
    "ZERO_GATES",
    "Estimate",
    "EstimateContext",
    "EstimateOverflowError",
    "Input",
    "InputSpec",
    "InvalidInputError",
    "Override",
    "Provenance",
    "RiskLine",
    "RunSetStats",
    "Spread",
    "Stage",
    "TargetEstimate",
    "TargetInputs",
    "apply_overrides",
    "check_value",
    "cost_frame",
    "data_prep_instance_type",
    "estimate",
    "estimate_from_inputs",
    "global_inputs",
    "implausible_overrides",
    "input_frame",
    "input_variant",
    "observation_row",
    "observations_frame",
    "prepare",
    "quote_id",
    "quote_lookups",
    "quote_source",
    "quote_users",
    "rate_id",
    "run_set_stats",
    "shown_unit",
    "target_inputs",
    "why_quote_unused",
]
__getattr__ = lazy_exports(__name__, _EXPORTS)
