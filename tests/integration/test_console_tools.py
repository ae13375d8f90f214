"""The console tools against real broker processes, started the way ``make run`` starts them.

One ``kraft cluster up --detach --controllers 3 --brokers 3 --create-topic demo:3:3`` (what ``make
run`` runs, on free ports) for the module. What the tests prove: ``up`` prints how to produce and
consume the demo topic with the brokers' real addresses; lines piped through ``kraft
console-producer`` (acks=all, keys) come back exactly from ``kraft console-consumer
--from-beginning --max-messages N``, land in the partitions Kafka's partitioner picks, and add up
in ``kraft get-offsets``; confluent-kafka (librdkafka, written independently of kraft) reads what
our producer wrote with every codec, and our consumer reads what librdkafka's producer wrote; kcat,
when it is installed, does both too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from local_cluster import FAST_OVERRIDE_ARGS, run_kraft

from kraft.cli import cluster as cluster_cli
from kraft.cli import cluster_processes as processes
from kraft.client.producer import partition_for_key

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("console-tools-cluster")]

TIMEOUT_S = 60.0


@dataclass(frozen=True)
class UpCluster:
    data: Path
    up_stdout: str
    bootstrap: str  # every broker, as `up` prints it


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpCluster]:
    data = tmp_path_factory.mktemp("console-tools") / "data"
    try:
        up = run_kraft(
            "cluster",
            "up",
            "--detach",
            "--controllers",
            "3",
            "--brokers",
            "3",
            "--base-port",
            "0",
            "--data-dir",
            str(data),
            "--create-topic",
            "demo:3:3",
            *FAST_OVERRIDE_ARGS,
            timeout_s=180,
        )
        assert up.returncode == 0, up.stderr + up.stdout
        spec = json.loads((data / "cluster.json").read_text())
        ports = [n["broker_port"] for n in spec["nodes"] if n["broker_port"] is not None]
        assert len(ports) == 3
        yield UpCluster(data, up.stdout, ",".join(f"127.0.0.1:{p}" for p in ports))
    finally:
        if (data / "cluster.json").exists():
            run_kraft("cluster", "down", "--data-dir", str(data), timeout_s=120)


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


def create_topic(cluster: UpCluster, name: str, partitions: int) -> None:
    created = kraft(
        "topics",
        "--bootstrap-server",
        cluster.bootstrap,
        "--create",
        "--topic",
        name,
        "--partitions",
        str(partitions),
        "--replication-factor",
        "3",
    )
    assert created.returncode == 0, created.stderr


def confluent_read(
    cluster: UpCluster, topic: str, partitions: int, count: int
) -> list[tuple[int, int, bytes, bytes]]:
    """(partition, offset, key, value) of ``count`` records, every partition from offset 0."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": f"unused-{uuid.uuid4()}",  # librdkafka wants one; assign() needs no group
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        out: list[tuple[int, int, bytes, bytes]] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(out) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            out.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
        return out
    finally:
        consumer.close()


def test_cluster_up_prints_how_to_produce_and_consume_the_demo_topic(cluster: UpCluster) -> None:
    server = f"--bootstrap-server {cluster.bootstrap} --topic demo"
    lines = [line.strip() for line in cluster.up_stdout.splitlines()]
    assert "Created topic demo." in lines
    hint = lines.index(next(line for line in lines if line.startswith("Produce to and consume from demo")))
    assert lines[hint + 1 : hint + 7] == [
        f"kraft console-producer {server}",
        f"kraft console-consumer {server} --from-beginning",
        f"kraft get-offsets {server}",
        "or with kcat:",
        f"kcat -b {cluster.bootstrap} -t demo -P",
        f"kcat -b {cluster.bootstrap} -t demo -C -o beginning",
    ]
    # The rest of `up`'s output is unchanged around it: the topic is described before the hint.
    assert lines.index("Created topic demo.") < hint
    assert any(line.startswith("Topic: demo") for line in lines[:hint])


