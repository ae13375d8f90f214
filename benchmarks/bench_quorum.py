"""Quorum benchmark: three voters on loopback (fsync on), 100-byte records, real processes.

    python benchmarks/bench_quorum.py [--quick] [--json] [--workdir DIR]
        [--only saturation|latency|failover]... [--linger-ms MS] [--max-in-flight N]
        [--raft-driver loop|thread|both] [--latency-runs N] [--tls]

Prints, each next to baselines measured in the same run on the same machine and disk:

* baselines: fdatasync latency of a 100-byte append in the benchmark's directory, the disk's
  sequential bandwidth (1 MiB writes, each fdatasync'ed), and the loopback TCP round trip of a
  100-byte message;
* committed throughput at saturation, with 100-byte and 1 KiB records (records/s and MB/s,
  measured by the leader's ``kraft test-raft-server`` over its time as leader, with the default
  ``controller.quorum.append.linger.ms`` of 25 ms). The leader offers more than the quorum can
  take, with at most ``--max-in-flight`` records (10,000) appended but not yet committed: the
  offered load, as a producer's ``max.in.flight`` and ``buffer.memory`` bound it. Higher bounds
  trade commit latency for throughput; the MB/s are shown against the disk's bandwidth;
* commit latency p50/p99 at ~100 appends/s (append call to commit notification on the leader),
  with ``controller.quorum.append.linger.ms`` 0 (``--linger-ms``), the median of
  ``--latency-runs`` runs (3) with their range, next to its floor (two
  fdatasyncs and two round trips), and the commit path stage by stage (``kraft.cli.commit_path``,
  from a second run whose voters run with ``--trace-commit-path``, which costs on the path);
* with ``--tls``, the same latency runs with the voters' listener on TLS (SSL, throwaway
  certificates), and the ratio to plaintext (issue #26's "commit latency over TLS");
* failover: from ``kill -9`` of the leader to the next committed append (the new leader's first
  commit in its epoch, wall clock), median and spread of several trials, with default timeouts,
  with ``controller.quorum.fetch.timeout.ms`` 1000 (the rest default), and with timeouts 10x
  smaller.

Every part runs with the nodes' ``raft.driver`` (``loop``, the default: the core on the event loop;
``thread``: on its own thread); ``--raft-driver both`` runs each part with each, in the same run.

Figures are reported, not gated: they depend on the machine and what else it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent / "src"))  # after PYTHONPATH (a compiled build)

from kraft.cli import cluster as cluster_cli
from kraft.cli import cluster_processes as processes
from kraft.cli.commit_path import commit_path_stages
from kraft.cli.write_stats import percentile
from kraft.client.admin import AdminClient
from kraft.client.connection import AdminError
from kraft.common.uuids import random_uuid, uuid_to_base64

RECORD_SIZE = 100

DEFAULT_TIMEOUTS: dict[str, str] = {}  # Kafka's defaults: election 1000, fetch 2000, backoff 1000
# The failover goal is set at etcd's election-timeout scale: fetch timeout 1 s, the rest default.
ONE_SECOND_FETCH_TIMEOUT = {"controller.quorum.fetch.timeout.ms": "1000"}
FAST_TIMEOUTS = {
    "controller.quorum.election.timeout.ms": "100",
    "controller.quorum.fetch.timeout.ms": "200",
    "controller.quorum.election.backoff.max.ms": "100",
    "controller.quorum.request.timeout.ms": "200",
}


# -------------------------------------------------------------------------------------------------
# Baselines


def fdatasync_latency_ms(directory: Path, samples: int) -> dict[str, float]:
    path = directory / "fsync-probe.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sync = getattr(os, "fdatasync", os.fsync)
    times: list[float] = []
    try:
        payload = b"x" * RECORD_SIZE
        for _ in range(samples):
            started = time.perf_counter()
            os.write(fd, payload)
            sync(fd)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    times.sort()
    return {"p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99), "samples": samples}


def disk_bandwidth_mb_s(directory: Path, total_mib: int) -> dict[str, float]:
    """Sequential writes of 1 MiB, each followed by fdatasync: what the log's disk can take."""
    path = directory / "bandwidth-probe.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sync = getattr(os, "fdatasync", os.fsync)
    chunk = os.urandom(1 << 20)
    try:
        started = time.perf_counter()
        for _ in range(total_mib):
            os.write(fd, chunk)
            sync(fd)
        elapsed = time.perf_counter() - started
    finally:
        os.close(fd)
        path.unlink()
    return {"mb_per_s": total_mib * (1 << 20) / 1e6 / elapsed, "mib": total_mib}


