"""EndQuorumEpoch (API key 54): the core's request and response <-> the wire, both directions.

A request must name exactly topic ``__cluster_metadata`` partition 0, else it is answered at once
with a top-level INVALID_REQUEST. The preferred successors are ids only in v0 and ids with directory
ids (``PreferredCandidates``) from v1; both are ignorable, so the one a version lacks is dropped.
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
from kraft.protocol.messages import end_quorum_epoch as wire
from kraft.raft.messages import EndQuorumEpochRequest, EndQuorumEpochResponse
from kraft.raft.types import LeaderAndEpoch, ReplicaKey


def encode_request(request: EndQuorumEpochRequest, version: int) -> wire.EndQuorumEpochRequest:
    cls = wire.REQUEST.cls
    replica_info = cls.TopicData.PartitionData.ReplicaInfo
    return cls(
        cluster_id=request.cluster_id,
        topics=metadata_topics(
            cls.TopicData,
            leader_id=request.leader_id,
            leader_epoch=request.leader_epoch,
            preferred_successors=[k.id for k in request.preferred_candidates],
            preferred_candidates=[
                replica_info(candidate_id=k.id, candidate_directory_id=k.directory_id)
                for k in request.preferred_candidates
            ],
        ),
        leader_endpoints=named_endpoints(cls.LeaderEndpoint, request.leader_endpoints),
    )


def decode_request(
    body: wire.EndQuorumEpochRequest, version: int, leader: LeaderAndEpoch | None = None
) -> EndQuorumEpochRequest | ImmediateResponse:
    p: wire.EndQuorumEpochRequest.TopicData.PartitionData | None = metadata_partition(body.topics)
    if p is None:
        return invalid_shape(wire.RESPONSE.cls, EndQuorumEpochResponse)
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


CODEC = leader_codec(wire.API, EndQuorumEpochRequest, EndQuorumEpochResponse, encode_request, decode_request)
