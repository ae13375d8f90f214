"""An observer: a controller process that is not in the voter set and knows only the bootstrap
servers. It finds the leader through them, learns the leader's address from the NodeEndpoints the
leader sends back, replicates, and is listed as an observer by DescribeQuorum, also through
kafka-python pointed at the observer itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from local_cluster import FAST_TIMEOUTS, LocalCluster

from kraft.cli import cluster_processes as processes
from kraft.cli.main import main as kraft_main
from kraft.client.quorum_info import QuorumInfo

kafka_admin = pytest.importorskip("kafka.admin")

pytestmark = pytest.mark.slow


def observer_properties(cluster: LocalCluster, node_id: int, port: int, log_dir: Path) -> str:
    bootstrap = ",".join(f"{a.host}:{a.port}" for a in cluster.bootstrap())
    lines = [
        "process.roles=controller",
        f"node.id={node_id}",
        f"controller.quorum.bootstrap.servers={bootstrap}",
        f"listeners=CONTROLLER://127.0.0.1:{port}",
        "controller.listener.names=CONTROLLER",
        f"log.dirs={log_dir}",
        *(f"{k}={v}" for k, v in FAST_TIMEOUTS.items()),
    ]
    return "\n".join(lines) + "\n"


def test_observer_replicates_and_is_described_by_kafka_python(
    local_cluster: Callable[..., LocalCluster], tmp_path: Path
) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    leader = cluster.wait_for_leader()

    observer_dir = tmp_path / "observer"
    observer_dir.mkdir()
    (port,) = processes.free_ports(1)
    config = observer_dir / "server.properties"
    config.write_text(observer_properties(cluster, 4, port, observer_dir / "metadata"))
    cluster_id = cluster.spec.cluster_id
    # A controller without controller.quorum.voters must say how it joins (Kafka 4.x): as an observer.
    format_args = ["storage", "format", "--config", str(config), "--cluster-id", cluster_id, "-N"]
    assert kraft_main(format_args) == 0
    proc = processes.start_server(config, observer_dir / "server.log")
    try:

        def caught_up_observer() -> QuorumInfo | None:
            info = cluster.describe()
            hw = info.high_watermark
            ok = any(o.replica_id == 4 and o.log_end_offset >= hw > 0 for o in info.observers)
            return info if ok else None

        info = cluster.wait_for("node 4 to be listed as a caught-up observer", caught_up_observer)
        assert info.leader_id == leader.leader_id
        assert 4 not in [v.replica_id for v in info.voters]

        for asked in (f"127.0.0.1:{cluster.address(leader.leader_id).port}", f"127.0.0.1:{port}"):
            admin = kafka_admin.KafkaAdminClient(bootstrap_servers=asked, request_timeout_ms=10_000)
            try:
                result = admin.describe_metadata_quorum()
            finally:
                admin.close()
            (partition,) = result["topics"][0]["partitions"]
            assert partition["leader_id"] == leader.leader_id, asked
            observers = {o["replica_id"]: o for o in partition["observers"]}
            assert set(observers) == {4}, asked
            assert observers[4]["log_end_offset"] >= 1
            assert observers[4]["last_fetch_timestamp"] > 0
            assert sorted(v["replica_id"] for v in partition["current_voters"]) == cluster.ids
        log_text = (observer_dir / "server.log").read_text()
        assert f"learned the address of node {leader.leader_id}" in log_text
    finally:
        proc.terminate()
        proc.wait(timeout=15)
