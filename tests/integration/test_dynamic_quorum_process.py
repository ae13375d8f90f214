"""KIP-853 end to end with real processes and the operator tools, as Kafka's docs walk through it:
one controller formatted --standalone, two more formatted --no-initial-controllers that join as
observers, ``kraft metadata-quorum add-controller`` for each, a failover among the three, and
``remove-controller`` of the dead one."""

from __future__ import annotations

import io
import json
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from local_cluster import FAST_OVERRIDE_ARGS, FAST_TIMEOUTS, poll_until, run_kraft

from kraft.cli import cluster_processes as processes
from kraft.cli import metadata_quorum
from kraft.cli import storage as storage_cli
from kraft.client.admin import AdminClient
from kraft.client.connection import Address
from kraft.client.quorum_info import QuorumInfo
from kraft.common.uuids import random_uuid, uuid_to_base64
from kraft.storage.meta_properties import read_meta_properties

T = TypeVar("T")

pytestmark = pytest.mark.slow


class DynamicQuorum:
    """Controllers 1..3 on free ports; every node's bootstrap server is controller 1."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cluster_id = uuid_to_base64(random_uuid())
        self.ports = dict(zip((1, 2, 3), processes.free_ports(3)))
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        for i, port in self.ports.items():
            props = {
                "process.roles": "controller",
                "node.id": str(i),
                "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.ports[1]}",
                "listeners": f"CONTROLLER://127.0.0.1:{port}",
                "controller.listener.names": "CONTROLLER",
                "log.dirs": str(self.log_dir(i)),
                **FAST_TIMEOUTS,
            }
            self.config(i).parent.mkdir(parents=True, exist_ok=True)
            self.config(i).write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def config(self, i: int) -> Path:
        return self.root / f"node-{i}" / "server.properties"

    def log_dir(self, i: int) -> Path:
        return self.root / f"node-{i}" / "metadata"

    def server_log(self, i: int) -> Path:
        return self.root / f"node-{i}" / "server.log"

    def directory_id(self, i: int) -> str:
        meta = read_meta_properties(self.log_dir(i))
        assert meta is not None and meta.directory_id is not None
        return uuid_to_base64(meta.directory_id)

    def format(self, i: int, *flags: str) -> str:
        out, err = io.StringIO(), io.StringIO()
        args = ["format", "-c", str(self.config(i)), "-t", self.cluster_id, *flags]
        assert storage_cli.main(args, out=out, err=err) == 0, err.getvalue()
        return out.getvalue()

    def start(self, i: int) -> None:
        self.procs[i] = processes.start_server(self.config(i), self.server_log(i))

    def kill(self, i: int) -> None:
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait(timeout=15)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            proc.wait(timeout=10)

    def bootstrap(self, ids: list[int]) -> str:
        return ",".join(f"127.0.0.1:{self.ports[i]}" for i in ids)

    def quorum(self, *args: str, ids: list[int], timeout_ms: int = 60_000) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        argv = ["--bootstrap-controller", self.bootstrap(ids), "--timeout-ms", str(timeout_ms)]
        argv += ["--request-timeout-ms", "10000", *args]
        code = metadata_quorum.main(argv, out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    def describe(self, ids: list[int]) -> QuorumInfo:
        addresses = [Address("127.0.0.1", self.ports[i]) for i in ids]
        return AdminClient(addresses, timeout_ms=1_000, request_timeout_ms=1_000).describe_quorum()

    def leader_among(self, ask: list[int], among: list[int]) -> QuorumInfo | None:
        info = self.describe(ask)
        return info if info.leader_id in among else None

    def log_tails(self) -> str:
        return "\n".join(f"--- node {i}:\n{processes.tail(self.server_log(i), 30)}" for i in self.procs)

    def wait_for(self, what: str, probe: Callable[[], T | None], timeout_s: float = 30.0) -> T:
        return poll_until(what, probe, timeout_s=timeout_s, interval_s=0.1, tails=self.log_tails)


@pytest.fixture
def quorum(tmp_path: Path) -> Iterator[DynamicQuorum]:
    q = DynamicQuorum(tmp_path)
    yield q
    q.stop_all()


def test_standalone_controller_grows_to_three_fails_over_and_shrinks(quorum: DynamicQuorum) -> None:
    assert "dynamic metadata voter directory" in quorum.format(1, "--standalone")
    quorum.start(1)
    info = quorum.wait_for("controller 1 to lead alone", lambda: quorum.leader_among([1], [1]))
    assert [v.replica_id for v in info.voters] == [1]

    for i in (2, 3):
        quorum.format(i, "--no-initial-controllers")
        quorum.start(i)

    def observers_caught_up() -> QuorumInfo | None:
        info = quorum.describe([1])
        ok = {o.replica_id for o in info.observers if o.log_end_offset >= info.high_watermark > 0}
        return info if {2, 3} <= ok else None

    quorum.wait_for("controllers 2 and 3 to replicate as observers", observers_caught_up)

    for i in (2, 3):
        code, out, err = quorum.quorum("add-controller", "--config", str(quorum.config(i)), ids=[1])
        assert code == 0, err
        assert out == (
            f"Added controller {i} with directory id {quorum.directory_id(i)} and endpoints: "
            f"CONTROLLER://127.0.0.1:{quorum.ports[i]}\n"
        )

    code, out, err = quorum.quorum("describe", "--status", ids=[1, 2, 3])
    assert code == 0, err
    voters_line = next(line for line in out.splitlines() if line.startswith("CurrentVoters:"))
    for i in (1, 2, 3):
        assert f'"id": {i}, "directoryId": "{quorum.directory_id(i)}"' in voters_line
        assert f'"CONTROLLER://127.0.0.1:{quorum.ports[i]}"' in voters_line

    # Kill the leader: the other two are voters now and elect one of themselves.
    leader = quorum.describe([1, 2, 3]).leader_id
    quorum.kill(leader)
    survivors = [i for i in (1, 2, 3) if i != leader]
    info = quorum.wait_for(
        f"a new leader among {survivors}", lambda: quorum.leader_among(survivors, survivors)
    )
    assert sorted(v.replica_id for v in info.voters) == [1, 2, 3]

    # Removing the live follower would leave {new leader, dead one}: a removal that could never
    # commit, and would stop the quorum. The leader refuses it (Kafka would append it).
    follower = next(i for i in survivors if i != info.leader_id)
    code, out, err = quorum.quorum(
        "remove-controller",
        "--controller-id",
        str(follower),
        "--controller-directory-id",
        quorum.directory_id(follower),
        ids=survivors,
        timeout_ms=2_000,
    )
    assert code == 1 and out == ""
    assert f"REQUEST_TIMED_OUT: cannot remove voter {follower}:" in err, err
    assert f"only [{info.leader_id}] fetched from the leader" in err, err
    assert sorted(v.replica_id for v in quorum.describe(survivors).voters) == [1, 2, 3]

    code, out, err = quorum.quorum(
        "remove-controller",
        "--controller-id",
        str(leader),
        "--controller-directory-id",
        quorum.directory_id(leader),
        ids=survivors,
    )
    assert code == 0, err
    assert out == f"Removed  KRaft controller {leader} with directory id {quorum.directory_id(leader)}\n"

    code, out, err = quorum.quorum("describe", "--status", ids=survivors)
    assert code == 0, err
    voters_line = next(line for line in out.splitlines() if line.startswith("CurrentVoters:"))
    assert voters_line.count('"id": ') == 2 and f'"id": {leader},' not in voters_line


def test_cluster_up_with_dynamic_voters_then_add_and_remove_a_node(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    overrides = list(FAST_OVERRIDE_ARGS)
    kraft = run_kraft

    def voters() -> list[int]:
        spec = json.loads((tmp_path / "data" / "cluster.json").read_text())
        addresses = [Address("127.0.0.1", n["port"]) for n in spec["nodes"] if n["port"]]
        info = AdminClient(addresses, timeout_ms=5_000).describe_quorum()
        return sorted(v.replica_id for v in info.voters)

    up = kraft(
        "cluster", "up", "--detach", "--dynamic-voters", "--base-port", "0", "--data-dir", data, *overrides
    )
    try:
        assert up.returncode == 0, up.stderr + up.stdout
        assert voters() == [1, 2, 3]
        props = (tmp_path / "data" / "node-2" / "server.properties").read_text()
        assert "controller.quorum.bootstrap.servers=" in props and "controller.quorum.voters" not in props

        added = kraft("cluster", "add-node", "--data-dir", data)
        assert added.returncode == 0, added.stderr + added.stdout
        assert "Added controller 4 with directory id " in added.stdout
        assert voters() == [1, 2, 3, 4]

        removed = kraft("cluster", "remove-node", "--id", "1", "--data-dir", data)
        assert removed.returncode == 0, removed.stderr + removed.stdout
        assert "Removed  KRaft controller 1 with directory id " in removed.stdout
        assert voters() == [2, 3, 4]
        spec = json.loads((tmp_path / "data" / "cluster.json").read_text())
        assert [n["id"] for n in spec["nodes"]] == [2, 3, 4]
    finally:
        down = kraft("cluster", "down", "--data-dir", data)
    assert down.returncode == 0, down.stderr
