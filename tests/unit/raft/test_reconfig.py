"""KIP-853 dynamic voters in the core: bootstrap from a checkpoint, add, remove, update a voter.

A small in-memory cluster with kraft.version 1: no static voters, every node knows the others
only as bootstrap servers (ids -2, -3, ...), and the voter set comes from the bootstrap
checkpoint (snapshot 0-0) of the nodes formatted with it and from the log after that.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.listener import SnapshotWriter
from kraft.raft.log import MemoryLog
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    Envelope,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
)
from kraft.raft.node import QuorumConfig, RaftNode
from kraft.raft.states import Role
from kraft.raft.store import MemoryElectionStore
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey
from kraft.raft.voters import VoterNode, VoterSet

ADMIN = -100  # the source id of an admin client's requests


def endpoint(n: int) -> Endpoint:
    return Endpoint("CONTROLLER", f"node{n}", 9093)


def key(n: int, generation: int = 0) -> ReplicaKey:
    return ReplicaKey(n, uuid.UUID(int=(n + 1) * 1000 + generation))


def write_bootstrap_checkpoint(log: MemoryLog, voters: VoterSet) -> None:
    """What ``kraft storage format --standalone/--initial-controllers`` writes: snapshot 0-0."""
    writer = SnapshotWriter(
        log.store_snapshot(OffsetAndEpoch(0, 0)), 0, lambda _sid: None, kraft_version=1, voters=voters
    )
    writer.freeze()


class DynamicCluster:
    def __init__(self, initial_voters: list[int], others: list[int], **config: object) -> None:
        self.ids = [*initial_voters, *others]
        config.setdefault("fetch_max_wait_ms", 100)
        config.setdefault("fetch_timeout_ms", 2000)
        self.config = QuorumConfig(
            voters={},
            bootstrap_servers=tuple(endpoint(n) for n in self.ids),
            **config,  # type: ignore[arg-type]
        )
        self.now_ms = 0
        self.keys = {n: key(n) for n in self.ids}
        self.logs = {n: MemoryLog() for n in self.ids}
        self.stores = {n: MemoryElectionStore() for n in self.ids}
        initial = VoterSet(VoterNode(self.keys[n], (endpoint(n),)) for n in initial_voters)
        for n in initial_voters:
            write_bootstrap_checkpoint(self.logs[n], initial)
        self.nodes: dict[int, RaftNode] = {}
        self.down: set[int] = set()
        self.in_flight: list[Envelope] = []
        self.admin_answers: dict[int, object] = {}
        self._via: dict[tuple[int, int], int] = {}
        self._next_admin_correlation = 1
        for n in self.ids:
            self.start(n)

    def start(self, n: int, endpoints: tuple[Endpoint, ...] | None = None) -> None:
        """Start node ``n`` (again), listening on ``endpoints`` (default: its usual one)."""
        self.nodes[n] = RaftNode(
            node_id=n,
            directory_id=self.keys[n].directory_id,
            cluster_id="c",
            config=self.config,
            log=self.logs[n],
            store=self.stores[n],
            rng=random.Random(f"{n}:{self.now_ms}"),
            now_ms=self.now_ms,
            local_endpoints=endpoints if endpoints is not None else (endpoint(n),),
        )
        self.down.discard(n)

    def wipe(self, n: int) -> None:
        """The node's disk is replaced: new directory id, empty log and election state."""
        self.keys[n] = key(n, generation=self.keys[n].directory_id.int % 1000 + 1)
        self.logs[n] = MemoryLog()
        self.stores[n] = MemoryElectionStore()
        self.start(n)

    def _route(self, destination: int) -> int:
        return self.ids[-2 - destination] if destination <= -2 and destination != ADMIN else destination

    def step(self, step_ms: int = 5) -> None:
        self.now_ms += step_ms
        inbound: dict[int, list[Envelope]] = {n: [] for n in self.nodes}
        for env in self.in_flight:
            if env.destination == ADMIN:
                self.admin_answers[env.correlation_id] = env.body
                continue
            if env.is_request and env.destination <= -2:
                # Sent to a bootstrap address: the answer comes back from that address.
                self._via[(env.source, env.correlation_id)] = env.destination
            elif not env.is_request:
                via = self._via.pop((env.destination, env.correlation_id), None)
                if via is not None:
                    env = Envelope(via, env.destination, env.correlation_id, env.body)
            target = self._route(env.destination)
            if target in inbound and target not in self.down and self._route(env.source) not in self.down:
                inbound[target].append(env)
        self.in_flight = []
        for n, node in self.nodes.items():
            if n not in self.down:
                self.in_flight.extend(node.poll(self.now_ms, inbound[n]).outbound)

    def run_until(self, predicate: Callable[[], bool], max_ms: int = 30_000) -> None:
        deadline = self.now_ms + max_ms
        while not predicate():
            if self.now_ms >= deadline:
                raise AssertionError(f"not reached by {deadline} ms: {self.describe()}")
            self.step()

    def leader(self) -> RaftNode | None:
        leaders = [node for n, node in self.nodes.items() if n not in self.down and node.role is Role.LEADER]
        return leaders[0] if len(leaders) == 1 else None

    def committed_leader(self) -> RaftNode:
        self.run_until(lambda: (ld := self.leader()) is not None and ld.high_watermark is not None)
        leader = self.leader()
        assert leader is not None
        return leader

    def admin(self, body: object, max_ms: int = 30_000) -> Any:
        """Send ``body`` to the leader as an admin client would; wait for the answer."""
        leader = self.committed_leader()
        correlation = self._next_admin_correlation
        self._next_admin_correlation += 1
        self.in_flight.append(Envelope(ADMIN, leader.node_id or 0, correlation, body))  # type: ignore[arg-type]
        self.run_until(lambda: correlation in self.admin_answers, max_ms)
        return self.admin_answers.pop(correlation)

    def add(self, n: int) -> Any:
        return self.admin(
            AddRaftVoterRequest(
                cluster_id="c", timeout_ms=10_000, voter_key=self.keys[n], listeners=(endpoint(n),)
            )
        )

    def remove(self, n: int, voter_key: ReplicaKey | None = None) -> Any:
        return self.admin(RemoveRaftVoterRequest(cluster_id="c", voter_key=voter_key or self.keys[n]))

    def describe(self) -> str:
        return ", ".join(
            f"{i}:{n.role.name}(e={n.epoch},l={n.leader_id},hw={n.high_watermark},leo={n.log.end_offset()},"
            f"voters={sorted(n.voter_set.ids)})"
            for i, n in self.nodes.items()
        )

    def caught_up(self) -> None:
        leader = self.committed_leader()
        self.run_until(
            lambda: all(
                self.nodes[n].log.end_offset() == leader.log.end_offset()
                and self.nodes[n].high_watermark == leader.high_watermark
                for n in self.ids
                if n not in self.down
            )
        )
        # ... and the leader has seen their next fetches (caught-up timestamps for observers).
        for _ in range(60):
            self.step()


