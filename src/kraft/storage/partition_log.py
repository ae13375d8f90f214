"""``PartitionLog``: one data partition's log on disk (Kafka's ``UnifiedLog``), in
``<log dir>/<topic>-<partition>/``.

A ``SegmentLog`` (segments, epoch cache, recovery) under ``BasePartitionLog`` (validation, offsets,
producer state, high watermark, bounded reads, time index, retention), plus this directory's own
file, Kafka's ``partition.metadata``::

    version: 0
    topic_id: <Kafka's Uuid.toString: URL-safe base64, no padding>

(no trailing newline). It is written, atomically, when the directory is created, before any segment
exists, so that every byte of data on disk can be traced to its topic id. Open refuses a directory
whose file names another topic id (a topic deleted and recreated under the same name): the caller
must delete the stale log first. Files this module writes and Kafka's readers accept alike.

Recovery, the recovery point and the clean-shutdown marker, as Kafka's ``LogLoader``: after a clean
shutdown (``clean_shutdown``, which ``LogManager`` reads from the log directory's marker) no segment
is scanned; otherwise the segment holding the checkpointed recovery point and every later one are
re-validated (header, CRC-32C, dense offsets, epochs; a torn tail of the last segment is cut,
corruption elsewhere refused) and their ``.index``/``.timeindex`` files rebuilt, while the segments
below open from their index files (``kraft.storage.segment_log``). A partition missing from the
checkpoint is scanned whole. After open the recovery point is the log end (open fsyncs it).

Producer state comes from the latest ``<offset>.snapshot`` file (``producer_snapshot``, written at
each roll and at close) plus the batches after it (``BasePartitionLog``), so a clean restart reads
no batch at all.

The log start offset comes from the broker's ``log-start-offset-checkpoint`` (through
``LogManager``): it is raised to the first segment's base offset if below it, and if it is beyond
the log end (segments lost), the log is emptied and started there (Kafka's
``deleteSegmentsIfLogStartGreaterThanLogEnd``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import uuid
from pathlib import Path

from kraft.common.errors import StorageError
from kraft.common.uuids import ZERO_UUID, uuid_from_base64, uuid_to_base64
from kraft.storage.base_partition_log import BasePartitionLog
from kraft.storage.fsutil import atomic_write, fsync_dir, fsync_file
from kraft.storage.log_dir import partition_dir
from kraft.storage.producer_snapshot import parse_snapshot_file_name, snapshot_file_name
from kraft.storage.segment_index import IndexConfig
from kraft.storage.segment_log import DEFAULT_SEGMENT_BYTES, OpenSegmentFiles, RecoveryReport, SegmentLog

logger = logging.getLogger(__name__)

PARTITION_METADATA_FILE = "partition.metadata"
# Data partitions keep Kafka's .index and .timeindex files (log.index.interval.bytes 4096,
# log.index.size.max.bytes 10 MiB).
DATA_INDEXES = IndexConfig()
PARTITION_METADATA_VERSION = 0
_WHITESPACE = re.compile(r"\s+")


def encode_partition_metadata(topic_id: uuid.UUID) -> bytes:
    """Kafka's ``PartitionMetadata.encode``, byte for byte."""
    return f"version: {PARTITION_METADATA_VERSION}\ntopic_id: {uuid_to_base64(topic_id)}".encode()


def decode_partition_metadata(data: bytes, *, source: str = PARTITION_METADATA_FILE) -> uuid.UUID:
    """The topic id of a ``partition.metadata`` file (read as Kafka's ``PartitionMetadataReadBuffer``:
    any version >= 0, for downgrades).

    Raises:
        StorageError: malformed, or the zero topic id.
    """
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise StorageError(f"{source}: not UTF-8 text") from None
    if len(lines) < 2:
        raise StorageError(f"{source}: expected a version line and a topic_id line")
    version = _WHITESPACE.split(lines[0].strip())
    if len(version) != 2 or version[0] != "version:" or not version[1].isdigit():
        raise StorageError(f"{source}: malformed line {lines[0]!r}")
    topic = _WHITESPACE.split(lines[1].strip())
    if len(topic) != 2 or topic[0] != "topic_id:":
        raise StorageError(f"{source}: malformed line {lines[1]!r}")
    try:
        topic_id = uuid_from_base64(topic[1])
    except ValueError as e:
        raise StorageError(f"{source}: {e}") from None
    if topic_id == ZERO_UUID:
        raise StorageError(f"{source}: invalid (zero) topic id")
    return topic_id


