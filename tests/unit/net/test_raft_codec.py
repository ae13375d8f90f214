"""raft_codec: every raft RPC converted both ways at every served version, and the shape errors."""

from __future__ import annotations

import uuid

import pytest

from kraft.net import raft_codec as rc
from kraft.protocol.error_codes import ErrorCode
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
    METADATA_TOPIC,
    METADATA_TOPIC_ID,
    Endpoint,
    LeaderAndEpoch,
    OffsetAndEpoch,
    ReplicaKey,
)

DIR_A = uuid.UUID(int=0xA)
DIR_B = uuid.UUID(int=0xB)
EP = (Endpoint("CONTROLLER", "10.0.0.1", 9093),)
LISTENER = "CONTROLLER"

REQUESTS: list[RaftRequest] = [
    VoteRequest(
        cluster_id="c1",
        candidate_epoch=7,
        candidate_key=ReplicaKey(1, DIR_A),
        voter_key=ReplicaKey(2, DIR_B),
        last_offset_epoch=6,
        last_offset=42,
        pre_vote=False,
    ),
    VoteRequest(
        cluster_id=None,
        candidate_epoch=7,
        candidate_key=ReplicaKey(1, DIR_A),
        voter_key=ReplicaKey(2, DIR_B),
        last_offset_epoch=7,
        last_offset=42,
        pre_vote=True,
    ),
    BeginQuorumEpochRequest(
        cluster_id="c1", voter_key=ReplicaKey(2, DIR_B), leader_id=1, leader_epoch=7, leader_endpoints=EP
    ),
    EndQuorumEpochRequest(
        cluster_id="c1",
        leader_id=1,
        leader_epoch=7,
        preferred_candidates=(ReplicaKey(3, DIR_A), ReplicaKey(2, DIR_B)),
        leader_endpoints=EP,
    ),
    FetchRequest(
        cluster_id="c1",
        replica_key=ReplicaKey(2, DIR_B),
        max_wait_ms=500,
        fetch_offset=100,
        last_fetched_epoch=6,
        current_leader_epoch=7,
        max_bytes=1 << 20,
    ),
    FetchSnapshotRequest(
        cluster_id="c1",
        replica_key=ReplicaKey(2, DIR_B),
        current_leader_epoch=7,
        snapshot_id=OffsetAndEpoch(100, 6),
        position=4096,
        max_bytes=1 << 20,
    ),
    DescribeQuorumRequest(),
    AddRaftVoterRequest(
        cluster_id="c1",
        timeout_ms=30_000,
        voter_key=ReplicaKey(4, DIR_A),
        listeners=(Endpoint("CONTROLLER", "10.0.0.4", 9093), Endpoint("OTHER", "::1", 9094)),
    ),
    RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(2, DIR_B)),
    UpdateRaftVoterRequest(
        cluster_id="c1",
        current_leader_epoch=7,
        voter_key=ReplicaKey(3, DIR_A),
        listeners=EP,
        min_kraft_version=0,
        max_kraft_version=1,
    ),
]

RESPONSES: list[RaftResponse] = [
    VoteResponse(partition_error_code=0, leader_id=1, leader_epoch=7, vote_granted=True, leader_endpoints=EP),
    VoteResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID),
    BeginQuorumEpochResponse(
        partition_error_code=ErrorCode.FENCED_LEADER_EPOCH, leader_id=3, leader_epoch=8, leader_endpoints=EP
    ),
    EndQuorumEpochResponse(leader_id=1, leader_epoch=7, leader_endpoints=EP),
    FetchResponse(
        high_watermark=90,
        log_start_offset=0,
        records=b"\x00" * 70,
        current_leader_id=1,
        current_leader_epoch=7,
        leader_endpoints=EP,
    ),
    FetchResponse(
        high_watermark=90,
        diverging_epoch=OffsetAndEpoch(80, 5),
        current_leader_id=1,
        current_leader_epoch=7,
        leader_endpoints=EP,
    ),
    FetchResponse(
        high_watermark=90,
        snapshot_id=OffsetAndEpoch(50, 4),
        current_leader_id=1,
        current_leader_epoch=7,
        leader_endpoints=EP,
    ),
    FetchResponse(
        partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, current_leader_id=-1, current_leader_epoch=8
    ),
    FetchResponse(error_code=ErrorCode.INVALID_REQUEST),
    FetchSnapshotResponse(
        snapshot_id=OffsetAndEpoch(50, 4),
        current_leader_id=1,
        current_leader_epoch=7,
        size=10000,
        position=4096,
        unaligned_records=b"abc",
        leader_endpoints=EP,
    ),
    DescribeQuorumResponse(
        leader_id=1,
        leader_epoch=7,
        high_watermark=90,
        current_voters=(
            ReplicaState(
                replica_id=1,
                replica_directory_id=DIR_A,
                log_end_offset=100,
                last_fetch_timestamp=5,
                last_caught_up_timestamp=5,
            ),
            ReplicaState(
                replica_id=2,
                replica_directory_id=DIR_B,
                log_end_offset=90,
                last_fetch_timestamp=4,
                last_caught_up_timestamp=3,
            ),
        ),
        observers=(
            ReplicaState(replica_id=9, log_end_offset=10, last_fetch_timestamp=2, last_caught_up_timestamp=1),
        ),
        nodes={1: EP, 2: (Endpoint("CONTROLLER", "10.0.0.2", 9093),)},
    ),
    DescribeQuorumResponse(
        partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, partition_error_message="not me"
    ),
    AddRaftVoterResponse(),
    AddRaftVoterResponse(error_code=ErrorCode.DUPLICATE_VOTER, error_message="voter 4 is already a voter"),
    RemoveRaftVoterResponse(error_code=ErrorCode.VOTER_NOT_FOUND, error_message=None),
    UpdateRaftVoterResponse(leader_id=1, leader_epoch=7, leader_endpoints=EP),
    UpdateRaftVoterResponse(error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, leader_id=-1, leader_epoch=8),
]


