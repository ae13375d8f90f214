"""Real broker processes (3 controllers + 3 brokers) serve an unmodified kafka-python admin client.

Every call goes to a broker's client listener: read APIs are answered from the broker's own
metadata replica, writes are forwarded to the active controller.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator

import pytest
from local_cluster import LocalCluster

kafka_admin = pytest.importorskip("kafka.admin")
kafka_errors = pytest.importorskip("kafka.errors")

pytestmark = pytest.mark.slow


@pytest.fixture
def running(local_cluster: Callable[..., LocalCluster]) -> Iterator[LocalCluster]:
    cluster = local_cluster(3, brokers=3)
    cluster.start_all()
    cluster.wait_for_leader()
    cluster.wait_for_brokers()
    yield cluster


def admin_for(cluster: LocalCluster, broker: int | None = None) -> object:
    ids = [broker] if broker is not None else None
    return kafka_admin.KafkaAdminClient(
        bootstrap_servers=cluster.bootstrap_servers(ids), request_timeout_ms=20_000
    )


def test_kafka_python_admin_against_brokers(running: LocalCluster) -> None:
    cluster = running
    b1, b2, b3 = cluster.broker_ids
    admin = admin_for(cluster, b1)
    try:
        cluster_view = admin.describe_cluster()  # type: ignore[attr-defined]
        assert sorted(b["broker_id"] for b in cluster_view["brokers"]) == [b1, b2, b3]
        assert cluster_view["controller_id"] in (b1, b2, b3)
        assert cluster_view["cluster_id"] == cluster.spec.cluster_id

        admin.create_topics(  # type: ignore[attr-defined]
            [
                kafka_admin.NewTopic("orders", 6, 3, topic_configs={"min.insync.replicas": "2"}),
                kafka_admin.NewTopic("manual", replica_assignments={0: [b2, b3], 1: [b3, b1]}),
            ],
            wait_for_metadata=True,
        )
        with pytest.raises(kafka_errors.TopicAlreadyExistsError):
            admin.create_topics([kafka_admin.NewTopic("orders", 1, 1)])  # type: ignore[attr-defined]
        with pytest.raises(kafka_errors.InvalidReplicationFactorError):
            admin.create_topics([kafka_admin.NewTopic("too-wide", 1, 4)])  # type: ignore[attr-defined]
        assert {"orders", "manual"} <= set(admin.list_topics())  # type: ignore[attr-defined]

        (manual,) = admin.describe_topics(["manual"])  # type: ignore[attr-defined]
        replicas = {p["partition_index"]: p["replica_nodes"] for p in manual["partitions"]}
        assert replicas == {0: [b2, b3], 1: [b3, b1]}
        assert all(p["leader_id"] == p["replica_nodes"][0] for p in manual["partitions"])

        # DescribeTopicPartitions, paginated: 8 partitions 3 at a time, following NextCursor.
        seen: list[tuple[str, int]] = []
        cursor = None
        pages = 0
        while True:
            page = admin.describe_topic_partitions(  # type: ignore[attr-defined]
                ["manual", "orders"], response_partition_limit=3, cursor=cursor
            )
            pages += 1
            for topic in page["topics"]:
                for p in topic["partitions"]:
                    seen.append((topic["name"], p["partition_index"]))
                    assert p["isr_nodes"] == p["replica_nodes"] or set(p["isr_nodes"]) <= set(
                        p["replica_nodes"]
                    )
            cursor = page["next_cursor"]
            if cursor is None:
                break
            cursor = {"topic_name": cursor["topic_name"], "partition_index": cursor["partition_index"]}
        assert pages == 3
        assert seen == [("manual", 0), ("manual", 1)] + [("orders", i) for i in range(6)]

        # Configs: describe, then IncrementalAlterConfigs through the broker.
        resource = kafka_admin.ConfigResource(kafka_admin.ConfigResourceType.TOPIC, "orders")
        described = admin.describe_configs([resource])  # type: ignore[attr-defined]
        entry = described["topic"]["orders"]["min.insync.replicas"]
        assert entry["value"] == "2" and entry["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        admin.alter_configs(  # type: ignore[attr-defined]
            [
                kafka_admin.ConfigResource(
                    kafka_admin.ConfigResourceType.TOPIC, "orders", configs={"min.insync.replicas": "3"}
                )
            ]
        )
        described = admin.describe_configs([resource])  # type: ignore[attr-defined]
        assert described["topic"]["orders"]["min.insync.replicas"]["value"] == "3"

        admin.create_partitions({"orders": kafka_admin.NewPartitions(8)})  # type: ignore[attr-defined]
        (orders,) = admin.describe_topics(["orders"])  # type: ignore[attr-defined]
        assert len(orders["partitions"]) == 8  # read-your-writes: the same broker already knows

        # Preferred election: every leader is already preferred, so ELECTION_NOT_NEEDED (which
        # the client does not raise) for each partition asked about.
        result = admin.elect_leaders(0, {"orders": [0, 1]})  # type: ignore[attr-defined]
        codes = {
            p.partition_id: p.error_code for r in result.replica_election_results for p in r.partition_result
        }
        assert codes == {0: 84, 1: 84}

        features = admin.describe_features()  # type: ignore[attr-defined]
        assert features["metadata.version"]["finalized"] == (25, 25)
        assert features["eligible.leader.replicas.version"]["finalized"] == (1, 1)

        quorum = admin.describe_metadata_quorum()  # type: ignore[attr-defined]
        partition = quorum["topics"][0]["partitions"][0]
        assert partition["leader_id"] in cluster.controller_ids
        assert sorted(v["replica_id"] for v in partition["current_voters"]) == cluster.controller_ids
        assert sorted(o["replica_id"] for o in partition["observers"]) == [b1, b2, b3]

        admin.delete_topics(["manual"])  # type: ignore[attr-defined]
        assert "manual" not in admin.list_topics()  # type: ignore[attr-defined]
    finally:
        admin.close()  # type: ignore[attr-defined]


def test_a_topic_created_through_one_broker_is_in_every_brokers_metadata_within_a_heartbeat(
    running: LocalCluster,
) -> None:
    cluster = running
    b1, b2, b3 = cluster.broker_ids
    creator = admin_for(cluster, b1)
    readers = {b: admin_for(cluster, b) for b in (b2, b3)}
    # Each time is from a creation's answer (the controller committed it) until both brokers list
    # the topic: within a heartbeat (broker.heartbeat.interval.ms is 500 in these tests). The
    # median of five is bounded, so that one stall of the machine does not fail the test.
    times: list[float] = []
    try:
        for n in range(5):
            name = f"visible-{n}"
            creator.create_topics([kafka_admin.NewTopic(name, 2, 3)])  # type: ignore[attr-defined]
            started = time.monotonic()
            for b, reader in readers.items():
                while name not in reader.list_topics():  # type: ignore[attr-defined]
                    assert time.monotonic() - started < 10, f"broker {b} never listed {name}"
                    time.sleep(0.01)
            times.append(time.monotonic() - started)
        assert statistics.median(times) < 0.5, f"seconds until every broker listed the topic: {times}"
    finally:
        creator.close()  # type: ignore[attr-defined]
        for reader in readers.values():
            reader.close()  # type: ignore[attr-defined]


def test_admin_writes_survive_a_controller_failover(running: LocalCluster) -> None:
    cluster = running
    admin = admin_for(cluster)
    try:
        admin.create_topics([kafka_admin.NewTopic("before", 1, 3)])  # type: ignore[attr-defined]
        leader = cluster.wait_for_leader().leader_id
        cluster.kill(leader)
        # The broker retries NOT_CONTROLLER and lost connections inside its request timeout.
        admin.create_topics([kafka_admin.NewTopic("after", 1, 3)])  # type: ignore[attr-defined]
        assert {"before", "after"} <= set(admin.list_topics())  # type: ignore[attr-defined]
    finally:
        admin.close()  # type: ignore[attr-defined]


def test_combined_nodes_serve_clients_and_survive_losing_the_active_controller(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3, combined=True)
    cluster.start_all()
    leader = cluster.wait_for_leader().leader_id
    cluster.wait_for_brokers()
    survivors = [n for n in cluster.broker_ids if n != leader]
    admin = admin_for(cluster, survivors[0])
    try:
        admin.create_topics([kafka_admin.NewTopic("combined", 3, 3)])  # type: ignore[attr-defined]
        cluster.kill(leader)  # the active controller and a broker at once
        cluster.wait_for_leader(among=survivors)
        # Its session expires (3 s here): fenced, its leaderships move to the survivors.
        cluster.wait_for(
            "the dead node to be fenced", lambda: cluster.unfenced_brokers() == set(survivors) or None
        )
        # kafka-python keeps the first ControllerId it was told for good (it refreshes only on
        # NOT_CONTROLLER, not on a refused connection), and that may be the node just killed:
        # a client made after the failover is what shows the cluster serves on.
        admin.close()  # type: ignore[attr-defined]
        admin = admin_for(cluster, survivors[1])
        admin.create_topics([kafka_admin.NewTopic("after", 1, 2)])  # type: ignore[attr-defined]
        (topic,) = admin.describe_topics(["combined"])  # type: ignore[attr-defined]
        assert all(p["leader_id"] in survivors for p in topic["partitions"])
        assert {"combined", "after"} <= set(admin.list_topics())  # type: ignore[attr-defined]
    finally:
        admin.close()  # type: ignore[attr-defined]
