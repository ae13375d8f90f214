"""PartitionLog's files: Kafka's formats byte for byte, recovery at open, and the topic-id guard.

The behaviour both twins share is in partition_log_contract.py; this file covers what only a
directory has: ``partition.metadata``, segment and epoch-checkpoint files, torn tails, the
checkpointed offsets a reopen takes, and an independent decoder (kafka-python) reading our bytes.
"""

from __future__ import annotations

import base64
import logging
import os
import uuid
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch
from partition_log_contract import TOPIC, TOPIC_ID, append, idempotent, produce

from kraft.common.errors import KraftError, StorageError
from kraft.records.batch import SimpleRecord, build_batch, iter_batch_headers
from kraft.storage import segment_index, segment_log
from kraft.storage.epoch_cache import EpochEntry
from kraft.storage.partition_log import (
    PARTITION_METADATA_FILE,
    PartitionLog,
    decode_partition_metadata,
    encode_partition_metadata,
    read_partition_metadata,
)

# A topic id as Kafka prints it (Uuid.toString: URL-safe base64 without padding).
KAFKA_TOPIC_ID = "vEwUUY0qTqKq3FkVsGHGxw"
OTHER_TOPIC_ID = uuid.UUID("0f0e0d0c-0b0a-4908-8706-050403020100")


def _open(log_dir: Path, topic_id: uuid.UUID | None = TOPIC_ID, **kwargs: object) -> PartitionLog:
    return PartitionLog(log_dir, TOPIC, 0, topic_id, **kwargs)  # type: ignore[arg-type]


# -------------------------------------------------------------------------------- partition.metadata


def test_partition_metadata_is_kafkas_two_lines_without_a_final_newline(tmp_path: Path) -> None:
    topic_id = uuid.UUID(bytes=base64.urlsafe_b64decode(KAFKA_TOPIC_ID + "=="))
    log = _open(tmp_path, topic_id)
    path = tmp_path / "orders-0" / PARTITION_METADATA_FILE
    assert path.read_bytes() == b"version: 0\ntopic_id: vEwUUY0qTqKq3FkVsGHGxw"
    assert log.directory == tmp_path / "orders-0"
    assert decode_partition_metadata(path.read_bytes()) == topic_id
    assert encode_partition_metadata(topic_id) == path.read_bytes()


@pytest.mark.parametrize(
    "text",
    [
        "version: 0",
        "version: x\ntopic_id: vEwUUY0qTqKq3FkVsGHGxw",
        "version: 0\ntopic: vEwUUY0qTqKq3FkVsGHGxw",
        "version: 0\ntopic_id: not-a-uuid",
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",  # the zero uuid
    ],
)
def test_a_malformed_partition_metadata_is_refused(tmp_path: Path, text: str) -> None:
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / PARTITION_METADATA_FILE).write_text(text)
    with pytest.raises(StorageError, match=PARTITION_METADATA_FILE):
        _open(tmp_path, None)


def test_an_empty_partition_metadata_is_a_creation_cut_short_and_takes_the_topic_id_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A new log's partition.metadata is renamed into place unsynced; a power loss can keep the
    # rename and lose the bytes. The directory opens (Kafka takes the log dir offline) and the log
    # takes its topic id from metadata, written out again.
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / PARTITION_METADATA_FILE).write_bytes(b"")
    with caplog.at_level(logging.WARNING):
        log = _open(tmp_path, None)
    assert log.topic_id is None
    assert "empty" in caplog.text
    log.assign_topic_id(TOPIC_ID)
    assert read_partition_metadata(directory) == TOPIC_ID
    log.close()
    (directory / PARTITION_METADATA_FILE).write_bytes(b"")
    assert _open(tmp_path, TOPIC_ID).topic_id == TOPIC_ID
    assert read_partition_metadata(directory) == TOPIC_ID


def test_a_newer_partition_metadata_version_is_read_as_kafka_does() -> None:
    # Kafka accepts any version >= 0 ("to ensure downgrade compatibility").
    assert decode_partition_metadata(b"version: 1\ntopic_id: vEwUUY0qTqKq3FkVsGHGxw\n") == uuid.UUID(
        bytes=base64.urlsafe_b64decode(KAFKA_TOPIC_ID + "==")
    )


