"""Data-plane benchmark: 3 controllers + 3 brokers on loopback, real processes, confluent-kafka.

    python benchmarks/bench_dataplane.py [--quick] [--json OUT] [--workdir DIR] [--partitions N]
    python benchmarks/bench_dataplane.py --profile OUT.prof [--profile-seconds S]

The cluster is ``tests/support/local_cluster.py``'s ``LocalCluster`` (the layout of ``kraft cluster
up``, data under a temp dir). Each part has its own topic: replication factor 3,
``min.insync.replicas=2``, ``--partitions`` partitions (6: each broker leads two, follows four).
Every producer uses ``acks=all``. Measured:

1. produce throughput at 100 B and 1 KiB values: one producer sending as fast as it can for a fixed
   duration (20 s, ``--quick`` 5 s), ``linger.ms=10``, ``batch.size=1000000`` (librdkafka's
   default), ``batch.num.messages=10000``, no compression, round robin over the partitions; records/s
   and MB/s of values acknowledged, from the first send to the last acknowledgement;
2. produce latency (send call to acknowledgement) p50/p99 at a fixed rate: half the 100 B maximum of
   part 1 (``--quick``: 1,000/s), 100 B values, about 2,000 records a second timed (a callback on
   every record held the loop below that rate). Twice: with the client's default ``linger.ms``
   (librdkafka's 5 ms, which Kafka's Java producer also has since 4.0: the goal's figure), and
   with ``linger.ms=1``, which makes several times as many, smaller requests at the same rate;
   parts 2 and 3 run on a second, new cluster (not to depend on what part 1 left behind: see
   ``run_benchmark``);
3. end-to-end latency, produce call to the consumer's ``poll`` returning the record, at 1,000
   records/s, ``linger.ms=0``; the consumer (same process, other thread) has every partition
   assigned and librdkafka's fetch defaults (``fetch.wait.max.ms=500``, ``fetch.min.bytes=1``): a
   broker whose long poll does not wake on new data shows as a latency near 500 ms;
4. consume throughput: a consumer assigned every partition of part 1's topics from the beginning,
   ``consume(10000)`` until it has read all of it; records/s (and MB/s). Twice: with librdkafka's
   defaults, and with a client that prefetches as a catching-up reader would
   (``CATCH_UP_CONSUMER``). librdkafka stops fetching a partition once 100,000 of its records wait
   in the client (``queued.min.messages``) and looks again only after ``fetch.queue.backoff.ms``
   (1,000 ms): with 100 B records that, not the broker, set the pace (the servers sat near idle).
   A third time with ``kcat`` (librdkafka without Python per record, prefetching too) when it is
   installed: a prefetching confluent-kafka consumer fills a core with its own Python loop first;
   every produce and consume figure shows the CPU the client and each broker used meanwhile (% of
   one core, from ``/proc``), which says which side set the pace;
5. baselines, same run, same bytes as part 1: buffered sequential ``write`` of one file in 1 MiB
   chunks (no fsync) and loopback TCP (one connection, 1 MiB ``sendall``), each repeated until it
   ran a second; the table shows the fraction of each that kraft's produce MB/s reached. With
   replication factor 3 kraft writes every byte three times (three brokers) and moves it over
   loopback three times (producer to leader, leader to two followers), so 1/3 would already be a
   machine-bound broker.

``--profile OUT.prof``: instead of the above, runs the first broker under cProfile
(``benchmarks/profiled_server.py``, switched on only while the load runs), loads the cluster with
part 1's 100 B producer for ``--profile-seconds`` (20), writes the stats and prints the top 10
functions by cumulative time (and by own time).

The goals in the issue (>= 300,000 records/s of 100 B, >= 100 MB/s at 1 KiB, p99 produce latency
<= 20 ms at half that rate, end-to-end p50 <= 2 ms, consume >= 1,000,000 records/s) are printed next
to the figures; they are reported, not gated: the figures depend on the machine and what else runs
on it (``os.getloadavg()`` before and after is in the output). The client runs in this process and
shares the machine's cores with the six servers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pstats
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "src"))  # after PYTHONPATH (a compiled build)
sys.path.insert(0, str(ROOT / "tests" / "support"))

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # noqa: E402
from local_cluster import LocalCluster  # noqa: E402

from kraft.cli import cluster_processes as processes  # noqa: E402
from kraft.cli.write_stats import percentile  # noqa: E402

MIB = 1 << 20
GOALS = {
    "produce_100B_records_per_s": 300_000.0,
    "produce_1KiB_mb_per_s": 100.0,
    "produce_latency_p99_ms": 20.0,
    "e2e_latency_p50_ms": 2.0,
    "consume_records_per_s": 1_000_000.0,
}
THROUGHPUT_PRODUCER = {
    "acks": "all",
    "linger.ms": 10,
    "batch.size": 1_000_000,
    "batch.num.messages": 10_000,
    "compression.type": "none",
    "queue.buffering.max.messages": 1_000_000,
    "queue.buffering.max.kbytes": 1_048_576,
    "message.timeout.ms": 120_000,
    "delivery.report.only.error": True,
}
# A consumer reading a backlog: prefetch up to a million records per partition, and look again
# 10 ms after the client's queue was full instead of librdkafka's 1,000 ms.
CATCH_UP_CONSUMER = {"queued.min.messages": 1_000_000, "fetch.queue.backoff.ms": 10}
# No linger.ms: the client's default, as a user's producer has it.
LATENCY_PRODUCER: dict[str, Any] = {"acks": "all", "compression.type": "none", "message.timeout.ms": 60_000}
# librdkafka's default linger.ms (alias queue.buffering.max.ms) since 1.5, Kafka's Java producer's since 4.0.
LIBRDKAFKA_DEFAULT_LINGER_MS = 5
SHORT_LINGER_MS = 1  # the second latency run: more, smaller requests
E2E_PRODUCER = {**LATENCY_PRODUCER, "linger.ms": 0}
LATENCY_SAMPLES_PER_S = 2_000


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -------------------------------------------------------------------------------------------------
# Baselines: what the machine does with the same bytes


def _repeat_for(min_s: float, once: Callable[[], int]) -> dict[str, float]:
    """Runs ``once`` (returns the bytes it moved) until ``min_s`` passed; MB/s over all runs."""
    moved, started = 0, time.perf_counter()
    while True:
        moved += once()
        elapsed = time.perf_counter() - started
        if elapsed >= min_s:
            return {"mb_per_s": moved / 1e6 / elapsed, "bytes": moved, "seconds": elapsed}


def file_write_mb_s(directory: Path, total_bytes: int, min_s: float = 1.0) -> dict[str, float]:
    """Buffered sequential writes of ``total_bytes`` to one new file in 1 MiB chunks, no fsync
    (what a broker's append costs before the page cache is flushed)."""
    chunk = b"\x5a" * MIB
    path = directory / "write-probe.bin"

    def once() -> int:
        written = 0
        with open(path, "wb") as f:
            while written < total_bytes:
                n = min(MIB, total_bytes - written)
                f.write(chunk if n == MIB else chunk[:n])
                written += n
        path.unlink()
        return written

    return _repeat_for(min_s, once)


def loopback_tcp_mb_s(total_bytes: int, min_s: float = 1.0) -> dict[str, float]:
    """``total_bytes`` over one loopback TCP connection (1 MiB sendall, a thread reading)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    client = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    received = [0]
    done = threading.Event()
    target = [0]

    def reader() -> None:
        while data := conn.recv(MIB):
            received[0] += len(data)
            if received[0] >= target[0]:
                done.set()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    chunk = b"\xa5" * MIB

    def once() -> int:
        done.clear()
        target[0] = received[0] + total_bytes
        sent = 0
        while sent < total_bytes:
            n = min(MIB, total_bytes - sent)
            client.sendall(chunk if n == MIB else chunk[:n])
            sent += n
        done.wait()
        return sent

    try:
        return _repeat_for(min_s, once)
    finally:
        client.close()
        thread.join(5)
        conn.close()
        server.close()


# -------------------------------------------------------------------------------------------------
# The cluster


def start_profiled(cluster: LocalCluster, node_id: int, out: Path) -> subprocess.Popen[bytes]:
    """Starts one node as ``profiled_server.py OUT server-start CONFIG`` (cProfile off until SIGUSR1)."""
    node = cluster.node(node_id)
    cluster.format(node_id)
    node.server_log.parent.mkdir(parents=True, exist_ok=True)
    with open(node.server_log, "ab") as server_log:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "profiled_server.py"),
                str(out),
                "server-start",
                str(node.config_path),
            ],
            stdin=subprocess.DEVNULL,
            stdout=server_log,
            stderr=subprocess.STDOUT,
            env=processes.child_env(),
            start_new_session=True,
        )
    cluster.procs[node_id] = proc
    return proc


def start_cluster(root: Path, profile_out: Path | None = None) -> LocalCluster:
    cluster = LocalCluster(root, 3, brokers=3)
    for node_id in cluster.ids:
        if profile_out is not None and node_id == cluster.broker_ids[0]:
            start_profiled(cluster, node_id, profile_out)
        else:
            cluster.start(node_id)
    cluster.wait_for_leader(timeout_s=60)
    cluster.wait_for_brokers(timeout_s=60)
    return cluster


def create_topic(cluster: LocalCluster, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers()})
    futures = admin.create_topics(
        [
            NewTopic(
                name, num_partitions=partitions, replication_factor=3, config={"min.insync.replicas": "2"}
            )
        ],
        operation_timeout=30,
        request_timeout=30,
    )
    futures[name].result(timeout=60)

    def led() -> bool:
        try:
            md = admin.list_topics(name, timeout=2)
        except KafkaException:
            return False
        topic = md.topics.get(name)
        return (
            topic is not None
            and topic.error is None
            and len(topic.partitions) == partitions
            and all(p.leader >= 0 and len(p.isrs) == 3 for p in topic.partitions.values())
        )

    cluster.wait_for(f"every partition of {name} led, ISR of 3", led, timeout_s=60)


def warm_up(bootstrap: str, topic: str, partitions: int) -> None:
    """One acknowledged record per partition: metadata fetched, connections open."""
    producer = Producer({"bootstrap.servers": bootstrap, **LATENCY_PRODUCER})
    for p in range(partitions):
        producer.produce(topic, b"warm-up", partition=p)
    if producer.flush(60):
        raise RuntimeError(f"warm-up of {topic} not acknowledged within 60 s")


# -------------------------------------------------------------------------------------------------
# The measurements


def produce_max(
    bootstrap: str, topic: str, partitions: int, value_size: int, seconds: float
) -> dict[str, Any]:
    """As fast as one producer goes for ``seconds``; then waits for every acknowledgement."""
    errors: list[str] = []

    def on_error(err: Any, _msg: Any) -> None:  # delivery.report.only.error: failures only
        if err is not None:
            errors.append(str(err))

    producer = Producer({"bootstrap.servers": bootstrap, **THROUGHPUT_PRODUCER, "on_delivery": on_error})
    value = b"v" * value_size
    sent = 0
    started = time.perf_counter()
    deadline = started + seconds
    while True:
        for _ in range(1000):
            try:
                producer.produce(topic, value, partition=sent % partitions)
                sent += 1
            except BufferError:  # the local queue is full: let the broker catch up
                producer.poll(0.005)
        producer.poll(0)
        if time.perf_counter() >= deadline:
            break
    sending_s = time.perf_counter() - started
    unacked = producer.flush(300)
    elapsed = time.perf_counter() - started
    acked = sent - len(errors) - unacked
    return {
        "value_bytes": value_size,
        "records_sent": sent,
        "records_acked": acked,
        "errors": len(errors),
        "first_errors": errors[:5],
        "unacked_after_flush": unacked,
        "seconds": elapsed,
        "sending_seconds": sending_s,
        "records_per_s": acked / elapsed,
        "mb_per_s": acked * value_size / 1e6 / elapsed,
    }


def _wait_serving(producer: Any, until: float) -> None:
    """Serve the producer's callbacks until ``until`` (``time.perf_counter``). librdkafka takes whole
    milliseconds: a wait under 1 ms is 0 ms, and pacing with it spun the client on a core the
    2-core machine's brokers needed (the latency figures measured that contention)."""
    remaining = until - time.perf_counter()
    if remaining > 0:
        producer.poll(max(remaining, 0.001))
    else:
        producer.poll(0)


def produce_latency(
    bootstrap: str,
    topic: str,
    partitions: int,
    rate: float,
    seconds: float,
    value_size: int = 100,
    linger_ms: int | None = None,
) -> dict[str, Any]:
    """Paced sends at ``rate``; the latency of a sample of them (about 2,000 a second), send call to
    acknowledgement. A delivery callback on every record held this Python loop to 87,000-150,000
    sends/s, so the figure at half the maximum rate measured the client; records without a callback
    cost librdkafka's report only. Failures are counted among the sampled records. ``linger_ms``
    None leaves the client's default."""
    config = dict(LATENCY_PRODUCER)
    if linger_ms is not None:
        config["linger.ms"] = linger_ms
    producer = Producer({"bootstrap.servers": bootstrap, **config})
    every = max(1, int(rate // LATENCY_SAMPLES_PER_S))
    latencies: list[float] = []
    errors: list[str] = []

    def timed(t0: int) -> Callable[[Any, Any], None]:
        def report(err: Any, _msg: Any) -> None:
            if err is None:
                latencies.append((time.perf_counter_ns() - t0) / 1e6)
            else:
                errors.append(str(err))

        return report

    value = b"l" * value_size
    total = max(1, int(rate * seconds))
    sent = 0
    started = time.perf_counter()
    while sent < total:
        due = min(total, int((time.perf_counter() - started) * rate) + 1)
        while sent < due:
            try:
                if sent % every:
                    producer.produce(topic, value, partition=sent % partitions)
                else:
                    t0 = time.perf_counter_ns()
                    producer.produce(topic, value, partition=sent % partitions, on_delivery=timed(t0))
            except BufferError:
                producer.poll(0.001)
                continue
            sent += 1
        # Serve acknowledgements while waiting for the next send, so each is timed on arrival.
        _wait_serving(producer, started + sent / rate)
    send_s = time.perf_counter() - started
    producer.flush(120)
    latencies.sort()
    return {
        "target_per_s": rate,
        "achieved_per_s": sent / send_s,
        "records": len(latencies),
        "sampled_every": every,
        "errors": len(errors),
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "max_ms": latencies[-1] if latencies else 0.0,
        "linger_ms": LIBRDKAFKA_DEFAULT_LINGER_MS if linger_ms is None else linger_ms,
        "linger_default": linger_ms is None,
    }


def end_to_end_latency(
    bootstrap: str, topic: str, partitions: int, rate: float, seconds: float
) -> dict[str, Any]:
    """Paced sends at ``rate`` with the send time in the value; a consumer thread times arrivals."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench-e2e", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    latencies: list[float] = []
    seen = [0]
    stop = threading.Event()
    failures: list[str] = []

    def consume() -> None:
        try:
            while not stop.is_set():
                msg: Any = consumer.poll(0.1)
                if msg is None:
                    continue
                if msg.error() is not None:
                    failures.append(str(msg.error()))
                    continue
                now = time.perf_counter_ns()
                seen[0] += 1
                value = msg.value()
                if len(value) >= 9 and value[:1] == b"T":
                    latencies.append((now - struct.unpack_from(">q", value, 1)[0]) / 1e6)
        finally:
            consumer.close()

    thread = threading.Thread(target=consume, name="e2e-consumer", daemon=True)
    thread.start()
    producer = Producer({"bootstrap.servers": bootstrap, **E2E_PRODUCER})
    # Warm up: the consumer must be fetching every partition before the clock starts.
    for p in range(partitions):
        producer.produce(topic, b"warm-up", partition=p)
    producer.flush(60)
    deadline = time.monotonic() + 60
    while seen[0] < partitions and time.monotonic() < deadline:
        time.sleep(0.05)
    if seen[0] < partitions:
        stop.set()
        thread.join(10)
        raise RuntimeError(f"e2e consumer saw {seen[0]} of {partitions} warm-up records in 60 s")

    pad = b"e" * (100 - 9)
    total = max(1, int(rate * seconds))
    sent = 0
    started = time.perf_counter()
    while sent < total:
        due = min(total, int((time.perf_counter() - started) * rate) + 1)
        while sent < due:
            value = b"T" + struct.pack(">q", time.perf_counter_ns()) + pad
            producer.produce(topic, value, partition=sent % partitions)
            sent += 1
        _wait_serving(producer, started + sent / rate)
    send_s = time.perf_counter() - started
    producer.flush(120)
    deadline = time.monotonic() + 30
    while len(latencies) < sent and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    thread.join(10)
    ordered = sorted(latencies)
    return {
        "target_per_s": rate,
        "achieved_per_s": sent / send_s,
        "sent": sent,
        "received": len(ordered),
        "consumer_errors": failures[:5],
        "p50_ms": percentile(ordered, 50),
        "p99_ms": percentile(ordered, 99),
        "max_ms": ordered[-1] if ordered else 0.0,
        "linger_ms": E2E_PRODUCER["linger.ms"],
    }


def consume_all(
    bootstrap: str, topic: str, partitions: int, timeout_s: float = 300, config: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Reads every partition from the beginning to its high watermark; records/s over that."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-consume",
            "enable.auto.commit": False,
            **(config or {}),
        }
    )
    try:
        expected = 0
        for p in range(partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            expected += high - low
        records = 0
        payload = 0
        errors: list[str] = []
        started = time.perf_counter()
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        deadline = time.monotonic() + timeout_s
        while records < expected and time.monotonic() < deadline:
            for msg in consumer.consume(10_000, 1.0):
                if msg.error() is not None:
                    errors.append(str(msg.error()))
                    continue
                records += 1
                payload += len(msg.value() or b"")
        elapsed = time.perf_counter() - started
    finally:
        consumer.close()
    return {
        "expected": expected,
        "records": records,
        "errors": errors[:5],
        "seconds": elapsed,
        "records_per_s": records / elapsed,
        "mb_per_s": payload / 1e6 / elapsed,
    }


def consume_kcat(
    bootstrap: str, topic: str, expected: int, value_size: int, timeout_s: float = 300
) -> dict[str, Any]:
    """The same read with ``kcat`` (librdkafka in C, no Python per record), prefetching as
    ``CATCH_UP_CONSUMER`` does: what the brokers serve when the client is not the limit. kcat
    prints each record's offset (a few bytes), counted here; it exits at the end of every partition."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            "kcat",
            "-C",
            "-b",
            bootstrap,
            "-t",
            topic,
            "-o",
            "beginning",
            "-e",
            "-q",
            "-f",
            "%o\n",
            "-X",
            "queued.min.messages=1000000",
        ],
        capture_output=True,
        timeout=timeout_s,
        check=False,
    )
    elapsed = time.perf_counter() - started
    records = done.stdout.count(b"\n")
    errors = [] if done.returncode == 0 else [done.stderr.decode(errors="replace")[-300:]]
    return {
        "expected": expected,
        "records": records,
        "errors": errors,
        "seconds": elapsed,
        "records_per_s": records / elapsed,
        "mb_per_s": records * value_size / 1e6 / elapsed,
    }


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def with_cpu(
    cluster: LocalCluster, run: Callable[..., dict[str, Any]], *args: Any, **kw: Any
) -> dict[str, Any]:
    """``run(*args, **kw)``'s result with the CPU each broker and the client (this process and its children:
    kcat) used during it, in % of one core: which side sets the pace."""
    brokers = {b: cluster.procs[b].pid for b in cluster.broker_ids}
    before = {b: _cpu_seconds(pid) for b, pid in brokers.items()}
    own, kids = os.times(), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = run(*args, **kw)
    wall = time.perf_counter() - started
    own_after, kids_after = os.times(), resource.getrusage(resource.RUSAGE_CHILDREN)
    client = (own_after.user + own_after.system - own.user - own.system) + (
        kids_after.ru_utime + kids_after.ru_stime - kids.ru_utime - kids.ru_stime
    )
    result["cpu_pct"] = {
        "client": 100 * client / wall,
        "brokers": {str(b): 100 * (_cpu_seconds(pid) - before[b]) / wall for b, pid in brokers.items()},
    }
    return result


# -------------------------------------------------------------------------------------------------
# Runs


def run_benchmark(root: Path, quick: bool, partitions: int) -> dict[str, Any]:
    produce_s = 5.0 if quick else 20.0
    latency_s = 5.0 if quick else 15.0
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": os.getloadavg(),
        },
        "quick": quick,
        "partitions": partitions,
        "producer_throughput_config": {k: v for k, v in THROUGHPUT_PRODUCER.items() if k != "on_delivery"},
        "producer_latency_config": LATENCY_PRODUCER,
        "producer_e2e_config": E2E_PRODUCER,
        "goals": GOALS,
    }
    log("starting 3 controllers + 3 brokers ...")
    cluster = start_cluster(root / "cluster")
    try:
        bootstrap = cluster.bootstrap_servers()
        for key, size in (("produce_100B", 100), ("produce_1KiB", 1024)):
            topic = f"bench-{size}"
            create_topic(cluster, topic, partitions)
            warm_up(bootstrap, topic, partitions)
            log(f"produce throughput, {size} B values, {produce_s:.0f} s ...")
            results[key] = with_cpu(cluster, produce_max, bootstrap, topic, partitions, size, produce_s)
        for key, size in (("consume_100B", 100), ("consume_1KiB", 1024)):
            topic = f"bench-{size}"
            log(f"consume throughput, {size} B values ...")
            results[key] = with_cpu(cluster, consume_all, bootstrap, topic, partitions)
            log(f"consume throughput, {size} B values, prefetching client ...")
            results[key + "_catch_up"] = with_cpu(
                cluster, consume_all, bootstrap, topic, partitions, config=CATCH_UP_CONSUMER
            )
            if shutil.which("kcat") is None:
                log("kcat is not installed: no consume figure without Python in the client")
                continue
            log(f"consume throughput, {size} B values, kcat ...")
            results[key + "_kcat"] = with_cpu(
                cluster, consume_kcat, bootstrap, topic, results[key]["expected"], size
            )
    finally:
        cluster.stop_all()
    # The latency parts on a new cluster, so that they do not depend on what part 1 left behind
    # (followers catching up, the page cache writing back a few GB). Whether that matters could not
    # be separated from the machine's load when this was written: at load ~5 a new cluster gave
    # p50 37 ms at 1,000/s and one that had taken part 1 seconds; at load ~7.5 a new one gave
    # seconds too, and 7 ms at 100/s.
    rate = 1000.0 if quick else max(100.0, results["produce_100B"]["records_per_s"] / 2)
    log("starting a new cluster for the latency parts ...")
    cluster = start_cluster(root / "cluster-latency")
    try:
        bootstrap = cluster.bootstrap_servers()
        create_topic(cluster, "bench-latency", partitions)
        warm_up(bootstrap, "bench-latency", partitions)
        log(f"produce latency at {rate:.0f} records/s, {latency_s:.0f} s ...")
        results["produce_latency"] = with_cpu(
            cluster, produce_latency, bootstrap, "bench-latency", partitions, rate, latency_s
        )
        log(f"produce latency at {rate:.0f} records/s, linger.ms={SHORT_LINGER_MS}, {latency_s:.0f} s ...")
        results["produce_latency_short_linger"] = with_cpu(
            cluster,
            produce_latency,
            bootstrap,
            "bench-latency",
            partitions,
            rate,
            latency_s,
            linger_ms=SHORT_LINGER_MS,
        )
        create_topic(cluster, "bench-e2e", partitions)
        log(f"end-to-end latency at 1000 records/s, {latency_s:.0f} s ...")
        results["e2e_latency"] = end_to_end_latency(bootstrap, "bench-e2e", partitions, 1000.0, latency_s)
    finally:
        cluster.stop_all()
    for key in ("produce_100B", "produce_1KiB"):
        run = results[key]
        total = max(MIB, run["records_acked"] * run["value_bytes"])
        log(f"baselines for {key}'s {total / 1e6:.1f} MB ...")
        run["baseline_file_write"] = file_write_mb_s(root, total)
        run["baseline_loopback_tcp"] = loopback_tcp_mb_s(total)
    results["machine"]["load_after"] = os.getloadavg()
    return results


