"""SegmentLog on its own: appends, reads, roll, truncation, the start offset, crash, and recovery at open.

The crash model of the recovery tests: a crash leaves a prefix of the appended bytes on disk (possibly
cut inside a batch), and nothing past the last batch that was written. Bit flips model media
corruption. Nothing here involves a snapshot or the metadata topic: the segment log must not need them.
"""

from __future__ import annotations

import ast
import os
import random
import shutil
from pathlib import Path

import pytest

import kraft.storage.segment_log as segment_log_module
from kraft.common.errors import CorruptRecordError, FatalError, KraftError, StorageError
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch, iter_batch_headers, iter_batches
from kraft.storage.epoch_cache import CHECKPOINT_FILE, EpochEntry
from kraft.storage.segment_log import SegmentLog, parse_segment_file_name, segment_file_name

SEGMENT_BYTES = 1200


def _batch(n: int, rng: random.Random) -> bytes:
    values = [bytes(rng.randrange(256) for _ in range(rng.randrange(5, 60))) for _ in range(1 + n % 3)]
    return build_batch([SimpleRecord(value=v) for v in values], timestamp_ms=1000 + n)


def _one(value: bytes = b"v" * 40, *, base_offset: int = 0, epoch: int = -1) -> bytes:
    return build_batch([SimpleRecord(value=value)], base_offset=base_offset, partition_leader_epoch=epoch)


