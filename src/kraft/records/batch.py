"""RecordBatch v2 (magic 2): the unit of the replicated log, on disk and on the wire.

Layout (big-endian), byte-exact with Kafka's ``DefaultRecordBatch``::

    0  baseOffset int64          8  batchLength int32 (bytes after this field)
    12 partitionLeaderEpoch int32   16 magic int8 (2)      17 crc uint32 (CRC-32C of bytes 21..end)
    21 attributes int16          23 lastOffsetDelta int32  27 baseTimestamp int64
    35 maxTimestamp int64        43 producerId int64       51 producerEpoch int16
    53 baseSequence int32        57 recordsCount int32     61 records...

The CRC does not cover baseOffset, batchLength or partitionLeaderEpoch, which is why a log can assign
offsets and the leader epoch to a built batch without recomputing it (``assign_offsets_and_epoch``).

Record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint, key (varint
length, -1 = null), value (likewise), headers count varint, headers (key varint length + UTF-8,
value varint length, -1 = null).
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import crc32c as _crc32c

from kraft.common.errors import CorruptRecordError
from kraft.protocol.primitives import (
    Reader,
    encode_varint,
    encode_varlong,
)

MAGIC = 2
HEADER_SIZE = 61  # through recordsCount
LOG_OVERHEAD = 12  # baseOffset + batchLength
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

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PREFIX = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_LEN_AND_MAGIC = struct.Struct(">qi")


class Compression:
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4
    NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C (Castagnoli), C-accelerated."""
    return int(_crc32c.crc32c(data))


