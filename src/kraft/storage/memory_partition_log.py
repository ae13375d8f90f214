"""``MemoryPartitionLog``: the in-memory twin of ``PartitionLog``, for the deterministic simulator.

The same public API and the same answers (one contract suite runs against both:
``tests/unit/storage/partition_log_contract.py``), because both are ``BasePartitionLog`` over a store:
here ``MemorySegmentLog``, which mirrors ``SegmentLog`` rule for rule (segments rolled at the same
batches, truncation by whole batches, the epoch cache, the flushed end and the errors), so that even
retention deletes the same segments. No file, no clock, no randomness.

Crash model (as ``kraft.raft.log.MemoryLog``): ``crash()`` is a power loss followed by a restart.
Everything after the last flush is gone, as ``SegmentLog.crash`` cuts the files, and the state is
then rebuilt from what survived, as opening the directory would: the epoch cache derived from the
batches, the producer state replayed from them, the recovery point at the new log end. The high
watermark and log start offset are kept (clamped), as if the broker-level checkpoints had been
written just before the crash; a scenario that wants them staler sets them afterwards.
"""

from __future__ import annotations

import bisect
import uuid
from pathlib import PurePosixPath

from kraft.common.errors import CorruptRecordError, FatalError, KraftError
from kraft.records.batch import (
    NO_TIMESTAMP,
    BatchHeader,
    assign_offsets_and_epoch,
    batch_crc_valid,
    read_batch_header,
)
from kraft.storage.base_partition_log import BasePartitionLog
from kraft.storage.epoch_cache import EpochEntry, LeaderEpochCache
from kraft.storage.log_dir import partition_dir_name
from kraft.storage.segment_log import DEFAULT_SEGMENT_BYTES, SegmentInfo


