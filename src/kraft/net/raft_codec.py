"""Conversion between the core's RPC dataclasses (``kraft.raft.messages``) and Kafka wire bodies.

The core speaks about one partition with typed fields; the wire speaks about topics and partition
lists. This module is the only place that knows both shapes. It owns:

* request decoding with the shape checks the spec places before the core (raft.md 3): exactly one
  topic ``__cluster_metadata`` (Fetch: its topic id) with one partition 0, else an immediate
  top-level INVALID_REQUEST (DescribeQuorum: partition-level UNKNOWN_TOPIC_OR_PARTITION; FetchSnapshot
  naming another partition: UNKNOWN_TOPIC_OR_PARTITION) that never reaches the core;
* request encoding at a negotiated version (a pre-vote cannot be written below Vote v2);
* response encoding and decoding;
* the KIP-853 voter changes (AddRaftVoter 80, RemoveRaftVoter 81, UpdateRaftVoter 82, all v0):
  ``Listeners`` map to ``Endpoint(name, host, port)``; UpdateRaftVoter's tagged ``CurrentLeader``
  carries one Host/Port, which is the leader's endpoint on our raft listener.

It must not do I/O or hold state. Wire endpoints carry no listener name, so decoding fills in the
listener name the caller passes (the raft listener, ``controller.listener.names``' first entry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kraft.common.uuids import ZERO_UUID
from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode as Code
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
from kraft.protocol.schema import StructType
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
    ReplicaState,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.types import (
    METADATA_PARTITION,
    METADATA_TOPIC,
    METADATA_TOPIC_ID,
    Endpoint,
    LeaderAndEpoch,
    OffsetAndEpoch,
    ReplicaKey,
)

# The APIs whose bodies this module converts, by key.
RAFT_APIS: dict[int, Api] = {
    m.API.key: m.API
    for m in (
        vote,
        begin_quorum_epoch,
        end_quorum_epoch,
        fetch,
        fetch_snapshot,
        describe_quorum,
        add_raft_voter,
        remove_raft_voter,
        update_raft_voter,
    )
}

VOTE_KEY = vote.API.key
BEGIN_QUORUM_EPOCH_KEY = begin_quorum_epoch.API.key
END_QUORUM_EPOCH_KEY = end_quorum_epoch.API.key
FETCH_KEY = fetch.API.key
FETCH_SNAPSHOT_KEY = fetch_snapshot.API.key
DESCRIBE_QUORUM_KEY = describe_quorum.API.key
ADD_RAFT_VOTER_KEY = add_raft_voter.API.key
REMOVE_RAFT_VOTER_KEY = remove_raft_voter.API.key
UPDATE_RAFT_VOTER_KEY = update_raft_voter.API.key

# Vote v2 is KIP-996: the first version that can carry PreVote=true.
PRE_VOTE_MIN_VERSION = 2


def _cls(struct_type: StructType) -> Any:
    """The generated value class of a message struct (typed ``Any``: its fields are dynamic)."""
    return struct_type.cls


class EncodeVersionError(ValueError):
    """The request cannot be expressed at the negotiated version (a pre-vote below Vote v2)."""


@dataclass(frozen=True, slots=True)
class ImmediateResponse:
    """A request the shell answers itself (wrong topic or partition); ``body`` is the wire body."""

    body: Any
    reason: str


def api_key_of(rpc: RaftRequest | RaftResponse) -> int:
    match rpc:
        case VoteRequest() | VoteResponse():
            return VOTE_KEY
        case BeginQuorumEpochRequest() | BeginQuorumEpochResponse():
            return BEGIN_QUORUM_EPOCH_KEY
        case EndQuorumEpochRequest() | EndQuorumEpochResponse():
            return END_QUORUM_EPOCH_KEY
        case FetchRequest() | FetchResponse():
            return FETCH_KEY
        case FetchSnapshotRequest() | FetchSnapshotResponse():
            return FETCH_SNAPSHOT_KEY
        case DescribeQuorumRequest() | DescribeQuorumResponse():
            return DESCRIBE_QUORUM_KEY
        case AddRaftVoterRequest() | AddRaftVoterResponse():
            return ADD_RAFT_VOTER_KEY
        case RemoveRaftVoterRequest() | RemoveRaftVoterResponse():
            return REMOVE_RAFT_VOTER_KEY
        case UpdateRaftVoterRequest() | UpdateRaftVoterResponse():
            return UPDATE_RAFT_VOTER_KEY
    raise TypeError(f"not a raft RPC: {type(rpc).__name__}")


def error_response_for(request: RaftRequest, error_code: int) -> RaftResponse:
    """A response of ``request``'s type carrying only a top-level error (for synthesized failures)."""
    match request:
        case VoteRequest():
            return VoteResponse(error_code=error_code)
        case BeginQuorumEpochRequest():
            return BeginQuorumEpochResponse(error_code=error_code)
        case EndQuorumEpochRequest():
            return EndQuorumEpochResponse(error_code=error_code)
        case FetchRequest():
            return FetchResponse(error_code=error_code)
        case FetchSnapshotRequest():
            return FetchSnapshotResponse(error_code=error_code)
        case DescribeQuorumRequest():
            return DescribeQuorumResponse(error_code=error_code)
        case AddRaftVoterRequest():
            return AddRaftVoterResponse(error_code=error_code)
        case RemoveRaftVoterRequest():
            return RemoveRaftVoterResponse(error_code=error_code)
        case UpdateRaftVoterRequest():
            return UpdateRaftVoterResponse(error_code=error_code)
    raise TypeError(f"not a raft request: {type(request).__name__}")


