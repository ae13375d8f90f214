"""What a driver outside the scenarios (the unit tests' clusters, tests/support/clusters.py) gets
from the worlds: stepping with ``advance``, node ids of its choosing, a node on a new endpoint, and
controller worlds with exact brokers, combined nodes and no workload."""

from __future__ import annotations

import pytest

from kraft.raft.states import Role
from kraft.raft.types import Endpoint
from kraft.sim.controller_world import ControllerWorld
from kraft.sim.network import LinkProfile
from kraft.sim.scenarios import build_world
from kraft.sim.world import World, role_name


@pytest.mark.parametrize("scenario", ["leader-crash", "controller-steady"])
def test_a_world_stepped_with_advance_has_the_trace_of_one_run(scenario: str) -> None:
    whole = build_world(scenario, 3, duration_ms=2500)
    whole.run()
    stepped = build_world(scenario, 3, duration_ms=2500)
    looked = 0
    while stepped.now_ms < stepped.end_ms:
        next_ms = stepped.next_event_ms()
        assert next_ms is None or next_ms >= stepped.now_ms
        stepped.advance(min(stepped.now_ms + 7, stepped.end_ms))
        looked += 1
    stepped.run()  # nothing is due any more: only the end-of-run checks
    assert looked > 300
    assert stepped.trace_hash == whole.trace_hash
    assert stepped.events == whole.events and stepped.violations == whole.violations == []


def test_advance_stands_at_the_time_asked_for_and_leaves_later_events_queued() -> None:
    world = World(seed=5, voters=3, client_workload=False)
    world.start()
    world.advance(250)
    assert world.now_ms == 250
    next_ms = world.next_event_ms()
    assert next_ms is not None and next_ms > 250
    assert world.end_ms == 20_000 and world.extra == {}  # no end-of-run checks ran


def test_a_world_runs_the_node_ids_it_is_given() -> None:
    world = World(seed=2, voters=[4, 7, 9], observers=[2], end_ms=4000)
    world.start()
    world.run()
    assert world.violations == []
    assert world.voter_ids == [4, 7, 9] and world.observer_ids == [2]
    leader = world.current_leader()
    assert leader is not None and leader.node_id in (4, 7, 9)
    observer = world.nodes[2].raft
    assert not observer.is_voter and observer.leader_id == leader.node_id
    with pytest.raises(ValueError, match="distinct"):
        World(seed=1, voters=[1, 2], observers=[2])


def test_a_node_restarted_with_other_endpoints_advertises_them() -> None:
    world = World(seed=4, voters=3, client_workload=False, link=LinkProfile(1, 1))
    world.start()
    world.advance(3000)
    moved = (Endpoint("CONTROLLER", "elsewhere.sim", 19093),)
    world.crash(2)
    world.nodes[2].endpoints = moved
    world.restart(2)
    assert world.nodes[2].raft.config.voters[2] != moved  # the static voters are the configuration's
    assert tuple(world.nodes[2].process.raft.local_endpoints) == moved  # type: ignore[union-attr]
    world.advance(6000)
    assert world.violations == [] and world.current_leader() is not None


def test_a_controller_world_without_workload_runs_exactly_the_brokers_it_names() -> None:
    world = ControllerWorld(
        seed=6, voters=3, broker_ids=[5, 8], combined=[1], workload=False, broker_snapshot_max_bytes=1234
    )
    world.start()
    world.advance(5000)
    assert world.violations == []
    assert world.admin is None and world.actors == {}
    assert sorted(world.brokers) == [1, 5, 8]
    combined = world.nodes[1].process
    assert combined is not None and combined.controller is not None and combined.broker is not None
    assert combined.broker.image is combined.controller.image  # one image, replayed once
    for b in (1, 5, 8):
        assert world.brokers[b].state == "RUNNING"
        assert world.brokers[b].bstats.followers_lagged == 0
    broker = world.nodes[5].process
    assert broker is not None and broker.controller is None and broker.broker is not None
    assert world.brokers[5].broker_config().snapshot_max_bytes == 1234
    active = world.active_controller()
    assert active is not None and role_name(active.raft) == Role.LEADER.name
    image = active.process.controller.image  # type: ignore[union-attr]
    assert sorted(image.brokers) == [1, 5, 8] and not any(r.fenced for r in image.brokers.values())
    with pytest.raises(ValueError, match="is a controller's"):
        ControllerWorld(seed=1, broker_ids=[2])
    with pytest.raises(ValueError, match="not a controller"):
        ControllerWorld(seed=1, broker_ids=[], combined=[101])
