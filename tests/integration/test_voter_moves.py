"""KIP-853 with real processes: a controller of a ``--dynamic-voters`` cluster restarted on
another port tells the leader itself (UpdateRaftVoter), and every voter's set follows, so the
quorum can reach it again without an operator removing and re-adding it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from local_cluster import FAST_OVERRIDE_ARGS, poll_until, run_kraft

from kraft.cli import cluster_processes as processes

pytestmark = pytest.mark.slow


def test_a_controller_back_on_a_new_port_is_found_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    up = run_kraft(
        "cluster", "up", "--detach", "--dynamic-voters", "--controllers", "3", "--brokers", "0",
        "--base-port", "0", "--data-dir", str(data), *FAST_OVERRIDE_ARGS,
    )  # fmt: skip
    assert up.returncode == 0, up.stderr + up.stdout
    moved: subprocess.Popen[bytes] | None = None
    try:
        spec = json.loads((data / "cluster.json").read_text())
        port = {n["id"]: n["port"] for n in spec["nodes"]}
        stop = run_kraft("cluster", "stop-node", "--id", "3", "--data-dir", str(data))
        assert stop.returncode == 0, stop.stderr
        config = data / "node-3" / "server.properties"
        (new_port,) = processes.free_ports(1)
        text = config.read_text()
        assert f"CONTROLLER://127.0.0.1:{port[3]}" in text
        config.write_text(
            text.replace(f"CONTROLLER://127.0.0.1:{port[3]}", f"CONTROLLER://127.0.0.1:{new_port}")
        )
        moved = processes.start_kraft(["server-start", str(config)], data / "node-3" / "moved.log")

        def voters() -> dict[int, list[str]] | None:
            status = run_kraft("metadata-quorum", "--bootstrap-controller", f"127.0.0.1:{port[1]}",
                           "describe", "--status", "--json")  # fmt: skip
            if status.returncode != 0:
                return None
            got = {v["id"]: v["endpoints"] for v in json.loads(status.stdout)["currentVoters"]}
            return got if got.get(3) == [f"CONTROLLER://127.0.0.1:{new_port}"] else None

        def tails() -> str:
            logs = [data / f"node-{n}" / "server.log" for n in (1, 2)] + [data / "node-3" / "moved.log"]
            return "\n".join(p.read_text()[-2000:] for p in logs if p.exists())

        found = poll_until(
            "the voter set to show node 3's new port", voters, timeout_s=30.0, interval_s=0.3, tails=tails
        )
        assert found[1] == [f"CONTROLLER://127.0.0.1:{port[1]}"] and set(found) == {1, 2, 3}
    finally:
        if moved is not None:
            moved.kill()
            moved.wait(10)
        run_kraft("cluster", "down", "--data-dir", str(data))