def is_admin_request(request: RaftRequest) -> bool:
    """Requests an admin client sends (no node id of its own): DescribeQuorum and the KIP-853
    AddRaftVoter/RemoveRaftVoter. The shell gives each connection its own pseudo source id."""
    return isinstance(request, DescribeQuorumRequest | AddRaftVoterRequest | RemoveRaftVoterRequest)


def request_cluster_id(request: RaftRequest) -> str | None:
    return None if isinstance(request, DescribeQuorumRequest) else request.cluster_id


# ---------------------------------------------------------------------------------------------------
# Endpoints


def _endpoints_for_wire(endpoints: tuple[Endpoint, ...], listener_name: str) -> list[Endpoint]:
    """The endpoints of our raft listener if any are named so, else all of them, without duplicates."""
    chosen = [e for e in endpoints if e.name == listener_name] or list(endpoints)
    out: list[Endpoint] = []
    for e in chosen:
        if e not in out:
            out.append(e)
    return out


def _node_endpoints(
    api: Any, version: int, leader_id: int, endpoints: tuple[Endpoint, ...], listener_name: str
) -> list[Any]:
    # NodeEndpoints exist from v1 on (KIP-853) and are not ignorable: older versions get none.
    if leader_id < 0 or version < 1:
        return []
    cls = _cls(api.RESPONSE).NodeEndpoint
    return [
        cls(node_id=leader_id, host=e.host, port=e.port)
        for e in _endpoints_for_wire(endpoints, listener_name)
    ]


def _from_node_endpoints(nodes: list[Any] | None, leader_id: int, listener_name: str) -> tuple[Endpoint, ...]:
    if not nodes or leader_id < 0:
        return ()
    return tuple(Endpoint(listener_name, n.host, n.port) for n in nodes if n.node_id == leader_id)


def _leader_endpoints(api: Any, endpoints: tuple[Endpoint, ...]) -> list[Any]:
    cls = api.REQUEST.cls.LeaderEndpoint
    return [cls(name=e.name, host=e.host, port=e.port) for e in endpoints]


def _from_leader_endpoints(eps: list[Any] | None) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(e.name, e.host, e.port) for e in eps or ())


# ---------------------------------------------------------------------------------------------------
# Requests: core -> wire


def _metadata_topics(
    topic_cls: Any, partition_cls: Any, name_field: str, partition_field: str, **partition_fields: Any
) -> list[Any]:
    """The ``topics`` list of every raft request: one topic (``__cluster_metadata``, or its id for
    Fetch) holding one partition, 0, with ``partition_fields``."""
    name = METADATA_TOPIC_ID if name_field == "topic_id" else METADATA_TOPIC
    partition = partition_cls(**{partition_field: METADATA_PARTITION}, **partition_fields)
    return [topic_cls(**{name_field: name, "partitions": [partition]})]


