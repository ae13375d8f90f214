"""Controller scenarios: three quorum controllers, 3-6 simulated brokers and an admin client.

Every scenario runs on a ``ControllerWorld`` (``kraft.sim.controller_world``) and is checked by
``ControllerChecker``: the raft invariants and the controller ones (LeaderInIsr, IsrElrDisjoint,
ElrOnlyBelowMinIsr, LeaderFromIsrOrElr, CommittedImageAgreement, MonotonicBrokerEpoch,
ActiveControllerLeads, NoCleanReplicaLost), after every event. Throughout, brokers register,
heartbeat and (as leaders) shrink and expand ISRs, and the admin creates and deletes topics and
changes ``min.insync.replicas``; each scenario adds its faults, then heals and states liveness deadlines:
the metadata log commits again (``expect_progress``) and every running broker is registered and
unfenced while every controller has replayed the committed log (``expect_brokers_ready``).

Bounds: losing the active controller costs up to ``F + 4T + 1000`` ms (as for a raft leader,
``kraft.sim.scenarios``); brokers then need a request timeout to find the new one and a heartbeat
to be unfenced, so "ready" deadlines add the session timeout and a margin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kraft.controller.quorum_controller import ControllerConfig
from kraft.sim.brokers import ClientTiming, SimBroker
from kraft.sim.controller_world import SIM_CONTROLLER_CONFIG, ControllerWorld
from kraft.sim.disk import DiskProfile
from kraft.sim.network import LinkProfile
from kraft.sim.scenarios import Scenario
from kraft.sim.world import SimNode, Timing, World


def _cw(world: World) -> ControllerWorld:
    assert isinstance(world, ControllerWorld)
    return world


def _lost_bound(world: World) -> int:
    t = world.timing
    return t.fetch_timeout_ms + 4 * t.election_timeout_ms + 1000


def _ready_bound(world: ControllerWorld) -> int:
    return _lost_bound(world) + world.controller_config.session_timeout_ms + 2000


def _at(world: World, at_ms: int, label: str, action: Callable[[], None]) -> None:
    world.schedule(at_ms, label, action)


def _when_active(world: ControllerWorld, label: str, then: Callable[[SimNode], None]) -> None:
    """Run ``then(node)`` once some controller is active (checked every 50 ms)."""

    def attempt() -> None:
        node = world.active_controller()
        if node is not None:
            then(node)
        else:
            world.schedule(world.now_ms + 50, label, attempt)

    attempt()


def _heal_all(world: ControllerWorld, label: str) -> None:
    """End every fault: network healed, every controller and broker up and talking."""
    world.network.heal()
    world.network.set_default(LinkProfile())
    world.network.clear_links()
    for node_id in world.voter_ids:
        world.restart(node_id)
        world.set_disk(node_id, DiskProfile())
    for broker in world.brokers.values():
        broker.silent_until_ms = -1
        broker.start()
    world.checker.expect_progress(label, _lost_bound(world))
    world.controller_checker.expect_brokers_ready(label, _ready_bound(world))


# Start-up: a first active controller, and every broker registered and unfenced, by this time;
# faults start after it.
READY_BY_MS = 5000
FAULTS_FROM_MS = 5500


def _start_checks(world: ControllerWorld) -> None:
    world.checker.expect_leader_by(READY_BY_MS)
    _at(
        world,
        1000,
        "brokers-ready",
        lambda: world.controller_checker.expect_brokers_ready("start-up", READY_BY_MS - 1000),
    )


def _churn(
    world: ControllerWorld,
    label: str,
    every_ms: tuple[int, int],
    until_ms: int,
    step: Callable[[], None],
    *,
    from_ms: int = FAULTS_FROM_MS,
) -> None:
    """Run ``step`` every ``every_ms`` (drawn) from ``from_ms`` until ``until_ms``."""

    def tick() -> None:
        if world.now_ms >= until_ms:
            return
        step()
        _at(world, world.now_ms + world.rng.randint(*every_ms), label, tick)

    _at(world, from_ms + world.rng.randint(0, every_ms[0]), label, tick)


def _restart_all(world: World, ids: list[int]) -> None:
    for node_id in ids:
        world.restart(node_id)


def _bounce_broker(world: ControllerWorld, broker: SimBroker, *, clean: bool, down_ms: int) -> None:
    """Stop ``broker`` (controlled shutdown or crash), start it again ``down_ms`` after it stopped."""
    if clean:
        broker.shut_down()

        def wait_stopped() -> None:
            if broker.up:
                _at(world, world.now_ms + 50, "wait-stop", wait_stopped)
            else:
                _at(world, world.now_ms + down_ms, "broker-start", broker.start)

        wait_stopped()
    else:
        broker.stop_uncleanly()
        _at(world, world.now_ms + down_ms, "broker-start", broker.start)


# -- scenarios ----------------------------------------------------------------------------------


def _steady(world: World) -> None:
    cw = _cw(world)
    _start_checks(cw)
    _at(cw, 8000, "steady", lambda: cw.checker.expect_progress("steady state", 2000))
    _at(
        cw,
        cw.end_ms - 4000,
        "ready",
        lambda: cw.controller_checker.expect_brokers_ready("steady state", 3000),
    )


def _failover(world: World) -> None:
    """Crash the active controller three times; each restarts 1.5-3.5 s later."""
    cw = _cw(world)
    _start_checks(cw)
    bound = _lost_bound(cw)
    crashes = [0]

    def crash(node: SimNode) -> None:
        cw.crash(node.node_id)
        crashes[0] += 1
        cw.checker.expect_progress(f"after crashing active controller {node.node_id}", bound)
        _at(cw, cw.now_ms + cw.rng.randint(1500, 3500), "restart", lambda: cw.restart(node.node_id))
        if crashes[0] < 3:
            _at(cw, cw.now_ms + bound + 500, "crash", lambda: _when_active(cw, "crash", crash))
        else:
            _at(cw, cw.now_ms + 4000, "heal", lambda: _heal_all(cw, "after the last failover"))

    _at(cw, FAULTS_FROM_MS, "crash", lambda: _when_active(cw, "crash", crash))


def _partition(world: World) -> None:
    """Isolate the active controller twice: from everyone, or from the other controllers only
    (brokers still reach it: a zombie until check-quorum)."""
    cw = _cw(world)
    _start_checks(cw)
    bound = _lost_bound(cw)
    cuts = [0]

    def isolate(node: SimNode) -> None:
        everyone = cw.rng.random() < 0.5
        others = [n for n in cw.voter_ids if n != node.node_id]
        if everyone:
            others += [*cw.brokers, *cw.actors]
        cw.network.isolate(node.node_id, others)
        cw.trace(f"isolate|{node.node_id}|{'all' if everyone else 'controllers'}")
        cuts[0] += 1
        cw.checker.expect_progress(f"after isolating active controller {node.node_id}", bound)

        def heal() -> None:
            cw.network.heal()
            if cuts[0] == 2:
                cw.controller_checker.expect_brokers_ready("after the last heal", _ready_bound(cw))

        _at(cw, cw.now_ms + cw.rng.randint(4000, 6000), "heal", heal)
        if cuts[0] < 2:
            _at(cw, cw.now_ms + bound + 500, "isolate", lambda: _when_active(cw, "isolate", isolate))

    _at(cw, FAULTS_FROM_MS, "isolate", lambda: _when_active(cw, "isolate", isolate))


def _broker_churn(world: World) -> None:
    """Brokers restart cleanly (controlled shutdown) and uncleanly (crash), at random."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 9000

    def step() -> None:
        broker = cw.brokers[cw.rng.choice(sorted(cw.brokers))]
        if broker.up:
            _bounce_broker(cw, broker, clean=cw.rng.random() < 0.5, down_ms=cw.rng.randint(300, 3000))

    _churn(cw, "broker-churn", (700, 1800), faults_end, step)
    _at(cw, faults_end + 3000, "heal", lambda: _heal_all(cw, "after broker churn"))


