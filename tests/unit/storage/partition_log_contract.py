"""The partition log contract: one suite run against ``PartitionLog`` (files) and ``MemoryPartitionLog``.

Written against ``BasePartitionLog``'s public API only. A test module supplies a factory and runs
every check, e.g.::

    @pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
    def test_memory_partition_log_meets_the_contract(check: ContractCheck) -> None:
        check(PartitionLogFactory(new=..., crash_and_reopen=...))

``new(**settings)`` makes an empty log (settings: ``segment_bytes``, ``segment_ms``).
``crash_and_reopen`` is a power loss followed by a restart with the broker checkpoints written just
before it: everything not flushed must be lost, everything flushed must survive, and the high
watermark and log start offset are those of the crashed log (clamped).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from kraft.common.errors import KraftError
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.primitives import INT32_MAX
from kraft.records.batch import (
    CRC_OFFSET,
    SimpleRecord,
    TimestampType,
    batch_crc_valid,
    build_batch,
    crc32c,
    iter_batch_headers,
    iter_batches,
)
from kraft.storage.base_partition_log import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    AppendInfo,
    BasePartitionLog,
)
from kraft.storage.epoch_cache import EpochEntry
from kraft.storage.log_errors import (
    CorruptMessageError,
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTimestampError,
    OffsetOutOfRangeError,
    OutOfOrderSequenceError,
    PartitionLogError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnexpectedAppendOffsetError,
    UnsupportedMagicError,
)

TOPIC = "orders"
TOPIC_ID = uuid.UUID("1d9ad2d2-8a6e-4c55-9c3a-3f0b1e2d4c5a")
NOW_MS = 10_000


@dataclass(frozen=True)
class PartitionLogFactory:
    new: Callable[..., BasePartitionLog]
    crash_and_reopen: Callable[[BasePartitionLog], BasePartitionLog]


ContractCheck = Callable[[PartitionLogFactory], None]


# ---------------------------------------------------------------------------------------------- helpers


def produce(
    *values: bytes,
    timestamps: Sequence[int] | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    base_offset: int = 0,
    is_control: bool = False,
) -> bytes:
    """A batch as a producer sends it (base offset 0, no leader epoch)."""
    records = [
        SimpleRecord(value=v, timestamp=None if timestamps is None else timestamps[i])
        for i, v in enumerate(values)
    ]
    return build_batch(
        records,
        base_offset=base_offset,
        timestamp_ms=1_000,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        is_control=is_control,
    )


def append(
    log: BasePartitionLog,
    *values: bytes,
    epoch: int = 1,
    now_ms: int = NOW_MS,
    log_append_time: bool = False,
    **batch: Any,
) -> AppendInfo:
    return log.append_as_leader(
        produce(*values, **batch), epoch, now_ms=now_ms, log_append_time=log_append_time
    )


def idempotent(
    log: BasePartitionLog, *values: bytes, seq: int, producer_epoch: int = 0, producer_id: int = 7
) -> AppendInfo:
    return append(log, *values, producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=seq)


def contents(log: BasePartitionLog, start: int | None = None) -> list[tuple[int, int, bytes | None]]:
    """(offset, batch epoch, value) of every record readable from ``start`` (default: the log start)."""
    data = log.read(log.log_start_offset if start is None else start, 1 << 30, max_offset=log.log_end_offset)
    return [(r.offset, b.partition_leader_epoch, r.value) for b in iter_batches(data) for r in b.records]


def bases(data: bytes) -> list[int]:
    return [h.base_offset for _, h in iter_batch_headers(data)]


def patch(batch: bytes, position: int, fmt: str, value: int, *, fix_crc: bool = True) -> bytes:
    """``batch`` with one header field replaced (and its CRC recomputed)."""
    out = bytearray(batch)
    struct.pack_into(fmt, out, position, value)
    if fix_crc:
        struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[21:]))
    return bytes(out)


def fill(log: BasePartitionLog) -> None:
    """Three batches in epochs 1, 2, 2: offsets 0-1 (a, b), 2-4 (c, d, e) and 5 (f)."""
    append(log, b"a", b"b", epoch=1, timestamps=[100, 200])
    append(log, b"c", b"d", b"e", epoch=2, timestamps=[150, 900, 300])
    append(log, b"f", epoch=2, timestamps=[400])


def assert_unchanged(log: BasePartitionLog, before: list[tuple[int, int, bytes | None]], end: int) -> None:
    assert log.log_end_offset == end
    assert contents(log) == before


# ---------------------------------------------------------------------------------------------- appends


def check_empty_log(factory: PartitionLogFactory) -> None:
    log = factory.new()
    assert (log.topic, log.partition, log.topic_id) == (TOPIC, 0, TOPIC_ID)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark, log.recovery_point) == (0, 0, 0, 0)
    assert log.latest_epoch is None and log.epoch_entries == ()
    assert log.read(0, 100, max_offset=0) == b""
    assert log.end_offset_for_epoch(0) == (-1, -1)
    assert log.offset_for_timestamp(0, max_offset=0) is None
    assert log.offset_for_timestamp(MAX_TIMESTAMP, max_offset=0) is None


def check_leader_append_assigns_offsets_from_the_log_end_and_stamps_the_epoch(
    factory: PartitionLogFactory,
) -> None:
    log = factory.new()
    first = append(log, b"a", b"b", epoch=3)
    second = append(log, b"c", b"d", b"e", epoch=3)
    assert (first.first_offset, first.last_offset, first.record_count) == (0, 1, 2)
    assert (second.first_offset, second.last_offset, second.record_count) == (2, 4, 3)
    assert not first.duplicate and not second.duplicate
    assert log.log_end_offset == 5
    assert contents(log) == [(0, 3, b"a"), (1, 3, b"b"), (2, 3, b"c"), (3, 3, b"d"), (4, 3, b"e")]
    data = log.read(0, 1 << 20, max_offset=5)
    assert all(batch_crc_valid(data, pos, h) for pos, h in iter_batch_headers(data))
    assert first.valid_bytes + second.valid_bytes == len(data)
    assert log.epoch_entries == (EpochEntry(3, 0),) and log.latest_epoch == 3


def check_create_time_append_reports_the_shallow_max_timestamp(factory: PartitionLogFactory) -> None:
    log = factory.new()
    info = append(log, b"a", b"b", b"c", timestamps=[100, 300, 200])
    # Kafka 4: the batch's max timestamp and the batch's last offset (not the record's offset).
    assert (info.max_timestamp, info.offset_of_max_timestamp, info.log_append_time_ms) == (300, 2, -1)
    (batch,) = iter_batches(log.read(0, 1 << 20, max_offset=3))
    assert batch.header.timestamp_type is TimestampType.CREATE_TIME
    assert [r.timestamp for r in batch.records] == [100, 300, 200]


def check_log_append_time_rewrites_the_timestamp_and_the_crc(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"x", timestamps=[50])
    info = append(log, b"a", b"b", timestamps=[100, 300], now_ms=5_000, log_append_time=True)
    assert (info.log_append_time_ms, info.max_timestamp, info.offset_of_max_timestamp) == (5_000, 5_000, 2)
    data = log.read(1, 1 << 20, max_offset=3)
    (batch,) = iter_batches(data)  # iter_batches checks the CRC
    assert batch.header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.header.max_timestamp == 5_000
    assert [r.timestamp for r in batch.records] == [5_000, 5_000]
    assert batch.header.base_offset == 1


def check_append_refuses_invalid_batches_with_kafkas_codes_and_writes_nothing(
    factory: PartitionLogFactory,
) -> None:
    log = factory.new()
    append(log, b"kept")
    before, end = contents(log), log.log_end_offset
    good = produce(b"a", b"b")
    corrupt = bytearray(good)
    corrupt[-1] ^= 0x01
    cases: list[tuple[str, bytes, dict[str, Any], type[PartitionLogError], ErrorCode]] = [
        ("crc", bytes(corrupt), {}, CorruptMessageError, ErrorCode.CORRUPT_MESSAGE),
        (
            "magic 1",
            patch(good, 16, ">b", 1, fix_crc=False),
            {},
            UnsupportedMagicError,
            ErrorCode.INVALID_RECORD,
        ),
        (
            "magic 0",
            patch(good, 16, ">b", 0, fix_crc=False),
            {},
            UnsupportedMagicError,
            ErrorCode.INVALID_RECORD,
        ),
        ("two batches", good + good, {}, InvalidRecordError, ErrorCode.INVALID_RECORD),
        (
            "too large",
            good,
            {"max_message_bytes": len(good) - 1},
            RecordTooLargeError,
            ErrorCode.MESSAGE_TOO_LARGE,
        ),
        ("control", produce(b"c", is_control=True), {}, InvalidRecordError, ErrorCode.INVALID_RECORD),
        ("count", patch(good, 57, ">i", 3), {}, InvalidRecordError, ErrorCode.INVALID_RECORD),
        ("base offset", produce(b"a", base_offset=5), {}, InvalidRecordError, ErrorCode.INVALID_RECORD),
        ("partial", good[:-1], {}, CorruptMessageError, ErrorCode.CORRUPT_MESSAGE),
        ("short", good[:20], {}, CorruptMessageError, ErrorCode.CORRUPT_MESSAGE),
        ("empty", b"", {}, InvalidRecordError, ErrorCode.INVALID_RECORD),
        (
            "no sequence",
            produce(b"a", producer_id=5, producer_epoch=0),
            {},
            InvalidRecordError,
            ErrorCode.INVALID_RECORD,
        ),
        ("producer LAT", patch(good, 21, ">h", 0x08), {}, InvalidTimestampError, ErrorCode.INVALID_TIMESTAMP),
    ]
    for name, data, kwargs, error, code in cases:
        with pytest.raises(error) as raised:
            log.append_as_leader(data, 1, now_ms=NOW_MS, log_append_time=False, **kwargs)
        assert raised.value.error_code == code, name
        assert_unchanged(log, before, end)


def check_append_larger_than_a_segment_is_refused(factory: PartitionLogFactory) -> None:
    data = produce(b"x" * 100)
    log = factory.new(segment_bytes=len(data) - 1)
    with pytest.raises(RecordBatchTooLargeError) as raised:
        log.append_as_leader(data, 1, now_ms=NOW_MS, log_append_time=False)
    assert raised.value.error_code == ErrorCode.RECORD_LIST_TOO_LARGE
    assert log.log_end_offset == 0


def check_timestamp_bounds_are_checked_under_create_time_only(factory: PartitionLogFactory) -> None:
    log = factory.new()
    data = produce(b"a", b"b", timestamps=[NOW_MS - 1_000, NOW_MS + 2_000])
    for after, before in ((1_999, None), (None, 999)):
        with pytest.raises(InvalidTimestampError) as raised:
            log.append_as_leader(
                data,
                1,
                now_ms=NOW_MS,
                log_append_time=False,
                timestamp_after_max_ms=after,
                timestamp_before_max_ms=before,
            )
        assert raised.value.error_code == ErrorCode.INVALID_TIMESTAMP
    assert log.log_end_offset == 0
    ok = log.append_as_leader(
        data,
        1,
        now_ms=NOW_MS,
        log_append_time=False,
        timestamp_after_max_ms=2_000,
        timestamp_before_max_ms=1_000,
    )
    assert ok.last_offset == 1
    lat = log.append_as_leader(
        data, 1, now_ms=NOW_MS, log_append_time=True, timestamp_after_max_ms=0, timestamp_before_max_ms=0
    )
    assert lat.first_offset == 2


def check_internal_appends_skip_the_client_only_rules(factory: PartitionLogFactory) -> None:
    log = factory.new()
    data = produce(b"a", base_offset=40) + produce(b"b", b"c", base_offset=41)
    info = log.append_as_leader(data, 2, now_ms=NOW_MS, log_append_time=False, origin_client=False)
    assert (info.first_offset, info.last_offset, info.record_count) == (0, 2, 3)
    assert contents(log) == [(0, 2, b"a"), (1, 2, b"b"), (2, 2, b"c")]


# ---------------------------------------------------------------------------------------------- reads


def check_read_stops_before_max_offset_in_whole_batches(factory: PartitionLogFactory) -> None:
    log = factory.new()
    fill(log)
    assert bases(log.read(0, 1 << 20, max_offset=6)) == [0, 2, 5]
    assert bases(log.read(0, 1 << 20, max_offset=5)) == [0, 2]
    assert bases(log.read(0, 1 << 20, max_offset=4)) == [0]  # the batch 2..4 reaches past 4
    assert log.read(3, 1 << 20, max_offset=4) == b""
    assert bases(log.read(3, 1 << 20, max_offset=6)) == [2, 5]  # from the batch holding offset 3
    assert log.read(2, 1 << 20, max_offset=2) == b""
    assert log.read(4, 1 << 20, max_offset=1) == b""  # a consumer beyond the high watermark
    assert log.read(6, 1 << 20, max_offset=6) == b""
    assert bases(log.read(5, 1 << 20, max_offset=100)) == [5]


def check_read_returns_at_least_one_batch_kip_74(factory: PartitionLogFactory) -> None:
    log = factory.new()
    fill(log)
    sizes = [h.size_in_bytes for _, h in iter_batch_headers(log.read(0, 1 << 20, max_offset=6))]
    assert bases(log.read(0, 1, max_offset=6)) == [0]
    assert log.read(0, 1, max_offset=6, min_one_batch=False) == b""
    assert bases(log.read(0, sizes[0] + sizes[1], max_offset=6)) == [0, 2]
    assert bases(log.read(0, sizes[0] + sizes[1] - 1, max_offset=6)) == [0]
    assert bases(log.read(0, sizes[0] + sizes[1] - 1, max_offset=6, min_one_batch=False)) == [0]
    assert bases(log.read(2, 0, max_offset=6)) == [2]


def check_read_out_of_range(factory: PartitionLogFactory) -> None:
    log = factory.new()
    fill(log)
    with pytest.raises(OffsetOutOfRangeError) as raised:
        log.read(7, 100, max_offset=6)
    assert raised.value.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    log.update_high_watermark(6)
    assert log.maybe_increment_log_start_offset(3)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(2, 100, max_offset=6)
    assert bases(log.read(3, 1 << 20, max_offset=6)) == [2, 5]
    assert [o for o, _, _ in contents(log)] == [2, 3, 4, 5]  # the batch holding the start, whole


# ------------------------------------------------------------------------------------ high watermark


def check_high_watermark_clamps_and_moves_back_only_when_told(factory: PartitionLogFactory) -> None:
    log = factory.new()
    assert not log.update_high_watermark(5)  # clamped to the log end, 0
    append(log, b"a", b"b", b"c")
    assert log.update_high_watermark(10) and log.high_watermark == 3
    assert not log.update_high_watermark(2) and log.high_watermark == 3
    assert log.set_high_watermark_after_truncation(1) and log.high_watermark == 1
    assert not log.set_high_watermark_after_truncation(1)
    assert not log.update_high_watermark(-5) and log.high_watermark == 1
    assert log.set_high_watermark_after_truncation(-5) and log.high_watermark == 0


# ---------------------------------------------------------------------------------------------- truncation


def check_truncation_drops_whole_batches_and_clamps(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"a", b"b", b"c", epoch=1)  # 0..2
    append(log, b"d", b"e", epoch=2)  # 3..4
    append(log, b"f", epoch=3)  # 5
    log.flush()
    log.update_high_watermark(6)
    assert log.truncate_to(4)  # inside the batch 3..4: it goes whole
    assert (log.log_end_offset, log.high_watermark, log.recovery_point) == (3, 3, 3)
    assert list(log.epoch_entries) == [EpochEntry(1, 0)]
    assert not log.truncate_to(10)
    assert append(log, b"g", epoch=4).first_offset == 3
    assert list(log.epoch_entries) == [EpochEntry(1, 0), EpochEntry(4, 3)]
    log.truncate_fully_and_start_at(50)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark, log.recovery_point) == (
        50,
        50,
        50,
        50,
    )
    assert list(log.epoch_entries) == []
    assert append(log, b"h", epoch=5).first_offset == 50
    assert contents(log) == [(50, 5, b"h")]


# ---------------------------------------------------------------------------------------------- epochs


def check_end_offset_for_epoch_is_kafkas(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"a", b"b", epoch=1)
    append(log, b"c", b"d", epoch=1)
    append(log, b"e", b"f", epoch=3)
    log.assign_epoch_start(5, 6)
    assert log.epoch_entries == (EpochEntry(1, 0), EpochEntry(3, 4), EpochEntry(5, 6))
    assert log.end_offset_for_epoch(-1) == (-1, -1)
    assert log.end_offset_for_epoch(0) == (0, 0)  # below the earliest: the earliest's start
    assert log.end_offset_for_epoch(1) == (1, 4)
    assert log.end_offset_for_epoch(2) == (1, 4)
    assert log.end_offset_for_epoch(3) == (3, 6)
    assert log.end_offset_for_epoch(4) == (3, 6)
    assert log.end_offset_for_epoch(5) == (5, 6)
    append(log, b"g", epoch=5)
    assert log.end_offset_for_epoch(5) == (5, 7)  # the latest epoch ends at the log end
    assert log.end_offset_for_epoch(6) == (-1, -1)
    with pytest.raises(KraftError):
        log.assign_epoch_start(6, 3)  # not the log end


def check_follower_append_copies_the_leader(factory: PartitionLogFactory) -> None:
    leader = factory.new()
    append(leader, b"a", b"b", epoch=1)
    idempotent(leader, b"c", seq=0)
    leader.assign_epoch_start(4, leader.log_end_offset)
    append(leader, b"d", epoch=4, log_append_time=True, now_ms=7_000)
    fetched = leader.read(0, 1 << 20, max_offset=leader.log_end_offset)
    follower = factory.new()
    info = follower.append_as_follower(fetched + fetched[:30])  # a trailing partial batch is dropped
    assert (info.first_offset, info.last_offset, info.record_count) == (0, 3, 4)
    assert (info.max_timestamp, info.offset_of_max_timestamp, info.log_append_time_ms) == (7_000, 3, -1)
    assert follower.read(0, 1 << 20, max_offset=4) == fetched
    assert follower.epoch_entries == leader.epoch_entries == (EpochEntry(1, 0), EpochEntry(4, 3))
    assert dict(follower.producers).keys() == {7}
    assert follower.producers[7].batches == leader.producers[7].batches
    nothing = follower.append_as_follower(b"")
    assert (nothing.record_count, nothing.first_offset) == (0, -1)
    with pytest.raises(UnexpectedAppendOffsetError):
        follower.append_as_follower(fetched)
    bad = bytearray(leader.read(3, 1 << 20, max_offset=4))
    bad[-1] ^= 0x01
    follower.truncate_to(3)
    with pytest.raises(CorruptMessageError):
        follower.append_as_follower(bytes(bad))
    assert follower.log_end_offset == 3


def check_follower_append_replaces_an_unused_leader_epoch(factory: PartitionLogFactory) -> None:
    # This replica led epoch 3 without writing, then follows a leader whose log holds epoch 1 there.
    log = factory.new()
    append(log, b"a", epoch=1)
    log.assign_epoch_start(3, 1)
    follower_batch = build_batch([SimpleRecord(value=b"b")], base_offset=1, partition_leader_epoch=1)
    log.append_as_follower(follower_batch)
    assert log.epoch_entries == (EpochEntry(1, 0),)
    assert log.end_offset_for_epoch(1) == (1, 2)


# ---------------------------------------------------------------------------------------------- timestamps


def check_offset_for_timestamp_finds_the_record(factory: PartitionLogFactory) -> None:
    log = factory.new()
    fill(log)  # 0:100 1:200 | 2:150 3:900 4:300 | 5:400 ; epochs 1 | 2 | 2
    assert log.offset_for_timestamp(0, max_offset=6) == (0, 100, 1)
    assert log.offset_for_timestamp(160, max_offset=6) == (1, 200, 1)
    assert log.offset_for_timestamp(250, max_offset=6) == (3, 900, 2)  # the record, not its batch
    assert log.offset_for_timestamp(901, max_offset=6) is None
    assert log.offset_for_timestamp(250, max_offset=3) is None  # found at or past the bound
    assert log.offset_for_timestamp(MAX_TIMESTAMP, max_offset=6) == (3, 900, 2)
    assert log.offset_for_timestamp(MAX_TIMESTAMP, max_offset=3) is None
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP, max_offset=6) == (0, -1, 1)
    assert log.offset_for_timestamp(LATEST_TIMESTAMP, max_offset=4) == (4, -1, 2)
    assert log.offset_for_timestamp(-7, max_offset=6) is None
    append(log, b"g", b"h", epoch=4, log_append_time=True, now_ms=5_000)
    assert log.offset_for_timestamp(4_500, max_offset=8) == (6, 5_000, 4)
    assert log.offset_for_timestamp(MAX_TIMESTAMP, max_offset=8) == (6, 5_000, 4)
    log.update_high_watermark(8)
    log.maybe_increment_log_start_offset(1)
    assert log.offset_for_timestamp(0, max_offset=8) == (1, 200, 1)  # not below the start
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP, max_offset=8) == (1, -1, 1)


# ---------------------------------------------------------------------------------------------- retention


def _one_batch_per_segment(factory: PartitionLogFactory, timestamps: Sequence[int]) -> BasePartitionLog:
    size = len(produce(b"x" * 20))
    log = factory.new(segment_bytes=size)
    for ts in timestamps:
        append(log, b"x" * 20, timestamps=[ts])
    assert log.segment_base_offsets() == list(range(len(timestamps)))
    return log


def check_retention_by_size_deletes_whole_old_segments_never_the_active_one(
    factory: PartitionLogFactory,
) -> None:
    log = _one_batch_per_segment(factory, [1_000] * 5)
    size = log.size_in_bytes // 5
    assert log.delete_old_segments(NOW_MS, -1, 2 * size) == 0  # the high watermark is 0
    log.update_high_watermark(2)
    assert log.delete_old_segments(NOW_MS, -1, 0) == 2  # up to the high watermark only
    assert (log.log_start_offset, log.segment_base_offsets()) == (2, [2, 3, 4])
    log.update_high_watermark(5)
    assert log.delete_old_segments(NOW_MS, -1, 2 * size) == 1
    assert log.log_start_offset == 3 and log.size_in_bytes == 2 * size
    assert log.delete_old_segments(NOW_MS, -1, 0) == 1  # never the active segment
    assert log.segment_base_offsets() == [4]
    assert contents(log) == [(4, 1, b"x" * 20)]
    assert log.delete_old_segments(NOW_MS, -1, -1) == 0


def check_retention_by_time_uses_the_largest_timestamp_of_a_segment(factory: PartitionLogFactory) -> None:
    log = _one_batch_per_segment(factory, [1_000, 2_000, 3_000, 4_000])
    log.update_high_watermark(4)
    assert log.delete_old_segments(NOW_MS, 7_000, -1) == 2  # 10000 - 2000 > 7000
    assert log.log_start_offset == 2
    assert log.delete_old_segments(NOW_MS, 7_000, -1) == 0
    assert log.delete_old_segments(NOW_MS, 0, -1) == 1  # not the active segment
    assert log.log_start_offset == 3
    assert log.offset_for_timestamp(0, max_offset=4) == (3, 4_000, 1)


def check_segment_ms_rolls_by_message_time_and_on_demand(factory: PartitionLogFactory) -> None:
    log = factory.new(segment_ms=1_000)
    append(log, b"a", timestamps=[1_000])
    append(log, b"b", timestamps=[1_900])
    assert log.segment_base_offsets() == [0]
    append(log, b"c", timestamps=[2_500])  # more than 1000 ms after the segment's first batch
    assert log.segment_base_offsets() == [0, 2]
    assert log.recovery_point == 3  # a roll flushes
    assert not log.maybe_roll(3_500)
    assert log.maybe_roll(3_501)
    assert log.segment_base_offsets() == [0, 2, 3]
    assert not log.maybe_roll(100_000)  # the active segment is empty


# ---------------------------------------------------------------------------------------------- durability


def check_flush_moves_the_recovery_point(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"a", b"b", b"c")
    assert (log.recovery_point, log.unflushed_messages) == (0, 3)
    log.flush(up_to=0)
    assert log.recovery_point == 0
    log.flush(up_to=2, now_ms=777)
    assert (log.recovery_point, log.unflushed_messages, log.last_flush_ms) == (3, 0, 777)


def check_crash_keeps_exactly_the_flushed_prefix(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"a", b"b", epoch=1)
    append(log, b"c", epoch=2)
    log.flush()
    append(log, b"d", epoch=3)
    log.update_high_watermark(4)
    log = factory.crash_and_reopen(log)
    assert (log.log_end_offset, log.high_watermark, log.recovery_point, log.unflushed_messages) == (
        3,
        3,
        3,
        0,
    )
    assert log.epoch_entries == (EpochEntry(1, 0), EpochEntry(2, 2))
    assert contents(log) == [(0, 1, b"a"), (1, 1, b"b"), (2, 2, b"c")]
    assert append(log, b"e", epoch=3).first_offset == 3


def check_a_roll_flushes_what_came_before(factory: PartitionLogFactory) -> None:
    size = len(produce(b"x" * 20))
    log = factory.new(segment_bytes=2 * size)
    for _ in range(3):
        append(log, b"x" * 20)
    assert log.segment_base_offsets() == [0, 2]
    assert log.recovery_point == 3
    append(log, b"x" * 20)
    assert log.recovery_point == 3
    log = factory.crash_and_reopen(log)
    assert log.log_end_offset == 3
    assert log.segment_base_offsets() == [0, 2]


def check_crash_after_retention_keeps_the_start(factory: PartitionLogFactory) -> None:
    log = _one_batch_per_segment(factory, [1_000, 2_000, 3_000])
    log.update_high_watermark(3)
    assert log.delete_old_segments(NOW_MS, 0, -1) == 2
    log = factory.crash_and_reopen(log)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (2, 3, 3)
    assert log.epoch_entries == (EpochEntry(1, 2),)
    assert contents(log) == [(2, 1, b"x" * 20)]


def check_closed_log_refuses_calls(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"a")
    log.close()
    assert log.closed
    with pytest.raises(KraftError):
        append(log, b"b")
    with pytest.raises(KraftError):
        log.read(0, 100, max_offset=1)
    with pytest.raises(KraftError):
        log.flush()


# ---------------------------------------------------------------------------------------------- producers


def check_a_retried_batch_is_a_duplicate_with_its_original_offsets(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"other")
    first = idempotent(log, b"a", b"b", seq=0)
    idempotent(log, b"c", seq=2)
    retry = idempotent(log, b"a", b"b", seq=0)
    assert retry.duplicate
    assert (retry.first_offset, retry.last_offset, retry.record_count) == (
        first.first_offset,
        first.last_offset,
        2,
    )
    assert log.log_end_offset == 4
    for seq in range(3, 7):
        idempotent(log, b"n", seq=seq)
    assert [b.first_seq for b in log.producers[7].batches] == [2, 3, 4, 5, 6]  # the last five
    with pytest.raises(OutOfOrderSequenceError):
        idempotent(log, b"a", b"b", seq=0)  # too old to be recognised
    assert log.log_end_offset == 8


def check_a_sequence_gap_is_out_of_order(factory: PartitionLogFactory) -> None:
    log = factory.new()
    idempotent(log, b"a", seq=0)
    with pytest.raises(OutOfOrderSequenceError) as raised:
        idempotent(log, b"c", seq=2)
    assert raised.value.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.log_end_offset == 1
    assert idempotent(log, b"b", seq=1).first_offset == 1


def check_producer_epochs_fence_and_bump(factory: PartitionLogFactory) -> None:
    log = factory.new()
    idempotent(log, b"a", seq=0, producer_epoch=0)
    idempotent(log, b"b", seq=0, producer_epoch=1)  # a bump starts again at 0
    with pytest.raises(InvalidProducerEpochError) as raised:
        idempotent(log, b"z", seq=1, producer_epoch=0)
    assert raised.value.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    with pytest.raises(OutOfOrderSequenceError):
        idempotent(log, b"z", seq=3, producer_epoch=2)  # a bump must start at 0
    # Kafka 4 accepts a producer it has no state for at any sequence (no UNKNOWN_PRODUCER_ID).
    assert idempotent(log, b"c", seq=42, producer_id=8).first_offset == 2
    assert log.log_end_offset == 3
    assert (log.producers[7].producer_epoch, log.producers[8].batches[-1].last_seq) == (1, 42)


def check_sequences_wrap_at_int32_max(factory: PartitionLogFactory) -> None:
    log = factory.new()
    idempotent(log, b"a", b"b", seq=INT32_MAX - 1)
    assert log.producers[7].batches[-1].last_seq == INT32_MAX
    with pytest.raises(OutOfOrderSequenceError):
        idempotent(log, b"c", seq=1)
    assert idempotent(log, b"c", seq=0).first_offset == 2


def check_producer_state_is_rebuilt_after_a_crash_and_a_truncation(factory: PartitionLogFactory) -> None:
    log = factory.new()
    first = idempotent(log, b"a", seq=0)
    idempotent(log, b"b", seq=1)
    log.flush()
    idempotent(log, b"c", seq=2)
    log = factory.crash_and_reopen(log)
    assert idempotent(log, b"a", seq=0).duplicate
    assert idempotent(log, b"a", seq=0).first_offset == first.first_offset
    log.truncate_to(1)
    with pytest.raises(OutOfOrderSequenceError):
        idempotent(log, b"c", seq=2)
    assert idempotent(log, b"b", seq=1).first_offset == 1


def check_expired_producers_are_forgotten(factory: PartitionLogFactory) -> None:
    log = factory.new()
    append(log, b"a", producer_id=7, producer_epoch=0, base_sequence=0, timestamps=[1_000])
    assert log.remove_expired_producers(1_000 + 86_399_999) == 0
    assert log.remove_expired_producers(1_000 + 86_400_000) == 1
    assert dict(log.producers) == {}
    assert idempotent(log, b"b", seq=9).first_offset == 1  # unknown again: any sequence


CONTRACT_CHECKS: tuple[ContractCheck, ...] = (
    check_empty_log,
    check_leader_append_assigns_offsets_from_the_log_end_and_stamps_the_epoch,
    check_create_time_append_reports_the_shallow_max_timestamp,
    check_log_append_time_rewrites_the_timestamp_and_the_crc,
    check_append_refuses_invalid_batches_with_kafkas_codes_and_writes_nothing,
    check_append_larger_than_a_segment_is_refused,
    check_timestamp_bounds_are_checked_under_create_time_only,
    check_internal_appends_skip_the_client_only_rules,
    check_read_stops_before_max_offset_in_whole_batches,
    check_read_returns_at_least_one_batch_kip_74,
    check_read_out_of_range,
    check_high_watermark_clamps_and_moves_back_only_when_told,
    check_truncation_drops_whole_batches_and_clamps,
    check_end_offset_for_epoch_is_kafkas,
    check_follower_append_copies_the_leader,
    check_follower_append_replaces_an_unused_leader_epoch,
    check_offset_for_timestamp_finds_the_record,
    check_retention_by_size_deletes_whole_old_segments_never_the_active_one,
    check_retention_by_time_uses_the_largest_timestamp_of_a_segment,
    check_segment_ms_rolls_by_message_time_and_on_demand,
    check_flush_moves_the_recovery_point,
    check_crash_keeps_exactly_the_flushed_prefix,
    check_a_roll_flushes_what_came_before,
    check_crash_after_retention_keeps_the_start,
    check_closed_log_refuses_calls,
    check_a_retried_batch_is_a_duplicate_with_its_original_offsets,
    check_a_sequence_gap_is_out_of_order,
    check_producer_epochs_fence_and_bump,
    check_sequences_wrap_at_int32_max,
    check_producer_state_is_rebuilt_after_a_crash_and_a_truncation,
    check_expired_producers_are_forgotten,
)
