"""A tiny stand-in for ``RaftNode`` that exercises the world's plumbing without the real core."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from kraft.raft.messages import BeginQuorumEpochRequest, Envelope
from kraft.raft.types import ReplicaKey


class FakeRole(enum.Enum):
    FOLLOWER = enum.auto()
    LEADER = enum.auto()


@dataclass
class FakeResult:
    outbound: list[Envelope]
    wake_at_ms: int


@dataclass
class FakeRaft:
    """Pings every peer every ``period_ms``; remembers what it received. Observation attributes are
    plain fields so a test can set them to provoke an invariant checker."""

    node_id: int
    peers: list[int]
    log: Any
    store: Any
    period_ms: int = 100
    role: FakeRole = FakeRole.FOLLOWER
    epoch: int = 0
    leader_id: int | None = None
    high_watermark: int | None = None
    received: list[tuple[int, int, int]] = field(default_factory=list)  # requests: (now, source, corr)
    # Responses (the world's error answers: nobody else answers a ping): (now, source, corr, error).
    answers: list[tuple[int, int, int, int]] = field(default_factory=list)
    polls: list[int] = field(default_factory=list)
    listener: Any = None
    _next_ping: int = 0
    _corr: int = 0

    @property
    def raft(self) -> FakeRaft:
        """The world reads a node's raft core from its process: the fake plays both."""
        return self

    def register(self, listener: Any) -> None:
        self.listener = listener

    def poll(self, now_ms: int, inbound: Any = ()) -> FakeResult:
        self.polls.append(now_ms)
        for env in inbound:
            if env.is_request:
                self.received.append((now_ms, env.source, env.correlation_id))
            else:
                self.answers.append((now_ms, env.source, env.correlation_id, env.body.error_code))
        out: list[Envelope] = []
        if now_ms >= self._next_ping:
            for peer in self.peers:
                self._corr += 1
                body = BeginQuorumEpochRequest(
                    cluster_id=None, voter_key=ReplicaKey(peer), leader_id=self.node_id, leader_epoch=0
                )
                out.append(Envelope(self.node_id, peer, self._corr, body))
            self._next_ping = now_ms + self.period_ms
        return FakeResult(out, self._next_ping)

    def schedule_append(self, epoch: int, records: Any) -> int:
        return 0

    def resign(self, epoch: int) -> None:
        pass

    def shutdown(self, now_ms: int, timeout_ms: int) -> None:
        pass

    def is_shutdown_complete(self, now_ms: int) -> bool:
        return True

    def create_snapshot(self, snapshot_id: Any, ts: int) -> Any:
        return None


def fake_factory(world: Any, node: Any) -> FakeRaft:
    peers = [n for n in world.nodes if n != node.node_id]
    return FakeRaft(node_id=node.node_id, peers=peers, log=node.log, store=node.store)
