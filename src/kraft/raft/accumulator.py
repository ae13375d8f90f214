"""The leader's batch accumulator: records become batches with offsets assigned at append time.

Offsets are handed out when ``append`` is called (the returned last offset is final); the bytes are
built on ``drain``. A batch closes when the next records would push it past ``max_batch_size_bytes``;
at most ``MAX_PENDING_BATCHES`` closed batches may wait. Control records are always a batch alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kraft.common.errors import KraftError, NotLeaderError
from kraft.raft.config import MAX_PENDING_BATCHES
from kraft.records.batch import HEADER_SIZE, SimpleRecord, build_batch, build_value_batch

# Upper bound of a record's framing overhead with a null key, no headers and small deltas.
_RECORD_OVERHEAD = 1 + 1 + 10 + 5 + 1 + 5 + 1


class RecordBatchTooLargeError(KraftError):
    """One append's records cannot fit into an empty batch."""


class BufferFullError(KraftError):
    """Too many batches are waiting to be written; the caller must retry later."""


@dataclass(slots=True)
class PendingBatch:
    """A data batch's records are values alone (``values``); a control batch's are full records."""

    base_offset: int
    values: list[bytes]
    created_ms: int
    control: list[SimpleRecord] | None = None
    size_bytes: int = HEADER_SIZE

    @property
    def record_count(self) -> int:
        return len(self.values) if self.control is None else len(self.control)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.record_count - 1

    def build(self, epoch: int) -> bytes:
        if self.control is not None:
            return build_batch(
                self.control,
                base_offset=self.base_offset,
                partition_leader_epoch=epoch,
                timestamp_ms=self.created_ms,
                is_control=True,
            )
        return build_value_batch(
            self.values,
            base_offset=self.base_offset,
            partition_leader_epoch=epoch,
            timestamp_ms=self.created_ms,
        )


@dataclass(slots=True)
class DrainedBatch:
    base_offset: int
    last_offset: int
    data: bytes
    created_ms: int
    record_count: int
    is_control: bool = False
    # A data batch's values, as its bytes hold them: the leader hands them to its listeners
    # without decoding its own batches again (Kafka's leader does the same).
    values: tuple[bytes, ...] = ()


@dataclass(slots=True)
class BatchAccumulator:
    epoch: int
    next_offset: int
    max_batch_size_bytes: int
    linger_ms: int
    completed: list[PendingBatch] = field(default_factory=list)
    current: PendingBatch | None = None
    linger_deadline_ms: int | None = None

    def append(self, epoch: int, records: Sequence[bytes], now_ms: int) -> int:
        """Queue ``records``; returns the offset of the last one."""
        if epoch < self.epoch:
            raise NotLeaderError(f"append for epoch {epoch}, but the leader epoch is {self.epoch}")
        if epoch > self.epoch:
            raise KraftError(f"append for future epoch {epoch}; the leader epoch is {self.epoch}")
        if not records:
            raise KraftError("append of no records")
        sizes = [len(r) + _RECORD_OVERHEAD for r in records]
        total = sum(sizes)
        if HEADER_SIZE + total > self.max_batch_size_bytes:
            raise RecordBatchTooLargeError(
                f"{len(records)} records of {total} bytes exceed the maximum batch size "
                f"{self.max_batch_size_bytes}"
            )
        if self.current is not None and self.current.size_bytes + total > self.max_batch_size_bytes:
            self._complete_current()
        if self.current is None:
            if len(self.completed) >= MAX_PENDING_BATCHES:
                raise BufferFullError(f"{len(self.completed)} batches are already waiting to be written")
            self.current = PendingBatch(self.next_offset, [], now_ms)
            if self.linger_deadline_ms is None:
                self.linger_deadline_ms = now_ms + self.linger_ms
        self.current.values.extend(records)
        self.current.size_bytes += total
        self.next_offset += len(records)
        return self.next_offset - 1

    def append_control(self, records: Sequence[SimpleRecord], now_ms: int) -> int:
        """A control batch is written alone: close the open batch first."""
        self._complete_current()
        batch = PendingBatch(self.next_offset, [], now_ms, control=list(records))
        self.completed.append(batch)
        self.next_offset += len(records)
        return self.next_offset - 1

    def _complete_current(self) -> None:
        if self.current is not None and self.current.values:
            self.completed.append(self.current)
        self.current = None

    def needs_drain(self, now_ms: int) -> bool:
        if self.completed:
            return True
        return (
            self.current is not None
            and self.linger_deadline_ms is not None
            and now_ms >= self.linger_deadline_ms
        )

    def next_drain_ms(self) -> int | None:
        if self.completed:
            return 0
        return self.linger_deadline_ms if self.current is not None else None

    def drain(self, now_ms: int) -> list[DrainedBatch]:
        self._complete_current()
        out = [
            DrainedBatch(
                b.base_offset,
                b.last_offset,
                b.build(self.epoch),
                b.created_ms,
                b.record_count,
                b.control is not None,
                tuple(b.values),
            )
            for b in self.completed
        ]
        self.completed = []
        self.linger_deadline_ms = None
        return out
