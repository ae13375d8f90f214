"""Spec conformance: startup from the election store (spec 1.2) and what follows it (spec 1.1)."""

from __future__ import annotations

from raft_context import RaftTestContext

from kraft.raft.states import Role, UnattachedState


def test_node_restarted_as_observer_after_leading_resigns_then_moves_to_the_next_epoch_spec_1_2() -> None:
    # Spec 1.2 rule 2 applies to any node whose file names itself leader; spec 1.1 (3.9 note):
    # a Resigned observer leaves for Unattached(E + 1), never Prospective or Candidate.
    ctx = (
        RaftTestContext.builder(local_id=4, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=4)
        .build()
    )
    assert ctx.node.role is Role.RESIGNED and ctx.node.epoch == 5
    ctx.poll(advance_ms=1)
    assert ctx.node.role is Role.UNATTACHED
    assert ctx.node.epoch == 6
    stored = ctx.store.read()
    assert stored is not None and stored.epoch == 6 and stored.leader_id is None


def test_higher_epoch_vote_keeps_the_remaining_election_timer_of_an_unattached_voter_spec_1_1() -> None:
    # Kafka's transitionToUnattached keeps the remaining time of an Unattached/Candidate voter: a
    # rejected disruptive candidate must not push everyone's election back forever.
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=4).with_log(4).build()
    )
    state = ctx.node.quorum.state
    assert isinstance(state, UnattachedState) and state.election_deadline_ms is not None
    deadline = state.election_deadline_ms
    # Candidate 3 has an older log (last epoch 3 < 4): rejected, but its epoch 5 is adopted.
    ctx.deliver(ctx.vote_request(epoch=5, candidate=3, last_epoch=3, last_offset=1), source=3)
    ctx.poll(advance_ms=1)
    after = ctx.node.quorum.state
    assert isinstance(after, UnattachedState) and after.epoch == 5 and after.voted_key is None
    assert after.election_deadline_ms == deadline
