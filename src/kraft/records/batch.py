"""RecordBatch v2 (magic 2): the unit of the replicated log, on disk and on the wire.

Layout (big-endian), byte-exact with Kafka's ``DefaultRecordBatch``::

    0  baseOffset int64          8  batchLength int32 (bytes after this field)
    12 partitionLeaderEpoch int32   16 magic int8 (2)      17 crc uint32 (CRC-32C of bytes 21..end)
    21 attributes int16          23 lastOffsetDelta int32  27 baseTimestamp int64
    35 maxTimestamp int64        43 producerId int64       51 producerEpoch int16
    53 baseSequence int32        57 recordsCount int32     61 records...

Attributes: bits 0-2 compression codec, bit 3 timestamp type (1 = LogAppendTime), bit 4
transactional, bit 5 control, bit 6 "baseTimestamp holds the delete horizon" (KIP-534).

The CRC does not cover baseOffset, batchLength or partitionLeaderEpoch, which is why a log can assign
offsets and the leader epoch to a built batch without recomputing it (``assign_offsets_and_epoch``).

Record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint, key (varint
length, negative = null), value (likewise), headers count varint, headers (key varint length +
UTF-8, value varint length, negative = null). With compression, everything after recordsCount is
one compressed stream of the records.

It reads gzip, lz4 and zstd batches as Kafka writes them, and writes them too (``build_batch``'s
``compression``, for the console producer; KRaft's own logs stay uncompressed). Snappy is neither
read nor written: no snappy codec is installed.

Decoding contract: bytes from a file or a peer are untrusted. Whatever they hold, the decoders here
raise nothing but ``CorruptRecordError`` (or its subclass ``UnsupportedCompressionError``), never
allocate more than the bytes actually present (or, for compressed batches, more than
``max_decompressed_bytes``), and name the batch position or offset that was wrong.
"""

from __future__ import annotations

import enum
import io
import os
import struct
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, NamedTuple, TypeAlias

import crc32c as _crc32c

from kraft.common.errors import CorruptRecordError, MalformedMessageError
from kraft.common.fast_init import speed_up_inits
from kraft.protocol.primitives import (
    INT32_MAX,
    Reader,
    encode_varint,
    encode_varlong,
)

MAGIC = 2
HEADER_SIZE = 61  # through recordsCount; Kafka's RECORD_BATCH_OVERHEAD
LOG_OVERHEAD = 12  # baseOffset + batchLength
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
# batchLength counts bytes after itself: the smallest legal batch has a header and no records.
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1

# The smallest encoded record: length, attributes, timestampDelta, offsetDelta, key length, value
# length and header count, one byte each. Bounds how many records a body can possibly hold.
MIN_RECORD_SIZE = 7

# The C decoder (kraft.records._native_decode) is optional: where it could not be compiled, or
# with PURE_PYTHON_ENV=1 in the environment, every batch takes the Python path, which gives the
# same values or the same error.
PURE_PYTHON_ENV = "KRAFT_PURE_PYTHON"
_RecordValues: TypeAlias = Callable[
    [bytes | bytearray | memoryview, int, int, int, int, int], tuple[bytes, ...] | None
]
_native_record_values: _RecordValues | None
try:
    from kraft.records._native_decode import record_values as _native_record_values
except ImportError:
    _native_record_values = None
if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
    _native_record_values = None

# Compressed batches can expand a lot (gzip ~1000x, zstd far more), so a hostile batch of a few
# kilobytes could otherwise demand gigabytes. Kafka's own limits are on compressed sizes; 64 MiB of
# records in one batch is far beyond anything KRaft or a default-configured producer writes.
DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024

if TYPE_CHECKING:
    import mmap

# What the size reader accepts: in-memory buffers and memory-mapped files (the dump tool maps
# segments). A string alias so that this core module does not import mmap at runtime.
ReadableBuffer: TypeAlias = "bytes | bytearray | memoryview | mmap.mmap"

_HEADER = struct.Struct(">qiibIhiqqqhii")
_LENGTH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_OFFSET = struct.Struct(">q")


class Compression:
    """Codec ids of attribute bits 0-2 (Kafka's ``CompressionType``)."""

    NONE: Final = 0
    GZIP: Final = 1
    SNAPPY: Final = 2
    LZ4: Final = 3
    ZSTD: Final = 4
    NAMES: Final = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


