"""RaftNode behaviour, one node under test (leader, follower, resigned, fetch, EndQuorumEpoch)."""

from __future__ import annotations

import pytest
from raft_context import RaftTestContext, dir_id

from kraft.common.errors import FatalError, NotLeaderError
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.end_epoch import successor_backoff_ms
from kraft.raft.messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchResponse,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.states import FollowerState, LeaderState, Role
from kraft.raft.types import OffsetAndEpoch, ReplicaKey
from kraft.records.batch import SimpleRecord, build_batch, iter_batches
from kraft.records.control import ControlType, control_type_of
from kraft.storage.metadata_log import MetadataLog


def elect_local_leader(ctx: RaftTestContext) -> None:
    """Unattached -> Prospective -> Candidate -> Leader with votes from 2 and 3."""
    ctx.poll(advance_ms=10_000)
    assert ctx.node.role is Role.PROSPECTIVE
    for env in ctx.sent_of(VoteRequest):
        assert isinstance(env.body, VoteRequest) and env.body.pre_vote
        ctx.respond_to(env, VoteResponse(leader_epoch=ctx.node.epoch, vote_granted=True))
    ctx.poll()
    assert ctx.node.role is Role.CANDIDATE
    for env in ctx.sent_of(VoteRequest):
        assert isinstance(env.body, VoteRequest) and not env.body.pre_vote
        ctx.respond_to(env, VoteResponse(leader_epoch=ctx.node.epoch, vote_granted=True))
    ctx.poll()
    assert ctx.node.role is Role.LEADER


def leader_ctx(*log_epochs: int) -> RaftTestContext:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_unknown_leader(epoch=4)
        .with_log(*log_epochs)
        .build()
    )
    elect_local_leader(ctx)
    return ctx


def test_pre_vote_election_bumps_epoch_once_and_writes_leader_change() -> None:
    ctx = leader_ctx(1, 2)
    assert ctx.node.epoch == 5
    assert ctx.store.read().leader_id == 1
    batches = list(iter_batches(ctx.log.read(2, 1 << 20)))
    assert batches[0].is_control and control_type_of(batches[0].records[0]) is ControlType.LEADER_CHANGE
    assert batches[0].partition_leader_epoch == 5
    # Written in the poll that sent BeginQuorumEpoch, fsynced in the next one, which is due at once
    # (as Kafka's flushLeaderLog: the followers may fetch it while the leader flushes); the
    # leader's own end offset counts toward the high watermark only once it is flushed.
    leader = ctx.node.leader_state()
    assert leader is not None
    assert ctx.log.last_flushed_offset() == 2 and ctx.log.end_offset() == 3
    assert leader.voters[1].end_offset != 3
    assert ctx.wake_at_ms == ctx.now_ms
    ctx.poll()
    assert ctx.log.last_flushed_offset() == ctx.log.end_offset() == 3
    assert leader.voters[1].end_offset == 3


def test_prospective_does_not_bump_epoch_and_rejection_returns_to_unattached() -> None:
    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=4).build()
    writes = ctx.store.writes
    ctx.poll(advance_ms=10_000)
    assert (ctx.node.role, ctx.node.epoch, ctx.store.writes) == (Role.PROSPECTIVE, 4, writes)
    for env in ctx.sent_of(VoteRequest):
        ctx.respond_to(env, VoteResponse(leader_epoch=4, vote_granted=False))
    ctx.poll()
    assert (ctx.node.role, ctx.node.epoch) == (Role.UNATTACHED, 4)


def test_new_leader_high_watermark_unknown_until_majority_fetches_past_epoch_start() -> None:
    ctx = leader_ctx(1, 2)
    start = 2  # epoch start offset = LEO at election
    assert ctx.node.high_watermark is None
    # A fetch at the old end does not commit anything of the new epoch.
    ctx.deliver(ctx.fetch_request(epoch=5, replica=2, fetch_offset=2, last_fetched_epoch=2), source=2)
    ctx.poll()
    assert ctx.node.high_watermark is None
    ctx.deliver(ctx.fetch_request(epoch=5, replica=2, fetch_offset=start + 1, last_fetched_epoch=5), source=2)
    ctx.poll()
    assert ctx.node.high_watermark == start + 1
    assert ctx.listener.leaders[-1].leader_id == 1 and ctx.listener.leaders[-1].epoch == 5


def test_observer_fetches_do_not_advance_the_high_watermark() -> None:
    ctx = leader_ctx()
    ctx.deliver(ctx.fetch_request(epoch=5, replica=9, fetch_offset=1, last_fetched_epoch=5), source=9)
    ctx.poll()
    assert ctx.node.high_watermark is None
    described = ctx.node.describe_quorum(ctx.now_ms)
    assert [o.replica_id for o in described.observers] == [9]