def test_a_standalone_voter_elects_itself_and_writes_the_voter_set_into_the_log() -> None:
    c = DynamicCluster([1], [2, 3])
    leader = c.committed_leader()
    assert leader.node_id == 1 and leader.kraft_version == 1
    c.caught_up()
    for n in (2, 3):
        observer = c.nodes[n]
        # Formatted without the checkpoint: the voter set reached them through the log.
        assert observer.voter_set.ids == {1} and observer.kraft_version == 1
        assert observer.role is Role.FOLLOWER and not observer.is_voter


def test_adding_two_voters_then_removing_the_leader() -> None:
    c = DynamicCluster([1], [2, 3])
    c.caught_up()
    assert c.nodes[2].metrics.current_state == "observer"
    assert c.add(2) == AddRaftVoterResponse()
    assert c.add(3) == AddRaftVoterResponse()
    c.caught_up()
    for n in (1, 2, 3):
        assert c.nodes[n].voter_set.ids == {1, 2, 3}, c.describe()
        assert c.nodes[n].is_voter
    # Still following the same leader in the same epoch, but now a voter: the metric says so.
    assert c.nodes[2].metrics.current_state == "follower"
    # The leader removes itself: it commits the change under the new set {2, 3}, then resigns.
    assert c.remove(1) == RemoveRaftVoterResponse()
    c.run_until(
        lambda: (ld := c.leader()) is not None and ld.node_id in (2, 3) and ld.high_watermark is not None
    )
    c.caught_up()
    assert not c.nodes[1].is_voter and c.nodes[1].role is Role.FOLLOWER
    assert all(c.nodes[n].voter_set.ids == {2, 3} for n in (1, 2, 3))


