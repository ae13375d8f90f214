"""The replicated log as the consensus core sees it: ``ReplicatedLog`` and its in-memory twin.

``kraft.storage.metadata_log.MetadataLog`` implements the same Protocol on real files; one contract test
suite (``tests/unit/raft/log_contract.py``) runs against both. The unit is whole RecordBatch v2 bytes.

Invariants every implementation keeps:
* ``start_offset() <= last_flushed_offset() <= end_offset()``; flushed bytes survive ``crash()``.
* Offsets are dense from ``start_offset()``; ``start_offset() > 0`` implies a snapshot exists at it.
* The epoch cache is non-decreasing in both epoch and start offset and is truncated with the log.
"""

from __future__ import annotations

import bisect
import enum
from dataclasses import dataclass
from typing import Protocol

from kraft.common.errors import CorruptRecordError, FatalError, KraftError
from kraft.common.fast_init import speed_up_inits
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import BatchHeader, assign_offsets_and_epoch, batch_crc_valid, iter_batch_headers


class ValidationKind(enum.Enum):
    VALID = enum.auto()
    DIVERGING = enum.auto()
    SNAPSHOT = enum.auto()


@dataclass(frozen=True, slots=True)
class ValidOffsetAndEpoch:
    """Result of checking a follower's (fetch offset, last fetched epoch) against this log.

    For ``DIVERGING`` the position is (end offset, epoch) to send as DivergingEpoch; for ``SNAPSHOT``
    it is the id of the snapshot the follower must fetch; for ``VALID`` it echoes the input.
    """

    kind: ValidationKind
    offset_and_epoch: OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class LogAppendInfo:
    first_offset: int
    last_offset: int


class RawSnapshotReader(Protocol):
    """A frozen snapshot's bytes (RecordBatch v2 stream, offsets from 0)."""

    @property
    def snapshot_id(self) -> OffsetAndEpoch: ...

    def size_in_bytes(self) -> int: ...

    def read(self, position: int, max_bytes: int) -> bytes:
        """Bytes ``[position, position + max_bytes)`` clipped to the end (not batch-aligned)."""
        ...


class RawSnapshotWriter(Protocol):
    """Builds a snapshot; invisible to readers until ``freeze()``."""

    @property
    def snapshot_id(self) -> OffsetAndEpoch: ...

    def size_in_bytes(self) -> int: ...

    def append(self, data: bytes) -> None: ...

    def freeze(self) -> None:
        """Make the snapshot durable and visible (fsync, atomic rename)."""
        ...

    def abort(self) -> None:
        """Discard a snapshot that was never frozen."""
        ...


class ReplicatedLog(Protocol):
    def start_offset(self) -> int:
        """The log start offset: 0, or the end offset of the earliest retained snapshot."""
        ...

    def end_offset(self) -> int:
        """Offset after the last entry (LEO)."""
        ...

    def last_fetched_epoch(self) -> int:
        """Epoch of the last entry; the latest snapshot's epoch if the log is empty after it; else 0."""
        ...

    def last_flushed_offset(self) -> int: ...

    def append_as_leader(self, batches: bytes, epoch: int) -> LogAppendInfo:
        """Append whole batches, assigning offsets from ``end_offset()`` and ``epoch`` as their
        partitionLeaderEpoch. Raises ``FatalError`` if ``epoch`` is below the last cached epoch."""
        ...

    def append_as_follower(self, batches: bytes, epoch: int) -> LogAppendInfo:
        """Append batches fetched from the leader as they are; their base offset must equal
        ``end_offset()`` (else ``FatalError``). New batch epochs enter the epoch cache. A batch
        whose CRC does not match raises ``CorruptRecordError`` before anything is written: the
        fetch path leaves that check to the log, as Kafka's ``appendAsFollower`` does."""
        ...

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        """Whole batches from the batch that contains ``start_offset``: at least one batch if any
        exists at or after it, then more while the total stays within ``max_bytes``."""
        ...

    def truncate_to(self, offset: int) -> None:
        """Drop every entry at or after ``offset`` (and the epoch cache beyond it)."""
        ...

    def truncate_to_latest_snapshot(self) -> bool:
        """If the latest snapshot is ahead of the log or disagrees with it, replace the whole log by
        it (start = end = snapshot end offset). Returns whether it did."""
        ...

    def initialize_leader_epoch(self, epoch: int) -> None:
        """A new leader's epoch starts at ``end_offset()``: add (epoch, LEO) to the epoch cache."""
        ...

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """(start offset of the first epoch above ``epoch``, largest epoch <= ``epoch``), or
        (LEO, last epoch) when no larger epoch exists (spec section 4.1)."""
        ...

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch: ...

    def flush(self) -> None:
        """Make everything appended so far durable."""
        ...

    def latest_snapshot_id(self) -> OffsetAndEpoch | None: ...

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None: ...

    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter | None:
        """A writer for a snapshot of this log's own committed prefix; ``None`` if it already exists.
        Raises ``KraftError`` if the id is not a valid (offset, epoch) of the log."""
        ...

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter:
        """A writer for a snapshot downloaded from the leader (no validation against the log)."""
        ...

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotReader | None: ...

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        """Advance the log start offset to ``snapshot_id.offset`` (if it is a frozen snapshot at or
        below the flushed end), deleting older entries and snapshots. Returns whether it changed."""
        ...


