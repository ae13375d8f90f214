"""``kraft cluster up --secure`` end to end: one secured cluster, every client through its files.

One ``kraft cluster up --secure --detach --controllers 1 --brokers 2 --create-topic demo:2:2`` for the
module (two brokers, so that the demo topic's followers fetch over the SASL_SSL inter-broker
listener, logging in with SCRAM-SHA-512). What the tests prove: ``up`` leaves client.properties
(0600, Kafka's names) and never prints a password; ``kraft cluster status`` logs in as the admin;
``kraft topics --command-config`` creates a topic whose replicas all join the ISR; kraft's console
producer and consumer round-trip records with ``--command-config``; kafka-python (admin, producer,
consumer) and confluent-kafka (producer, consumer), configured from client.properties mapped to
their own names, round-trip records; a PLAINTEXT client is refused on the same port; kcat
round-trips when its librdkafka can log in with SCRAM (2.6.1 or later); ``down`` then ``up --secure``
restarts the same cluster (and ``up`` without ``--secure`` is refused).
"""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from local_cluster import FAST_OVERRIDE_ARGS, poll_until, run_kraft

from kraft.cli import cluster as cluster_cli
from kraft.cli import cluster_processes as processes
from kraft.client.connection import AdminError, Connection
from kraft.common.config import load_properties
from kraft.common.errors import RemoteProtocolError
from kraft.records.batch import iter_batches
from kraft.security.jaas import parse_jaas_config

confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("secure-cluster")]

TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SecureCluster:
    data: Path
    up_stdout: str
    spec: cluster_cli.ClusterFile
    bootstrap: str  # every broker

    @property
    def client_properties(self) -> Path:
        return self.data / "client.properties"

    def props(self) -> dict[str, str]:
        return load_properties(self.client_properties)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureCluster]:
    data = tmp_path_factory.mktemp("secure-cluster") / "data"
    try:
        up = run_kraft(
            "cluster",
            "up",
            "--secure",
            "--detach",
            "--controllers",
            "1",
            "--brokers",
            "2",
            "--base-port",
            "0",
            "--data-dir",
            str(data),
            "--create-topic",
            "demo:2:2",
            *FAST_OVERRIDE_ARGS,
            timeout_s=120,
        )
        assert up.returncode == 0, up.stderr + up.stdout
        spec = cluster_cli.ClusterFile.load(data / cluster_cli.CLUSTER_FILE)
        bootstrap = ",".join(str(a) for a in spec.bootstrap_servers())
        yield SecureCluster(data, up.stdout, spec, bootstrap)
    finally:
        if (data / cluster_cli.CLUSTER_FILE).exists():
            run_kraft("cluster", "down", "--data-dir", str(data), timeout_s=60)


def kraft(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        processes.kraft_command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        env=processes.child_env(),
        timeout=TIMEOUT_S * 2,
        check=False,
    )


def credentials(props: dict[str, str]) -> tuple[str, str]:
    entry = parse_jaas_config(props["sasl.jaas.config"])
    username, password = entry.option("username"), entry.option("password")
    assert username is not None and password is not None
    return username, password


def kafka_python_config(cluster: SecureCluster) -> dict[str, Any]:
    """client.properties in kafka-python's names."""
    props = cluster.props()
    username, password = credentials(props)
    return {
        "bootstrap_servers": cluster.bootstrap,
        "security_protocol": props["security.protocol"],
        "sasl_mechanism": props["sasl.mechanism"],
        "sasl_plain_username": username,
        "sasl_plain_password": password,
        "ssl_cafile": props["ssl.truststore.location"],
        "request_timeout_ms": 10_000,
    }


def confluent_config(cluster: SecureCluster, **extra: Any) -> dict[str, Any]:
    """client.properties in librdkafka's names."""
    props = cluster.props()
    username, password = credentials(props)
    return {
        "bootstrap.servers": cluster.bootstrap,
        "security.protocol": props["security.protocol"],
        "sasl.mechanism": props["sasl.mechanism"],
        "sasl.username": username,
        "sasl.password": password,
        "ssl.ca.location": props["ssl.truststore.location"],
        **extra,
    }