def test_a_reader_without_a_node_id_is_served_but_not_listed_as_an_observer() -> None:
    ctx = leader_ctx()
    leo = told_the_high_watermark(ctx)
    ctx.deliver(ctx.fetch_request(epoch=5, replica=-1, fetch_offset=0, last_fetched_epoch=0, max_wait_ms=500))
    ctx.poll()
    assert ctx.assert_sent_fetch_response().high_watermark == leo  # answered, not parked
    assert [o.replica_id for o in ctx.node.describe_quorum(ctx.now_ms).observers] == []


def test_fetch_with_stale_epoch_is_fenced_and_future_epoch_unknown() -> None:
    ctx = leader_ctx()
    ctx.deliver(ctx.fetch_request(epoch=4, replica=2, fetch_offset=0, last_fetched_epoch=0), source=2)
    ctx.poll()
    body = ctx.assert_sent_fetch_response(ErrorCode.FENCED_LEADER_EPOCH)
    assert (body.current_leader_id, body.current_leader_epoch) == (1, 5)
    ctx.deliver(ctx.fetch_request(epoch=6, replica=2, fetch_offset=0, last_fetched_epoch=0), source=2)
    ctx.poll()
    ctx.assert_sent_fetch_response(ErrorCode.UNKNOWN_LEADER_EPOCH)


def test_fetch_with_diverging_epoch_gets_the_divergence_point() -> None:
    ctx = leader_ctx(1, 1, 3)
    ctx.deliver(ctx.fetch_request(epoch=5, replica=2, fetch_offset=4, last_fetched_epoch=2), source=2)
    ctx.poll()
    body = ctx.assert_sent_fetch_response()
    assert body.diverging_epoch == OffsetAndEpoch(2, 1)


def told_the_high_watermark(ctx: RaftTestContext, replica: int = 2) -> int:
    """A fetch at the log end whose answer carries the current high watermark (the replica did not
    know it), so the replica's next empty fetch is parked."""
    leo = ctx.log.end_offset()
    ctx.deliver(
        ctx.fetch_request(epoch=5, replica=replica, fetch_offset=leo, last_fetched_epoch=5, max_wait_ms=500)
    )
    ctx.poll()
    body = ctx.assert_sent_fetch_response()
    assert body.records == b"" and body.high_watermark == ctx.node.high_watermark
    return leo


def test_a_fetcher_that_does_not_know_the_high_watermark_is_answered_at_once_then_parked() -> None:
    # KIP-1166's rule, inferred by the leader: the fetch at the log end acknowledges the epoch's
    # first record, which commits it; the answer carries the new high watermark at once instead of
    # waiting for the next write. The same replica's next empty fetch is parked.
    ctx = leader_ctx()
    leo = told_the_high_watermark(ctx)
    assert ctx.node.high_watermark == leo
    ctx.deliver(
        ctx.fetch_request(epoch=5, replica=2, fetch_offset=leo, last_fetched_epoch=5, max_wait_ms=500)
    )
    ctx.poll()
    assert ctx.sent_of(FetchResponse) == []
    # Another replica does not know it yet: answered at once too.
    ctx.deliver(
        ctx.fetch_request(epoch=5, replica=3, fetch_offset=leo, last_fetched_epoch=5, max_wait_ms=500)
    )
    ctx.poll()
    assert ctx.assert_sent_fetch_response().high_watermark == leo


def test_empty_fetch_is_parked_and_completed_by_an_append() -> None:
    ctx = leader_ctx()
    leo = told_the_high_watermark(ctx)
    ctx.deliver(
        ctx.fetch_request(epoch=5, replica=2, fetch_offset=leo, last_fetched_epoch=5, max_wait_ms=500)
    )
    ctx.poll()
    assert ctx.sent_of(FetchResponse) == []
    ctx.node.schedule_append(5, [b"x"])
    ctx.poll(advance_ms=30)  # linger 25 ms
    body = ctx.assert_sent_fetch_response()
    assert [r.value for b in iter_batches(body.records) for r in b.records] == [b"x"]


def test_parked_fetch_expires_empty_after_max_wait() -> None:
    ctx = leader_ctx()
    leo = told_the_high_watermark(ctx)
    ctx.deliver(
        ctx.fetch_request(epoch=5, replica=2, fetch_offset=leo, last_fetched_epoch=5, max_wait_ms=100)
    )
    ctx.poll()
    ctx.poll(advance_ms=99)
    assert ctx.sent_of(FetchResponse) == []
    ctx.poll(advance_ms=1)
    assert ctx.assert_sent_fetch_response().records == b""


