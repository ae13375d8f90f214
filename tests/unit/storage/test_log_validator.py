"""log_validator and producer_state on their own: what the partition logs rely on, in isolation."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from partition_log_contract import produce

from kraft.protocol.primitives import INT32_MAX
from kraft.records.batch import (
    HEADER_SIZE,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    Compression,
    SimpleRecord,
    TimestampType,
    batch_crc_valid,
    build_batch,
    decode_batch,
    read_batch_header,
)
from kraft.storage.log_errors import (
    CorruptMessageError,
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    UnsupportedMagicError,
)
from kraft.storage.log_validator import set_log_append_time, validate_follower_append, validate_leader_append
from kraft.storage.producer_state import ProducerStateManager, in_sequence


def _gzip_batch() -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=Compression.GZIP,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(3):
        builder.append(i, timestamp=1_000 + i, key=None, value=b"value-%d" % i * 10, headers=[])
    return bytes(builder.build())


def test_a_compressed_batch_gets_offsets_without_its_records_being_touched() -> None:
    data = _gzip_batch()
    validated = validate_leader_append(
        data, next_offset=500, leader_epoch=7, now_ms=9_000, log_append_time=True,
        max_message_bytes=1 << 20, origin_client=True,
    )  # fmt: skip
    out = validated.data
    assert out[HEADER_SIZE:] == data[HEADER_SIZE:]  # the compressed stream is written as it came
    header = read_batch_header(out)
    assert header is not None and batch_crc_valid(out, 0, header)
    assert (header.base_offset, header.partition_leader_epoch, header.compression) == (
        500,
        7,
        Compression.GZIP,
    )
    assert header.timestamp_type is TimestampType.LOG_APPEND_TIME and header.max_timestamp == 9_000
    assert [(r.offset, r.timestamp) for r in decode_batch(out).records] == [
        (500, 9_000),
        (501, 9_000),
        (502, 9_000),
    ]
    assert (validated.first_offset, validated.last_offset, validated.record_count) == (500, 502, 3)


def test_set_log_append_time_keeps_the_other_attributes_and_is_idempotent() -> None:
    batch = build_batch([SimpleRecord(value=b"v")], is_transactional=True, producer_id=3, producer_epoch=0,
                        base_sequence=0)  # fmt: skip
    once = set_log_append_time(batch, 42)
    header = read_batch_header(once)
    assert header is not None and batch_crc_valid(once, 0, header)
    assert header.attributes & TRANSACTIONAL_FLAG and header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert set_log_append_time(once, 42) is once


def test_follower_parsing_drops_a_trailing_partial_batch_only() -> None:
    one, two = produce(b"a"), produce(b"b", base_offset=1)
    assert validate_follower_append(b"") is None
    assert validate_follower_append(one[:30]) is None
    validated = validate_follower_append(one + two[:-1])
    assert validated is not None and validated.data == one and validated.last_offset == 0
    bad_magic = bytearray(one)
    bad_magic[16] = 1
    with pytest.raises(UnsupportedMagicError):
        validate_follower_append(bytes(bad_magic))
    flipped = bytearray(one + two)
    flipped[-1] ^= 0xFF
    with pytest.raises(CorruptMessageError):
        validate_follower_append(bytes(flipped))


# ------------------------------------------------------------------------------------ producer state


def _header(
    seq: int, *, epoch: int = 0, count: int = 1, base_offset: int = 0, control: bool = False
) -> BatchHeader:
    data = build_batch(
        [SimpleRecord(value=b"v")] * count,
        base_offset=base_offset,
        producer_id=9,
        producer_epoch=epoch,
        base_sequence=seq,
        is_control=control,
    )
    header = read_batch_header(data)
    assert header is not None
    return header


def test_check_append_changes_nothing_even_when_it_refuses() -> None:
    state = ProducerStateManager()
    state.update(_header(0, count=2))
    entry = state.entry(9)
    assert entry is not None
    before = (entry.producer_epoch, list(entry.batches))
    assert state.check_append([_header(2)], origin_client=True) is None
    with pytest.raises(OutOfOrderSequenceError):
        state.check_append([_header(2), _header(5)], origin_client=True)
    assert (entry.producer_epoch, list(entry.batches)) == before


def test_epochs_are_checked_for_our_own_appends_but_sequences_are_not() -> None:
    state = ProducerStateManager()
    state.update(_header(0, epoch=3))
    assert state.check_append([_header(77, epoch=3)], origin_client=False) is None
    with pytest.raises(InvalidProducerEpochError):
        state.check_append([_header(1, epoch=2)], origin_client=False)
    # Within one append the second batch is checked against the first.
    with pytest.raises(InvalidProducerEpochError):
        state.check_append([_header(0, epoch=5), _header(0, epoch=4)], origin_client=False)


def test_a_control_batch_moves_the_epoch_and_clears_the_batches() -> None:
    state = ProducerStateManager()
    state.update(_header(0, epoch=1))
    state.update(_header(-1, epoch=2, control=True, base_offset=1))
    entry = state.entry(9)
    assert entry is not None and (entry.producer_epoch, entry.batches) == (2, [])
    # Same epoch, no batches: the next sequence must be 0.
    with pytest.raises(OutOfOrderSequenceError):
        state.check_append([_header(1, epoch=2)], origin_client=True)
    assert state.check_append([_header(0, epoch=2)], origin_client=True) is None


def test_a_duplicate_needs_the_same_epoch() -> None:
    state = ProducerStateManager()
    state.update(_header(0, epoch=1))
    assert state.check_append([_header(0, epoch=1)], origin_client=True) is not None
    assert state.check_append([_header(0, epoch=2)], origin_client=True) is None
    assert state.check_append([_header(0, epoch=1)], origin_client=False) is None


def test_in_sequence_wraps_at_int32_max() -> None:
    assert in_sequence(4, 5) and in_sequence(INT32_MAX, 0)
    assert not in_sequence(INT32_MAX, 1) and not in_sequence(4, 6) and not in_sequence(-1, 1)