class _MemorySegment:
    """One segment: its batches' bytes and base offsets."""

    __slots__ = ("base_offset", "bases", "batches", "max_timestamp", "max_timestamps", "next_offset", "size")

    def __init__(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self.batches: list[bytes] = []
        self.bases: list[int] = []
        self.max_timestamps: list[int] = []
        self.next_offset = base_offset
        self.size = 0
        self.max_timestamp = NO_TIMESTAMP

    def append(self, raw: bytes, base_offset: int, next_offset: int) -> None:
        header = read_batch_header(raw)
        assert header is not None
        self.batches.append(raw)
        self.bases.append(base_offset)
        self.max_timestamps.append(header.max_timestamp)
        self.max_timestamp = max(self.max_timestamp, header.max_timestamp)
        self.next_offset = next_offset
        self.size += len(raw)

    def forget_from(self, slot: int) -> None:
        """Forget batches ``slot`` and later."""
        if slot < len(self.batches):
            self.next_offset = self.bases[slot]
            del self.batches[slot:], self.bases[slot:], self.max_timestamps[slot:]
            self.size = sum(len(b) for b in self.batches)
            self.max_timestamp = max(self.max_timestamps, default=NO_TIMESTAMP)


class MemorySegmentLog:
    """``SegmentLog`` in memory: the same segments, rolls, truncations, epoch cache, flushed end and
    errors (see ``SegmentLog`` for each rule); ``crash()`` also reopens it."""

    def __init__(self, *, segment_bytes: int = DEFAULT_SEGMENT_BYTES, initial_offset: int = 0) -> None:
        if segment_bytes < 1:
            raise KraftError(f"segment_bytes must be positive, got {segment_bytes}")
        self._segment_bytes = segment_bytes
        self._segments = [_MemorySegment(initial_offset)]
        self._cache = LeaderEpochCache()
        self._start = initial_offset
        self._flushed = initial_offset
        self._closed = False

    # ------------------------------------------------------------------ positions and epochs

    def set_segment_bytes(self, segment_bytes: int) -> None:
        if segment_bytes < 1:
            raise KraftError(f"segment_bytes must be positive, got {segment_bytes}")
        self._segment_bytes = segment_bytes

    def set_index_config(self, interval_bytes: int | None, max_bytes: int | None) -> None:
        """Nothing to do: this store keeps no offset or time index (see ``first_candidate_base``)."""

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise KraftError("log is closed")

    def start_offset(self) -> int:
        return self._start

    def end_offset(self) -> int:
        return self._segments[-1].next_offset

    def last_flushed_offset(self) -> int:
        return self._flushed

    def segment_base_offsets(self) -> list[int]:
        return [s.base_offset for s in self._segments]

    def size_in_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    def segment_infos(self) -> list[SegmentInfo]:
        return [SegmentInfo(s.base_offset, s.next_offset, s.size, s.max_timestamp) for s in self._segments]

    def active_first_timestamp(self) -> int | None:
        active = self._segments[-1]
        return active.max_timestamps[0] if active.batches else None

    def timestamp_search_offset(self, timestamp_ms: int, from_offset: int) -> int | None:
        """The base of the first segment that can hold a match (no time index here: the caller's scan
        from there finds the same record as ``SegmentLog``'s closer start)."""
        for segment in self._segments:
            if segment.next_offset > from_offset and segment.max_timestamp >= timestamp_ms:
                return max(segment.base_offset, from_offset)
        return None

    def latest_epoch(self) -> int | None:
        return self._cache.latest_epoch()

    def epoch_entries(self) -> tuple[EpochEntry, ...]:
        return self._cache.entries

    def initialize_leader_epoch(self, epoch: int) -> None:
        self._check_open()
        latest = self._cache.latest_epoch()
        if latest is not None and epoch < latest:
            raise FatalError(f"cannot start leader epoch {epoch}: the log is already at epoch {latest}")
        self._cache.assign(epoch, self.end_offset())

    # ------------------------------------------------------------------ appends

    @staticmethod
    def _parse(batches: bytes) -> list[tuple[int, BatchHeader]]:
        if not batches:
            raise KraftError("attempt to append an empty set of batches")
        out: list[tuple[int, BatchHeader]] = []
        pos = 0
        while pos < len(batches):
            header = read_batch_header(batches, pos)
            if header is None or pos + header.size_in_bytes > len(batches):
                raise CorruptRecordError(f"appended data ends with a partial batch at position {pos}")
            if not batch_crc_valid(batches, pos, header):
                raise CorruptRecordError(f"CRC mismatch in appended batch at position {pos}")
            out.append((pos, header))
            pos += header.size_in_bytes
        return out

    def append_as_leader(self, batches: bytes, epoch: int) -> int:
        self._check_open()
        parsed = self._parse(batches)
        latest = self._cache.latest_epoch()
        if latest is not None and epoch < latest:
            raise FatalError(f"leader append in epoch {epoch} but the log is already at epoch {latest}")
        first = next_offset = self.end_offset()
        items: list[tuple[bytes, int, int]] = []
        for pos, header in parsed:
            raw = batches[pos : pos + header.size_in_bytes]
            if header.base_offset != next_offset or header.partition_leader_epoch != epoch:
                raw = assign_offsets_and_epoch(raw, next_offset, epoch)
            items.append((raw, next_offset, next_offset + header.last_offset_delta + 1))
            next_offset += header.last_offset_delta + 1
        if latest is None or epoch > latest:
            self._cache.assign(epoch, first)
        self._write(items)
        return first

    def append_as_follower(self, batches: bytes, epoch: int) -> int:
        self._check_open()
        parsed = self._parse(batches)
        expected = self.end_offset()
        for _, header in parsed:
            if header.base_offset != expected:
                raise FatalError(
                    f"follower append of a batch at offset {header.base_offset}, "
                    f"expected {expected} (log end)"
                )
            if header.partition_leader_epoch > epoch:
                raise FatalError(
                    f"follower append of a batch of epoch {header.partition_leader_epoch} "
                    f"above the current {epoch}"
                )
            expected = header.next_offset
        cache = LeaderEpochCache(self._cache.entries)
        for _, header in parsed:
            batch_epoch = header.partition_leader_epoch
            latest = cache.latest()
            if latest is not None and batch_epoch < latest.epoch:
                if latest.start_offset < header.base_offset:
                    raise FatalError(
                        f"follower append of a batch of epoch {batch_epoch} at offset {header.base_offset} "
                        f"after epoch {latest.epoch} began at offset {latest.start_offset}"
                    )
                cache.truncate_from_end(header.base_offset)
                latest = cache.latest()
            if latest is None or batch_epoch > latest.epoch:
                cache.assign(batch_epoch, header.base_offset)
        first = self.end_offset()
        self._cache = cache
        self._write(
            [(batches[pos : pos + h.size_in_bytes], h.base_offset, h.next_offset) for pos, h in parsed]
        )
        return first

    def _write(self, items: list[tuple[bytes, int, int]]) -> None:
        """Append (bytes, base offset, next offset), rolling as ``SegmentLog`` does: before a batch
        that would take a non-empty segment past ``segment_bytes``."""
        for raw, base, next_offset in items:
            segment = self._segments[-1]
            if segment.size > 0 and segment.size + len(raw) > self._segment_bytes:
                segment = self._new_segment()
            segment.append(raw, base, next_offset)

    def _new_segment(self) -> _MemorySegment:
        segment = _MemorySegment(self.end_offset())
        self._segments.append(segment)
        return segment

    def roll(self) -> bool:
        self._check_open()
        if not self._segments[-1].size:
            return False
        self._new_segment()
        return True

    # ------------------------------------------------------------------ reads

    def read(self, start_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        self._check_open()
        if start_offset >= self.end_offset():
            return b""
        if start_offset < self._start:
            raise KraftError(f"read at offset {start_offset} is below the log start offset {self._start}")
        s = bisect.bisect_right([seg.base_offset for seg in self._segments], start_offset) - 1
        parts: list[bytes] = []
        total = 0
        first = True
        for segment in self._segments[s:]:
            slot = max(bisect.bisect_right(segment.bases, start_offset) - 1, 0) if first else 0
            for i in range(slot, len(segment.batches)):
                raw = segment.batches[i]
                if max_offset is not None:
                    following = segment.bases[i + 1] if i + 1 < len(segment.bases) else segment.next_offset
                    if following > max_offset:
                        return b"".join(parts)
                if parts and total + len(raw) > max_bytes:
                    return b"".join(parts)
                parts.append(raw)
                total += len(raw)
            if segment.batches:
                first = False
        return b"".join(parts)

    # ------------------------------------------------------------------ truncation and the start

    def truncate_to(self, offset: int) -> None:
        self._check_open()
        if offset < self._start:
            raise KraftError(f"cannot truncate to offset {offset}, below the log start offset {self._start}")
        self._cache.truncate_from_end(offset)
        if offset >= self.end_offset():
            return
        while len(self._segments) > 1 and self._segments[-1].base_offset >= offset:
            self._segments.pop()
        segment = self._segments[-1]
        j = bisect.bisect_right(segment.bases, offset) - 1
        batch_next = segment.bases[j + 1] if j + 1 < len(segment.bases) else segment.next_offset
        segment.forget_from(j if j >= 0 and batch_next > offset else j + 1)
        self._cache.truncate_from_end(self.end_offset())
        self._flushed = min(self._flushed, self.end_offset())

    def truncate_fully_and_start_at(self, offset: int) -> None:
        self._check_open()
        self._segments = [_MemorySegment(offset)]
        self._start = offset
        self._cache.clear()
        self._flushed = offset

    def advance_start_offset(self, offset: int) -> bool:
        self._check_open()
        if offset <= self._start:
            return False
        if offset > self._flushed:
            raise KraftError(
                f"cannot start the log at offset {offset}, beyond its flushed end {self._flushed}"
            )
        self._start = offset
        self._cache.truncate_from_start(offset)
        if self._segments[-1].base_offset < offset and offset == self.end_offset():
            self._new_segment()
        while len(self._segments) > 1 and self._segments[1].base_offset <= offset:
            self._segments.pop(0)
        return True

    # ------------------------------------------------------------------ durability and lifecycle

    def flush(self) -> None:
        self._check_open()
        self._flushed = self.end_offset()

    def close(self) -> None:
        self._closed = True

    def crash(self) -> None:
        """Lose everything after the flushed end, as ``SegmentLog.crash`` does to the files, then
        reopen as ``SegmentLog`` would: the epoch cache derived from the surviving batches."""
        flushed = self._flushed
        kept: list[_MemorySegment] = []
        for i, segment in enumerate(self._segments):
            if segment.base_offset > flushed and i > 0:
                continue
            if segment.next_offset > flushed:
                segment.forget_from(bisect.bisect_left(segment.bases, flushed))
            kept.append(segment)
        self._segments = kept
        cache = LeaderEpochCache()
        for segment in kept:
            for raw in segment.batches:
                header = read_batch_header(raw)
                assert header is not None
                latest = cache.latest_epoch()
                if latest is None or header.partition_leader_epoch > latest:
                    cache.assign(header.partition_leader_epoch, header.base_offset)
        cache.truncate_from_start(self._start)
        self._cache = cache
        self._flushed = self.end_offset()
        self._closed = False


class MemoryPartitionLog(BasePartitionLog):
    """A partition log in memory: ``PartitionLog``'s API and answers, with ``crash()`` as a power loss
    (see the module docstring). ``directory`` is a name only (``<memory>/<topic>-<partition>``)."""

    def __init__(
        self,
        topic: str,
        partition: int,
        topic_id: uuid.UUID | None,
        *,
        high_watermark: int = 0,
        log_start_offset: int | None = None,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        segment_ms: int | None = None,
        now_ms: int = 0,
    ) -> None:
        self._store_memory = MemorySegmentLog(
            segment_bytes=segment_bytes, initial_offset=0 if log_start_offset is None else log_start_offset
        )
        self._name = partition_dir_name(topic, partition)
        # Producer-state snapshots, by offset: durable when written, so a crash keeps them.
        self._snapshots: dict[int, bytes] = {}
        super().__init__(
            topic,
            partition,
            topic_id,
            self._store_memory,
            high_watermark=high_watermark,
            segment_bytes=segment_bytes,
            segment_ms=segment_ms,
            now_ms=now_ms,
        )

    @property
    def directory(self) -> PurePosixPath:
        return PurePosixPath("<memory>", self._name)

    def _snapshot_offsets(self) -> list[int]:
        return list(self._snapshots)

    def _read_snapshot(self, offset: int) -> bytes:
        return self._snapshots[offset]

    def _write_snapshot(self, offset: int, data: bytes) -> None:
        self._snapshots[offset] = data

    def _delete_snapshot(self, offset: int) -> None:
        self._snapshots.pop(offset, None)

    def crash(self) -> None:
        """A power loss and restart: everything after the last flush is lost, the rest is rebuilt;
        the high watermark and log start offset are kept, clamped. The log stays usable."""
        self._store_memory.crash()
        self._open(self.high_watermark)