def test_parked_fetch_fails_with_not_leader_on_resign() -> None:
    ctx = leader_ctx()
    leo = told_the_high_watermark(ctx)
    ctx.deliver(
        ctx.fetch_request(epoch=5, replica=2, fetch_offset=leo, last_fetched_epoch=5, max_wait_ms=500)
    )
    ctx.poll()
    ctx.node.resign(5)
    ctx.poll()
    ctx.assert_sent_fetch_response(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert ctx.node.role is Role.RESIGNED
    end = ctx.sent_of(EndQuorumEpochRequest)
    assert sorted(e.destination for e in end) == [2, 3]


def test_schedule_append_on_non_leader_raises_not_leader() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    with pytest.raises(NotLeaderError):
        ctx.node.schedule_append(5, [b"x"])
    ctx2 = leader_ctx()
    with pytest.raises(NotLeaderError):
        ctx2.node.schedule_append(4, [b"x"])


def test_check_quorum_expiry_resigns_and_sends_end_quorum_epoch() -> None:
    ctx = leader_ctx()
    ctx.poll(advance_ms=3_001)  # 1.5 x fetch timeout (2000) without voter fetches
    assert ctx.node.role is Role.RESIGNED
    assert {e.destination for e in ctx.sent_of(EndQuorumEpochRequest)} == {2, 3}


def test_check_quorum_is_satisfied_by_one_follower_fetch() -> None:
    ctx = leader_ctx()
    ctx.poll(advance_ms=2_000)
    ctx.deliver(ctx.fetch_request(epoch=5, replica=2, fetch_offset=0, last_fetched_epoch=0), source=2)
    ctx.poll(advance_ms=1_500)
    assert ctx.node.role is Role.LEADER


def test_leader_announces_itself_with_begin_quorum_epoch() -> None:
    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=4).build()
    ctx.poll(advance_ms=10_000)
    for env in ctx.sent_of(VoteRequest):
        ctx.respond_to(env, VoteResponse(leader_epoch=4, vote_granted=True))
    ctx.poll()
    for env in ctx.sent_of(VoteRequest):
        ctx.respond_to(env, VoteResponse(leader_epoch=5, vote_granted=True))
    ctx.poll()
    assert {e.destination for e in ctx.sent_of(BeginQuorumEpochRequest)} == {2, 3}


def test_follower_truncates_on_divergence_across_epochs() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=6, leader_id=2)
        .with_log(1, 1, 2, 3, 3)
        .build()
    )
    ctx.poll()
    fetch = ctx.sent_of(FetchRequest)[0]
    assert isinstance(fetch.body, FetchRequest) and (
        fetch.body.fetch_offset,
        fetch.body.last_fetched_epoch,
    ) == (5, 3)
    # The leader's log has epoch 1 to offset 2 and epoch 4 from there: our epoch 3 diverges.
    ctx.respond_to(
        fetch,
        FetchResponse(diverging_epoch=OffsetAndEpoch(2, 1), current_leader_id=2, current_leader_epoch=6),
    )
    ctx.poll()
    assert ctx.log.end_offset() == 2
    fetch = ctx.sent_of(FetchRequest)[0]
    assert isinstance(fetch.body, FetchRequest) and (
        fetch.body.fetch_offset,
        fetch.body.last_fetched_epoch,
    ) == (2, 1)
    data = build_batch([SimpleRecord(value=b"new")], base_offset=2, partition_leader_epoch=4)
    ctx.respond_to(
        fetch, FetchResponse(records=data, high_watermark=3, current_leader_id=2, current_leader_epoch=6)
    )
    ctx.poll()
    assert ctx.log.end_offset() == 3 and ctx.node.high_watermark == 3
    assert ctx.log.last_flushed_offset() == 3
    assert ctx.listener.values() == [b"r0", b"r1", b"new"]


def test_follower_never_truncates_below_high_watermark() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=6, leader_id=2)
        .with_log(1, 1, 3)
        .build()
    )
    ctx.poll()
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(fetch, FetchResponse(high_watermark=3, current_leader_id=2, current_leader_epoch=6))
    ctx.poll()
    assert ctx.node.high_watermark == 3
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(
        fetch,
        FetchResponse(diverging_epoch=OffsetAndEpoch(2, 1), current_leader_id=2, current_leader_epoch=6),
    )
    with pytest.raises(FatalError):
        ctx.poll()