def encode_request(request: RaftRequest, version: int) -> Any:
    """The wire body of ``request`` at ``version``.

    Raises:
        EncodeVersionError: a pre-vote at Vote below v2 (the caller answers the core with
            UNSUPPORTED_VERSION, spec raft.md 3.4).
    """
    match request:
        case VoteRequest():
            if request.pre_vote and version < PRE_VOTE_MIN_VERSION:
                raise EncodeVersionError(
                    f"a pre-vote needs Vote v{PRE_VOTE_MIN_VERSION}+, the peer speaks v{version}"
                )
            vt = _cls(vote.REQUEST).TopicData
            return _cls(vote.REQUEST)(
                cluster_id=request.cluster_id,
                voter_id=request.voter_key.id,
                topics=_metadata_topics(
                    vt,
                    vt.PartitionData,
                    "topic_name",
                    "partition_index",
                    replica_epoch=request.candidate_epoch,
                    replica_id=request.candidate_key.id,
                    replica_directory_id=request.candidate_key.directory_id,
                    voter_directory_id=request.voter_key.directory_id,
                    last_offset_epoch=request.last_offset_epoch,
                    last_offset=request.last_offset,
                    pre_vote=request.pre_vote,
                ),
            )
        case BeginQuorumEpochRequest():
            bt = _cls(begin_quorum_epoch.REQUEST).TopicData
            return _cls(begin_quorum_epoch.REQUEST)(
                cluster_id=request.cluster_id,
                voter_id=request.voter_key.id,
                topics=_metadata_topics(
                    bt,
                    bt.PartitionData,
                    "topic_name",
                    "partition_index",
                    voter_directory_id=request.voter_key.directory_id,
                    leader_id=request.leader_id,
                    leader_epoch=request.leader_epoch,
                ),
                leader_endpoints=_leader_endpoints(begin_quorum_epoch, request.leader_endpoints),
            )
        case EndQuorumEpochRequest():
            et = _cls(end_quorum_epoch.REQUEST).TopicData
            ep = et.PartitionData
            return _cls(end_quorum_epoch.REQUEST)(
                cluster_id=request.cluster_id,
                topics=_metadata_topics(
                    et,
                    ep,
                    "topic_name",
                    "partition_index",
                    leader_id=request.leader_id,
                    leader_epoch=request.leader_epoch,
                    # v0 carries ids only; v1 ids with directory ids. Both are ignorable, so the one
                    # the version lacks is dropped on encode.
                    preferred_successors=[k.id for k in request.preferred_candidates],
                    preferred_candidates=[
                        ep.ReplicaInfo(candidate_id=k.id, candidate_directory_id=k.directory_id)
                        for k in request.preferred_candidates
                    ],
                ),
                leader_endpoints=_leader_endpoints(end_quorum_epoch, request.leader_endpoints),
            )
        case FetchRequest():
            ft = _cls(fetch.REQUEST).FetchTopic
            body = _cls(fetch.REQUEST)(
                cluster_id=request.cluster_id,
                max_wait_ms=request.max_wait_ms,
                min_bytes=0,
                max_bytes=request.max_bytes,
                isolation_level=0,
                session_id=0,
                session_epoch=-1,
                topics=_metadata_topics(
                    ft,
                    ft.FetchPartition,
                    "topic_id",
                    "partition",
                    current_leader_epoch=request.current_leader_epoch,
                    fetch_offset=request.fetch_offset,
                    last_fetched_epoch=request.last_fetched_epoch,
                    log_start_offset=-1,
                    partition_max_bytes=0,
                    replica_directory_id=request.replica_key.directory_id,
                ),
                forgotten_topics_data=[],
                rack_id="",
            )
            # ReplicaId moved into the tagged ReplicaState in v15 (KIP-903).
            if version >= 15:
                body.replica_state = _cls(fetch.REQUEST).ReplicaState(
                    replica_id=request.replica_key.id, replica_epoch=-1
                )
            else:
                body.replica_id = request.replica_key.id
            return body
        case FetchSnapshotRequest():
            st = _cls(fetch_snapshot.REQUEST).TopicSnapshot
            sp = st.PartitionSnapshot
            return _cls(fetch_snapshot.REQUEST)(
                cluster_id=request.cluster_id,
                replica_id=request.replica_key.id,
                max_bytes=request.max_bytes,
                topics=_metadata_topics(
                    st,
                    sp,
                    "name",
                    "partition",
                    current_leader_epoch=request.current_leader_epoch,
                    snapshot_id=sp.SnapshotId(
                        end_offset=request.snapshot_id.offset, epoch=request.snapshot_id.epoch
                    ),
                    position=request.position,
                    replica_directory_id=request.replica_key.directory_id,
                ),
            )
        case DescribeQuorumRequest():
            dt = _cls(describe_quorum.REQUEST).TopicData
            return _cls(describe_quorum.REQUEST)(
                topics=_metadata_topics(dt, dt.PartitionData, "topic_name", "partition_index")
            )
        case AddRaftVoterRequest():
            cls = _cls(add_raft_voter.REQUEST)
            return cls(
                cluster_id=request.cluster_id,
                timeout_ms=request.timeout_ms,
                voter_id=request.voter_key.id,
                voter_directory_id=request.voter_key.directory_id,
                listeners=_listeners(cls, request.listeners),
            )
        case RemoveRaftVoterRequest():
            return _cls(remove_raft_voter.REQUEST)(
                cluster_id=request.cluster_id,
                voter_id=request.voter_key.id,
                voter_directory_id=request.voter_key.directory_id,
            )
        case UpdateRaftVoterRequest():
            cls = _cls(update_raft_voter.REQUEST)
            return cls(
                cluster_id=request.cluster_id,
                current_leader_epoch=request.current_leader_epoch,
                voter_id=request.voter_key.id,
                voter_directory_id=request.voter_key.directory_id,
                listeners=_listeners(cls, request.listeners),
                k_raft_version_feature=cls.KRaftVersionFeature(
                    min_supported_version=request.min_kraft_version,
                    max_supported_version=request.max_kraft_version,
                ),
            )
    raise TypeError(f"not a raft request: {type(request).__name__}")


