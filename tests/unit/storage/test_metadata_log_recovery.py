"""MetadataLog recovery at open: what the snapshots add to the segment log's recovery.

The segment-level rules (torn tails cut and reported, corruption refused, the epoch checkpoint
reconciled) are tested on ``SegmentLog`` itself, in test_segment_log.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kraft.common.errors import StorageError
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch
from kraft.storage.epoch_cache import CHECKPOINT_FILE
from kraft.storage.log_dir import metadata_partition_dir
from kraft.storage.metadata_log import MetadataLog
from kraft.storage.segment_log import segment_file_name
from kraft.storage.snapshots import FileRawSnapshotWriter


def _batch(value: bytes = b"v" * 40) -> bytes:
    return build_batch([SimpleRecord(value=value)])


def test_a_missing_first_segment_without_snapshot_refuses_to_start(tmp_path: Path) -> None:
    directory = metadata_partition_dir(tmp_path)
    log = MetadataLog(directory, segment_bytes=100)  # one batch per segment
    for _ in range(3):
        log.append_as_leader(_batch(), epoch=1)
    log.flush()
    log.close()
    os.unlink(directory / segment_file_name(0))
    with pytest.raises(StorageError, match="missing data"):
        MetadataLog(directory, segment_bytes=100)


def test_leftover_part_and_deleted_files_are_removed_at_open(tmp_path: Path) -> None:
    directory = metadata_partition_dir(tmp_path)
    log = MetadataLog(directory)
    log.append_as_leader(_batch(b"a"), epoch=1)
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
    log = MetadataLog(directory)
    assert sorted(log.recovery_report.removed_files) == sorted(leftovers)
    assert not log.recovery_report.clean
    assert not any(p.exists() for p in leftovers)
    assert log.latest_snapshot_id() is None
    assert log.end_offset() == 1


def test_a_snapshot_ahead_of_the_log_replaces_it_at_open(tmp_path: Path) -> None:
    # A follower that crashed after downloading a snapshot but before truncating its log.
    directory = metadata_partition_dir(tmp_path)
    log = MetadataLog(directory)
    log.append_as_follower(build_batch([SimpleRecord(value=b"a")], partition_leader_epoch=1), epoch=1)
    log.flush()
    writer = FileRawSnapshotWriter(directory, OffsetAndEpoch(50, 4))
    writer.append(b"downloaded")
    writer.freeze()
    log.close()
    log = MetadataLog(directory)
    assert log.recovery_report.truncated_to_snapshot == OffsetAndEpoch(50, 4)
    assert not log.recovery_report.clean
    assert (log.start_offset(), log.end_offset(), log.last_fetched_epoch()) == (50, 50, 4)
    assert [p.name for p in log.segment_paths()] == [segment_file_name(50)]


def test_a_directory_with_a_snapshot_and_no_segment_begins_the_log_at_the_snapshot(tmp_path: Path) -> None:
    directory = metadata_partition_dir(tmp_path)
    directory.mkdir(parents=True)
    writer = FileRawSnapshotWriter(directory, OffsetAndEpoch(50, 0))
    writer.append(b"copied in")
    writer.freeze()
    log = MetadataLog(directory)
    # Not ahead of a log that begins at it: nothing replaced, nothing to report.
    assert log.recovery_report.truncated_to_snapshot is None
    assert (log.start_offset(), log.end_offset()) == (50, 50)
    assert [p.name for p in log.segment_paths()] == [segment_file_name(50)]
    assert log.append_as_leader(_batch(), epoch=1).first_offset == 50
