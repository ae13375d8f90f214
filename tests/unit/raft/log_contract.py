"""The ``ReplicatedLog`` contract: one suite run against every implementation (MemoryLog, MetadataLog).

Written against the Protocol only. An implementation's test module supplies a ``LogFactory`` and
runs every check, e.g.::

    from log_contract import CONTRACT_CHECKS, LogFactory

    @pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
    def test_replicated_log_contract(check: ContractCheck) -> None:
        check(LogFactory(new=MemoryLog, crash_and_reopen=lambda log: (log.crash(), log)[1]))

``crash_and_reopen`` models a power loss followed by a restart: everything not flushed may be lost
(and in these checks must be), everything flushed and every frozen snapshot must survive. It returns
the log to use afterwards (the same object for an in-memory log, a reopened one for a file log).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from kraft.common.errors import CorruptRecordError, FatalError, KraftError
from kraft.raft.log import ReplicatedLog, ValidationKind
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch, iter_batches


@dataclass(frozen=True)
class LogFactory:
    new: Callable[[], ReplicatedLog]
    crash_and_reopen: Callable[[ReplicatedLog], ReplicatedLog]


ContractCheck = Callable[[LogFactory], None]


def batch(*values: bytes, base_offset: int = 0, epoch: int = 0) -> bytes:
    return build_batch(
        [SimpleRecord(value=v) for v in values], base_offset=base_offset, partition_leader_epoch=epoch
    )


def records(log: ReplicatedLog, start: int = 0) -> list[tuple[int, int, bytes | None]]:
    """(offset, batch epoch, value) of every record readable from ``start``."""
    out = []
    for b in iter_batches(log.read(start, 1 << 30)):
        out.extend((r.offset, b.partition_leader_epoch, r.value) for r in b.records)
    return out


def fill(log: ReplicatedLog, epochs: list[int], per_batch: int = 2) -> None:
    """Leader-append one batch of ``per_batch`` records for each epoch in ``epochs``."""
    for epoch in epochs:
        n = log.end_offset()
        log.append_as_leader(batch(*(f"v{n + i}".encode() for i in range(per_batch))), epoch)


def freeze_snapshot(log: ReplicatedLog, snapshot_id: OffsetAndEpoch, data: bytes = b"snap") -> None:
    writer = log.create_new_snapshot(snapshot_id)
    assert writer is not None
    writer.append(data)
    writer.freeze()


def download_snapshot(log: ReplicatedLog, snapshot_id: OffsetAndEpoch) -> None:
    """Store a snapshot the way a follower does when it fetches one (no high-watermark check)."""
    writer = log.store_snapshot(snapshot_id)
    writer.append(b"downloaded")
    writer.freeze()


# ---------------------------------------------------------------------------------------------- checks


def check_empty_log(factory: LogFactory) -> None:
    log = factory.new()
    assert (log.start_offset(), log.end_offset(), log.last_flushed_offset()) == (0, 0, 0)
    assert log.last_fetched_epoch() == 0
    assert log.read(0, 1000) == b""
    assert log.latest_snapshot_id() is None and log.earliest_snapshot_id() is None
    assert log.validate_offset_and_epoch(0, 0).kind is ValidationKind.VALID
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(0, 0)


def check_leader_append_assigns_offsets_and_epoch(factory: LogFactory) -> None:
    log = factory.new()
    info = log.append_as_leader(batch(b"a", b"b", base_offset=77, epoch=9) + batch(b"c"), epoch=2)
    assert (info.first_offset, info.last_offset) == (0, 2)
    info = log.append_as_leader(batch(b"d"), epoch=2)
    assert (info.first_offset, info.last_offset) == (3, 3)
    assert log.end_offset() == 4
    assert log.last_fetched_epoch() == 2
    assert records(log) == [(0, 2, b"a"), (1, 2, b"b"), (2, 2, b"c"), (3, 2, b"d")]
    decoded = list(iter_batches(log.read(0, 1 << 20)))
    assert all(b.crc_valid for b in decoded)


def check_leader_append_below_last_epoch_is_fatal_and_changes_nothing(factory: LogFactory) -> None:
    log = factory.new()
    log.append_as_leader(batch(b"a"), epoch=4)
    with pytest.raises(FatalError):
        log.append_as_leader(batch(b"b"), epoch=3)
    assert log.end_offset() == 1
    assert records(log) == [(0, 4, b"a")]


def check_follower_append_keeps_offsets_and_epochs(factory: LogFactory) -> None:
    log = factory.new()
    info = log.append_as_follower(batch(b"a", b"b", epoch=1) + batch(b"c", base_offset=2, epoch=3), epoch=3)
    assert (info.first_offset, info.last_offset) == (0, 2)
    assert records(log) == [(0, 1, b"a"), (1, 1, b"b"), (2, 3, b"c")]
    assert log.last_fetched_epoch() == 3
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(3, 3)


def check_follower_append_must_start_at_log_end(factory: LogFactory) -> None:
    log = factory.new()
    log.append_as_follower(batch(b"a", epoch=1), epoch=1)
    for base in (0, 5):
        with pytest.raises(FatalError):
            log.append_as_follower(batch(b"b", base_offset=base, epoch=1), epoch=1)
    assert log.end_offset() == 1
    assert records(log) == [(0, 1, b"a")]


def check_follower_append_refuses_a_bad_crc_and_changes_nothing(factory: LogFactory) -> None:
    # Fetched bytes are checked here, once: the follower's fetch path relies on it.
    log = factory.new()
    log.append_as_follower(batch(b"a", epoch=1), epoch=1)
    good = batch(b"b", base_offset=1, epoch=1)
    bad = bytearray(batch(b"c", base_offset=2, epoch=1))
    bad[-1] ^= 0x01
    with pytest.raises(CorruptRecordError):
        log.append_as_follower(good + bytes(bad), epoch=1)
    assert log.end_offset() == 1
    assert records(log) == [(0, 1, b"a")]


def check_read_returns_whole_batches_within_max_bytes_and_at_least_one(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1, 1, 1], per_batch=3)
    whole = log.read(0, 1 << 20)
    sizes = [b.size_in_bytes for b in iter_batches(whole)]
    assert len(sizes) == 4
    # The batch containing the offset comes first, even when it alone exceeds max_bytes.
    assert [b.base_offset for b in iter_batches(log.read(4, 1))] == [3]
    # Exactly two batches fit.
    two = log.read(0, sizes[0] + sizes[1])
    assert [b.base_offset for b in iter_batches(two)] == [0, 3]
    assert len(two) == sizes[0] + sizes[1]
    assert [b.base_offset for b in iter_batches(log.read(0, sizes[0] + sizes[1] - 1))] == [0]
    assert log.read(log.end_offset(), 100) == b""
    assert log.read(11, 1 << 20) == whole[sum(sizes[:3]) :]


def check_truncate_drops_suffix_and_epochs(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1, 2, 3])  # epoch 1 at 0..3, epoch 2 at 4..5, epoch 3 at 6..7
    log.flush()
    log.truncate_to(4)
    assert log.end_offset() == 4
    assert log.last_fetched_epoch() == 1
    assert log.last_flushed_offset() <= 4
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(4, 1)
    assert [o for o, _, _ in records(log)] == [0, 1, 2, 3]
    log.append_as_follower(batch(b"x", base_offset=4, epoch=4), epoch=4)
    assert records(log, 4) == [(4, 4, b"x")]
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 1)


def check_truncate_inside_a_batch_drops_the_whole_batch(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1], per_batch=3)
    log.truncate_to(4)
    assert log.end_offset() == 3
    log.truncate_to(10)  # beyond the end: nothing to drop
    assert log.end_offset() == 3


def check_flush_then_crash_keeps_exactly_the_flushed_prefix(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1, 2])
    assert log.last_flushed_offset() == 0
    log.flush()
    assert log.last_flushed_offset() == 6
    fill(log, [2, 3])
    assert log.last_flushed_offset() == 6
    log = factory.crash_and_reopen(log)
    assert log.end_offset() == 6
    assert log.last_flushed_offset() == 6
    assert [o for o, _, _ in records(log)] == list(range(6))
    assert log.last_fetched_epoch() == 2
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 1)
    # The log goes on from where it stopped.
    log.append_as_leader(batch(b"after"), epoch=3)
    assert records(log, 6) == [(6, 3, b"after")]


def check_epoch_cache_survives_a_crash(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 3, 3, 7])
    log.flush()
    before = [log.end_offset_for_epoch(e) for e in range(9)]
    log = factory.crash_and_reopen(log)
    assert [log.end_offset_for_epoch(e) for e in range(9)] == before


def check_initialize_leader_epoch_starts_the_epoch_at_the_log_end(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1])
    log.initialize_leader_epoch(5)
    assert log.last_fetched_epoch() == 5
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 1)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(4, 1)
    log.append_as_leader(batch(b"x"), epoch=5)
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(5, 5)


def check_end_offset_for_epoch_follows_spec(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [2, 2, 4, 6])  # 2@0, 4@4, 6@6; LEO 8
    table = {
        0: OffsetAndEpoch(0, 0),  # no epoch <= 0: floor is 0 (no snapshot)
        1: OffsetAndEpoch(0, 0),
        2: OffsetAndEpoch(4, 2),
        3: OffsetAndEpoch(4, 2),
        4: OffsetAndEpoch(6, 4),
        5: OffsetAndEpoch(6, 4),
        6: OffsetAndEpoch(8, 6),
        9: OffsetAndEpoch(8, 6),
    }
    assert {e: log.end_offset_for_epoch(e) for e in table} == table


def check_validate_offset_and_epoch(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [2, 2, 4])  # 2@0..3, 4@4..5
    v = log.validate_offset_and_epoch
    assert v(0, 0).kind is ValidationKind.VALID
    assert v(4, 2).kind is ValidationKind.VALID
    assert v(6, 4).kind is ValidationKind.VALID
    assert v(3, 2).kind is ValidationKind.VALID
    # Fetching past what this log has for epoch 2.
    d = v(5, 2)
    assert (d.kind, d.offset_and_epoch) == (ValidationKind.DIVERGING, OffsetAndEpoch(4, 2))
    # An epoch this log never had.
    d = v(5, 3)
    assert (d.kind, d.offset_and_epoch) == (ValidationKind.DIVERGING, OffsetAndEpoch(4, 2))
    d = v(9, 4)
    assert (d.kind, d.offset_and_epoch) == (ValidationKind.DIVERGING, OffsetAndEpoch(6, 4))


def check_snapshot_is_invisible_until_frozen(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1, 2])
    log.flush()
    writer = log.create_new_snapshot(OffsetAndEpoch(4, 1))
    assert writer is not None
    assert writer.snapshot_id == OffsetAndEpoch(4, 1)
    writer.append(b"hello ")
    writer.append(b"world")
    assert writer.size_in_bytes() == 11
    assert log.latest_snapshot_id() is None
    assert log.read_snapshot(OffsetAndEpoch(4, 1)) is None
    writer.freeze()
    assert log.latest_snapshot_id() == log.earliest_snapshot_id() == OffsetAndEpoch(4, 1)
    reader = log.read_snapshot(OffsetAndEpoch(4, 1))
    assert reader is not None
    assert reader.size_in_bytes() == 11
    assert reader.read(0, 5) == b"hello"
    assert reader.read(6, 100) == b"world"
    assert log.create_new_snapshot(OffsetAndEpoch(4, 1)) is None  # exists already


def check_aborted_snapshot_never_appears(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1])
    writer = log.create_new_snapshot(OffsetAndEpoch(2, 1))
    assert writer is not None
    writer.append(b"x")
    writer.abort()
    assert log.latest_snapshot_id() is None
    log = factory.crash_and_reopen(log)
    assert log.latest_snapshot_id() is None


def check_create_snapshot_rejects_ids_the_log_does_not_have(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1, 3])  # 1@0..3, 3@4..5
    for bad in (OffsetAndEpoch(5, 1), OffsetAndEpoch(9, 3), OffsetAndEpoch(2, 2)):
        with pytest.raises(KraftError):
            log.create_new_snapshot(bad)
    assert log.latest_snapshot_id() is None


def check_frozen_snapshot_survives_a_crash(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1])
    log.flush()
    freeze_snapshot(log, OffsetAndEpoch(4, 1), b"state")
    log = factory.crash_and_reopen(log)
    assert log.latest_snapshot_id() == OffsetAndEpoch(4, 1)
    reader = log.read_snapshot(OffsetAndEpoch(4, 1))
    assert reader is not None and reader.read(0, 100) == b"state"


def check_delete_before_snapshot_advances_the_start(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1, 2, 2, 3])  # 1@0..3, 2@4..7, 3@8..9
    log.flush()
    freeze_snapshot(log, OffsetAndEpoch(2, 1))
    freeze_snapshot(log, OffsetAndEpoch(6, 2))
    assert log.delete_before_snapshot(OffsetAndEpoch(6, 2))
    assert log.start_offset() == 6
    assert log.earliest_snapshot_id() == OffsetAndEpoch(6, 2)
    assert log.read_snapshot(OffsetAndEpoch(2, 1)) is None
    assert not log.delete_before_snapshot(OffsetAndEpoch(6, 2))  # nothing changes twice
    assert [o for o, _, _ in records(log, 6) if o >= 6] == [6, 7, 8, 9]
    with pytest.raises(KraftError):
        log.read(3, 100)
    v = log.validate_offset_and_epoch(3, 1)
    assert (v.kind, v.offset_and_epoch) == (ValidationKind.SNAPSHOT, OffsetAndEpoch(6, 2))
    assert log.validate_offset_and_epoch(6, 2).kind is ValidationKind.VALID
    assert log.validate_offset_and_epoch(8, 2).kind is ValidationKind.VALID
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(8, 2)
    log = factory.crash_and_reopen(log)
    assert log.start_offset() == 6
    assert log.earliest_snapshot_id() == OffsetAndEpoch(6, 2)
    assert log.end_offset() == 10


def check_delete_before_snapshot_needs_a_frozen_flushed_snapshot(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1])
    assert not log.delete_before_snapshot(OffsetAndEpoch(2, 1))  # no such snapshot
    freeze_snapshot(log, OffsetAndEpoch(2, 1))
    assert not log.delete_before_snapshot(OffsetAndEpoch(2, 1))  # log not flushed that far
    log.flush()
    assert log.delete_before_snapshot(OffsetAndEpoch(2, 1))
    assert log.start_offset() == 2


def check_truncate_to_latest_snapshot_replaces_a_log_that_is_behind(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1])
    log.flush()
    assert not log.truncate_to_latest_snapshot()  # no snapshot
    download_snapshot(log, OffsetAndEpoch(10, 3))
    assert log.truncate_to_latest_snapshot()
    assert (log.start_offset(), log.end_offset()) == (10, 10)
    assert log.last_fetched_epoch() == 3
    assert log.validate_offset_and_epoch(10, 3).kind is ValidationKind.VALID
    log.append_as_follower(batch(b"next", base_offset=10, epoch=3), epoch=3)
    assert records(log, 10) == [(10, 3, b"next")]
    assert not log.truncate_to_latest_snapshot()  # the log is no longer behind
    log.flush()
    log = factory.crash_and_reopen(log)
    assert (log.start_offset(), log.end_offset()) == (10, 11)


def check_snapshot_at_or_behind_the_log_does_not_truncate(factory: LogFactory) -> None:
    log = factory.new()
    fill(log, [1, 1, 2])
    log.flush()
    freeze_snapshot(log, OffsetAndEpoch(4, 1))
    assert not log.truncate_to_latest_snapshot()
    assert log.end_offset() == 6


def check_snapshot_replaces_a_shorter_log_whose_tail_has_a_newer_epoch(factory: LogFactory) -> None:
    # A follower holds an uncommitted tail from epoch 2 (offsets 4-5) and downloads the leader's
    # snapshot (10, epoch 1): its last epoch is newer, but the snapshot is ahead and disagrees with
    # the tail, so the whole log goes (simulator flaky-network seeds 1170, 1674, 2035).
    log = factory.new()
    fill(log, [1, 1, 2])
    log.flush()
    download_snapshot(log, OffsetAndEpoch(10, 1))
    assert log.truncate_to_latest_snapshot()
    assert (log.start_offset(), log.end_offset(), log.last_fetched_epoch()) == (10, 10, 1)


def check_snapshot_that_disagrees_with_a_longer_log_replaces_it(factory: LogFactory) -> None:
    # The log reaches past the snapshot, but its entry before offset 4 is of epoch 2, not 1.
    log = factory.new()
    fill(log, [1, 2, 2])
    log.flush()
    download_snapshot(log, OffsetAndEpoch(4, 1))
    assert log.truncate_to_latest_snapshot()
    assert (log.start_offset(), log.end_offset(), log.last_fetched_epoch()) == (4, 4, 1)


CONTRACT_CHECKS: tuple[ContractCheck, ...] = (
    check_empty_log,
    check_leader_append_assigns_offsets_and_epoch,
    check_leader_append_below_last_epoch_is_fatal_and_changes_nothing,
    check_follower_append_keeps_offsets_and_epochs,
    check_follower_append_must_start_at_log_end,
    check_follower_append_refuses_a_bad_crc_and_changes_nothing,
    check_read_returns_whole_batches_within_max_bytes_and_at_least_one,
    check_truncate_drops_suffix_and_epochs,
    check_truncate_inside_a_batch_drops_the_whole_batch,
    check_flush_then_crash_keeps_exactly_the_flushed_prefix,
    check_epoch_cache_survives_a_crash,
    check_initialize_leader_epoch_starts_the_epoch_at_the_log_end,
    check_end_offset_for_epoch_follows_spec,
    check_validate_offset_and_epoch,
    check_snapshot_is_invisible_until_frozen,
    check_aborted_snapshot_never_appears,
    check_create_snapshot_rejects_ids_the_log_does_not_have,
    check_frozen_snapshot_survives_a_crash,
    check_delete_before_snapshot_advances_the_start,
    check_delete_before_snapshot_needs_a_frozen_flushed_snapshot,
    check_truncate_to_latest_snapshot_replaces_a_log_that_is_behind,
    check_snapshot_at_or_behind_the_log_does_not_truncate,
    check_snapshot_replaces_a_shorter_log_whose_tail_has_a_newer_epoch,
    check_snapshot_that_disagrees_with_a_longer_log_replaces_it,
)