def _listeners(request_cls: Any, endpoints: tuple[Endpoint, ...]) -> list[Any]:
    """AddRaftVoter/UpdateRaftVoter ``Listeners``: every endpoint with its listener name."""
    return [request_cls.Listener(name=e.name, host=e.host, port=e.port) for e in endpoints]


def _from_listeners(listeners: list[Any] | None) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(x.name, x.host, x.port) for x in listeners or ())


# ---------------------------------------------------------------------------------------------------
# Requests: wire -> core


def _single_partition(
    topics: list[Any] | None, name_attr: str, expected: Any, partition_attr: str
) -> Any | None:
    """The one partition of the one expected topic, or None if the request names anything else."""
    if not topics or len(topics) != 1:
        return None
    topic = topics[0]
    if getattr(topic, name_attr) != expected or not topic.partitions or len(topic.partitions) != 1:
        return None
    partition = topic.partitions[0]
    if getattr(partition, partition_attr) != METADATA_PARTITION:
        return None
    return partition


def _has_one_partition(topics: list[Any] | None) -> bool:
    if not topics or len(topics) != 1:
        return False
    partitions = topics[0].partitions
    return partitions is not None and len(partitions) == 1


def decode_request(
    api_key: int, body: Any, *, leader: LeaderAndEpoch | None = None
) -> RaftRequest | ImmediateResponse:
    """Convert a decoded wire request body to the core's dataclass, or answer it at once.

    Args:
        api_key: which raft API ``body`` belongs to.
        body: the decoded request body (``api.REQUEST`` struct value).
        leader: this node's current view, for the CurrentLeader of an immediate FetchSnapshot answer.
    """
    invalid = "the request must name exactly topic __cluster_metadata partition 0"
    if api_key == VOTE_KEY:
        p = _single_partition(body.topics, "topic_name", METADATA_TOPIC, "partition_index")
        if p is None:
            return ImmediateResponse(
                _encode_vote_response(VoteResponse(error_code=Code.INVALID_REQUEST)), invalid
            )
        return VoteRequest(
            cluster_id=body.cluster_id,
            candidate_epoch=p.replica_epoch,
            candidate_key=ReplicaKey(p.replica_id, p.replica_directory_id),
            voter_key=ReplicaKey(body.voter_id, p.voter_directory_id),
            last_offset_epoch=p.last_offset_epoch,
            last_offset=p.last_offset,
            pre_vote=p.pre_vote,
        )
    if api_key == BEGIN_QUORUM_EPOCH_KEY:
        p = _single_partition(body.topics, "topic_name", METADATA_TOPIC, "partition_index")
        if p is None:
            resp = BeginQuorumEpochResponse(error_code=Code.INVALID_REQUEST)
            return ImmediateResponse(_encode_partition_response(begin_quorum_epoch, resp), invalid)
        return BeginQuorumEpochRequest(
            cluster_id=body.cluster_id,
            voter_key=ReplicaKey(body.voter_id, p.voter_directory_id),
            leader_id=p.leader_id,
            leader_epoch=p.leader_epoch,
            leader_endpoints=_from_leader_endpoints(body.leader_endpoints),
        )
    if api_key == END_QUORUM_EPOCH_KEY:
        p = _single_partition(body.topics, "topic_name", METADATA_TOPIC, "partition_index")
        if p is None:
            end_resp = EndQuorumEpochResponse(error_code=Code.INVALID_REQUEST)
            return ImmediateResponse(_encode_partition_response(end_quorum_epoch, end_resp), invalid)
        if p.preferred_candidates:
            preferred = tuple(
                ReplicaKey(c.candidate_id, c.candidate_directory_id) for c in p.preferred_candidates
            )
        else:
            # v0 lists ids only; they map to unknown (zero) directory ids (spec raft.md 3.6).
            preferred = tuple(ReplicaKey(i) for i in p.preferred_successors or ())
        return EndQuorumEpochRequest(
            cluster_id=body.cluster_id,
            leader_id=p.leader_id,
            leader_epoch=p.leader_epoch,
            preferred_candidates=preferred,
            leader_endpoints=_from_leader_endpoints(body.leader_endpoints),
        )
    if api_key == FETCH_KEY:
        p = _single_partition(body.topics, "topic_id", METADATA_TOPIC_ID, "partition")
        if p is None:
            return ImmediateResponse(
                _cls(fetch.RESPONSE)(error_code=Code.INVALID_REQUEST, responses=[]),
                "the request must name exactly the metadata topic id, partition 0",
            )
        replica_id = body.replica_id
        if body.replica_state is not None and body.replica_state.replica_id != -1:
            replica_id = body.replica_state.replica_id
        return FetchRequest(
            cluster_id=body.cluster_id,
            replica_key=ReplicaKey(replica_id, p.replica_directory_id),
            max_wait_ms=body.max_wait_ms,
            fetch_offset=p.fetch_offset,
            last_fetched_epoch=p.last_fetched_epoch,
            current_leader_epoch=p.current_leader_epoch,
            max_bytes=body.max_bytes,
        )
    if api_key == FETCH_SNAPSHOT_KEY:
        if not _has_one_partition(body.topics):
            return ImmediateResponse(
                _encode_fetch_snapshot_response(
                    FetchSnapshotResponse(error_code=Code.INVALID_REQUEST), listener_name=""
                ),
                "the request must name exactly one topic with one partition",
            )
        p = _single_partition(body.topics, "name", METADATA_TOPIC, "partition")
        if p is None:
            current = leader or LeaderAndEpoch(None, -1)
            snap_resp = FetchSnapshotResponse(
                partition_error_code=Code.UNKNOWN_TOPIC_OR_PARTITION,
                current_leader_id=-1 if current.leader_id is None else current.leader_id,
                current_leader_epoch=current.epoch,
            )
            return ImmediateResponse(
                _encode_fetch_snapshot_response(snap_resp, listener_name=""),
                "only __cluster_metadata partition 0 exists",
            )
        return FetchSnapshotRequest(
            cluster_id=body.cluster_id,
            replica_key=ReplicaKey(body.replica_id, p.replica_directory_id),
            current_leader_epoch=p.current_leader_epoch,
            snapshot_id=OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch),
            position=p.position,
            max_bytes=body.max_bytes,
        )
    if api_key == DESCRIBE_QUORUM_KEY:
        p = _single_partition(body.topics, "topic_name", METADATA_TOPIC, "partition_index")
        if p is None:
            return ImmediateResponse(
                describe_quorum_partition_error(body, Code.UNKNOWN_TOPIC_OR_PARTITION),
                "only __cluster_metadata partition 0 exists",
            )
        return DescribeQuorumRequest()
    # KIP-853: no topic or partition to check; the core validates the voter and its listeners.
    if api_key == ADD_RAFT_VOTER_KEY:
        return AddRaftVoterRequest(
            cluster_id=body.cluster_id,
            timeout_ms=body.timeout_ms,
            voter_key=ReplicaKey(body.voter_id, body.voter_directory_id),
            listeners=_from_listeners(body.listeners),
        )
    if api_key == REMOVE_RAFT_VOTER_KEY:
        return RemoveRaftVoterRequest(
            cluster_id=body.cluster_id, voter_key=ReplicaKey(body.voter_id, body.voter_directory_id)
        )
    if api_key == UPDATE_RAFT_VOTER_KEY:
        feature = body.k_raft_version_feature
        return UpdateRaftVoterRequest(
            cluster_id=body.cluster_id,
            current_leader_epoch=body.current_leader_epoch,
            voter_key=ReplicaKey(body.voter_id, body.voter_directory_id),
            listeners=_from_listeners(body.listeners),
            min_kraft_version=feature.min_supported_version,
            max_kraft_version=feature.max_supported_version,
        )
    raise ValueError(f"API key {api_key} is not a raft API")