@dataclass(frozen=True, slots=True, kw_only=True)
class Header:
    key: str
    value: bytes | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """One record with its absolute offset and timestamp."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    attributes: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleRecord:
    """What a writer supplies: offsets and timestamps come from the batch."""

    key: bytes | None = None
    value: bytes | None = None
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchHeader:
    """The fixed 61-byte header of a batch, parsed without touching the records."""

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
    def timestamp_type(self) -> int:
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0


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


def _encode_record(out: bytearray, offset_delta: int, timestamp_delta: int, rec: SimpleRecord) -> None:
    body = bytearray()
    body.append(0)  # attributes
    body += encode_varlong(timestamp_delta)
    body += encode_varint(offset_delta)
    if rec.key is None:
        body += encode_varint(-1)
    else:
        body += encode_varint(len(rec.key))
        body += rec.key
    if rec.value is None:
        body += encode_varint(-1)
    else:
        body += encode_varint(len(rec.value))
        body += rec.value
    body += encode_varint(len(rec.headers))
    for h in rec.headers:
        k = h.key.encode("utf-8")
        body += encode_varint(len(k))
        body += k
        if h.value is None:
            body += encode_varint(-1)
        else:
            body += encode_varint(len(h.value))
            body += h.value
    out += encode_varint(len(body))
    out += body


def build_batch(
    records: Sequence[SimpleRecord],
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    timestamp_ms: int = 0,
    is_control: bool = False,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
) -> bytes:
    """Encode an uncompressed v2 batch. Records without a timestamp get ``timestamp_ms``.

    Raises:
        ValueError: no records (Kafka never writes an empty v2 batch from a builder).
    """
    if not records:
        raise ValueError("a record batch needs at least one record")
    timestamps = [timestamp_ms if r.timestamp is None else r.timestamp for r in records]
    base_ts = timestamps[0]
    max_ts = max(timestamps)
    body = bytearray()
    for i, (rec, ts) in enumerate(zip(records, timestamps)):
        _encode_record(body, i, ts - base_ts, rec)
    attributes = CONTROL_FLAG if is_control else 0
    last_offset_delta = len(records) - 1
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(body)
    out = bytearray(
        _HEADER.pack(
            base_offset,
            batch_length,
            partition_leader_epoch,
            MAGIC,
            0,  # crc placeholder
            attributes,
            last_offset_delta,
            base_ts,
            max_ts,
            producer_id,
            producer_epoch,
            base_sequence,
            len(records),
        )
    )
    out += body
    crc = crc32c(memoryview(out)[ATTRIBUTES_OFFSET:])
    struct.pack_into(">I", out, CRC_OFFSET, crc)
    return bytes(out)


def assign_offsets_and_epoch(batch: bytes | bytearray, base_offset: int, partition_leader_epoch: int) -> bytes:
    """Rewrite baseOffset and partitionLeaderEpoch of one batch (neither is under the CRC)."""
    out = bytearray(batch)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, partition_leader_epoch)
    return bytes(out)


def read_batch_header(data: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader | None:
    """Parse the header of the batch at ``pos``; ``None`` if fewer than 61 bytes remain.

    Raises:
        CorruptRecordError: magic is not 2 or batchLength is impossible.
    """
    if len(data) - pos < HEADER_SIZE:
        return None
    fields = _HEADER.unpack_from(data, pos)
    header = BatchHeader(
        base_offset=fields[0],
        batch_length=fields[1],
        partition_leader_epoch=fields[2],
        magic=fields[3],
        crc=fields[4],
        attributes=fields[5],
        last_offset_delta=fields[6],
        base_timestamp=fields[7],
        max_timestamp=fields[8],
        producer_id=fields[9],
        producer_epoch=fields[10],
        base_sequence=fields[11],
        records_count=fields[12],
    )
    if header.magic != MAGIC:
        raise CorruptRecordError(f"batch at position {pos} has magic {header.magic}, expected {MAGIC}")
    if header.batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"batch at position {pos} has impossible length {header.batch_length}")
    if header.last_offset_delta < 0 or header.records_count < 0:
        raise CorruptRecordError(f"batch at position {pos} has a negative record count or offset delta")
    return header


def peek_batch_size(data: bytes | bytearray | memoryview, pos: int = 0) -> int | None:
    """Total size of the batch at ``pos`` from its length field, or ``None`` if under 12 bytes remain."""
    if len(data) - pos < LOG_OVERHEAD:
        return None
    _, length = _LEN_AND_MAGIC.unpack_from(data, pos)
    return int(length) + LOG_OVERHEAD


def batch_crc_valid(data: bytes | bytearray | memoryview, pos: int, header: BatchHeader) -> bool:
    view = memoryview(data)[pos + ATTRIBUTES_OFFSET : pos + header.size_in_bytes]
    return crc32c(view) == header.crc


def _decompress(codec: int, data: bytes) -> bytes:
    if codec == Compression.GZIP:
        return gzip.decompress(data)
    if codec == Compression.LZ4:
        import lz4.frame

        return bytes(lz4.frame.decompress(data))
    if codec == Compression.ZSTD:
        import zstandard

        # Kafka's zstd frames may omit the content size; stream-decompress.
        return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(data))
    if codec == Compression.SNAPPY:
        raise CorruptRecordError("snappy-compressed batches are not supported")
    raise CorruptRecordError(f"unknown compression codec {codec}")


def _decode_records(header: BatchHeader, body: bytes | memoryview) -> tuple[Record, ...]:
    r = Reader(body)
    records: list[Record] = []
    for _ in range(header.records_count):
        length = r.varint("record length")
        if length < 0 or length > r.remaining:
            raise CorruptRecordError(f"record length {length} exceeds the {r.remaining} bytes left in the batch")
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
        if hcount < 0 or hcount > rr.remaining:
            raise CorruptRecordError(f"invalid record header count {hcount}")
        headers = []
        for _ in range(hcount):
            hk = rr.varint("header key length")
            hkey = rr.raw(hk, "header key").decode("utf-8", errors="replace")
            hv = rr.varint("header value length")
            hval = None if hv < 0 else rr.raw(hv, "header value")
            headers.append(Header(key=hkey, value=hval))
        if rr.remaining:
            raise CorruptRecordError(f"record at offset delta {offset_delta} has {rr.remaining} trailing bytes")
        r.pos = end
        records.append(
            Record(
                offset=header.base_offset + offset_delta,
                timestamp=header.base_timestamp + ts_delta,
                key=key,
                value=value,
                headers=tuple(headers),
                attributes=attributes,
            )
        )
    if r.remaining:
        raise CorruptRecordError(f"batch at offset {header.base_offset} has {r.remaining} bytes after its records")
    return tuple(records)


def decode_batch(data: bytes | bytearray | memoryview, pos: int = 0, *, verify_crc: bool = True) -> RecordBatch:
    """Decode the whole batch at ``pos``.

    Raises:
        CorruptRecordError: truncated, bad magic, CRC mismatch (when ``verify_crc``), or records that
            do not parse. With ``verify_crc=False`` a CRC mismatch is reported in ``crc_valid``.
    """
    header = read_batch_header(data, pos)
    if header is None:
        raise CorruptRecordError(f"truncated batch header at position {pos}")
    end = pos + header.size_in_bytes
    if end > len(data):
        raise CorruptRecordError(
            f"truncated batch at position {pos}: needs {header.size_in_bytes} bytes, {len(data) - pos} present"
        )
    crc_ok = batch_crc_valid(data, pos, header)
    if verify_crc and not crc_ok:
        raise CorruptRecordError(f"CRC mismatch in batch at offset {header.base_offset} (position {pos})")
    body: bytes | memoryview = memoryview(data)[pos + HEADER_SIZE : end]
    if header.compression != Compression.NONE:
        body = _decompress(header.compression, bytes(body))
    try:
        records = _decode_records(header, body)
    except CorruptRecordError:
        raise
    except Exception as e:  # MalformedMessageError from the varint reader, UnicodeError
        raise CorruptRecordError(f"batch at offset {header.base_offset}: {e}") from None
    return RecordBatch(header=header, records=records, crc_valid=crc_ok, raw=bytes(memoryview(data)[pos:end]))


def iter_batches(data: bytes | bytearray | memoryview, *, verify_crc: bool = True) -> Iterator[RecordBatch]:
    """Decode consecutive whole batches; a partial batch at the very end is ignored (Kafka does the
    same with a fetch response cut at max bytes)."""
    pos = 0
    n = len(data)
    while pos < n:
        size = peek_batch_size(data, pos)
        if size is None or pos + size > n:
            return
        batch = decode_batch(data, pos, verify_crc=verify_crc)
        yield batch
        pos += batch.size_in_bytes


def iter_batch_headers(data: bytes | bytearray | memoryview) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of each whole batch, without decoding records or checking CRCs."""
    pos = 0
    n = len(data)
    while pos < n:
        size = peek_batch_size(data, pos)
        if size is None or pos + size > n:
            return
        header = read_batch_header(data, pos)
        if header is None:
            return
        yield pos, header
        pos += header.size_in_bytes
