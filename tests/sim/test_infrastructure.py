"""The simulator's own machinery (network, disk, event loop, checkers) against a fake core."""

from __future__ import annotations

import random

import pytest
from sim_fakes import FakeRole, fake_factory

from kraft.raft.store import ElectionState
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch
from kraft.sim.disk import DiskProfile
from kraft.sim.network import LinkProfile, Network
from kraft.sim.state_machine import CounterStateMachine, StateLedger, decode_snapshot, encode_snapshot
from kraft.sim.world import World


def _batch(values: list[bytes], epoch: int = 1) -> bytes:
    return bytes(
        build_batch([SimpleRecord(value=v) for v in values], base_offset=0, partition_leader_epoch=epoch)
    )


def _world(seed: int = 7, voters: int = 3, **kw: object) -> World:
    world = World(seed=seed, voters=voters, node_factory=fake_factory, end_ms=1000, **kw)  # type: ignore[arg-type]
    world.start()
    return world


# -- network ---------------------------------------------------------------------------------------


def test_network_drops_blocked_links_in_one_direction_only() -> None:
    net = Network(random.Random(1))
    net.block(1, 2)
    assert net.route(1, 2, 0) == []
    assert len(net.route(2, 1, 0)) == 1
    assert net.stats.dropped_partition == 1


def test_network_loss_and_duplication_extremes() -> None:
    net = Network(random.Random(1), LinkProfile(min_delay_ms=3, max_delay_ms=9, loss=1.0))
    assert all(net.route(1, 2, 0) == [] for _ in range(50))
    net.set_default(LinkProfile(min_delay_ms=3, max_delay_ms=9, duplicate=1.0))
    arrivals = net.route(1, 2, 100)
    assert len(arrivals) == 2 and all(103 <= a <= 109 for a in arrivals)


def test_network_rejects_zero_delay_and_bad_probabilities() -> None:
    with pytest.raises(ValueError, match="min must be >= 1"):
        Network(random.Random(1), LinkProfile(min_delay_ms=0, max_delay_ms=3))
    with pytest.raises(ValueError, match="loss"):
        Network(random.Random(1), LinkProfile(loss=1.5))


def test_symmetric_partition_blocks_both_ways_and_heal_restores() -> None:
    net = Network(random.Random(1))
    net.partition([1], [2, 3])
    assert not net.connected(1, 2) and not net.connected(3, 1) and net.connected(2, 3)
    net.heal()
    assert net.connected(1, 2) and not net.has_partitions


# -- event loop ------------------------------------------------------------------------------------


def test_messages_arrive_within_the_link_delay_range() -> None:
    world = _world()
    world.run()
    node2 = world.nodes[2].raft
    from_1 = [t for t, src, _ in node2.received if src == 1]
    assert from_1, "node 2 never heard from node 1"
    # node 1 pings at 0, 100, 200, ...; delivery takes 2..7 ms (default link).
    assert all(2 <= t % 100 <= 7 for t in from_1)


def test_partition_started_while_in_flight_drops_the_message() -> None:
    world = _world()
    world.schedule(1, "cut", lambda: world.network.block(1, 2))  # pings left at t=0, arrive >= 2
    world.run()
    assert all(src != 1 for _, src, _ in world.nodes[2].raft.received)
    assert any(src == 3 for _, src, _ in world.nodes[2].raft.received)


def test_crash_drops_messages_of_the_old_incarnation_and_restart_polls_a_fresh_node() -> None:
    world = _world()
    world.schedule(1, "crash", lambda: world.crash(1))
    world.schedule(50, "restart", lambda: world.restart(1))
    world.run()
    assert world.nodes[1].incarnation == 1
    received_by_2 = world.nodes[2].raft.received
    # The t=0 pings of incarnation 0 were in flight at the crash: dropped; later pings arrive.
    assert all(t >= 50 for t, src, _ in received_by_2 if src == 1)
    assert any(src == 1 for _, src, _ in received_by_2)
    assert world.nodes[1].raft.polls[0] == 50


def test_crash_loses_unflushed_log_tail_but_keeps_flushed_prefix_and_store() -> None:
    world = _world()
    node = world.nodes[1]
    node.log.append_as_leader(_batch([b"a", b"b"]), 1)
    node.log.flush()
    node.log.append_as_leader(_batch([b"c"]), 1)
    node.store.write(ElectionState(epoch=3))
    world.crash(1)
    assert node.log.end_offset() == 2
    assert node.store.read() == ElectionState(epoch=3)


def test_slow_disk_holds_back_messages_until_the_fsync_bill_is_paid() -> None:
    world = _world()
    world.set_disk(1, DiskProfile(40, 40))
    original = world.nodes[1].raft.poll

    def flushing_poll(now_ms: int, inbound: object = ()) -> object:
        world.nodes[1].log.flush()
        return original(now_ms, inbound)

    world.nodes[1].raft.poll = flushing_poll
    world.run()
    arrivals = [t for t, src, _ in world.nodes[2].raft.received if src == 1]
    assert arrivals and all(t % 100 >= 42 for t in arrivals)  # 40 ms fsync + >= 2 ms delivery


def test_same_seed_same_trace_different_seed_different_trace() -> None:
    def trace(seed: int) -> str:
        world = _world(seed=seed)
        world.network.set_default(LinkProfile(min_delay_ms=1, max_delay_ms=30, loss=0.1, duplicate=0.1))
        world.run()
        return world.trace_hash

    assert trace(5) == trace(5)
    assert trace(5) != trace(6)