def describe_quorum_partition_error(request_body: Any, error_code: int, message: str | None = None) -> Any:
    """A DescribeQuorum response echoing every requested partition with ``error_code`` (Kafka's
    ``getPartitionLevelErrorResponse``)."""
    rt = _cls(describe_quorum.RESPONSE).TopicData
    return _cls(describe_quorum.RESPONSE)(
        error_code=0,
        topics=[
            rt(
                topic_name=t.topic_name,
                partitions=[
                    rt.PartitionData(
                        partition_index=p.partition_index, error_code=error_code, error_message=message
                    )
                    for p in t.partitions or ()
                ],
            )
            for t in request_body.topics or ()
        ],
    )


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


# ---------------------------------------------------------------------------------------------------
# Responses: core -> wire


def encode_response(response: RaftResponse, version: int, *, listener_name: str) -> Any:
    """The wire body of ``response`` for a request received at ``version``."""
    match response:
        case VoteResponse():
            return _encode_vote_response(response, version, listener_name)
        case BeginQuorumEpochResponse():
            return _encode_partition_response(begin_quorum_epoch, response, version, listener_name)
        case EndQuorumEpochResponse():
            return _encode_partition_response(end_quorum_epoch, response, version, listener_name)
        case FetchResponse():
            return _encode_fetch_response(response, version, listener_name)
        case FetchSnapshotResponse():
            return _encode_fetch_snapshot_response(response, listener_name, version)
        case DescribeQuorumResponse():
            return _encode_describe_quorum_response(response, version)
        case AddRaftVoterResponse():
            return _cls(add_raft_voter.RESPONSE)(
                throttle_time_ms=0, error_code=response.error_code, error_message=response.error_message
            )
        case RemoveRaftVoterResponse():
            return _cls(remove_raft_voter.RESPONSE)(
                throttle_time_ms=0, error_code=response.error_code, error_message=response.error_message
            )
        case UpdateRaftVoterResponse():
            return _encode_update_raft_voter_response(response, listener_name)
    raise TypeError(f"not a raft response: {type(response).__name__}")


