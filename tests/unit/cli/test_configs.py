"""kraft configs: Kafka's kafka-configs.sh lines for topic and broker configs against in-process fake
brokers: describe (dynamic only, --all, defaults, every entity, missing entities), alter through
IncrementalAlterConfigs (deletes checked first, broker configs to that broker, NOT_CONTROLLER
followed), error exits and argument misuse."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from fake_brokers import (
    FakeBroker,
    FakeCluster,
    Part,
    Topic,
    alter_configs_body,
    config,
    configs_answer,
    describe_cluster_body,
    metadata_answer,
    topic_id,
)

from kraft.cli import configs
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import describe_configs as describe_configs_msg
from kraft.protocol.messages import incremental_alter_configs as iac_msg
from kraft.protocol.messages import metadata as metadata_msg

pytestmark = pytest.mark.timeout(60)

TOPIC, BROKER = 2, 4
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT_BROKER, STATIC_BROKER, DEFAULT = 1, 2, 3, 4, 5
SET, DELETE = 0, 1

ORDERS = Topic("orders", topic_id("3CGBmPeXQ7C6fIGTOYpoXw"), [Part(0, 1, [1], [1])])
PAYMENTS = Topic("payments", topic_id("AAAAAAAAAAAAAAAAAAAAAQ"), [Part(0, 1, [1], [1])])

CONFIGS = {
    (TOPIC, "orders"): [
        config("retention.ms", "1000", DYNAMIC_TOPIC, ("retention.ms", "1000", DYNAMIC_TOPIC),
               ("log.retention.ms", "604800000", STATIC_BROKER)),
        config("cleanup.policy", "delete", DEFAULT),
        config("min.insync.replicas", "2", DYNAMIC_TOPIC, ("min.insync.replicas", "2", DYNAMIC_TOPIC),
               ("min.insync.replicas", "1", DEFAULT)),
    ],
    (TOPIC, "payments"): [config("cleanup.policy", "delete", DEFAULT)],
    (BROKER, "1"): [
        config("log.cleaner.threads", "2", DYNAMIC_BROKER, ("log.cleaner.threads", "2", DYNAMIC_BROKER),
               ("log.cleaner.threads", "1", DEFAULT)),
        config("ssl.keystore.password", None, DYNAMIC_BROKER, ("ssl.keystore.password", None, DYNAMIC_BROKER),
               sensitive=True),
        config("min.insync.replicas", "2", DYNAMIC_DEFAULT_BROKER, ("min.insync.replicas", "2",
                                                                   DYNAMIC_DEFAULT_BROKER)),
        config("num.partitions", "1", DEFAULT),
    ],
    (BROKER, "2"): [config("num.partitions", "1", DEFAULT)],
    (BROKER, ""): [
        config("min.insync.replicas", "2", DYNAMIC_DEFAULT_BROKER, ("min.insync.replicas", "2",
                                                                   DYNAMIC_DEFAULT_BROKER)),
    ],
}  # fmt: skip


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster() as c:
        yield c


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = configs.main(argv, out, err=err)
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


def serve(*brokers: FakeBroker, controller_id: int | None = None) -> None:
    """Every broker answers Metadata, DescribeCluster and DescribeConfigs from the same data."""
    controller = brokers[0].node_id if controller_id is None else controller_id
    for b in brokers:
        b.on(metadata_msg.API, metadata_answer(list(brokers), controller, [ORDERS, PAYMENTS]))
        b.on(describe_cluster_msg.API, describe_cluster_body(list(brokers), controller))
        b.on(describe_configs_msg.API, configs_answer(CONFIGS))


# -----------------------------------------------------------------------------------------------
# --describe


def test_describe_topic_prints_its_dynamic_configs_sorted(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    code, out, err = run([*bootstrap(b1), "--describe", "--entity-type", "topics", "--entity-name", "orders"])
    assert (code, err) == (0, "")
    assert out == (
        "Dynamic configs for topic orders are:\n"
        "  min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, "
        "DEFAULT_CONFIG:min.insync.replicas=1}\n"
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, "
        "STATIC_BROKER_CONFIG:log.retention.ms=604800000}\n"
    )
    (request,) = b1.requests(describe_configs_msg.API)
    assert request.body.include_synonyms is True and request.version == 4
    assert [(r.resource_type, r.resource_name, r.configuration_keys) for r in request.body.resources] == [
        (TOPIC, "orders", None)
    ]


def test_describe_all_prints_every_entry(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    code, out, _ = run(
        [*bootstrap(b1), "--describe", "--entity-type", "topics", "--entity-name", "orders", "--all"]
    )
    assert code == 0
    assert out.splitlines()[0] == "All configs for topic orders are:"
    assert [line.split("=")[0].strip() for line in out.splitlines()[1:]] == [
        "cleanup.policy",
        "min.insync.replicas",
        "retention.ms",
    ]
    assert "  cleanup.policy=delete sensitive=false synonyms={}" in out.splitlines()


def test_describe_broker_shows_only_its_own_dynamic_configs_and_null_for_sensitive_values(
    cluster: FakeCluster,
) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    serve(b1, b2)
    code, out, _ = run([*bootstrap(b2), "--describe", "--entity-type", "brokers", "--entity-name", "1"])
    assert code == 0
    assert out == (
        "Dynamic configs for broker 1 are:\n"
        "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
        "DEFAULT_CONFIG:log.cleaner.threads=1}\n"
        "  ssl.keystore.password=null sensitive=true "
        "synonyms={DYNAMIC_BROKER_CONFIG:ssl.keystore.password=null}\n"
    )
    # A broker's own configs are asked of that broker, as Kafka's admin client does.
    assert [r.body.resources[0].resource_name for r in b1.requests(describe_configs_msg.API)] == ["1"]
    assert not b2.requests(describe_configs_msg.API)


def test_describe_broker_default(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    code, out, _ = run([*bootstrap(b1), "--describe", "--entity-type", "brokers", "--entity-default"])
    assert code == 0
    assert out == (
        "Default configs for brokers in the cluster are:\n"
        "  min.insync.replicas=2 sensitive=false "
        "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=2}\n"
    )


def test_describe_without_a_name_covers_every_topic_or_broker(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    serve(b1, b2)
    code, out, _ = run([*bootstrap(b1), "--describe", "--entity-type", "topics"])
    assert code == 0
    assert [line for line in out.splitlines() if not line.startswith("  ")] == [
        "Dynamic configs for topic orders are:",
        "Dynamic configs for topic payments are:",
    ]
    code, out, _ = run([*bootstrap(b1), "--describe", "--entity-type", "brokers"])
    assert code == 0
    assert [line for line in out.splitlines() if not line.startswith("  ")] == [
        "Dynamic configs for broker 1 are:",
        "Dynamic configs for broker 2 are:",
        "Default configs for brokers in the cluster are:",
    ]


def test_describe_of_a_missing_entity_says_so(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    assert run([*bootstrap(b1), "--describe", "--entity-type", "topics", "--entity-name", "nope"]) == (
        0,
        "The topic 'nope' doesn't exist and doesn't have dynamic config.\n",
        "",
    )
    assert run([*bootstrap(b1), "--describe", "--entity-type", "brokers", "--entity-name", "9"]) == (
        0,
        "The broker '9' doesn't exist and doesn't have dynamic config.\n",
        "",
    )
    assert not b1.requests(describe_configs_msg.API)


def test_describe_all_of_a_missing_topic_fails_with_the_brokers_error(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    argv = [*bootstrap(b1), "--describe", "--entity-type", "topics", "--entity-name", "nope", "--all"]
    code, out, err = run(argv)
    assert (code, out) == (1, "All configs for topic nope are:\n")
    assert err == (
        f"Error while executing config command with args '{' '.join(argv)}': "
        "UNKNOWN_TOPIC_OR_PARTITION for topic 'nope': Topic nope does not exist.\n"
    )


def test_describe_json(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    code, out, _ = run(
        [*bootstrap(b1), "--describe", "--entity-type", "brokers", "--entity-default", "--json"]
    )
    assert code == 0
    assert json.loads(out) == {
        "entityType": "brokers",
        "entities": [
            {
                "name": None,
                "configs": [
                    {
                        "name": "min.insync.replicas",
                        "value": "2",
                        "source": "DYNAMIC_DEFAULT_BROKER_CONFIG",
                        "sensitive": False,
                        "readOnly": False,
                        "synonyms": [
                            {
                                "name": "min.insync.replicas",
                                "value": "2",
                                "source": "DYNAMIC_DEFAULT_BROKER_CONFIG",
                            }
                        ],
                    }
                ],
            }
        ],
    }


# -----------------------------------------------------------------------------------------------
# --alter


def test_alter_topic_deletes_then_sets_through_the_controller(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    serve(b1, b2, controller_id=2)
    b2.on(iac_msg.API, alter_configs_body((TOPIC, "orders", 0, None)))
    code, out, err = run(
        [*bootstrap(b1), "--alter", "--entity-type", "topics", "--entity-name", "orders",
         "--add-config", "cleanup.policy=[compact,delete], segment.ms = 100",
         "--delete-config", "retention.ms"]
    )  # fmt: skip
    assert (code, out, err) == (0, "Completed updating config for topic orders.\n", "")
    assert not b1.requests(iac_msg.API)
    (request,) = b2.requests(iac_msg.API)
    assert request.body.validate_only is False
    (resource,) = request.body.resources
    assert (resource.resource_type, resource.resource_name) == (TOPIC, "orders")
    assert [(c.name, c.config_operation, c.value) for c in resource.configs] == [
        ("retention.ms", DELETE, ""),
        ("cleanup.policy", SET, "compact,delete"),
        ("segment.ms", SET, "100"),
    ]


def test_alter_broker_goes_to_that_broker_and_default_to_the_controller(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    serve(b1, b2, controller_id=2)
    b1.on(iac_msg.API, alter_configs_body((BROKER, "1", 0, None)))
    b2.on(iac_msg.API, alter_configs_body((BROKER, "", 0, None)))
    assert run(
        [*bootstrap(b2), "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "a=1"]
    ) == (0, "Completed updating config for broker 1.\n", "")
    assert run(
        [*bootstrap(b1), "--alter", "--entity-type", "brokers", "--entity-default", "--delete-config",
         "min.insync.replicas"]
    ) == (0, "Completed updating default config for brokers in the cluster.\n", "")  # fmt: skip
    assert [r.body.resources[0].resource_name for r in b1.requests(iac_msg.API)] == ["1"]
    assert [r.body.resources[0].resource_name for r in b2.requests(iac_msg.API)] == [""]


def test_alter_follows_not_controller(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    serve(b1, b2)
    controllers = iter([1, 2, 2, 2])
    b1.on(metadata_msg.API, lambda req: metadata_answer([b1, b2], next(controllers), [ORDERS])(req))
    b1.on(iac_msg.API, alter_configs_body((TOPIC, "orders", 41, None)))
    b2.on(iac_msg.API, alter_configs_body((TOPIC, "orders", 0, None)))
    code, out, _ = run(
        [
            *bootstrap(b1),
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            "orders",
            "--add-config",
            "a=1",
        ]
    )
    assert (code, out) == (0, "Completed updating config for topic orders.\n")
    assert (len(b1.requests(iac_msg.API)), len(b2.requests(iac_msg.API))) == (1, 1)


def test_alter_refuses_to_delete_a_key_that_is_not_set(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    code, out, err = run(
        [*bootstrap(b1), "--alter", "--entity-type", "topics", "--entity-name", "orders",
         "--delete-config", "cleanup.policy,nope", "--delete-config", "retention.ms"]
    )  # fmt: skip
    assert (code, out, err) == (1, "", "Invalid config(s): cleanup.policy,nope\n")
    assert not b1.requests(iac_msg.API)


def test_alter_failure_names_the_entity_and_the_error(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    serve(b1)
    b1.on(
        iac_msg.API, alter_configs_body((TOPIC, "orders", 40, "Invalid value x for configuration segment.ms"))
    )
    argv = [*bootstrap(b1), "--alter", "--entity-type", "topics", "--entity-name", "orders", "--add-config",
            "segment.ms=x"]  # fmt: skip
    code, out, err = run(argv)
    assert (code, out) == (1, "")
    assert err == (
        f"Error while executing config command with args '{' '.join(argv)}': "
        "INVALID_CONFIG for topic 'orders': "
        "Invalid value x for configuration segment.ms\n"
    )


# -----------------------------------------------------------------------------------------------
# Parsing and misuse


def test_add_config_parsing_follows_kafka() -> None:
    assert configs.parse_add_config("a=1,b=[x,y],c=") == {"a": "1", "b": "x,y", "c": ""}
    assert configs.parse_add_config(" k = v ,") == {"k": "v"}
    assert configs.parse_delete_config(["a,b", " c "]) == ["a", "b", "c"]


BS = ["--bootstrap-server", "h:1"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*BS, "--entity-type", "topics"], "Command must include exactly one action: --describe, --alter"),
        ([*BS, "--describe", "--alter", "--entity-type", "topics"],
         "Command must include exactly one action"),
        ([*BS, "--describe", "--entity-type", "topics", "--add-config", "a=1"],
         'Option "[describe]" can\'t be used with option "[add-config]"'),
        ([*BS, "--describe"], "At least one entity type must be specified"),
        (["--describe", "--entity-type", "topics"], "--bootstrap-server must be specified"),
        ([*BS, "--describe", "--entity-type", "clients"],
         "Invalid entity type clients, the entity type must be one of topics, brokers, users with a "
         "--bootstrap-server argument"),
        ([*BS, "--describe", "--entity-type", "topics", "--entity-type", "topics"],
         "Duplicate entity type(s) specified: topics"),
        ([*BS, "--describe", "--entity-type", "brokers", "--entity-name", "b1"],
         "The entity name for brokers must be a valid integer broker id, but it is: b1"),
        ([*BS, "--describe", "--entity-type", "topics", "--entity-default"],
         "--entity-default must not be specified with --describe of topics"),
        ([*BS, "--alter", "--entity-type", "topics", "--add-config", "a=1"],
         "An entity name must be specified with --alter of topics"),
        ([*BS, "--alter", "--entity-type", "brokers", "--add-config", "a=1"],
         "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips"),
        ([*BS, "--alter", "--entity-type", "topics", "--entity-name", "t"],
         "At least one of --add-config or --delete-config must be specified with --alter"),
        ([*BS, "--alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", "a"],
         'Invalid entity config: all configs to be added must be in the format "key=val" or  '
         '"key=[val1,val2]"'),
        ([*BS, "--alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", "a b=1"],
         "Invalid character found for config key: a b"),
        ([*BS, "--describe", "--entity-type", "topics", "--entity-name", "bad/name"],
         "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII alphanumerics"),
    ],
)  # fmt: skip
def test_misuse_exits_2_with_one_line_naming_the_problem(argv: list[str], message: str) -> None:
    code, out, err = run(argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"{configs.PROG}: {message}")
    assert err.count("\n") == 1


def test_an_unreachable_cluster_exits_1() -> None:
    code, out, err = run(
        ["--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "200", "--describe", "--entity-type", "topics"]
    )
    assert (code, out) == (1, "")
    assert "timed out after 200 ms waiting for the topic list; 127.0.0.1:1: cannot connect" in err
    assert err.count("\n") == 1
