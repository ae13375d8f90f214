"""DescribeQuorum: versions below 2 lose directory ids and nodes; another partition is echoed."""

from __future__ import annotations

import uuid

from codec_cases import LISTENER, RESPONSES

from kraft.net.codecs import ImmediateResponse, describe_quorum
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import DescribeQuorumRequest, DescribeQuorumResponse


def test_describe_quorum_v0_drops_directory_ids_and_nodes() -> None:
    response = RESPONSES[10]
    assert isinstance(response, DescribeQuorumResponse) and response.nodes
    body = describe_quorum.encode_response(response, 0, LISTENER)
    assert body.nodes == []
    assert all(
        v.replica_directory_id == uuid.UUID(int=0) for v in body.topics[0].partitions[0].current_voters
    )
    assert len(describe_quorum.encode_response(response, 2, LISTENER).nodes) == 2


def test_describe_quorum_of_another_partition_echoes_it_with_unknown_topic_or_partition() -> None:
    cls = describe_quorum.wire.REQUEST.cls
    body = cls(
        topics=[cls.TopicData(topic_name="t", partitions=[cls.TopicData.PartitionData(partition_index=4)])]
    )
    decoded = describe_quorum.decode_request(body, 2)
    assert isinstance(decoded, ImmediateResponse)
    assert decoded.body.error_code == 0
    topic = decoded.body.topics[0]
    assert topic.topic_name == "t"
    assert [(p.partition_index, p.error_code) for p in topic.partitions] == [
        (4, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    ]


def test_describe_quorum_of_the_metadata_partition_reaches_the_core() -> None:
    body = describe_quorum.encode_request(DescribeQuorumRequest(), 2)
    assert describe_quorum.decode_request(body, 2) == DescribeQuorumRequest()
