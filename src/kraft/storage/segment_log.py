"""``SegmentLog``: one partition's log of RecordBatch v2 bytes on segment files, with crash recovery.

This is the one log on disk. The metadata log (``kraft.storage.metadata_log.MetadataLog``) is a
``SegmentLog`` plus snapshots; a data partition's log will be a ``SegmentLog`` plus a high-watermark
checkpoint and retention (Kafka keeps both per log directory: ``replication-offset-checkpoint`` and
``log-start-offset-checkpoint``; that layer will read its start offset back through the
``log_start_offset`` hook of the constructor, and retention will call ``advance_start_offset``).
This module knows nothing of snapshots, of raft, or of which topic it holds: the layer above names
the directory (``kraft.storage.log_dir.partition_dir``) and owns every other file in it.

Files this log owns in its directory::

    00000000000000000000.log        segment: RecordBatch v2 bytes, named by its base offset
    00000000000000004096.log        the last segment is the active one (appends go here)
    00000000000000004096.index      its sparse offset index   } with ``index=IndexConfig()`` (data
    00000000000000004096.timeindex  its sparse time index     } partitions); kraft.storage.segment_index
    leader-epoch-checkpoint         Kafka's text epoch cache (version, count, "epoch offset")

Each segment has Kafka's sparse offset and time indexes (``segment_index``): an entry about every
``log.index.interval.bytes``. Reads find a batch from the last offset entry at or below its offset
and walk batch headers forward from there; ListOffsets by time goes from the segments' largest
timestamps to the time index. The metadata log keeps them in memory only (``MEMORY_INDEXES``, the
default): it is scanned whole at every open anyway, which its snapshots keep short, and its
directory stays as it was. Data partitions keep them in ``.index``/``.timeindex`` files as Kafka.

Durability: appends go to the OS; ``flush()`` fdatasyncs unsynced segments, fsyncs the directory if
files were created or deleted, and rewrites the epoch checkpoint if it changed. The caller decides
when (the raft core flushes before acknowledging). Rolling a segment fsyncs the finished one, so
only the last segment can ever have a torn tail. Truncation is fsynced at once (it is rare, and a
half-persisted truncation followed by new appends could otherwise look like mid-log corruption).

Recovery at open (main invariant: nothing flushed is lost, nothing corrupt is served):

* which segments are scanned: all of them by default; with index files, after a clean shutdown
  none, else (``recover_from``, the recovery point) the one holding the recovery point and every
  later one, as Kafka's ``LogLoader``. A segment not scanned opens from its index files (checked,
  see ``segment_index``; only the batches after the last offset entry of the last segment are read
  to find its end) and its epochs come from the checkpoint; a missing or corrupt index, or a missing
  checkpoint, makes it scanned. A scanned segment's indexes are rebuilt and rewritten;
* a scanned segment is read batch by batch: header, length, magic, CRC-32C, dense offsets and
  non-decreasing epochs are checked, and consecutive segments must meet (each begins where the one
  before ends);
* an invalid batch in the *last* segment with no valid batch after it is a torn tail: the file is
  truncated there and the drop is recorded in ``recovery_report`` (and logged);
* an invalid batch anywhere else (a non-last segment, or followed by a valid batch) is corruption of
  data that may have been acknowledged. By default open refuses with a ``StorageError`` naming file
  and position (the metadata log: a voter must not forget committed records); with
  ``truncate_corruption`` (data partitions, as Kafka's ``LogLoader``) the segment is cut at that
  batch and every later segment deleted, recorded in ``recovery_report.truncated_tails``;
* the log start offset comes from the layer above (``log_start_offset``), else it is the first
  segment's base offset; it must lie within the offsets the segments hold;
* the epoch cache is derived from the batches (from the start offset on); the checkpoint is used
  as-is only when it agrees, and is otherwise rewritten (missing, unparsable, or ahead of the log
  after a crash);
* leftover ``.log.deleted`` files, checkpoint temp files and index files without a segment are
  removed.

Not covered by any checksum in the v2 format: baseOffset (checked by density) and
partitionLeaderEpoch (checked only for monotonicity), so a flipped bit in the latter can go unnoticed.

Truncation to an offset inside a batch removes the whole batch (the log end becomes its base offset):
the log's unit is the batch.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import dataclasses
import logging
import os
import re
import struct
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import NamedTuple

from kraft.common.errors import CorruptRecordError, FatalError, KraftError, StorageError
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    BatchHeader,
    assign_offsets_and_epoch,
    batch_crc_valid,
    find_valid_batch,
    read_batch_header,
)
from kraft.storage.epoch_cache import CHECKPOINT_FILE, EpochEntry, LeaderEpochCache, read_checkpoint
from kraft.storage.epoch_cache import write_checkpoint as write_epoch_checkpoint
from kraft.storage.fsutil import fsync_dir, pwrite_all
from kraft.storage.segment_index import (
    OFFSET_INDEX_SUFFIX,
    TIME_INDEX_SUFFIX,
    CorruptIndexError,
    IndexConfig,
    SegmentIndexes,
)

logger = logging.getLogger(__name__)

SEGMENT_SUFFIX = ".log"
DELETED_SEGMENT_SUFFIX = ".log.deleted"
# Kafka's metadata.log.segment.bytes default (1 GiB).
DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024
_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
_SCAN_CHUNK = 4 * 1024 * 1024
# How much a walk over batch headers (from an index entry to a batch) reads at a time.
_WALK_CHUNK = 16 * 1024
# Batches whose positions the active segment remembers (``_Segment.remember_tail``): 16 to 32,
# which covers followers and consumers that keep up, in at most 768 bytes a partition.
_TAIL_BATCHES = 32
_MAX_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
_BASE_AND_LENGTH = struct.Struct(">qi")
_LAST_OFFSET_DELTA_AT = 23
_WALK_HEADER_BYTES = _LAST_OFFSET_DELTA_AT + 4
# The metadata log's default: indexes in memory, rebuilt by the full scan at every open.
MEMORY_INDEXES = IndexConfig(files=False)

_fdatasync = getattr(os, "fdatasync", os.fsync)


def segment_file_name(base_offset: int) -> str:
    return f"{base_offset:020d}{SEGMENT_SUFFIX}"


def parse_segment_file_name(name: str) -> int | None:
    """The base offset of a segment file name; ``None`` for any other name."""
    m = _SEGMENT_NAME.match(name)
    return None if m is None else int(m.group(1))


@dataclass(frozen=True, slots=True)
class TruncatedTail:
    """A torn or corrupt tail cut off at open: of the last segment, or (``truncate_corruption``)
    of the first segment with an invalid batch, the later segments deleted (``segments_deleted``)."""

    file: Path
    position: int
    bytes_dropped: int
    reason: str
    segments_deleted: tuple[Path, ...] = ()


class SegmentInfo(NamedTuple):
    """One segment as retention and ListOffsets see it."""

    base_offset: int
    next_offset: int
    size: int
    max_timestamp: int


@dataclass(slots=True)
class RecoveryReport:
    """What open had to repair. Empty after a clean shutdown.

    A layer above may pass a subclass to the ``SegmentLog`` constructor to record its own repairs
    in the same report (``MetadataRecoveryReport``); every field is falsy until a repair is recorded.
    """

    truncated_tails: list[TruncatedTail] = field(default_factory=list)
    removed_files: list[Path] = field(default_factory=list)
    epoch_cache_rebuilt: bool = False
    epoch_cache_reason: str | None = None
    rebuilt_indexes: list[Path] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self))


class _Tail:
    """The base offset, last offset and position of the active segment's last 16 to 32 batches
    (each column an array of int64: 768 bytes at most)."""

    __slots__ = ("bases", "lasts", "positions")

    def __init__(self) -> None:
        self.bases: array[int] = array("q")
        self.lasts: array[int] = array("q")
        self.positions: array[int] = array("q")

    def add(self, base: int, last: int, position: int) -> None:
        if len(self.bases) >= _TAIL_BATCHES:
            half = _TAIL_BATCHES // 2
            del self.bases[:half], self.lasts[:half], self.positions[:half]
        self.bases.append(base)
        self.lasts.append(last)
        self.positions.append(position)


class OpenSegmentFiles:
    """At most ``limit`` segment files open at once among the logs that share this (a broker's
    partition logs): the least recently used one is closed to open another, and reopened when it is
    next read or written. Kafka holds a descriptor for every segment of every log, and a broker with
    more segments than ``ulimit -n`` fails; here a broker hosts as many partitions as it likes within
    a fixed number of descriptors, and idle partitions hold none.

    Eviction is the clock (second-chance) algorithm over a queue: a use only marks the segment; the
    head of the queue, if marked, is unmarked and moved to the back, else closed. Closing a file
    loses nothing: written bytes are in the page cache, and ``fdatasync`` on the reopened
    descriptor makes them durable (the file's, not the descriptor's). Every operation is O(1)
    amortized (a segment closed for good is only marked; the queue drops it when it comes up, or in
    a sweep once such entries outnumber the open ones). Single-threaded, as ``SegmentLog`` is.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise KraftError(f"the open segment file limit must be positive, got {limit}")
        self.limit = limit
        self._clock: collections.deque[_Segment] = collections.deque()  # open ones, and stale entries
        self._open = 0  # segments open (in the queue)
        self._stale = 0  # queue entries of segments closed for good
        self.reopened = 0
        self.evicted = 0

    @property
    def open_count(self) -> int:
        return self._open

    def adopt(self, segment: _Segment) -> None:
        """``segment`` was just opened: count it (closing another if the limit is reached)."""
        while self._open >= self.limit:
            self._evict_one()
        self._clock.append(segment)
        segment.queued = True
        self._open += 1

    def reopen(self, segment: _Segment) -> int:
        while self._open >= self.limit:
            self._evict_one()  # first: the limit holds while the file opens
        fd = segment._fd = os.open(segment.path, os.O_RDWR)
        segment.used = True
        self.adopt(segment)  # (room made: it closes nothing)
        self.reopened += 1
        return fd

    def forget(self, segment: _Segment) -> None:
        """``segment`` is being closed for good: its queue entry goes stale."""
        if not segment.queued:
            return
        segment.queued = False
        self._open -= 1
        self._stale += 1
        if self._stale > self._open + 1024:
            self._clock = collections.deque(s for s in self._clock if s.queued)
            self._stale = 0

    def _evict_one(self) -> None:
        clock = self._clock
        while True:
            segment = clock.popleft()
            if not segment.queued:
                self._stale -= 1
                continue
            if segment.used:
                segment.used = False
                clock.append(segment)
                continue
            segment.queued = False
            self._open -= 1
            fd, segment._fd = segment._fd, -1
            os.close(fd)
            self.evicted += 1
            return


