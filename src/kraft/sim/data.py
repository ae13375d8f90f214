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
  epoch of the committed metadata) holds every acknowledged record at its offset, with its value;
  except a record lost only to power losses (``DataChecker`` states the rule: no replica holds it,
  every copy any replica ever had was in the unflushed tail a power loss dropped, and at least min
  ISR replicas had it when it was acknowledged). That is Kafka's durability model with its default
  flush, not a bug: such records are counted (``acked_lost_to_power_loss``), not reported. A copy
  removed any other way (truncation, a moved log start, deletion), one still held somewhere, or an
  acknowledgement on too few replicas keeps the loss a violation.
* **HighWatermarkMonotonic**: a leader's high watermark never goes backward within its epoch.
* **ConsumerBelowHighWatermark**: no consumer is handed a record at or past the high watermark of the
  answer that carries it.
* **OffsetsStable**: one offset is never read (or acknowledged) with two different values; except
  that the record read or acknowledged first was lost only to power losses (the same rule: the log
  went on from the most complete replica left, and wrote the offset again).
* **ConsumerInOrder**: a consumer's reads of a partition are dense and increasing.

Liveness: after the faults heal, every partition has a leader and acknowledges writes again within a
bound (``DataChecker.expect_data_progress``). A partition left with nobody eligible (ISR, ELR and
LastKnownElr empty: every replica that held the committed records restarted uncleanly) is counted
(``no_eligible_leader``) and excused only when unclean recovery is off; with it on (the default), the
healed replicas report their logs and the most complete one must lead.
"""

from __future__ import annotations

import bisect
import dataclasses
import enum
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kraft.broker.replica_manager import ReplicaConfig
from kraft.controller.features import ELR_VERSION
from kraft.controller.quorum_controller import ControllerConfig
from kraft.node.build import BrokerConfig, NodeStorage
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import create_topics, fetch, metadata, produce
from kraft.records.batch import build_value_batch, iter_batches, read_batch_header
from kraft.sim.brokers import BROKER_LISTENER, ClientTiming, SimAdmin
from kraft.sim.controller_invariants import ControllerChecker
from kraft.sim.controller_world import ControllerWorld
from kraft.sim.network import LinkProfile
from kraft.sim.world import SimNode, Timing, World
from kraft.storage.memory_partition_log import MemoryPartitionLog

DATA_CLIENT_ID = 901
TOPIC = "data"
# The replica manager's settings in the simulation: Kafka's, scaled like the quorum timing.
SIM_REPLICA_CONFIG = ReplicaConfig(
    check_quiet=True,
    replica_lag_time_max_ms=2_000,
    fetch_wait_max_ms=200,
    fetch_backoff_ms=100,
    hw_checkpoint_interval_ms=1_000,
    request_timeout_ms=1_500,
    inter_broker_listener=BROKER_LISTENER,
)


class Removal(enum.Enum):
    """How a record left a broker's partition log in the simulation (``SimPartitionLog``)."""

    POWER_LOSS = "power loss"  # in the unflushed tail that a power loss dropped (``crash``)
    TRUNCATION = "truncation"  # ``truncate_to`` or ``truncate_fully_and_start_at``
    LOG_START = "log start"  # below a log start offset that moved (retention, DeleteRecords, a follower)
    DELETION = "deletion"  # the partition's log was deleted


_R = TypeVar("_R")

# What one broker's disk saw leave one partition log: offset -> (value, how) per record removed.
RemovalLedger = dict[int, list[tuple[bytes, Removal]]]