class TimestampType(enum.IntEnum):
    """Attribute bit 3. ``str()`` gives Kafka's display name."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    def __str__(self) -> str:
        return "LogAppendTime" if self is TimestampType.LOG_APPEND_TIME else "CreateTime"


class UnsupportedCompressionError(CorruptRecordError):
    """A batch uses a codec this build cannot read (snappy, or an id above 4)."""


def compression_name(codec: int) -> str:
    return Compression.NAMES.get(codec, f"unknown({codec})")


_crc32c_of = _crc32c.crc32c


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C (Castagnoli), C-accelerated."""
    return int(_crc32c_of(data))


def increment_sequence(sequence: int, increment: int) -> int:
    """Producer sequences wrap from INT32_MAX to 0 (Kafka's ``DefaultRecordBatch.incrementSequence``)."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


@dataclass(frozen=True, slots=True, kw_only=True)
class Header:
    key: str
    value: bytes | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """One record with its absolute offset and timestamp.

    ``sequence`` is the producer sequence of this record (baseSequence + offsetDelta, wrapping), or -1
    when the batch has none.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    attributes: int = 0
    sequence: int = NO_SEQUENCE

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleRecord:
    """What a writer supplies: offsets and timestamps come from the batch."""

    key: bytes | None = None
    value: bytes | None = None
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None


class BatchHeader(NamedTuple):
    """The fixed 61-byte header of a batch, parsed without touching the records.

    A named tuple, not a dataclass: headers are parsed for every batch the log, the listeners and
    the fetch path touch, and a tuple is built from the 13 unpacked values in one C call
    (``_header_from_fields``), about five times faster than storing them field by field."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def compression_name(self) -> str:
        return compression_name(self.compression)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG)

    @property
    def delete_horizon_ms(self) -> int | None:
        """KIP-534: with bit 6 set, baseTimestamp holds the delete horizon."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordBatch:
    """A decoded batch: its header, its records and whether its CRC matched."""

    header: BatchHeader
    records: tuple[Record, ...]
    crc_valid: bool
    raw: bytes = field(repr=False, default=b"")

    @property
    def base_offset(self) -> int:
        return self.header.base_offset

    @property
    def last_offset(self) -> int:
        return self.header.last_offset

    @property
    def next_offset(self) -> int:
        return self.header.next_offset

    @property
    def partition_leader_epoch(self) -> int:
        return self.header.partition_leader_epoch

    @property
    def is_control(self) -> bool:
        return self.header.is_control

    @property
    def size_in_bytes(self) -> int:
        return self.header.size_in_bytes


# ---------------------------------------------------------------------------------------------------
# Writing


def _encode_nullable_bytes(body: bytearray, data: bytes | None) -> None:
    if data is None:
        body += encode_varint(-1)
    else:
        body += encode_varint(len(data))
        body += data


def _encode_record(out: bytearray, offset_delta: int, timestamp_delta: int, rec: SimpleRecord) -> None:
    body = bytearray()
    body.append(0)  # attributes: unused by every Kafka version so far
    body += encode_varlong(timestamp_delta)
    body += encode_varint(offset_delta)
    _encode_nullable_bytes(body, rec.key)
    _encode_nullable_bytes(body, rec.value)
    body += encode_varint(len(rec.headers))
    for h in rec.headers:
        k = h.key.encode("utf-8")
        body += encode_varint(len(k))
        body += k
        _encode_nullable_bytes(body, h.value)
    out += encode_varint(len(body))
    out += body


def build_batch(
    records: Sequence[SimpleRecord],
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    timestamp_ms: int = 0,
    is_control: bool = False,
    is_transactional: bool = False,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    compression: int = Compression.NONE,
) -> bytes:
    """Encode a CreateTime v2 batch, its records compressed with ``compression`` (a ``Compression``
    id of ``WRITABLE_COMPRESSION``; default none).

    Records without a timestamp get ``timestamp_ms``. As in Kafka's builders, baseTimestamp is the
    first record's timestamp and maxTimestamp the largest; offset deltas are 0..n-1.

    Raises:
        ValueError: no records (Kafka never writes an empty v2 batch from a builder), a field that
            does not fit its wire type, or a codec this build cannot write (snappy, unknown ids).
    """
    if not records:
        raise ValueError("a record batch needs at least one record")
    timestamps = [timestamp_ms if r.timestamp is None else r.timestamp for r in records]
    base_ts = timestamps[0]
    max_ts = max(timestamps)
    body = bytearray()
    for i, (rec, ts) in enumerate(zip(records, timestamps)):
        _encode_record(body, i, ts - base_ts, rec)
    attributes = compression
    if compression != Compression.NONE:
        body = bytearray(compress_records(compression, bytes(body)))
    if is_control:
        attributes |= CONTROL_FLAG
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG
    return _framed(
        body,
        base_offset,
        partition_leader_epoch,
        attributes,
        len(records),
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
    )


