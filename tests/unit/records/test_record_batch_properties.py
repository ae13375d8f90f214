"""Hypothesis properties of RecordBatch v2: round trips, and hostile input never escapes as anything
but CorruptRecordError."""

from __future__ import annotations

import contextlib
import gzip

import lz4.frame
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.common.errors import CorruptRecordError
from kraft.records.batch import (
    ATTRIBUTES_OFFSET,
    HEADER_SIZE,
    Compression,
    Header,
    RecordBatch,
    SimpleRecord,
    build_batch,
    crc32c,
    decode_batch,
    iter_batch_headers,
    iter_batches,
)
from kraft.records.control import control_type_of, decode_control_record

headers_st = st.lists(
    st.builds(Header, key=st.text(max_size=6), value=st.none() | st.binary(max_size=6)), max_size=3
).map(tuple)
records_st = st.lists(
    st.builds(
        SimpleRecord,
        key=st.none() | st.binary(max_size=20),
        value=st.none() | st.binary(max_size=60),
        headers=headers_st,
        timestamp=st.none() | st.integers(0, 2**50),
    ),
    min_size=1,
    max_size=8,
)
batch_st = st.builds(
    build_batch,
    records_st,
    base_offset=st.integers(0, 2**62),
    partition_leader_epoch=st.integers(-1, 2**31 - 1),
    timestamp_ms=st.integers(0, 2**50),
    is_control=st.booleans(),
)


def decode_or_corrupt(data: bytes, **kwargs: object) -> RecordBatch | None:
    try:
        return decode_batch(data, **kwargs)  # type: ignore[arg-type]
    except CorruptRecordError:
        return None


def exhaust(data: bytes) -> None:
    """Everything a reader of untrusted bytes might call, for control batches too."""
    with contextlib.suppress(CorruptRecordError):
        for batch in iter_batches(data, verify_crc=False):
            if batch.is_control:
                for rec in batch.records:
                    if control_type_of(rec) is not None:
                        decode_control_record(rec)
    with contextlib.suppress(CorruptRecordError):
        list(iter_batch_headers(data))


@settings(max_examples=200, deadline=None)
@given(records=records_st, base_offset=st.integers(0, 2**62), ts=st.integers(0, 2**50))
def test_build_then_decode_round_trips(records: list[SimpleRecord], base_offset: int, ts: int) -> None:
    batch = decode_batch(build_batch(records, base_offset=base_offset, timestamp_ms=ts))
    assert batch.crc_valid
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in batch.records] == [
        (base_offset + i, r.key, r.value, r.headers, ts if r.timestamp is None else r.timestamp)
        for i, r in enumerate(records)
    ]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes_only_raise_corrupt_record_error(data: bytes) -> None:
    decode_or_corrupt(data, verify_crc=False)
    exhaust(data)


@settings(max_examples=300, deadline=None)
@given(batch=batch_st, noise=st.binary(min_size=1, max_size=120), at=st.integers(0, 200))
def test_a_valid_header_with_random_records_only_raises_corrupt_record_error(
    batch: bytes, noise: bytes, at: int
) -> None:
    # Keep the (CRC-fixed) header plausible so the record parser itself gets exercised.
    body = bytearray(batch[HEADER_SIZE:])
    at = min(at, len(body))
    body[at : at + len(noise)] = noise
    data = bytearray(batch[:HEADER_SIZE] + bytes(body))
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    data[17:21] = crc32c(memoryview(data)[ATTRIBUTES_OFFSET:]).to_bytes(4, "big")
    decode_or_corrupt(bytes(data))
    exhaust(bytes(data))


@settings(max_examples=200, deadline=None)
@given(batch=batch_st, data=st.data())
def test_every_truncation_is_detected(batch: bytes, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(batch) - 1))
    assert decode_or_corrupt(batch[:cut]) is None
    assert list(iter_batches(batch[:cut])) == []  # a torn tail is not a batch


@settings(max_examples=300, deadline=None)
@given(batch=batch_st, data=st.data())
def test_crc_catches_every_single_bit_flip_in_the_covered_range(batch: bytes, data: st.DataObject) -> None:
    bit = data.draw(st.integers(ATTRIBUTES_OFFSET * 8, len(batch) * 8 - 1))
    flipped = bytearray(batch)
    flipped[bit // 8] ^= 1 << (bit % 8)
    assert decode_or_corrupt(bytes(flipped)) is None
    lenient = decode_or_corrupt(bytes(flipped), verify_crc=False)
    assert lenient is None or not lenient.crc_valid
    exhaust(bytes(flipped))


@settings(max_examples=200, deadline=None)
@given(batch=batch_st, data=st.data())
def test_bit_flips_outside_the_crc_only_raise_corrupt_record_error(batch: bytes, data: st.DataObject) -> None:
    bit = data.draw(st.integers(0, ATTRIBUTES_OFFSET * 8 - 1))
    flipped = bytearray(batch)
    flipped[bit // 8] ^= 1 << (bit % 8)
    decode_or_corrupt(bytes(flipped))
    exhaust(bytes(flipped))


_COMPRESSORS = {
    Compression.GZIP: gzip.compress,
    Compression.LZ4: lz4.frame.compress,
    Compression.ZSTD: zstandard.ZstdCompressor().compress,
}


@settings(max_examples=200, deadline=None)
@given(
    records=records_st,
    codec=st.sampled_from(sorted(_COMPRESSORS)),
    flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=4),
)
def test_damaged_compressed_records_only_raise_corrupt_record_error(
    records: list[SimpleRecord], codec: int, flips: list[int]
) -> None:
    plain = build_batch(records)
    body = bytearray(_COMPRESSORS[codec](plain[HEADER_SIZE:]))
    for bit in flips:
        bit %= len(body) * 8
        body[bit // 8] ^= 1 << (bit % 8)
    data = bytearray(plain[:HEADER_SIZE] + bytes(body))
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    data[ATTRIBUTES_OFFSET : ATTRIBUTES_OFFSET + 2] = codec.to_bytes(2, "big")
    data[17:21] = crc32c(memoryview(data)[ATTRIBUTES_OFFSET:]).to_bytes(4, "big")
    decode_or_corrupt(bytes(data))
