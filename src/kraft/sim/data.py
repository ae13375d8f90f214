"""The data plane in the simulator: real brokers storing and replicating user records, a producer and
a consumer, faults, and the invariants that say no acknowledged record was lost.

``DataWorld`` is a ``ControllerWorld`` whose brokers are built (by ``build_node``, as a process builds
them) with partition storage: each broker id has a ``SimPartitionLogs``, in-memory partition logs that
outlive its processes like files. So the broker runs its real ``ReplicaManager``: leaders append,
followers fetch from leaders over the simulated network (``ClientEnvelope``s between nodes), the ISR
follows the followers' fetches, the high watermark is the strict one of KIP-966.

Faults, on top of the controller world's (controller crashes, partitions, pauses):

* **kill -9** (``SimBroker.stop_uncleanly``): the process dies; the page cache survives, so every
  appended byte is still there at the next start (as on a real machine). The start is unclean.
* **power loss** (``DataWorld.power_loss``): the process dies and every byte not flushed is lost.
  Kafka's defaults never fsync on append, so that is everything since the last segment roll or clean
  shutdown: durability comes from replication, which is exactly what KIP-966's ELR protects.
* **clean stop** (controlled shutdown, then ``stop_cleanly``): logs flushed first.

The client (``DataClient``, an actor) creates the topic, finds partition leaders as a Kafka client does
(Metadata from a broker; ``CurrentLeader`` hints of KIP-951 on NOT_LEADER_OR_FOLLOWER), produces unique
values with acks=all (one request in flight per partition; a failed request is not retried with the
same values, so duplicates cannot arise and every value is written at most once), and consumes every
partition from offset 0.

Invariants (``DataChecker``, on top of every controller and raft invariant):

* **AckedRecordKept**: the legitimate leader of a partition (a broker that leads it in the leader
  epoch of the committed metadata) holds every acknowledged record at its offset, with its value.
* **HighWatermarkMonotonic**: a leader's high watermark never goes backward within its epoch.
* **ConsumerBelowHighWatermark**: no consumer is handed a record at or past the high watermark of the
  answer that carries it.
* **OffsetsStable**: one offset is never read (or acknowledged) with two different values.
* **ConsumerInOrder**: a consumer's reads of a partition are dense and increasing.

Liveness: after the faults heal, every partition has a leader and acknowledges writes again within a
bound (``DataChecker.expect_data_progress``). A partition left with nobody eligible (ISR, ELR and
LastKnownElr empty: every replica that held the committed records restarted uncleanly) is counted
(``no_eligible_leader``) and excused only when unclean recovery is off; with it on (the default), the
healed replicas report their logs and the most complete one must lead.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from typing import Any

from kraft.broker.replica_manager import ReplicaConfig
from kraft.controller.features import ELR_VERSION
from kraft.node.build import BrokerConfig, NodeStorage
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import create_topics, fetch, metadata, produce
from kraft.records.batch import build_value_batch, iter_batches
from kraft.sim.brokers import BROKER_LISTENER, ClientTiming, SimAdmin
from kraft.sim.controller_invariants import ControllerChecker
from kraft.sim.controller_world import ControllerWorld
from kraft.sim.world import SimNode, World
from kraft.storage.memory_partition_log import MemoryPartitionLog

DATA_CLIENT_ID = 901
TOPIC = "data"
# The replica manager's settings in the simulation: Kafka's, scaled like the quorum timing.
SIM_REPLICA_CONFIG = ReplicaConfig(
    replica_lag_time_max_ms=2_000,
    fetch_wait_max_ms=200,
    fetch_backoff_ms=100,
    hw_checkpoint_interval_ms=1_000,
    request_timeout_ms=1_500,
    inter_broker_listener=BROKER_LISTENER,
)


class SimPartitionLogs:
    """One broker's partition logs (a ``LogProvider``): in memory, kept across its processes like the
    files of a log directory, with Kafka's high-watermark checkpoint file modelled (``checkpoint``
    records the high watermarks; a power loss brings each log back to its last flush and its high
    watermark back to the checkpointed one, as a restarted Kafka broker reads it)."""

    def __init__(self) -> None:
        self.logs: dict[tuple[str, int], MemoryPartitionLog] = {}
        self._checkpointed: dict[tuple[str, int], int] = {}
        self.power_losses = 0

    def get_or_create(self, topic: str, partition: int, topic_id: uuid.UUID) -> MemoryPartitionLog:
        key = (topic, partition)
        log = self.logs.get(key)
        if log is None:
            log = self.logs[key] = MemoryPartitionLog(topic, partition, topic_id)
        return log

    def delete(self, topic: str, partition: int) -> None:
        self.logs.pop((topic, partition), None)
        self._checkpointed.pop((topic, partition), None)

    def checkpoint(self) -> None:
        self._checkpointed = {key: log.high_watermark for key, log in self.logs.items()}

    def log_dir_states(self) -> list[tuple[str, int, int, list[MemoryPartitionLog]]]:
        return [("/sim/data", -1, -1, [self.logs[key] for key in sorted(self.logs)])]

    def flush_all(self) -> None:
        for log in self.logs.values():
            log.flush()
        self.checkpoint()

    def power_loss(self) -> None:
        self.power_losses += 1
        for key, log in self.logs.items():
            log.crash()
            log.set_high_watermark_after_truncation(min(self._checkpointed.get(key, 0), log.high_watermark))


@dataclass(slots=True)
class DataStats:
    produce_requests: int = 0
    acked_records: int = 0
    produce_errors: dict[str, int] = field(default_factory=dict)
    consumed_records: int = 0
    metadata_requests: int = 0
    last_ack_ms: int = -1
    longest_unavailable_ms: int = 0


class DataClient(SimAdmin):
    """The topic's creator, its producer and its consumer (see the module docstring). Reuses the admin
    client's request plumbing and controller discovery; never reads a node's state."""

    def __init__(
        self,
        world: DataWorld,
        timing: ClientTiming,
        *,
        partitions: int,
        min_isr: int,
        produce_until_ms: int,
    ) -> None:
        super().__init__(world, timing, actor_id=DATA_CLIENT_ID)
        self.data_world = world
        self.partitions = partitions
        self.min_isr = min_isr
        self.produce_until_ms = produce_until_ms
        self.dstats = DataStats()
        self.created = False
        self.leaders: dict[int, int] = {}  # partition -> believed leader
        self.leader_epochs: dict[int, int] = {}
        self._next_value = 0
        self._producing: set[int] = set()
        self._consuming: set[int] = set()
        self.next_read: dict[int, int] = {}  # partition -> next offset the consumer reads
        self._refreshing = False
        self.topic_id: uuid.UUID | None = None  # learned from Metadata (v10+), as a client does

    def start(self) -> None:
        if self._up:
            return
        self._incarnation += 1
        self._up = True
        self._calls.clear()
        self._after(self.rng.randint(200, 600), "data:create", self._create_topic)

    # -- the topic ---------------------------------------------------------------------------------

    def _create_topic(self) -> None:
        cls: Any = create_topics.REQUEST.cls
        config = [
            cls.CreatableTopic.CreatableTopicConfig(name="min.insync.replicas", value=str(self.min_isr))
        ]
        body = cls(
            topics=[
                cls.CreatableTopic(
                    name=TOPIC, num_partitions=self.partitions, replication_factor=3, configs=config
                )
            ],
            timeout_ms=2_000,
        )

        def done(response: Any) -> None:
            code = response.topics[0].error_code
            if code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
                self.created = True
                self._refresh_metadata()
            else:
                self._after(200, "data:create", self._create_topic)

        self._request(
            create_topics, 7, body, done, lambda: self._after(200, "data:create", self._create_topic)
        )

    def _refresh_metadata(self) -> None:
        """Ask a running broker for the topic's leaders (what any Kafka client does)."""
        if self._refreshing:
            return
        brokers = sorted(self.data_world.brokers)
        broker = brokers[self.rng.randrange(len(brokers))]
        cls: Any = metadata.REQUEST.cls
        body = cls(topics=[cls.MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False)
        self._refreshing = True
        self.dstats.metadata_requests += 1

        def done(response: Any) -> None:
            self._refreshing = False
            for t in response.topics:
                if t.name != TOPIC or t.error_code != ErrorCode.NONE:
                    continue
                self.topic_id = t.topic_id
                for p in t.partitions:
                    if p.leader_id >= 0:
                        self._learn(p.partition_index, p.leader_id, p.leader_epoch)
            self._kick()
            if len(self.leaders) < self.partitions:
                self._after(200, "data:metadata", self._refresh_metadata)

        def failed() -> None:
            self._refreshing = False
            self._after(100, "data:metadata", self._refresh_metadata)

        self._request(metadata, 12, body, done, failed, broker=broker, timeout_ms=1_000)

    def _learn(self, partition: int, leader: int, epoch: int) -> None:
        if epoch >= self.leader_epochs.get(partition, -1):
            self.leaders[partition] = leader
            self.leader_epochs[partition] = epoch

    def _kick(self) -> None:
        """Start each partition's producer and consumer loop once (each keeps itself going)."""
        for partition in range(self.partitions):
            if partition not in self._producing:
                self._producing.add(partition)
                self._produce(partition)
            if partition not in self._consuming:
                self._consuming.add(partition)
                self._consume(partition)

    def _failed(self, partition: int, hint: Any = None) -> None:
        if hint is not None and hint.leader_id >= 0:
            self._learn(partition, hint.leader_id, hint.leader_epoch)
        else:
            self.leaders.pop(partition, None)
            self._refresh_metadata()

    # -- the producer --------------------------------------------------------------------------------

    def _produce(self, partition: int) -> None:
        """One step of the partition's producer loop: one request in flight at a time."""
        if self.data_world.now_ms >= self.produce_until_ms:
            return  # the loop ends
        leader = self.leaders.get(partition)
        if leader is None:
            self._after(100, "data:produce", lambda: self._produce(partition))
            return
        count = self.rng.randint(1, 4)
        values = []
        for _ in range(count):
            self._next_value += 1
            values.append(f"v{partition}-{self._next_value}".encode())
        batch = build_value_batch(
            values, base_offset=0, partition_leader_epoch=-1, timestamp_ms=self.data_world.now_ms
        )
        cls: Any = produce.REQUEST.cls
        body = cls(
            acks=-1,
            timeout_ms=2_000,
            topic_data=[
                cls.TopicProduceData(
                    name=TOPIC,
                    partition_data=[
                        cls.TopicProduceData.PartitionProduceData(index=partition, records=batch)
                    ],
                )
            ],
        )
        self.dstats.produce_requests += 1

        def done(response: Any) -> None:
            row = response.responses[0].partition_responses[0]
            if row.error_code == ErrorCode.NONE:
                now = self.data_world.now_ms
                last = self.dstats.last_ack_ms
                if last >= 0:
                    self.dstats.longest_unavailable_ms = max(self.dstats.longest_unavailable_ms, now - last)
                self.dstats.last_ack_ms = now
                self.dstats.acked_records += len(values)
                self.data_world.data_checker.acked(partition, row.base_offset, values)
                self._after(self.rng.randint(5, 40), "data:produce", lambda: self._produce(partition))
                return
            name = _name(row.error_code)
            self.dstats.produce_errors[name] = self.dstats.produce_errors.get(name, 0) + 1
            if row.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                self._failed(partition, row.current_leader)
            self._after(self.rng.randint(50, 150), "data:produce", lambda: self._produce(partition))

        def failed() -> None:
            self.dstats.produce_errors["NO_ANSWER"] = self.dstats.produce_errors.get("NO_ANSWER", 0) + 1
            self._failed(partition)
            self._after(100, "data:produce", lambda: self._produce(partition))

        self._request(produce, 12, body, done, failed, broker=leader, timeout_ms=3_000)

    # -- the consumer --------------------------------------------------------------------------------

    def _consume(self, partition: int) -> None:
        """One step of the partition's consumer loop: one fetch in flight at a time."""
        leader = self.leaders.get(partition)
        topic_id = self.topic_id
        if leader is None or topic_id is None:
            self._after(100, "data:consume", lambda: self._consume(partition))
            return
        offset = self.next_read.setdefault(partition, 0)
        cls: Any = fetch.REQUEST.cls
        body = cls(
            replica_id=-1,
            max_wait_ms=200,
            min_bytes=1,
            max_bytes=1 << 20,
            topics=[
                cls.FetchTopic(
                    topic_id=topic_id,
                    partitions=[
                        cls.FetchTopic.FetchPartition(
                            partition=partition,
                            current_leader_epoch=self.leader_epochs.get(partition, -1),
                            fetch_offset=offset,
                            partition_max_bytes=1 << 16,
                        )
                    ],
                )
            ],
        )

        def done(response: Any) -> None:
            row = response.responses[0].partitions[0]
            if row.error_code != ErrorCode.NONE:
                if row.error_code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH):
                    self._failed(partition, row.current_leader)
                self._after(100, "data:consume", lambda: self._consume(partition))
                return
            self.data_world.data_checker.consumed(
                partition, offset, row.high_watermark, row.records or b"", self
            )
            self._after(self.rng.randint(0, 20), "data:consume", lambda: self._consume(partition))

        def failed() -> None:
            self._failed(partition)
            self._after(100, "data:consume", lambda: self._consume(partition))

        self._request(fetch, 13, body, done, failed, broker=leader, timeout_ms=1_500)


