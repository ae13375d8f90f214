"""In-memory clusters of ``kraft.node.Node``s with controller listeners, on virtual time.

Every node is built by ``build_node`` as the server builds it: a raft core, ``QuorumApis`` on the
controller nodes and optionally a broker part (no quorum controller: its APIs are not what these
tests are about, and a broker's requests to it are refused with NOT_CONTROLLER). Messages (raft
envelopes and controller envelopes alike) are delivered on the next step. A request to a node that
is down or cut off is answered as the server's shell answers it: an ``ApiResponse`` with body None.

Two kinds of quorum: static voters (``controller.quorum.voters``, kraft.version 0), or KIP-853 dynamic
voters formatted ``--standalone`` on the first node (a bootstrap checkpoint), every node knowing the
initial voters only as bootstrap servers (pseudo ids -2, -3, ...).

Clients (admins on a controller listener, clients on a broker listener) send from ``CLIENT``; their
answers are collected by correlation id.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from kraft.broker.lifecycle import LifecycleConfig, Listener
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.node.build import BrokerConfig, NodeConfig, NodeStorage, build_node
from kraft.node.node import Node, NodeEnvelope
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.raft.listener import SnapshotWriter
from kraft.raft.log import MemoryLog
from kraft.raft.messages import Envelope
from kraft.raft.node import QuorumConfig
from kraft.raft.store import MemoryElectionStore
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey
from kraft.raft.voters import VoterNode, VoterSet

CLUSTER_ID = "quorum-cluster-id"
CLIENT = -1_000_001  # an admin connection's pseudo id, as the gateway makes them
LISTENER = "CONTROLLER"
BROKER_LISTENER = "PLAINTEXT"


def endpoint(n: int) -> Endpoint:
    return Endpoint(LISTENER, "127.0.0.1", 1000 + n)


def key(n: int) -> ReplicaKey:
    return ReplicaKey(n, uuid.UUID(int=1000 + n))


class QuorumCluster:
    """Args:
    voters: the voters (static), or the initial voters of a dynamic quorum.
    observers: controllers that are not voters (dynamic quorum only: they may be added).
    brokers: nodes with a broker part; a voter listed here is a combined node.
    down: nodes not started.
    dynamic: KIP-853 (bootstrap checkpoint, no static voters).
    """

    def __init__(
        self,
        voters: Iterable[int] = (1, 2, 3),
        *,
        observers: Iterable[int] = (),
        brokers: Iterable[int] = (),
        down: Iterable[int] = (),
        dynamic: bool = False,
        seed: int = 0,
        **quorum: Any,
    ) -> None:
        self.voters = tuple(voters)
        self.observers = tuple(observers)
        self.broker_ids = tuple(brokers)
        self.dynamic = dynamic
        self.seed = seed
        quorum.setdefault("fetch_max_wait_ms", 50)
        quorum.setdefault("append_linger_ms", 5)
        if dynamic:
            self.quorum = QuorumConfig(
                voters={}, bootstrap_servers=tuple(endpoint(n) for n in self.voters), **quorum
            )
        else:
            self.quorum = QuorumConfig(voters={n: (endpoint(n),) for n in self.voters}, **quorum)
        self.ids = sorted({*self.voters, *self.observers, *self.broker_ids})
        self.now_ms = 0
        self.logs = {n: MemoryLog() for n in self.ids}
        self.stores = {n: MemoryElectionStore() for n in self.ids}
        if dynamic:
            initial = VoterSet(VoterNode(key(n), (endpoint(n),)) for n in self.voters)
            for n in self.voters:
                writer = SnapshotWriter(
                    self.logs[n].store_snapshot(OffsetAndEpoch(0, 0)),
                    0,
                    lambda _sid: None,
                    kraft_version=1,
                    voters=initial,
                )
                writer.freeze()
        self.nodes: dict[int, Node] = {}
        self.cut_off: set[int] = set()
        self.in_flight: list[NodeEnvelope] = []
        self.answers: dict[int, Any] = {}
        self.sent: list[NodeEnvelope] = []  # everything any node sent, in order
        self._via: dict[tuple[int, int], int] = {}
        self._next_cid = 0
        for n in self.ids:
            if n not in set(down):
                self.start(n)

    # -- nodes -------------------------------------------------------------------------------------

    def is_controller(self, n: int) -> bool:
        return n in self.voters or n in self.observers

    def start(self, n: int) -> None:
        controller = self.is_controller(n)
        broker = None
        if n in self.broker_ids:
            lifecycle = LifecycleConfig(
                node_id=n,
                cluster_id=CLUSTER_ID,
                incarnation_id=uuid.UUID(int=n),
                listeners=(Listener(name=BROKER_LISTENER, host="127.0.0.1", port=9000 + n),),
                supported_features=dict(SUPPORTED_FEATURES),
                rack=None,
                log_dirs=(uuid.UUID(int=(n << 64) | 1),),
                heartbeat_interval_ms=100,
                request_timeout_ms=500,
            )
            broker = BrokerConfig(lifecycle=lifecycle, client_listeners=(BROKER_LISTENER,))
        config = NodeConfig(
            node_id=n,
            cluster_id=CLUSTER_ID,
            directory_id=key(n).directory_id,
            quorum=self.quorum,
            local_endpoints=(endpoint(n),) if controller else (),
            raft_listener_name=LISTENER,
            quorum_apis=controller,
            broker=broker,
        )
        self.nodes[n] = build_node(
            config,
            NodeStorage(self.logs[n], self.stores[n]),
            self.now_ms,
            random.Random(f"{self.seed}:{n}"),
            controller_rng=random.Random(f"{self.seed}:c{n}"),
        )

    def up(self, n: int) -> bool:
        return n in self.nodes and n not in self.cut_off

    # -- time --------------------------------------------------------------------------------------

    def _route(self, destination: int) -> int:
        """A bootstrap server's pseudo id (-2, -3, ...) is the initial voter at that address."""
        if self.dynamic and -1 - len(self.voters) <= destination <= -2:
            return self.voters[-2 - destination]
        return destination

    def step(self, ms: int = 5) -> None:
        self.now_ms += ms
        inbound: dict[int, list[NodeEnvelope]] = {n: [] for n in self.nodes}
        for env in self.in_flight:
            if env.destination == CLIENT:
                assert isinstance(env.body, ApiResponse)
                self.answers[env.correlation_id] = env.body.body
                continue
            if isinstance(env, Envelope):
                if env.is_request and env.destination <= -2:
                    self._via[(env.source, env.correlation_id)] = env.destination
                elif not env.is_request:
                    via = self._via.pop((env.destination, env.correlation_id), None)
                    if via is not None:  # the answer comes back from the address it was sent to
                        env = Envelope(via, env.destination, env.correlation_id, env.body)
            source, target = self._route(env.source), self._route(env.destination)
            if source != CLIENT and not self.up(source):
                continue
            if self.up(target):
                inbound[target].append(env)
            elif isinstance(env, ControllerEnvelope) and env.is_request and source in inbound:
                inbound[source].append(env.reply(None))  # the shell: the call failed
        self.in_flight = []
        for n in sorted(self.nodes):
            result = self.nodes[n].poll(self.now_ms, inbound[n])
            self.sent.extend(result.outbound)
            self.in_flight.extend(result.outbound)

    def run_until(self, cond: Callable[[], bool], timeout_ms: int = 30_000) -> None:
        deadline = self.now_ms + timeout_ms
        while not cond():
            if self.now_ms > deadline:
                raise AssertionError(f"condition not reached in time: {self.describe()}")
            self.step()

    def run_for(self, ms: int) -> None:
        end = self.now_ms + ms
        while self.now_ms < end:
            self.step()

    # -- views -------------------------------------------------------------------------------------

    def leader(self) -> int | None:
        leaders = [n for n, node in self.nodes.items() if node.raft.leader_state() is not None]
        return leaders[0] if len(leaders) == 1 else None

    def elected(self) -> int:
        """Run until a leader has committed in its epoch and every running node follows it."""
        self.run_until(
            lambda: (
                (ld := self.leader()) is not None
                and self.nodes[ld].raft.high_watermark is not None
                and all(node.raft.leader_and_epoch().leader_id == ld for node in self.nodes.values())
            )
        )
        leader = self.leader()
        assert leader is not None
        return leader

    def describe(self) -> str:
        return ", ".join(
            f"{n}:{node.raft.metrics.current_state}(leader={node.raft.leader_and_epoch()},"
            f"voters={sorted(node.raft.voter_set.ids)})"
            for n, node in sorted(self.nodes.items())
        )

    # -- clients -----------------------------------------------------------------------------------

    def send(self, n: int, module: Any, version: int, body: Any, *, broker_listener: bool = False) -> int:
        """A client's request to node ``n`` (delivered on the next step); returns its correlation id."""
        self._next_cid += 1
        cid = self._next_cid
        request = ApiRequest(module.API, version, body)
        if broker_listener:
            self.in_flight.append(ClientEnvelope(CLIENT, n, cid, BROKER_LISTENER, request))
        else:
            self.in_flight.append(ControllerEnvelope(CLIENT, n, cid, request))
        return cid

    def answer(self, cid: int, timeout_ms: int = 30_000) -> Any:
        self.run_until(lambda: cid in self.answers, timeout_ms)
        return self.answers.pop(cid)

    def ask(self, n: int, module: Any, version: int, body: Any, *, broker_listener: bool = False) -> Any:
        return self.answer(self.send(n, module, version, body, broker_listener=broker_listener))

    def sent_between(self, source: int, destination: int, kind: type = ControllerEnvelope) -> list[Any]:
        return [
            e for e in self.sent if isinstance(e, kind) and (e.source, e.destination) == (source, destination)
        ]
