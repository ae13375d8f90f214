"""The raft RPCs every codec test converts: one or more of each request and response."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TypeVar

from kraft.net.codecs import CODECS, ImmediateResponse
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
from kraft.raft.rpc import api_key_of
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey

T = TypeVar("T")

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


def served_versions(rpc: RaftRequest | RaftResponse) -> list[int]:
    api = CODECS[api_key_of(rpc)].api
    return list(range(api.served.low, api.served.high + 1))


def request_over_the_wire(request: RaftRequest, version: int) -> RaftRequest | ImmediateResponse:
    """Encode through the table, write and read the bytes, decode through the table."""
    codec = CODECS[api_key_of(request)]
    data = codec.api.encode_request_body(codec.encode_request(request, version), version)
    decoded: RaftRequest | ImmediateResponse = codec.decode_request(
        codec.api.decode_request_body(data, version), version, None
    )
    return decoded


def response_over_the_wire(response: RaftResponse, version: int) -> RaftResponse:
    codec = CODECS[api_key_of(response)]
    data = codec.api.encode_response_body(codec.encode_response(response, version, LISTENER), version)
    decoded: RaftResponse = codec.decode_response(
        codec.api.decode_response_body(data, version), version, LISTENER
    )
    return decoded


def of_type(items: Sequence[object], cls: type[T]) -> T:
    """The first item of ``cls``."""
    return next(x for x in items if isinstance(x, cls))


def hex_bytes(annotated: str) -> bytes:
    """Hex bytes with ``;`` comments, as in tests/golden."""
    return bytes.fromhex("".join(line.split(";")[0] for line in annotated.splitlines()))


# Wire vectors of the KIP-853 voter changes. Source of their bytes: no independent implementation
# is available here (kafka-python only lists the API keys 80-82, without schemas), so each vector is
# assembled by hand, field by field, from Kafka's JSON definitions (``AddRaftVoterRequest.json``
# etc., all flexible v0: compact strings and arrays are length+1 varints, a nullable string null is
# 0x00, every struct ends with its tagged fields). The codec must produce exactly these bytes from
# the core's dataclasses and read them back.


def check_request_vector(request: RaftRequest, annotated: str) -> None:
    codec = CODECS[api_key_of(request)]
    expected = hex_bytes(annotated)
    assert codec.api.encode_request_body(codec.encode_request(request, 0), 0) == expected
    assert codec.decode_request(codec.api.decode_request_body(expected, 0), 0, None) == request


def check_response_vector(response: RaftResponse, annotated: str) -> None:
    codec = CODECS[api_key_of(response)]
    expected = hex_bytes(annotated)
    assert codec.api.encode_response_body(codec.encode_response(response, 0, LISTENER), 0) == expected
    assert codec.decode_response(codec.api.decode_response_body(expected, 0), 0, LISTENER) == response
