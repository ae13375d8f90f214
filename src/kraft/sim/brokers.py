"""Simulated brokers and an admin client: the clients of the controller simulation.

A simulated broker is not a raft node and holds no partition data: it is a small deterministic
actor (``kraft.sim.world.Actor``) that speaks the controller APIs over the simulated network, as a
Kafka broker's lifecycle manager and AlterPartition manager do:

* **Lifecycle.** Each start is a new incarnation (a new IncarnationId) that registers with
  PreviousBrokerEpoch = its last epoch if it shut down cleanly, else -1 (spec 2.2), then
  heartbeats every ``heartbeat_interval_ms`` (the next one is scheduled when the previous one is
  answered or fails). The CurrentMetadataOffset it reports is the committed offset of the
  controller it talks to (a broker's own metadata replica is a little behind the quorum; this one
  is behind by at most a poll). It stops cleanly (WantShutDown until ShouldShutDown, or the
  shutdown deadline; it remembers its epoch) or uncleanly (it just stops, forgetting it), and can
  go silent (alive, but no heartbeats or AlterPartition: a long pause) to get fenced.
* **Finding the active controller.** Requests go to the controller the actor believes active. A
  NOT_CONTROLLER answer or a request timeout moves it to the leader the quorum names (the leader
  id known to the controller it asked, as a broker learns it from the metadata log it fetches),
  or, without a name, to the next controller in turn.
* **ISR changes.** As partition leader (in the committed image of the controller it talks to, with
  its current epoch), a broker now and then shrinks the ISR (drops a random follower), expands it
  (re-adds a random replica the image shows active, sometimes naming that replica's broker epoch)
  or reports a RECOVERING partition recovered, with AlterPartition carrying the leader epoch and
  partition epoch it read from that image. One AlterPartition is in flight at a time.

The admin client creates topics (1-3 partitions, RF 2-3, ``min.insync.replicas`` 1-3), deletes
them, and changes ``min.insync.replicas`` on a topic or the cluster default, one request at a time,
retrying a request that timed out or met NOT_CONTROLLER.

Nothing here calls into a node: actors read controllers' committed images (a broker's metadata
view) and send envelopes; all randomness is the actor's own seeded ``random.Random``. Every start
records whether it followed a clean or an unclean stop (``start_kinds``): the invariant checker
takes that as the ground truth about unclean shutdowns (``NoCleanReplicaLost``).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kraft.common.uuids import random_uuid
from kraft.controller.quorum_controller import ControllerEnvelope, ControllerRequest, ControllerResponse
from kraft.metadata.image import MetadataImage
from kraft.metadata.partition import LeaderRecoveryState
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    alter_partition,
    broker_heartbeat,
    broker_registration,
    create_topics,
    delete_topics,
    incremental_alter_configs,
)

if TYPE_CHECKING:
    from kraft.sim.world import World

BROKER_ID_BASE = 100  # broker ids are 101, 102, ...: apart from the controllers' node ids
ADMIN_ID = 900
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
_NOT_CONTROLLER = int(ErrorCode.NOT_CONTROLLER)

# Start kinds (``SimBroker.start_kinds``): the ground truth about how the previous process ended.
FIRST_START = "first"
AFTER_CLEAN_STOP = "clean"
AFTER_UNCLEAN_STOP = "unclean"


@dataclass(frozen=True, slots=True)
class ClientTiming:
    """Timing of the simulated clients (scaled down from Kafka's defaults, like the quorum's)."""

    heartbeat_interval_ms: int = 500  # broker.heartbeat.interval.ms
    request_timeout_ms: int = 1000
    retry_backoff_ms: int = 100
    shutdown_timeout_ms: int = 6000  # give up on controlled shutdown and stop (still cleanly)
    isr_interval_ms: tuple[int, int] = (300, 1500)  # between a leader's ISR changes
    shrink_bias: float = 0.5  # chance a leader's ISR change is a shrink (when both are possible)
    admin_interval_ms: tuple[int, int] = (300, 1200)
    # Relative weights of the admin's operations: create, delete, change min.insync.replicas.
    admin_weights: tuple[int, int, int] = (5, 2, 2)
    max_topics: int = 8
    min_isr_range: tuple[int, int] = (1, 3)
    replication_range: tuple[int, int] = (2, 3)


@dataclass(slots=True)
class ClientStats:
    requests: int = 0
    timeouts: int = 0
    not_controller: int = 0


@dataclass(slots=True)
class _Call:
    target: int
    on_response: Callable[[Any], None]
    on_failure: Callable[[], None]


def _not_controller(api_key: int, body: Any) -> bool:
    """Whether a response is NOT_CONTROLLER, wherever its API puts the error code."""
    if api_key == create_topics.API.key:
        return any(t.error_code == _NOT_CONTROLLER for t in body.topics)
    if api_key == delete_topics.API.key:
        return any(t.error_code == _NOT_CONTROLLER for t in body.responses)
    if api_key == incremental_alter_configs.API.key:
        return any(r.error_code == _NOT_CONTROLLER for r in body.responses)
    return bool(getattr(body, "error_code", 0) == _NOT_CONTROLLER)


class ControllerClientActor:
    """Request plumbing shared by brokers and the admin: targets, timeouts, NOT_CONTROLLER."""

    def __init__(self, world: World, actor_id: int, timing: ClientTiming) -> None:
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
        body = envelope.body
        if call is None or not isinstance(body, ControllerResponse):
            return  # timed out already, or not ours
        if _not_controller(body.api_key, body.body):
            self.stats.not_controller += 1
            self._retarget(envelope.source)
            call.on_failure()
            return
        call.on_response(body.body)

    # -- helpers ---------------------------------------------------------------------------------

    def _new_incarnation(self, up: bool) -> None:
        self._incarnation += 1
        self._up = up
        self._calls.clear()

    def after(self, delay_ms: int, label: str, action: Callable[[], None]) -> None:
        """Run ``action`` in ``delay_ms`` unless this incarnation ended by then."""
        incarnation = self._incarnation

        def step() -> None:
            if self._up and self._incarnation == incarnation:
                action()

        self.world.schedule_actor(self.world.now_ms + delay_ms, label, step)

    def request(
        self,
        api: Any,
        version: int,
        body: Any,
        on_response: Callable[[Any], None],
        on_failure: Callable[[], None],
    ) -> None:
        """Send ``body`` to the believed-active controller; exactly one callback runs (none if
        this incarnation ends first)."""
        self._correlation += 1
        correlation = self._correlation
        target = self.target
        self._calls[correlation] = _Call(target, on_response, on_failure)
        self.stats.requests += 1
        envelope = ControllerEnvelope(
            self._id, target, correlation, ControllerRequest(api.API.key, version, body)
        )
        self.world.send(envelope, self.world.now_ms)

        def timeout() -> None:
            call = self._calls.pop(correlation, None)
            if call is not None:
                self.stats.timeouts += 1
                self._retarget(call.target)
                call.on_failure()

        self.after(self.timing.request_timeout_ms, f"timeout:{self._id}", timeout)

    def _retarget(self, asked: int) -> None:
        """After a failure at controller ``asked``: the leader the quorum names, else the next one."""
        node = self.world.nodes.get(asked)
        hint = node.raft.leader_id if node is not None and node.up else None
        if hint is not None and hint != asked and hint in self.controller_ids:
            self.target = hint
            return
        ids = self.controller_ids
        self.target = ids[(ids.index(asked) + 1) % len(ids)] if asked in ids else ids[0]

    def view(self) -> MetadataImage | None:
        """The committed image of the controller this actor talks to (any up controller if that
        one is down): what a broker's metadata replica would show."""
        order = [self.target, *(c for c in self.controller_ids if c != self.target)]
        for c in order:
            node = self.world.nodes[c]
            if node.up:
                image: MetadataImage = node.raft.controller.image
                return image
        return None


