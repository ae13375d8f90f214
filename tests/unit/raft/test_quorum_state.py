"""The transition table (spec 1.1) and startup rules (spec 1.2)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.common.errors import FatalError
from kraft.raft.config import QuorumConfig
from kraft.raft.quorum_state import (
    LEGACY_TRANSITIONS,
    TRANSITIONS,
    QuorumState,
    check_transition,
)
from kraft.raft.states import (
    CandidateState,
    EpochElection,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    Role,
    State,
    UnattachedState,
)
from kraft.raft.store import ElectionState, MemoryElectionStore
from kraft.raft.types import ReplicaKey

SELF = ReplicaKey(1)


def make(role: Role, epoch: int, leader: int | None = None) -> State:
    election = EpochElection.start(frozenset({1, 2, 3}), 1)
    match role:
        case Role.UNATTACHED:
            return UnattachedState(epoch, leader, None, 0)
        case Role.PROSPECTIVE:
            return ProspectiveState(epoch, leader, (), None, election, 0)
        case Role.CANDIDATE:
            return CandidateState(epoch, SELF, election, 0)
        case Role.LEADER:
            return LeaderState(epoch, SELF, 0, (1,), {}, None, 0)
        case Role.FOLLOWER:
            return FollowerState(epoch, leader if leader is not None else 2, (), None, 0)
        case Role.RESIGNED:
            return ResignedState(epoch, SELF, 0, set(), ())


def test_only_prospective_leads_to_candidate_with_pre_vote() -> None:
    assert [r for r, targets in TRANSITIONS.items() if Role.CANDIDATE in targets] == [Role.PROSPECTIVE]
    assert [r for r, targets in TRANSITIONS.items() if Role.LEADER in targets] == [Role.CANDIDATE]
    assert all(Role.PROSPECTIVE not in t for t in LEGACY_TRANSITIONS.values())


@pytest.mark.parametrize(
    ("source", "target", "legal"),
    [
        (make(Role.PROSPECTIVE, 5), make(Role.CANDIDATE, 6), True),
        (make(Role.PROSPECTIVE, 5), make(Role.CANDIDATE, 7), False),
        (make(Role.UNATTACHED, 5), make(Role.CANDIDATE, 6), False),
        (make(Role.FOLLOWER, 5), make(Role.PROSPECTIVE, 5), True),
        (make(Role.FOLLOWER, 5), make(Role.UNATTACHED, 5), False),
        (make(Role.PROSPECTIVE, 5), make(Role.UNATTACHED, 5), True),
        (make(Role.CANDIDATE, 6), make(Role.LEADER, 6), True),
        # Spec 1.1: the Candidate's self-vote survives the same-epoch move to Prospective.
        (
            make(Role.CANDIDATE, 6),
            ProspectiveState(6, None, (), SELF, EpochElection.start(frozenset({1, 2, 3}), 1), 0),
            True,
        ),
        (make(Role.CANDIDATE, 6), make(Role.PROSPECTIVE, 6), False),
        (make(Role.LEADER, 6), make(Role.RESIGNED, 6), True),
        (make(Role.LEADER, 6), make(Role.FOLLOWER, 6), False),
        (make(Role.RESIGNED, 6), make(Role.UNATTACHED, 7), True),
        (make(Role.RESIGNED, 6), make(Role.PROSPECTIVE, 6), False),
        (make(Role.FOLLOWER, 6, leader=2), make(Role.FOLLOWER, 6, leader=3), False),
        (make(Role.UNATTACHED, 6), make(Role.UNATTACHED, 5), False),
    ],
)
def test_transition_rules(source: State, target: State, legal: bool) -> None:
    reason = check_transition(source, target, is_voter=True, pre_vote_enabled=True)
    assert (reason is None) is legal, reason


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(list(Role)),
    st.sampled_from(list(Role)),
    st.integers(0, 3),
    st.integers(-1, 2),
    st.booleans(),
    st.booleans(),
)
def test_transition_sweep_never_allows_lower_epoch_or_unlisted_roles(
    a: Role, b: Role, epoch: int, delta: int, is_voter: bool, pre_vote: bool
) -> None:
    source, target = make(a, epoch + 1), make(b, epoch + 1 + delta)
    reason = check_transition(source, target, is_voter=is_voter, pre_vote_enabled=pre_vote)
    if reason is None:
        table = TRANSITIONS if pre_vote else LEGACY_TRANSITIONS
        assert delta >= 0
        assert b in table[a]
        if not is_voter:
            # A Resigned observer (restarted after leading, spec 1.2 rule 2) only moves to a newer
            # epoch; a leader that removed itself (KIP-853) is an observer until it resigns.
            assert a in (Role.UNATTACHED, Role.FOLLOWER, Role.RESIGNED, Role.LEADER)
            assert b in (Role.UNATTACHED, Role.FOLLOWER) or (a is Role.LEADER and b is Role.RESIGNED)
            assert a is not Role.RESIGNED or delta >= 1
        if b is Role.CANDIDATE:
            assert delta == 1
        if b is Role.LEADER:
            assert a is Role.CANDIDATE and delta == 0


def quorum(
    state: ElectionState | None, *, local: int | None = 1, voters: tuple[int, ...] = (1, 2, 3)
) -> QuorumState:
    q = QuorumState(
        local_key=None if local is None else ReplicaKey(local),
        config=QuorumConfig(voters={v: () for v in voters}),
        store=MemoryElectionStore(state),
        rng=random.Random(0),
    )
    return q


@pytest.mark.parametrize(
    ("stored", "log_epoch", "role", "epoch"),
    [
        (None, 0, Role.UNATTACHED, 0),
        (ElectionState(3), 5, Role.UNATTACHED, 5),  # rule 1: the log is ahead
        (ElectionState(3, leader_id=1), 0, Role.RESIGNED, 3),  # rule 2: never restart as leader
        (ElectionState(3, voted_key=ReplicaKey(1)), 0, Role.CANDIDATE, 3),  # rule 3
        (ElectionState(3, leader_id=2), 0, Role.FOLLOWER, 3),  # rule 4
        (ElectionState(3, voted_key=ReplicaKey(2)), 0, Role.UNATTACHED, 3),  # rule 5
    ],
)
def test_startup_rules(stored: ElectionState | None, log_epoch: int, role: Role, epoch: int) -> None:
    q = quorum(stored)
    q.initialize(log_end_epoch=log_epoch, now_ms=0)
    assert (q.role, q.epoch) == (role, epoch)


def test_restart_as_follower_keeps_the_vote() -> None:
    q = quorum(ElectionState(3, leader_id=2, voted_key=ReplicaKey(2)))
    q.initialize(log_end_epoch=0, now_ms=0)
    assert q.role is Role.FOLLOWER and q.voted_key == ReplicaKey(2)


def test_voted_state_without_node_id_is_fatal() -> None:
    q = quorum(ElectionState(3, voted_key=ReplicaKey(2)), local=None)
    with pytest.raises(FatalError):
        q.initialize(log_end_epoch=0, now_ms=0)


def test_durable_transition_writes_store_before_switching() -> None:
    q = quorum(ElectionState(3))
    q.initialize(log_end_epoch=0, now_ms=0)
    seen: list[tuple[Role, int]] = []
    store = q.store
    assert isinstance(store, MemoryElectionStore)
    original = store.write

    def spy(state: ElectionState) -> None:
        seen.append((q.role, q.epoch))  # the in-memory state must still be the old one
        original(state)

    store.write = spy  # type: ignore[method-assign]
    q.transition_to_unattached(7, now_ms=0)
    assert seen == [(Role.UNATTACHED, 3)]
    assert store.read() == ElectionState(7)


def test_prospective_is_not_persisted_and_follower_keeps_vote_in_same_epoch() -> None:
    q = quorum(ElectionState(3, voted_key=ReplicaKey(2)))
    q.initialize(log_end_epoch=0, now_ms=0)
    store = q.store
    assert isinstance(store, MemoryElectionStore)
    writes = store.writes
    q.transition_to_prospective(now_ms=0)
    assert store.writes == writes
    q.transition_to_follower(3, 2, (), now_ms=0)
    assert q.voted_key == ReplicaKey(2)
    assert store.read() == ElectionState(3, leader_id=2, voted_key=ReplicaKey(2))


def test_observer_cannot_become_prospective() -> None:
    q = quorum(None, local=9)
    q.initialize(log_end_epoch=0, now_ms=0)
    with pytest.raises(FatalError):
        q.transition_to_prospective(now_ms=0)
