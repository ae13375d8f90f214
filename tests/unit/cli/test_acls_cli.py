"""kraft acls: kafka-acls.sh's options and output against a real combined node served on loopback
(``served_node``: KafkaServer -> gateway -> driver -> node) with the StandardAuthorizer configured.

Connections are PLAINTEXT, so the tool is ``User:ANONYMOUS``, made a super user here, as Kafka's
documentation says to do for a PLAINTEXT admin. Argument misuse is checked without a server.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator

import pytest
from served_node import BROKER_LISTENER, CONTROLLER_LISTENER, ServedNode, directory

from kraft.broker.lifecycle import BrokerState, LifecycleConfig, Listener
from kraft.cli import acls
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.controller.quorum_controller import ControllerConfig
from kraft.node.build import BrokerConfig, NodeConfig
from kraft.raft.node import QuorumConfig
from kraft.raft.types import Endpoint
from kraft.security.authorizer import STANDARD_AUTHORIZER, AuthorizerConfig

pytestmark = pytest.mark.timeout(60)

PROPS = {"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:ANONYMOUS"}


def node_config(ports: dict[str, int]) -> NodeConfig:
    voter = Endpoint(CONTROLLER_LISTENER, "127.0.0.1", ports[CONTROLLER_LISTENER])
    lifecycle = LifecycleConfig(
        node_id=1,
        cluster_id="c",
        incarnation_id=uuid.UUID(int=1),
        listeners=(Listener(name=BROKER_LISTENER, host="127.0.0.1", port=ports[BROKER_LISTENER]),),
        supported_features=dict(SUPPORTED_FEATURES),
        rack=None,
        log_dirs=(directory(11),),
        heartbeat_interval_ms=100,
        request_timeout_ms=1000,
    )
    return NodeConfig(
        node_id=1,
        cluster_id="c",
        directory_id=directory(1),
        quorum=QuorumConfig(voters={1: (voter,)}),
        local_endpoints=(voter,),
        raft_listener_name=CONTROLLER_LISTENER,
        quorum_apis=True,
        controller=ControllerConfig(
            max_idle_interval_ms=0, authorizer=AuthorizerConfig.from_properties(PROPS)
        ),
        broker=BrokerConfig(lifecycle=lifecycle, client_listeners=(BROKER_LISTENER,), static_configs=PROPS),
    )


@pytest.fixture(scope="module")
def served() -> Iterator[ServedNode]:
    node = ServedNode(node_config, controller_listener=True, broker_listener=True)
    try:

        def running() -> bool:
            broker = node.node.broker
            return broker is not None and broker.broker_state == BrokerState.RUNNING

        node.wait_for("the broker runs", running)
        yield node
    finally:
        node.close()


def run(served: ServedNode, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "--bootstrap-server",
        f"127.0.0.1:{served.ports[BROKER_LISTENER]}",
        "--timeout-ms",
        "10000",
        *args,
    ]
    code = acls.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_add_prints_kafkas_blocks_and_list_shows_them(served: ServedNode) -> None:
    code, out, err = run(
        served, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "t"
    )
    assert (code, err) == (0, "")
    pattern = "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"
    entry = "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
    assert out == (
        f"Adding ACLs for resource `{pattern}`: \n \t{entry} \n\n"
        f"Current ACLs for resource `{pattern}`: \n\t{entry} \n\n"
    )
    code, out, _ = run(served, "--list", "--topic", "t")
    assert code == 0 and out == f"Current ACLs for resource `{pattern}`: \n\t{entry} \n\n"


def test_prefixed_deny_and_json(served: ServedNode) -> None:
    code, _, err = run(
        served,
        "--add",
        "--deny-principal",
        "User:mallory",
        "--operation",
        "Write",
        "--operation",
        "Describe",
        "--topic",
        "pay",
        "--resource-pattern-type",
        "prefixed",
    )
    assert (code, err) == (0, "")
    code, out, _ = run(served, "--list", "--principal", "User:mallory", "--json")
    listed = json.loads(out)["acls"]
    assert code == 0
    assert [
        (a["resource_name"], a["pattern_type"], a["operation"], a["permission_type"]) for a in listed
    ] == [
        ("pay", "PREFIXED", "WRITE", "DENY"),
        ("pay", "PREFIXED", "DESCRIBE", "DENY"),
    ]


def test_remove_deletes_what_the_filter_matches(served: ServedNode) -> None:
    assert (
        run(served, "--add", "--allow-principal", "User:bob", "--operation", "All", "--group", "g1")[0] == 0
    )
    code, out, err = run(served, "--remove", "--force", "--group", "g1", "--allow-principal", "User:bob")
    assert (code, err) == (0, "")
    assert (
        "Removed ACLs for resource `ResourcePattern(resourceType=GROUP, name=g1, patternType=LITERAL)`" in out
    )
    code, out, _ = run(served, "--list", "--group", "g1")
    assert code == 0 and out == ""


def test_producer_convenience_adds_write_describe_create(served: ServedNode) -> None:
    code, _, _ = run(served, "--add", "--allow-principal", "User:p", "--producer", "--topic", "out", "--json")
    assert code == 0
    code, out, _ = run(served, "--list", "--topic", "out", "--json")
    assert sorted(a["operation"] for a in json.loads(out)["acls"]) == ["CREATE", "DESCRIBE", "WRITE"]


def test_an_operation_the_resource_does_not_support_is_an_error() -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "--bootstrap-server",
        "127.0.0.1:1",
        "--add",
        "--allow-principal",
        "User:a",
        "--operation",
        "Read",
    ]
    code = acls.main([*argv, "--cluster"], out=out, err=err)
    assert code == 1 and "ResourceType CLUSTER only supports operations" in err.getvalue()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--add", "--topic", "t"], "--allow-principal, --deny-principal"),
        (["--add", "--allow-principal", "alice", "--topic", "t"], "TYPE:NAME"),
        (["--add", "--allow-principal", "User:a", "--operation", "Fly", "--topic", "t"], "unknown operation"),
        (
            ["--add", "--allow-principal", "User:a", "--resource-pattern-type", "match", "--topic", "t"],
            "not valid",
        ),
        (["--remove", "--principal", "User:a"], "only valid with --list"),
    ],
)
def test_misuse_exits_2(args: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = acls.main(["--bootstrap-server", "127.0.0.1:1", *args], out=out, err=err)
    assert code == 2 and message in err.getvalue()
