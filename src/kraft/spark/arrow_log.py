"""The metadata log's files as Arrow record batches of ``RECORD_SCHEMA`` (no Spark needed).

Two steps, so that a planner can spread the work and a worker can do it:

* ``plan_units(path, ...)`` lists the read units of a log directory (or of one file): one per
  non-empty segment file and, with ``include_snapshots``, per snapshot file. A file larger than
  ``max_bytes_per_unit`` is split into several units at batch boundaries, found by walking the
  12-byte batch prefixes (base offset, length) without decoding records. Units whose offsets
  cannot pass the ``RowFilter`` are left out.
* ``read_unit(unit, row_filter)`` reads one unit and yields ``pyarrow.RecordBatch``es of exactly
  ``RECORD_SCHEMA`` (about ``batch_rows`` rows each; a log batch is never split across two).

Rows equal what ``kraft dump-log --cluster-metadata-decoder --json`` prints for the same records
(see ``kraft.spark.columns``): ``payload`` is dump-log's ``payload.data`` of a metadata record or
``control`` of a control record as compact JSON (``ensure_ascii=False``). A record of a type kraft
reads past (ACLs, SCRAM, quotas, tokens: dump-log's ``payload_unmodelled``) gets its Kafka type name
and version but a null payload; a value that is not a metadata record at all (the
test-raft-server's payloads) gets nulls and stays in ``value``. A snapshot's rows all carry the
snapshot's end offset - 1 as ``offset`` (``batch_base_offset`` stays the batch's own, as in the
file).

Integrity, as ``SegmentLog`` recovery judges it: every batch read is checked (header, length, magic,
CRC-32C, dense offsets from the file name's base offset, non-decreasing epochs), and a batch that
fails is a ``LogReadError`` naming the file, the byte position and the offset, except for a torn
tail: an invalid batch in the log's *last* segment with no valid batch after it, which ends the
read there (the segment is being written, or a crash cut it; ``SegmentLog`` would truncate it at open).
A snapshot file is complete once published, so any invalid batch in it is an error. A batch with
a valid CRC whose records do not parse is an error too. Batches outside the row filter's offsets
are checked but not decoded; nothing after the filter's end offset is read.

Decoding: every batch is checked here in Python as above. The records of a plain data batch (not
a control batch, every row passing the filter, no record type filter) then go straight into Arrow
buffers through the C decoder ``kraft.records._native_decode``, with no Python object per record;
it declines any batch with record headers, a metadata record (a value starting with the frame
version byte, whose payload is decoded in Python) or anything the checked Python decoder would
reject, and such a batch, like every other one, is decoded in Python from ``Record``s: same rows,
same errors. ``KRAFT_PURE_PYTHON=1`` in the environment, or ``USE_NATIVE = False``, forces the
Python path; it is also taken where the extension was not built.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from kraft.common.errors import CorruptRecordError, StorageError
from kraft.metadata.records import (
    FRAME_VERSION,
    IGNORED_RECORD_TYPES,
    PAYLOAD_WITHHELD_RECORD_TYPES,
    UNMODELLED_RECORD_NAMES,
    MetadataRecordType,
    UnmodelledRecordError,
    decode_record,
    record_to_json,
)
from kraft.records.batch import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    PURE_PYTHON_ENV,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    Compression,
    Record,
    batch_crc_valid,
    decode_batch,
    decompress_records,
    find_valid_batch,
    read_batch_header,
)
from kraft.records.control import control_type_of, decode_control_record, to_kafka_json
from kraft.spark.columns import RECORD_SCHEMA
from kraft.storage.log_dir import METADATA_PARTITION_DIR_NAME, metadata_partition_dir
from kraft.storage.meta_properties import read_meta_properties

_NativeBuilder: type[ColumnBuilder] | None
try:
    from kraft.records._native_decode import ColumnBuilder

    _NativeBuilder = ColumnBuilder
except ImportError:  # installed where it could not be compiled: every batch takes the Python path
    _NativeBuilder = None

BOOTSTRAP_SNAPSHOT = "bootstrap.checkpoint"
SEGMENT = "segment"
SNAPSHOT = "snapshot"
# Work per unit: a few seconds of decoding, so that a big segment spreads over the cores while
# Spark's ~30 ms per task stays negligible.
DEFAULT_MAX_BYTES_PER_UNIT = 32 * 1024 * 1024
# Rows per Arrow batch. Spark pays per batch on both sides of the Python worker (an Arrow IPC
# message, a JVM column batch): measured on bench_spark_source.py (2M data records, local[2]),
# 4096 rows gave 1.22M rows/s and 32768 rows 1.57M; 131072 no more. About 4 MB of data-log rows.
DEFAULT_BATCH_ROWS = 32768

_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_PREFIX = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_POSITION = 23
_TS_US = pa.timestamp("us", tz="UTC")
# Decoded payloads are cached by value bytes (KRaft repeats many records verbatim: NoOpRecords,
# heartbeat-driven registration changes); small values only, and the cache is dropped when full.
_CACHE_MAX_ENTRIES = 16384
_CACHE_MAX_VALUE = 512

# Type id -> dump-log's payload type name, for the records it names (modelled and read-past).
_TYPE_NAMES: dict[int, str] = {
    **{int(t): t.upper_name for t in MetadataRecordType},
    **{t: UNMODELLED_RECORD_NAMES.get(t, f"UNKNOWN_{t}") for t in IGNORED_RECORD_TYPES},
}

_Decoded = tuple[str | None, int | None, str | None]  # record_type, record_version, payload
_NOT_METADATA: _Decoded = (None, None, None)
_FALSE = pa.scalar(False, pa.bool_())

# The C decoder (kraft.records._native_decode) turns the records of plain data batches straight
# into Arrow buffers; every other batch, and any batch it declines, takes the Python path, which
# gives the same rows or the same error. Set PURE_PYTHON_ENV=1 in the environment (Spark's workers
# inherit it) or USE_NATIVE = False here to force the Python path everywhere.
USE_NATIVE = _NativeBuilder is not None and os.environ.get(PURE_PYTHON_ENV, "") in ("", "0")


class LogReadError(StorageError):
    """A file of the log cannot be read as it is: corrupt, missing data, or gone.

    ``file`` and ``position`` locate the problem; ``offset`` is the batch's offset (or the offset
    expected there) when known.
    """

    def __init__(
        self, message: str, file: str, position: int | None = None, offset: int | None = None
    ) -> None:
        super().__init__(message)
        self.file = file
        self.position = position
        self.offset = offset

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.file, self.position, self.offset))


# -------------------------------------------------------------------------------------------------
# Row filters


@dataclass(frozen=True, slots=True)
class RowFilter:
    """The rows a read keeps (the AND of every constraint); the default keeps all.

    ``start``/``end`` bound ``offset`` (inclusive/exclusive), ``offsets`` lists the allowed
    offsets; ``record_types`` lists the allowed ``record_type`` values and
    ``record_type_not_null`` drops rows without one (so both drop every control record).
    """

    start: int | None = None
    end: int | None = None
    offsets: frozenset[int] | None = None
    record_types: frozenset[str] | None = None
    record_type_not_null: bool = False

    def offset_at_least(self, offset: int) -> RowFilter:
        return replace(self, start=offset if self.start is None else max(self.start, offset))

    def offset_below(self, offset: int) -> RowFilter:
        return replace(self, end=offset if self.end is None else min(self.end, offset))

    def offset_in(self, offsets: Iterable[int]) -> RowFilter:
        allowed = frozenset(offsets)
        return replace(self, offsets=allowed if self.offsets is None else self.offsets & allowed)

    def record_type_in(self, names: Iterable[str]) -> RowFilter:
        allowed = frozenset(names)
        return replace(
            self, record_types=allowed if self.record_types is None else self.record_types & allowed
        )

    def record_type_present(self) -> RowFilter:
        return replace(self, record_type_not_null=True)

    def intersect(self, other: RowFilter) -> RowFilter:
        """The rows both filters keep."""
        out = self
        if other.start is not None:
            out = out.offset_at_least(other.start)
        if other.end is not None:
            out = out.offset_below(other.end)
        if other.offsets is not None:
            out = out.offset_in(other.offsets)
        if other.record_types is not None:
            out = out.record_type_in(other.record_types)
        if other.record_type_not_null:
            out = out.record_type_present()
        return out

    @property
    def filters_record_types(self) -> bool:
        return self.record_types is not None or self.record_type_not_null

    @property
    def filters_offsets(self) -> bool:
        return self.start is not None or self.end is not None or self.offsets is not None

    def admits_offset(self, offset: int) -> bool:
        return (
            (self.start is None or offset >= self.start)
            and (self.end is None or offset < self.end)
            and (self.offsets is None or offset in self.offsets)
        )

    def admits_record_type(self, name: str | None) -> bool:
        if name is None:
            return not self.filters_record_types
        return self.record_types is None or name in self.record_types

    def may_contain(self, low: int, high: int | None) -> bool:
        """Whether any offset in ``[low, high)`` (``high`` None: unbounded) can pass."""
        if self.record_types is not None and not self.record_types:
            return False
        lo = low if self.start is None else max(low, self.start)
        hi = high if self.end is None else (self.end if high is None else min(high, self.end))
        if hi is not None and lo >= hi:
            return False
        if self.offsets is None:
            return True
        return any(o >= lo and (hi is None or o < hi) for o in self.offsets)

    def covers(self, low: int, high: int) -> bool:
        """Whether every offset in ``[low, high)`` passes the offset constraints."""
        return (
            self.offsets is None
            and (self.start is None or low >= self.start)
            and (self.end is None or high <= self.end)
        )


ALL_ROWS = RowFilter()


# -------------------------------------------------------------------------------------------------
# Locating the files


@dataclass(frozen=True, slots=True)
class LogFiles:
    """What a path given to the reader designates.

    ``segments``: (base offset, path) ascending; ``snapshots``: (end offset, epoch, path)
    ascending; ``last_segment``: the path of the partition directory's last segment (the one that
    may have a torn tail), even when only one other file was asked for; ``node``: the node id of
    ``meta.properties`` in the metadata log directory, if there is one; ``single_file``: the path
    was one file (a snapshot file given alone is read whatever ``include_snapshots`` says).
    """

    segments: tuple[tuple[int, str], ...]
    snapshots: tuple[tuple[int, int, str], ...]
    last_segment: str | None
    node: int | None
    single_file: bool


def _list_dir(directory: Path) -> tuple[list[tuple[int, str]], list[tuple[int, int, str]]]:
    segments: list[tuple[int, str]] = []
    snapshots: list[tuple[int, int, str]] = []
    for name in os.listdir(directory):
        m = _SEGMENT_NAME.match(name)
        if m is not None:
            segments.append((int(m.group(1)), str(directory / name)))
            continue
        m = _SNAPSHOT_NAME.match(name)
        if m is not None:
            snapshots.append((int(m.group(1)), int(m.group(2)), str(directory / name)))
    return sorted(segments), sorted(snapshots)


def _node_of(metadata_dir: Path) -> int | None:
    meta = read_meta_properties(metadata_dir)
    return None if meta is None else meta.node_id


def locate(path: str | os.PathLike[str]) -> LogFiles:
    """The files of ``path``: a node's ``metadata.log.dir``, its ``__cluster_metadata-0``
    directory, or one segment (``<base offset>.log``), snapshot (``<offset>-<epoch>.checkpoint``)
    or ``bootstrap.checkpoint`` file.

    Raises:
        StorageError: the path does not exist or is none of these; ``meta.properties`` is invalid.
    """
    p = Path(os.path.abspath(os.fspath(path)))
    if p.is_dir():
        partition_dir = metadata_partition_dir(p)
        if not partition_dir.is_dir():
            partition_dir = p
        segments, snapshots = _list_dir(partition_dir)
        if partition_dir.name != METADATA_PARTITION_DIR_NAME and not segments and not snapshots:
            raise StorageError(
                f"{p} holds no {METADATA_PARTITION_DIR_NAME} directory and no segment or snapshot file: "
                f"pass a node's metadata.log.dir, its {METADATA_PARTITION_DIR_NAME} directory, or one "
                ".log/.checkpoint file"
            )
        return LogFiles(
            segments=tuple(segments),
            snapshots=tuple(snapshots),
            last_segment=segments[-1][1] if segments else None,
            node=_node_of(partition_dir.parent),
            single_file=False,
        )
    if not p.exists():
        raise StorageError(f"{p} does not exist")
    name = p.name
    if name == BOOTSTRAP_SNAPSHOT:
        return LogFiles((), ((0, 0, str(p)),), None, _node_of(p.parent), True)
    seg = _SEGMENT_NAME.match(name)
    snap = _SNAPSHOT_NAME.match(name)
    if seg is None and snap is None:
        raise StorageError(
            f"{p} is not a segment (<20-digit base offset>.log) or snapshot "
            "(<offset>-<epoch>.checkpoint, bootstrap.checkpoint) file"
        )
    siblings, _ = _list_dir(p.parent)
    last = siblings[-1][1] if siblings else None
    node = _node_of(p.parent.parent)
    if seg is not None:
        return LogFiles(((int(seg.group(1)), str(p)),), (), last, node, True)
    assert snap is not None
    return LogFiles((), ((int(snap.group(1)), int(snap.group(2)), str(p)),), last, node, True)


# -------------------------------------------------------------------------------------------------
# Planning


@dataclass(frozen=True, slots=True)
class ReadUnit:
    """A byte range of one file, read as one task (picklable).

    ``start``/``end``: byte positions (batch boundaries; ``end`` of a file's last unit is the file
    size when planned); ``first_offset``: the base offset the batch at ``start`` must have;
    ``end_offset``: offsets of this unit are below it (the next unit's or segment's first offset;
    None for the tail of the last segment), and for the last unit of a non-last segment, where
    the data must end; ``min_epoch``: the epoch of the batch before ``start`` (-1: unknown);
    ``file_size``: the file's size when planned (a torn tail is judged up to there);
    ``last_segment``: the file is the log's last segment; ``snapshot_offset``: for a snapshot,
    the offset its rows carry (end offset - 1).
    """

    path: str
    kind: str
    start: int
    end: int
    first_offset: int
    end_offset: int | None
    min_epoch: int
    file_size: int
    last_segment: bool
    node: int | None
    snapshot_offset: int | None = None

    @property
    def size(self) -> int:
        return self.end - self.start

    def may_contain(self, row_filter: RowFilter) -> bool:
        if row_filter.record_types is not None and not row_filter.record_types:
            return False
        if self.snapshot_offset is not None:
            return row_filter.admits_offset(self.snapshot_offset)
        return row_filter.may_contain(self.first_offset, self.end_offset)


def _split_points(path: str, size: int, max_bytes: int, first_offset: int) -> list[tuple[int, int, int]]:
    """(position, expected base offset, previous epoch) of each batch where a new unit starts.

    Walks the batch prefixes of the file; stops at the first one that is not a whole batch of a
    sane length (what lies beyond is left to the reader of the last unit to judge).
    """
    points: list[tuple[int, int, int]] = []
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        size = min(size, len(mm))
        pos = 0
        unit_start = 0
        expected = first_offset
        epoch = -1
        while pos + HEADER_SIZE <= size:
            base, length, batch_epoch = _PREFIX.unpack_from(mm, pos)
            if length < MIN_BATCH_LENGTH or pos + LOG_OVERHEAD + length > size:
                break
            if pos - unit_start >= max_bytes:
                points.append((pos, expected, epoch))
                unit_start = pos
            (last_delta,) = _LAST_OFFSET_DELTA.unpack_from(mm, pos + _LAST_OFFSET_DELTA_POSITION)
            expected = base + max(last_delta, 0) + 1
            epoch = batch_epoch
            pos += LOG_OVERHEAD + length
    return points


def _file_units(
    path: str,
    kind: str,
    first_offset: int,
    end_offset: int | None,
    max_bytes: int,
    *,
    last_segment: bool,
    node: int | None,
    snapshot_offset: int | None = None,
) -> list[ReadUnit]:
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise LogReadError(f"{path}: the file is gone (deleted while planning the read)", path) from None
    if size == 0:
        return []
    points = _split_points(path, size, max_bytes, first_offset) if size > max_bytes else []
    starts = [(0, first_offset, -1), *points]
    units = []
    for i, (start, offset, epoch) in enumerate(starts):
        last = i + 1 == len(starts)
        units.append(
            ReadUnit(
                path=path,
                kind=kind,
                start=start,
                end=size if last else starts[i + 1][0],
                first_offset=offset,
                end_offset=end_offset if last else starts[i + 1][1],
                min_epoch=epoch,
                file_size=size,
                last_segment=last_segment,
                node=node,
                snapshot_offset=snapshot_offset,
            )
        )
    return units


def plan_units(
    path: str | os.PathLike[str] | LogFiles,
    *,
    include_snapshots: bool = False,
    max_bytes_per_unit: int = DEFAULT_MAX_BYTES_PER_UNIT,
    row_filter: RowFilter = ALL_ROWS,
) -> list[ReadUnit]:
    """The read units of ``path`` (see ``locate``) that ``row_filter`` may keep rows of:
    snapshots first (oldest first, only with ``include_snapshots`` or when the path is the
    snapshot file), then segments by offset.

    Raises:
        StorageError: see ``locate``; ``LogReadError`` if a file vanishes while planning.
        ValueError: ``max_bytes_per_unit`` is not positive.
    """
    if max_bytes_per_unit <= 0:
        raise ValueError(f"max_bytes_per_unit must be positive, got {max_bytes_per_unit}")
    files = path if isinstance(path, LogFiles) else locate(path)
    units: list[ReadUnit] = []
    if include_snapshots or files.single_file:
        for end, _epoch, snap_path in files.snapshots:
            if not row_filter.admits_offset(end - 1):
                continue
            units += _file_units(
                snap_path,
                SNAPSHOT,
                0,
                None,
                max_bytes_per_unit,
                last_segment=False,
                node=files.node,
                snapshot_offset=end - 1,
            )
    for i, (base, seg_path) in enumerate(files.segments):
        next_base = files.segments[i + 1][0] if i + 1 < len(files.segments) else None
        last = seg_path == files.last_segment
        if next_base is None and not last:
            # One segment given alone: its end is where the next one in its directory begins.
            siblings, _ = _list_dir(Path(seg_path).parent)
            later = [b for b, _p in siblings if b > base]
            next_base = later[0] if later else None
        if not row_filter.may_contain(base, next_base):
            continue
        units += [
            u
            for u in _file_units(
                seg_path, SEGMENT, base, next_base, max_bytes_per_unit, last_segment=last, node=files.node
            )
            if u.may_contain(row_filter)
        ]
    return units


# -------------------------------------------------------------------------------------------------
# Reading


def _open(path: str, start: int) -> int:
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise LogReadError(
            f"{path}: the file is gone (deleted after the read was planned, e.g. by snapshot cleanup)",
            path,
            start,
        ) from None


def _read_range(path: str, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of the file, fewer if it is now shorter."""
    fd = _open(path, start)
    try:
        parts: list[bytes] = []
        pos = start
        while pos < end:
            chunk = os.pread(fd, min(end - pos, 64 * 1024 * 1024), pos)
            if not chunk:
                break
            parts.append(chunk)
            pos += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