class _Segment:
    """One segment file, open read-write (or, sharing an ``OpenSegmentFiles``, reopened on use),
    with its sparse offset and time indexes."""

    __slots__ = (
        "_fd",
        "base_offset",
        "closed",
        "files",
        "first_timestamp",
        "indexes",
        "next_offset",
        "path",
        "queued",
        "size",
        "synced_size",
        "tail",
        "used",
    )

    def __init__(
        self,
        path: Path,
        base_offset: int,
        fd: int,
        indexes: SegmentIndexes,
        files: OpenSegmentFiles | None = None,
    ) -> None:
        self.path = path
        self.base_offset = base_offset
        self._fd = fd
        self.files = files
        self.used = True
        self.queued = False  # in ``files``'s queue (open under its limit)
        self.closed = False
        self.size = 0
        self.synced_size = 0
        self.next_offset = base_offset
        self.indexes = indexes
        self.first_timestamp: int | None = None  # max timestamp of the first batch, once read
        # The batches appended last, up to the segment's end: base offset, last offset and position
        # of each. Followers and consumers that keep up read there, where a walk from the last index
        # entry unpacks up to index.interval.bytes of headers (12 us a read against 3.5 from here).
        # Cleared when the segment is cut or rolled (only the active segment keeps them).
        # None until the first append (most segments of a broker with many partitions are idle).
        self.tail: _Tail | None = None
        if files is not None:
            files.adopt(self)

    @property
    def fd(self) -> int:
        """The file's descriptor, reopened if the shared limit closed it (-1 once closed for good).
        Use it at once: reading another segment's may close this one."""
        fd = self._fd
        if fd >= 0:
            self.used = True
            return fd
        if self.closed or self.files is None:
            return -1
        return self.files.reopen(self)

    def remember_tail(self, base: int, last: int, position: int) -> None:
        tail = self.tail
        if tail is None:
            tail = self.tail = _Tail()
        tail.add(base, last, position)

    def forget_tail(self) -> None:
        self.tail = None

    def close(self) -> None:
        self.closed = True
        if self.files is not None:
            self.files.forget(self)
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


