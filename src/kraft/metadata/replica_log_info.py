"""What a replica's log holds, as a broker reports it for unclean recovery (KIP-966 part 2).

Unclean recovery elects the replica with the most complete log for a partition that waits
leaderless with nobody eligible. The broker knows its logs, the active controller decides, and in
KRaft only the broker talks to the controller; so each heartbeat carries a ``ReplicaLogInfo`` per
partition the broker hosts that ``awaits_recovery`` in its image (kraft's tagged field 10000 of
BrokerHeartbeat, ``kraft.protocol.messages.broker_heartbeat``). This module is what both sides share:
the value, the rule saying which partitions are reported, the order of completeness, and the wire
conversion. It decides nothing (``kraft.controller.unclean_recovery`` does).

Invariant: ``completeness`` orders logs as the leader-epoch lineage does (KIP-101): the last written
leader epoch first, then the log end offset. A log whose last batch has a higher epoch saw a later
leadership; within one epoch the longer log holds more of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kraft.metadata.image import MetadataImage, TopicIdPartition
from kraft.metadata.partition import NO_LEADER, PartitionRegistration
from kraft.protocol.messages import broker_heartbeat

if TYPE_CHECKING:
    from kraft.protocol.messages.broker_heartbeat import BrokerHeartbeatRequest

NO_EPOCH = -1  # an empty log has no last written epoch


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaLogInfo:
    """One replica's log of one partition, as its broker saw it.

    Attributes:
        partition_epoch: the partition epoch of the broker's image when it looked; the controller
            uses a report only while the partition is still at that epoch.
        last_epoch: the leader epoch of the log's last batch (``NO_EPOCH`` for an empty log).
        log_end_offset: the offset the next appended record would get.
    """

    topic_id: uuid.UUID
    partition: int
    partition_epoch: int
    last_epoch: int
    log_end_offset: int

    @property
    def tp(self) -> TopicIdPartition:
        return TopicIdPartition(self.topic_id, self.partition)

    @property
    def completeness(self) -> tuple[int, int]:
        """The order of "more complete" (see the module invariant)."""
        return (self.last_epoch, self.log_end_offset)


class _EpochEntry(Protocol):
    @property
    def epoch(self) -> int: ...
    @property
    def start_offset(self) -> int: ...


def last_written_epoch(entries: Sequence[_EpochEntry], log_end_offset: int) -> int:
    """The leader epoch of the last batch of a log, from its leader-epoch cache.

    A leader records its epoch at its log end when it takes over, before it appends anything; such
    an entry names no batch (its start offset is the log end), so it is skipped: an epoch nothing
    was written in says nothing about what the log holds.
    """
    for entry in reversed(entries):
        if entry.start_offset < log_end_offset:
            return entry.epoch
    return NO_EPOCH


def awaits_recovery(p: PartitionRegistration, image: MetadataImage) -> bool:
    """Leaderless with no active broker in its ISR or ELR: the partitions a broker reports.

    That is the state where only an unclean election can give the partition a leader: usually
    ISR and ELR both empty (every replica that held the committed records restarted uncleanly),
    or, for the Aggressive strategy, ELR members that are all fenced.
    """
    if p.leader != NO_LEADER:
        return False
    brokers = image.brokers
    for r in (*p.isr, *p.elr):
        b = brokers.get(r)
        if b is not None and b.is_active:
            return False
    return True


def to_heartbeat(infos: Iterable[ReplicaLogInfo]) -> list[Any]:
    """The ``ReplicaLogInfo`` field of a BrokerHeartbeatRequest: one entry per topic, in order."""
    cls: Any = broker_heartbeat.REQUEST.cls
    by_topic: dict[uuid.UUID, list[Any]] = {}
    for info in sorted(infos, key=lambda i: (str(i.topic_id), i.partition)):
        by_topic.setdefault(info.topic_id, []).append(
            cls.TopicLogInfo.PartitionLogInfo(
                partition_index=info.partition,
                partition_epoch=info.partition_epoch,
                last_written_leader_epoch=info.last_epoch,
                log_end_offset=info.log_end_offset,
            )
        )
    return [cls.TopicLogInfo(topic_id=t, partitions=parts) for t, parts in by_topic.items()]


def from_heartbeat(request: BrokerHeartbeatRequest) -> list[ReplicaLogInfo]:
    """The reports a heartbeat carries (none from a Kafka broker or an older kraft one)."""
    return [
        ReplicaLogInfo(
            topic_id=t.topic_id,
            partition=p.partition_index,
            partition_epoch=p.partition_epoch,
            last_epoch=p.last_written_leader_epoch,
            log_end_offset=p.log_end_offset,
        )
        for t in getattr(request, "replica_log_info", ())
        for p in t.partitions
    ]
