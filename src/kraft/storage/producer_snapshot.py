"""Kafka's producer-state snapshot files, ``<offset %020d>.snapshot`` (``ProducerStateManager``).

A snapshot holds the idempotent producers' state as of ``offset`` (everything below it applied), so
that open replays only the batches after the latest snapshot. Format (big-endian, Kafka's version 1)::

    int16   version (1)
    uint32  CRC-32C of every byte after this field
    int32   entry count, then per producer (46 bytes):
        int64 producer id, int16 epoch, int32 last sequence, int64 last offset,
        int32 offset delta (last offset - first offset of its last batch), int64 timestamp,
        int32 coordinator epoch (-1: no transactions here), int64 current txn first offset (-1)

As in Kafka, only each producer's *last* batch is kept: after a restart, a retry of one of its four
earlier batches is no longer recognised as a duplicate. Entries are written by ascending producer id
(Kafka writes hash-map order), so the same state gives the same bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from kraft.common.errors import StorageError
from kraft.records.batch import crc32c
from kraft.storage.producer_state import BatchMetadata, ProducerStateEntry

SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1
NO_COORDINATOR_EPOCH = -1
_HEAD = struct.Struct(">hI")
_COUNT = struct.Struct(">i")
_ENTRY = struct.Struct(">qhiqiqiq")


def snapshot_file_name(offset: int) -> str:
    return f"{offset:020d}{SNAPSHOT_SUFFIX}"


def parse_snapshot_file_name(name: str) -> int | None:
    stem = name[: -len(SNAPSHOT_SUFFIX)]
    if not name.endswith(SNAPSHOT_SUFFIX) or len(stem) != 20 or not stem.isdigit():
        return None
    return int(stem)


def _wrap_sub(seq: int, delta: int) -> int:
    """``seq - delta`` on sequences that wrap from INT32_MAX to 0 (Kafka's ``decrementSequence``)."""
    return seq - delta if seq >= delta else 2**31 + seq - delta


def encode_producer_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    body = bytearray()
    items = sorted(entries, key=lambda e: e.producer_id)
    body += _COUNT.pack(len(items))
    for e in items:
        last = e.batches[-1] if e.batches else None
        body += _ENTRY.pack(
            e.producer_id,
            e.producer_epoch,
            e.last_seq,
            -1 if last is None else last.last_offset,
            0 if last is None else last.last_offset - last.first_offset,
            e.last_timestamp,
            NO_COORDINATOR_EPOCH,
            -1,
        )
    return _HEAD.pack(SNAPSHOT_VERSION, crc32c(body)) + bytes(body)


def decode_producer_snapshot(data: bytes) -> list[ProducerStateEntry]:
    """The entries of a snapshot file.

    Raises:
        StorageError: unknown version, CRC mismatch, or a length that does not match the count.
    """
    if len(data) < _HEAD.size + _COUNT.size:
        raise StorageError(f"producer snapshot of {len(data)} bytes is too short")
    version, crc = _HEAD.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise StorageError(f"producer snapshot has unknown version {version}")
    if crc32c(data[_HEAD.size :]) != crc:
        raise StorageError("producer snapshot is corrupt (CRC mismatch)")
    (count,) = _COUNT.unpack_from(data, _HEAD.size)
    start = _HEAD.size + _COUNT.size
    if count < 0 or len(data) != start + count * _ENTRY.size:
        raise StorageError(f"producer snapshot holds {len(data) - start} bytes for {count} entries")
    out: list[ProducerStateEntry] = []
    for pid, epoch, last_seq, last_offset, delta, ts, _coord, _txn in _ENTRY.iter_unpack(data[start:]):
        entry = ProducerStateEntry(pid, epoch, last_timestamp=ts)
        if last_offset >= 0:
            entry.batches.append(
                BatchMetadata(_wrap_sub(last_seq, delta), last_seq, last_offset - delta, last_offset, ts)
            )
        out.append(entry)
    return out
