"""A broker's replica of the cluster metadata: committed batches replayed into ``MetadataImage``.

The broker is a raft observer of ``__cluster_metadata``; this is its listener (Kafka's broker-side
``MetadataLoader`` plus ``SnapshotGenerator``). It replays every committed batch into the same
image the controllers build (publishing each image, with its delta, to the publishers installed
on ``loader``: ``kraft.metadata.publisher``), loads a snapshot when the core hands one over (at
start, or when the broker fell behind the leader's log start), and writes its own snapshots at the
thresholds of spec 1.7, so a restart loads the latest snapshot plus the log after it instead of the
whole log.

A batch that does not replay is fatal (``ReplayError`` propagates and stops the node): a broker
must never serve an image that diverged from the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future

from kraft.metadata.image import MetadataImage, MetadataLoader, ReplayError
from kraft.metadata.snapshot_scheduler import SnapshotScheduler, SnapshotSink
from kraft.raft.listener import CommittedBatch, SnapshotReader
from kraft.raft.types import LeaderAndEpoch, OffsetAndEpoch

log = logging.getLogger("kraft.broker.metadata")


class BrokerMetadataListener:
    """Register on the raft core; read ``image`` from any thread (swapped by reference)."""

    def __init__(
        self,
        *,
        node_id: int,
        raft: SnapshotSink,
        snapshot_max_bytes: int = 20 * 1024 * 1024,
        snapshot_interval_ms: int = 3_600_000,
        snapshot_encoder: Callable[[MetadataImage], Future[list[bytes]]] | None = None,
    ) -> None:
        self.node_id = node_id
        self.raft = raft
        self.loader = MetadataLoader()
        self.snapshots = SnapshotScheduler(
            max_bytes=snapshot_max_bytes, interval_ms=snapshot_interval_ms, encode=snapshot_encoder
        )
        self.leader = LeaderAndEpoch(None, 0)
        self.snapshots_written = 0
        self.snapshots_loaded = 0
        self.metadata_errors = 0

    @property
    def image(self) -> MetadataImage:
        return self.loader.image

    @property
    def last_applied_offset(self) -> int:
        """The offset of the last replayed record: what the broker reports in its heartbeats."""
        return self.loader.image.provenance.last_offset

    # -- RaftListener ------------------------------------------------------------------------------

    def handle_commit(self, batch: CommittedBatch) -> None:
        try:
            if batch.is_control or not batch.records:
                self.loader.handle_control_batch(batch.last_offset, batch.epoch, batch.append_timestamp_ms)
            else:
                self.loader.handle_batch(
                    batch.base_offset, batch.epoch, batch.append_timestamp_ms, batch.records
                )
        except ReplayError as e:
            self.metadata_errors += 1
            log.error("broker %d: cannot replay committed metadata: %s", self.node_id, e)
            raise
        self.snapshots.committed(
            batch.last_offset, batch.epoch, batch.append_timestamp_ms, sum(len(r) for r in batch.records)
        )

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        snapshot_id = reader.snapshot_id
        image = self.loader.load_snapshot(
            snapshot_id.offset, snapshot_id.epoch, reader.last_contained_log_timestamp, list(reader.records())
        )
        self.snapshots.loaded(snapshot_id.offset)
        self.snapshots_loaded += 1
        log.info(
            "broker %d: loaded snapshot %s (%d topics, %d partitions)",
            self.node_id,
            snapshot_id,
            image.topic_count,
            image.partition_count,
        )

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leader = leader

    # -- snapshots ---------------------------------------------------------------------------------

    def maybe_snapshot(self, now_ms: int) -> OffsetAndEpoch | None:
        """Spec 1.7: write a snapshot of the committed image when one is due."""
        done = self.snapshots.poll(self.raft)  # one encoded in the background
        if done is not None:
            self.snapshots_written += 1
            log.info("broker %d: wrote snapshot %s", self.node_id, done)
            return done
        if self.loader.in_transaction or not self.snapshots.is_due(now_ms):
            return None
        snapshot_id = self.snapshots.write(self.raft, self.loader.image, now_ms)
        if snapshot_id is not None:
            self.snapshots_written += 1
            log.info("broker %d: wrote snapshot %s", self.node_id, snapshot_id)
        return snapshot_id
