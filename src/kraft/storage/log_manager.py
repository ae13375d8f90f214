"""``LogManager``: a broker's data partition logs across its log directories (Kafka's ``LogManager``).

Layout of each log directory (``log.dirs``) this manager reads and writes::

    <log dir>/<topic>-<partition>/                  a PartitionLog (partition.metadata, segments, ...)
    <log dir>/<topic>-<partition>.<uuid>-delete/    a log being deleted (removed at the next open)
    <log dir>/replication-offset-checkpoint         high watermarks       } kraft.storage.
    <log dir>/log-start-offset-checkpoint           log start offsets     } offset_checkpoint
    <log dir>/recovery-point-offset-checkpoint      recovery points       }

``__cluster_metadata-0`` (the metadata log), ``meta.properties``, ``.kafka_cleanshutdown`` and any
entry that is not a ``<topic>-<int>`` directory are left alone; ``-future`` and ``-stray`` directories
(Kafka's replica moves and stray logs) are skipped with a warning.

Open reads the three checkpoints of each directory (a malformed one is a ``StorageError``, a missing
one is empty) and opens every partition directory with its values; a partition found in two log
directories is a ``StorageError``. The checkpoints are only read at open: a partition created later
starts from nothing, so a stale entry of a deleted partition can never reach a new one.

Deletion is crash-safe: the directory is renamed to ``<topic>-<partition>.<uuid>-delete`` (durably),
then removed; a crash in between leaves a ``-delete`` directory that the next open removes. Kafka
deletes such directories later, in the background; we do it at once.

The manager decides where a new partition goes (the log directory with the fewest partitions, the
first such in the order given, as Kafka's ``nextLogDirs``) and when checkpoints are written
(``checkpoint()``, and at ``close()``); the broker calls ``checkpoint()`` periodically (Kafka: every
``replica.high.watermark.checkpoint.interval.ms``, 5 s) and writes the clean-shutdown marker itself.

With ``background_checkpoints`` (the server's choice) ``checkpoint()`` takes the offsets on the
caller's thread and a thread of the manager writes and syncs the files (six fsyncs with one log
directory): on the broker's event loop they held every request for about 34 ms every 5 s. Kafka
writes them on its scheduler threads. What the files say is what they said at ``checkpoint()``
time, as before; they land a few ms later. A newer snapshot taken while a write runs replaces any
still waiting (the files only ever need the newest); a write that failed raises at the next
``checkpoint()`` (as the synchronous write raised in it), and ``close()`` waits for the thread,
then writes the final offsets itself.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path

from kraft.common.errors import KraftError, StorageError
from kraft.common.uuids import random_uuid
from kraft.storage.base_partition_log import BasePartitionLog
from kraft.storage.clean_shutdown import has_clean_shutdown_marker
from kraft.storage.fsutil import fsync_dir
from kraft.storage.log_dir import METADATA_PARTITION_DIR_NAME, partition_dir_name
from kraft.storage.offset_checkpoint import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TopicPartition,
    read_offset_checkpoint,
    write_offset_checkpoint,
)
from kraft.storage.partition_log import DATA_INDEXES, PartitionLog
from kraft.storage.segment_index import IndexConfig
from kraft.storage.segment_log import DEFAULT_SEGMENT_BYTES, OpenSegmentFiles

logger = logging.getLogger(__name__)

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"
# One log directory's checkpoint contents: (directory, high watermarks, log start offsets,
# recovery points).
# A directory and (high watermark, log start offset, recovery point) of each of its logs.
_DirOffsets = tuple[Path, dict[TopicPartition, tuple[int, int, int]]]

# A file name's limit on every file system we run on.
_MAX_NAME = 255


def parse_partition_dir_name(name: str) -> TopicPartition | None:
    """(topic, partition) of a ``<topic>-<partition>`` directory name, else ``None``. The name must be
    the canonical one (``partition_dir_name`` gives it back), so ``t-01`` or ``t-+1`` are not."""
    topic, sep, number = name.rpartition("-")
    if not sep or not topic or not number.isdigit():
        return None
    partition = int(number)
    try:
        canonical = partition_dir_name(topic, partition)
    except KraftError:
        return None
    return (topic, partition) if canonical == name else None


def delete_dir_name(topic: str, partition: int, unique_id: uuid.UUID) -> str:
    """Kafka's ``logDeleteDirName``: ``<topic>-<partition>.<uuid hex>-delete``, the topic cut short
    if the name would exceed 255 characters."""
    suffix = f"-{partition}.{unique_id.hex}{DELETE_DIR_SUFFIX}"
    return topic[: _MAX_NAME - len(suffix)] + suffix


class LogManager:
    """Every data partition log of one broker. Single-threaded: the caller serializes all calls
    (with ``background_checkpoints`` a thread of its own writes the checkpoint files).

    Lifecycle: the constructor opens (and recovers) every log; ``close()`` flushes, checkpoints and
    closes them; calls after ``close()`` raise ``KraftError``.

    Args:
        log_dirs: the broker's ``log.dirs`` (created if missing).
        segment_bytes, segment_ms: for every log (Kafka's ``log.segment.bytes``/``log.roll.ms``).
        now_ms: passed to the logs as the start of ``last_flush_ms``.
        rng: the source of the unique ids of ``-delete`` directories (default: the OS).
        clean_shutdown: whether the logs were closed cleanly (then no segment is re-scanned, each
            opens from its indexes); ``None``: a log directory holding the clean-shutdown marker
            (``.kafka_cleanshutdown``) was, as Kafka decides. Otherwise each log re-scans the
            segments from the one holding its checkpointed recovery point.
        index: ``log.index.interval.bytes`` and ``log.index.size.max.bytes`` for every log.
        background_checkpoints: ``checkpoint()`` hands the file writes to a thread (above).
        max_open_segment_files: at most this many segment files of all the logs are open at once
            (``OpenSegmentFiles``: the least recently used is closed, and reopened when used);
            ``None``: every segment stays open, as in Kafka.
    """

    def __init__(
        self,
        log_dirs: Sequence[str | os.PathLike[str]],
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        segment_ms: int | None = None,
        now_ms: int = 0,
        rng: random.Random | None = None,
        clean_shutdown: bool | None = None,
        index: IndexConfig = DATA_INDEXES,
        background_checkpoints: bool = False,
        max_open_segment_files: int | None = None,
    ) -> None:
        if not log_dirs:
            raise KraftError("a log manager needs at least one log directory")
        self._log_dirs = [Path(d) for d in log_dirs]
        if len(set(self._log_dirs)) != len(self._log_dirs):
            raise KraftError(f"log directories are listed twice: {[str(d) for d in self._log_dirs]}")
        self._segment_bytes = segment_bytes
        self._segment_ms = segment_ms
        self._now_ms = now_ms
        self._rng = rng
        self._clean_shutdown = clean_shutdown
        self._index = index
        self.open_files = None if max_open_segment_files is None else OpenSegmentFiles(max_open_segment_files)
        self._logs: dict[TopicPartition, PartitionLog] = {}
        self._dir_of: dict[TopicPartition, Path] = {}
        # The logs of each directory (a checkpoint reads them by directory: comparing paths per log
        # cost a broker with 100,000 partitions a sixth of its CPU, a snapshot every 5 s); its
        # sizes place new logs.
        self._in_dir: dict[Path, dict[TopicPartition, PartitionLog]] = {d: {} for d in self._log_dirs}
        self._closed = False
        # The checkpoint writer (background_checkpoints): the snapshot waiting for it, whether it
        # runs, and the error of its last write (raised on the caller's thread).
        self._background = background_checkpoints
        self._writer_lock = threading.Lock()
        self._writer_idle = threading.Event()
        self._writer_idle.set()
        self._queued: list[_DirOffsets] | None = None
        self._write_error: BaseException | None = None
        self.checkpoints_written = 0
        # What each checkpoint file was last written with (by _write, one call at a time): an
        # unchanged one is not written again. A broker with 100,000 idle partitions rewrote (sorted,
        # formatted, fsynced) three files of 100,000 lines every 5 s on a thread holding the GIL:
        # a sixth of its CPU, in its controlled shutdown too.
        self._written: dict[Path, list[dict[TopicPartition, int] | None]] = {}
        # The offsets of each directory's last snapshot that _write wrote (or found written): the
        # same again is not even split into the three files.
        self._written_all: dict[Path, dict[TopicPartition, tuple[int, int, int]]] = {}
        # Each directory's offsets as of the last snapshot, kept up to date from the logs whose
        # offsets moved since (``_dirty``, which the logs fill: ``track_checkpoint``), and the last
        # snapshot itself, handed out again while nothing moved. Reading every log's offsets for
        # each snapshot (every 5 s) was most of an idle broker's CPU with 100,000 partitions, and
        # 4-6 % of each broker in a controlled shutdown.
        self._offsets: dict[Path, dict[TopicPartition, tuple[int, int, int]]] = {
            d: {} for d in self._log_dirs
        }
        self._dirty: set[BasePartitionLog] = set()
        self._last_snapshot: list[_DirOffsets] | None = None
        try:
            for log_dir in self._log_dirs:
                self._open_dir(log_dir)
        except BaseException:
            for log in self._logs.values():
                log.close()
            raise

    def _open_dir(self, log_dir: Path) -> None:
        if not log_dir.is_dir():
            log_dir.mkdir(parents=True)
            fsync_dir(log_dir.parent)
        high_watermarks = read_offset_checkpoint(log_dir / REPLICATION_OFFSET_CHECKPOINT)
        start_offsets = read_offset_checkpoint(log_dir / LOG_START_OFFSET_CHECKPOINT)
        recovery_points = read_offset_checkpoint(log_dir / RECOVERY_POINT_OFFSET_CHECKPOINT)
        clean = self._clean_shutdown
        if clean is None:
            clean = has_clean_shutdown_marker(log_dir)
        removed = False
        for entry in sorted(os.listdir(log_dir)):
            path = log_dir / entry
            if not path.is_dir() or entry == METADATA_PARTITION_DIR_NAME:
                continue
            if entry.endswith(DELETE_DIR_SUFFIX):
                logger.warning("%s: removing %s, a log whose deletion was interrupted", log_dir, entry)
                shutil.rmtree(path)
                removed = True
                continue
            if entry.endswith((FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)):
                logger.warning("%s: skipping %s (future and stray logs are not supported)", log_dir, entry)
                continue
            tp = parse_partition_dir_name(entry)
            if tp is None:
                logger.warning("%s: skipping %s, not a <topic>-<partition> directory", log_dir, entry)
                continue
            if tp in self._logs:
                raise StorageError(
                    f"partition {entry} is in two log directories: {self._dir_of[tp]} and {log_dir}"
                )
            self._logs[tp] = PartitionLog(
                log_dir,
                tp[0],
                tp[1],
                None,
                high_watermark=high_watermarks.get(tp, 0),
                log_start_offset=start_offsets.get(tp),
                recovery_point=recovery_points.get(tp),
                segment_bytes=self._segment_bytes,
                segment_ms=self._segment_ms,
                now_ms=self._now_ms,
                create=False,
                clean_shutdown=clean,
                index=self._index,
                open_files=self.open_files,
            )
            self._dir_of[tp] = log_dir
            self._register(log_dir, tp, self._logs[tp])
        if removed:
            fsync_dir(log_dir)

    def _check_open(self) -> None:
        if self._closed:
            raise KraftError("log manager is closed")

    @property
    def log_dirs(self) -> list[Path]:
        return list(self._log_dirs)

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        self._check_open()
        return self._logs.get((topic, partition))

    def log_dir_of(self, topic: str, partition: int) -> Path | None:
        return self._dir_of.get((topic, partition))

    def logs(self) -> list[PartitionLog]:
        """Every open log, by (topic, partition)."""
        self._check_open()
        return [self._logs[tp] for tp in sorted(self._logs)]

    def get_or_create(self, topic: str, partition: int, topic_id: uuid.UUID) -> PartitionLog:
        """The partition's log, created empty (in the log directory with the fewest partitions) if
        there is none. An existing log opened without a topic id takes ``topic_id``.

        Raises:
            StorageError: the existing log belongs to another topic id (delete it first).
        """
        self._check_open()
        tp = (topic, partition)
        log = self._logs.get(tp)
        if log is not None:
            log.assign_topic_id(topic_id)
            return log
        log_dir = min(self._log_dirs, key=lambda d: len(self._in_dir[d]))  # first of the least loaded
        log = PartitionLog(
            log_dir,
            topic,
            partition,
            topic_id,
            segment_bytes=self._segment_bytes,
            segment_ms=self._segment_ms,
            now_ms=self._now_ms,
            index=self._index,
            open_files=self.open_files,
        )
        self._logs[tp] = log
        self._dir_of[tp] = log_dir
        self._register(log_dir, tp, log)
        return log

    def _register(self, log_dir: Path, tp: TopicPartition, log: PartitionLog) -> None:
        self._in_dir[log_dir][tp] = log
        self._offsets[log_dir][tp] = log.checkpoint_offsets()
        log.track_checkpoint(self._dirty)
        self._last_snapshot = None

    def log_dir_states(self) -> list[tuple[str, int, int, list[PartitionLog]]]:
        """Each log directory (absolute path), its volume's total and usable bytes, and its logs."""
        self._check_open()
        states = []
        for log_dir in self._log_dirs:
            try:
                usage = shutil.disk_usage(log_dir)
                total, usable = usage.total, usage.free
            except OSError:
                total = usable = -1
            in_dir = self._in_dir[log_dir]
            logs = [in_dir[tp] for tp in sorted(in_dir)]
            states.append((str(log_dir.resolve()), total, usable, logs))
        return states

    def delete(self, topic: str, partition: int) -> bool:
        """Close and delete the partition's log (rename to ``-delete``, durably, then remove); returns
        whether there was one."""
        self._check_open()
        tp = (topic, partition)
        log = self._logs.pop(tp, None)
        if log is None:
            return False
        log_dir = self._dir_of.pop(tp)
        del self._in_dir[log_dir][tp]
        del self._offsets[log_dir][tp]
        self._dirty.discard(log)
        self._last_snapshot = None
        log.close()
        doomed = log_dir / delete_dir_name(topic, partition, random_uuid(self._rng))
        os.replace(log.directory, doomed)
        fsync_dir(log_dir)
        shutil.rmtree(doomed)
        fsync_dir(log_dir)
        return True

    def checkpoint(self) -> None:
        """Write the three offset checkpoints of every log directory (each atomically); with
        ``background_checkpoints``, hand them to the writer thread and return."""
        self._check_open()
        error, self._write_error = self._write_error, None
        if error is not None:
            raise error
        snapshot = self._snapshot()
        if not self._background:
            self._write(snapshot)
            return
        with self._writer_lock:
            if not self._writer_idle.is_set():
                self._queued = snapshot  # the running write takes it next
                return
            self._writer_idle.clear()
        threading.Thread(
            target=self._write_in_background, args=(snapshot,), name="kraft-checkpoint", daemon=True
        ).start()

    def wait_for_checkpoints(self, timeout_s: float | None = None) -> bool:
        """Until the writer thread is idle (every checkpoint handed to it written); whether it is."""
        return self._writer_idle.wait(timeout_s)

    def _snapshot(self) -> list[_DirOffsets]:
        """Each directory's offsets, read on the caller's thread: those of the logs whose offsets
        moved since the last snapshot are read again, and the others kept (see ``_offsets``)."""
        dirty = self._dirty
        if dirty:
            for log in list(dirty):
                tp = (log.topic, log.partition)
                log_dir = self._dir_of.get(tp)
                if log_dir is not None and self._in_dir[log_dir].get(tp) is log:
                    self._offsets[log_dir][tp] = log.checkpoint_offsets()
            dirty.clear()
            self._last_snapshot = None
        if self._last_snapshot is None:
            # Copies: the writer thread may read them while later changes update ``_offsets``.
            self._last_snapshot = [(log_dir, dict(self._offsets[log_dir])) for log_dir in self._log_dirs]
        return self._last_snapshot

    def _write(self, snapshot: list[_DirOffsets]) -> None:
        for log_dir, offsets in snapshot:
            if self._written_all.get(log_dir) == offsets:
                continue  # (most checkpoints of a quiet broker)
            self._written_all.pop(log_dir, None)
            high_watermarks = {tp: o[0] for tp, o in offsets.items()}
            start_offsets = {tp: o[1] for tp, o in offsets.items()}
            recovery_points = {tp: o[2] for tp, o in offsets.items()}
            written = self._written.setdefault(log_dir, [None, None, None])
            files = (
                (REPLICATION_OFFSET_CHECKPOINT, high_watermarks),
                (LOG_START_OFFSET_CHECKPOINT, start_offsets),
                (RECOVERY_POINT_OFFSET_CHECKPOINT, recovery_points),
            )
            for i, (name, entries) in enumerate(files):
                if written[i] == entries:
                    continue  # the file holds these already, durably
                written[i] = None  # unknown until the write below succeeds
                write_offset_checkpoint(log_dir / name, entries)
                written[i] = entries
            self._written_all[log_dir] = offsets
        self.checkpoints_written += 1

    def _write_in_background(self, snapshot: list[_DirOffsets]) -> None:
        next_: list[_DirOffsets] | None = snapshot
        while next_ is not None:
            try:
                self._write(next_)
            except BaseException as e:  # raised on the caller's thread at its next checkpoint()
                logger.error("writing the offset checkpoints failed: %s", e)
                self._write_error = e
            with self._writer_lock:
                next_, self._queued = self._queued, None
                if next_ is None:
                    self._writer_idle.set()

    def flush_all(self, *, now_ms: int | None = None) -> None:
        self._check_open()
        for tp in sorted(self._logs):
            self._logs[tp].flush(now_ms=now_ms)

    def close(self) -> None:
        """Flush every log (so every recovery point is its log end), checkpoint, close."""
        if self._closed:
            return
        self.flush_all()
        self._writer_idle.wait()
        self._write_error = None  # the final checkpoint below replaces whatever it failed to write
        self._write(self._snapshot())
        for log in self._logs.values():
            log.close()
        self._closed = True
