"""Vote granting: the spec 3.4 table per state x (standard, pre-vote), and the request handler."""

from __future__ import annotations

import pytest
from raft_context import RaftTestContext, dir_id

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import VoteResponse
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
from kraft.raft.types import ReplicaKey
from kraft.raft.vote import can_grant_vote

C = ReplicaKey(3, dir_id(3))
OTHER = ReplicaKey(2, dir_id(2))
SELF = ReplicaKey(1, dir_id(1))


def election() -> EpochElection:
    return EpochElection.start(frozenset({1, 2, 3}), 1)


STATES: dict[str, State] = {
    "unattached": UnattachedState(5, None, None, 0),
    "unattached-voted-same": UnattachedState(5, None, C, 0),
    "unattached-voted-same-unknown-dir": UnattachedState(5, None, ReplicaKey(3), 0),
    "unattached-voted-other": UnattachedState(5, None, OTHER, 0),
    "unattached-leader-known": UnattachedState(5, 2, None, 0),
    "prospective": ProspectiveState(5, None, (), None, election(), 0),
    "prospective-voted-same": ProspectiveState(5, None, (), C, election(), 0),
    "candidate": CandidateState(5, SELF, election(), 0),
    "leader": LeaderState(5, SELF, 0, (1,), {}, None, 0),
    "follower-not-fetched": FollowerState(5, 2, (), None, 0, has_fetched_from_leader=False),
    "follower-fetched": FollowerState(5, 2, (), None, 0, has_fetched_from_leader=True),
    "follower-fetched-leader-resigned": FollowerState(
        5, 2, (), None, 0, has_fetched_from_leader=True, leader_resigned=True
    ),
    "resigned": ResignedState(5, SELF, 0, set(), ()),
}

# (state, pre_vote, up_to_date) -> granted
TABLE: list[tuple[str, bool, bool, bool]] = [
    ("unattached", False, True, True),
    ("unattached", False, False, False),
    ("unattached", True, True, True),
    ("unattached", True, False, False),
    ("unattached-voted-same", False, False, True),  # already voted: log check skipped
    ("unattached-voted-same-unknown-dir", False, False, True),
    ("unattached-voted-other", False, True, False),
    ("unattached-voted-other", True, True, True),  # pre-votes ignore the vote
    ("unattached-leader-known", False, True, False),
    ("unattached-leader-known", True, True, True),
    ("prospective", False, True, True),
    ("prospective", False, False, False),
    ("prospective", True, True, True),
    ("prospective", True, False, False),
    ("prospective-voted-same", False, False, True),
    ("candidate", False, True, False),
    ("candidate", True, True, True),
    ("candidate", True, False, False),
    ("leader", False, True, False),
    ("leader", True, True, False),
    ("follower-not-fetched", False, True, False),
    ("follower-not-fetched", True, True, True),
    ("follower-not-fetched", True, False, False),
    ("follower-fetched", True, True, False),
    ("follower-fetched-leader-resigned", True, True, True),  # EndQuorumEpoch: the leader is gone
    ("follower-fetched-leader-resigned", True, False, False),
    ("follower-fetched-leader-resigned", False, True, False),  # standard votes: never from a follower
    ("resigned", False, True, False),
    ("resigned", True, True, True),
    ("resigned", True, False, False),
]


@pytest.mark.parametrize(("state", "pre_vote", "up_to_date", "granted"), TABLE)
def test_vote_granting_table(state: str, pre_vote: bool, up_to_date: bool, granted: bool) -> None:
    assert can_grant_vote(STATES[state], C, pre_vote=pre_vote, up_to_date=up_to_date) is granted


def test_grants_standard_vote_and_persists_it_before_responding() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_unknown_leader(epoch=5)
        .with_log(1, 3)
        .build()
    )
    ctx.deliver(ctx.vote_request(epoch=6, candidate=3, last_epoch=3, last_offset=2), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=6, leader_id=None, granted=True)
    assert ctx.store.read() is not None
    assert ctx.store.read().epoch == 6 and ctx.store.read().voted_key == ReplicaKey(3, dir_id(3))
    assert ctx.node.role is Role.UNATTACHED and ctx.node.voted_key == ReplicaKey(3, dir_id(3))


def test_vote_is_not_sent_when_persisting_it_fails() -> None:
    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=5).build()
    ctx.store.fail = True
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0), source=3)
    with pytest.raises(OSError):
        ctx.poll()
    assert ctx.node.voted_key is None  # the in-memory state did not switch either


def test_rejects_vote_from_candidate_with_shorter_log() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_unknown_leader(epoch=5)
        .with_log(1, 3)
        .build()
    )
    ctx.deliver(ctx.vote_request(epoch=6, candidate=3, last_epoch=3, last_offset=1), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=6, leader_id=None, granted=False)
    assert ctx.node.voted_key is None
    assert ctx.store.read().epoch == 6  # the higher epoch is still adopted


