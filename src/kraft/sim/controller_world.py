"""The controller simulation's world: three quorum controllers and real brokers on the simulator.

``ControllerWorld`` is a ``World`` whose node factory builds every node with ``build_node``, as a
process builds it, from the node's durable log and election store: controllers (a real
``RaftNode`` and a real ``QuorumController`` driven by one ``poll``) and brokers (a raft observer
and the real broker part: lifecycle, ISR manager, client APIs). Crashes (unflushed bytes lost),
restarts, graceful shutdowns, slow disks and partitions apply to them exactly as to plain raft
nodes. The world's replicated-counter workload is off: the metadata log is the controllers' own.
Each broker has a driver (``kraft.sim.brokers.SimBroker``) that starts, stops, pauses and lags it;
the admin client is an actor on the same network. ``ControllerChecker`` replaces the raft checker
(it extends it).

Determinism: each controller incarnation gets its own ``random.Random`` (seed, node id, restart
count), so a restarted controller does not replay its predecessor's topic ids.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from kraft.controller.quorum_controller import ControllerConfig, QuorumController
from kraft.node.node import Node
from kraft.sim.brokers import BROKER_ID_BASE, ClientTiming, SimAdmin, SimBroker
from kraft.sim.controller_invariants import ControllerChecker
from kraft.sim.network import LinkProfile
from kraft.sim.world import SimNode, Timing, World, default_node_factory, role_name

# The simulation's controller settings: Kafka's defaults scaled like the quorum timing (spec 11).
SIM_CONTROLLER_CONFIG = ControllerConfig(
    session_timeout_ms=3000,
    heartbeat_interval_ms=500,
    max_idle_interval_ms=500,
    leader_imbalance_check_interval_ms=5000,
)


def controller_node_factory(world: World, node: SimNode) -> Node:
    """A node on its log and store, built by ``build_node`` as a process builds it
    (``World(node_factory=...)``): a controller (raft core, quorum controller, quorum APIs) for a
    voter id, a broker (raft observer and broker part) for a broker id, both for a combined one."""
    assert isinstance(world, ControllerWorld)
    broker = world.brokers.get(node.node_id)
    if not node.is_voter:
        assert broker is not None, f"node {node.node_id} is neither a controller nor a broker"
        return default_node_factory(world, node, broker=broker.broker_config())
    process = default_node_factory(
        world,
        node,
        controller=world.controller_config,
        quorum_apis=True,
        bootstrap_features=world.bootstrap_features,
        broker=None if broker is None else broker.broker_config(),
    )
    world.controller_checker.attach_controller(node, process)
    return process


class ControllerWorld(World):
    """Three (or ``voters``) controllers, ``brokers`` simulated brokers and one admin client.

    Options beyond ``World``'s:

    * ``brokers``: how many brokers (ids 101, 102, ...), or a range to draw the count from;
      ``broker_ids``: exactly these broker ids instead (apart from the controllers').
    * ``combined``: controller ids that run a broker too (``process.roles=broker,controller``): one
      process with both parts, started and stopped by its broker driver.
    * ``workload``: the admin client and the brokers' ISR workload; without it nothing happens that
      the caller does not ask for (the brokers still start, register and heartbeat).
    * ``bootstrap_features``: the features ``kraft storage format`` chose (None: the defaults).
    * ``broker_snapshot_max_bytes``: the brokers' ``metadata.log.max.record.bytes.between.snapshots``
      (None: Kafka's default).

    ``checker`` and ``controller_checker`` are one ``ControllerChecker`` (the second typed as such).
    """

    def __init__(
        self,
        *,
        seed: int,
        voters: int | Sequence[int] = 3,
        observers: int = 0,
        brokers: int | tuple[int, int] = (3, 6),
        broker_ids: Sequence[int] | None = None,
        combined: Sequence[int] = (),
        workload: bool = True,
        timing: Timing | None = None,
        pre_vote: bool = True,
        end_ms: int = 20_000,
        config: ControllerConfig | None = None,
        bootstrap_features: Mapping[str, int] | None = None,
        client_timing: ClientTiming | None = None,
        broker_snapshot_max_bytes: int | None = None,
        link: LinkProfile | None = None,
        stop_on_violation: bool = True,
        full_checks: bool = False,
        deep_every: int = 4000,
    ) -> None:
        if observers:
            raise ValueError("the controller simulation has no observers")
        self.controller_config = config if config is not None else SIM_CONTROLLER_CONFIG
        self.bootstrap_features = bootstrap_features
        self.workload = workload
        self.broker_snapshot_max_bytes = broker_snapshot_max_bytes
        super().__init__(
            seed=seed,
            voters=voters,
            timing=timing,
            pre_vote=pre_vote,
            end_ms=end_ms,
            node_factory=controller_node_factory,
            stop_on_violation=stop_on_violation,
            link=link,
            full_checks=full_checks,
            client_workload=False,
        )
        if broker_ids is None:
            count = brokers if isinstance(brokers, int) else self.rng.randint(*brokers)
            broker_ids = [BROKER_ID_BASE + i for i in range(1, count + 1)]
        # Brokers heartbeat at the controllers' broker.heartbeat.interval.ms.
        self.client_timing = dataclasses.replace(
            client_timing if client_timing is not None else ClientTiming(),
            heartbeat_interval_ms=self.controller_config.heartbeat_interval_ms,
        )
        self.brokers: dict[int, SimBroker] = {}
        for broker_id in broker_ids:
            if broker_id in self.nodes:
                raise ValueError(
                    f"broker id {broker_id} is a controller's (a combined node is in `combined`)"
                )
            # A broker is a node of the world (a raft observer), started by its driver.
            self.nodes[broker_id] = self._make_node(broker_id, False)
            self.observer_ids.append(broker_id)
            self.brokers[broker_id] = SimBroker(self, broker_id, self.client_timing, isr_workload=workload)
        for node_id in combined:
            if node_id not in self.voter_ids:
                raise ValueError(f"combined node {node_id} is not a controller")
            self.brokers[node_id] = SimBroker(self, node_id, self.client_timing, isr_workload=workload)
        self.admin: SimAdmin | None = None
        if workload:
            self.admin = SimAdmin(self, self.client_timing)
            self.add_actor(self.admin)
        # Built once every node exists (brokers included): it keeps a memory per node.
        self.controller_checker = ControllerChecker(self, deep_every=deep_every)
        self.checker = self.controller_checker

    def boots_at_start(self, node: SimNode) -> bool:
        return node.node_id not in self.brokers  # each broker's (and combined node's) driver starts it

    def start(self) -> None:
        """Boot the controllers, then start every broker within 500 ms and the admin client."""
        super().start()
        for broker in self.brokers.values():
            self.schedule(self.rng.randint(0, 500), f"start:{broker.broker_id}", broker.start)
        if self.admin is not None:
            self.schedule_actor(self.rng.randint(500, 1500), "start:admin", self.admin.start)

    def crash(self, node_id: int, *, counted: bool = True) -> None:
        node = self.nodes[node_id]
        if node.up and node.is_voter:
            self.controller_checker.before_crash(node)
        super().crash(node_id, counted=counted)

    # -- observation ---------------------------------------------------------------------------

    def controller(self, node_id: int) -> QuorumController | None:
        node = self.nodes[node_id]
        process = node.process
        return None if process is None else process.controller

    def active_controller(self) -> SimNode | None:
        """The up node whose controller is active and whose core leads, highest epoch first."""
        best: SimNode | None = None
        for node in self.nodes.values():
            if not node.up or not node.is_voter or role_name(node.raft) != "LEADER":
                continue
            controller = node.process.controller if node.process is not None else None
            if controller is None or not controller.is_active:
                continue
            if best is None or node.raft.epoch > best.raft.epoch:
                best = node
        return best

    def running_brokers(self) -> list[SimBroker]:
        return [b for b in self.brokers.values() if b.up]

    def describe(self) -> dict[str, Any]:
        return {"brokers": len(self.brokers), "controllers": len(self.voter_ids)}