# --------------------------------------------------------------------------------------------------
# MemoryLog: the in-memory twin (Kafka's MockLog), used by unit tests and the simulator.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _StoredBatch:
    base_offset: int
    last_offset: int
    epoch: int
    data: bytes


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """One epoch cache entry: ``epoch`` starts at ``start_offset``."""

    epoch: int
    start_offset: int


class MemorySnapshotReader:
    """A frozen in-memory snapshot."""

    __slots__ = ("_data", "_snapshot_id")

    def __init__(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        self._snapshot_id = snapshot_id
        self._data = data

    @property
    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def read(self, position: int, max_bytes: int) -> bytes:
        if position < 0 or max_bytes < 0:
            raise ValueError(f"negative position {position} or max_bytes {max_bytes}")
        return self._data[position : position + max_bytes]


class MemorySnapshotWriter:
    """Buffers snapshot bytes; ``freeze`` publishes them to the owning ``MemoryLog``."""

    __slots__ = ("_buffer", "_log", "_snapshot_id", "_state")

    def __init__(self, log: MemoryLog, snapshot_id: OffsetAndEpoch) -> None:
        self._log = log
        self._snapshot_id = snapshot_id
        self._buffer = bytearray()
        self._state = "open"  # open -> frozen | aborted

    @property
    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._buffer)

    def append(self, data: bytes) -> None:
        if self._state != "open":
            raise KraftError(f"snapshot {self._snapshot_id} is {self._state}; cannot append")
        self._buffer += data

    def freeze(self) -> None:
        if self._state != "open":
            raise KraftError(f"snapshot {self._snapshot_id} is {self._state}; cannot freeze")
        self._state = "frozen"
        self._log._publish_snapshot(self._snapshot_id, bytes(self._buffer))

    def abort(self) -> None:
        if self._state == "open":
            self._state = "aborted"
            self._buffer.clear()

    @property
    def is_frozen(self) -> bool:
        return self._state == "frozen"


