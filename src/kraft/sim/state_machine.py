"""A replicated counter: the state machine the simulator runs on every node through the client API.

State: the number of data records applied, a running hash over every applied value (in offset
order) and the next offset to apply. Two replicas that applied the same prefix have the same state,
so agreement is checked by comparing ``(next_offset -> (count, hash))`` against a cluster-wide
ledger (``StateLedger``) after every apply and every snapshot load ("StateMachineAgreement").

Lifecycle: one ``CounterStateMachine`` per node *incarnation* (state machines are volatile; after a
restart the core replays the log, or hands over a snapshot first). It registers as the node's
``RaftListener``. It never calls back into the core from a listener callback (re-entrancy); it only
records that a snapshot is due, and the world calls ``create_snapshot`` after the poll returns.

Snapshot format: one data record ``SNAP`` + count (8 bytes) + hash (16 bytes) + next offset (8).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

_SNAPSHOT_MAGIC = b"SNAP"
_SNAPSHOT = struct.Struct(">4sq16sq")
_EMPTY_HASH = bytes(16)
_BLAKE2B_16 = hashlib.blake2b(digest_size=16)  # never updated: only copied (see handle_commit)


class CommittedBatchLike(Protocol):
    @property
    def base_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def epoch(self) -> int: ...
    @property
    def records(self) -> Sequence[bytes]: ...


class LeaderAndEpochLike(Protocol):
    @property
    def leader_id(self) -> int | None: ...
    @property
    def epoch(self) -> int: ...


def encode_snapshot(count: int, digest: bytes, next_offset: int) -> bytes:
    return _SNAPSHOT.pack(_SNAPSHOT_MAGIC, count, digest, next_offset)


def decode_snapshot(value: bytes) -> tuple[int, bytes, int]:
    """(count, hash, next offset); raises ``ValueError`` on anything else."""
    if len(value) != _SNAPSHOT.size:
        raise ValueError(f"snapshot record has {len(value)} bytes, expected {_SNAPSHOT.size}")
    magic, count, digest, next_offset = _SNAPSHOT.unpack(value)
    if magic != _SNAPSHOT_MAGIC:
        raise ValueError(f"snapshot record starts with {magic!r}, expected {_SNAPSHOT_MAGIC!r}")
    return count, digest, next_offset


@dataclass(slots=True)
class StateLedger:
    """Cluster-wide record of the state after applying everything below ``next_offset``.

    ``problems`` collects (invariant name, detail) for the world to report with the step.
    """

    states: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)
    max_count: int = 0

    def observe(self, node_id: int, next_offset: int, count: int, digest: bytes) -> None:
        known = self.states.setdefault(next_offset, (count, digest))
        if known != (count, digest):
            self.problems.append(
                (
                    "StateMachineAgreement",
                    f"node {node_id} state below offset {next_offset} is (count={count}, "
                    f"hash={digest.hex()[:12]}) but another replica had (count={known[0]}, "
                    f"hash={known[1].hex()[:12]})",
                )
            )
        self.max_count = max(self.max_count, count)


@dataclass(frozen=True, slots=True)
class SnapshotDue:
    """A point the state machine wants snapshotted: the state after ``end_offset - 1``."""

    end_offset: int
    epoch: int
    count: int
    digest: bytes
    last_timestamp_ms: int


class CounterStateMachine:
    """The ``RaftListener`` of one node incarnation."""

    def __init__(self, node_id: int, ledger: StateLedger, *, snapshot_every: int) -> None:
        self.node_id = node_id
        self._ledger = ledger
        self._snapshot_every = snapshot_every
        self.count = 0
        self.digest = _EMPTY_HASH
        self.next_offset = 0
        self.last_epoch = 0
        self.applied_since_snapshot = 0
        self.snapshot_due: SnapshotDue | None = None
        self.snapshots_loaded = 0
        self.commits = 0
        # Set while the core has told this listener that its node leads ``leader_epoch``.
        self.leader_epoch: int | None = None
        self.last_leader: tuple[int | None, int] | None = None

    # -- RaftListener --------------------------------------------------------------------------

    def handle_commit(self, batch: Any) -> None:
        if batch.base_offset != self.next_offset:
            self._ledger.problems.append(
                (
                    "StateMachineAgreement",
                    f"node {self.node_id} was handed committed batch [{batch.base_offset}, "
                    f"{batch.last_offset}] but its next offset is {self.next_offset}",
                )
            )
        records = batch.records
        digest = self.digest
        for value in records:
            # The running hash: blake2b-128 of (the previous hash + the value). Copying a fresh
            # hasher gives the same digest as building one, for less than its keyword parsing.
            hasher = _BLAKE2B_16.copy()
            hasher.update(digest + bytes(value))
            digest = hasher.digest()
        # The same counts as adding one per record in the loop (nothing reads them in between).
        self.count += len(records)
        self.applied_since_snapshot += len(records)
        self.digest = digest
        self.next_offset = batch.last_offset + 1
        self.last_epoch = batch.epoch
        self.commits += 1
        self._ledger.observe(self.node_id, self.next_offset, self.count, self.digest)
        if self._snapshot_every > 0 and self.applied_since_snapshot >= self._snapshot_every:
            self.applied_since_snapshot = 0
            self.snapshot_due = SnapshotDue(
                end_offset=self.next_offset,
                epoch=batch.epoch,
                count=self.count,
                digest=self.digest,
                last_timestamp_ms=int(getattr(batch, "append_timestamp_ms", 0)),
            )

    def handle_load_snapshot(self, reader: Any) -> None:
        if self.leader_epoch is not None:
            self._ledger.problems.append(
                (
                    "LeaderNeverLoadSnapshot",
                    f"node {self.node_id} was asked to load snapshot {reader.snapshot_id} while its "
                    f"listener had been told it leads epoch {self.leader_epoch}",
                )
            )
        values = list(snapshot_values(reader))
        if len(values) != 1:
            self._ledger.problems.append(
                (
                    "StateMachineAgreement",
                    f"node {self.node_id} loaded snapshot {reader.snapshot_id} with {len(values)} "
                    "data records, expected exactly 1",
                )
            )
            return
        count, digest, next_offset = decode_snapshot(values[0])
        snapshot_offset = int(reader.snapshot_id.offset)
        if next_offset != snapshot_offset:
            self._ledger.problems.append(
                (
                    "StateMachineAgreement",
                    f"node {self.node_id} loaded snapshot {reader.snapshot_id} whose content was "
                    f"taken at offset {next_offset}",
                )
            )
        self.count, self.digest, self.next_offset = count, digest, snapshot_offset
        self.last_epoch = int(reader.snapshot_id.epoch)
        self.applied_since_snapshot = 0
        self.snapshot_due = None
        self.snapshots_loaded += 1
        self._ledger.observe(self.node_id, self.next_offset, self.count, self.digest)

    def handle_leader_change(self, leader: Any) -> None:
        self.last_leader = (leader.leader_id, leader.epoch)
        if leader.leader_id == self.node_id:
            self.leader_epoch = int(leader.epoch)
        else:
            self.leader_epoch = None

    # -- helpers for the world -----------------------------------------------------------------

    def take_snapshot_due(self) -> SnapshotDue | None:
        due, self.snapshot_due = self.snapshot_due, None
        return due


def snapshot_values(reader: Any) -> Iterable[bytes]:
    """The data record values of a snapshot reader (``kraft.raft.listener.SnapshotReader.records``)."""
    records = getattr(reader, "records", None)
    if callable(records):
        yield from (bytes(v) for v in records())
        return
    for item in reader:
        if isinstance(item, bytes | bytearray | memoryview):
            yield bytes(item)
            continue
        if getattr(item, "is_control", False):
            continue
        for value in item.records:
            yield bytes(value)