# Spark reuses its Python workers, and filling a fresh buffer with a unit costs more in page faults
# than in copying from the page cache (about 11 ms against 4 ms for 32 MiB here): the buffer of a
# finished read_unit is kept for the next one in the process (one, of at most this size).
_SPARE_MAX_BYTES = 2 * DEFAULT_MAX_BYTES_PER_UNIT
_spare_buffers: list[bytearray] = []


@contextlib.contextmanager
def _unit_bytes(path: str, start: int, end: int) -> Iterator[memoryview]:
    """Bytes ``[start, end)`` of the file, fewer if it is now shorter, in a reused buffer that
    must not be used after the ``with`` block (everything read_unit keeps is copied out of it)."""
    size = max(end - start, 0)
    buffer = _spare_buffers.pop() if _spare_buffers else bytearray()
    if len(buffer) < size:
        buffer = bytearray(size)
    fd = _open(path, start)
    try:
        view = memoryview(buffer)
        got = 0
        while got < size:
            n = os.preadv(fd, [view[got:size]], start + got)
            if not n:
                break
            got += n
    finally:
        os.close(fd)
    with view[:got] as data:
        yield data
    view.release()
    if len(buffer) <= _SPARE_MAX_BYTES and not _spare_buffers:
        _spare_buffers.append(buffer)


