"""MemoryLog behaviour the core and the simulator rely on (the shared contract suite runs too)."""

from __future__ import annotations

import random

import pytest

from kraft.common.errors import FatalError
from kraft.raft.log import MemoryLog, ValidationKind
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch, iter_batches


def batch(*values: bytes, base_offset: int = 0, epoch: int = 0) -> bytes:
    return build_batch(
        [SimpleRecord(value=v) for v in values], base_offset=base_offset, partition_leader_epoch=epoch
    )


def test_leader_append_assigns_offsets_and_epoch() -> None:
    log = MemoryLog()
    log.initialize_leader_epoch(3)
    info = log.append_as_leader(batch(b"a", b"b") + batch(b"c"), epoch=3)
    assert (info.first_offset, info.last_offset) == (0, 2)
    assert log.end_offset() == 3
    decoded = list(iter_batches(log.read(0, 1 << 20)))
    assert [(b.base_offset, b.partition_leader_epoch) for b in decoded] == [(0, 3), (2, 3)]
    assert log.last_fetched_epoch() == 3


def test_leader_append_below_last_epoch_is_fatal() -> None:
    log = MemoryLog()
    log.append_as_leader(batch(b"a"), epoch=4)
    with pytest.raises(FatalError):
        log.append_as_leader(batch(b"b"), epoch=3)


def test_follower_append_requires_contiguous_offsets() -> None:
    log = MemoryLog()
    log.append_as_follower(batch(b"a", epoch=1), epoch=1)
    with pytest.raises(FatalError):
        log.append_as_follower(batch(b"b", base_offset=5, epoch=1), epoch=1)
    assert log.end_offset() == 1


def test_read_returns_whole_batch_containing_offset_and_at_least_one() -> None:
    log = MemoryLog()
    log.append_as_leader(batch(b"a", b"b", b"c"), epoch=1)
    log.append_as_leader(batch(b"d"), epoch=1)
    data = log.read(1, 1)
    assert [b.base_offset for b in iter_batches(data)] == [0]
    assert log.read(4, 100) == b""


def test_crash_drops_unflushed_tail_and_its_epochs() -> None:
    log = MemoryLog()
    log.append_as_leader(batch(b"a"), epoch=1)
    log.flush()
    log.append_as_leader(batch(b"b"), epoch=2)
    assert log.end_offset() == 2
    log.crash()
    assert log.end_offset() == 1
    assert log.last_fetched_epoch() == 1
    assert log.last_flushed_offset() == 1


def test_end_offset_for_epoch_and_divergence() -> None:
    log = MemoryLog()
    log.append_as_follower(batch(b"a", b"b", epoch=1), epoch=1)
    log.append_as_follower(batch(b"c", base_offset=2, epoch=3), epoch=3)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(3, 3)
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)
    v = log.validate_offset_and_epoch(3, 2)
    assert v.kind is ValidationKind.DIVERGING and v.offset_and_epoch == OffsetAndEpoch(2, 1)
    assert log.validate_offset_and_epoch(2, 1).kind is ValidationKind.VALID


def test_truncate_to_drops_batches_and_epoch_entries() -> None:
    log = MemoryLog()
    log.append_as_follower(batch(b"a", b"b", epoch=1), epoch=1)
    log.append_as_follower(batch(b"c", base_offset=2, epoch=3), epoch=3)
    log.flush()
    log.truncate_to(2)
    assert log.end_offset() == 2
    assert log.last_fetched_epoch() == 1
    assert log.last_flushed_offset() == 2


def test_snapshot_delete_before_and_validate_requires_snapshot() -> None:
    log = MemoryLog()
    log.append_as_leader(batch(b"a", b"b"), epoch=1)
    log.append_as_leader(batch(b"c"), epoch=2)
    log.flush()
    writer = log.create_new_snapshot(OffsetAndEpoch(2, 1))
    assert writer is not None
    writer.append(b"snapshot-bytes")
    writer.freeze()
    assert log.latest_snapshot_id() == OffsetAndEpoch(2, 1)
    assert log.delete_before_snapshot(OffsetAndEpoch(2, 1))
    assert log.start_offset() == 2
    assert log.validate_offset_and_epoch(1, 1).kind is ValidationKind.SNAPSHOT
    assert log.validate_offset_and_epoch(3, 2).kind is ValidationKind.VALID
    reader = log.read_snapshot(OffsetAndEpoch(2, 1))
    assert reader is not None and reader.read(9, 100) == b"bytes"


def test_truncate_to_latest_snapshot_replaces_a_shorter_log() -> None:
    log = MemoryLog()
    log.append_as_follower(batch(b"a", epoch=1), epoch=1)
    writer = log.store_snapshot(OffsetAndEpoch(10, 2))
    writer.append(b"x")
    writer.freeze()
    log.crash()  # the frozen snapshot is durable
    assert log.truncate_to_latest_snapshot()
    assert (log.start_offset(), log.end_offset(), log.last_fetched_epoch()) == (10, 10, 2)
    assert not log.truncate_to_latest_snapshot()


def _end_from_batches(log: MemoryLog) -> int:
    """The end offset as the stored batches give it (what ``end_offset`` keeps)."""
    stored = log.batches_from(log.start_offset())
    if not stored:
        return log.start_offset()
    (last,) = iter_batches(stored[-1])
    return last.next_offset


def test_kept_end_offset_follows_every_change_of_the_log() -> None:
    # end_offset() is a kept value: every operation that changes the batches or the log start
    # must update it (appends, truncations, a crash, snapshots that delete or replace the log).
    rng = random.Random(5)
    for _ in range(40):
        log = MemoryLog()
        epoch = 1
        for _step in range(60):
            op = rng.randrange(7)
            end = log.end_offset()
            if op <= 2:
                values = [b"v"] * rng.randint(1, 3)
                if rng.random() < 0.5:
                    log.append_as_leader(batch(*values), epoch=epoch)
                else:
                    log.append_as_follower(batch(*values, base_offset=end, epoch=epoch), epoch=epoch)
            elif op == 3:
                log.flush()
            elif op == 4 and end > log.start_offset():
                log.truncate_to(rng.randint(max(log.start_offset(), log.last_flushed_offset() - 2), end))
            elif op == 5:
                log.crash()
            elif op == 6 and log.last_flushed_offset() > log.start_offset():
                at = rng.randint(log.start_offset() + 1, log.last_flushed_offset())
                snapshot = OffsetAndEpoch(at, log.end_offset_for_epoch(epoch).epoch)
                if log.validate_offset_and_epoch(at, snapshot.epoch).kind is ValidationKind.VALID:
                    writer = log.create_new_snapshot(snapshot)
                    if writer is not None:
                        writer.append(b"s")
                        writer.freeze()
                    log.delete_before_snapshot(snapshot)
            if rng.random() < 0.1:
                epoch += 1
            assert log.end_offset() == _end_from_batches(log)
        far = OffsetAndEpoch(log.end_offset() + 5, epoch + 1)
        writer = log.store_snapshot(far)
        writer.append(b"x")
        writer.freeze()
        assert log.truncate_to_latest_snapshot()
        assert log.end_offset() == _end_from_batches(log) == far.offset
