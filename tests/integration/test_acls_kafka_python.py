"""ACLs through an unmodified kafka-python admin client against real processes (1 controller and
2 brokers) configured with Kafka's StandardAuthorizer.

The listeners are PLAINTEXT, so every connection (the admin's, and the brokers' own to the
controller) is ``User:ANONYMOUS``, made a super user as Kafka's docs say to; enforcement on other
principals is covered by the unit tests (``tests/unit/security``). What this proves: the wire
(CreateAcls, DescribeAcls, DeleteAcls as kafka-python speaks them), forwarding of the writes from a
broker to the controller, ACL records committed and replayed into every broker's image, and
``kraft acls`` reading them back from another broker.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable

import pytest
from local_cluster import LocalCluster

from kraft.cli import acls as acls_cli

kafka_admin = pytest.importorskip("kafka.admin")
kafka_errors = pytest.importorskip("kafka.errors")

pytestmark = pytest.mark.slow

AUTHORIZER = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",
}


def acl(principal: str, operation: object, name: str, pattern: object) -> object:
    return kafka_admin.ACL(
        principal=principal,
        host="*",
        operation=operation,
        permission_type=kafka_admin.ACLPermissionType.ALLOW,
        resource_pattern=kafka_admin.ResourcePattern(kafka_admin.ResourceType.TOPIC, name, pattern),
    )


def test_kafka_python_creates_describes_and_deletes_acls(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(1, overrides=AUTHORIZER, brokers=2)
    cluster.start_all()
    cluster.wait_for_leader()
    cluster.wait_for_brokers()
    b1, b2 = cluster.broker_ids
    admin = kafka_admin.KafkaAdminClient(
        bootstrap_servers=cluster.bootstrap_servers([b1]), request_timeout_ms=20_000
    )
    try:
        literal = kafka_admin.ACLResourcePatternType.LITERAL
        prefixed = kafka_admin.ACLResourcePatternType.PREFIXED
        created = admin.create_acls(
            [
                acl("User:alice", kafka_admin.ACLOperation.READ, "orders", literal),
                acl("User:alice", kafka_admin.ACLOperation.WRITE, "pay-", prefixed),
            ]
        )
        assert len(created["succeeded"]) == 2 and created["failed"] == []

        any_topic = kafka_admin.ACLFilter(
            principal=None,
            host=None,
            operation=kafka_admin.ACLOperation.ANY,
            permission_type=kafka_admin.ACLPermissionType.ANY,
            resource_pattern=kafka_admin.ResourcePatternFilter(
                kafka_admin.ResourceType.TOPIC, None, kafka_admin.ACLResourcePatternType.ANY
            ),
        )
        found, error = admin.describe_acls(any_topic)
        assert error is kafka_errors.NoError
        assert sorted((a.resource_pattern.resource_name, a.operation.name) for a in found) == [
            ("orders", "READ"),
            ("pay-", "WRITE"),
        ]

        # The other broker has replayed the records too: kraft acls reads them from it.
        deadline = time.monotonic() + 20
        while True:
            out, err = io.StringIO(), io.StringIO()
            code = acls_cli.main(
                ["--bootstrap-server", cluster.bootstrap_servers([b2]), "--list", "--json"], out=out, err=err
            )
            listed = json.loads(out.getvalue())["acls"] if code == 0 else []
            if len(listed) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert (code, err.getvalue()) == (0, "")
        assert sorted((a["resource_name"], a["pattern_type"]) for a in listed) == [
            ("orders", "LITERAL"),
            ("pay-", "PREFIXED"),
        ]

        only_prefixed = kafka_admin.ACLFilter(
            principal="User:alice",
            host=None,
            operation=kafka_admin.ACLOperation.ANY,
            permission_type=kafka_admin.ACLPermissionType.ANY,
            resource_pattern=kafka_admin.ResourcePatternFilter(
                kafka_admin.ResourceType.TOPIC, None, prefixed
            ),
        )
        ((_, deleted, error),) = admin.delete_acls([only_prefixed])
        assert error is kafka_errors.NoError
        assert [(a.resource_pattern.resource_name, a.operation.name) for a in deleted] == [("pay-", "WRITE")]
        found, _ = admin.describe_acls(any_topic)
        assert [a.resource_pattern.resource_name for a in found] == ["orders"]
    finally:
        admin.close()