def _valid_batch_after(unit: ReadUnit, position: int, next_offset: int) -> int | None:
    """File position of a CRC-valid batch at or after ``next_offset`` anywhere after
    ``position`` (up to the planned file size): the test ``SegmentLog`` recovery applies before it
    calls an invalid batch a torn tail."""
    found = find_valid_batch(_read_range(unit.path, position, unit.file_size), next_offset)
    return None if found is None else position + found


def _batch_problem(
    data: bytes | memoryview, pos: int, file_pos: int, expected: int, last_epoch: int
) -> tuple[BatchHeader | None, str | None]:
    try:
        header = read_batch_header(data, pos)
    except CorruptRecordError as e:
        return None, "invalid batch header: " + str(e).replace(f"position {pos}", f"position {file_pos}")
    if header is None:
        return None, f"short batch header ({len(data) - pos} bytes before the end of the file)"
    if pos + header.size_in_bytes > len(data):
        return header, f"batch length {header.batch_length} runs past the end of the file"
    if not batch_crc_valid(data, pos, header):
        return header, "CRC mismatch"
    if header.base_offset != expected:
        return header, f"batch has base offset {header.base_offset}, expected {expected}"
    if header.partition_leader_epoch < last_epoch:
        return header, f"batch epoch {header.partition_leader_epoch} is below the previous {last_epoch}"
    return header, None


