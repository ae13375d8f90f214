"""Spec conformance: log replication, truncation and the high watermark (spec 4.2, 4.3)."""

from __future__ import annotations

import pytest
from raft_context import RaftTestContext

from kraft.common.errors import FatalError
from kraft.raft.messages import (
    FetchRequest,
    FetchResponse,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.states import Role
from kraft.raft.types import OffsetAndEpoch


def test_former_leader_with_unknown_high_watermark_never_truncates_committed_data_spec_4_2() -> None:
    # A follower learns HW 3, then wins an election (a new leader's HW is unknown, spec 4.3),
    # then follows someone else: offsets below 3 are still committed and must never be truncated.
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=4, leader_id=2)
        .with_log(1, 1, 3)
        .build()
    )
    ctx.poll()
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(fetch, FetchResponse(high_watermark=3, current_leader_id=2, current_leader_epoch=4))
    ctx.poll()
    assert ctx.node.high_watermark == 3
    ctx.poll(advance_ms=10_000)  # fetch timeout -> Prospective(4)
    for _ in range(2):  # pre-votes, then votes
        for env in ctx.sent_of(VoteRequest):
            ctx.respond_to(env, VoteResponse(leader_epoch=ctx.node.epoch, vote_granted=True))
        ctx.poll()
    assert ctx.node.role is Role.LEADER and ctx.node.epoch == 5
    assert ctx.node.high_watermark is None
    ctx.deliver(ctx.begin_epoch_request(epoch=6, leader=3), source=3)
    ctx.poll()
    assert ctx.node.role is Role.FOLLOWER and ctx.node.leader_id == 3
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(
        fetch,
        FetchResponse(diverging_epoch=OffsetAndEpoch(2, 1), current_leader_id=3, current_leader_epoch=6),
    )
    with pytest.raises(FatalError):
        ctx.poll()
    assert ctx.log.end_offset() >= 3  # nothing committed was cut