def _encode_update_raft_voter_response(r: UpdateRaftVoterResponse, listener_name: str) -> Any:
    # Kafka's RaftUtil.updateVoterResponse: the leader's address on the raft listener, if known
    # (else the tagged CurrentLeader keeps Host "" and Port 0).
    cls = _cls(update_raft_voter.RESPONSE)
    current = cls.CurrentLeader(leader_id=r.leader_id, leader_epoch=r.leader_epoch)
    endpoints = _endpoints_for_wire(r.leader_endpoints, listener_name)
    if endpoints:
        current.host, current.port = endpoints[0].host, endpoints[0].port
    return cls(throttle_time_ms=0, error_code=r.error_code, current_leader=current)


def _encode_vote_response(r: VoteResponse, version: int = 0, listener_name: str = "") -> Any:
    return _encode_partition_response(vote, r, version, listener_name, vote_granted=r.vote_granted)


def _encode_partition_response(
    module: Any,
    r: VoteResponse | BeginQuorumEpochResponse | EndQuorumEpochResponse,
    version: int = 0,
    listener_name: str = "",
    **partition_fields: Any,
) -> Any:
    """Vote, BeginQuorumEpoch and EndQuorumEpoch responses share one shape: a top-level error, one
    topic with one partition (error, leader, epoch, plus ``partition_fields``), NodeEndpoints."""
    cls = module.RESPONSE.cls
    topics = []
    if r.error_code == Code.NONE:
        topics = _metadata_topics(
            cls.TopicData,
            cls.TopicData.PartitionData,
            "topic_name",
            "partition_index",
            error_code=r.partition_error_code,
            leader_id=r.leader_id,
            leader_epoch=r.leader_epoch,
            **partition_fields,
        )
    return cls(
        error_code=r.error_code,
        topics=topics,
        node_endpoints=_node_endpoints(module, version, r.leader_id, r.leader_endpoints, listener_name),
    )


