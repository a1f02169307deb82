"""TensorBoard event files (``events.out.tfevents.*``), read with the ``tensorboard`` package.

The data flows ``events.py`` (TensorBoard's own event loader and ``Event`` message -> the
scalars with their wall time and step) -> ``run.py`` (the scalars' roles by tag -> the
timeline). The package is the optional extra ``pip install 'trntui[tensorboard]'`` (it needs
no TensorFlow), imported only when a file is read; without it an event file is still
recognised, and refused with what to install.
"""

from trntui.importers.tensorboard.run import NAME, import_tensorboard, sniff

__all__ = ["NAME", "import_tensorboard", "sniff"]
