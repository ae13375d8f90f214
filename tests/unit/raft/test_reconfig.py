"""KIP-853 dynamic voters in the core: bootstrap from a checkpoint, add, remove, update a voter.

A small simulated cluster with kraft.version 1 (``DynamicRaftCluster``): no static voters, every
node knows the others only as bootstrap servers (ids -2, -3, ...), and the voter set comes from the
bootstrap checkpoint (snapshot 0-0) of the nodes formatted with it and from the log after that.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from clusters import CLUSTER_ID, DynamicRaftCluster, RaftCluster

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
)
from kraft.raft.states import Role
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey
from kraft.sim.world import endpoint_of


def endpoint(n: int) -> Endpoint:
    """Node ``n``'s usual raft endpoint in the world."""
    return endpoint_of(n)


def add_request(c: DynamicRaftCluster, n: int, timeout_ms: int = 10_000) -> AddRaftVoterRequest:
    return AddRaftVoterRequest(
        cluster_id=CLUSTER_ID, timeout_ms=timeout_ms, voter_key=c.key(n), listeners=(endpoint(n),)
    )


def add(c: DynamicRaftCluster, n: int) -> Any:
    return c.admin(add_request(c, n))


def remove(c: DynamicRaftCluster, n: int, voter_key: ReplicaKey | None = None) -> Any:
    return c.admin(RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_key=voter_key or c.key(n)))


def test_a_standalone_voter_elects_itself_and_writes_the_voter_set_into_the_log() -> None:
    c = DynamicRaftCluster(1, 2)
    leader = c.committed_leader()
    assert leader.node_id == 1 and leader.kraft_version == 1
    c.caught_up()
    for n in (2, 3):
        observer = c.nodes[n]
        # Formatted without the checkpoint: the voter set reached them through the log.
        assert observer.voter_set.ids == {1} and observer.kraft_version == 1
        assert observer.role is Role.FOLLOWER and not observer.is_voter


def test_adding_two_voters_then_removing_the_leader() -> None:
    c = DynamicRaftCluster(1, 2)
    c.caught_up()
    assert c.nodes[2].metrics.current_state == "observer"
    assert add(c, 2) == AddRaftVoterResponse()
    assert add(c, 3) == AddRaftVoterResponse()
    c.caught_up()
    for n in (1, 2, 3):
        assert c.nodes[n].voter_set.ids == {1, 2, 3}, c.describe()
        assert c.nodes[n].is_voter
    # Still following the same leader in the same epoch, but now a voter: the metric says so.
    assert c.nodes[2].metrics.current_state == "follower"
    # The leader removes itself: it commits the change under the new set {2, 3}, then resigns.
    assert remove(c, 1) == RemoveRaftVoterResponse()
    c.run_until(
        lambda: (ld := c.leader()) is not None and ld.node_id in (2, 3) and ld.high_watermark is not None
    )
    c.caught_up()
    assert not c.nodes[1].is_voter and c.nodes[1].role is Role.FOLLOWER
    assert all(c.nodes[n].voter_set.ids == {2, 3} for n in (1, 2, 3))


def test_a_new_voter_counts_toward_the_majority_as_soon_as_its_record_is_appended() -> None:
    c = DynamicRaftCluster(1, 1)
    c.caught_up()
    c.stop(2)  # the observer stops right after it was found caught up
    leader = c.committed_leader()
    hw = leader.high_watermark
    answer = c.admin(add_request(c, 2, timeout_ms=300))
    assert isinstance(answer, AddRaftVoterResponse)
    assert answer.error_code == ErrorCode.REQUEST_TIMED_OUT  # cannot commit without node 2
    assert leader.voter_set.ids == {1, 2} and leader.high_watermark == hw
    c.restart(2)
    c.run_until(lambda: (leader.high_watermark or 0) > (hw or 0))  # committed by the new majority


