"""kraft.raft.rpc: API keys, synthesized error answers and request sources, without the wire."""

from __future__ import annotations

import pytest

from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import REGISTRY
from kraft.raft.messages import (
    AddRaftVoterRequest,
    BeginQuorumEpochRequest,
    DescribeQuorumRequest,
    EndQuorumEpochRequest,
    Envelope,
    FetchRequest,
    FetchSnapshotRequest,
    RaftRequest,
    RemoveRaftVoterRequest,
    UpdateRaftVoterRequest,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.rpc import (
    RAFT_API_KEYS,
    api_key_of,
    error_response_for,
    is_admin_request,
    request_cluster_id,
    request_source,
)
from kraft.raft.types import OffsetAndEpoch, ReplicaKey

REQUESTS: list[RaftRequest] = [
    VoteRequest(
        cluster_id="c1",
        candidate_epoch=7,
        candidate_key=ReplicaKey(1),
        voter_key=ReplicaKey(2),
        last_offset_epoch=6,
        last_offset=42,
    ),
    VoteRequest(
        cluster_id=None,
        candidate_epoch=7,
        candidate_key=ReplicaKey(1),
        voter_key=ReplicaKey(2),
        last_offset_epoch=7,
        last_offset=42,
        pre_vote=True,
    ),
    BeginQuorumEpochRequest(cluster_id="c1", voter_key=ReplicaKey(2), leader_id=1, leader_epoch=7),
    EndQuorumEpochRequest(cluster_id="c1", leader_id=1, leader_epoch=7, preferred_candidates=()),
    FetchRequest(
        cluster_id="c1",
        replica_key=ReplicaKey(2),
        max_wait_ms=500,
        fetch_offset=100,
        last_fetched_epoch=6,
        current_leader_epoch=7,
        max_bytes=1 << 20,
    ),
    FetchSnapshotRequest(
        cluster_id="c1",
        replica_key=ReplicaKey(2),
        current_leader_epoch=7,
        snapshot_id=OffsetAndEpoch(100, 6),
        position=0,
        max_bytes=1 << 20,
    ),
    DescribeQuorumRequest(),
    AddRaftVoterRequest(cluster_id="c1", timeout_ms=30_000, voter_key=ReplicaKey(4), listeners=()),
    RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(2)),
    UpdateRaftVoterRequest(
        cluster_id="c1",
        current_leader_epoch=7,
        voter_key=ReplicaKey(3),
        listeners=(),
        min_kraft_version=0,
        max_kraft_version=1,
    ),
]


def test_every_rpc_travels_under_its_api_key() -> None:
    assert [api_key_of(r) for r in REQUESTS] == [52, 52, 53, 54, 1, 59, 55, 80, 81, 82]
    assert sorted(RAFT_API_KEYS) == sorted(set(api_key_of(r) for r in REQUESTS))
    assert api_key_of(VoteResponse()) == 52
    assert [REGISTRY[k].name for k in (52, 80)] == ["Vote", "AddRaftVoter"]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_error_response_for_every_request_type_carries_the_code(request_: RaftRequest) -> None:
    response = error_response_for(request_, ErrorCode.BROKER_NOT_AVAILABLE)
    assert api_key_of(response) == api_key_of(request_)
    assert type(response).__name__ == type(request_).__name__.replace("Request", "Response")
    assert response.error_code == ErrorCode.BROKER_NOT_AVAILABLE


def test_a_non_raft_message_has_no_key_and_no_error_answer() -> None:
    with pytest.raises(TypeError, match="not a raft RPC"):
        api_key_of(Envelope(1, 2, 3, DescribeQuorumRequest()))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a raft request"):
        error_response_for(VoteResponse(), ErrorCode.NONE)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a raft request"):
        request_source(object())  # type: ignore[arg-type]


def test_request_source_is_the_sender() -> None:
    assert [request_source(r) for r in REQUESTS] == [1, 1, 1, 1, 2, 2, -1, -1, -1, 3]
    assert [is_admin_request(r) for r in REQUESTS] == [False] * 6 + [True, True, True, False]


def test_request_cluster_id_is_none_only_where_the_request_has_none() -> None:
    assert [request_cluster_id(r) for r in REQUESTS] == [
        "c1",
        None,
        "c1",
        "c1",
        "c1",
        "c1",
        None,
        "c1",
        None,
        "c1",
    ]
    assert isinstance(REQUESTS[1], VoteRequest) and REQUESTS[1].cluster_id is None
