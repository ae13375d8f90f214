"""RecordBatch v2: layout, attributes, CRC range, compressed reading and corrupt input."""

from __future__ import annotations

import gzip
import io
import struct
from collections.abc import Callable

import lz4.frame
import pytest
import zstandard

from kraft.common.errors import CorruptRecordError
from kraft.records.batch import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG,
    DELETE_HORIZON_FLAG,
    HEADER_SIZE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG,
    Compression,
    Header,
    SimpleRecord,
    TimestampType,
    UnsupportedCompressionError,
    assign_offsets_and_epoch,
    batch_crc_valid,
    build_batch,
    crc32c,
    decode_batch,
    increment_sequence,
    iter_batch_headers,
    iter_batches,
    next_batch_size,
    peek_batch_size,
    read_batch_header,
)

Compress = Callable[[bytes], bytes]


def reframe(
    batch: bytes,
    *,
    attributes: int | None = None,
    body: bytes | None = None,
    records_count: int | None = None,
    base_sequence: int | None = None,
) -> bytes:
    """Change header fields or the records section of a built batch and fix length and CRC."""
    out = bytearray(batch[:HEADER_SIZE])
    out += batch[HEADER_SIZE:] if body is None else body
    struct.pack_into(">i", out, 8, len(out) - 12)
    if attributes is not None:
        struct.pack_into(">h", out, ATTRIBUTES_OFFSET, attributes)
    if base_sequence is not None:
        struct.pack_into(">i", out, 53, base_sequence)
    if records_count is not None:
        struct.pack_into(">i", out, 57, records_count)
    struct.pack_into(">I", out, 17, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def compress_body(batch: bytes, codec: int, compress: Compress) -> bytes:
    return reframe(batch, attributes=codec, body=compress(batch[HEADER_SIZE:]))


def sample_records(n: int = 20) -> list[SimpleRecord]:
    return [
        SimpleRecord(
            key=None if i % 3 == 0 else f"key-{i}".encode(),
            value=None if i % 5 == 4 else f"value-{i}".encode() * 8,
            headers=(Header(key="h", value=b"x"), Header(key="null", value=None)) if i % 2 else (),
            timestamp=1_700_000_000_000 + i * 7,
        )
        for i in range(n)
    ]


def test_crc32c_is_castagnoli() -> None:
    # The standard check value of CRC-32C.
    assert crc32c(b"123456789") == 0xE3069283


def test_single_record_batch_layout_is_byte_exact() -> None:
    batch = build_batch(
        [SimpleRecord(key=None, value=b"abc")], base_offset=7, partition_leader_epoch=3, timestamp_ms=1000
    )
    # record: attributes 0, timestampDelta 0, offsetDelta 0, key -1, value 3 "abc", 0 headers
    record = bytes([0x00, 0x00, 0x00, 0x01, 0x06]) + b"abc" + b"\x00"
    expected_body = bytes([len(record) * 2]) + record  # zig-zag length varint
    assert batch[HEADER_SIZE:] == expected_body
    fields = struct.unpack_from(">qiibIhiqqqhii", batch)
    assert (
        fields
        == (
            7,  # baseOffset
            len(batch) - 12,  # batchLength
            3,  # partitionLeaderEpoch
            2,  # magic
            crc32c(batch[21:]),  # crc over attributes..end
            0,  # attributes
            0,  # lastOffsetDelta
            1000,  # baseTimestamp
            1000,  # maxTimestamp
            -1,  # producerId
            -1,  # producerEpoch
            -1,  # baseSequence
            1,  # recordsCount
        )
    )


def test_round_trip_keeps_keys_values_headers_offsets_and_timestamps() -> None:
    records = sample_records()
    batch = decode_batch(build_batch(records, base_offset=100, partition_leader_epoch=5))
    assert batch.crc_valid
    assert batch.base_offset == 100 and batch.last_offset == 119 and batch.next_offset == 120
    assert batch.header.base_timestamp == 1_700_000_000_000
    assert batch.header.max_timestamp == 1_700_000_000_000 + 19 * 7
    for i, (got, want) in enumerate(zip(batch.records, records)):
        assert got.offset == 100 + i
        assert (got.key, got.value, got.headers, got.timestamp) == (
            want.key,
            want.value,
            want.headers,
            want.timestamp,
        )
        assert got.sequence == -1


def test_attribute_bits_for_control_and_transactional_batches() -> None:
    plain = read_batch_header(build_batch([SimpleRecord(value=b"v")]))
    control = read_batch_header(build_batch([SimpleRecord(value=b"v")], is_control=True))
    txn = read_batch_header(
        build_batch(
            [SimpleRecord(value=b"v")],
            is_transactional=True,
            producer_id=9,
            producer_epoch=1,
            base_sequence=0,
        )
    )
    assert plain is not None and control is not None and txn is not None
    assert plain.attributes == 0 and not plain.is_control and not plain.is_transactional
    assert control.attributes == CONTROL_FLAG and control.is_control
    assert txn.attributes == TRANSACTIONAL_FLAG and txn.is_transactional
    assert (txn.producer_id, txn.producer_epoch, txn.base_sequence) == (9, 1, 0)
    assert plain.timestamp_type is TimestampType.CREATE_TIME and str(plain.timestamp_type) == "CreateTime"
    assert plain.compression_name == "none"


def test_build_rejects_empty_batches_and_out_of_range_fields() -> None:
    with pytest.raises(ValueError, match="at least one record"):
        build_batch([])
    with pytest.raises(ValueError, match="out of range"):
        build_batch([SimpleRecord(value=b"v")], partition_leader_epoch=2**31)


def test_assigning_offsets_and_epoch_keeps_the_crc_valid() -> None:
    built = build_batch(sample_records(3), base_offset=0, partition_leader_epoch=-1)
    moved = assign_offsets_and_epoch(built, 500, 12)
    batch = decode_batch(moved)
    assert batch.crc_valid
    assert batch.base_offset == 500 and batch.partition_leader_epoch == 12
    assert [r.offset for r in batch.records] == [500, 501, 502]
    assert moved[21:] == built[21:]


def test_crc_covers_attributes_to_end_but_not_the_leader_epoch() -> None:
    built = bytearray(build_batch(sample_records(2)))
    built[13] ^= 0xFF  # partitionLeaderEpoch: outside the CRC
    assert decode_batch(bytes(built)).crc_valid
    built[ATTRIBUTES_OFFSET + 1] ^= 0x40  # attributes: covered
    with pytest.raises(CorruptRecordError, match="CRC mismatch"):
        decode_batch(bytes(built))
    lenient = decode_batch(bytes(built), verify_crc=False)
    assert not lenient.crc_valid


def test_log_append_time_gives_every_record_the_max_timestamp() -> None:
    built = build_batch(sample_records(4))
    batch = decode_batch(reframe(built, attributes=TIMESTAMP_TYPE_MASK))
    assert batch.header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert {r.timestamp for r in batch.records} == {batch.header.max_timestamp}


def test_delete_horizon_is_the_base_timestamp_when_flagged() -> None:
    built = build_batch([SimpleRecord(value=b"v")], timestamp_ms=42)
    header = read_batch_header(reframe(built, attributes=DELETE_HORIZON_FLAG))
    assert header is not None and header.delete_horizon_ms == 42
    plain = read_batch_header(built)
    assert plain is not None and plain.delete_horizon_ms is None


def test_record_sequences_follow_the_base_sequence_and_wrap() -> None:
    built = build_batch(sample_records(3), producer_id=1, producer_epoch=0, base_sequence=2**31 - 2)
    batch = decode_batch(built)
    assert [r.sequence for r in batch.records] == [2**31 - 2, 2**31 - 1, 0]
    assert batch.header.last_sequence == 0
    assert increment_sequence(5, 3) == 8


def _gzip_two_members(data: bytes) -> bytes:
    half = len(data) // 2
    return gzip.compress(data[:half]) + gzip.compress(data[half:])


def _kafka_style_lz4(data: bytes) -> bytes:
    # Kafka's KafkaLZ4BlockOutputStream: 64 KiB independent blocks, no checksums, no content size.
    return bytes(
        lz4.frame.compress(
            data,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            store_size=False,
        )
    )


def _streamed_zstd(data: bytes) -> bytes:
    # Kafka streams zstd, so frames carry no content size.
    out = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(out, closefd=False) as writer:
        writer.write(data)
    return out.getvalue()


@pytest.mark.parametrize(
    ("codec", "compress"),
    [
        (Compression.GZIP, gzip.compress),
        (Compression.GZIP, _gzip_two_members),
        (Compression.LZ4, _kafka_style_lz4),
        (Compression.LZ4, lz4.frame.compress),
        (Compression.ZSTD, _streamed_zstd),
        (Compression.ZSTD, lambda d: zstandard.ZstdCompressor().compress(d)),
    ],
)
def test_reads_compressed_batches(codec: int, compress: Compress) -> None:
    records = sample_records(50)
    plain = build_batch(records, base_offset=10)
    compressed = compress_body(plain, codec, compress)
    assert len(compressed) < len(plain)
    batch = decode_batch(compressed)
    assert batch.crc_valid and batch.header.compression == codec
    assert [r.value for r in batch.records] == [r.value for r in records]
    assert [r.offset for r in batch.records] == list(range(10, 60))


def test_snappy_batches_fail_with_a_clear_unsupported_error() -> None:
    batch = reframe(build_batch([SimpleRecord(value=b"v")]), attributes=Compression.SNAPPY)
    with pytest.raises(UnsupportedCompressionError, match="snappy"):
        decode_batch(batch)


def test_unknown_codec_is_unsupported() -> None:
    batch = reframe(build_batch([SimpleRecord(value=b"v")]), attributes=6)
    with pytest.raises(UnsupportedCompressionError, match="unknown compression codec 6"):
        decode_batch(batch)


@pytest.mark.parametrize(
    ("codec", "compress"),
    [
        (Compression.GZIP, gzip.compress),
        (Compression.LZ4, _kafka_style_lz4),
        (Compression.ZSTD, _streamed_zstd),
    ],
)
def test_decompression_is_bounded(codec: int, compress: Compress) -> None:
    bomb = reframe(
        build_batch([SimpleRecord(value=b"v")]), attributes=codec, body=compress(b"\x00" * 1_000_000)
    )
    with pytest.raises(CorruptRecordError, match="more than 100000 bytes"):
        decode_batch(bomb, max_decompressed_bytes=100_000)


@pytest.mark.parametrize(
    ("codec", "compress"),
    [
        (Compression.GZIP, gzip.compress),
        (Compression.LZ4, _kafka_style_lz4),
        (Compression.ZSTD, _streamed_zstd),
    ],
)
def test_truncated_or_garbage_compressed_streams_are_corrupt(codec: int, compress: Compress) -> None:
    plain = build_batch(sample_records(30))
    stream = compress(plain[HEADER_SIZE:])
    for body in (stream[: len(stream) // 2], stream[:-3], b"not compressed at all", b""):
        with pytest.raises(CorruptRecordError):
            decode_batch(reframe(plain, attributes=codec, body=body))


def test_record_count_larger_than_the_bytes_can_hold_is_corrupt() -> None:
    built = build_batch([SimpleRecord(value=b"v")])
    with pytest.raises(CorruptRecordError, match="claims 2000000000 records"):
        decode_batch(reframe(built, records_count=2_000_000_000))


def test_fewer_records_than_bytes_is_corrupt() -> None:
    built = build_batch(sample_records(2))
    with pytest.raises(CorruptRecordError, match="bytes follow the last"):
        decode_batch(reframe(built, records_count=1))


def test_negative_count_and_bad_magic_are_corrupt() -> None:
    built = build_batch([SimpleRecord(value=b"v")])
    with pytest.raises(CorruptRecordError, match="negative record count"):
        decode_batch(reframe(built, records_count=-1))
    bad_magic = bytearray(built)
    bad_magic[16] = 1
    with pytest.raises(CorruptRecordError, match="magic 1"):
        decode_batch(bytes(bad_magic))
    with pytest.raises(CorruptRecordError, match="magic 1"):
        list(iter_batches(bytes(bad_magic)))


def test_headers_with_negative_key_length_are_corrupt() -> None:
    # one record: attrs, ts, offset, key null, value null, 1 header with key length -1
    record = bytes([0, 0, 0, 1, 1, 2, 1, 1])
    body = bytes([len(record) * 2]) + record
    with pytest.raises(CorruptRecordError, match="negative key length"):
        decode_batch(reframe(build_batch([SimpleRecord()]), body=body))


def test_iteration_stops_at_a_partial_tail_batch() -> None:
    first = build_batch(sample_records(2), base_offset=0)
    second = build_batch(sample_records(3), base_offset=2)
    data = first + second
    for cut in (len(first), len(first) + 5, len(first) + 40, len(data) - 1):
        assert [b.base_offset for b in iter_batches(data[:cut])] == [0]
        assert [pos for pos, _ in iter_batch_headers(data[:cut])] == [0]
        assert next_batch_size(data[:cut], len(first)) is None
    assert [b.base_offset for b in iter_batches(data)] == [0, 2]
    assert [(pos, h.records_count) for pos, h in iter_batch_headers(data)] == [(0, 2), (len(first), 3)]
    assert peek_batch_size(data, len(first)) == len(second)
    assert next_batch_size(data, len(first)) == len(second)


def test_an_impossible_length_is_corruption_not_a_partial_batch() -> None:
    data = bytearray(build_batch(sample_records(2)))
    struct.pack_into(">i", data, 8, 10)
    with pytest.raises(CorruptRecordError, match="impossible length 10"):
        list(iter_batches(bytes(data)))
    with pytest.raises(CorruptRecordError, match="impossible length"):
        list(iter_batch_headers(bytes(data)))


def test_truncated_input_to_decode_batch_is_corrupt() -> None:
    built = build_batch(sample_records(2))
    for cut in (0, 10, HEADER_SIZE - 1, HEADER_SIZE, len(built) - 1):
        with pytest.raises(CorruptRecordError, match="truncated"):
            decode_batch(built[:cut])


def test_crc_check_helper_rejects_out_of_range_batches() -> None:
    built = build_batch(sample_records(2))
    header = read_batch_header(built)
    assert header is not None
    assert batch_crc_valid(built, 0, header)
    assert not batch_crc_valid(built[:-1], 0, header)


def test_a_batch_of_no_records_decodes_to_none_whatever_its_codec() -> None:
    # Kafka's iterator returns nothing for count 0 without decompressing (compaction leaves such batches).
    built = build_batch([SimpleRecord(value=b"v")], base_offset=9)
    empty = reframe(built, attributes=Compression.ZSTD, body=b"", records_count=0)
    batch = decode_batch(empty)
    assert batch.records == () and batch.crc_valid and batch.base_offset == 9
