"""Graceful hand-over past Kafka (docs/raft.md): two races between the resigning leader's
EndQuorumEpoch and other messages, settled by the voter whose leader resigned.

1. Its pre-vote reaches voters before their own EndQuorumEpoch, and they refuse it: it stays
   prospective and asks them again after retry.backoff.ms, instead of following the resigned
   leader (Kafka's ProspectiveState does, as kraft still does for a fetch timeout).
2. The answer to the fetch it sent before the EndQuorumEpoch (records the leader sent before
   resigning) arrives after it: it waits for that answer, up to retry.backoff.ms, before it asks
   for votes, so that it asks with the leader's whole log.
"""

from __future__ import annotations

from raft_context import RaftTestContext

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import Envelope, FetchRequest, FetchResponse, VoteRequest, VoteResponse
from kraft.raft.states import FollowerState, ProspectiveState, Role
from kraft.records.batch import SimpleRecord, build_batch

LEADER, EPOCH = 2, 5


def _follower(*, voters: list[int]) -> tuple[RaftTestContext, Envelope]:
    """Node 1, a follower of 2 in epoch 5 that fetched once, and its next fetch (in flight)."""
    ctx = (
        RaftTestContext.builder(local_id=1, voters=voters)
        .with_elected_leader(epoch=EPOCH, leader_id=LEADER)
        .build()
    )
    ctx.poll()
    ctx.respond_to(
        ctx.sent_of(FetchRequest)[0],
        FetchResponse(high_watermark=0, current_leader_id=LEADER, current_leader_epoch=EPOCH),
    )
    ctx.poll()
    inflight = ctx.sent_of(FetchRequest)
    assert len(inflight) == 1
    return ctx, inflight[0]


def _first_successor(voters: list[int]) -> RaftTestContext:
    """Node 1 told by leader 2 that it resigned, 1 first among its successors, and prospective
    (the leader answered the fetch 1 had in flight with NOT_LEADER_OR_FOLLOWER)."""
    ctx, fetch = _follower(voters=voters)
    others = [v for v in voters if v not in (1, LEADER)]
    ctx.deliver(ctx.end_epoch_request(epoch=EPOCH, leader=LEADER, successors=[1, *others]), source=LEADER)
    ctx.respond_to(
        fetch,
        FetchResponse(
            partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
            current_leader_id=LEADER,
            current_leader_epoch=EPOCH,
        ),
    )
    ctx.poll()
    assert ctx.node.role is Role.PROSPECTIVE
    return ctx


def _answer_votes(ctx: RaftTestContext, granted: dict[int, bool]) -> None:
    for env in ctx.sent_of(VoteRequest):
        if env.destination in granted:
            ctx.respond_to(
                env,
                VoteResponse(leader_epoch=EPOCH, leader_id=LEADER, vote_granted=granted[env.destination]),
            )


def test_a_successor_refused_before_the_others_heard_of_the_resignation_asks_again() -> None:
    ctx = _first_successor([1, 2, 3, 4, 5])
    assert sorted(e.destination for e in ctx.sent_of(VoteRequest)) == [2, 3, 4, 5]
    # 3, 4 and 5 have not had their EndQuorumEpoch yet: their leader is alive, they refuse.
    _answer_votes(ctx, {2: True, 3: False, 4: False, 5: False})
    ctx.poll()
    state = ctx.node.quorum.state
    assert isinstance(state, ProspectiveState) and state.epoch == EPOCH  # not a follower of 2 again
    assert ctx.sent_of(VoteRequest) == []
    backoff = ctx.node.config.retry_backoff_ms
    ctx.poll(advance_ms=backoff - 1)
    assert ctx.sent_of(VoteRequest) == []  # asks again only after retry.backoff.ms
    ctx.poll(advance_ms=1)
    again = ctx.sent_of(VoteRequest)
    assert sorted(e.destination for e in again) == [3, 4, 5]  # only those that refused: 2's grant stands
    assert all(
        isinstance(e.body, VoteRequest) and e.body.pre_vote and e.body.candidate_epoch == EPOCH for e in again
    )
    # By now they have the EndQuorumEpoch: they grant, and 1 becomes the candidate of epoch 6.
    _answer_votes(ctx, {3: True, 4: True, 5: True})
    ctx.poll()
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, EPOCH + 1)