# Broker states
STOPPED = "STOPPED"
REGISTERING = "REGISTERING"
RUNNING = "RUNNING"
SHUTTING_DOWN = "SHUTTING_DOWN"


@dataclass(slots=True)
class BrokerStats:
    starts: int = 0
    clean_stops: int = 0
    unclean_stops: int = 0
    controlled_shutdowns: int = 0  # stops after ShouldShutDown
    shutdown_timeouts: int = 0  # stops after the deadline without ShouldShutDown
    fenced_answers: int = 0  # heartbeat answers saying fenced while running
    alter_partitions: int = 0
    alter_partition_errors: int = 0
    silences: int = 0


class SimBroker(ControllerClientActor):
    """One broker id across its incarnations (see the module docstring)."""

    def __init__(self, world: World, broker_id: int, timing: ClientTiming) -> None:
        super().__init__(world, broker_id, timing)
        self.broker_id = broker_id
        self.state = STOPPED
        self.epoch = -1
        self.clean_epoch = -1  # the epoch written at the last clean stop (-1: none)
        self.incarnation_id: uuid.UUID | None = None
        self.log_dir = uuid.UUID(int=(broker_id << 64) | 7)
        self.start_kinds: dict[uuid.UUID, str] = {}
        self.silent_until_ms = -1
        self.fenced = True
        self.reported_offset = -1
        self._alter_in_flight = False
        self._heartbeat_in_flight = False
        self._shutdown_deadline_ms: int | None = None
        self._started_once = False
        self.isr_changes = True
        self.bstats = BrokerStats()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        if self._up:
            return
        self._new_incarnation(up=True)
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
        self.state = REGISTERING
        self.epoch = -1
        self.fenced = True
        self.reported_offset = -1
        self.silent_until_ms = -1
        self._alter_in_flight = False
        self._heartbeat_in_flight = False
        self._shutdown_deadline_ms = None
        self.world.trace(f"B+|{self.broker_id}|{kind}")
        self._register()
        low, high = self.timing.isr_interval_ms
        self.after(self.rng.randint(low, high), f"isr:{self.broker_id}", self._isr_tick)

    def stop_uncleanly(self) -> None:
        """The process dies: no clean-shutdown marker, so the next start is unclean."""
        if not self._up:
            return
        self.world.trace(f"B-|{self.broker_id}|unclean")
        self.clean_epoch = -1
        self.bstats.unclean_stops += 1
        self.state = STOPPED
        self._new_incarnation(up=False)

    def _stop_cleanly(self) -> None:
        self.world.trace(f"B-|{self.broker_id}|clean")
        self.clean_epoch = self.epoch
        self.bstats.clean_stops += 1
        self.state = STOPPED
        self._new_incarnation(up=False)

    def shut_down(self) -> None:
        """Controlled shutdown: heartbeat WantShutDown until ShouldShutDown (or the deadline)."""
        if not self._up:
            return
        if self.state != RUNNING:
            self._stop_cleanly()  # not registered yet: nothing to hand over
            return
        self.state = SHUTTING_DOWN
        # The heartbeat chain carries WantShutDown from its next beat on.
        self._shutdown_deadline_ms = self.world.now_ms + self.timing.shutdown_timeout_ms

    def go_silent(self, duration_ms: int) -> None:
        """Stay alive but send nothing (a long pause) for ``duration_ms``."""
        if not self._up:
            return
        self.bstats.silences += 1
        self.silent_until_ms = self.world.now_ms + duration_ms
        self.world.trace(f"B~|{self.broker_id}|{duration_ms}")

    @property
    def silent(self) -> bool:
        return self.world.now_ms < self.silent_until_ms

    def _metadata_offset(self) -> int:
        node = self.world.nodes[self.target]
        if node.up:
            offset = int(node.raft.controller.image.provenance.last_offset)
            # The broker's own replica only moves forward within an incarnation.
            self.reported_offset = max(self.reported_offset, offset)
        return self.reported_offset

    # -- registration and heartbeats -------------------------------------------------------------

    def _register(self) -> None:
        if self.silent:
            self.after(self.timing.retry_backoff_ms, f"register:{self.broker_id}", self._register)
            return
        cls: Any = broker_registration.REQUEST.cls
        body = cls(
            broker_id=self.broker_id,
            cluster_id=self._cluster_id(),
            incarnation_id=self.incarnation_id,
            listeners=[
                cls.Listener(
                    name="PLAINTEXT", host=f"broker{self.broker_id}.sim", port=9092, security_protocol=0
                )
            ],
            features=[
                cls.Feature(name="metadata.version", min_supported_version=1, max_supported_version=25),
                cls.Feature(
                    name="eligible.leader.replicas.version", min_supported_version=0, max_supported_version=1
                ),
            ],
            rack=None,
            log_dirs=[self.log_dir],
            previous_broker_epoch=self.clean_epoch,
        )
        self.request(broker_registration, 4, body, self._on_registered, self._registration_failed)

    def _cluster_id(self) -> str:
        from kraft.sim.world import CLUSTER_ID

        return CLUSTER_ID

    def _on_registered(self, response: Any) -> None:
        if response.error_code != 0:
            # DUPLICATE_BROKER_REGISTRATION: the previous incarnation's session is still live.
            self.after(self.timing.heartbeat_interval_ms, f"register:{self.broker_id}", self._register)
            return
        self.epoch = int(response.broker_epoch)
        self.state = RUNNING
        self.fenced = True
        self.world.trace(f"B=|{self.broker_id}|{self.epoch}")
        self._heartbeat()

    def _registration_failed(self) -> None:
        self.after(self.timing.retry_backoff_ms, f"register:{self.broker_id}", self._register)

    def _heartbeat(self) -> None:
        if self.state not in (RUNNING, SHUTTING_DOWN):
            return
        deadline = self._shutdown_deadline_ms
        if self.state == SHUTTING_DOWN and deadline is not None and self.world.now_ms >= deadline:
            self.bstats.shutdown_timeouts += 1
            self._stop_cleanly()
            return
        if self.silent:
            self.after(
                max(1, self.silent_until_ms - self.world.now_ms), f"hb:{self.broker_id}", self._heartbeat
            )
            return
        body = broker_heartbeat.REQUEST.cls(
            broker_id=self.broker_id,
            broker_epoch=self.epoch,
            current_metadata_offset=self._metadata_offset(),
            want_fence=False,
            want_shut_down=self.state == SHUTTING_DOWN,
        )
        self._heartbeat_in_flight = True
        self.request(broker_heartbeat, 1, body, self._on_heartbeat, self._heartbeat_failed)

    def _on_heartbeat(self, response: Any) -> None:
        self._heartbeat_in_flight = False
        if response.error_code == int(ErrorCode.STALE_BROKER_EPOCH):
            # Our registration is not the current one: register again (same incarnation).
            self.state = REGISTERING
            self._register()
            return
        if response.error_code != 0:
            self._heartbeat_failed()
            return
        if response.is_fenced and not self.fenced and self.state == RUNNING:
            self.bstats.fenced_answers += 1
        self.fenced = bool(response.is_fenced)
        if response.should_shut_down:
            if self.state == SHUTTING_DOWN:
                self.bstats.controlled_shutdowns += 1
            self._stop_cleanly()
            return
        self.after(self.timing.heartbeat_interval_ms, f"hb:{self.broker_id}", self._heartbeat)

    def _heartbeat_failed(self) -> None:
        self._heartbeat_in_flight = False
        self.after(self.timing.retry_backoff_ms, f"hb:{self.broker_id}", self._heartbeat)

    # -- ISR changes -----------------------------------------------------------------------------

    def _isr_tick(self) -> None:
        low, high = self.timing.isr_interval_ms
        self.after(self.rng.randint(low, high), f"isr:{self.broker_id}", self._isr_tick)
        if not self.isr_changes or self.state != RUNNING or self._alter_in_flight or self.silent:
            return
        image = self.view()
        if image is None:
            return
        me = image.brokers.get(self.broker_id)
        if me is None or me.epoch != self.epoch:
            return  # this view does not know our current registration yet
        led = image.partitions_led_by(self.broker_id)
        if not led:
            return
        tp = led[self.rng.randrange(len(led))]
        part = image.partition(tp.topic_id, tp.partition_id)
        if part is None:
            return
        isr = list(part.isr)
        lrs = int(LeaderRecoveryState.RECOVERED)
        if part.leader_recovery_state == LeaderRecoveryState.RECOVERING:
            new_isr = [self.broker_id]  # recovered: report it, alone in the ISR
        else:
            followers = [r for r in isr if r != self.broker_id]
            candidates = [
                r
                for r in part.replicas
                if r not in isr and (b := image.brokers.get(r)) is not None and b.is_active
            ]
            shrink = bool(followers) and (not candidates or self.rng.random() < self.timing.shrink_bias)
            if shrink:
                drop = followers[self.rng.randrange(len(followers))]
                new_isr = [r for r in isr if r != drop]
            elif candidates:
                new_isr = [*isr, candidates[self.rng.randrange(len(candidates))]]
            else:
                return
        cls: Any = alter_partition.REQUEST.cls
        data = cls.TopicData.PartitionData(
            partition_index=tp.partition_id,
            leader_epoch=part.leader_epoch,
            partition_epoch=part.partition_epoch,
            leader_recovery_state=lrs,
        )
        states = []
        for r in new_isr:
            reg = image.brokers.get(r)
            # Sometimes name the member's broker epoch (KIP-903), sometimes not (-1).
            epoch = reg.epoch if reg is not None and self.rng.random() < 0.5 else -1
            states.append(cls.TopicData.PartitionData.BrokerState(broker_id=r, broker_epoch=epoch))
        data.new_isr_with_epochs = states
        body = cls(
            broker_id=self.broker_id,
            broker_epoch=self.epoch,
            topics=[cls.TopicData(topic_id=tp.topic_id, partitions=[data])],
        )
        self._alter_in_flight = True
        self.bstats.alter_partitions += 1
        self.request(alter_partition, 3, body, self._on_altered, self._alter_failed)

    def _on_altered(self, response: Any) -> None:
        self._alter_in_flight = False
        if response.error_code != 0 or any(p.error_code != 0 for t in response.topics for p in t.partitions):
            self.bstats.alter_partition_errors += 1

    def _alter_failed(self) -> None:
        self._alter_in_flight = False