def loopback_rtt_us(samples: int) -> dict[str, float]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def echo() -> None:
        conn, _ = server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    client = socket.create_connection(server.getsockname())
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    payload = b"y" * RECORD_SIZE
    times: list[float] = []
    for _ in range(samples):
        started = time.perf_counter()
        client.sendall(payload)
        got = 0
        while got < len(payload):
            got += len(client.recv(65536))
        times.append((time.perf_counter() - started) * 1e6)
    client.close()
    server.close()
    times.sort()
    return {"p50_us": percentile(times, 50), "p99_us": percentile(times, 99), "samples": samples}


# -------------------------------------------------------------------------------------------------
# A three-voter cluster of test-raft-server processes


# Where the nodes run RaftNode.poll (raft.driver); set per run by main.
RAFT_DRIVER = {"raft.driver": "loop"}


def tls_overrides(pki_dir: Path) -> dict[str, str]:
    """The voters' listener on TLS: throwaway certificates (``tests/support/tls_certs.py``), the
    node's own connections trusting the same CA."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))
    from tls_certs import make_pki

    pki = make_pki(pki_dir) if not (pki_dir / "ca.pem").exists() else None
    directory = pki.directory if pki is not None else pki_dir
    return {
        "listener.security.protocol.map": f"{cluster_cli.LISTENER}:SSL",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(directory / "server.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(directory / "ca.pem"),
    }


class BenchCluster:
    def __init__(self, root: Path, overrides: dict[str, str]) -> None:
        self.spec = cluster_cli.plan_new_cluster(
            root, 3, 0, {**RAFT_DRIVER, **overrides}, cluster_id=uuid_to_base64(random_uuid())
        )
        root.mkdir(parents=True, exist_ok=True)
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def start(
        self,
        node_id: int,
        throughput: float,
        duration_s: float | None = None,
        max_in_flight: int = 10_000,
        trace: bool = False,
        record_size: int = RECORD_SIZE,
    ) -> None:
        node = self.spec.node(node_id)
        Path(node.node_dir).mkdir(parents=True, exist_ok=True)
        node.config_path.write_text(cluster_cli.node_properties(self.spec, node))
        if not (Path(node.log_dir) / "meta.properties").exists():
            cluster_cli.format_node(self.spec, node)
        args = [
            "test-raft-server",
            "--config",
            str(node.config_path),
            "--throughput",
            str(throughput),
            "--record-size",
            str(record_size),
            "--json",
            "--report-interval-s",
            "1",
            "--log-level",
            "WARNING",
            "--max-in-flight",
            str(max_in_flight),
        ]
        if duration_s is not None:
            args += ["--duration-s", str(duration_s)]
        if trace:
            args += ["--trace-commit-path", str(self.trace_path(node_id))]
        self.procs[node_id] = processes.start_kraft(args, node.server_log)

    def start_all(
        self,
        throughput: float,
        duration_s: float | None = None,
        trace: bool = False,
        max_in_flight: int = 10_000,
        record_size: int = RECORD_SIZE,
    ) -> None:
        for node in self.spec.nodes:
            self.start(node.id, throughput, duration_s, max_in_flight, trace, record_size)

    def trace_path(self, node_id: int) -> Path:
        return Path(self.spec.node(node_id).node_dir) / "commit-trace.jsonl"

    def trace_events(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for node in self.spec.nodes:
            path = self.trace_path(node.id)
            if path.exists():
                out += [json.loads(line) for line in path.read_text().splitlines() if line]
        return out

    def leader(self, timeout_s: float = 30.0) -> tuple[int, int]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                info = AdminClient(
                    self.spec.bootstrap(), timeout_ms=1_000, request_timeout_ms=500
                ).describe_quorum()
                return info.leader_id, info.leader_epoch
            except AdminError:
                continue
        raise RuntimeError(f"no leader within {timeout_s} s")

    def events(self, node_id: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        path = self.spec.node(node_id).server_log
        if not path.exists():
            return out
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
        return out

    def wait_all_exit(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for proc in self.procs.values():
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    def kill_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            proc.wait()


def leader_total(cluster: BenchCluster) -> dict[str, Any]:
    totals = [
        e for i in (1, 2, 3) for e in cluster.events(i) if e.get("type") == "total" and e.get("records")
    ]
    if not totals:
        raise RuntimeError("no node reported committed records; see the server.log files")
    return max(totals, key=lambda e: e["records"])


def run_fixed_rate(
    root: Path,
    throughput: float,
    duration_s: float,
    overrides: dict[str, str] | None = None,
    trace: bool = False,
    max_in_flight: int = 10_000,
    record_size: int = RECORD_SIZE,
) -> dict[str, Any]:
    cluster = BenchCluster(root, DEFAULT_TIMEOUTS if overrides is None else overrides)
    try:
        cluster.start_all(throughput, duration_s, trace, max_in_flight, record_size)
        cluster.wait_all_exit(duration_s + 60)
        total = leader_total(cluster)
        if trace:
            total["stages"] = commit_path_stages(cluster.trace_events(), total["node_id"])
        return total
    finally:
        cluster.kill_all()


def run_failover(root: Path, overrides: dict[str, str], trials: int) -> dict[str, Any]:
    cluster = BenchCluster(root, overrides)
    samples_ms: list[float] = []
    try:
        cluster.start_all(100.0)
        for _ in range(trials):
            leader, epoch = cluster.leader()
            # Let the leader commit in its epoch first, so the cluster is in steady state.
            deadline = time.monotonic() + 30
            while not any(
                e.get("type") == "first_commit" and e.get("epoch") == epoch for e in cluster.events(leader)
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"leader {leader} never committed in epoch {epoch}")
                time.sleep(0.05)
            time.sleep(0.5)
            killed_at_ms = time.time_ns() // 1_000_000
            os.kill(cluster.procs[leader].pid, signal.SIGKILL)
            cluster.procs[leader].wait()
            survivors = [i for i in (1, 2, 3) if i != leader]
            first_commit = None
            deadline = time.monotonic() + 60
            while first_commit is None and time.monotonic() < deadline:
                for node_id in survivors:
                    for e in cluster.events(node_id):
                        if (
                            e.get("type") == "first_commit"
                            and e["epoch"] > epoch
                            and e["wall_time_ms"] >= killed_at_ms
                        ):
                            first_commit = e
                            break
                    if first_commit:
                        break
                time.sleep(0.02)
            if first_commit is None:
                raise RuntimeError("no commit after the leader was killed within 60 s")
            samples_ms.append(first_commit["wall_time_ms"] - killed_at_ms)
            cluster.start(leader, 100.0)  # the old leader rejoins as a follower for the next trial
    finally:
        cluster.kill_all()
    ordered = sorted(samples_ms)
    return {
        "trials": len(ordered),
        "median_ms": statistics.median(ordered),
        "min_ms": ordered[0],
        "max_ms": ordered[-1],
        "samples_ms": ordered,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (a smoke test of the script)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--workdir", default=None, help="where the nodes keep their logs (default: a temp dir)"
    )
    parser.add_argument(
        "--only",
        choices=("saturation", "latency", "failover"),
        action="append",
        help="run only these parts (repeatable; default: all)",
    )
    parser.add_argument(
        "--linger-ms",
        type=int,
        default=0,
        help="controller.quorum.append.linger.ms of the latency run (default 0; Kafka's default is 25)",
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=10_000,
        help="records appended but not committed that the saturation leader allows (default %(default)s)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="also run the latency part with the voters' listener on TLS (SSL), and print its ratio",
    )
    parser.add_argument(
        "--latency-runs",
        type=int,
        default=3,
        help="untraced runs of the latency part; the median run is reported (default %(default)s)",
    )
    parser.add_argument(
        "--raft-driver",
        choices=("loop", "thread", "both"),
        default="loop",
        help="where the nodes run the raft core (raft.driver); both: every part with each, same run",
    )
    ns = parser.parse_args()
    if ns.latency_runs < 1:
        parser.error("--latency-runs must be at least 1")
    if ns.tls and ns.only and "latency" not in ns.only:
        parser.error("--tls compares the latency part: it needs --only latency (or no --only)")
    parts = set(ns.only or ("saturation", "latency", "failover"))
    drivers = ("loop", "thread") if ns.raft_driver == "both" else (ns.raft_driver,)
    saturation_s = 5.0 if ns.quick else 15.0
    latency_s = 5.0 if ns.quick else 15.0
    trials = 2 if ns.quick else 5

    with tempfile.TemporaryDirectory(prefix="kraft-bench-", dir=ns.workdir) as tmp:
        root = Path(tmp)
        results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
        print("baselines ...", file=sys.stderr)
        results["fdatasync_100B"] = fdatasync_latency_ms(root, 100 if ns.quick else 300)
        results["loopback_rtt_100B"] = loopback_rtt_us(500 if ns.quick else 2000)
        results["disk_bandwidth"] = disk_bandwidth_mb_s(root, 64 if ns.quick else 256)
        results["runs"] = {}
        for driver in drivers:
            RAFT_DRIVER["raft.driver"] = driver
            print(f"raft.driver={driver}", file=sys.stderr)
            run: dict[str, Any] = results["runs"].setdefault(driver, {})
            if "saturation" in parts:
                for key, size in (("saturation", RECORD_SIZE), ("saturation_1KiB", 1024)):
                    print(f"saturation, {size}-byte records ...", file=sys.stderr)
                    run[key] = run_fixed_rate(
                        root / driver / key,
                        10_000_000.0,
                        saturation_s,
                        max_in_flight=ns.max_in_flight,
                        record_size=size,
                    )
                    run[key]["max_in_flight"] = ns.max_in_flight
            if "latency" in parts:
                print(f"commit latency at 100/s, linger {ns.linger_ms} ms ...", file=sys.stderr)
                linger = {"controller.quorum.append.linger.ms": str(ns.linger_ms)}
                # The headline figure comes from a run without the commit-path trace (noting and
                # buffering its events costs on the path it measures); a second, traced run gives
                # the stage-by-stage breakdown.
                # Several runs: the figure moves by a few tenths of a millisecond from one run to
                # the next on a shared 2-CPU machine; the median run is reported with the range.
                runs = [
                    run_fixed_rate(root / driver / f"latency-{i}", 100.0, latency_s, linger)
                    for i in range(ns.latency_runs)
                ]
                runs.sort(key=lambda r: r["latency_ms"]["p50"])
                run["at_100_per_s"] = dict(runs[len(runs) // 2])
                run["at_100_per_s"]["runs_p50_ms"] = [r["latency_ms"]["p50"] for r in runs]
                run["at_100_per_s"]["runs_p99_ms"] = sorted(r["latency_ms"]["p99"] for r in runs)
                run["at_100_per_s"]["linger_ms"] = ns.linger_ms
                traced = run_fixed_rate(
                    root / driver / "latency-traced", 100.0, latency_s, linger, trace=True
                )
                run["at_100_per_s"]["stages"] = traced["stages"]
                run["at_100_per_s"]["traced_latency_ms"] = traced["latency_ms"]
                if ns.tls:
                    print("commit latency at 100/s over TLS ...", file=sys.stderr)
                    tls = {**linger, **tls_overrides(root / "pki")}
                    tls_runs = sorted(
                        (
                            run_fixed_rate(root / driver / f"latency-tls-{i}", 100.0, latency_s, tls)
                            for i in range(ns.latency_runs)
                        ),
                        key=lambda r: r["latency_ms"]["p50"],
                    )
                    run["at_100_per_s_tls"] = dict(tls_runs[len(tls_runs) // 2])
                    run["at_100_per_s_tls"]["runs_p50_ms"] = [r["latency_ms"]["p50"] for r in tls_runs]
            if "failover" in parts:
                print("failover (default timeouts) ...", file=sys.stderr)
                run["failover_default"] = run_failover(
                    root / driver / "failover-default", DEFAULT_TIMEOUTS, trials
                )
                print("failover (fetch timeout 1000 ms) ...", file=sys.stderr)
                run["failover_1s"] = run_failover(
                    root / driver / "failover-1s", ONE_SECOND_FETCH_TIMEOUT, trials
                )
                print("failover (timeouts / 10) ...", file=sys.stderr)
                run["failover_fast"] = run_failover(root / driver / "failover-fast", FAST_TIMEOUTS, trials)

    if ns.json:
        print(json.dumps(results, indent=2))
        return 0
    fs, rtt = results["fdatasync_100B"], results["loopback_rtt_100B"]
    print(f"machine: {results['machine']['cpus']} CPUs, Python {results['machine']['python']}")
    print(f"baseline fdatasync (100 B append):   p50 {fs['p50_ms']:.2f} ms   p99 {fs['p99_ms']:.2f} ms")
    print(f"baseline loopback TCP round trip:    p50 {rtt['p50_us']:.0f} us   p99 {rtt['p99_us']:.0f} us")
    disk = results["disk_bandwidth"]["mb_per_s"]
    print(f"baseline disk bandwidth (1 MiB + fdatasync): {disk:.0f} MB/s")
    for driver, run in results["runs"].items():
        print(f"raft.driver={driver}:")
        for key, label in (("saturation", "100 B"), ("saturation_1KiB", "1 KiB")):
            if key in run:
                sat = run[key]
                print(
                    f"saturation, 3 voters, fsync on, {label} records: {sat['records_per_s']:.0f} records/s  "
                    f"{sat['mb_per_s']:.2f} MB/s ({sat['mb_per_s'] / disk:.2f} of the disk)"
                    f"  commit latency p50 {sat['latency_ms']['p50']:.1f} ms,"
                    f" p99 {sat['latency_ms']['p99']:.1f} ms"
                    f"  (at most {sat['max_in_flight']} records in flight)"
                )
        if "at_100_per_s" in run:
            lat = run["at_100_per_s"]
            floor = 2 * fs["p50_ms"] + 2 * rtt["p50_us"] / 1000
            p50s, p99s = lat["runs_p50_ms"], lat["runs_p99_ms"]
            print(
                f"commit latency at ~100 appends/s:    p50 {lat['latency_ms']['p50']:.2f} ms   "
                f"p99 {lat['latency_ms']['p99']:.2f} ms"
                f"   ({lat['records_per_s']:.0f} records/s committed, linger {lat['linger_ms']} ms;"
                f" median of {len(p50s)} runs: p50 {p50s[0]:.2f}-{p50s[-1]:.2f} ms,"
                f" p99 {p99s[0]:.2f}-{p99s[-1]:.2f} ms)"
            )
            print(
                f"  floor (2 fdatasync + 2 round trips, p50s): {floor:.2f} ms; "
                f"ratio latency p50 / floor: {lat['latency_ms']['p50'] / floor:.1f}"
            )
            if "at_100_per_s_tls" in run:
                tls_lat = run["at_100_per_s_tls"]["latency_ms"]
                print(
                    f"  over TLS (the voters' listener SSL): p50 {tls_lat['p50']:.2f} ms   "
                    f"p99 {tls_lat['p99']:.2f} ms; ratio to plaintext p50 "
                    f"{tls_lat['p50'] / lat['latency_ms']['p50']:.2f}, p99 "
                    f"{tls_lat['p99'] / lat['latency_ms']['p99']:.2f}"
                )
            stages = lat.get("stages", {})
            if stages.get("stages"):
                traced = lat["traced_latency_ms"]
                print(
                    f"  commit path, stage by stage ({stages['commits']} commits of a second, traced run:"
                    f" p50 {traced['p50']:.2f} ms, p99 {traced['p99']:.2f} ms):"
                )
                for row in stages["stages"]:
                    print(f"    {row['stage']:<58} p50 {row['p50_ms']:6.3f} ms   p99 {row['p99_ms']:6.3f} ms")
        if "failover_default" in run:
            fd, f1, ff = run["failover_default"], run["failover_1s"], run["failover_fast"]
            print(
                f"failover, default timeouts:          median {fd['median_ms']:.0f} ms  "
                f"(min {fd['min_ms']:.0f}, max {fd['max_ms']:.0f}, {fd['trials']} trials)"
            )
            print(
                f"failover, fetch timeout 1000 ms:     median {f1['median_ms']:.0f} ms  "
                f"(min {f1['min_ms']:.0f}, max {f1['max_ms']:.0f}, {f1['trials']} trials)"
            )
            print(
                f"failover, timeouts / 10:             median {ff['median_ms']:.0f} ms  "
                f"(min {ff['min_ms']:.0f}, max {ff['max_ms']:.0f}, {ff['trials']} trials)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
