"""KIP-853 through a broker, with real processes: ``kraft cluster up --dynamic-voters`` with a
broker, then ``kraft metadata-quorum --bootstrap-server BROKER`` add-controller, remove-controller
and describe --status (the broker forwards AddRaftVoter, RemoveRaftVoter and DescribeQuorum to the
active controller, as Kafka 4.x brokers do), and the controllers the broker reports to an
unmodified kafka-python client although it has no ``controller.quorum.voters``."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from local_cluster import FAST_OVERRIDE_ARGS, poll_until, run_kraft

from kraft.cli import cluster_processes as processes
from kraft.cli import metadata_quorum
from kraft.common.uuids import uuid_to_base64
from kraft.storage.meta_properties import read_meta_properties

kafka_admin = pytest.importorskip("kafka.admin")
kafka_protocol = pytest.importorskip("kafka.protocol.admin")

T = TypeVar("T")

pytestmark = pytest.mark.slow


class Cluster:
    """A ``kraft cluster up --dynamic-voters`` cluster: controllers 1-3, broker 4."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"

    def kraft(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_kraft(*args)

    def up(self) -> None:
        overrides = FAST_OVERRIDE_ARGS
        args = ["--controllers", "3", "--brokers", "1", "--base-port", "0", "--data-dir", str(self.data)]
        up = self.kraft("cluster", "up", "--detach", "--dynamic-voters", *args, *overrides)
        assert up.returncode == 0, up.stderr + up.stdout
        self.spec = json.loads((self.data / "cluster.json").read_text())

    def port(self, node_id: int) -> int:
        return int(next(n["port"] for n in self.spec["nodes"] if n["id"] == node_id))

    @property
    def broker(self) -> str:
        return f"127.0.0.1:{next(n['broker_port'] for n in self.spec['nodes'] if n['id'] == 4)}"

    def config(self, node_id: int) -> Path:
        return self.data / f"node-{node_id}" / "server.properties"

    def directory_id(self, node_id: int) -> str:
        meta = read_meta_properties(self.data / f"node-{node_id}" / "metadata")
        assert meta is not None and meta.directory_id is not None
        return uuid_to_base64(meta.directory_id)

    def quorum(
        self, *args: str, timeout_ms: int = 30_000, request_timeout_ms: int = 5_000
    ) -> tuple[int, str, str]:
        """``kraft metadata-quorum --bootstrap-server BROKER ARGS...``: (exit code, stdout, stderr)."""
        out, err = io.StringIO(), io.StringIO()
        argv = ["--bootstrap-server", self.broker, "--timeout-ms", str(timeout_ms)]
        argv += ["--request-timeout-ms", str(request_timeout_ms), *args]
        code = metadata_quorum.main(argv, out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    def voters_line(self) -> str:
        code, out, err = self.quorum("describe", "--status")
        assert code == 0, err
        return next(line for line in out.splitlines() if line.startswith("CurrentVoters:"))

    def log_tails(self) -> str:
        return "\n".join(
            f"--- node {i}:\n{processes.tail(self.data / f'node-{i}' / 'server.log', 25)}"
            for i in (1, 2, 3, 4)
        )

    def wait_for(self, what: str, probe: Callable[[], T | None], timeout_s: float = 20.0) -> T:
        return poll_until(what, probe, timeout_s=timeout_s, interval_s=0.1, tails=self.log_tails)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    c.up()
    try:
        yield c
    finally:
        c.kraft("cluster", "down", "--data-dir", str(c.data))


def controllers_seen_by(admin: Any) -> tuple[int, list[int]]:
    """DescribeCluster with EndpointType 2 (controllers), sent by kafka-python's own connection
    manager: (ControllerId, the listed node ids)."""
    request = kafka_protocol.DescribeClusterRequest(
        include_cluster_authorized_operations=False, endpoint_type=2
    )

    async def ask() -> Any:
        return await admin._manager.send(request)

    response = admin._manager.run(ask)
    assert response.error_code == 0, response
    return response.controller_id, sorted(b.broker_id for b in response.brokers)


def test_voter_changes_and_the_quorum_status_through_a_broker(cluster: Cluster) -> None:
    voters = cluster.voters_line()
    for i in (1, 2, 3):
        assert f'"id": {i}, "directoryId": "{cluster.directory_id(i)}"' in voters

    # A real client: the broker reports itself as ControllerId for brokers (Kafka: a random alive
    # broker, the node that forwards), and the voter set it follows when asked for controllers.
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=cluster.broker, request_timeout_ms=10_000)
    try:
        view = admin.describe_cluster()
        assert [b["broker_id"] for b in view["brokers"]] == [4] and view["controller_id"] == 4
        leader, controllers = controllers_seen_by(admin)
        assert controllers == [1, 2, 3] and leader in (1, 2, 3)

        # Bad input changes nothing: an unknown voter is refused by the leader, relayed as is.
        code, out, err = cluster.quorum(
            "remove-controller", "--controller-id", "9", "--controller-directory-id", cluster.directory_id(3)
        )
        assert (code, out) == (1, "") and "VOTER_NOT_FOUND" in err
        assert cluster.voters_line() == voters

        # Remove the leader itself through the broker: it resigns once the removal commits, and
        # the broker follows the new leader for what comes next.
        code, out, err = cluster.quorum(
            "remove-controller",
            "--controller-id",
            str(leader),
            "--controller-directory-id",
            cluster.directory_id(leader),
        )
        assert code == 0, err
        assert out == f"Removed  KRaft controller {leader} with directory id {cluster.directory_id(leader)}\n"
        rest = sorted({1, 2, 3} - {leader})
        cluster.wait_for(
            f"the broker to list controllers {rest} with a leader among them",
            lambda: (lambda seen: seen if seen[0] in rest and seen[1] == rest else None)(
                controllers_seen_by(admin)
            ),
        )
        voters = cluster.voters_line()
        assert voters.count('"id": ') == 2 and f'"id": {leader},' not in voters

        # Add it back through the broker (it keeps replicating as an observer meanwhile).
        code, out, err = cluster.quorum("add-controller", "--config", str(cluster.config(leader)))
        assert code == 0, err
        assert out == (
            f"Added controller {leader} with directory id {cluster.directory_id(leader)} and endpoints: "
            f"CONTROLLER://127.0.0.1:{cluster.port(leader)}\n"
        )
        assert f'"id": {leader}, "directoryId": "{cluster.directory_id(leader)}"' in cluster.voters_line()
        cluster.wait_for(
            "the broker to list all three controllers again",
            lambda: True if controllers_seen_by(admin)[1] == [1, 2, 3] else None,
        )
        quorum = admin.describe_metadata_quorum()  # kafka-python's DescribeQuorum, via the broker
        assert sorted(v["replica_id"] for v in quorum["topics"][0]["partitions"][0]["current_voters"]) == [
            1,
            2,
            3,
        ]
    finally:
        admin.close()

    # No controller left: the broker answers REQUEST_TIMED_OUT (Kafka's forwarding timeout).
    for i in (1, 2, 3):
        stopped = cluster.kraft(
            "cluster", "stop-node", "--data-dir", str(cluster.data), "--id", str(i), "--kill"
        )
        assert stopped.returncode == 0, stopped.stderr
    code, out, err = cluster.quorum(
        "add-controller", "--config", str(cluster.config(3)), timeout_ms=2_500, request_timeout_ms=1_500
    )
    assert (code, out) == (1, "")
    assert "REQUEST_TIMED_OUT: The request timed out." in err and cluster.broker in err
    # A broker without controllers would wait out its controlled shutdown on `cluster down`.
    cluster.kraft("cluster", "stop-node", "--data-dir", str(cluster.data), "--id", "4", "--kill")