def test_a_directory_of_another_topic_id_is_refused_and_left_alone(tmp_path: Path) -> None:
    log = _open(tmp_path)
    append(log, b"a")
    log.flush()
    log.close()
    with pytest.raises(StorageError, match="another topic"):
        _open(tmp_path, OTHER_TOPIC_ID)
    reopened = _open(tmp_path, None)
    assert reopened.topic_id == TOPIC_ID
    assert reopened.log_end_offset == 1


def test_a_log_opened_without_a_topic_id_takes_one_later(tmp_path: Path) -> None:
    log = _open(tmp_path, None)
    assert log.topic_id is None
    assert not (log.directory / PARTITION_METADATA_FILE).exists()
    log.assign_topic_id(TOPIC_ID)
    log.assign_topic_id(TOPIC_ID)  # the same id again is fine
    assert decode_partition_metadata((log.directory / PARTITION_METADATA_FILE).read_bytes()) == TOPIC_ID
    with pytest.raises(StorageError):
        log.assign_topic_id(OTHER_TOPIC_ID)


def test_open_refuses_a_missing_directory_unless_asked_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(StorageError):
        _open(tmp_path, create=False)
    with pytest.raises(KraftError):
        PartitionLog(tmp_path, "../escape", 0, TOPIC_ID)


# ---------------------------------------------------------------------------------------------- segment files


def test_segment_and_epoch_checkpoint_files_are_kafkas(tmp_path: Path) -> None:
    log = _open(tmp_path)
    append(log, b"a", b"b", epoch=1)
    append(log, b"c", epoch=3)
    log.flush()
    names = sorted(os.listdir(log.directory))
    assert names == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "leader-epoch-checkpoint",
        PARTITION_METADATA_FILE,
    ]
    assert (log.directory / "leader-epoch-checkpoint").read_text() == "0\n2\n1 0\n3 2\n"
    segment = (log.directory / "00000000000000000000.log").read_bytes()
    assert segment == log.read(0, 1 << 20, max_offset=3)


def test_our_batches_decode_with_kafka_python(tmp_path: Path) -> None:
    log = _open(tmp_path)
    append(log, b"first", timestamps=[1_234])
    idempotent(log, b"x", b"y", seq=5, producer_epoch=2)
    append(log, b"late", epoch=4, log_append_time=True, now_ms=99_000, timestamps=[5])
    data = log.read(0, 1 << 20, max_offset=log.log_end_offset)
    positions = [(pos, h.size_in_bytes) for pos, h in iter_batch_headers(data)]
    decoded = [DefaultRecordBatch(bytearray(data[pos : pos + size])) for pos, size in positions]
    assert all(b.validate_crc() for b in decoded)
    assert [(b.base_offset, b.leader_epoch, b.timestamp_type) for b in decoded] == [
        (0, 1, 0),
        (1, 1, 0),
        (3, 4, 1),
    ]
    assert (decoded[1].producer_id, decoded[1].producer_epoch, decoded[1].base_sequence) == (7, 2, 5)
    records = [(r.offset, r.value, r.timestamp) for b in decoded for r in b]
    assert records == [(0, b"first", 1_234), (1, b"x", 1_000), (2, b"y", 1_000), (3, b"late", 99_000)]


# ---------------------------------------------------------------------------------------------- recovery


def test_a_torn_tail_is_cut_at_open_and_the_log_goes_on(tmp_path: Path) -> None:
    log = _open(tmp_path)
    append(log, b"a", epoch=1)
    idempotent(log, b"b", seq=0)
    idempotent(log, b"c", seq=1)
    log.close()  # a process kill: the bytes are in the page cache
    segment = log.directory / "00000000000000000000.log"
    data = segment.read_bytes()
    last = list(iter_batch_headers(data))[-1][0]
    segment.write_bytes(data[: last + 20])  # the last batch was half written
    reopened = _open(tmp_path, high_watermark=3, recovery_point=0)
    assert len(reopened.recovery_report.truncated_tails) == 1
    assert (reopened.log_end_offset, reopened.high_watermark, reopened.recovery_point) == (2, 2, 2)
    assert reopened.producers[7].last_seq == 0
    assert idempotent(reopened, b"c", seq=1).first_offset == 2


