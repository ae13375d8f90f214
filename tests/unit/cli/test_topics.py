"""kraft topics: Kafka's kafka-topics.sh layouts and rules against in-process fake brokers (the real
KafkaServer and codec, canned answers): spec 8.1's describe layout, DescribeTopicPartitions cursor
pagination, the Metadata fallback (N/A for ELR), --topic-id, the report filters, create/alter/delete
through the controller (NOT_CONTROLLER followed), error exits and argument misuse."""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from fake_brokers import (
    FakeBroker,
    FakeCluster,
    Part,
    Topic,
    config,
    configs_answer,
    create_partitions_body,
    create_topics_body,
    delete_topics_body,
    describe_cluster_body,
    dtp_body,
    metadata_answer,
    topic_id,
)

from kraft.cli import topics
from kraft.protocol.messages import create_partitions as create_partitions_msg
from kraft.protocol.messages import create_topics as create_topics_msg
from kraft.protocol.messages import delete_topics as delete_topics_msg
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import describe_configs as describe_configs_msg
from kraft.protocol.messages import describe_topic_partitions as dtp_msg
from kraft.protocol.messages import metadata as metadata_msg

pytestmark = pytest.mark.timeout(60)

TOPIC, BROKER = 2, 4
DYNAMIC_TOPIC, STATIC_BROKER, DEFAULT = 1, 4, 5
ORDERS_ID = "3CGBmPeXQ7C6fIGTOYpoXw"

ORDERS = Topic(
    "orders",
    topic_id(ORDERS_ID),
    [
        Part(0, leader=1, replicas=[1, 2, 3], isr=[1, 2, 3]),
        Part(1, leader=-1, replicas=[2, 3, 1], isr=[], elr=[2, 3], last_known_elr=[1]),
    ],
)
ORDERS_CONFIGS = [
    config("cleanup.policy", "delete", DEFAULT),
    config("min.insync.replicas", "2", DYNAMIC_TOPIC, ("min.insync.replicas", "2", DYNAMIC_TOPIC)),
    config("retention.ms", "604800000", DEFAULT),
]

SPEC_EXAMPLE = (
    f"Topic: orders\tTopicId: {ORDERS_ID}\tPartitionCount: 2\tReplicationFactor: 3\t"
    "Configs: min.insync.replicas=2\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: \tElr: 2,3\tLastKnownElr: 1\n"
)


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster() as c:
        yield c


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = topics.main(argv, out, err=err)
    return code, out.getvalue(), err.getvalue()


def bootstrap(broker: FakeBroker) -> list[str]:
    return [
        "--bootstrap-server",
        f"127.0.0.1:{broker.port}",
        "--timeout-ms",
        "3000",
        "--request-timeout-ms",
        "2000",
    ]


def serve_topics(
    broker: FakeBroker,
    all_topics: list[Topic],
    configs: dict[tuple[int, str], Any] | None = None,
    brokers: list[Any] | None = None,
    controller_id: int | None = None,
) -> None:
    """Metadata, DescribeCluster, DescribeTopicPartitions (one page) and DescribeConfigs."""
    listed = brokers if brokers is not None else [broker]
    controller = broker.node_id if controller_id is None else controller_id
    broker.on(metadata_msg.API, metadata_answer(listed, controller, all_topics))
    broker.on(describe_cluster_msg.API, describe_cluster_body([broker, 2, 3]))
    by_name = {t.name: t for t in all_topics}
    broker.on(
        dtp_msg.API, lambda req: dtp_body([by_name[t.name] for t in req.body.topics if t.name in by_name])
    )
    if configs is None:  # every topic has only defaults
        configs = {(TOPIC, t.name): [] for t in all_topics}
    broker.on(describe_configs_msg.API, configs_answer(configs))


# -----------------------------------------------------------------------------------------------
# --describe


