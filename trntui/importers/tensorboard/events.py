"""``Event`` and ``Summary`` messages (TensorBoard's ``compat/proto/event.proto``,
``summary.proto``, ``tensor.proto``) -> the scalars of an event file.

``Event``: ``wall_time`` (1, double, seconds since the epoch), ``step`` (2, int64), then one of
``file_version`` (3, ``"brain.Event:2"``: the first record of every file), ``summary`` (5),
``session_log`` (7: ``status`` 1 = START, written when a TensorFlow session starts again
after a crash). ``Summary``: repeated ``value`` (1), each a ``tag`` (1), ``metadata`` (9, whose
``plugin_data.plugin_name`` says which dashboard reads it; a writer sends it with a tag's first
value only) and one of ``simple_value`` (2, float: what PyTorch's and tensorboardX's
``add_scalar`` write), ``histo`` (5), ``image`` (4), ``tensor`` (8: TF2's ``tf.summary.scalar``
writes a rank-0 ``DT_FLOAT`` tensor with plugin ``scalars``). A tensor counts as a scalar when
it holds exactly one number (``DT_FLOAT`` 1, ``DT_DOUBLE`` 2, ``DT_INT32`` 3, ``DT_INT64`` 9, in
``tensor_content`` or the typed ``*_val`` fields) and its tag is no other plugin's.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from trntui.importers.tensorboard.wire import (
    WireError,
    double,
    fields,
    float32,
    repeated_numbers,
    signed64,
    text,
)

FILE_VERSION_PREFIX = "brain.Event:"
SESSION_START = 1
_DTYPES = {1: ("<f", 4, 5, "f"), 2: ("<d", 8, 6, "d"), 3: ("<i", 4, 7, "v"), 9: ("<q", 8, 10, "v")}
"""dtype -> (struct format, bytes, the typed ``*_val`` field, its element kind)."""


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

    scalars: list[Scalar] = field(default_factory=list)
    file_version: str | None = None
    first_wall_time: float | None = None
    session_starts: list[tuple[int, float, int]] = field(default_factory=list)
    """(offset, wall time, step) of each ``SessionLog.START`` after the first event."""
    plugins: dict[str, str] = field(default_factory=dict)
    skipped: int = 0
    """Records that are no ``Event`` message (counted, never guessed at)."""


def _tensor_value(data: bytes) -> float | None:
    """The one number a ``TensorProto`` holds, or None (other types, more than one value)."""
    dtype = None
    content = b""
    typed: list[float] = []
    dims = 0
    for number, kind, raw in fields(data):
        if number == 1 and isinstance(raw, int):
            dtype = raw
        elif number == 2 and isinstance(raw, bytes):
            dims = sum(1 for sub, _, size in fields(raw) if sub == 2 and _dim_size(size) != 1)
        elif number == 4 and isinstance(raw, bytes):
            content = raw
        elif dtype in _DTYPES and number == _DTYPES[dtype][2]:
            typed.extend(repeated_numbers(kind, raw, _DTYPES[dtype][3]))
    if dtype not in _DTYPES or dims:
        return None
    fmt, size, _, _ = _DTYPES[dtype]
    if content:
        return float(struct.unpack(fmt, content)[0]) if len(content) == size else None
    return typed[0] if len(typed) == 1 else None


def _dim_size(raw: int | bytes) -> int | None:
    if not isinstance(raw, bytes):
        return None
    for number, _, value in fields(raw):
        if number == 1 and isinstance(value, int):
            return signed64(value)
    return 0


def _plugin(metadata: bytes) -> str | None:
    for number, _, raw in fields(metadata):
        if number == 1 and isinstance(raw, bytes):
            for sub, _, name in fields(raw):
                if sub == 1:
                    return text(name)
    return None


def _summary(data: bytes, offset: int, wall: float, step: int, into: EventFile) -> None:
    for number, _, raw in fields(data):
        if number != 1 or not isinstance(raw, bytes):
            continue
        tag = plugin = None
        value = None
        for sub, _, item in fields(raw):
            if sub == 1:
                tag = text(item)
            elif sub == 9 and isinstance(item, bytes):
                plugin = _plugin(item)
            elif sub == 2:
                value = float32(item)
            elif sub == 8 and isinstance(item, bytes):
                value = _tensor_value(item)
        if tag is not None and plugin:
            into.plugins.setdefault(tag, plugin)
        if tag is None or value is None:
            continue
        if into.plugins.get(tag, "scalars") != "scalars":
            continue
        into.scalars.append(Scalar(offset, wall, step, tag, value))


def add_event(data: bytes, offset: int, into: EventFile) -> None:
    """Read one record's ``Event`` into ``into``; a record that is no ``Event`` is counted
    as skipped."""
    try:
        wall, step = None, 0
        summary = session = None
        for number, _, raw in fields(data):
            if number == 1:
                wall = double(raw)
            elif number == 2 and isinstance(raw, int):
                step = signed64(raw)
            elif number == 3:
                into.file_version = into.file_version or text(raw)
            elif number == 5 and isinstance(raw, bytes):
                summary = raw
            elif number == 7 and isinstance(raw, bytes):
                session = raw
        if wall is None:
            into.skipped += 1
            return
        if into.first_wall_time is None:
            into.first_wall_time = wall
        if summary is not None:
            _summary(summary, offset, wall, step, into)
        if session is not None:
            status = next((v for n, _, v in fields(session) if n == 1), 0)
            if status == SESSION_START and into.scalars:
                into.session_starts.append((offset, wall, step))
    except WireError:
        into.skipped += 1
