"""What a shell needs to know about a raft RPC without reading wire bytes.

The Kafka API key of each RPC dataclass, the response a request gets when the shell answers it
itself (an unreachable peer, a version it cannot speak, a foreign cluster id), who sent a request
and which cluster it names. ``kraft.net`` (sockets) and ``kraft.sim`` (the simulated network) both
use these; neither the wire nor any I/O is involved. The message classes are final (nothing
subclasses them), so lookups go by exact class.
"""

from __future__ import annotations

from kraft.protocol.messages import (
    add_raft_voter,
    begin_quorum_epoch,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    remove_raft_voter,
    update_raft_voter,
    vote,
)
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    VoteRequest,
    VoteResponse,
)

# (API key, request class, response class) of every raft RPC.
_RPCS: tuple[tuple[int, type[RaftRequest], type[RaftResponse]], ...] = (
    (vote.API.key, VoteRequest, VoteResponse),
    (begin_quorum_epoch.API.key, BeginQuorumEpochRequest, BeginQuorumEpochResponse),
    (end_quorum_epoch.API.key, EndQuorumEpochRequest, EndQuorumEpochResponse),
    (fetch.API.key, FetchRequest, FetchResponse),
    (fetch_snapshot.API.key, FetchSnapshotRequest, FetchSnapshotResponse),
    (describe_quorum.API.key, DescribeQuorumRequest, DescribeQuorumResponse),
    (add_raft_voter.API.key, AddRaftVoterRequest, AddRaftVoterResponse),
    (remove_raft_voter.API.key, RemoveRaftVoterRequest, RemoveRaftVoterResponse),
    (update_raft_voter.API.key, UpdateRaftVoterRequest, UpdateRaftVoterResponse),
)

RAFT_API_KEYS: tuple[int, ...] = tuple(key for key, _, _ in _RPCS)

_API_KEY: dict[type, int] = {
    **{request: key for key, request, _ in _RPCS},
    **{response: key for key, _, response in _RPCS},
}
_RESPONSE_TYPE: dict[type, type[RaftResponse]] = {request: response for _, request, response in _RPCS}


def api_key_of(rpc: RaftRequest | RaftResponse) -> int:
    """The Kafka API key ``rpc`` travels under.

    Raises:
        TypeError: ``rpc`` is not a raft RPC.
    """
    key = _API_KEY.get(type(rpc))
    if key is None:
        raise TypeError(f"not a raft RPC: {type(rpc).__name__}")
    return key


def error_response_for(request: RaftRequest, error_code: int) -> RaftResponse:
    """A response of ``request``'s type carrying only a top-level error (for synthesized failures).

    Raises:
        TypeError: ``request`` is not a raft request.
    """
    response_type = _RESPONSE_TYPE.get(type(request))
    if response_type is None:
        raise TypeError(f"not a raft request: {type(request).__name__}")
    return response_type(error_code=error_code)


def is_admin_request(request: RaftRequest) -> bool:
    """Requests an admin client sends (no node id of its own): DescribeQuorum and the KIP-853
    AddRaftVoter/RemoveRaftVoter. The shell gives each connection its own pseudo source id."""
    return isinstance(request, DescribeQuorumRequest | AddRaftVoterRequest | RemoveRaftVoterRequest)


def request_cluster_id(request: RaftRequest) -> str | None:
    """The cluster id ``request`` names, or None (DescribeQuorum carries none)."""
    return None if isinstance(request, DescribeQuorumRequest) else request.cluster_id


def request_source(request: RaftRequest) -> int:
    """The node id a request comes from, as the core addresses its reply."""
    match request:
        case VoteRequest():
            return request.candidate_key.id
        case BeginQuorumEpochRequest() | EndQuorumEpochRequest():
            return request.leader_id
        case FetchRequest() | FetchSnapshotRequest():
            return request.replica_key.id
        case UpdateRaftVoterRequest():
            return request.voter_key.id
        case DescribeQuorumRequest() | AddRaftVoterRequest() | RemoveRaftVoterRequest():
            return -1  # an admin client (see ``is_admin_request``)
    raise TypeError(f"not a raft request: {type(request).__name__}")