def test_describe_prints_the_spec_example_layout(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    serve_topics(broker, [ORDERS], {(TOPIC, "orders"): ORDERS_CONFIGS})
    code, out, err = run([*bootstrap(broker), "--describe", "--topic", "orders"])
    assert (code, err) == (0, "")
    assert out == SPEC_EXAMPLE
    (request,) = broker.requests(dtp_msg.API)
    assert [t.name for t in request.body.topics] == ["orders"]
    assert request.body.response_partition_limit == 2000 and request.body.cursor is None
    (configs_request,) = broker.requests(describe_configs_msg.API)
    assert [(r.resource_type, r.resource_name) for r in configs_request.body.resources] == [(TOPIC, "orders")]


def test_describe_follows_next_cursor_across_several_responses(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    a = Topic("a", topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [Part(i, 1, [1], [1]) for i in range(3)])
    b = Topic("b", topic_id("AAAAAAAAAAAAAAAAAAAAAg"), [Part(i, 1, [1], [1]) for i in range(2)])
    c = Topic("c", topic_id("AAAAAAAAAAAAAAAAAAAAAw"), [Part(0, 1, [1], [1])])
    serve_topics(broker, [a, b, c])

    def part(t: Topic, *indexes: int) -> Topic:
        return Topic(t.name, t.topic_id, [p for p in t.partitions if p.index in indexes])

    # Spec 6.3's example with L = 4, then one more page for c.
    broker.on(
        dtp_msg.API,
        [
            dtp_body([a, part(b, 0)], next_cursor=("b", 1)),
            dtp_body([part(b, 1)], next_cursor=("c", 0)),
            dtp_body([c]),
        ],
    )
    code, out, _ = run([*bootstrap(broker), "--describe", "--partition-size-limit-per-response", "4"])
    assert code == 0
    requests = broker.requests(dtp_msg.API)
    assert [
        (r.body.cursor.topic_name, r.body.cursor.partition_index) if r.body.cursor else None for r in requests
    ] == [
        None,
        ("b", 1),
        ("c", 0),
    ]
    assert {r.body.response_partition_limit for r in requests} == {4}
    assert [[t.name for t in r.body.topics] for r in requests] == [["a", "b", "c"]] * 3
    lines = out.splitlines()
    assert [line.split("\t")[0] for line in lines if not line.startswith("\t")] == [
        "Topic: a",
        "Topic: b",
        "Topic: c",
    ]
    assert "PartitionCount: 2" in lines[4]  # b's partitions came from two responses
    assert [line for line in lines if line.startswith("\tTopic: b")] == [
        "\tTopic: b\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: ",
        "\tTopic: b\tPartition: 1\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: ",
    ]


def test_describe_refuses_a_cursor_that_does_not_advance(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    a = Topic("a", topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [Part(0, 1, [1], [1]), Part(1, 1, [1], [1])])
    serve_topics(broker, [a])
    broker.on(dtp_msg.API, [dtp_body([a], next_cursor=("a", 1))])  # the same page forever
    code, out, err = run([*bootstrap(broker), "--describe", "--topic", "a", "--timeout-ms", "2000"])
    assert (code, out) == (1, "")
    assert err.startswith("Error while executing topic command : timed out after 2000 ms")
    assert "cursor that does not advance (a:1 -> a:1)" in err
    assert err.count("\n") == 1


def test_describe_falls_back_to_metadata_when_the_broker_has_no_describe_topic_partitions(
    cluster: FakeCluster,
) -> None:
    broker = cluster.add_broker(1, api_keys=(3, 18, 32, 60))
    serve_topics(broker, [ORDERS], {(TOPIC, "orders"): ORDERS_CONFIGS})
    code, out, _ = run([*bootstrap(broker), "--describe", "--topic", "orders"])
    assert code == 0
    assert out == (
        f"Topic: orders\tTopicId: {ORDERS_ID}\tPartitionCount: 2\tReplicationFactor: 3\t"
        "Configs: min.insync.replicas=2\n"
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: N/A\tLastKnownElr: N/A\n"
        "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: \tElr: N/A\tLastKnownElr: N/A\n"
    )
    named = [r for r in broker.requests(metadata_msg.API) if r.body.topics]
    assert [[t.name for t in r.body.topics] for r in named] == [["orders"]]
    assert named[0].body.allow_auto_topic_creation is False


def test_describe_falls_back_to_metadata_on_an_unsupported_version_answer(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    serve_topics(broker, [ORDERS], {(TOPIC, "orders"): ORDERS_CONFIGS})
    broker.on(dtp_msg.API, dtp_body([Topic("orders", topic_id(ORDERS_ID), [], error_code=35)]))
    code, out, _ = run([*bootstrap(broker), "--describe", "--topic", "orders"])
    assert code == 0
    assert out.count("Elr: N/A\tLastKnownElr: N/A") == 2


def test_describe_by_topic_id_uses_metadata(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    other = Topic("other", topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [Part(0, 1, [1], [1])])
    serve_topics(broker, [ORDERS, other], {(TOPIC, "orders"): ORDERS_CONFIGS})
    code, out, _ = run([*bootstrap(broker), "--describe", "--topic-id", ORDERS_ID])
    assert code == 0
    assert out.splitlines()[0].startswith(f"Topic: orders\tTopicId: {ORDERS_ID}\t")
    assert out.count("\tElr: N/A\tLastKnownElr: N/A\n") == 2 and "other" not in out
    assert not broker.requests(dtp_msg.API)
    by_id = [r for r in broker.requests(metadata_msg.API) if r.body.topics]
    assert [(t.name, t.topic_id) for t in by_id[0].body.topics] == [(None, topic_id(ORDERS_ID))]


def test_describe_by_unknown_topic_id_fails_unless_if_exists(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    serve_topics(broker, [ORDERS])
    missing = "AAAAAAAAAAAAAAAAAAAABA"
    code, out, err = run([*bootstrap(broker), "--describe", "--topic-id", missing])
    assert (code, out) == (1, "")
    assert err == f"Error while executing topic command : TopicId '{missing}' does not exist as expected\n"
    assert run([*bootstrap(broker), "--describe", "--topic-id", missing, "--if-exists"]) == (0, "", "")


def test_describe_of_a_missing_topic_fails_unless_if_exists(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    serve_topics(broker, [ORDERS])
    code, out, err = run([*bootstrap(broker), "--describe", "--topic", "nope"])
    assert (code, out) == (1, "")
    assert err == "Error while executing topic command : Topic 'nope' does not exist as expected\n"
    assert run([*bootstrap(broker), "--describe", "--topic", "nope", "--if-exists"]) == (0, "", "")


def test_describe_matches_the_topic_as_a_regex_and_can_exclude_internal_topics(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    mk = [
        Topic(n, topic_id(f"AAAAAAAAAAAAAAAAAAAAA{c}"), [Part(0, 1, [1], [1])], internal=n.startswith("__"))
        for n, c in (("orders.v1", "Q"), ("ordersXv1", "g"), ("__consumer_offsets", "w"), ("payments", "A"))
    ]
    serve_topics(broker, mk)

    def described(*extra: str) -> list[str]:
        code, out, _ = run([*bootstrap(broker), "--describe", *extra])
        assert code == 0
        return [line.split("\t")[0] for line in out.splitlines() if not line.startswith("\t")]

    assert described("--topic", r"orders\.v1") == ["Topic: orders.v1"]
    assert described("--topic", "orders.v1") == ["Topic: orders.v1", "Topic: ordersXv1"]
    assert described("--topic", "'pay.*, __.*'") == ["Topic: __consumer_offsets", "Topic: payments"]
    assert described("--exclude-internal") == ["Topic: orders.v1", "Topic: ordersXv1", "Topic: payments"]
    code, _, err = run([*bootstrap(broker), "--describe", "--topic", "order"])
    assert code == 1 and "Topic 'order' does not exist as expected" in err


STATES = Topic(
    "states",
    topic_id("AAAAAAAAAAAAAAAAAAAAAQ"),
    [
        Part(0, leader=1, replicas=[1, 2, 3], isr=[1, 2, 3]),  # healthy
        Part(1, leader=1, replicas=[1, 2, 3], isr=[1, 2]),  # under-replicated, at min ISR (2)
        Part(2, leader=2, replicas=[1, 2, 3], isr=[2]),  # under-replicated, under min ISR
        Part(3, leader=-1, replicas=[1, 2, 3], isr=[], elr=[3]),  # no leader
        Part(4, leader=7, replicas=[7, 1, 2], isr=[7, 1, 2]),  # leader not a live broker
    ],
)


@pytest.mark.parametrize(
    ("flag", "partitions"),
    [
        ("--under-replicated-partitions", [1, 2, 3]),
        ("--under-min-isr-partitions", [2, 3, 4]),
        ("--at-min-isr-partitions", [1]),
        ("--unavailable-partitions", [3, 4]),
    ],
)
def test_describe_filters_print_only_matching_partition_lines(
    cluster: FakeCluster, flag: str, partitions: list[int]
) -> None:
    broker = cluster.add_broker(1)
    min_isr = [config("min.insync.replicas", "2", DYNAMIC_TOPIC)]
    serve_topics(broker, [STATES], {(TOPIC, "states"): min_isr})
    code, out, _ = run([*bootstrap(broker), "--describe", "--topic", "states", flag])
    assert code == 0
    lines = out.splitlines()
    assert all(line.startswith("\tTopic: states\tPartition: ") for line in lines)  # no topic line
    assert [int(line.split("\t")[2].removeprefix("Partition: ")) for line in lines] == partitions


def test_describe_min_isr_filters_use_the_default_when_the_config_is_a_default(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    serve_topics(broker, [STATES], {(TOPIC, "states"): [config("min.insync.replicas", "1", DEFAULT)]})
    code, out, _ = run([*bootstrap(broker), "--describe", "--topic", "states", "--at-min-isr-partitions"])
    assert code == 0
    assert [line.split("\t")[2] for line in out.splitlines()] == ["Partition: 2"]


def test_describe_topics_with_overrides_prints_only_topic_lines_of_overridden_topics(
    cluster: FakeCluster,
) -> None:
    broker = cluster.add_broker(1)
    plain = Topic("plain", topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [Part(0, 1, [1], [1])])
    serve_topics(broker, [ORDERS, plain], {(TOPIC, "orders"): ORDERS_CONFIGS, (TOPIC, "plain"): []})
    code, out, _ = run([*bootstrap(broker), "--describe", "--topics-with-overrides"])
    assert code == 0
    assert out == SPEC_EXAMPLE.splitlines(keepends=True)[0]


def test_describe_lists_static_broker_values_as_configs_but_not_defaults(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    entries = [
        config("segment.bytes", "1048576", STATIC_BROKER),
        config("retention.ms", "1000", DYNAMIC_TOPIC),
        config("cleanup.policy", "delete", DEFAULT),
        config("secret", None, DYNAMIC_TOPIC, sensitive=True),
    ]
    serve_topics(broker, [ORDERS], {(TOPIC, "orders"): entries})
    code, out, _ = run([*bootstrap(broker), "--describe", "--topic", "orders"])
    assert code == 0
    assert out.splitlines()[0].endswith("\tConfigs: retention.ms=1000,secret=null,segment.bytes=1048576")


def test_describe_json(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    serve_topics(broker, [ORDERS], {(TOPIC, "orders"): ORDERS_CONFIGS})
    code, out, _ = run([*bootstrap(broker), "--describe", "--topic", "orders", "--json"])
    assert code == 0
    assert json.loads(out) == {
        "topics": [
            {
                "name": "orders",
                "topicId": ORDERS_ID,
                "internal": False,
                "partitionCount": 2,
                "replicationFactor": 3,
                "configs": {"min.insync.replicas": "2"},
                "partitions": [
                    {
                        "partition": 0,
                        "leader": 1,
                        "leaderEpoch": 0,
                        "replicas": [1, 2, 3],
                        "isr": [1, 2, 3],
                        "elr": [],
                        "lastKnownElr": [],
                        "offlineReplicas": [],
                    },
                    {
                        "partition": 1,
                        "leader": None,
                        "leaderEpoch": 0,
                        "replicas": [2, 3, 1],
                        "isr": [],
                        "elr": [2, 3],
                        "lastKnownElr": [1],
                        "offlineReplicas": [],
                    },
                ],
            }
        ]
    }


def test_describe_fails_when_the_topic_configs_cannot_be_read(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    serve_topics(broker, [ORDERS], {})  # DescribeConfigs answers UNKNOWN_TOPIC_OR_PARTITION
    code, out, err = run([*bootstrap(broker), "--describe", "--topic", "orders"])
    assert (code, out) == (1, "")
    assert err == "Error while executing topic command : Topic orders does not exist.\n"


# -----------------------------------------------------------------------------------------------
# --list


def test_list_prints_sorted_names_and_filters(cluster: FakeCluster) -> None:
    broker = cluster.add_broker(1)
    names = ["zeta", "__consumer_offsets", "alpha", "alpha2"]
    serve_topics(
        broker, [Topic(n, topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [], internal=n.startswith("__")) for n in names]
    )
    assert run([*bootstrap(broker), "--list"]) == (0, "__consumer_offsets\nalpha\nalpha2\nzeta\n", "")
    assert run([*bootstrap(broker), "--list", "--exclude-internal"]) == (0, "alpha\nalpha2\nzeta\n", "")
    assert run([*bootstrap(broker), "--list", "--topic", "alpha,zeta"]) == (0, "alpha\nzeta\n", "")
    assert run([*bootstrap(broker), "--list", "--topic", "nothing"]) == (0, "\n", "")  # Kafka's empty line
    code, out, _ = run([*bootstrap(broker), "--list", "--json", "--exclude-internal"])
    assert code == 0
    assert json.loads(out) == {"topics": ["alpha", "alpha2", "zeta"]}
    (first, *_) = broker.requests(metadata_msg.API)
    assert first.body.topics is None


# -----------------------------------------------------------------------------------------------
# --create, --alter, --delete


def test_create_goes_to_the_controller_and_prints_created(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    b1.on(metadata_msg.API, metadata_answer([b1, b2], controller_id=2))
    b2.on(create_topics_msg.API, create_topics_body(("orders", 0, None)))
    code, out, err = run(
        [
            *bootstrap(b1),
            "--create",
            "--topic",
            "orders",
            "--partitions",
            "3",
            "--replication-factor",
            "2",
            "--config",
            "min.insync.replicas=2",
            "--config",
            "retention.ms = 1000",
        ]
    )
    assert (code, out, err) == (0, "Created topic orders.\n", "")
    assert not b1.requests(create_topics_msg.API)
    (request,) = b2.requests(create_topics_msg.API)
    (topic,) = request.body.topics
    assert (topic.name, topic.num_partitions, topic.replication_factor, topic.assignments) == (
        "orders",
        3,
        2,
        [],
    )
    assert [(c.name, c.value) for c in topic.configs] == [
        ("min.insync.replicas", "2"),
        ("retention.ms", "1000"),
    ]
    assert request.version == 7


def test_create_uses_cluster_defaults_and_replica_assignments(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    b1.on(
        create_topics_msg.API, lambda req: create_topics_body(*((t.name, 0, None) for t in req.body.topics))
    )
    assert run([*bootstrap(b1), "--create", "--topic", "a"])[0] == 0
    assert run([*bootstrap(b1), "--create", "--topic", "b", "--replica-assignment", "1:2, 2:3,3:1"])[0] == 0
    first, second = (r.body.topics[0] for r in b1.requests(create_topics_msg.API))
    assert (first.num_partitions, first.replication_factor) == (-1, -1)
    assert (second.num_partitions, second.replication_factor) == (-1, -1)
    assert [(a.partition_index, a.broker_ids) for a in second.assignments] == [
        (0, [1, 2]),
        (1, [2, 3]),
        (2, [3, 1]),
    ]


def test_create_follows_not_controller_to_the_new_controller(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    b1.on(metadata_msg.API, _metadata_sequence(b1, b2))  # controller 1, then 2
    b1.on(create_topics_msg.API, create_topics_body(("orders", 41, None)))  # NOT_CONTROLLER
    b2.on(create_topics_msg.API, create_topics_body(("orders", 0, None)))
    code, out, err = run([*bootstrap(b1), "--create", "--topic", "orders"])
    assert (code, out, err) == (0, "Created topic orders.\n", "")
    assert len(b1.requests(create_topics_msg.API)) == 1
    assert len(b2.requests(create_topics_msg.API)) == 1
    assert len(b1.requests(metadata_msg.API)) == 2  # looked the controller up again


def _metadata_sequence(b1: FakeBroker, b2: FakeBroker) -> Any:
    answers = iter([1, 2, 2, 2])

    def answer(req: Any) -> Any:
        return metadata_answer([b1, b2], next(answers))(req)

    return answer


def test_create_gives_up_when_not_controller_persists(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], 1))
    b1.on(create_topics_msg.API, create_topics_body(("orders", 41, None)))
    code, out, err = run([*bootstrap(b1), "--timeout-ms", "2000", "--create", "--topic", "orders"])
    assert (code, out) == (1, "")
    assert err.startswith(
        "Error while executing topic command : timed out after 2000 ms waiting for CreateTopics"
    )
    assert "CreateTopics answered NOT_CONTROLLER" in err
    assert len(b1.requests(create_topics_msg.API)) >= 2


def test_create_of_an_existing_topic_fails_unless_if_not_exists(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], 1))
    b1.on(create_topics_msg.API, create_topics_body(("orders", 36, "Topic 'orders' already exists.")))
    code, out, err = run([*bootstrap(b1), "--create", "--topic", "orders"])
    assert (code, out, err) == (
        1,
        "",
        "Error while executing topic command : Topic 'orders' already exists.\n",
    )
    assert run([*bootstrap(b1), "--create", "--topic", "orders", "--if-not-exists"]) == (0, "", "")


def test_create_failure_without_a_server_message_names_the_topic_and_the_error(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], 1))
    b1.on(create_topics_msg.API, create_topics_body(("orders", 38, None)))
    code, _, err = run([*bootstrap(b1), "--create", "--topic", "orders", "--replication-factor", "5"])
    assert code == 1
    assert err == (
        "Error while executing topic command : Replication factor is below 1 or larger than the number of "
        "available brokers. (topic 'orders': INVALID_REPLICATION_FACTOR)\n"
    )


def test_create_warns_about_colliding_characters(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1], 1))
    b1.on(create_topics_msg.API, create_topics_body(("my.topic", 0, None)))
    code, out, _ = run([*bootstrap(b1), "--create", "--topic", "my.topic"])
    assert code == 0
    assert out == (
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
        "collide. To avoid issues it is best to use either, but not both.\nCreated topic my.topic.\n"
    )


def test_alter_adds_partitions_to_every_matching_topic(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    all_topics = [
        Topic(n, topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [Part(0, 1, [1], [1])]) for n in ("t1", "t2", "x")
    ]
    serve_topics(b1, all_topics, brokers=[b1, b2], controller_id=2)
    b2.on(create_partitions_msg.API, create_partitions_body(("t1", 0, None), ("t2", 0, None)))
    assert run([*bootstrap(b1), "--alter", "--topic", "t.", "--partitions", "4"]) == (0, "", "")
    (request,) = b2.requests(create_partitions_msg.API)
    assert [(t.name, t.count, t.assignments) for t in request.body.topics] == [
        ("t1", 4, None),
        ("t2", 4, None),
    ]


def test_alter_with_an_assignment_sends_only_the_new_partitions(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    t = Topic(
        "t", topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [Part(0, 1, [1, 2], [1, 2]), Part(1, 2, [2, 3], [2, 3])]
    )
    serve_topics(b1, [t])
    b1.on(create_partitions_msg.API, create_partitions_body(("t", 0, None)))
    code, _, _ = run(
        [
            *bootstrap(b1),
            "--alter",
            "--topic",
            "t",
            "--partitions",
            "4",
            "--replica-assignment",
            "1:2,2:3,3:1,1:3",
        ]
    )
    assert code == 0
    (request,) = b1.requests(create_partitions_msg.API)
    assert [[a.broker_ids for a in t.assignments] for t in request.body.topics] == [[[3, 1], [1, 3]]]


def test_alter_failure_and_missing_topic(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve_topics(b1, [ORDERS])
    b1.on(
        create_partitions_msg.API,
        create_partitions_body(
            ("orders", 37, "Topic currently has 2 partitions, which is higher than the requested 1.")
        ),
    )
    code, out, err = run([*bootstrap(b1), "--alter", "--topic", "orders", "--partitions", "1"])
    assert (code, out) == (1, "")
    assert err == (
        "Error while executing topic command : Topic currently has 2 partitions, which is higher than the "
        "requested 1. (topic 'orders': INVALID_PARTITIONS)\n"
    )
    code, _, err = run([*bootstrap(b1), "--alter", "--topic", "nope", "--partitions", "3"])
    assert (
        code == 1 and err == "Error while executing topic command : Topic 'nope' does not exist as expected\n"
    )
    assert run([*bootstrap(b1), "--alter", "--topic", "nope", "--partitions", "3", "--if-exists"]) == (
        0,
        "",
        "",
    )


def test_delete_deletes_every_matching_topic_through_the_controller(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    all_topics = [Topic(n, topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), []) for n in ("logs-a", "logs-b", "orders")]
    serve_topics(b1, all_topics)
    b1.on(
        delete_topics_msg.API, lambda req: delete_topics_body(*((t.name, 0, None) for t in req.body.topics))
    )
    assert run([*bootstrap(b1), "--delete", "--topic", "logs-.*"]) == (0, "", "")
    (request,) = b1.requests(delete_topics_msg.API)
    assert request.version == 6 and [t.name for t in request.body.topics] == ["logs-a", "logs-b"]
    code, out, _ = run([*bootstrap(b1), "--delete", "--topic", "orders", "--json"])
    assert (code, json.loads(out)) == (0, {"deleted": ["orders"]})


def test_delete_reports_each_failed_topic(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve_topics(b1, [Topic(n, topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), []) for n in ("a", "b")])
    b1.on(delete_topics_msg.API, delete_topics_body(("a", 73, None), ("b", 0, None)))
    code, out, err = run([*bootstrap(b1), "--delete", "--topic", "a|b"])
    assert (code, out) == (1, "")
    assert (
        err == "Error while executing topic command : Topic deletion is disabled. "
        "(topic 'a': TOPIC_DELETION_DISABLED)\n"
    )


# -----------------------------------------------------------------------------------------------
# Failures and misuse


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_cluster_exits_1_with_one_line() -> None:
    port = _closed_port()
    code, out, err = run(["--bootstrap-server", f"127.0.0.1:{port}", "--timeout-ms", "300", "--list"])
    assert (code, out) == (1, "")
    assert err.startswith(
        "Error while executing topic command : timed out after 300 ms waiting for the topic list; "
    )
    assert f"127.0.0.1:{port}: cannot connect" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--bootstrap-server", "h:1"],
            "Command must include exactly one action: --list, --describe, --create, --alter or --delete",
        ),
        (["--bootstrap-server", "h:1", "--list", "--delete"], "Command must include exactly one action"),
        (["--list"], "--bootstrap-server must be specified"),
        (["--bootstrap-server", "h:1", "--create"], 'Missing required argument "[topic]"'),
        (
            ["--bootstrap-server", "h:1", "--alter", "--topic", "t"],
            'Missing required argument "[partitions]"',
        ),
        (
            ["--bootstrap-server", "h:1", "--alter", "--topic", "t", "--partitions", "2", "--config", "a=b"],
            'Option "[config]" can\'t be used with option "[alter]" (To alter topic configurations, the '
            "kafka-configs tool can be used.)",
        ),
        (
            ["--bootstrap-server", "h:1", "--describe", "--if-exists"],
            "--topic or --topic-id is required to describe a topic",
        ),
        (
            ["--bootstrap-server", "h:1", "--list", "--partitions", "3"],
            'Option "[partitions]" can\'t be used with option "[list]"',
        ),
        (
            [
                "--bootstrap-server",
                "h:1",
                "--alter",
                "--topic",
                "t",
                "--partitions",
                "3",
                "--replication-factor",
                "2",
            ],
            'Option "[replication-factor]" can\'t be used with option "[alter]"',
        ),
        (
            [
                "--bootstrap-server",
                "h:1",
                "--create",
                "--topic",
                "t",
                "--partitions",
                "3",
                "--replica-assignment",
                "1",
            ],
            'Option "[replica-assignment]" can\'t be used with option "[partitions]"',
        ),
        (
            ["--bootstrap-server", "h:1", "--list", "--under-replicated-partitions"],
            'Option "[under-replicated-partitions]" can\'t be used with option "[list]"',
        ),
        (
            [
                "--bootstrap-server",
                "h:1",
                "--describe",
                "--unavailable-partitions",
                "--topics-with-overrides",
            ],
            'Option "[unavailable-partitions]" can\'t be used with option "[topics-with-overrides]"',
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--if-exists"],
            'Option "[if-exists]" can\'t be used with option "[create]"',
        ),
        (
            ["--bootstrap-server", "h:1", "--delete", "--topic", "t", "--if-not-exists"],
            'Option "[if-not-exists]" can\'t be used with option "[delete]"',
        ),
        (
            ["--bootstrap-server", "h:1", "--delete", "--topic", "t", "--exclude-internal"],
            'Option "[exclude-internal]" can\'t be used with option "[delete]"',
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--replication-factor", "0"],
            "The replication factor must be between 1 and 32767 inclusive",
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--partitions", "0"],
            "The partitions must be greater than 0",
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--replica-assignment", "1:1"],
            "Partition replica lists may not contain duplicate entries: 1",
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--replica-assignment", "1:2,3"],
            "Partition 1 has different replication factor: [3]",
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--replica-assignment", "1:x"],
            "Invalid replica assignment '1:x'",
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--config", "novalue"],
            "requirement failed: Invalid topic config: all configs to be added must be in the format "
            '"key=val".',
        ),
        (
            ["--bootstrap-server", "h:1", "--create", "--topic", "t", "--config", "a=b=c"],
            "requirement failed: Invalid topic config",
        ),
        (["--bootstrap-server", "h:1", "--describe", "--topic", "a(b"], "a(b is an invalid regex."),
        (["--bootstrap-server", "h:1", "--describe", "--topic-id", "not-an-id"], "Invalid --topic-id:"),
        (
            ["--bootstrap-server", "nohost", "--list"],
            "invalid bootstrap address 'nohost': expected HOST:PORT",
        ),
    ],
)
def test_misuse_exits_2_with_one_line_naming_the_problem(argv: list[str], message: str) -> None:
    code, out, err = run(argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"{topics.PROG}: {message}")
    assert err.count("\n") == 1


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert topics.main(["--bootstrap-server", "h:1", "--create", "--topic", "t", "--partitions", "x"]) == 2
    assert "invalid int value: 'x'" in capsys.readouterr().err


def test_pure_parsers_follow_kafka() -> None:
    assert topics.parse_replica_assignment("1:2,2:3") == {0: [1, 2], 1: [2, 3]}
    assert topics.parse_topic_configs(["a=1", " b = x y "]) == {"a": "1", "b": "x y"}
    assert topics.include_pattern(' "a, b" ').pattern == "a|b"
    pattern = topics.include_pattern("a|b|__.*")
    assert topics.select_topics(["a", "ab", "b", "__transaction_state"], pattern, True) == ["a", "b"]
