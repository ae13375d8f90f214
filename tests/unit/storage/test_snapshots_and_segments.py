"""Snapshot files and record-level snapshots; segment deletion behind snapshots; the epoch cache.

Roll, truncation and the epoch checkpoint file of the segments themselves: test_segment_log.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kraft.common.errors import KraftError, StorageError
from kraft.raft.listener import SnapshotWriter
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey
from kraft.raft.voters import VoterNode, VoterSet
from kraft.records.batch import SimpleRecord, build_batch, iter_batches
from kraft.records.control import ControlType
from kraft.storage.epoch_cache import (
    EpochEntry,
    LeaderEpochCache,
    decode_checkpoint,
    encode_checkpoint,
)
from kraft.storage.metadata_log import MetadataLog
from kraft.storage.segment_log import segment_file_name
from kraft.storage.snapshots import (
    FileRawSnapshotReader,
    FileRawSnapshotWriter,
    list_snapshots,
    parse_snapshot_file_name,
    read_snapshot_contents,
    snapshot_file_name,
    write_bootstrap_voters,
)


def _batch(value: bytes = b"v" * 40) -> bytes:
    return build_batch([SimpleRecord(value=value)])


def test_snapshot_file_names_follow_kafka() -> None:
    assert snapshot_file_name(OffsetAndEpoch(3000, 4)) == "00000000000000003000-0000000004.checkpoint"
    assert parse_snapshot_file_name("00000000000000003000-0000000004.checkpoint") == OffsetAndEpoch(3000, 4)
    assert parse_snapshot_file_name("00000000000000003000-0000000004-abc.checkpoint.part") is None
    assert parse_snapshot_file_name("00000000000000003000-0000000004.checkpoint.deleted") is None


def test_part_file_is_invisible_until_freeze_then_atomically_renamed(tmp_path: Path) -> None:
    writer = FileRawSnapshotWriter(tmp_path, OffsetAndEpoch(10, 2))
    writer.append(b"abc")
    assert writer.part_path.exists() and writer.part_path.name.endswith(".checkpoint.part")
    assert list_snapshots(tmp_path) == []
    writer.freeze()
    assert not writer.part_path.exists()
    assert list_snapshots(tmp_path) == [OffsetAndEpoch(10, 2)]
    reader = FileRawSnapshotReader(
        tmp_path / snapshot_file_name(OffsetAndEpoch(10, 2)), OffsetAndEpoch(10, 2)
    )
    assert reader.read(1, 10) == b"bc"
    # Frozen snapshots are immutable: freezing the same id again keeps the first file.
    again = FileRawSnapshotWriter(tmp_path, OffsetAndEpoch(10, 2))
    again.append(b"other")
    again.freeze()
    assert reader.read(0, 10) == b"abc"
    assert sorted(os.listdir(tmp_path)) == [snapshot_file_name(OffsetAndEpoch(10, 2))]


def test_a_failed_rename_leaves_no_snapshot_and_no_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = FileRawSnapshotWriter(tmp_path, OffsetAndEpoch(10, 2))
    writer.append(b"abc")

    def fail(*_args: object) -> None:
        raise OSError("injected")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="injected"):
        writer.freeze()
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_record_snapshot_has_header_data_and_footer(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path / "p")
    log.append_as_leader(_batch(), epoch=3)
    log.flush()
    raw = log.create_new_snapshot(OffsetAndEpoch(1, 3))
    assert raw is not None
    frozen: list[OffsetAndEpoch] = []
    writer = SnapshotWriter(raw, 1234, frozen.append, kraft_version=1)
    writer.append([b"a", b"b"])
    writer.append_batch(
        build_batch([SimpleRecord(value=b"c")], base_offset=500, partition_leader_epoch=9, timestamp_ms=77)
    )
    writer.freeze()
    assert frozen == [OffsetAndEpoch(1, 3)]
    reader = log.read_snapshot(OffsetAndEpoch(1, 3))
    assert reader is not None
    batches = list(iter_batches(reader.read(0, reader.size_in_bytes())))
    assert [b.is_control for b in batches] == [True, False, False, True]
    assert {b.partition_leader_epoch for b in batches} == {3}
    assert [b.base_offset for b in batches] == [0, 2, 4, 5]
    # The batches the writer builds carry the header's timestamp; an appended batch keeps its own.
    assert [b.header.max_timestamp for b in batches] == [1234, 1234, 77, 1234]
    contents = read_snapshot_contents(reader)
    assert contents.last_contained_log_timestamp_ms == 1234
    assert [kind for kind, _ in contents.header_records] == [ControlType.KRAFT_VERSION]
    assert [(r.offset, r.value) for r in contents.records] == [(2, b"a"), (3, b"b"), (4, b"c")]


def test_a_batch_that_is_not_one_whole_batch_is_refused(tmp_path: Path) -> None:
    writer = SnapshotWriter(FileRawSnapshotWriter(tmp_path, OffsetAndEpoch(1, 1)), 0)
    with pytest.raises(KraftError, match="one whole record batch"):
        writer.append_batch(_batch() + b"x")
    writer.abort()
    assert os.listdir(tmp_path) == []


def test_bootstrap_voters_need_kraft_version_1(tmp_path: Path) -> None:
    # The writer puts the KRaftVersionRecord and the VotersRecord in the header from kraft.version
    # 1 on only (as Kafka's RecordsSnapshotWriter): a level-0 checkpoint could not hold the voters.
    voters = VoterSet([VoterNode(ReplicaKey(1), (Endpoint("CONTROLLER", "h1", 9093),))])
    with pytest.raises(StorageError, match=r"kraft\.version 1 or later"):
        write_bootstrap_voters(tmp_path, voters, kraft_version=0)
    assert os.listdir(tmp_path) == []


def test_a_snapshot_without_footer_is_rejected(tmp_path: Path) -> None:
    raw = FileRawSnapshotWriter(tmp_path, OffsetAndEpoch(1, 1))
    SnapshotWriter(raw, 0)
    raw.freeze()  # published without SnapshotWriter.freeze(): no footer
    reader = FileRawSnapshotReader(tmp_path / snapshot_file_name(OffsetAndEpoch(1, 1)), OffsetAndEpoch(1, 1))
    with pytest.raises(StorageError, match="footer"):
        read_snapshot_contents(reader)


def test_delete_before_snapshot_removes_only_segments_wholly_below(tmp_path: Path) -> None:
    size = len(_batch())
    log = MetadataLog(tmp_path / "p", segment_bytes=3 * size)
    for _ in range(10):
        log.append_as_leader(_batch(), epoch=1)
    log.flush()
    for sid in (OffsetAndEpoch(2, 1), OffsetAndEpoch(7, 1)):
        raw = log.create_new_snapshot(sid)
        assert raw is not None
        raw.append(b"s")
        raw.freeze()
    assert log.delete_before_snapshot(OffsetAndEpoch(7, 1))
    # Segment [6, 9) holds offset 7 and stays; [0, 3) and [3, 6) are gone.
    assert [p.name for p in log.segment_paths()] == [segment_file_name(6), segment_file_name(9)]
    assert sorted(p.name for p in (tmp_path / "p").glob("*.checkpoint")) == [
        snapshot_file_name(OffsetAndEpoch(7, 1))
    ]
    assert log.epoch_entries() == (EpochEntry(1, 7),)
    log.close()
    reopened = MetadataLog(tmp_path / "p", segment_bytes=3 * size)
    assert (reopened.start_offset(), reopened.end_offset()) == (7, 10)


def test_delete_before_snapshot_at_the_log_end_leaves_one_empty_segment(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path / "p")
    for _ in range(3):
        log.append_as_leader(_batch(), epoch=2)
    log.flush()
    raw = log.create_new_snapshot(OffsetAndEpoch(3, 2))
    assert raw is not None
    raw.freeze()
    assert log.delete_before_snapshot(OffsetAndEpoch(3, 2))
    assert [p.name for p in log.segment_paths()] == [segment_file_name(3)]
    assert log.last_fetched_epoch() == 2
    log.append_as_leader(_batch(), epoch=2)
    assert log.end_offset() == 4


def test_read_below_the_start_offset_is_refused(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path / "p")
    log.append_as_leader(_batch(), epoch=1)
    log.append_as_leader(_batch(), epoch=1)
    log.flush()
    raw = log.create_new_snapshot(OffsetAndEpoch(1, 1))
    assert raw is not None
    raw.freeze()
    log.delete_before_snapshot(OffsetAndEpoch(1, 1))
    with pytest.raises(Exception, match="below the log start offset"):
        log.read(0, 100)


def test_epoch_cache_assign_and_truncation() -> None:
    cache = LeaderEpochCache()
    assert cache.assign(1, 0) and cache.assign(3, 10) and not cache.assign(3, 12)
    assert cache.assign(5, 10)  # a new leader at the same offset replaces epoch 3
    assert cache.entries == (EpochEntry(1, 0), EpochEntry(5, 10))
    assert cache.end_offset_for(1, 20, 0) == OffsetAndEpoch(10, 1)
    assert cache.end_offset_for(4, 20, 0) == OffsetAndEpoch(10, 1)
    assert cache.end_offset_for(5, 20, 0) == OffsetAndEpoch(20, 5)
    assert cache.truncate_from_end(10) and cache.entries == (EpochEntry(1, 0),)
    cache.assign(2, 5)
    assert cache.truncate_from_start(7) and cache.entries == (EpochEntry(2, 7),)
    assert cache.end_offset_for(1, 9, floor_epoch=2) == OffsetAndEpoch(7, 2)


@pytest.mark.parametrize(
    "text",
    [b"1\n0\n", b"0\n2\n1 0\n", b"0\n1\n1\n", b"0\n2\n2 5\n1 9\n", b"0\nx\n", b"0\n1\n-1 0\n"],
)
def test_bad_checkpoints_are_storage_errors(text: bytes) -> None:
    with pytest.raises(StorageError):
        decode_checkpoint(text)


def test_checkpoint_round_trip() -> None:
    entries = [EpochEntry(1, 0), EpochEntry(7, 100)]
    assert decode_checkpoint(encode_checkpoint(entries)) == entries