def test_a_flipped_byte_mid_log_cuts_the_log_there_as_kafka_does(tmp_path: Path) -> None:
    """Past the recovery point, an invalid batch with valid ones (and whole segments) after it cuts
    the partition's log at that batch: the later segments and producer snapshots go, the high
    watermark comes down to the new end, and the log goes on (the broker fetches the rest)."""
    one = len(produce(b"x", timestamps=[0]))
    log = _open(tmp_path, segment_bytes=2 * one)
    append(log, b"a", epoch=1)
    idempotent(log, b"b", seq=0)
    for value in (b"c", b"d", b"e", b"f"):
        append(log, value, epoch=2)
    log.flush()
    assert len(log.segment_base_offsets()) == 3 and log.producer_snapshot_offsets
    log.close()
    middle = log.directory / "00000000000000000002.log"
    with open(middle, "r+b") as f:  # the CRC-covered attributes of the segment's first batch
        f.seek(21)
        byte = f.read(1)
        f.seek(21)
        f.write(bytes([byte[0] ^ 0x40]))
    reopened = _open(tmp_path, segment_bytes=2 * one, high_watermark=6, recovery_point=0)
    (cut,) = reopened.recovery_report.truncated_tails
    assert (cut.file, cut.position) == (middle, 0)
    assert [p.name for p in cut.segments_deleted] == ["00000000000000000004.log"]
    assert not list(log.directory.glob("00000000000000000004.*"))  # its indexes and snapshot too
    assert (reopened.log_end_offset, reopened.high_watermark) == (2, 2)
    assert reopened.segment_base_offsets() == [0, 2]
    assert all(offset <= 2 for offset in reopened.producer_snapshot_offsets)
    assert reopened.producers[7].last_seq == 0
    assert [e.start_offset for e in reopened.epoch_entries] == [0]  # epoch 2 began in what was cut
    assert append(reopened, b"c2", epoch=3).first_offset == 2


def test_the_checkpointed_log_start_offset_is_applied_at_open(tmp_path: Path) -> None:
    log = _open(tmp_path)
    for value in (b"a", b"b", b"c"):
        append(log, value, epoch=2)
    log.flush()
    log.close()
    inside = _open(tmp_path, log_start_offset=1, high_watermark=0)
    assert (inside.log_start_offset, inside.high_watermark) == (1, 1)
    assert inside.epoch_entries == (EpochEntry(2, 1),)
    with pytest.raises(KraftError):
        inside.read(0, 100, max_offset=3)
    inside.close()
    below = _open(tmp_path, log_start_offset=0, high_watermark=100)
    assert (below.log_start_offset, below.high_watermark) == (0, 3)
    below.close()
    # Beyond the log end (segments lost): Kafka empties the log and starts it there.
    beyond = _open(tmp_path, log_start_offset=10)
    assert (beyond.log_start_offset, beyond.log_end_offset, beyond.segment_base_offsets()) == (10, 10, [10])
    assert append(beyond, b"d").first_offset == 10


def test_reopen_rebuilds_the_time_index_and_the_producers(tmp_path: Path) -> None:
    log = _open(tmp_path, segment_bytes=2 * len(produce(b"x", timestamps=[0])))
    append(log, b"a", timestamps=[100])
    append(log, b"b", timestamps=[300])
    first = idempotent(log, b"c", seq=0)
    append(log, b"d", timestamps=[200])
    log.flush()
    expected = (log.offset_for_timestamp(250, max_offset=4), log.offset_for_timestamp(-3, max_offset=4))
    log.close()
    reopened = _open(tmp_path, segment_bytes=2 * len(produce(b"x", timestamps=[0])))
    assert len(reopened.segment_base_offsets()) == 2
    assert (
        reopened.offset_for_timestamp(250, max_offset=4),
        reopened.offset_for_timestamp(-3, max_offset=4),
    ) == (expected)
    assert expected == ((1, 300, 1), (2, 1_000, 1))
    retry = idempotent(reopened, b"c", seq=0)
    assert retry.duplicate and retry.first_offset == first.first_offset


def test_an_unused_leader_epoch_replaced_by_a_follower_append_leaves_the_checkpoint(tmp_path: Path) -> None:
    # SegmentLog once kept the unused entry when the fetched batch's epoch was already cached.
    log = _open(tmp_path)
    append(log, b"a", epoch=1)
    log.assign_epoch_start(3, 1)
    log.flush()
    assert (log.directory / "leader-epoch-checkpoint").read_text() == "0\n2\n1 0\n3 1\n"
    log.append_as_follower(build_batch([SimpleRecord(value=b"b")], base_offset=1, partition_leader_epoch=1))
    log.flush()
    assert (log.directory / "leader-epoch-checkpoint").read_text() == "0\n1\n1 0\n"
    log.close()
    assert _open(tmp_path).recovery_report.clean