def test_a_new_voter_counts_toward_the_majority_as_soon_as_its_record_is_appended() -> None:
    c = DynamicCluster([1], [2])
    c.caught_up()
    c.down.add(2)  # the observer stops right after it was found caught up
    leader = c.committed_leader()
    hw = leader.high_watermark
    answer = c.admin(
        AddRaftVoterRequest(cluster_id="c", timeout_ms=300, voter_key=c.keys[2], listeners=(endpoint(2),))
    )
    assert isinstance(answer, AddRaftVoterResponse)
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT  # cannot commit without node 2
    assert leader.voter_set.ids == {1, 2} and leader.high_watermark == hw
    c.start(2)
    c.run_until(lambda: (leader.high_watermark or 0) > (hw or 0))  # committed by the new majority


@pytest.mark.parametrize(
    ("request_body", "error"),
    [
        (
            AddRaftVoterRequest(
                cluster_id="c", timeout_ms=1000, voter_key=ReplicaKey(2), listeners=(endpoint(2),)
            ),
            ErrorCode.INVALID_REQUEST,  # no directory id
        ),
        (
            AddRaftVoterRequest(
                cluster_id="c", timeout_ms=1000, voter_key=key(2), listeners=(Endpoint("OTHER", "h", 1),)
            ),
            ErrorCode.INVALID_REQUEST,  # no endpoint on the raft listener
        ),
        (
            AddRaftVoterRequest(cluster_id="c", timeout_ms=1000, voter_key=key(1), listeners=(endpoint(1),)),
            ErrorCode.DUPLICATE_VOTER,
        ),
        (
            AddRaftVoterRequest(cluster_id="c", timeout_ms=1000, voter_key=key(9), listeners=(endpoint(9),)),
            ErrorCode.REQUEST_TIMED_OUT,  # not an observer that caught up
        ),
        (
            AddRaftVoterRequest(
                cluster_id="other", timeout_ms=1000, voter_key=key(2), listeners=(endpoint(2),)
            ),
            ErrorCode.INCONSISTENT_CLUSTER_ID,
        ),
        (RemoveRaftVoterRequest(cluster_id="c", voter_key=key(2)), ErrorCode.VOTER_NOT_FOUND),
        (RemoveRaftVoterRequest(cluster_id="c", voter_key=key(1, generation=7)), ErrorCode.VOTER_NOT_FOUND),
        (RemoveRaftVoterRequest(cluster_id="c", voter_key=key(1)), ErrorCode.VOTER_NOT_FOUND),  # the last one
    ],
)
def test_bad_voter_changes_are_refused_and_change_nothing(request_body: object, error: int) -> None:
    c = DynamicCluster([1], [2])
    c.caught_up()
    end = c.nodes[1].log.end_offset()
    answer = c.admin(request_body)
    assert answer.error_code == error, answer
    c.step()
    assert c.nodes[1].voter_set.ids == {1} and c.nodes[1].log.end_offset() == end


def test_a_second_change_while_one_is_uncommitted_is_refused() -> None:
    c = DynamicCluster([1, 2, 3], [4, 5])
    c.caught_up()
    leader = c.committed_leader()
    c.down.update({1, 2, 3} - {leader.node_id})  # nothing can commit now
    first = c.admin(
        AddRaftVoterRequest(cluster_id="c", timeout_ms=200, voter_key=c.keys[4], listeners=(endpoint(4),))
    )
    assert first.error_code == ErrorCode.REQUEST_TIMED_OUT
    second = c.add(5)
    assert second.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert leader.voter_set.ids == {1, 2, 3, 4}  # the first change stays, uncommitted


def test_static_voters_cannot_change() -> None:
    from raft_cluster import Cluster

    c = Cluster([1, 2, 3])
    c.run_until(lambda: (ld := c.leader()) is not None and ld.high_watermark is not None)
    leader = c.leader()
    assert leader is not None and leader.kraft_version == 0
    request = RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(2))
    result = leader.poll(c.now_ms, [Envelope(ADMIN, leader.node_id or 0, 1, request)])
    [answer] = [e.body for e in result.outbound if e.destination == ADMIN]
    assert isinstance(answer, RemoveRaftVoterResponse) and answer.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert leader.voter_set.ids == {1, 2, 3}


