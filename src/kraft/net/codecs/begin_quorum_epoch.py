"""BeginQuorumEpoch (API key 53): the core's request and response <-> the wire, both directions.

A request must name exactly topic ``__cluster_metadata`` partition 0, else it is answered at once
with a top-level INVALID_REQUEST. LeaderEndpoints (v1+, KIP-853) carry the leader's listeners.
"""

from __future__ import annotations

from kraft.net.codecs.common import (
    INVALID_SHAPE,
    Codec,
    ImmediateResponse,
    decode_leader_response,
    encode_partition_response,
    from_named_endpoints,
    named_endpoints,
    single_partition,
)
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.messages import begin_quorum_epoch as wire
from kraft.raft.messages import BeginQuorumEpochRequest, BeginQuorumEpochResponse
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC, LeaderAndEpoch, ReplicaKey


def encode_request(request: BeginQuorumEpochRequest, version: int) -> wire.BeginQuorumEpochRequest:
    cls = wire.REQUEST.cls
    partition = cls.TopicData.PartitionData(
        partition_index=METADATA_PARTITION,
        voter_directory_id=request.voter_key.directory_id,
        leader_id=request.leader_id,
        leader_epoch=request.leader_epoch,
    )
    return cls(
        cluster_id=request.cluster_id,
        voter_id=request.voter_key.id,
        topics=[cls.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])],
        leader_endpoints=named_endpoints(cls.LeaderEndpoint, request.leader_endpoints),
    )


def decode_request(
    body: wire.BeginQuorumEpochRequest, version: int, leader: LeaderAndEpoch | None = None
) -> BeginQuorumEpochRequest | ImmediateResponse:
    p: wire.BeginQuorumEpochRequest.TopicData.PartitionData | None = single_partition(
        body.topics, "topic_name", METADATA_TOPIC, "partition_index"
    )
    if p is None:
        invalid = BeginQuorumEpochResponse(error_code=Code.INVALID_REQUEST)
        return ImmediateResponse(encode_response(invalid, 0, ""), INVALID_SHAPE)
    return BeginQuorumEpochRequest(
        cluster_id=body.cluster_id,
        voter_key=ReplicaKey(body.voter_id, p.voter_directory_id),
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        leader_endpoints=from_named_endpoints(body.leader_endpoints),
    )


def encode_response(
    response: BeginQuorumEpochResponse, version: int, listener_name: str
) -> wire.BeginQuorumEpochResponse:
    result: wire.BeginQuorumEpochResponse = encode_partition_response(
        wire.RESPONSE.cls, response, version, listener_name
    )
    return result


def decode_response(
    body: wire.BeginQuorumEpochResponse, version: int, listener_name: str
) -> BeginQuorumEpochResponse:
    return decode_leader_response(body, BeginQuorumEpochResponse, listener_name)


CODEC = Codec(
    wire.API,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    encode_request,
    decode_request,
    encode_response,
    decode_response,
)
