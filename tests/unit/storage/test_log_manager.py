"""LogManager: the broker-level checkpoint files (Kafka's text, byte for byte), opening every partition
directory with its checkpointed offsets, placement, and crash-safe deletion."""

from __future__ import annotations

import os
import random
import re
import threading
import uuid
from pathlib import Path

import pytest
from partition_log_contract import TOPIC_ID, append

from kraft.common.errors import KraftError, StorageError
from kraft.storage.log_manager import LogManager, delete_dir_name, parse_partition_dir_name
from kraft.storage.offset_checkpoint import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    decode_offset_checkpoint,
    encode_offset_checkpoint,
)
from kraft.storage.partition_log import PARTITION_METADATA_FILE, PartitionLog

PAYMENTS_ID = uuid.UUID("a0a1a2a3-a4a5-46a7-88a9-aaabacadaeaf")


def _dirs(tmp_path: Path) -> list[Path]:
    return [tmp_path / "a", tmp_path / "b"]


def test_checkpoints_are_kafkas_text_byte_for_byte(tmp_path: Path) -> None:
    a, b = _dirs(tmp_path)
    manager = LogManager([a, b], rng=random.Random(1))
    orders0 = manager.get_or_create("orders", 0, TOPIC_ID)
    orders1 = manager.get_or_create("orders", 1, TOPIC_ID)
    payments = manager.get_or_create("payments", 0, PAYMENTS_ID)
    assert (
        manager.log_dir_of("orders", 0),
        manager.log_dir_of("orders", 1),
        manager.log_dir_of("payments", 0),
    ) == (
        a,
        b,
        a,
    )
    append(orders0, b"a", b"b", b"c")
    append(orders1, b"x")
    append(payments, b"p")
    orders0.update_high_watermark(2)
    payments.update_high_watermark(1)
    orders0.flush()
    manager.checkpoint()
    assert (a / REPLICATION_OFFSET_CHECKPOINT).read_bytes() == b"0\n2\norders 0 2\npayments 0 1\n"
    assert (a / RECOVERY_POINT_OFFSET_CHECKPOINT).read_bytes() == b"0\n2\norders 0 3\npayments 0 0\n"
    assert (a / LOG_START_OFFSET_CHECKPOINT).read_bytes() == b"0\n2\norders 0 0\npayments 0 0\n"
    assert (b / REPLICATION_OFFSET_CHECKPOINT).read_bytes() == b"0\n1\norders 1 0\n"
    assert not [n for n in os.listdir(a) if n.endswith(".tmp")]


def test_reopen_restores_every_log_with_its_checkpointed_offsets(tmp_path: Path) -> None:
    manager = LogManager(_dirs(tmp_path))
    log = manager.get_or_create("orders", 0, TOPIC_ID)
    for _ in range(4):
        append(log, b"x" * 30)
    log.update_high_watermark(3)
    assert log.maybe_increment_log_start_offset(2)
    other = manager.get_or_create("orders", 1, TOPIC_ID)
    append(other, b"y")
    manager.close()
    with pytest.raises(KraftError):
        manager.get("orders", 0)
    reopened = LogManager(_dirs(tmp_path))
    assert [(lg.topic, lg.partition) for lg in reopened.logs()] == [("orders", 0), ("orders", 1)]
    restored = reopened.get("orders", 0)
    assert restored is not None
    log = restored
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset, log.topic_id) == (2, 3, 4, TOPIC_ID)
    restored_other = reopened.get("orders", 1)
    assert restored_other is not None and restored_other.log_end_offset == 1  # close() flushed it
    assert decode_offset_checkpoint((tmp_path / "b" / RECOVERY_POINT_OFFSET_CHECKPOINT).read_bytes()) == {
        ("orders", 1): 1
    }


def test_a_new_partition_goes_to_the_log_dir_with_the_fewest(tmp_path: Path) -> None:
    a, b = _dirs(tmp_path)
    manager = LogManager([a, b])
    placed = [manager.get_or_create("t", p, TOPIC_ID).directory.parent for p in range(5)]
    assert placed == [a, b, a, b, a]
    manager.delete("t", 1)
    manager.delete("t", 3)
    assert manager.get_or_create("t", 9, TOPIC_ID).directory.parent == b


def test_open_skips_what_is_not_a_partition_directory(tmp_path: Path) -> None:
    a = tmp_path / "a"
    manager = LogManager([a])
    manager.get_or_create("orders", 0, TOPIC_ID)
    manager.close()
    (a / "__cluster_metadata-0").mkdir()
    (a / "__cluster_metadata-0" / "00000000000000000000.log").write_bytes(b"not a data log")
    (a / "meta.properties").write_text("version=1\n")
    for name in ("no_partition", "orders-01", "orders-x", "orders-1.0123-future", "orders-2.0123-stray"):
        (a / name).mkdir()
    reopened = LogManager([a])
    assert [(lg.topic, lg.partition) for lg in reopened.logs()] == [("orders", 0)]