def _loads(values: Any) -> str:
    return " ".join(f"{x:.2f}" for x in values)


def _cpu_note(run: dict[str, Any]) -> str:
    cpu = run.get("cpu_pct")
    if not cpu:  # a result file from before the CPU shares
        return ""
    brokers = "/".join(f"{v:.0f}" for v in cpu["brokers"].values())
    return f"; CPU: client {cpu['client']:.0f} %, brokers {brokers} %"


def print_table(r: dict[str, Any]) -> None:
    m = r["machine"]
    print(
        f"machine: {m['cpus']} CPUs, Python {m['python']}, load average before "
        f"{_loads(m['load_before'])}, after {_loads(m['load_after'])}"
        f"{'  (--quick)' if r['quick'] else ''}"
    )
    print(
        "cluster: 3 controllers + 3 brokers, topics RF 3, min.insync.replicas 2, "
        f"{r['partitions']} partitions"
    )
    t = r["producer_throughput_config"]
    print(
        f"producer (throughput): acks=all linger.ms={t['linger.ms']} batch.size={t['batch.size']} "
        f"batch.num.messages={t['batch.num.messages']} compression=none"
    )
    rows: list[tuple[str, str, str, str]] = []
    for key, label in (("produce_100B", "100 B"), ("produce_1KiB", "1 KiB")):
        p = r[key]
        fw, tcp = p["baseline_file_write"]["mb_per_s"], p["baseline_loopback_tcp"]["mb_per_s"]
        goal = (
            f">= {GOALS['produce_100B_records_per_s']:,.0f} rec/s"
            if key == "produce_100B"
            else f">= {GOALS['produce_1KiB_mb_per_s']:.0f} MB/s"
        )
        rows.append(
            (
                f"produce {label}, acks=all",
                f"{p['records_per_s']:,.0f} rec/s  {p['mb_per_s']:.2f} MB/s",
                goal,
                f"{p['mb_per_s'] / fw:.4f} of file write ({fw:,.0f} MB/s), "
                f"{p['mb_per_s'] / tcp:.4f} of loopback TCP ({tcp:,.0f} MB/s)" + _cpu_note(p),
            )
        )
        if p["errors"] or p["unacked_after_flush"]:
            rows.append(("  failed / unacked", f"{p['errors']} / {p['unacked_after_flush']}", "", ""))
    for key in ("produce_latency", "produce_latency_short_linger"):
        lat = r.get(key)
        if lat is None:  # a result file from before the second run
            continue
        linger = f"linger.ms={lat['linger_ms']}" + (" (client default)" if lat.get("linger_default") else "")
        rows.append(
            (
                f"produce latency @ {lat['target_per_s']:,.0f}/s",
                f"p50 {lat['p50_ms']:.1f} ms  p99 {lat['p99_ms']:.1f} ms",
                f"p99 <= {GOALS['produce_latency_p99_ms']:.0f} ms" if key == "produce_latency" else "",
                f"achieved {lat['achieved_per_s']:,.0f}/s, {linger}, max {lat['max_ms']:.0f} ms, "
                f"1 record in {lat.get('sampled_every', 1)} timed" + _cpu_note(lat),
            )
        )
    e2e = r["e2e_latency"]
    rows.append(
        (
            f"end-to-end latency @ {e2e['target_per_s']:,.0f}/s",
            f"p50 {e2e['p50_ms']:.1f} ms  p99 {e2e['p99_ms']:.1f} ms",
            f"p50 <= {GOALS['e2e_latency_p50_ms']:.0f} ms",
            f"{e2e['received']}/{e2e['sent']} received, linger.ms={e2e['linger_ms']}, "
            f"max {e2e['max_ms']:.0f} ms",
        )
    )
    for key, label in (
        ("consume_100B", "100 B"),
        ("consume_100B_catch_up", "100 B, prefetching"),
        ("consume_100B_kcat", "100 B, kcat"),
        ("consume_1KiB", "1 KiB"),
        ("consume_1KiB_catch_up", "1 KiB, prefetching"),
        ("consume_1KiB_kcat", "1 KiB, kcat"),
    ):
        c = r.get(key)
        if c is None:  # a result file from before the prefetching run, or no kcat
            continue
        rows.append(
            (
                f"consume {label}, from the beginning",
                f"{c['records_per_s']:,.0f} rec/s  {c['mb_per_s']:.2f} MB/s",
                f">= {GOALS['consume_records_per_s']:,.0f} rec/s" if key.startswith("consume_100B") else "",
                f"{c['records']:,}/{c['expected']:,} records in {c['seconds']:.1f} s"
                + (", librdkafka defaults" if key in ("consume_100B", "consume_1KiB") else "")
                + _cpu_note(c),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    header = ("measure", "kraft", "goal", "notes")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  " + header[3])
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3])


