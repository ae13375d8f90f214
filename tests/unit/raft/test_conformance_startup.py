"""Spec conformance: startup from the election store (spec 1.2) and what follows it (spec 1.1)."""

from __future__ import annotations

from raft_context import RaftTestContext

from kraft.raft.states import Role


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