class SegmentLog:
    """A log of whole RecordBatch v2 batches on segment files. Single-threaded: the caller serializes
    all calls.

    Lifecycle: ``SegmentLog(dir)`` opens (and recovers) the log; ``close()`` releases the files;
    ``crash()`` models a power loss for tests (unflushed bytes are discarded from the files).

    Args:
        directory: the partition directory (created if missing and ``create``).
        segment_bytes: roll to a new segment when the active one would grow past this.
        verify_crc_on_read: check every batch ``read`` returns against its CRC.
        initial_offset: base offset of the first segment when the directory holds none (where the
            layer above says its log resumes, e.g. after the metadata log's latest snapshot).
        log_start_offset: called once at open, after the segments are recovered and the epoch cache
            derived, before the checkpoint is reconciled; returns the log start offset (default: the
            first segment's base offset). It may replace the log with
            ``truncate_fully_and_start_at``; the offset it returns must lie within the segments.
        recovery_report: where open records its repairs (default: a new ``RecoveryReport``).
        index: the sparse indexes' interval and size, and whether they live in ``.index`` and
            ``.timeindex`` files (default: in memory only, rebuilt by the scan at open).
        recover_from: the recovery point: segments wholly below it are opened from their index
            files without a scan (a missing or corrupt index makes it scanned); the segment that
            holds it and every later one are scanned. ``None``: scan every segment.
        clean_shutdown: the log was closed cleanly (every index sealed): no segment is scanned.
        sync_new: when the log holds no byte (a new directory, or only empty segments), make it
            durable at open anyway (its segment file, the directory entries, the epoch checkpoint).
            False leaves that to the first ``flush()``: an empty log has nothing to lose, and a
            broker that hosts thousands of empty partitions must not fsync each one at creation or
            at every start (Kafka also writes a new log's files unsynced and flushes its directory
            at the first flush).
        truncate_corruption: an invalid batch before the tail (in a scanned segment) cuts the log
            there, as Kafka does for its partition logs, instead of refusing to open. For data
            partitions: a broker that restarted uncleanly is out of the ISR and the ELR, and fetches
            again what it lost from the leader.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        create: bool = True,
        verify_crc_on_read: bool = False,
        initial_offset: int = 0,
        log_start_offset: Callable[[SegmentLog], int] | None = None,
        recovery_report: RecoveryReport | None = None,
        index: IndexConfig = MEMORY_INDEXES,
        recover_from: int | None = None,
        clean_shutdown: bool = False,
        sync_new: bool = True,
        truncate_corruption: bool = False,
        open_files: OpenSegmentFiles | None = None,
    ) -> None:
        if segment_bytes < 1:
            raise KraftError(f"segment_bytes must be positive, got {segment_bytes}")
        self._dir = Path(directory)
        self._segment_bytes = segment_bytes
        self._verify_crc_on_read = verify_crc_on_read
        self._index_config = index
        # Index files are trusted only where a recovery point or a clean shutdown vouches for them.
        self._recover_from = recover_from if index.files else None
        self._clean_shutdown = clean_shutdown and index.files
        self._segments: list[_Segment] = []
        self._segment_bases: list[int] = []
        self._cache = LeaderEpochCache()
        self._checkpoint_dirty = False
        self._dir_dirty = False
        self._start_offset = 0
        self._flushed_offset = 0
        self._closed = False
        self._sync_new = sync_new
        self._truncate_corruption = truncate_corruption
        self._files = open_files
        self.recovery_report = RecoveryReport() if recovery_report is None else recovery_report
        if not self._dir.is_dir():
            if not create:
                raise StorageError(f"log directory {self._dir} does not exist")
            self._dir.mkdir(parents=True, exist_ok=True)
            fsync_dir(self._dir.parent)
        try:
            self._open(initial_offset, log_start_offset)
        except BaseException:
            self._close_files()
            raise

    # ------------------------------------------------------------------ open and recovery

    def _open(self, initial_offset: int, log_start_offset: Callable[[SegmentLog], int] | None) -> None:
        report = self.recovery_report
        for name in sorted(os.listdir(self._dir)):
            if name.endswith(
                (DELETED_SEGMENT_SUFFIX, CHECKPOINT_FILE + ".tmp", ".index.deleted", ".timeindex.deleted")
            ):
                path = self._dir / name
                os.unlink(path)
                report.removed_files.append(path)
                self._dir_dirty = True
                logger.warning("%s: removed leftover file %s", self._dir, name)

        seg_files: list[tuple[int, Path]] = []
        for name in os.listdir(self._dir):
            base = parse_segment_file_name(name)
            if base is not None:
                seg_files.append((base, self._dir / name))
        seg_files.sort()
        indexed = self._remove_orphan_indexes({base for base, _ in seg_files})
        trusted = self._trusted_segments(seg_files)
        # Epochs below the first scanned segment come from the checkpoint (its batches are not read).
        first_scanned = seg_files[trusted][0] if trusted < len(seg_files) else None
        if trusted:
            stored = self._stored_epochs()
            assert stored is not None  # _trusted_segments trusts nothing without a checkpoint
            for entry in stored:
                if first_scanned is None or entry.start_offset < first_scanned:
                    self._cache.assign(entry.epoch, entry.start_offset)
        last_epoch = self._cache.latest_epoch()
        last_epoch = -1 if last_epoch is None else last_epoch
        for i, (base, path) in enumerate(seg_files):
            if self._segments and base != self._segments[-1].next_offset:
                prev = self._segments[-1]
                gap = (
                    f"segment {path} starts at offset {base} but {prev.path} "
                    f"ends before offset {prev.next_offset}"
                )
                if not self._truncate_corruption:
                    raise StorageError(gap)
                # The log ends where it stops being contiguous (also what a crash between cutting
                # a segment and deleting the ones after it leaves behind).
                self._delete_segment_files(seg_files[i:])
                report.removed_files.extend(later for _, later in seg_files[i:])
                logger.warning("%s: %s: deleted it and every later segment", self._dir, gap)
                break
            is_last = i == len(seg_files) - 1
            next_base = None if is_last else seg_files[i + 1][0]
            has_index_files = base in indexed
            loaded = (
                self._load_indexed_segment(path, base, next_base, has_index_files) if i < trusted else None
            )
            if loaded is None:
                segment, last_epoch = self._load_segment(
                    path,
                    base,
                    is_last=is_last,
                    last_epoch=last_epoch,
                    epochs=i >= trusted,
                    has_index_files=has_index_files,
                )
            else:
                segment = loaded
            self._append_segment(segment)
            tails = report.truncated_tails
            if not is_last and tails and tails[-1].file == path:  # cut here: the rest goes
                deleted = tuple(later for _, later in seg_files[i + 1 :])
                self._delete_segment_files(seg_files[i + 1 :])
                tails[-1] = dataclasses.replace(tails[-1], segments_deleted=deleted)
                logger.warning("%s: deleted %d segments after the cut", self._dir, len(deleted))
                break
        if not self._segments:
            self._append_segment(self._create_segment(initial_offset))

        start = self._segments[0].base_offset if log_start_offset is None else log_start_offset(self)
        first_base = self._segments[0].base_offset
        if not first_base <= start <= self.end_offset():
            raise StorageError(
                f"{self._dir}: log start offset {start} is outside the offsets the segments hold "
                f"[{first_base}, {self.end_offset()}]"
            )
        self._start_offset = start
        self._cache.truncate_from_start(start)
        self._reconcile_checkpoint()

        if not self._sync_new and not any(segment.size for segment in self._segments):
            # Nothing written yet: the empty segment, the directory entries and the epoch checkpoint
            # become durable at the first flush (they are marked dirty).
            self._flushed_offset = self.end_offset()
            return
        # Whatever survived in the page cache from before a process crash is made durable now, so
        # that last_flushed_offset() is truthful from the start.
        _fdatasync(self._segments[-1].fd)
        self.flush()

    def _delete_segment_files(self, segments: list[tuple[int, Path]]) -> None:
        """Delete these segments, last first, then their now orphan index files, durably (an open
        that cut the log: the segments after the cut must not come back)."""
        for _, path in reversed(segments):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self._remove_orphan_indexes({segment.base_offset for segment in self._segments})
        fsync_dir(self._dir)

    def _reconcile_checkpoint(self) -> None:
        path = self._dir / CHECKPOINT_FILE
        derived = list(self._cache.entries)
        reason: str | None
        try:
            stored = read_checkpoint(path)
        except StorageError as e:
            stored, reason = None, f"unreadable checkpoint: {e}"
        else:
            reason = "checkpoint missing" if stored is None else None
        if stored is not None and stored != derived:
            ahead = [e for e in stored if e.start_offset >= self.end_offset()]
            reason = (
                f"checkpoint is ahead of the log end offset {self.end_offset()}: {ahead}"
                if ahead
                else f"checkpoint {stored} disagrees with the batches {derived}"
            )
        if stored is None and not derived:
            self._checkpoint_dirty = True  # a new or emptied log: nothing to rebuild
            return
        if reason is not None:
            self.recovery_report.epoch_cache_rebuilt = True
            self.recovery_report.epoch_cache_reason = reason
            self._checkpoint_dirty = True
            logger.warning("%s: rebuilt the epoch cache from the log batches (%s)", self._dir, reason)

    def _remove_orphan_indexes(self, bases: set[int]) -> set[int]:
        """Index files whose segment is gone (a crash between deleting a segment and its indexes);
        returns the segments of ``bases`` that have an index file."""
        indexed: set[int] = set()
        for name in sorted(os.listdir(self._dir)):
            stem, dot, suffix = name.partition(".")
            is_index = dot and "." + suffix in (OFFSET_INDEX_SUFFIX, TIME_INDEX_SUFFIX)
            if is_index and len(stem) == 20 and stem.isdigit():
                if int(stem) in bases:
                    indexed.add(int(stem))
                else:
                    os.unlink(self._dir / name)
                    self._dir_dirty = True
        return indexed

    def _stored_epochs(self) -> list[EpochEntry] | None:
        try:
            return read_checkpoint(self._dir / CHECKPOINT_FILE)
        except StorageError:
            return None

    def _trusted_segments(self, seg_files: list[tuple[int, Path]]) -> int:
        """How many leading segments may open from their indexes without a scan: all of them after a
        clean shutdown, else those wholly below the recovery point; none without an epoch checkpoint
        (their batches' epochs would be unknown) or without index files."""
        if not seg_files or not self._index_config.files or self._stored_epochs() is None:
            return 0
        if self._clean_shutdown:
            return len(seg_files)
        if self._recover_from is None:
            return 0
        count = 0
        while count + 1 < len(seg_files) and seg_files[count + 1][0] <= self._recover_from:
            count += 1
        return count

    def _new_indexes(self, base_offset: int) -> SegmentIndexes:
        return SegmentIndexes(self._dir, base_offset, self._index_config)

    def _load_indexed_segment(
        self, path: Path, base_offset: int, next_base: int | None, has_index_files: bool
    ) -> _Segment | None:
        """Open a segment from its index files, reading no batch but those after the last offset
        index entry of the last segment (to find its end, as Kafka's ``readNextOffset``). ``None``
        when the indexes are missing or corrupt, or the tail walk fails: the caller scans it."""
        fd = os.open(path, os.O_RDWR)
        indexes = self._new_indexes(base_offset)
        segment = _Segment(path, base_offset, fd, indexes, self._files)
        try:
            size = os.fstat(fd).st_size
            indexes.load(size)
            position = indexes.positions[-1] if indexes.positions else 0
            next_offset = base_offset
            if indexes.offsets:
                header = self._header_at(fd, position)
                if header is None or header.base_offset > indexes.offsets[-1]:
                    raise CorruptIndexError("the last offset index entry does not point at its batch")
            # Walk the batches after the last entry: the tail of the segment (bounded by the interval).
            while position < size:
                header = self._header_at(fd, position)
                if header is None or position + header.size_in_bytes > size:
                    raise CorruptIndexError(f"no whole batch at position {position}")
                next_offset = header.next_offset
                position += header.size_in_bytes
            if next_base is not None and next_offset != next_base and size > 0:
                raise CorruptIndexError(
                    f"segment ends at offset {next_offset}, the next begins at {next_base}"
                )
            segment.next_offset = next_base if next_base is not None else next_offset
            if next_base is None and size == 0:
                segment.next_offset = base_offset
            segment.size = segment.synced_size = size
            indexes.bytes_since_entry = size - (indexes.positions[-1] if indexes.positions else 0)
            indexes.attach_files(present=has_index_files)
        except (CorruptIndexError, OSError, CorruptRecordError) as e:
            segment.close()
            self.recovery_report.rebuilt_indexes.append(path)
            logger.warning("%s: rebuilding the indexes of %s (%s)", self._dir, path.name, e)
            return None
        return segment

    @staticmethod
    def _header_at(fd: int, position: int) -> BatchHeader | None:
        return read_batch_header(os.pread(fd, HEADER_SIZE, position))

    def _load_segment(
        self,
        path: Path,
        base_offset: int,
        *,
        is_last: bool,
        last_epoch: int,
        epochs: bool = True,
        has_index_files: bool = True,
    ) -> tuple[_Segment, int]:
        """Open and scan one segment, rebuilding its indexes; returns it and the epoch of its last
        batch (else ``last_epoch``). ``epochs`` False: a segment the checkpoint covers (re-scanned
        only for a bad index), whose epochs are already in the cache."""
        fd = os.open(path, os.O_RDWR)
        segment = _Segment(path, base_offset, fd, self._new_indexes(base_offset), self._files)
        try:
            file_size = os.fstat(fd).st_size
            position, reason, last_epoch = self._scan(segment, file_size, last_epoch, epochs)
        except BaseException:
            segment.close()
            raise
        segment.size = position
        segment.synced_size = position
        if reason is None:
            if file_size == 0 and not has_index_files:
                # Empty, and no index files to bring in line: nothing to write or delete at close
                # (a broker stopping with 15,000 empty partitions unlinked 30,000 absent files).
                segment.indexes.attach_files(present=False)
            else:
                segment.indexes.open_files()
            if not is_last:
                segment.indexes.seal()  # as the roll that finished it did
            return segment, last_epoch
        where = f"{path} at position {position} (offset {segment.next_offset})"
        if not is_last and not self._truncate_corruption:
            segment.close()
            raise StorageError(f"corrupt batch in non-last segment {where}: {reason}")
        follower = (
            None
            if self._truncate_corruption
            else self._find_valid_batch_after(fd, position, file_size, segment.next_offset)
        )
        if follower is not None:
            segment.close()
            raise StorageError(
                f"corrupt batch in {where}: {reason}; a valid batch follows at position {follower}, "
                f"so this is not a torn tail and flushed data may be damaged"
            )
        dropped = file_size - position
        os.ftruncate(fd, position)
        _fdatasync(fd)
        segment.indexes.open_files()
        self.recovery_report.truncated_tails.append(TruncatedTail(path, position, dropped, reason))
        logger.warning(
            "%s: truncated a torn tail of %d bytes at position %d (%s)", path, dropped, position, reason
        )
        return segment, last_epoch

    def _scan(
        self, segment: _Segment, file_size: int, last_epoch: int, epochs: bool = True
    ) -> tuple[int, str | None, int]:
        """Index the valid batches of ``segment`` and enter their epochs in the epoch cache.

        Returns (end of the valid prefix, why it stopped or None, epoch of the last valid batch).
        """
        fd = segment.fd
        indexes = segment.indexes
        cache = self._cache
        cached_epoch = cache.latest_epoch()
        buf = b""
        buf_start = 0  # file position of buf[0]
        position = 0
        while position < file_size:
            rel = position - buf_start
            if len(buf) - rel < HEADER_SIZE and buf_start + len(buf) < file_size:
                buf = buf[rel:] + os.pread(fd, max(_SCAN_CHUNK, HEADER_SIZE), buf_start + len(buf))
                buf_start, rel = position, 0
            try:
                header = read_batch_header(buf, rel)
            except CorruptRecordError as e:
                reason = "invalid batch header: " + str(e).replace(f"position {rel}", f"position {position}")
                return position, reason, last_epoch
            if header is None:
                return (
                    position,
                    f"short batch header ({file_size - position} bytes before end of file)",
                    last_epoch,
                )
            size = header.size_in_bytes
            if position + size > file_size:
                return (
                    position,
                    f"batch length {header.batch_length} runs past the end of the file",
                    last_epoch,
                )
            if len(buf) - rel < size:
                buf = buf[rel:] + os.pread(
                    fd, max(_SCAN_CHUNK, size - (len(buf) - rel)), buf_start + len(buf)
                )
                buf_start, rel = position, 0
            if not batch_crc_valid(buf, rel, header):
                return position, f"CRC mismatch in batch at offset {header.base_offset}", last_epoch
            if header.base_offset != segment.next_offset:
                return (
                    position,
                    f"batch has base offset {header.base_offset}, expected {segment.next_offset}",
                    last_epoch,
                )
            epoch = header.partition_leader_epoch
            if epochs:
                if epoch < last_epoch:
                    return position, f"batch epoch {epoch} is below the previous {last_epoch}", last_epoch
                last_epoch = epoch
                if cached_epoch is None or epoch > cached_epoch:
                    cache.assign(epoch, header.base_offset)
                    cached_epoch = epoch
            last = header.base_offset + header.last_offset_delta
            indexes.on_batch(position, last, header.max_timestamp, size)
            segment.next_offset = last + 1
            position += size
        return position, None, last_epoch

    @staticmethod
    def _find_valid_batch_after(fd: int, position: int, file_size: int, next_offset: int) -> int | None:
        """Position of a CRC-valid batch at or after ``next_offset`` anywhere after ``position``."""
        data = os.pread(fd, file_size - position, position) if file_size > position else b""
        found = find_valid_batch(data, next_offset)
        return None if found is None else position + found

    # ------------------------------------------------------------------ segments

    def _append_segment(self, segment: _Segment) -> None:
        self._segments.append(segment)
        self._segment_bases.append(segment.base_offset)

    def _create_segment(self, base_offset: int) -> _Segment:
        path = self._dir / segment_file_name(base_offset)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise StorageError(f"segment {path} already exists") from None
        self._dir_dirty = True
        segment = _Segment(path, base_offset, fd, self._new_indexes(base_offset), self._files)
        # A new segment has no index files (an orphan of a crash is removed at open, and a deleted
        # segment's go with it): none to delete at close. A broker stopping with 100,000 partitions
        # created in its run unlinked 200,000 absent files (half of closing its logs).
        segment.indexes.attach_files(present=False)
        return segment

    def _roll(self) -> _Segment:
        old = self._segments[-1]
        # Only the last segment may have a torn tail: make the finished one durable before any byte
        # goes to the next; its indexes get their final time entry, are trimmed and made durable.
        if old.synced_size < old.size:
            _fdatasync(old.fd)
            old.synced_size = old.size
        old.indexes.seal()
        old.forget_tail()
        segment = self._create_segment(self.end_offset())
        self._append_segment(segment)
        return segment

    def _delete_segment_file(self, segment: _Segment) -> None:
        segment.close()
        doomed = segment.path.with_name(segment.path.name + ".deleted")
        os.replace(segment.path, doomed)
        os.unlink(doomed)
        # Indexes after the segment: a crash in between leaves orphans, which open removes.
        segment.indexes.delete_files()
        self._dir_dirty = True

    def _write_checkpoint(self) -> None:
        write_epoch_checkpoint(self._dir / CHECKPOINT_FILE, self._cache.entries)
        self._checkpoint_dirty = False

    # ------------------------------------------------------------------ positions

    @property
    def directory(self) -> Path:
        return self._dir

    def set_segment_bytes(self, segment_bytes: int) -> None:
        """Take a new ``segment.bytes`` (a topic config change): the next append rolls by it; the
        segments already written stay as they are, as in Kafka."""
        if segment_bytes < 1:
            raise KraftError(f"segment_bytes must be positive, got {segment_bytes}")
        self._segment_bytes = segment_bytes

    def set_index_config(self, interval_bytes: int | None, max_bytes: int | None) -> None:
        """Take a new ``index.interval.bytes`` / ``segment.index.bytes`` (``None``: unchanged): the
        segments created from now on index by them; the ones already written, the active one
        included, keep theirs, as Kafka's segments keep the sizes they were created with."""
        if interval_bytes is not None and interval_bytes < 0:
            raise KraftError(f"index interval must not be negative, got {interval_bytes}")
        if max_bytes is not None and max_bytes < 4:
            raise KraftError(f"index size must be at least 4 bytes, got {max_bytes}")
        old = self._index_config
        self._index_config = dataclasses.replace(
            old,
            interval_bytes=old.interval_bytes if interval_bytes is None else interval_bytes,
            max_bytes=old.max_bytes if max_bytes is None else max_bytes,
        )

    @property
    def closed(self) -> bool:
        return self._closed

    def start_offset(self) -> int:
        return self._start_offset

    def end_offset(self) -> int:
        return self._segments[-1].next_offset

    def last_flushed_offset(self) -> int:
        return self._flushed_offset

    def segment_paths(self) -> list[Path]:
        return [s.path for s in self._segments]

    def segment_base_offsets(self) -> list[int]:
        return list(self._segment_bases)

    def size_in_bytes(self) -> int:
        """Bytes of every segment (Kafka's ``UnifiedLog.size``)."""
        return sum(s.size for s in self._segments)

    def segment_infos(self) -> list[SegmentInfo]:
        """(base offset, next offset, size, largest timestamp) per segment, oldest first."""
        return [
            SegmentInfo(s.base_offset, s.next_offset, s.size, s.indexes.max_timestamp) for s in self._segments
        ]

    def active_first_timestamp(self) -> int | None:
        """The max timestamp of the active segment's first batch (Kafka's ``rollingBasedTimestamp``);
        ``None`` when the active segment is empty."""
        segment = self._segments[-1]
        if not segment.size:
            return None
        if segment.first_timestamp is None:
            header = self._header_at(segment.fd, 0)
            assert header is not None
            segment.first_timestamp = header.max_timestamp
        return segment.first_timestamp

    def timestamp_search_offset(self, timestamp_ms: int, from_offset: int) -> int | None:
        """An offset at or after ``from_offset`` and at or before the first batch (holding offsets at
        or after ``from_offset``) whose max timestamp is >= ``timestamp_ms``, from the segments'
        largest timestamps and time indexes; ``None`` when no such segment exists."""
        for segment in self._segments:
            if segment.next_offset <= from_offset or segment.indexes.max_timestamp < timestamp_ms:
                continue
            return max(segment.indexes.lookup_time(timestamp_ms), from_offset)
        return None

    # ------------------------------------------------------------------ epochs

    def latest_epoch(self) -> int | None:
        """The epoch of the last entry of the epoch cache; ``None`` when it is empty."""
        return self._cache.latest_epoch()

    def epoch_entries(self) -> tuple[EpochEntry, ...]:
        """The epoch cache, oldest first (for tools and tests)."""
        return self._cache.entries

    def initialize_leader_epoch(self, epoch: int) -> None:
        """A new leader's ``epoch`` starts at ``end_offset()`` (Kafka's ``assignEpochStartOffset``).

        Raises:
            FatalError: ``epoch`` is below the latest epoch of the log.
        """
        self._check_open()
        latest = self._cache.latest_epoch()
        if latest is not None and epoch < latest:
            raise FatalError(f"cannot start leader epoch {epoch}: the log is already at epoch {latest}")
        if self._cache.assign(epoch, self.end_offset()):
            self._checkpoint_dirty = True

    def end_offset_for_epoch(self, epoch: int, floor_epoch: int) -> OffsetAndEpoch:
        """(start of the first epoch above ``epoch``, largest epoch <= ``epoch``), or (end offset,
        latest epoch); ``floor_epoch`` stands for the largest epoch when the cache holds none at or
        below ``epoch`` (see ``LeaderEpochCache.end_offset_for``)."""
        return self._cache.end_offset_for(epoch, self.end_offset(), floor_epoch)

    # ------------------------------------------------------------------ appends

    def _parse(self, batches: bytes) -> list[tuple[int, BatchHeader]]:
        """Validate a run of whole batches; raises ``CorruptRecordError`` and changes nothing."""
        if not batches:
            raise KraftError("attempt to append an empty set of batches")
        out: list[tuple[int, BatchHeader]] = []
        pos = 0
        while pos < len(batches):
            header = read_batch_header(batches, pos)
            if header is None or pos + header.size_in_bytes > len(batches):
                raise CorruptRecordError(f"appended data ends with a partial batch at position {pos}")
            if not batch_crc_valid(batches, pos, header):
                raise CorruptRecordError(f"CRC mismatch in appended batch at position {pos}")
            out.append((pos, header))
            pos += header.size_in_bytes
        return out

    def append_as_leader(self, batches: bytes, epoch: int) -> int:
        """Append whole batches, giving them offsets from ``end_offset()`` and ``epoch`` as their
        partitionLeaderEpoch; returns the first offset appended (the last is ``end_offset() - 1``).

        Raises:
            CorruptRecordError: a partial batch or a CRC mismatch (nothing is written).
            FatalError: ``epoch`` is below the latest epoch of the log, or the write failed.
        """
        self._check_open()
        parsed = self._parse(batches)
        latest = self._cache.latest_epoch()
        if latest is not None and epoch < latest:
            raise FatalError(f"leader append in epoch {epoch} but the log is already at epoch {latest}")
        first = self.end_offset()
        next_offset = first
        rewritten: list[tuple[bytes, int, int]] = []
        for pos, header in parsed:
            raw = batches[pos : pos + header.size_in_bytes]
            if header.base_offset != next_offset or header.partition_leader_epoch != epoch:
                raw = assign_offsets_and_epoch(raw, next_offset, epoch)
            # else: built with the offsets it gets (the accumulator assigns them): no copy
            rewritten.append((raw, next_offset, header.last_offset_delta))
            next_offset += header.last_offset_delta + 1
        if latest is None or epoch > latest:
            self._cache.assign(epoch, first)
            self._checkpoint_dirty = True
        self._write_batches(rewritten)
        return first

    def append_as_follower(self, batches: bytes, epoch: int) -> int:
        """Append fetched batches as they are; returns the first offset appended. ``epoch`` (the
        fetching replica's epoch) bounds their epochs; new batch epochs enter the epoch cache.

        Raises:
            CorruptRecordError: a partial batch or a CRC mismatch (nothing is written).
            FatalError: a batch does not start at the log end, or its epoch is above ``epoch`` or
                below an epoch that already holds batches (nothing is written), or the write failed.
        """
        self._check_open()
        parsed = self._parse(batches)
        expected = self.end_offset()
        for _, header in parsed:
            if header.base_offset != expected:
                raise FatalError(
                    f"follower append of a batch at offset {header.base_offset}, "
                    f"expected {expected} (log end)"
                )
            if header.partition_leader_epoch > epoch:
                raise FatalError(
                    f"follower append of a batch of epoch {header.partition_leader_epoch} "
                    f"above the current {epoch}"
                )
            expected = header.next_offset
        # Work on a copy so that a rejected append changes nothing.
        cache = LeaderEpochCache(self._cache.entries)
        changed = False
        for _, header in parsed:
            epoch_of_batch = header.partition_leader_epoch
            latest = cache.latest()
            if latest is not None and epoch_of_batch < latest.epoch:
                if latest.start_offset < header.base_offset:
                    raise FatalError(
                        f"follower append of a batch of epoch {epoch_of_batch} "
                        f"at offset {header.base_offset} "
                        f"after epoch {latest.epoch} began at offset {latest.start_offset}"
                    )
                # Entries with no batches of their own (a leader epoch started here and never used);
                # dropping them is a change even when no new entry follows.
                changed |= cache.truncate_from_end(header.base_offset)
                latest = cache.latest()
            if latest is None or epoch_of_batch > latest.epoch:
                cache.assign(epoch_of_batch, header.base_offset)
                changed = True
        first = self.end_offset()
        if changed:
            self._cache = cache
            self._checkpoint_dirty = True
        self._write_batches(
            [(batches[pos : pos + h.size_in_bytes], h.base_offset, h.last_offset_delta) for pos, h in parsed]
        )
        return first

    def _write_batches(self, batches: list[tuple[bytes, int, int]]) -> None:
        """Write (bytes, base offset, last offset delta) runs, rolling segments by size, or when
        the active segment's offset or time index is full (``log.index.size.max.bytes``).

        The index is updated only after the bytes are written; a failed write is a ``FatalError``.
        """
        segment = self._segments[-1]
        group: list[tuple[bytes, int, int]] = []
        group_size = 0
        for item in batches:
            used = segment.size + group_size
            if used > 0 and (
                used + len(item[0]) > self._segment_bytes or (not group and segment.indexes.is_full())
            ):
                if group:
                    self._commit(segment, group)
                    group, group_size = [], 0
                segment = self._roll()
            group.append(item)
            group_size += len(item[0])
        if group:
            self._commit(segment, group)

    @staticmethod
    def _commit(segment: _Segment, group: list[tuple[bytes, int, int]]) -> None:
        data = group[0][0] if len(group) == 1 else b"".join(item[0] for item in group)
        try:
            pwrite_all(segment.fd, data, segment.size)
        except OSError as e:
            raise FatalError(f"write to {segment.path} at position {segment.size} failed: {e}") from e
        position = segment.size
        indexes = segment.indexes
        for chunk, base, last_delta in group:
            last = base + last_delta
            # The max timestamp sits at bytes 35..43 of the header.
            (max_ts,) = _MAX_TIMESTAMP.unpack_from(chunk, 35)
            indexes.on_batch(position, last, max_ts, len(chunk))
            segment.remember_tail(base, last, position)
            segment.next_offset = last + 1
            position += len(chunk)
        segment.size = position

    # ------------------------------------------------------------------ reads

    def read(self, start_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        """Whole batches from the batch that contains ``start_offset``: at least one batch if any
        exists at or after it, then more while the total stays within ``max_bytes``. With
        ``max_offset``, only batches that end at or below it (none holding ``max_offset``), and then
        possibly none.

        Raises:
            KraftError: ``start_offset`` is below the log start offset.
            StorageError: a file is shorter than its index, or (with ``verify_crc_on_read``) a batch
                read fails its CRC.
        """
        self._check_open()
        if start_offset >= self.end_offset():
            return b""
        if start_offset < self._start_offset:
            raise KraftError(
                f"read at offset {start_offset} is below the log start offset {self._start_offset}"
            )
        s = bisect.bisect_right(self._segment_bases, start_offset) - 1
        parts: list[bytes] = []
        total = 0
        while s < len(self._segments):
            segment = self._segments[s]
            s += 1
            size = segment.size
            if not size:
                continue  # an empty segment (the active one after a roll, or after truncation)
            capped = max_offset is not None and segment.next_offset > max_offset
            if capped:
                assert max_offset is not None
                # The batches below the first one that does not end at or below ``max_offset``.
                size = self._batch_position(segment, max_offset)[0]
            # A later segment is read from its first batch, which begins at position 0.
            begin = self._batch_position(segment, start_offset)[0] if not parts else 0
            if begin >= size:
                if capped:
                    break
                continue
            # Whole batches ending within the byte budget: at least one for the first batch read.
            chunk = self._read_whole_batches(segment, begin, max_bytes - total, not parts, size)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if capped or begin + len(chunk) < size or total >= max_bytes:
                break
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        if self._verify_crc_on_read:
            self._verify(data)
        return data

    def _batch_position(self, segment: _Segment, offset: int) -> tuple[int, int]:
        """(position, base offset) of the batch of ``segment`` that holds ``offset``, else of the
        first one after it; (size, -1) when none does. From the offset index's last entry at or below
        ``offset``, walking batch headers forward (at most about ``index.interval.bytes`` of them):
        the hot path of every read, so only base offset, length and last offset delta are unpacked.

        Raises:
            StorageError: the file is shorter than the segment's size, or a batch length is
                impossible (the file changed on disk).
        """
        tail = segment.tail
        if tail is not None and tail.bases and offset >= tail.bases[0]:
            i = bisect.bisect_left(tail.lasts, offset)
            if i == len(tail.bases):
                return segment.size, -1
            return tail.positions[i], tail.bases[i]
        _, position = segment.indexes.lookup(offset)
        size = segment.size
        buf = b""
        buf_start = position
        while position < size:
            rel = position - buf_start
            if len(buf) - rel < _WALK_HEADER_BYTES:
                buf = os.pread(segment.fd, min(_WALK_CHUNK, size - position), position)
                buf_start, rel = position, 0
                if len(buf) < _WALK_HEADER_BYTES:
                    raise StorageError(f"{segment.path} is shorter than its size {size} (at {position})")
            base, length = _BASE_AND_LENGTH.unpack_from(buf, rel)
            (last_delta,) = _LENGTH.unpack_from(buf, rel + _LAST_OFFSET_DELTA_AT)
            if length < MIN_BATCH_LENGTH:
                raise StorageError(f"{segment.path}: impossible batch length {length} at position {position}")
            if base + last_delta >= offset:
                return position, base
            position += length + LOG_OVERHEAD
        return size, -1

    def _read_whole_batches(
        self, segment: _Segment, begin: int, budget: int, at_least_one: bool, size: int
    ) -> bytes:
        """The whole batches of ``segment`` between positions ``begin`` and ``size`` (a batch
        boundary) whose bytes fit in ``budget``; with ``at_least_one`` the first even when it alone
        is over the budget."""
        if budget >= size - begin:
            return self._pread(segment, begin, size - begin)  # to the end: a batch boundary
        limit = begin + max(budget, 0)
        # Find the last batch boundary at or below ``limit`` from the nearest index entry.
        position = max(segment.indexes.position_at_or_below(limit), begin)
        end = position
        buf = b""
        buf_start = position
        while position < size:
            rel = position - buf_start
            if len(buf) - rel < LOG_OVERHEAD:
                buf = os.pread(segment.fd, min(_WALK_CHUNK, size - position), position)
                buf_start, rel = position, 0
                if len(buf) < LOG_OVERHEAD:
                    raise StorageError(f"{segment.path} is shorter than its size {size}")
            (length,) = _LENGTH.unpack_from(buf, rel + 8)
            after = position + length + LOG_OVERHEAD
            if after > limit:
                if end == begin and at_least_one:
                    end = after
                break
            end = position = after
        if end == begin:
            return b""
        return self._pread(segment, begin, end - begin)

    @staticmethod
    def _pread(segment: _Segment, position: int, n: int) -> bytes:
        data = os.pread(segment.fd, n, position)
        if len(data) == n:
            return data
        out = bytearray(data)
        while len(out) < n:
            chunk = os.pread(segment.fd, n - len(out), position + len(out))
            if not chunk:
                raise StorageError(
                    f"{segment.path} is shorter than its index ({position + len(out)} < {segment.size})"
                )
            out += chunk
        return bytes(out)

    @staticmethod
    def _verify(data: bytes) -> None:
        pos = 0
        while pos < len(data):
            header = read_batch_header(data, pos)
            if header is None or not batch_crc_valid(data, pos, header):
                raise StorageError(
                    f"batch at read position {pos} failed its CRC: the log file changed on disk"
                )
            pos += header.size_in_bytes

    # ------------------------------------------------------------------ truncation and the start

    def truncate_to(self, offset: int) -> None:
        """Drop every batch that holds an offset at or after ``offset`` (and the epoch cache beyond
        the new end); durable on return.

        Raises:
            KraftError: ``offset`` is below the log start offset.
        """
        self._check_open()
        if offset < self._start_offset:
            raise KraftError(
                f"cannot truncate to offset {offset}, below the log start offset {self._start_offset}"
            )
        if self._cache.truncate_from_end(offset):
            self._checkpoint_dirty = True
        if offset >= self.end_offset():
            return
        while len(self._segments) > 1 and self._segments[-1].base_offset >= offset:
            # Newest first: a crash part-way leaves a shorter but still contiguous log.
            self._delete_segment_file(self._segments.pop())
            self._segment_bases.pop()
        segment = self._segments[-1]
        # The first batch to drop is the one containing ``offset`` (a batch is atomic), if any.
        self._cut(segment, offset)
        os.ftruncate(segment.fd, segment.size)
        _fdatasync(segment.fd)
        segment.synced_size = segment.size
        if self._dir_dirty:
            fsync_dir(self._dir)
            self._dir_dirty = False
        # A whole batch was cut if ``offset`` fell inside it; keep the cache in line with the new end.
        if self._cache.truncate_from_end(self.end_offset()):
            self._checkpoint_dirty = True
        self._flushed_offset = min(self._flushed_offset, self.end_offset())

    def _cut(self, segment: _Segment, offset: int) -> None:
        """Forget the batches of ``segment`` from the one holding ``offset`` (the file is cut by the
        caller); the indexes drop their entries past it and find the segment's max timestamp again
        from the batches after their last entry."""
        position, base = self._batch_position(segment, offset)
        if base < 0:
            return
        segment.forget_tail()
        segment.size = position
        segment.next_offset = base
        segment.first_timestamp = None
        indexes = segment.indexes
        indexes.truncate_to(base)
        walk = indexes.positions[-1] if indexes.positions else 0
        while walk < position:
            h = self._header_at(segment.fd, walk)
            if h is None:
                break
            if h.max_timestamp > indexes.max_timestamp:
                indexes.max_timestamp, indexes.offset_of_max_timestamp = h.max_timestamp, h.next_offset - 1
            walk += h.size_in_bytes

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and begin an empty log at ``offset`` (start = end = ``offset``), with
        an empty epoch cache; durable on return (Kafka's ``truncateFullyAndStartAt``).

        Segments go newest first, so that a crash part-way leaves a shorter but contiguous log.
        """
        self._check_open()
        while self._segments:
            self._delete_segment_file(self._segments.pop())
            self._segment_bases.pop()
        self._append_segment(self._create_segment(offset))
        fsync_dir(self._dir)
        self._dir_dirty = False
        self._start_offset = offset
        self._cache.clear()
        self._write_checkpoint()
        self._flushed_offset = offset

    def advance_start_offset(self, offset: int) -> bool:
        """Raise the log start offset to ``offset`` and delete the segments wholly below it (Kafka's
        ``maybeIncrementLogStartOffset`` and the deletion of segments it leaves behind). The epoch
        cache keeps the epoch that covers the new start. Returns whether the start moved.

        Raises:
            KraftError: ``offset`` is beyond the flushed end (a crash could leave the log short of
                its own start).
        """
        self._check_open()
        if offset <= self._start_offset:
            return False
        if offset > self._flushed_offset:
            raise KraftError(
                f"cannot start the log at offset {offset}, beyond its flushed end {self._flushed_offset}"
            )
        self._start_offset = offset
        if self._cache.truncate_from_start(offset):
            self._checkpoint_dirty = True
        active = self._segments[-1]
        if active.base_offset < offset and offset == self.end_offset():
            self._roll()
        while len(self._segments) > 1 and self._segments[1].base_offset <= offset:
            self._delete_segment_file(self._segments.pop(0))
            self._segment_bases.pop(0)
        if self._dir_dirty:
            fsync_dir(self._dir)
            self._dir_dirty = False
        return True

    def roll(self) -> bool:
        """Begin a new active segment at the log end unless the active one is empty (Kafka's ``roll``,
        for a data partition's ``segment.ms``); returns whether it rolled. As with a roll by size,
        the finished segment is fsynced; the new file is durable at the next ``flush()``."""
        self._check_open()
        if not self._segments[-1].size:
            return False
        self._roll()
        return True

    # ------------------------------------------------------------------ durability and lifecycle

    def flush(self) -> None:
        """Make everything appended so far durable (segments, new and deleted files, epoch cache)."""
        self._check_open()
        for segment in self._segments:
            if segment.synced_size < segment.size:
                _fdatasync(segment.fd)
                segment.synced_size = segment.size
        # The active segment's index files catch up (not synced: they are rebuilt after an unclean
        # stop); they are created here the first time, so the directory fsync below covers them.
        self._segments[-1].indexes.write_files()
        if self._dir_dirty:
            fsync_dir(self._dir)
            self._dir_dirty = False
        if self._checkpoint_dirty:
            self._write_checkpoint()
        self._flushed_offset = self.end_offset()

    def _check_open(self) -> None:
        if self._closed:
            raise KraftError(f"log {self._dir} is closed")

    def _close_files(self) -> None:
        for segment in self._segments:
            segment.close()

    def close(self) -> None:
        """Release the files; the active segment's indexes get their final time entry and are trimmed
        and synced (Kafka's close). Does not flush the log: call ``flush()`` first for a clean
        shutdown."""
        if not self._closed:
            try:
                self._segments[-1].indexes.seal()
            finally:
                self._close_files()
                self._closed = True

    def crash(self) -> None:
        """Model a power loss (tests, simulator): cut the files back to ``last_flushed_offset()``, close.

        This is the worst case a real crash may leave: segments that a roll happened to fsync are
        cut too, so that exactly the flushed prefix survives, as with ``MemoryLog.crash()``.
        """
        if self._closed:
            return
        flushed = self._flushed_offset
        for segment in self._segments:
            if segment.base_offset > flushed and segment is not self._segments[0]:
                segment.close()
                os.unlink(segment.path)
            elif segment.next_offset > flushed:
                os.ftruncate(segment.fd, self._batch_position(segment, flushed)[0])
        for segment in self._segments:
            segment.close()  # a crash seals nothing: the indexes stay as the process left them
        self._closed = True

    def __enter__(self) -> SegmentLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
