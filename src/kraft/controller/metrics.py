"""Controller metrics (spec 9), kept as plain numbers; the server exports them to Prometheus under
Kafka's MBean names (see ``PROMETHEUS_NAMES``). Gauges derive from the image, so every controller
agrees on them; counters count what this controller did while active."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from kraft.metadata.image import MetadataImage

# Upper bounds (ms) of the EventQueueTimeMs histogram's buckets; +Inf is implied.
QUEUE_TIME_BUCKETS_MS: tuple[int, ...] = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000)


@dataclass(frozen=True, slots=True)
class Histogram:
    """A cumulative-ready histogram: per-bucket counts (last = above every bound), sum and count."""

    bounds: tuple[int, ...]
    counts: tuple[int, ...]
    total: float

    @property
    def count(self) -> int:
        return sum(self.counts)


@dataclass(slots=True)
class ControllerMetrics:
    active: bool = False
    fenced_broker_count: int = 0
    active_broker_count: int = 0
    controlled_shutdown_broker_count: int = 0
    global_topic_count: int = 0
    global_partition_count: int = 0
    offline_partitions_count: int = 0
    preferred_replica_imbalance_count: int = 0
    partitions_without_electable_leaders: int = 0
    metadata_error_count: int = 0
    last_applied_offset: int = -1
    last_committed_offset: int = -1
    last_applied_timestamp_ms: int = -1
    timed_out_broker_heartbeats: int = 0
    new_active_controllers: int = 0
    unclean_elections: int = 0
    elections_from_elr: int = 0
    unclean_recovery_elections: int = 0  # KIP-966 part 2 (kraft's; Kafka has no unclean recovery)
    snapshots_written: int = 0
    event_queue_operations: int = 0
    event_queue_time_ms_total: int = 0
    event_queue_time_ms_max: int = 0
    _queue_time_buckets: list[int] = field(
        default_factory=lambda: [0] * (len(QUEUE_TIME_BUCKETS_MS) + 1), repr=False
    )
    _image_seen: object = field(default=None, repr=False)

    def record_queue_time(self, ms: int) -> None:
        ms = max(0, ms)
        self.event_queue_operations += 1
        self.event_queue_time_ms_total += ms
        self.event_queue_time_ms_max = max(self.event_queue_time_ms_max, ms)
        self._queue_time_buckets[bisect.bisect_left(QUEUE_TIME_BUCKETS_MS, ms)] += 1

    def queue_time_histogram(self) -> Histogram:
        """EventQueueTimeMs: how long requests waited before a controller poll ran them."""
        buckets = tuple(self._queue_time_buckets)
        return Histogram(QUEUE_TIME_BUCKETS_MS, buckets, self.event_queue_time_ms_total)

    def add_stats(self, stats: dict[str, int]) -> None:
        self.unclean_elections += stats.get("unclean_elections", 0)
        self.elections_from_elr += stats.get("elections_from_elr", 0)
        self.unclean_recovery_elections += stats.get("unclean_recovery_elections", 0)

    def observe(self, image: MetadataImage) -> None:
        """Refresh the gauges from ``image`` (cheap when the image did not change)."""
        if image is self._image_seen:
            return
        self._image_seen = image
        fenced = active = cs = 0
        for b in image.brokers.values():
            if b.fenced:
                fenced += 1
            else:
                active += 1
                if b.in_controlled_shutdown:
                    cs += 1
        self.fenced_broker_count = fenced
        self.active_broker_count = active
        self.controlled_shutdown_broker_count = cs
        self.global_topic_count = len(image.topics_by_id)
        self.global_partition_count = image.partition_count
        self.offline_partitions_count = image.offline_partition_count
        self.preferred_replica_imbalance_count = image.preferred_imbalance_count
        self.partitions_without_electable_leaders = image.no_electable_leader_count

    def as_dict(self) -> dict[str, float]:
        return {k: float(getattr(self, k)) for k in self.__slots__ if not k.startswith("_")}


# Our field -> Kafka's MBean (type, name); the server builds Prometheus names from these.
PROMETHEUS_NAMES: dict[str, tuple[str, str]] = {
    "active": ("KafkaController", "ActiveControllerCount"),
    "fenced_broker_count": ("KafkaController", "FencedBrokerCount"),
    "active_broker_count": ("KafkaController", "ActiveBrokerCount"),
    "controlled_shutdown_broker_count": ("KafkaController", "ControlledShutdownBrokerCount"),
    "global_topic_count": ("KafkaController", "GlobalTopicCount"),
    "global_partition_count": ("KafkaController", "GlobalPartitionCount"),
    "offline_partitions_count": ("KafkaController", "OfflinePartitionsCount"),
    "preferred_replica_imbalance_count": ("KafkaController", "PreferredReplicaImbalanceCount"),
    "partitions_without_electable_leaders": ("KafkaController", "PartitionsWithoutElectableLeadersCount"),
    "metadata_error_count": ("KafkaController", "MetadataErrorCount"),
    "last_applied_offset": ("KafkaController", "LastAppliedRecordOffset"),
    "last_committed_offset": ("KafkaController", "LastCommittedRecordOffset"),
    "last_applied_timestamp_ms": ("KafkaController", "LastAppliedRecordTimestamp"),
    "timed_out_broker_heartbeats": ("KafkaController", "TimedOutBrokerHeartbeatCount"),
    "new_active_controllers": ("KafkaController", "NewActiveControllersCount"),
    "unclean_elections": ("ControllerStats", "UncleanLeaderElectionsPerSec"),
    "elections_from_elr": ("ControllerStats", "ElectionFromEligibleLeaderReplicasPerSec"),
    # kraft's: Kafka never shipped unclean recovery, so this MBean name is ours (same family).
    "unclean_recovery_elections": ("ControllerStats", "UncleanRecoveryElectionsPerSec"),
    "event_queue_operations": ("KafkaController", "EventQueueOperationsStartedCount"),
}
# Exported as Prometheus histograms (Kafka's are Yammer histograms).
QUEUE_TIME_NAME: tuple[str, str] = ("ControllerEventManager", "EventQueueTimeMs")
# Computed at scrape time from the wall clock: now - LastAppliedRecordTimestamp.
LAG_NAME: tuple[str, str] = ("KafkaController", "LastAppliedRecordLagMs")