def run_profile(root: Path, out: Path, seconds: float, partitions: int) -> dict[str, Any]:
    """The first broker under cProfile while one producer loads the cluster with 100 B records."""
    out = out.resolve()
    out.unlink(missing_ok=True)
    log("starting 3 controllers + 3 brokers, the first broker under cProfile (off) ...")
    cluster = start_cluster(root / "cluster", profile_out=out)
    broker = cluster.broker_ids[0]
    try:
        bootstrap = cluster.bootstrap_servers()
        create_topic(cluster, "bench-profile", partitions)
        warm_up(bootstrap, "bench-profile", partitions)
        log(f"profiling broker {broker} for {seconds:.0f} s of 100 B produce load ...")
        os.kill(cluster.procs[broker].pid, signal.SIGUSR1)
        load = produce_max(bootstrap, "bench-profile", partitions, 100, seconds)
        os.kill(cluster.procs[broker].pid, signal.SIGUSR2)
        cluster.wait_for("the profile written", out.exists, timeout_s=60)
    finally:
        cluster.stop_all()
    stats = pstats.Stats(str(out))
    raw: Any = stats.stats  # type: ignore[attr-defined]  # {(file, line, name): (cc, nc, tt, ct, callers)}
    total_tt = sum(v[2] for v in raw.values())

    def top(index: int) -> list[dict[str, Any]]:
        rows = sorted(raw.items(), key=lambda kv: kv[1][index], reverse=True)[:10]
        return [
            {
                "function": f"{Path(f).name}:{line}({name})" if line else name,
                "file": f,
                "calls": nc,
                "tottime_s": tt,
                "cumtime_s": ct,
            }
            for (f, line, name), (_cc, nc, tt, ct, _callers) in rows
        ]

    return {
        "broker": broker,
        "seconds": seconds,
        "profile_file": str(out),
        "profiled_cpu_s": total_tt,
        "load": load,
        "load_average": os.getloadavg(),
        "top_cumulative": top(3),
        "top_own_time": top(2),
    }


