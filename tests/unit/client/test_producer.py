"""kraft.client.producer against in-process brokers with in-memory logs (``data_brokers``: the real
KafkaServer and codecs): Kafka's partitioner, batching, codecs, acks, leader moves, retries and
failures."""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from data_brokers import FETCH, PRODUCE, DataCluster

from kraft.client.connection import AdminError, parse_bootstrap
from kraft.client.producer import ProduceError, Producer, ProducerRecord, murmur2, partition_for_key
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.schema import Versions
from kraft.records.batch import Compression, Header

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cluster() -> Iterator[DataCluster]:
    with DataCluster() as c:
        yield c


def producer(cluster: DataCluster, via: int = 1, **options: Any) -> Producer:
    options.setdefault("retry_backoff_ms", 10)
    options.setdefault("timeout_ms", 5_000)
    return Producer(parse_bootstrap(cluster.bootstrap(via)), rng=random.Random(7), **options)


def values(n: int, prefix: str = "v") -> list[ProducerRecord]:
    return [ProducerRecord(value=f"{prefix}{i}".encode()) for i in range(n)]


@pytest.mark.parametrize(
    "key", [b"", b"a", b"ab", b"abc", b"abcd", b"orders-17", "ключ".encode(), bytes(range(256))]
)
def test_murmur2_matches_kafka_pythons_port_of_kafkas_hash(key: bytes) -> None:
    from kafka.partitioner.default import murmur2 as theirs

    assert murmur2(key) & 0xFFFFFFFF == theirs(bytearray(key)) & 0xFFFFFFFF


def test_keyed_records_go_where_kafkas_partitioner_puts_them(cluster: DataCluster) -> None:
    cluster.create_topic("orders", 5)
    records = [
        ProducerRecord(key=f"customer-{i % 7}".encode(), value=f"order-{i}".encode()) for i in range(60)
    ]
    with producer(cluster) as p:
        acked = p.send("orders", records)
    for record, meta in zip(records, acked, strict=True):
        assert record.key is not None
        assert meta.partition == partition_for_key(record.key, 5)
    # Per partition: dense offsets, in the order sent.
    for partition in range(5):
        sent = [r.value for r, m in zip(records, acked, strict=True) if m.partition == partition]
        assert cluster.log("orders", partition).values() == sent
        assert [m.offset for m in acked if m.partition == partition] == list(range(len(sent)))


def test_keyless_records_stick_to_one_partition_per_batch(cluster: DataCluster) -> None:
    cluster.create_topic("t", 3)
    with producer(cluster, batch_size=100) as p:
        acked = p.send("t", values(40))
    partitions = [m.partition for m in acked]
    runs = [partitions[0]]
    for x in partitions[1:]:
        if x != runs[-1]:
            runs.append(x)
    # Batches of ~4 records (100 bytes), each on one partition, switching between batches.
    assert len(runs) >= 5
    assert all(a != b for a, b in itertools.pairwise(runs))
    assert sorted(v for i in range(3) for v in cluster.log("t", i).values()) == sorted(
        r.value for r in values(40)
    )


def test_batches_respect_batch_size_and_keep_at_least_one_record(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1)
    big = [ProducerRecord(value=b"x" * 500, partition=0) for _ in range(3)]
    small = [ProducerRecord(value=b"y", partition=0) for _ in range(10)]
    with producer(cluster, batch_size=300) as p:
        p.send("t", big)
        p.send("t", small)
    sizes = [len(b.records) for b in cluster.log("t", 0).decoded()]
    assert sizes[:3] == [1, 1, 1]  # each too big for a batch alone, sent alone
    assert sizes[3:] == [10]  # ten small ones fit one batch


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP, Compression.LZ4, Compression.ZSTD])
def test_each_codec_reaches_the_log_as_asked(cluster: DataCluster, codec: int) -> None:
    cluster.create_topic("t", 1)
    records = [
        ProducerRecord(key=b"k", value=f"{i}".encode() * 30, headers=(Header(key="n", value=b"1"),))
        for i in range(20)
    ]
    with producer(cluster, compression=codec) as p:
        p.send("t", records)
    (batch,) = cluster.log("t", 0).decoded()
    assert batch.header.compression == codec
    assert [(r.key, r.value, r.headers) for r in batch.records] == [
        (r.key, r.value, r.headers) for r in records
    ]


