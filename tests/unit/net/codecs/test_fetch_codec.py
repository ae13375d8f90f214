"""Fetch on the raft listener: the replica id's move, NodeEndpoints, and the one partition it serves.

The request goes through the multi-partition decoder (``kraft.protocol.fetch_partitions``); the raft
path answers anything but one topic (the metadata topic's id) holding partition 0 alone with a
top-level INVALID_REQUEST and no partitions, as before the decoder existed.
"""

from __future__ import annotations

import uuid

import pytest
from codec_cases import LISTENER, REQUESTS, RESPONSES, of_type, response_over_the_wire

from kraft.net.codecs import ImmediateResponse, fetch
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import FetchRequest, FetchResponse
from kraft.raft.types import METADATA_TOPIC_ID

FETCH = of_type(REQUESTS, FetchRequest)
OTHER_ID = uuid.UUID(int=99)


def test_fetch_moves_the_replica_id_into_replica_state_from_v15() -> None:
    assert fetch.encode_request(FETCH, 14).replica_id == 2
    body = fetch.encode_request(FETCH, 15)
    assert body.replica_id == -1 and body.replica_state.replica_id == 2
    assert body.topics[0].topic_id == METADATA_TOPIC_ID
    for version in (14, 15):
        decoded = fetch.decode_request(fetch.encode_request(FETCH, version), version)
        assert decoded == FETCH


def test_fetch_response_node_endpoints_only_from_v17() -> None:
    response = RESPONSES[4]
    assert isinstance(response, FetchResponse)
    assert fetch.encode_response(response, 16, LISTENER).node_endpoints == []
    endpoints = fetch.encode_response(response, 17, LISTENER).node_endpoints
    assert [(e.node_id, e.host, e.port) for e in endpoints] == [(1, "10.0.0.1", 9093)]


def _request(topics: list[tuple[uuid.UUID, list[int]]]) -> object:
    body = fetch.encode_request(FETCH, 17)
    template = body.topics[0].partitions[0]
    cls = fetch.wire.REQUEST.cls.FetchTopic
    body.topics = [
        cls(
            topic_id=topic_id,
            partitions=[
                cls.FetchPartition(partition=p, fetch_offset=template.fetch_offset, partition_max_bytes=0)
                for p in parts
            ],
        )
        for topic_id, parts in topics
    ]
    return body


@pytest.mark.parametrize(
    "topics",
    [
        [],
        [(METADATA_TOPIC_ID, [])],
        [(METADATA_TOPIC_ID, [1])],
        [(METADATA_TOPIC_ID, [0, 1])],
        [(METADATA_TOPIC_ID, [0, 0])],
        [(OTHER_ID, [0])],
        [(METADATA_TOPIC_ID, [0]), (OTHER_ID, [0])],
        # One partition in all, but two topics: refused, as the one-topic check always did.
        [(METADATA_TOPIC_ID, [0]), (OTHER_ID, [])],
        [(OTHER_ID, []), (METADATA_TOPIC_ID, [0])],
    ],
)
def test_fetch_naming_anything_but_the_metadata_partition_is_an_invalid_request(
    topics: list[tuple[uuid.UUID, list[int]]],
) -> None:
    decoded = fetch.decode_request(_request(topics), 17)
    assert isinstance(decoded, ImmediateResponse)
    assert decoded.body.error_code == ErrorCode.INVALID_REQUEST
    assert decoded.body.responses == []
    assert decoded.reason == fetch.INVALID_SHAPE


def test_fetch_of_the_metadata_partition_reaches_the_core() -> None:
    decoded = fetch.decode_request(_request([(METADATA_TOPIC_ID, [0])]), 17)
    assert isinstance(decoded, FetchRequest)
    assert decoded.fetch_offset == FETCH.fetch_offset


def test_fetch_response_reads_its_first_partition() -> None:
    response = of_type(RESPONSES, FetchResponse)
    body = fetch.encode_response(response, 17, LISTENER)
    extra = fetch.wire.RESPONSE.cls.FetchableTopicResponse(topic_id=OTHER_ID, partitions=[])
    body.responses.append(extra)
    assert fetch.decode_response(body, 17, LISTENER) == response


def test_fetch_response_without_partitions_keeps_its_top_level_error() -> None:
    body = fetch.wire.RESPONSE.cls(error_code=ErrorCode.UNKNOWN_SERVER_ERROR, responses=[])
    assert fetch.decode_response(body, 17, LISTENER) == FetchResponse(
        error_code=ErrorCode.UNKNOWN_SERVER_ERROR
    )


def test_diverging_epoch_and_snapshot_id_survive_the_wire() -> None:
    for response in RESPONSES:
        if isinstance(response, FetchResponse) and (response.diverging_epoch or response.snapshot_id):
            for version in (13, 17):
                back = response_over_the_wire(response, version)
                assert isinstance(back, FetchResponse)
                assert (back.diverging_epoch, back.snapshot_id) == (
                    response.diverging_epoch,
                    response.snapshot_id,
                )
