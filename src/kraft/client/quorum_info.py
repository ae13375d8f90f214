"""What DescribeQuorum says about the quorum, as plain values, and its text renderings.

``QuorumInfo.from_response`` turns a decoded DescribeQuorum response (any version) into the
admin-facing shape Kafka's ``QuorumInfo`` has; ``format_status``, ``format_replication`` and
``to_json`` render it the way ``kafka-metadata-quorum describe`` does (spec raft.md section 9).
The renderers are pure: the caller passes the current time, so tests can use golden text.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kraft.common.uuids import ZERO_UUID, uuid_to_base64
from kraft.raft.types import Endpoint


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    """One voter or observer as the leader sees it; ``None`` timestamps are Kafka's -1 (unknown)."""

    replica_id: int
    directory_id: uuid.UUID
    log_end_offset: int
    last_fetch_timestamp_ms: int | None
    last_caught_up_timestamp_ms: int | None


@dataclass(frozen=True, slots=True)
class QuorumInfo:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaInfo, ...]
    observers: tuple[ReplicaInfo, ...]
    # node id -> listeners, from the v2 ``Nodes`` field (empty for v0/v1 responses)
    nodes: dict[int, tuple[Endpoint, ...]] = field(default_factory=dict)

    @staticmethod
    def from_partition(partition: Any, nodes: Sequence[Any] = ()) -> QuorumInfo:
        """Builds from a decoded ``PartitionData`` with ErrorCode 0 and the response's ``Nodes``."""

        def replica(state: Any) -> ReplicaInfo:
            last_fetch = state.last_fetch_timestamp
            caught_up = state.last_caught_up_timestamp
            return ReplicaInfo(
                replica_id=state.replica_id,
                directory_id=state.replica_directory_id,
                log_end_offset=state.log_end_offset,
                last_fetch_timestamp_ms=None if last_fetch < 0 else last_fetch,
                last_caught_up_timestamp_ms=None if caught_up < 0 else caught_up,
            )

        return QuorumInfo(
            leader_id=partition.leader_id,
            leader_epoch=partition.leader_epoch,
            high_watermark=partition.high_watermark,
            voters=tuple(replica(v) for v in partition.current_voters),
            observers=tuple(replica(o) for o in partition.observers),
            nodes={
                n.node_id: tuple(Endpoint(lst.name, lst.host, lst.port) for lst in n.listeners) for n in nodes
            },
        )

    def leader(self) -> ReplicaInfo:
        """The leader's own voter entry.

        Raises:
            ValueError: the response names a leader that is not among the voters (a broken
                server; Kafka's tool would fail the same way on ``Optional.get``).
        """
        for voter in self.voters:
            if voter.replica_id == self.leader_id:
                return voter
        raise ValueError(f"leader {self.leader_id} is not among the current voters {self.voter_ids()}")

    def voter_ids(self) -> list[int]:
        return [v.replica_id for v in self.voters]

    def max_follower_lag(self) -> tuple[int, int]:
        """(MaxFollowerLag, MaxFollowerLagTimeMs) as kafka-metadata-quorum computes them.

        The most lagging voter is the one with the smallest LogEndOffset, the first on ties; its
        lag time is 0 if it is the leader, else the difference of the two caught-up timestamps
        when both are known, else -1.
        """
        leader = self.leader()
        laggard = min(self.voters, key=lambda v: v.log_end_offset)  # min() keeps the first on ties
        lag = leader.log_end_offset - laggard.log_end_offset
        if laggard.replica_id == leader.replica_id:
            lag_time_ms = 0
        elif (leader_caught_up := leader.last_caught_up_timestamp_ms) is not None and (
            laggard_caught_up := laggard.last_caught_up_timestamp_ms
        ) is not None:
            lag_time_ms = leader_caught_up - laggard_caught_up
        else:
            lag_time_ms = -1
        return lag, lag_time_ms


# ---------------------------------------------------------------------------------------------------
# Renderings


def _directory_or_none(replica: ReplicaInfo) -> str | None:
    return None if replica.directory_id == ZERO_UUID else uuid_to_base64(replica.directory_id)


def _replica_object(info: QuorumInfo, replica: ReplicaInfo) -> str:
    # Written by hand, not json.dumps: the tool's text has this exact spacing and key order.
    directory_id = _directory_or_none(replica)
    directory = "null" if directory_id is None else f'"{directory_id}"'
    text = f'{{"id": {replica.replica_id}, "directoryId": {directory}'
    endpoints = info.nodes.get(replica.replica_id, ())
    if endpoints:
        text += ', "endpoints": [' + ", ".join(f'"{e}"' for e in endpoints) + "]"
    return text + "}"


def _replica_list(info: QuorumInfo, replicas: Sequence[ReplicaInfo]) -> str:
    return "[" + ", ".join(_replica_object(info, r) for r in replicas) + "]"