def test_lines_piped_through_the_console_tools_come_back_exactly(cluster: UpCluster) -> None:
    sent = [(f"key-{i % 7}", f"value-{i}") for i in range(300)]
    produced = kraft(
        "console-producer",
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        "demo",
        "--producer-property",
        "acks=all",
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
        stdin="".join(f"{k}:{v}\n" for k, v in sent),
    )
    assert (produced.returncode, produced.stderr) == (0, "")

    consumed = kraft(
        "console-consumer",
        "--bootstrap-server",
        cluster.bootstrap.split(",")[-1],  # one broker: the others are found through Metadata
        "--topic",
        "demo",
        "--from-beginning",
        "--max-messages",
        str(len(sent)),
        "--timeout-ms",
        str(int(TIMEOUT_S * 1000)),
        "--property",
        "print.partition=true",
        "--property",
        "print.offset=true",
        "--property",
        "print.key=true",
    )
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stderr.endswith(f"Processed a total of {len(sent)} messages\n")
    rows = [line.split("\t") for line in consumed.stdout.splitlines()]
    assert len(rows) == len(sent)
    read = [(int(p.removeprefix("Partition:")), int(o.removeprefix("Offset:")), k, v) for p, o, k, v in rows]
    # Each record is in the partition Kafka's partitioner picks for its key, in the order sent, at
    # dense offsets from 0.
    for partition in range(3):
        expected = [(k, v) for k, v in sent if partition_for_key(k.encode(), 3) == partition]
        got = [(o, k, v) for p, o, k, v in read if p == partition]
        assert got == [(i, k, v) for i, (k, v) in enumerate(expected)]

    # get-offsets: the log end of each partition is its record count; the earliest offset is 0.
    counts = {p: sum(1 for k, _ in sent if partition_for_key(k.encode(), 3) == p) for p in range(3)}
    latest = kraft("get-offsets", "--bootstrap-server", cluster.bootstrap, "--topic", "demo")
    assert latest.returncode == 0, latest.stderr
    assert latest.stdout.splitlines() == [f"demo:{p}:{counts[p]}" for p in range(3)]
    earliest = kraft(
        "get-offsets", "--bootstrap-server", cluster.bootstrap, "--topic", "demo", "--time", "-2"
    )
    assert earliest.stdout.splitlines() == [f"demo:{p}:0" for p in range(3)]

    # An independent client reads exactly the same records at the same offsets.
    theirs = confluent_read(cluster, "demo", 3, len(sent))
    assert sorted((p, o, k.decode(), v.decode()) for p, o, k, v in theirs) == sorted(read)


def test_librdkafka_reads_every_codec_our_producer_writes(cluster: UpCluster) -> None:
    create_topic(cluster, "codecs", 1)
    expected: list[bytes] = []
    for codec in ("none", "gzip", "lz4", "zstd"):
        lines = [f"{codec}-{i}-" + "payload " * 10 for i in range(50)]
        produced = kraft(
            "console-producer",
            "--bootstrap-server",
            cluster.bootstrap,
            "--topic",
            "codecs",
            "--compression-codec",
            codec,
            stdin="\n".join(lines) + "\n",
        )
        assert produced.returncode == 0, produced.stderr
        expected += [line.encode() for line in lines]
    theirs = confluent_read(cluster, "codecs", 1, len(expected))
    assert [(o, v) for _, o, _, v in theirs] == list(enumerate(expected))


def test_our_console_consumer_reads_what_librdkafka_produced(cluster: UpCluster) -> None:
    create_topic(cluster, "from-librdkafka", 2)
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap, "acks": "all", "compression.type": "zstd", "linger.ms": 20}
    )
    errors: list[KafkaError] = []
    records = [(f"k{i}".encode(), f"librdkafka-{i}".encode(), i % 2) for i in range(200)]
    for key, value, partition in records:
        producer.produce(
            "from-librdkafka",
            value=value,
            key=key,
            partition=partition,
            headers=[("n", str(len(value)).encode())],
            on_delivery=lambda err, _msg: errors.append(err) if err else None,
        )
    assert producer.flush(TIMEOUT_S) == 0 and errors == []
    consumed = kraft(
        "console-consumer",
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        "from-librdkafka",
        "--from-beginning",
        "--max-messages",
        str(len(records)),
        "--timeout-ms",
        str(int(TIMEOUT_S * 1000)),
        "--property",
        "print.key=true",
        "--property",
        "print.headers=true",
    )
    assert consumed.returncode == 0, consumed.stderr
    lines = consumed.stdout.splitlines()
    for partition in (0, 1):
        expected = [f"n:{len(v)}\t{k.decode()}\t{v.decode()}" for k, v, p in records if p == partition]
        # Each partition's records in order (the two partitions interleave in the output).
        assert [line for line in lines if line in set(expected)] == expected
    assert len(lines) == len(records)