def _encode_fetch_response(r: FetchResponse, version: int, listener_name: str) -> Any:
    cls = _cls(fetch.RESPONSE)
    pd = cls.FetchableTopicResponse.PartitionData
    responses = []
    if r.error_code == Code.NONE:
        partition = pd(
            partition_index=METADATA_PARTITION,
            error_code=r.partition_error_code,
            high_watermark=r.high_watermark,
            last_stable_offset=-1,
            log_start_offset=r.log_start_offset,
            current_leader=pd.LeaderIdAndEpoch(
                leader_id=r.current_leader_id, leader_epoch=r.current_leader_epoch
            ),
            aborted_transactions=[],
            preferred_read_replica=-1,
            records=r.records,
        )
        if r.diverging_epoch is not None:
            partition.diverging_epoch = pd.EpochEndOffset(
                epoch=r.diverging_epoch.epoch, end_offset=r.diverging_epoch.offset
            )
        if r.snapshot_id is not None:
            partition.snapshot_id = pd.SnapshotId(end_offset=r.snapshot_id.offset, epoch=r.snapshot_id.epoch)
        responses = [cls.FetchableTopicResponse(topic_id=METADATA_TOPIC_ID, partitions=[partition])]
    body = cls(throttle_time_ms=0, error_code=r.error_code, session_id=0, responses=responses)
    # Raft fills NodeEndpoints only from v17 on, and only for the known leader (spec raft.md 3.7).
    if version >= 17 and r.current_leader_id >= 0:
        body.node_endpoints = [
            cls.NodeEndpoint(node_id=r.current_leader_id, host=e.host, port=e.port, rack=None)
            for e in _endpoints_for_wire(r.leader_endpoints, listener_name)
        ]
    return body


def _encode_fetch_snapshot_response(r: FetchSnapshotResponse, listener_name: str, version: int = 0) -> Any:
    cls = _cls(fetch_snapshot.RESPONSE)
    ps = cls.TopicSnapshot.PartitionSnapshot
    topics = []
    if r.error_code == Code.NONE:
        topics = [
            cls.TopicSnapshot(
                name=METADATA_TOPIC,
                partitions=[
                    ps(
                        index=METADATA_PARTITION,
                        error_code=r.partition_error_code,
                        snapshot_id=ps.SnapshotId(end_offset=r.snapshot_id.offset, epoch=r.snapshot_id.epoch),
                        current_leader=ps.LeaderIdAndEpoch(
                            leader_id=r.current_leader_id, leader_epoch=r.current_leader_epoch
                        ),
                        size=r.size,
                        position=r.position,
                        unaligned_records=r.unaligned_records,
                    )
                ],
            )
        ]
    return cls(
        throttle_time_ms=0,
        error_code=r.error_code,
        topics=topics,
        node_endpoints=_node_endpoints(
            fetch_snapshot, version, r.current_leader_id, r.leader_endpoints, listener_name
        ),
    )


def _encode_describe_quorum_response(r: DescribeQuorumResponse, version: int) -> Any:
    cls = _cls(describe_quorum.RESPONSE)
    pd = cls.TopicData.PartitionData

    def replica(s: ReplicaState) -> Any:
        return pd.ReplicaState(
            replica_id=s.replica_id,
            # Directory ids exist from v2 on and are not ignorable: older versions get the zero id.
            replica_directory_id=s.replica_directory_id if version >= 2 else ZERO_UUID,
            log_end_offset=s.log_end_offset,
            last_fetch_timestamp=s.last_fetch_timestamp,
            last_caught_up_timestamp=s.last_caught_up_timestamp,
        )

    topics = []
    if r.error_code == Code.NONE:
        topics = [
            cls.TopicData(
                topic_name=METADATA_TOPIC,
                partitions=[
                    pd(
                        partition_index=METADATA_PARTITION,
                        error_code=r.partition_error_code,
                        error_message=r.partition_error_message,
                        leader_id=r.leader_id,
                        leader_epoch=r.leader_epoch,
                        high_watermark=r.high_watermark,
                        current_voters=[replica(s) for s in r.current_voters],
                        observers=[replica(s) for s in r.observers],
                    )
                ],
            )
        ]
    nodes = []
    if version >= 2:
        nodes = [
            cls.Node(
                node_id=node_id,
                listeners=[cls.Node.Listener(name=e.name, host=e.host, port=e.port) for e in endpoints],
            )
            for node_id, endpoints in sorted(r.nodes.items())
        ]
    return cls(error_code=r.error_code, error_message=r.error_message, topics=topics, nodes=nodes)


# ---------------------------------------------------------------------------------------------------
# Responses: wire -> core


def _first_partition(topics: list[Any] | None) -> Any | None:
    if topics and topics[0].partitions:
        return topics[0].partitions[0]
    return None


