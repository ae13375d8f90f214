"""A segment's sparse offset and time indexes (Kafka's ``OffsetIndex`` and ``TimeIndex``), in memory
and, for data partitions, in Kafka's ``.index`` and ``.timeindex`` files.

Formats (big-endian, Kafka's, byte for byte)::

    <base offset %020d>.index       8-byte entries: int32 offset - base, int32 file position
    <base offset %020d>.timeindex   12-byte entries: int64 timestamp, int32 offset - base

Which batches get entries (Kafka's ``LogSegment.recover`` rule, applied to every batch here, on
append as on rebuild, so that an index rebuilt from the log equals the one written while appending):
before a batch is added, if more than ``index_interval_bytes`` (``log.index.interval.bytes``, 4096)
were added since the last entry, the offset index gets (the batch's last offset, its position) and
the time index gets (max timestamp so far, the last offset of the batch that first reached it) when
that timestamp is above the time index's last one. Kafka's append path applies the rule once per
append call instead (a follower's multi-batch fetch gets one entry); both are valid indexes.

Invariants: offset entries strictly increase in offset and in position, every position is the start
of a batch, and the batch there has its base offset <= the entry's offset (so a lookup never lands
past the batch that holds the offset); time entries strictly increase in timestamp and do not
decrease in offset. When a segment stops being the active one (roll, close), the time index gets
the segment's final (max timestamp, offset) even off the interval, so its last entry is the
segment's largest timestamp (what retention by time and ListOffsets need).

Files: written, trimmed to their entries and fdatasynced when the segment rolls or the log closes
(and when a scan at open rebuilds a rolled segment's indexes); an active segment's are written
(unsynced) when the log is flushed, and otherwise live in memory. No file descriptor is held: a
partition costs one descriptor, its segment's, where keeping both index files open cost three
(10,000 partitions ran a broker out of its 20,000). Kafka keeps the same files preallocated to
``log.index.size.max.bytes`` and memory-mapped, its descriptors closed; the difference is what a
running broker's active segment has on disk. Nothing reads that: after an unclean stop the active
segment (and everything after the recovery point) is re-scanned and its indexes rebuilt, so only
rolled segments' indexes are trusted, and they were made durable by the roll; a clean close writes
the active segment's too.

Loading checks more than Kafka's ``sanityCheck`` (whole entries, last offset not below the base):
every entry must keep the invariants above, lie inside the segment file, and the last offset entry
must point at a batch header whose base offset is at most the entry's. A file failing any of it is
corrupt and its segment is re-scanned (Kafka rebuilds on ``CorruptIndexException`` too).
"""

from __future__ import annotations

import bisect
import contextlib
import os
import struct
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kraft.records.batch import NO_TIMESTAMP

OFFSET_INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
OFFSET_ENTRY_SIZE = 8
TIME_ENTRY_SIZE = 12
# Kafka's log.index.interval.bytes and log.index.size.max.bytes defaults.
DEFAULT_INDEX_INTERVAL_BYTES = 4096
DEFAULT_MAX_INDEX_BYTES = 10 * 1024 * 1024

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")

_fdatasync = getattr(os, "fdatasync", os.fsync)


class CorruptIndexError(Exception):
    """An index file that breaks the invariants of this module (its segment must be re-scanned)."""


def offset_index_file_name(base_offset: int) -> str:
    return f"{base_offset:020d}{OFFSET_INDEX_SUFFIX}"


def time_index_file_name(base_offset: int) -> str:
    return f"{base_offset:020d}{TIME_INDEX_SUFFIX}"


def decode_offset_index(data: bytes, base_offset: int) -> list[tuple[int, int]]:
    """(absolute offset, position) of every whole 8-byte entry of an ``.index`` file, zero-filled
    preallocated ones included (a reader decides where they end)."""
    n = len(data) // OFFSET_ENTRY_SIZE
    return [(base_offset + rel, pos) for rel, pos in _OFFSET_ENTRY.iter_unpack(data[: n * OFFSET_ENTRY_SIZE])]


def decode_time_index(data: bytes, base_offset: int) -> list[tuple[int, int]]:
    """(timestamp, absolute offset) of every whole 12-byte entry of a ``.timeindex`` file."""
    n = len(data) // TIME_ENTRY_SIZE
    return [(ts, base_offset + rel) for ts, rel in _TIME_ENTRY.iter_unpack(data[: n * TIME_ENTRY_SIZE])]


@dataclass(frozen=True, slots=True)
class IndexConfig:
    """``log.index.interval.bytes`` and ``log.index.size.max.bytes``; ``files`` False keeps the
    indexes in memory only (the metadata log)."""

    interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES
    max_bytes: int = DEFAULT_MAX_INDEX_BYTES
    files: bool = True


