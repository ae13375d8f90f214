"""Spec conformance: raft-metrics meanings (spec 10)."""

from __future__ import annotations

import math

from raft_context import RaftTestContext

from kraft.raft.messages import FetchRequest, FetchResponse, VoteRequest, VoteResponse
from kraft.raft.states import Role


def elected_leader() -> RaftTestContext:
    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=4).build()
    ctx.poll(advance_ms=10_000)
    for _ in range(2):  # pre-votes, then votes
        for env in ctx.sent_of(VoteRequest):
            ctx.respond_to(env, VoteResponse(leader_epoch=ctx.node.epoch, vote_granted=True))
        ctx.poll()
    assert ctx.node.role is Role.LEADER
    return ctx


def test_commit_latency_is_recorded_only_for_batches_committed_while_leader_spec_10() -> None:
    ctx = elected_leader()
    ctx.node.schedule_append(ctx.node.epoch, [b"a", b"b"])
    ctx.poll(advance_ms=100)  # linger elapses: drained and flushed, not yet committed
    end = ctx.log.end_offset()
    ctx.node.resign(ctx.node.epoch)
    ctx.deliver(ctx.begin_epoch_request(epoch=ctx.node.epoch + 1, leader=2), source=2)
    ctx.poll(advance_ms=1)
    assert ctx.node.role is Role.FOLLOWER
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(
        fetch, FetchResponse(high_watermark=end, current_leader_id=2, current_leader_epoch=ctx.node.epoch)
    )
    ctx.poll(advance_ms=5_000)
    assert ctx.node.high_watermark == end  # the old batches are committed now, but by another leader
    assert math.isnan(ctx.node.metrics.commit_latency_avg)
    assert math.isnan(ctx.node.metrics.commit_latency_max)