def test_a_wiped_voter_rejoins_as_an_observer_and_is_replaced() -> None:
    c = DynamicCluster([1, 2, 3], [])
    c.caught_up()
    leader = c.committed_leader()
    victim = next(n for n in (1, 2, 3) if n != leader.node_id)
    c.wipe(victim)
    c.run_until(lambda: c.nodes[victim].log.end_offset() == leader.log.end_offset())
    assert not c.nodes[victim].is_voter  # a new directory id: not the voter in the set
    assert c.nodes[victim].role is Role.FOLLOWER
    old = next(v.key for v in leader.voter_set if v.key.id == victim)
    assert c.remove(victim, old) == RemoveRaftVoterResponse()
    assert c.add(victim) == AddRaftVoterResponse()
    c.caught_up()
    assert c.nodes[victim].is_voter and c.nodes[victim].voter_set.node(victim).key == c.keys[victim]  # type: ignore[union-attr]


def test_update_raft_voter_changes_endpoints_and_needs_the_right_epoch() -> None:
    c = DynamicCluster([1, 2], [])
    c.caught_up()
    leader = c.committed_leader()
    other = 2 if leader.node_id == 1 else 1
    moved = Endpoint("CONTROLLER", "new-host", 19093)
    stale = c.admin(
        UpdateRaftVoterRequest(
            cluster_id="c", current_leader_epoch=leader.epoch - 1, voter_key=c.keys[other], listeners=(moved,)
        )
    )
    assert isinstance(stale, UpdateRaftVoterResponse) and stale.error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert stale.leader_id == leader.node_id and stale.leader_epoch == leader.epoch
    ok = c.admin(
        UpdateRaftVoterRequest(
            cluster_id="c", current_leader_epoch=leader.epoch, voter_key=c.keys[other], listeners=(moved,)
        )
    )
    assert isinstance(ok, UpdateRaftVoterResponse) and ok.error_code == ErrorCode.NONE
    c.caught_up()
    assert c.nodes[other].voter_set.endpoints(other) == (moved,)


def test_truncation_reverts_an_uncommitted_voter_set() -> None:
    c = DynamicCluster([1, 2, 3], [4])
    c.caught_up()
    leader = c.committed_leader()
    lid = leader.node_id or 0
    followers = [n for n in (1, 2, 3) if n != lid]
    # Only the leader gets the change: the followers stop right after node 4 was seen caught up.
    c.down.update(followers)
    request = AddRaftVoterRequest(
        cluster_id="c", timeout_ms=100, voter_key=c.keys[4], listeners=(endpoint(4),)
    )
    c.in_flight.append(Envelope(ADMIN, lid, 99, request))
    c.down.add(4)
    c.run_until(lambda: leader.voter_set.ids == {1, 2, 3, 4})
    # The leader dies with the uncommitted change; the two others elect a leader of {1, 2, 3}.
    c.down = {lid, 4}
    for n in followers:
        c.start(n)
    c.run_until(
        lambda: (ld := c.leader()) is not None and ld.node_id in followers and ld.high_watermark is not None
    )
    assert all(c.nodes[n].voter_set.ids == {1, 2, 3} for n in followers)
    # The old leader comes back, truncates the change away and with it the voter set {1, 2, 3, 4}.
    c.start(lid)
    assert c.nodes[lid].voter_set.ids == {1, 2, 3, 4}  # from its own log, uncommitted
    c.run_until(lambda: c.nodes[lid].voter_set.ids == {1, 2, 3}, 20_000)
    c.caught_up()
    assert c.nodes[lid].log.end_offset() == c.committed_leader().log.end_offset()


