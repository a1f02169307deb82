"""One event file -> its scalars, read with the ``tensorboard`` package (the extra
``pip install 'trntui[tensorboard]'``), which needs no TensorFlow.

The records come from TensorBoard's own event loader (``RawEventFileLoader``: the TFRecord
framing, each record's CRC-32C checked; a truncated or damaged record ends the reading, what
came before it is kept), each is parsed as TensorBoard's ``Event`` message, and a scalar is
what TensorBoard's scalars dashboard shows: a ``simple_value`` (PyTorch's and tensorboardX's
``add_scalar``), or a tensor holding exactly one number (TF2's ``tf.summary.scalar``) whose
tag belongs to no other dashboard (a writer names the dashboard, ``plugin_data.plugin_name``,
with a tag's first value only). ``SessionLog.START`` after the first scalars is TensorFlow's
mark of a session started again after a crash.

The package is imported when a file is read, never before: the start-up of the app does not
wait for it, and without it the file is refused with what to install (``MISSING_READER``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trntui.core.errors import InputFileError
from trntui.importers.reading import Steps, open_regular

FILE_VERSION_PREFIX = "brain.Event:"
INSTALL_HINT = "pip install 'trntui[tensorboard]'"
MISSING_READER = (
    "reading a TensorBoard event file needs the tensorboard package, which the base install "
    f"leaves out: install it with {INSTALL_HINT}"
)
_RECORD_FRAMING_BYTES = 16
"""A record's length (8 bytes), its CRC (4) and its data's CRC (4), around the data."""


@dataclass(frozen=True)
class Scalar:
    offset: int
    """The record's number in the file, 1-based (to trace a figure to its origin)."""
    wall_time: float
    step: int
    tag: str
    value: float


@dataclass
class EventFile:
    """What the events of one file hold."""

    path: str = ""
    scalars: list[Scalar] = field(default_factory=list)
    file_version: str | None = None
    first_wall_time: float | None = None
    session_starts: list[tuple[int, float, int]] = field(default_factory=list)
    """(offset, wall time, step) of each ``SessionLog.START`` after the first scalars."""
    plugins: dict[str, str] = field(default_factory=dict)
    skipped: int = 0
    """Records that are no ``Event`` message (counted, never guessed at)."""
    records: int = 0
    bytes_read: int = 0
    """The bytes of the records read, framing included: short of the file's size when the
    loader stopped at a truncated or damaged record."""
    size: int = 0
    sha256: str = ""

    @property
    def unread_bytes(self) -> int:
        return max(0, self.size - self.bytes_read)


def _loader() -> tuple[Any, Any, Any, Any]:
    """TensorBoard's raw event loader, ``Event``, ``SessionLog`` and ``make_ndarray``; an
    ``ImportError`` when the extra is not installed."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event, SessionLog
    from tensorboard.util.tensor_util import make_ndarray

    return RawEventFileLoader, Event, SessionLog, make_ndarray


def _hash_and_size(path: Path) -> tuple[str, int]:
    """The file's SHA-256 and size; anything but a regular file is refused first (a FIFO
    would block the loader)."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
        return digest.hexdigest(), os.fstat(handle.fileno()).st_size


def read_event_file(path: Path, steps: Steps) -> EventFile:
    """The scalars of one event file (module docstring); ``InputFileError`` when the
    ``tensorboard`` package is missing (nothing is read then)."""
    try:
        raw_loader, event_type, session_log, make_ndarray = _loader()
    except ImportError:
        raise InputFileError(str(path), MISSING_READER) from None
    sha256, size = _hash_and_size(path)
    into = EventFile(path=str(path), size=size, sha256=sha256)
    for record in raw_loader(str(path)).Load():
        into.records += 1
        into.bytes_read += len(record) + _RECORD_FRAMING_BYTES
        if into.records % 4096 == 0:
            steps.at(0.1)
        try:
            event = event_type.FromString(record)
        except Exception:  # protobuf's DecodeError: a record that is no Event
            into.skipped += 1
            continue
        _add_event(event, into.records, into, session_log.START, make_ndarray)
    return into


def _add_event(event: Any, offset: int, into: EventFile, start: int, make_ndarray: Any) -> None:
    if into.first_wall_time is None:
        into.first_wall_time = event.wall_time
    which = event.WhichOneof("what")
    if which == "file_version":
        into.file_version = into.file_version or event.file_version
    elif which == "session_log":
        if event.session_log.status == start and into.scalars:
            into.session_starts.append((offset, event.wall_time, event.step))
    elif which == "summary":
        for value in event.summary.value:
            if value.HasField("metadata") and value.metadata.plugin_data.plugin_name:
                into.plugins.setdefault(value.tag, value.metadata.plugin_data.plugin_name)
            number = _number(value, make_ndarray)
            if number is None or into.plugins.get(value.tag, "scalars") != "scalars":
                continue
            into.scalars.append(Scalar(offset, event.wall_time, event.step, value.tag, number))


def _number(value: Any, make_ndarray: Any) -> float | None:
    """The one number a summary value holds, or None (images, histograms, tensors of more
    than one value or of no number type)."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind != "tensor":
        return None
    try:
        array = make_ndarray(value.tensor)
    except (ValueError, TypeError):
        return None
    if array.size != 1 or array.dtype.kind not in "fiu":
        return None
    return float(array.reshape(-1)[0])
