"""FileLog recovery at open: torn tails are cut and reported, other corruption refuses to start.

The crash model: a crash leaves a prefix of the appended bytes on disk (possibly cut inside a
batch), and nothing past the last batch that was written. Bit flips model media corruption.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from kraft.common.errors import StorageError
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch, iter_batch_headers, iter_batches
from kraft.storage.epoch_cache import CHECKPOINT_FILE, EpochEntry
from kraft.storage.file_log import FileLog, segment_file_name
from kraft.storage.snapshots import FileRawSnapshotWriter

SEGMENT_BYTES = 1200


def _batch(n: int, rng: random.Random) -> bytes:
    values = [bytes(rng.randrange(256) for _ in range(rng.randrange(5, 60))) for _ in range(1 + n % 3)]
    return build_batch([SimpleRecord(value=v) for v in values], timestamp_ms=1000 + n)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A flushed log of three segments with epochs 1, 2 and 3; returns (dir, all log bytes)."""
    rng = random.Random(7)
    directory = tmp_path_factory.mktemp("pristine") / "__cluster_metadata-0"
    log = FileLog(directory, segment_bytes=SEGMENT_BYTES)
    for n in range(30):
        log.append_as_leader(_batch(n, rng), epoch=1 + n // 12)
    log.flush()
    assert len(log.segment_paths()) >= 3
    everything = log.read(0, 1 << 30)
    log.close()
    return directory, everything


def _copy(pristine: tuple[Path, bytes], tmp_path: Path) -> Path:
    target = tmp_path / "__cluster_metadata-0"
    shutil.copytree(pristine[0], target)
    return target


def _segments(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.log"))


def _headers(path: Path) -> list[tuple[int, int, int]]:
    """(position, base offset, size) of each batch in a segment file."""
    return [(pos, h.base_offset, h.size_in_bytes) for pos, h in iter_batch_headers(path.read_bytes())]


def _assert_prefix_intact_and_appendable(log: FileLog, everything: bytes, end: int) -> None:
    assert log.end_offset() == end
    data = log.read(0, 1 << 30)
    assert everything.startswith(data)
    assert sum(b.header.last_offset_delta + 1 for b in iter_batches(data)) == end
    info = log.append_as_leader(build_batch([SimpleRecord(value=b"after")]), epoch=5)
    assert info.first_offset == end
    log.flush()
    log.close()
    again = FileLog(log.directory, segment_bytes=SEGMENT_BYTES)
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
        log = FileLog(directory, segment_bytes=SEGMENT_BYTES)
        kept = whole[-1][0] + whole[-1][2] if whole else 0
        if cut == kept:
            assert not log.recovery_report.truncated_tails
        else:
            (tail,) = log.recovery_report.truncated_tails
            assert (tail.file.name, tail.position, tail.bytes_dropped) == (last.name, kept, cut - kept)
        assert (directory / last.name).stat().st_size == kept
        _assert_prefix_intact_and_appendable(log, pristine[1], end)


def _last_delta(path: Path, position: int) -> int:
    for pos, header in iter_batch_headers(path.read_bytes()):
        if pos == position:
            return header.last_offset_delta
    raise AssertionError(position)


def test_garbage_after_the_last_batch_is_cut(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    for n, garbage in enumerate([b"\x00" * 4096, bytes(random.Random(3).randrange(256) for _ in range(300))]):
        directory = _copy(pristine, tmp_path / str(n))
        last = _segments(directory)[-1]
        size = last.stat().st_size
        with open(last, "ab") as f:
            f.write(garbage)
        log = FileLog(directory, segment_bytes=SEGMENT_BYTES)
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
        log = FileLog(directory, segment_bytes=SEGMENT_BYTES)
        (tail,) = log.recovery_report.truncated_tails
        assert tail.position == pos
        _assert_prefix_intact_and_appendable(log, pristine[1], base)


def test_a_flipped_byte_before_valid_batches_refuses_to_start(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    segments = _segments(pristine[0])
    rng = random.Random(9)
    cases = []
    for seg in segments:
        headers = _headers(seg)
        # In non-last segments every batch counts; in the last one all but its last batch.
        candidates = range(len(headers)) if seg != segments[-1] else range(len(headers) - 1)
        for which in rng.sample(list(candidates), 3):
            cases += [(seg.name, headers[which][0], flip) for flip in _flip_positions(headers, which, rng, 8)]
    for n, (name, batch_pos, flip) in enumerate(cases):
        directory = _copy(pristine, tmp_path / str(n))
        _flip(directory / name, flip)
        before = (directory / name).read_bytes()
        with pytest.raises(StorageError) as info:
            FileLog(directory, segment_bytes=SEGMENT_BYTES)
        message = str(info.value)
        assert name in message and f"position {batch_pos}" in message, (flip, message)
        assert (directory / name).read_bytes() == before  # refusing changes nothing


def _flip(path: Path, position: int) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_a_torn_non_last_segment_refuses_to_start(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    directory = _copy(pristine, tmp_path)
    first = _segments(directory)[0]
    with open(first, "r+b") as f:
        f.truncate(first.stat().st_size - 10)
    with pytest.raises(StorageError, match=first.name):
        FileLog(directory, segment_bytes=SEGMENT_BYTES)


def test_a_missing_middle_segment_refuses_to_start(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    directory = _copy(pristine, tmp_path)
    os.unlink(_segments(directory)[1])
    with pytest.raises(StorageError, match="ends before offset"):
        FileLog(directory, segment_bytes=SEGMENT_BYTES)


def test_a_missing_first_segment_without_snapshot_refuses_to_start(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    directory = _copy(pristine, tmp_path)
    os.unlink(_segments(directory)[0])
    with pytest.raises(StorageError, match="missing data"):
        FileLog(directory, segment_bytes=SEGMENT_BYTES)


def test_epoch_cache_is_rebuilt_when_the_checkpoint_is_missing_garbage_or_ahead(
    pristine: tuple[Path, bytes], tmp_path: Path
) -> None:
    reference = FileLog(_copy(pristine, tmp_path / "ref"), segment_bytes=SEGMENT_BYTES)
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
        log = FileLog(directory, segment_bytes=SEGMENT_BYTES)
        assert log.recovery_report.epoch_cache_rebuilt, name
        assert log.epoch_entries() == expected
        log.close()
        # The rewritten checkpoint is now trusted.
        assert FileLog(directory, segment_bytes=SEGMENT_BYTES).recovery_report.clean


def test_leftover_part_and_deleted_files_are_removed_at_open(tmp_path: Path) -> None:
    directory = tmp_path / "__cluster_metadata-0"
    log = FileLog(directory)
    log.append_as_leader(build_batch([SimpleRecord(value=b"a")]), epoch=1)
    log.flush()
    writer = log.create_new_snapshot(OffsetAndEpoch(1, 1))
    assert writer is not None
    writer.append(b"half written")
    part = writer.part_path
    log.crash()
    leftovers = [
        part,
        directory / "00000000000000000000-0000000000.checkpoint.deleted",
        directory / (segment_file_name(0) + ".deleted"),
        directory / (CHECKPOINT_FILE + ".tmp"),
    ]
    for path in leftovers[1:]:
        path.write_bytes(b"x")
    log = FileLog(directory)
    assert sorted(log.recovery_report.removed_files) == sorted(leftovers)
    assert not any(p.exists() for p in leftovers)
    assert log.latest_snapshot_id() is None
    assert log.end_offset() == 1


def test_a_snapshot_ahead_of_the_log_replaces_it_at_open(tmp_path: Path) -> None:
    # A follower that crashed after downloading a snapshot but before truncating its log.
    directory = tmp_path / "__cluster_metadata-0"
    log = FileLog(directory)
    log.append_as_follower(build_batch([SimpleRecord(value=b"a")], partition_leader_epoch=1), epoch=1)
    log.flush()
    writer = FileRawSnapshotWriter(directory, OffsetAndEpoch(50, 4))
    writer.append(b"downloaded")
    writer.freeze()
    log.close()
    log = FileLog(directory)
    assert log.recovery_report.truncated_to_snapshot == OffsetAndEpoch(50, 4)
    assert (log.start_offset(), log.end_offset(), log.last_fetched_epoch()) == (50, 50, 4)
    assert [p.name for p in log.segment_paths()] == [segment_file_name(50)]


def test_reopen_after_clean_shutdown_reports_nothing(pristine: tuple[Path, bytes], tmp_path: Path) -> None:
    log = FileLog(_copy(pristine, tmp_path), segment_bytes=SEGMENT_BYTES)
    assert log.recovery_report.clean
    assert log.read(0, 1 << 30) == pristine[1]
    assert log.last_flushed_offset() == log.end_offset()
    assert log.epoch_entries()[0] == EpochEntry(1, 0)
