"""The raft RPCs as the core sees them: one partition, typed fields, no wire concerns.

The network layer (``kraft.net``) converts these to and from the Kafka wire messages in
``kraft.protocol.messages`` (topic ``__cluster_metadata`` partition 0, or its topic id for Fetch);
the simulator passes them as they are. Top-level and partition-level error codes are both kept so
that every wire response can be represented exactly.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kraft.common.fast_init import speed_up_inits
from kraft.common.principal import KafkaPrincipal
from kraft.common.uuids import ZERO_UUID
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteRequest:
    cluster_id: str | None
    candidate_epoch: int  # ReplicaEpoch on the wire (v2); the sender's epoch (not bumped for pre-votes)
    candidate_key: ReplicaKey
    voter_key: ReplicaKey  # the receiver (VoterId/VoterDirectoryId), id -1 = unknown
    last_offset_epoch: int
    last_offset: int
    pre_vote: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteResponse:
    error_code: int = 0  # top-level
    partition_error_code: int = 0
    leader_id: int = -1
    leader_epoch: int = 0
    vote_granted: bool = False
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BeginQuorumEpochRequest:
    cluster_id: str | None
    voter_key: ReplicaKey  # the receiver
    leader_id: int
    leader_epoch: int
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BeginQuorumEpochResponse:
    error_code: int = 0
    partition_error_code: int = 0
    leader_id: int = -1
    leader_epoch: int = 0
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EndQuorumEpochRequest:
    cluster_id: str | None
    leader_id: int
    leader_epoch: int
    preferred_candidates: tuple[ReplicaKey, ...] = ()
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EndQuorumEpochResponse:
    error_code: int = 0
    partition_error_code: int = 0
    leader_id: int = -1
    leader_epoch: int = 0
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchRequest:
    cluster_id: str | None
    replica_key: ReplicaKey  # id -1 for a replica without a node id
    max_wait_ms: int
    fetch_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int
    max_bytes: int = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchResponse:
    error_code: int = 0
    partition_error_code: int = 0
    high_watermark: int = -1
    log_start_offset: int = 0
    records: bytes = b""
    diverging_epoch: OffsetAndEpoch | None = None  # (end offset, epoch)
    current_leader_id: int = -1
    current_leader_epoch: int = -1
    snapshot_id: OffsetAndEpoch | None = None
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchSnapshotRequest:
    cluster_id: str | None
    replica_key: ReplicaKey
    current_leader_epoch: int
    snapshot_id: OffsetAndEpoch
    position: int
    max_bytes: int = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchSnapshotResponse:
    error_code: int = 0
    partition_error_code: int = 0
    snapshot_id: OffsetAndEpoch = OffsetAndEpoch(-1, -1)  # noqa: RUF009 (frozen, shared safely)
    current_leader_id: int = -1
    current_leader_epoch: int = -1
    size: int = 0
    position: int = 0
    unaligned_records: bytes = b""
    leader_endpoints: tuple[Endpoint, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeQuorumRequest:
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaState:
    replica_id: int
    replica_directory_id: uuid.UUID = ZERO_UUID
    log_end_offset: int = -1
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeQuorumResponse:
    error_code: int = 0
    error_message: str | None = None
    partition_error_code: int = 0
    partition_error_message: str | None = None
    leader_id: int = -1
    leader_epoch: int = 0
    high_watermark: int = -1
    current_voters: tuple[ReplicaState, ...] = ()
    observers: tuple[ReplicaState, ...] = ()
    # v2: listeners per voter node id
    nodes: dict[int, tuple[Endpoint, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class AddRaftVoterRequest:
    """KIP-853 (API 80): make the observer ``voter_key`` a voter; answered once committed."""

    cluster_id: str | None
    timeout_ms: int
    voter_key: ReplicaKey  # a directory id is required
    listeners: tuple[Endpoint, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AddRaftVoterResponse:
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveRaftVoterRequest:
    """KIP-853 (API 81): drop ``voter_key`` from the voter set; answered once committed."""

    cluster_id: str | None
    voter_key: ReplicaKey


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveRaftVoterResponse:
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateRaftVoterRequest:
    """KIP-853 (API 82): a voter tells the leader its current listeners and kraft.version range."""

    cluster_id: str | None
    current_leader_epoch: int
    voter_key: ReplicaKey
    listeners: tuple[Endpoint, ...]
    min_kraft_version: int = 0
    max_kraft_version: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateRaftVoterResponse:
    error_code: int = 0
    leader_id: int = -1
    leader_epoch: int = -1
    leader_endpoints: tuple[Endpoint, ...] = ()  # the wire carries one (Host, Port) on our listener


RaftRequest = (
    VoteRequest
    | BeginQuorumEpochRequest
    | EndQuorumEpochRequest
    | FetchRequest
    | FetchSnapshotRequest
    | DescribeQuorumRequest
    | AddRaftVoterRequest
    | RemoveRaftVoterRequest
    | UpdateRaftVoterRequest
)
RaftResponse = (
    VoteResponse
    | BeginQuorumEpochResponse
    | EndQuorumEpochResponse
    | FetchResponse
    | FetchSnapshotResponse
    | DescribeQuorumResponse
    | AddRaftVoterResponse
    | RemoveRaftVoterResponse
    | UpdateRaftVoterResponse
)
# The responses that carry the sender's epoch and leader (spec 3.3 applies to each of them).
LeaderInfoResponse = (
    VoteResponse
    | BeginQuorumEpochResponse
    | EndQuorumEpochResponse
    | FetchResponse
    | FetchSnapshotResponse
    | UpdateRaftVoterResponse
)
RaftRpc = RaftRequest | RaftResponse

# The request classes as a tuple for ``isinstance``: an inline ``A | B | ...`` builds a new union
# object on every call (eight ``|`` operations), and ``is_request`` runs several times per message.
REQUEST_TYPES = (
    VoteRequest,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    DescribeQuorumRequest,
    AddRaftVoterRequest,
    RemoveRaftVoterRequest,
    UpdateRaftVoterRequest,
)
# ``is_request`` by exact class: one set lookup, where ``isinstance`` tries the nine classes in
# turn for every response (the messages are final: nothing subclasses them).
_REQUEST_CLASSES = frozenset(REQUEST_TYPES)


@dataclass(frozen=True, slots=True)
class Envelope:
    """One message between two nodes. A response carries the correlation id of its request.

    ``source``/``destination`` are node ids; a shell may use negative ids for bootstrap servers
    whose id is unknown and for admin clients.
    """

    source: int
    destination: int
    correlation_id: int
    body: RaftRpc
    # Who sent a request that came in on a listener, as its connection authenticated it (None:
    # from inside the node or the simulator, trusted). The node checks CLUSTER_ACTION with it
    # before the core sees the request; the core never reads it. Not part of the message's value.
    principal: KafkaPrincipal | None = field(default=None, repr=False, compare=False)
    host: str = field(default="", repr=False, compare=False)

    @property
    def is_request(self) -> bool:
        return type(self.body) in _REQUEST_CLASSES


# Every message is built anew per request and answer: see kraft.common.fast_init.
speed_up_inits(
    VoteRequest,
    VoteResponse,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Envelope,
)