# Writers per codec. Each mirrors what Kafka's own producer writes, so that every reader (Kafka's
# Java client, librdkafka, kafka-python, ours) takes the batch.
def _compress_gzip(data: bytes) -> bytes:
    # Java's GZIPOutputStream at the JDK's default level (6): one gzip member.
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def _compress_lz4(data: bytes) -> bytes:
    # Kafka's KafkaLZ4BlockOutputStream: a standard LZ4 frame of 64 KiB independent blocks, without
    # block or content checksums and without the content size (its reader takes nothing else).
    import lz4.frame

    return bytes(
        lz4.frame.compress(
            data,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            block_checksum=False,
            content_checksum=False,
            store_size=False,
        )
    )


def _compress_zstd(data: bytes) -> bytes:
    # Kafka's default zstd level is 3 (compression.zstd.level).
    import zstandard

    return bytes(zstandard.ZstdCompressor(level=3).compress(data))


_COMPRESSORS: dict[int, Callable[[bytes], bytes]] = {
    Compression.GZIP: _compress_gzip,
    Compression.LZ4: _compress_lz4,
    Compression.ZSTD: _compress_zstd,
}

# The codecs ``build_batch`` can write: none, gzip, lz4 and zstd (not snappy: no codec installed).
WRITABLE_COMPRESSION: Final = frozenset({Compression.NONE, *_COMPRESSORS})


def compress_records(codec: int, records: bytes) -> bytes:
    """The encoded ``records`` (everything after recordsCount) compressed with ``codec``.

    Raises:
        ValueError: ``codec`` is not one of ``WRITABLE_COMPRESSION`` or is NONE.
    """
    compress = _COMPRESSORS.get(codec)
    if compress is None:
        raise ValueError(f"kraft cannot write {compression_name(codec)}-compressed batches")
    return compress(records)