def print_profile(p: dict[str, Any]) -> None:
    ld = p["load"]
    print(
        f"broker {p['broker']} under cProfile for {p['seconds']:.0f} s of 100 B acks=all produce load "
        f"({ld['records_per_s']:,.0f} rec/s with the profiler on); {p['profiled_cpu_s']:.1f} s in profiled "
        f"functions; load average {_loads(p['load_average'])}; stats in {p['profile_file']}"
    )
    for title, key in (
        ("top 10 by cumulative time", "top_cumulative"),
        ("top 10 by own time", "top_own_time"),
    ):
        print(title + ":")
        print(f"  {'cumtime s':>9} {'tottime s':>9} {'calls':>9}  function")
        for row in p[key]:
            print(f"  {row['cumtime_s']:9.2f} {row['tottime_s']:9.2f} {row['calls']:9d}  {row['function']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="shorter runs, latency at 1,000/s (a smoke test)"
    )
    parser.add_argument("--json", metavar="OUT", help="also write the figures to OUT as JSON")
    parser.add_argument(
        "--workdir", default=None, help="where the cluster keeps its data (default: a temp dir)"
    )
    parser.add_argument(
        "--partitions", type=int, default=6, help="partitions per topic (default %(default)s)"
    )
    parser.add_argument("--profile", metavar="OUT.prof", help="profile the first broker under load instead")
    parser.add_argument("--profile-seconds", type=float, default=20.0, help="(default %(default)s)")
    ns = parser.parse_args()
    if ns.partitions < 1:
        parser.error("--partitions must be at least 1")
    with tempfile.TemporaryDirectory(prefix="kraft-bench-dataplane-", dir=ns.workdir) as tmp:
        if ns.profile:
            results = run_profile(Path(tmp), Path(ns.profile), ns.profile_seconds, ns.partitions)
            print_profile(results)
        else:
            results = run_benchmark(Path(tmp), ns.quick, ns.partitions)
            print_table(results)
    if ns.json:
        Path(ns.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