def _peek_type_name(value: bytes | None) -> str | None:
    """dump-log's type name from a value's frame header, without decoding the record (None:
    the value cannot be a record that has one)."""
    if value is None or len(value) < 3 or value[0] != FRAME_VERSION:
        return None
    type_id = 0
    shift = 0
    for i in range(1, min(len(value), 4)):
        b = value[i]
        type_id |= (b & 0x7F) << shift
        if not b & 0x80:
            return _TYPE_NAMES.get(type_id)
        shift += 7
    return None


def _compact(obj: Any) -> str:
    # Kafka's Jackson output, as dump-log prints payloads: compact, non-ASCII as is.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _withheld(value: bytes) -> tuple[int, int] | None:
    """(type, version) of a frame whose type's payload is withheld (``PAYLOAD_WITHHELD_RECORD_TYPES``),
    read as far as ``decode_record`` reads an unmodelled one; None for any other frame."""
    from kraft.common.errors import MalformedMessageError
    from kraft.protocol.primitives import Reader

    r = Reader(value)
    try:
        r.unsigned_varint("frame version")
        type_id = r.unsigned_varint("record type")
        version = r.unsigned_varint("record version")
    except MalformedMessageError:
        return None
    if type_id not in PAYLOAD_WITHHELD_RECORD_TYPES or version > 0x7FFF:
        return None
    return type_id, version