class DataChecker(ControllerChecker):
    """The controller and raft invariants, plus the data plane's (see the module docstring)."""

    def __init__(self, world: World, *, deep_every: int = 4000) -> None:
        super().__init__(world, deep_every=deep_every)
        self.acked_by_partition: dict[int, dict[int, bytes]] = {}
        self.read_by_partition: dict[int, dict[int, bytes]] = {}
        # (broker, incarnation, partition, leader epoch) -> acked offsets verified so far, in order.
        self._verified: dict[tuple[int, int, int, int], int] = {}
        self._sorted_acked: dict[int, list[int]] = {}
        self._hw_seen: dict[tuple[int, int, int, int], int] = {}
        self.lost_records = 0  # acknowledged records a legitimate leader did not hold (ELR-off pair)
        # Partitions that ended without any eligible leader (excused from DataAvailable, counted).
        self.no_eligible_leader: set[int] = set()
        self._lost_seen: set[tuple[int, int]] = set()

    # -- what the client reports -------------------------------------------------------------------

    def acked(self, partition: int, base_offset: int, values: list[bytes]) -> None:
        acked = self.acked_by_partition.setdefault(partition, {})
        order = self._sorted_acked.setdefault(partition, [])
        for i, value in enumerate(values):
            offset = base_offset + i
            before = acked.get(offset)
            if before is not None and before != value:
                self.world.report(
                    "OffsetsStable",
                    f"partition {partition} offset {offset} acknowledged twice: {before!r}, {value!r}",
                )
            read = self.read_by_partition.get(partition, {}).get(offset)
            if read is not None and read != value:
                self.world.report(
                    "OffsetsStable",
                    f"partition {partition} offset {offset} acknowledged {value!r}, read {read!r}",
                )
            acked[offset] = value
            if not order or offset > order[-1]:
                order.append(offset)
            else:
                order.append(offset)
                order.sort()

    def consumed(
        self, partition: int, offset: int, high_watermark: int, records: bytes, client: DataClient
    ) -> None:
        expected = offset
        read = self.read_by_partition.setdefault(partition, {})
        acked = self.acked_by_partition.get(partition, {})
        for batch in iter_batches(records):
            for record in batch.records:
                o = record.offset
                if o < expected:
                    continue  # the batch holding the fetch offset starts before it (Kafka sends it whole)
                if o != expected:
                    self.world.report(
                        "ConsumerInOrder", f"partition {partition}: read offset {o}, expected {expected}"
                    )
                if o >= high_watermark:
                    self.world.report(
                        "ConsumerBelowHighWatermark",
                        f"partition {partition}: offset {o} handed to a consumer at high watermark "
                        f"{high_watermark}",
                    )
                value = record.value or b""
                if read.get(o, value) != value:
                    self.world.report(
                        "OffsetsStable", f"partition {partition} offset {o} read as {read[o]!r} and {value!r}"
                    )
                if acked.get(o, value) != value:
                    self.world.report(
                        "OffsetsStable",
                        f"partition {partition} offset {o} acknowledged {acked[o]!r}, read {value!r}",
                    )
                read[o] = value
                expected = o + 1
                client.dstats.consumed_records += 1
        client.next_read[partition] = max(client.next_read.get(partition, 0), expected)

    # -- the per-event pass -------------------------------------------------------------------------

    def after_event(self, touched: Any = None, *, observed: Any = None) -> None:
        super().after_event(touched, observed=observed)
        world = self.world
        assert isinstance(world, DataWorld)
        if touched is None:
            scope = [world.nodes[b] for b in world.brokers]
        elif isinstance(touched, SimNode):
            scope = [touched] if touched.node_id in world.brokers else []
        else:
            scope = [n for n in touched if n.node_id in world.brokers]
        if scope:
            self._check_leaders(world, scope)

    def _check_leaders(self, world: DataWorld, nodes: list[SimNode]) -> None:
        reference = self.reference_image
        topic = reference.topics_by_name.get(TOPIC)
        if topic is None:
            return
        for node in nodes:
            process = node.process
            broker = None if process is None else process.broker
            replicas = None if broker is None else broker.replicas
            if replicas is None:
                continue
            for tp, partition in replicas.partitions.items():
                if tp.topic_id != topic.id or not partition.is_leader:
                    continue
                key = (node.node_id, node.incarnation, tp.partition_id, partition.leader_epoch)
                hw = partition.log.high_watermark
                if hw < self._hw_seen.get(key, -1):
                    world.report(
                        "HighWatermarkMonotonic",
                        f"broker {node.node_id} partition {tp.partition_id} epoch {partition.leader_epoch}: "
                        f"high watermark {self._hw_seen[key]} -> {hw}",
                    )
                self._hw_seen[key] = hw
                p = topic.partitions.get(tp.partition_id)
                if p is None or p.leader != node.node_id or p.leader_epoch != partition.leader_epoch:
                    continue  # not (or no longer) the legitimate leader
                self._check_acked_held(world, node, key, partition.log)

    def _check_acked_held(
        self, world: DataWorld, node: SimNode, key: tuple[int, int, int, int], log: Any
    ) -> None:
        index = key[2]
        order = self._sorted_acked.get(index)
        if not order:
            return
        done = self._verified.get(key, 0)
        if done >= len(order):
            return
        acked = self.acked_by_partition[index]
        first = order[done]
        end = log.log_end_offset
        held: dict[int, bytes] = {}
        if first < end and first >= log.log_start_offset:
            data = log.read(first, 1 << 30, max_offset=end)
            for batch in iter_batches(data):
                for record in batch.records:
                    held[record.offset] = record.value or b""
        for i in range(done, len(order)):
            offset = order[i]
            if held.get(offset) != acked[offset] and (index, offset) not in self._lost_seen:
                self._lost_seen.add((index, offset))
                self.lost_records += 1
                holders = self._brokers_holding(world, index, offset, acked[offset])
                where = (
                    f"still in the log of broker(s) {holders}"
                    if holders
                    else "in no replica's log any more (every copy lost)"
                )
                world.report(
                    "AckedRecordKept",
                    f"broker {node.node_id} leads partition {index} in epoch {key[3]} without acknowledged "
                    f"offset {offset} ({acked[offset]!r}); it holds {held.get(offset)!r}, log end {end}; "
                    f"the record is {where}",
                )
        self._verified[key] = len(order)

    @staticmethod
    def _brokers_holding(world: DataWorld, index: int, offset: int, value: bytes) -> list[int]:
        """The brokers whose log (the ground truth, as on their disks now) holds ``value`` at
        ``offset`` of partition ``index``: tells a loss an election caused (a replica still had the
        record) from one the faults caused (every copy gone, e.g. power losses of every holder)."""
        out = []
        for broker_id, logs in sorted(world.partition_logs.items()):
            log = logs.logs.get((TOPIC, index))
            if log is None or not log.log_start_offset <= offset < log.log_end_offset:
                continue
            for batch in iter_batches(log.read(offset, 1 << 20, max_offset=log.log_end_offset)):
                if any(r.offset == offset and (r.value or b"") == value for r in batch.records):
                    out.append(broker_id)
                break
        return out

    # -- liveness ---------------------------------------------------------------------------------------

    def expect_data_progress(self, label: str, within_ms: int) -> None:
        """Within ``within_ms`` every partition has a leader and the producer has an acknowledgement
        for each partition (writes work again after the faults healed)."""
        world = self.world
        assert isinstance(world, DataWorld)
        since = world.now_ms
        baseline = {p: max(a, default=-1) for p, a in self.acked_by_partition.items()}
        world.end_ms = max(world.end_ms, since + within_ms)

        def check() -> None:
            stuck = [
                p
                for p in range(world.partitions)
                if max(self.acked_by_partition.get(p, {}), default=-1) <= baseline.get(p, -1)
            ]
            # KIP-966's accepted unavailability: every replica that held the committed records
            # restarted uncleanly, so none is eligible (ISR, ELR and the last known leader empty)
            # and only an operator's unclean election could bring the partition back, at the
            # price of records. Waiting is the safe answer; NoCleanReplicaLost checks that no
            # replica left eligibility without an unclean restart. With unclean recovery on, such
            # a partition is counted but not excused: once the faults healed every replica
            # reports its log and the most complete one must be elected.
            without_eligible = self.partitions_without_eligible_leader()
            self.no_eligible_leader |= set(without_eligible) & set(stuck)
            if not self.unclean_recovery_on():
                stuck = [p for p in stuck if p not in without_eligible]
            if stuck:
                world.report(
                    "DataAvailable",
                    f"{label}: partitions {stuck} acknowledged nothing within {within_ms} ms "
                    f"(leaders now: {world.leaders_now()})",
                )

        world.schedule(since + within_ms, f"expect-data:{label}", check)

    def unclean_recovery_on(self) -> bool:
        """Whether the controllers run unclean recovery (KIP-966 part 2) with a strategy that elects."""
        world = self.world
        assert isinstance(world, DataWorld)
        config = world.controller_config
        return bool(
            config.unclean_recovery_manager_enabled and config.unclean_recovery_strategy.value != "None"
        )

    def partitions_without_eligible_leader(self) -> list[int]:
        """Leaderless partitions with nobody to elect: ISR, ELR and LastKnownElr all empty."""
        topic = self.reference_image.topics_by_name.get(TOPIC)
        if topic is None:
            return []
        return [
            i
            for i, p in sorted(topic.partitions.items())
            if p.leader == -1 and not p.isr and not p.elr and not p.last_known_elr
        ]

    def at_end(self) -> None:
        super().at_end()
        world = self.world
        assert isinstance(world, DataWorld)
        client = world.client
        world.extra["data"] = {
            "acked_records": client.dstats.acked_records,
            "consumed_records": client.dstats.consumed_records,
            "produce_requests": client.dstats.produce_requests,
            "produce_errors": dict(sorted(client.dstats.produce_errors.items())),
            "lost_records": self.lost_records,
            "longest_unavailable_ms": client.dstats.longest_unavailable_ms,
            "power_losses": sum(logs.power_losses for logs in world.partition_logs.values()),
            "no_eligible_leader": sorted(self.no_eligible_leader),
        }


