"""Real kraft processes on loopback: the process-level tests (all marked ``slow``) and the
benchmarks that run real clusters (``benchmarks/jepsen_dataplane.py``) share it.

``LocalCluster`` lays a cluster out with the same code as ``kraft cluster up`` (ids 1..N, free
ephemeral ports, one directory per node, ``kraft storage format``), starts each node as its own
``kraft server-start`` (or ``kraft test-raft-server``) process, and offers kill -9, SIGSTOP/SIGCONT
and restart per node. Every wait is a condition polled until a deadline; a timeout names what was
awaited and prints the tails of the node logs.

Timeouts are tightened (``FAST_TIMEOUTS``) so elections take a fraction of a second.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from kraft.cli import cluster as cluster_cli
from kraft.cli import cluster_processes as processes
from kraft.client.admin import AdminClient
from kraft.client.connection import Address, AdminError
from kraft.client.quorum_info import QuorumInfo
from kraft.common.uuids import random_uuid, uuid_to_base64
from kraft.records.batch import iter_batches

T = TypeVar("T")

# Broker lifecycle timers scaled down like the quorum's: fencing after 3 s of silence.
BROKER_TIMEOUTS = {
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "3000",
}


# Fast but not flaky on two shared cores: the fetch timeout must comfortably exceed a slow poll.
FAST_TIMEOUTS = {
    "controller.quorum.election.timeout.ms": "500",
    "controller.quorum.fetch.timeout.ms": "1000",
    "controller.quorum.election.backoff.max.ms": "300",
    "controller.quorum.request.timeout.ms": "800",
    "controller.quorum.retry.backoff.ms": "20",
    "controller.quorum.append.linger.ms": "5",
}
# For tests that check that the leader and epoch do not change: a leader process stalled a second
# by a loaded machine must not lose its followers.
STEADY_LEADER = {"controller.quorum.fetch.timeout.ms": "3000"}
# FAST_TIMEOUTS as ``kraft cluster up`` options.
FAST_OVERRIDE_ARGS = tuple(a for k, v in FAST_TIMEOUTS.items() for a in ("--override", f"{k}={v}"))


def run_kraft(*args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """``kraft ARGS...`` in a child process, output captured (exit status not checked)."""
    return processes.run_kraft(*args, timeout_s=timeout_s)


def poll_until(
    what: str, probe: Callable[[], T | None], *, timeout_s: float, interval_s: float, tails: Callable[[], str]
) -> T:
    """``probe()`` until it returns a value (None, False, admin and socket errors count as "not
    yet"); on timeout an AssertionError with the last error and ``tails()`` (the servers' log tails)."""
    deadline = time.monotonic() + timeout_s
    last: str = "never probed"
    while time.monotonic() < deadline:
        try:
            value = probe()
        except (AdminError, OSError) as e:
            last = str(e).splitlines()[0]
            value = None
        if value is not None and value is not False:  # a probe written as `cond and x` gives False
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what} (last: {last})\n{tails()}")


def hw_at_least(
    cluster: LocalCluster, offset: int, ask: Sequence[int] | None = None
) -> Callable[[], QuorumInfo | None]:
    """A probe: the view of the node asked (default: any) once its high watermark is at ``offset``."""

    def probe() -> QuorumInfo | None:
        info = cluster.describe(ask)
        return info if info.high_watermark >= offset else None

    return probe


def voters_reached(
    cluster: LocalCluster, offset: int, ids: Sequence[int] | None = None, ask: Sequence[int] | None = None
) -> Callable[[], QuorumInfo | None]:
    """A probe: the leader's view once the log of every voter of ``ids`` (default: all) ends at or
    past ``offset`` (a voter that never fetched reports -1, so ``offset`` 0 means "has fetched")."""

    def probe() -> QuorumInfo | None:
        info = cluster.describe(ask)
        want = set(ids) if ids is not None else {v.replica_id for v in info.voters}
        reached = {v.replica_id for v in info.voters if v.log_end_offset >= offset}
        return info if want <= reached else None

    return probe