class _PayloadDecoder:
    """Metadata and control record decoding as dump-log does it, with a cache for repeated values."""

    def __init__(self) -> None:
        self._cache: dict[bytes, _Decoded] = {}

    def metadata(self, value: bytes | None) -> _Decoded:
        if value is None or not value or value[0] != FRAME_VERSION:
            # Not an ApiMessageAndVersion frame (e.g. a test-raft-server payload): decode_record
            # would refuse it anyway, after costing more than the whole row; nor worth caching.
            return _NOT_METADATA
        hit = self._cache.get(value)
        if hit is not None:
            return hit
        try:
            withheld = _withheld(value)
            if withheld is not None:
                # Secrets (SCRAM): named, payload withheld, as for the unmodelled types.
                decoded: _Decoded = (_TYPE_NAMES[withheld[0]], withheld[1], None)
            else:
                obj = record_to_json(decode_record(value))
                decoded = (obj["type"], obj["version"], _compact(obj["data"]))
        except UnmodelledRecordError as e:
            u = e.record
            decoded = (_TYPE_NAMES.get(u.type, f"UNKNOWN_{u.type}"), u.version, None)
        except CorruptRecordError:
            decoded = _NOT_METADATA
        if len(value) <= _CACHE_MAX_VALUE:
            if len(self._cache) >= _CACHE_MAX_ENTRIES:
                self._cache.clear()
            self._cache[value] = decoded
        return decoded

    @staticmethod
    def control(record: Record) -> tuple[str | None, str | None]:
        """(control_type, payload) as dump-log's ``control_type`` and ``control``."""
        try:
            kind = control_type_of(record)
        except CorruptRecordError:
            return None, None
        if kind is None:
            return "UNKNOWN", None
        try:
            return kind.name, _compact(to_kafka_json(decode_control_record(record)[1]))
        except CorruptRecordError:
            return kind.name, None