def test_parse_partition_dir_name_accepts_only_canonical_names() -> None:
    assert parse_partition_dir_name("my-topic-12") == ("my-topic", 12)
    assert parse_partition_dir_name("orders--1") == ("orders-", 1)  # "orders-" is a legal topic
    for name in ("orders", "orders-", "-3", "orders-01", "orders-1x", "orders-+1", "orders- 1"):
        assert parse_partition_dir_name(name) is None, name


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"1\n0\n", "version"),
        (b"0\n2\norders 0 5\n", "2 entries"),
        (b"0\n1\norders 0\n", "line 3"),
        (b"0\n1\norders zero 5\n", "line 3"),
        (b"0\nmany\n", "line 2"),
        (b"", "version line"),
    ],
)
def test_a_malformed_checkpoint_is_refused_by_name(tmp_path: Path, content: bytes, problem: str) -> None:
    a = tmp_path / "a"
    a.mkdir()
    (a / REPLICATION_OFFSET_CHECKPOINT).write_bytes(content)
    with pytest.raises(StorageError, match=REPLICATION_OFFSET_CHECKPOINT) as raised:
        LogManager([a])
    assert problem in str(raised.value)


def test_checkpoint_text_round_trips_and_reads_kafkas_any_order() -> None:
    entries = {("b", 1): 7, ("a", 0): 3, ("a", 10): 0}
    assert encode_offset_checkpoint(entries) == b"0\n3\na 0 3\na 10 0\nb 1 7\n"
    assert decode_offset_checkpoint(b"0\n3\nb 1 7\na 10 0\na 0 3\n") == entries


def test_delete_renames_then_removes_the_directory(tmp_path: Path) -> None:
    a = tmp_path / "a"
    manager = LogManager([a], rng=random.Random(5))
    log = manager.get_or_create("orders", 0, TOPIC_ID)
    append(log, b"a")
    assert manager.delete("orders", 0)
    assert not manager.delete("orders", 0)
    assert manager.get("orders", 0) is None
    assert os.listdir(a) == []
    assert manager.get_or_create("orders", 0, uuid.UUID(int=7)).log_end_offset == 0


def test_delete_dir_name_is_kafkas_and_fits_a_file_name() -> None:
    unique = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
    assert delete_dir_name("orders", 3, unique) == "orders-3.00112233445566778899aabbccddeeff-delete"
    long = delete_dir_name("t" * 249, 12, unique)
    assert len(long) == 255 and re.fullmatch(r"t+-12\.[0-9a-f]{32}-delete", long)


def test_a_deletion_interrupted_midway_is_finished_at_open(tmp_path: Path) -> None:
    a = tmp_path / "a"
    manager = LogManager([a])
    append(manager.get_or_create("orders", 0, TOPIC_ID), b"a")
    manager.close()
    # The crash came after the rename and before the removal.
    os.replace(a / "orders-0", a / delete_dir_name("orders", 0, uuid.UUID(int=1)))
    reopened = LogManager([a])
    assert reopened.logs() == []
    assert [n for n in os.listdir(a) if not n.endswith("checkpoint")] == []


def test_a_partition_in_two_log_dirs_is_refused(tmp_path: Path) -> None:
    a, b = _dirs(tmp_path)
    for d in (a, b):
        manager = LogManager([d])
        manager.get_or_create("orders", 0, TOPIC_ID)
        manager.close()
    with pytest.raises(StorageError, match="two log directories"):
        LogManager([a, b])


def test_get_or_create_checks_or_assigns_the_topic_id(tmp_path: Path) -> None:
    a = tmp_path / "a"
    manager = LogManager([a])
    log = manager.get_or_create("orders", 0, TOPIC_ID)
    assert manager.get_or_create("orders", 0, TOPIC_ID) is log
    with pytest.raises(StorageError):
        manager.get_or_create("orders", 0, PAYMENTS_ID)
    manager.close()
    (a / "orders-0" / PARTITION_METADATA_FILE).unlink()  # a log from before topic ids
    reopened = LogManager([a])
    legacy = reopened.get("orders", 0)
    assert legacy is not None and legacy.topic_id is None
    assert reopened.get_or_create("orders", 0, PAYMENTS_ID) is legacy
    assert legacy.topic_id == PAYMENTS_ID
    assert (a / "orders-0" / PARTITION_METADATA_FILE).exists()


def test_a_missing_checkpoint_is_empty_and_a_new_log_ignores_stale_entries(tmp_path: Path) -> None:
    a = tmp_path / "a"
    a.mkdir()
    (a / REPLICATION_OFFSET_CHECKPOINT).write_bytes(b"0\n1\norders 0 40\n")  # of a deleted partition
    manager = LogManager([a])
    log = manager.get_or_create("orders", 0, TOPIC_ID)
    append(log, b"a")
    assert log.high_watermark == 0


