"""Broker metrics, computed from the broker's own state and image (Kafka's names in comments).

Gauges that depend on the image (partitions led, under/at min ISR) are recomputed only when the
image's topics or brokers change, not on every poll: with 100,000 partitions a scan costs
milliseconds, and most batches (NoOps) change neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kraft.metadata.configs import ConfigResolver

if TYPE_CHECKING:
    from kraft.broker.broker import Broker

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
    _seen: tuple[object, object] = (None, None)
    _partition_gauges: dict[str, float] = field(default_factory=dict)

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
        if self._seen[0] is not image.topics_by_id or self._seen[1] is not image.configs:
            self._seen = (image.topics_by_id, image.configs)
            self._partition_gauges = self._partitions(node)
        out.update(self._partition_gauges)
        return out

    def _partitions(self, node: Broker) -> dict[str, float]:
        image = node.image
        me = node.node_id
        led = under = at = hosted = 0
        min_isr_by_topic: dict[str, int] = {}
        for topic, _pid, p in image.iter_partitions():
            if me in p.replicas:
                hosted += 1
            if p.leader != me:
                continue
            led += 1
            m = min_isr_by_topic.get(topic.name)
            if m is None:
                # Kafka's Partition.isUnderMinIsr compares with the configured value, uncapped by RF.
                m = min_isr_by_topic[topic.name] = self.resolver.topic_min_isr(image, topic.name)
            if len(p.isr) < m:
                under += 1
            elif len(p.isr) == m:
                at += 1
        return {
            "leader_count": float(led),
            "partition_count": float(hosted),
            "under_min_isr_partitions": float(under),
            "at_min_isr_partitions": float(at),
        }
