"""The voter set in force and its history in the log (KIP-853 dynamic voters).

``VoterSet`` is an immutable value: voter id -> ``VoterNode`` (identity, listeners, supported
``kraft.version`` range). ``VoterSetHistory`` is Kafka's ``KRaftControlRecordStateMachine`` +
``VoterSetHistory``: it follows the KRaftVersionRecord and VotersRecord control records of the
snapshot and the log, by offset, so that

* the set in force is the *latest* VotersRecord, even uncommitted (spec 12): a leader counts a new
  voter toward the majority from the moment it appends the record;
* truncating the log reverts the set (``truncate_new``), and loading a snapshot replaces the history
  with the snapshot's set (``reset_to_snapshot``);
* without any VotersRecord the static ``controller.quorum.voters`` apply (``kraft.version`` 0).

Entries from a snapshot sit at ``snapshot offset - 1`` (never truncated, the log cannot be cut
below its snapshot); the format tool's bootstrap checkpoint (0-0) puts its set at -1, which is how a
leader knows the set is not in the log yet and writes it at the start of its epoch.

Pure: no clock, no I/O. The core feeds it every batch it appends and every truncation.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kraft.common.uuids import ZERO_UUID, uuid_to_base64
from kraft.protocol.schema import StructValue
from kraft.raft.types import Endpoint, ReplicaKey
from kraft.records.batch import decode_batch, iter_batch_headers
from kraft.records.control import (
    ControlType,
    VoterEndpoint,
    VoterInfo,
    control_type_of,
    decode_control_record,
    voter_infos,
    voters_record,
)

# kraft.version levels (Kafka's KRaftVersion): 0 = static voters, 1 = voters in the log.
KRAFT_VERSION_0 = 0
KRAFT_VERSION_1 = 1
SUPPORTED_KRAFT_VERSIONS = (KRAFT_VERSION_0, KRAFT_VERSION_1)


@dataclass(frozen=True, slots=True)
class VoterNode:
    key: ReplicaKey
    endpoints: tuple[Endpoint, ...]
    min_kraft_version: int = KRAFT_VERSION_0
    max_kraft_version: int = KRAFT_VERSION_1

    def is_voter(self, replica: ReplicaKey) -> bool:
        """Kafka's VoterNode.isVoter: a voter with a directory id is that directory only."""
        if replica.id != self.key.id:
            return False
        # ``is`` first: UUID.__eq__ is Python code, and the ids compared are usually the very same
        # objects (ZERO_UUID, a node's own directory id). Identical UUIDs are equal, so the answer
        # is the same.
        directory_id = self.key.directory_id
        if directory_id is ZERO_UUID or directory_id == ZERO_UUID:
            return True
        return replica.directory_id is directory_id or replica.directory_id == directory_id