def test_a_successor_refused_again_and_again_backs_off_up_to_an_election_timeout() -> None:
    # Voters that never get the EndQuorumEpoch (a leader that resigned on check-quorum reached
    # only some) refuse every round: the wait doubles instead of asking every retry.backoff.ms.
    ctx = _first_successor([1, 2, 3, 4, 5])
    waits: list[int] = []
    asked_3 = 0
    last_retry: int | None = None
    while ctx.now_ms < 10_000:
        asked_3 += sum(1 for e in ctx.sent_of(VoteRequest) if e.destination == 3)
        _answer_votes(ctx, {2: True, 3: False, 4: False, 5: False})
        ctx.poll()
        state = ctx.node.quorum.state
        assert isinstance(state, ProspectiveState)  # never back to following the resigned leader
        if state.retry_at_ms is not None and state.retry_at_ms != last_retry:
            waits.append(state.retry_at_ms - ctx.now_ms)
            last_retry = state.retry_at_ms
        assert ctx.wake_at_ms is not None
        ctx.poll(advance_ms=ctx.wake_at_ms - ctx.now_ms)
    timeout = ctx.node.config.election_timeout_ms
    assert waits[:5] == [ctx.node.config.retry_backoff_ms << i for i in range(5)]
    assert max(waits) == timeout and waits[-1] == timeout
    assert asked_3 <= 16  # in 10 s: not one pre-vote per retry.backoff.ms (500)


def test_a_round_that_runs_out_of_time_starts_over_without_following_the_resigned_leader() -> None:
    ctx = _first_successor([1, 2, 3])
    state = ctx.node.quorum.state
    assert isinstance(state, ProspectiveState)
    deadline = state.election_deadline_ms
    ctx.poll(advance_ms=deadline - ctx.now_ms)  # no answer at all (requests still in flight)
    assert ctx.node.quorum.state is state and state.election_deadline_ms > deadline  # a new round


def test_a_lost_round_without_a_resignation_still_goes_back_to_the_leader_as_in_kafka() -> None:
    ctx, _ = _follower(voters=[1, 2, 3, 4, 5])
    ctx.poll(advance_ms=ctx.node.config.fetch_timeout_ms)  # the leader went quiet: fetch timeout
    assert ctx.node.role is Role.PROSPECTIVE
    _answer_votes(ctx, {2: False, 3: False, 4: False, 5: False})
    ctx.poll()
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, EPOCH, LEADER)


def test_an_end_quorum_epoch_reaching_a_prospective_voter_keeps_it_from_following_the_resigned_leader() -> (
    None
):
    ctx, _ = _follower(voters=[1, 2, 3, 4, 5])
    ctx.poll(advance_ms=ctx.node.config.fetch_timeout_ms)  # its fetch timer ran out first
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(ctx.end_epoch_request(epoch=EPOCH, leader=LEADER, successors=[3, 1, 4, 5]), source=LEADER)
    _answer_votes(ctx, {2: True, 3: False, 4: False, 5: False})
    ctx.poll()
    assert (ctx.node.role, ctx.node.epoch) == (Role.PROSPECTIVE, EPOCH)


def test_the_first_successor_waits_for_the_records_the_leader_sent_it_before_resigning() -> None:
    ctx, fetch = _follower(voters=[1, 2, 3])
    assert isinstance(fetch.body, FetchRequest)
    offset = fetch.body.fetch_offset
    ctx.deliver(ctx.end_epoch_request(epoch=EPOCH, leader=LEADER, successors=[1, 3]), source=LEADER)
    ctx.poll()
    assert ctx.node.role is Role.FOLLOWER and ctx.sent_of(VoteRequest) == []  # backoff 0, but waits
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState)
    assert ctx.wake_at_ms == state.fetch_deadline_ms + ctx.node.config.retry_backoff_ms
    # The answer, sent by the leader before it resigned, arrives after the EndQuorumEpoch.
    records = build_batch(
        [SimpleRecord(value=b"a"), SimpleRecord(value=b"b")], base_offset=offset, partition_leader_epoch=EPOCH
    )
    ctx.respond_to(
        fetch,
        FetchResponse(
            high_watermark=0, records=records, current_leader_id=LEADER, current_leader_epoch=EPOCH
        ),
    )
    ctx.poll(advance_ms=3)
    assert ctx.node.role is Role.PROSPECTIVE
    votes = [e.body for e in ctx.sent_of(VoteRequest)]
    assert votes and all(
        isinstance(v, VoteRequest) and (v.last_offset_epoch, v.last_offset) == (EPOCH, offset + 2)
        for v in votes
    )


def test_the_wait_for_that_answer_lasts_at_most_retry_backoff() -> None:
    ctx, _ = _follower(voters=[1, 2, 3])
    ctx.deliver(ctx.end_epoch_request(epoch=EPOCH, leader=LEADER, successors=[1, 3]), source=LEADER)
    ctx.poll()
    ctx.poll(advance_ms=ctx.node.config.retry_backoff_ms - 1)
    assert ctx.node.role is Role.FOLLOWER
    ctx.poll(advance_ms=1)  # the answer was lost: campaign with what it has
    assert ctx.node.role is Role.PROSPECTIVE
