"""``RaftTestContext``: one node under test, driven message by message (Kafka's RaftClientTestContext).

ctx = (RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
       .with_elected_leader(epoch=5, leader_id=2)
       .build())
ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=5, last_offset=10))
ctx.poll()
ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=False)
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Any

from clusters import RecordingListener

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.log import MemoryLog
from kraft.raft.messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    Envelope,
    FetchRequest,
    FetchResponse,
    RaftRpc,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.node import QuorumConfig, RaftNode
from kraft.raft.store import ElectionState, MemoryElectionStore
from kraft.raft.types import ReplicaKey
from kraft.records.batch import SimpleRecord, build_batch

CLUSTER_ID = "ctx-cluster"


def dir_id(node_id: int) -> uuid.UUID:
    return uuid.UUID(int=node_id + 100)


class RecordingStore(MemoryElectionStore):
    """Remembers every write; can be told to fail (a broken disk)."""

    def __init__(self, state: ElectionState | None = None) -> None:
        super().__init__(state)
        self.history: list[ElectionState] = []
        self.fail = False

    def write(self, state: ElectionState) -> None:
        if self.fail:
            raise OSError("disk failure injected by the test")
        super().write(state)
        self.history.append(state)


@dataclass
class Builder:
    local_id: int | None
    voters: list[int]
    config: dict[str, Any] = field(default_factory=dict)
    state: ElectionState | None = None
    log_epochs: list[int] = field(default_factory=list)
    now_ms: int = 0
    seed: int = 0
    log: Any = None  # a ReplicatedLog to use instead of a fresh MemoryLog (empty)

    def with_elected_leader(self, *, epoch: int, leader_id: int) -> Builder:
        self.state = ElectionState(epoch, leader_id=leader_id)
        return self

    def with_voted_candidate(self, *, epoch: int, candidate_id: int) -> Builder:
        self.state = ElectionState(epoch, voted_key=ReplicaKey(candidate_id, dir_id(candidate_id)))
        return self

    def with_unknown_leader(self, *, epoch: int) -> Builder:
        self.state = ElectionState(epoch)
        return self

    def with_log(self, *epochs: int) -> Builder:
        """One single-record batch per listed epoch (non-decreasing)."""
        self.log_epochs = list(epochs)
        return self

    def with_config(self, **config: Any) -> Builder:
        self.config.update(config)
        return self

    def with_log_instance(self, log: Any) -> Builder:
        self.log = log
        return self

    def build(self) -> RaftTestContext:
        log = MemoryLog() if self.log is None else self.log
        for i, epoch in enumerate(self.log_epochs):
            log.append_as_follower(
                build_batch([SimpleRecord(value=b"r%d" % i)], base_offset=i, partition_leader_epoch=epoch),
                epoch,
            )
        log.flush()
        store = RecordingStore(self.state)
        config = QuorumConfig(voters={v: () for v in self.voters}, **self.config)
        node = RaftNode(
            node_id=self.local_id,
            directory_id=dir_id(self.local_id if self.local_id is not None else 999),
            cluster_id=CLUSTER_ID,
            config=config,
            log=log,
            store=store,
            rng=random.Random(self.seed),
            now_ms=self.now_ms,
        )
        listener = RecordingListener()
        node.register(listener)
        return RaftTestContext(node, log, store, listener, self.now_ms)


class RaftTestContext:
    def __init__(
        self, node: RaftNode, log: MemoryLog, store: RecordingStore, listener: RecordingListener, now_ms: int
    ) -> None:
        self.node = node
        self.log = log
        self.store = store
        self.listener = listener
        self.now_ms = now_ms
        self.inbound: list[Envelope] = []
        self.sent: list[Envelope] = []
        self.wake_at_ms: int | None = None
        self._next_cid = 10_000

    @staticmethod
    def builder(*, local_id: int | None, voters: list[int]) -> Builder:
        return Builder(local_id, voters)

    # ---- driving -----------------------------------------------------------------------------

    def deliver(self, body: RaftRpc, *, source: int = 2, correlation_id: int | None = None) -> Envelope:
        if correlation_id is None:
            correlation_id = self._next_cid
            self._next_cid += 1
        env = Envelope(source, self.node.source_id, correlation_id, body)
        self.inbound.append(env)
        return env

    def respond_to(self, request: Envelope, body: RaftRpc) -> None:
        self.inbound.append(Envelope(request.destination, request.source, request.correlation_id, body))

    def poll(self, advance_ms: int = 0) -> list[Envelope]:
        self.now_ms += advance_ms
        inbound, self.inbound = self.inbound, []
        result = self.node.poll(self.now_ms, inbound)
        self.sent = result.outbound
        self.wake_at_ms = result.wake_at_ms
        return self.sent

    def sent_of(self, kind: type) -> list[Envelope]:
        return [e for e in self.sent if isinstance(e.body, kind)]

    # ---- request builders ----------------------------------------------------------------------

    def vote_request(
        self, *, epoch: int, candidate: int, last_epoch: int, last_offset: int, pre_vote: bool = False
    ) -> VoteRequest:
        return VoteRequest(
            cluster_id=CLUSTER_ID,
            candidate_epoch=epoch,
            candidate_key=ReplicaKey(candidate, dir_id(candidate)),
            voter_key=ReplicaKey(self.node.source_id, dir_id(self.node.source_id)),
            last_offset_epoch=last_epoch,
            last_offset=last_offset,
            pre_vote=pre_vote,
        )

    def fetch_request(
        self, *, epoch: int, replica: int, fetch_offset: int, last_fetched_epoch: int, max_wait_ms: int = 0
    ) -> FetchRequest:
        return FetchRequest(
            cluster_id=CLUSTER_ID,
            replica_key=ReplicaKey(replica, dir_id(replica)),
            max_wait_ms=max_wait_ms,
            fetch_offset=fetch_offset,
            last_fetched_epoch=last_fetched_epoch,
            current_leader_epoch=epoch,
        )

    def begin_epoch_request(self, *, epoch: int, leader: int) -> BeginQuorumEpochRequest:
        return BeginQuorumEpochRequest(
            cluster_id=CLUSTER_ID,
            voter_key=ReplicaKey(self.node.source_id),
            leader_id=leader,
            leader_epoch=epoch,
        )

    def end_epoch_request(self, *, epoch: int, leader: int, successors: list[int]) -> EndQuorumEpochRequest:
        return EndQuorumEpochRequest(
            cluster_id=CLUSTER_ID,
            leader_id=leader,
            leader_epoch=epoch,
            preferred_candidates=tuple(ReplicaKey(s, dir_id(s)) for s in successors),
        )

    # ---- assertions ----------------------------------------------------------------------------

    def assert_sent_vote_response(
        self, error: int, *, epoch: int, leader_id: int | None, granted: bool
    ) -> VoteResponse:
        responses = self.sent_of(VoteResponse)
        assert len(responses) == 1, f"expected one VoteResponse, sent {self.sent}"
        body = responses[0].body
        assert isinstance(body, VoteResponse)
        assert body.partition_error_code == error, body
        assert body.leader_epoch == epoch, body
        assert body.leader_id == (-1 if leader_id is None else leader_id), body
        assert body.vote_granted is granted, body
        return body

    def assert_sent_fetch_response(self, error: int = ErrorCode.NONE) -> FetchResponse:
        responses = self.sent_of(FetchResponse)
        assert len(responses) == 1, f"expected one FetchResponse, sent {self.sent}"
        body = responses[0].body
        assert isinstance(body, FetchResponse)
        assert body.partition_error_code == error, body
        return body