def test_rejects_vote_from_candidate_with_older_last_epoch_even_if_longer() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_unknown_leader(epoch=5)
        .with_log(1, 3)
        .build()
    )
    ctx.deliver(ctx.vote_request(epoch=6, candidate=3, last_epoch=2, last_offset=50), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=6, leader_id=None, granted=False)


def test_rejects_vote_with_stale_epoch_as_fenced() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    ctx.deliver(ctx.vote_request(epoch=4, candidate=3, last_epoch=0, last_offset=0), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.FENCED_LEADER_EPOCH, epoch=5, leader_id=2, granted=False)


def test_second_vote_in_same_epoch_goes_only_to_the_same_candidate() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_voted_candidate(epoch=5, candidate_id=2)
        .build()
    )
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=9), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=None, granted=False)
    ctx.deliver(ctx.vote_request(epoch=5, candidate=2, last_epoch=0, last_offset=0), source=2)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=None, granted=True)


def test_pre_vote_changes_neither_epoch_nor_store() -> None:
    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=5).build()
    writes = ctx.store.writes
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.deliver(ctx.vote_request(epoch=5, candidate=2, last_epoch=0, last_offset=0, pre_vote=True), source=2)
    ctx.poll()
    granted = [e.body.vote_granted for e in ctx.sent_of(VoteResponse) if isinstance(e.body, VoteResponse)]
    assert granted == [True, True]  # many pre-votes may be granted
    assert ctx.store.writes == writes
    assert ctx.node.epoch == 5 and ctx.node.voted_key is None


def test_follower_that_fetched_from_leader_rejects_pre_vote() -> None:
    from kraft.raft.messages import FetchRequest, FetchResponse

    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    ctx.poll()
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(fetch, FetchResponse(high_watermark=0, current_leader_id=2, current_leader_epoch=5))
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=False)


def test_invalid_last_epoch_is_invalid_request() -> None:
    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=5).build()
    ctx.deliver(ctx.vote_request(epoch=6, candidate=3, last_epoch=6, last_offset=1), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.INVALID_REQUEST, epoch=5, leader_id=None, granted=False)


def test_wrong_voter_key_is_rejected() -> None:
    from dataclasses import replace

    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=5).build()
    req = replace(
        ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0), voter_key=ReplicaKey(2)
    )
    ctx.deliver(req, source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.INVALID_VOTER_KEY, epoch=5, leader_id=None, granted=False)


def test_inconsistent_cluster_id_is_a_top_level_error() -> None:
    from dataclasses import replace

    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=5).build()
    ctx.deliver(replace(ctx.vote_request(epoch=6, candidate=3, last_epoch=0, last_offset=0), cluster_id="x"))
    ctx.poll()
    body = ctx.sent_of(VoteResponse)[0].body
    assert isinstance(body, VoteResponse) and body.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert ctx.node.epoch == 5


def _follower_that_fetched(*, leader: int = 2, epoch: int = 5) -> RaftTestContext:
    from kraft.raft.messages import FetchRequest, FetchResponse

    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3, 4, 5])
        .with_elected_leader(epoch=epoch, leader_id=leader)
        .build()
    )
    ctx.poll()
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(
        fetch, FetchResponse(high_watermark=0, current_leader_id=leader, current_leader_epoch=epoch)
    )
    ctx.poll()
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState) and state.has_fetched_from_leader
    return ctx


def test_follower_grants_pre_vote_once_its_leader_resigned_with_end_quorum_epoch() -> None:
    ctx = _follower_that_fetched()
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=False)  # leader alive
    # Node 1 is the third preferred successor: its own election waits; it must not block node 3's.
    ctx.deliver(ctx.end_epoch_request(epoch=5, leader=2, successors=[3, 4, 1, 5]), source=2)
    ctx.poll()
    writes = ctx.store.writes
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=True)
    # A pre-vote changes nothing: same role, epoch, leader, no vote, nothing written.
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id, ctx.node.voted_key) == (
        Role.FOLLOWER,
        5,
        2,
        None,
    )
    assert ctx.store.writes == writes


def test_follower_whose_leader_resigned_still_refuses_standard_votes_and_stale_logs() -> None:
    ctx = _follower_that_fetched()
    ctx.deliver(ctx.end_epoch_request(epoch=5, leader=2, successors=[3, 4, 1, 5]), source=2)
    ctx.poll()
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=False)


def test_end_quorum_epoch_from_an_older_epoch_does_not_make_a_follower_grant_pre_votes() -> None:
    ctx = _follower_that_fetched(epoch=5)
    ctx.deliver(ctx.end_epoch_request(epoch=4, leader=3, successors=[3, 1]), source=3)
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.poll()
    votes = [e.body for e in ctx.sent_of(VoteResponse)]
    assert len(votes) == 1 and isinstance(votes[0], VoteResponse) and not votes[0].vote_granted


