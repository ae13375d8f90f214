"""The simulated disk: wraps a node's ``MemoryLog`` and ``MemoryElectionStore`` to charge fsync time.

Design (slow disks): ``flush()`` and ``store.write()`` are synchronous inside ``RaftNode.poll`` and
are durable when they return (the core relies on "persist before send"). A slow disk therefore
cannot make them asynchronous without lying to the core. Instead each fsync *costs* virtual time:
the wrappers add ``fsync_ms`` per call to a per-poll bill, and the world, after the poll returns,

* holds back every outbound message of that poll until ``now + bill`` (the messages depended on the
  fsync, so they cannot leave before it finishes), and
* keeps the node busy until then (its next poll, and any delivery, waits).

A crash that hits a node inside that window loses the held-back messages (they belong to the dead
incarnation) but not the data, which is exactly "crashed after fsync, before send".

What a crash loses is decided by the wrapped log: ``MemoryLog.crash()`` drops everything past the
last flush (a torn tail). The election store is never torn: it is written with fsync + rename.

Invariant: the wrappers forward every ``ReplicatedLog``/``ElectionStore`` call unchanged; they only
observe and bill.
"""

from __future__ import annotations

import random
from typing import Protocol

from kraft.raft.log import (
    LogAppendInfo,
    RawSnapshotReader,
    RawSnapshotWriter,
    ReplicatedLog,
    ValidOffsetAndEpoch,
)
from kraft.raft.store import ElectionState, ElectionStore
from kraft.raft.types import OffsetAndEpoch


class CrashableLog(ReplicatedLog, Protocol):
    """A log whose process can die: ``crash()`` drops everything not yet flushed."""

    def crash(self) -> None: ...

    def batches_from(self, start_offset: int) -> list[bytes]:
        """The stored batches ``read(start_offset, <no limit>)`` would concatenate."""
        ...


class DiskProfile:
    """How long one fsync takes on a node's disk, drawn per fsync in ``[min_ms, max_ms]``."""

    __slots__ = ("max_ms", "min_ms")

    def __init__(self, min_ms: int = 0, max_ms: int = 0) -> None:
        if not 0 <= min_ms <= max_ms:
            raise ValueError(f"bad fsync time range [{min_ms}, {max_ms}]")
        self.min_ms = min_ms
        self.max_ms = max_ms

    def draw(self, rng: random.Random) -> int:
        if self.max_ms == 0:
            return 0
        return rng.randrange(self.min_ms, self.max_ms + 1)  # randint's own call, one frame less


class Disk:
    """One node's disk: the bill of fsync time accumulated during the current poll."""

    def __init__(self, rng: random.Random, profile: DiskProfile | None = None) -> None:
        self._rng = rng
        self.profile = profile if profile is not None else DiskProfile()
        self._bill_ms = 0
        self.fsyncs = 0
        self.busy_ms_total = 0

    def charge_fsync(self) -> None:
        self.fsyncs += 1
        cost = self.profile.draw(self._rng)
        self._bill_ms += cost
        self.busy_ms_total += cost

    def take_bill_ms(self) -> int:
        """Virtual time spent in fsync since the last call (called once per poll)."""
        bill, self._bill_ms = self._bill_ms, 0
        return bill


class SimLog:
    """``ReplicatedLog`` forwarding to a crashable log and billing each flush to a ``Disk``."""

    def __init__(self, inner: CrashableLog, disk: Disk) -> None:
        self.disk = disk
        self.inner = inner

    @property
    def inner(self) -> CrashableLog:
        return self._inner

    @inner.setter
    def inner(self, log: CrashableLog) -> None:
        self._inner = log
        # Reads neither bill nor change anything, and the core and the checkers make hundreds of
        # thousands of them per run: bind them straight to the wrapped log (instance attributes
        # shadow the forwarding methods below). Every call that changes the log still goes
        # through this class, so a test can still patch it on the class.
        vars(self).update(
            start_offset=log.start_offset,
            end_offset=log.end_offset,
            last_fetched_epoch=log.last_fetched_epoch,
            last_flushed_offset=log.last_flushed_offset,
            read=log.read,
            end_offset_for_epoch=log.end_offset_for_epoch,
            validate_offset_and_epoch=log.validate_offset_and_epoch,
            latest_snapshot_id=log.latest_snapshot_id,
            earliest_snapshot_id=log.earliest_snapshot_id,
            read_snapshot=log.read_snapshot,
            batches_from=log.batches_from,
        )

    def crash(self) -> None:
        self.inner.crash()
        self.disk.take_bill_ms()

    def start_offset(self) -> int:
        return self.inner.start_offset()

    def end_offset(self) -> int:
        return self.inner.end_offset()

    def last_fetched_epoch(self) -> int:
        return self.inner.last_fetched_epoch()

    def last_flushed_offset(self) -> int:
        return self.inner.last_flushed_offset()

    def append_as_leader(self, batches: bytes, epoch: int) -> LogAppendInfo:
        return self.inner.append_as_leader(batches, epoch)

    def append_as_follower(self, batches: bytes, epoch: int) -> LogAppendInfo:
        return self.inner.append_as_follower(batches, epoch)

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        return self.inner.read(start_offset, max_bytes)

    def batches_from(self, start_offset: int) -> list[bytes]:
        return self.inner.batches_from(start_offset)

    def truncate_to(self, offset: int) -> None:
        self.inner.truncate_to(offset)

    def truncate_to_latest_snapshot(self) -> bool:
        return self.inner.truncate_to_latest_snapshot()

    def initialize_leader_epoch(self, epoch: int) -> None:
        self.inner.initialize_leader_epoch(epoch)

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        return self.inner.end_offset_for_epoch(epoch)

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        return self.inner.validate_offset_and_epoch(offset, epoch)

    def flush(self) -> None:
        self.inner.flush()
        self.disk.charge_fsync()

    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        return self.inner.latest_snapshot_id()

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        return self.inner.earliest_snapshot_id()

    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter | None:
        return self.inner.create_new_snapshot(snapshot_id)

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter:
        return self.inner.store_snapshot(snapshot_id)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotReader | None:
        return self.inner.read_snapshot(snapshot_id)

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        return self.inner.delete_before_snapshot(snapshot_id)


class SimStore:
    """``ElectionStore`` forwarding to a durable store and billing each write as one fsync."""

    def __init__(self, inner: ElectionStore, disk: Disk) -> None:
        self.disk = disk
        self.writes = 0
        self.inner = inner

    @property
    def inner(self) -> ElectionStore:
        return self._inner

    @inner.setter
    def inner(self, store: ElectionStore) -> None:
        self._inner = store
        # The checker reads the store after every poll: bind reads straight to it (as SimLog does).
        vars(self)["read"] = store.read

    def read(self) -> ElectionState | None:
        return self.inner.read()

    def write(self, state: ElectionState) -> None:
        self.inner.write(state)
        self.writes += 1
        self.disk.charge_fsync()
