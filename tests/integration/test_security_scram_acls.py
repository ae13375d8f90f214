"""SCRAM-SHA-512 over SASL_SSL and ACLs, end to end, with unmodified clients (issue #26).

One combined node (``kraft server-start``) formatted with two SCRAM users (``storage format
--add-scram``: the credentials go into the bootstrap metadata, never the password), a SASL_SSL client
listener that enables SCRAM-SHA-512 only, and the StandardAuthorizer with ``User:admin`` as super user.
What it proves: kafka-python and confluent-kafka log in with SCRAM-SHA-512 over TLS; a wrong password
is refused; the admin grants alice READ and WRITE on topic ``a`` (through kafka-python's ``create_acls``),
after which alice sees exactly ``a`` in the metadata, may produce to and consume ``a``, and gets
TOPIC_AUTHORIZATION_FAILED on ``b``. A user created afterwards through the metadata log
(AlterUserScramCredentials through kafka-python's admin) logs in on the next connection.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from local_cluster import run_kraft
from tls_certs import Pki, session_pki

from kraft.cli import cluster_processes as processes

confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")
from confluent_kafka import KafkaError, KafkaException, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("security-scram-cluster")]

TIMEOUT_S = 30.0
USERS = {"admin": "admin-secret", "alice": "alice-secret"}


@dataclass
class Node:
    root: Path
    pki: Pki
    client_port: int
    controller_port: int
    internal_port: int
    proc: Any = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    def log(self) -> str:
        return (self.root / "server.log").read_text(errors="replace")


def confluent(node: Node, user: str, password: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": node.bootstrap,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": node.pki.path("ca.pem"),
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": user,
        "sasl.password": USERS.get(user, "") if password is None else password,
        **extra,
    }


def kafka_python(node: Node, user: str, password: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap_servers": node.bootstrap,
        "security_protocol": "SASL_SSL",
        "ssl_cafile": node.pki.path("ca.pem"),
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": user,
        "sasl_plain_password": USERS.get(user, "") if password is None else password,
        "request_timeout_ms": 10_000,
        **extra,
    }


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    root = tmp_path_factory.mktemp("scram-acls")
    client_port, controller_port, internal_port = processes.free_ports(3)
    n = Node(root, session_pki(), client_port, controller_port, internal_port)
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        # Replication gets a listener of its own (its login could be SCRAM too, through
        # sasl.mechanism.inter.broker.protocol); with one node nothing replicates and INTERNAL stays idle.
        "listeners": f"CLIENT://127.0.0.1:{client_port},CONTROLLER://127.0.0.1:{controller_port},"
        f"INTERNAL://127.0.0.1:{internal_port}",
        "listener.security.protocol.map": "CLIENT:SASL_SSL,CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": n.pki.path("server.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": n.pki.path("ca.pem"),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin",
        "log.dirs": str(root / "data"),
        "metadata.log.dir": str(root / "meta"),
        "controller.quorum.election.timeout.ms": "1000",
        "broker.heartbeat.interval.ms": "500",
    }
    config = root / "server.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    scram = [
        arg
        for user, pw in USERS.items()
        for arg in ("--add-scram", f"SCRAM-SHA-512=[name={user},password={pw}]")
    ]
    cluster_id = run_kraft("storage", "random-uuid").stdout.strip()
    done = run_kraft("storage", "format", "--config", str(config), "--cluster-id", cluster_id, *scram)
    assert done.returncode == 0, done.stderr
    n.proc = processes.start_server(config, root / "server.log")
    try:
        admin = AdminClient(confluent(n, "admin"))
        deadline = time.monotonic() + 60
        while True:
            try:
                if len(admin.list_topics(timeout=5).brokers) == 1:
                    break
            except KafkaException:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the node did not come up:\n" + n.log()[-4000:])
            time.sleep(0.2)
        for topic in ("a", "b"):
            admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(
                timeout=TIMEOUT_S
            )
        yield n
    finally:
        n.proc.kill()
        n.proc.wait(timeout=15)


def _grant_alice(node: Node) -> None:
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType

    admin = kafka.KafkaAdminClient(**kafka_python(node, "admin"))
    try:
        acls = [
            ACL("User:alice", "*", op, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, "a"))
            for op in (ACLOperation.READ, ACLOperation.WRITE)
        ]
        result = admin.create_acls(acls)
        assert not result["failed"], result
    finally:
        admin.close()


def test_scram_logins_and_acls_decide_what_alice_sees_writes_and_reads(node: Node) -> None:
    _grant_alice(node)
    # The metadata: only what alice may describe (READ implies DESCRIBE).
    alice_admin = AdminClient(confluent(node, "alice"))
    deadline = time.monotonic() + TIMEOUT_S
    while set(alice_admin.list_topics(timeout=TIMEOUT_S).topics) != {"a"}:
        assert time.monotonic() < deadline, alice_admin.list_topics(timeout=TIMEOUT_S).topics
        time.sleep(0.2)
    # Produce: allowed on a, refused on b with TOPIC_AUTHORIZATION_FAILED.
    outcomes: dict[str, Any] = {}

    def report(err: KafkaError | None, msg: Any) -> None:
        outcomes[msg.topic()] = err

    producer = Producer(confluent(node, "alice", **{"acks": "all", "message.timeout.ms": 10_000}))
    for topic in ("a", "b"):
        producer.produce(topic, value=f"to-{topic}".encode(), on_delivery=report)
    producer.flush(TIMEOUT_S)
    assert outcomes["a"] is None
    assert outcomes["b"] is not None and outcomes["b"].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # Consume a with kafka-python, logged in as alice.
    consumer = kafka.KafkaConsumer(**kafka_python(node, "alice", enable_auto_commit=False))
    try:
        tp = kafka.TopicPartition("a", 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT_S
        while not values and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                values.extend(r.value for r in batch)
    finally:
        consumer.close()
    assert values == [b"to-a"]


def test_a_wrong_scram_password_and_an_unknown_user_are_refused_alike(node: Node) -> None:
    for user, password in (("alice", "not-her-password"), ("mallory", "alice-secret")):
        errors: list[KafkaError] = []
        admin = AdminClient({**confluent(node, user, password=password), "error_cb": errors.append})
        with pytest.raises(KafkaException):
            admin.list_topics(timeout=1)
        deadline = time.monotonic() + 10
        while not errors and time.monotonic() < deadline:
            admin.poll(0.2)  # error_cb is served from poll
        assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    # The listener still serves alice with her password.
    assert "a" in AdminClient(confluent(node, "alice")).list_topics(timeout=TIMEOUT_S).topics


def test_a_user_added_through_the_metadata_log_logs_in_next(node: Node) -> None:
    from kafka.admin import _users as kafka_users

    admin = kafka.KafkaAdminClient(**kafka_python(node, "admin"))
    try:
        upsertion = kafka_users.UserScramCredentialUpsertion("carol", "SCRAM-SHA-512", "carol-secret")
        assert admin.alter_user_scram_credentials([upsertion]) == {"carol": None}
    finally:
        admin.close()
    # carol logs in on her next connection; with no ACL of her own she sees no topic.
    assert (
        AdminClient(confluent(node, "carol", password="carol-secret")).list_topics(timeout=TIMEOUT_S).topics
        == {}
    )


def _command_config(node: Node, user: str, password: str) -> str:
    path = node.root / f"{user}-{password}.properties"
    path.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";\n'
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={node.pki.path('ca.pem')}\n"
    )
    return str(path)


def test_krafts_own_tools_log_in_with_command_config(node: Node) -> None:
    _grant_alice(node)  # idempotent: creating an existing ACL writes nothing
    as_alice = ["--bootstrap-server", node.bootstrap, "--command-config"]
    listed = run_kraft("topics", *as_alice, _command_config(node, "alice", USERS["alice"]), "--list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["a"]  # what alice may describe, as Metadata answers her
    acls = run_kraft(
        "acls", *as_alice, _command_config(node, "admin", USERS["admin"]), "--list", "--topic", "a"
    )
    assert acls.returncode == 0, acls.stderr
    assert "User:alice" in acls.stdout and "READ" in acls.stdout and "WRITE" in acls.stdout
    # A refused login is final: the tool gives up at once instead of retrying until its
    # --timeout-ms (30 s by default), as Kafka's tools do on a SaslAuthenticationException.
    started = time.monotonic()
    refused = run_kraft("topics", *as_alice, _command_config(node, "alice", "wrong"), "--list")
    assert time.monotonic() - started < 15, "the refused login was retried"
    assert refused.returncode != 0
    assert "Authentication failed" in refused.stderr, refused.stderr
