"""A partition leader's ISR requests to the controller (Kafka's ``AlterPartitionManager``).

With the data plane (a ``ReplicaManager`` given as ``replicas``), the ISR a leader asks for comes
from its followers' fetches (``ReplicaManager.isr_proposals``: shrink by ``replica.lag.time.max.ms``,
expand when caught up), and a proposal is *pending* (it counts for the high watermark, as Kafka's
maximal ISR) from when it is sent until the controller's answer or the metadata settles it.
A broker built without partition storage (the simulator's controller worlds) keeps the rule below.

Without the data plane:

Kafka's partition leader adds a follower to the ISR once it has fetched up to the high watermark,
removes one that fell behind for ``replica.lag.time.max.ms``, and reports a partition recovered
(LeaderRecoveryState RECOVERING -> RECOVERED) once an unclean leader has settled its log; all go to
the controller as AlterPartition. This broker stores no partition data yet, so a follower's
progress is what it is told: ``set_out_of_sync`` marks a follower out of sync until a time (the
simulator's fault driver does it today; the data plane's replica manager will, from fetch
positions). Every other replica whose broker is active (registered, unfenced, not in controlled
shutdown) holds every committed record, which is none. So, as the leader of a partition in its
image, it asks for exactly Kafka's end state:

* a RECOVERING partition is reported RECOVERED (with its current ISR, as spec 4.5 requires);
* followers out of sync leave the ISR (the leader never removes itself);
* active replicas missing from the ISR and not out of sync are added (AlterPartition v3 names each
  member's broker epoch, so the controller refuses a member that re-registered meanwhile:
  INELIGIBLE_REPLICA).

The controller removes fenced and shutting-down brokers itself. Sans-IO: ``poll`` returns the
request to send, ``handle_response`` takes the answer. One AlterPartition is in flight at a time; a
partition is not asked for again until its partition epoch moves past the one asked about, the
request failed, or a follower's sync state changed.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kraft.broker.partition import Partition
from kraft.metadata.image import MetadataDelta, MetadataImage, TopicIdPartition
from kraft.metadata.partition import LeaderRecoveryState, PartitionRegistration
from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import alter_partition

if TYPE_CHECKING:
    from kraft.broker.replica_manager import ReplicaManager

log = logging.getLogger("kraft.broker.isr")

ALTER_PARTITION_VERSION = 3
# Partitions per AlterPartition (Kafka batches whatever is pending; keep a request well-sized).
MAX_PARTITIONS_PER_REQUEST = 1000


class IsrManager:
    """A ``MetadataPublisher``: it reads the image it was last published; ``poll`` sends."""

    def __init__(
        self,
        node_id: int,
        *,
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        next_correlation_id: Callable[[], int] | None = None,
        replicas: ReplicaManager | None = None,
    ) -> None:
        self.node_id = node_id
        self.replicas = replicas
        self._pending: list[Partition] = []  # partitions whose proposal is in flight
        self._next_correlation_id = next_correlation_id or itertools.count(1).__next__
        self._image = MetadataImage.EMPTY
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.requests_sent = 0
        self.partitions_expanded = 0
        self.partitions_recovered = 0
        # Partitions this broker leads that are RECOVERING (an unclean leader's), kept from each
        # delta: finding them in the image took an index of every partition at each publish.
        self._recovering: dict[tuple[uuid.UUID, int], None] = {}
        # (topic id, partition) -> partition epoch we asked about; not asked again until it moves.
        self._asked: dict[tuple[uuid.UUID, int], int] = {}
        self._in_flight: tuple[int, int] | None = None  # (correlation id, deadline)
        self._not_before_ms = 0
        self._seen: tuple[object, object] = (None, None)  # (brokers, topics) of the last scan
        self._dirty = True
        # (topic id, partition) -> follower -> until when it is out of sync.
        self._out_of_sync: dict[tuple[uuid.UUID, int], dict[int, int]] = {}
        self.partitions_shrunk = 0

    def publish(self, delta: MetadataDelta, image: MetadataImage) -> None:
        self._image = image
        recovering = self._recovering
        if delta.replaced is not None:
            recovering.clear()  # every partition of the snapshot comes as changed below
        for topic in delta.deleted_topics():
            for partition_id in topic.partitions:
                recovering.pop((topic.id, partition_id), None)
        for tp, _, p in delta.changed_partitions():
            key = (tp.topic_id, tp.partition_id)
            if p.leader == self.node_id and p.leader_recovery_state == LeaderRecoveryState.RECOVERING:
                recovering[key] = None
            else:
                recovering.pop(key, None)

    def set_out_of_sync(self, topic_id: uuid.UUID, partition_id: int, replica: int, until_ms: int) -> None:
        """``replica`` of a partition this broker leads is out of sync until ``until_ms``: it leaves
        the ISR, and may come back after that time."""
        if replica == self.node_id:
            return
        key = (topic_id, partition_id)
        self._out_of_sync.setdefault(key, {})[replica] = until_ms
        self._asked.pop(key, None)
        self._dirty = True

    def _expire_out_of_sync(self, now_ms: int) -> int | None:
        """Forget follower lags that ended; returns when the next one ends."""
        next_ms: int | None = None
        for key in list(self._out_of_sync):
            lagging = self._out_of_sync[key]
            for replica, until_ms in list(lagging.items()):
                if until_ms <= now_ms:
                    del lagging[replica]
                    self._asked.pop(key, None)
                    self._dirty = True
                elif next_ms is None or until_ms < next_ms:
                    next_ms = until_ms
            if not lagging:
                del self._out_of_sync[key]
        return next_ms

    def poll(
        self, now_ms: int, broker_epoch: int, controller_id: int | None, running: bool
    ) -> tuple[list[ControllerEnvelope], int | None]:
        """The AlterPartition due now, if any, and when to poll again."""
        image = self._image
        if self._in_flight is not None:
            if now_ms < self._in_flight[1]:
                return [], self._in_flight[1]
            self._in_flight = None
            self._asked.clear()
            self._dirty = True
            self._clear_pending()
        lag_ends_ms = self._expire_out_of_sync(now_ms) if self._out_of_sync else None
        if not running or controller_id is None or broker_epoch < 0:
            return [], lag_ends_ms
        if now_ms < self._not_before_ms:
            return [], self._not_before_ms
        if self.replicas is not None:
            changes = self._data_plane_changes(image, now_ms)
        else:
            brokers, topics = image.brokers, image.topics_by_id
            if not self._dirty and self._seen[0] is brokers and self._seen[1] is topics:
                return [], lag_ends_ms  # nothing that decides ISR membership changed since the last scan
            self._seen, self._dirty = (brokers, topics), False
            changes = self._changes(image)
        if not changes:
            return [], lag_ends_ms
        body = self._request(image, broker_epoch, changes)
        correlation_id = self._next_correlation_id()
        deadline = now_ms + self.request_timeout_ms
        self._in_flight = (correlation_id, deadline)
        self.requests_sent += 1
        if self.replicas is not None:
            self._mark_pending(changes)
        request = ApiRequest(alter_partition.API, ALTER_PARTITION_VERSION, body)
        return [ControllerEnvelope(self.node_id, controller_id, correlation_id, request)], deadline

    def handle_response(self, envelope: ControllerEnvelope, now_ms: int) -> bool:
        """Take the answer if it is ours (returns whether it was)."""
        body = envelope.body
        if (
            not isinstance(body, ApiResponse)
            or body.api is not alter_partition.API
            or self._in_flight is None
            or envelope.correlation_id != self._in_flight[0]
        ):
            return False
        self._in_flight = None
        self._clear_pending()
        response: Any = body.body
        top = ErrorCode.UNKNOWN_SERVER_ERROR if response is None else int(response.error_code)
        if top != ErrorCode.NONE:
            # NOT_CONTROLLER, STALE_BROKER_EPOCH, a lost connection: ask again after a backoff.
            # (A lost connection is an answer without a body: say so rather than name an error
            # code the controller never sent.)
            why = "no answer (the connection to the controller was lost)" if response is None else _name(top)
            log.info("broker %d: AlterPartition failed: %s", self.node_id, why)
            self._asked.clear()
            self._not_before_ms = now_ms + self.retry_backoff_ms
        else:
            for topic in response.topics:
                for p in topic.partitions:
                    if p.error_code != ErrorCode.NONE:
                        # Refused (a member re-registered, a stale epoch): re-decided from the image.
                        self._asked.pop((topic.topic_id, p.partition_index), None)
        self._dirty = True
        return True

    # -- internals ---------------------------------------------------------------------------------

    def _data_plane_changes(
        self, image: MetadataImage, now_ms: int
    ) -> list[tuple[uuid.UUID, int, PartitionRegistration, tuple[int, ...], int]]:
        assert self.replicas is not None
        out = []
        for partition, isr in self.replicas.isr_proposals(now_ms):
            p = image.partition(partition.topic_id, partition.index)
            if p is None or p.leader != self.node_id or p.partition_epoch != partition.partition_epoch:
                continue
            key = (partition.topic_id, partition.index)
            if self._asked.get(key, -1) >= p.partition_epoch:
                continue
            lrs = int(p.leader_recovery_state)
            if p.leader_recovery_state == LeaderRecoveryState.RECOVERING:
                isr, lrs = p.isr, int(LeaderRecoveryState.RECOVERED)
            out.append((partition.topic_id, partition.index, p, isr, lrs))
            self._asked[key] = p.partition_epoch
            if len(out) >= MAX_PARTITIONS_PER_REQUEST:
                break
        # Led partitions still RECOVERING, in the image's order (topic name, partition).
        recovering = list(self._recovering)
        if len(recovering) > 1:
            topics = image.topics_by_id
            recovering.sort(key=lambda k: (topics[k[0]].name, k[1]) if k[0] in topics else ("", k[1]))
        for key in recovering:
            # An unclean leader's log is settled as soon as it leads (it keeps its log as it is).
            if len(out) >= MAX_PARTITIONS_PER_REQUEST:
                break
            p = image.partition(key[0], key[1])
            if p is None or self._asked.get(key, -1) >= p.partition_epoch:
                continue
            out.append((key[0], key[1], p, p.isr, int(LeaderRecoveryState.RECOVERED)))
            self._asked[key] = p.partition_epoch
        return out

    def _mark_pending(
        self, changes: list[tuple[uuid.UUID, int, PartitionRegistration, tuple[int, ...], int]]
    ) -> None:
        assert self.replicas is not None
        for topic_id, index, _, isr, _ in changes:
            partition = self.replicas.partitions.get(TopicIdPartition(topic_id, index))
            if partition is not None:
                partition.pending_isr = isr
                self._pending.append(partition)

    def _clear_pending(self) -> None:
        """The request was answered or lost: the ISR is what the metadata says again."""
        for partition in self._pending:
            partition.pending_isr = None
        if self.replicas is not None and self._pending:
            self.replicas.isr_recheck(self._pending)
        self._pending = []

    def _changes(
        self, image: MetadataImage
    ) -> list[tuple[uuid.UUID, int, PartitionRegistration, tuple[int, ...], int]]:
        out = []
        for tp in image.partitions_led_by(self.node_id):
            p = image.partition(tp.topic_id, tp.partition_id)
            if p is None or p.leader != self.node_id:
                continue
            key = (tp.topic_id, tp.partition_id)
            if self._asked.get(key, -1) >= p.partition_epoch:
                continue
            lagging = self._out_of_sync.get(key, {})
            if p.leader_recovery_state == LeaderRecoveryState.RECOVERING:
                isr, lrs = p.isr, int(LeaderRecoveryState.RECOVERED)  # first recovered, alone
            else:
                kept = tuple(r for r in p.isr if r == self.node_id or r not in lagging)
                added = tuple(
                    r
                    for r in p.replicas
                    if r not in p.isr
                    and r not in lagging
                    and (b := image.brokers.get(r)) is not None
                    and b.is_active
                )
                if not added and kept == p.isr:
                    continue
                isr, lrs = kept + added, int(p.leader_recovery_state)
            out.append((tp.topic_id, tp.partition_id, p, isr, lrs))
            self._asked[key] = p.partition_epoch
            if len(out) >= MAX_PARTITIONS_PER_REQUEST:
                break
        return out

    def _request(
        self,
        image: MetadataImage,
        broker_epoch: int,
        changes: list[tuple[uuid.UUID, int, PartitionRegistration, tuple[int, ...], int]],
    ) -> Any:
        cls: Any = alter_partition.REQUEST.cls
        by_topic: dict[uuid.UUID, list[Any]] = {}
        for topic_id, partition_id, p, isr, lrs in changes:
            if lrs != p.leader_recovery_state:
                self.partitions_recovered += 1
            elif len(isr) < len(p.isr) or not set(p.isr) <= set(isr):
                self.partitions_shrunk += 1
            else:
                self.partitions_expanded += 1
            by_topic.setdefault(topic_id, []).append(
                cls.TopicData.PartitionData(
                    partition_index=partition_id,
                    leader_epoch=p.leader_epoch,
                    new_isr_with_epochs=[
                        cls.TopicData.PartitionData.BrokerState(
                            broker_id=r, broker_epoch=image.brokers[r].epoch if r in image.brokers else -1
                        )
                        for r in isr
                    ],
                    leader_recovery_state=lrs,
                    partition_epoch=p.partition_epoch,
                )
            )
        return cls(
            broker_id=self.node_id,
            broker_epoch=broker_epoch,
            topics=[cls.TopicData(topic_id=t, partitions=ps) for t, ps in by_topic.items()],
        )


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error code {code}"
