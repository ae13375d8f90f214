"""Data-plane scenarios: three controllers, three brokers holding a replicated topic, a producer with
acks=all and a consumer, under the faults that matter for data (``kraft.sim.data``).

Every scenario runs on a ``DataWorld`` and is checked by ``DataChecker`` after every event: the raft
and controller invariants, plus AckedRecordKept, HighWatermarkMonotonic, ConsumerBelowHighWatermark,
OffsetsStable and ConsumerInOrder. Each heals at the end and expects, within a bound, every partition
to acknowledge writes again (``expect_data_progress``).

``data-last-replica-standing`` and its twin ``data-last-replica-standing-no-elr`` are KIP-966's own
case (RF 3, min ISR 2): a follower falls behind, the ISR shrinks to the leader alone, the leader loses
power. With ELR the follower that left the ISR below min ISR is an eligible leader and nothing
acknowledged is lost; without ELR the powerless leader comes back as the last ISR member and is
elected again with a log that lost its unflushed tail. The twin is expected to violate
AckedRecordKept in some seeds: it is the measurement of what ELR saves, not a proof scenario.

``data-mixed-flush`` is ``data-mixed`` with ``flush.messages=1`` on the topic (same faults, drawn
the same way): what Kafka's default flush trades away. With the default, power losses of every
replica that held an acknowledged record lose it (counted as ``acked_lost_to_power_loss``, not a
violation); with an fsync per append that figure must stay 0.
"""

from __future__ import annotations

from collections.abc import Callable

from kraft.sim.controller_scenarios import CONTROLLER_TIMING, READY_BY_MS, _at, _churn
from kraft.sim.controller_world import SIM_CONTROLLER_CONFIG
from kraft.sim.data import DataWorld
from kraft.sim.network import LinkProfile
from kraft.sim.scenarios import Scenario
from kraft.sim.world import World

FAULTS_FROM_MS = 6_000
# Kafka's per-topic fsync policy at its strictest (docs/dataplane.md "Flushing"): an acknowledged
# record is on the disk of every replica that counted for it, so no power loss can take it.
FLUSH_EACH_APPEND = {"flush.messages": "1"}


def _dw(world: World) -> DataWorld:
    assert isinstance(world, DataWorld)
    return world


def _recovery_bound(world: DataWorld) -> int:
    """From the heal: a controller elected, brokers fenced and back, leaders moved, lag detected."""
    t = world.timing
    quorum = t.fetch_timeout_ms + 4 * t.election_timeout_ms + 1000
    return (
        quorum
        + world.controller_config.session_timeout_ms
        + world.replica_config.replica_lag_time_max_ms
        + 4000
    )


def _heal_all(world: DataWorld, label: str) -> None:
    world.network.heal()
    world.network.set_default(LinkProfile())
    world.network.clear_links()
    for node_id in world.voter_ids:
        world.restart(node_id)
    for broker in world.brokers.values():
        broker.silent_until_ms = -1
        broker.start()
    world.checker.expect_progress(label, _recovery_bound(world))
    world.data_checker.expect_data_progress(label, _recovery_bound(world))


def _start_checks(world: DataWorld) -> None:
    world.checker.expect_leader_by(READY_BY_MS)
    _at(
        world,
        FAULTS_FROM_MS - 500,
        "data-ready",
        lambda: world.data_checker.expect_data_progress("start-up", 3000),
    )


def _one_down(world: DataWorld) -> bool:
    return any(not b.up for b in world.brokers.values())


def _faults_end(world: DataWorld) -> int:
    return world.end_ms - _recovery_bound(world) - 1000


# -- scenarios ------------------------------------------------------------------------------------


def _steady(world: World) -> None:
    dw = _dw(world)
    _start_checks(dw)
    _at(dw, dw.end_ms - 6000, "steady", lambda: dw.data_checker.expect_data_progress("steady", 2000))


# One fault each, on a broker (or the active controller) already chosen: the scenarios below and
# ``data-mixed`` draw from the world's rng in the same order through them.


def _kill(dw: DataWorld, broker_id: int) -> None:
    """kill -9 (page cache kept); the broker starts again 0.5-3 s later."""
    broker = dw.brokers[broker_id]
    broker.stop_uncleanly()
    _at(dw, dw.now_ms + dw.rng.randint(500, 3000), "broker-start", broker.start)


def _lose_power(dw: DataWorld, broker_id: int) -> None:
    """A power loss (unflushed bytes lost); the broker starts again 0.5-3 s later."""
    dw.power_loss(broker_id)
    _at(dw, dw.now_ms + dw.rng.randint(500, 3000), "broker-start", dw.brokers[broker_id].start)


