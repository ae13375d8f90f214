"""The partition log's ``.index``/``.timeindex`` files and producer-state ``.snapshot`` files.

Byte-exact formats against hand-built expectations, open from the indexes (no scan) below the
recovery point and after a clean shutdown, rebuild of a missing or corrupt index, truncation, time
lookups on a many-segment log, and producer snapshots at roll and close, loaded at open.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest
from partition_log_contract import TOPIC, TOPIC_ID, append, contents, idempotent, produce

from kraft.common.errors import KraftError, StorageError
from kraft.records.batch import iter_batch_headers
from kraft.storage.memory_partition_log import MemoryPartitionLog
from kraft.storage.partition_log import PartitionLog
from kraft.storage.producer_snapshot import decode_producer_snapshot, encode_producer_snapshot
from kraft.storage.producer_state import BatchMetadata, ProducerStateEntry
from kraft.storage.segment_index import IndexConfig
from kraft.storage.segment_log import SegmentLog

SMALL = IndexConfig(interval_bytes=100, max_bytes=1024)
# One record of 20 bytes: every such batch has the same size.
BATCH = len(produce(b"x" * 20, timestamps=[0]))


def _open(log_dir: Path, **kwargs: object) -> PartitionLog:
    kwargs.setdefault("index", SMALL)
    return PartitionLog(log_dir, TOPIC, 0, TOPIC_ID, **kwargs)  # type: ignore[arg-type]


def _files(log: PartitionLog, base: int) -> tuple[bytes, bytes]:
    return (
        (log.directory / f"{base:020d}.index").read_bytes(),
        (log.directory / f"{base:020d}.timeindex").read_bytes(),
    )


def _fill(log: PartitionLog, timestamps: list[int]) -> None:
    for ts in timestamps:
        append(log, b"x" * 20, timestamps=[ts])


# ------------------------------------------------------------------------------------- the formats


def test_index_files_are_kafkas_bytes_written_at_flush_roll_and_close(tmp_path: Path) -> None:
    assert BATCH == 88  # 61-byte header + a 27-byte record
    log = _open(tmp_path)
    _fill(log, [10, 30, 20, 50, 40, 60])
    # Before batch k (position 88k), an entry when more than 100 bytes came since the last one:
    # batches 2 and 4 (bytes since: 176 before batch 2, then 176 again before batch 4).
    expected_offsets = struct.pack(">ii", 2, 176) + struct.pack(">ii", 4, 352)
    # Time entries: (max timestamp so far, last offset of the batch that first reached it).
    expected_times = struct.pack(">qi", 30, 1) + struct.pack(">qi", 50, 3)
    # The active segment's entries are in memory until a flush writes them (no descriptor held).
    assert not (log.directory / f"{0:020d}.index").exists()
    log.flush()
    assert _files(log, 0) == (expected_offsets, expected_times)
    _fill(log, [70])  # batch 6: 264 bytes since batch 4's entry
    log.flush()
    assert _files(log, 0) == (
        expected_offsets + struct.pack(">ii", 6, 528),
        expected_times + struct.pack(">qi", 70, 6),
    )
    log.close()
    # Close forces the segment's final (max timestamp, offset) entry: already (70, 6) here.
    assert _files(log, 0) == (
        expected_offsets + struct.pack(">ii", 6, 528),
        expected_times + struct.pack(">qi", 70, 6),
    )


def test_close_writes_the_final_time_entry(tmp_path: Path) -> None:
    log = _open(tmp_path)
    _fill(log, [10, 30, 20, 50, 40, 60])
    log.flush()
    log.close()
    offsets, times = _files(log, 0)
    assert times[-12:] == struct.pack(">qi", 60, 5) and len(offsets) == 16


def test_a_partition_log_holds_one_file_descriptor(tmp_path: Path) -> None:
    # Each index file held open made a partition cost three descriptors: 10,000 partitions ran a
    # broker out of a 20,000 limit.
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd")
    before = open_fds()
    logs = [PartitionLog(tmp_path, TOPIC, p, TOPIC_ID, index=SMALL) for p in range(20)]
    for log in logs:
        _fill(log, [1, 2, 3, 4, 5])
    assert open_fds() - before == 20
    for log in logs:
        log.close()
    assert open_fds() == before


def test_a_roll_seals_the_finished_segments_indexes(tmp_path: Path) -> None:
    log = _open(tmp_path, segment_bytes=3 * BATCH)
    _fill(log, [5, 7, 6, 9])
    assert log.segment_base_offsets() == [0, 3]
    # Segment 0 (3 batches): one entry before batch 2; the sealed time index ends with (7, 1).
    assert _files(log, 0) == (struct.pack(">ii", 2, 176), struct.pack(">qi", 7, 1))


def test_a_full_index_rolls_the_segment_before_the_next_append(tmp_path: Path) -> None:
    # log.index.size.max.bytes 40: room for 5 offset entries (8 bytes) and 3 time entries (12 bytes).
    # An entry before every batch but the first (interval 0); increasing timestamps, so each entry
    # is in both indexes and the time index (3 entries) fills first.
    log = _open(tmp_path, index=IndexConfig(interval_bytes=0, max_bytes=40))
    _fill(log, list(range(1, 11)))
    # Segment 0 takes batches 0..3 (entries before 1, 2 and 3: the time index is full), then rolls.
    assert log.segment_base_offsets() == [0, 4, 8]
    offsets, times = _files(log, 0)
    # Sealed: trimmed to the 3 entries (the forced final time entry (4, 3) is already the last one).
    assert len(offsets) == 3 * 8 and len(times) == 3 * 12
    assert [r[0] for r in contents(log)] == list(range(10))  # every offset still found
    assert [r[0] for r in contents(log, 6)] == list(range(6, 10))


def test_a_topics_index_configs_apply_to_the_segments_created_after_them(tmp_path: Path) -> None:
    # index.interval.bytes / segment.index.bytes changed on an open log (a topic config change):
    # the active segment keeps the sizes it was created with, as Kafka's; the next ones take them.
    log = _open(tmp_path, segment_bytes=3 * BATCH)
    _fill(log, [5, 7, 6])
    log.configure_segments(3 * BATCH, None, index_interval_bytes=0, index_max_bytes=40)
    _fill(log, [9, 10, 11, 12, 13, 14, 15])
    assert log.segment_base_offsets() == [0, 3, 6, 9]
    assert _files(log, 0)[0] == struct.pack(">ii", 2, 176)  # interval 100: one entry in 3 batches
    offsets, times = _files(log, 3)
    assert offsets == struct.pack(">iiii", 1, 88, 2, 176)  # interval 0: an entry before every batch
    assert len(times) == 2 * 12  # increasing times: the time index has an entry with each offset entry
    # segment.bytes out of reach: the 40-byte index (room for three time entries) rolls instead.
    log.configure_segments(1 << 20, None)  # index configs as they are
    _fill(log, list(range(16, 22)))
    assert log.segment_base_offsets()[-2:] == [9, 13]
    assert [r[0] for r in contents(log)] == list(range(16))
    with pytest.raises(KraftError, match="index size must be at least 4"):
        log.configure_segments(1 << 20, None, index_max_bytes=3)


def test_the_metadata_logs_segment_log_writes_no_index_files(tmp_path: Path) -> None:
    with SegmentLog(tmp_path) as log:
        log.append_as_leader(produce(b"a"), 1)
        log.flush()
    assert sorted(os.listdir(tmp_path)) == ["00000000000000000000.log", "leader-epoch-checkpoint"]


# ------------------------------------------------------------------------------ open from the indexes


def _many_segments(tmp_path: Path, count: int = 12) -> tuple[PartitionLog, MemoryPartitionLog]:
    log = _open(tmp_path, segment_bytes=4 * BATCH)
    twin = MemoryPartitionLog(TOPIC, 0, TOPIC_ID, segment_bytes=4 * BATCH)
    for i in range(count * 4):
        for target in (log, twin):
            append(target, b"%020d" % i, timestamps=[1_000 + 10 * i])
    log.flush()
    return log, twin


def _flip_a_record_byte(log_dir: Path, base: int) -> None:
    path = log_dir / f"{TOPIC}-0" / f"{base:020d}.log"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # inside the last record's value: the CRC no longer matches
    path.write_bytes(bytes(data))


def test_segments_below_the_recovery_point_open_from_their_indexes_without_a_scan(tmp_path: Path) -> None:
    log, twin = _many_segments(tmp_path)
    end = log.log_end_offset
    log.close()
    _flip_a_record_byte(tmp_path, 4)  # a non-last segment: a scan would cut the log there
    probe = tmp_path / "probe"
    shutil.copytree(tmp_path / f"{TOPIC}-0", probe / f"{TOPIC}-0")
    scanned = _open(probe, segment_bytes=4 * BATCH, recovery_point=0)
    (cut,) = scanned.recovery_report.truncated_tails
    assert cut.file.name == f"{4:020d}.log" and scanned.log_end_offset == 7
    scanned.close()
    # Below the recovery point, as in Kafka, nothing is read: the corruption goes unseen.
    reopened = _open(tmp_path, segment_bytes=4 * BATCH, recovery_point=end)
    assert reopened.recovery_report.clean
    assert reopened.segment_base_offsets() == twin.segment_base_offsets()
    assert reopened.read(20, 1000, max_offset=end) == twin.read(20, 1000, max_offset=end)
    reopened.close()
    clean = _open(tmp_path, segment_bytes=4 * BATCH, clean_shutdown=True)
    assert clean.log_end_offset == end and clean.recovery_report.clean


def test_the_segment_holding_the_recovery_point_and_later_ones_are_scanned(tmp_path: Path) -> None:
    log, _ = _many_segments(tmp_path)
    log.close()
    _flip_a_record_byte(tmp_path, 40)  # the segment [40, 44) holds the recovery point 42
    reopened = _open(tmp_path, segment_bytes=4 * BATCH, recovery_point=42)
    (cut,) = reopened.recovery_report.truncated_tails
    assert cut.file.name == f"{40:020d}.log" and [p.name for p in cut.segments_deleted] == [f"{44:020d}.log"]
    assert reopened.log_end_offset == 43  # the damaged batch (offset 43) and all after it are gone


@pytest.mark.parametrize("damage", ["delete", "garbage", "past the file"])
def test_a_missing_or_corrupt_index_is_rebuilt_the_same(tmp_path: Path, damage: str) -> None:
    log, twin = _many_segments(tmp_path)
    end = log.log_end_offset
    before = _files(log, 8)
    log.close()
    index = tmp_path / f"{TOPIC}-0" / f"{8:020d}.index"
    if damage == "delete":
        index.unlink()
    elif damage == "garbage":
        index.write_bytes(struct.pack(">ii", 3, 200) + struct.pack(">ii", 1, 300))  # offsets go back
    else:
        index.write_bytes(struct.pack(">ii", 2, 10_000))  # a position beyond the segment
    reopened = _open(tmp_path, segment_bytes=4 * BATCH, recovery_point=end)
    assert reopened.recovery_report.rebuilt_indexes == [index.with_suffix(".log")]
    assert _files(reopened, 8) == before
    assert contents(reopened) == contents(twin)


def test_orphan_index_files_are_removed(tmp_path: Path) -> None:
    log, _ = _many_segments(tmp_path, count=2)
    log.close()
    orphan = tmp_path / f"{TOPIC}-0" / f"{99:020d}.index"
    orphan.write_bytes(b"")
    _open(tmp_path, segment_bytes=4 * BATCH).close()
    assert not orphan.exists()


def test_truncation_trims_the_indexes_as_a_rebuild_would_write_them(tmp_path: Path) -> None:
    log, twin = _many_segments(tmp_path, count=3)
    log.close()
    reopened = _open(tmp_path, segment_bytes=4 * BATCH, clean_shutdown=True)  # from the indexes
    assert reopened.truncate_to(6) and twin.truncate_to(6)
    assert reopened.segment_base_offsets() == [0, 4] and reopened.log_end_offset == 6
    assert contents(reopened) == contents(twin)
    reopened.flush()
    reopened.close()
    # The entry (6, 176) went with batch 6; the time entry (1050, offset 5) written with it stays.
    truncated = _files(reopened, 4)
    assert truncated == (b"", struct.pack(">qi", 1_050, 1))
    rebuilt = _open(tmp_path, segment_bytes=4 * BATCH, recovery_point=0)
    rebuilt.close()
    assert _files(rebuilt, 4) == truncated


def test_time_lookups_go_through_the_time_index_on_a_many_segment_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, twin = _many_segments(tmp_path, count=100)
    end = log.log_end_offset
    assert log.size_in_bytes > 4 * 8192
    log.close()
    reopened = _open(tmp_path, segment_bytes=4 * BATCH, clean_shutdown=True)
    read_bytes: list[int] = []
    original = SegmentLog.read

    def counting(self: SegmentLog, start_offset: int, max_bytes: int) -> bytes:
        data = original(self, start_offset, max_bytes)
        read_bytes.append(len(data))
        return data

    monkeypatch.setattr(SegmentLog, "read", counting)
    for ts in (0, 1_000, 1_005, 1_555, 2_590, 2_591, 9_999, -3, -2, -1):
        read_bytes.clear()
        assert reopened.offset_for_timestamp(ts, max_offset=end) == twin.offset_for_timestamp(
            ts, max_offset=end
        )
        # The segments' largest timestamps and the time index place one small read, not a scan.
        assert sum(read_bytes) <= 8192
    assert reopened.offset_for_timestamp(1_555, max_offset=end) == (56, 1_560, 1)
    assert reopened.offset_for_timestamp(4_000, max_offset=end) == (300, 4_000, 1)


# --------------------------------------------------------------------------- producer-state snapshots


def test_a_snapshot_is_kafkas_bytes_and_reads_back() -> None:
    entry = ProducerStateEntry(7, 2, [BatchMetadata(3, 5, 10, 12, 1_234)], 1_234)
    data = encode_producer_snapshot([entry, ProducerStateEntry(3, 0, [], 99)])
    body = struct.pack(">i", 2)
    body += struct.pack(">qhiqiqiq", 3, 0, -1, -1, 0, 99, -1, -1)
    body += struct.pack(">qhiqiqiq", 7, 2, 5, 12, 2, 1_234, -1, -1)
    from kraft.records.batch import crc32c

    assert data == struct.pack(">hI", 1, crc32c(body)) + body
    decoded = decode_producer_snapshot(data)
    assert [(e.producer_id, e.producer_epoch, e.batches, e.last_timestamp) for e in decoded] == [
        (3, 0, [], 99),
        (7, 2, [BatchMetadata(3, 5, 10, 12, 1_234)], 1_234),
    ]
    with pytest.raises(StorageError, match="CRC"):
        decode_producer_snapshot(data[:-1] + bytes([data[-1] ^ 1]))


def _idempotent_log(tmp_path: Path) -> PartitionLog:
    log = _open(tmp_path, segment_bytes=3 * BATCH)
    for seq in range(7):
        idempotent(log, b"y" * 20, seq=seq)
        append(log, b"z" * 20, timestamps=[5])
    return log


def test_snapshots_at_each_roll_and_at_close_spare_the_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _idempotent_log(tmp_path)
    assert log.producer_snapshot_offsets == [3, 6, 9, 12]  # at each new segment's base
    log.flush()
    log.close()
    assert log.producer_snapshot_offsets == [3, 6, 9, 12, 14]  # and at the log end on close
    replayed: list[int] = []
    original = SegmentLog.read

    def counting(self: SegmentLog, start_offset: int, max_bytes: int) -> bytes:
        replayed.append(start_offset)
        return original(self, start_offset, max_bytes)

    monkeypatch.setattr(SegmentLog, "read", counting)
    reopened = _open(tmp_path, segment_bytes=3 * BATCH, clean_shutdown=True)
    assert replayed == []  # the state came from 00000000000000000014.snapshot alone
    assert reopened.producers[7].last_seq == 6
    assert idempotent(reopened, b"y" * 20, seq=6).duplicate  # the last batch is in the snapshot
    assert idempotent(reopened, b"y" * 20, seq=7).first_offset == 14


def test_a_crash_reloads_the_latest_snapshot_below_the_log_end(tmp_path: Path) -> None:
    log = _idempotent_log(tmp_path)
    log.flush()
    idempotent(log, b"y" * 20, seq=7)  # unflushed, and a snapshot past the end after the crash
    log.crash()
    reopened = _open(tmp_path, segment_bytes=3 * BATCH, recovery_point=0)
    assert reopened.log_end_offset == 14
    assert reopened.producer_snapshot_offsets == [3, 6, 9, 12]
    assert reopened.producers[7].last_seq == 6


def test_a_corrupt_snapshot_is_deleted_and_an_older_one_used(tmp_path: Path) -> None:
    log = _idempotent_log(tmp_path)
    log.flush()
    log.close()
    (log.directory / f"{14:020d}.snapshot").write_bytes(b"\x00\x01garbage")
    reopened = _open(tmp_path, segment_bytes=3 * BATCH, clean_shutdown=True)
    assert reopened.producer_snapshot_offsets == [3, 6, 9, 12]
    assert reopened.producers[7].last_seq == 6  # snapshot 12, then the batches 12 and 13 replayed


def test_truncation_and_retention_remove_stale_snapshots(tmp_path: Path) -> None:
    log = _idempotent_log(tmp_path)
    assert log.truncate_to(8)  # inside [6, 9): the batch 8 goes
    assert log.producer_snapshot_offsets == [3, 6]
    assert log.producers[7].last_seq == 3  # offsets 0, 2, 4, 6 hold sequences 0-3
    log.update_high_watermark(8)
    assert log.delete_old_segments(10**12, 0, -1) == 2  # segments [0, 3) and [3, 6) go
    assert log.segment_base_offsets()[0] == 6 and log.producer_snapshot_offsets == [6]


def test_the_memory_twin_keeps_the_same_snapshots(tmp_path: Path) -> None:
    log = _idempotent_log(tmp_path)
    twin = MemoryPartitionLog(TOPIC, 0, TOPIC_ID, segment_bytes=3 * BATCH)
    for seq in range(7):
        idempotent(twin, b"y" * 20, seq=seq)
        append(twin, b"z" * 20, timestamps=[5])
    assert twin.producer_snapshot_offsets == log.producer_snapshot_offsets
    for target in (log, twin):
        target.flush()
        target.crash()
    reopened = _open(tmp_path, segment_bytes=3 * BATCH, recovery_point=0)
    assert twin.producer_snapshot_offsets == reopened.producer_snapshot_offsets
    assert {p: e.batches for p, e in twin.producers.items()} == {
        p: e.batches for p, e in reopened.producers.items()
    }
    assert [h.base_offset for _, h in iter_batch_headers(twin.read(0, 1 << 20, max_offset=14))] == list(
        range(14)
    )


@pytest.mark.parametrize("how", ["clean", "recovery point", "scan"])
def test_reads_through_the_sparse_indexes_equal_the_memory_twins(tmp_path: Path, how: str) -> None:
    """Every (offset, budget, bound) read, across segment boundaries, after an open from the indexes."""
    log = _open(tmp_path, segment_bytes=700)
    twin = MemoryPartitionLog(TOPIC, 0, TOPIC_ID, segment_bytes=700)
    seq = 0
    for i in range(60):
        values = [b"v" * (i % 17)] * (1 + i % 3)
        for target in (log, twin):
            if i % 4 == 0:
                idempotent(target, *values, seq=seq)
            else:
                append(target, *values, timestamps=[2_000 - i] * len(values))
        seq += len(values) if i % 4 == 0 else 0
    end = log.log_end_offset
    log.flush()
    log.close()
    options: dict[str, object] = {
        "clean": {"clean_shutdown": True},
        "recovery point": {"recovery_point": end},
        "scan": {"recovery_point": 0},
    }[how]  # type: ignore[assignment]
    reopened = _open(tmp_path, segment_bytes=700, **options)
    assert len(reopened.segment_base_offsets()) > 4
    for target in (reopened, twin):
        target.update_high_watermark(end)
        target.maybe_increment_log_start_offset(5)  # inside a batch of the first segment
    for start in range(5, end, 7):
        for budget in (0, 60, 300, 1_000, 10_000):
            for bound in (start + 1, start + 9, end - 3, end):
                for one in (True, False):
                    expected = twin.read(start, budget, max_offset=bound, min_one_batch=one)
                    assert reopened.read(start, budget, max_offset=bound, min_one_batch=one) == expected
    for ts in (0, 1_950, 1_990, 2_000, -3):
        assert reopened.offset_for_timestamp(ts, max_offset=end) == twin.offset_for_timestamp(
            ts, max_offset=end
        )
    assert reopened.truncate_to(37) and twin.truncate_to(37)
    assert contents(reopened) == contents(twin)
    assert {p: e.batches for p, e in reopened.producers.items()} == {
        p: e.batches for p, e in twin.producers.items()
    }