def _with(c: DynamicRaftCluster, n: int, **fields: Any) -> AddRaftVoterRequest:
    return AddRaftVoterRequest(
        **{
            "cluster_id": CLUSTER_ID,
            "timeout_ms": 1000,
            "voter_key": c.key(n),
            "listeners": (endpoint(n),),
            **fields,
        }
    )


BAD_CHANGES: list[tuple[str, Callable[[DynamicRaftCluster], object], int]] = [
    # no directory id
    ("no-directory", lambda c: _with(c, 2, voter_key=ReplicaKey(2)), ErrorCode.INVALID_REQUEST),
    # no endpoint on the raft listener
    (
        "other-listener",
        lambda c: _with(c, 2, listeners=(Endpoint("OTHER", "h", 1),)),
        ErrorCode.INVALID_REQUEST,
    ),
    ("duplicate", lambda c: _with(c, 1), ErrorCode.DUPLICATE_VOTER),
    # not an observer that caught up
    (
        "unknown-replica",
        lambda c: _with(c, 2, voter_key=ReplicaKey(9, uuid.UUID(int=9_000)), listeners=(endpoint(9),)),
        ErrorCode.REQUEST_TIMED_OUT,
    ),
    ("other-cluster", lambda c: _with(c, 2, cluster_id="other"), ErrorCode.INCONSISTENT_CLUSTER_ID),
    (
        "remove-an-observer",
        lambda c: RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_key=c.key(2)),
        ErrorCode.VOTER_NOT_FOUND,
    ),
    (
        "remove-another-directory",
        lambda c: RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_key=ReplicaKey(1, uuid.UUID(int=7))),
        ErrorCode.VOTER_NOT_FOUND,
    ),
    (
        "remove-the-last-voter",
        lambda c: RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_key=c.key(1)),
        ErrorCode.VOTER_NOT_FOUND,
    ),
]


@pytest.mark.parametrize(
    ("build", "error"), [(b, e) for _, b, e in BAD_CHANGES], ids=[i for i, _, _ in BAD_CHANGES]
)
def test_bad_voter_changes_are_refused_and_change_nothing(
    build: Callable[[DynamicRaftCluster], object], error: int
) -> None:
    c = DynamicRaftCluster(1, 1)
    c.caught_up()
    end = c.nodes[1].log.end_offset()
    answer = c.admin(build(c))
    assert answer.error_code == error, answer
    c.run_for(5)
    assert c.nodes[1].voter_set.ids == {1} and c.nodes[1].log.end_offset() == end


def test_a_second_change_while_one_is_uncommitted_is_refused() -> None:
    c = DynamicRaftCluster(3, 2)
    c.caught_up()
    leader = c.committed_leader()
    for n in {1, 2, 3} - {leader.node_id}:
        c.stop(n)  # nothing can commit now
    first = c.admin(add_request(c, 4, timeout_ms=200))
    assert first.error_code == ErrorCode.REQUEST_TIMED_OUT
    second = add(c, 5)
    assert second.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert leader.voter_set.ids == {1, 2, 3, 4}  # the first change stays, uncommitted


def test_static_voters_cannot_change() -> None:
    c = RaftCluster([1, 2, 3])
    leader = c.elected_leader()
    assert leader.kraft_version == 0 and leader.node_id is not None
    request = RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(2))
    answer = c.raft_call(request, leader.node_id)
    assert isinstance(answer, RemoveRaftVoterResponse) and answer.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert leader.voter_set.ids == {1, 2, 3}


def test_a_wiped_voter_rejoins_as_an_observer_and_is_replaced() -> None:
    c = DynamicRaftCluster(3, 0)
    c.caught_up()
    leader = c.committed_leader()
    victim = next(n for n in (1, 2, 3) if n != leader.node_id)
    c.wipe(victim)
    c.run_until(lambda: c.nodes[victim].log.end_offset() == leader.log.end_offset())
    assert not c.nodes[victim].is_voter  # a new directory id: not the voter in the set
    assert c.nodes[victim].role is Role.FOLLOWER
    old = next(v.key for v in leader.voter_set if v.key.id == victim)
    assert remove(c, victim, old) == RemoveRaftVoterResponse()
    assert add(c, victim) == AddRaftVoterResponse()
    c.caught_up()
    assert c.nodes[victim].is_voter and c.nodes[victim].voter_set.node(victim).key == c.key(victim)  # type: ignore[union-attr]