def _pause(dw: DataWorld, broker_id: int, max_ms: int) -> None:
    """SIGSTOP for 0.5 s to ``max_ms``."""
    dw.brokers[broker_id].go_silent(dw.rng.randint(500, max_ms))


def _isolate(dw: DataWorld, broker_id: int, others: list[int], max_ms: int) -> None:
    """Cut ``broker_id`` off from ``others`` for 1 s to ``max_ms``."""
    dw.network.isolate(broker_id, others)
    dw.trace(f"X|{broker_id}")
    _at(dw, dw.now_ms + dw.rng.randint(1000, max_ms), "unpartition", dw.network.heal)


def _crash_active_controller(dw: DataWorld) -> None:
    """Crash the active controller (if any); it restarts 1-3 s later."""
    node = dw.active_controller()
    if node is None:
        return
    dw.crash(node.node_id)
    _at(dw, dw.now_ms + dw.rng.randint(1000, 3000), "restart", lambda: dw.restart(node.node_id))


def _faulted(
    world: World,
    label: str,
    every_ms: tuple[int, int],
    heal_after_ms: int,
    healed: str,
    step: Callable[[DataWorld], None],
) -> None:
    """The frame of a fault scenario: start-up checks, ``step`` every ``every_ms`` from
    ``FAULTS_FROM_MS`` until the faults end, then everything healed and expected to work again."""
    dw = _dw(world)
    _start_checks(dw)
    end = _faults_end(dw)
    _churn(dw, label, every_ms, end, lambda: step(dw), from_ms=FAULTS_FROM_MS)
    _at(dw, end + heal_after_ms, "heal", lambda: _heal_all(dw, healed))


def _pick(dw: DataWorld) -> int:
    return dw.rng.choice(sorted(dw.brokers))


def _broker_kill(world: World) -> None:
    """kill -9 a broker (page cache kept), restart it 0.5-3 s later; one at a time."""

    def step(dw: DataWorld) -> None:
        if not _one_down(dw):
            _kill(dw, _pick(dw))

    _faulted(world, "kill", (2000, 4000), 3500, "after kills", step)


def _power_loss(world: World) -> None:
    """A broker loses power (unflushed bytes lost), restarts 0.5-3 s later; one at a time."""

    def step(dw: DataWorld) -> None:
        if not _one_down(dw):
            _lose_power(dw, _pick(dw))

    _faulted(world, "power", (2500, 5000), 3500, "after power losses", step)


def _pause_brokers(world: World) -> None:
    """A broker stops for 0.5-5 s (SIGSTOP): its fetches stop, it may be fenced and leave the ISR."""
    _faulted(world, "pause", (2000, 5000), 5500, "after pauses", lambda dw: _pause(dw, _pick(dw), 5000))


def _partition(world: World) -> None:
    """A broker is cut off from the other brokers (or from everyone) for 1-4 s."""

    def step(dw: DataWorld) -> None:
        broker_id = _pick(dw)
        others = [b for b in dw.brokers if b != broker_id]
        if dw.rng.random() < 0.5:
            others += list(dw.voter_ids)
        _isolate(dw, broker_id, others, 4000)

    _faulted(world, "partition", (3000, 6000), 4500, "after partitions", step)


def _controller_failover(world: World) -> None:
    """The active controller crashes now and then while data flows; leaders stay where they are."""
    _faulted(world, "failover", (3000, 5000), 3500, "after failovers", _crash_active_controller)


def _leader_churn(world: World) -> None:
    """Brokers shut down cleanly (controlled shutdown moves their leaderships) and come back."""

    def step(dw: DataWorld) -> None:
        if _one_down(dw):
            return
        broker = dw.brokers[_pick(dw)]
        broker.shut_down()

        def back() -> None:
            if broker.up:
                _at(dw, dw.now_ms + 50, "wait-stop", back)
            else:
                _at(dw, dw.now_ms + dw.rng.randint(300, 2000), "broker-start", broker.start)

        back()

    _faulted(world, "shutdown", (2000, 4000), 3500, "after controlled shutdowns", step)


def _mixed(world: World) -> None:
    """Everything at once, at random: kills, power losses (at most one broker down), pauses,
    partitions and controller crashes."""

    def step(dw: DataWorld) -> None:
        roll = dw.rng.random()
        broker_id = _pick(dw)
        if roll < 0.25 and not _one_down(dw):
            _kill(dw, broker_id)
        elif roll < 0.45 and not _one_down(dw):
            _lose_power(dw, broker_id)
        elif roll < 0.65:
            _pause(dw, broker_id, 4000)
        elif roll < 0.85:
            _isolate(dw, broker_id, [b for b in dw.brokers if b != broker_id], 3000)
        else:
            _crash_active_controller(dw)

    _faulted(world, "mixed", (1500, 3500), 5000, "after mixed faults", step)


