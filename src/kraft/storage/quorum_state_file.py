"""``FileQuorumStateStore``: the ``quorum-state`` file (spec section 2), an ``ElectionStore``.

One line of JSON, no trailing newline, in the partition directory. Written through
``atomic_write`` (``quorum-state.tmp``, fsync, rename, directory fsync), so ``write`` is durable
when it returns and a crash leaves the old or the new state, never a mix.

Versions: 0 (static voters; legacy ``clusterId``, ``appliedOffset``, ``currentVoters`` fields) and 1
(adds ``votedDirectoryId``). Both are read; the version written is a constructor choice. A missing
or unknown ``data_version``, unparsable JSON, or a missing/mistyped field is a ``StorageError``:
the node must not silently start over at epoch 0 and vote twice in an epoch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kraft.common.errors import StorageError
from kraft.common.uuids import ZERO_UUID, uuid_from_base64, uuid_to_base64
from kraft.raft.store import ElectionState
from kraft.raft.types import NO_LEADER, ReplicaKey
from kraft.storage.fsutil import atomic_write

QUORUM_STATE_FILE = "quorum-state"
NOT_VOTED = -1
SUPPORTED_VERSIONS = (0, 1)


def encode_quorum_state(state: ElectionState, version: int, voters: Sequence[int] | None = None) -> bytes:
    """The file content for ``state`` at ``version`` (keys in Kafka's order)."""
    leader_id = NO_LEADER if state.leader_id is None else state.leader_id
    voted_id = NOT_VOTED if state.voted_key is None else state.voted_key.id
    data: dict[str, Any]
    if version == 0:
        data = {
            "clusterId": "",
            "leaderId": leader_id,
            "leaderEpoch": state.epoch,
            "votedId": voted_id,
            "appliedOffset": 0,
            "currentVoters": None if voters is None else [{"voterId": v} for v in voters],
            "data_version": 0,
        }
    elif version == 1:
        directory_id = ZERO_UUID if state.voted_key is None else state.voted_key.directory_id
        data = {
            "leaderId": leader_id,
            "leaderEpoch": state.epoch,
            "votedId": voted_id,
            "votedDirectoryId": uuid_to_base64(directory_id),
            "data_version": 1,
        }
    else:
        raise ValueError(f"unsupported quorum-state version {version}")
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


def _int_field(data: dict[str, Any], key: str, source: str) -> int:
    if key not in data:
        raise StorageError(f"{source}: missing field '{key}'")
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or not -(2**31) <= value < 2**31:
        raise StorageError(f"{source}: field '{key}' must be a 32-bit integer, got {value!r}")
    return value


def decode_quorum_state(content: bytes, *, source: str = QUORUM_STATE_FILE) -> tuple[ElectionState, int]:
    """Parse the file's first line; returns (state, data_version).

    Raises:
        StorageError: naming ``source`` and what is wrong.
    """
    first_line = content.split(b"\n", 1)[0]
    try:
        data = json.loads(first_line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StorageError(f"{source}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise StorageError(f"{source}: expected a JSON object, got {type(data).__name__}")
    if "data_version" not in data:
        raise StorageError(f"{source}: missing 'data_version'")
    version = data["data_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version not in SUPPORTED_VERSIONS:
        raise StorageError(f"{source}: unsupported data_version {version!r} (supported: 0..1)")
    epoch = _int_field(data, "leaderEpoch", source)
    leader_id = _int_field(data, "leaderId", source)
    voted_id = _int_field(data, "votedId", source)
    if epoch < 0:
        raise StorageError(f"{source}: negative leaderEpoch {epoch}")
    directory_id = ZERO_UUID
    if version == 1:
        raw = data.get("votedDirectoryId")
        if not isinstance(raw, str):
            raise StorageError(
                f"{source}: field 'votedDirectoryId' must be a base64 UUID string, got {raw!r}"
            )
        try:
            directory_id = uuid_from_base64(raw)
        except ValueError as e:
            raise StorageError(f"{source}: field 'votedDirectoryId': {e}") from None
    state = ElectionState(
        epoch=epoch,
        leader_id=None if leader_id == NO_LEADER else leader_id,
        voted_key=None if voted_id == NOT_VOTED else ReplicaKey(voted_id, directory_id),
    )
    return state, version


class FileQuorumStateStore:
    """``ElectionStore`` on a ``quorum-state`` file.

    Args:
        path: the file (normally ``<partition dir>/quorum-state``).
        version: the ``data_version`` to write: 0 for static voters (kraft.version 0), 1 with
            directory ids (kraft.version 1).
        voters: for version 0, the voter ids written as ``currentVoters`` (``null`` if ``None``).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, version: int = 0, voters: Sequence[int] | None = None
    ) -> None:
        if version not in SUPPORTED_VERSIONS:
            raise ValueError(f"unsupported quorum-state version {version}")
        self._path = Path(path)
        self._version = version
        self._voters = None if voters is None else tuple(voters)

    @property
    def path(self) -> Path:
        return self._path

    def read(self) -> ElectionState | None:
        try:
            content = self._path.read_bytes()
        except FileNotFoundError:
            return None
        state, _ = decode_quorum_state(content, source=str(self._path))
        return state

    def write(self, state: ElectionState) -> None:
        atomic_write(self._path, encode_quorum_state(state, self._version, self._voters))

    def clear(self) -> None:
        """Delete the file (tests and tools)."""
        self._path.unlink(missing_ok=True)