class VoterSet:
    """An immutable set of voters keyed by node id."""

    __slots__ = ("_ids", "_nodes")

    def __init__(self, nodes: Iterable[VoterNode]) -> None:
        by_id: dict[int, VoterNode] = {}
        for node in nodes:
            if node.key.id < 0:
                raise ValueError(f"voter ids must be >= 0, got {node.key.id}")
            if node.key.id in by_id:
                raise ValueError(f"voter {node.key.id} appears twice")
            by_id[node.key.id] = node
        self._nodes: Mapping[int, VoterNode] = dict(sorted(by_id.items()))
        self._ids = frozenset(by_id)

    @staticmethod
    def static(voters: Mapping[int, tuple[Endpoint, ...]]) -> VoterSet:
        """``controller.quorum.voters``: ids and endpoints, no directory ids."""
        return VoterSet(VoterNode(ReplicaKey(v), tuple(eps)) for v, eps in voters.items())

    # ---- reading -----------------------------------------------------------------------------

    @property
    def ids(self) -> frozenset[int]:
        return self._ids

    @property
    def majority(self) -> int:
        return len(self._ids) // 2 + 1

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[VoterNode]:
        return iter(self._nodes.values())

    def __contains__(self, voter_id: object) -> bool:
        return voter_id in self._ids

    def __eq__(self, other: object) -> bool:
        # ``is`` first: a voter set is immutable and the simulator's checker compares a node's
        # current set with its own latest record after every poll (usually the same object).
        return self is other or (isinstance(other, VoterSet) and self._nodes == other._nodes)

    def __hash__(self) -> int:
        return hash(tuple(self._nodes.values()))

    def __repr__(self) -> str:
        return "[" + ", ".join(key_text(n.key) for n in self._nodes.values()) + "]"

    def node(self, voter_id: int) -> VoterNode | None:
        return self._nodes.get(voter_id)

    def keys(self) -> tuple[ReplicaKey, ...]:
        return tuple(n.key for n in self._nodes.values())

    def endpoints(self, voter_id: int) -> tuple[Endpoint, ...]:
        node = self._nodes.get(voter_id)
        return () if node is None else node.endpoints

    def is_voter(self, replica: ReplicaKey) -> bool:
        node = self._nodes.get(replica.id)
        return node is not None and node.is_voter(replica)

    def supports(self, kraft_version: int) -> bool:
        return all(n.min_kraft_version <= kraft_version <= n.max_kraft_version for n in self)

    # ---- changes (one voter at a time: old and new sets share a majority) ------------------

    def add(self, node: VoterNode) -> VoterSet | None:
        """The set with ``node`` added, or None if its id is already a voter."""
        if node.key.id in self._ids:
            return None
        return VoterSet([*self._nodes.values(), node])

    def remove(self, replica: ReplicaKey) -> VoterSet | None:
        """The set without ``replica``, or None if it is not a voter (by id and directory id) or
        it is the last one."""
        if not self.is_voter(replica) or len(self._ids) == 1:
            return None
        return VoterSet(n for n in self._nodes.values() if n.key.id != replica.id)

    def update(self, node: VoterNode) -> VoterSet | None:
        """The set with voter ``node.key`` given new listeners and versions, or None if absent."""
        current = self._nodes.get(node.key.id)
        if current is None or not current.is_voter(node.key):
            return None
        return VoterSet(node if n.key.id == node.key.id else n for n in self._nodes.values())

    def differs_by_at_most_one(self, other: VoterSet) -> bool:
        """Kafka's VoterSet.hasOverlappingMajority for one-at-a-time changes."""
        mine = {(n.key.id, n.key.directory_id) for n in self}
        theirs = {(n.key.id, n.key.directory_id) for n in other}
        return len(mine ^ theirs) <= 1

    # ---- the VotersRecord ----------------------------------------------------------------------

    def to_record(self) -> StructValue:
        return voters_record(
            VoterInfo(
                voter_id=n.key.id,
                directory_id=n.key.directory_id,
                endpoints=tuple(VoterEndpoint(name=e.name, host=e.host, port=e.port) for e in n.endpoints),
                min_supported_version=n.min_kraft_version,
                max_supported_version=n.max_kraft_version,
            )
            for n in self
        )

    @staticmethod
    def from_record(record: StructValue) -> VoterSet:
        return VoterSet(
            VoterNode(
                ReplicaKey(v.voter_id, v.directory_id),
                tuple(Endpoint(e.name, e.host, e.port) for e in v.endpoints),
                v.min_supported_version,
                v.max_supported_version,
            )
            for v in voter_infos(record)
        )


def key_text(key: ReplicaKey) -> str:
    """``id:directory`` with the directory id as Kafka prints it (URL-safe base64)."""
    if key.directory_id == ZERO_UUID:
        return str(key.id)
    return f"{key.id}:{uuid_to_base64(key.directory_id)}"


# The offset a snapshot's (or the bootstrap checkpoint's) entries are filed under.
BOOTSTRAP_OFFSET = -1


