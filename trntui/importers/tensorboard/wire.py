"""The protocol buffer wire format, as far as event files need it.

A message is a sequence of fields, each a key ``(field_number << 3) | wire_type`` (a varint)
and a value: wire type 0 a varint (base-128, least significant group first, at most 10
bytes), 1 eight bytes (fixed64, double), 2 a varint length and that many bytes (strings,
bytes, nested messages, packed repeated numbers), 5 four bytes (fixed32, float). Types 3 and
4 (groups) are obsolete and appear in no TensorBoard message. A field may repeat; for a
singular field the last one wins. A repeated number may come packed (one type-2 field of
concatenated values) or one field per value: a reader takes both (protobuf's encoding
guide). Unknown fields are skipped, so messages from newer writers still read.

Malformed bytes (a varint or a length running past the end, a group) raise ``WireError``;
the record they came from passed its CRC, so that means a message of another shape.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

VARINT = 0
FIXED64 = 1
LENGTH = 2
FIXED32 = 5


class WireError(ValueError):
    """Bytes that are not a protocol buffer message."""


def varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at ``at``: (value, position after it)."""
    value = shift = 0
    for index in range(at, min(at + 10, len(data))):
        byte = data[index]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, index + 1
        shift += 7
    raise WireError("varint runs past the end or past 10 bytes")


def fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field: an int for varints, the bytes of a
    fixed64, fixed32 or length-delimited value otherwise."""
    at, end = 0, len(data)
    while at < end:
        key, at = varint(data, at)
        number, kind = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if kind == VARINT:
            value, at = varint(data, at)
            yield number, kind, value
            continue
        if kind == LENGTH:
            size, at = varint(data, at)
        elif kind == FIXED64:
            size = 8
        elif kind == FIXED32:
            size = 4
        else:
            raise WireError(f"wire type {kind} (groups are not used by event files)")
        if at + size > end:
            raise WireError("a value runs past the end of its message")
        yield number, kind, data[at : at + size]
        at += size


def signed64(value: int) -> int:
    """An ``int64`` read as a varint (two's complement in 64 bits)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def double(raw: int | bytes) -> float:
    if not isinstance(raw, bytes) or len(raw) != 8:
        raise WireError("a double is not 8 bytes")
    return float(struct.unpack("<d", raw)[0])


def float32(raw: int | bytes) -> float:
    if not isinstance(raw, bytes) or len(raw) != 4:
        raise WireError("a float is not 4 bytes")
    return float(struct.unpack("<f", raw)[0])


def text(raw: int | bytes) -> str:
    if not isinstance(raw, bytes):
        raise WireError("a string is not length-delimited")
    return raw.decode("utf-8", errors="replace")


def repeated_numbers(kind: int, raw: int | bytes, element: str) -> list[float]:
    """The values of one field of a repeated number, packed or not: ``element`` is
    ``"f"`` (float, fixed32), ``"d"`` (double, fixed64) or ``"v"`` (a varint type)."""
    if element == "v":
        if kind == VARINT:
            assert isinstance(raw, int)
            return [float(signed64(raw))]
        if kind != LENGTH or not isinstance(raw, bytes):
            raise WireError("a varint value is neither a varint nor packed")
        values, at = [], 0
        while at < len(raw):
            value, at = varint(raw, at)
            values.append(float(signed64(value)))
        return values
    size = 4 if element == "f" else 8
    if not isinstance(raw, bytes) or len(raw) % size:
        raise WireError("packed values do not fill whole elements")
    return [float(v) for v in struct.unpack(f"<{len(raw) // size}{element}", raw)]