def _fencing(world: World) -> None:
    """Brokers go silent for 1-6 s (the session timeout is 3 s): fenced, then unfenced."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 9000

    def step() -> None:
        broker = cw.brokers[cw.rng.choice(sorted(cw.brokers))]
        broker.go_silent(cw.rng.randint(1000, 6000))

    _churn(cw, "silence", (500, 1500), faults_end, step)
    _at(cw, faults_end + 6000, "heal", lambda: _heal_all(cw, "after the silences"))


def _controlled_shutdown(world: World) -> None:
    """Brokers shut down cleanly one after another (WantShutDown until ShouldShutDown) and return."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 9000

    def step() -> None:
        running = [b for b in cw.brokers.values() if b.up and b.state == "RUNNING"]
        if len(running) > 1:
            broker = running[cw.rng.randrange(len(running))]
            _bounce_broker(cw, broker, clean=True, down_ms=cw.rng.randint(300, 2000))

    _churn(cw, "controlled-shutdown", (800, 2000), faults_end, step)
    _at(cw, faults_end + 7000, "heal", lambda: _heal_all(cw, "after the shutdowns"))


def _elr(world: World) -> None:
    """ISRs shrink below min ISR (RF 3, min ISR 2-3); then partition leaders are fenced (silence),
    crash or shut down, so leadership moves to ELR members; unclean restarts drop members."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 9000

    def step() -> None:
        image = cw.controller_checker.reference_image
        leaders = sorted({p.leader for _t, _pid, p in image.iter_partitions() if p.leader >= 0})
        candidates = [b for b in leaders if b in cw.brokers and cw.brokers[b].up]
        if not candidates:
            candidates = [b for b in sorted(cw.brokers) if cw.brokers[b].up]
        if not candidates:
            return
        broker = cw.brokers[cw.rng.choice(candidates)]
        kind = cw.rng.random()
        if kind < 0.4:
            broker.go_silent(cw.rng.randint(3500, 6000))
        elif kind < 0.7:
            _bounce_broker(cw, broker, clean=False, down_ms=cw.rng.randint(500, 4000))
        else:
            _bounce_broker(cw, broker, clean=True, down_ms=cw.rng.randint(500, 3000))

    _churn(cw, "fence-leader", (1000, 2500), faults_end, step)
    _at(cw, faults_end + 5000, "heal", lambda: _heal_all(cw, "after the leader faults"))


def _min_isr_change(world: World) -> None:
    """min.insync.replicas changes often (topic and cluster default: ClearElr) while ISRs shrink and
    brokers are fenced, so there are ELRs to clear."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 9000

    def step() -> None:
        broker = cw.brokers[cw.rng.choice(sorted(cw.brokers))]
        broker.go_silent(cw.rng.randint(3500, 5000))

    _churn(cw, "silence", (1500, 3000), faults_end, step)
    _at(cw, faults_end + 6000, "heal", lambda: _heal_all(cw, "after the config changes"))