class SimPartitionLog(MemoryPartitionLog):
    """A ``MemoryPartitionLog`` that writes down, in its disk's ledger, every record it loses and how
    (``Removal``), at the moment it loses it: the ground truth that lets AckedRecordKept tell a record
    every holder lost to a power loss (Kafka's durability model with its default flush) from one some
    code removed. Each operation that can remove records reads the records it may remove first and
    compares with the log after it; the log's answers are ``MemoryPartitionLog``'s, unchanged."""

    def __init__(self, topic: str, partition: int, topic_id: uuid.UUID, ledger: RemovalLedger) -> None:
        self._ledger = ledger
        self._removing_depth = 0  # truncate_to may call truncate_fully_and_start_at: ledger once
        super().__init__(topic, partition, topic_id)

    def _records_from(self, offset: int) -> dict[int, bytes]:
        """offset -> value of every record the log holds at or above the log start offset, from the
        batch holding ``offset`` on."""
        start = self.log_start_offset
        end = self.log_end_offset
        out: dict[int, bytes] = {}
        if max(offset, start) >= end:
            return out
        for batch in iter_batches(self.read(max(offset, start), 1 << 62, max_offset=end)):
            if not batch.is_control:
                for record in batch.records:
                    if record.offset >= start:
                        out[record.offset] = record.value or b""
        return out

    def _removing(self, from_offset: int, how: Removal, change: Callable[[], _R]) -> _R:
        """Run ``change`` and ledger the records from the batch holding ``from_offset`` on that the
        log held before it and does not hold after it (below the new start or at the new end or
        beyond)."""
        if self._removing_depth:
            return change()
        before = self._records_from(from_offset)
        self._removing_depth += 1
        try:
            result = change()
        finally:
            self._removing_depth -= 1
        start, end = self.log_start_offset, self.log_end_offset
        for offset, value in before.items():
            if offset < start or offset >= end:
                self._ledger.setdefault(offset, []).append((value, how))
        return result

    def crash(self) -> None:
        # Read from the log start, not the recovery point: exact whatever the flushed end is.
        self._removing(self.log_start_offset, Removal.POWER_LOSS, super().crash)

    # The base class by name, not ``super(SimPartitionLog, self)``: compiled with mypyc (the long
    # sweeps), ``self`` in that lambda would be the lambda's own object.
    def truncate_to(self, offset: int) -> bool:
        return self._removing(
            min(offset, self.log_end_offset),
            Removal.TRUNCATION,
            lambda: MemoryPartitionLog.truncate_to(self, offset),
        )

    def truncate_fully_and_start_at(self, offset: int) -> None:
        self._removing(
            self.log_start_offset,
            Removal.TRUNCATION,
            lambda: MemoryPartitionLog.truncate_fully_and_start_at(self, offset),
        )

    def _advance_start(self, offset: int) -> None:
        self._removing(
            self.log_start_offset,
            Removal.LOG_START,
            lambda: MemoryPartitionLog._advance_start(self, offset),
        )

    def note_deleted(self) -> None:
        """The log is being deleted (its disk forgets it): every record it holds leaves it."""
        for offset, value in self._records_from(self.log_start_offset).items():
            self._ledger.setdefault(offset, []).append((value, Removal.DELETION))


