"""DescribeQuorum (API key 55): the core's request and response <-> the wire, both directions.

A request naming anything but ``__cluster_metadata`` partition 0 is answered at once: every
partition it names echoed with UNKNOWN_TOPIC_OR_PARTITION (Kafka's
``getPartitionLevelErrorResponse``). Directory ids (v2+) are not ignorable, so older versions get
the zero id; ``Nodes`` (the voters' listeners) exist from v2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kraft.common.uuids import ZERO_UUID
from kraft.net.codecs.common import (
    Codec,
    ImmediateResponse,
    first_partition,
    metadata_partition,
    metadata_topics,
    named_endpoints,
)
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.messages import describe_quorum as wire
from kraft.raft.messages import DescribeQuorumRequest, DescribeQuorumResponse, ReplicaState
from kraft.raft.types import Endpoint, LeaderAndEpoch

if TYPE_CHECKING:  # (the stub's classes exist at run time only as attributes of RESPONSE.cls)
    _ReplicaStateWire = wire.DescribeQuorumResponse.TopicData.PartitionData.ReplicaState


def encode_request(request: DescribeQuorumRequest, version: int) -> wire.DescribeQuorumRequest:
    return wire.REQUEST.cls(topics=metadata_topics(wire.REQUEST.cls.TopicData))


def decode_request(
    body: wire.DescribeQuorumRequest, version: int, leader: LeaderAndEpoch | None = None
) -> DescribeQuorumRequest | ImmediateResponse:
    if metadata_partition(body.topics) is None:
        return ImmediateResponse(
            partition_error(body, Code.UNKNOWN_TOPIC_OR_PARTITION),
            "only __cluster_metadata partition 0 exists",
        )
    return DescribeQuorumRequest()


def partition_error(
    request_body: wire.DescribeQuorumRequest, error_code: int, message: str | None = None
) -> wire.DescribeQuorumResponse:
    """A response echoing every requested partition with ``error_code``."""
    topic_cls = wire.RESPONSE.cls.TopicData
    return wire.RESPONSE.cls(
        error_code=0,
        topics=[
            topic_cls(
                topic_name=t.topic_name,
                partitions=[
                    topic_cls.PartitionData(
                        partition_index=p.partition_index, error_code=error_code, error_message=message
                    )
                    for p in t.partitions or ()
                ],
            )
            for t in request_body.topics or ()
        ],
    )


def encode_response(
    response: DescribeQuorumResponse, version: int, listener_name: str
) -> wire.DescribeQuorumResponse:
    r = response
    cls = wire.RESPONSE.cls
    partition_cls = cls.TopicData.PartitionData

    def replica(s: ReplicaState) -> _ReplicaStateWire:
        return partition_cls.ReplicaState(
            replica_id=s.replica_id,
            # Directory ids exist from v2 on and are not ignorable: older versions get the zero id.
            replica_directory_id=s.replica_directory_id if version >= 2 else ZERO_UUID,
            log_end_offset=s.log_end_offset,
            last_fetch_timestamp=s.last_fetch_timestamp,
            last_caught_up_timestamp=s.last_caught_up_timestamp,
        )

    topics = []
    if r.error_code == Code.NONE:
        topics = metadata_topics(
            cls.TopicData,
            error_code=r.partition_error_code,
            error_message=r.partition_error_message,
            leader_id=r.leader_id,
            leader_epoch=r.leader_epoch,
            high_watermark=r.high_watermark,
            current_voters=[replica(s) for s in r.current_voters],
            observers=[replica(s) for s in r.observers],
        )
    nodes = []
    if version >= 2:
        nodes = [
            cls.Node(
                node_id=node_id,
                listeners=named_endpoints(cls.Node.Listener, endpoints),
            )
            for node_id, endpoints in sorted(r.nodes.items())
        ]
    return cls(error_code=r.error_code, error_message=r.error_message, topics=topics, nodes=nodes)


def _replica(s: _ReplicaStateWire) -> ReplicaState:
    return ReplicaState(
        replica_id=s.replica_id,
        replica_directory_id=s.replica_directory_id,
        log_end_offset=s.log_end_offset,
        last_fetch_timestamp=s.last_fetch_timestamp,
        last_caught_up_timestamp=s.last_caught_up_timestamp,
    )


def decode_response(
    body: wire.DescribeQuorumResponse, version: int, listener_name: str
) -> DescribeQuorumResponse:
    p: wire.DescribeQuorumResponse.TopicData.PartitionData | None = first_partition(body.topics)
    if p is None:
        return DescribeQuorumResponse(error_code=body.error_code, error_message=body.error_message)
    return DescribeQuorumResponse(
        error_code=body.error_code,
        error_message=body.error_message,
        partition_error_code=p.error_code,
        partition_error_message=p.error_message,
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        high_watermark=p.high_watermark,
        current_voters=tuple(_replica(s) for s in p.current_voters or ()),
        observers=tuple(_replica(s) for s in p.observers or ()),
        nodes={
            n.node_id: tuple(Endpoint(x.name, x.host, x.port) for x in n.listeners or ())
            for n in body.nodes or ()
        },
    )


CODEC = Codec(
    wire.API,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    encode_request,
    decode_request,
    encode_response,
    decode_response,
)