def recompress_batch(
    batch: bytes,
    codec: int,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> bytes:
    """The whole batch ``batch`` with its records re-encoded under ``codec`` (a topic's
    ``compression.type``, Kafka's LogValidator recompression): every header field but the codec
    bits, the length and the CRC stays, so offsets, sequences and timestamps are the producer's.

    Raises:
        CorruptRecordError: the records do not decompress (``UnsupportedCompressionError`` for a
            codec this build cannot read, such as snappy).
        ValueError: ``codec`` is not one of ``WRITABLE_COMPRESSION``.
    """
    if codec not in WRITABLE_COMPRESSION:
        raise ValueError(f"kraft cannot write {compression_name(codec)}-compressed batches")
    header = read_batch_header(batch)
    if header is None or header.size_in_bytes != len(batch):
        raise CorruptRecordError("recompress_batch takes exactly one whole batch")
    if header.compression == codec:
        return batch
    if header.compression == Compression.NONE:
        records = bytes(memoryview(batch)[HEADER_SIZE:])
    else:
        records = decompress_records(batch, 0, header, max_decompressed_bytes=max_decompressed_bytes)
    body = records if codec == Compression.NONE else compress_records(codec, records)
    return _framed(
        body,
        header.base_offset,
        header.partition_leader_epoch,
        (header.attributes & ~COMPRESSION_MASK) | codec,
        header.records_count,
        header.base_timestamp,
        header.max_timestamp,
        header.producer_id,
        header.producer_epoch,
        header.base_sequence,
    )


def _framed(
    body: bytes | bytearray,
    base_offset: int,
    partition_leader_epoch: int,
    attributes: int,
    count: int,
    base_ts: int,
    max_ts: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
) -> bytes:
    """The batch of ``count`` encoded records ``body``: the header, then the CRC over it."""
    try:
        out = bytearray(
            _HEADER.pack(
                base_offset,
                HEADER_SIZE - LOG_OVERHEAD + len(body),
                partition_leader_epoch,
                MAGIC,
                0,  # crc placeholder, filled in once the covered bytes are final
                attributes,
                count - 1,  # lastOffsetDelta: offset deltas are 0..count-1
                base_ts,
                max_ts,
                producer_id,
                producer_epoch,
                base_sequence,
                count,
            )
        )
    except struct.error as e:
        raise ValueError(f"batch header field out of range: {e}") from None
    out += body
    _CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


# Zigzag varints of the small offset deltas and value lengths that value-only batches repeat:
# for 0 <= i < 8192 the zigzag value 2i takes one byte below 128 and two bytes up to 16383. Built
# directly (about 1 ms) rather than by 16,384 encode_varint calls (about 5 ms at every import).
_SMALL_VARINTS = tuple(
    bytes((2 * i,)) if i < 64 else bytes(((2 * i) & 0x7F | 0x80, (2 * i) >> 7)) for i in range(1 << 13)
)


def build_value_batch(
    values: Sequence[bytes], *, base_offset: int, partition_leader_epoch: int, timestamp_ms: int
) -> bytes:
    """``build_batch`` of records that are a value alone (no key, no headers, the batch's
    timestamp): the same bytes, built without a ``SimpleRecord`` or a call per field. This is the
    leader's hot path (every append of ``kraft test-raft-server`` and the controller).

    Raises:
        ValueError: as ``build_batch``.
    """
    if not values:
        raise ValueError("a record batch needs at least one record")
    small = _SMALL_VARINTS
    limit = len(small)
    parts: list[bytes] = []
    append = parts.append
    for i, value in enumerate(values):
        n = len(value)
        delta = small[i] if i < limit else encode_varint(i)
        size = small[n] if n < limit else encode_varint(n)
        # attributes 0, timestampDelta 0 | offsetDelta | key length -1 | value length | value |
        # header count 0; the record's own length (varint) first.
        body_len = 3 + len(delta) + len(size) + n + 1
        append(small[body_len] if body_len < limit else encode_varint(body_len))
        append(b"\x00\x00")
        append(delta)
        append(b"\x01")
        append(size)
        append(value)
        append(b"\x00")
    return _framed(
        b"".join(parts),
        base_offset,
        partition_leader_epoch,
        Compression.NONE,
        len(values),
        timestamp_ms,
        timestamp_ms,
        NO_PRODUCER_ID,
        NO_PRODUCER_EPOCH,
        NO_SEQUENCE,
    )


def assign_offsets_and_epoch(
    batch: bytes | bytearray, base_offset: int, partition_leader_epoch: int
) -> bytes:
    """Rewrite baseOffset and partitionLeaderEpoch of one batch (neither is under the CRC)."""
    out = bytearray(batch)
    _OFFSET.pack_into(out, 0, base_offset)
    _LENGTH.pack_into(out, PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)
    return bytes(out)


# ---------------------------------------------------------------------------------------------------
# Reading


_new_header = tuple.__new__


def _header_from_fields(fields: tuple[int, ...]) -> BatchHeader:
    """A ``BatchHeader`` from the 13 values of ``_HEADER`` in wire order."""
    return _new_header(BatchHeader, fields)


# The errors of a bad header, built in one place for every reader of headers.
def _impossible_length(pos: int, length: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"batch at position {pos} has impossible length {length} "
        f"(a v2 batch is at least {MIN_BATCH_LENGTH} bytes after the length field)"
    )


def _bad_magic(pos: int, magic: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"batch at position {pos} has magic {magic}; only magic {MAGIC} (RecordBatch v2) is supported"
    )


def _negative_count(pos: int, records_count: int, last_offset_delta: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"batch at position {pos} has a negative record count ({records_count}) "
        f"or last offset delta ({last_offset_delta})"
    )


def read_batch_header(data: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader | None:
    """Parse the header of the batch at ``pos``; ``None`` if fewer than 61 bytes remain.

    Raises:
        CorruptRecordError: magic is not 2, batchLength is below the header size, or the record
            count or last offset delta is negative.
    """
    if pos < 0 or len(data) - pos < HEADER_SIZE:
        return None
    header = _header_from_fields(_HEADER.unpack_from(data, pos))
    if header.magic != MAGIC:
        raise _bad_magic(pos, header.magic)
    if header.batch_length < MIN_BATCH_LENGTH:
        raise _impossible_length(pos, header.batch_length)
    if header.last_offset_delta < 0 or header.records_count < 0:
        raise _negative_count(pos, header.records_count, header.last_offset_delta)
    return header


def peek_batch_size(data: bytes | bytearray | memoryview, pos: int = 0) -> int | None:
    """Total size of the batch at ``pos`` from its length field, or ``None`` if under 12 bytes remain.

    The value is untrusted: it may be negative or larger than the data; callers compare it first.
    """
    if pos < 0 or len(data) - pos < LOG_OVERHEAD:
        return None
    (length,) = _LENGTH.unpack_from(data, pos + 8)
    return int(length) + LOG_OVERHEAD


def batch_crc_valid(data: bytes | bytearray | memoryview, pos: int, header: BatchHeader) -> bool:
    """Whether the stored CRC matches bytes 21..end of the batch at ``pos`` (Kafka's ``isValid``)."""
    length = header.batch_length
    end = pos + LOG_OVERHEAD + length
    if length < MIN_BATCH_LENGTH or end > len(data):
        return False
    return bool(_crc32c_of(memoryview(data)[pos + ATTRIBUTES_OFFSET : end]) == header.crc)


def _too_large(what: str, limit: int) -> CorruptRecordError:
    return CorruptRecordError(f"{what} records decompress to more than {limit} bytes")


def _decompress_gzip(data: bytes, limit: int) -> bytes:
    # Java's GZIPInputStream reads concatenated members, so do we.
    out = bytearray()
    rest = data
    while True:
        d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        out += d.decompress(rest, limit + 1 - len(out))
        if len(out) > limit or d.unconsumed_tail:
            raise _too_large("gzip", limit)
        if not d.eof:
            raise CorruptRecordError("gzip stream is truncated")
        rest = d.unused_data
        if not rest:
            return bytes(out)


def _decompress_lz4(data: bytes, limit: int) -> bytes:
    # Kafka (magic >= 1) writes a standard LZ4 frame: 64 KiB independent blocks, no block checksums,
    # no content size. lz4.frame reads that and any other valid frame.
    import lz4.frame

    out = bytearray()
    rest = data
    while True:
        d = lz4.frame.LZ4FrameDecompressor()
        out += d.decompress(rest, max_length=limit + 1 - len(out))
        if len(out) > limit:
            raise _too_large("lz4", limit)
        if not d.eof:
            if not d.needs_input:
                raise _too_large("lz4", limit)
            raise CorruptRecordError("lz4 frame is truncated")
        rest = d.unused_data
        if not rest:
            return bytes(out)


def _decompress_zstd(data: bytes, limit: int) -> bytes:
    # Kafka streams zstd without a content size in the frame header, so the one-shot API cannot be
    # used. First bound the output with a size-limited streaming read, then decode frame by frame,
    # which also detects truncation (the streaming reader silently returns what it has).
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    with dctx.stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
        if len(reader.read(limit + 1)) > limit:
            raise _too_large("zstd", limit)
    out = bytearray()
    rest = data
    while True:
        d = dctx.decompressobj()
        out += d.decompress(rest)
        if not d.eof:
            raise CorruptRecordError("zstd frame is truncated")
        rest = d.unused_data
        if not rest:
            return bytes(out)


_DECOMPRESSORS: dict[int, Callable[[bytes, int], bytes]] = {
    Compression.GZIP: _decompress_gzip,
    Compression.LZ4: _decompress_lz4,
    Compression.ZSTD: _decompress_zstd,
}


def _decompress(codec: int, data: bytes, limit: int, where: str) -> bytes:
    if codec == Compression.SNAPPY:
        raise UnsupportedCompressionError(
            f"{where} is snappy-compressed, which kraft cannot read (KRaft never writes snappy; "
            "use Kafka's kafka-dump-log for such segments)"
        )
    decompress = _DECOMPRESSORS.get(codec)
    if decompress is None:
        raise UnsupportedCompressionError(f"{where} uses unknown compression codec {codec}")
    try:
        return decompress(data, limit)
    except CorruptRecordError as e:
        raise CorruptRecordError(f"{where}: {e}") from None
    # Each codec library has its own error types (zlib.error, RuntimeError from lz4, ZstdError);
    # any failure to decompress untrusted bytes means the batch is corrupt.
    except Exception as e:
        name = compression_name(codec)
        raise CorruptRecordError(f"{where}: cannot decompress {name} records: {e}") from None


def _fast_uvarint(data: bytes, pos: int, end: int, max_bytes: int) -> tuple[int, int]:
    """(value, next position) of the unsigned varint at ``pos``, or (-1, -1) where
    ``Reader.unsigned_varint`` would raise (truncated, too long, or too wide)."""
    value = 0
    shift = 0
    for _ in range(max_bytes):
        if pos >= end:
            return -1, -1
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            if value >> (32 if max_bytes <= 5 else 64):
                return -1, -1
            return value, pos
        shift += 7
    return -1, -1


def _decode_records_fast(header: BatchHeader, body: bytes | memoryview) -> tuple[Record, ...] | None:
    """The records of an uncompressed-or-decompressed body, or ``None`` when anything is unusual
    (record headers, or anything ``_decode_records_checked`` would reject): then the checked
    decoder runs and produces the same records or the same error. This path only exists for speed
    (the simulator and the listeners decode every committed batch): its results equal the checked
    decoder's on every input it accepts.
    """
    data = bytes(body)
    n = len(data)
    count = header.records_count
    if count > n // MIN_RECORD_SIZE:
        return None
    log_append_time = header.max_timestamp if header.timestamp_type is TimestampType.LOG_APPEND_TIME else None
    base_offset = header.base_offset
    base_timestamp = header.base_timestamp
    base_sequence = header.base_sequence
    records: list[Record] = []
    pos = 0
    for _ in range(count):
        # Record length (varint); one-byte values need no loop.
        b = data[pos] if pos < n else 0x80
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            u, pos = _fast_uvarint(data, pos, n, 5)
            if pos < 0:
                return None
            length = (u >> 1) ^ -(u & 1)
        if length < 0 or length > n - pos:
            return None
        end = pos + length
        if end - pos < 1:
            return None
        attributes = data[pos] - 256 if data[pos] > 127 else data[pos]
        pos += 1
        u, pos = _fast_uvarint(data, pos, end, 10)  # timestampDelta (varlong)
        if pos < 0:
            return None
        ts_delta = (u >> 1) ^ -(u & 1)
        u, pos = _fast_uvarint(data, pos, end, 5)  # offsetDelta
        if pos < 0:
            return None
        offset_delta = (u >> 1) ^ -(u & 1)
        u, pos = _fast_uvarint(data, pos, end, 5)  # key length
        if pos < 0:
            return None
        klen = (u >> 1) ^ -(u & 1)
        key = None
        if klen >= 0:
            if klen > end - pos:
                return None
            key = data[pos : pos + klen]
            pos += klen
        u, pos = _fast_uvarint(data, pos, end, 5)  # value length
        if pos < 0:
            return None
        vlen = (u >> 1) ^ -(u & 1)
        value = None
        if vlen >= 0:
            if vlen > end - pos:
                return None
            value = data[pos : pos + vlen]
            pos += vlen
        # Header count: only the common "no headers" record takes this path.
        if pos + 1 != end or data[pos] != 0:
            return None
        pos = end
        records.append(
            Record(
                offset=base_offset + offset_delta,
                timestamp=base_timestamp + ts_delta if log_append_time is None else log_append_time,
                key=key,
                value=value,
                headers=(),
                attributes=attributes,
                sequence=NO_SEQUENCE
                if base_sequence < 0
                else increment_sequence(base_sequence, offset_delta),
            )
        )
    if pos != n:
        return None
    return tuple(records)


def _decode_records(header: BatchHeader, body: bytes | memoryview) -> tuple[Record, ...]:
    fast = _decode_records_fast(header, body)
    if fast is not None:
        return fast
    return _decode_records_checked(header, body)


def _decode_records_checked(header: BatchHeader, body: bytes | memoryview) -> tuple[Record, ...]:
    count = header.records_count
    if count > len(body) // MIN_RECORD_SIZE:
        raise CorruptRecordError(
            f"batch claims {count} records but its {len(body)} record bytes can hold at most "
            f"{len(body) // MIN_RECORD_SIZE}"
        )
    # Kafka: with LogAppendTime every record carries the batch's maxTimestamp.
    log_append_time = header.max_timestamp if header.timestamp_type is TimestampType.LOG_APPEND_TIME else None
    base_sequence = header.base_sequence
    r = Reader(body)
    records: list[Record] = []
    for index in range(count):
        length = r.varint("record length")
        if length < 0 or length > r.remaining:
            raise CorruptRecordError(
                f"record {index} claims {length} bytes but {r.remaining} are left in the batch"
            )
        end = r.pos + length
        rr = Reader(body, r.pos, end)
        attributes = rr.int8("record attributes")
        ts_delta = rr.varlong("record timestampDelta")
        offset_delta = rr.varint("record offsetDelta")
        klen = rr.varint("record key length")
        key = None if klen < 0 else rr.raw(klen, "record key")
        vlen = rr.varint("record value length")
        value = None if vlen < 0 else rr.raw(vlen, "record value")
        hcount = rr.varint("record header count")
        # Each header takes at least two bytes (two length varints).
        if hcount < 0 or hcount > rr.remaining // 2:
            raise CorruptRecordError(f"record {index} has invalid header count {hcount}")
        headers = []
        for _ in range(hcount):
            hk = rr.varint("header key length")
            if hk < 0:
                raise CorruptRecordError(f"record {index} has a header with negative key length {hk}")
            hkey = rr.raw(hk, "header key").decode("utf-8", errors="replace")
            hv = rr.varint("header value length")
            hval = None if hv < 0 else rr.raw(hv, "header value")
            headers.append(Header(key=hkey, value=hval))
        if rr.remaining:
            raise CorruptRecordError(f"record {index} has {rr.remaining} bytes after its headers")
        r.pos = end
        records.append(
            Record(
                offset=header.base_offset + offset_delta,
                timestamp=header.base_timestamp + ts_delta if log_append_time is None else log_append_time,
                key=key,
                value=value,
                headers=tuple(headers),
                attributes=attributes,
                sequence=NO_SEQUENCE
                if base_sequence < 0
                else increment_sequence(base_sequence, offset_delta),
            )
        )
    if r.remaining:
        raise CorruptRecordError(f"{r.remaining} bytes follow the last of the batch's {count} records")
    return tuple(records)


def decompress_records(
    data: bytes | bytearray | memoryview,
    pos: int,
    header: BatchHeader,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> bytes:
    """The records of the compressed batch at ``pos`` (whole in ``data``, with this ``header``),
    decompressed: an uncompressed body, as ``decode_batch`` decodes it.

    Raises:
        CorruptRecordError: as ``decode_batch`` does for records that fail to decompress or exceed
            ``max_decompressed_bytes``; ``UnsupportedCompressionError`` for snappy or unknown codecs.
    """
    where = f"batch at offset {header.base_offset} (position {pos})"
    body = bytes(memoryview(data)[pos + HEADER_SIZE : pos + header.size_in_bytes])
    return _decompress(header.compression, body, max_decompressed_bytes, where)


def decode_batch(
    data: bytes | bytearray | memoryview,
    pos: int = 0,
    *,
    verify_crc: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> RecordBatch:
    """Decode the whole batch at ``pos``.

    Raises:
        CorruptRecordError: truncated, bad magic, CRC mismatch (when ``verify_crc``), records that do
            not parse, or compressed records that fail to decompress or exceed
            ``max_decompressed_bytes``. With ``verify_crc=False`` a CRC mismatch is only reported in
            ``crc_valid``. ``UnsupportedCompressionError`` (a subclass) for snappy or unknown codecs.
    """
    header = read_batch_header(data, pos)
    if header is None:
        raise CorruptRecordError(
            f"truncated batch header at position {pos}: "
            f"{max(0, len(data) - pos)} of {HEADER_SIZE} bytes present"
        )
    end = pos + header.size_in_bytes
    if end > len(data):
        raise CorruptRecordError(
            f"truncated batch at position {pos}: "
            f"needs {header.size_in_bytes} bytes, {len(data) - pos} present"
        )
    crc_ok = batch_crc_valid(data, pos, header)
    where = f"batch at offset {header.base_offset} (position {pos})"
    if verify_crc and not crc_ok:
        raise CorruptRecordError(f"CRC mismatch in {where}")
    body: bytes | memoryview = memoryview(data)[pos + HEADER_SIZE : end]
    if header.records_count == 0:
        # Kafka's DefaultRecordBatch.iterator(): a batch of no records (one emptied by compaction,
        # kept for its producer state) has no records whatever follows the header.
        return RecordBatch(header=header, records=(), crc_valid=crc_ok, raw=bytes(memoryview(data)[pos:end]))
    if header.compression != Compression.NONE:
        body = decompress_records(data, pos, header, max_decompressed_bytes=max_decompressed_bytes)
    try:
        records = _decode_records(header, body)
    except CorruptRecordError as e:
        raise CorruptRecordError(f"{where}: {e}") from None
    except MalformedMessageError as e:  # from the varint and length readers
        raise CorruptRecordError(f"{where}: {e}") from None
    return RecordBatch(header=header, records=records, crc_valid=crc_ok, raw=bytes(memoryview(data)[pos:end]))


def decode_batch_values(
    data: bytes | bytearray | memoryview, pos: int = 0, from_offset: int | None = None
) -> tuple[BatchHeader, tuple[bytes, ...]]:
    """The header of the batch at ``pos`` and the values of its records from ``from_offset`` on (a
    null value as ``b""``; none for a control batch): what a raft listener is handed.

    The same checks and errors as ``decode_batch``: plain data batches go through the C decoder,
    with no ``Record`` per record; every other batch, and any it declines, is decoded in full.

    Raises:
        CorruptRecordError: as ``decode_batch``.
    """
    native = _native_record_values
    header = read_batch_header(data, pos)
    if (
        native is not None
        and header is not None
        and not header.is_control
        and header.compression == Compression.NONE
        and header.records_count > 0
        and pos + header.size_in_bytes <= len(data)
        and batch_crc_valid(data, pos, header)
    ):
        start = header.base_offset if from_offset is None else from_offset
        end = pos + header.size_in_bytes
        values = native(data, pos + HEADER_SIZE, end, header.base_offset, header.records_count, start)
        if values is not None:
            return header, values
    batch = decode_batch(data, pos)
    if batch.is_control:
        return batch.header, ()
    start = batch.base_offset if from_offset is None else from_offset
    return batch.header, tuple(r.value or b"" for r in batch.records if r.offset >= start)


def next_batch_size(data: ReadableBuffer, pos: int = 0, end: int | None = None) -> int | None:
    """Size of the whole batch at ``pos``, or ``None`` if the data (up to ``end``, default its length)
    ends inside it (a partial batch).

    Mirrors Kafka's ``FileLogInputStream.nextBatch``: under 17 bytes (through magic) or a batch that
    runs past the end is partial; an impossible length or a magic other than 2 is corruption.
    ``data`` may be anything with ``len``, indexing and the buffer protocol, such as an ``mmap``.

    Raises:
        CorruptRecordError: impossible batchLength or unsupported magic.
    """
    limit = len(data) if end is None else min(end, len(data))
    if pos < 0 or limit - pos < MAGIC_OFFSET + 1:
        return None
    (length,) = _LENGTH.unpack_from(data, pos + 8)
    if length < MIN_BATCH_LENGTH:
        raise _impossible_length(pos, length)
    if pos + LOG_OVERHEAD + length > limit:
        return None
    magic = data[pos + MAGIC_OFFSET]
    if magic != MAGIC:
        raise _bad_magic(pos, magic)
    return int(length) + LOG_OVERHEAD


def iter_batches(data: bytes | bytearray | memoryview, *, verify_crc: bool = True) -> Iterator[RecordBatch]:
    """Decode consecutive whole batches; a partial batch at the very end is ignored (Kafka does the
    same with a fetch response cut at max bytes).

    Raises:
        CorruptRecordError: a batch that does not decode (see ``decode_batch``).
    """
    pos = 0
    while next_batch_size(data, pos) is not None:
        batch = decode_batch(data, pos, verify_crc=verify_crc)
        yield batch
        pos += batch.size_in_bytes


def find_valid_batch(data: bytes, min_base_offset: int) -> int | None:
    """Position in ``data`` of the first CRC-valid batch after position 0 whose base offset is at
    least ``min_base_offset`` and which lies wholly in ``data``, or None: the test log recovery (and
    any reader of a log) applies before it calls an invalid batch a torn tail rather than
    corruption in the middle of the log."""
    at = data.find(MAGIC, MAGIC_OFFSET + 1)
    while at != -1:
        start = at - MAGIC_OFFSET
        try:
            header = read_batch_header(data, start)
        except CorruptRecordError:
            header = None
        if (
            header is not None
            and header.base_offset >= min_base_offset
            and start + header.size_in_bytes <= len(data)
            and batch_crc_valid(data, start, header)
        ):
            return start
        at = data.find(MAGIC, at + 1)
    return None


def iter_batch_headers(data: bytes | bytearray | memoryview) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of each whole batch, without decoding records or checking CRCs.

    Raises:
        CorruptRecordError: a header with bad magic or an impossible length.
    """
    # ``next_batch_size`` then ``read_batch_header`` at each position, fused into one unpack of
    # the header (this runs for every batch the log, the listeners and the fetch path touch): the
    # same batches, the same end at a partial batch, the same errors in the same order.
    pos = 0
    limit = len(data)
    unpack = _HEADER.unpack_from
    while limit - pos >= MAGIC_OFFSET + 1:
        (length,) = _LENGTH.unpack_from(data, pos + 8)
        if length < MIN_BATCH_LENGTH:
            raise _impossible_length(pos, length)
        if pos + LOG_OVERHEAD + length > limit:
            return  # a partial batch
        fields = unpack(data, pos)
        if fields[3] != MAGIC:
            raise _bad_magic(pos, data[pos + MAGIC_OFFSET])  # (the byte: unsigned)
        if fields[6] < 0 or fields[12] < 0:
            raise _negative_count(pos, fields[12], fields[6])
        yield pos, _new_header(BatchHeader, fields)
        pos += length + LOG_OVERHEAD


# Built for every record decoded: see kraft.common.fast_init.
speed_up_inits(Record)
