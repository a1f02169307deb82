"""TensorBoard event files (``events.out.tfevents.*``), read with the standard library.

The data flows ``records.py`` (the TFRecord framing, each record's CRC-32C checked) ->
``wire.py`` (the protocol buffer wire format) -> ``events.py`` (``Event`` and ``Summary``
messages -> scalars with their wall time and step) -> ``run.py`` (the scalars' roles by tag
-> the timeline). No TensorFlow or TensorBoard package is needed: the framing and the few
messages a scalar needs are small, fixed formats, and a reader of them keeps the install light.
"""

from trntui.importers.tensorboard.run import NAME, import_tensorboard, sniff

__all__ = ["NAME", "import_tensorboard", "sniff"]
