"""Broker benchmark: metadata propagation, Metadata throughput and broker restarts, on real processes
(3 controllers and 3 brokers on loopback, fsync on, started through ``kraft.cli.cluster``).

    python benchmarks/bench_brokers.py [--topics N] [--partitions N] [--quick] [--json] [--workdir DIR]
        [--raft-driver loop|thread]

Prints, each next to a baseline measured in the same run on the same cluster:

* propagation: ``--topics`` topics (1 partition, RF 3) created one by one with CreateTopics sent
  straight to the active controller, which answers once the records are committed (the answer time
  is the commit time); then all three brokers are polled with Metadata (v12/13, just that topic) over
  persistent connections until each lists it. Commit -> visible on all three, p50/p99/max (goal: p50
  under 50 ms), against the round trip of those same Metadata requests (the polling floor; one poll
  round visits the three brokers one after the other);
* Metadata throughput: with 10,000 partitions in the image (100 topics x 100 partitions, RF 3; the
  propagation topics are deleted first), requests/s one broker serves for Metadata v13 of all topics
  from one client and from two (threads), against the rate of ApiVersions requests to the same broker
  over the same kind of connection (the framing/loop floor). The client sends pre-encoded requests
  and reads the answers without decoding them, so the figure is the broker's, not the client's codec;
* restart: ``--partitions`` partitions (topics of 100, RF 3) created through the active controller,
  then broker 6 is stopped cleanly (``kraft cluster stop-node``) and started again (``start-node``):
  start -> listed as unfenced in broker 4's Metadata, and start -> its own log says ``unfenced;
  RECOVERY -> RUNNING``. Twice, on two clusters: without a snapshot (the snapshot byte threshold set
  out of reach, so the broker replays the whole log) and with one (a small threshold, so it has
  written snapshots before the restart; the checkpoint files found are reported). Baseline: the same
  broker's first start on the same cluster while it was still empty (the cluster is brought up
  without it, then it is started with ``start-node``).

Reported, not gated: the figures depend on the machine and on what else it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent / "src"))  # after PYTHONPATH (a compiled build)

from kraft.cli import cluster as cluster_cli
from kraft.cli import cluster_processes as processes
from kraft.cli.write_stats import percentile
from kraft.client.admin import AdminClient
from kraft.client.connection import Address, AdminError, Connection
from kraft.client.controller import ControllerClient
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.framing import frame
from kraft.protocol.messages import api_versions, create_topics, metadata
from kraft.storage.snapshots import parse_snapshot_file_name

PARTITIONS_PER_TOPIC = 100
THROUGHPUT_TOPICS = 100  # x 100 partitions = 10,000
UNKNOWN_TOPIC_OR_PARTITION = 3  # a propagation topic that was never created (that figure failed)
RESTART_BROKER = 6
OBSERVING_BROKER = 4
UNFENCED_LINE = "broker {id}: unfenced; RECOVERY -> RUNNING"
NO_SNAPSHOT = {
    "metadata.log.max.record.bytes.between.snapshots": str(1 << 60),
    "metadata.log.max.snapshot.interval.ms": "0",
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50": percentile(ordered, 50),
        "p99": percentile(ordered, 99),
        "max": ordered[-1],
        "samples": len(ordered),
    }


# -------------------------------------------------------------------------------------------------
# Clusters: `kraft cluster` commands, run in this process


def cli(*args: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    rc = cluster_cli.main(list(args), out=out, err=err)
    if rc != 0:
        raise RuntimeError(f"kraft cluster {' '.join(args)} failed (exit {rc}): {err.getvalue().strip()}")
    return out.getvalue()


def metadata_body(topics: list[str] | None) -> Any:
    cls: Any = metadata.REQUEST.cls
    return cls(
        topics=None if topics is None else [cls.MetadataRequestTopic(name=t) for t in topics],
        allow_auto_topic_creation=False,
    )


# Where every node runs its raft core (raft.driver); set from --raft-driver.
RAFT_DRIVER = {"raft.driver": "loop"}


class BenchCluster:
    """3 controllers (ids 1-3) and 3 brokers (ids 4-6) in ``root``; ``down`` stops whatever runs."""

    def __init__(self, root: Path, overrides: dict[str, str]) -> None:
        self.root = root
        self.path = root / cluster_cli.CLUSTER_FILE
        self.overrides = {**RAFT_DRIVER, **overrides}
        self.children: dict[int, Any] = {}  # pid -> Popen, for the nodes started here directly

    def file(self) -> cluster_cli.ClusterFile:
        return cluster_cli.ClusterFile.load(self.path)

    def up(self) -> None:
        """``kraft cluster up --controllers 3 --brokers 3 --base-port 0 --detach``."""
        args = ["up", "--controllers", "3", "--brokers", "3", "--data-dir", str(self.root)]
        args += ["--base-port", "0", "--detach"]
        for k, v in self.overrides.items():
            args += ["--override", f"{k}={v}"]
        cli(*args)

    def up_without(self, late: int) -> None:
        """As ``cluster up`` does it, but without broker ``late``, which ``start_timed`` starts later.
        Every node is formatted first, so the format tool stays out of that timed start."""
        spec = cluster_cli.plan_new_cluster(self.root, 3, 0, dict(self.overrides), brokers=3)
        cluster_cli.check_ports_free(spec, spec.nodes)
        spec.cluster_id = cluster_cli.random_cluster_id()
        self.root.mkdir(parents=True, exist_ok=True)
        for node in spec.nodes:
            node.config_path.parent.mkdir(parents=True, exist_ok=True)
            node.config_path.write_text(cluster_cli.node_properties(spec, node))
            cluster_cli.format_node(spec, node)
        try:
            for node in spec.nodes:
                if node.id != late:
                    child = cluster_cli.start_node(spec, node)
                    self.children[child.pid] = child
        finally:
            spec.save(self.path)
        cluster_cli.wait_for_leader(spec, self.children, 60.0, expected_voters=3)
        expected = {n.id for n in spec.brokers if n.id != late}
        wait_for(
            lambda: expected <= broker_view(spec.node(OBSERVING_BROKER).broker_address),
            60.0,
            f"brokers {sorted(expected)} unfenced",
        )

    def down(self) -> None:
        if self.path.exists():
            try:
                cli("down", "--data-dir", str(self.root))
            except Exception as e:  # still kill what we started ourselves
                log(f"cluster down in {self.root}: {e}")
        for child in self.children.values():
            if child.poll() is None:
                child.kill()
                child.wait()

    def leader(self) -> int:
        return AdminClient(self.file().bootstrap(), timeout_ms=30_000).describe_quorum().leader_id

    def check_alive(self, node_id: int) -> None:
        node = self.file().node(node_id)
        if node.pid is None or not processes.pid_alive(node.pid):
            raise RuntimeError(
                f"node {node_id} (pid {node.pid}) is not running; last lines of {node.server_log}:\n"
                + processes.tail(node.server_log)
            )


def wait_for(cond: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.05) -> float:
    """Polls ``cond`` (errors count as False) until true; returns the seconds it took."""
    t0 = time.perf_counter()
    while True:
        with contextlib.suppress(AdminError, OSError):
            if cond():
                return time.perf_counter() - t0
        if time.perf_counter() - t0 > timeout_s:
            raise RuntimeError(f"timed out after {timeout_s:.0f} s waiting for: {what}")
        time.sleep(interval_s)


def broker_view(address: Address) -> set[int]:
    """The brokers a broker's Metadata lists: registered and unfenced."""
    return cluster_cli.unfenced_brokers(address, 2.0)


