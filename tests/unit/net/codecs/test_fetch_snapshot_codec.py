"""FetchSnapshot: a request for another partition is answered with the current leader."""

from __future__ import annotations

from codec_cases import REQUESTS, of_type

from kraft.net.codecs import ImmediateResponse, fetch_snapshot
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import FetchSnapshotRequest
from kraft.raft.types import LeaderAndEpoch

REQUEST = of_type(REQUESTS, FetchSnapshotRequest)


def test_fetch_snapshot_of_another_partition_is_unknown_with_the_current_leader() -> None:
    body = fetch_snapshot.encode_request(REQUEST, 1)
    body.topics[0].partitions[0].partition = 3
    decoded = fetch_snapshot.decode_request(body, 1, LeaderAndEpoch(2, 9))
    assert isinstance(decoded, ImmediateResponse)
    partition = decoded.body.topics[0].partitions[0]
    assert partition.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert (partition.current_leader.leader_id, partition.current_leader.leader_epoch) == (2, 9)


def test_fetch_snapshot_of_another_partition_without_a_leader_names_none() -> None:
    body = fetch_snapshot.encode_request(REQUEST, 1)
    body.topics[0].name = "other"
    decoded = fetch_snapshot.decode_request(body, 1, None)
    assert isinstance(decoded, ImmediateResponse)
    partition = decoded.body.topics[0].partitions[0]
    assert (partition.current_leader.leader_id, partition.current_leader.leader_epoch) == (-1, -1)


def test_fetch_snapshot_naming_two_partitions_is_an_invalid_request() -> None:
    body = fetch_snapshot.encode_request(REQUEST, 1)
    body.topics[0].partitions.append(body.topics[0].partitions[0])
    decoded = fetch_snapshot.decode_request(body, 1, LeaderAndEpoch(2, 9))
    assert isinstance(decoded, ImmediateResponse)
    assert decoded.body.error_code == ErrorCode.INVALID_REQUEST
    assert decoded.body.topics == []
