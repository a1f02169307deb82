"""TFRecord framing of a TensorBoard event file, checked record by record.

Each record is ``uint64 length``, ``uint32 masked_crc32c(length bytes)``, ``length`` bytes of
data, ``uint32 masked_crc32c(data)``, all little-endian (TensorFlow's
``core/lib/io/record_writer.cc``; the same layout in tensorboardX and TensorBoard's own
writer). The CRC is CRC-32C (Castagnoli, reflected polynomial ``0x82F63B78``), masked as
``((crc >> 15) | (crc << 17)) + 0xa282ead8`` modulo 2**32.

A record whose length or data fails its CRC, or that the file ends inside, ends the reading:
what was read before it is kept (every record used passed both checks), and ``Framing``
says where and why. A writer that is still running, or was killed, leaves such a tail.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

_MASK_DELTA = 0xA282EAD8
_CASTAGNOLI = 0x82F63B78
MAX_RECORD_BYTES = 64 << 20
"""A longer record is no scalar event (images and graphs are the large ones): refused as
damage rather than held in memory."""


def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _CASTAGNOLI if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def crc32c(data: bytes) -> int:
    """CRC-32C of ``data`` (``crc32c(b"123456789") == 0xE3069283``, the check value)."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


@dataclass
class Framing:
    """What the reading of the records found besides them."""

    records: int = 0
    stopped_at: int | None = None
    """Byte offset of the first record not read, when the file does not end cleanly."""
    why: str | None = None
    sha256: str = ""


def read_records(handle: BinaryIO, framing: Framing) -> Iterator[tuple[int, bytes]]:
    """(record number from 1, data) of each record of ``handle`` whose framing checks;
    ``framing`` is filled as the reading goes (the SHA-256 of every byte read, where and
    why it stopped)."""
    digest = hashlib.sha256()
    offset = 0
    try:
        while True:
            header = handle.read(12)
            digest.update(header)
            if not header:
                return
            if len(header) < 12:
                framing.stopped_at, framing.why = offset, "the file ends inside a record header"
                return
            (length,) = struct.unpack("<Q", header[:8])
            (length_crc,) = struct.unpack("<I", header[8:])
            if masked_crc32c(header[:8]) != length_crc:
                framing.stopped_at, framing.why = offset, "a record length fails its CRC"
                return
            if length > MAX_RECORD_BYTES:
                framing.stopped_at = offset
                framing.why = f"a record of {length:,} bytes (more than a scalar event holds)"
                return
            body = handle.read(length + 4)
            digest.update(body)
            if len(body) < length + 4:
                framing.stopped_at, framing.why = offset, "the file ends inside a record"
                return
            data = body[:length]
            (data_crc,) = struct.unpack("<I", body[length:])
            if masked_crc32c(data) != data_crc:
                framing.stopped_at, framing.why = offset, "a record's data fails its CRC"
                return
            framing.records += 1
            yield framing.records, data
            offset += 12 + length + 4
    finally:
        for chunk in iter(lambda: handle.read(1 << 20), b""):  # the rest, for the hash
            digest.update(chunk)
        framing.sha256 = digest.hexdigest()
