"""Real clients against TLS and SASL listeners of a real two-node cluster (issue #26, part 1).

Two combined nodes (``kraft server-start`` processes), whose every connection to each other is
secured: raft and broker->controller over the CONTROLLER listener (SASL_SSL, PLAIN), replication over
INTERNAL (SASL_SSL, PLAIN), each node logging in with its own ``username``/``password``. Clients get
three listeners: SSL (client certificate required; principal = its subject), SASL_SSL and
SASL_PLAINTEXT (PLAIN users from the JAAS config). kafka-python and confluent-kafka admin clients
and an acks=all producer (RF 2, so the follower fetches over INTERNAL) are served on each; a wrong
password, an unknown user, an untrusted certificate, a TLS 1.1 client, plaintext bytes to a TLS port
and a request sent before authentication are refused, and the listener keeps serving good clients.
One cluster serves the module.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from local_cluster import run_kraft
from tls_certs import Pki, session_pki

from kraft.cli import cluster_processes as processes
from kraft.protocol.api import encode_request
from kraft.protocol.framing import frame
from kraft.protocol.messages import metadata

confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")
from confluent_kafka import (  # noqa: E402
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("security-cluster")]

LISTENERS = ("CONTROLLER", "INTERNAL", "CLIENTSSL", "CLIENTSASLSSL", "CLIENTSASL")
PROTOCOLS = {
    "CONTROLLER": "SASL_SSL",
    "INTERNAL": "SASL_SSL",
    "CLIENTSSL": "SSL",
    "CLIENTSASLSSL": "SASL_SSL",
    "CLIENTSASL": "SASL_PLAINTEXT",
}
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="node" password="node-secret" user_node="node-secret" user_alice="alice-secret";'
)
TIMEOUT_S = 30.0


@dataclass
class Cluster:
    root: Path
    pki: Pki
    ports: dict[int, dict[str, int]]
    procs: dict[int, Any]
    cluster_id: str = ""

    def bootstrap(self, listener: str) -> str:
        return ",".join(f"127.0.0.1:{self.ports[n][listener]}" for n in (1, 2))

    def port(self, listener: str, node: int = 1) -> int:
        return self.ports[node][listener]

    def log(self, node: int) -> str:
        return (self.root / f"node-{node}" / "server.log").read_text(errors="replace")


def _properties(node: int, ports: dict[int, dict[str, int]], root: Path, pki: Pki, password: str) -> str:
    mine = ports[node]
    voters = ",".join(f"{n}@127.0.0.1:{p['CONTROLLER']}" for n, p in ports.items() if n in (1, 2))
    roles = "broker,controller" if node in (1, 2) else "broker"
    listeners = [name for name in LISTENERS if roles == "broker,controller" or name != "CONTROLLER"]
    props = {
        "process.roles": roles,
        "node.id": str(node),
        "controller.quorum.voters": voters,
        "controller.listener.names": "CONTROLLER",
        "listeners": ",".join(f"{n}://127.0.0.1:{mine[n]}" for n in listeners),
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in PROTOCOLS.items()),
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.mechanism.controller.protocol": "PLAIN",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "sasl.jaas.config": JAAS.replace('password="node-secret"', f'password="{password}"'),
        "ssl.keystore.type": "PEM",
        # The cluster's own copy (the session PKI's files are shared), renewed by a test below.
        "ssl.keystore.location": str(root / "server.pem"),
        "ssl.keystore.reload.interval.ms": "200",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": pki.path("ca.pem"),
        "listener.name.clientssl.ssl.client.auth": "required",
        "log.dirs": str(root / f"node-{node}" / "data"),
        "metadata.log.dir": str(root / f"node-{node}" / "meta"),
        "controller.quorum.election.timeout.ms": "1000",
        "controller.quorum.fetch.timeout.ms": "2000",
        "controller.quorum.request.timeout.ms": "1500",
        "broker.heartbeat.interval.ms": "500",
        "broker.session.timeout.ms": "4000",
    }
    return "\n".join(f"{k}={v}" for k, v in props.items()) + "\n"


def _start(c: Cluster, node: int, cluster_id: str, password: str = "node-secret") -> None:
    directory = c.root / f"node-{node}"
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "server.properties"
    config.write_text(_properties(node, c.ports, c.root, c.pki, password))
    done = run_kraft("storage", "format", "--config", str(config), "--cluster-id", cluster_id)
    assert done.returncode == 0, done.stderr
    c.procs[node] = processes.start_server(config, directory / "server.log")


def _confluent(c: Cluster, listener: str, **extra: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "bootstrap.servers": c.bootstrap(listener),
        "ssl.ca.location": c.pki.path("ca.pem"),
    }
    protocol = PROTOCOLS[listener]
    conf["security.protocol"] = protocol
    if protocol == "SSL":
        conf["ssl.certificate.location"] = c.pki.path("client.crt")
        conf["ssl.key.location"] = c.pki.path("client.key")
    if protocol.startswith("SASL"):
        conf.update({"sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"})
    conf.update(extra)
    return conf


def _kafka_python(c: Cluster, listener: str, **extra: Any) -> dict[str, Any]:
    protocol = PROTOCOLS[listener]
    conf: dict[str, Any] = {
        "bootstrap_servers": c.bootstrap(listener),
        "security_protocol": protocol,
        "request_timeout_ms": 10_000,
    }
    if "SSL" in protocol:
        conf["ssl_cafile"] = c.pki.path("ca.pem")
    if protocol == "SSL":
        conf.update({"ssl_certfile": c.pki.path("client.crt"), "ssl_keyfile": c.pki.path("client.key")})
    if protocol.startswith("SASL"):
        conf.update(
            {"sasl_mechanism": "PLAIN", "sasl_plain_username": "alice", "sasl_plain_password": "alice-secret"}
        )
    conf.update(extra)
    return conf


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("security")
    pki = session_pki()
    ports_flat = processes.free_ports(3 * len(LISTENERS))
    ports = {
        n: dict(zip(LISTENERS, ports_flat[(n - 1) * len(LISTENERS) : n * len(LISTENERS)])) for n in (1, 2, 3)
    }
    cluster_id = run_kraft("storage", "random-uuid").stdout.strip()
    (root / "server.pem").write_bytes(Path(pki.path("server.pem")).read_bytes())
    c = Cluster(root, pki, ports, {}, cluster_id)
    try:
        for node in (1, 2):
            _start(c, node, cluster_id)
        admin = AdminClient(_confluent(c, "CLIENTSASL"))
        deadline = time.monotonic() + 60
        while True:
            try:
                if len(admin.list_topics(timeout=5).brokers) == 2:
                    break
            except KafkaException:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the secured cluster did not come up:\n" + c.log(1)[-3000:] + c.log(2)[-3000:])
            time.sleep(0.2)
        yield c
    finally:
        for proc in c.procs.values():
            proc.kill()  # a throwaway cluster: no graceful shutdown to wait for
        for proc in c.procs.values():
            proc.wait(timeout=15)


# ------------------------------------------------------------------------------------ served


@pytest.mark.parametrize("listener", ["CLIENTSSL", "CLIENTSASLSSL", "CLIENTSASL"])
def test_confluent_admin_acks_all_producer_and_consumer_are_served(cluster: Cluster, listener: str) -> None:
    admin = AdminClient(_confluent(cluster, listener))
    topic = f"t-confluent-{listener.lower()}"
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=2)])[topic].result(
        timeout=TIMEOUT_S
    )
    metadata_ = admin.list_topics(timeout=TIMEOUT_S)
    assert topic in metadata_.topics and len(metadata_.brokers) == 2
    # Brokers are advertised on the listener the client came in by.
    assert {b.port for b in metadata_.brokers.values()} == {
        cluster.port(listener, 1),
        cluster.port(listener, 2),
    }
    producer = Producer(_confluent(cluster, listener, acks="all", **{"message.timeout.ms": 20_000}))
    delivered: list[Any] = []
    for i in range(10):
        producer.produce(
            topic, key=str(i).encode(), value=b"v%d" % i, on_delivery=lambda e, m: delivered.append(e)
        )
    assert producer.flush(TIMEOUT_S) == 0
    assert delivered == [None] * 10  # acks=all: both replicas, the follower fetching over INTERNAL
    # ... and a consumer on the same listener reads them back, in order per partition.
    # librdkafka wants a group id; assign() uses no group, and without auto commit close() asks no
    # coordinator (kraft has no groups yet).
    consumer = Consumer(
        _confluent(cluster, listener, **{"group.id": f"g-{listener.lower()}", "enable.auto.commit": False})
    )
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in (0, 1)])
        read: list[Any] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(read) < 10 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                read.append(message)
    finally:
        consumer.close()
    assert sorted(m.value() for m in read) == sorted(b"v%d" % i for i in range(10))
    for p in (0, 1):
        offsets = [m.offset() for m in read if m.partition() == p]
        assert offsets == list(range(len(offsets)))


@pytest.mark.parametrize("listener", ["CLIENTSSL", "CLIENTSASLSSL", "CLIENTSASL"])
def test_kafka_python_admin_producer_and_consumer_are_served(cluster: Cluster, listener: str) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic as KpNewTopic

    admin = KafkaAdminClient(**_kafka_python(cluster, listener))
    topic = f"t-kp-{listener.lower()}"
    try:
        admin.create_topics([KpNewTopic(topic, num_partitions=1, replication_factor=2)])
        assert topic in admin.list_topics()
        assert len(admin.describe_cluster()["brokers"]) == 2
    finally:
        admin.close()
    producer = KafkaProducer(acks="all", **_kafka_python(cluster, listener))
    try:
        record = producer.send(topic, b"hello").get(timeout=TIMEOUT_S)
        assert record.offset == 0
    finally:
        producer.close()
    consumer = KafkaConsumer(
        topic,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=int(TIMEOUT_S * 1000),
        **_kafka_python(cluster, listener),
    )
    try:
        first = next(iter(consumer))
    finally:
        consumer.close()
    assert (first.offset, first.value) == (0, b"hello")


# ------------------------------------------------------------------------------------ refused


def _confluent_error(conf: dict[str, Any]) -> KafkaError:
    errors: list[KafkaError] = []
    admin = AdminClient({**conf, "error_cb": errors.append})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=1)
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        admin.poll(0.2)  # error_cb is served from poll
    assert errors, "confluent-kafka reported no error"
    return errors[0]


def test_bad_credentials_are_refused_with_the_servers_message(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    for user, password in (("alice", "wrong"), ("mallory", "alice-secret")):
        for listener in ("CLIENTSASL", "CLIENTSASLSSL"):
            conf = _confluent(cluster, listener, **{"sasl.username": user, "sasl.password": password})
            error = _confluent_error(conf)
            assert error.code() == KafkaError._AUTHENTICATION, error
            assert "Invalid username or password" in error.str()
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError as KpError

    conf = _kafka_python(cluster, "CLIENTSASL", sasl_plain_password="wrong", bootstrap_timeout_ms=6000)
    # kafka-python 3 retries refused bootstrap servers until its timeout, logging the server's reason.
    # It drops an answer it reads together with the close ("socket disconnected"); the server waits
    # for the client's close after a refusal (KafkaServer._linger), so the reason reaches it.
    with caplog.at_level(logging.WARNING, logger="kafka"), pytest.raises(KpError) as info:
        KafkaAdminClient(**conf)
    assert type(info.value).__name__ in ("SaslAuthenticationFailedError", "KafkaTimeoutError"), info.value
    assert "Invalid username or password" in caplog.text
    assert "socket disconnected" not in caplog.text
    # The same listener still serves a good client.
    AdminClient(_confluent(cluster, "CLIENTSASL")).list_topics(timeout=TIMEOUT_S)


@pytest.mark.parametrize("cert", ["rogue-client", "expired-client"])  # untrusted CA; trusted CA, expired
def test_untrusted_or_expired_client_certificate_is_refused(cluster: Cluster, cert: str) -> None:
    conf = _confluent(
        cluster,
        "CLIENTSSL",
        **{
            "ssl.certificate.location": cluster.pki.path(f"{cert}.crt"),
            "ssl.key.location": cluster.pki.path(f"{cert}.key"),
        },
    )
    error = _confluent_error(conf)
    assert error.code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), error
    AdminClient(_confluent(cluster, "CLIENTSSL")).list_topics(timeout=TIMEOUT_S)


def test_client_that_does_not_trust_the_server_refuses_it(cluster: Cluster) -> None:
    error = _confluent_error(
        _confluent(cluster, "CLIENTSASLSSL", **{"ssl.ca.location": cluster.pki.path("rogue-ca.pem")})
    )
    # librdkafka reports the failed verification as _SSL or, depending on timing, as _TRANSPORT; the
    # reason is in the message either way.
    assert error.code() in (KafkaError._SSL, KafkaError._TRANSPORT), error
    assert "certificate verify failed" in error.str(), error


def test_tls_1_1_client_and_plaintext_bytes_to_a_tls_port_are_refused(cluster: Cluster) -> None:
    port = cluster.port("CLIENTSASLSSL")
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
    with pytest.warns(DeprecationWarning):
        old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
    old.set_ciphers("DEFAULT:@SECLEVEL=0")
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        pytest.raises((ssl.SSLError, ConnectionError)),
    ):
        old.wrap_socket(raw)
    # librdkafka speaking PLAINTEXT to the TLS port: no broker answers.
    error = _confluent_error({"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "PLAINTEXT"})
    assert error.code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), error
    AdminClient(_confluent(cluster, "CLIENTSASLSSL")).list_topics(timeout=TIMEOUT_S)


def test_a_request_before_authentication_is_not_served(cluster: Cluster) -> None:
    request = metadata.REQUEST.cls(topics=None, allow_auto_topic_creation=False)
    with socket.create_connection(("127.0.0.1", cluster.port("CLIENTSASL")), timeout=10) as raw:
        raw.sendall(frame(encode_request(metadata.API, 12, 1, request)))
        assert raw.recv(65536) == b""  # closed, nothing answered


def test_a_node_with_a_wrong_password_is_refused_by_the_controllers(cluster: Cluster) -> None:
    _start(cluster, 3, cluster.cluster_id, password="not-the-node-password")
    deadline = time.monotonic() + TIMEOUT_S
    while "refused our PLAIN credentials" not in cluster.log(3):
        assert time.monotonic() < deadline, cluster.log(3)[-3000:]
        time.sleep(0.2)
    admin = AdminClient(_confluent(cluster, "CLIENTSASL"))
    assert 3 not in admin.list_topics(timeout=TIMEOUT_S).brokers
    cluster.procs.pop(3).kill()


def test_a_renewed_certificate_is_served_without_a_restart(cluster: Cluster) -> None:
    def served() -> bytes:
        ctx = ssl.create_default_context(cafile=cluster.pki.path("ca.pem"))
        raw = socket.create_connection(("127.0.0.1", cluster.port("CLIENTSASLSSL")), timeout=5)
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            der = tls.getpeercert(binary_form=True)
        assert der is not None
        return der

    def der(pem_file: str) -> bytes:
        return ssl.PEM_cert_to_DER_cert(
            "-----BEGIN CERTIFICATE-----" + Path(pem_file).read_text().split("-----BEGIN CERTIFICATE-----")[1]
        )

    assert served() == der(cluster.pki.path("server.pem"))
    renewed = cluster.root / "server.pem.new"
    renewed.write_bytes(Path(cluster.pki.path("server-renewed.pem")).read_bytes())
    renewed.replace(cluster.root / "server.pem")  # as certbot and cert-manager do: a rename
    deadline = time.monotonic() + 15
    while served() != der(cluster.pki.path("server-renewed.pem")):
        assert time.monotonic() < deadline, (
            "the renewed certificate was not picked up\n" + cluster.log(1)[-2000:]
        )
        time.sleep(0.1)
    assert "reloaded its key and certificate" in cluster.log(1)
