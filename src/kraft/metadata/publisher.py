"""Committed metadata reaches a node's parts as ``publish(delta, image)`` (Kafka's ``MetadataPublisher``).

A ``MetadataLoader`` (``kraft.metadata.image``) calls every installed publisher once per published
image, in offset order, with the delta that made it: a publisher that must act on what changed (a
broker becoming leader or follower of a partition, a purgatory waiting for a topic to appear) reads
the delta instead of scanning the whole image. ``local_changes`` derives from a delta what it means
for one broker (Kafka's ``TopicsDelta.localChanges``).

Rules for publishers: ``publish`` runs where the core runs (inside ``poll``), must not block, and
must not keep the delta (it belongs to the loader); the image is immutable and may be kept. A
publisher installed late sees only later images: whoever installs it hands it the current image
first (``publish`` with an empty delta on that image).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from kraft.metadata.image import MetadataDelta, MetadataImage, TopicIdPartition
from kraft.metadata.partition import PartitionRegistration


class MetadataPublisher(Protocol):
    def publish(self, delta: MetadataDelta, image: MetadataImage) -> None:
        """Take the newly published ``image``, made from the previous one by ``delta``."""
        ...


@dataclass(frozen=True, slots=True)
class LocalReplicaChanges:
    """What a delta changes for the replicas one broker hosts (each map ordered by partition).

    Attributes:
        leaders: partitions changed in the delta that the broker now leads.
        followers: partitions changed in the delta that the broker hosts and does not lead.
        deletes: partitions the broker hosted before and no longer hosts (topic deleted, or the
            broker reassigned away), with the topic's name (a partition directory is named by it).
    """

    leaders: Mapping[TopicIdPartition, PartitionRegistration]
    followers: Mapping[TopicIdPartition, PartitionRegistration]
    deletes: Mapping[TopicIdPartition, str]

    @property
    def empty(self) -> bool:
        return not (self.leaders or self.followers or self.deletes)


def local_changes(delta: MetadataDelta, broker_id: int) -> LocalReplicaChanges:
    """The leaders, followers and deletions ``delta`` brings to ``broker_id``.

    A snapshot load (``delta.replaced`` set) counts every partition of the snapshot as changed and
    deletes whatever the replaced image hosted here that the snapshot no longer does.
    """
    leaders: dict[TopicIdPartition, PartitionRegistration] = {}
    followers: dict[TopicIdPartition, PartitionRegistration] = {}
    deletes: dict[TopicIdPartition, str] = {}
    previous = delta.previous
    for topic in delta.deleted_topics():
        for partition_id, p in sorted(topic.partitions.items()):
            if broker_id in p.replicas:
                deletes[TopicIdPartition(topic.id, partition_id)] = topic.name
    for tp, name, p in delta.changed_partitions():
        if p.leader == broker_id:
            leaders[tp] = p
        elif broker_id in p.replicas:
            followers[tp] = p
        else:
            before = previous.partition(tp.topic_id, tp.partition_id)
            if before is not None and broker_id in before.replicas:
                deletes[tp] = name
    if delta.replaced is not None:
        # Partitions of surviving topics the snapshot no longer assigns here.
        for topic in delta.replaced.topics_by_id.values():
            for partition_id, p in topic.partitions.items():
                tp = TopicIdPartition(topic.id, partition_id)
                if broker_id in p.replicas and tp not in leaders and tp not in followers:
                    deletes.setdefault(tp, topic.name)
    return LocalReplicaChanges(leaders, followers, dict(sorted(deletes.items())))
