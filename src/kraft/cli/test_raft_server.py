"""``kraft test-raft-server``: a raft node that, while it leads, appends records at a fixed rate
and reports committed throughput and commit latency (Kafka's ``TestRaftServer``). No quorum
controller runs on it: its records are test payloads, not metadata.

    kraft test-raft-server --config server.properties --throughput 1000 --record-size 100 \\
        [--duration-s 30] [--report-interval-s 5] [--json] [--override KEY=VALUE]...

Run it on every voter (it *is* the voter: the same process as ``kraft server-start`` plus a
workload). Whichever node is leader appends; the others just replicate. Each report covers the
records committed in the leader's current epoch since the last report: records/s, MB/s and commit
latency p50/p99/p99.9/max, where latency runs from the ``schedule_append`` call to the commit
notification on the same node (one clock, like Kafka's tool). A summary of the whole run is printed
at the end (after ``--duration-s``, or on SIGTERM/Ctrl-C); with ``--json`` every report is one JSON
object per line on stdout. Logs go to stderr.

Payloads are ``<node>:<epoch>:<seq>:`` padded with dots to ``--record-size`` bytes, so every record
is distinct and a test can compare logs across nodes record by record.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from kraft.cli.common import parse_args, streams
from kraft.cli.write_stats import Summary, Throttler, WriteStats
from kraft.common import commit_trace
from kraft.common.errors import ConfigError, KraftError
from kraft.node.node import Node

# Upper bound on records handed to one schedule_append call (keeps a batch well under 8 MiB and a
# single raft-thread task short after a stall).
MAX_RECORDS_PER_APPEND = 2000
# How often the event loop pokes the workload when the rate would allow a longer wait.
MAX_TICK_S = 0.05
# Appended but not yet committed records allowed at once. Beyond it, due records are skipped, not
# queued: at saturation the log, not an ever-growing backlog in memory, sets the pace.
DEFAULT_MAX_IN_FLIGHT = 20_000


@dataclass(slots=True)
class _Pending:
    first_offset: int
    last_offset: int
    next_offset: int  # first offset of this append not yet seen committed
    appended_s: float


class Workload:
    """The listener and append loop. Every method runs on the raft thread (``handle_*`` inside
    ``poll``; ``tick`` through ``submit``), so none of this state needs a lock."""

    def __init__(
        self,
        node_id: int,
        rate: float,
        record_size: int,
        out: TextIO,
        as_json: bool,
        report_interval_s: float,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    ) -> None:
        self.node_id = node_id
        self.max_in_flight = max_in_flight
        self.in_flight = 0
        self.skipped = 0
        self._first_commit_seen = False
        self.record_size = record_size
        self.out = out
        self.as_json = as_json
        self.report_interval_s = report_interval_s
        now = time.perf_counter()
        self.throttler = Throttler(rate, now)
        self.stats = WriteStats(started_s=now)
        self.claimed_epoch: int | None = None
        self.pending: collections.deque[_Pending] = collections.deque()
        self.sequence = 0
        self.epochs_led: list[int] = []
        self.not_leader_errors = 0
        self._next_report_s = now + report_interval_s
        # Time spent as leader: the run's throughput is measured over it, not over startup,
        # elections or the shutdown that follows.
        self._led_s = 0.0
        self._lead_started_s: float | None = None

    # -- RaftListener -------------------------------------------------------------------------

    def handle_leader_change(self, leader: Any) -> None:
        now = time.perf_counter()
        if leader.leader_id == self.node_id:
            self.claimed_epoch = leader.epoch
            self.epochs_led.append(leader.epoch)
            self.throttler.reset(now)
            self.pending.clear()
            self.in_flight = 0
            self._first_commit_seen = False
            if self._lead_started_s is None:
                self._lead_started_s = now
            self._emit_event("claimed", leader.epoch)
        elif self.claimed_epoch is not None:
            self._emit_event("resigned", self.claimed_epoch)
            self.claimed_epoch = None
            self.pending.clear()
            self.in_flight = 0
            if self._lead_started_s is not None:
                self._led_s += now - self._lead_started_s
                self._lead_started_s = None

    def time_as_leader_s(self, now_s: float) -> float:
        current = 0.0 if self._lead_started_s is None else now_s - self._lead_started_s
        return self._led_s + current

    def total(self, now_s: float) -> Summary:
        """The whole run, with rates over the time this node was leader."""
        return self.stats.total_over(self.time_as_leader_s(now_s))

    def handle_commit(self, batch: Any) -> None:
        if batch.is_control or batch.epoch != self.claimed_epoch:
            return  # only our own epoch's appends have a start time on our clock
        now = time.perf_counter()
        if commit_trace.TRACE is not None:
            commit_trace.TRACE.note(commit_trace.COMMITTED, batch.last_offset)
        while self.pending and self.pending[0].first_offset <= batch.last_offset:
            entry = self.pending[0]
            upto = min(entry.last_offset, batch.last_offset)
            latency_ms = (now - entry.appended_s) * 1000
            done = max(0, upto - entry.next_offset + 1)
            for _ in range(done):
                self.stats.record(latency_ms, self.record_size)
            self.in_flight -= done
            if done and not self._first_commit_seen:
                self._first_commit_seen = True
                self._emit_event("first_commit", batch.epoch)
            entry.next_offset = upto + 1
            if upto < entry.last_offset:
                break
            self.pending.popleft()

    def handle_load_snapshot(self, reader: Any) -> None:
        """Snapshots carry nothing this workload measures."""

    # -- driving ------------------------------------------------------------------------------

    def payload(self, epoch: int) -> bytes:
        self.sequence += 1
        prefix = f"{self.node_id}:{epoch}:{self.sequence}:".encode()
        return prefix[: self.record_size].ljust(self.record_size, b".")

    def tick(self, node: Node, _now_ms: int) -> float:
        """Appends what is due and reports if a window elapsed; returns seconds until next due."""
        now = time.perf_counter()
        if now >= self._next_report_s:
            self._next_report_s = now + self.report_interval_s
            self.report(self.stats.take_window(now), "interval")
        epoch = self.claimed_epoch
        if epoch is None:
            return MAX_TICK_S
        due = self.throttler.due(now)
        room = max(0, self.max_in_flight - self.in_flight)
        if due > room:
            self.skipped += due - room
            due = room
        while due > 0:
            count = min(due, MAX_RECORDS_PER_APPEND)
            due -= count
            records = [self.payload(epoch) for _ in range(count)]
            try:
                last_offset = int(node.raft.schedule_append(epoch, records))
            except KraftError:
                # Lost leadership between the notification and this tick; the leader-change
                # callback will follow.
                self.not_leader_errors += 1
                return MAX_TICK_S
            first = last_offset - count + 1
            if commit_trace.TRACE is not None:
                commit_trace.TRACE.note(commit_trace.APPEND, first, last_offset)
            self.pending.append(_Pending(first, last_offset, first, now))
            self.in_flight += count
        return max(0.0, min(MAX_TICK_S, self.throttler.next_due_s() - time.perf_counter()))

    # -- output -------------------------------------------------------------------------------

    def report(self, summary: Summary, kind: str) -> None:
        if self.as_json:
            obj = {
                "type": kind,
                "node_id": self.node_id,
                "leader_epoch": self.claimed_epoch,
                **summary.to_json(),
            }
            print(json.dumps(obj), file=self.out, flush=True)
        elif kind == "interval":
            if summary.records or self.claimed_epoch is not None:
                print(f"[node {self.node_id}] {summary.text()}", file=self.out, flush=True)
        else:
            print(f"[node {self.node_id}] total: {summary.text()}", file=self.out, flush=True)

    def _emit_event(self, kind: str, epoch: int) -> None:
        # Wall-clock time, so that another process (the failover benchmark) can line events up
        # with its own clock on the same machine.
        wall_ms = time.time_ns() // 1_000_000
        if self.as_json:
            obj = {"type": kind, "node_id": self.node_id, "epoch": epoch, "wall_time_ms": wall_ms}
            print(json.dumps(obj), file=self.out, flush=True)
        else:
            what = {
                "claimed": "leader; appending",
                "resigned": "no longer leader; stopped appending",
                "first_commit": "first append of this epoch committed",
            }[kind]
            print(f"[node {self.node_id}] epoch {epoch}: {what}", file=self.out, flush=True)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kraft test-raft-server",
        description="Run a controller that appends at a fixed rate while leader and reports commit latency.",
    )
    p.add_argument("--config", required=True, help="server.properties of this node")
    p.add_argument(
        "--throughput", type=float, required=True, help="records per second to append while leader"
    )
    p.add_argument("--record-size", type=int, required=True, help="bytes per record")
    p.add_argument(
        "--duration-s", type=float, default=None, help="stop after this many seconds (default: run)"
    )
    p.add_argument("--report-interval-s", type=float, default=5.0, help="seconds between reports (default 5)")
    p.add_argument("--json", action="store_true", help="one JSON object per report on stdout")
    p.add_argument(
        "--max-in-flight",
        type=int,
        default=DEFAULT_MAX_IN_FLIGHT,
        help="appended-but-uncommitted records allowed; due records beyond are skipped (default %(default)s)",
    )
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="override a property")
    p.add_argument("--log-level", default="INFO", help="log level of the node's stderr log (default INFO)")
    p.add_argument("--no-uvloop", action="store_true", help="use asyncio's default event loop")
    p.add_argument(
        "--trace-commit-path",
        metavar="FILE",
        default=None,
        help="note when each Fetch and its data pass the raft thread and the event loop, and write "
        "the events to FILE as JSON lines on exit (benchmarks/bench_quorum.py's per-stage breakdown)",
    )
    return p


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = streams(out, err)
    ns = parse_args(build_parser(), argv)
    if isinstance(ns, int):
        return ns
    if ns.throughput <= 0 or ns.record_size <= 0 or ns.report_interval_s <= 0:
        print("error: --throughput, --record-size and --report-interval-s must be positive", file=err)
        return 2
    if ns.duration_s is not None and ns.duration_s <= 0:
        print("error: --duration-s must be positive", file=err)
        return 2

    from kraft.cli.server_start import configure_logging, parse_overrides
    from kraft.server.config import load_server_config
    from kraft.server.kraft_server import KraftServer, run_server

    configure_logging(ns.log_level, err)
    try:
        config = load_server_config(ns.config, parse_overrides(ns.override))
    except (ConfigError, OSError) as e:
        print(f"error: {e}", file=err)
        return 1
    trace = commit_trace.enable(config.node_id) if ns.trace_commit_path else None
    workload = Workload(
        config.node_id, ns.throughput, ns.record_size, out, ns.json, ns.report_interval_s, ns.max_in_flight
    )
    tasks: list[asyncio.Task[None]] = []
    started_s = time.perf_counter()

    async def drive(server: KraftServer) -> None:
        await server.submit(lambda node, _now: node.raft.register(workload))
        while True:
            if ns.duration_s is not None and time.perf_counter() - started_s >= ns.duration_s:
                await server.stop()
                return
            try:
                wait_s = await server.submit(workload.tick)
            except RuntimeError:
                return  # the raft thread stopped (shutdown or fatal): the server reports why
            await asyncio.sleep(max(0.001, wait_s))

    def on_started(server: KraftServer) -> None:
        tasks.append(asyncio.get_running_loop().create_task(drive(server)))

    try:
        # A bare raft node: the workload's records are not metadata, so no controller replays them.
        code = run_server(config, on_started=on_started, use_uvloop=not ns.no_uvloop, with_controller=False)
    except (ConfigError, KraftError, OSError) as e:
        print(f"error: {e}", file=err)
        return 1
    except KeyboardInterrupt:
        code = 0
    workload.report(workload.total(time.perf_counter()), "total")
    if trace is not None:
        try:
            trace.dump(ns.trace_commit_path)
        except OSError as e:
            print(f"error: cannot write the commit path trace: {e}", file=err)
            return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
