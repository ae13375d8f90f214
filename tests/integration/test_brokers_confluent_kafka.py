"""Real broker processes (3 controllers + 3 brokers) serve confluent-kafka's AdminClient.

confluent-kafka wraps librdkafka, a C client written independently of Kafka's Java admin client
and of kafka-python: it bootstraps with ApiVersions v3 and Metadata v13, and answers
``describe_cluster`` and ``describe_topics`` from Metadata too. Every call goes to a broker's
client listener; the writes are forwarded to the active controller. One cluster serves the module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

import pytest
from local_cluster import LocalCluster

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import KafkaError, KafkaException, TopicCollection  # noqa: E402
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # noqa: E402
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

# One worker runs the module (`--dist loadgroup`): its cluster fixture is started once, not per worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("confluent-cluster")]

K = TypeVar("K")
TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    c = LocalCluster(tmp_path_factory.mktemp("confluent"), 3, brokers=3)
    try:
        c.start_all()
        c.wait_for_leader()
        c.wait_for_brokers()
        yield c
    finally:
        c.stop_all()


@pytest.fixture
def admin(cluster: LocalCluster) -> AdminClient:
    """A client bootstrapped from the first broker only: it finds the others through Metadata."""
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers(cluster.broker_ids[:1])})


def results(futures: Mapping[K, Future[Any]]) -> dict[K, Any]:
    """Every future's result (raising the first error), keyed as given."""
    return {k: f.result(timeout=TIMEOUT_S) for k, f in futures.items()}


def error_code(future: Future[Any]) -> int:
    """The Kafka error a future failed with."""
    with pytest.raises(KafkaException) as failed:
        future.result(timeout=TIMEOUT_S)
    error: KafkaError = failed.value.args[0]
    return error.code()