def decode_response(api_key: int, body: Any, *, listener_name: str) -> RaftResponse:
    """Convert a decoded wire response body to the core's dataclass.

    A response whose partition list is empty keeps only its top-level error code; a well-behaved
    peer sends that shape only together with a top-level error.
    """
    if api_key == VOTE_KEY:
        p = _first_partition(body.topics)
        if p is None:
            return VoteResponse(error_code=body.error_code)
        return VoteResponse(
            error_code=body.error_code,
            partition_error_code=p.error_code,
            leader_id=p.leader_id,
            leader_epoch=p.leader_epoch,
            vote_granted=p.vote_granted,
            leader_endpoints=_from_node_endpoints(body.node_endpoints, p.leader_id, listener_name),
        )
    if api_key in (BEGIN_QUORUM_EPOCH_KEY, END_QUORUM_EPOCH_KEY):
        response_cls = (
            BeginQuorumEpochResponse if api_key == BEGIN_QUORUM_EPOCH_KEY else EndQuorumEpochResponse
        )
        p = _first_partition(body.topics)
        if p is None:
            return response_cls(error_code=body.error_code)
        return response_cls(
            error_code=body.error_code,
            partition_error_code=p.error_code,
            leader_id=p.leader_id,
            leader_epoch=p.leader_epoch,
            leader_endpoints=_from_node_endpoints(body.node_endpoints, p.leader_id, listener_name),
        )
    if api_key == FETCH_KEY:
        p = _first_partition(body.responses)
        if p is None:
            return FetchResponse(error_code=body.error_code)
        diverging = None
        if p.diverging_epoch.epoch >= 0 or p.diverging_epoch.end_offset >= 0:
            diverging = OffsetAndEpoch(p.diverging_epoch.end_offset, p.diverging_epoch.epoch)
        snapshot = None
        if p.snapshot_id.end_offset >= 0 or p.snapshot_id.epoch >= 0:
            snapshot = OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch)
        return FetchResponse(
            error_code=body.error_code,
            partition_error_code=p.error_code,
            high_watermark=p.high_watermark,
            log_start_offset=p.log_start_offset,
            records=bytes(p.records or b""),
            diverging_epoch=diverging,
            current_leader_id=p.current_leader.leader_id,
            current_leader_epoch=p.current_leader.leader_epoch,
            snapshot_id=snapshot,
            leader_endpoints=_from_node_endpoints(
                body.node_endpoints, p.current_leader.leader_id, listener_name
            ),
        )
    if api_key == FETCH_SNAPSHOT_KEY:
        p = _first_partition(body.topics)
        if p is None:
            return FetchSnapshotResponse(error_code=body.error_code)
        return FetchSnapshotResponse(
            error_code=body.error_code,
            partition_error_code=p.error_code,
            snapshot_id=OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch),
            current_leader_id=p.current_leader.leader_id,
            current_leader_epoch=p.current_leader.leader_epoch,
            size=p.size,
            position=p.position,
            unaligned_records=bytes(p.unaligned_records or b""),
            leader_endpoints=_from_node_endpoints(
                body.node_endpoints, p.current_leader.leader_id, listener_name
            ),
        )
    if api_key == DESCRIBE_QUORUM_KEY:
        p = _first_partition(body.topics)
        if p is None:
            return DescribeQuorumResponse(error_code=body.error_code, error_message=body.error_message)

        def replica(s: Any) -> ReplicaState:
            return ReplicaState(
                replica_id=s.replica_id,
                replica_directory_id=s.replica_directory_id,
                log_end_offset=s.log_end_offset,
                last_fetch_timestamp=s.last_fetch_timestamp,
                last_caught_up_timestamp=s.last_caught_up_timestamp,
            )

        return DescribeQuorumResponse(
            error_code=body.error_code,
            error_message=body.error_message,
            partition_error_code=p.error_code,
            partition_error_message=p.error_message,
            leader_id=p.leader_id,
            leader_epoch=p.leader_epoch,
            high_watermark=p.high_watermark,
            current_voters=tuple(replica(s) for s in p.current_voters or ()),
            observers=tuple(replica(s) for s in p.observers or ()),
            nodes={
                n.node_id: tuple(Endpoint(x.name, x.host, x.port) for x in n.listeners or ())
                for n in body.nodes or ()
            },
        )
    if api_key == ADD_RAFT_VOTER_KEY:
        return AddRaftVoterResponse(error_code=body.error_code, error_message=body.error_message)
    if api_key == REMOVE_RAFT_VOTER_KEY:
        return RemoveRaftVoterResponse(error_code=body.error_code, error_message=body.error_message)
    if api_key == UPDATE_RAFT_VOTER_KEY:
        current = body.current_leader
        leader_endpoints: tuple[Endpoint, ...] = ()
        if current.host or current.port:
            leader_endpoints = (Endpoint(listener_name, current.host, current.port),)
        return UpdateRaftVoterResponse(
            error_code=body.error_code,
            leader_id=current.leader_id,
            leader_epoch=current.leader_epoch,
            leader_endpoints=leader_endpoints,
        )
    raise ValueError(f"API key {api_key} is not a raft API")