def test_kcat_produces_and_consumes_with_the_console_tools(cluster: UpCluster) -> None:
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat is None:
        pytest.skip(
            "kcat is not installed (Debian/Ubuntu: apt-get install kcat); the kcat round trip is not run"
        )
    create_topic(cluster, "kcat", 1)
    produced = subprocess.run(
        [kcat, "-b", cluster.bootstrap, "-t", "kcat", "-P"],
        input="from-kcat-1\nfrom-kcat-2\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert produced.returncode == 0, produced.stderr
    ours = kraft(
        "console-producer", "--bootstrap-server", cluster.bootstrap, "--topic", "kcat", stdin="from-kraft\n"
    )
    assert ours.returncode == 0, ours.stderr
    consumed = kraft(
        "console-consumer",
        "--bootstrap-server",
        cluster.bootstrap,
        "--topic",
        "kcat",
        "--from-beginning",
        "--max-messages",
        "3",
        "--timeout-ms",
        str(int(TIMEOUT_S * 1000)),
    )
    assert consumed.stdout.splitlines() == ["from-kcat-1", "from-kcat-2", "from-kraft"]
    read = subprocess.run(
        [kcat, "-b", cluster.bootstrap, "-t", "kcat", "-C", "-o", "beginning", "-e", "-q"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert read.returncode == 0, read.stderr
    assert read.stdout.splitlines() == ["from-kcat-1", "from-kcat-2", "from-kraft"]


def test_log_dirs_describe_shows_each_brokers_partition_logs_as_kafkas_tool_prints_them(
    cluster: UpCluster,
) -> None:
    create_topic(cluster, "sized", 2)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(50):
        producer.produce("sized", b"x" * 200, partition=i % 2)
    assert producer.flush(TIMEOUT_S) == 0
    spec = json.loads((cluster.data / "cluster.json").read_text())
    brokers = sorted(n["id"] for n in spec["nodes"] if n["broker_port"] is not None)

    def describe(*extra: str) -> subprocess.CompletedProcess[str]:
        return kraft("log-dirs", "--bootstrap-server", cluster.bootstrap, "--describe", *extra)

    def sized_logs() -> dict[tuple[int, str], int]:
        done = describe("--topic-list", "sized")
        assert done.returncode == 0, done.stderr
        query, received, doc = done.stdout.splitlines()
        assert query == "Querying brokers for log directories information"
        assert received == f"Received log directory information from brokers {','.join(map(str, brokers))}"
        document = json.loads(doc)
        assert list(document) == ["brokers", "version"] and document["version"] == 1
        assert [b["broker"] for b in document["brokers"]] == brokers
        sizes = {}
        for b in document["brokers"]:
            (log_dir,) = b["logDirs"]  # one log.dirs entry per broker
            assert list(log_dir) == ["partitions", "error", "logDir"] and log_dir["error"] is None
            node = cluster_cli.ClusterFile.load(cluster.data / cluster_cli.CLUSTER_FILE).node(b["broker"])
            assert Path(log_dir["logDir"]) == Path(node.data_dir)
            for p in log_dir["partitions"]:
                assert list(p) == ["partition", "size", "offsetLag", "isFuture"]
                assert (p["offsetLag"], p["isFuture"]) == (0, False)
                sizes[(b["broker"], p["partition"])] = p["size"]
        return sizes

    # Every replica (RF 3) of both partitions, and nothing of other topics; the followers fetch
    # what the leaders hold, so every copy reaches the same size.
    expected_keys = {(b, f"sized-{p}") for b in brokers for p in (0, 1)}
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        sizes = sized_logs()
        settled = set(sizes) == expected_keys and all(
            sizes[(b, f"sized-{p}")] == sizes[(brokers[0], f"sized-{p}")] > 25 * 200
            for b in brokers
            for p in (0, 1)
        )
        if settled or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert settled, sizes
    # One broker of the list; an unknown one is refused with Kafka's message and exit status 1.
    one = describe("--broker-list", str(brokers[0]), "--json")
    assert one.returncode == 0, one.stderr
    assert [b["broker"] for b in json.loads(one.stdout)["brokers"]] == [brokers[0]]
    unknown = describe("--broker-list", f"{brokers[0]},99")
    assert unknown.returncode == 1
    assert (
        "The given brokers do not exist from --broker-list: 99. Current existent brokers: " in unknown.stderr
    )
    assert describe("--broker-list", "x").returncode == 2  # misuse
