"""The multi-partition Fetch decoder, fed by kafka-python 3.0.12's independent encoder.

kafka-python writes FetchRequests and FetchResponses naming several topics (by name up to v12, by
topic id from v13) and partitions; our schema decodes the bytes; ``fetch_request_partitions`` and
``fetch_response_partitions`` must list every partition in wire order with the values the version
carries and Kafka's defaults (-1, the zero UUID) for the rest.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kafka.protocol.consumer import FetchRequest as KpFetchRequest
from kafka.protocol.consumer import FetchResponse as KpFetchResponse

from kraft.common.uuids import ZERO_UUID
from kraft.protocol.fetch_partitions import (
    FIRST_TOPIC_ID_VERSION,
    FetchRequestPartition,
    FetchResponsePartition,
    fetch_request_partitions,
    fetch_response_partitions,
)
from kraft.protocol.messages import fetch

VERSIONS = [0, 4, 5, 9, 11, 12, 13, 15, 16, 17]
# (topic name, topic id, partitions)
TOPICS: list[tuple[str, uuid.UUID, list[int]]] = [
    ("alpha", uuid.UUID(int=0xA1), [2, 0]),
    ("beta", uuid.UUID(int=0xB2), [7]),
    ("gamma", uuid.UUID(int=0xC3), []),  # a topic without partitions contributes nothing
]
DIRECTORY = uuid.UUID(int=0xD1)


def _present(fields: dict[str, tuple[int, Any]], version: int) -> dict[str, Any]:
    """The fields whose first version is at most ``version`` (name -> (since, value))."""
    return {name: value for name, (since, value) in fields.items() if version >= since}


def _request_partition_fields(partition: int) -> dict[str, tuple[int, Any]]:
    return {
        "partition": (0, partition),
        "current_leader_epoch": (9, 30 + partition),
        "fetch_offset": (0, 1000 + partition),
        "last_fetched_epoch": (12, 20 + partition),
        "log_start_offset": (5, 10 + partition),
        "partition_max_bytes": (0, 4096 + partition),
    }


def _kp_request(version: int) -> bytes:
    topic_cls = KpFetchRequest.FetchTopic
    topics = [
        topic_cls(
            topic=name,
            topic_id=topic_id,
            partitions=[
                topic_cls.FetchPartition(
                    **_present(_request_partition_fields(p), version),
                    **({"replica_directory_id": DIRECTORY} if version >= 17 else {}),
                )
                for p in parts
            ],
        )
        for name, topic_id, parts in TOPICS
    ]
    request = KpFetchRequest(version=version, max_wait_ms=500, min_bytes=1, topics=topics)
    return bytes(request.encode(version=version))


@pytest.mark.parametrize("version", VERSIONS)
def test_request_partitions_by_name_then_by_topic_id(version: int) -> None:
    body = fetch.API.decode_request_body(_kp_request(version), version)
    by_id = version >= FIRST_TOPIC_ID_VERSION
    expected = []
    for name, topic_id, parts in TOPICS:
        for p in parts:
            values = _request_partition_fields(p)
            present = _present(values, version)
            expected.append(
                FetchRequestPartition(
                    topic_name=None if by_id else name,
                    topic_id=topic_id if by_id else None,
                    partition=p,
                    fetch_offset=present["fetch_offset"],
                    last_fetched_epoch=present.get("last_fetched_epoch", -1),
                    current_leader_epoch=present.get("current_leader_epoch", -1),
                    log_start_offset=present.get("log_start_offset", -1),
                    partition_max_bytes=present["partition_max_bytes"],
                    replica_directory_id=DIRECTORY if version >= 17 else ZERO_UUID,
                )
            )
    assert fetch_request_partitions(body, version) == expected
    assert [(e.topic_name or e.topic_id, e.partition) for e in expected][:3] == [
        ("alpha" if not by_id else TOPICS[0][1], 2),
        ("alpha" if not by_id else TOPICS[0][1], 0),
        ("beta" if not by_id else TOPICS[1][1], 7),
    ]


def test_request_with_no_topics_has_no_partitions() -> None:
    body = fetch.REQUEST.cls(topics=[])
    assert fetch_request_partitions(body, 17) == []


def _response_partition_fields(p: int) -> dict[str, tuple[int, Any]]:
    return {
        "partition_index": (0, p),
        "error_code": (0, 6 if p == 7 else 0),
        "high_watermark": (0, 500 + p),
        "last_stable_offset": (4, 400 + p),
        "log_start_offset": (5, 300 + p),
        "preferred_read_replica": (11, p % 3),
        "records": (0, b"batch-%d" % p),
    }


def _kp_response(version: int) -> bytes:
    topic_cls = KpFetchResponse.FetchableTopicResponse
    part_cls = topic_cls.PartitionData
    responses = []
    for name, topic_id, parts in TOPICS:
        partitions = []
        for p in parts:
            kw = _present(_response_partition_fields(p), version)
            if version >= 4:
                kw["aborted_transactions"] = [
                    part_cls.AbortedTransaction(producer_id=90 + p, first_offset=80 + p)
                ]
            if version >= 12:
                kw["diverging_epoch"] = part_cls.EpochEndOffset(epoch=4, end_offset=44 + p)
                kw["current_leader"] = part_cls.LeaderIdAndEpoch(leader_id=1, leader_epoch=5)
                if p == 0:
                    kw["snapshot_id"] = part_cls.SnapshotId(end_offset=60, epoch=3)
            partitions.append(part_cls(**kw))
        responses.append(topic_cls(topic=name, topic_id=topic_id, partitions=partitions))
    response = KpFetchResponse(version=version, responses=responses)
    return bytes(response.encode(version=version))


@pytest.mark.parametrize("version", VERSIONS)
def test_response_partitions_by_name_then_by_topic_id(version: int) -> None:
    body = fetch.API.decode_response_body(_kp_response(version), version)
    by_id = version >= FIRST_TOPIC_ID_VERSION
    tagged = version >= 12
    expected = []
    for name, topic_id, parts in TOPICS:
        for p in parts:
            present = _present(_response_partition_fields(p), version)
            expected.append(
                FetchResponsePartition(
                    topic_name=None if by_id else name,
                    topic_id=topic_id if by_id else None,
                    partition_index=p,
                    error_code=present["error_code"],
                    high_watermark=present["high_watermark"],
                    last_stable_offset=present.get("last_stable_offset", -1),
                    log_start_offset=present.get("log_start_offset", -1),
                    diverging_epoch=4 if tagged else -1,
                    diverging_end_offset=44 + p if tagged else -1,
                    current_leader_id=1 if tagged else -1,
                    current_leader_epoch=5 if tagged else -1,
                    snapshot_end_offset=60 if tagged and p == 0 else -1,
                    snapshot_epoch=3 if tagged and p == 0 else -1,
                    aborted_transactions=((90 + p, 80 + p),) if version >= 4 else (),
                    preferred_read_replica=present.get("preferred_read_replica", -1),
                    records=b"batch-%d" % p,
                )
            )
    assert fetch_response_partitions(body, version) == expected


@pytest.mark.parametrize("version", [12, 13, 17])
def test_our_multi_partition_bytes_are_kafka_pythons(version: int) -> None:
    """The bodies the decoder reads re-encode to exactly kafka-python's bytes (nothing is lost)."""
    request_bytes = _kp_request(version)
    response_bytes = _kp_response(version)
    request = fetch.API.decode_request_body(request_bytes, version)
    response = fetch.API.decode_response_body(response_bytes, version)
    assert fetch.API.encode_request_body(request, version) == request_bytes
    assert fetch.API.encode_response_body(response, version) == response_bytes
    assert (
        len(fetch_request_partitions(request, version))
        == len(fetch_response_partitions(response, version))
        == 3
    )


def test_null_aborted_transactions_stay_null() -> None:
    cls = fetch.RESPONSE.cls
    part_cls = cls.FetchableTopicResponse.PartitionData
    body = cls(
        responses=[
            cls.FetchableTopicResponse(
                topic="t", partitions=[part_cls(partition_index=0, aborted_transactions=None, records=None)]
            )
        ]
    )
    decoded = fetch.API.decode_response_body(fetch.API.encode_response_body(body, 4), 4)
    (entry,) = fetch_response_partitions(decoded, 4)
    assert (entry.topic_name, entry.aborted_transactions, entry.records) == ("t", None, None)