def test_a_clean_shutdown_marker_opens_the_logs_without_a_scan(tmp_path: Path) -> None:
    from kraft.storage.clean_shutdown import CLEAN_SHUTDOWN_FILE, write_clean_shutdown
    from kraft.storage.segment_index import IndexConfig

    small = IndexConfig(interval_bytes=10, max_bytes=800)
    manager = LogManager([tmp_path], segment_bytes=300, index=small)
    log = manager.get_or_create("t", 0, uuid.UUID(int=5, version=4))
    for i in range(12):
        append(log, b"%030d" % i)
    manager.close()
    assert len(log.segment_base_offsets()) > 2
    segment = log.directory / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[-2] ^= 0xFF  # corrupt the first segment's last batch: only a scan would notice
    segment.write_bytes(bytes(data))
    # Unclean (no marker): the recovery points are the log ends, so segment 0 is not read either.
    LogManager([tmp_path], segment_bytes=300, index=small).close()
    # A marker: nothing is scanned; without marker and with a zero recovery point, the scan cuts the
    # log at the damaged batch (Kafka's LogLoader).
    write_clean_shutdown([tmp_path], 7)
    reopened = LogManager([tmp_path], segment_bytes=300, index=small)
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()  # read, not taken: the broker takes it
    reopened_log = reopened.get("t", 0)
    assert reopened_log is not None and reopened_log.log_end_offset == 12
    reopened.close()
    (tmp_path / CLEAN_SHUTDOWN_FILE).unlink()
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\nt 0 0\n")
    scanned = LogManager([tmp_path], segment_bytes=300, index=small)
    cut_log = scanned.get("t", 0)
    assert cut_log is not None
    (cut,) = cut_log.recovery_report.truncated_tails
    assert cut.file.name == segment.name and cut.segments_deleted
    assert cut_log.log_end_offset < 12 and cut_log.segment_base_offsets() == [0]
    scanned.close()


def _gated_writes(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[str]]:
    """Checkpoint writes that wait for the returned gate (and record which thread wrote)."""
    import kraft.storage.log_manager as lm

    gate, writers = threading.Event(), []
    real = lm.write_offset_checkpoint

    def gated(path: Path, entries: dict[tuple[str, int], int]) -> None:
        assert gate.wait(10)
        writers.append(threading.current_thread().name)
        real(path, entries)

    monkeypatch.setattr(lm, "write_offset_checkpoint", gated)
    return gate, writers


def _background_manager(log_dir: Path) -> tuple[LogManager, PartitionLog]:
    """A manager writing checkpoints in the background, with one log of three records."""
    manager = LogManager([log_dir], background_checkpoints=True)
    log = manager.get_or_create("orders", 0, TOPIC_ID)
    append(log, b"a", b"b", b"c")
    return manager, log


def test_background_checkpoints_return_at_once_and_write_the_offsets_of_that_moment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate, writers = _gated_writes(monkeypatch)
    a = tmp_path / "a"
    manager, log = _background_manager(a)
    log.update_high_watermark(2)
    manager.checkpoint()  # returns while its write waits at the gate
    assert not manager.wait_for_checkpoints(0.05)
    log.update_high_watermark(3)  # after the snapshot: not in this write
    gate.set()
    assert manager.wait_for_checkpoints(10)
    assert (a / REPLICATION_OFFSET_CHECKPOINT).read_bytes() == b"0\n1\norders 0 2\n"
    assert set(writers) == {"kraft-checkpoint"}
    manager.close()  # waits for the thread, then writes the final offsets itself
    assert (a / REPLICATION_OFFSET_CHECKPOINT).read_bytes() == b"0\n1\norders 0 3\n"
    assert (a / RECOVERY_POINT_OFFSET_CHECKPOINT).read_bytes() == b"0\n1\norders 0 3\n"


def test_background_checkpoints_taken_during_a_write_collapse_into_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate, _ = _gated_writes(monkeypatch)
    a = tmp_path / "a"
    manager, log = _background_manager(a)
    for hw in (1, 2, 3):
        log.update_high_watermark(hw)
        manager.checkpoint()
    gate.set()
    assert manager.wait_for_checkpoints(10)
    assert manager.checkpoints_written == 2  # the first, then only the newest of the two behind it
    assert (a / REPLICATION_OFFSET_CHECKPOINT).read_bytes() == b"0\n1\norders 0 3\n"
    manager.close()