class SegmentIndexes:
    """The offset and time index of one segment. Single-threaded, owned by its ``SegmentLog``."""

    __slots__ = (
        "_no_files",
        "_synced",
        "_written_offsets",
        "_written_times",
        "base_offset",
        "bytes_since_entry",
        "config",
        "max_timestamp",
        "offset_of_max_timestamp",
        "offset_path",
        "offsets",
        "positions",
        "time_offsets",
        "time_path",
        "timestamps",
    )

    def __init__(self, directory: Path | None, base_offset: int, config: IndexConfig) -> None:
        self.base_offset = base_offset
        self.config = config
        self.offsets = array("q")
        self.positions = array("q")
        self.timestamps = array("q")
        self.time_offsets = array("q")
        self.bytes_since_entry = 0
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset
        # Entries already in the files (a prefix of the held ones); -1: the files are rewritten whole
        # at the next write (new, rebuilt, or of unknown content).
        self._written_offsets = -1
        self._written_times = -1
        self._synced = False  # the files, as written, are durable
        self._no_files = False  # known to have no files (an empty segment's): none to delete
        if directory is not None and config.files:
            self.offset_path: Path | None = directory / offset_index_file_name(base_offset)
            self.time_path: Path | None = directory / time_index_file_name(base_offset)
        else:
            self.offset_path = self.time_path = None

    # ------------------------------------------------------------------ files

    def open_files(self) -> None:
        """The held entries replace whatever the files had, at the next write (``seal``)."""
        self._written_offsets = self._written_times = -1
        self._no_files = False

    def attach_files(self, *, present: bool = True) -> None:
        """The files hold the entries just loaded from them (zeros of a preallocated file after);
        ``present`` False: an empty segment's, which has none (and nothing to delete at close: a
        broker stopping with 15,000 empty partitions tried to unlink 30,000 absent files)."""
        self._written_offsets, self._written_times = len(self.offsets), len(self.timestamps)
        self._synced = not present  # the zeros of a preallocated file are trimmed at the next sync
        self._no_files = not present

    def write_files(self, *, sync: bool = False) -> None:
        """Bring both files to the held entries (the unwritten tail, or everything), trimmed."""
        if self.offset_path is None or self.time_path is None:
            return
        empty = not self.offsets and not self.timestamps and not self.bytes_since_entry
        written = self._written_offsets == len(self.offsets) and self._written_times == len(self.timestamps)
        if written and (self._synced or not sync) and (empty or not self._no_files):
            return  # the files hold every entry already (durably, if asked)
        if empty:
            # An empty segment: no files (a segment of 0 bytes loads as empty indexes); stale ones
            # go. A broker stopping with 15,000 empty partitions created and synced 30,000 files.
            if not self._no_files and not (
                self._synced and self._written_offsets == 0 and self._written_times == 0
            ):
                self.delete_files()
            self._written_offsets = self._written_times = 0
            self._synced = True
            self._no_files = True
            return
        # (A segment that had no files gets both now, as Kafka's every segment has.)
        self._no_files = False
        base = self.base_offset
        offset_from, self._written_offsets = self._written_offsets, len(self.offsets)
        _write_entries(
            self.offset_path,
            offset_from,
            len(self.offsets),
            OFFSET_ENTRY_SIZE,
            lambda k: _OFFSET_ENTRY.pack(self.offsets[k] - base, self.positions[k]),
            sync,
        )
        time_from, self._written_times = self._written_times, len(self.timestamps)
        _write_entries(
            self.time_path,
            time_from,
            len(self.timestamps),
            TIME_ENTRY_SIZE,
            lambda k: _TIME_ENTRY.pack(self.timestamps[k], self.time_offsets[k] - base),
            sync,
        )
        self._synced = sync

    def seal(self) -> None:
        """The segment stops being active: force the final time entry; write, trim, fdatasync."""
        self._append_time(self.max_timestamp, self.offset_of_max_timestamp)
        self.write_files(sync=True)

    def delete_files(self) -> None:
        for path in (self.offset_path, self.time_path):
            if path is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    def load(self, segment_size: int) -> None:
        """Read both files (trimmed or preallocated) and check them; raises ``CorruptIndexError``
        (or ``FileNotFoundError``). Entries past the last valid one of a preallocated file (zeros)
        are not taken: Kafka's entries never have position 0 or a repeated offset."""
        assert self.offset_path is not None and self.time_path is not None
        try:
            offset_data = self.offset_path.read_bytes()
            time_data = self.time_path.read_bytes()
        except FileNotFoundError:
            if segment_size or self.offset_path.exists() or self.time_path.exists():
                raise
            offset_data = time_data = b""  # an empty segment's indexes have no files
        if len(offset_data) % OFFSET_ENTRY_SIZE or len(time_data) % TIME_ENTRY_SIZE:
            raise CorruptIndexError("index file length is not a whole number of entries")
        base = self.base_offset
        offsets, positions = array("q"), array("q")
        last_offset, last_position = base - 1, 0
        for rel, pos in _OFFSET_ENTRY.iter_unpack(offset_data):
            offset = base + rel
            if offset <= last_offset or pos <= last_position or pos >= segment_size:
                if rel == 0 and pos == 0:
                    break  # the zeros of a preallocated file
                raise CorruptIndexError(f"offset index entry ({offset}, {pos}) breaks the order or the size")
            offsets.append(offset)
            positions.append(pos)
            last_offset, last_position = offset, pos
        timestamps, time_offsets = array("q"), array("q")
        last_ts, last_toffset = NO_TIMESTAMP, base
        for ts, rel in _TIME_ENTRY.iter_unpack(time_data):
            offset = base + rel
            if ts <= last_ts or offset < last_toffset:
                if ts == 0 and rel == 0:
                    break
                raise CorruptIndexError(f"time index entry ({ts}, {offset}) breaks the order")
            timestamps.append(ts)
            time_offsets.append(offset)
            last_ts, last_toffset = ts, offset
        self.offsets, self.positions = offsets, positions
        self.timestamps, self.time_offsets = timestamps, time_offsets
        if timestamps:
            self.max_timestamp = timestamps[-1]
            self.offset_of_max_timestamp = time_offsets[-1]

    # ------------------------------------------------------------------ maintenance

    def is_full(self) -> bool:
        """Whether either index holds as many entries as ``max_bytes`` has room for (Kafka's
        ``isFull``): the segment log then rolls before its next append."""
        max_bytes = self.config.max_bytes
        return (
            len(self.offsets) >= max_bytes // OFFSET_ENTRY_SIZE
            or len(self.timestamps) >= max_bytes // TIME_ENTRY_SIZE
        )

    def on_batch(self, position: int, last_offset: int, max_timestamp: int, size: int) -> None:
        """Account for the batch written at ``position`` (see the module docstring for the rule).

        A full index takes no entry (the segment log rolls before the next append; the batches of
        the append that filled it are found by walking forward from the last entry)."""
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = last_offset
        if self.bytes_since_entry > self.config.interval_bytes and not self.is_full():
            self.offsets.append(last_offset)
            self.positions.append(position)
            self._append_time(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_entry = 0
        self.bytes_since_entry += size

    def _append_time(self, timestamp: int, offset: int) -> None:
        if timestamp <= (self.timestamps[-1] if self.timestamps else NO_TIMESTAMP):
            return
        self.timestamps.append(timestamp)
        self.time_offsets.append(offset)

    def truncate_to(self, offset: int) -> None:
        """Forget the entries at or past ``offset`` (Kafka's ``truncateTo``); the caller then feeds
        ``max_timestamp`` again from the batches kept after the last entry (``restart_max``)."""
        k = bisect.bisect_left(self.offsets, offset)
        del self.offsets[k:], self.positions[k:]
        t = bisect.bisect_left(self.time_offsets, offset)
        del self.timestamps[t:], self.time_offsets[t:]
        self.bytes_since_entry = 0
        if self.timestamps:
            self.max_timestamp, self.offset_of_max_timestamp = self.timestamps[-1], self.time_offsets[-1]
        else:
            self.max_timestamp, self.offset_of_max_timestamp = NO_TIMESTAMP, self.base_offset
        # Files already written past the cut are cut durably now: a rolled segment's files are
        # trusted at open.
        if self._written_offsets > len(self.offsets) or self._written_times > len(self.timestamps):
            self._written_offsets = min(self._written_offsets, len(self.offsets))
            self._written_times = min(self._written_times, len(self.timestamps))
            self._synced = False  # longer than their entries now
            self.write_files(sync=True)

    def reset(self) -> None:
        self.truncate_to(self.base_offset)

    # ------------------------------------------------------------------ lookups

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry at or before ``offset``; (base - 1, 0) if none.
        The batch holding ``offset`` starts at or after that position."""
        k = bisect.bisect_right(self.offsets, offset) - 1
        if k < 0:
            return self.base_offset - 1, 0
        return self.offsets[k], self.positions[k]

    def position_at_or_below(self, position: int) -> int:
        """The largest entry position at or below ``position`` (0 if none): a batch start."""
        k = bisect.bisect_right(self.positions, position) - 1
        return self.positions[k] if k >= 0 else 0

    def lookup_time(self, timestamp: int) -> int:
        """An offset at or before the first batch whose max timestamp is >= ``timestamp``: the
        offset of the last entry whose timestamp is below it, else the base offset (Kafka's
        ``TimeIndex.lookup`` on the largest lower bound)."""
        k = bisect.bisect_left(self.timestamps, timestamp) - 1
        return self.time_offsets[k] if k >= 0 else self.base_offset


def _write_entries(
    path: Path, written: int, held: int, size: int, entry: Callable[[int], bytes], sync: bool
) -> None:
    """Write entries ``written..held`` of a file that holds the first ``written`` (-1: rewrite it
    whole), cut it after the last entry, fdatasync it if ``sync``; the file is closed again."""
    rewrite = written < 0
    fd = os.open(path, os.O_RDWR | os.O_CREAT | (os.O_TRUNC if rewrite else 0), 0o644)
    try:
        first = 0 if rewrite else written
        if first < held:
            os.pwrite(fd, b"".join(entry(k) for k in range(first, held)), first * size)
        os.ftruncate(fd, held * size)
        if sync:
            _fdatasync(fd)
    finally:
        os.close(fd)
