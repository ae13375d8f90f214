"""Where a follower's fetches go when the leader's advertised endpoint fails: the bootstrap servers
(``controller.quorum.bootstrap.servers``, ids -2, -3, ...), whichever of them is the leader.

Kafka 4.1 (KAFKA-19354) keeps an observer's leader after a fetch timeout and fetches from the
bootstrap servers; here the bootstrap address that answered as the leader is then kept, a voter
with bootstrap servers falls back on an error answer too, and answers that teach nothing back off.
"""

from __future__ import annotations

from raft_context import RaftTestContext

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import FetchRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse
from kraft.raft.states import FollowerState, Role
from kraft.raft.types import Endpoint, OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch

BOOTSTRAP = tuple(Endpoint("CONTROLLER", f"bootstrap{v}", 9093) for v in (1, 2, 3))


def _fetches(ctx: RaftTestContext) -> list[int]:
    return [e.destination for e in ctx.sent_of(FetchRequest)]


def _observer_following(leader: int = 2, epoch: int = 5) -> RaftTestContext:
    ctx = (
        RaftTestContext.builder(local_id=4, voters=[1, 2, 3])
        .with_elected_leader(epoch=epoch, leader_id=leader)
        .with_config(bootstrap_servers=BOOTSTRAP)
        .build()
    )
    ctx.poll()
    assert ctx.node.role is Role.FOLLOWER and _fetches(ctx) == [leader]
    return ctx


def _records(base_offset: int, epoch: int = 5) -> bytes:
    return build_batch(
        [SimpleRecord(value=b"r%d" % base_offset)], base_offset=base_offset, partition_leader_epoch=epoch
    )


def test_observer_keeps_its_leader_after_a_fetch_timeout_and_fetches_from_the_bootstrap_servers() -> None:
    ctx = _observer_following()  # its fetch to node 2 is never answered (unreachable endpoint)
    ctx.poll(advance_ms=2_000)  # fetch.timeout.ms (and request.timeout.ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    [destination] = _fetches(ctx)
    assert destination in (-2, -3, -4)
    ctx.poll(advance_ms=1)
    assert _fetches(ctx) == []  # one fetch in flight at a time


def test_observer_appends_the_leaders_answer_through_a_bootstrap_server_and_keeps_fetching_there() -> None:
    ctx = _observer_following()
    ctx.poll(advance_ms=2_001)
    [request] = ctx.sent_of(FetchRequest)
    ctx.respond_to(
        request,
        FetchResponse(high_watermark=1, records=_records(0), current_leader_id=2, current_leader_epoch=5),
    )
    ctx.poll()
    assert ctx.log.end_offset() == 1 and ctx.node.high_watermark == 1
    assert _fetches(ctx) == [request.destination]  # not back to the unreachable endpoint
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState) and state.fetch_via == request.destination
    assert state.fetch_deadline_ms == ctx.now_ms + 2_000  # a successful fetch


def test_a_bootstrap_server_that_is_not_the_leader_backs_off_and_another_is_tried() -> None:
    ctx = _observer_following()
    ctx.poll(advance_ms=2_001)
    [request] = ctx.sent_of(FetchRequest)
    ctx.respond_to(
        request,
        FetchResponse(
            partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, current_leader_id=2, current_leader_epoch=5
        ),
    )
    ctx.poll()
    [second] = _fetches(ctx)
    assert second != request.destination and second < 0
    assert ctx.node.leader_id == 2


def test_voter_with_bootstrap_servers_fetches_through_them_when_the_leader_refuses() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .with_config(bootstrap_servers=BOOTSTRAP)
        .build()
    )
    ctx.poll()
    [request] = ctx.sent_of(FetchRequest)
    # What the network layer answers for a refused connection (spec 4.7).
    ctx.respond_to(request, FetchResponse(error_code=ErrorCode.BROKER_NOT_AVAILABLE))
    ctx.poll()
    [destination] = _fetches(ctx)
    assert destination in (-2, -3, -4)
    assert ctx.node.role is Role.FOLLOWER


def test_voter_without_bootstrap_servers_keeps_fetching_from_its_leader() -> None:
    ctx = (
        RaftTestContext.builder(local_id=1, voters=[1, 2, 3])
        .with_elected_leader(epoch=5, leader_id=2)
        .build()
    )
    ctx.poll()
    [request] = ctx.sent_of(FetchRequest)
    ctx.respond_to(request, FetchResponse(error_code=ErrorCode.BROKER_NOT_AVAILABLE))
    ctx.poll()
    assert _fetches(ctx) == []  # backing off
    ctx.poll(advance_ms=20)  # retry.backoff.ms
    assert _fetches(ctx) == [2]


def test_unattached_observer_backs_off_a_discovery_answer_that_names_no_leader() -> None:
    ctx = (
        RaftTestContext.builder(local_id=4, voters=[1, 2, 3])
        .with_unknown_leader(epoch=5)
        .with_config(bootstrap_servers=BOOTSTRAP)
        .build()
    )
    ctx.poll()
    [request] = ctx.sent_of(FetchRequest)
    ctx.respond_to(
        request,
        FetchResponse(
            partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
            current_leader_id=-1,
            current_leader_epoch=5,
        ),
    )
    ctx.poll()
    # Another bootstrap server may be asked at once, but not the one that just answered.
    assert request.destination not in _fetches(ctx)


def test_a_snapshot_the_leader_deleted_sends_the_next_fetch_back_where_the_leader_answered() -> None:
    # SNAPSHOT_NOT_FOUND is the leader answering (Kafka resets the fetch timer for it). Through a
    # bootstrap address, the next Fetch went to another bootstrap server, which was not the
    # leader (found by: kraft sim run --scenario voter-changes --seed 5856).
    ctx = _observer_following()
    [request] = ctx.sent_of(FetchRequest)
    ctx.respond_to(
        request,
        FetchResponse(
            high_watermark=40,
            log_start_offset=40,
            current_leader_id=2,
            current_leader_epoch=5,
            snapshot_id=OffsetAndEpoch(40, 5),
        ),
    )
    ctx.poll()
    [first] = ctx.sent_of(FetchSnapshotRequest)
    assert first.destination == 2
    ctx.poll(advance_ms=2_001)  # the leader's endpoint stops answering: the bootstrap servers
    [download] = ctx.sent_of(FetchSnapshotRequest)
    via = download.destination
    assert via in (-2, -3, -4)
    ctx.poll(advance_ms=5)
    ctx.respond_to(
        download,
        FetchSnapshotResponse(
            partition_error_code=ErrorCode.SNAPSHOT_NOT_FOUND,
            snapshot_id=OffsetAndEpoch(40, 5),
            current_leader_id=2,
            current_leader_epoch=5,
        ),
    )
    ctx.poll()
    assert _fetches(ctx) == [via]
    state = ctx.node.quorum.state
    assert isinstance(state, FollowerState) and state.download is None and state.fetch_via == via
    assert state.fetch_deadline_ms == ctx.now_ms + 2_000
