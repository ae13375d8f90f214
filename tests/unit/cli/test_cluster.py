"""kraft cluster: config generation, cluster.json, refusals, and process handling with stand-in
processes (no real server needed)."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kraft.cli import cluster
from kraft.cli import cluster_processes as processes


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cluster.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def write_cluster(
    data_dir: Path, pids: list[int | None], ports: list[int] | None = None
) -> cluster.ClusterFile:
    ports = ports or [9093 + i for i in range(len(pids))]
    spec = cluster.plan_new_cluster(data_dir, len(pids), ports[0], {}, cluster_id="AAAAAAAAAAAAAAAAAAAAAg")
    for node, pid, port in zip(spec.nodes, pids, ports):
        node.pid = pid
        node.port = port
        Path(node.node_dir).mkdir(parents=True, exist_ok=True)
        node.config_path.write_text(cluster.node_properties(spec, node))
    data_dir.mkdir(parents=True, exist_ok=True)
    spec.save(data_dir / cluster.CLUSTER_FILE)
    return spec


@pytest.fixture
def stand_ins() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes whose argv looks like a kraft server for a given config (they just sleep)."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait()


def fake_server(config: Path, ignore_sigterm: bool = False) -> subprocess.Popen[bytes]:
    code = "import signal, time\n"
    if ignore_sigterm:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", code, "server-start", str(config)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"  # handlers installed before we signal it
    return proc


def test_node_properties_describe_a_static_loopback_quorum(tmp_path: Path) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 3, 9093, {"controller.quorum.fetch.timeout.ms": "500"}, "cid")
    text = cluster.node_properties(spec, spec.nodes[1])
    props = dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert props["node.id"] == "2"
    assert props["process.roles"] == "controller"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095"
    assert props["listeners"] == "CONTROLLER://127.0.0.1:9094"
    assert props["controller.listener.names"] == "CONTROLLER"
    assert props["metadata.log.dir"] == str((tmp_path / "node-2" / "metadata").resolve())
    assert props["controller.quorum.fetch.timeout.ms"] == "500"


def props_of(spec: cluster.ClusterFile, node_id: int) -> dict[str, str]:
    text = cluster.node_properties(spec, spec.node(node_id))
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_brokers_follow_the_controllers_in_ids_and_ports(tmp_path: Path) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 3, 9093, {}, "cid", brokers=3)
    assert [(n.id, n.roles, n.port, n.broker_port) for n in spec.nodes] == [
        (1, ("controller",), 9093, None),
        (2, ("controller",), 9094, None),
        (3, ("controller",), 9095, None),
        (4, ("broker",), None, 9096),
        (5, ("broker",), None, 9097),
        (6, ("broker",), None, 9098),
    ]
    broker = props_of(spec, 5)
    assert broker["process.roles"] == "broker"
    assert broker["listeners"] == "PLAINTEXT://127.0.0.1:9097"
    assert broker["controller.quorum.voters"] == "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095"
    assert broker["log.dirs"] == str((tmp_path / "node-5" / "data").resolve())
    assert broker["metadata.log.dir"] == str((tmp_path / "node-5" / "metadata").resolve())
    assert [str(a) for a in spec.bootstrap_servers()] == [
        "127.0.0.1:9096",
        "127.0.0.1:9097",
        "127.0.0.1:9098",
    ]
    assert [str(a) for a in spec.bootstrap()] == ["127.0.0.1:9093", "127.0.0.1:9094", "127.0.0.1:9095"]


def test_combined_nodes_bind_both_listeners(tmp_path: Path) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 3, 9093, {}, "cid", combined=True)
    assert [(n.id, n.port, n.broker_port) for n in spec.nodes] == [
        (1, 9093, 9096),
        (2, 9094, 9097),
        (3, 9095, 9098),
    ]
    props = props_of(spec, 2)
    assert props["process.roles"] == "broker,controller"
    assert props["listeners"] == "CONTROLLER://127.0.0.1:9094,PLAINTEXT://127.0.0.1:9097"
    with pytest.raises(cluster.ClusterError, match="--combined"):
        cluster.plan_new_cluster(tmp_path, 3, 9093, {}, "cid", brokers=2, combined=True)


def test_a_cluster_file_from_before_brokers_loads_as_controllers(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(
        json.dumps(
            {"cluster_id": "c", "nodes": [{"id": 1, "port": 9093, "pid": None, "log_dir": "/x/metadata"}]}
        )
    )
    loaded = cluster.ClusterFile.load(tmp_path / "cluster.json")
    assert [(n.roles, n.broker_port) for n in loaded.nodes] == [(("controller",), None)]


def test_up_refuses_a_different_broker_count_and_a_bad_demo_topic(tmp_path: Path) -> None:
    write_cluster(tmp_path, [None, None])
    code, _, err = run(["up", "--data-dir", str(tmp_path), "--brokers", "2"])
    assert code == 1 and "describes 0 broker(s)" in err
    spec = cluster.plan_new_cluster(tmp_path, 1, 9093, {}, "cid", brokers=1)
    with pytest.raises(cluster.ClusterError, match="NAME\\[:PARTITIONS"):
        cluster.create_demo_topic(spec, "demo:three")
    controllers_only = cluster.plan_new_cluster(tmp_path, 1, 9093, {}, "cid")
    with pytest.raises(cluster.ClusterError, match="needs brokers"):
        cluster.create_demo_topic(controllers_only, "demo")


def test_base_port_zero_picks_distinct_free_ports(tmp_path: Path) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 3, 0, {}, "cid")
    ports = [n.port for n in spec.nodes]
    assert len(set(ports)) == 3
    assert not any(processes.port_in_use("127.0.0.1", p) for p in ports)


def test_cluster_file_round_trips_and_has_the_documented_shape(tmp_path: Path) -> None:
    spec = write_cluster(tmp_path, [4242, None])
    raw = json.loads((tmp_path / "cluster.json").read_text())
    assert raw["cluster_id"] == "AAAAAAAAAAAAAAAAAAAAAg"
    assert [(n["id"], n["port"], n["pid"]) for n in raw["nodes"]] == [(1, 9093, 4242), (2, 9094, None)]
    assert raw["nodes"][0]["log_dir"].endswith("node-1/metadata")
    loaded = cluster.ClusterFile.load(tmp_path / "cluster.json")
    assert loaded.to_json() == spec.to_json()


def test_corrupt_cluster_file_is_reported_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text("{not json")
    code, _, err = run(["down", "--data-dir", str(tmp_path)])
    assert code == 1
    assert "is not a valid cluster file" in err


def test_down_without_a_cluster_says_so(tmp_path: Path) -> None:
    code, _, err = run(["down", "--data-dir", str(tmp_path)])
    assert code == 1
    assert "no cluster was started" in err


def test_up_refuses_ports_in_use_before_touching_anything(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = run(
            ["up", "--data-dir", str(tmp_path / "d"), "--controllers", "1", "--base-port", str(port)]
        )
    assert code == 1
    assert f"127.0.0.1:{port} (node 1)" in err
    assert "already in use" in err
    assert not (tmp_path / "d").exists()


def test_up_refuses_node_directories_without_cluster_file(tmp_path: Path) -> None:
    (tmp_path / "node-1").mkdir()
    code, _, err = run(["up", "--data-dir", str(tmp_path), "--base-port", "0"])
    assert code == 1
    assert "no cluster.json" in err


def test_up_refuses_a_cluster_that_is_still_running(
    tmp_path: Path, stand_ins: list[subprocess.Popen[bytes]]
) -> None:
    spec = write_cluster(tmp_path, [None], ports=processes.free_ports(1))
    stand_ins.append(fake_server(spec.nodes[0].config_path))
    spec.nodes[0].pid = stand_ins[0].pid
    spec.save(tmp_path / "cluster.json")
    code, _, err = run(["up", "--data-dir", str(tmp_path)])
    assert code == 1
    assert f"already running (node 1 pid {stand_ins[0].pid})" in err
    assert stand_ins[0].poll() is None


def test_up_refuses_a_different_controller_count_for_an_existing_cluster(tmp_path: Path) -> None:
    write_cluster(tmp_path, [None, None, None])
    code, _, err = run(["up", "--data-dir", str(tmp_path), "--controllers", "5"])
    assert code == 1
    assert "describes 3 controller(s) but --controllers 5" in err


def test_down_stops_our_processes_and_clears_pids(
    tmp_path: Path, stand_ins: list[subprocess.Popen[bytes]]
) -> None:
    spec = write_cluster(tmp_path, [None, None])
    for node in spec.nodes:
        stand_ins.append(fake_server(node.config_path))
        node.pid = stand_ins[-1].pid
    spec.save(tmp_path / "cluster.json")
    code, out, _ = run(["down", "--data-dir", str(tmp_path)])
    assert code == 0
    assert "Stopped node(s) 1, 2" in out
    assert [p.wait(timeout=5) for p in stand_ins] == [-signal.SIGTERM, -signal.SIGTERM]
    assert [n.pid for n in cluster.ClusterFile.load(tmp_path / "cluster.json").nodes] == [None, None]


def test_down_never_signals_a_recycled_pid(tmp_path: Path) -> None:
    # Our own pid is alive but is not a kraft server for that config: it must be left alone.
    write_cluster(tmp_path, [os.getpid()])
    code, out, err = run(["down", "--data-dir", str(tmp_path)])
    assert code == 0
    assert f"pid {os.getpid()} is not running our server any more (stale)" in err
    assert "No node of the cluster" in out


def test_down_with_dead_pids_reports_them_as_stale(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_cluster(tmp_path, [dead.pid])
    code, _, err = run(["down", "--data-dir", str(tmp_path)])
    assert code == 0
    assert "stale" in err


def test_stop_escalates_to_sigkill_after_the_timeout(
    tmp_path: Path, stand_ins: list[subprocess.Popen[bytes]]
) -> None:
    config = tmp_path / "server.properties"
    stand_ins.append(fake_server(config, ignore_sigterm=True))
    started = time.monotonic()
    report = processes.stop_processes(
        [stand_ins[0].pid], timeout_s=0.3, children={stand_ins[0].pid: stand_ins[0]}
    )
    assert report.killed == (stand_ins[0].pid,)
    assert stand_ins[0].returncode == -signal.SIGKILL
    assert time.monotonic() - started < 5


def test_is_our_server_matches_the_config_path(
    tmp_path: Path, stand_ins: list[subprocess.Popen[bytes]]
) -> None:
    config = tmp_path / "a.properties"
    stand_ins.append(fake_server(config))
    assert processes.is_our_server(stand_ins[0].pid, config)
    assert not processes.is_our_server(stand_ins[0].pid, tmp_path / "b.properties")


def test_override_must_be_key_equals_value(tmp_path: Path) -> None:
    code, _, err = run(["up", "--data-dir", str(tmp_path), "--override", "novalue"])
    assert code == 1
    assert "--override expects KEY=VALUE" in err


def test_stop_node_refuses_a_node_that_is_not_running(tmp_path: Path) -> None:
    write_cluster(tmp_path, [None, None])
    code, _, err = run(["stop-node", "--id", "2", "--data-dir", str(tmp_path)])
    assert code == 1
    assert "node 2 is not running" in err
    code, _, err = run(["stop-node", "--id", "7", "--data-dir", str(tmp_path)])
    assert "no node 7" in err


# -------------------------------------------------------------------------------------------------
# --dynamic-voters (KIP-853)


def test_a_dynamic_quorum_lists_bootstrap_servers_not_voters(tmp_path: Path) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 3, 9093, {}, "cid", brokers=1)
    spec.dynamic_voters = True
    for node_id in (1, 2, 4):
        props = props_of(spec, node_id)
        assert "controller.quorum.voters" not in props
        assert props["controller.quorum.bootstrap.servers"] == "127.0.0.1:9093,127.0.0.1:9094,127.0.0.1:9095"


def test_the_first_controller_is_formatted_standalone_the_rest_join_as_observers(tmp_path: Path) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 2, 9093, {}, "cid", brokers=1)
    assert cluster.format_flags(spec, spec.node(1), standalone=True) == []  # static voters: no flag
    spec.dynamic_voters = True
    assert cluster.format_flags(spec, spec.node(1), standalone=True) == ["--standalone"]
    assert cluster.format_flags(spec, spec.node(2)) == ["--no-initial-controllers"]
    assert cluster.format_flags(spec, spec.node(3)) == []  # a broker-only node


def test_the_cluster_file_remembers_dynamic_voters(tmp_path: Path) -> None:
    spec = write_cluster(tmp_path, [None, None])
    assert json.loads((tmp_path / "cluster.json").read_text())["dynamic_voters"] is False
    spec.dynamic_voters = True
    spec.save(tmp_path / "cluster.json")
    assert cluster.ClusterFile.load(tmp_path / "cluster.json").dynamic_voters is True


@pytest.mark.parametrize("command", [["add-node"], ["remove-node", "--id", "1"]])
def test_voter_changes_need_a_dynamic_quorum(tmp_path: Path, command: list[str]) -> None:
    write_cluster(tmp_path, [None, None])
    code, _, err = run([*command, "--data-dir", str(tmp_path)])
    assert code == 1
    assert "has static voters" in err and "kraft cluster up --dynamic-voters" in err


def test_up_refuses_dynamic_voters_for_a_static_cluster(tmp_path: Path) -> None:
    write_cluster(tmp_path, [None, None])
    code, _, err = run(["up", "--dynamic-voters", "--data-dir", str(tmp_path)])
    assert code == 1 and "--dynamic-voters conflicts" in err


def test_remove_node_refuses_the_only_controller_and_brokers(tmp_path: Path) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 1, 9093, {}, "cid", brokers=1)
    spec.dynamic_voters = True
    spec.save(tmp_path / "cluster.json")
    code, _, err = run(["remove-node", "--id", "1", "--data-dir", str(tmp_path)])
    assert code == 1 and "the only controller" in err
    code, _, err = run(["remove-node", "--id", "2", "--data-dir", str(tmp_path)])
    assert code == 1 and "is not a controller" in err


def test_the_demo_topic_hint_names_the_tools_with_the_real_broker_addresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = cluster.plan_new_cluster(tmp_path, 3, 19093, {}, "cid", brokers=3)
    monkeypatch.setattr(sys, "argv", ["/usr/bin/pytest"])
    lines = cluster.data_tools_hint(spec, "demo").splitlines()
    servers = "127.0.0.1:19096,127.0.0.1:19097,127.0.0.1:19098"
    assert lines[1:] == [
        f"  kraft console-producer --bootstrap-server {servers} --topic demo",
        f"  kraft console-consumer --bootstrap-server {servers} --topic demo --from-beginning",
        f"  kraft get-offsets --bootstrap-server {servers} --topic demo",
        "or with kcat:",
        f"  kcat -b {servers} -t demo -P",
        f"  kcat -b {servers} -t demo -C -o beginning",
    ]
    # `make run` runs .venv/bin/kraft: another terminal needs that path unless it is the kraft on PATH.
    monkeypatch.setattr(sys, "argv", [".venv/bin/kraft", "cluster", "up"])
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "  .venv/bin/kraft console-producer --bootstrap-server" in cluster.data_tools_hint(spec, "demo")
