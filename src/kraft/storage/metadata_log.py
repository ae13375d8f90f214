"""``MetadataLog``: the replicated log of ``__cluster_metadata-0`` on files (``ReplicatedLog``).

A ``SegmentLog`` (segments, offset indexes, epoch cache, recovery; ``kraft.storage.segment_log``)
with the metadata partition's snapshots on top, as Kafka's ``KafkaMetadataLog`` wraps a
``UnifiedLog``. This module owns the snapshot rules and nothing below them: it never touches a
segment file itself.

Directory layout (the partition directory, ``kraft.storage.log_dir.metadata_partition_dir``)::

    00000000000000000000.log                  segments and the epoch checkpoint: the SegmentLog
    leader-epoch-checkpoint
    00000000000000003000-0000000004.checkpoint   snapshots (see ``kraft.storage.snapshots``)
    quorum-state                              owned by ``FileQuorumStateStore``, ignored here

Log start offset: 0, or the end offset of the earliest snapshot, which ``delete_before_snapshot``
makes the start by deleting older snapshots *before* older segments; at open the start is again the
earliest snapshot's offset (segments below it may survive until they are wholly below it).

Recovery at open, on top of the segment log's (torn tails, corruption, epoch checkpoint):

* leftover ``.part`` snapshots and ``.deleted`` snapshot files are removed;
* a directory without segments begins its log at the latest snapshot;
* if the latest snapshot is ahead of the log (a follower crashed between downloading a snapshot and
  truncating), the log is replaced by it, as ``truncate_to_latest_snapshot`` does;
* otherwise the segments must hold the earliest snapshot's offset (0 without snapshots), or open
  refuses with a ``StorageError``: the log is missing data.
"""

from __future__ import annotations

import bisect
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from kraft.common.errors import KraftError, StorageError
from kraft.raft.log import (
    LogAppendInfo,
    ValidationKind,
    ValidOffsetAndEpoch,
    snapshot_supersedes_log,
    validate_offset_and_epoch,
)
from kraft.raft.types import OffsetAndEpoch
from kraft.storage import snapshots as snap
from kraft.storage.epoch_cache import EpochEntry
from kraft.storage.fsutil import fsync_dir
from kraft.storage.segment_log import DEFAULT_SEGMENT_BYTES, RecoveryReport, SegmentLog

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class MetadataRecoveryReport(RecoveryReport):
    """What open had to repair, segments and snapshots alike. Empty after a clean shutdown."""

    truncated_to_snapshot: OffsetAndEpoch | None = None


