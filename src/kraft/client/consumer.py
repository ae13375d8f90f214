"""A small blocking consumer for the tools: assigned partitions, positions, Fetch from the leaders
(``kraft console-consumer``).

No consumer group: partitions are *assigned* (Kafka's ``assign``), and positions are kept here,
never committed. A partition's position starts unknown and is resolved on the next ``poll`` by
ListOffsets: earliest or latest after ``seek_to_beginning``/``seek_to_end`` (and, for a partition
with no position, as ``auto_offset_reset`` says), or set directly with ``seek``.

``poll(timeout_ms)`` sends one Fetch (v4-17 as the broker allows; topic ids from v13) to every
leader of an assigned partition, all written before any answer is read so that their long polls
(``fetch_max_wait_ms``) overlap, and returns the records at or past each position, skipping
control batches and advancing the position past every batch seen. It fetches again until a record
arrives or ``timeout_ms`` passes. Errors:

* ``STALE_METADATA_CODES`` (a leader moved, an epoch fenced) and dropped connections: the leader is
  looked up again and the next round asks it;
* OFFSET_OUT_OF_RANGE: the position is reset as ``auto_offset_reset`` says (``NONE``: ``DataError``);
* anything else, or a batch that does not decode: ``DataError``.

Read-committed consumers are bounded by the last stable offset, but aborted transactions are not
filtered out (kraft's brokers have no transactions yet).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Unpack

from kraft.client.broker_admin import ApiError
from kraft.client.connection import Address, ClientOptions, Connection, RetriableError
from kraft.client.data import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    STALE_METADATA_CODES,
    DataClient,
    DataError,
    ListedOffset,
    TopicPartition,
    Unreachable,
)
from kraft.common.errors import CorruptRecordError, RemoteProtocolError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import fetch as fetch_msg
from kraft.records.batch import Header, TimestampType, iter_batches

READ_UNCOMMITTED: Final = 0
READ_COMMITTED: Final = 1
_LAST_NAMED_TOPIC_VERSION: Final = 12  # Fetch v13 names topics by id (KIP-516)
# Fetch answers after which the partition is simply asked again (after a metadata refresh).
_FETCH_RETRY_CODES: Final = STALE_METADATA_CODES | {
    ErrorCode.OFFSET_NOT_AVAILABLE,
    ErrorCode.NETWORK_EXCEPTION,
}


class OffsetReset(enum.Enum):
    """Kafka's ``auto.offset.reset``: where a partition without a valid position starts."""

    EARLIEST = "earliest"
    LATEST = "latest"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    """One record as read: ``timestamp_ms`` is the batch's max timestamp for a LogAppendTime batch
    (as Kafka's consumer reports it), else the record's own."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    leader_epoch: int


class Consumer(DataClient):
    """See the module docstring.

    Args:
        bootstrap: broker addresses to start from.
        fetch_max_wait_ms, fetch_min_bytes, fetch_max_bytes, max_partition_fetch_bytes: Kafka's
            consumer settings of those names (Fetch's MaxWaitMs, MinBytes, MaxBytes and
            PartitionMaxBytes).
        isolation_level: ``READ_UNCOMMITTED`` or ``READ_COMMITTED``.
        auto_offset_reset: where a partition with no valid position starts.
        options: ``timeout_ms`` bounds the metadata and ListOffsets calls, ``request_timeout_ms``
            one request (it must exceed ``fetch_max_wait_ms``), and the rest of ``ClientOptions``.

    Raises:
        ValueError: a setting out of range.
    """

    def __init__(
        self,
        bootstrap: Sequence[Address],
        *,
        client_id: str = "kraft-consumer",
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 52_428_800,
        max_partition_fetch_bytes: int = 1_048_576,
        isolation_level: int = READ_UNCOMMITTED,
        auto_offset_reset: OffsetReset = OffsetReset.LATEST,
        **options: Unpack[ClientOptions],
    ) -> None:
        super().__init__(bootstrap, client_id=client_id, **options)
        if (
            fetch_max_wait_ms < 0
            or fetch_min_bytes < 0
            or fetch_max_bytes < 0
            or max_partition_fetch_bytes < 0
        ):
            raise ValueError("fetch sizes and fetch_max_wait_ms must be >= 0")
        if fetch_max_wait_ms >= self.request_timeout_ms:
            raise ValueError(
                f"request timeout ({self.request_timeout_ms} ms) must exceed "
                f"fetch_max_wait_ms ({fetch_max_wait_ms})"
            )
        if isolation_level not in (READ_UNCOMMITTED, READ_COMMITTED):
            raise ValueError(f"isolation_level must be 0 or 1, got {isolation_level}")
        self.fetch_max_wait_ms = fetch_max_wait_ms
        self.fetch_min_bytes = fetch_min_bytes
        self.fetch_max_bytes = fetch_max_bytes
        self.max_partition_fetch_bytes = max_partition_fetch_bytes
        self.isolation_level = isolation_level
        self.auto_offset_reset = auto_offset_reset
        self._positions: dict[TopicPartition, int] = {}
        self._resets: dict[TopicPartition, int] = {}  # partitions whose position ListOffsets decides
        self._assigned: list[TopicPartition] = []

    def __enter__(self) -> Consumer:
        return self

    # ------------------------------------------------------------------------------------------
    # Assignment and positions

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Reads exactly ``partitions`` from now on; their positions start as ``auto_offset_reset``
        says unless a ``seek`` sets them (with NONE, ``poll`` refuses a partition not sought)."""
        self._assigned = list(dict.fromkeys(partitions))
        self._positions = {tp: pos for tp, pos in self._positions.items() if tp in self._assigned}
        self._resets = {tp: t for tp, t in self._resets.items() if tp in self._assigned}
        for tp in self._assigned:
            if tp not in self._positions and tp not in self._resets:
                self._reset_by_policy(tp)

    def assignment(self) -> list[TopicPartition]:
        return list(self._assigned)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """The next record read from ``tp`` is at ``offset`` (or the first one after it)."""
        self._check_assigned(tp)
        if offset < 0:
            raise ValueError(f"seek offset must be >= 0, got {offset}")
        self._resets.pop(tp, None)
        self._positions[tp] = offset

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to(EARLIEST_TIMESTAMP, partitions)

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to(LATEST_TIMESTAMP, partitions)

    def position(self, tp: TopicPartition) -> int:
        """The offset of the next record ``poll`` returns from ``tp`` (resolving a pending reset).

        Raises:
            AdminError: ListOffsets did not answer within ``timeout_ms``.
        """
        self._check_assigned(tp)
        self._resolve_resets()
        return self._positions[tp]

    def _seek_to(self, timestamp: int, partitions: Iterable[TopicPartition] | None) -> None:
        for tp in self._assigned if partitions is None else partitions:
            self._check_assigned(tp)
            self._positions.pop(tp, None)
            self._resets[tp] = timestamp

    def _check_assigned(self, tp: TopicPartition) -> None:
        if tp not in self._assigned:
            raise ValueError(f"partition {tp} is not assigned to this consumer")

    def _reset_by_policy(self, tp: TopicPartition) -> None:
        """The position of ``tp`` is unknown from now on; ``auto_offset_reset`` decides it (NONE:
        nothing does, and ``poll`` refuses the partition)."""
        self._positions.pop(tp, None)
        if self.auto_offset_reset is not OffsetReset.NONE:
            earliest = self.auto_offset_reset is OffsetReset.EARLIEST
            self._resets[tp] = EARLIEST_TIMESTAMP if earliest else LATEST_TIMESTAMP

    def _resolve_resets(self) -> None:
        for timestamp in sorted(set(self._resets.values())):
            tps = [tp for tp, t in self._resets.items() if t == timestamp]
            answers = self.list_offsets(tps, timestamp, isolation_level=self.isolation_level)
            for tp, answer in answers.items():
                if isinstance(answer, ApiError):
                    raise DataError(
                        f"Cannot find the {_name(timestamp)} offset of {tp}: {answer.name}: {answer}"
                    )
                self._positions[tp] = _offset(answer)
                del self._resets[tp]

    # ------------------------------------------------------------------------------------------
    # Fetching

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]:
        """The next records of the assigned partitions, waiting up to ``timeout_ms`` for some.

        Raises:
            DataError: a fetch error retrying cannot clear, or a batch that does not decode.
            AdminError: a position could not be resolved (ListOffsets) within ``timeout_ms``.
        """
        deadline = self._clock() + max(0, timeout_ms) / 1000
        rounds = 0
        while True:
            if self._resets:
                self._resolve_resets()
            for tp in self._assigned:
                if tp not in self._positions:
                    raise DataError(f"partition {tp} has no valid position and auto_offset_reset is none")
            remaining_ms = max(0, int((deadline - self._clock()) * 1000))
            records, asked = self._fetch_round(min(self.fetch_max_wait_ms, remaining_ms))
            if records or self._clock() >= deadline:
                return records
            if not asked:  # no leader known for any partition: wait before asking Metadata again
                self._backoff(rounds, deadline)
                rounds += 1

    def _fetch_round(self, max_wait_ms: int) -> tuple[list[ConsumerRecord], bool]:
        """One Fetch to each leader; returns the records and whether any request was answered."""
        by_leader, _waiting = self.group_by_leader(tp for tp in self._assigned if tp in self._positions)
        sent: list[tuple[int, Connection, int, int, dict[TopicPartition, int]]] = []
        for node_id, tps in by_leader.items():
            asked = {tp: self._positions[tp] for tp in tps}
            try:
                conn = self.node_connection(node_id)
                version = conn.version_or_raise(fetch_msg.CLIENT_API)
                if any(self._topic_id(tp.topic) == ZERO_UUID for tp in tps):
                    version = min(version, _LAST_NAMED_TOPIC_VERSION)
                body = self._fetch_request(asked, max_wait_ms)
                correlation_id = conn.send_request(fetch_msg.CLIENT_API, version, body)
            except (Unreachable, RetriableError):
                self.drop_node(node_id)
                continue
            sent.append((node_id, conn, version, correlation_id, asked))
        records: list[ConsumerRecord] = []
        answered = False
        for node_id, conn, version, correlation_id, asked in sent:
            try:
                response: Any = conn.read_response(fetch_msg.CLIENT_API, version, correlation_id)
            except (RetriableError, RemoteProtocolError):
                self.drop_node(node_id)
                continue
            answered = True
            if getattr(response, "error_code", 0):  # a top-level error (v7+): fetch sessions
                self.drop_node(node_id)
                continue
            for t in response.responses:
                name = t.topic if version <= _LAST_NAMED_TOPIC_VERSION else self.topic_name(t.topic_id)
                for p in t.partitions:
                    tp = TopicPartition(name or "", p.partition_index)
                    if tp in asked and self._positions.get(tp) == asked[tp]:
                        records.extend(self._partition_answer(tp, p))
        return records, answered

    def _topic_id(self, topic: str) -> Any:
        meta = self.cached_topic(topic)
        return ZERO_UUID if meta is None else meta.topic_id

    def _fetch_request(self, asked: dict[TopicPartition, int], max_wait_ms: int) -> Any:
        cls = fetch_msg.REQUEST.cls
        topics: dict[str, list[Any]] = {}
        for tp, position in asked.items():
            topics.setdefault(tp.topic, []).append(
                cls.FetchTopic.FetchPartition(
                    partition=tp.partition,
                    current_leader_epoch=self.leader_epoch(tp),
                    fetch_offset=position,
                    last_fetched_epoch=-1,
                    log_start_offset=-1,
                    partition_max_bytes=self.max_partition_fetch_bytes,
                )
            )
        return cls(
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=self.fetch_min_bytes,
            max_bytes=self.fetch_max_bytes,
            isolation_level=self.isolation_level,
            session_id=0,
            session_epoch=-1,  # FINAL_EPOCH: a full fetch, no session (KIP-227)
            topics=[
                cls.FetchTopic(topic=name, topic_id=self._topic_id(name), partitions=parts)
                for name, parts in topics.items()
            ],
            forgotten_topics_data=[],
            rack_id="",
        )

    def _partition_answer(self, tp: TopicPartition, p: Any) -> list[ConsumerRecord]:
        code = p.error_code
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            position = self._positions[tp]
            self._reset_by_policy(tp)
            if self.auto_offset_reset is OffsetReset.NONE:
                raise DataError(f"Fetch position {position} is out of range for partition {tp}")
            return []
        if code in _FETCH_RETRY_CODES:
            self.mark_stale(tp.topic)
            return []
        if code != ErrorCode.NONE:
            raise DataError(f"Fetch of {tp} failed: {ApiError(code).name}: {ApiError(code)}")
        if not p.records:
            return []
        position = self._positions[tp]
        out: list[ConsumerRecord] = []
        try:
            for batch in iter_batches(p.records):
                header = batch.header
                if not batch.is_control:
                    log_append = header.timestamp_type is TimestampType.LOG_APPEND_TIME
                    out.extend(
                        ConsumerRecord(
                            topic=tp.topic,
                            partition=tp.partition,
                            offset=r.offset,
                            timestamp_ms=header.max_timestamp if log_append else r.timestamp,
                            timestamp_type=header.timestamp_type,
                            key=r.key,
                            value=r.value,
                            headers=r.headers,
                            leader_epoch=header.partition_leader_epoch,
                        )
                        for r in batch.records
                        if r.offset >= position
                    )
                position = max(position, batch.next_offset)
        except CorruptRecordError as e:
            raise DataError(
                f"Received a batch that does not decode from {tp} at offset {position}: {e}. If needed, seek "
                "past the record to continue consumption."
            ) from None
        self._positions[tp] = position
        return out


def _offset(answer: ListedOffset) -> int:
    # A ListOffsets answer of -1 (no such offset) cannot happen for earliest/latest on a live log.
    return max(0, answer.offset)


def _name(timestamp: int) -> str:
    return {EARLIEST_TIMESTAMP: "earliest", LATEST_TIMESTAMP: "latest"}.get(timestamp, str(timestamp))


__all__ = ["READ_COMMITTED", "READ_UNCOMMITTED", "Consumer", "ConsumerRecord", "OffsetReset"]