def test_confluent_kafka_admin_against_brokers(cluster: LocalCluster, admin: AdminClient) -> None:
    b1, b2, b3 = cluster.broker_ids
    ports = {b: cluster.broker_address(b).port for b in (b1, b2, b3)}

    # -- create_topics: one with a config, one with a replica assignment ---------------------------
    # librdkafka wants the partition count beside an assignment, and no replication factor.
    created = admin.create_topics(
        [
            NewTopic("orders", num_partitions=3, replication_factor=3, config={"min.insync.replicas": "2"}),
            NewTopic("manual", num_partitions=2, replica_assignment=[[b2, b3], [b3, b1]]),
        ],
        operation_timeout=TIMEOUT_S,
        request_timeout=TIMEOUT_S,
    )
    assert results(created) == {"orders": None, "manual": None}
    again = admin.create_topics([NewTopic("orders", 1, 1)], request_timeout=TIMEOUT_S)
    assert error_code(again["orders"]) == KafkaError.TOPIC_ALREADY_EXISTS
    too_wide = admin.create_topics([NewTopic("too-wide", 1, 4)], request_timeout=TIMEOUT_S)
    assert error_code(too_wide["too-wide"]) == KafkaError.INVALID_REPLICATION_FACTOR

    # -- list_topics: ClusterMetadata (Metadata v13 naming the topic) ----------------------------------
    md = admin.list_topics("manual", timeout=TIMEOUT_S)
    assert md.cluster_id == cluster.spec.cluster_id
    assert {(b.id, b.host, b.port) for b in md.brokers.values()} == {
        (b, "127.0.0.1", port) for b, port in ports.items()
    }
    assert md.controller_id in (b1, b2, b3)
    assert set(md.topics) == {"manual"}
    manual = md.topics["manual"]
    assert manual.error is None
    assert {p.id: (p.leader, p.replicas, p.isrs, p.error) for p in manual.partitions.values()} == {
        0: (b2, [b2, b3], [b2, b3], None),
        1: (b3, [b3, b1], [b3, b1], None),
    }
    orders = admin.list_topics("orders", timeout=TIMEOUT_S).topics["orders"]
    assert orders.error is None and sorted(orders.partitions) == [0, 1, 2]
    for p in orders.partitions.values():
        assert p.error is None
        assert sorted(p.replicas) == [b1, b2, b3] and sorted(p.isrs) == [b1, b2, b3]
        assert p.leader == p.replicas[0]

    # -- describe_topics: TopicCollection --------------------------------------------------------------
    described = results(
        admin.describe_topics(TopicCollection(["manual", "orders"]), request_timeout=TIMEOUT_S)
    )
    manual_d = described["manual"]
    assert manual_d.name == "manual" and not manual_d.is_internal
    assert [
        (p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr]) for p in manual_d.partitions
    ] == [
        (0, b2, [b2, b3], [b2, b3]),
        (1, b3, [b3, b1], [b3, b1]),
    ]
    assert {(p.leader.host, p.leader.port) for p in manual_d.partitions} == {
        ("127.0.0.1", ports[b2]),
        ("127.0.0.1", ports[b3]),
    }
    orders_d = described["orders"]
    assert [p.id for p in orders_d.partitions] == [0, 1, 2]
    assert str(orders_d.topic_id) != str(manual_d.topic_id)
    missing = admin.describe_topics(TopicCollection(["no-such-topic"]), request_timeout=TIMEOUT_S)
    assert error_code(missing["no-such-topic"]) == KafkaError.UNKNOWN_TOPIC_OR_PART

    # -- describe_cluster ------------------------------------------------------------------------------
    view = admin.describe_cluster(request_timeout=TIMEOUT_S).result(timeout=TIMEOUT_S)
    assert view.cluster_id == cluster.spec.cluster_id
    assert {(n.id, n.host, n.port) for n in view.nodes} == {
        (b, "127.0.0.1", port) for b, port in ports.items()
    }
    assert view.controller is not None and view.controller.id in (b1, b2, b3)

    # -- describe_configs ------------------------------------------------------------------------------
    resource = ConfigResource(ConfigResource.Type.TOPIC, "orders")

    def orders_configs() -> dict[str, ConfigEntry]:
        (entries,) = results(admin.describe_configs([resource], request_timeout=TIMEOUT_S)).values()
        return dict(entries)

    entries = orders_configs()
    assert entries["min.insync.replicas"].value == "2"
    assert entries["min.insync.replicas"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert entries["cleanup.policy"].value == "delete"
    assert entries["cleanup.policy"].source == ConfigSource.DEFAULT_CONFIG.value
    broker_res = ConfigResource(ConfigResource.Type.BROKER, str(b1))
    (broker_entries,) = results(admin.describe_configs([broker_res], request_timeout=TIMEOUT_S)).values()
    assert (broker_entries["num.partitions"].value, broker_entries["num.partitions"].source) == (
        "1",
        ConfigSource.DEFAULT_CONFIG.value,
    )

    # -- incremental_alter_configs ---------------------------------------------------------------------
    alter = ConfigResource(ConfigResource.Type.TOPIC, "orders")
    alter.add_incremental_config(
        ConfigEntry("min.insync.replicas", "3", incremental_operation=AlterConfigOpType.SET)
    )
    alter.add_incremental_config(
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)
    )
    results(admin.incremental_alter_configs([alter], request_timeout=TIMEOUT_S))
    entries = orders_configs()
    assert entries["min.insync.replicas"].value == "3"
    assert (entries["retention.ms"].value, entries["retention.ms"].source) == (
        "3600000",
        ConfigSource.DYNAMIC_TOPIC_CONFIG.value,
    )
    bad = ConfigResource(ConfigResource.Type.TOPIC, "orders")
    bad.add_incremental_config(
        ConfigEntry("min.insync.replicas", "zero", incremental_operation=AlterConfigOpType.SET)
    )
    (bad_future,) = admin.incremental_alter_configs([bad], request_timeout=TIMEOUT_S).values()
    assert error_code(bad_future) == KafkaError.INVALID_CONFIG
    assert orders_configs()["min.insync.replicas"].value == "3"  # unchanged

    # -- create_partitions -----------------------------------------------------------------------------
    results(admin.create_partitions([NewPartitions("orders", 5)], request_timeout=TIMEOUT_S))
    orders = admin.list_topics("orders", timeout=TIMEOUT_S).topics["orders"]
    assert sorted(orders.partitions) == [0, 1, 2, 3, 4]
    (orders_d,) = results(
        admin.describe_topics(TopicCollection(["orders"]), request_timeout=TIMEOUT_S)
    ).values()
    assert [p.id for p in orders_d.partitions] == [0, 1, 2, 3, 4]
    assert all(len(p.replicas) == 3 for p in orders_d.partitions)
    shrink = admin.create_partitions([NewPartitions("orders", 2)], request_timeout=TIMEOUT_S)
    assert error_code(shrink["orders"]) == KafkaError.INVALID_PARTITIONS

    # -- delete_topics ---------------------------------------------------------------------------------
    assert results(admin.delete_topics(["manual"], request_timeout=TIMEOUT_S)) == {"manual": None}
    # describe_topics never auto-creates (list_topics of one topic may: the handle is a producer).
    gone = admin.describe_topics(TopicCollection(["manual"]), request_timeout=TIMEOUT_S)
    assert error_code(gone["manual"]) == KafkaError.UNKNOWN_TOPIC_OR_PART
    unknown = admin.delete_topics(["manual"], request_timeout=TIMEOUT_S)
    assert error_code(unknown["manual"]) == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_list_topics_of_all_topics(admin: AdminClient) -> None:
    # librdkafka's all-topics Metadata v13 carries 3 bytes after the body; Kafka ignores them, and
    # so do we (a closed connection here once made every confluent-kafka client fail).
    (created,) = admin.create_topics([NewTopic("listed", 1, 3)], request_timeout=TIMEOUT_S).values()
    assert created.exception(timeout=TIMEOUT_S) is None
    md = admin.list_topics(timeout=5)
    assert "listed" in md.topics and sorted(md.topics["listed"].partitions) == [0]