def _topic_churn(world: World) -> None:
    """Topics are created and deleted quickly while a broker now and then restarts."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 9000

    def step() -> None:
        broker = cw.brokers[cw.rng.choice(sorted(cw.brokers))]
        if broker.up:
            _bounce_broker(cw, broker, clean=cw.rng.random() < 0.5, down_ms=cw.rng.randint(300, 2000))

    _churn(cw, "broker-churn", (2000, 4000), faults_end, step)
    _at(cw, faults_end + 3000, "heal", lambda: _heal_all(cw, "after topic churn"))


def _flaky_network(world: World) -> None:
    """Loss (retransmitted, as TCP: the raft ``flaky-network``'s links), duplication, reordering,
    one-way and transient partitions between every participant; slow disks on two controllers."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 9000
    ids = [*cw.voter_ids, *cw.brokers, *cw.actors]

    def degrade() -> None:
        cw.network.set_default(
            LinkProfile(min_delay_ms=1, max_delay_ms=40, loss=0.05, duplicate=0.03, retransmit_ms=200)
        )
        for node_id in cw.rng.sample(cw.voter_ids, k=2):
            cw.set_disk(node_id, DiskProfile(2, 30))

    _at(cw, FAULTS_FROM_MS, "degrade", degrade)

    def step() -> None:
        if cw.rng.random() < 0.5:
            a, b = cw.rng.sample(ids, k=2)
            cw.network.block(a, b)
            _at(cw, cw.now_ms + cw.rng.randint(200, 2000), "unblock", lambda: cw.network.unblock(a, b))
        else:
            victim = cw.rng.choice(ids)
            others = [n for n in ids if n != victim]
            cw.network.isolate(victim, others)

            def unisolate() -> None:
                for o in others:
                    cw.network.unblock(victim, o)
                    cw.network.unblock(o, victim)

            _at(cw, cw.now_ms + cw.rng.randint(500, 3000), "unisolate", unisolate)

    _churn(cw, "fault", (400, 1500), faults_end, step)
    _at(cw, faults_end, "heal", lambda: _heal_all(cw, "after healing the network"))


def _snapshots(world: World) -> None:
    """Snapshots every ~1.5 KB of records: a standby is down long enough to need the active
    controller's snapshot (FetchSnapshot), and the active controller crashes and reloads its own."""
    cw = _cw(world)
    _start_checks(cw)
    bound = _lost_bound(cw)

    def down_standby(active: SimNode) -> None:
        standby = cw.rng.choice([n for n in cw.voter_ids if n != active.node_id])
        cw.crash(standby)
        _at(cw, cw.now_ms + 6000, "restart-standby", lambda: cw.restart(standby))

    def crash_active(active: SimNode) -> None:
        cw.crash(active.node_id)
        cw.checker.expect_progress(f"after crashing active controller {active.node_id}", bound)
        _at(cw, cw.now_ms + cw.rng.randint(1500, 3000), "restart", lambda: cw.restart(active.node_id))
        _at(cw, cw.now_ms + bound, "heal", lambda: _heal_all(cw, "after the snapshot faults"))

    _at(cw, FAULTS_FROM_MS, "down-standby", lambda: _when_active(cw, "down-standby", down_standby))
    _at(cw, 13_000, "crash-active", lambda: _when_active(cw, "crash-active", crash_active))


def _crash_restart(world: World) -> None:
    """Controllers crash and restart at random (a majority up), once all together; slow disks, so a
    crash loses unflushed records; brokers restart now and then."""
    cw = _cw(world)
    _start_checks(cw)
    faults_end = cw.end_ms - 10_000

    def slow_disks() -> None:
        for node_id in cw.voter_ids:
            cw.set_disk(node_id, DiskProfile(1, 15))

    _at(cw, FAULTS_FROM_MS, "slow-disks", slow_disks)

    def step() -> None:
        up = [n for n in cw.voter_ids if cw.nodes[n].up]
        if len(up) > cw.majority:
            victim = cw.rng.choice(up)
            cw.crash(victim)
            _at(
                cw,
                min(cw.now_ms + cw.rng.randint(200, 2500), faults_end),
                "restart",
                lambda: cw.restart(victim),
            )
        if cw.rng.random() < 0.3:
            broker = cw.brokers[cw.rng.choice(sorted(cw.brokers))]
            if broker.up:
                _bounce_broker(cw, broker, clean=cw.rng.random() < 0.5, down_ms=cw.rng.randint(300, 2000))

    def kill_all() -> None:
        for n in cw.voter_ids:
            cw.crash(n)
        order = list(cw.voter_ids)
        cw.rng.shuffle(order)
        first, rest = order[: cw.majority], order[cw.majority :]
        _at(cw, cw.now_ms + 300, "restart-majority", lambda: _restart_all(cw, first))
        _at(cw, cw.now_ms + 3000, "restart-rest", lambda: _restart_all(cw, rest))

    _churn(cw, "crash", (600, 1500), faults_end, step)
    _at(cw, (FAULTS_FROM_MS + faults_end) // 2, "kill-all", kill_all)
    _at(cw, faults_end, "heal", lambda: _heal_all(cw, "after the last restart"))


# The quorum timing of spec 11; a commit gap counts as a stall only past two NoOp intervals (the
# controllers' own traffic is the only workload).
CONTROLLER_TIMING = Timing(stall_threshold_ms=2 * SIM_CONTROLLER_CONFIG.max_idle_interval_ms + 100)


# -- registry -----------------------------------------------------------------------------------


def _scenario(
    name: str,
    description: str,
    duration_ms: int,
    setup: Callable[[World], None],
    *,
    config: ControllerConfig = SIM_CONTROLLER_CONFIG,
    client: ClientTiming | None = None,
    brokers: int | tuple[int, int] = (3, 6),
    timing: Timing | None = None,
) -> Scenario:
    client_timing = client if client is not None else ClientTiming()

    def make_world(**options: object) -> World:
        return ControllerWorld(config=config, client_timing=client_timing, brokers=brokers, **options)  # type: ignore[arg-type]

    return Scenario(name, description, 3, 0, duration_ms, setup, timing or CONTROLLER_TIMING, make_world)


_ELR_CLIENTS = ClientTiming(
    isr_interval_ms=(200, 800),
    shrink_bias=0.75,
    min_isr_range=(2, 3),
    replication_range=(3, 3),
    admin_weights=(5, 1, 1),
)

CONTROLLER_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        _scenario("controller-steady", "controllers, brokers and admin without faults", 16_000, _steady),
        _scenario(
            "controller-failover", "crash the active controller three times; it restarts", 30_000, _failover
        ),
        _scenario(
            "controller-partition",
            "isolate the active controller twice (from everyone, or from the controllers only)",
            28_000,
            _partition,
        ),
        _scenario(
            "controller-broker-churn",
            "brokers restart cleanly and uncleanly at random",
            26_000,
            _broker_churn,
        ),
        _scenario("controller-fencing", "brokers go silent for 1-6 s: fenced, unfenced", 26_000, _fencing),
        _scenario(
            "controller-controlled-shutdown",
            "brokers shut down cleanly one by one (WantShutDown until ShouldShutDown) and return",
            26_000,
            _controlled_shutdown,
        ),
        _scenario(
            "controller-elr",
            "ISRs below min ISR, then partition leaders fenced, crashed or stopped: ELR elections",
            28_000,
            _elr,
            client=_ELR_CLIENTS,
        ),
        _scenario(
            "controller-min-isr-change",
            "frequent min.insync.replicas changes (topic, cluster default) over shrunk ISRs: ClearElr",
            24_000,
            _min_isr_change,
            client=replace(_ELR_CLIENTS, admin_interval_ms=(200, 600), admin_weights=(2, 1, 6)),
        ),
        _scenario(
            "controller-topic-churn",
            "topics created and deleted quickly, brokers restart now and then",
            24_000,
            _topic_churn,
            client=ClientTiming(admin_interval_ms=(100, 400), admin_weights=(5, 4, 1), max_topics=12),
        ),
        _scenario(
            "controller-flaky-network",
            "loss (retransmitted, as TCP), duplication, reordering, one-way and transient partitions "
            "everywhere; slow disks",
            26_000,
            _flaky_network,
        ),
        _scenario(
            "controller-snapshots",
            "snapshots every ~1.5 KB: a standby catches up by FetchSnapshot, the active one reloads",
            26_000,
            _snapshots,
            config=replace(SIM_CONTROLLER_CONFIG, snapshot_max_bytes=1500),
        ),
        _scenario(
            "controller-crash-restart",
            "controllers crash (unflushed records lost) and restart, all at once too; slow disks",
            30_000,
            _crash_restart,
        ),
    )
}