def read_partition_metadata(directory: str | os.PathLike[str]) -> uuid.UUID | None:
    """The topic id recorded in ``directory``; ``None`` when it has no ``partition.metadata``, or an
    empty one.

    A new log's file is renamed into place unsynced (``PartitionLog``): after a power loss a file
    system may keep the rename and lose the content. An empty file can only be that unfinished
    creation, so it counts as absent and the log takes its topic id from the metadata again. Kafka
    fails to read it and takes the whole log directory offline.
    """
    path = Path(directory) / PARTITION_METADATA_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if not data:
        logger.warning(
            "%s is empty (a creation cut short by a crash): the topic id comes from metadata", path
        )
        return None
    return decode_partition_metadata(data, source=str(path))


def write_partition_metadata(
    directory: str | os.PathLike[str], topic_id: uuid.UUID, *, durable: bool = True
) -> None:
    """Write ``partition.metadata`` atomically (temp file, rename); ``durable``: with the fsyncs of
    the file and of the directory (else the caller syncs them later)."""
    path = Path(directory) / PARTITION_METADATA_FILE
    atomic_write(path, encode_partition_metadata(topic_id), durable=durable)


class PartitionLog(BasePartitionLog):
    """One partition's data log on files; see ``BasePartitionLog`` for the API and its invariants.

    Args:
        log_dir: the log directory (one of ``log.dirs``); the partition's directory is inside it.
        topic_id: the partition's topic id; ``None`` opens a directory as it is (a ``LogManager``
            at start), leaving ``topic_id`` ``None`` if it has no ``partition.metadata``.
        high_watermark, log_start_offset, recovery_point: the broker-level checkpoints' values for
            this partition (``None``: not in the checkpoint).
        segment_bytes, segment_ms: Kafka's ``segment.bytes`` and ``segment.ms`` (``None``: no time
            roll).
        now_ms: the time ``last_flush_ms`` starts from.
        create: create the directory if it does not exist (else ``StorageError``).
        open_files: the bound on open segment files this log shares with others (``None``: its
            segments stay open).

    Raises:
        StorageError: the directory holds another topic id, or a malformed
            ``partition.metadata``. An invalid batch or a gap between segments is not an error:
            the log is cut there (``recovery_report``).
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str],
        topic: str,
        partition: int,
        topic_id: uuid.UUID | None,
        *,
        high_watermark: int = 0,
        log_start_offset: int | None = None,
        recovery_point: int | None = None,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        segment_ms: int | None = None,
        now_ms: int = 0,
        create: bool = True,
        verify_crc_on_read: bool = False,
        clean_shutdown: bool = False,
        index: IndexConfig = DATA_INDEXES,
        open_files: OpenSegmentFiles | None = None,
    ) -> None:
        directory = partition_dir(log_dir, topic, partition)
        # A new log is written unsynced and made durable at its first flush (``_flush_store``):
        # becoming a replica of 10,000 new partitions cost 6 fsyncs each, 60 s of a held event loop.
        # Until then a power loss can take the empty log away; it is created again from metadata.
        self._creation_unsynced = False
        if not directory.is_dir():
            if not create:
                raise StorageError(f"partition directory {directory} does not exist")
            directory.mkdir(parents=True)
            self._creation_unsynced = True
        stored = read_partition_metadata(directory)
        if stored is not None and topic_id is not None and stored != topic_id:
            raise StorageError(
                f"{directory / PARTITION_METADATA_FILE} holds topic id {uuid_to_base64(stored)}, not "
                f"{uuid_to_base64(topic_id)}: the directory belongs to another topic of the same name "
                "(delete it before creating this one)"
            )
        if stored is None and topic_id is not None:
            write_partition_metadata(directory, topic_id, durable=not self._creation_unsynced)
        self._directory = directory

        def start_offset(segments: SegmentLog) -> int:
            first = segments.segment_base_offsets()[0]
            if log_start_offset is None:
                return first
            if log_start_offset > segments.end_offset():
                logger.warning(
                    "%s: log start offset %d is beyond the log end %d: emptying the log to start there",
                    directory,
                    log_start_offset,
                    segments.end_offset(),
                )
                segments.truncate_fully_and_start_at(log_start_offset)
                return log_start_offset
            return max(log_start_offset, first)

        self._segments = SegmentLog(
            directory,
            segment_bytes=segment_bytes,
            create=create,
            verify_crc_on_read=verify_crc_on_read,
            initial_offset=0 if log_start_offset is None else log_start_offset,
            log_start_offset=start_offset,
            index=index,
            recover_from=0 if recovery_point is None else recovery_point,
            clean_shutdown=clean_shutdown,
            sync_new=False,
            # Kafka's LogLoader: cut at the first invalid batch past the recovery point. A broker
            # that restarted uncleanly is out of the ISR and ELR and fetches the rest again.
            truncate_corruption=True,
            open_files=open_files,
        )
        try:
            super().__init__(
                topic,
                partition,
                stored if stored is not None else topic_id,
                self._segments,
                high_watermark=high_watermark,
                segment_bytes=segment_bytes,
                segment_ms=segment_ms,
                now_ms=now_ms,
            )
        except BaseException:
            self._segments.close()
            raise
        if recovery_point is not None and recovery_point < self.log_end_offset and not clean_shutdown:
            logger.info(
                "%s: opened with %d offsets past the checkpointed recovery point %d (re-validated)",
                directory,
                self.log_end_offset - recovery_point,
                recovery_point,
            )

    @property
    def directory(self) -> Path:
        return self._directory

    def _flush_store(self) -> None:
        if self.log_end_offset == self.log_start_offset and not self.size_in_bytes:
            # Nothing written: an empty log needs no durability (it is created again from the
            # metadata); a clean stop of a broker with 15,000 new partitions spent 5 fsyncs on each.
            return
        if self._creation_unsynced:
            # The new log's creation first: partition.metadata's content, the partition
            # directory's entry in the log directory; the store's flush then syncs the partition
            # directory's own entries (segment, partition.metadata) and the epoch checkpoint.
            metadata = self._directory / PARTITION_METADATA_FILE
            if metadata.exists():
                fsync_file(metadata)
            fsync_dir(self._directory.parent)
            self._creation_unsynced = False
        super()._flush_store()

    @property
    def recovery_report(self) -> RecoveryReport:
        """What open had to repair (torn tails, leftover files, a rebuilt epoch cache)."""
        return self._segments.recovery_report

    def _persist_topic_id(self, topic_id: uuid.UUID) -> None:
        write_partition_metadata(self._directory, topic_id)

    def _snapshot_offsets(self) -> list[int]:
        offsets = []
        for name in os.listdir(self._directory):
            offset = parse_snapshot_file_name(name)
            if offset is not None:
                offsets.append(offset)
        return offsets

    def _read_snapshot(self, offset: int) -> bytes:
        try:
            return (self._directory / snapshot_file_name(offset)).read_bytes()
        except OSError as e:
            raise StorageError(f"cannot read producer snapshot {offset}: {e}") from e

    def _write_snapshot(self, offset: int, data: bytes) -> None:
        atomic_write(self._directory / snapshot_file_name(offset), data)

    def _delete_snapshot(self, offset: int) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._directory / snapshot_file_name(offset))

    def crash(self) -> None:
        """Model a power loss (tests): everything after the last flush is cut from the files and the
        log is closed; reopen the directory to recover."""
        self._segments.crash()