class SimPartitionLogs:
    """One broker's partition logs (a ``LogProvider``): in memory, kept across its processes like the
    files of a log directory, with Kafka's high-watermark checkpoint file modelled (``checkpoint``
    records the high watermarks; a power loss brings each log back to its last flush and its high
    watermark back to the checkpointed one, as a restarted Kafka broker reads it). ``removed`` is the
    disk's ledger of every record that left a log, per partition, and how (``SimPartitionLog``); it
    outlives the logs."""

    def __init__(self) -> None:
        self.logs: dict[tuple[str, int], SimPartitionLog] = {}
        self.removed: dict[tuple[str, int], RemovalLedger] = {}
        self._checkpointed: dict[tuple[str, int], int] = {}
        self.power_losses = 0

    def get_or_create(self, topic: str, partition: int, topic_id: uuid.UUID) -> SimPartitionLog:
        key = (topic, partition)
        log = self.logs.get(key)
        if log is None:
            ledger = self.removed.setdefault(key, {})
            log = self.logs[key] = SimPartitionLog(topic, partition, topic_id, ledger)
        return log

    def delete(self, topic: str, partition: int) -> None:
        log = self.logs.pop((topic, partition), None)
        if log is not None:
            log.note_deleted()
        self._checkpointed.pop((topic, partition), None)

    def removals(self, topic: str, partition: int, offset: int, value: bytes) -> list[Removal]:
        """How each copy of the record (``value`` at ``offset``) this broker ever had left its log."""
        return [how for v, how in self.removed.get((topic, partition), {}).get(offset, ()) if v == value]

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
        topic_configs: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(world, timing, actor_id=DATA_CLIENT_ID)
        self.data_world = world
        self.partitions = partitions
        self.min_isr = min_isr
        # The topic's configs beyond min.insync.replicas (e.g. flush.messages), set at creation.
        self.topic_configs = dict(topic_configs or {})
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
        configs = {"min.insync.replicas": str(self.min_isr), **self.topic_configs}
        config = [
            cls.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in sorted(configs.items())
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
    """The controller and raft invariants, plus the data plane's (see the module docstring).

    Lost records, the rule: an acknowledged record (``value`` at ``offset`` of a partition) that a
    legitimate leader does not hold is excused, counted in ``acked_lost_to_power_loss`` and not
    reported, if and only if

    1. no broker's log holds ``value`` at ``offset`` now (the disks' ground truth, down brokers
       included);
    2. the brokers' disks ledgered at least one removal of that record, and every removal of it
       from any broker's log, each copy ever appended, was a power loss dropping the unflushed tail
       (``Removal.POWER_LOSS``); and
    3. when its acknowledgement arrived (or a consumer was first handed it), at least min ISR
       brokers had appended it (held it then, or had lost it by then): what the strict high
       watermark guarantees. Fewer means it was acknowledged on too few replicas, a bug however
       it was lost afterwards (``under_replicated``).

    ``SimPartitionLog`` ledgers every operation that removes records (power loss, truncation, a log
    start offset moved, deletion) with the values it removed, so 1 and 2 say exactly: every replica
    that ever appended the record lost every copy it had to power losses. Anything else (a replica
    still holding it, one copy truncated or deleted, an acknowledgement on too few replicas) is
    AckedRecordKept's violation. The same rule excuses OffsetsStable when an offset whose earlier
    record (acknowledged, or only read: then counted in ``read_lost_to_power_loss``) was lost that
    way is written again.
    """

    def __init__(self, world: World, *, deep_every: int = 4000) -> None:
        super().__init__(world, deep_every=deep_every)
        self.acked_by_partition: dict[int, dict[int, bytes]] = {}
        self.read_by_partition: dict[int, dict[int, bytes]] = {}
        self.acks_by_partition: dict[int, int] = {}  # acknowledged records, counted
        # (broker, incarnation, partition, leader epoch) -> acked offsets verified so far, in order.
        self._verified: dict[tuple[int, int, int, int], int] = {}
        self._sorted_acked: dict[int, list[int]] = {}
        self._hw_seen: dict[tuple[int, int, int, int], int] = {}
        # Acknowledged records a legitimate leader did not hold, reported as AckedRecordKept.
        self.lost_records = 0
        # Records every holder lost to power losses (see ``lost_only_to_power_loss``): counted, not
        # reported. Acknowledged ones, and ones a consumer read whose acknowledgement never came.
        self.acked_lost_to_power_loss: set[tuple[int, int, bytes]] = set()
        self.read_lost_to_power_loss: set[tuple[int, int, bytes]] = set()
        # Records acknowledged (or first handed to a consumer) while fewer than min ISR brokers had
        # appended them: a loss of one is never excused (the strict high watermark forbids it).
        self._replication_checked: set[tuple[int, int, bytes]] = set()
        self.under_replicated: set[tuple[int, int, bytes]] = set()
        self._decoded: dict[bytes, dict[int, bytes]] = {}  # batch bytes -> offset -> value
        # Partitions that ended without any eligible leader (excused from DataAvailable, counted).
        self.no_eligible_leader: set[int] = set()
        self._lost_seen: set[tuple[int, int, bytes]] = set()

    # -- lost records: power loss or code --------------------------------------------------------------

    def copies_removed(self, partition: int, offset: int, value: bytes) -> dict[int, list[Removal]]:
        """Per broker, how each copy of the record (``value`` at ``offset``) it ever held left its log:
        the simulated disks' ledgers (``SimPartitionLog``), the ground truth."""
        world = self.world
        assert isinstance(world, DataWorld)
        out: dict[int, list[Removal]] = {}
        for broker_id, logs in sorted(world.partition_logs.items()):
            hows = logs.removals(TOPIC, partition, offset, value)
            if hows:
                out[broker_id] = hows
        return out

    def lost_only_to_power_loss(self, partition: int, offset: int, value: bytes) -> bool:
        """The rule that excuses a lost record (the class docstring's 1, 2 and 3): not under-replicated
        when acknowledged or first read, held by no broker now, and every copy any broker ever held
        removed by a power loss (in the unflushed tail it dropped), at least one."""
        world = self.world
        assert isinstance(world, DataWorld)
        if (partition, offset, value) in self.under_replicated:
            return False
        if self._brokers_holding(world, partition, offset, value):
            return False
        removed = self.copies_removed(partition, offset, value)
        return bool(removed) and all(how is Removal.POWER_LOSS for hows in removed.values() for how in hows)

    def _check_replication(self, partition: int, offset: int, value: bytes) -> None:
        """When a record is acknowledged or first read: how many brokers have appended it (hold it
        now, or lost it since); under min ISR, a later loss of it is never excused."""
        key = (partition, offset, value)
        if key in self._replication_checked:
            return
        self._replication_checked.add(key)
        world = self.world
        assert isinstance(world, DataWorld)
        copies = set(self._brokers_holding(world, partition, offset, value))
        copies |= set(self.copies_removed(partition, offset, value))
        if len(copies) < min(world.client.min_isr, 3):  # effective min ISR: RF 3
            self.under_replicated.add(key)

    def _was_acked(self, partition: int, offset: int, value: bytes) -> bool:
        return (
            self.acked_by_partition.get(partition, {}).get(offset) == value
            or (partition, offset, value) in self.acked_lost_to_power_loss
        )

    def _excused(self, partition: int, offset: int, value: bytes) -> bool:
        """Whether ``value`` at ``offset``, acknowledged or read, then not held or overwritten, was lost
        only to power losses; counted if so."""
        if not self.lost_only_to_power_loss(partition, offset, value):
            return False
        if self._was_acked(partition, offset, value):
            self.acked_lost_to_power_loss.add((partition, offset, value))
        else:
            self.read_lost_to_power_loss.add((partition, offset, value))
        return True

    def _describe_loss(self, partition: int, offset: int, value: bytes, holders: list[int]) -> str:
        if holders:
            return f"still in the log of broker(s) {holders}"
        if (partition, offset, value) in self.under_replicated:
            return "gone; it was acknowledged (or read) while fewer than min ISR brokers had it"
        removed = self.copies_removed(partition, offset, value)
        if not removed:
            return "in no replica's log, and no log ever lost it"
        hows = "; ".join(f"broker {b}: {', '.join(h.value for h in hs)}" for b, hs in removed.items())
        return f"in no replica's log any more (every copy lost: {hows}), not only to power losses"

    # -- what the client reports -------------------------------------------------------------------

    def acked(self, partition: int, base_offset: int, values: list[bytes]) -> None:
        acked = self.acked_by_partition.setdefault(partition, {})
        order = self._sorted_acked.setdefault(partition, [])
        self.acks_by_partition[partition] = self.acks_by_partition.get(partition, 0) + len(values)
        for i, value in enumerate(values):
            offset = base_offset + i
            before = acked.get(offset)
            # An offset written again is OffsetsStable's violation, unless the record it held before was
            # lost only to power losses (then every replica lost it, and the log went on from there).
            if before is not None and before != value and not self._excused(partition, offset, before):
                self.world.report(
                    "OffsetsStable",
                    f"partition {partition} offset {offset} acknowledged twice: {before!r}, {value!r}",
                )
            read = self.read_by_partition.get(partition, {}).get(offset)
            if read is not None and read != value and not self._excused(partition, offset, read):
                self.world.report(
                    "OffsetsStable",
                    f"partition {partition} offset {offset} acknowledged {value!r}, read {read!r}",
                )
            acked[offset] = value
            self._check_replication(partition, offset, value)
            if before is not None:
                # Acknowledged again (after an excused loss): every leader checks it from here again.
                position = bisect.bisect_left(order, offset)
                for key, done in self._verified.items():
                    if key[2] == partition and done > position:
                        self._verified[key] = position
            elif not order or offset > order[-1]:
                order.append(offset)
            else:
                bisect.insort(order, offset)

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
                if read.get(o) != value:
                    self._check_replication(partition, o, value)
                if read.get(o, value) != value and not self._excused(partition, o, read[o]):
                    self.world.report(
                        "OffsetsStable", f"partition {partition} offset {o} read as {read[o]!r} and {value!r}"
                    )
                if acked.get(o, value) != value and not self._excused(partition, o, acked[o]):
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
            value = acked[offset]
            if held.get(offset) == value or (index, offset, value) in self._lost_seen:
                continue
            self._lost_seen.add((index, offset, value))
            if self._excused(index, offset, value):
                continue
            self.lost_records += 1
            holders = self._brokers_holding(world, index, offset, value)
            world.report(
                "AckedRecordKept",
                f"broker {node.node_id} leads partition {index} in epoch {key[3]} without acknowledged "
                f"offset {offset} ({value!r}); it holds {held.get(offset)!r}, log end {end}; the record is "
                f"{self._describe_loss(index, offset, value, holders)}",
            )
        self._verified[key] = len(order)

    def _brokers_holding(self, world: DataWorld, index: int, offset: int, value: bytes) -> list[int]:
        """The brokers whose log (the ground truth, as on their disks now) holds ``value`` at
        ``offset`` of partition ``index``: a loss with a holder left was caused by an election (or
        whatever chose a leader without the record), never excused."""
        out = []
        for broker_id, logs in sorted(world.partition_logs.items()):
            log = logs.logs.get((TOPIC, index))
            if log is None or not log.log_start_offset <= offset < log.log_end_offset:
                continue
            if self._value_at(log.read(offset, 1, max_offset=log.log_end_offset), offset) == value:
                out.append(broker_id)
        return out

    def _value_at(self, data: bytes, offset: int) -> bytes | None:
        """The value of the record at ``offset`` in the first batch of ``data`` (None if none).
        Decoded batches are kept by their bytes (a few): replicas hold the leader's bytes, and one
        acknowledgement asks about the records of one batch."""
        header = read_batch_header(data) if data else None
        if header is None or header.is_control or not header.base_offset <= offset <= header.last_offset:
            return None
        raw = data[: header.size_in_bytes]
        values = self._decoded.get(raw)
        if values is None:
            if len(self._decoded) >= 64:
                self._decoded.clear()
            batch = next(iter_batches(raw, verify_crc=False))
            values = self._decoded[raw] = {r.offset: r.value or b"" for r in batch.records}
        return values.get(offset)

    # -- liveness ---------------------------------------------------------------------------------------

    def expect_data_progress(self, label: str, within_ms: int) -> None:
        """Within ``within_ms`` every partition has a leader and the producer has an acknowledgement
        for each partition (writes work again after the faults healed)."""
        world = self.world
        assert isinstance(world, DataWorld)
        since = world.now_ms
        # Counted, not the highest offset: after records lost to power losses offsets are reused.
        baseline = dict(self.acks_by_partition)
        world.end_ms = max(world.end_ms, since + within_ms)

        def check() -> None:
            stuck = [
                p for p in range(world.partitions) if self.acks_by_partition.get(p, 0) <= baseline.get(p, 0)
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
            "acked_lost_to_power_loss": len(self.acked_lost_to_power_loss),
            "acked_lost_to_power_loss_partitions": sorted({p for p, _, _ in self.acked_lost_to_power_loss}),
            "read_lost_to_power_loss": len(self.read_lost_to_power_loss),
            "longest_unavailable_ms": client.dstats.longest_unavailable_ms,
            "power_losses": sum(logs.power_losses for logs in world.partition_logs.values()),
            "no_eligible_leader": sorted(self.no_eligible_leader),
        }


class DataWorld(ControllerWorld):
    """Three controllers, three brokers with partition storage, and the data client.

    Options beyond ``ControllerWorld``'s: ``partitions`` of the topic (replication factor 3),
    ``min_isr``, ``elr`` (``eligible.leader.replicas.version`` 1 or 0), ``produce_until_ms`` (the
    producer stops then, so that the end of a run checks a quiet cluster), ``topic_configs`` (more
    configs of the topic, e.g. ``{"flush.messages": "1"}``: every replica fsyncs each append).
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
        topic_configs: Mapping[str, str] | None = None,
        # ControllerWorld's, passed on one by one: mypyc (the compiled sweeps) binds a
        # ``super().__init__(..., **options)`` to the wrong parameters ("int object expected; got
        # dict"), so no compiled data sweep could run.
        voters: int | Sequence[int] = 3,
        observers: int = 0,
        brokers: int | tuple[int, int] = 3,
        broker_ids: Sequence[int] | None = None,
        combined: Sequence[int] = (),
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
        self.partitions = partitions
        self.replica_config = replica_config
        self.partition_logs: dict[int, SimPartitionLogs] = {}
        features = dict(bootstrap_features or {})
        features[ELR_VERSION] = 1 if elr else 0
        super().__init__(
            seed=seed,
            voters=voters,
            observers=observers,
            brokers=brokers,
            broker_ids=broker_ids,
            combined=combined,
            workload=False,
            timing=timing,
            pre_vote=pre_vote,
            end_ms=end_ms,
            config=config,
            bootstrap_features=features,
            client_timing=client_timing,
            broker_snapshot_max_bytes=broker_snapshot_max_bytes,
            link=link,
            stop_on_violation=stop_on_violation,
            full_checks=full_checks,
            deep_every=deep_every,
        )
        for broker_id in self.brokers:
            self.partition_logs[broker_id] = SimPartitionLogs()
        # A ControllerChecker was built by the parent: replace it by the data one (nothing ran yet).
        self.controller_checker = DataChecker(self, deep_every=self.controller_checker.deep_every)
        self.checker = self.controller_checker
        self.data_checker = self.controller_checker
        until = produce_until_ms if produce_until_ms is not None else self.end_ms - 3_000
        self.client = DataClient(
            self,
            self.client_timing,
            partitions=partitions,
            min_isr=min_isr,
            produce_until_ms=until,
            topic_configs=topic_configs,
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