class MemoryLog:
    """``ReplicatedLog`` over real RecordBatch v2 bytes held in memory.

    Durability model: ``flush()`` marks everything appended so far as durable; ``crash()`` forgets
    every batch past the last flush (a partly written tail batch included, as a file log's recovery
    would) and the epoch cache entries that started there. Frozen snapshots and log start offset
    changes are durable at once (a file log renames and checkpoints them before returning).
    """

    def __init__(self) -> None:
        self._batches: list[_StoredBatch] = []
        self._bases: list[int] = []  # base offsets of ``_batches``, for bisect
        self._epochs: list[EpochEntry] = []
        self._snapshots: dict[OffsetAndEpoch, bytes] = {}
        # (earliest, latest) snapshot ids, or None when unknown: both are read on every poll and
        # fetch, and comparing ids runs Python code. Reset wherever _snapshots changes.
        self._snapshot_bounds: tuple[OffsetAndEpoch, OffsetAndEpoch] | None = None
        self._log_start = 0
        self._flushed = 0
        # end_offset() is read several times per poll: kept here, set wherever the batches or the
        # log start change (_reset_end).
        self._end = 0

    # ---- observation -------------------------------------------------------------------------

    def start_offset(self) -> int:
        return self._log_start

    def end_offset(self) -> int:
        return self._end

    def _reset_end(self) -> None:
        self._end = self._batches[-1].last_offset + 1 if self._batches else self._log_start

    def last_flushed_offset(self) -> int:
        return self._flushed

    def last_fetched_epoch(self) -> int:
        if self._epochs:
            return self._epochs[-1].epoch
        latest = self.latest_snapshot_id()
        return latest.epoch if latest is not None else 0

    def epoch_entries(self) -> tuple[EpochEntry, ...]:
        """The epoch cache, oldest first (for tests and invariant checkers)."""
        return tuple(self._epochs)

    def batches(self) -> list[bytes]:
        """Every retained batch, in offset order (for tests and invariant checkers)."""
        return [b.data for b in self._batches]

    def batches_from(self, start_offset: int) -> list[bytes]:
        """The retained batches from the one holding ``start_offset`` on, each as stored: what
        ``read(start_offset, <no limit>)`` concatenates (for invariant checkers)."""
        if start_offset < self._log_start or start_offset > self.end_offset():
            raise KraftError(
                f"read at offset {start_offset} outside the log [{self._log_start}, {self.end_offset()}]"
            )
        index = max(bisect.bisect_right(self._bases, start_offset) - 1, 0)
        return [b.data for b in self._batches[index:] if b.last_offset >= start_offset]

    # ---- appends -----------------------------------------------------------------------------

    def append_as_leader(self, batches: bytes, epoch: int) -> LogAppendInfo:
        if self._epochs and epoch < self._epochs[-1].epoch:
            raise FatalError(
                f"leader append in epoch {epoch} below the log's last epoch {self._epochs[-1].epoch}"
            )
        parsed = self._split(batches)
        first = self.end_offset()
        for raw, header in parsed:
            base = self.end_offset()
            data = assign_offsets_and_epoch(raw, base, epoch)
            self._add(_StoredBatch(base, base + header.last_offset_delta, epoch, data))
        return LogAppendInfo(first, self.end_offset() - 1)

    def append_as_follower(self, batches: bytes, epoch: int) -> LogAppendInfo:
        parsed = self._split(batches)
        first = self.end_offset()
        for raw, header in parsed:
            if header.base_offset != self.end_offset():
                raise FatalError(
                    f"follower append of a batch at offset {header.base_offset} but the log ends at "
                    f"{self.end_offset()}"
                )
            if header.partition_leader_epoch > epoch:
                raise FatalError(
                    f"follower append of a batch of epoch {header.partition_leader_epoch} above the "
                    f"leader's epoch {epoch}"
                )
            if self._epochs and header.partition_leader_epoch < self._epochs[-1].epoch:
                raise FatalError(
                    f"follower append of a batch of epoch {header.partition_leader_epoch} below the "
                    f"log's last epoch {self._epochs[-1].epoch}"
                )
            epoch_of_batch = header.partition_leader_epoch
            self._add(_StoredBatch(header.base_offset, header.last_offset, epoch_of_batch, raw))
        return LogAppendInfo(first, self.end_offset() - 1)

    @staticmethod
    def _split(data: bytes) -> list[tuple[bytes, BatchHeader]]:
        out: list[tuple[bytes, BatchHeader]] = []
        for pos, header in iter_batch_headers(data):
            raw = bytes(data[pos : pos + header.size_in_bytes])
            if not batch_crc_valid(raw, 0, header):
                raise CorruptRecordError(f"CRC mismatch in appended batch at offset {header.base_offset}")
            out.append((raw, header))
        if not out:
            raise ValueError("attempt to append no whole record batch")
        return out

    def _add(self, batch: _StoredBatch) -> None:
        if not self._epochs or batch.epoch > self._epochs[-1].epoch:
            self._epochs.append(EpochEntry(batch.epoch, batch.base_offset))
        self._batches.append(batch)
        self._bases.append(batch.base_offset)
        self._end = batch.last_offset + 1

    # ---- reads -------------------------------------------------------------------------------

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        if start_offset < self._log_start or start_offset > self.end_offset():
            raise KraftError(
                f"read at offset {start_offset} outside the log [{self._log_start}, {self.end_offset()}]"
            )
        # The batch containing start_offset is the last one whose base is <= start_offset.
        index = max(bisect.bisect_right(self._bases, start_offset) - 1, 0)
        batches = self._batches
        parts: list[bytes] = []
        size = 0
        for i in range(index, len(batches)):
            batch = batches[i]
            if batch.last_offset < start_offset:
                continue
            data = batch.data
            if parts and size + len(data) > max_bytes:
                break
            parts.append(data)
            size += len(data)
        # One join (a single batch is returned as stored: bytes are immutable) instead of
        # growing a bytearray and copying it once more.
        return b"".join(parts)

    # ---- truncation --------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        if offset < self._log_start:
            raise FatalError(f"truncation to {offset} below the log start offset {self._log_start}")
        index = bisect.bisect_left(self._bases, offset)
        if index > 0 and self._batches[index - 1].last_offset >= offset:
            # Batches are atomic: truncating into the middle of one drops the whole batch.
            index -= 1
        del self._batches[index:]
        del self._bases[index:]
        self._reset_end()
        end = self._end
        self._epochs = [e for e in self._epochs if e.start_offset < end]
        self._flushed = min(self._flushed, end)

    def truncate_to_latest_snapshot(self) -> bool:
        latest = self.latest_snapshot_id()
        if latest is None:
            return False
        if snapshot_supersedes_log(self, latest):
            self._batches.clear()
            self._bases.clear()
            self._epochs.clear()
            for sid in [s for s in self._snapshots if s < latest]:
                del self._snapshots[sid]
            self._snapshot_bounds = None
            self._log_start = latest.offset
            self._flushed = latest.offset
            self._reset_end()
            return True
        return False

    def crash(self) -> None:
        """Lose everything not flushed, as a process kill followed by log recovery would."""
        index = bisect.bisect_left(self._bases, self._flushed)
        if index > 0 and self._batches[index - 1].last_offset >= self._flushed:
            index -= 1  # a batch only partly covered by the flush is a torn write
        del self._batches[index:]
        del self._bases[index:]
        self._reset_end()
        end = self._end
        self._epochs = [e for e in self._epochs if e.start_offset < end]
        self._flushed = end

    def flush(self) -> None:
        self._flushed = self.end_offset()

    # ---- epochs ------------------------------------------------------------------------------

    def initialize_leader_epoch(self, epoch: int) -> None:
        start = self.end_offset()
        self._epochs = [e for e in self._epochs if e.start_offset < start and e.epoch < epoch]
        self._epochs.append(EpochEntry(epoch, start))

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        earliest = self.earliest_snapshot_id()
        floor_epoch = earliest.epoch if earliest is not None else 0
        for entry in self._epochs:
            if entry.epoch > epoch:
                return OffsetAndEpoch(entry.start_offset, floor_epoch)
            floor_epoch = entry.epoch
        return OffsetAndEpoch(self.end_offset(), self.last_fetched_epoch())

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        return validate_offset_and_epoch(self, offset, epoch)

    # ---- snapshots ---------------------------------------------------------------------------

    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        if not self._snapshots:
            return None
        bounds = self._snapshot_bounds
        if bounds is None:
            bounds = self._snapshot_bounds = (min(self._snapshots), max(self._snapshots))
        return bounds[1]

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        if not self._snapshots:
            return None
        bounds = self._snapshot_bounds
        if bounds is None:
            bounds = self._snapshot_bounds = (min(self._snapshots), max(self._snapshots))
        return bounds[0]

    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter | None:
        if snapshot_id.offset < self._log_start:
            return None
        validated = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if validated.kind is not ValidationKind.VALID:
            raise KraftError(f"snapshot id {snapshot_id} is not a valid position of the log: {validated}")
        if snapshot_id in self._snapshots:
            return None
        return MemorySnapshotWriter(self, snapshot_id)

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter:
        return MemorySnapshotWriter(self, snapshot_id)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotReader | None:
        data = self._snapshots.get(snapshot_id)
        return None if data is None else MemorySnapshotReader(snapshot_id, data)

    def _publish_snapshot(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        # Frozen snapshots are immutable: a second freeze of the same id keeps the first bytes.
        self._snapshots.setdefault(snapshot_id, data)
        self._snapshot_bounds = None

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        if snapshot_id not in self._snapshots:
            return False
        if snapshot_id.offset <= self._log_start or snapshot_id.offset > self._flushed:
            return False
        for sid in [s for s in self._snapshots if s < snapshot_id]:
            del self._snapshots[sid]
        self._snapshot_bounds = None
        keep = [b for b in self._batches if b.last_offset >= snapshot_id.offset]
        self._batches = keep
        self._bases = [b.base_offset for b in keep]
        # The epoch in force at the new start keeps an entry, moved up to the new start.
        last_before: EpochEntry | None = None
        remaining: list[EpochEntry] = []
        for entry in self._epochs:
            if entry.start_offset <= snapshot_id.offset:
                last_before = entry
            else:
                remaining.append(entry)
        if last_before is not None:
            remaining.insert(0, EpochEntry(last_before.epoch, snapshot_id.offset))
        self._epochs = remaining
        self._log_start = snapshot_id.offset
        self._reset_end()
        return True


def snapshot_supersedes_log(log: ReplicatedLog, snapshot_id: OffsetAndEpoch) -> bool:
    """Whether the log must be replaced whole by the snapshot ``snapshot_id``: the snapshot ends past
    the log, or the log's entry before ``snapshot_id.offset`` is not of ``snapshot_id.epoch``.

    Comparing only (epoch, offset) of the log's last entry is not enough: a follower whose
    uncommitted tail came from a newer epoch (say epoch 2 ending at offset 34) and that is sent the
    leader's snapshot (81, epoch 1) has a *newer* last epoch yet must drop that tail (found by the
    simulator, flaky-network seed 2035).
    """
    if snapshot_id.offset > log.end_offset() or snapshot_id.epoch > log.last_fetched_epoch():
        return True
    held = log.end_offset_for_epoch(snapshot_id.epoch)
    return held.epoch != snapshot_id.epoch or held.offset < snapshot_id.offset


def validate_offset_and_epoch(log: ReplicatedLog, offset: int, epoch: int) -> ValidOffsetAndEpoch:
    """Check a follower's fetch position against ``log`` (spec section 4.1); shared by every log."""
    if log.start_offset() == 0 and offset == 0:
        return ValidOffsetAndEpoch(ValidationKind.VALID, OffsetAndEpoch(0, 0))
    earliest = log.earliest_snapshot_id()
    if earliest is not None and (
        offset < log.start_offset()
        or (offset == log.start_offset() and epoch != earliest.epoch)
        or epoch < earliest.epoch
    ):
        latest = log.latest_snapshot_id()
        if latest is None:
            raise FatalError(f"log start offset {log.start_offset()} > 0 but no snapshot exists")
        return ValidOffsetAndEpoch(ValidationKind.SNAPSHOT, latest)
    end = log.end_offset_for_epoch(epoch)
    if end.epoch != epoch or end.offset < offset:
        return ValidOffsetAndEpoch(ValidationKind.DIVERGING, end)
    return ValidOffsetAndEpoch(ValidationKind.VALID, OffsetAndEpoch(offset, epoch))


# Built on every append and read: see kraft.common.fast_init.
speed_up_inits(ValidOffsetAndEpoch, LogAppendInfo, _StoredBatch)