def test_a_late_fetch_answer_from_the_resigned_leader_neither_restores_refusal_nor_delays_election() -> None:
    from kraft.raft.messages import FetchRequest, FetchResponse
    from kraft.records.batch import SimpleRecord, build_batch

    ctx = _follower_that_fetched()
    inflight = ctx.sent_of(FetchRequest)[0]  # answered by the leader just before it resigned...
    ctx.deliver(ctx.end_epoch_request(epoch=5, leader=2, successors=[3, 4, 1, 5]), source=2)
    ctx.poll()
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState)
    deadline = state.fetch_deadline_ms
    assert deadline == ctx.now_ms + ((1000 >> 3) << 1)  # spec 3.6: position 2 of 4
    # ... and that answer lands after the EndQuorumEpoch (reordering).
    records = build_batch([SimpleRecord(value=b"x")], base_offset=0, partition_leader_epoch=5)
    ctx.respond_to(
        inflight,
        FetchResponse(high_watermark=1, records=records, current_leader_id=2, current_leader_epoch=5),
    )
    ctx.poll(advance_ms=1)
    assert ctx.log.end_offset() == 1  # the data is the leader's: kept
    assert state.fetch_deadline_ms == deadline  # the election is not pushed back
    # (A pre-vote from a successor ranked after this node: one ranked before it would make it
    # wait for that one, test_a_successor_waits_for_a_better_ranked_one_that_asked_first.)
    ctx.deliver(ctx.vote_request(epoch=5, candidate=5, last_epoch=5, last_offset=1, pre_vote=True), source=5)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=True)
    ctx.poll(advance_ms=deadline - ctx.now_ms)
    assert ctx.node.role is Role.PROSPECTIVE and ctx.node.epoch == 5


def test_a_successor_waits_for_a_better_ranked_one_that_asked_first() -> None:
    # Past Kafka: with a short election.backoff.max.ms the second successor's backoff can end
    # before the first one has won; having granted the first one's pre-vote, it now gives it an
    # election timeout before campaigning itself.
    ctx = _follower_that_fetched()
    ctx.deliver(ctx.end_epoch_request(epoch=5, leader=2, successors=[3, 1, 4, 5]), source=2)
    ctx.poll()
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState) and state.fetch_deadline_ms == ctx.now_ms + ((1000 >> 3) << 0)
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.poll(advance_ms=1)
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=True)
    assert state.fetch_deadline_ms == ctx.now_ms + ctx.node.config.election_timeout_ms
    ctx.poll(advance_ms=1000 >> 3)  # its own backoff is over, the deferral is not
    assert ctx.node.role is Role.FOLLOWER
    # (Past the deadline it waits up to retry.backoff.ms more for the answer to the fetch it sent
    # before the EndQuorumEpoch, which this test never gives: test_handover.py.)
    ctx.poll(advance_ms=state.fetch_deadline_ms + ctx.node.config.retry_backoff_ms - ctx.now_ms)
    assert ctx.node.role is Role.PROSPECTIVE  # the first successor did not win: campaign


def test_a_worse_ranked_successor_does_not_delay_a_follower() -> None:
    ctx = _follower_that_fetched()
    ctx.deliver(ctx.end_epoch_request(epoch=5, leader=2, successors=[4, 1, 3, 5]), source=2)
    ctx.poll()
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState)
    deadline = state.fetch_deadline_ms
    assert deadline > ctx.now_ms
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=True)
    assert state.fetch_deadline_ms == deadline


@pytest.mark.parametrize(
    ("successors", "gives_way"), [([3, 1, 4, 5], True), ([1, 3, 4, 5], False), ([], False)]
)
def test_between_two_as_up_to_date_prospectives_the_better_ranked_successor_wins_the_tie(
    successors: list[int], gives_way: bool
) -> None:
    # Node 1 and node 3 are both prospective with logs as new. Before, the lower id (1) always won
    # the tie; now the one ranked first among the resigned leader's successors does, and the lower
    # id only without a ranking. (Node 1 is the lower id: with no ranking it does not give way.)
    ctx = _follower_that_fetched()
    if successors:
        ctx.deliver(ctx.end_epoch_request(epoch=5, leader=2, successors=successors), source=2)
        ctx.poll()
    follower = ctx.node.quorum.state
    if isinstance(follower, FollowerState):
        # Its backoff (0 for the first successor) or fetch timeout, then up to retry.backoff.ms
        # for the answer to the fetch it sent before the EndQuorumEpoch (never given here).
        ctx.poll(advance_ms=follower.fetch_deadline_ms + ctx.node.config.retry_backoff_ms - ctx.now_ms)
    state = ctx.node.quorum.state
    assert isinstance(state, ProspectiveState)
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0, pre_vote=True), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=2, granted=True)
    assert (state.yielded_to == 3) is gives_way