def _records(log: SegmentLog, start: int = 0) -> list[tuple[int, int, bytes | None]]:
    """(offset, batch epoch, value) of every record readable from ``start``."""
    return [
        (r.offset, b.partition_leader_epoch, r.value)
        for b in iter_batches(log.read(start, 1 << 30))
        for r in b.records
    ]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A flushed log of three or more segments with epochs 1, 2 and 3; returns (dir, all log bytes)."""
    rng = random.Random(7)
    directory = tmp_path_factory.mktemp("pristine") / "orders-0"
    log = SegmentLog(directory, segment_bytes=SEGMENT_BYTES)
    for n in range(30):
        log.append_as_leader(_batch(n, rng), epoch=1 + n // 12)
    log.flush()
    assert len(log.segment_paths()) >= 3
    everything = log.read(0, 1 << 30)
    log.close()
    return directory, everything


def _copy(pristine: tuple[Path, bytes], tmp_path: Path) -> Path:
    target = tmp_path / "orders-0"
    shutil.copytree(pristine[0], target)
    return target


def _segments(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.log"))


def _headers(path: Path) -> list[tuple[int, int, int]]:
    """(position, base offset, size) of each batch in a segment file."""
    return [(pos, h.base_offset, h.size_in_bytes) for pos, h in iter_batch_headers(path.read_bytes())]


def _flip(path: Path, position: int) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0xFF]))


# ---------------------------------------------------------------------------------------- appends, reads


def test_leader_append_assigns_offsets_and_epoch_and_returns_the_first_offset(tmp_path: Path) -> None:
    log = SegmentLog(tmp_path / "p")
    assert log.append_as_leader(_one(b"a", base_offset=77, epoch=9), epoch=2) == 0
    two = build_batch([SimpleRecord(value=b"b"), SimpleRecord(value=b"c")])
    assert log.append_as_leader(two, epoch=3) == 1
    assert log.end_offset() == 3
    assert _records(log) == [(0, 2, b"a"), (1, 3, b"b"), (2, 3, b"c")]
    assert log.epoch_entries() == (EpochEntry(2, 0), EpochEntry(3, 1))
    with pytest.raises(FatalError, match="already at epoch 3"):
        log.append_as_leader(_one(), epoch=2)
    with pytest.raises(FatalError, match="already at epoch 3"):
        log.initialize_leader_epoch(1)
    assert log.end_offset() == 3


def test_follower_append_keeps_offsets_and_epochs_and_refuses_without_writing(tmp_path: Path) -> None:
    log = SegmentLog(tmp_path / "p")
    assert log.append_as_follower(_one(b"a", base_offset=0, epoch=4), epoch=5) == 0
    size = log.segment_paths()[-1].stat().st_size
    bad_crc = bytearray(_one(b"b", base_offset=1, epoch=4))
    bad_crc[-1] ^= 0xFF
    refused: list[tuple[bytes, type[Exception], str]] = [
        (_one(b"b", base_offset=2, epoch=4), FatalError, "expected 1"),
        (_one(b"b", base_offset=1, epoch=6), FatalError, "above the current 5"),
        (bytes(bad_crc), CorruptRecordError, "CRC mismatch"),
        (_one(b"b", base_offset=1, epoch=4)[:-2], CorruptRecordError, "partial batch"),
    ]
    for data, error, message in refused:
        with pytest.raises(error, match=message):
            log.append_as_follower(data, epoch=5)
    assert (log.end_offset(), log.segment_paths()[-1].stat().st_size) == (1, size)
    assert log.epoch_entries() == (EpochEntry(4, 0),)
    assert log.append_as_follower(_one(b"b", base_offset=1, epoch=5), epoch=5) == 1
    assert _records(log) == [(0, 4, b"a"), (1, 5, b"b")]


def test_read_returns_whole_batches_within_max_bytes_across_segments(tmp_path: Path) -> None:
    two = build_batch([SimpleRecord(value=b"v" * 34), SimpleRecord(value=b"w" * 34)])
    batch_size = len(two)
    log = SegmentLog(tmp_path / "p", segment_bytes=2 * batch_size)
    for _ in range(3):
        log.append_as_leader(two, epoch=1)  # two offsets each
    assert log.segment_base_offsets() == [0, 4]
    # From inside a batch: that whole batch first.
    assert [b.base_offset for b in iter_batches(log.read(1, batch_size))] == [0]
    # At least one batch, even over the budget.
    assert [b.base_offset for b in iter_batches(log.read(2, 1))] == [2]
    # Whole batches only, and the read goes on into the next segment.
    assert [b.base_offset for b in iter_batches(log.read(0, 3 * batch_size - 1))] == [0, 2]
    assert [b.base_offset for b in iter_batches(log.read(2, 1 << 20))] == [2, 4]
    assert log.read(6, 1 << 20) == b""


def test_a_crc_check_on_read_sees_a_segment_changed_on_disk(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    with SegmentLog(directory) as log:
        log.append_as_leader(_one(b"x" * 100), epoch=1)
        log.flush()
        written = log.read(0, 1 << 20)
    plain = SegmentLog(directory)
    checked = SegmentLog(directory, verify_crc_on_read=True)
    assert checked.read(0, 1 << 20) == written
    _flip(_segments(directory)[0], 80)  # in the record, after the header the index was built from
    changed = plain.read(0, 1 << 20)
    assert len(changed) == len(written) and changed != written
    with pytest.raises(StorageError, match="failed its CRC"):
        checked.read(0, 1 << 20)


# ---------------------------------------------------------------------------------------- roll


def test_segments_roll_by_size_and_are_named_by_base_offset(tmp_path: Path) -> None:
    size = len(_one())
    log = SegmentLog(tmp_path / "p", segment_bytes=3 * size)
    for _ in range(10):
        log.append_as_leader(_one(), epoch=1)
    names = [p.name for p in log.segment_paths()]
    assert names == [segment_file_name(o) for o in (0, 3, 6, 9)]
    assert log.segment_base_offsets() == [0, 3, 6, 9]
    assert all(p.stat().st_size <= 3 * size for p in log.segment_paths())
    # A batch bigger than a segment still goes in, alone.
    big = _one(b"x" * (4 * size))
    log.append_as_leader(big, epoch=1)
    assert log.segment_paths()[-1].stat().st_size == len(big)
    assert log.segment_paths()[-1].name == segment_file_name(10)
    assert parse_segment_file_name(segment_file_name(10)) == 10
    assert parse_segment_file_name("00000000000000000010.log.deleted") is None
    assert parse_segment_file_name("10.log") is None


def test_a_roll_syncs_the_finished_segment_before_writing_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = len(_one())
    log = SegmentLog(tmp_path / "p", segment_bytes=2 * size)
    synced: list[int] = []  # inodes of the files synced
    monkeypatch.setattr(segment_log_module, "_fdatasync", lambda fd: synced.append(os.fstat(fd).st_ino))
    for _ in range(3):
        log.append_as_leader(_one(), epoch=1)
    # Without any flush: one sync, of the first segment, when the third batch rolled the log.
    assert synced == [log.segment_paths()[0].stat().st_ino]
    assert log.last_flushed_offset() == 0
    assert [p.name for p in log.segment_paths()] == [segment_file_name(0), segment_file_name(2)]


# ---------------------------------------------------------------------------------------- truncation


def test_truncate_drops_whole_batches_and_later_segments_and_is_durable_at_once(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    size = len(build_batch([SimpleRecord(value=b"v" * 34)] * 2))
    log = SegmentLog(directory, segment_bytes=2 * size)
    for epoch in (1, 1, 2, 3, 3):
        log.append_as_leader(build_batch([SimpleRecord(value=b"v" * 34)] * 2), epoch=epoch)
    log.flush()
    assert log.segment_base_offsets() == [0, 4, 8]
    log.truncate_to(5)  # inside the batch [4, 6) of epoch 2: the whole batch goes
    assert (log.end_offset(), log.last_flushed_offset()) == (4, 4)
    assert log.segment_base_offsets() == [0, 4]
    assert not (directory / segment_file_name(8)).exists()
    assert log.epoch_entries() == (EpochEntry(1, 0),)
    log.crash()  # no flush: the truncation itself must have been made durable
    log = SegmentLog(directory, segment_bytes=2 * size)
    assert log.end_offset() == 4
    assert [r[0] for r in _records(log)] == [0, 1, 2, 3]
    assert log.advance_start_offset(2)
    with pytest.raises(KraftError, match="below the log start offset"):
        log.truncate_to(1)


def test_truncate_fully_and_start_at_leaves_one_empty_segment(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    log = SegmentLog(directory, segment_bytes=100)
    for _ in range(4):
        log.append_as_leader(_one(), epoch=1)
    log.truncate_fully_and_start_at(50)
    assert (log.start_offset(), log.end_offset(), log.last_flushed_offset()) == (50, 50, 50)
    assert [p.name for p in log.segment_paths()] == [segment_file_name(50)]
    assert log.epoch_entries() == ()
    log.crash()
    log = SegmentLog(directory)
    assert log.recovery_report.clean
    assert (log.start_offset(), log.end_offset(), log.segment_base_offsets()) == (50, 50, [50])
    assert log.append_as_leader(_one(), epoch=4) == 50


# ---------------------------------------------------------------------------------------- the start offset


def test_an_empty_directory_begins_at_the_initial_offset(tmp_path: Path) -> None:
    log = SegmentLog(tmp_path / "p", initial_offset=12)
    assert (log.start_offset(), log.end_offset()) == (12, 12)
    assert [p.name for p in log.segment_paths()] == [segment_file_name(12)]
    assert log.read(12, 100) == b""


def test_the_start_offset_comes_from_the_layer_above_or_the_first_segment(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    log = SegmentLog(directory, segment_bytes=100, initial_offset=5)
    for epoch in (1, 1, 2, 2):
        log.append_as_leader(_one(), epoch=epoch)  # offsets 5..8
    log.flush()
    log.close()
    with SegmentLog(directory) as log:
        assert (log.start_offset(), log.epoch_entries()) == (5, (EpochEntry(1, 5), EpochEntry(2, 7)))
    seen: list[tuple[int, int]] = []

    def start_at_8(opened: SegmentLog) -> int:
        seen.append((opened.segment_base_offsets()[0], opened.end_offset()))
        return 8

    log = SegmentLog(directory, log_start_offset=start_at_8)
    assert seen == [(5, 9)]
    assert log.start_offset() == 8
    # The epoch that covers the start is kept, moved up to it.
    assert log.epoch_entries() == (EpochEntry(2, 8),)
    with pytest.raises(KraftError, match="below the log start offset"):
        log.read(7, 100)
    assert [r[0] for r in _records(log, 8)] == [8]
    log.close()
    for outside in (4, 10):
        with pytest.raises(StorageError, match=f"log start offset {outside} is outside"):
            SegmentLog(directory, log_start_offset=lambda _log, at=outside: at)


def test_advance_start_offset_deletes_only_segments_wholly_below(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    size = len(_one())
    log = SegmentLog(directory, segment_bytes=3 * size)
    for _ in range(10):
        log.append_as_leader(_one(), epoch=1)
    with pytest.raises(KraftError, match="beyond its flushed end 0"):
        log.advance_start_offset(7)
    log.flush()
    assert log.advance_start_offset(7)
    assert not log.advance_start_offset(7)
    # Segment [6, 9) holds offset 7 and stays; [0, 3) and [3, 6) are gone.
    assert [p.name for p in log.segment_paths()] == [segment_file_name(6), segment_file_name(9)]
    assert log.epoch_entries() == (EpochEntry(1, 7),)
    assert [r[0] for r in _records(log, 7)] == [7, 8, 9]
    log.close()
    # Without a layer above to remember it, the start falls back to the first segment.
    assert SegmentLog(directory, segment_bytes=3 * size).start_offset() == 6


def test_advance_start_offset_to_the_log_end_rolls_to_an_empty_segment(tmp_path: Path) -> None:
    log = SegmentLog(tmp_path / "p")
    for _ in range(3):
        log.append_as_leader(_one(), epoch=2)
    log.flush()
    assert log.advance_start_offset(3)
    assert [p.name for p in log.segment_paths()] == [segment_file_name(3)]
    assert log.latest_epoch() == 2
    assert log.append_as_leader(_one(), epoch=2) == 3


# ---------------------------------------------------------------------------------------- crash, flush


def test_crash_keeps_exactly_the_flushed_prefix_across_segments(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    size = len(_one())
    log = SegmentLog(directory, segment_bytes=2 * size)
    for _ in range(3):
        log.append_as_leader(_one(), epoch=1)
    log.flush()
    for epoch in (1, 2, 2):
        log.append_as_leader(_one(), epoch=epoch)  # rolls once more
    assert log.segment_base_offsets() == [0, 2, 4]
    log.crash()
    log = SegmentLog(directory, segment_bytes=2 * size)
    assert log.recovery_report.clean
    assert (log.end_offset(), log.last_flushed_offset()) == (3, 3)
    assert log.segment_base_offsets() == [0, 2]
    assert log.epoch_entries() == (EpochEntry(1, 0),)


def test_flush_writes_the_epoch_checkpoint_in_kafka_format(tmp_path: Path) -> None:
    log = SegmentLog(tmp_path / "p")
    log.append_as_leader(_one(), epoch=1)
    log.append_as_leader(_one(), epoch=4)
    log.initialize_leader_epoch(6)
    log.flush()
    assert (tmp_path / "p" / CHECKPOINT_FILE).read_bytes() == b"0\n3\n1 0\n4 1\n6 2\n"
    assert log.end_offset_for_epoch(5, floor_epoch=0) == OffsetAndEpoch(2, 4)
    assert log.end_offset_for_epoch(0, floor_epoch=0) == OffsetAndEpoch(0, 0)


def test_a_closed_log_refuses_calls(tmp_path: Path) -> None:
    log = SegmentLog(tmp_path / "p")
    log.close()
    assert log.closed
    for call in (lambda: log.read(0, 1), lambda: log.append_as_leader(_one(), 1), log.flush):
        with pytest.raises(KraftError, match="is closed"):
            call()


# ---------------------------------------------------------------------------------------- recovery at open


def _assert_prefix_intact_and_appendable(log: SegmentLog, everything: bytes, end: int) -> None:
    assert log.end_offset() == end
    data = log.read(0, 1 << 30)
    assert everything.startswith(data)
    assert sum(b.header.last_offset_delta + 1 for b in iter_batches(data)) == end
    assert log.append_as_leader(build_batch([SimpleRecord(value=b"after")]), epoch=5) == end
    log.flush()
    log.close()
    again = SegmentLog(log.directory, segment_bytes=SEGMENT_BYTES)
    assert again.recovery_report.clean
    assert again.end_offset() == end + 1
    again.close()


def _cut_positions(last: Path) -> list[int]:
    headers = _headers(last)
    size = last.stat().st_size
    tail_start = headers[-2][0]
    rng = random.Random(11)
    elsewhere = [rng.randrange(0, tail_start) for _ in range(25)]
    return sorted(set(range(tail_start, size)) | set(elsewhere))


def _last_delta(path: Path, position: int) -> int:
    for pos, header in iter_batch_headers(path.read_bytes()):
        if pos == position:
            return header.last_offset_delta
    raise AssertionError(position)


def test_cutting_the_last_segment_anywhere_keeps_every_whole_batch_before_the_cut(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    last = _segments(pristine[0])[-1]
    headers = _headers(last)
    positions = _cut_positions(last)
    assert len(positions) > 100
    for n, cut in enumerate(positions):
        directory = _copy(pristine, tmp_path / str(n))
        with open(directory / last.name, "r+b") as f:
            f.truncate(cut)
        whole = [(pos, base, size) for pos, base, size in headers if pos + size <= cut]
        end = whole[-1][1] + _last_delta(directory / last.name, whole[-1][0]) + 1 if whole else headers[0][1]
        log = SegmentLog(directory, segment_bytes=SEGMENT_BYTES)
        kept = whole[-1][0] + whole[-1][2] if whole else 0
        if cut == kept:
            assert not log.recovery_report.truncated_tails
        else:
            (tail,) = log.recovery_report.truncated_tails
            assert (tail.file.name, tail.position, tail.bytes_dropped) == (last.name, kept, cut - kept)
        assert (directory / last.name).stat().st_size == kept
        _assert_prefix_intact_and_appendable(log, pristine[1], end)


def test_garbage_after_the_last_batch_is_cut(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    for n, garbage in enumerate([b"\x00" * 4096, bytes(random.Random(3).randrange(256) for _ in range(300))]):
        directory = _copy(pristine, tmp_path / str(n))
        last = _segments(directory)[-1]
        size = last.stat().st_size
        with open(last, "ab") as f:
            f.write(garbage)
        log = SegmentLog(directory, segment_bytes=SEGMENT_BYTES)
        (tail,) = log.recovery_report.truncated_tails
        assert (tail.position, tail.bytes_dropped) == (size, len(garbage))
        assert log.read(0, 1 << 30) == pristine[1]
        log.close()


def _flip_positions(headers: list[tuple[int, int, int]], which: int, rng: random.Random, k: int) -> list[int]:
    pos, _, size = headers[which]
    # partitionLeaderEpoch (bytes 12..15) is covered by no checksum in the v2 format.
    candidates = [p for p in range(pos, pos + size) if not 12 <= p - pos < 16]
    return rng.sample(candidates, min(k, len(candidates)))


def test_a_flipped_byte_in_the_last_batch_cuts_only_that_batch(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    last = _segments(pristine[0])[-1]
    headers = _headers(last)
    pos, base, _ = headers[-1]
    for n, flip in enumerate(_flip_positions(headers, -1, random.Random(5), 60)):
        directory = _copy(pristine, tmp_path / str(n))
        _flip(directory / last.name, flip)
        log = SegmentLog(directory, segment_bytes=SEGMENT_BYTES)
        (tail,) = log.recovery_report.truncated_tails
        assert tail.position == pos
        _assert_prefix_intact_and_appendable(log, pristine[1], base)


def _damage_before_valid_batches(
    pristine: tuple[Path, bytes], seed: int, batches: int, flips: int
) -> list[tuple[Path, int, int, int]]:
    """(segment, batch position, batch base offset, byte to flip) for ``flips`` bytes of each of
    ``batches`` batches per segment that valid batches follow: in non-last segments every batch
    counts, in the last one all but its last batch."""
    segments = _segments(pristine[0])
    rng = random.Random(seed)
    cases = []
    for seg in segments:
        headers = _headers(seg)
        candidates = range(len(headers)) if seg != segments[-1] else range(len(headers) - 1)
        for which in rng.sample(list(candidates), batches):
            pos, base, _ = headers[which]
            cases += [(seg, pos, base, flip) for flip in _flip_positions(headers, which, rng, flips)]
    return cases


def test_a_flipped_byte_before_valid_batches_refuses_to_start(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    for n, (seg, batch_pos, _, flip) in enumerate(_damage_before_valid_batches(pristine, 9, 3, 8)):
        name = seg.name
        directory = _copy(pristine, tmp_path / str(n))
        _flip(directory / name, flip)
        before = (directory / name).read_bytes()
        with pytest.raises(StorageError) as info:
            SegmentLog(directory, segment_bytes=SEGMENT_BYTES)
        message = str(info.value)
        assert name in message and f"position {batch_pos}" in message, (flip, message)
        assert (directory / name).read_bytes() == before  # refusing changes nothing


def test_truncate_corruption_cuts_at_the_first_invalid_batch_and_deletes_the_later_segments(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    """Data partitions (``truncate_corruption``), as Kafka's LogLoader: the same damage that makes
    the metadata log refuse to open cuts the log at the damaged batch instead."""
    segments = _segments(pristine[0])
    for n, (seg, batch_pos, base, flip) in enumerate(_damage_before_valid_batches(pristine, 13, 2, 4)):
        directory = _copy(pristine, tmp_path / str(n))
        _flip(directory / seg.name, flip)
        log = SegmentLog(directory, segment_bytes=SEGMENT_BYTES, truncate_corruption=True)
        (tail,) = log.recovery_report.truncated_tails
        later = [s.name for s in segments if s.name > seg.name]
        assert (tail.file.name, tail.position) == (seg.name, batch_pos), flip
        assert [p.name for p in tail.segments_deleted] == later
        assert [p.name for p in _segments(directory)] == [s.name for s in segments if s.name <= seg.name]
        assert not [p for p in directory.iterdir() if p.name.split(".")[0] in {x[:20] for x in later}]
        _assert_prefix_intact_and_appendable(log, pristine[1], base)
        log.close()
        # What is left is a valid log: it opens again, as strict as ever, with nothing to repair.
        again = SegmentLog(directory, segment_bytes=SEGMENT_BYTES)
        assert not again.recovery_report.truncated_tails
        assert again.end_offset() == base + 1
        again.close()


def test_a_torn_non_last_segment_refuses_to_start(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    directory = _copy(pristine, tmp_path)
    first = _segments(directory)[0]
    with open(first, "r+b") as f:
        f.truncate(first.stat().st_size - 10)
    with pytest.raises(StorageError, match=first.name):
        SegmentLog(directory, segment_bytes=SEGMENT_BYTES)


def test_a_missing_middle_segment_refuses_to_start(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    directory = _copy(pristine, tmp_path)
    os.unlink(_segments(directory)[1])
    with pytest.raises(StorageError, match="ends before offset"):
        SegmentLog(directory, segment_bytes=SEGMENT_BYTES)


def test_truncate_corruption_ends_the_log_where_it_stops_being_contiguous(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    """A crash after a cut segment was truncated and before the later ones were deleted leaves a
    gap (the same as a missing middle segment): the next open ends the log before it."""
    directory = _copy(pristine, tmp_path)
    segments = _segments(directory)
    assert len(segments) >= 3
    first = segments[0]
    (pos, base, _), *_ = _headers(first)[-1:]
    with open(first, "r+b") as f:  # the cut of its last batch made durable, the deletes not
        f.truncate(pos)
    log = SegmentLog(directory, segment_bytes=SEGMENT_BYTES, truncate_corruption=True)
    assert [p.name for p in _segments(directory)] == [first.name]
    assert {p.name for p in log.recovery_report.removed_files} >= {p.name for p in segments[1:]}
    _assert_prefix_intact_and_appendable(log, pristine[1], base)
    log.close()


def test_epoch_cache_is_rebuilt_when_the_checkpoint_is_missing_garbage_or_ahead(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    reference = SegmentLog(_copy(pristine, tmp_path / "ref"), segment_bytes=SEGMENT_BYTES)
    expected = reference.epoch_entries()
    assert reference.recovery_report.clean
    assert [e.epoch for e in expected] == [1, 2, 3]
    reference.close()
    variants: dict[str, bytes | None] = {
        "missing": None,
        "garbage": b"\x00\xffnot a checkpoint",
        "ahead": b"0\n4\n1 0\n2 12\n3 24\n9 100000\n",
        "wrong": b"0\n1\n1 0\n",
    }
    for name, content in variants.items():
        directory = _copy(pristine, tmp_path / name)
        if content is None:
            os.unlink(directory / CHECKPOINT_FILE)
        else:
            (directory / CHECKPOINT_FILE).write_bytes(content)
        log = SegmentLog(directory, segment_bytes=SEGMENT_BYTES)
        assert log.recovery_report.epoch_cache_rebuilt, name
        assert log.epoch_entries() == expected
        log.close()
        # The rewritten checkpoint is now trusted.
        assert SegmentLog(directory, segment_bytes=SEGMENT_BYTES).recovery_report.clean


def test_reopen_after_clean_shutdown_reports_nothing(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    log = SegmentLog(_copy(pristine, tmp_path), segment_bytes=SEGMENT_BYTES)
    assert log.recovery_report.clean
    assert log.read(0, 1 << 30) == pristine[1]
    assert log.last_flushed_offset() == log.end_offset()
    assert log.epoch_entries()[0] == EpochEntry(1, 0)


def test_open_removes_its_own_leftovers_and_leaves_other_files_alone(tmp_path: Path) -> None:
    directory = tmp_path / "orders-3"
    with SegmentLog(directory) as log:
        log.append_as_leader(_one(), epoch=1)
        log.flush()
    ours = [directory / (segment_file_name(7) + ".deleted"), directory / (CHECKPOINT_FILE + ".tmp")]
    # Files of a layer above (snapshots, their leftovers, quorum state) are not the segment log's.
    theirs = [
        directory / "00000000000000000001-0000000001.checkpoint",
        directory / "00000000000000000001-0000000001-x.checkpoint.part",
        directory / "quorum-state",
    ]
    for path in ours + theirs:
        path.write_bytes(b"x")
    log = SegmentLog(directory)
    assert sorted(log.recovery_report.removed_files) == sorted(ours)
    assert not any(p.exists() for p in ours)
    assert all(p.read_bytes() == b"x" for p in theirs)
    assert (log.start_offset(), log.end_offset()) == (0, 1)


def test_the_segment_log_imports_no_snapshot_metadata_or_raft_rules() -> None:
    # The metadata log and the future partition logs sit on top of it, never the other way round.
    tree = ast.parse(Path(segment_log_module.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    kraft = sorted(m for m in imported if m and m.startswith("kraft"))
    assert kraft == [
        "kraft.common.errors",
        "kraft.raft.types",  # OffsetAndEpoch, a value type
        "kraft.records.batch",
        "kraft.storage.epoch_cache",
        "kraft.storage.fsutil",
        "kraft.storage.segment_index",
    ]


def _walked(log: SegmentLog, offset: int, max_bytes: int, max_offset: int | None) -> bytes:
    """``log.read`` with the remembered tails set aside: from the index and a walk of headers."""
    kept = [s.tail for s in log._segments]
    for segment in log._segments:
        segment.forget_tail()
    try:
        return log.read(offset, max_bytes, max_offset)
    finally:
        for segment, tail in zip(log._segments, kept, strict=True):
            segment.tail = tail


def test_reads_from_the_remembered_tail_equal_reads_walked_from_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The positions of the batches appended last (what followers and consumers read) answer reads
    without walking headers; after every append, trim of that memory, truncation and roll, each read
    near the end, with and without a ``max_offset``, equals the same read walked from the index."""
    monkeypatch.setattr(segment_log_module, "_TAIL_BATCHES", 8)  # trimmed every 4 appends
    rng = random.Random(11)
    log = SegmentLog(tmp_path / "t-0", segment_bytes=4_000)
    checked = 0
    for step in range(150):
        log.append_as_leader(_batch(step, rng), epoch=1)
        if step % 7 == 6:
            log.truncate_to(log.end_offset() - 1 - step % 3)  # inside or at the edge of a batch
        end = log.end_offset()
        for offset in range(max(0, end - 30), end + 1):
            for max_offset in (None, end - 3, end - 1):
                assert log.read(offset, 300, max_offset) == _walked(log, offset, 300, max_offset), (
                    step,
                    offset,
                )
                checked += 1
    assert len(log.segment_paths()) >= 3 and checked > 10_000
    # Only the active segment remembers, and at most _TAIL_BATCHES batches.
    active = log._segments[-1].tail
    assert all(s.tail is None for s in log._segments[:-1])
    assert active is not None and 0 < len(active.bases) == len(active.lasts) == len(active.positions) <= 8
    # The tail answers without a header walk: one pread, of the bytes returned.
    preads: list[int] = []
    real_pread = os.pread

    def counting_pread(fd: int, n: int, position: int) -> bytes:
        preads.append(n)
        return real_pread(fd, n, position)

    monkeypatch.setattr(segment_log_module.os, "pread", counting_pread)
    data = log.read(log.end_offset() - 1, 1 << 20)
    assert data and preads == [len(data)]
    log.close()
