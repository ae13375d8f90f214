"""The controller simulation's brokers and admin client.

**Brokers are real.** Each broker id is a simulated node (``SimNode``) running the very broker a
``kraft server-start`` process runs: a ``kraft.node.Node`` built by ``build_node``, with its raft
observer of ``__cluster_metadata``, metadata listener, lifecycle (registration, heartbeats,
controlled shutdown), ISR manager and client APIs, on the world's network and disks. ``SimBroker``
is only its workload and fault driver:

* **Starts and stops.** Each start is a new process (a new IncarnationId drawn from the driver's
  seeded rng) that registers with PreviousBrokerEpoch = the epoch of its last clean shutdown, or -1
  (spec 2.2), as the server reads it from its clean-shutdown marker, which the driver keeps
  across incarnations like a file. A clean stop runs controlled shutdown (WantShutDown until
  ShouldShutDown, bounded by ``shutdown_timeout_ms``), then stops the node and leaves the marker;
  an unclean stop crashes it (unflushed bytes lost) and clears the marker. Every start records
  whether it followed a clean or an unclean stop (``start_kinds``): the invariant checker takes
  that as the ground truth about unclean shutdowns (``NoCleanReplicaLost``).
* **Silence.** ``go_silent`` pauses the process (SIGSTOP): no heartbeats, no AlterPartition, its
  inbox waits, until it resumes; a long enough pause gets it fenced.
* **ISR workload.** Partition data does not exist yet, so followers never fall behind by
  themselves. Now and then the driver tells a partition leader's ISR manager that one of its
  in-sync followers is out of sync for a while (what the data plane's replica manager will report
  from fetch positions): the leader shrinks the ISR with AlterPartition and, once the follower is
  back, expands it again. ``shrink_bias`` is the chance that a tick lags a follower at all.

**The admin client** is a client actor (it holds no node): it creates and deletes topics and
changes ``min.insync.replicas`` on a topic or the cluster default, one request at a time, either
straight at the active controller or through a running broker's listener (which forwards it, as
Kafka's brokers do). It learns topics from a broker's Metadata answer and finds the active
controller as a Kafka admin client does: it asks a controller for Metadata (ControllerId), tries
the next controller on a failure, and follows NOT_CONTROLLER. It never reads a node's state.

All randomness is the drivers' own seeded ``random.Random``s.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kraft.broker.broker import Broker
from kraft.broker.lifecycle import BrokerState, LifecycleConfig, Listener
from kraft.common.uuids import random_uuid
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.node.build import BrokerConfig
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.error_responses import response_error_codes
from kraft.protocol.messages import create_topics, delete_topics, incremental_alter_configs, metadata

if TYPE_CHECKING:
    from kraft.sim.world import SimNode, World

BROKER_ID_BASE = 100  # broker ids are 101, 102, ...: apart from the controllers' node ids
ADMIN_ID = 900
BROKER_LISTENER = "PLAINTEXT"
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4

# Start kinds (``SimBroker.start_kinds``): the ground truth about how the previous process ended.
FIRST_START = "first"
AFTER_CLEAN_STOP = "clean"
AFTER_UNCLEAN_STOP = "unclean"

# What the driver calls the broker's state (the checker's view): a ``BrokerState`` folded in four.
STOPPED = "STOPPED"
REGISTERING = "REGISTERING"  # STARTING or RECOVERY: not registered and unfenced yet
RUNNING = "RUNNING"
SHUTTING_DOWN = "SHUTTING_DOWN"  # controlled shutdown under way


@dataclass(frozen=True, slots=True)
class ClientTiming:
    """Timing of the simulated brokers and admin (scaled down from Kafka's defaults, like the quorum's)."""

    heartbeat_interval_ms: int = 500  # broker.heartbeat.interval.ms
    request_timeout_ms: int = 1000
    retry_backoff_ms: int = 100
    shutdown_timeout_ms: int = 6000  # give up on controlled shutdown and stop (still cleanly)
    isr_interval_ms: tuple[int, int] = (300, 1500)  # between a broker's ISR workload ticks
    shrink_bias: float = 0.5  # chance a tick makes a follower of a partition it leads lag
    lag_ms: tuple[int, int] = (300, 2500)  # how long a lagging follower stays out of sync
    admin_interval_ms: tuple[int, int] = (300, 1200)
    # Relative weights of the admin's operations: create, delete, change min.insync.replicas.
    admin_weights: tuple[int, int, int] = (5, 2, 2)
    admin_via_broker: float = 0.5  # chance a write goes through a broker listener
    max_topics: int = 8
    min_isr_range: tuple[int, int] = (1, 3)
    replication_range: tuple[int, int] = (2, 3)


@dataclass(slots=True)
class BrokerStats:
    starts: int = 0
    clean_stops: int = 0
    unclean_stops: int = 0
    controlled_shutdowns: int = 0  # ShouldShutDown received while shutting down
    shutdown_timeouts: int = 0
    followers_lagged: int = 0
    silences: int = 0
    # Summed over the broker's finished processes (the running one is added when read).
    alter_partitions_before: int = 0


class SimBroker:
    """The driver of one broker id across its processes (see the module docstring)."""

    def __init__(
        self, world: World, broker_id: int, timing: ClientTiming, *, isr_workload: bool = True
    ) -> None:
        self.world = world
        self.broker_id = broker_id
        self.timing = timing
        self.isr_workload = isr_workload  # False: the driver never makes a follower lag
        self.rng = random.Random(f"{world.seed}:broker:{broker_id}")
        self.clean_epoch = -1  # the clean-shutdown marker: the epoch written at the last clean stop
        self.log_dir = uuid.UUID(int=(broker_id << 64) | 7)
        self.start_kinds: dict[uuid.UUID, str] = {}
        self.incarnation_id: uuid.UUID | None = None
        self.silent_until_ms = -1
        self.bstats = BrokerStats()
        self._started_once = False
        self._shutdown_deadline_ms: int | None = None
        self._run = 0  # counts starts: timers of an earlier process do nothing

    # -- what the checker and the scenarios read ----------------------------------------------------

    @property
    def node(self) -> SimNode:
        return self.world.nodes[self.broker_id]

    @property
    def up(self) -> bool:
        return self.node.up

    @property
    def broker(self) -> Broker | None:
        process = self.node.process
        return None if process is None else process.broker

    @property
    def state(self) -> str:
        broker = self.broker
        if broker is None:
            return STOPPED
        state = broker.lifecycle.state
        if state in (BrokerState.PENDING_CONTROLLED_SHUTDOWN, BrokerState.SHUTTING_DOWN):
            return SHUTTING_DOWN
        return RUNNING if state == BrokerState.RUNNING else REGISTERING

    @property
    def epoch(self) -> int:
        broker = self.broker
        return -1 if broker is None else broker.lifecycle.broker_epoch

    @property
    def silent(self) -> bool:
        return self.world.now_ms < self.silent_until_ms

    @property
    def alter_partitions(self) -> int:
        broker = self.broker
        return self.bstats.alter_partitions_before + (0 if broker is None else broker.isr.requests_sent)

    def broker_config(self) -> BrokerConfig:
        """The broker part's settings for the process being started (``build_node``)."""
        assert self.incarnation_id is not None
        config = getattr(self.world, "controller_config")  # noqa: B009  (a ControllerWorld's)
        settings = BrokerConfig(
            lifecycle=LifecycleConfig(
                node_id=self.broker_id,
                cluster_id=_cluster_id(),
                incarnation_id=self.incarnation_id,
                listeners=(Listener(name=BROKER_LISTENER, host=f"broker{self.broker_id}.sim", port=9092),),
                supported_features=dict(SUPPORTED_FEATURES),
                rack=None,
                log_dirs=(self.log_dir,),
                previous_broker_epoch=self.clean_epoch,
                heartbeat_interval_ms=config.heartbeat_interval_ms,
                request_timeout_ms=self.timing.request_timeout_ms,
                retry_backoff_ms=self.timing.retry_backoff_ms,
            ),
            client_listeners=(BROKER_LISTENER,),
            request_timeout_ms=5000,
        )
        snapshot_max_bytes = getattr(self.world, "broker_snapshot_max_bytes", None)
        if snapshot_max_bytes is not None:
            settings = replace(settings, snapshot_max_bytes=snapshot_max_bytes)
        return self.world.broker_settings(settings)

    # -- faults ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start a new process (a no-op while one runs)."""
        if self.up:
            return
        self.incarnation_id = random_uuid(self.rng)
        if not self._started_once:
            kind = FIRST_START
        elif self.clean_epoch >= 0:
            kind = AFTER_CLEAN_STOP
        else:
            kind = AFTER_UNCLEAN_STOP
        self._started_once = True
        self.start_kinds[self.incarnation_id] = kind
        self.bstats.starts += 1
        self.silent_until_ms = -1
        self._shutdown_deadline_ms = None
        self._run += 1
        self.world.trace(f"B+|{self.broker_id}|{kind}")
        self.world.restart(self.broker_id)
        if self.isr_workload:
            low, high = self.timing.isr_interval_ms
            self._after(self.rng.randint(low, high), f"isr:{self.broker_id}", self._isr_tick)

    def stop_uncleanly(self) -> None:
        """The process dies: unflushed bytes are lost and no clean-shutdown marker is left, so the
        next start is unclean."""
        if not self.up:
            return
        self.world.trace(f"B-|{self.broker_id}|unclean")
        self.clean_epoch = -1
        self.bstats.unclean_stops += 1
        self._forget_process()
        self.world.crash(self.broker_id, counted=False)

    def shut_down(self) -> None:
        """Controlled shutdown: WantShutDown until ShouldShutDown (or the deadline), then a clean stop."""
        broker = self.broker
        if broker is None:
            return
        if self.state != RUNNING:
            self.stop_cleanly()  # not registered and unfenced yet: nothing to hand over
            return
        if self._shutdown_deadline_ms is not None:
            return
        self._shutdown_deadline_ms = self.world.now_ms + self.timing.shutdown_timeout_ms
        broker.begin_controlled_shutdown(self.world.now_ms)
        self.world.request_poll(self.node, self.world.now_ms)
        self._after(20, f"shutdown:{self.broker_id}", self._watch_shutdown)

    def go_silent(self, duration_ms: int) -> None:
        """Stay alive but do nothing (a long pause: SIGSTOP) for ``duration_ms``."""
        if not self.up:
            return
        self.bstats.silences += 1
        self.silent_until_ms = self.world.now_ms + duration_ms
        self.world.trace(f"B~|{self.broker_id}|{duration_ms}")
        self.world.pause(self.broker_id, self.silent_until_ms)

    def _watch_shutdown(self) -> None:
        broker = self.broker
        if broker is None:
            return
        deadline = self._shutdown_deadline_ms
        if broker.lifecycle.controlled_shutdown_done:
            self.bstats.controlled_shutdowns += 1
            self.stop_cleanly()
        elif deadline is not None and self.world.now_ms >= deadline:
            self.bstats.shutdown_timeouts += 1
            self.stop_cleanly()
        else:
            self._after(20, f"shutdown:{self.broker_id}", self._watch_shutdown)

    def stop_cleanly(self) -> None:
        """The server's clean stop, without controlled shutdown (``shut_down`` runs that first): the
        log closes (flushed) and the marker records the epoch."""
        self.world.trace(f"B-|{self.broker_id}|clean")
        self.clean_epoch = self.epoch
        self.bstats.clean_stops += 1
        self._forget_process()
        self.node.log.flush()
        self.world.clean_stop(self.broker_id)  # the partition logs close flushed too
        self.world.crash(self.broker_id, counted=False)  # nothing unflushed is left to lose

    def _forget_process(self) -> None:
        broker = self.broker
        if broker is not None:
            self.bstats.alter_partitions_before += broker.isr.requests_sent
        self._shutdown_deadline_ms = None
        self._run += 1

    # -- ISR workload ----------------------------------------------------------------------------

    def _isr_tick(self) -> None:
        low, high = self.timing.isr_interval_ms
        self._after(self.rng.randint(low, high), f"isr:{self.broker_id}", self._isr_tick)
        broker = self.broker
        if broker is None or self.silent or self.state != RUNNING:
            return
        if self.rng.random() >= self.timing.shrink_bias:
            return
        image = broker.image
        led = image.partitions_led_by(self.broker_id)
        if not led:
            return
        tp = led[self.rng.randrange(len(led))]
        part = image.partition(tp.topic_id, tp.partition_id)
        followers = [] if part is None else [r for r in part.isr if r != self.broker_id]
        if not followers:
            return
        follower = followers[self.rng.randrange(len(followers))]
        lag_low, lag_high = self.timing.lag_ms
        broker.isr.set_out_of_sync(
            tp.topic_id, tp.partition_id, follower, self.world.now_ms + self.rng.randint(lag_low, lag_high)
        )
        self.bstats.followers_lagged += 1
        self.world.trace(f"B<|{self.broker_id}|{tp.partition_id}|{follower}")
        self.world.request_poll(self.node, self.world.now_ms)

    def _after(self, delay_ms: int, label: str, action: Callable[[], None]) -> None:
        """Run ``action`` in ``delay_ms`` unless this process ended by then."""
        run = self._run

        def step() -> None:
            if self._run == run and self.up:
                action()

        self.world.schedule(self.world.now_ms + delay_ms, label, step)