def topic_visible(response: Any, partitions: int) -> bool:
    return (
        getattr(response, "error_code", 0) == 0
        and len(response.topics) == 1
        and response.topics[0].error_code == 0
        and len(response.topics[0].partitions) == partitions
    )


def create_topics_batched(
    cluster: BenchCluster, names: list[str], partitions: int, per_request: int
) -> float:
    """CreateTopics through the active controller (RF 3), ``per_request`` topics a request; seconds."""
    client = ControllerClient(cluster.file().bootstrap(), timeout_s=120)
    t0 = time.perf_counter()
    try:
        for i in range(0, len(names), per_request):
            chunk = names[i : i + per_request]
            r = client.create_topics([(n, partitions, 3, {}) for n in chunk], timeout_s=120)
            bad = [f"{t.name}: {t.error_code} {t.error_message}" for t in r.topics if t.error_code]
            if bad:
                raise RuntimeError(f"CreateTopics failed: {bad[0]} (and {len(bad) - 1} more)")
    finally:
        client.close()
    return time.perf_counter() - t0


def wait_all_brokers_list(cluster: BenchCluster, topic: str, partitions: int, timeout_s: float) -> float:
    """Until every broker lists ``topic`` (created last: the log is replayed in order)."""
    conns: dict[int, Connection] = {}

    def done() -> bool:
        for b in cluster.file().brokers:
            conn = conns.get(b.id) or Connection(b.broker_address, 30)
            conns[b.id] = conn
            version = min(13, conn.version_for(metadata.API) or 0)
            if not topic_visible(conn.send(metadata.API, version, metadata_body([topic])), partitions):
                return False
        return True

    try:
        return wait_for(done, timeout_s, f"every broker lists {topic}", interval_s=0.1)
    finally:
        for c in conns.values():
            c.close()


