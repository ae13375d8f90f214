"""BeginQuorumEpoch (API key 53): the core's request and response <-> the wire, both directions.

A request must name exactly topic ``__cluster_metadata`` partition 0, else it is answered at once
with a top-level INVALID_REQUEST. LeaderEndpoints (v1+, KIP-853) carry the leader's listeners.
"""

from __future__ import annotations

from kraft.net.codecs.common import (
    ImmediateResponse,
    from_named_endpoints,
    invalid_shape,
    leader_codec,
    metadata_partition,
    metadata_topics,
    named_endpoints,
)
from kraft.protocol.messages import begin_quorum_epoch as wire
from kraft.raft.messages import BeginQuorumEpochRequest, BeginQuorumEpochResponse
from kraft.raft.types import LeaderAndEpoch, ReplicaKey


def encode_request(request: BeginQuorumEpochRequest, version: int) -> wire.BeginQuorumEpochRequest:
    cls = wire.REQUEST.cls
    return cls(
        cluster_id=request.cluster_id,
        voter_id=request.voter_key.id,
        topics=metadata_topics(
            cls.TopicData,
            voter_directory_id=request.voter_key.directory_id,
            leader_id=request.leader_id,
            leader_epoch=request.leader_epoch,
        ),
        leader_endpoints=named_endpoints(cls.LeaderEndpoint, request.leader_endpoints),
    )


def decode_request(
    body: wire.BeginQuorumEpochRequest, version: int, leader: LeaderAndEpoch | None = None
) -> BeginQuorumEpochRequest | ImmediateResponse:
    p: wire.BeginQuorumEpochRequest.TopicData.PartitionData | None = metadata_partition(body.topics)
    if p is None:
        return invalid_shape(wire.RESPONSE.cls, BeginQuorumEpochResponse)
    return BeginQuorumEpochRequest(
        cluster_id=body.cluster_id,
        voter_key=ReplicaKey(body.voter_id, p.voter_directory_id),
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        leader_endpoints=from_named_endpoints(body.leader_endpoints),
    )


CODEC = leader_codec(
    wire.API, BeginQuorumEpochRequest, BeginQuorumEpochResponse, encode_request, decode_request
)