class _Columns:
    """The rows being gathered; ``take()`` turns them into one Arrow batch.

    Rows arrive in runs of one kind: Python lists filled from ``Record``s (``add_control``,
    ``add_data``) or the C builder's buffers (``add_plain``). When the kind changes, the open run
    is closed into arrays (a piece), so the rows keep their order; ``take()`` concatenates the
    pieces, then adds the columns that are the same for the whole unit.
    """

    def __init__(self, unit: ReadUnit, native: bool) -> None:
        self._unit = unit
        self._native = _NativeBuilder() if native and _NativeBuilder is not None else None
        self._pieces: list[list[pa.Array]] = []
        self._rows = 0  # in the pieces and the open run
        self._clear()

    def _clear(self) -> None:
        self.offset: list[int] = []
        self.epoch: list[int] = []
        self.base: list[int] = []
        self.timestamp: list[int] = []
        self.is_control: list[bool] = []
        self.control_type: list[str | None] = []
        self.record_type: list[str | None] = []
        self.record_version: list[int | None] = []
        self.key: list[bytes | None] = []
        self.value: list[bytes | None] = []
        self.payload: list[str | None] = []

    def __len__(self) -> int:
        return self._rows

    def add_plain(
        self, data: bytes | bytearray | memoryview, pos: int, header: BatchHeader, row_offset: int | None
    ) -> bool:
        """Add the rows of the data batch at ``pos`` (whole and checked) through the C decoder, as
        ``add_data`` would add them; False (nothing added) when it is to be decoded in Python.
        ``row_offset``: the offset of every row (a snapshot's), else the records' own."""
        native = self._native
        if native is None:
            return False
        if header.records_count == 0:
            # decode_batch: a batch of no records (one emptied by compaction) has none.
            return True
        body = data
        start, end = pos + HEADER_SIZE, pos + header.size_in_bytes
        if header.compression != Compression.NONE:
            try:
                body = decompress_records(data, pos, header)
            except CorruptRecordError:
                return False  # the Python path raises it, worded as ever
            start, end = 0, len(body)
        added = native.add_batch(
            body,
            start,
            end,
            header.base_offset,
            header.partition_leader_epoch,
            header.records_count,
            header.base_timestamp,
            # Kafka: with LogAppendTime every record carries the batch's maxTimestamp.
            header.max_timestamp if header.attributes & TIMESTAMP_TYPE_MASK else None,
            row_offset,
            # A metadata record's payload, record_type and record_version are decoded in Python.
            FRAME_VERSION,
        )
        if added:
            self._rows += header.records_count  # one row per record
            if self.offset:
                # The builder was empty (one run is open at a time) and now holds just this
                # batch, which comes after the Python rows: close those into the piece before it.
                self._close_python()
        return added

    def add_control(self, header: BatchHeader, records: list[Record], offsets: list[int]) -> None:
        n = len(records)
        self._add_common(header, records, offsets, True)
        decoded = [_PayloadDecoder.control(r) for r in records]
        self.control_type += [d[0] for d in decoded]
        self.payload += [d[1] for d in decoded]
        self.record_type += [None] * n
        self.record_version += [None] * n

    def add_data(
        self, header: BatchHeader, records: list[Record], offsets: list[int], decoded: list[_Decoded]
    ) -> None:
        self._add_common(header, records, offsets, False)
        self.control_type += [None] * len(records)
        self.record_type += [d[0] for d in decoded]
        self.record_version += [d[1] for d in decoded]
        self.payload += [d[2] for d in decoded]

    def _add_common(
        self, header: BatchHeader, records: list[Record], offsets: list[int], control: bool
    ) -> None:
        if self._native is not None and len(self._native):
            self._close_native()
        n = len(records)
        self._rows += n
        self.offset += offsets
        self.epoch += [header.partition_leader_epoch] * n
        self.base += [header.base_offset] * n
        self.timestamp += [r.timestamp for r in records]
        self.is_control += [control] * n
        self.key += [r.key for r in records]
        self.value += [r.value for r in records]

    def _close_python(self) -> None:
        self._pieces.append(
            [
                pa.array(self.offset, pa.int64()),
                pa.array(self.epoch, pa.int32()),
                pa.array(self.base, pa.int64()),
                pa.array([t * 1000 for t in self.timestamp], _TS_US),
                pa.array(self.is_control, pa.bool_()),
                pa.array(self.control_type, pa.string()),
                pa.array(self.record_type, pa.string()),
                pa.array(self.record_version, pa.int16()),
                pa.array(self.key, pa.binary()),
                pa.array(self.value, pa.binary()),
                pa.array(self.payload, pa.string()),
            ]
        )
        self._clear()

    def _close_native(self) -> None:
        assert self._native is not None
        n, offset, epoch, base, ts, k_valid, k_offsets, k_data, v_valid, v_offsets, v_data = (
            self._native.take()
        )
        buf = pa.py_buffer

        def binary(valid: bytes | None, offsets: bytes, data: bytes) -> pa.Array:
            return pa.Array.from_buffers(
                pa.binary(), n, [None if valid is None else buf(valid), buf(offsets), buf(data)]
            )

        # Plain data rows: no control record, and no metadata record (the C decoder declines those).
        self._pieces.append(
            [
                pa.Array.from_buffers(pa.int64(), n, [None, buf(offset)]),
                pa.Array.from_buffers(pa.int32(), n, [None, buf(epoch)]),
                pa.Array.from_buffers(pa.int64(), n, [None, buf(base)]),
                pa.Array.from_buffers(_TS_US, n, [None, buf(ts)]),
                pa.repeat(_FALSE, n),
                pa.nulls(n, pa.string()),
                pa.nulls(n, pa.string()),
                pa.nulls(n, pa.int16()),
                binary(k_valid, k_offsets, k_data),
                binary(v_valid, v_offsets, v_data),
                pa.nulls(n, pa.string()),
            ]
        )

    def take(self) -> pa.RecordBatch:
        # At most one run is open: the other was closed when the kind of rows changed.
        if self._native is not None and len(self._native):
            self._close_native()
        if self.offset or not self._pieces:
            self._close_python()
        pieces = self._pieces
        if len(pieces) == 1:
            arrays = pieces[0]
        else:
            arrays = [pa.concat_arrays([p[i] for p in pieces]) for i in range(len(pieces[0]))]
        n = self._rows
        self._pieces = []
        self._rows = 0
        unit = self._unit
        node = (
            pa.nulls(n, pa.int32()) if unit.node is None else pa.repeat(pa.scalar(unit.node, pa.int32()), n)
        )
        arrays += [
            pa.repeat(pa.scalar(unit.snapshot_offset is not None, pa.bool_()), n),
            node,
            pa.repeat(pa.scalar(unit.path, pa.string()), n),
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=RECORD_SCHEMA)