# -------------------------------------------------------------------------------------------------
# 1. Propagation


def bench_propagation(cluster: BenchCluster, topics: int) -> dict[str, Any]:
    cf = cluster.file()
    leader = cluster.leader()
    ctl = Connection(cf.node(leader).address, 60, client_id="bench-create")
    ct_version = ctl.version_for(create_topics.API)
    assert ct_version is not None
    brokers = [Connection(b.broker_address, 10, client_id="bench-poll") for b in cf.brokers]
    md_versions = [min(13, c.version_for(metadata.API) or 0) for c in brokers]
    if min(md_versions) < 12:
        raise RuntimeError(f"brokers serve Metadata up to v{min(md_versions)}, not v12/13")
    cls: Any = create_topics.REQUEST.cls
    commit_ms: list[float] = []
    visible_ms: list[float] = []  # commit -> visible on all three
    per_broker_ms: list[float] = []  # commit -> visible on one broker
    rtt_ms: list[float] = []  # every polling Metadata round trip
    polls_per_topic: list[int] = []
    first_poll_hits = 0
    try:
        for i in range(topics):
            name = f"prop-{i:06d}"
            body = cls(
                topics=[cls.CreatableTopic(name=name, num_partitions=1, replication_factor=3)],
                timeout_ms=30_000,
            )
            t0 = time.perf_counter()
            r = ctl.send(create_topics.API, ct_version, body)
            committed = time.perf_counter()
            if r.topics[0].error_code:
                raise RuntimeError(
                    f"CreateTopics {name} to controller {leader}: error {r.topics[0].error_code} "
                    f"{r.topics[0].error_message}"
                )
            commit_ms.append((committed - t0) * 1000)
            request = metadata_body([name])
            pending = list(range(len(brokers)))
            polls = 0
            last_seen = committed
            while pending:
                for j in list(pending):
                    s = time.perf_counter()
                    resp = brokers[j].send(metadata.API, md_versions[j], request)
                    e = time.perf_counter()
                    polls += 1
                    rtt_ms.append((e - s) * 1000)
                    if topic_visible(resp, 1):
                        pending.remove(j)
                        per_broker_ms.append((e - committed) * 1000)
                        last_seen = e
                        if polls <= len(brokers):
                            first_poll_hits += 1
                if time.perf_counter() - committed > 30:
                    raise RuntimeError(f"{name} committed but not listed by brokers {pending} after 30 s")
            visible_ms.append((last_seen - committed) * 1000)
            polls_per_topic.append(polls)
    finally:
        ctl.close()
        for c in brokers:
            c.close()
    vis, rtt = summary(visible_ms), summary(rtt_ms)
    return {
        "topics": topics,
        "active_controller": leader,
        "metadata_version": max(md_versions),
        "commit_ms": summary(commit_ms),
        "visible_on_all_three_ms": vis,
        "visible_per_broker_ms": summary(per_broker_ms),
        "baseline_metadata_rtt_ms": rtt,
        "p50_vs_rtt": vis["p50"] / rtt["p50"],
        "polls_per_topic_mean": statistics.fmean(polls_per_topic),
        "visible_at_first_poll": first_poll_hits / (topics * len(brokers)),
        "goal_p50_under_50_ms": vis["p50"] < 50,
    }