def test_follower_learns_higher_epoch_from_fetch_response() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    ctx.poll()
    fetch = ctx.sent_of(FetchRequest)[0]
    ctx.respond_to(
        fetch,
        FetchResponse(
            partition_error_code=ErrorCode.FENCED_LEADER_EPOCH, current_leader_id=3, current_leader_epoch=7
        ),
    )
    ctx.poll()
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 7, 3)
    assert ctx.store.read().epoch == 7 and ctx.store.read().leader_id == 3
    assert ctx.sent_of(FetchRequest)[0].destination == 3


def test_follower_fetch_timeout_starts_prospective_keeping_epoch() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    ctx.poll(advance_ms=2_001)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.PROSPECTIVE, 5, 2)
    assert all(isinstance(e.body, VoteRequest) and e.body.pre_vote for e in ctx.sent_of(VoteRequest))


def test_a_lost_pre_vote_goes_back_to_the_leader_but_tries_again_after_an_election_timeout() -> None:
    # As Kafka, the node follows its leader again (it may be alive after all); past Kafka, whose
    # fetch timer restarts in full, it tries again within an election timeout: it already went a
    # fetch timeout without an answer (found by: kraft sim run --scenario zombie-leader --seed 5603).
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .with_config(fetch_timeout_ms=3_000)
        .build()
    )
    ctx.poll(advance_ms=3_001)
    for env in ctx.sent_of(VoteRequest):
        ctx.respond_to(env, VoteResponse(leader_epoch=5, leader_id=2, vote_granted=False))
    ctx.poll()
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState) and not state.has_fetched_from_leader
    election_timeout = ctx.node.config.election_timeout_ms
    assert 2 * election_timeout <= 3_000  # else the test could not tell the two timers apart
    assert ctx.now_ms + election_timeout <= state.fetch_deadline_ms < ctx.now_ms + 2 * election_timeout
    ctx.poll(advance_ms=state.fetch_deadline_ms - ctx.now_ms)
    assert ctx.node.role is Role.PROSPECTIVE


def test_begin_quorum_epoch_makes_unattached_voter_a_follower() -> None:
    ctx = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_unknown_leader(epoch=5).build()
    ctx.deliver(ctx.begin_epoch_request(epoch=6, leader=2), source=2)
    ctx.poll()
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 6, 2)


@pytest.mark.parametrize(
    ("successors", "expected"),
    [([1, 3], 0), ([3, 1], 1000 >> 1), ([3], 1000), ([3, 4, 1], (1000 >> 2) << 1)],
)
def test_end_quorum_epoch_backoff_by_successor_position(successors: list[int], expected: int) -> None:
    keys = tuple(ReplicaKey(s, dir_id(s)) for s in successors)
    assert successor_backoff_ms(ReplicaKey(1, dir_id(1)), keys, 1000) == expected


def test_first_preferred_successor_starts_election_at_once() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    ctx.deliver(ctx.end_epoch_request(epoch=5, leader=2, successors=[1, 3]), source=2)
    ctx.poll()
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState) or ctx.node.role is Role.PROSPECTIVE
    ctx.poll(advance_ms=1)
    assert ctx.node.role is Role.PROSPECTIVE


def test_describe_quorum_not_leader_and_leader_timestamps() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    assert ctx.node.describe_quorum(0).partition_error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    ctx = leader_ctx()
    leo = ctx.log.end_offset()
    ctx.deliver(ctx.fetch_request(epoch=5, replica=2, fetch_offset=leo, last_fetched_epoch=5), source=2)
    ctx.poll(advance_ms=7)
    d = ctx.node.describe_quorum(ctx.now_ms + 3)
    me, two, three = d.current_voters
    assert (me.replica_id, me.last_fetch_timestamp, me.last_caught_up_timestamp) == (
        1,
        ctx.now_ms + 3,
        ctx.now_ms + 3,
    )
    assert (two.log_end_offset, two.last_fetch_timestamp, two.last_caught_up_timestamp) == (
        leo,
        ctx.now_ms,
        ctx.now_ms,
    )
    assert (three.log_end_offset, three.last_fetch_timestamp) == (-1, -1)
    assert d.high_watermark == leo


def test_restart_after_being_leader_resigns_instead_of_leading() -> None:
    ctx = leader_ctx()
    from raft_context import Builder

    b = Builder(1, [1, 2, 3])
    b.state = ctx.store.read()
    restarted = b.build()
    assert restarted.node.role is Role.RESIGNED and restarted.node.epoch == 5
    restarted.poll(advance_ms=10_000)
    assert restarted.node.epoch == 6 and restarted.node.role is Role.PROSPECTIVE


