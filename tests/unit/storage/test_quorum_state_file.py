"""The quorum-state file: exact bytes per version, strict reading, atomic replacement."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from kraft.common.errors import StorageError
from kraft.common.uuids import uuid_from_base64
from kraft.raft.store import ElectionState
from kraft.raft.types import ReplicaKey
from kraft.storage import fsutil
from kraft.storage.quorum_state_file import FileQuorumStateStore, decode_quorum_state

DIR_ID = uuid_from_base64("J8aAPcfLQt2bqs1JT_rMgQ")


def test_missing_file_reads_as_never_written(tmp_path: Path) -> None:
    assert FileQuorumStateStore(tmp_path / "quorum-state").read() is None


def test_v1_matches_the_spec_example_byte_for_byte(tmp_path: Path) -> None:
    store = FileQuorumStateStore(tmp_path / "quorum-state", version=1)
    state = ElectionState(epoch=2, voted_key=ReplicaKey(1, DIR_ID))
    store.write(state)
    assert (tmp_path / "quorum-state").read_bytes() == (
        b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}'
    )
    assert store.read() == state


def test_v0_writes_the_legacy_fields_and_drops_the_directory_id(tmp_path: Path) -> None:
    store = FileQuorumStateStore(tmp_path / "quorum-state", version=0, voters=[1, 2, 3])
    store.write(ElectionState(epoch=7, leader_id=3, voted_key=ReplicaKey(3, DIR_ID)))
    content = (tmp_path / "quorum-state").read_bytes()
    assert content == (
        b'{"clusterId":"","leaderId":3,"leaderEpoch":7,"votedId":3,"appliedOffset":0,'
        b'"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}'
    )
    assert store.read() == ElectionState(epoch=7, leader_id=3, voted_key=ReplicaKey(3))


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize(
    "state",
    [
        ElectionState.initial(),
        ElectionState(epoch=5, leader_id=2),
        ElectionState(epoch=6, voted_key=ReplicaKey(4, DIR_ID)),
        ElectionState(epoch=2**31 - 1, leader_id=1, voted_key=ReplicaKey(1)),
    ],
)
def test_round_trip(tmp_path: Path, version: int, state: ElectionState) -> None:
    store = FileQuorumStateStore(tmp_path / "quorum-state", version=version)
    store.write(state)
    read = store.read()
    assert read is not None
    expected_key = state.voted_key
    if version == 0 and expected_key is not None:
        expected_key = ReplicaKey(expected_key.id)
    assert read == ElectionState(epoch=state.epoch, leader_id=state.leader_id, voted_key=expected_key)
    # A reader of the other version's store reads it too.
    assert FileQuorumStateStore(tmp_path / "quorum-state", version=1 - version).read() == read


def test_reads_kafka_v0_file_with_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    path.write_bytes(
        b'{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,'
        b'"currentVoters":null,"data_version":0}\n'
    )
    assert FileQuorumStateStore(path).read() == ElectionState(epoch=3, leader_id=1)


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        (b"", "not valid JSON"),
        (b"\x00\x01garbage", "not valid JSON"),
        (b'{"leaderId":-1,"leaderEpoch":2', "not valid JSON"),
        (b"[1,2]", "expected a JSON object"),
        (b'{"leaderId":-1,"leaderEpoch":2,"votedId":-1}', "missing 'data_version'"),
        (b'{"leaderId":-1,"leaderEpoch":2,"votedId":-1,"data_version":2}', "unsupported data_version 2"),
        (b'{"leaderId":-1,"leaderEpoch":2,"votedId":-1,"data_version":-1}', "unsupported data_version"),
        (b'{"leaderId":-1,"leaderEpoch":2,"votedId":-1,"data_version":"0"}', "unsupported data_version"),
        (b'{"leaderId":-1,"votedId":-1,"data_version":0}', "missing field 'leaderEpoch'"),
        (b'{"leaderId":-1,"leaderEpoch":"2","votedId":-1,"data_version":0}', "'leaderEpoch' must be"),
        (b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,"data_version":1}', "votedDirectoryId"),
        (
            b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"xyz","data_version":1}',
            "votedDirectoryId",
        ),
    ],
)
def test_corrupt_files_are_errors_never_a_reset(tmp_path: Path, content: bytes, complaint: str) -> None:
    path = tmp_path / "quorum-state"
    path.write_bytes(content)
    with pytest.raises(StorageError, match=complaint) as info:
        FileQuorumStateStore(path).read()
    assert str(path) in str(info.value)


def test_decode_reports_the_version_it_read() -> None:
    _, version = decode_quorum_state(b'{"leaderId":-1,"leaderEpoch":0,"votedId":-1,"data_version":0}')
    assert version == 0


def _fail(*_args: object, **_kwargs: object) -> None:
    raise OSError("injected failure")


@pytest.mark.parametrize("target", ["replace", "fsync"])
def test_a_failed_write_leaves_the_old_state_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    path = tmp_path / "quorum-state"
    store = FileQuorumStateStore(path, version=1)
    old = ElectionState(epoch=4, leader_id=2)
    store.write(old)
    before = path.read_bytes()
    monkeypatch.setattr(fsutil.os, target, _fail)
    with pytest.raises(OSError, match="injected"):
        store.write(ElectionState(epoch=5, voted_key=ReplicaKey(1)))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert store.read() == old
    assert sorted(os.listdir(tmp_path)) == ["quorum-state"]


def test_written_file_is_one_json_line_without_newline(tmp_path: Path) -> None:
    store = FileQuorumStateStore(tmp_path / "quorum-state", version=1)
    store.write(ElectionState(epoch=1, leader_id=1, voted_key=ReplicaKey(1, uuid.UUID(int=5))))
    content = (tmp_path / "quorum-state").read_bytes()
    assert b"\n" not in content
    assert json.loads(content)["data_version"] == 1
