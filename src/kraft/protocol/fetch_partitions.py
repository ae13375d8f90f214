"""Fetch bodies as flat lists of typed per-partition entries, at any version.

A Fetch request or response names topics (by name up to v12, by topic id from v13, KIP-516) each
holding partitions. Every reader of Fetch wants the same thing from it: one entry per partition, in
wire order, with the topic it belongs to and the fields that version carries (fields a version
lacks hold Kafka's defaults: -1 for epochs and offsets). ``fetch_request_partitions`` and
``fetch_response_partitions`` give exactly that, for the raft listener (which then wants
``__cluster_metadata`` partition 0 alone) and for the consumer and follower fetches of a broker.

Pure functions of decoded wire bodies: no raft type, no I/O, nothing validated beyond what the
version says about topic names and ids (deciding which partitions are acceptable is the caller's).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from kraft.common.fast_init import speed_up_inits
from kraft.protocol.messages import fetch

# KIP-516: Fetch names topics by id from v13 on, by name before.
FIRST_TOPIC_ID_VERSION = 13


@dataclass(frozen=True, slots=True)
class FetchRequestPartition:
    """One partition a FetchRequest asks for; exactly one of ``topic_name``/``topic_id`` is set."""

    topic_name: str | None  # v0-12
    topic_id: uuid.UUID | None  # v13+
    partition: int
    fetch_offset: int
    last_fetched_epoch: int  # v12+, else -1
    current_leader_epoch: int  # v9+, else -1
    log_start_offset: int  # v5+, else -1 (set by followers only)
    partition_max_bytes: int
    replica_directory_id: uuid.UUID  # v17+ (KIP-853, tagged), else the zero UUID


@dataclass(frozen=True, slots=True)
class FetchResponsePartition:
    """One partition of a FetchResponse; exactly one of ``topic_name``/``topic_id`` is set.

    The tagged structs (v12+) are flattened: ``diverging_epoch``/``diverging_end_offset``,
    ``current_leader_id``/``current_leader_epoch`` and ``snapshot_end_offset``/``snapshot_epoch``
    are -1 where the response carries none.
    """

    topic_name: str | None  # v0-12
    topic_id: uuid.UUID | None  # v13+
    partition_index: int
    error_code: int
    high_watermark: int
    last_stable_offset: int  # v4+, else -1
    log_start_offset: int  # v5+, else -1
    diverging_epoch: int
    diverging_end_offset: int
    current_leader_id: int
    current_leader_epoch: int
    snapshot_end_offset: int
    snapshot_epoch: int
    aborted_transactions: tuple[tuple[int, int], ...] | None  # (producer id, first offset); v4+, null allowed
    preferred_read_replica: int  # v11+, else -1
    records: bytes | None


def fetch_request_partitions(body: fetch.FetchRequest, version: int) -> list[FetchRequestPartition]:
    """Every partition ``body`` (a FetchRequest decoded at ``version``) asks for, in wire order."""
    by_id = version >= FIRST_TOPIC_ID_VERSION
    out: list[FetchRequestPartition] = []
    for topic in body.topics:
        name = None if by_id else topic.topic
        topic_id = topic.topic_id if by_id else None
        for p in topic.partitions:
            out.append(
                FetchRequestPartition(  # (by position: one entry per partition of every Fetch)
                    name,
                    topic_id,
                    p.partition,
                    p.fetch_offset,
                    p.last_fetched_epoch,
                    p.current_leader_epoch,
                    p.log_start_offset,
                    p.partition_max_bytes,
                    p.replica_directory_id,
                )
            )
    return out


def fetch_response_partitions(body: fetch.FetchResponse, version: int) -> list[FetchResponsePartition]:
    """Every partition of ``body`` (a FetchResponse decoded at ``version``), in wire order."""
    by_id = version >= FIRST_TOPIC_ID_VERSION
    out: list[FetchResponsePartition] = []
    for topic in body.responses:
        name = None if by_id else topic.topic
        topic_id = topic.topic_id if by_id else None
        for p in topic.partitions:
            aborted = p.aborted_transactions
            diverging, leader, snapshot = p.diverging_epoch, p.current_leader, p.snapshot_id
            out.append(
                FetchResponsePartition(  # (by position: one entry per partition of every Fetch)
                    name,
                    topic_id,
                    p.partition_index,
                    p.error_code,
                    p.high_watermark,
                    p.last_stable_offset,
                    p.log_start_offset,
                    diverging.epoch,
                    diverging.end_offset,
                    leader.leader_id,
                    leader.leader_epoch,
                    snapshot.end_offset,
                    snapshot.epoch,
                    None if aborted is None else tuple([(a.producer_id, a.first_offset) for a in aborted]),
                    p.preferred_read_replica,
                    p.records,
                )
            )
    return out


# One entry per partition of every Fetch: see kraft.common.fast_init.
speed_up_inits(FetchRequestPartition, FetchResponsePartition)
