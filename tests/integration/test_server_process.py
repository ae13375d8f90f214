"""``kraft server-start`` as real processes on 127.0.0.1 (marked ``slow``).

Self-contained (no cluster tooling): each test formats its own directories with ``kraft storage
format`` and starts one ``kraft server-start`` process per node on free ephemeral ports. Every wait
is a condition polled until a deadline; a failure prints the node logs.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kafka.admin import KafkaAdminClient

from kraft.cli import cluster_processes as processes
from kraft.cli import storage as storage_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

T = TypeVar("T")
SRC = Path(__file__).resolve().parents[2] / "src"
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
OTHER_CLUSTER_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
# No test here measures failover after a crash, and some check that the leader and epoch do not
# change: a fetch timeout of 3 s keeps a leader stalled a second by a loaded machine in place.
FAST = {
    "controller.quorum.election.timeout.ms": "500",
    "controller.quorum.fetch.timeout.ms": "3000",
    "controller.quorum.election.backoff.max.ms": "300",
    "controller.quorum.request.timeout.ms": "800",
    "controller.quorum.append.linger.ms": "5",
    "socket.request.max.bytes": "65536",
}


class Cluster:
    def __init__(self, root: Path, cluster_ids: dict[int, str]) -> None:
        self.root = root
        self.ids = sorted(cluster_ids)
        self.ports = dict(zip(self.ids, processes.free_ports(len(self.ids))))
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in self.ports.items())
        for i in self.ids:
            props = {
                "process.roles": "controller",
                "node.id": str(i),
                "controller.quorum.voters": voters,
                "listeners": f"CONTROLLER://127.0.0.1:{self.ports[i]}",
                "controller.listener.names": "CONTROLLER",
                "metadata.log.dir": str(root / f"node{i}"),
                **FAST,
            }
            self.config(i).write_text("".join(f"{k}={v}\n" for k, v in props.items()))
            assert (
                storage_cli.main(["format", "--config", str(self.config(i)), "--cluster-id", cluster_ids[i]])
                == 0
            )

    def config(self, i: int) -> Path:
        return self.root / f"node{i}.properties"

    def log(self, i: int) -> str:
        path = self.root / f"node{i}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self, i: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        with open(self.root / f"node{i}.log", "ab") as out:
            self.procs[i] = subprocess.Popen(
                [sys.executable, "-m", "kraft.cli.main", "server-start", str(self.config(i))],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            proc.wait(10)

    def describe(self, i: int) -> dict[str, Any]:
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{self.ports[i]}", request_timeout_ms=3000)
        try:
            result: dict[str, Any] = admin.describe_metadata_quorum()["topics"][0]["partitions"][0]
            return result
        finally:
            admin.close()

    def wait_for(self, what: str, check: Callable[[], T | None], timeout_s: float = 30) -> T:
        deadline = time.monotonic() + timeout_s
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                value = check()
                if value is not None and value is not False:
                    return value
            except Exception as e:  # not up yet: keep polling until the deadline
                last_error = e
            time.sleep(0.2)
        logs = "\n".join(f"--- node {i}\n{self.log(i)[-3000:]}" for i in self.ids)
        raise AssertionError(f"timed out waiting for {what} (last error: {last_error})\n{logs}")

    def leader_with_hw(self, i: int, min_hw: int = 1) -> tuple[int, int, int] | None:
        p = self.describe(i)
        if p["error"] is None and p["leader_id"] >= 0 and p["high_watermark"] >= min_hw:
            return p["leader_id"], p["leader_epoch"], p["high_watermark"]
        return None


@pytest.fixture
def cluster_factory(tmp_path: Path) -> Iterator[Callable[[dict[int, str]], Cluster]]:
    made: list[Cluster] = []

    def make(cluster_ids: dict[int, str]) -> Cluster:
        c = Cluster(tmp_path, cluster_ids)
        made.append(c)
        for i in c.ids:
            c.start(i)
        return c

    yield make
    for c in made:
        c.stop_all()


def test_three_nodes_elect_one_leader_that_every_node_reports(
    cluster_factory: Callable[..., Cluster],
) -> None:
    c = cluster_factory({1: CLUSTER_ID, 2: CLUSTER_ID, 3: CLUSTER_ID})
    leader, epoch, hw = c.wait_for("a leader with a committed high watermark", lambda: c.leader_with_hw(1))
    assert leader in c.ids and epoch >= 1 and hw >= 1
    # Any controller answers with the leader's view (followers forward DescribeQuorum).
    for i in c.ids:
        got = c.wait_for(f"node {i} to report leader {leader}", lambda i=i: c.leader_with_hw(i))
        assert got[:2] == (leader, epoch)
    voters = c.describe(leader)["current_voters"]
    assert sorted(v["replica_id"] for v in voters) == c.ids
    c.wait_for(
        "every voter caught up",
        lambda: all(v["log_end_offset"] >= hw for v in c.describe(leader)["current_voters"]),
    )


def test_garbage_and_oversize_frames_leave_the_quorum_serving(
    cluster_factory: Callable[..., Cluster],
) -> None:
    c = cluster_factory({1: CLUSTER_ID, 2: CLUSTER_ID, 3: CLUSTER_ID})
    leader, epoch, _ = c.wait_for("a leader", lambda: c.leader_with_hw(1))
    # A leader and a high watermark need only two nodes: the third may not be listening yet.
    for i in c.ids:
        c.wait_for(f"node {i} to serve", lambda i=i: c.leader_with_hw(i))
    for i in c.ids:
        with socket.create_connection(("127.0.0.1", c.ports[i]), timeout=5) as s:
            s.sendall(struct.pack(">i", 12) + os.urandom(12))
            s.settimeout(5)
            assert s.recv(100) == b""  # closed by the server
        with socket.create_connection(("127.0.0.1", c.ports[i]), timeout=5) as s:
            s.sendall(struct.pack(">i", 10_000_000))  # above socket.request.max.bytes
            s.settimeout(5)
            assert s.recv(100) == b""
    for i in c.ids:
        assert "closing connection from" in c.wait_for(
            f"node {i} to log the bad connection",
            lambda i=i: "closing connection from" in c.log(i) and c.log(i),
        )
    # Same leader, same epoch: nothing reached the core; and every process is still alive.
    assert c.leader_with_hw(1) is not None and c.leader_with_hw(1)[:2] == (leader, epoch)  # type: ignore[index]
    assert all(p.poll() is None for p in c.procs.values())


def test_a_node_with_another_cluster_id_is_refused_with_a_clear_log_line(
    cluster_factory: Callable[..., Cluster],
) -> None:
    c = cluster_factory({1: CLUSTER_ID, 2: CLUSTER_ID, 3: OTHER_CLUSTER_ID})
    leader, _, _ = c.wait_for("nodes 1 and 2 to elect a leader", lambda: c.leader_with_hw(1))
    assert leader in (1, 2)
    c.wait_for(
        "a refusal naming both cluster ids",
        lambda: any(
            "INCONSISTENT_CLUSTER_ID" in c.log(i) and OTHER_CLUSTER_ID in c.log(i) and CLUSTER_ID in c.log(i)
            for i in (1, 2)
        ),
    )
    c.wait_for(
        "node 3 to log that it was refused",
        lambda: "refused our request with INCONSISTENT_CLUSTER_ID" in c.log(3),
    )
    voters = {v["replica_id"]: v for v in c.describe(leader)["current_voters"]}
    assert voters[3]["log_end_offset"] == -1 or voters[3]["log_end_offset"] == 0  # never replicated


def test_sigterm_stops_the_leader_gracefully_and_another_takes_over(
    cluster_factory: Callable[..., Cluster],
) -> None:
    c = cluster_factory({1: CLUSTER_ID, 2: CLUSTER_ID, 3: CLUSTER_ID})
    leader, epoch, _ = c.wait_for("a leader", lambda: c.leader_with_hw(1))
    c.procs[leader].send_signal(signal.SIGTERM)
    assert c.procs[leader].wait(20) == 0
    assert "shutting down" in c.log(leader) and "stopped" in c.log(leader)
    other = next(i for i in c.ids if i != leader)
    new_leader, new_epoch, _ = c.wait_for(
        "a new leader", lambda: (r := c.leader_with_hw(other)) and r[0] != leader and r
    )
    assert new_epoch > epoch and new_leader != leader


def test_bad_config_exits_1_naming_the_property(tmp_path: Path) -> None:
    config = tmp_path / "bad.properties"
    config.write_text("process.roles=controller\nnode.id=1\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run(
        [sys.executable, "-m", "kraft.cli.main", "server-start", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 1
    assert "error: controller.listener.names" in result.stderr