def _last_replica_standing(world: World) -> None:
    """KIP-966's case, for every partition at once: both followers are cut off from the brokers (the
    ISR shrinks to the leader, the high watermark freezes, acks=all is refused), then the leader
    loses power; the followers come back, the leader restarts uncleanly."""
    dw = _dw(world)
    _start_checks(dw)
    t0 = FAULTS_FROM_MS + dw.rng.randint(0, 2000)

    def cut_followers() -> None:
        leaders = dw.leaders_now()
        if not leaders:
            _at(dw, dw.now_ms + 100, "cut", cut_followers)
            return
        # The leader of partition 0 stays; its followers lose the leader (their fetches stop).
        leader = leaders[0]
        if leader < 0:
            _at(dw, dw.now_ms + 100, "cut", cut_followers)
            return
        first, second = [b for b in sorted(dw.brokers) if b != leader]
        dw.network.isolate(first, [b for b in dw.brokers if b != first])
        dw.trace(f"X|{first}")
        lag = dw.replica_config.replica_lag_time_max_ms
        # The second follower stays a little longer: acks=all go on with ISR {leader, second}.
        _at(
            dw,
            dw.now_ms + lag + dw.rng.randint(500, 1500),
            "cut-second",
            lambda: cut_second(leader, first, second),
        )

    def cut_second(leader: int, first: int, second: int) -> None:
        dw.network.isolate(second, [b for b in dw.brokers if b != second])
        dw.trace(f"X|{second}")
        lag = dw.replica_config.replica_lag_time_max_ms
        _at(dw, dw.now_ms + lag + dw.rng.randint(1000, 2000), "power", lambda: lose_leader(leader))

    def lose_leader(leader: int) -> None:
        dw.power_loss(leader)
        dw.network.heal()
        _at(dw, dw.now_ms + dw.rng.randint(500, 2000), "leader-start", dw.brokers[leader].start)
        _at(dw, dw.now_ms + 4000, "heal", lambda: _heal_all(dw, "after last replica standing"))

    _at(dw, t0, "cut", cut_followers)


# -- registry ---------------------------------------------------------------------------------------


def _scenario(
    name: str, description: str, duration_ms: int, setup: Callable[[World], None], **world_options: object
) -> Scenario:
    def make_world(**options: object) -> World:
        return DataWorld(config=SIM_CONTROLLER_CONFIG, **world_options, **options)  # type: ignore[arg-type]

    return Scenario(name, description, 3, 0, duration_ms, setup, CONTROLLER_TIMING, make_world)


DATA_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        _scenario("data-steady", "acks=all producer and consumer on RF 3 without faults", 14_000, _steady),
        _scenario(
            "data-broker-kill", "kill -9 brokers one at a time (page cache kept)", 30_000, _broker_kill
        ),
        _scenario(
            "data-power-loss", "brokers lose power one at a time: unflushed records lost", 30_000, _power_loss
        ),
        _scenario(
            "data-pause", "brokers stop (SIGSTOP) for 0.5-5 s: fenced, out of the ISR", 30_000, _pause_brokers
        ),
        _scenario("data-partition", "a broker cut off from the others or from everyone", 30_000, _partition),
        _scenario(
            "data-controller-failover",
            "the active controller crashes while data flows",
            28_000,
            _controller_failover,
        ),
        _scenario(
            "data-leader-churn",
            "controlled shutdowns move leaderships; brokers return",
            28_000,
            _leader_churn,
        ),
        _scenario(
            "data-mixed", "kills, power losses, pauses, partitions and failovers at once", 34_000, _mixed
        ),
        _scenario(
            "data-mixed-flush",
            "data-mixed with flush.messages=1 on the topic: every replica fsyncs each append",
            34_000,
            _mixed,
            topic_configs=FLUSH_EACH_APPEND,
        ),
        _scenario(
            "data-last-replica-standing",
            "KIP-966: ISR shrinks to the leader, which loses power; ELR elects a follower, nothing lost",
            32_000,
            _last_replica_standing,
            partitions=1,
        ),
        _scenario(
            "data-last-replica-standing-no-elr",
            "the same with eligible.leader.replicas.version=0: the measurement of what ELR saves",
            32_000,
            _last_replica_standing,
            partitions=1,
            elr=False,
        ),
    )
}
# What the 0-violation sweeps cover (the no-ELR twin is a measurement: it may lose records).
DATA_PROOF_SCENARIOS = [n for n in DATA_SCENARIOS if not n.endswith("-no-elr")]
