"""Spec conformance: at most one vote per node per epoch (spec 1.1 rules, 1.2, 3.4).

A Candidate has voted for itself in its epoch; every same-epoch transition out of Candidate must
keep that vote, in memory and in the election store, or the node could grant a second vote.
"""

from __future__ import annotations

from raft_context import RaftTestContext, dir_id

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.states import Role
from kraft.raft.types import ReplicaKey

SELF = ReplicaKey(1, dir_id(1))


def candidate_in_epoch_5() -> RaftTestContext:
    # Spec 1.2 rule 3: a file that says "voted for self" restarts as Candidate in that epoch.
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_voted_candidate(epoch=5, candidate_id=1)
        .build()
    )
    assert ctx.node.role is Role.CANDIDATE and ctx.node.epoch == 5
    return ctx


def test_candidate_timing_out_to_prospective_keeps_its_self_vote_spec_1_1() -> None:
    ctx = candidate_in_epoch_5()
    ctx.poll(advance_ms=2_001)  # past any random election timeout: Candidate -> Prospective(5)
    assert ctx.node.role is Role.PROSPECTIVE
    assert ctx.node.epoch == 5
    assert ctx.node.voted_key == SELF


def test_prospective_that_was_candidate_rejects_a_second_standard_vote_in_the_epoch_spec_3_4() -> None:
    ctx = candidate_in_epoch_5()
    ctx.poll(advance_ms=2_001)
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=0, last_offset=0), source=3)
    ctx.poll()
    ctx.assert_sent_vote_response(ErrorCode.NONE, epoch=5, leader_id=None, granted=False)
    assert ctx.store.read() is not None and ctx.store.read().voted_key == SELF  # type: ignore[union-attr]
    assert all(s.voted_key in (None, SELF) for s in ctx.store.history if s.epoch == 5)


def test_failed_pre_vote_after_candidacy_persists_unattached_with_the_self_vote_spec_1_1() -> None:
    ctx = candidate_in_epoch_5()
    ctx.poll(advance_ms=2_001)  # -> Prospective(5)
    ctx.poll(advance_ms=2_001)  # pre-vote timer expires -> Unattached(5), durable, vote kept
    assert ctx.node.role is Role.UNATTACHED
    assert ctx.node.voted_key == SELF
    stored = ctx.store.read()
    assert stored is not None and stored.epoch == 5 and stored.voted_key == SELF


def test_candidate_learning_the_leader_of_its_epoch_keeps_its_vote_durably_spec_1_1() -> None:
    ctx = candidate_in_epoch_5()
    ctx.deliver(ctx.begin_epoch_request(epoch=5, leader=3), source=3)
    ctx.poll()
    assert ctx.node.role is Role.FOLLOWER and ctx.node.leader_id == 3
    assert ctx.node.voted_key == SELF
    stored = ctx.store.read()
    assert stored is not None and stored.leader_id == 3 and stored.voted_key == SELF