class LocalCluster:
    def __init__(
        self,
        root: Path,
        controllers: int = 3,
        overrides: dict[str, str] | None = None,
        cluster_id: str | None = None,
        brokers: int = 0,
        combined: bool = False,
    ) -> None:
        self.root = root
        fast = {**FAST_TIMEOUTS, **(BROKER_TIMEOUTS if brokers or combined else {})}
        self.spec = cluster_cli.plan_new_cluster(
            root,
            controllers,
            0,
            {**fast, **(overrides or {})},
            cluster_id=cluster_id or uuid_to_base64(random_uuid()),
            brokers=brokers,
            combined=combined,
        )
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        root.mkdir(parents=True, exist_ok=True)

    # -- layout ------------------------------------------------------------------------------

    @property
    def ids(self) -> list[int]:
        """Every node's id, controllers and brokers."""
        return [n.id for n in self.spec.nodes]

    @property
    def controller_ids(self) -> list[int]:
        return [n.id for n in self.spec.controllers]

    @property
    def broker_ids(self) -> list[int]:
        return [n.id for n in self.spec.brokers]

    def broker_address(self, node_id: int) -> Address:
        return self.node(node_id).broker_address

    def bootstrap_servers(self, ids: Sequence[int] | None = None) -> str:
        """``host:port,...`` of the brokers' client listeners (what Kafka clients take)."""
        return ",".join(str(self.broker_address(i)) for i in (ids if ids is not None else self.broker_ids))

    def node(self, node_id: int) -> cluster_cli.NodeEntry:
        return self.spec.node(node_id)

    def address(self, node_id: int) -> Address:
        return self.node(node_id).address

    def bootstrap(self, ids: Sequence[int] | None = None) -> list[Address]:
        """The controllers' addresses (or those of ``ids``)."""
        return [self.address(i) for i in (ids if ids is not None else self.controller_ids)]

    def format(self, node_id: int, cluster_id: str | None = None) -> None:
        node = self.node(node_id)
        Path(node.node_dir).mkdir(parents=True, exist_ok=True)
        node.config_path.write_text(cluster_cli.node_properties(self.spec, node))
        if cluster_id is None:
            cluster_cli.format_node(self.spec, node)
        else:
            other = cluster_cli.ClusterFile(
                cluster_id=cluster_id, nodes=self.spec.nodes, overrides=self.spec.overrides
            )
            cluster_cli.format_node(other, node)

    def segment_files(self, node_id: int) -> list[Path]:
        return sorted(Path(self.node(node_id).log_dir).glob("__cluster_metadata-0/*.log"))

    def records(self, node_id: int, below_offset: int) -> list[tuple[int, int, bytes]]:
        """(offset, epoch, value) of each data record below ``below_offset``, read from the
        segment files (not through the server). A torn batch at a segment's end is ignored, as
        recovery would truncate it, so this also reads a killed node's files."""
        out: list[tuple[int, int, bytes]] = []
        for segment in self.segment_files(node_id):
            for batch in iter_batches(segment.read_bytes()):
                if batch.is_control:
                    continue
                for record in batch.records:
                    if record.offset < below_offset:
                        out.append((record.offset, batch.partition_leader_epoch, record.value or b""))
        return out

    def partition_records(self, node_id: int, topic: str, partition: int) -> list[tuple[int, int, bytes]]:
        """(offset, leader epoch, value) of every record of a data partition in a broker's files,
        read from the segments (not through the server), so also from a stopped or killed broker;
        a torn batch at a segment's end is ignored, as recovery would truncate it."""
        return [
            (r.offset, b.partition_leader_epoch, r.value or b"")
            for b, r in self._records(node_id, topic, partition)
        ]

    def partition_batches(self, node_id: int, topic: str, partition: int) -> list[tuple[int, Any, int]]:
        """(offset, batch header, record timestamp) of every record of a data partition in a
        broker's files (as ``partition_records``)."""
        return [(r.offset, b.header, r.timestamp) for b, r in self._records(node_id, topic, partition)]

    def _records(self, node_id: int, topic: str, partition: int) -> Iterator[tuple[Any, Any]]:
        for segment in sorted(Path(self.node(node_id).data_dir).glob(f"{topic}-{partition}/*.log")):
            for batch in iter_batches(segment.read_bytes()):
                if not batch.is_control:
                    for record in batch.records:
                        yield batch, record

    # -- processes ---------------------------------------------------------------------------

    def start(self, node_id: int, tool_args: Sequence[str] | None = None) -> subprocess.Popen[bytes]:
        """Starts one node; ``tool_args`` runs ``kraft test-raft-server --config CFG ARGS`` instead."""
        node = self.node(node_id)
        if not cluster_cli._is_formatted(node):
            self.format(node_id)
        else:
            node.config_path.write_text(cluster_cli.node_properties(self.spec, node))
        if tool_args is None:
            proc = processes.start_server(node.config_path, node.server_log)
        else:
            proc = processes.start_kraft(
                ["test-raft-server", "--config", str(node.config_path), *tool_args], node.server_log
            )
        self.procs[node_id] = proc
        node.pid = proc.pid
        return proc

    def start_all(self, tool_args: Sequence[str] | None = None) -> None:
        for node_id in self.ids:
            self.start(node_id, tool_args)

    def is_running(self, node_id: int) -> bool:
        proc = self.procs.get(node_id)
        return proc is not None and proc.poll() is None

    def kill(self, node_id: int, sig: int = signal.SIGKILL) -> None:
        proc = self.procs[node_id]
        if sig == signal.SIGKILL:
            os.kill(proc.pid, signal.SIGCONT)  # a stopped process must be able to die
        proc.send_signal(sig)
        if sig in (signal.SIGKILL, signal.SIGTERM):
            proc.wait(timeout=15)

    def pause(self, node_id: int) -> None:
        self.procs[node_id].send_signal(signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        self.procs[node_id].send_signal(signal.SIGCONT)

    def stop_all(self, graceful: bool = False) -> None:
        """Stops every node. Not graceful by default: a leader stopping alone waits out its
        shutdown timeout for peers that are gone, and the tests gain nothing from that. SIGKILL
        keeps whatever the nodes wrote (the page cache survives the process)."""
        live = {p.pid: p for p in self.procs.values() if p.poll() is None}
        for pid in live:
            os.kill(pid, signal.SIGCONT)
        if graceful:
            processes.stop_processes(sorted(live), timeout_s=5, children=live)
            return
        for proc in live.values():
            proc.kill()
        for proc in live.values():
            proc.wait(timeout=10)

    def log(self, node_id: int) -> str:
        return (
            self.node(node_id).server_log.read_text(errors="replace")
            if self.node(node_id).server_log.exists()
            else ""
        )

    def log_tails(self) -> str:
        return "\n".join(
            f"--- node {i} ({self.node(i).server_log}):\n{processes.tail(self.node(i).server_log, 30)}"
            for i in self.ids
        )

    # -- observation -------------------------------------------------------------------------

    def describe(self, ids: Sequence[int] | None = None, timeout_ms: int = 5_000) -> QuorumInfo:
        # Tests also call it once, outside any wait: a stalled machine must not fail them.
        client = AdminClient(
            self.bootstrap(ids), timeout_ms=timeout_ms, request_timeout_ms=1_000, retry_backoff_ms=20
        )
        return client.describe_quorum()

    def wait_for(self, what: str, probe: Callable[[], T | None], timeout_s: float = 20.0) -> T:
        return poll_until(what, probe, timeout_s=timeout_s, interval_s=0.05, tails=self.log_tails)

    def wait_for_leader(
        self,
        among: Sequence[int] | None = None,
        min_epoch: int = 0,
        timeout_s: float = 20.0,
        ask: Sequence[int] | None = None,
    ) -> QuorumInfo:
        """A DescribeQuorum answer naming a leader in ``among`` with epoch >= ``min_epoch``."""
        allowed = set(among if among is not None else self.controller_ids)

        def probe() -> QuorumInfo | None:
            info = self.describe(ask if ask is not None else sorted(allowed), timeout_ms=1_000)
            if info.leader_id in allowed and info.leader_epoch >= min_epoch:
                return info
            return None

        return self.wait_for(f"a leader among {sorted(allowed)} with epoch >= {min_epoch}", probe, timeout_s)

    def unfenced_brokers(self, via: int | None = None) -> set[int]:
        """The brokers a broker's Metadata lists (registered and unfenced)."""
        ask = [via] if via is not None else [b for b in self.broker_ids if self.is_running(b)]
        for b in ask:
            try:
                return cluster_cli.unfenced_brokers(self.broker_address(b), 1.0)
            except (AdminError, OSError):
                continue
        return set()

    def wait_for_brokers(self, ids: Sequence[int] | None = None, timeout_s: float = 30.0) -> set[int]:
        """Until every broker of ``ids`` (default: all) is registered and unfenced."""
        want = set(ids if ids is not None else self.broker_ids)

        def probe() -> set[int] | None:
            seen = self.unfenced_brokers()
            return seen if want <= seen else None

        return self.wait_for(f"brokers {sorted(want)} registered and unfenced", probe, timeout_s)
