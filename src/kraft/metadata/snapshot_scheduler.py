"""When a node writes a snapshot of its committed metadata image, and writing it (spec 1.7).

Shared by controllers and brokers (Kafka's ``SnapshotGenerator`` runs on both): a snapshot is due at
a committed batch boundary once ``metadata.log.max.record.bytes.between.snapshots`` bytes of records
were replayed since the last one, or ``metadata.log.max.snapshot.interval.ms`` passed with at least
one record replayed. Never inside an open metadata transaction (the image there is not a state the
log ever published). No I/O here: the snapshot writer comes from the injected raft client.

Encoding an image is the slow part (about 1.5 s of Python for 100,000 partitions, past half the
followers' fetch timeout when the CPU is shared), so the server injects ``encode``, which runs it
on another thread and returns a future; the raft thread polls it and writes the file once it is
done. The image is immutable, so encoding it elsewhere is safe. Without ``encode`` (the simulator)
the snapshot is encoded and written in the same step.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from kraft.metadata.image import MetadataImage
from kraft.metadata.image_snapshot import snapshot_records_bytes
from kraft.raft.types import OffsetAndEpoch

# Records handed to the snapshot writer per ``append`` (one batch each).
RECORDS_PER_SNAPSHOT_BATCH = 1000


class SnapshotSink(Protocol):
    """What the scheduler needs of the raft client (``RaftNode.create_snapshot``)."""

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, last_contained_log_timestamp_ms: int) -> Any: ...


@dataclass(frozen=True, slots=True)
class _Boundary:
    last_offset: int
    epoch: int
    append_ms: int


class SnapshotScheduler:
    """Tracks replayed bytes and time since the last snapshot; ``maybe_write`` writes one when due.

    Call ``committed`` for every committed batch (control batches with 0 bytes), ``loaded`` when a
    snapshot replaced the image, and ``maybe_write`` after replaying.
    """

    def __init__(
        self,
        *,
        max_bytes: int,
        interval_ms: int,
        encode: Callable[[MetadataImage], Future[list[bytes]]] | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.interval_ms = interval_ms  # 0 disables the time trigger
        self.bytes_since = 0
        self.last_snapshot_ms: int | None = None
        self.last_snapshot_offset = -1  # end offset (exclusive) of the last snapshot written or loaded
        self._boundary: _Boundary | None = None
        self.encode = encode
        # A snapshot being encoded in the background: (id, last record's append time, records).
        self._job: tuple[OffsetAndEpoch, int, Future[list[bytes]]] | None = None

    def committed(self, last_offset: int, epoch: int, append_ms: int, record_bytes: int) -> None:
        self.bytes_since += record_bytes
        self._boundary = _Boundary(last_offset, epoch, append_ms)

    def loaded(self, snapshot_offset: int) -> None:
        self.bytes_since = 0
        self.last_snapshot_offset = snapshot_offset

    def is_due(self, now_ms: int) -> bool:
        boundary = self._boundary
        if self._job is not None or boundary is None or boundary.last_offset + 1 <= self.last_snapshot_offset:
            return False
        if self.last_snapshot_ms is None:
            self.last_snapshot_ms = now_ms  # the interval runs from the first committed batch
        if self.bytes_since >= self.max_bytes:
            return True
        return (
            self.interval_ms > 0
            and self.bytes_since > 0
            and now_ms - self.last_snapshot_ms >= self.interval_ms
        )

    def write(self, sink: SnapshotSink, image: MetadataImage, now_ms: int) -> OffsetAndEpoch | None:
        """Write ``image`` (the committed one) as the snapshot ending after the last committed batch.

        Returns the snapshot id, or None when there is no committed batch yet, a snapshot with
        this id exists already (the raft client then returns no writer), or the records are being
        encoded in the background (``poll`` writes them).
        """
        boundary = self._boundary
        if boundary is None:
            return None
        snapshot_id = OffsetAndEpoch(boundary.last_offset + 1, boundary.epoch)
        self.last_snapshot_ms = now_ms
        self.last_snapshot_offset = snapshot_id.offset
        self.bytes_since = 0
        if self.encode is not None:
            self._job = (snapshot_id, boundary.append_ms, self.encode(image))
            return None
        writer = sink.create_snapshot(snapshot_id, boundary.append_ms)
        if writer is None:
            return None
        self._append_all(writer, snapshot_records_bytes(image))
        return snapshot_id

    def poll(self, sink: SnapshotSink) -> OffsetAndEpoch | None:
        """Writes the snapshot encoded in the background once its records are ready; its id, or
        None (nothing ready, or a snapshot loaded meanwhile is at least as new)."""
        job = self._job
        if job is None or not job[2].done():
            return None
        self._job = None
        snapshot_id, append_ms, records = job
        data = records.result()  # an encoding error is a bug: raised on the raft thread
        if snapshot_id.offset < self.last_snapshot_offset:
            return None
        writer = sink.create_snapshot(snapshot_id, append_ms)
        if writer is None:
            return None
        self._append_all(writer, data)
        return snapshot_id

    @staticmethod
    def _append_all(writer: Any, data: list[bytes]) -> None:
        for i in range(0, len(data), RECORDS_PER_SNAPSHOT_BATCH):
            writer.append(data[i : i + RECORDS_PER_SNAPSHOT_BATCH])
        writer.freeze()