def test_sole_voter_elects_itself_immediately() -> None:
    ctx = RaftTestContext.builder(local_id=1, voters=[1]).build()
    ctx.poll()
    assert ctx.node.role is Role.LEADER and ctx.node.epoch == 1
    assert isinstance(ctx.node.quorum.state, LeaderState)
    last = ctx.node.schedule_append(1, [b"a"])
    ctx.poll(advance_ms=25)
    assert ctx.node.high_watermark == last + 1
    assert ctx.listener.values() == [b"a"]


def _follower_of_2(log: object | None = None) -> RaftTestContext:
    builder = RaftTestContext.builder(local_id=1, voters=[1, 2, 3]).with_elected_leader(epoch=6, leader_id=2)
    if log is not None:
        builder = builder.with_log_instance(log)
    ctx = builder.build()
    ctx.poll()
    return ctx


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_follower_appends_the_whole_batches_of_a_fetch_cut_inside_a_batch(kind: str, tmp_path) -> None:
    # A Kafka leader reads its log by bytes (LogSegment.read), so a Fetch answer can end inside a
    # batch; Kafka's follower appends the whole batches and fetches the rest next time.
    log = MetadataLog(tmp_path / "__cluster_metadata-0") if kind == "file" else None
    ctx = _follower_of_2(log)
    fetch = ctx.sent_of(FetchRequest)[0]
    first = build_batch(
        [SimpleRecord(value=b"a"), SimpleRecord(value=b"b")], base_offset=0, partition_leader_epoch=6
    )
    second = build_batch([SimpleRecord(value=b"c")], base_offset=2, partition_leader_epoch=6)
    response = FetchResponse(
        records=first + second[: len(second) // 2],
        high_watermark=2,
        current_leader_id=2,
        current_leader_epoch=6,
    )
    ctx.respond_to(fetch, response)
    ctx.poll()
    assert ctx.log.end_offset() == 2
    assert (ctx.node.role, ctx.node.leader_id, ctx.node.high_watermark) == (Role.FOLLOWER, 2, 2)
    refetch = ctx.sent_of(FetchRequest)
    assert refetch and isinstance(refetch[0].body, FetchRequest) and refetch[0].body.fetch_offset == 2


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_follower_refuses_a_fetch_that_holds_no_whole_batch(kind: str, tmp_path) -> None:
    log = MetadataLog(tmp_path / "__cluster_metadata-0") if kind == "file" else None
    ctx = _follower_of_2(log)
    fetch = ctx.sent_of(FetchRequest)[0]
    batch = build_batch([SimpleRecord(value=b"a")], base_offset=0, partition_leader_epoch=6)
    response = FetchResponse(
        records=batch[:-3], high_watermark=1, current_leader_id=2, current_leader_epoch=6
    )
    ctx.respond_to(fetch, response)
    ctx.poll()
    # Nothing appended and no busy loop: the next Fetch waits out the retry backoff.
    assert ctx.log.end_offset() == 0 and ctx.sent_of(FetchRequest) == []
    ctx.poll(advance_ms=ctx.node.config.retry_backoff_ms + 1)
    refetch = ctx.sent_of(FetchRequest)
    assert refetch and isinstance(refetch[0].body, FetchRequest) and refetch[0].body.fetch_offset == 0


@pytest.mark.parametrize("damage", ["flip_crc_covered_byte", "wrong_base_offset", "impossible_length"])
def test_follower_ignores_corrupt_fetched_records_without_appending(damage: str) -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=6, leader_id=2)
        .with_log(1, 1)
        .build()
    )
    ctx.poll()
    fetch = ctx.sent_of(FetchRequest)[0]
    data = bytearray(build_batch([SimpleRecord(value=b"x")], base_offset=2, partition_leader_epoch=6))
    if damage == "flip_crc_covered_byte":
        data[-1] ^= 0x01
    elif damage == "wrong_base_offset":
        data = bytearray(build_batch([SimpleRecord(value=b"x")], base_offset=7, partition_leader_epoch=6))
    else:
        data[8:12] = (5).to_bytes(4, "big")
    response = FetchResponse(
        records=bytes(data), high_watermark=3, current_leader_id=2, current_leader_epoch=6
    )
    ctx.respond_to(fetch, response)
    ctx.poll()
    # Nothing appended, the node still follows the same leader, and it fetches again from offset 2.
    assert ctx.log.end_offset() == 2
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 6, 2)
    ctx.poll(advance_ms=ctx.node.config.retry_backoff_ms + 1)
    refetch = ctx.sent_of(FetchRequest)
    assert refetch and isinstance(refetch[0].body, FetchRequest) and refetch[0].body.fetch_offset == 2