class MetadataLog:
    """A ``ReplicatedLog`` on files. Single-threaded: the caller serializes all calls.

    Lifecycle: ``MetadataLog(dir)`` opens (and recovers) the log; ``close()`` releases the files;
    ``crash()`` models a power loss for tests (unflushed bytes are discarded from the files; frozen
    snapshots stay).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        create: bool = True,
        verify_crc_on_read: bool = False,
    ) -> None:
        path = Path(directory)
        self.recovery_report = MetadataRecoveryReport()
        self._snapshots: list[OffsetAndEpoch] = []
        if path.is_dir():
            self._remove_leftover_snapshot_files(path)
            self._snapshots = snap.list_snapshots(path)
        latest = self.latest_snapshot_id()
        self._log = SegmentLog(
            path,
            segment_bytes=segment_bytes,
            create=create,
            verify_crc_on_read=verify_crc_on_read,
            initial_offset=0 if latest is None else latest.offset,
            log_start_offset=self._recover_start_offset,
            recovery_report=self.recovery_report,
        )

    # ------------------------------------------------------------------ open and recovery

    def _remove_leftover_snapshot_files(self, directory: Path) -> None:
        removed = self.recovery_report.removed_files
        before = len(removed)
        for name in sorted(os.listdir(directory)):
            if name.endswith((snap.PART_SUFFIX, snap.DELETED_SUFFIX)):
                path = directory / name
                os.unlink(path)
                removed.append(path)
                logger.warning("%s: removed leftover file %s", directory, name)
        if len(removed) > before:
            fsync_dir(directory)

    def _recover_start_offset(self, segments: SegmentLog) -> int:
        """The ``log_start_offset`` hook of the segment log's open: the snapshot rules above."""
        # The ReplicatedLog methods used below (end offset, epochs) read the segments through it.
        self._log = segments
        latest = self.latest_snapshot_id()
        if latest is not None and snapshot_supersedes_log(self, latest):
            logger.warning(
                "%s: latest snapshot %s is ahead of the log; replacing the log by it",
                segments.directory,
                latest,
            )
            self._replace_log_by_snapshot(latest)
            self.recovery_report.truncated_to_snapshot = latest
            return latest.offset
        first_base = segments.segment_base_offsets()[0]
        start = self._snapshots[0].offset if self._snapshots else first_base
        if start < first_base or (not self._snapshots and start != 0):
            raise StorageError(
                f"{segments.directory}: log segments begin at offset {first_base} but the earliest "
                f"snapshot is {self._snapshots[0] if self._snapshots else 'missing'}: the log is missing data"
            )
        if start > segments.end_offset():
            raise StorageError(
                f"{segments.directory}: earliest snapshot {self._snapshots[0]} ends beyond the log end "
                f"offset {segments.end_offset()} but is not ahead of the log's epochs"
            )
        return start

    # ------------------------------------------------------------------ ReplicatedLog: positions

    @property
    def directory(self) -> Path:
        return self._log.directory

    def start_offset(self) -> int:
        return self._log.start_offset()

    def end_offset(self) -> int:
        return self._log.end_offset()

    def last_flushed_offset(self) -> int:
        return self._log.last_flushed_offset()

    def last_fetched_epoch(self) -> int:
        latest = self._log.latest_epoch()
        if latest is not None:
            return latest
        snapshot = self.latest_snapshot_id()
        if snapshot is not None and snapshot.offset == self._log.start_offset() == self._log.end_offset():
            return snapshot.epoch
        return 0

    def epoch_entries(self) -> tuple[EpochEntry, ...]:
        """The epoch cache, oldest first (for tools and tests)."""
        return self._log.epoch_entries()

    def segment_paths(self) -> list[Path]:
        return self._log.segment_paths()

    # ------------------------------------------------------------------ ReplicatedLog: appends and reads

    def append_as_leader(self, batches: bytes, epoch: int) -> LogAppendInfo:
        first = self._log.append_as_leader(batches, epoch)
        return LogAppendInfo(first_offset=first, last_offset=self._log.end_offset() - 1)

    def append_as_follower(self, batches: bytes, epoch: int) -> LogAppendInfo:
        """Append fetched batches as they are. ``epoch`` (the fetching node's epoch) bounds their epochs."""
        first = self._log.append_as_follower(batches, epoch)
        return LogAppendInfo(first_offset=first, last_offset=self._log.end_offset() - 1)

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        return self._log.read(start_offset, max_bytes)

    # ------------------------------------------------------------------ ReplicatedLog: truncation

    def truncate_to(self, offset: int) -> None:
        self._log.truncate_to(offset)

    def truncate_to_latest_snapshot(self) -> bool:
        self._check_open()
        latest = self.latest_snapshot_id()
        if latest is None or not snapshot_supersedes_log(self, latest):
            return False
        self._replace_log_by_snapshot(latest)
        return True

    def _replace_log_by_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        # Order matters for a crash part-way: older snapshots go first (so the earliest snapshot is
        # never below missing segments), then segments newest first, then the new empty segment.
        self._forget_snapshots_before(snapshot_id)
        self._log.truncate_fully_and_start_at(snapshot_id.offset)

    def _forget_snapshots_before(self, snapshot_id: OffsetAndEpoch) -> None:
        doomed = [s for s in self._snapshots if s < snapshot_id]
        if not doomed:
            return
        for sid in doomed:
            snap.delete_snapshot_file(self._log.directory, sid)
        self._snapshots = [s for s in self._snapshots if s >= snapshot_id]
        fsync_dir(self._log.directory)

    # ------------------------------------------------------------------ ReplicatedLog: epochs

    def initialize_leader_epoch(self, epoch: int) -> None:
        self._log.initialize_leader_epoch(epoch)

    def _floor_epoch(self) -> int:
        earliest = self.earliest_snapshot_id()
        return earliest.epoch if earliest is not None else 0

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        return self._log.end_offset_for_epoch(epoch, self._floor_epoch())

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        # Spec 4.1; the one implementation shared with MemoryLog.
        return validate_offset_and_epoch(self, offset, epoch)

    # ------------------------------------------------------------------ ReplicatedLog: durability

    def flush(self) -> None:
        self._log.flush()

    # ------------------------------------------------------------------ ReplicatedLog: snapshots

    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        return self._snapshots[-1] if self._snapshots else None

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        return self._snapshots[0] if self._snapshots else None

    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        return list(self._snapshots)

    def _on_snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        if snapshot_id not in self._snapshots:
            bisect.insort(self._snapshots, snapshot_id)

    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> snap.FileRawSnapshotWriter | None:
        """A writer for a snapshot of this log's prefix below ``snapshot_id.offset``.

        Returns ``None`` if the snapshot exists or is below the log start (Kafka does the same).
        The caller guarantees the id is at or below the high watermark, which this log does not know.

        Raises:
            KraftError: the id is beyond the log end or not a valid (offset, epoch) of the log.
        """
        self._check_open()
        start = self._log.start_offset()
        if snapshot_id.offset < start:
            logger.info("not creating snapshot %s below the log start offset %d", snapshot_id, start)
            return None
        if snapshot_id.offset > self.end_offset():
            raise KraftError(f"snapshot id {snapshot_id} is beyond the log end offset {self.end_offset()}")
        validation = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if validation.kind is not ValidationKind.VALID:
            raise KraftError(f"snapshot id {snapshot_id} is not valid according to the log: {validation}")
        if snapshot_id in self._snapshots:
            return None
        return snap.FileRawSnapshotWriter(self._log.directory, snapshot_id, self._on_snapshot_frozen)

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> snap.FileRawSnapshotWriter:
        self._check_open()
        return snap.FileRawSnapshotWriter(self._log.directory, snapshot_id, self._on_snapshot_frozen)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> snap.FileRawSnapshotReader | None:
        if snapshot_id not in self._snapshots:
            return None
        try:
            return snap.FileRawSnapshotReader(
                snap.snapshot_path(self._log.directory, snapshot_id), snapshot_id
            )
        except StorageError:
            logger.warning("snapshot %s was listed but its file is gone", snapshot_id)
            self._snapshots.remove(snapshot_id)
            return None

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        self._check_open()
        if (
            snapshot_id not in self._snapshots
            or snapshot_id.offset <= self._log.start_offset()
            or snapshot_id.offset > self._log.last_flushed_offset()
        ):
            return False
        # Older snapshots first (see _replace_log_by_snapshot), then segments wholly below.
        self._forget_snapshots_before(snapshot_id)
        return self._log.advance_start_offset(snapshot_id.offset)

    # ------------------------------------------------------------------ lifecycle

    def _check_open(self) -> None:
        if self._log.closed:
            raise KraftError(f"log {self._log.directory} is closed")

    def close(self) -> None:
        """Release the files. Does not flush: call ``flush()`` first for a clean shutdown."""
        self._log.close()

    def crash(self) -> None:
        """Model a power loss (tests, simulator): cut the files back to ``last_flushed_offset()``, close.

        Frozen snapshots survive (they are durable when frozen); an unfrozen ``.part`` file is left
        behind for the next open to remove.
        """
        self._log.crash()

    def __enter__(self) -> MetadataLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