def test_a_failed_background_checkpoint_raises_at_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kraft.storage.log_manager as lm

    a = tmp_path / "a"
    manager = LogManager([a], background_checkpoints=True)
    manager.get_or_create("orders", 0, TOPIC_ID)
    real = lm.write_offset_checkpoint

    def full(path: Path, entries: dict[tuple[str, int], int]) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(lm, "write_offset_checkpoint", full)
    manager.checkpoint()
    assert manager.wait_for_checkpoints(10)
    with pytest.raises(OSError, match="No space left"):
        manager.checkpoint()
    monkeypatch.setattr(lm, "write_offset_checkpoint", real)
    manager.checkpoint()  # the error was reported once; this one writes
    assert manager.wait_for_checkpoints(10)
    assert (a / REPLICATION_OFFSET_CHECKPOINT).read_bytes() == b"0\n1\norders 0 0\n"
    manager.close()


def test_a_checkpoint_file_is_written_again_only_when_its_entries_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kraft.storage.log_manager as log_manager_module

    written: list[str] = []
    real = log_manager_module.write_offset_checkpoint

    def counted(path: str | os.PathLike[str], entries: dict[tuple[str, int], int]) -> None:
        written.append(Path(path).name)
        real(path, entries)

    monkeypatch.setattr(log_manager_module, "write_offset_checkpoint", counted)
    manager = LogManager([tmp_path])
    log = manager.get_or_create("orders", 0, TOPIC_ID)
    append(log, b"a")
    manager.checkpoint()
    assert sorted(written) == sorted(
        [REPLICATION_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_OFFSET_CHECKPOINT]
    )
    written.clear()
    manager.checkpoint()  # nothing moved: no file rewritten (sorted, formatted and fsynced)
    assert written == []
    log.update_high_watermark(1)
    manager.checkpoint()
    assert written == [REPLICATION_OFFSET_CHECKPOINT]
    written.clear()
    manager.get_or_create("orders", 1, TOPIC_ID)  # a new log: every file lists it
    manager.checkpoint()
    assert len(written) == 3
    written.clear()
    manager.close()  # flushes: the recovery points move
    assert written == [RECOVERY_POINT_OFFSET_CHECKPOINT]
    assert decode_offset_checkpoint((tmp_path / REPLICATION_OFFSET_CHECKPOINT).read_bytes()) == {
        ("orders", 0): 1,
        ("orders", 1): 0,
    }
    assert decode_offset_checkpoint((tmp_path / RECOVERY_POINT_OFFSET_CHECKPOINT).read_bytes()) == {
        ("orders", 0): 1,
        ("orders", 1): 0,
    }


@pytest.mark.parametrize("seed", range(3))
def test_a_checkpoint_reads_only_the_logs_whose_offsets_moved_and_misses_none(
    tmp_path: Path, seed: int
) -> None:
    # A snapshot reads again only the logs that noted a move of their high watermark, log start or
    # recovery point (every 5 s over 100,000 logs, reading each was an idle broker's CPU). After
    # each of a random run of everything that moves one, the snapshot is what reading every log
    # gives: a method that moves an offset without noting it fails here.
    rng = random.Random(seed)
    manager = LogManager(_dirs(tmp_path), segment_bytes=200)
    names = [("orders", i) for i in range(4)]

    def every_log() -> list[tuple[Path, dict[tuple[str, int], tuple[int, int, int]]]]:
        return [
            (d, {tp: log.checkpoint_offsets() for tp, log in manager._in_dir[d].items()})
            for d in manager.log_dirs
        ]

    moved = 0
    for step in range(300):
        tp = rng.choice(names)
        log = manager.get(*tp) or manager.get_or_create(*tp, TOPIC_ID)
        before = log.checkpoint_offsets()
        op = rng.randrange(9)
        end, hw = log.log_end_offset, log.high_watermark
        if op <= 2:
            append(log, *(bytes([step % 256]) * 20 for _ in range(rng.randint(1, 3))))
        elif op == 3:
            log.update_high_watermark(rng.randint(hw, end))
        elif op == 4:
            log.flush()
        elif op == 5:
            log.truncate_to(rng.randint(hw, end))
        elif op == 6 and hw > log.log_start_offset:
            log.maybe_increment_log_start_offset(rng.randint(log.log_start_offset, hw))
        elif op == 7:
            log.delete_old_segments(0, -1, rng.randint(0, 400))
        elif op == 8:
            if rng.random() < 0.5:
                manager.delete(*tp)
            else:
                log.truncate_fully_and_start_at(end + rng.randint(0, 5))
        if manager.get(*tp) is log and log.checkpoint_offsets() != before:
            moved += 1
        if rng.random() < 0.4:
            assert manager._snapshot() == every_log(), step
    assert manager._snapshot() == every_log()
    assert moved > 50  # (the run moves offsets often enough to mean something)
    snapshot = manager._snapshot()
    assert manager._snapshot() is snapshot  # nothing moved: the same snapshot, nothing read
    manager.close()
