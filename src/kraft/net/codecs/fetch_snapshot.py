"""FetchSnapshot (API key 59): the core's request and response <-> the wire, both directions.

A request must name exactly one topic with one partition, else it is answered at once with a
top-level INVALID_REQUEST; one naming any partition but ``__cluster_metadata``-0 gets a
partition-level UNKNOWN_TOPIC_OR_PARTITION with this node's current leader and epoch.
"""

from __future__ import annotations

from typing import Any

from kraft.net.codecs.common import (
    Codec,
    ImmediateResponse,
    first_partition,
    from_node_endpoints,
    node_endpoints,
    single_partition,
)
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.messages import fetch_snapshot as wire
from kraft.raft.messages import FetchSnapshotRequest, FetchSnapshotResponse
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC, LeaderAndEpoch, OffsetAndEpoch, ReplicaKey


def encode_request(request: FetchSnapshotRequest, version: int) -> wire.FetchSnapshotRequest:
    cls = wire.REQUEST.cls
    partition_cls = cls.TopicSnapshot.PartitionSnapshot
    partition = partition_cls(
        partition=METADATA_PARTITION,
        current_leader_epoch=request.current_leader_epoch,
        snapshot_id=partition_cls.SnapshotId(
            end_offset=request.snapshot_id.offset, epoch=request.snapshot_id.epoch
        ),
        position=request.position,
        replica_directory_id=request.replica_key.directory_id,
    )
    return cls(
        cluster_id=request.cluster_id,
        replica_id=request.replica_key.id,
        max_bytes=request.max_bytes,
        topics=[cls.TopicSnapshot(name=METADATA_TOPIC, partitions=[partition])],
    )


def _has_one_partition(topics: list[Any] | None) -> bool:
    if not topics or len(topics) != 1:
        return False
    partitions = topics[0].partitions
    return partitions is not None and len(partitions) == 1


def decode_request(
    body: wire.FetchSnapshotRequest, version: int, leader: LeaderAndEpoch | None = None
) -> FetchSnapshotRequest | ImmediateResponse:
    """``leader``: this node's view, named in the answer to a request for another partition."""
    if not _has_one_partition(body.topics):
        return ImmediateResponse(
            encode_response(FetchSnapshotResponse(error_code=Code.INVALID_REQUEST), 0, ""),
            "the request must name exactly one topic with one partition",
        )
    p: wire.FetchSnapshotRequest.TopicSnapshot.PartitionSnapshot | None = single_partition(
        body.topics, "name", METADATA_TOPIC, "partition"
    )
    if p is None:
        current = leader or LeaderAndEpoch(None, -1)
        unknown = FetchSnapshotResponse(
            partition_error_code=Code.UNKNOWN_TOPIC_OR_PARTITION,
            current_leader_id=-1 if current.leader_id is None else current.leader_id,
            current_leader_epoch=current.epoch,
        )
        return ImmediateResponse(
            encode_response(unknown, 0, ""), "only __cluster_metadata partition 0 exists"
        )
    return FetchSnapshotRequest(
        cluster_id=body.cluster_id,
        replica_key=ReplicaKey(body.replica_id, p.replica_directory_id),
        current_leader_epoch=p.current_leader_epoch,
        snapshot_id=OffsetAndEpoch(p.snapshot_id.end_offset, p.snapshot_id.epoch),
        position=p.position,
        max_bytes=body.max_bytes,
    )


def encode_response(
    response: FetchSnapshotResponse, version: int, listener_name: str
) -> wire.FetchSnapshotResponse:
    r = response
    cls = wire.RESPONSE.cls
    partition_cls = cls.TopicSnapshot.PartitionSnapshot
    topics = []
    if r.error_code == Code.NONE:
        partition = partition_cls(
            index=METADATA_PARTITION,
            error_code=r.partition_error_code,
            snapshot_id=partition_cls.SnapshotId(end_offset=r.snapshot_id.offset, epoch=r.snapshot_id.epoch),
            current_leader=partition_cls.LeaderIdAndEpoch(
                leader_id=r.current_leader_id, leader_epoch=r.current_leader_epoch
            ),
            size=r.size,
            position=r.position,
            unaligned_records=r.unaligned_records,
        )
        topics = [cls.TopicSnapshot(name=METADATA_TOPIC, partitions=[partition])]
    return cls(
        throttle_time_ms=0,
        error_code=r.error_code,
        topics=topics,
        node_endpoints=node_endpoints(
            cls.NodeEndpoint, version, r.current_leader_id, r.leader_endpoints, listener_name
        ),
    )


def decode_response(
    body: wire.FetchSnapshotResponse, version: int, listener_name: str
) -> FetchSnapshotResponse:
    p: wire.FetchSnapshotResponse.TopicSnapshot.PartitionSnapshot | None = first_partition(body.topics)
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
        leader_endpoints=from_node_endpoints(body.node_endpoints, p.current_leader.leader_id, listener_name),
    )


CODEC = Codec(
    wire.API,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    encode_request,
    decode_request,
    encode_response,
    decode_response,
)
