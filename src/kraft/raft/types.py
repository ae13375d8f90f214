"""Value types the consensus core shares with its shells."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import NewType

from kraft.common.fast_init import speed_up_inits
from kraft.common.uuids import ZERO_UUID

NodeId = NewType("NodeId", int)
Epoch = NewType("Epoch", int)

NO_LEADER = -1

# The replicated partition: topic __cluster_metadata, partition 0, with a fixed topic id.
METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
METADATA_TOPIC_ID = uuid.UUID(int=1)


@dataclass(frozen=True, slots=True, order=True)
class OffsetAndEpoch:
    """A log position: ``offset`` with the epoch of the entry before it (or a snapshot id)."""

    offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class ReplicaKey:
    """A replica's identity: node id and metadata log directory id (zero = unknown, matches any)."""

    id: int
    directory_id: uuid.UUID = ZERO_UUID

    def matches(self, other: ReplicaKey) -> bool:
        if self.id != other.id:
            return False
        return (
            self.directory_id == ZERO_UUID
            or other.directory_id == ZERO_UUID
            or self.directory_id == other.directory_id
        )


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A listener: ``name`` is the listener name (e.g. CONTROLLER)."""

    name: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    leader_id: int | None
    epoch: int


# Built on every fetch and append: see kraft.common.fast_init.
speed_up_inits(OffsetAndEpoch, ReplicaKey, LeaderAndEpoch)
