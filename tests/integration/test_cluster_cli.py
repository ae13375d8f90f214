"""`kraft cluster up/down` and `kraft metadata-quorum` as an operator runs them (subprocesses)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from local_cluster import FAST_OVERRIDE_ARGS, run_kraft

from kraft.cli import cluster_processes as processes

pytestmark = pytest.mark.slow


def kraft(*args: str) -> subprocess.CompletedProcess[str]:
    return run_kraft(*args, timeout_s=90)


def test_cluster_up_describe_down_and_restart(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    overrides = list(FAST_OVERRIDE_ARGS)
    up = kraft(
        "cluster", "up", "--detach", "--controllers", "3", "--base-port", "0", "--data-dir", data, *overrides
    )
    spec = json.loads((tmp_path / "data" / "cluster.json").read_text()) if up.returncode == 0 else None
    try:
        assert up.returncode == 0, up.stderr + up.stdout
        assert spec is not None
        assert "LeaderId:" in up.stdout
        assert f"ClusterId:              {spec['cluster_id']}" in up.stdout
        assert len(spec["nodes"]) == 3
        assert all(processes.pid_alive(n["pid"]) for n in spec["nodes"])

        follower_port = spec["nodes"][1]["port"]
        described = kraft(
            "metadata-quorum",
            "--bootstrap-controller",
            f"127.0.0.1:{follower_port}",
            "describe",
            "--replication",
        )
        assert described.returncode == 0, described.stderr
        lines = described.stdout.splitlines()
        assert lines[0].split("\t")[0].strip() == "NodeId"
        assert sorted(line.split("\t")[6].strip() for line in lines[1:]) == ["Follower", "Follower", "Leader"]

        again = kraft("cluster", "up", "--detach", "--data-dir", data)
        assert again.returncode == 1
        assert "already running" in again.stderr
    finally:
        down = kraft("cluster", "down", "--data-dir", data)
    assert down.returncode == 0, down.stderr
    assert spec is not None
    assert not any(processes.pid_alive(n["pid"]) for n in spec["nodes"])

    # Restarting the same directory reuses the cluster id, ids and ports.
    up2 = kraft("cluster", "up", "--detach", "--data-dir", data)
    try:
        assert up2.returncode == 0, up2.stderr
        assert f"ClusterId:              {spec['cluster_id']}" in up2.stdout
        spec2 = json.loads((tmp_path / "data" / "cluster.json").read_text())
        assert [n["port"] for n in spec2["nodes"]] == [n["port"] for n in spec["nodes"]]
    finally:
        assert kraft("cluster", "down", "--data-dir", data).returncode == 0


def test_a_foreground_cluster_killed_with_sigkill_takes_its_nodes_down(tmp_path: Path) -> None:
    """`make run` is a foreground `kraft cluster up`: killing it outright (kill -9, a closed
    terminal) must not leave servers running, including a node restarted with `start-node`."""
    import os
    import signal
    import time

    data = tmp_path / "data"
    overrides = list(FAST_OVERRIDE_ARGS)
    up = subprocess.Popen(
        processes.kraft_command(
            "cluster",
            "up",
            "--controllers",
            "3",
            "--brokers",
            "1",
            "--base-port",
            "0",
            "--data-dir",
            str(data),
            *overrides,
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=processes.child_env(),
    )
    pids: list[int] = []
    try:
        assert up.stdout is not None
        deadline = time.monotonic() + 90
        for line in up.stdout:
            if "Running; press Ctrl-C" in line:
                break
            assert time.monotonic() < deadline, "the cluster did not come up"
        spec = json.loads((data / "cluster.json").read_text())
        # A node restarted into the foreground cluster is not its child: it must end with it too.
        follower = spec["nodes"][1]["id"]
        assert (
            kraft("cluster", "stop-node", "--id", str(follower), "--kill", "--data-dir", str(data)).returncode
            == 0
        )
        restarted = kraft("cluster", "start-node", "--id", str(follower), "--data-dir", str(data))
        assert restarted.returncode == 0, restarted.stderr
        spec = json.loads((data / "cluster.json").read_text())
        pids = [n["pid"] for n in spec["nodes"]]
        assert len(pids) == 4 and all(processes.pid_alive(p) for p in pids)

        os.kill(up.pid, signal.SIGKILL)
        up.wait(10)
        deadline = time.monotonic() + 45
        while any(processes.pid_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in pids if processes.pid_alive(p)]
        # They stopped gracefully (SIGTERM), not by a kill: each log says so.
        for n in spec["nodes"]:
            text = (Path(n["node_dir"]) / "server.log").read_text()
            assert "supervising `kraft cluster up` is gone" in text, n["id"]
            assert text.rstrip().endswith("stopped"), n["id"]
    finally:
        if up.poll() is None:
            up.kill()
        for p in pids:
            if processes.pid_alive(p):
                os.kill(p, signal.SIGKILL)
