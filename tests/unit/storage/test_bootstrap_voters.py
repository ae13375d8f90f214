"""The KIP-853 bootstrap checkpoint (0-0): Kafka's layout, round trips, and what the core reads."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecords

from kraft.common.errors import StorageError
from kraft.raft.listener import SnapshotReader
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey
from kraft.raft.voters import KRAFT_VERSION_1, VoterNode, VoterSet
from kraft.records.batch import iter_batches
from kraft.records.control import ControlType, control_records, voter_infos
from kraft.storage.log_dir import metadata_partition_dir
from kraft.storage.metadata_log import MetadataLog
from kraft.storage.snapshots import (
    BOOTSTRAP_SNAPSHOT_ID,
    bootstrap_voters_path,
    read_bootstrap_voters,
    read_snapshot_contents,
    write_bootstrap_voters,
)

DIR_1 = uuid.UUID(int=0x1111)
DIR_2 = uuid.UUID(int=0x2222)
VOTERS = VoterSet(
    [
        VoterNode(ReplicaKey(1, DIR_1), (Endpoint("CONTROLLER", "h1", 9093),)),
        VoterNode(ReplicaKey(2, DIR_2), (Endpoint("CONTROLLER", "h2", 9093),)),
    ]
)


def test_round_trip(tmp_path: Path) -> None:
    path = write_bootstrap_voters(tmp_path, VOTERS, timestamp_ms=5)
    assert path == tmp_path / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint"
    back = read_bootstrap_voters(tmp_path)
    assert back is not None
    assert back.kraft_version == KRAFT_VERSION_1
    assert back.voters == VOTERS


def test_layout_is_kafkas_header_kraft_version_voters_then_footer(tmp_path: Path) -> None:
    """Kafka's RecordsSnapshotWriter: one control batch with the header, KRaftVersionRecord and
    VotersRecord; freeze() appends the footer in its own control batch. Checked with kafka-python."""
    data = write_bootstrap_voters(tmp_path, VOTERS, timestamp_ms=1234).read_bytes()
    records = MemoryRecords(data)
    batches = []
    while records.has_next():
        batches.append(records.next_batch())
    assert records.valid_bytes() == len(data)
    assert [(b.base_offset, b.last_offset, b.is_control_batch) for b in batches] == [
        (0, 2, True),
        (3, 3, True),
    ]
    for b in batches:
        assert b.validate_crc() and b.leader_epoch == 0 and b.producer_id == -1
    keys = [r.key for r in batches[0]] + [r.key for r in batches[1]]
    # Control keys: version 0, then the type (3 header, 5 kraft.version, 6 voters, 4 footer).
    assert keys == [b"\x00\x00\x00\x03", b"\x00\x00\x00\x05", b"\x00\x00\x00\x06", b"\x00\x00\x00\x04"]
    header, kraft, voters = control_records(next(iter_batches(data)))
    assert header[0] is ControlType.SNAPSHOT_HEADER
    assert header[1].last_contained_log_timestamp == 1234
    assert kraft[0] is ControlType.KRAFT_VERSION and kraft[1].k_raft_version == 1
    assert voters[0] is ControlType.KRAFT_VOTERS
    assert [(v.voter_id, v.directory_id) for v in voter_infos(voters[1])] == [(1, DIR_1), (2, DIR_2)]


def test_the_core_reads_it_through_the_metadata_log(tmp_path: Path) -> None:
    write_bootstrap_voters(tmp_path, VOTERS)
    log = MetadataLog(metadata_partition_dir(tmp_path))
    try:
        assert log.latest_snapshot_id() == OffsetAndEpoch(0, 0)
        assert (log.start_offset(), log.end_offset()) == (0, 0)
        raw = log.read_snapshot(BOOTSTRAP_SNAPSHOT_ID)
        assert raw is not None
        contents = read_snapshot_contents(raw)
        kinds = [kind for kind, _ in contents.header_records]
        assert kinds == [ControlType.KRAFT_VERSION, ControlType.KRAFT_VOTERS]
        assert VoterSet.from_record(contents.header_records[1][1]) == VOTERS
        assert SnapshotReader.from_raw(raw).batches == ()  # no metadata records to replay
    finally:
        log.close()


def test_no_checkpoint_reads_as_none(tmp_path: Path) -> None:
    assert read_bootstrap_voters(tmp_path) is None


def test_an_existing_checkpoint_is_never_overwritten(tmp_path: Path) -> None:
    write_bootstrap_voters(tmp_path, VOTERS)
    with pytest.raises(StorageError, match="already exists"):
        write_bootstrap_voters(tmp_path, VOTERS.remove(ReplicaKey(2, DIR_2)) or VOTERS)
    back = read_bootstrap_voters(tmp_path)
    assert back is not None and back.voters == VOTERS


def test_an_empty_voter_set_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="must not be empty"):
        write_bootstrap_voters(tmp_path, VoterSet([]))
    assert not bootstrap_voters_path(tmp_path).exists()


def test_a_truncated_checkpoint_is_a_storage_error(tmp_path: Path) -> None:
    path = write_bootstrap_voters(tmp_path, VOTERS)
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(StorageError):
        read_bootstrap_voters(tmp_path)