def read_unit(
    unit: ReadUnit, row_filter: RowFilter = ALL_ROWS, *, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """The rows of ``unit`` that pass ``row_filter``, as ``RECORD_SCHEMA`` batches.

    Raises:
        LogReadError: corrupt or missing data (see the module docstring), naming the file,
            the position and the offset.
    """
    rf = row_filter
    snapshot_offset = unit.snapshot_offset
    if snapshot_offset is not None and not rf.admits_offset(snapshot_offset):
        return
    if rf.record_types is not None and not rf.record_types:
        return
    with _unit_bytes(unit.path, unit.start, unit.end) as data:
        yield from _read_unit_rows(unit, data, rf, batch_rows)


def _read_unit_rows(
    unit: ReadUnit, data: memoryview, rf: RowFilter, batch_rows: int
) -> Iterator[pa.RecordBatch]:
    """``read_unit`` over the bytes of the unit, ``data``."""
    snapshot_offset = unit.snapshot_offset
    snapshot = snapshot_offset is not None
    columns = _Columns(unit, USE_NATIVE)
    decoder = _PayloadDecoder()
    by_type = rf.filters_record_types
    # Every offset passes (a snapshot's rows all carry one): no batch is pruned or cut on offsets.
    all_offsets = snapshot or not rf.filters_offsets
    pos = 0
    expected = unit.first_offset
    last_epoch = unit.min_epoch
    reached_end = True
    while pos < len(data):
        file_pos = unit.start + pos
        header, problem = _batch_problem(data, pos, file_pos, expected, last_epoch)
        if problem is not None:
            _fail_unless_torn(unit, file_pos, expected, header, problem)
            reached_end = False
            break
        assert header is not None
        size = header.size_in_bytes
        base, next_offset = header.base_offset, header.next_offset
        control = header.is_control
        if not snapshot and rf.end is not None and base >= rf.end:
            reached_end = False
            break
        skip = (control and by_type) or (not all_offsets and not rf.may_contain(base, next_offset))
        # A plain data batch whose rows all pass: the C decoder, unless it declines the batch.
        plain = not (skip or control or by_type) and (all_offsets or rf.covers(base, next_offset))
        if not skip and not (plain and columns.add_plain(data, pos, header, snapshot_offset)):
            try:
                batch = decode_batch(data, pos, verify_crc=False)
            except CorruptRecordError as e:
                raise LogReadError(
                    f"{unit.path}: corrupt records in the batch at position {file_pos} (offset {base}): {e}",
                    unit.path,
                    file_pos,
                    base,
                ) from None
            records = list(batch.records)
            if not snapshot and not rf.covers(base, next_offset):
                records = [r for r in records if rf.admits_offset(r.offset)]
            offsets = (
                [r.offset for r in records] if snapshot_offset is None else [snapshot_offset] * len(records)
            )
            if header.is_control:
                columns.add_control(header, records, offsets)
            else:
                if by_type:
                    keep = [
                        i for i, r in enumerate(records) if rf.admits_record_type(_peek_type_name(r.value))
                    ]
                    records = [records[i] for i in keep]
                    offsets = [offsets[i] for i in keep]
                decoded = [decoder.metadata(r.value) for r in records]
                if by_type:
                    keep = [i for i, d in enumerate(decoded) if rf.admits_record_type(d[0])]
                    if len(keep) != len(records):
                        records = [records[i] for i in keep]
                        offsets = [offsets[i] for i in keep]
                        decoded = [decoded[i] for i in keep]
                columns.add_data(header, records, offsets, decoded)
        expected = next_offset
        last_epoch = header.partition_leader_epoch
        pos += size
        if len(columns) >= batch_rows:
            yield columns.take()
    missing = unit.end_offset is not None and expected != unit.end_offset
    if (
        reached_end
        and missing
        and unit.kind == SEGMENT
        and unit.end == unit.file_size
        and not unit.last_segment
    ):
        raise LogReadError(
            f"{unit.path}: the segment ends before offset {expected} but the next segment starts "
            f"at offset {unit.end_offset}: the log is missing data",
            unit.path,
            unit.start + pos,
            expected,
        )
    if len(columns):
        yield columns.take()


def _fail_unless_torn(
    unit: ReadUnit, file_pos: int, expected: int, header: BatchHeader | None, problem: str
) -> None:
    """Raise ``LogReadError`` for an invalid batch, unless it is the torn tail of the last segment."""
    offset = expected if header is None else header.base_offset
    where = f"{unit.path}: invalid batch at position {file_pos} (offset {offset}): {problem}"
    if unit.kind == SNAPSHOT:
        raise LogReadError(f"{where}; a published snapshot is never torn", unit.path, file_pos, offset)
    if not unit.last_segment:
        raise LogReadError(
            f"{where}; only the last segment can have a torn tail", unit.path, file_pos, offset
        )
    follower = _valid_batch_after(unit, file_pos, expected)
    if follower is not None:
        raise LogReadError(
            f"{where}; a valid batch follows at position {follower}, so this is not a torn tail",
            unit.path,
            file_pos,
            offset,
        )


def read_log(
    path: str | os.PathLike[str],
    *,
    include_snapshots: bool = False,
    row_filter: RowFilter = ALL_ROWS,
    max_bytes_per_unit: int = DEFAULT_MAX_BYTES_PER_UNIT,
) -> pa.Table:
    """Every unit of ``path`` read in order into one table (small logs, tests, notebooks)."""
    batches = [
        batch
        for unit in plan_units(
            path,
            include_snapshots=include_snapshots,
            max_bytes_per_unit=max_bytes_per_unit,
            row_filter=row_filter,
        )
        for batch in read_unit(unit, row_filter)
    ]
    return pa.Table.from_batches(batches, schema=RECORD_SCHEMA)


def decode_records(
    data: bytes | bytearray | memoryview,
    *,
    source: str,
    node: int | None = None,
    snapshot_offset: int | None = None,
    row_filter: RowFilter = ALL_ROWS,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> Iterator[pa.RecordBatch]:
    """Rows of whole record batches held in memory (e.g. fetched from a quorum's leader rather than
    read from a file), as ``RECORD_SCHEMA`` batches, decoded exactly as ``read_unit`` decodes a file.

    ``source`` fills the ``file`` column and names the data in errors; ``node`` fills ``node``;
    ``snapshot_offset`` marks the bytes as (a part of) a snapshot whose rows all carry that offset
    (its end offset - 1) and ``from_snapshot`` = true. ``row_filter`` applies as in ``read_unit``.
    Every batch is checked (header, length, CRC-32C); the bytes must end at a batch boundary.

    Raises:
        LogReadError: an invalid or partial batch, or records that do not parse (naming ``source``,
            the byte position and the batch's offset).
    """
    unit = ReadUnit(
        path=source,
        kind=SEGMENT if snapshot_offset is None else SNAPSHOT,
        start=0,
        end=len(data),
        first_offset=0,
        end_offset=None,
        min_epoch=-1,
        file_size=len(data),
        last_segment=False,
        node=node,
        snapshot_offset=snapshot_offset,
    )
    rf = row_filter
    if snapshot_offset is not None and not rf.admits_offset(snapshot_offset):
        return
    if rf.record_types is not None and not rf.record_types:
        return
    columns = _Columns(unit, USE_NATIVE)
    decoder = _PayloadDecoder()
    by_type = rf.filters_record_types
    snapshot = snapshot_offset is not None
    pos = 0
    while pos < len(data):
        header: BatchHeader | None
        try:
            header = read_batch_header(data, pos)
        except CorruptRecordError as e:
            raise LogReadError(
                f"{source}: invalid batch header at position {pos}: {e}", source, pos
            ) from None
        if header is None:
            raise LogReadError(f"{source}: partial batch header at position {pos}", source, pos)
        base, size = header.base_offset, header.size_in_bytes
        if pos + size > len(data):
            raise LogReadError(
                f"{source}: the batch at position {pos} (offset {base}) runs past the end of the data",
                source,
                pos,
                base,
            )
        if not batch_crc_valid(data, pos, header):
            raise LogReadError(
                f"{source}: invalid batch at position {pos} (offset {base}): CRC mismatch", source, pos, base
            )
        if (header.is_control and by_type) or (not snapshot and not rf.may_contain(base, header.next_offset)):
            pos += size
            continue
        plain = not header.is_control and not by_type and (snapshot or rf.covers(base, header.next_offset))
        if plain and columns.add_plain(data, pos, header, snapshot_offset):
            pos += size
            if len(columns) >= batch_rows:
                yield columns.take()
            continue
        try:
            batch = decode_batch(data, pos, verify_crc=False)
        except CorruptRecordError as e:
            raise LogReadError(
                f"{source}: corrupt records in the batch at position {pos} (offset {base}): {e}",
                source,
                pos,
                base,
            ) from None
        records = list(batch.records)
        if not snapshot and not rf.covers(base, header.next_offset):
            records = [r for r in records if rf.admits_offset(r.offset)]
        offsets = [r.offset for r in records] if snapshot_offset is None else [snapshot_offset] * len(records)
        if header.is_control:
            columns.add_control(header, records, offsets)
        else:
            decoded = [decoder.metadata(r.value) for r in records]
            if by_type:
                keep = [i for i, d in enumerate(decoded) if rf.admits_record_type(d[0])]
                records = [records[i] for i in keep]
                offsets = [offsets[i] for i in keep]
                decoded = [decoded[i] for i in keep]
            columns.add_data(header, records, offsets, decoded)
        pos += size
        if len(columns) >= batch_rows:
            yield columns.take()
    if len(columns):
        yield columns.take()
