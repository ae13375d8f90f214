"""The replicated log as the consensus core sees it: ``ReplicatedLog`` and its in-memory twin.

``kraft.storage.file_log.FileLog`` implements the same Protocol on real files; one contract test suite
(``tests/unit/raft/log_contract.py``) runs against both. The unit is whole RecordBatch v2 bytes.

Invariants every implementation keeps:
* ``start_offset() <= last_flushed_offset() <= end_offset()``; flushed bytes survive ``crash()``.
* Offsets are dense from ``start_offset()``; ``start_offset() > 0`` implies a snapshot exists at it.
* The epoch cache is non-decreasing in both epoch and start offset and is truncated with the log.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

from kraft.raft.types import OffsetAndEpoch


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
        ``end_offset()`` (else ``FatalError``). New batch epochs enter the epoch cache."""
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