# -------------------------------------------------------------------------------------------------
# 2. Metadata throughput


class RawConnection:
    """Sends pre-encoded frames and reads answers without decoding them."""

    def __init__(self, address: Address) -> None:
        self.sock = socket.create_connection((address.host, address.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray(1 << 20)

    def _read(self, n: int) -> memoryview:
        if n > len(self.buf):
            self.buf = bytearray(n)
        view = memoryview(self.buf)
        got = 0
        while got < n:
            k = self.sock.recv_into(view[got:n])
            if not k:
                raise ConnectionResetError("connection closed by the broker")
            got += k
        return view[:n]

    def roundtrip(self, data: bytes) -> int:
        self.sock.sendall(data)
        size = int.from_bytes(self._read(4), "big")
        self._read(size)
        return size

    def roundtrip_payload(self, data: bytes) -> bytes:
        self.sock.sendall(data)
        size = int.from_bytes(self._read(4), "big")
        return bytes(self._read(size))

    def close(self) -> None:
        self.sock.close()


def requests_per_s(address: Address, request: bytes, seconds: float, clients: int) -> float:
    counts = [0] * clients
    stop = threading.Event()
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            conn = RawConnection(address)
            try:
                while not stop.is_set():
                    conn.roundtrip(request)
                    counts[k] += 1
            finally:
                conn.close()
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise RuntimeError(f"throughput client failed: {errors[0]!r}")
    return sum(counts) / elapsed


def encoded(api: Api, version: int, body: Any) -> bytes:
    return frame(encode_request(api, version, 1, body, client_id="bench-throughput"))


def bench_throughput(cluster: BenchCluster, prop_topics: int, seconds: float) -> dict[str, Any]:
    cf = cluster.file()
    client = ControllerClient(cf.bootstrap(), timeout_s=120)
    try:
        names = [f"prop-{i:06d}" for i in range(prop_topics)]
        for i in range(0, len(names), 100):
            r = client.delete_topics(names[i : i + 100])
            bad = [x for x in r.responses if x.error_code not in (0, UNKNOWN_TOPIC_OR_PARTITION)]
            if bad:
                raise RuntimeError(f"DeleteTopics failed: {bad[0].name}: {bad[0].error_code}")
    finally:
        client.close()
    bench_names = [f"md-{i:04d}" for i in range(THROUGHPUT_TOPICS)]
    create_s = create_topics_batched(cluster, bench_names, PARTITIONS_PER_TOPIC, 10)
    target = cf.node(OBSERVING_BROKER).broker_address
    wanted = THROUGHPUT_TOPICS * PARTITIONS_PER_TOPIC
    version = 13
    md_request = encoded(metadata.API, version, metadata_body(None))

    def image_has_exactly_the_bench_partitions() -> bool:
        conn = RawConnection(target)
        try:
            _, body = decode_response(conn.roundtrip_payload(md_request), metadata.API, version)
        finally:
            conn.close()
        return len(body.topics) == THROUGHPUT_TOPICS and sum(len(t.partitions) for t in body.topics) == wanted

    wait_for(
        image_has_exactly_the_bench_partitions, 120, f"broker {OBSERVING_BROKER} lists {wanted} partitions"
    )
    with Connection(target, 10) as conn:
        av_version = min(3, conn.version_for(api_versions.API) or 0)
    av_request = encoded(
        api_versions.API,
        av_version,
        api_versions.API.request(client_software_name="bench", client_software_version="0"),
    )
    probe = RawConnection(target)
    try:
        md_bytes, av_bytes = probe.roundtrip(md_request), probe.roundtrip(av_request)
    finally:
        probe.close()
    out: dict[str, Any] = {
        "broker": OBSERVING_BROKER,
        "partitions": wanted,
        "topics": THROUGHPUT_TOPICS,
        "create_s": create_s,
        "metadata_version": version,
        "metadata_response_bytes": md_bytes,
        "api_versions_version": av_version,
        "api_versions_response_bytes": av_bytes,
        "seconds_per_figure": seconds,
    }
    # Interleaved halves, so a change in the machine's load hits target and baseline alike.
    for clients in (1, 2):
        md = av = 0.0
        for _ in range(2):
            av += requests_per_s(target, av_request, seconds / 2, clients) / 2
            md += requests_per_s(target, md_request, seconds / 2, clients) / 2
        out[f"clients_{clients}"] = {
            "metadata_per_s": md,
            "baseline_api_versions_per_s": av,
            "ratio": md / av,
            "metadata_mb_per_s": md * md_bytes / 1e6,
        }
    return out


# -------------------------------------------------------------------------------------------------
# 3. Broker restart


class LogWatch:
    """New lines of a node's server.log from the moment it is created."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size if path.exists() else 0
        self.lines: list[str] = []
        self._partial = ""

    def poll(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        text = self._partial + data.decode(errors="replace")
        *complete, self._partial = text.split("\n")
        self.lines.extend(complete)

    def find(self, needle: str) -> str | None:
        return next((line for line in self.lines if needle in line), None)


def log_time(line: str) -> float | None:
    """The wall-clock time (epoch seconds) of a server.log line (``%(asctime)s`` is local time)."""
    try:
        return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
    except ValueError:
        return None


def start_timed(cluster: BenchCluster, node_id: int, timeout_s: float) -> dict[str, Any]:
    """``kraft cluster start-node``; seconds to listed-as-unfenced by another broker and to the
    node's own "unfenced" log line."""
    cf = cluster.file()
    node = cf.node(node_id)
    observer = cf.node(OBSERVING_BROKER).broker_address
    if node_id in broker_view(observer):
        raise RuntimeError(f"broker {node_id} is still listed by broker {OBSERVING_BROKER} before its start")
    watch = LogWatch(node.server_log)
    needle = UNFENCED_LINE.format(id=node_id)
    conn: Connection | None = None
    listed_s = logged_s = None
    started_wall = time.time()
    t0 = time.perf_counter()
    cli("start-node", "--id", str(node_id), "--data-dir", str(cluster.root))
    launched_s = time.perf_counter() - t0
    while listed_s is None or logged_s is None:
        now = time.perf_counter()
        if listed_s is None:
            try:
                conn = conn or Connection(observer, 5, client_id="bench-watch")
                r = conn.send(metadata.API, 12, metadata_body([]))
                if node_id in {b.node_id for b in r.brokers}:
                    listed_s = time.perf_counter() - t0
            except (AdminError, OSError):
                if conn is not None:
                    conn.close()
                conn = None
        if logged_s is None:
            watch.poll()
            line = watch.find(needle)
            if line is not None:
                at = log_time(line)
                logged_s = at - started_wall if at is not None else time.perf_counter() - t0
        if listed_s is None or logged_s is None:
            cluster.check_alive(node_id)
            if now - t0 > timeout_s:
                if conn is not None:
                    conn.close()
                raise RuntimeError(
                    f"broker {node_id} not unfenced {timeout_s:.0f} s after start-node "
                    f"(listed by broker {OBSERVING_BROKER}: {listed_s is not None}; "
                    f"logged '{needle}': {logged_s is not None}); last lines of its log:\n"
                    + processes.tail(node.server_log)
                )
            time.sleep(0.01)
    if conn is not None:
        conn.close()
    watch.poll()
    return {
        "start_node_returned_s": launched_s,
        "unfenced_in_other_broker_s": listed_s,
        "unfenced_in_own_log_s": logged_s,
        "log": [
            line.split(" ", 4)[-1]
            for line in watch.lines
            if f"broker {node_id}:" in line and ("snapshot" in line or "->" in line)
        ],
    }


def snapshots_of(cluster: BenchCluster, node_id: int) -> list[str]:
    """The node's snapshot files (``offset-epoch.checkpoint``; the bootstrap one at 0 excluded)."""
    part = Path(cluster.file().node(node_id).log_dir) / "__cluster_metadata-0"
    return sorted(
        p.name
        for p in part.glob("*.checkpoint")
        if (sid := parse_snapshot_file_name(p.name)) is not None and sid.offset > 0
    )


def log_state(cluster: BenchCluster) -> dict[str, Any]:
    """The metadata log's end (the leader's high watermark) and the restarting broker's snapshots."""
    info = AdminClient(cluster.file().bootstrap(), timeout_ms=30_000).describe_quorum()
    snaps = snapshots_of(cluster, RESTART_BROKER)
    newest = parse_snapshot_file_name(snaps[-1]) if snaps else None
    return {
        "metadata_log_end_offset": info.high_watermark,
        "snapshots": snaps,
        "log_after_newest_snapshot": info.high_watermark - (newest.offset if newest else 0),
    }


def bench_restart(
    root: Path, partitions: int, overrides: dict[str, str], want_snapshot: bool, timeout_s: float
) -> dict[str, Any]:
    cluster = BenchCluster(root, overrides)
    out: dict[str, Any] = {"partitions": partitions, "overrides": overrides}
    try:
        log(f"  cluster without broker {RESTART_BROKER} ...")
        cluster.up_without(RESTART_BROKER)
        log(f"  first start of broker {RESTART_BROKER} on the empty cluster ...")
        out["baseline_first_start"] = start_timed(cluster, RESTART_BROKER, 120)
        names = [f"r-{i:05d}" for i in range(0, partitions, PARTITIONS_PER_TOPIC)]
        log(f"  creating {len(names) * PARTITIONS_PER_TOPIC:,} partitions ...")
        out["create_s"] = create_topics_batched(cluster, names, PARTITIONS_PER_TOPIC, 10)
        out["replayed_by_all_brokers_after_s"] = wait_all_brokers_list(
            cluster, names[-1], PARTITIONS_PER_TOPIC, 600
        )
        if want_snapshot:
            with contextlib.suppress(RuntimeError):
                wait_for(lambda: bool(snapshots_of(cluster, RESTART_BROKER)), 60, "a broker snapshot", 0.2)
        out["after_create"] = log_state(cluster)
        log(f"  stopping broker {RESTART_BROKER} (stop-node) ...")
        t0 = time.perf_counter()
        cli(
            "stop-node",
            "--id",
            str(RESTART_BROKER),
            "--data-dir",
            str(cluster.root),
            "--stop-timeout-s",
            "900",
        )
        out["stop_node_s"] = time.perf_counter() - t0
        # A controlled shutdown ends with the marker; a SIGKILL after the stop timeout leaves none.
        data_dir = Path(cluster.file().node(RESTART_BROKER).data_dir)
        out["clean_shutdown_marker"] = (data_dir / ".kafka_cleanshutdown").exists()
        observer = cluster.file().node(OBSERVING_BROKER).broker_address
        out["fenced_in_other_broker_after_stop_s"] = out["stop_node_s"] + wait_for(
            lambda: RESTART_BROKER not in broker_view(observer), 60, f"broker {RESTART_BROKER} fenced"
        )
        # The controlled shutdown itself writes a PartitionChangeRecord per partition the broker held.
        out["before_restart"] = log_state(cluster)
        log(f"  restarting broker {RESTART_BROKER} (start-node) ...")
        out["restart"] = start_timed(cluster, RESTART_BROKER, timeout_s)
    except Exception as e:  # reported as the outcome of this measurement
        out["error"] = str(e)
    finally:
        cluster.down()
    return out


# -------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def section(results: dict[str, Any], key: str) -> Iterator[None]:
    try:
        yield
    except Exception as e:  # one failed measurement does not hide the others
        results[key] = {"error": f"{type(e).__name__}: {e}"}
        log(f"{key} failed: {e}")


def fmt_ms(s: dict[str, float]) -> str:
    return f"p50 {s['p50']:7.1f}  p99 {s['p99']:7.1f}  max {s['max']:7.1f} ms"


def print_report(r: dict[str, Any]) -> None:
    m = r["machine"]
    print(f"machine: {m['cpus']} CPUs, Python {m['python']}; the run took {r['elapsed_s']:.0f} s")

    if "propagation" in r:
        p = r.get("propagation", {})
        print(
            f"\n1. metadata propagation: {r['topics']} topics (1 partition, RF 3), "
            "CreateTopics to the controller"
        )
        if "error" in p:
            print(f"   FAILED: {p['error']}")
        else:
            goal = "met" if p["goal_p50_under_50_ms"] else "MISSED"
            rtt = f"baseline: Metadata v{p['metadata_version']} round trip"
            print(f"   {'CreateTopics answered (commit)':36} {fmt_ms(p['commit_ms'])}")
            all_three = fmt_ms(p["visible_on_all_three_ms"])
            print(f"   {'commit -> visible on all three':36} {all_three}  (goal p50 < 50 ms: {goal})")
            print(f"   {'commit -> visible on one broker':36} {fmt_ms(p['visible_per_broker_ms'])}")
            print(f"   {rtt:36} {fmt_ms(p['baseline_metadata_rtt_ms'])}")
            print(
                f"   all three vs round trip, p50: {p['p50_vs_rtt']:.1f}x; "
                f"{p['polls_per_topic_mean']:.1f} polls "
                f"per topic; visible at the first poll: {p['visible_at_first_poll']:.0%}"
            )

    if "throughput" in r:
        t = r.get("throughput", {})
        print(
            f"\n2. Metadata v13 of all topics, "
            f"{THROUGHPUT_TOPICS * PARTITIONS_PER_TOPIC:,} partitions, broker 4"
        )
        if "error" in t:
            print(f"   FAILED: {t['error']}")
        else:
            print(
                f"   response {t['metadata_response_bytes']:,} bytes; baseline ApiVersions "
                f"v{t['api_versions_version']}, {t['api_versions_response_bytes']:,} bytes"
            )
            for c in (1, 2):
                x = t[f"clients_{c}"]
                base = x["baseline_api_versions_per_s"]
                print(
                    f"   {c} client{'s' if c > 1 else ' '}: Metadata {x['metadata_per_s']:8,.1f} req/s "
                    f"({x['metadata_mb_per_s']:5.1f} MB/s)   ApiVersions {base:8,.0f} req/s   "
                    f"ratio {x['ratio']:.4f}"
                )

    if "restart_no_snapshot" in r or "restart_with_snapshot" in r:
        print(f"\n3. broker {RESTART_BROKER} start -> unfenced, {r['partitions']:,} partitions (RF 3)")
        runs = (("restart_no_snapshot", "no snapshot"), ("restart_with_snapshot", "with snapshot"))
        head_other = f"in broker {OBSERVING_BROKER}'s Metadata"
        print(f"   {'':52} {head_other:>24} {'in its own log':>16}")
        for key, label in runs:
            x = r.get(key, {})
            for what, name in (
                ("baseline_first_start", "first start, empty cluster"),
                ("restart", "restart"),
            ):
                if what in x:
                    v = x[what]
                    row = f"{name} ({label} cluster)"
                    other, own = v["unfenced_in_other_broker_s"], v["unfenced_in_own_log_s"]
                    print(f"   {row:52} {other:22.2f} s {own:14.2f} s")
            if "baseline_first_start" in x and "restart" in x:
                ratio = (
                    x["restart"]["unfenced_in_other_broker_s"]
                    / x["baseline_first_start"]["unfenced_in_other_broker_s"]
                )
                print(f"   {'  restart / first start':52} {ratio:22.2f} x")
        for key, label in runs:
            x = r.get(key, {})
            if "error" in x:
                print(f"   {label}: FAILED: {x['error']}")
            if "before_restart" not in x:
                continue
            print(f"   {label} cluster ({', '.join(f'{k}={v}' for k, v in x['overrides'].items())}):")
            for when in ("after_create", "before_restart"):
                st = x[when]
                snaps = st["snapshots"]
                listing = (
                    snaps[-1] + (f" (newest of {len(snaps)})" if len(snaps) > 1 else "") if snaps else "none"
                )
                print(
                    f"      {when.replace('_', ' ')}: "
                    f"metadata log end offset {st['metadata_log_end_offset']:,}; "
                    f"broker {RESTART_BROKER}'s snapshot: {listing}; "
                    f"{st['log_after_newest_snapshot']:,} offsets of log after it"
                )
            marker = (
                "clean-shutdown marker written" if x["clean_shutdown_marker"] else "NO clean-shutdown marker"
            )
            print(
                f"      partitions created in {x['create_s']:.1f} s; stop-node took {x['stop_node_s']:.1f} s "
                f"({marker}); fenced in broker {OBSERVING_BROKER}'s view "
                f"{x['fenced_in_other_broker_after_stop_s']:.1f} s after stop-node began"
            )
            for line in x.get("restart", {}).get("log", []):
                print(f"      restart log: {line}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=1_000, help="topics for the propagation figure")
    ap.add_argument("--partitions", type=int, default=100_000, help="partitions for the restart figure")
    ap.add_argument("--seconds", type=float, default=10.0, help="per Metadata throughput figure")
    ap.add_argument(
        "--snapshot-bytes",
        type=int,
        default=8 << 20,
        help="metadata.log.max.record.bytes.between.snapshots of the 'with snapshot' cluster "
        "(default 8 MiB: 100,000 partitions are about 11 MB of records, so one snapshot of a large "
        "image is written while they are created; a much smaller threshold has every node write an "
        "image of up to 11 MB again and again, which is what it measures then)",
    )
    ap.add_argument("--restart-timeout-s", type=float, default=900.0)
    ap.add_argument("--quick", action="store_true", help="50 topics, 5,000 partitions (a smoke test)")
    ap.add_argument(
        "--only",
        choices=("main", "restart"),
        default=None,
        help="run only the propagation and throughput figures (main) or only the restart figures",
    )
    ap.add_argument(
        "--raft-driver",
        choices=("loop", "thread"),
        default="loop",
        help="raft.driver of every node: the core on the event loop (default) or on its own thread",
    )
    ap.add_argument("--keep", action="store_true", help="keep the clusters' directories (with --workdir)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument(
        "--workdir", type=Path, default=None, help="where the clusters live (default: a temp dir)"
    )
    args = ap.parse_args()
    RAFT_DRIVER["raft.driver"] = args.raft_driver
    # SIGTERM (and SIGINT, which a shell's background job ignores) unwind through the ``finally``
    # blocks, so every cluster is taken down.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
    topics = 50 if args.quick else args.topics
    partitions = 5_000 if args.quick else args.partitions
    seconds = 2.0 if args.quick else args.seconds
    # 5,000 partitions are about 0.7 MB of records: a 1 MiB threshold would never be reached.
    snapshot_bytes = min(args.snapshot_bytes, 128 * 1024) if args.quick else args.snapshot_bytes
    started = time.perf_counter()
    results: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "topics": topics,
        "partitions": partitions,
    }
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    keep = args.keep and args.workdir is not None
    with contextlib.ExitStack() as stack:
        if keep:
            root = Path(tempfile.mkdtemp(prefix="kraft-bench-brokers-", dir=args.workdir))
            log(f"clusters under {root} (kept)")
        else:
            tmp = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="kraft-bench-brokers-", dir=args.workdir)
            )
            root = Path(tmp)
        if args.only != "restart":
            run_main(results, root, topics, seconds)
        if args.only != "main":
            run_restarts(results, root, partitions, snapshot_bytes, args.restart_timeout_s)
    results["elapsed_s"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_report(results)
    return 0


def run_main(results: dict[str, Any], root: Path, topics: int, seconds: float) -> None:
    main_cluster = BenchCluster(root / "main", {})
    try:
        log("cluster up (3 controllers, 3 brokers) ...")
        main_cluster.up()
        with section(results, "propagation"):
            log(f"propagation of {topics} topics ...")
            results["propagation"] = bench_propagation(main_cluster, topics)
        with section(results, "throughput"):
            log("Metadata throughput with 10,000 partitions ...")
            results["throughput"] = bench_throughput(main_cluster, topics, seconds)
    except Exception as e:
        results.setdefault("propagation", {"error": str(e)})
        results.setdefault("throughput", {"error": str(e)})
    finally:
        main_cluster.down()


def run_restarts(
    results: dict[str, Any], root: Path, partitions: int, snapshot_bytes: int, timeout_s: float
) -> None:
    log("restart without a snapshot ...")
    results["restart_no_snapshot"] = bench_restart(
        root / "no-snapshot", partitions, NO_SNAPSHOT, False, timeout_s
    )
    log(f"restart with a snapshot (threshold {snapshot_bytes:,} bytes) ...")
    results["restart_with_snapshot"] = bench_restart(
        root / "snapshot",
        partitions,
        {"metadata.log.max.record.bytes.between.snapshots": str(snapshot_bytes)},
        True,
        timeout_s,
    )


if __name__ == "__main__":
    sys.exit(main())