def values_on(broker: cluster_cli.NodeEntry, topic: str) -> list[bytes | None]:
    """The record values of partition 0 of ``topic`` in the broker's segment files."""
    return [
        r.value
        for segment in sorted(Path(broker.data_dir).glob(f"{topic}-0/*.log"))
        for batch in iter_batches(segment.read_bytes())
        if not batch.is_control
        for r in batch.records
    ]


def create_topic(cluster: SecureCluster, name: str) -> None:
    created = kraft(
        "topics",
        "--bootstrap-server",
        cluster.bootstrap,
        "--command-config",
        str(cluster.client_properties),
        "--create",
        "--topic",
        name,
        "--partitions",
        "1",
        "--replication-factor",
        "2",
    )
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == f"Created topic {name}."


def test_up_writes_a_private_client_properties_and_prints_no_password(cluster: SecureCluster) -> None:
    props = cluster.props()
    assert stat.S_IMODE(cluster.client_properties.stat().st_mode) == 0o600
    assert (props["security.protocol"], props["sasl.mechanism"], props["ssl.truststore.type"]) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "PEM",
    )
    _, password = credentials(props)
    assert password not in cluster.up_stdout
    assert f"--command-config {cluster.client_properties}" in cluster.up_stdout
    assert "SASL_SSL://127.0.0.1:" in cluster.up_stdout
    # The demo topic was created through the brokers' SASL_SSL listener, two replicas each.
    isr = re.findall(r"Replicas: (\S+)\tIsr: (\S+)", cluster.up_stdout)
    assert len(isr) == 2 and all(sorted(r.split(",")) == sorted(i.split(",")) for r, i in isr), isr


def test_cluster_status_logs_in_as_the_admin(cluster: SecureCluster) -> None:
    status = kraft("cluster", "status", "--data-dir", str(cluster.data), "--json")
    assert status.returncode == 0, status.stderr
    described = json.loads(status.stdout)
    assert described["clusterId"] == cluster.spec.cluster_id
    assert described["leaderId"] == cluster.spec.controllers[0].id
    assert {o["id"] for o in described["currentObservers"]} == {b.id for b in cluster.spec.brokers}


def test_kraft_topics_and_the_console_tools_round_trip_with_the_command_config(
    cluster: SecureCluster,
) -> None:
    create_topic(cluster, "console")
    config = str(cluster.client_properties)
    produced = kraft(
        "console-producer",
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        "console",
        "--command-config",
        config,
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
        stdin="k1:one\nk2:two\nk3:three\n",
    )
    assert produced.returncode == 0, produced.stderr
    # Both replicas hold the records: the follower fetched them over the SASL_SSL inter-broker
    # listener, logging in with SCRAM-SHA-512 as the node user.
    for broker in cluster.spec.brokers:
        poll_until(
            f"the records in broker {broker.id}'s files",
            lambda b=broker: values_on(b, "console") == [b"one", b"two", b"three"],
            timeout_s=TIMEOUT_S,
            interval_s=0.2,
            tails=lambda: "\n".join(processes.tail(n.server_log) for n in cluster.spec.brokers),
        )
    consumed = kraft(
        "console-consumer",
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        "console",
        "--command-config",
        config,
        "--from-beginning",
        "--max-messages",
        "3",
        "--property",
        "print.key=true",
    )
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == ["k1\tone", "k2\ttwo", "k3\tthree"]
    offsets = kraft(
        "get-offsets",
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        "console",
        "--command-config",
        config,
    )
    assert offsets.stdout == "console:0:3\n", offsets.stderr


