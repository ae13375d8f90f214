"""``FileLog``: the replicated log of ``__cluster_metadata-0`` on segment files (``ReplicatedLog``).

Directory layout (the partition directory, ``kraft.storage.log_dir.metadata_partition_dir``)::

    00000000000000000000.log                  segment: RecordBatch v2 bytes, named by base offset
    00000000000000004096.log                  the last segment is the active one (appends go here)
    leader-epoch-checkpoint                   Kafka's text epoch cache (version, count, "epoch offset")
    00000000000000003000-0000000004.checkpoint   snapshots (see ``kraft.storage.snapshots``)
    quorum-state                              owned by ``FileQuorumStateStore``, ignored here

Kafka also keeps ``.index``/``.timeindex`` files per segment; we do not write them (and ignore them):
the offset -> position index is built in memory at open, one entry per batch.

Durability: appends go to the OS; ``flush()`` fdatasyncs unsynced segments, fsyncs the directory if
files were created or deleted, and rewrites the epoch checkpoint if it changed. The caller decides
when (the raft core flushes before acknowledging). Rolling a segment fsyncs the finished one, so
only the last segment can ever have a torn tail. Truncation is fsynced at once (it is rare, and a
half-persisted truncation followed by new appends could otherwise look like mid-log corruption).

Recovery at open (main invariant: nothing flushed is lost, nothing corrupt is served):

* every segment is scanned batch by batch: header, length, magic, CRC-32C, dense offsets and
  non-decreasing epochs are checked;
* an invalid batch in the *last* segment with no valid batch after it is a torn tail: the file is
  truncated there and the drop is recorded in ``recovery_report`` (and logged);
* an invalid batch anywhere else (a non-last segment, or followed by a valid batch) is corruption of
  data that may have been acknowledged: open refuses with a ``StorageError`` naming file and
  position. (Kafka truncates from the first invalid batch after its recovery point; we have no
  recovery-point file, so we only drop what can be a torn write.)
* the epoch cache is derived from the batches; the checkpoint is used as-is only when it agrees, and
  is otherwise rewritten (missing, unparsable, or ahead of the log after a crash);
* leftover ``.part`` snapshots, ``.deleted`` files and checkpoint temp files are removed;
* if the latest snapshot is ahead of the log (a follower crashed between downloading a snapshot and
  truncating), the log is replaced by it, as ``truncate_to_latest_snapshot`` does.

Not covered by any checksum in the v2 format: baseOffset (checked by density) and
partitionLeaderEpoch (checked only for monotonicity), so a flipped bit in the latter can go unnoticed.

Log start offset: 0, or the end offset of the earliest snapshot, which ``delete_before_snapshot``
makes the start by deleting older snapshots *before* older segments; at open the start is again the
earliest snapshot's offset (segments below it may survive until they are wholly below it).

Truncation to an offset inside a batch removes the whole batch (the log end becomes its base offset):
the log's unit is the batch.
"""

from __future__ import annotations

import bisect
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kraft.common.errors import CorruptRecordError, FatalError, KraftError, StorageError
from kraft.raft.log import (
    LogAppendInfo,
    ValidationKind,
    ValidOffsetAndEpoch,
    snapshot_supersedes_log,
    validate_offset_and_epoch,
)
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import (
    HEADER_SIZE,
    BatchHeader,
    assign_offsets_and_epoch,
    batch_crc_valid,
    find_valid_batch,
    read_batch_header,
)
from kraft.storage import snapshots as snap
from kraft.storage.epoch_cache import CHECKPOINT_FILE, EpochEntry, LeaderEpochCache, read_checkpoint
from kraft.storage.epoch_cache import write_checkpoint as write_epoch_checkpoint
from kraft.storage.fsutil import fsync_dir, pwrite_all

log = logging.getLogger(__name__)

SEGMENT_SUFFIX = ".log"
DELETED_SEGMENT_SUFFIX = ".log.deleted"
# Kafka's metadata.log.segment.bytes default (1 GiB).
DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024
_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
_SCAN_CHUNK = 4 * 1024 * 1024

_fdatasync = getattr(os, "fdatasync", os.fsync)


def segment_file_name(base_offset: int) -> str:
    return f"{base_offset:020d}{SEGMENT_SUFFIX}"


