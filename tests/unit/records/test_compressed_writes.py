"""Compressed batches as ``build_batch`` writes them (for the console producer): every writable codec
reads back through our decoder and through kafka-python's (an independent reader), the attributes
carry the codec, and the lz4 frame is the one Kafka's Java reader accepts."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kraft.records.batch import (
    ATTRIBUTES_OFFSET,
    HEADER_SIZE,
    WRITABLE_COMPRESSION,
    Compression,
    Header,
    SimpleRecord,
    UnsupportedCompressionError,
    build_batch,
    compress_records,
    decode_batch,
    recompress_batch,
)

RECORDS = [
    SimpleRecord(
        key=f"k{i}".encode(), value=f"value-{i}-".encode() * 20, headers=(Header(key="h", value=b"x"),)
    )
    for i in range(50)
] + [SimpleRecord(key=None, value=None)]


@pytest.mark.parametrize("codec", [Compression.GZIP, Compression.LZ4, Compression.ZSTD])
def test_a_compressed_batch_reads_back_here_and_in_kafka_python(codec: int) -> None:
    data = build_batch(RECORDS, timestamp_ms=1_700_000_000_000, compression=codec)
    plain = build_batch(RECORDS, timestamp_ms=1_700_000_000_000)
    assert len(data) < len(plain) // 3  # really compressed: the values repeat
    batch = decode_batch(data)
    assert batch.header.compression == codec
    assert [(r.key, r.value, r.headers) for r in batch.records] == [
        (r.key, r.value, r.headers) for r in RECORDS
    ]
    theirs = DefaultRecordBatch(bytearray(data))
    assert theirs.validate_crc()
    assert theirs.compression_type == codec
    assert [(r.key, r.value) for r in theirs] == [(r.key, r.value) for r in RECORDS]


def test_writable_codecs_are_none_gzip_lz4_zstd_and_snappy_is_refused() -> None:
    writable = {Compression.NONE, Compression.GZIP, Compression.LZ4, Compression.ZSTD}
    assert writable == set(WRITABLE_COMPRESSION)
    with pytest.raises(ValueError, match="snappy"):
        build_batch(RECORDS, compression=Compression.SNAPPY)
    with pytest.raises(ValueError, match="unknown"):
        compress_records(7, b"x")


def test_lz4_frames_are_kafkas_independent_64k_blocks_without_checksums_or_size() -> None:
    data = build_batch(RECORDS, compression=Compression.LZ4)
    frame = data[HEADER_SIZE:]
    assert frame[:4] == b"\x04\x22\x4d\x18"  # the LZ4 frame magic
    # FLG: version 01, block independence, no block checksum, no content size, no content checksum;
    # BD: 64 KiB blocks (KafkaLZ4BlockInputStream accepts exactly this descriptor layout).
    assert frame[4] == 0b0110_0000
    assert frame[5] == 0b0100_0000


def test_gzip_is_one_member_at_the_default_level() -> None:
    data = build_batch(RECORDS, compression=Compression.GZIP)
    frame = data[HEADER_SIZE:]
    assert frame[:2] == b"\x1f\x8b" and frame[2] == 8  # gzip, deflate
    assert frame.count(b"\x1f\x8b\x08") == 1


@pytest.mark.parametrize(
    "source, target",
    [
        (Compression.GZIP, Compression.ZSTD),
        (Compression.NONE, Compression.LZ4),
        (Compression.ZSTD, Compression.NONE),
        (Compression.LZ4, Compression.GZIP),
    ],
)
def test_recompressing_keeps_every_header_field_and_record_but_the_codec(source: int, target: int) -> None:
    data = build_batch(
        RECORDS,
        base_offset=40,
        partition_leader_epoch=3,
        timestamp_ms=1_700_000_000_000,
        producer_id=77,
        producer_epoch=2,
        base_sequence=9,
        compression=source,
    )
    out = recompress_batch(data, target)
    before, after = decode_batch(data), decode_batch(out)  # decode_batch checks the new CRC
    assert after.header.compression == target
    unchanged = ("base_offset", "partition_leader_epoch", "last_offset_delta", "base_timestamp")
    unchanged += ("max_timestamp", "producer_id", "producer_epoch", "base_sequence", "records_count")
    assert {k: getattr(after.header, k) for k in unchanged} == {
        k: getattr(before.header, k) for k in unchanged
    }
    assert after.records == before.records
    theirs = DefaultRecordBatch(bytearray(out))  # an independent reader takes it
    assert theirs.validate_crc() and theirs.compression_type == target
    assert [(r.offset, r.key, r.value) for r in theirs] == [
        (r.offset, r.key, r.value) for r in before.records
    ]


def test_recompressing_to_the_same_codec_returns_the_batch_and_snappy_is_refused() -> None:
    data = build_batch(RECORDS, compression=Compression.GZIP)
    assert recompress_batch(data, Compression.GZIP) is data
    with pytest.raises(ValueError, match="snappy"):
        recompress_batch(data, Compression.SNAPPY)
    snappy = bytearray(build_batch(RECORDS))
    snappy[ATTRIBUTES_OFFSET + 1] |= Compression.SNAPPY  # claims snappy (CRC not rechecked here)
    with pytest.raises(UnsupportedCompressionError):
        recompress_batch(bytes(snappy), Compression.ZSTD)