def test_kafka_python_admin_producer_and_consumer_use_the_client_properties(cluster: SecureCluster) -> None:
    config = kafka_python_config(cluster)
    admin = kafka.KafkaAdminClient(**config)
    try:
        admin.create_topics([kafka.admin.NewTopic("kp", num_partitions=1, replication_factor=2)])
        assert "kp" in admin.list_topics()
    finally:
        admin.close()
    producer = kafka.KafkaProducer(acks="all", **config)
    for i in range(5):
        producer.send("kp", f"kp{i}".encode())
    producer.flush(timeout=TIMEOUT_S)
    producer.close()
    consumer = kafka.KafkaConsumer(enable_auto_commit=False, **config)
    try:
        tp = kafka.TopicPartition("kp", 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(values) < 5 and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                values.extend(r.value for r in batch)
    finally:
        consumer.close()
    assert values == [f"kp{i}".encode() for i in range(5)]


def test_confluent_kafka_producer_and_consumer_use_the_client_properties(cluster: SecureCluster) -> None:
    create_topic(cluster, "ck")
    producer = Producer(confluent_config(cluster, acks="all"))
    for i in range(5):
        producer.produce("ck", f"ck{i}".encode())
    assert producer.flush(TIMEOUT_S) == 0
    consumer = Consumer(
        confluent_config(
            cluster,
            **{"group.id": f"unused-{uuid.uuid4()}", "enable.auto.commit": False},  # assign() needs no group
        )
    )
    try:
        consumer.assign([TopicPartition("ck", 0, 0)])
        values: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(values) < 5 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    assert values == [f"ck{i}".encode() for i in range(5)]


def test_a_plaintext_client_is_refused_on_the_same_port(cluster: SecureCluster) -> None:
    broker = cluster.spec.brokers[0].broker_address
    with pytest.raises((AdminError, RemoteProtocolError, OSError)):
        Connection(broker, 3.0).close()
    # The same port with the admin's security answers.
    Connection(broker, 10.0, security=cluster.spec.admin_security()).close()


def _kcat_librdkafka_version(kcat: str) -> tuple[int, ...] | None:
    found = re.search(
        r"librdkafka (\d+)\.(\d+)\.(\d+)", subprocess.run([kcat, "-V"], capture_output=True, text=True).stdout
    )
    return None if found is None else tuple(int(g) for g in found.groups())


def test_kcat_round_trips_with_the_librdkafka_properties(cluster: SecureCluster) -> None:
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat is None:
        pytest.skip(
            "kcat is not installed (Debian/Ubuntu: apt-get install kcat); the kcat round trip is not run"
        )
    version = _kcat_librdkafka_version(kcat)
    if version is not None and version < (2, 6, 1):
        pytest.skip(
            f"kcat's librdkafka {'.'.join(map(str, version))} repeats the client nonce in its SCRAM "
            "client-final message (fixed in 2.6.1, librdkafka#4895), which Kafka 4.x and kraft refuse"
        )
    create_topic(cluster, "kc")
    settings = ["-F", str(cluster.data / "librdkafka.properties")]
    produced = subprocess.run(
        [kcat, "-b", cluster.bootstrap, *settings, "-t", "kc", "-P"],
        input="a\nb\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run(
        [kcat, "-b", cluster.bootstrap, *settings, "-t", "kc", "-C", "-o", "beginning", "-e", "-q"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == ["a", "b"]


def test_down_then_up_secure_restarts_the_same_secure_cluster(cluster: SecureCluster) -> None:
    """Last: it restarts the module's cluster (same id, ports and credentials)."""
    before = cluster.client_properties.read_text()
    down = kraft("cluster", "down", "--data-dir", str(cluster.data))
    assert down.returncode == 0, down.stderr
    refused = kraft("cluster", "up", "--detach", "--data-dir", str(cluster.data))
    assert refused.returncode == 1 and "describes a secure cluster" in refused.stderr
    up = kraft("cluster", "up", "--secure", "--detach", "--data-dir", str(cluster.data), *FAST_OVERRIDE_ARGS)
    assert up.returncode == 0, up.stderr + up.stdout
    assert f"ClusterId:              {cluster.spec.cluster_id}" in up.stdout
    assert cluster.client_properties.read_text() == before
    offsets = kraft(
        "get-offsets",
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        "console",
        "--command-config",
        str(cluster.client_properties),
    )
    assert offsets.stdout == "console:0:3\n", offsets.stderr