def _cluster_id() -> str:
    from kraft.sim.world import CLUSTER_ID

    return CLUSTER_ID


# -- the admin client -----------------------------------------------------------------------------


@dataclass(slots=True)
class ClientStats:
    requests: int = 0
    timeouts: int = 0
    not_controller: int = 0
    no_answer: int = 0  # the connection failed (refused or reset)


@dataclass(slots=True)
class AdminStats:
    topics_created: int = 0
    topics_deleted: int = 0
    min_isr_changes: int = 0
    via_broker: int = 0
    errors: int = 0
    retries: int = 0


@dataclass(slots=True)
class _Call:
    target: int
    on_response: Callable[[Any], None]
    on_failure: Callable[[], None]


class SimAdmin:
    """Creates and deletes topics and changes ``min.insync.replicas`` (see the module docstring)."""

    def __init__(self, world: World, timing: ClientTiming, actor_id: int = ADMIN_ID) -> None:
        self.world = world
        self._id = actor_id
        self.timing = timing
        self.rng = random.Random(f"{world.seed}:actor:{actor_id}")
        self.controller_ids = list(world.voter_ids)
        self.target = self.controller_ids[self.rng.randrange(len(self.controller_ids))]
        self._incarnation = 0
        self._up = False
        self._calls: dict[int, _Call] = {}
        self._correlation = 0  # never reset: a late answer to an earlier incarnation matches nothing
        self.stats = ClientStats()
        self.astats = AdminStats()
        self.cluster_default_changes = True
        self._next_topic = 0
        self._busy = False

    # -- world.Actor -----------------------------------------------------------------------------

    @property
    def actor_id(self) -> int:
        return self._id

    @property
    def incarnation(self) -> int:
        return self._incarnation

    @property
    def up(self) -> bool:
        return self._up

    def receive(self, envelope: Any) -> None:
        call = self._calls.pop(envelope.correlation_id, None)
        answer = envelope.body
        if call is None or not isinstance(answer, ApiResponse):
            return  # timed out already, or not ours
        if answer.body is None:
            self.stats.no_answer += 1
            self._find_controller(call.target)
            call.on_failure()
            return
        if type(envelope) is ControllerEnvelope and ErrorCode.NOT_CONTROLLER in response_error_codes(
            answer.api.key, answer.body
        ):
            self.stats.not_controller += 1
            self._find_controller(call.target)
            call.on_failure()
            return
        call.on_response(answer.body)

    def start(self) -> None:
        if self._up:
            return
        self._incarnation += 1
        self._up = True
        self._calls.clear()
        low, high = self.timing.admin_interval_ms
        self._after(self.rng.randint(low, high), "admin", self._tick)

    def stop(self) -> None:
        self._incarnation += 1
        self._up = False
        self._calls.clear()

    # -- requests --------------------------------------------------------------------------------

    def _after(self, delay_ms: int, label: str, action: Callable[[], None]) -> None:
        incarnation = self._incarnation

        def step() -> None:
            if self._up and self._incarnation == incarnation:
                action()

        self.world.schedule_actor(self.world.now_ms + delay_ms, label, step)

    def _request(
        self,
        api: Any,
        version: int,
        body: Any,
        on_response: Callable[[Any], None],
        on_failure: Callable[[], None],
        *,
        broker: int | None = None,
        timeout_ms: int | None = None,
    ) -> None:
        """Send ``body`` to the believed-active controller (or to ``broker``'s listener); exactly
        one callback runs (none if this incarnation ends first)."""
        self._correlation += 1
        correlation = self._correlation
        request = ApiRequest(api.API, version, body)
        if broker is None:
            target = self.target
            envelope: Any = ControllerEnvelope(self._id, target, correlation, request)
        else:
            target = broker
            envelope = ClientEnvelope(self._id, broker, correlation, BROKER_LISTENER, request)
        self._calls[correlation] = _Call(target, on_response, on_failure)
        self.stats.requests += 1
        self.world.send(envelope, self.world.now_ms)

        def timeout() -> None:
            call = self._calls.pop(correlation, None)
            if call is not None:
                self.stats.timeouts += 1
                if broker is None:
                    self._find_controller(call.target)
                call.on_failure()

        self._after(timeout_ms or self.timing.request_timeout_ms, f"timeout:{self._id}", timeout)

    def _find_controller(self, failed: int) -> None:
        """After a failure at controller ``failed``: try the next one, and ask it for Metadata to
        learn the active controller (ControllerId), as Kafka's admin client does."""
        if failed not in self.controller_ids:
            return
        ids = self.controller_ids
        self.target = ids[(ids.index(failed) + 1) % len(ids)]
        asked = self.target

        def learned(response: Any) -> None:
            controller = int(response.controller_id)
            if controller in self.controller_ids and self.target == asked:
                self.target = controller

        body = metadata.REQUEST.cls(topics=[], allow_auto_topic_creation=False)
        self._correlation += 1
        correlation = self._correlation
        self._calls[correlation] = _Call(asked, learned, lambda: None)
        request = ApiRequest(metadata.API, 12, body)
        self.world.send(ControllerEnvelope(self._id, asked, correlation, request), self.world.now_ms)

        def forget() -> None:
            self._calls.pop(correlation, None)

        self._after(self.timing.request_timeout_ms, f"timeout:{self._id}", forget)

    def _running_brokers(self) -> list[int]:
        brokers = getattr(self.world, "brokers", {})
        return [b for b in sorted(brokers) if brokers[b].up]

    # -- the workload ----------------------------------------------------------------------------

    def _tick(self) -> None:
        low, high = self.timing.admin_interval_ms
        self._after(self.rng.randint(low, high), "admin", self._tick)
        if self._busy:
            return
        brokers = self._running_brokers()
        if not brokers:
            return
        self._busy = True
        body = metadata.REQUEST.cls(topics=None, allow_auto_topic_creation=False)
        broker = brokers[self.rng.randrange(len(brokers))]

        def listed(response: Any) -> None:
            self._busy = False
            self._act(sorted(t.name for t in response.topics if t.error_code == 0))

        def failed() -> None:
            self._busy = False

        self._request(metadata, 12, body, listed, failed, broker=broker)

    def _act(self, topics: list[str]) -> None:
        create_w, delete_w, alter_w = self.timing.admin_weights
        if len(topics) >= self.timing.max_topics:
            create_w = 0
        if not topics:
            delete_w = alter_w = 0
        total = create_w + delete_w + alter_w
        if total == 0:
            return
        pick = self.rng.randrange(total)
        if pick < create_w:
            self._create()
        elif pick < create_w + delete_w:
            self._delete(topics[self.rng.randrange(len(topics))])
        else:
            self._alter(topics[self.rng.randrange(len(topics))])

    def _send(
        self, api: Any, version: int, body: Any, on_done: Callable[[Any], None], tries: int = 4
    ) -> None:
        self._busy = True
        brokers = self._running_brokers()
        via = None
        if brokers and self.rng.random() < self.timing.admin_via_broker:
            via = brokers[self.rng.randrange(len(brokers))]
            self.astats.via_broker += 1

        def on_response(response: Any) -> None:
            if via is not None and ErrorCode.REQUEST_TIMED_OUT in response_error_codes(api.API.key, response):
                on_failure()  # the broker found no controller in time: try again
                return
            self._busy = False
            on_done(response)

        def on_failure() -> None:
            if tries <= 1:
                self._busy = False
                self.astats.errors += 1
                return
            self.astats.retries += 1
            self._after(
                self.timing.retry_backoff_ms,
                "admin-retry",
                lambda: self._send(api, version, body, on_done, tries - 1),
            )

        # Through a broker the answer may wait for the forwarded request's own timeout (5 s).
        timeout_ms = None if via is None else 6000
        self._request(api, version, body, on_response, on_failure, broker=via, timeout_ms=timeout_ms)

    def _create(self) -> None:
        self._next_topic += 1
        name = f"t{self._next_topic}"
        cls = create_topics.REQUEST.cls
        low, high = self.timing.replication_range
        mlow, mhigh = self.timing.min_isr_range
        topic = cls.CreatableTopic(
            name=name,
            num_partitions=self.rng.randint(1, 3),
            replication_factor=self.rng.randint(low, high),
            assignments=[],
            configs=[
                cls.CreatableTopic.CreatableTopicConfig(
                    name="min.insync.replicas", value=str(self.rng.randint(mlow, mhigh))
                )
            ],
        )
        body = cls(topics=[topic], timeout_ms=5000, validate_only=False)

        def done(response: Any) -> None:
            code = response.topics[0].error_code
            if code == 0:
                self.astats.topics_created += 1
            elif code != int(ErrorCode.TOPIC_ALREADY_EXISTS):  # a retry of one that worked
                self.astats.errors += 1

        self._send(create_topics, 7, body, done)

    def _delete(self, name: str) -> None:
        body = delete_topics.REQUEST.cls(topic_names=[name], timeout_ms=5000)

        def done(response: Any) -> None:
            code = response.responses[0].error_code
            if code == 0:
                self.astats.topics_deleted += 1
            elif code != int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
                self.astats.errors += 1

        self._send(delete_topics, 5, body, done)

    def _alter(self, topic: str) -> None:
        cls = incremental_alter_configs.REQUEST.cls
        mlow, mhigh = self.timing.min_isr_range
        if self.cluster_default_changes and self.rng.random() < 0.15:
            resource_type, resource_name = BROKER_RESOURCE, ""  # the cluster default
        else:
            resource_type, resource_name = TOPIC_RESOURCE, topic
        body = cls(
            resources=[
                cls.AlterConfigsResource(
                    resource_type=resource_type,
                    resource_name=resource_name,
                    configs=[
                        cls.AlterConfigsResource.AlterableConfig(
                            name="min.insync.replicas",
                            config_operation=0,
                            value=str(self.rng.randint(mlow, mhigh)),
                        )
                    ],
                )
            ],
            validate_only=False,
        )

        def done(response: Any) -> None:
            code = response.responses[0].error_code
            if code == 0:
                self.astats.min_isr_changes += 1
            elif code != int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):  # deleted meanwhile
                self.astats.errors += 1

        self._send(incremental_alter_configs, 1, body, done)