@dataclass(slots=True)
class AdminStats:
    topics_created: int = 0
    topics_deleted: int = 0
    min_isr_changes: int = 0
    errors: int = 0
    retries: int = 0


class SimAdmin(ControllerClientActor):
    """Creates and deletes topics and changes ``min.insync.replicas`` (see the module docstring)."""

    def __init__(self, world: World, timing: ClientTiming, actor_id: int = ADMIN_ID) -> None:
        super().__init__(world, actor_id, timing)
        self._next_topic = 0
        self._busy = False
        self.astats = AdminStats()
        self.cluster_default_changes = True

    def start(self) -> None:
        if self._up:
            return
        self._new_incarnation(up=True)
        low, high = self.timing.admin_interval_ms
        self.after(self.rng.randint(low, high), "admin", self._tick)

    def stop(self) -> None:
        self._new_incarnation(up=False)

    def _tick(self) -> None:
        low, high = self.timing.admin_interval_ms
        self.after(self.rng.randint(low, high), "admin", self._tick)
        if self._busy:
            return
        image = self.view()
        if image is None:
            return
        topics = sorted(image.topics_by_name)
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

        def on_response(response: Any) -> None:
            self._busy = False
            on_done(response)

        def on_failure() -> None:
            if tries <= 1:
                self._busy = False
                self.astats.errors += 1
                return
            self.astats.retries += 1
            self.after(
                self.timing.retry_backoff_ms,
                "admin-retry",
                lambda: self._send(api, version, body, on_done, tries - 1),
            )

        self.request(api, version, body, on_response, on_failure)

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
