"""Vote (API key 52): the core's ``VoteRequest``/``VoteResponse`` <-> the wire, both directions.

A request must name exactly topic ``__cluster_metadata`` partition 0, else it is answered at once
with a top-level INVALID_REQUEST. A pre-vote (KIP-996) cannot be written below Vote v2.
"""

from __future__ import annotations

from kraft.net.codecs.common import (
    Codec,
    EncodeVersionError,
    ImmediateResponse,
    encode_partition_response,
    first_partition,
    from_node_endpoints,
    invalid_shape,
    metadata_partition,
    metadata_topics,
)
from kraft.protocol.messages import vote as wire
from kraft.raft.messages import VoteRequest, VoteResponse
from kraft.raft.types import LeaderAndEpoch, ReplicaKey

# Vote v2 is KIP-996: the first version that can carry PreVote=true.
PRE_VOTE_MIN_VERSION = 2


def encode_request(request: VoteRequest, version: int) -> wire.VoteRequest:
    """Raises:
    EncodeVersionError: a pre-vote below v2 (the caller answers the core with UNSUPPORTED_VERSION,
        spec raft.md 3.4)."""
    if request.pre_vote and version < PRE_VOTE_MIN_VERSION:
        raise EncodeVersionError(
            f"a pre-vote needs Vote v{PRE_VOTE_MIN_VERSION}+, the peer speaks v{version}"
        )
    cls = wire.REQUEST.cls
    return cls(
        cluster_id=request.cluster_id,
        voter_id=request.voter_key.id,
        topics=metadata_topics(
            cls.TopicData,
            replica_epoch=request.candidate_epoch,
            replica_id=request.candidate_key.id,
            replica_directory_id=request.candidate_key.directory_id,
            voter_directory_id=request.voter_key.directory_id,
            last_offset_epoch=request.last_offset_epoch,
            last_offset=request.last_offset,
            pre_vote=request.pre_vote,
        ),
    )


def decode_request(
    body: wire.VoteRequest, version: int, leader: LeaderAndEpoch | None = None
) -> VoteRequest | ImmediateResponse:
    p: wire.VoteRequest.TopicData.PartitionData | None = metadata_partition(body.topics)
    if p is None:
        return invalid_shape(wire.RESPONSE.cls, VoteResponse)
    return VoteRequest(
        cluster_id=body.cluster_id,
        candidate_epoch=p.replica_epoch,
        candidate_key=ReplicaKey(p.replica_id, p.replica_directory_id),
        voter_key=ReplicaKey(body.voter_id, p.voter_directory_id),
        last_offset_epoch=p.last_offset_epoch,
        last_offset=p.last_offset,
        pre_vote=p.pre_vote,
    )


def encode_response(response: VoteResponse, version: int, listener_name: str) -> wire.VoteResponse:
    result: wire.VoteResponse = encode_partition_response(
        wire.RESPONSE.cls, response, version, listener_name, vote_granted=response.vote_granted
    )
    return result


def decode_response(body: wire.VoteResponse, version: int, listener_name: str) -> VoteResponse:
    p: wire.VoteResponse.TopicData.PartitionData | None = first_partition(body.topics)
    if p is None:
        return VoteResponse(error_code=body.error_code)
    return VoteResponse(
        error_code=body.error_code,
        partition_error_code=p.error_code,
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        vote_granted=p.vote_granted,
        leader_endpoints=from_node_endpoints(body.node_endpoints, p.leader_id, listener_name),
    )


CODEC = Codec(
    wire.API, VoteRequest, VoteResponse, encode_request, decode_request, encode_response, decode_response
)