def _versions(rpc: RaftRequest | RaftResponse) -> list[int]:
    api = rc.RAFT_APIS[rc.api_key_of(rpc)]
    return list(range(api.served.low, api.served.high + 1))


def _wire_request_roundtrip(request: RaftRequest, version: int) -> RaftRequest | rc.ImmediateResponse:
    key = rc.api_key_of(request)
    api = rc.RAFT_APIS[key]
    data = api.encode_request_body(rc.encode_request(request, version), version)
    return rc.decode_request(key, api.decode_request_body(data, version))


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_request_survives_the_wire_at_its_highest_version(request_: RaftRequest) -> None:
    assert _wire_request_roundtrip(request_, _versions(request_)[-1]) == request_


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_request_at_every_version_keeps_what_the_version_can_carry(request_: RaftRequest) -> None:
    for version in _versions(request_):
        if isinstance(request_, VoteRequest) and request_.pre_vote and version < rc.PRE_VOTE_MIN_VERSION:
            continue
        back = _wire_request_roundtrip(request_, version)
        assert isinstance(back, type(request_)), (version, back)
        # Epochs and offsets exist in every version.
        for name in (
            "candidate_epoch",
            "leader_epoch",
            "fetch_offset",
            "last_offset",
            "position",
            "current_leader_epoch",
            "snapshot_id",
        ):
            if hasattr(request_, name):
                assert getattr(back, name) == getattr(request_, name), (name, version)


def test_pre_vote_cannot_be_encoded_below_vote_v2() -> None:
    pre_vote = REQUESTS[1]
    assert isinstance(pre_vote, VoteRequest) and pre_vote.pre_vote
    for version in (0, 1):
        with pytest.raises(rc.EncodeVersionError, match="pre-vote"):
            rc.encode_request(pre_vote, version)


def test_end_quorum_epoch_v0_maps_successor_ids_to_unknown_directories() -> None:
    back = _wire_request_roundtrip(REQUESTS[3], 0)
    assert isinstance(back, EndQuorumEpochRequest)
    assert back.preferred_candidates == (ReplicaKey(3), ReplicaKey(2))


def test_fetch_moves_the_replica_id_into_replica_state_from_v15() -> None:
    fetch_request = REQUESTS[4]
    assert rc.encode_request(fetch_request, 14).replica_id == 2
    body = rc.encode_request(fetch_request, 15)
    assert body.replica_id == -1 and body.replica_state.replica_id == 2
    assert body.topics[0].topic_id == METADATA_TOPIC_ID


@pytest.mark.parametrize("response", RESPONSES, ids=lambda r: type(r).__name__)
def test_response_survives_the_wire_at_its_highest_version(response: RaftResponse) -> None:
    key = rc.api_key_of(response)
    api = rc.RAFT_APIS[key]
    version = _versions(response)[-1]
    data = api.encode_response_body(rc.encode_response(response, version, listener_name=LISTENER), version)
    back = rc.decode_response(key, api.decode_response_body(data, version), listener_name=LISTENER)
    assert back == response


