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
value is the text after its field name; only the other lines' text is kept, cut from the bytes
already read (a log's lines are never all held as a column, nor scanned twice). Any other
log is read by the general parser, which finds fields by name and names the line it cannot
read; both give the same result, which the tests check on generated and randomly damaged logs.

The package, in the order data flows (each module imports only the ones above it):

1. ``patterns``: the format's name (``NAME``), its sniff (``sniff``), the line patterns and
   field names read.
2. ``iterations``: iteration lines, by the fast path (``fast_split``) or the general parser
   (``iteration_rows``), checked the same way.
3. ``other_lines``: checkpoint, evaluation, init and marker lines, the arguments dump, and
   the system size.
4. ``run``: the events on one clock, the run's end and its metadata (``import_megatron``).

Every public name is re-exported here: import from ``trntui.importers.megatron``.
"""

from __future__ import annotations

from trntui.importers.megatron.patterns import NAME, sniff
from trntui.importers.megatron.run import import_megatron

__all__ = ["NAME", "import_megatron", "sniff"]
