"""Idempotent producers against real broker processes (3 controllers + 3 brokers).

The clients are unmodified: kafka-python 3 with its defaults (idempotence on since KIP-679) and
confluent-kafka (librdkafka) with ``enable.idempotence=true``. Each asks a broker for a producer id
(InitProducerId; the broker asks the active controller for a block: AllocateProducerIds, a
ProducerIdsRecord in the metadata log), then produces batches stamped with that id, its epoch and
sequence numbers. What the tests prove: the records are read back exactly once, in order; every
batch on the leader's disk carries the producer's id with gap-free sequences; the two clients got
different ids; and a batch sent twice (a producer's retry after a lost answer) is written once, the
second Produce answered with the first one's offset, as Kafka's duplicate handling answers.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from local_cluster import LocalCluster

from kraft.client.connection import Address, Connection
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import init_producer_id, produce
from kraft.records.batch import SimpleRecord, build_batch, iter_batches

confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dataplane-cluster")]

TIMEOUT_S = 30.0
COUNT = 200
# client -> the producer id its batches carried (the clients must get different ones)
PRODUCER_IDS: dict[str, int] = {}


@pytest.fixture(scope="module")
def cluster(dataplane_cluster: LocalCluster) -> LocalCluster:
    """The data-plane modules' shared cluster (conftest): this module's topics are its own."""
    return dataplane_cluster


def create_topic(cluster: LocalCluster, name: str, rf: int = 3) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers()})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=1, replication_factor=rf, config={"min.insync.replicas": "2"})],
        operation_timeout=TIMEOUT_S,
        request_timeout=TIMEOUT_S,
    )
    futures[name].result(timeout=TIMEOUT_S)


def leader_of(cluster: LocalCluster, topic: str) -> int:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers()})
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        partitions = admin.list_topics(topic, timeout=TIMEOUT_S).topics[topic].partitions
        if 0 in partitions and partitions[0].leader >= 0:
            return int(partitions[0].leader)
        time.sleep(0.1)
    raise AssertionError(f"{topic}-0 has no leader")


def consume_all(cluster: LocalCluster, topic: str, count: int) -> list[tuple[int, bytes]]:
    """(offset, value) of the first ``count`` records of ``topic``-0, read by librdkafka."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers(),
            "group.id": f"unused-{uuid.uuid4()}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(out) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            out.append((msg.offset(), msg.value()))
        # Nothing after them: a duplicate would show up here.
        extra = consumer.poll(1.0)
        assert extra is None or extra.error() is not None, f"unexpected record at offset {extra.offset()}"
        return out
    finally:
        consumer.close()


def batches_on_disk(cluster: LocalCluster, broker: int, topic: str) -> list[tuple[int, int, int, int, int]]:
    """(base offset, last offset, producer id, producer epoch, base sequence) of each data batch in
    ``topic``-0's segment files on ``broker`` (read from disk, not through the server)."""
    out = []
    for segment in sorted(Path(cluster.node(broker).data_dir, f"{topic}-0").glob("*.log")):
        for batch in iter_batches(segment.read_bytes()):
            if not batch.is_control:
                h = batch.header
                out.append((h.base_offset, h.last_offset, h.producer_id, h.producer_epoch, h.base_sequence))
    return out


def wait_for_batches(
    cluster: LocalCluster, broker: int, topic: str, last_offset: int
) -> list[tuple[int, int, int, int, int]]:
    """The leader's batches once its files hold ``last_offset`` (appends reach the page cache at once,
    but poll rather than assume it)."""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        batches = batches_on_disk(cluster, broker, topic)
        if (batches and batches[-1][1] >= last_offset) or time.monotonic() > deadline:
            return batches
        time.sleep(0.1)


def assert_one_idempotent_producer(batches: list[tuple[int, int, int, int, int]]) -> int:
    """Every batch carries the same producer id (>= 0), epoch 0, and sequences that continue the
    previous batch's exactly with the offsets (no gap, no repeat); returns the producer id."""
    assert batches, "no batches on disk"
    producer_ids = {b[2] for b in batches}
    assert len(producer_ids) == 1, producer_ids
    (producer_id,) = producer_ids
    assert producer_id >= 0
    assert {b[3] for b in batches} == {0}
    for base_offset, _last, _pid, _epoch, base_sequence in batches:
        assert base_sequence == base_offset  # one producer from offset 0: sequence == offset
    offsets = [o for b in batches for o in range(b[0], b[1] + 1)]
    assert offsets == list(range(len(offsets)))
    return producer_id


