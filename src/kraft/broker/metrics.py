"""Broker metrics, computed from the broker's own state and image (Kafka's names in comments).

Gauges that depend on the image (partitions led and hosted, under/at min ISR) are counted once
and then moved by each published delta's partitions (``publish``): a scan of 100,000 partitions
costs tens of milliseconds, and a controlled shutdown publishes a delta every few (the scan after
each was 2-3 % of the brokers' CPU in one). A config change, a snapshot or an image the counts did
not follow is counted afresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kraft.metadata.configs import ConfigResolver

if TYPE_CHECKING:
    from kraft.broker.broker import Broker
    from kraft.metadata.image import MetadataDelta, MetadataImage
    from kraft.metadata.partition import PartitionRegistration

# Our field -> (Kafka MBean type, name); exported as kafka_server_<type>_<name>, lower case.
PROMETHEUS_NAMES: Mapping[str, tuple[str, str]] = {
    "broker_state": ("KafkaServer", "BrokerState"),
    "fenced": ("KafkaServer", "Fenced"),  # kraft: 1 while the controller has this broker fenced
    "broker_epoch": ("KafkaServer", "BrokerEpoch"),  # kraft: the current registration's epoch
    "registrations": ("KafkaServer", "Registrations"),  # kraft: successful (re-)registrations
    "last_applied_offset": ("broker-metadata-metrics", "last-applied-record-offset"),
    "last_applied_timestamp_ms": ("broker-metadata-metrics", "last-applied-record-timestamp"),
    "metadata_apply_errors": ("broker-metadata-metrics", "metadata-apply-error-count"),
    "snapshots_written": ("broker-metadata-metrics", "snapshots-written"),  # kraft
    "snapshots_loaded": ("broker-metadata-metrics", "snapshots-loaded"),  # kraft
    "leader_count": ("ReplicaManager", "LeaderCount"),
    "partition_count": ("ReplicaManager", "PartitionCount"),
    "under_min_isr_partitions": ("ReplicaManager", "UnderMinIsrPartitionCount"),
    "at_min_isr_partitions": ("ReplicaManager", "AtMinIsrPartitionCount"),
    "isr_expands": ("ReplicaManager", "IsrExpandsPerSec"),  # a counter: take rate()
    "alter_partition_requests": ("ReplicaManager", "AlterPartitionRequests"),  # kraft
    "fetch_sessions": ("FetchSessionCache", "NumIncrementalFetchSessions"),
    "fetch_session_partitions": ("FetchSessionCache", "NumIncrementalFetchPartitionsCached"),
    "fetch_session_evictions": ("FetchSessionCache", "IncrementalFetchSessionEvictionsPerSec"),  # a counter
}


@dataclass(slots=True)
class BrokerMetrics:
    resolver: ConfigResolver
    node_id: int = -1  # whose partitions the gauges count (set by the first count)
    _counted: MetadataImage | None = None  # the image the counts below are of (None: none yet)
    # [led, hosted, under min ISR, at min ISR]
    _counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    _min_isrs: dict[str, int] = field(default_factory=dict)  # by topic, for the counted image

    def collect(self, node: Broker) -> dict[str, float]:
        lifecycle = node.lifecycle
        image = node.image
        out: dict[str, float] = {
            "broker_state": float(lifecycle.state),
            "fenced": float(lifecycle.is_fenced),
            "broker_epoch": float(lifecycle.broker_epoch),
            "registrations": float(lifecycle.registrations),
            "last_applied_offset": float(image.provenance.last_offset),
            "last_applied_timestamp_ms": float(image.provenance.last_append_ms),
            "isr_expands": float(node.isr.partitions_expanded),
            "alter_partition_requests": float(node.isr.requests_sent),
        }
        if node.replicas is not None:
            sessions = node.replicas.fetch_sessions
            out["fetch_sessions"] = float(len(sessions))
            out["fetch_session_partitions"] = float(sessions.num_partitions)
            out["fetch_session_evictions"] = float(sessions.evictions)
        listener = node.metadata
        if listener is not None:
            out["metadata_apply_errors"] = float(listener.metadata_errors)
            out["snapshots_written"] = float(listener.snapshots_written)
            out["snapshots_loaded"] = float(listener.snapshots_loaded)
        if self._counted is not image:
            self._count(image, node.node_id)
        led, hosted, under, at = self._counts
        out["leader_count"] = float(led)
        out["partition_count"] = float(hosted)
        out["under_min_isr_partitions"] = float(under)
        out["at_min_isr_partitions"] = float(at)
        return out

    def publish(self, delta: MetadataDelta, image: MetadataImage) -> None:
        """Move the counts by the partitions ``delta`` changed, when they are of its previous image
        and the configs (min.insync.replicas) stayed; else the next ``collect`` counts afresh."""
        previous = delta.previous
        if self._counted is not previous or delta.replaced is not None:
            return
        if image.configs is not previous.configs:
            self._counted = None
            return
        counts = self._counts
        for topic in delta.deleted_topics():  # (a deleted topic's changes left the delta with it)
            for p in topic.partitions.values():
                self._add(counts, previous, topic.name, p, -1)
        for tp, name, p in delta.changed_partitions():
            old = previous.partition(tp.topic_id, tp.partition_id)
            if old is not None:
                self._add(counts, previous, name, old, -1)
            self._add(counts, image, name, p, 1)
        self._counted = image

    def _count(self, image: MetadataImage, node_id: int) -> None:
        self.node_id = node_id
        self._min_isrs = {}
        self._counts = counts = [0, 0, 0, 0]
        for topic, _pid, p in image.iter_partitions():
            self._add(counts, image, topic.name, p, 1)
        self._counted = image

    def _add(
        self, counts: list[int], image: MetadataImage, topic: str, p: PartitionRegistration, sign: int
    ) -> None:
        me = self.node_id
        if me in p.replicas:
            counts[1] += sign
        if p.leader != me:
            return
        counts[0] += sign
        m = self._min_isrs.get(topic)
        if m is None:
            # Kafka's Partition.isUnderMinIsr compares with the configured value, uncapped by RF.
            m = self._min_isrs[topic] = self.resolver.topic_min_isr(image, topic)
        if len(p.isr) < m:
            counts[2] += sign
        elif len(p.isr) == m:
            counts[3] += sign