def test_update_raft_voter_changes_endpoints_and_needs_the_right_epoch() -> None:
    c = DynamicRaftCluster(2, 0)
    c.caught_up()
    leader = c.committed_leader()
    other = 2 if leader.node_id == 1 else 1
    moved = Endpoint("CONTROLLER", "new-host", 19093)
    stale = c.admin(
        UpdateRaftVoterRequest(
            cluster_id=CLUSTER_ID,
            current_leader_epoch=leader.epoch - 1,
            voter_key=c.key(other),
            listeners=(moved,),
        )
    )
    assert isinstance(stale, UpdateRaftVoterResponse) and stale.error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert stale.leader_id == leader.node_id and stale.leader_epoch == leader.epoch
    ok = c.admin(
        UpdateRaftVoterRequest(
            cluster_id=CLUSTER_ID,
            current_leader_epoch=leader.epoch,
            voter_key=c.key(other),
            listeners=(moved,),
        )
    )
    assert isinstance(ok, UpdateRaftVoterResponse) and ok.error_code == ErrorCode.NONE
    c.caught_up()
    assert c.nodes[other].voter_set.endpoints(other) == (moved,)


def test_truncation_reverts_an_uncommitted_voter_set() -> None:
    c = DynamicRaftCluster(3, 1)
    c.caught_up()
    leader = c.committed_leader()
    lid = leader.node_id or 0
    followers = [n for n in (1, 2, 3) if n != lid]
    # Only the leader gets the change: the followers stop right after node 4 was seen caught up.
    for n in followers:
        c.stop(n)
    c.raft_request(add_request(c, 4, timeout_ms=100), lid)
    c.stop(4)
    c.run_until(lambda: leader.voter_set.ids == {1, 2, 3, 4})
    # The leader dies with the uncommitted change; the two others elect a leader of {1, 2, 3}.
    c.stop(lid)
    for n in followers:
        c.restart(n)
    c.run_until(
        lambda: (ld := c.leader()) is not None and ld.node_id in followers and ld.high_watermark is not None
    )
    assert all(c.nodes[n].voter_set.ids == {1, 2, 3} for n in followers)
    # The old leader comes back, truncates the change away and with it the voter set {1, 2, 3, 4}.
    c.restart(lid)
    assert c.nodes[lid].voter_set.ids == {1, 2, 3, 4}  # from its own log, uncommitted
    c.run_until(lambda: c.nodes[lid].voter_set.ids == {1, 2, 3}, 20_000)
    c.caught_up()
    assert c.nodes[lid].log.end_offset() == c.committed_leader().log.end_offset()


def test_fetches_from_a_replaced_directory_do_not_count_toward_the_high_watermark() -> None:
    c = DynamicRaftCluster(3, 0)
    c.caught_up()
    leader = c.committed_leader()
    state = leader.leader_state()
    assert state is not None
    victim, third = (n for n in (1, 2, 3) if n != leader.node_id)
    c.wipe(victim)
    c.stop(third)
    hw = leader.high_watermark
    last = leader.schedule_append(leader.epoch, [b"x"])
    # The wiped node copies the record, but it is not the voter with that id: no majority.
    c.run_until(lambda: c.nodes[victim].log.end_offset() > last)
    c.run_for(500)
    assert leader.high_watermark == hw
    assert state.voters[victim].key != c.key(victim) and c.key(victim) in state.observers
    c.restart(third)
    c.run_until(lambda: (leader.high_watermark or 0) > last)


