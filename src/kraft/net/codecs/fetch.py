"""Fetch (API key 1) on the raft listener: the core's ``FetchRequest``/``FetchResponse`` <-> the wire.

The request's partitions are read with the version-aware ``kraft.protocol.fetch_partitions`` (the
decoder the broker's data plane shares); the raft path then wants exactly one topic, the metadata
topic's id, holding exactly partition 0, and answers anything else at once with a top-level
INVALID_REQUEST and no partitions. A response is read from its first partition (the one a raft peer
sends). ReplicaId moved into the tagged ReplicaState in v15 (KIP-903); NodeEndpoints exist from v16
and raft fills them from v17, for the known leader only (spec raft.md 3.7).
"""

from __future__ import annotations

from kraft.net.codecs.common import Codec, ImmediateResponse, endpoints_for_wire, from_node_endpoints
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.fetch_partitions import fetch_request_partitions, fetch_response_partitions
from kraft.protocol.messages import fetch as wire
from kraft.raft.messages import FetchRequest, FetchResponse
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC_ID, LeaderAndEpoch, OffsetAndEpoch, ReplicaKey

INVALID_SHAPE = "the request must name exactly the metadata topic id, partition 0"


def encode_request(request: FetchRequest, version: int) -> wire.FetchRequest:
    cls = wire.REQUEST.cls
    partition = cls.FetchTopic.FetchPartition(
        partition=METADATA_PARTITION,
        current_leader_epoch=request.current_leader_epoch,
        fetch_offset=request.fetch_offset,
        last_fetched_epoch=request.last_fetched_epoch,
        log_start_offset=-1,
        partition_max_bytes=0,
        replica_directory_id=request.replica_key.directory_id,
    )
    body = cls(
        cluster_id=request.cluster_id,
        max_wait_ms=request.max_wait_ms,
        min_bytes=0,
        max_bytes=request.max_bytes,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[cls.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[partition])],
        forgotten_topics_data=[],
        rack_id="",
    )
    # ReplicaId moved into the tagged ReplicaState in v15 (KIP-903).
    if version >= 15:
        body.replica_state = cls.ReplicaState(replica_id=request.replica_key.id, replica_epoch=-1)
    else:
        body.replica_id = request.replica_key.id
    return body


def decode_request(
    body: wire.FetchRequest, version: int, leader: LeaderAndEpoch | None = None
) -> FetchRequest | ImmediateResponse:
    partitions = fetch_request_partitions(body, version)
    p = partitions[0] if len(body.topics) == 1 and len(partitions) == 1 else None
    if p is None or p.topic_id != METADATA_TOPIC_ID or p.partition != METADATA_PARTITION:
        return ImmediateResponse(
            wire.RESPONSE.cls(error_code=Code.INVALID_REQUEST, responses=[]), INVALID_SHAPE
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


def encode_response(response: FetchResponse, version: int, listener_name: str) -> wire.FetchResponse:
    r = response
    cls = wire.RESPONSE.cls
    partition_cls = cls.FetchableTopicResponse.PartitionData
    responses = []
    if r.error_code == Code.NONE:
        partition = partition_cls(
            partition_index=METADATA_PARTITION,
            error_code=r.partition_error_code,
            high_watermark=r.high_watermark,
            last_stable_offset=-1,
            log_start_offset=r.log_start_offset,
            current_leader=partition_cls.LeaderIdAndEpoch(
                leader_id=r.current_leader_id, leader_epoch=r.current_leader_epoch
            ),
            aborted_transactions=[],
            preferred_read_replica=-1,
            records=r.records,
        )
        if r.diverging_epoch is not None:
            partition.diverging_epoch = partition_cls.EpochEndOffset(
                epoch=r.diverging_epoch.epoch, end_offset=r.diverging_epoch.offset
            )
        if r.snapshot_id is not None:
            partition.snapshot_id = partition_cls.SnapshotId(
                end_offset=r.snapshot_id.offset, epoch=r.snapshot_id.epoch
            )
        responses = [cls.FetchableTopicResponse(topic_id=METADATA_TOPIC_ID, partitions=[partition])]
    body = cls(throttle_time_ms=0, error_code=r.error_code, session_id=0, responses=responses)
    # Raft fills NodeEndpoints only from v17 on, and only for the known leader (spec raft.md 3.7).
    if version >= 17 and r.current_leader_id >= 0:
        body.node_endpoints = [
            cls.NodeEndpoint(node_id=r.current_leader_id, host=e.host, port=e.port, rack=None)
            for e in endpoints_for_wire(r.leader_endpoints, listener_name)
        ]
    return body


def decode_response(body: wire.FetchResponse, version: int, listener_name: str) -> FetchResponse:
    """The first partition of the first topic; a response without one keeps only its top-level error
    (a well-behaved peer sends that shape only together with a top-level error)."""
    if not body.responses or not body.responses[0].partitions:
        return FetchResponse(error_code=body.error_code)
    p = fetch_response_partitions(body, version)[0]
    diverging = None
    if p.diverging_epoch >= 0 or p.diverging_end_offset >= 0:
        diverging = OffsetAndEpoch(p.diverging_end_offset, p.diverging_epoch)
    snapshot = None
    if p.snapshot_end_offset >= 0 or p.snapshot_epoch >= 0:
        snapshot = OffsetAndEpoch(p.snapshot_end_offset, p.snapshot_epoch)
    return FetchResponse(
        error_code=body.error_code,
        partition_error_code=p.error_code,
        high_watermark=p.high_watermark,
        log_start_offset=p.log_start_offset,
        records=bytes(p.records or b""),
        diverging_epoch=diverging,
        current_leader_id=p.current_leader_id,
        current_leader_epoch=p.current_leader_epoch,
        snapshot_id=snapshot,
        leader_endpoints=from_node_endpoints(body.node_endpoints, p.current_leader_id, listener_name),
    )


CODEC = Codec(
    wire.API, FetchRequest, FetchResponse, encode_request, decode_request, encode_response, decode_response
)