@pytest.mark.parametrize("response", RESPONSES, ids=lambda r: type(r).__name__)
def test_response_encodes_at_every_version(response: RaftResponse) -> None:
    key = rc.api_key_of(response)
    api = rc.RAFT_APIS[key]
    for version in _versions(response):
        data = api.encode_response_body(
            rc.encode_response(response, version, listener_name=LISTENER), version
        )
        back = rc.decode_response(key, api.decode_response_body(data, version), listener_name=LISTENER)
        assert back.error_code == response.error_code
        assert getattr(back, "partition_error_code", 0) == getattr(response, "partition_error_code", 0)


def test_fetch_response_node_endpoints_only_from_v17() -> None:
    response = RESPONSES[4]
    assert rc.encode_response(response, 16, listener_name=LISTENER).node_endpoints == []
    endpoints = rc.encode_response(response, 17, listener_name=LISTENER).node_endpoints
    assert [(e.node_id, e.host, e.port) for e in endpoints] == [(1, "10.0.0.1", 9093)]


def test_describe_quorum_v0_drops_directory_ids_and_nodes() -> None:
    body = rc.encode_response(RESPONSES[10], 0, listener_name=LISTENER)
    assert body.nodes == []
    assert all(
        v.replica_directory_id == uuid.UUID(int=0) for v in body.topics[0].partitions[0].current_voters
    )


def _wire_vote(topics: list[tuple[str, list[int]]]) -> object:
    cls = rc.vote.REQUEST.cls
    return cls(
        cluster_id=None,
        topics=[
            cls.TopicData(
                topic_name=name, partitions=[cls.TopicData.PartitionData(partition_index=p) for p in parts]
            )
            for name, parts in topics
        ],
    )


@pytest.mark.parametrize(
    "topics",
    [
        [],
        [(METADATA_TOPIC, [])],
        [(METADATA_TOPIC, [0, 1])],
        [(METADATA_TOPIC, [1])],
        [("other", [0])],
        [(METADATA_TOPIC, [0]), ("other", [0])],
    ],
)
def test_vote_naming_anything_but_the_metadata_partition_is_an_invalid_request(
    topics: list[tuple[str, list[int]]],
) -> None:
    decoded = rc.decode_request(rc.VOTE_KEY, _wire_vote(topics))
    assert isinstance(decoded, rc.ImmediateResponse)
    assert decoded.body.error_code == ErrorCode.INVALID_REQUEST
    assert decoded.body.topics == []


def test_fetch_by_another_topic_id_is_an_invalid_request() -> None:
    body = rc.encode_request(REQUESTS[4], 17)
    body.topics[0].topic_id = uuid.UUID(int=99)
    decoded = rc.decode_request(rc.FETCH_KEY, body)
    assert isinstance(decoded, rc.ImmediateResponse)
    assert decoded.body.error_code == ErrorCode.INVALID_REQUEST


def test_fetch_snapshot_of_another_partition_is_unknown_with_the_current_leader() -> None:
    body = rc.encode_request(REQUESTS[5], 1)
    body.topics[0].partitions[0].partition = 3
    decoded = rc.decode_request(rc.FETCH_SNAPSHOT_KEY, body, leader=LeaderAndEpoch(2, 9))
    assert isinstance(decoded, rc.ImmediateResponse)
    partition = decoded.body.topics[0].partitions[0]
    assert partition.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert (partition.current_leader.leader_id, partition.current_leader.leader_epoch) == (2, 9)


def test_describe_quorum_of_another_partition_echoes_it_with_unknown_topic_or_partition() -> None:
    cls = rc.describe_quorum.REQUEST.cls
    body = cls(
        topics=[cls.TopicData(topic_name="t", partitions=[cls.TopicData.PartitionData(partition_index=4)])]
    )
    decoded = rc.decode_request(rc.DESCRIBE_QUORUM_KEY, body)
    assert isinstance(decoded, rc.ImmediateResponse)
    assert decoded.body.error_code == 0
    topic = decoded.body.topics[0]
    assert topic.topic_name == "t"
    assert [(p.partition_index, p.error_code) for p in topic.partitions] == [
        (4, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    ]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_error_response_for_every_request_type_carries_the_code(request_: RaftRequest) -> None:
    response = rc.error_response_for(request_, ErrorCode.BROKER_NOT_AVAILABLE)
    assert rc.api_key_of(response) == rc.api_key_of(request_)
    assert response.error_code == ErrorCode.BROKER_NOT_AVAILABLE


def test_request_source_is_the_sender() -> None:
    assert [rc.request_source(r) for r in REQUESTS] == [1, 1, 1, 1, 2, 2, -1, -1, -1, 3]
    assert [rc.is_admin_request(r) for r in REQUESTS] == [False] * 6 + [True, True, True, False]