def test_kafka_python_producer_with_its_defaults_writes_each_record_once(cluster: LocalCluster) -> None:
    topic = "idem-kafka-python"
    create_topic(cluster, topic)
    producer = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap_servers(), linger_ms=5)
    try:
        assert producer.config["enable_idempotence"] is True  # the default, not turned off for us
        values = [f"kp-{i}".encode() for i in range(COUNT)]
        futures = [producer.send(topic, value=v) for v in values]
        producer.flush(TIMEOUT_S)
        assert [f.get(TIMEOUT_S).offset for f in futures] == list(range(COUNT))
    finally:
        producer.close(TIMEOUT_S)
    assert consume_all(cluster, topic, COUNT) == list(enumerate(values))
    leader = leader_of(cluster, topic)
    producer_id = assert_one_idempotent_producer(wait_for_batches(cluster, leader, topic, COUNT - 1))
    PRODUCER_IDS["kafka-python"] = producer_id


def test_confluent_producer_with_idempotence_writes_each_record_once(cluster: LocalCluster) -> None:
    topic = "idem-confluent"
    create_topic(cluster, topic)
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers(), "enable.idempotence": True, "linger.ms": 5}
    )
    acked: list[int] = []
    errors: list[KafkaError] = []

    def report(err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked.append(msg.offset())

    values = [f"ck-{i}".encode() for i in range(COUNT)]
    for v in values:
        producer.produce(topic, value=v, on_delivery=report)
        producer.poll(0)
    assert producer.flush(TIMEOUT_S) == 0
    assert errors == []
    assert acked == list(range(COUNT))
    assert consume_all(cluster, topic, COUNT) == list(enumerate(values))
    leader = leader_of(cluster, topic)
    producer_id = assert_one_idempotent_producer(wait_for_batches(cluster, leader, topic, COUNT - 1))
    PRODUCER_IDS["librdkafka"] = producer_id
    assert len(set(PRODUCER_IDS.values())) == len(PRODUCER_IDS)  # two producers, two ids


def produce_raw(conn: Connection, topic: str, batch: bytes) -> Any:
    """One acks=all Produce of ``batch`` to ``topic``-0; the partition's answer."""
    version = conn.version_or_raise(produce.API, highest=12)  # v13 names topics by id
    cls: Any = produce.REQUEST.cls
    body = cls(
        transactional_id=None,
        acks=-1,
        timeout_ms=int(TIMEOUT_S * 1000),
        topic_data=[
            cls.TopicProduceData(
                name=topic, partition_data=[cls.TopicProduceData.PartitionProduceData(index=0, records=batch)]
            )
        ],
    )
    response = conn.send(produce.API, version, body)
    (topic_response,) = response.responses
    (partition,) = topic_response.partition_responses
    return partition


def test_a_batch_sent_twice_is_written_once_and_the_retry_gets_its_offset(cluster: LocalCluster) -> None:
    topic = "idem-retry"
    create_topic(cluster, topic)
    leader = leader_of(cluster, topic)
    address: Address = cluster.broker_address(leader)
    with Connection(address, TIMEOUT_S, client_id="idempotence-test") as conn:
        version = conn.version_or_raise(init_producer_id.API, highest=4)
        init = conn.send(
            init_producer_id.API,
            version,
            init_producer_id.REQUEST.cls(transactional_id=None, transaction_timeout_ms=60_000),
        )
        assert init.error_code == ErrorCode.NONE and init.producer_id >= 0 and init.producer_epoch == 0
        pid, epoch = init.producer_id, init.producer_epoch

        def batch(first_sequence: int, *values: bytes) -> bytes:
            return build_batch(
                [SimpleRecord(value=v) for v in values],
                timestamp_ms=int(time.time() * 1000),
                producer_id=pid,
                producer_epoch=epoch,
                base_sequence=first_sequence,
            )

        first = batch(0, b"a", b"b", b"c")
        sent = produce_raw(conn, topic, first)
        retried = produce_raw(conn, topic, first)  # the same bytes again: a retry after a lost answer
        assert (sent.error_code, sent.base_offset) == (ErrorCode.NONE, 0)
        assert (retried.error_code, retried.base_offset) == (ErrorCode.NONE, 0)
        after = produce_raw(conn, topic, batch(3, b"d"))
        assert (after.error_code, after.base_offset) == (ErrorCode.NONE, 3)
        gap = produce_raw(conn, topic, batch(10, b"z"))  # sequences 4..9 never sent
        assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    batches = wait_for_batches(cluster, leader, topic, 3)
    assert [(b[0], b[1], b[2], b[4]) for b in batches] == [(0, 2, pid, 0), (3, 3, pid, 3)]
    assert consume_all(cluster, topic, 4) == [(0, b"a"), (1, b"b"), (2, b"c"), (3, b"d")]