def test_roll_starts_a_segment_only_after_data(tmp_path: Path) -> None:
    log = _open(tmp_path, segment_ms=1)
    assert not log.maybe_roll(10**9)  # nothing to roll
    append(log, b"a", timestamps=[5])
    assert log.maybe_roll(10) and log.segment_base_offsets() == [0, 1]
    assert sorted(n for n in os.listdir(log.directory) if n.endswith(".log")) == [
        "00000000000000000000.log",
        "00000000000000000001.log",
    ]


# ------------------------------------------------------------------------------------ creation cost


def test_a_new_log_is_created_without_fsyncs_and_made_durable_by_its_first_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A broker that becomes a replica of 10,000 new partitions did 6 fsyncs for each (60 s of a held
    # event loop); as Kafka, a new log's files are synced at its first flush.
    synced: list[str] = []
    real_fsync, real_fdatasync = os.fsync, os.fdatasync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def fdatasync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fdatasync(fd)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd")
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    monkeypatch.setattr(segment_log, "_fdatasync", fdatasync)
    monkeypatch.setattr(segment_index, "_fdatasync", fdatasync)
    log = _open(tmp_path)
    assert synced == []
    assert read_partition_metadata(log.directory) == TOPIC_ID  # written (atomically), not synced
    append(log, b"a", epoch=1)
    assert synced == []
    log.flush()
    # partition.metadata, the partition directory's entry in the log directory, the segment, the
    # partition directory's own entries, the epoch checkpoint.
    assert str(log.directory / PARTITION_METADATA_FILE) in synced
    assert str(tmp_path) in synced and str(log.directory) in synced
    assert str(log.directory / "00000000000000000000.log") in synced
    synced.clear()
    append(log, b"b", epoch=1)
    log.flush()
    assert str(tmp_path) not in synced  # once only
    log.close()
    reopened = _open(tmp_path)
    assert reopened.log_end_offset == 2 and reopened.topic_id == TOPIC_ID
    reopened.close()


def test_an_empty_new_log_is_flushed_and_closed_without_fsyncs_and_reopens_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A clean stop of a broker with 15,000 new, empty partitions took 51-87 s: each log's first
    # flush synced its creation and each close created and synced two empty index files.
    synced: list[int] = []

    def count(fd: int) -> None:
        synced.append(fd)

    monkeypatch.setattr(os, "fsync", count)
    monkeypatch.setattr(os, "fdatasync", count)
    monkeypatch.setattr(segment_log, "_fdatasync", count)
    monkeypatch.setattr(segment_index, "_fdatasync", count)
    # Created empty and closed: no index file to write or delete either (each close tried to
    # unlink two absent files: 200,000 system calls for a broker stopping with 100,000 of them).
    unlinked: list[str] = []
    real_unlink = os.unlink
    monkeypatch.setattr(
        os, "unlink", lambda path, *a, **k: (unlinked.append(str(path)), real_unlink(path, *a, **k))
    )
    log = _open(tmp_path)
    log.flush()
    log.close()
    assert synced == [] and unlinked == []
    assert not list(log.directory.glob("*index"))
    monkeypatch.undo()
    # Reopened empty and closed again: the same (30,000 system calls for 15,000 partitions).
    monkeypatch.setattr(
        os, "unlink", lambda path, *a, **k: (unlinked.append(str(path)), real_unlink(path, *a, **k))
    )
    _open(tmp_path, clean_shutdown=True).close()
    assert unlinked == [] and not list(log.directory.glob("*index"))
    monkeypatch.undo()
    with caplog.at_level(logging.WARNING):
        reopened = _open(tmp_path, clean_shutdown=True)
    assert "rebuilding" not in caplog.text
    assert reopened.log_end_offset == 0
    append(reopened, b"a", epoch=1)
    reopened.flush()
    reopened.close()
    # The segment that had no index files gets them once it has records.
    assert sorted(p.suffix for p in log.directory.glob("*index")) == [".index", ".timeindex"]
    with caplog.at_level(logging.WARNING):
        again = _open(tmp_path, clean_shutdown=True)
    assert "rebuilding" not in caplog.text
    assert again.log_end_offset == 1
