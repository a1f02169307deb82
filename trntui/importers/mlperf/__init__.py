"""MLPerf Training result logs (``:::MLLOG {json}`` lines, as written by ``mlperf_logging``).

Interpretation follows MLCommons' own tools (``compliance_checker``, ``result_summarizer``):

* a line counts when it carries ``:::MLLOG`` followed by a JSON object, whatever prefix a
  launcher added (``0: ``, ``[1,0]<stdout>:``) and whatever text another process glued after
  it; every other line is ignored; a log with bytes that are not UTF-8 is read as Latin-1, as
  the checker reads it (MLLOG records are ASCII JSON, so no number can be misread);
* the same event printed by several ranks is one event (identical key, time, value and
  metadata);
* the timed run is the last ``run_start`` before the first ``run_stop`` *in file order* (some
  implementations stamp ``run_stop`` earlier than lines printed before it); a run without
  ``run_stop`` is not a completed run, and only ``metadata.status == "success"`` is a success,
  and only when an evaluation met the benchmark's target (``mlperf_rules``);
* the run time is ``run_stop.time_ms - run_start.time_ms``; ``init_*`` is untimed set-up.

How progress is read (the unit differs by benchmark and by implementation version):

* The unit is samples where the log states ``samples_count``, steps where it states only
  ``step_num`` (samples = steps x ``global_batch_size``), else what the benchmark's epoch keys
  count (``mlperf_rules``): epochs (samples = epochs x ``train_samples``), samples or tokens.
  Epoch keys whose blocks are whole multiples of ``train_samples`` count samples (unet3d from
  v3.1 on). No sample count is made up where the log cannot support it.
* Cumulative work is trusted from evaluations and the run stop (they state the work done so
  far); block lines are not, because implementations disagree on what a block's count means
  (its start, its end, or its length). A block's end is the first such count after its stop.
* Progress rows are the epoch stops, else the block stops, else the evaluations, whichever
  gives at least two points; work must rise from one row to the next (a result file holds one
  run, so a count that does not rise is not a restart and is dropped with a note).
* ``tracked_stats`` with a ``throughput`` are the log's own training rate, attached to the
  progress row they report on; the set-up kinds (``before_model_init``, ``warmup_time``, ...)
  are set-up phases, ``validation_throughput`` belongs to evaluation.
* The system size and the job wrapper's clock come from the lines around the records
  (``importers.launch``).

The package, in the order data flows (each module imports only the ones above it):

1. ``records``: the format's name (``NAME``) and sniff (``sniff``), the MLLOG records decoded,
   checked and deduplicated, and the records that bound the timed run.
2. ``progress``: the unit progress is counted in and the work done at each progress row.
3. ``rows``: the timeline rows, the facts and protocol the log states, its set-up phases.
4. ``run``: the imported run with its notes and metadata (``import_mlperf``).

Every public name is re-exported here: import from ``trntui.importers.mlperf``.
"""

from __future__ import annotations

from trntui.importers.mlperf.records import MARKER, NAME, sniff
from trntui.importers.mlperf.run import import_mlperf

__all__ = ["MARKER", "NAME", "import_mlperf", "sniff"]
