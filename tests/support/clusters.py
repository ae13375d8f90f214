"""Clusters for the unit tests: thin helpers over the simulator's worlds.

The world (``kraft.sim.world.World``, ``kraft.sim.dynamic_voters.DynamicVotersWorld``,
``kraft.sim.controller_world.ControllerWorld``) owns everything that happens: the event queue, the
network, the disks, crashes and restarts, the brokers' drivers, and the invariant checker, which
stays on: every unit test that runs a cluster also checks the simulator's safety invariants, and a
violation fails it (``run_until`` and ``run_for`` raise). These helpers only add what tests need:

* running until a condition holds, with a deadline on virtual time (``run_until``), or for a while
  (``run_for``); the condition is looked at whenever the world's clock moves;
* a client actor (id ``CLIENT_ID``) that sends a request to a node and waits for its answer: admin
  requests to the active controller or to a given node, through the wire codec as on a socket
  (``ControllerCluster.call``), raft admin requests (``RaftCluster.raft_call``);
* crash, clean stop, restart, graceful shutdown, wipe, cut off and reconnect a node;
* the running node's parts: ``raft(n)``, ``controller(n)``, ``broker(n)``.

Worlds for tests are deterministic and fast: one fixed 1 ms link (``TEST_LINK``), no faults, no
client workload, no admin or ISR workload; brokers have the ids a test names.

A test may call into a node directly (append, shut down a broker, change a controller's soft
state): a real driver is woken by such a call, so the next ``run_until``/``run_for`` first polls
every running node, in one world action after which the checker looks at every node.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kraft.broker.broker import Broker
from kraft.broker.lifecycle import BrokerState
from kraft.controller.quorum_controller import ControllerConfig, QuorumController
from kraft.metadata.image import MetadataImage
from kraft.metadata.replica_log_info import ReplicaLogInfo, to_heartbeat
from kraft.node.node import Node
from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.messages import (
    alter_partition,
    broker_heartbeat,
    broker_registration,
    create_topics,
    delete_topics,
    elect_leaders,
    incremental_alter_configs,
)
from kraft.raft.config import QuorumConfig
from kraft.raft.listener import CommittedBatch, SnapshotReader
from kraft.raft.messages import Envelope
from kraft.raft.node import RaftNode
from kraft.raft.states import Role
from kraft.raft.types import Endpoint, LeaderAndEpoch, ReplicaKey
from kraft.sim.brokers import ClientTiming, SimBroker
from kraft.sim.controller_world import ControllerWorld
from kraft.sim.disk import SimLog
from kraft.sim.dynamic_voters import DynamicVotersWorld
from kraft.sim.network import LinkProfile
from kraft.sim.world import CLUSTER_ID, SimNode, Timing, World, default_node_factory

__all__ = [
    "CLIENT_ID",
    "CLUSTER_ID",
    "TEST_LINK",
    "BrokerCluster",
    "ControllerCluster",
    "DynamicRaftCluster",
    "RaftCluster",
    "RecordingListener",
    "SimCluster",
]

TEST_LINK = LinkProfile(min_delay_ms=1, max_delay_ms=1)
CLIENT_ID = -1000  # the test client's actor id (a shell's pseudo id for a client connection)
DEFAULT_TIMEOUT_MS = 30_000

# The QuorumConfig settings a world's ``Timing`` carries (the others are the world's own).
_TIMING_FIELDS = (
    "election_timeout_ms",
    "fetch_timeout_ms",
    "election_backoff_max_ms",
    "append_linger_ms",
    "request_timeout_ms",
    "retry_backoff_ms",
    "fetch_max_wait_ms",
    "fetch_snapshot_max_bytes",
)
_QUORUM_DEFAULTS = {f.name: f.default for f in dataclasses.fields(QuorumConfig) if f.name in _TIMING_FIELDS}


def test_timing(**quorum: Any) -> tuple[Timing, bool]:
    """The world's timing for QuorumConfig settings (Kafka's defaults for those not given), and
    whether Pre-Vote is on (``pre_vote_enabled``)."""
    pre_vote = bool(quorum.pop("pre_vote_enabled", True))
    unknown = sorted(set(quorum) - set(_TIMING_FIELDS))
    if unknown:
        raise TypeError(f"a simulated world does not set {unknown}")
    return Timing(**{**_QUORUM_DEFAULTS, **quorum}), pre_vote


test_timing.__test__ = False  # type: ignore[attr-defined]  # not a test, whatever its name


@dataclass
class RecordingListener:
    """A raft listener that keeps what it is handed."""

    commits: list[CommittedBatch] = field(default_factory=list)
    snapshots: list[SnapshotReader] = field(default_factory=list)
    leaders: list[LeaderAndEpoch] = field(default_factory=list)

    def handle_commit(self, batch: CommittedBatch) -> None:
        self.commits.append(batch)

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.snapshots.append(reader)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leaders.append(leader)

    def values(self) -> list[bytes]:
        """The records of the last snapshot loaded, then of every batch committed after it."""
        out: list[bytes] = []
        for s in self.snapshots[-1:]:
            out = list(s.records())
        for c in self.commits:
            out.extend(c.records)
        return out


class TestClient:
    """The tests' client on the world's network (a ``kraft.sim.world.Actor``): sends what it is
    told and keeps every answer by correlation id."""

    __test__ = False  # not a test class, whatever its name

    actor_id = CLIENT_ID
    incarnation = 0
    up = True

    def __init__(self) -> None:
        self.answers: dict[int, Any] = {}
        self._correlation = 0

    def next_correlation_id(self) -> int:
        self._correlation += 1
        return self._correlation

    def receive(self, envelope: Any) -> None:
        self.answers[envelope.correlation_id] = envelope


class SimCluster:
    """What every cluster helper does with its world (see the module docstring)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.client = TestClient()
        world.add_actor(self.client)
        world.start()

    # -- time --------------------------------------------------------------------------------------

    @property
    def now_ms(self) -> int:
        return self.world.now_ms

    def run_until(self, condition: Callable[[], object], timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        """Run the world until ``condition()`` holds (looked at whenever the clock moves); fail
        past ``timeout_ms`` of virtual time, or at the first invariant violation."""
        world = self.world
        deadline = world.now_ms + timeout_ms
        woken = False
        while True:
            self.check()
            if condition():
                return
            if world.now_ms >= deadline:
                raise AssertionError(f"condition not reached by {deadline} ms: {self.describe()}")
            if not woken:  # (only when the world must run: a condition may call run_until itself)
                self._wake_all()
                woken = True
            next_ms = world.next_event_ms()
            world.advance(deadline if next_ms is None else min(max(next_ms, world.now_ms), deadline))

    def run_for(self, ms: int, watch: Callable[[], object] | None = None) -> None:
        """Run the world for ``ms`` of virtual time; ``watch()``: called whenever the clock moves
        (it may assert)."""
        world = self.world
        end_ms = world.now_ms + ms
        if watch is None:
            self._wake_all()
            world.advance(end_ms)
            self.check()
            return

        def watched() -> bool:
            watch()
            return world.now_ms >= end_ms

        self.run_until(watched, ms)

    def check(self) -> None:
        """Fail on any invariant violation the world's checker reported."""
        if self.world.violations:
            details = "; ".join(f"{v.invariant} at {v.at_ms} ms: {v.detail}" for v in self.world.violations)
            raise AssertionError(f"the simulator's checker found violations: {details}")

    def _wake_all(self) -> None:
        """Poll every running node now, in one action (the test may have called into any node)."""
        world = self.world

        def wake() -> None:
            for node in world.nodes.values():
                world.request_poll(node, world.now_ms)

        world.schedule(world.now_ms, "test", wake)

    def describe(self) -> str:
        parts = []
        for node_id, node in self.world.nodes.items():
            raft = node.raft
            if raft is None:
                parts.append(f"{node_id}:DOWN")
            else:
                parts.append(
                    f"{node_id}:{raft.role.name}(e={raft.epoch},l={raft.leader_id},hw={raft.high_watermark},"
                    f"leo={node.log.end_offset()})"
                )
        return ", ".join(parts)

    # -- nodes -------------------------------------------------------------------------------------

    def node(self, n: int) -> SimNode:
        return self.world.nodes[n]

    def process(self, n: int) -> Node:
        """Node ``n``'s running process."""
        process = self.world.nodes[n].process
        assert process is not None, f"node {n} is down"
        return process

    def raft(self, n: int) -> RaftNode:
        return self.process(n).raft

    def log(self, n: int) -> SimLog:
        """Node ``n``'s log (its disk: it outlives the node's processes)."""
        return self.world.nodes[n].log

    def directory_id(self, n: int) -> uuid.UUID:
        """The directory id of node ``n``'s current disk."""
        return self.world.nodes[n].directory_id

    def is_up(self, n: int) -> bool:
        return self.world.nodes[n].up

    def crash(self, n: int) -> None:
        """Kill node ``n``'s process: what it had not flushed is lost."""
        self.world.crash(n)

    def stop(self, n: int) -> None:
        """Stop node ``n``'s process cleanly (its log closes, flushed), without a raft shutdown."""
        node = self.world.nodes[n]
        if node.up:
            node.log.flush()
            self.world.crash(n)

    def restart(self, n: int, *, endpoints: tuple[Endpoint, ...] | None = None) -> None:
        """Start node ``n`` again from its disk (a no-op while it runs); ``endpoints``: it comes
        back advertising these raft endpoints (another host or port)."""
        if endpoints is not None:
            self.world.nodes[n].endpoints = endpoints
        self.world.restart(n)

    def shutdown(self, n: int, timeout_ms: int = 5000) -> None:
        """Graceful shutdown: the core resigns if it leads; the node stops once shutdown completes."""
        self.world.shutdown(n, timeout_ms)

    def wipe(self, n: int) -> None:
        """Replace node ``n``'s disk (empty log and election state) and start it again."""
        self.stop(n)
        self.world.wipe(n)
        self.restart(n)

    # -- network -----------------------------------------------------------------------------------

    def _everyone(self) -> list[int]:
        return [*self.world.nodes, *self.world.actors]

    def cut_off(self, n: int) -> None:
        """No message reaches node ``n`` or leaves it (in flight ones included) until reconnected."""
        self.world.network.isolate(n, self._everyone())

    def reconnect(self, n: int) -> None:
        network = self.world.network
        for other in self._everyone():
            network.unblock(n, other)
            network.unblock(other, n)

    # -- the client --------------------------------------------------------------------------------

    def send(self, envelope_for: Callable[[int], Any]) -> int:
        """Send ``envelope_for(correlation_id)`` from the client now; returns the correlation id."""
        correlation_id = self.client.next_correlation_id()
        self.world.send(envelope_for(correlation_id), self.world.now_ms)
        return correlation_id

    def wait_answer(self, correlation_id: int, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Any:
        """Run until the answer to ``correlation_id`` comes; the answering envelope."""
        answers = self.client.answers
        self.run_until(lambda: correlation_id in answers, timeout_ms)
        return answers.pop(correlation_id)


class RaftCluster(SimCluster):
    """Bare raft cores (static voters, kraft.version 0) on the world; a ``RecordingListener`` on
    every process (``listeners``: the current one of each node)."""

    def __init__(
        self,
        voters: Sequence[int] = (1, 2, 3),
        observers: Sequence[int] = (),
        *,
        seed: int = 0,
        **quorum: Any,
    ) -> None:
        quorum.setdefault("fetch_max_wait_ms", 100)  # as in the spec's simulation setup
        timing, pre_vote = test_timing(**quorum)
        self.listeners: dict[int, RecordingListener] = {}
        super().__init__(self._make_world(seed, list(voters), list(observers), timing, pre_vote))

    world_class: type[World] = World

    def _make_world(
        self, seed: int, voters: list[int], observers: list[int], timing: Timing, pre_vote: bool
    ) -> World:
        return self.world_class(
            seed=seed,
            voters=voters,
            observers=observers,
            timing=timing,
            pre_vote=pre_vote,
            link=TEST_LINK,
            client_workload=False,
            node_factory=self._build,
        )

    def _build(self, world: World, node: SimNode) -> Node:
        process = default_node_factory(world, node)
        listener = RecordingListener()
        process.raft.register(listener)
        self.listeners[node.node_id] = listener
        return process

    @property
    def nodes(self) -> dict[int, RaftNode]:
        """The running raft cores by node id."""
        return {n: node.process.raft for n, node in self.world.nodes.items() if node.process is not None}

    def leader(self) -> RaftNode | None:
        """The leader, if exactly one running node leads."""
        leaders = [raft for raft in self.nodes.values() if raft.role is Role.LEADER]
        return leaders[0] if len(leaders) == 1 else None

    def elected_leader(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> RaftNode:
        """Run until one leader knows its high watermark; that leader."""
        self.run_until(
            lambda: (ld := self.leader()) is not None and ld.high_watermark is not None, timeout_ms
        )
        leader = self.leader()
        assert leader is not None
        return leader

    def raft_request(self, body: Any, to: int) -> int:
        """Send a raft admin request (AddRaftVoter, ...) to node ``to``; its correlation id."""
        return self.send(lambda correlation_id: Envelope(CLIENT_ID, to, correlation_id, body))

    def raft_call(self, body: Any, to: int, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Any:
        """A raft admin request to node ``to``; its answer's body."""
        return self.wait_answer(self.raft_request(body, to), timeout_ms).body


class DynamicRaftCluster(RaftCluster):
    """KIP-853: kraft.version 1, the ``initial`` voters formatted with the bootstrap checkpoint, the
    ``others`` without; every node knows the others only as bootstrap servers. Ids are 1, 2, ...:
    the initial voters first."""

    world_class = DynamicVotersWorld

    def __init__(self, initial: int, others: int, *, seed: int = 0, **quorum: Any) -> None:
        quorum.setdefault("fetch_timeout_ms", 2000)
        super().__init__(
            list(range(1, initial + 1)), list(range(initial + 1, initial + others + 1)), seed=seed, **quorum
        )

    @property
    def ids(self) -> list[int]:
        return list(self.world.nodes)

    def key(self, n: int) -> ReplicaKey:
        """Node ``n``'s replica key (its id and the directory id of its current disk)."""
        return ReplicaKey(n, self.world.nodes[n].directory_id)

    def committed_leader(self) -> RaftNode:
        return self.elected_leader()

    def admin(self, body: Any, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Any:
        """Send ``body`` to the leader as an admin client would; its answer's body."""
        leader = self.committed_leader()
        assert leader.node_id is not None
        return self.raft_call(body, leader.node_id, timeout_ms)

    def caught_up(self) -> None:
        """Run until every running node has the leader's log and high watermark, then long enough
        for the leader to see their next fetches (observers' caught-up times)."""
        leader = self.committed_leader()
        self.run_until(
            lambda: all(
                raft.log.end_offset() == leader.log.end_offset()
                and raft.high_watermark == leader.high_watermark
                for raft in self.nodes.values()
            )
        )
        self.run_for(300)

    def describe(self) -> str:
        return ", ".join(
            f"{i}:{n.role.name}(e={n.epoch},l={n.leader_id},hw={n.high_watermark},leo={n.log.end_offset()},"
            f"voters={sorted(n.voter_set.ids)})"
            for i, n in self.nodes.items()
        )


def _through_codec(schema: Any, body: Any, version: int, flexible: bool) -> Any:
    """``body`` encoded at ``version`` and decoded back, as a socket would carry it."""
    return schema.decode(schema.encode(body, version, flexible), version, flexible)


class ControllerCluster(SimCluster):
    """Quorum controllers (``voters``, ids 1..n) on the world, real brokers (``brokers``: their ids;
    ``combined``: controllers that run a broker too), and a scripted broker: registration,
    heartbeats and admin requests sent by the test client (``register``, ``heartbeat``, ...), for
    broker ids the world runs no broker for."""

    def __init__(
        self,
        voters: int = 1,
        *,
        brokers: Sequence[int] = (),
        combined: Sequence[int] = (),
        seed: int = 0,
        config: ControllerConfig | None = None,
        bootstrap: Mapping[str, int] | None = None,
        client_timing: ClientTiming | None = None,
        broker_snapshot_max_bytes: int | None = None,
        **quorum: Any,
    ) -> None:
        quorum.setdefault("fetch_max_wait_ms", 50)
        quorum.setdefault("append_linger_ms", 5)
        timing, pre_vote = test_timing(**quorum)
        super().__init__(
            ControllerWorld(
                seed=seed,
                voters=voters,
                broker_ids=brokers,
                combined=combined,
                workload=False,
                timing=timing,
                pre_vote=pre_vote,
                config=config or ControllerConfig(max_idle_interval_ms=0, verify_leader_replay=True),
                bootstrap_features=bootstrap,
                client_timing=client_timing,
                broker_snapshot_max_bytes=broker_snapshot_max_bytes,
                link=TEST_LINK,
            )
        )
        self.cworld: ControllerWorld = self.world  # type: ignore[assignment]
        self._requests: dict[int, Any] = {}  # correlation id -> the API module of a request sent

    # -- nodes -------------------------------------------------------------------------------------

    @property
    def nodes(self) -> dict[int, Node]:
        """The running processes by node id (controllers and brokers)."""
        return {n: node.process for n, node in self.world.nodes.items() if node.process is not None}

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(self.cworld.brokers)

    @property
    def config(self) -> ControllerConfig:
        return self.cworld.controller_config

    def controller(self, n: int) -> QuorumController:
        controller = self.process(n).controller
        assert controller is not None, f"node {n} runs no controller"
        return controller

    def broker(self, n: int) -> Broker:
        broker = self.process(n).broker
        assert broker is not None, f"node {n} runs no broker"
        return broker

    def sim_broker(self, n: int) -> SimBroker:
        """The world's driver of broker ``n`` (its starts and stops, incarnation, clean epoch)."""
        return self.cworld.brokers[n]

    def crash(self, n: int) -> None:
        """Kill node ``n``'s process (a broker's through its driver: its next start is unclean)."""
        sim_broker = self.cworld.brokers.get(n)
        if sim_broker is not None:
            sim_broker.stop_uncleanly()
        else:
            super().crash(n)

    def stop(self, n: int) -> None:
        """Stop node ``n`` cleanly (a broker through its driver, see ``stop_cleanly``)."""
        sim_broker = self.cworld.brokers.get(n)
        if sim_broker is not None:
            sim_broker.stop_cleanly()
        else:
            super().stop(n)

    def stop_cleanly(self, n: int) -> None:
        """As the server stops a broker after controlled shutdown: the clean-shutdown marker keeps
        its epoch, the log is flushed, the process ends."""
        self.cworld.brokers[n].stop_cleanly()

    def restart(self, n: int, *, endpoints: tuple[Endpoint, ...] | None = None) -> None:
        """Start node ``n`` again (a broker: a new incarnation, through its driver)."""
        sim_broker = self.cworld.brokers.get(n)
        if sim_broker is None:
            super().restart(n, endpoints=endpoints)
            return
        if endpoints is not None:
            self.world.nodes[n].endpoints = endpoints
        sim_broker.start()

    # -- controllers -------------------------------------------------------------------------------

    def active(self) -> QuorumController | None:
        """The active controller (its core leads), if any."""
        node = self.cworld.active_controller()
        return None if node is None or node.process is None else node.process.controller

    def wait_active(self) -> QuorumController:
        """Run until a controller is active and has written the bootstrap records; that one."""

        def ready() -> bool:
            active = self.active()
            return active is not None and "metadata.version" in active.image.features

        self.run_until(ready)
        active = self.active()
        assert active is not None
        return active

    def image(self) -> MetadataImage:
        """The active controller's latest image (committed or not: what it answers from)."""
        return self.wait_active().latest_image

    def committed_image(self) -> MetadataImage:
        """The active controller's committed image."""
        return self.wait_active().image

    # -- brokers -----------------------------------------------------------------------------------

    def all_running(self, ids: Sequence[int] | None = None) -> bool:
        """Whether every broker (of ``ids``) runs, registered and unfenced in its own view."""
        for n in ids if ids is not None else self.broker_ids:
            process = self.world.nodes[n].process
            if (
                process is None
                or process.broker is None
                or process.broker.broker_state != BrokerState.RUNNING
            ):
                return False
        return True

    # -- admin requests ----------------------------------------------------------------------------

    def request(self, api: Any, version: int, *, to: int | None = None, **fields: Any) -> int:
        """Send one controller request built from ``fields`` (to the active controller by default)
        through the wire codec at ``version``; its correlation id (``answer`` waits for it)."""
        target = to if to is not None else self.wait_active().node_id
        flexible = api.API.is_flexible(version)
        body = _through_codec(api.REQUEST, api.REQUEST.cls(**fields), version, flexible)
        correlation_id = self.send(
            lambda correlation_id: ControllerEnvelope(
                CLIENT_ID, target, correlation_id, ApiRequest(api.API, version, body)
            )
        )
        self._requests[correlation_id] = api
        return correlation_id

    def answer(self, correlation_id: int, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Any:
        """The answer to the controller request ``correlation_id`` (waits for it), through the codec."""
        api = self._requests.pop(correlation_id)
        envelope = self.wait_answer(correlation_id, timeout_ms)
        response = envelope.body
        assert isinstance(response, ApiResponse)
        if response.body is None:
            raise AssertionError(f"no answer from node {envelope.source}: the connection failed")
        flexible = api.API.is_flexible(response.version)
        return _through_codec(api.RESPONSE, response.body, response.version, flexible)

    def call(self, api: Any, version: int, to: int | None = None, **fields: Any) -> Any:
        """One controller request (to the active controller by default); its decoded answer."""
        return self.answer(self.request(api, version, to=to, **fields))

    # -- a scripted broker -------------------------------------------------------------------------

    def register(
        self,
        broker_id: int,
        *,
        incarnation: uuid.UUID | None = None,
        rack: str | None = None,
        previous_epoch: int = -1,
        version: int = 4,
        log_dir: uuid.UUID | None = None,
    ) -> Any:
        cls = broker_registration.REQUEST.cls
        return self.call(
            broker_registration,
            version,
            broker_id=broker_id,
            cluster_id=CLUSTER_ID,
            incarnation_id=incarnation or uuid.UUID(int=1000 + broker_id),
            listeners=[
                cls.Listener(name="PLAINTEXT", host="127.0.0.1", port=9092 + broker_id, security_protocol=0)
            ],
            features=[
                cls.Feature(name="metadata.version", min_supported_version=1, max_supported_version=25),
                cls.Feature(
                    name="eligible.leader.replicas.version", min_supported_version=0, max_supported_version=1
                ),
            ],
            rack=rack,
            log_dirs=[log_dir or uuid.UUID(int=(broker_id << 64) | 7)],
            previous_broker_epoch=previous_epoch,
        )

    def heartbeat(
        self,
        broker_id: int,
        epoch: int,
        *,
        offset: int | None = None,
        want_fence: bool = False,
        want_shutdown: bool = False,
        replica_log_info: Sequence[ReplicaLogInfo] = (),
    ) -> Any:
        """A scripted heartbeat; ``replica_log_info``: what it reports for unclean recovery."""
        if offset is None:
            offset = self.image().provenance.last_offset
        return self.call(
            broker_heartbeat,
            1,
            broker_id=broker_id,
            broker_epoch=epoch,
            current_metadata_offset=offset,
            want_fence=want_fence,
            want_shut_down=want_shutdown,
            replica_log_info=to_heartbeat(replica_log_info),
        )

    def start_brokers(self, ids: list[int]) -> dict[int, int]:
        """Register and unfence ``ids``; returns broker id -> epoch."""
        epochs = {}
        for b in ids:
            r = self.register(b)
            assert r.error_code == 0, r
            epochs[b] = r.broker_epoch
        for b in ids:
            r = self.heartbeat(b, epochs[b])
            assert r.error_code == 0 and not r.is_fenced, r
        return epochs

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        rf: int = 1,
        configs: dict[str, str] | None = None,
        assignments: dict[int, list[int]] | None = None,
        version: int = 7,
    ) -> Any:
        cls = create_topics.REQUEST.cls
        t = cls.CreatableTopic(
            name=name,
            num_partitions=-1 if assignments else partitions,
            replication_factor=-1 if assignments else rf,
            assignments=[
                cls.CreatableTopic.CreatableReplicaAssignment(partition_index=i, broker_ids=b)
                for i, b in (assignments or {}).items()
            ],
            configs=[
                cls.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()
            ],
        )
        return self.call(create_topics, version, topics=[t]).topics[0]

    def delete_topic(self, name: str) -> Any:
        return self.call(delete_topics, 5, topic_names=[name], timeout_ms=1000).responses[0]

    def alter_partition(
        self,
        broker_id: int,
        epoch: int,
        topic_id: uuid.UUID,
        partition: int,
        new_isr: list[int],
        *,
        leader_epoch: int,
        partition_epoch: int,
        version: int = 3,
        lrs: int = 0,
    ) -> Any:
        cls = alter_partition.REQUEST.cls
        p = cls.TopicData.PartitionData(
            partition_index=partition,
            leader_epoch=leader_epoch,
            partition_epoch=partition_epoch,
            leader_recovery_state=lrs,
        )
        if version >= 3:
            p.new_isr_with_epochs = [
                cls.TopicData.PartitionData.BrokerState(broker_id=b, broker_epoch=-1) for b in new_isr
            ]
        else:
            p.new_isr = new_isr
        return self.call(
            alter_partition,
            version,
            broker_id=broker_id,
            broker_epoch=epoch,
            topics=[cls.TopicData(topic_id=topic_id, partitions=[p])],
        )

    def set_config(self, resource_type: int, name: str, key: str, value: str | None, op: int = 0) -> Any:
        cls = incremental_alter_configs.REQUEST.cls
        return self.call(
            incremental_alter_configs,
            1,
            resources=[
                cls.AlterConfigsResource(
                    resource_type=resource_type,
                    resource_name=name,
                    configs=[
                        cls.AlterConfigsResource.AlterableConfig(name=key, config_operation=op, value=value)
                    ],
                )
            ],
            validate_only=False,
        ).responses[0]

    def elect(self, election_type: int, topic: str, partitions: list[int]) -> Any:
        cls = elect_leaders.REQUEST.cls
        return self.call(
            elect_leaders,
            2,
            election_type=election_type,
            topic_partitions=[cls.TopicPartitions(topic=topic, partitions=partitions)],
            timeout_ms=1000,
        )


class BrokerCluster(ControllerCluster):
    """Three controllers and three real brokers (101, 102, 103) by default; brokers heartbeat every
    100 ms and their sessions last 1 s."""

    def __init__(
        self,
        controllers: int = 3,
        brokers: Sequence[int] = (101, 102, 103),
        *,
        combined: Sequence[int] = (),
        seed: int = 0,
        config: ControllerConfig | None = None,
        heartbeat_interval_ms: int = 100,
        snapshot_max_bytes: int | None = None,
    ) -> None:
        super().__init__(
            controllers,
            brokers=[b for b in brokers if b not in combined],
            combined=combined,
            seed=seed,
            config=config
            or ControllerConfig(
                max_idle_interval_ms=0,
                verify_leader_replay=True,
                session_timeout_ms=1000,
                heartbeat_interval_ms=heartbeat_interval_ms,
            ),
            client_timing=ClientTiming(request_timeout_ms=500),
            broker_snapshot_max_bytes=snapshot_max_bytes,
        )
