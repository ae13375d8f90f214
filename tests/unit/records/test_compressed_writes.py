"""Compressed batches as ``build_batch`` writes them (for the console producer): every writable codec
reads back through our decoder and through kafka-python's (an independent reader), the attributes
carry the codec, and the lz4 frame is the one Kafka's Java reader accepts."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kraft.records.batch import (
    HEADER_SIZE,
    WRITABLE_COMPRESSION,
    Compression,
    Header,
    SimpleRecord,
    build_batch,
    compress_records,
    decode_batch,
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
