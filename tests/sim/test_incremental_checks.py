"""The incremental checker (a poll re-checks the polled node, a delivery nothing) reaches the same
verdicts at the same step as a full pass over every node, including the rules that span nodes."""

from __future__ import annotations

from typing import Any

import pytest
from sim_fakes import FakeRole, fake_factory

from kraft.raft.node import RaftNode
from kraft.raft.store import ElectionState
from kraft.records.batch import SimpleRecord, build_batch
from kraft.sim.scenarios import build_world
from kraft.sim.world import World


def _world() -> World:
    world = World(seed=7, voters=3, node_factory=fake_factory, end_ms=1000)
    world.start()
    return world


def _batch(values: list[bytes], epoch: int = 1) -> bytes:
    return bytes(
        build_batch([SimpleRecord(value=v) for v in values], base_offset=0, partition_leader_epoch=epoch)
    )


def _names(world: World) -> list[str]:
    return [v.invariant for v in world.violations]


def test_a_new_leader_rechecks_untouched_nodes_that_named_another_leader() -> None:
    world = _world()
    follower = world.nodes[1]
    follower.store.write(ElectionState(epoch=4, leader_id=2))
    follower.raft.epoch, follower.raft.leader_id = 4, 2
    world.checker.after_event()
    assert world.violations == []
    # Node 3 becomes leader of epoch 4 in its own poll; node 1 (untouched, checked earlier in node
    # order) must still be caught: a full pass would report it at the next event.
    leader = world.nodes[3]
    leader.store.write(ElectionState(epoch=4, leader_id=3))
    leader.raft.role, leader.raft.epoch = FakeRole.LEADER, 4
    world.checker.after_event(leader)
    assert world.violations == []
    world.checker.after_idle_event()
    assert "SingleLeader" in _names(world)
    assert any("node 1" in v.detail for v in world.violations)


def test_a_new_leader_rechecks_later_untouched_nodes_in_the_same_event() -> None:
    world = _world()
    follower = world.nodes[3]
    follower.store.write(ElectionState(epoch=4, leader_id=2))
    follower.raft.epoch, follower.raft.leader_id = 4, 2
    world.checker.after_event()
    assert world.violations == []
    leader = world.nodes[1]  # checked before node 3 in world order
    leader.store.write(ElectionState(epoch=4, leader_id=1))
    leader.raft.role, leader.raft.epoch = FakeRole.LEADER, 4
    world.checker.after_event(leader)
    # Named in memory and persisted: both reported, in this event, about node 3.
    assert [(v.invariant, v.step) for v in world.violations] == [("SingleLeader", world.step)] * 2
    assert all("node 3" in v.detail for v in world.violations)


def test_a_voter_truncating_rechecks_an_untouched_leaders_majority() -> None:
    world = _world()
    for n in (1, 2, 3):
        world.nodes[n].log.append_as_leader(_batch([b"a", b"b"]), 1)
    leader = world.nodes[1]
    leader.store.write(ElectionState(epoch=1, leader_id=1))
    leader.raft.role, leader.raft.epoch, leader.raft.high_watermark = FakeRole.LEADER, 1, 2
    for n in (2, 3):
        world.nodes[n].store.write(ElectionState(epoch=1, leader_id=1))
        world.nodes[n].raft.epoch, world.nodes[n].raft.leader_id = 1, 1
    world.checker.after_event()
    assert world.violations == []
    # Two followers lose their tails in their own polls; the leader is not touched again.
    for n in (2, 3):
        world.nodes[n].log.truncate_to(1)
    world.checker.after_event(world.nodes[2])
    assert "MajorityReachedHighWatermark" in _names(world)


def test_a_delivery_changes_nothing_so_nothing_new_is_reported() -> None:
    world = _world()
    node = world.nodes[2]
    node.store.write(ElectionState(epoch=3))
    node.raft.epoch = 3
    world.checker.after_event()
    assert world.violations == []
    world.checker.after_idle_event()
    assert world.violations == []
    node.raft.epoch = 2  # a poll of node 2 lowered its epoch
    world.checker.after_event(node)
    assert _names(world).count("MonotonicEpoch") == 2


def _outcome(world: World) -> tuple[object, ...]:
    first = world.violations[0] if world.violations else None
    f = world.checker.figures
    return (
        world.trace_hash,
        world.events,
        world.checker.committed_end,
        (f.max_epoch, f.elections, f.prospective_rounds, f.first_leader_ms, f.unavailable_ms),
        None if first is None else (first.invariant, first.step, first.at_ms),
    )


@pytest.mark.parametrize(
    ("scenario", "seed", "voters"), [("flaky-network", 2, 5), ("crash-restart-loop", 1, None)]
)
def test_incremental_and_full_checking_give_the_same_run(
    scenario: str, seed: int, voters: int | None
) -> None:
    runs = []
    for full in (False, True):
        world = build_world(scenario, seed, voters=voters)
        world.full_checks = full
        world.run()
        runs.append(_outcome(world))
    assert runs[0] == runs[1]


def test_incremental_and_full_checking_report_a_planted_bug_at_the_same_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def leader_alone(self: Any, state: Any, now_ms: int) -> bool:
        own = state.voters[state.local_key.id].end_offset
        if own is None or own <= state.epoch_start_offset or (self._hw is not None and own <= self._hw):
            return False
        self._set_high_watermark(own, now_ms)  # counts the leader alone as a majority
        return True

    monkeypatch.setattr(RaftNode, "maybe_advance_high_watermark", leader_alone)
    runs = []
    for full in (False, True):
        world = build_world("steady", 1)
        world.full_checks = full
        world.run()
        runs.append(_outcome(world))
    assert runs[0] == runs[1]
    assert runs[0][-1] is not None and runs[0][-1][0] == "MajorityReachedHighWatermark"