class DataWorld(ControllerWorld):
    """Three controllers, three brokers with partition storage, and the data client.

    Options beyond ``ControllerWorld``'s: ``partitions`` of the topic (replication factor 3),
    ``min_isr``, ``elr`` (``eligible.leader.replicas.version`` 1 or 0), ``produce_until_ms`` (the
    producer stops then, so that the end of a run checks a quiet cluster).
    """

    def __init__(
        self,
        *,
        seed: int,
        partitions: int = 2,
        min_isr: int = 2,
        elr: bool = True,
        produce_until_ms: int | None = None,
        replica_config: ReplicaConfig = SIM_REPLICA_CONFIG,
        **options: Any,
    ) -> None:
        self.partitions = partitions
        self.replica_config = replica_config
        self.partition_logs: dict[int, SimPartitionLogs] = {}
        options.setdefault("brokers", 3)
        features = dict(options.pop("bootstrap_features", None) or {})
        features[ELR_VERSION] = 1 if elr else 0
        super().__init__(seed=seed, workload=False, bootstrap_features=features, **options)
        for broker_id in self.brokers:
            self.partition_logs[broker_id] = SimPartitionLogs()
        # A ControllerChecker was built by the parent: replace it by the data one (nothing ran yet).
        self.controller_checker = DataChecker(self, deep_every=self.controller_checker.deep_every)
        self.checker = self.controller_checker
        self.data_checker = self.controller_checker
        until = produce_until_ms if produce_until_ms is not None else self.end_ms - 3_000
        self.client = DataClient(
            self, self.client_timing, partitions=partitions, min_isr=min_isr, produce_until_ms=until
        )
        self.add_actor(self.client)

    # -- what build_node gets ---------------------------------------------------------------------

    def node_storage(self, node: SimNode) -> NodeStorage:
        # Looked up per build: the parent's constructor builds nothing yet, brokers start later.
        logs = getattr(self, "partition_logs", {}).get(node.node_id)
        return NodeStorage(node.log, node.store, logs)

    def broker_settings(self, settings: BrokerConfig) -> BrokerConfig:
        return dataclasses.replace(settings, replication=self.replica_config)

    def start(self) -> None:
        super().start()
        self.schedule_actor(self.rng.randint(300, 800), "start:data", self.client.start)

    # -- faults -----------------------------------------------------------------------------------

    def power_loss(self, broker_id: int) -> None:
        """The broker's machine loses power: the process dies (unclean) and unflushed bytes are lost."""
        broker = self.brokers[broker_id]
        if not broker.up:
            return
        self.trace(f"P|{broker_id}")
        broker.stop_uncleanly()
        self.partition_logs[broker_id].power_loss()

    def clean_stop(self, node_id: int) -> None:
        logs = self.partition_logs.get(node_id)
        if logs is not None:
            logs.flush_all()

    # -- observation ------------------------------------------------------------------------------

    def topic_id(self) -> uuid.UUID | None:
        topic = self.data_checker.reference_image.topics_by_name.get(TOPIC)
        return None if topic is None else topic.id

    def leaders_now(self) -> dict[int, int]:
        topic = self.data_checker.reference_image.topics_by_name.get(TOPIC)
        return {} if topic is None else {i: p.leader for i, p in sorted(topic.partitions.items())}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "partitions": self.partitions}


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"