def test_a_snapshot_carries_the_voter_set_to_a_replica_that_joins_after_the_log_was_cleaned() -> None:
    c = DynamicRaftCluster(1, 2)
    c.stop(3)  # joins later
    c.caught_up()
    assert add(c, 2) == AddRaftVoterResponse()
    c.caught_up()
    leader = c.committed_leader()
    hw = leader.high_watermark
    assert hw is not None
    writer = leader.create_snapshot(OffsetAndEpoch(hw, leader.epoch), 0)
    assert writer is not None
    writer.freeze()
    c.run_until(lambda: leader.log.start_offset() == hw)  # the VotersRecords are gone from the log
    c.restart(3)
    c.run_until(lambda: c.nodes[3].log.end_offset() >= hw)
    assert c.nodes[3].log.start_offset() == hw  # it got the snapshot, not the log
    assert c.nodes[3].voter_set.ids == {1, 2} and c.nodes[3].kraft_version == 1
    # A restarted replica reads the set back from its snapshot.
    c.stop(3)
    c.restart(3)
    assert c.nodes[3].voter_set.ids == {1, 2}


def test_a_voter_back_on_a_new_endpoint_tells_the_leader_itself() -> None:
    """A voter restarted with another address sends UpdateRaftVoter once it follows the leader
    (Kafka's follower does the same), so that every voter learns where to reach it."""
    c = DynamicRaftCluster(3, 0)
    leader = c.committed_leader()
    mover = next(n for n in c.ids if n != leader.node_id)
    old = endpoint(mover)
    moved = Endpoint("CONTROLLER", f"node{mover}-new", 9094)
    c.stop(mover)
    c.restart(mover, endpoints=(moved,))  # restarted on another host and port
    assert all(node.voter_set.endpoints(mover) == (old,) for node in c.nodes.values())
    c.run_until(lambda: all(node.voter_set.endpoints(mover) == (moved,) for node in c.nodes.values()))
    c.run_until(
        lambda: all((n.high_watermark or 0) > n.voter_history.latest_offset() for n in c.nodes.values())  # type: ignore[operator]
    )
    # Told once: nothing more to update, and the voters are the same nodes.
    before = len(c.nodes[mover].voter_history.entries())
    c.run_for(2000)
    assert len(c.nodes[mover].voter_history.entries()) == before
    assert set(c.nodes[mover].voter_set.keys()) == {c.key(n) for n in (1, 2, 3)}


def test_removing_a_voter_is_refused_when_the_voters_left_could_not_commit_it() -> None:
    # Voter ``lost`` lost its disk; removing the other follower would leave {leader, lost}, whose
    # majority needs the lost directory: the removal could never commit, and the new set (in force
    # uncommitted) would stop the quorum for good. Kafka appends it; we refuse, and a removal that
    # leaves a reachable majority (the lost voter's) goes through. Found by: kraft sim run
    # --scenario voter-changes --seed 7119.
    c = DynamicRaftCluster(3, 0)
    c.caught_up()
    leader = c.committed_leader()
    lost, other = (n for n in (1, 2, 3) if n != leader.node_id)
    old = c.key(lost)
    c.wipe(lost)
    c.run_until(lambda: c.nodes[lost].log.end_offset() == leader.log.end_offset())
    # The old directory's last fetch (a long poll counts when it ends) is now older than the
    # check-quorum timeout.
    c.run_for(leader.config.check_quorum_timeout_ms + leader.config.fetch_max_wait_ms)
    refused = remove(c, other)
    assert refused.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert f"only [{leader.node_id}] fetched" in refused.error_message
    assert leader.voter_set.ids == {1, 2, 3} and not leader.voter_change_pending()
    assert remove(c, lost, old) == RemoveRaftVoterResponse()
    assert leader.voter_set.ids == {leader.node_id, other}
    assert remove(c, other) == RemoveRaftVoterResponse()  # both voters left are reachable now