@dataclass(frozen=True, slots=True)
class TruncatedTail:
    """A torn or corrupt tail cut off the last segment at open."""

    file: Path
    position: int
    bytes_dropped: int
    reason: str


@dataclass(slots=True)
class RecoveryReport:
    """What open had to repair. Empty after a clean shutdown."""

    truncated_tails: list[TruncatedTail] = field(default_factory=list)
    removed_files: list[Path] = field(default_factory=list)
    epoch_cache_rebuilt: bool = False
    epoch_cache_reason: str | None = None
    truncated_to_snapshot: OffsetAndEpoch | None = None

    @property
    def clean(self) -> bool:
        return not (
            self.truncated_tails
            or self.removed_files
            or self.epoch_cache_rebuilt
            or self.truncated_to_snapshot
        )


class _Segment:
    """One segment file, open read-write, with its in-memory batch index."""

    __slots__ = (
        "base_offset",
        "bases",
        "epochs",
        "fd",
        "next_offset",
        "path",
        "positions",
        "size",
        "synced_size",
    )

    def __init__(self, path: Path, base_offset: int, fd: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.fd = fd
        self.size = 0
        self.synced_size = 0
        self.next_offset = base_offset
        # One entry per batch: base offset, file position, partition leader epoch.
        self.bases: list[int] = []
        self.positions: list[int] = []
        self.epochs: list[int] = []

    def add_batch(self, header: BatchHeader, position: int) -> None:
        self.bases.append(header.base_offset)
        self.positions.append(position)
        self.epochs.append(header.partition_leader_epoch)
        self.next_offset = header.next_offset

    def batch_end(self, i: int) -> int:
        return self.positions[i + 1] if i + 1 < len(self.positions) else self.size

    def truncate_index(self, i: int) -> None:
        """Forget batches ``i`` and later (the file is cut separately)."""
        if i < len(self.bases):
            self.size = self.positions[i]
            self.next_offset = self.bases[i]
            del self.bases[i:], self.positions[i:], self.epochs[i:]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class _InvalidBatch(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FileLog:
    """A ``ReplicatedLog`` on files. Single-threaded: the caller serializes all calls.

    Lifecycle: ``FileLog(dir)`` opens (and recovers) the log; ``close()`` releases the files;
    ``crash()`` models a power loss for tests (unflushed bytes are discarded from the files).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        create: bool = True,
        verify_crc_on_read: bool = False,
    ) -> None:
        if segment_bytes < 1:
            raise KraftError(f"segment_bytes must be positive, got {segment_bytes}")
        self._dir = Path(directory)
        self._segment_bytes = segment_bytes
        self._verify_crc_on_read = verify_crc_on_read
        self._segments: list[_Segment] = []
        self._segment_bases: list[int] = []
        self._cache = LeaderEpochCache()
        self._checkpoint_dirty = False
        self._dir_dirty = False
        self._snapshots: list[OffsetAndEpoch] = []
        self._start_offset = 0
        self._flushed_offset = 0
        self._closed = False
        self.recovery_report = RecoveryReport()
        if not self._dir.is_dir():
            if not create:
                raise StorageError(f"log directory {self._dir} does not exist")
            self._dir.mkdir(parents=True, exist_ok=True)
            fsync_dir(self._dir.parent)
        try:
            self._open()
        except BaseException:
            self._close_files()
            raise

    # ------------------------------------------------------------------ open and recovery

    def _open(self) -> None:
        report = self.recovery_report
        for name in sorted(os.listdir(self._dir)):
            if name.endswith(
                (snap.PART_SUFFIX, snap.DELETED_SUFFIX, DELETED_SEGMENT_SUFFIX, CHECKPOINT_FILE + ".tmp")
            ):
                path = self._dir / name
                os.unlink(path)
                report.removed_files.append(path)
                log.warning("%s: removed leftover file %s", self._dir, name)
        if report.removed_files:
            self._dir_dirty = True
        self._snapshots = snap.list_snapshots(self._dir)

        seg_files: list[tuple[int, Path]] = []
        for name in os.listdir(self._dir):
            m = _SEGMENT_NAME.match(name)
            if m is not None:
                seg_files.append((int(m.group(1)), self._dir / name))
        seg_files.sort()
        expected_epoch = -1
        for i, (base, path) in enumerate(seg_files):
            if self._segments and base != self._segments[-1].next_offset:
                prev = self._segments[-1]
                raise StorageError(
                    f"segment {path} starts at offset {base} but {prev.path} "
                    f"ends before offset {prev.next_offset}"
                )
            segment = self._load_segment(
                path, base, is_last=i == len(seg_files) - 1, min_epoch=expected_epoch
            )
            if segment.epochs:
                expected_epoch = segment.epochs[-1]
            self._append_segment(segment)
        if not self._segments:
            base = self._snapshots[-1].offset if self._snapshots else 0
            self._append_segment(self._create_segment(base))

        for segment in self._segments:
            for epoch, base in zip(segment.epochs, segment.bases):
                latest = self._cache.latest_epoch()
                if latest is None or epoch > latest:
                    self._cache.assign(epoch, base)

        latest_snapshot = self._snapshots[-1] if self._snapshots else None
        if latest_snapshot is not None and self._snapshot_is_ahead(latest_snapshot):
            log.warning(
                "%s: latest snapshot %s is ahead of the log; replacing the log by it",
                self._dir,
                latest_snapshot,
            )
            self._replace_log_by_snapshot(latest_snapshot)
            report.truncated_to_snapshot = latest_snapshot
        else:
            first_base = self._segments[0].base_offset
            start = self._snapshots[0].offset if self._snapshots else first_base
            if start < first_base or (not self._snapshots and start != 0):
                raise StorageError(
                    f"{self._dir}: log segments begin at offset {first_base} but the earliest snapshot is "
                    f"{self._snapshots[0] if self._snapshots else 'missing'}: the log is missing data"
                )
            if start > self.end_offset():
                raise StorageError(
                    f"{self._dir}: earliest snapshot {self._snapshots[0]} ends beyond the log end offset "
                    f"{self.end_offset()} but is not ahead of the log's epochs"
                )
            self._start_offset = start
            self._cache.truncate_from_start(start)
        self._reconcile_checkpoint()

        # Whatever survived in the page cache from before a process crash is made durable now, so
        # that last_flushed_offset() is truthful from the start.
        for segment in self._segments:
            if segment.synced_size < segment.size or segment is self._segments[-1]:
                _fdatasync(segment.fd)
                segment.synced_size = segment.size
        if self._dir_dirty:
            fsync_dir(self._dir)
            self._dir_dirty = False
        if self._checkpoint_dirty:
            self._write_checkpoint()
        self._flushed_offset = self.end_offset()

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
            log.warning("%s: rebuilt the epoch cache from the log batches (%s)", self._dir, reason)

    def _load_segment(self, path: Path, base_offset: int, *, is_last: bool, min_epoch: int) -> _Segment:
        fd = os.open(path, os.O_RDWR)
        segment = _Segment(path, base_offset, fd)
        try:
            file_size = os.fstat(fd).st_size
            position, reason = self._scan(segment, file_size, min_epoch)
        except BaseException:
            segment.close()
            raise
        segment.size = position
        segment.synced_size = position
        if reason is None:
            return segment
        where = f"{path} at position {position} (offset {segment.next_offset})"
        if not is_last:
            segment.close()
            raise StorageError(f"corrupt batch in non-last segment {where}: {reason}")
        follower = self._find_valid_batch_after(fd, position, file_size, segment.next_offset)
        if follower is not None:
            segment.close()
            raise StorageError(
                f"corrupt batch in {where}: {reason}; a valid batch follows at position {follower}, "
                f"so this is not a torn tail and flushed data may be damaged"
            )
        dropped = file_size - position
        os.ftruncate(fd, position)
        _fdatasync(fd)
        self.recovery_report.truncated_tails.append(TruncatedTail(path, position, dropped, reason))
        log.warning(
            "%s: truncated a torn tail of %d bytes at position %d (%s)", path, dropped, position, reason
        )
        return segment

    def _scan(self, segment: _Segment, file_size: int, min_epoch: int) -> tuple[int, str | None]:
        """Index the valid batches of ``segment``; returns (end of the valid prefix, why it stopped)."""
        fd = segment.fd
        buf = b""
        buf_start = 0  # file position of buf[0]
        position = 0
        last_epoch = min_epoch
        while position < file_size:
            rel = position - buf_start
            if len(buf) - rel < HEADER_SIZE and buf_start + len(buf) < file_size:
                buf = buf[rel:] + os.pread(fd, max(_SCAN_CHUNK, HEADER_SIZE), buf_start + len(buf))
                buf_start, rel = position, 0
            try:
                header = read_batch_header(buf, rel)
            except CorruptRecordError as e:
                return position, "invalid batch header: " + str(e).replace(
                    f"position {rel}", f"position {position}"
                )
            if header is None:
                return position, f"short batch header ({file_size - position} bytes before end of file)"
            size = header.size_in_bytes
            if position + size > file_size:
                return position, f"batch length {header.batch_length} runs past the end of the file"
            if len(buf) - rel < size:
                buf = buf[rel:] + os.pread(
                    fd, max(_SCAN_CHUNK, size - (len(buf) - rel)), buf_start + len(buf)
                )
                buf_start, rel = position, 0
            if not batch_crc_valid(buf, rel, header):
                return position, f"CRC mismatch in batch at offset {header.base_offset}"
            if header.base_offset != segment.next_offset:
                return position, f"batch has base offset {header.base_offset}, expected {segment.next_offset}"
            if header.partition_leader_epoch < last_epoch:
                return (
                    position,
                    f"batch epoch {header.partition_leader_epoch} is below the previous {last_epoch}",
                )
            last_epoch = header.partition_leader_epoch
            segment.add_batch(header, position)
            position += size
        return position, None

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
        return _Segment(path, base_offset, fd)

    def _roll(self) -> _Segment:
        old = self._segments[-1]
        # Only the last segment may have a torn tail: make the finished one durable before any byte
        # goes to the next.
        if old.synced_size < old.size:
            _fdatasync(old.fd)
            old.synced_size = old.size
        segment = self._create_segment(self.end_offset())
        self._append_segment(segment)
        return segment

    def _delete_segment_file(self, segment: _Segment) -> None:
        segment.close()
        doomed = segment.path.with_name(segment.path.name + ".deleted")
        os.replace(segment.path, doomed)
        os.unlink(doomed)
        self._dir_dirty = True

    def _write_checkpoint(self) -> None:
        write_epoch_checkpoint(self._dir / CHECKPOINT_FILE, self._cache.entries)
        self._checkpoint_dirty = False

    # ------------------------------------------------------------------ ReplicatedLog: positions

    @property
    def directory(self) -> Path:
        return self._dir

    def start_offset(self) -> int:
        return self._start_offset

    def end_offset(self) -> int:
        return self._segments[-1].next_offset

    def last_flushed_offset(self) -> int:
        return self._flushed_offset

    def last_fetched_epoch(self) -> int:
        latest = self._cache.latest_epoch()
        if latest is not None:
            return latest
        snapshot = self.latest_snapshot_id()
        if snapshot is not None and snapshot.offset == self._start_offset == self.end_offset():
            return snapshot.epoch
        return 0

    def epoch_entries(self) -> tuple[EpochEntry, ...]:
        """The epoch cache, oldest first (for tools and tests)."""
        return self._cache.entries

    def segment_paths(self) -> list[Path]:
        return [s.path for s in self._segments]

    # ------------------------------------------------------------------ ReplicatedLog: appends

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

    def append_as_leader(self, batches: bytes, epoch: int) -> LogAppendInfo:
        self._check_open()
        parsed = self._parse(batches)
        latest = self._cache.latest_epoch()
        if latest is not None and epoch < latest:
            raise FatalError(f"leader append in epoch {epoch} but the log is already at epoch {latest}")
        first = self.end_offset()
        next_offset = first
        rewritten: list[tuple[bytes, BatchHeader, int]] = []
        for pos, header in parsed:
            raw = batches[pos : pos + header.size_in_bytes]
            if header.base_offset != next_offset or header.partition_leader_epoch != epoch:
                raw = assign_offsets_and_epoch(raw, next_offset, epoch)
            # else: built with the offsets it gets (the accumulator assigns them): no copy
            rewritten.append((raw, header, next_offset))
            next_offset += header.last_offset_delta + 1
        if latest is None or epoch > latest:
            self._cache.assign(epoch, first)
            self._checkpoint_dirty = True
        self._write_batches([(data, base, h.last_offset_delta, epoch) for data, h, base in rewritten])
        return LogAppendInfo(first_offset=first, last_offset=next_offset - 1)

    def append_as_follower(self, batches: bytes, epoch: int) -> LogAppendInfo:
        """Append fetched batches as they are. ``epoch`` (the fetching node's epoch) bounds their epochs."""
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
                # Entries with no batches of their own (a leader epoch started here and never used).
                cache.truncate_from_end(header.base_offset)
                latest = cache.latest()
            if latest is None or epoch_of_batch > latest.epoch:
                cache.assign(epoch_of_batch, header.base_offset)
                changed = True
        first = self.end_offset()
        if changed:
            self._cache = cache
            self._checkpoint_dirty = True
        self._write_batches(
            [
                (
                    batches[pos : pos + h.size_in_bytes],
                    h.base_offset,
                    h.last_offset_delta,
                    h.partition_leader_epoch,
                )
                for pos, h in parsed
            ]
        )
        return LogAppendInfo(first_offset=first, last_offset=expected - 1)

    def _write_batches(self, batches: list[tuple[bytes, int, int, int]]) -> None:
        """Write (bytes, base offset, last offset delta, epoch) runs, rolling segments by size.

        The index is updated only after the bytes are written; a failed write is a ``FatalError``.
        """
        segment = self._segments[-1]
        group: list[tuple[bytes, int, int, int]] = []
        group_size = 0
        for item in batches:
            used = segment.size + group_size
            if used > 0 and used + len(item[0]) > self._segment_bytes:
                if group:
                    self._commit(segment, group)
                    group, group_size = [], 0
                segment = self._roll()
            group.append(item)
            group_size += len(item[0])
        if group:
            self._commit(segment, group)

    def _commit(self, segment: _Segment, group: list[tuple[bytes, int, int, int]]) -> None:
        data = group[0][0] if len(group) == 1 else b"".join(item[0] for item in group)
        try:
            pwrite_all(segment.fd, data, segment.size)
        except OSError as e:
            raise FatalError(f"write to {segment.path} at position {segment.size} failed: {e}") from e
        position = segment.size
        for chunk, base, last_delta, epoch in group:
            segment.bases.append(base)
            segment.positions.append(position)
            segment.epochs.append(epoch)
            segment.next_offset = base + last_delta + 1
            position += len(chunk)
        segment.size = position

    # ------------------------------------------------------------------ ReplicatedLog: reads

    def read(self, start_offset: int, max_bytes: int) -> bytes:
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
            if not segment.bases:
                continue
            i = max(bisect.bisect_right(segment.bases, start_offset) - 1, 0) if not parts else 0
            begin = segment.positions[i]
            # Whole batches ending within the byte budget: at least one for the first batch read.
            limit = begin + max(max_bytes - total, 0)
            j = bisect.bisect_right(segment.positions, limit, lo=i) - 1
            if segment.batch_end(j) > limit:
                j -= 1
            if j < i:
                if parts:
                    break
                j = i
            end = segment.batch_end(j)
            parts.append(self._pread(segment, begin, end - begin))
            total += end - begin
            if j + 1 < len(segment.bases) or total >= max_bytes:
                break
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        if self._verify_crc_on_read:
            self._verify(data)
        return data

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

    # ------------------------------------------------------------------ ReplicatedLog: truncation

    def truncate_to(self, offset: int) -> None:
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
        j = bisect.bisect_right(segment.bases, offset) - 1
        batch_next = segment.bases[j + 1] if j + 1 < len(segment.bases) else segment.next_offset
        segment.truncate_index(j if j >= 0 and batch_next > offset else j + 1)
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

    def _snapshot_is_ahead(self, snapshot_id: OffsetAndEpoch) -> bool:
        return snapshot_supersedes_log(self, snapshot_id)

    def truncate_to_latest_snapshot(self) -> bool:
        self._check_open()
        latest = self.latest_snapshot_id()
        if latest is None or not self._snapshot_is_ahead(latest):
            return False
        self._replace_log_by_snapshot(latest)
        return True

    def _replace_log_by_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        # Order matters for a crash part-way: older snapshots go first (so the earliest snapshot is
        # never below missing segments), then segments newest first, then the new empty segment.
        self._forget_snapshots_before(snapshot_id)
        while self._segments:
            self._delete_segment_file(self._segments.pop())
            self._segment_bases.pop()
        self._append_segment(self._create_segment(snapshot_id.offset))
        fsync_dir(self._dir)
        self._dir_dirty = False
        self._start_offset = snapshot_id.offset
        self._cache.clear()
        self._write_checkpoint()
        self._flushed_offset = snapshot_id.offset

    def _forget_snapshots_before(self, snapshot_id: OffsetAndEpoch) -> None:
        doomed = [s for s in self._snapshots if s < snapshot_id]
        if not doomed:
            return
        for sid in doomed:
            snap.delete_snapshot_file(self._dir, sid)
        self._snapshots = [s for s in self._snapshots if s >= snapshot_id]
        fsync_dir(self._dir)

    # ------------------------------------------------------------------ ReplicatedLog: epochs

    def initialize_leader_epoch(self, epoch: int) -> None:
        self._check_open()
        latest = self._cache.latest_epoch()
        if latest is not None and epoch < latest:
            raise FatalError(f"cannot start leader epoch {epoch}: the log is already at epoch {latest}")
        if self._cache.assign(epoch, self.end_offset()):
            self._checkpoint_dirty = True

    def _floor_epoch(self) -> int:
        earliest = self.earliest_snapshot_id()
        return earliest.epoch if earliest is not None else 0

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        return self._cache.end_offset_for(epoch, self.end_offset(), self._floor_epoch())

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        # Spec 4.1; the one implementation shared with MemoryLog.
        return validate_offset_and_epoch(self, offset, epoch)

    # ------------------------------------------------------------------ ReplicatedLog: durability

    def flush(self) -> None:
        self._check_open()
        for segment in self._segments:
            if segment.synced_size < segment.size:
                _fdatasync(segment.fd)
                segment.synced_size = segment.size
        if self._dir_dirty:
            fsync_dir(self._dir)
            self._dir_dirty = False
        if self._checkpoint_dirty:
            self._write_checkpoint()
        self._flushed_offset = self.end_offset()

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
        if snapshot_id.offset < self._start_offset:
            log.info(
                "not creating snapshot %s below the log start offset %d", snapshot_id, self._start_offset
            )
            return None
        if snapshot_id.offset > self.end_offset():
            raise KraftError(f"snapshot id {snapshot_id} is beyond the log end offset {self.end_offset()}")
        validation = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if validation.kind is not ValidationKind.VALID:
            raise KraftError(f"snapshot id {snapshot_id} is not valid according to the log: {validation}")
        if snapshot_id in self._snapshots:
            return None
        return snap.FileRawSnapshotWriter(self._dir, snapshot_id, self._on_snapshot_frozen)

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> snap.FileRawSnapshotWriter:
        self._check_open()
        return snap.FileRawSnapshotWriter(self._dir, snapshot_id, self._on_snapshot_frozen)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> snap.FileRawSnapshotReader | None:
        if snapshot_id not in self._snapshots:
            return None
        try:
            return snap.FileRawSnapshotReader(snap.snapshot_path(self._dir, snapshot_id), snapshot_id)
        except StorageError:
            log.warning("snapshot %s was listed but its file is gone", snapshot_id)
            self._snapshots.remove(snapshot_id)
            return None

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        self._check_open()
        if (
            snapshot_id not in self._snapshots
            or snapshot_id.offset <= self._start_offset
            or snapshot_id.offset > self._flushed_offset
        ):
            return False
        # Older snapshots first (see _replace_log_by_snapshot), then segments wholly below.
        self._forget_snapshots_before(snapshot_id)
        self._start_offset = snapshot_id.offset
        if self._cache.truncate_from_start(snapshot_id.offset):
            self._checkpoint_dirty = True
        active = self._segments[-1]
        if active.base_offset < self._start_offset and self._start_offset == self.end_offset():
            self._roll()
        while len(self._segments) > 1 and self._segments[1].base_offset <= self._start_offset:
            self._delete_segment_file(self._segments.pop(0))
            self._segment_bases.pop(0)
        if self._dir_dirty:
            fsync_dir(self._dir)
            self._dir_dirty = False
        return True

    # ------------------------------------------------------------------ lifecycle

    def _check_open(self) -> None:
        if self._closed:
            raise KraftError(f"log {self._dir} is closed")

    def _close_files(self) -> None:
        for segment in self._segments:
            segment.close()

    def close(self) -> None:
        """Release the files. Does not flush: call ``flush()`` first for a clean shutdown."""
        if not self._closed:
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
                i = bisect.bisect_left(segment.bases, flushed)
                os.ftruncate(segment.fd, segment.positions[i] if i < len(segment.positions) else segment.size)
        self.close()

    def __enter__(self) -> FileLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