def test_fetches_from_a_replaced_directory_do_not_count_toward_the_high_watermark() -> None:
    c = DynamicCluster([1, 2, 3], [])
    c.caught_up()
    leader = c.committed_leader()
    state = leader.leader_state()
    assert state is not None
    victim, third = (n for n in (1, 2, 3) if n != leader.node_id)
    c.wipe(victim)
    c.down.add(third)
    hw = leader.high_watermark
    last = leader.schedule_append(leader.epoch, [b"x"])
    # The wiped node copies the record, but it is not the voter with that id: no majority.
    c.run_until(lambda: c.nodes[victim].log.end_offset() > last)
    for _ in range(100):
        c.step()
    assert leader.high_watermark == hw
    assert state.voters[victim].key != c.keys[victim] and c.keys[victim] in state.observers
    c.down.discard(third)
    c.run_until(lambda: (leader.high_watermark or 0) > last)


def test_a_snapshot_carries_the_voter_set_to_a_replica_that_joins_after_the_log_was_cleaned() -> None:
    c = DynamicCluster([1], [2, 3])
    c.down.add(3)  # joins later
    c.caught_up()
    assert c.add(2) == AddRaftVoterResponse()
    c.caught_up()
    leader = c.committed_leader()
    hw = leader.high_watermark
    assert hw is not None
    writer = leader.create_snapshot(OffsetAndEpoch(hw, leader.epoch), 0)
    assert writer is not None
    writer.freeze()
    c.run_until(lambda: leader.log.start_offset() == hw)  # the VotersRecords are gone from the log
    c.start(3)
    c.run_until(lambda: c.nodes[3].log.end_offset() >= hw)
    assert c.nodes[3].log.start_offset() == hw  # it got the snapshot, not the log
    assert c.nodes[3].voter_set.ids == {1, 2} and c.nodes[3].kraft_version == 1
    # A restarted replica reads the set back from its snapshot.
    c.start(3)
    assert c.nodes[3].voter_set.ids == {1, 2}


def test_a_voter_back_on_a_new_endpoint_tells_the_leader_itself() -> None:
    """A voter restarted with another address sends UpdateRaftVoter once it follows the leader
    (Kafka's follower does the same), so that every voter learns where to reach it."""
    c = DynamicCluster([1, 2, 3], [])
    leader = c.committed_leader()
    mover = next(n for n in c.ids if n != leader.node_id)
    old = endpoint(mover)
    moved = Endpoint("CONTROLLER", f"node{mover}-new", 9094)
    c.start(mover, endpoints=(moved,))  # restarted on another host and port
    assert all(node.voter_set.endpoints(mover) == (old,) for node in c.nodes.values())
    c.run_until(lambda: all(node.voter_set.endpoints(mover) == (moved,) for node in c.nodes.values()))
    c.run_until(
        lambda: all((n.high_watermark or 0) > n.voter_history.latest_offset() for n in c.nodes.values())
    )  # type: ignore[operator]
    # Told once: nothing more to update, and the voters are the same nodes.
    before = len(c.nodes[mover].voter_history.entries())
    for _ in range(400):
        c.step()
    assert len(c.nodes[mover].voter_history.entries()) == before
    assert set(c.nodes[mover].voter_set.keys()) == {c.keys[n] for n in (1, 2, 3)}


def test_removing_a_voter_is_refused_when_the_voters_left_could_not_commit_it() -> None:
    # Voter ``lost`` lost its disk; removing the other follower would leave {leader, lost}, whose
    # majority needs the lost directory: the removal could never commit, and the new set (in force
    # uncommitted) would stop the quorum for good. Kafka appends it; we refuse, and a removal that
    # leaves a reachable majority (the lost voter's) goes through. Found by: kraft sim run
    # --scenario voter-changes --seed 7119.
    c = DynamicCluster([1, 2, 3], [])
    c.caught_up()
    leader = c.committed_leader()
    lost, other = (n for n in (1, 2, 3) if n != leader.node_id)
    old = c.keys[lost]
    c.wipe(lost)
    c.run_until(lambda: c.nodes[lost].log.end_offset() == leader.log.end_offset())
    for _ in range(leader.config.check_quorum_timeout_ms // 5):
        c.step()  # the old directory's last fetch is now older than the check-quorum timeout
    refused = c.remove(other)
    assert refused.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert f"only [{leader.node_id}] fetched" in refused.error_message
    assert leader.voter_set.ids == {1, 2, 3} and not leader.voter_change_pending()
    assert c.remove(lost, old) == RemoveRaftVoterResponse()
    assert leader.voter_set.ids == {leader.node_id, other}
    assert c.remove(other) == RemoveRaftVoterResponse()  # both voters left are reachable now
