"""kraft.client.consumer and DataClient.list_offsets against in-process brokers with in-memory logs
(``data_brokers``): positions, seeks, batches that start before the position, control batches,
leader moves, out-of-range resets, Fetch by name and by topic id, and ListOffsets' timestamps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from data_brokers import FETCH, LIST_OFFSETS, DataCluster

from kraft.client.broker_admin import ApiError
from kraft.client.connection import AdminError, parse_bootstrap
from kraft.client.consumer import Consumer, ConsumerRecord, OffsetReset
from kraft.client.data import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    DataClient,
    DataError,
    ListedOffset,
    TopicPartition,
    parse_list_offsets_time,
)
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.schema import Versions
from kraft.records.batch import SimpleRecord, TimestampType, build_batch
from kraft.records.control import ControlType, build_control_batch, end_txn_marker

pytestmark = pytest.mark.timeout(60)
T0 = TopicPartition("t", 0)


@pytest.fixture
def cluster() -> Iterator[DataCluster]:
    with DataCluster() as c:
        yield c


def consumer(cluster: DataCluster, via: int = 1, **options: Any) -> Consumer:
    options.setdefault("fetch_max_wait_ms", 20)
    options.setdefault("retry_backoff_ms", 10)
    options.setdefault("timeout_ms", 5_000)
    return Consumer(parse_bootstrap(cluster.bootstrap(via)), **options)


def append_values(
    cluster: DataCluster, tp: TopicPartition, values: list[str], timestamp_ms: int = 1_000
) -> int:
    batch = build_batch([SimpleRecord(value=v.encode()) for v in values], timestamp_ms=timestamp_ms)
    return cluster.append(tp.topic, tp.partition, batch)


def read(c: Consumer, count: int, timeout_ms: int = 5_000) -> list[ConsumerRecord]:
    out: list[ConsumerRecord] = []
    while len(out) < count:
        got = c.poll(timeout_ms)
        if not got:
            break
        out.extend(got)
    return out


def test_reads_every_assigned_partition_from_the_beginning_in_order(cluster: DataCluster) -> None:
    cluster.create_topic("t", 3)
    for p in range(3):
        append_values(cluster, TopicPartition("t", p), [f"p{p}-a", f"p{p}-b"])
        append_values(cluster, TopicPartition("t", p), [f"p{p}-c"])
    with consumer(cluster, via=2) as c:
        c.assign(TopicPartition("t", p) for p in range(3))
        c.seek_to_beginning()
        got = read(c, 9)
    by_partition = {p: [(r.offset, r.value) for r in got if r.partition == p] for p in range(3)}
    for p in range(3):
        assert by_partition[p] == [(0, f"p{p}-a".encode()), (1, f"p{p}-b".encode()), (2, f"p{p}-c".encode())]
    assert all(r.timestamp_type is TimestampType.CREATE_TIME and r.timestamp_ms == 1_000 for r in got)


def test_seek_into_a_batch_skips_the_records_before_the_position(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1)
    append_values(cluster, T0, ["a", "b", "c", "d"])
    with consumer(cluster) as c:
        c.assign([T0])
        c.seek(T0, 2)
        got = read(c, 2)
        assert [(r.offset, r.value) for r in got] == [(2, b"c"), (3, b"d")]
        assert c.position(T0) == 4


def test_seek_to_end_reads_only_what_comes_after(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1)
    append_values(cluster, T0, ["old"])
    with consumer(cluster) as c:
        c.assign([T0])
        c.seek_to_end()
        assert c.position(T0) == 1
        assert c.poll(50) == []
        append_values(cluster, T0, ["new"])
        assert [r.value for r in read(c, 1)] == [b"new"]


def test_control_batches_are_skipped_but_move_the_position(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1)
    append_values(cluster, T0, ["a"])
    marker = build_control_batch(
        ControlType.COMMIT, end_txn_marker(0), base_offset=0, partition_leader_epoch=0, timestamp_ms=1
    )
    cluster.append("t", 0, marker)
    append_values(cluster, T0, ["b"])
    with consumer(cluster) as c:
        c.assign([T0])
        c.seek_to_beginning()
        got = read(c, 2)
        assert [(r.offset, r.value) for r in got] == [(0, b"a"), (2, b"b")]
        assert c.position(T0) == 3


def test_a_leader_move_is_followed_after_not_leader_or_a_fenced_epoch(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1, leaders=[1])
    append_values(cluster, T0, ["a"])
    with consumer(cluster, via=3) as c:
        c.assign([T0])
        c.seek_to_beginning()
        assert [r.value for r in read(c, 1)] == [b"a"]
        cluster.move_leader("t", 0, 2)
        append_values(cluster, T0, ["b"])
        assert [r.value for r in read(c, 1)] == [b"b"]
        cluster.inject(FETCH, "t", 0, ErrorCode.FENCED_LEADER_EPOCH)
        append_values(cluster, T0, ["c"])
        assert [r.value for r in read(c, 1)] == [b"c"]
    fetches = cluster.broker(2).requests(FETCH)
    assert fetches[0].body.topics[0].partitions[0].current_leader_epoch == 1  # the epoch Metadata gave


@pytest.mark.parametrize(
    ("reset", "expected"), [(OffsetReset.EARLIEST, [b"a", b"b"]), (OffsetReset.LATEST, [b"later"])]
)
def test_an_out_of_range_position_resets_as_auto_offset_reset_says(
    cluster: DataCluster, reset: OffsetReset, expected: list[bytes]
) -> None:
    cluster.create_topic("t", 1)
    append_values(cluster, T0, ["a", "b"])
    with consumer(cluster, auto_offset_reset=reset) as c:
        c.assign([T0])
        c.seek(T0, 99)
        first = c.poll(200)
        append_values(cluster, T0, ["later"])
        got = first + read(c, len(expected) - len(first))
        assert [r.value for r in got] == expected


def test_with_reset_none_an_out_of_range_position_is_an_error(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1)
    append_values(cluster, T0, ["a"])
    with consumer(cluster, auto_offset_reset=OffsetReset.NONE) as c:
        c.assign([T0])
        with pytest.raises(DataError, match="no valid position"):
            c.poll(100)
        c.seek(T0, 5)
        with pytest.raises(DataError, match="Fetch position 5 is out of range for partition t-0"):
            c.poll(100)


def test_an_error_that_retrying_cannot_clear_fails_the_poll(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1)
    cluster.inject(FETCH, "t", 0, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    with consumer(cluster) as c:
        c.assign([T0])
        c.seek(T0, 0)
        with pytest.raises(DataError, match="Fetch of t-0 failed: TOPIC_AUTHORIZATION_FAILED"):
            c.poll(1_000)


def test_fetch_names_topics_by_id_from_v13_and_by_name_before() -> None:
    for served, version in ((None, 17), ({FETCH: Versions(4, 12)}, 12)):
        with DataCluster(served=served) as cluster:
            topic = cluster.create_topic("t", 1)
            append_values(cluster, T0, ["x"])
            with consumer(cluster) as c:
                c.assign([T0])
                c.seek(T0, 0)
                assert [r.value for r in read(c, 1)] == [b"x"]
            request = cluster.broker(1).requests(FETCH)[0]
            assert request.version == version
            fetched = request.body.topics[0]
            assert (fetched.topic_id if version >= 13 else fetched.topic) == (
                topic.topic_id if version >= 13 else "t"
            )


def test_list_offsets_earliest_latest_max_timestamp_and_by_time(cluster: DataCluster) -> None:
    cluster.create_topic("t", 2)
    append_values(cluster, T0, ["a", "b"], timestamp_ms=100)
    append_values(cluster, T0, ["c"], timestamp_ms=300)
    append_values(cluster, T0, ["d"], timestamp_ms=200)
    tps = [T0, TopicPartition("t", 1)]
    with DataClient(parse_bootstrap(cluster.bootstrap(3)), timeout_ms=5_000) as client:
        latest = client.list_offsets(tps, LATEST_TIMESTAMP)
        earliest = client.list_offsets(tps, EARLIEST_TIMESTAMP)
        by_max = client.list_offsets([T0], MAX_TIMESTAMP)
        by_time = client.list_offsets(tps, 150)
    assert {tp: a.offset for tp, a in latest.items() if isinstance(a, ListedOffset)} == {T0: 4, tps[1]: 0}
    assert {tp: a.offset for tp, a in earliest.items() if isinstance(a, ListedOffset)} == {T0: 0, tps[1]: 0}
    assert by_max[T0] == ListedOffset(2, 300, 0)
    assert by_time[T0] == ListedOffset(2, 300, 0)
    assert by_time[tps[1]] == ListedOffset(-1, -1, 0)  # nothing at or after 150


def test_list_offsets_waits_out_a_new_leader_and_reports_lasting_errors(cluster: DataCluster) -> None:
    cluster.create_topic("t", 2, leaders=[1, 2])
    cluster.inject(LIST_OFFSETS, "t", 0, ErrorCode.OFFSET_NOT_AVAILABLE, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    cluster.inject(LIST_OFFSETS, "t", 1, ErrorCode.POLICY_VIOLATION)
    with DataClient(parse_bootstrap(cluster.bootstrap(1)), timeout_ms=5_000, retry_backoff_ms=5) as client:
        got = client.list_offsets([T0, TopicPartition("t", 1)], LATEST_TIMESTAMP)
    assert got[T0] == ListedOffset(0, -1, 0)
    answer = got[TopicPartition("t", 1)]
    assert isinstance(answer, ApiError) and answer.code == ErrorCode.POLICY_VIOLATION
    assert len(cluster.broker(1).requests(LIST_OFFSETS)) == 3


def test_list_offsets_of_a_partition_without_a_leader_times_out_naming_it(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1, leaders=[-1])
    client = DataClient(parse_bootstrap(cluster.bootstrap(1)), timeout_ms=200, retry_backoff_ms=5)
    with client, pytest.raises(AdminError) as raised:
        client.list_offsets([T0], LATEST_TIMESTAMP)
    assert "t-0: partition t-0 has no live leader (leader id -1)" in str(raised.value)


def test_time_arguments_parse_as_kafkas_get_offsets_does() -> None:
    assert [
        parse_list_offsets_time(t) for t in ("latest", "earliest", "max-timestamp", "-1", "-2", "-3", "17")
    ] == [
        -1,
        -2,
        -3,
        -1,
        -2,
        -3,
        17,
    ]
    assert parse_list_offsets_time("earliest-local") == -4
    with pytest.raises(ValueError, match="Malformed time argument yesterday"):
        parse_list_offsets_time("yesterday")
    with pytest.raises(ValueError, match="not supported"):
        parse_list_offsets_time("-6")


def test_consumer_settings_out_of_range_are_refused(cluster: DataCluster) -> None:
    with pytest.raises(ValueError, match="must exceed fetch_max_wait_ms"):
        consumer(cluster, fetch_max_wait_ms=5_000, request_timeout_ms=1_000)
    with pytest.raises(ValueError, match="isolation_level"):
        consumer(cluster, isolation_level=2)
    with consumer(cluster) as c, pytest.raises(ValueError, match="not assigned"):
        c.seek(T0, 0)