# -- state machine ---------------------------------------------------------------------------------


class _Batch:
    def __init__(self, base: int, last: int, epoch: int, records: tuple[bytes, ...]) -> None:
        self.base_offset, self.last_offset, self.epoch, self.records = base, last, epoch, records
        self.append_timestamp_ms = 0


class _Reader:
    def __init__(self, sid: OffsetAndEpoch, values: list[bytes]) -> None:
        self.snapshot_id = sid
        self._values = values

    def records(self) -> list[bytes]:
        return self._values


def test_state_machines_that_apply_different_values_at_one_offset_are_reported() -> None:
    ledger = StateLedger()
    a = CounterStateMachine(1, ledger, snapshot_every=0)
    b = CounterStateMachine(2, ledger, snapshot_every=0)
    a.handle_commit(_Batch(0, 1, 1, (b"x", b"y")))
    b.handle_commit(_Batch(0, 1, 1, (b"x", b"y")))
    assert ledger.problems == []
    b.handle_commit(_Batch(2, 2, 1, (b"z",)))
    a.handle_commit(_Batch(2, 2, 1, (b"w",)))
    assert [p[0] for p in ledger.problems] == ["StateMachineAgreement"]


def test_state_machine_snapshot_round_trip_and_leader_never_loads() -> None:
    ledger = StateLedger()
    a = CounterStateMachine(1, ledger, snapshot_every=2)
    a.handle_commit(_Batch(0, 2, 1, (b"x", b"y")))
    due = a.take_snapshot_due()
    assert due is not None and due.end_offset == 3
    value = encode_snapshot(due.count, due.digest, due.end_offset)
    assert decode_snapshot(value) == (2, a.digest, 3)
    b = CounterStateMachine(2, ledger, snapshot_every=0)
    b.handle_load_snapshot(_Reader(OffsetAndEpoch(3, 1), [value]))
    assert (b.count, b.digest, b.next_offset) == (a.count, a.digest, 3) and ledger.problems == []

    class _Leader:
        leader_id = 2
        epoch = 1

    b.handle_leader_change(_Leader())
    b.handle_load_snapshot(_Reader(OffsetAndEpoch(3, 1), [value]))
    assert [p[0] for p in ledger.problems] == ["LeaderNeverLoadSnapshot"]


# -- checkers --------------------------------------------------------------------------------------


def _names(world: World) -> list[str]:
    return [v.invariant for v in world.violations]


def test_two_leaders_in_one_epoch_violate_single_leader() -> None:
    world = _world()
    for n in (1, 2):
        raft = world.nodes[n].raft
        raft.role, raft.epoch = FakeRole.LEADER, 4
        world.nodes[n].store.write(ElectionState(epoch=4, leader_id=n))
    world.checker.after_event()
    assert "SingleLeader" in _names(world)


def test_epoch_going_down_or_differing_from_the_store_violates_monotonic_epoch() -> None:
    world = _world()
    node = world.nodes[1]
    node.store.write(ElectionState(epoch=5))
    node.raft.epoch = 5
    world.checker.after_event()
    assert world.violations == []
    node.raft.epoch = 4
    world.checker.after_event()
    assert _names(world).count("MonotonicEpoch") == 2  # decreased, and differs from the store


def test_high_watermark_going_down_violates_monotonic_high_watermark_but_unknown_is_fine() -> None:
    world = _world()
    for n in (1, 2, 3):
        world.nodes[n].log.append_as_leader(_batch([b"a", b"b", b"c"]), 0)
    node = world.nodes[2]
    node.raft.high_watermark = 3
    world.checker.after_event()
    node.raft.high_watermark = None
    world.checker.after_event()
    assert world.violations == []
    node.raft.high_watermark = 2
    world.checker.after_event()
    assert _names(world) == ["MonotonicHighWatermark"]


def test_divergent_committed_entries_violate_consistent_committed_data() -> None:
    world = _world()
    for n, value in ((1, b"a"), (2, b"b"), (3, b"a")):
        world.nodes[n].log.append_as_leader(_batch([value]), 0)
        world.nodes[n].raft.high_watermark = 1
    world.checker.after_event()
    assert "ConsistentCommittedData" in _names(world)


def test_leader_high_watermark_beyond_a_minority_violates_majority_reached() -> None:
    world = _world()
    leader = world.nodes[1]
    leader.store.write(ElectionState(epoch=1, leader_id=1))
    leader.raft.role, leader.raft.epoch = FakeRole.LEADER, 1
    leader.log.append_as_leader(_batch([b"a", b"b"]), 1)
    leader.raft.high_watermark = 2
    world.checker.after_event()
    assert "MajorityReachedHighWatermark" in _names(world)
    assert "CommittedOnMajority" in _names(world)


def test_new_leader_missing_a_committed_entry_violates_leader_completeness() -> None:
    world = _world()
    for n in (2, 3):
        world.nodes[n].log.append_as_leader(_batch([b"a", b"b"]), 1)
        world.nodes[n].raft.high_watermark = 2
    world.checker.after_event()
    assert world.violations == []
    node = world.nodes[1]
    node.store.write(ElectionState(epoch=2, leader_id=1))
    node.raft.role, node.raft.epoch = FakeRole.LEADER, 2
    world.checker.after_event()
    assert "LeaderCompleteness" in _names(world)
