"""A tiny deterministic in-memory cluster for core tests (the real simulator lives in kraft.sim)."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

from kraft.raft.listener import CommittedBatch, SnapshotReader
from kraft.raft.log import MemoryLog
from kraft.raft.messages import Envelope
from kraft.raft.node import QuorumConfig, RaftNode
from kraft.raft.states import Role
from kraft.raft.store import MemoryElectionStore
from kraft.raft.types import LeaderAndEpoch


@dataclass
class RecordingListener:
    commits: list[CommittedBatch] = field(default_factory=list)
    snapshots: list[SnapshotReader] = field(default_factory=list)
    leaders: list[LeaderAndEpoch] = field(default_factory=list)

    def handle_commit(self, batch: CommittedBatch) -> None:
        self.commits.append(batch)

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.snapshots.append(reader)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leaders.append(leader)

    def values(self) -> list[bytes]:
        out: list[bytes] = []
        for s in self.snapshots[-1:]:
            out = list(s.records())
        for c in self.commits:
            out.extend(c.records)
        return out


class Cluster:
    """Nodes polled every ``step_ms``; messages delivered on the next step unless dropped."""

    def __init__(
        self, voters: list[int], observers: tuple[int, ...] = (), *, seed: int = 0, **config: object
    ) -> None:
        config.setdefault("fetch_max_wait_ms", 100)  # as in the spec's simulation setup
        self.config = QuorumConfig(voters={v: () for v in voters}, **config)  # type: ignore[arg-type]
        self.now_ms = 0
        self.seed = seed
        self.logs = {n: MemoryLog() for n in [*voters, *observers]}
        self.stores = {n: MemoryElectionStore() for n in [*voters, *observers]}
        self.listeners = {n: RecordingListener() for n in [*voters, *observers]}
        self.nodes: dict[int, RaftNode] = {}
        self.down: set[int] = set()
        self.isolated: set[int] = set()
        self.in_flight: list[Envelope] = []
        for n in [*voters, *observers]:
            self.start(n)

    def start(self, n: int) -> None:
        node = RaftNode(
            node_id=n,
            directory_id=uuid.UUID(int=n + 100),
            cluster_id="test-cluster",
            config=self.config,
            log=self.logs[n],
            store=self.stores[n],
            rng=random.Random(f"{self.seed}:{n}:{self.now_ms}"),
            now_ms=self.now_ms,
        )
        self.listeners[n] = RecordingListener()
        node.register(self.listeners[n])
        self.nodes[n] = node
        self.down.discard(n)

    def crash(self, n: int) -> None:
        self.logs[n].crash()
        self.down.add(n)

    def step(self, step_ms: int = 5) -> None:
        self.now_ms += step_ms
        inbound: dict[int, list[Envelope]] = {n: [] for n in self.nodes}
        for env in self.in_flight:
            cut = env.source in self.isolated or env.destination in self.isolated
            if env.destination in inbound and not cut:
                inbound[env.destination].append(env)
        self.in_flight = []
        for n, node in self.nodes.items():
            if n in self.down:
                continue
            result = node.poll(self.now_ms, inbound[n])
            self.in_flight.extend(result.outbound)

    def run_until(self, predicate, max_ms: int = 60_000) -> None:  # type: ignore[no-untyped-def]
        deadline = self.now_ms + max_ms
        while not predicate():
            if self.now_ms >= deadline:
                raise AssertionError(f"condition not reached by {deadline} ms: {self.describe()}")
            self.step()

    def leader(self) -> RaftNode | None:
        leaders = [n for i, n in self.nodes.items() if i not in self.down and n.role is Role.LEADER]
        return leaders[0] if len(leaders) == 1 else None

    def elected_leader(self) -> RaftNode:
        """Run until one leader knows its high watermark; that leader."""
        self.run_until(lambda: (ld := self.leader()) is not None and ld.high_watermark is not None)
        leader = self.leader()
        assert leader is not None and leader.node_id is not None
        return leader

    def describe(self) -> str:
        return ", ".join(
            f"{i}:{n.role.name}(e={n.epoch},l={n.leader_id},hw={n.high_watermark},leo={n.log.end_offset()})"
            for i, n in self.nodes.items()
        )