def format_status(cluster_id: str, info: QuorumInfo) -> str:
    """The eight ``--status`` lines (no trailing newline); labels padded to 24 characters."""
    lag, lag_time_ms = info.max_follower_lag()
    rows = [
        ("ClusterId:", cluster_id),
        ("LeaderId:", str(info.leader_id)),
        ("LeaderEpoch:", str(info.leader_epoch)),
        ("HighWatermark:", str(info.high_watermark)),
        ("MaxFollowerLag:", str(lag)),
        ("MaxFollowerLagTimeMs:", str(lag_time_ms)),
        ("CurrentVoters:", _replica_list(info, info.voters)),
        ("CurrentObservers:", _replica_list(info, info.observers)),
    ]
    return "\n".join(f"{label:<24}{value}" for label, value in rows)


REPLICATION_HEADERS = (
    "NodeId",
    "DirectoryId",
    "LogEndOffset",
    "Lag",
    "LastFetchTimestamp",
    "LastCaughtUpTimestamp",
    "Status",
)


class ClockDriftError(ValueError):
    """A timestamp from the leader lies in the future of (or before the epoch of) the local clock."""


def relative_time_ms(timestamp_ms: int, now_ms: int, what: str) -> int:
    """``now_ms - timestamp_ms``, refusing timestamps the local clock cannot explain (as Kafka does)."""
    if not 0 < timestamp_ms <= now_ms:
        raise ClockDriftError(
            "Error while computing relative time, possible drift in system clock.\n"
            f"Current timestamp is {now_ms}, {what} timestamp is {timestamp_ms}"
        )
    return now_ms - timestamp_ms


def replication_rows(info: QuorumInfo, now_ms: int, human_readable: bool) -> list[list[str]]:
    """Rows in the tool's order: the leader, the other voters in response order, the observers."""
    leader = info.leader()

    def timestamp(value: int | None, what: str) -> str:
        if value is None:
            return "-1"
        if human_readable:
            return f"{relative_time_ms(value, now_ms, what)} ms ago"
        return str(value)

    def row(replica: ReplicaInfo, status: str) -> list[str]:
        return [
            str(replica.replica_id),
            uuid_to_base64(replica.directory_id),
            str(replica.log_end_offset),
            str(leader.log_end_offset - replica.log_end_offset),
            timestamp(replica.last_fetch_timestamp_ms, "last fetch"),
            timestamp(replica.last_caught_up_timestamp_ms, "last caught up"),
            status,
        ]

    rows = [row(leader, "Leader")]
    rows += [row(v, "Follower") for v in info.voters if v.replica_id != info.leader_id]
    rows += [row(o, "Observer") for o in info.observers]
    return rows


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Kafka's ``prettyPrintTable``: cells left-justified to the column width, each followed by a TAB."""
    widths = [len(h) for h in headers]
    for r in rows:
        for i, cell in enumerate(r):
            widths[i] = max(widths[i], len(cell))
    lines = ["".join(f"{cell:<{widths[i]}}\t" for i, cell in enumerate(r)) for r in [list(headers), *rows]]
    return "\n".join(lines)


def format_replication(info: QuorumInfo, now_ms: int, human_readable: bool = False) -> str:
    """The ``--replication`` table (no trailing newline)."""
    return format_table(REPLICATION_HEADERS, replication_rows(info, now_ms, human_readable))


def _replica_json(info: QuorumInfo, replica: ReplicaInfo, leader_leo: int) -> dict[str, Any]:
    return {
        "id": replica.replica_id,
        "directoryId": _directory_or_none(replica),
        "endpoints": [str(e) for e in info.nodes.get(replica.replica_id, ())],
        "logEndOffset": replica.log_end_offset,
        "lag": leader_leo - replica.log_end_offset,
        "lastFetchTimestamp": replica.last_fetch_timestamp_ms,
        "lastCaughtUpTimestamp": replica.last_caught_up_timestamp_ms,
    }


def to_json(cluster_id: str | None, info: QuorumInfo, now_ms: int) -> dict[str, Any]:
    """Everything ``--status`` and ``--replication`` show, as one JSON-ready object (unknown = null)."""
    leader_leo = info.leader().log_end_offset
    lag, lag_time_ms = info.max_follower_lag()
    return {
        "clusterId": cluster_id,
        "leaderId": info.leader_id,
        "leaderEpoch": info.leader_epoch,
        "highWatermark": info.high_watermark,
        "maxFollowerLag": lag,
        "maxFollowerLagTimeMs": lag_time_ms,
        "currentVoters": [_replica_json(info, v, leader_leo) for v in info.voters],
        "currentObservers": [_replica_json(info, o, leader_leo) for o in info.observers],
        "nowMs": now_ms,
    }
