"""EndQuorumEpoch (API key 54): the core's request and response <-> the wire, both directions.

A request must name exactly topic ``__cluster_metadata`` partition 0, else it is answered at once
with a top-level INVALID_REQUEST. The preferred successors are ids only in v0 and ids with directory
ids (``PreferredCandidates``) from v1; both are ignorable, so the one a version lacks is dropped.
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
from kraft.protocol.messages import end_quorum_epoch as wire
from kraft.raft.messages import EndQuorumEpochRequest, EndQuorumEpochResponse
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC, LeaderAndEpoch, ReplicaKey


def encode_request(request: EndQuorumEpochRequest, version: int) -> wire.EndQuorumEpochRequest:
    cls = wire.REQUEST.cls
    partition_cls = cls.TopicData.PartitionData
    partition = partition_cls(
        partition_index=METADATA_PARTITION,
        leader_id=request.leader_id,
        leader_epoch=request.leader_epoch,
        preferred_successors=[k.id for k in request.preferred_candidates],
        preferred_candidates=[
            partition_cls.ReplicaInfo(candidate_id=k.id, candidate_directory_id=k.directory_id)
            for k in request.preferred_candidates
        ],
    )
    return cls(
        cluster_id=request.cluster_id,
        topics=[cls.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])],
        leader_endpoints=named_endpoints(cls.LeaderEndpoint, request.leader_endpoints),
    )


def decode_request(
    body: wire.EndQuorumEpochRequest, version: int, leader: LeaderAndEpoch | None = None
) -> EndQuorumEpochRequest | ImmediateResponse:
    p: wire.EndQuorumEpochRequest.TopicData.PartitionData | None = single_partition(
        body.topics, "topic_name", METADATA_TOPIC, "partition_index"
    )
    if p is None:
        invalid = EndQuorumEpochResponse(error_code=Code.INVALID_REQUEST)
        return ImmediateResponse(encode_response(invalid, 0, ""), INVALID_SHAPE)
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
        leader_endpoints=from_named_endpoints(body.leader_endpoints),
    )


def encode_response(
    response: EndQuorumEpochResponse, version: int, listener_name: str
) -> wire.EndQuorumEpochResponse:
    result: wire.EndQuorumEpochResponse = encode_partition_response(
        wire.RESPONSE.cls, response, version, listener_name
    )
    return result


def decode_response(
    body: wire.EndQuorumEpochResponse, version: int, listener_name: str
) -> EndQuorumEpochResponse:
    return decode_leader_response(body, EndQuorumEpochResponse, listener_name)


CODEC = Codec(
    wire.API,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    encode_request,
    decode_request,
    encode_response,
    decode_response,
)