class VoterSetHistory:
    """Voter sets and kraft.version levels by log offset (see the module docstring)."""

    __slots__ = ("_kraft", "_static", "_voter_offsets", "_voter_sets")

    def __init__(self, static: VoterSet) -> None:
        self._static = static
        self._voter_offsets: list[int] = []
        self._voter_sets: list[VoterSet] = []
        self._kraft: list[tuple[int, int]] = []

    # ---- reading -----------------------------------------------------------------------------

    def latest(self) -> VoterSet:
        """The voter set in force: the latest VotersRecord, else the static voters."""
        return self._voter_sets[-1] if self._voter_sets else self._static

    def entries(self) -> list[tuple[int, VoterSet]]:
        """(offset, voter set) of every VotersRecord known, oldest first."""
        return list(zip(self._voter_offsets, self._voter_sets, strict=True))

    def latest_offset(self) -> int | None:
        """Offset of the latest VotersRecord (``BOOTSTRAP_OFFSET`` from a checkpoint), or None."""
        return self._voter_offsets[-1] if self._voter_offsets else None

    def voters_before(self, offset: int) -> VoterSet:
        """The set in force for a snapshot ending before ``offset`` (the last record below it)."""
        i = bisect.bisect_left(self._voter_offsets, offset)
        return self._voter_sets[i - 1] if i > 0 else self._static

    def kraft_version(self) -> int:
        return self._kraft[-1][1] if self._kraft else KRAFT_VERSION_0

    def kraft_version_before(self, offset: int) -> int:
        level = KRAFT_VERSION_0
        for at, version in self._kraft:
            if at >= offset:
                break
            level = version
        return level

    def has_uncommitted_change(self, high_watermark: int | None) -> bool:
        """A VotersRecord at or past the high watermark (unknown HW: any record in the log)."""
        if not self.in_log():
            return False
        return high_watermark is None or self._voter_offsets[-1] >= high_watermark

    def in_log(self) -> bool:
        """Whether the set in force came from the log or a replicated snapshot (not only from the
        bootstrap checkpoint or the static configuration)."""
        last = self.latest_offset()
        return last is not None and last != BOOTSTRAP_OFFSET

    # ---- feeding -----------------------------------------------------------------------------

    def add_voters(self, offset: int, voters: VoterSet) -> None:
        if self._voter_offsets and offset <= self._voter_offsets[-1]:
            raise ValueError(
                f"VotersRecord at offset {offset} is not after the last one ({self._voter_offsets[-1]})"
            )
        self._voter_offsets.append(offset)
        self._voter_sets.append(voters)

    def add_kraft_version(self, offset: int, kraft_version: int) -> None:
        if self._kraft and offset <= self._kraft[-1][0]:
            raise ValueError(f"KRaftVersionRecord at offset {offset} is not after the last one")
        self._kraft.append((offset, kraft_version))

    def truncate_new(self, end_offset: int) -> None:
        """The log now ends at ``end_offset``: forget records at or past it."""
        i = bisect.bisect_left(self._voter_offsets, end_offset)
        del self._voter_offsets[i:]
        del self._voter_sets[i:]
        self._kraft = [(at, v) for at, v in self._kraft if at < end_offset]

    def observe(self, data: bytes | memoryview) -> bool:
        """Record the KRaftVersion and Voters records of the batches in ``data``, just appended
        to the log. Returns whether any was found. Only control batches are decoded."""
        found = False
        for offset, kind, message in control_records_in(data):
            if kind is ControlType.KRAFT_VOTERS:
                self.add_voters(offset, VoterSet.from_record(message))
                found = True
            elif kind is ControlType.KRAFT_VERSION:
                self.add_kraft_version(offset, int(message.k_raft_version))
                found = True
        return found

    def reset_to_snapshot(
        self, snapshot_offset: int, voters: VoterSet | None, kraft_version: int | None
    ) -> None:
        """The log now starts with a snapshot at ``snapshot_offset``: its records replace all."""
        at = BOOTSTRAP_OFFSET if snapshot_offset == 0 else snapshot_offset - 1
        self._voter_offsets.clear()
        self._voter_sets.clear()
        self._kraft.clear()
        if voters is not None:
            self.add_voters(at, voters)
        if kraft_version is not None:
            self.add_kraft_version(at, kraft_version)


def control_records_in(data: bytes | memoryview) -> Iterator[tuple[int, ControlType, Any]]:
    """(offset, type, message) of the KRaftVersion and Voters records in whole batches ``data``."""
    for pos, header in iter_batch_headers(data):
        if not header.is_control:
            continue
        for record in decode_batch(data, pos).records:
            kind = control_type_of(record)
            if kind is ControlType.KRAFT_VOTERS or kind is ControlType.KRAFT_VERSION:
                yield record.offset, kind, decode_control_record(record)[1]


# A snapshot's control records come first, right after its header (Kafka's RecordsSnapshotWriter).
SNAPSHOT_PREFIX_BYTES = 1 << 20


def snapshot_voters(data: bytes | memoryview) -> tuple[VoterSet | None, int | None]:
    """The voter set and kraft.version a snapshot's leading control batches hold (None if absent).

    ``data`` may be only the snapshot's first ``SNAPSHOT_PREFIX_BYTES``: reading stops at the first
    data batch or at a batch cut short.
    """
    voters: VoterSet | None = None
    kraft_version: int | None = None
    view = memoryview(data)
    for pos, header in iter_batch_headers(view):
        if not header.is_control:
            break
        for _offset, kind, message in control_records_in(view[pos : pos + header.size_in_bytes]):
            if kind is ControlType.KRAFT_VOTERS:
                voters = VoterSet.from_record(message)
            else:
                kraft_version = int(message.k_raft_version)
    return voters, kraft_version