def test_acks_zero_sends_without_waiting_and_reports_no_offsets(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1)
    with producer(cluster, acks=0) as p:
        acked = p.send("t", values(5))
        assert [m.offset for m in acked] == [-1] * 5
        p.send("t", values(1, "after"))
    # The records arrive all the same, in order, though nobody waited for them.
    deadline = time.monotonic() + 10
    while len(cluster.log("t", 0).values()) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cluster.log("t", 0).values() == [f"v{i}".encode() for i in range(5)] + [b"after0"]
    assert [r.body.acks for r in cluster.broker(1).requests(PRODUCE)] == [0, 0]


def test_not_leader_refreshes_metadata_and_follows_the_new_leader(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1, leaders=[1])
    with producer(cluster, via=3, retries=3) as p:
        p.send("t", values(2))  # leader 1
        cluster.move_leader("t", 0, 2)
        acked = p.send("t", values(3, "w"))
    assert [m.offset for m in acked] == [2, 3, 4]
    assert len(cluster.broker(1).requests(PRODUCE)) == 2  # the first send, then NOT_LEADER
    assert len(cluster.broker(2).requests(PRODUCE)) == 1
    assert cluster.log("t", 0).values() == [b"v0", b"v1", b"w0", b"w1", b"w2"]


def test_retriable_answers_are_retried_and_then_succeed(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1, leaders=[1])
    cluster.inject(PRODUCE, "t", 0, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.REQUEST_TIMED_OUT)
    with producer(cluster, retries=2) as p:
        acked = p.send("t", values(2))
    assert [m.offset for m in acked] == [0, 1]
    assert len(cluster.broker(1).requests(PRODUCE)) == 3


def test_retries_run_out_with_the_last_error(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1, leaders=[1])
    cluster.inject(PRODUCE, "t", 0, *[ErrorCode.NOT_ENOUGH_REPLICAS] * 3)
    with (
        producer(cluster, retries=2) as p,
        pytest.raises(ProduceError, match=r"NOT_ENOUGH_REPLICAS.*after 2 retries"),
    ):
        p.send("t", values(1))
    assert cluster.log("t", 0).values() == []


def test_an_error_retrying_cannot_change_fails_at_once(cluster: DataCluster) -> None:
    cluster.create_topic("t", 1, leaders=[1])
    cluster.inject(PRODUCE, "t", 0, ErrorCode.MESSAGE_TOO_LARGE)
    with producer(cluster) as p, pytest.raises(ProduceError) as raised:
        p.send("t", values(1))
    assert raised.value.error.code == ErrorCode.MESSAGE_TOO_LARGE
    assert str(raised.value.tp) == "t-0"
    assert len(cluster.broker(1).requests(PRODUCE)) == 1


def test_an_unknown_topic_times_out_naming_what_was_awaited(cluster: DataCluster) -> None:
    with producer(cluster, timeout_ms=300) as p, pytest.raises(AdminError) as raised:
        p.send("missing", values(1))
    text = str(raised.value)
    assert "timed out after 300 ms waiting for topic missing in the metadata" in text
    assert "UNKNOWN_TOPIC_OR_PARTITION" in text


def test_a_broker_without_topic_ids_gets_produce_v12_by_name() -> None:
    with DataCluster(served={PRODUCE: Versions(3, 12), FETCH: Versions(4, 12)}) as cluster:
        cluster.create_topic("t", 1)
        with producer(cluster) as p:
            p.send("t", values(2))
        (request,) = cluster.broker(1).requests(PRODUCE)
        assert request.version == 12
        assert request.body.topic_data[0].name == "t"
        assert cluster.log("t", 0).values() == [b"v0", b"v1"]


def test_produce_v13_names_the_topic_by_id(cluster: DataCluster) -> None:
    topic = cluster.create_topic("t", 1)
    with producer(cluster) as p:
        p.send("t", values(1))
    (request,) = cluster.broker(1).requests(PRODUCE)
    assert request.version == 13
    assert request.body.topic_data[0].topic_id == topic.topic_id


def test_settings_out_of_range_are_refused(cluster: DataCluster) -> None:
    with pytest.raises(ValueError, match="acks"):
        producer(cluster, acks=2)
    with pytest.raises(ValueError, match="compression"):
        producer(cluster, compression=Compression.SNAPPY)
    cluster.create_topic("t", 2)
    with producer(cluster) as p, pytest.raises(ValueError, match=r"Invalid partition given with record: 2"):
        p.send("t", [ProducerRecord(value=b"x", partition=2)])
