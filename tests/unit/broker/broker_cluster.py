"""In-memory clusters of real controllers and real broker nodes on virtual time.

Every node is a ``kraft.node.Node`` built by ``build_node``: controllers have a raft core and a
quorum controller; brokers a raft observer with their own metadata listener and a broker part; a
combined node has both, and its broker reads the controller's image. Messages (raft envelopes and controller
envelopes alike) are delivered on the next step; a node can be crashed (unflushed log lost),
restarted, or cut off from everyone.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from kraft.broker.broker import Broker
from kraft.broker.lifecycle import BrokerState, LifecycleConfig, Listener
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.controller.quorum_controller import ControllerConfig, QuorumController
from kraft.metadata.image import MetadataImage
from kraft.node.build import BrokerConfig, NodeConfig, NodeStorage, build_node
from kraft.node.node import Node
from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.raft.log import MemoryLog
from kraft.raft.node import QuorumConfig
from kraft.raft.store import MemoryElectionStore

CLUSTER_ID = "kraft-broker-test"
CLIENT = -1000


class BrokerCluster:
    def __init__(
        self,
        controllers: int = 3,
        brokers: tuple[int, ...] = (101, 102, 103),
        *,
        combined: tuple[int, ...] = (),
        seed: int = 0,
        config: ControllerConfig | None = None,
        heartbeat_interval_ms: int = 100,
        snapshot_max_bytes: int = 20 * 1024 * 1024,
    ) -> None:
        self.quorum = QuorumConfig(
            voters={v: () for v in range(1, controllers + 1)},
            fetch_max_wait_ms=50,
            append_linger_ms=5,
        )
        self.config = config or ControllerConfig(
            max_idle_interval_ms=0,
            verify_leader_replay=True,
            session_timeout_ms=1000,
            heartbeat_interval_ms=heartbeat_interval_ms,
        )
        self.combined = set(combined)
        self.seed = seed
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.snapshot_max_bytes = snapshot_max_bytes
        self.now_ms = 0
        self.broker_ids = tuple(brokers)
        ids = sorted({*self.quorum.voters, *brokers})
        self.logs = {n: MemoryLog() for n in ids}
        self.stores = {n: MemoryElectionStore() for n in ids}
        self.nodes: dict[int, Node] = {}
        self.incarnations: dict[int, uuid.UUID] = {}
        self.previous_epoch: dict[int, int] = {}
        self.cut_off: set[int] = set()
        self.in_flight: list[Any] = []
        self.responses: dict[int, ApiResponse] = {}
        self._ids = 0
        for n in ids:
            self.start(n)

    # -- nodes -------------------------------------------------------------------------------------

    def start(self, n: int) -> None:
        is_controller = n in self.quorum.voters
        broker = None
        if n in self.broker_ids:
            self._ids += 1
            incarnation = uuid.UUID(int=(n << 32) | self._ids)
            self.incarnations[n] = incarnation
            lifecycle = LifecycleConfig(
                node_id=n,
                cluster_id=CLUSTER_ID,
                incarnation_id=incarnation,
                listeners=(Listener(name="PLAINTEXT", host="127.0.0.1", port=9000 + n),),
                supported_features=dict(SUPPORTED_FEATURES),
                rack=None,
                log_dirs=(uuid.UUID(int=(n << 64) | 1),),
                previous_broker_epoch=self.previous_epoch.pop(n, -1),
                heartbeat_interval_ms=self.heartbeat_interval_ms,
                request_timeout_ms=500,
            )
            broker = BrokerConfig(
                lifecycle=lifecycle,
                client_listeners=("PLAINTEXT",),
                snapshot_max_bytes=self.snapshot_max_bytes,
            )
        config = NodeConfig(
            node_id=n,
            cluster_id=CLUSTER_ID,
            directory_id=uuid.UUID(int=n),
            quorum=self.quorum,
            controller=self.config if is_controller else None,
            quorum_apis=is_controller,
            broker=broker,
        )
        self.nodes[n] = build_node(
            config,
            NodeStorage(self.logs[n], self.stores[n]),
            self.now_ms,
            random.Random(f"{self.seed}:{n}"),
            controller_rng=random.Random(f"{self.seed}:c{n}"),
        )

    def crash(self, n: int) -> None:
        self.logs[n].crash()
        del self.nodes[n]

    def stop_cleanly(self, n: int) -> None:
        """As the server does after controlled shutdown: remember the epoch, flush, stop."""
        self.previous_epoch[n] = self.broker(n).lifecycle.broker_epoch
        del self.nodes[n]
        self.logs[n].flush()

    def broker(self, n: int) -> Broker:
        broker = self.nodes[n].broker
        assert broker is not None
        return broker

    def controller(self, n: int) -> QuorumController:
        controller = self.nodes[n].controller
        assert controller is not None
        return controller

    def active(self) -> QuorumController | None:
        for n in self.quorum.voters:
            controller = self.nodes[n].controller if n in self.nodes else None
            if (
                controller is not None
                and controller.is_active
                and self.nodes[n].raft.leader_state() is not None
            ):
                return controller
        return None

    # -- time --------------------------------------------------------------------------------------

    def step(self, ms: int = 5) -> None:
        self.now_ms += ms
        inbound: dict[int, list[Any]] = {n: [] for n in self.nodes}
        for env in self.in_flight:
            if env.source in self.cut_off or env.destination in self.cut_off:
                continue
            if env.destination in inbound:
                inbound[env.destination].append(env)
            elif env.destination == CLIENT and isinstance(env.body, ApiResponse):
                self.responses[env.correlation_id] = env.body
        self.in_flight = []
        for n in sorted(self.nodes):
            result = self.nodes[n].poll(self.now_ms, inbound[n])
            for env in result.outbound:
                if isinstance(env, ControllerEnvelope) and env.destination == CLIENT:
                    assert isinstance(env.body, ApiResponse)
                    self.responses[env.correlation_id] = env.body
                else:
                    self.in_flight.append(env)

    def run_until(self, cond: Callable[[], bool], timeout_ms: int = 30_000) -> None:
        deadline = self.now_ms + timeout_ms
        while not cond():
            if self.now_ms > deadline:
                raise AssertionError("condition not reached in time")
            self.step()

    def run_for(self, ms: int) -> None:
        end = self.now_ms + ms
        while self.now_ms < end:
            self.step()

    # -- views -------------------------------------------------------------------------------------

    def image(self) -> MetadataImage:
        self.run_until(lambda: self.active() is not None)
        c = self.active()
        assert c is not None
        return c.image

    def all_running(self, ids: tuple[int, ...] | None = None) -> bool:
        return all(
            n in self.nodes and self.broker(n).broker_state == BrokerState.RUNNING
            for n in (ids if ids is not None else self.broker_ids)
        )

    def call(self, api: Any, version: int, **fields: Any) -> Any:
        """An admin request to the active controller, through the wire codec; waits for the answer."""
        self.run_until(lambda: self.active() is not None)
        c = self.active()
        assert c is not None
        self._ids += 1
        cid = self._ids
        flexible = api.API.is_flexible(version)
        built = api.REQUEST.cls(**fields)
        body = api.REQUEST.decode(api.REQUEST.encode(built, version, flexible), version, flexible)
        self.in_flight.append(ControllerEnvelope(CLIENT, c.node_id, cid, ApiRequest(api.API, version, body)))
        self.run_until(lambda: cid in self.responses)
        return self.responses.pop(cid).body
