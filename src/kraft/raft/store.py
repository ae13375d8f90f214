"""Durable election state (epoch, leader, vote): the ``ElectionStore`` Protocol and its memory twin.

``kraft.storage.quorum_state_file.FileQuorumStateStore`` writes the Kafka ``quorum-state`` JSON file
(temp file, fsync, rename, fsync directory). ``write`` must be durable when it returns: the core
sends nothing that depends on the new state before then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kraft.raft.types import ReplicaKey


@dataclass(frozen=True, slots=True)
class ElectionState:
    """What survives a restart: the epoch and who this node knows as leader or voted for."""

    epoch: int
    leader_id: int | None = None
    voted_key: ReplicaKey | None = None

    @staticmethod
    def initial() -> ElectionState:
        return ElectionState(epoch=0)


class ElectionStore(Protocol):
    def read(self) -> ElectionState | None:
        """The last written state, or ``None`` if never written. Corruption raises ``StorageError``."""
        ...

    def write(self, state: ElectionState) -> None:
        """Durably replace the state."""
        ...


class MemoryElectionStore:
    """In-memory ``ElectionStore``; writes are durable at once (the simulator's disk model may wrap it)."""

    def __init__(self, state: ElectionState | None = None) -> None:
        self._state = state
        self.writes = 0

    def read(self) -> ElectionState | None:
        return self._state

    def write(self, state: ElectionState) -> None:
        self._state = state
        self.writes += 1
