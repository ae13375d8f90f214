"""What the data clients share: partition leaders from Metadata, a connection per broker, ListOffsets.

``DataClient`` is the base of ``kraft.client.producer.Producer`` and
``kraft.client.consumer.Consumer`` and, on its own, what ``kraft get-offsets`` uses. It keeps:

* **the cluster's brokers and each topic's partition leaders** (id and leader epoch), from Metadata
  (v1+; topic ids from v10, leader epochs from v7), asked of any broker it can reach. A topic is
  marked *stale* when a partition answers with one of ``STALE_METADATA_CODES`` (Kafka's
  ``InvalidMetadataException`` family: not the leader, fenced or unknown epoch, ...) or its leader
  cannot be reached; the next request for it asks Metadata again first.
* **one ``Connection`` per broker** (versions negotiated on open), dropped after any transport
  failure.

Every public call has an overall deadline (``timeout_ms``, ``BootstrapClient``): rounds of requests
with exponential backoff between them, until each item has an answer or the deadline passes, which
raises ``AdminError`` naming each address tried and its last outcome. Error codes that retrying
cannot change come back as ``ApiError`` values per item.

This module blocks and reads the clock; it belongs to the clients and the tools, never to the core
or the server. It is a small client for tools, not a full one: no idempotence, no consumer groups,
no fetch sessions, no truncation detection after a leader change (KIP-320).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar, Unpack

from kraft.client.broker_admin import ApiError
from kraft.client.connection import (
    Address,
    AdminError,
    BootstrapClient,
    ClientOptions,
    Connection,
    RetriableError,
    error_name,
)
from kraft.client.connection import Unreachable as PoolUnreachable
from kraft.common.errors import RemoteProtocolError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import list_offsets as list_offsets_msg
from kraft.protocol.messages import metadata as metadata_msg

T = TypeVar("T")

# ListOffsets' special timestamps (Kafka's ListOffsetsRequest).
LATEST_TIMESTAMP: Final = -1
EARLIEST_TIMESTAMP: Final = -2
MAX_TIMESTAMP: Final = -3
EARLIEST_LOCAL_TIMESTAMP: Final = -4
LATEST_TIERED_TIMESTAMP: Final = -5
# The first ListOffsets version that accepts each of them (KIP-734, KIP-405, KIP-1005).
LIST_OFFSETS_MIN_VERSION: Final[Mapping[int, int]] = {
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL_TIMESTAMP: 8,
    LATEST_TIERED_TIMESTAMP: 9,
}
UNKNOWN_OFFSET: Final = -1  # ListOffsets' answer when no offset matches (a timestamp past the end)

# Codes that mean "the leader you asked is not (or no longer) the one": look it up again, retry.
STALE_METADATA_CODES: Final = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.UNKNOWN_TOPIC_ID,
        ErrorCode.INCONSISTENT_TOPIC_ID,
        ErrorCode.KAFKA_STORAGE_ERROR,
        ErrorCode.REPLICA_NOT_AVAILABLE,
    }
)
# Also retried by ListOffsets: a new leader does not know its high watermark yet (KIP-207).
_LIST_OFFSETS_RETRY_CODES: Final = STALE_METADATA_CODES | {
    ErrorCode.OFFSET_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT,
    ErrorCode.NETWORK_EXCEPTION,
}
# A topic-level Metadata error that may clear by itself (the topic is being created).
_TOPIC_RETRY_CODES: Final = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE})
NO_LEADER: Final = -1


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"  # Kafka's TopicPartition.toString


@dataclass(frozen=True, slots=True)
class PartitionLeader:
    """A partition's leader as Metadata named it (``leader_id`` -1: none) and its leader epoch (-1
    when the broker's Metadata is older than v7)."""

    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A topic as Metadata describes it; ``topic_id`` is the zero UUID before Metadata v10."""

    name: str
    topic_id: uuid.UUID
    internal: bool
    partitions: Mapping[int, PartitionLeader]  # by partition index, ascending

    def partition_ids(self) -> list[int]:
        return sorted(self.partitions)


@dataclass(frozen=True, slots=True)
class ListedOffset:
    """One ListOffsets answer: ``offset`` is ``UNKNOWN_OFFSET`` when nothing matched."""

    offset: int
    timestamp_ms: int
    leader_epoch: int


class DataError(AdminError):
    """A data operation failed for good (an error code retrying cannot change, or corrupt data)."""


class Unreachable(Exception):
    """No broker (or not the one wanted) could be reached; ``failures`` says why, per address (or
    per broker wanted). Raised inside the clients' rounds and caught there: it never leaves a
    public call."""

    def __init__(self, failures: Mapping[Address, str] | Mapping[str, str]) -> None:
        super().__init__("; ".join(f"{a}: {r}" for a, r in failures.items()))
        self.failures = {str(a): r for a, r in failures.items()}


class DataClient(BootstrapClient):
    """Leaders from Metadata, one connection per broker, and ListOffsets (see the module docstring).

    Args:
        bootstrap: broker addresses to start from (any broker will do).
        client_id: the request header's client id.
        options: ``timeout_ms`` (overall deadline of each public call, retries included: Kafka's
            ``max.block.ms`` for a topic that does not exist yet), ``request_timeout_ms`` (one
            request; the socket waits one second longer so that a broker's own timeout answer
            wins) and the rest of ``BootstrapClient``'s.

    Use as a context manager, or call ``close``.
    """

    def __init__(
        self, bootstrap: Sequence[Address], *, client_id: str = "kraft-data", **options: Unpack[ClientOptions]
    ) -> None:
        super().__init__(bootstrap, **options)
        self._pool = self._connection_pool(client_id)
        self._brokers: dict[int, Address] = {}
        self._topics: dict[str, TopicMetadata] = {}
        self._topic_errors: dict[str, ApiError] = {}
        self._names_by_id: dict[uuid.UUID, str] = {}
        self._stale: set[str] = set()

    def __enter__(self) -> DataClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._pool.close()

    @property
    def request_timeout_ms(self) -> int:
        return self._request_timeout_ms

    def rounds(self, what: str, one_round: Callable[[dict[str, str]], T | None]) -> T:
        """Runs ``one_round(notes)`` until it returns a result (not None), backing off between
        rounds; once a round ends past the call's deadline (``timeout_ms`` from now), raises
        ``AdminError`` "timed out after N ms waiting for WHAT" with each of ``notes`` (what was
        tried, by broker or partition, and its last outcome) on a line of its own."""
        notes: dict[str, str] = {}
        deadline = self._deadline()
        attempt = 0
        while True:
            result = one_round(notes)
            if result is not None:
                return result
            if self._clock() >= deadline:
                lines = [f"timed out after {self._timeout_ms} ms waiting for {what}"]
                lines += [f"  {key}: {outcome}" for key, outcome in sorted(notes.items())]
                raise AdminError("\n".join(lines))
            self._backoff(attempt, deadline)
            attempt += 1

    # ------------------------------------------------------------------------------------------
    # Metadata

    def topic(self, name: str) -> TopicMetadata:
        """The topic's partitions and leaders: the cached answer unless it is stale, else a fresh
        Metadata one. A topic that does not exist (yet) is asked for again until the deadline.

        Raises:
            DataError: Metadata answered an error about the topic that retrying cannot change.
            AdminError: the deadline passed (the topic does not exist, or no broker answered).
        """

        def one_round(notes: dict[str, str]) -> TopicMetadata | None:
            if name in self._topics and name not in self._stale:
                return self._topics[name]
            try:
                address = self._refresh([name])
            except Unreachable as e:
                notes.update(e.failures)
                return None
            if name in self._topics:
                return self._topics[name]
            error = self._topic_errors.get(name, ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            if error.code not in _TOPIC_RETRY_CODES:
                raise DataError(f"Metadata refused topic {name}: {error.name}: {error.text}")
            notes[str(address)] = f"Metadata answered {error.name} for topic {name}"
            return None

        return self.rounds(f"topic {name} in the metadata", one_round)

    def topics(self, *, include_internal: bool = True) -> list[TopicMetadata]:
        """Every topic the cluster has, sorted by name (one fresh Metadata answer)."""

        def one_round(notes: dict[str, str]) -> list[TopicMetadata] | None:
            try:
                self._refresh(None)
            except Unreachable as e:
                notes.update(e.failures)
                return None
            return [t for _, t in sorted(self._topics.items()) if include_internal or not t.internal]

        return self.rounds("the list of topics", one_round)

    def mark_stale(self, topic: str) -> None:
        """Look the topic's leaders up again before the next request for it."""
        self._stale.add(topic)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._names_by_id.get(topic_id)

    def _refresh(self, names: list[str] | None) -> Address:
        """One Metadata round for ``names`` (None: every topic) on any broker; returns the address
        asked. Topics answered without an error replace their cached entry; the others are dropped
        from the cache and their error is kept in ``_topic_errors``."""
        conn = self._any_connection()
        api = metadata_msg.API
        version = conn.version_for(api)
        if version is None or version < 1:
            raise Unreachable({conn.address: "does not serve Metadata v1 or later"})
        cls = metadata_msg.REQUEST.cls
        body = cls(
            topics=None if names is None else [cls.MetadataRequestTopic(name=n) for n in names],
            allow_auto_topic_creation=False,
        )
        try:
            response: Any = conn.send(api, version, body)
        except (RetriableError, RemoteProtocolError) as e:
            self._drop(conn.address)
            raise Unreachable({conn.address: str(e)}) from None
        if getattr(response, "error_code", 0):
            raise Unreachable({conn.address: f"Metadata failed: {error_name(response.error_code)}"})
        self._brokers = {b.node_id: Address(b.host, b.port) for b in response.brokers}
        if names is None:
            self._topics.clear()
        for t in response.topics:
            if t.name is None:
                continue
            self._stale.discard(t.name)
            if t.error_code != ErrorCode.NONE:
                self._topics.pop(t.name, None)
                self._topic_errors[t.name] = ApiError(t.error_code)
                continue
            self._topic_errors.pop(t.name, None)
            topic_id = t.topic_id or ZERO_UUID
            leaders = {
                p.partition_index: PartitionLeader(
                    p.leader_id if p.error_code != ErrorCode.LEADER_NOT_AVAILABLE else NO_LEADER,
                    p.leader_epoch,
                )
                for p in sorted(t.partitions, key=lambda p: p.partition_index)
            }
            self._topics[t.name] = TopicMetadata(t.name, topic_id, bool(t.is_internal), leaders)
            if topic_id != ZERO_UUID:
                self._names_by_id[topic_id] = t.name
        return conn.address

    # ------------------------------------------------------------------------------------------
    # Leaders and connections

    def group_by_leader(
        self, partitions: Iterable[TopicPartition]
    ) -> tuple[dict[int, list[TopicPartition]], dict[TopicPartition, str]]:
        """``partitions`` grouped by their leader's node id, after one Metadata round for the topics
        that are stale or not cached; the others come back with why they have no leader now (no
        leader, an unknown topic or partition, no broker reachable), and their topics are stale."""
        wanted = list(partitions)
        missing = sorted(
            {tp.topic for tp in wanted if tp.topic not in self._topics or tp.topic in self._stale}
        )
        reason = ""
        if missing:
            try:
                self._refresh(missing)
            except Unreachable as e:
                reason = str(e)
        by_leader: dict[int, list[TopicPartition]] = {}
        waiting: dict[TopicPartition, str] = {}
        for tp in wanted:
            topic = self._topics.get(tp.topic)
            if topic is None:
                error = self._topic_errors.get(tp.topic)
                waiting[tp] = reason or f"topic {tp.topic}: {error.name if error else 'not in the metadata'}"
                continue
            leader = topic.partitions.get(tp.partition)
            if leader is None:
                waiting[tp] = f"topic {tp.topic} has no partition {tp.partition}"
            elif leader.leader_id == NO_LEADER or leader.leader_id not in self._brokers:
                waiting[tp] = f"partition {tp} has no live leader (leader id {leader.leader_id})"
            else:
                by_leader.setdefault(leader.leader_id, []).append(tp)
        self._stale.update(tp.topic for tp in waiting)  # ask Metadata again next time
        return by_leader, waiting

    def leader_epoch(self, tp: TopicPartition) -> int:
        topic = self._topics.get(tp.topic)
        leader = None if topic is None else topic.partitions.get(tp.partition)
        return -1 if leader is None else leader.leader_epoch

    def cached_topic(self, name: str) -> TopicMetadata | None:
        return self._topics.get(name)

    def node_connection(self, node_id: int) -> Connection:
        """The connection to broker ``node_id`` (opened if needed).

        Raises:
            Unreachable: the broker is not in the metadata or cannot be reached.
        """
        address = self._brokers.get(node_id)
        if address is None:
            raise Unreachable({f"broker {node_id}": "not in the metadata"})
        return self._connection(address)

    def drop_node(self, node_id: int) -> None:
        """Close the connection to ``node_id`` after a failure on it, and look every topic up again."""
        address = self._brokers.get(node_id)
        if address is not None:
            self._drop(address)
        self._stale.update(self._topics)

    def _connection(self, address: Address) -> Connection:
        try:
            return self._pool.get(address)
        except PoolUnreachable as e:
            raise Unreachable(e.failures) from None

    def _drop(self, address: Address) -> None:
        self._pool.drop(address)

    def _any_connection(self) -> Connection:
        """An open connection, else the first bootstrap address or known broker that takes one."""
        try:
            return self._pool.first([*self._bootstrap, *self._brokers.values()])
        except PoolUnreachable as e:
            raise Unreachable(e.failures) from None

    # ------------------------------------------------------------------------------------------
    # ListOffsets

    def list_offsets(
        self,
        partitions: Sequence[TopicPartition],
        timestamp: int,
        *,
        isolation_level: int = 0,
    ) -> dict[TopicPartition, ListedOffset | ApiError]:
        """ListOffsets of ``partitions`` at ``timestamp`` (a time in ms or one of the special
        timestamps), asked of each partition's leader; leader changes are followed until the
        deadline. A leader too old for a special timestamp answers UNSUPPORTED_VERSION.

        Raises:
            AdminError: the deadline passed with partitions still unanswered.
        """
        pending = list(dict.fromkeys(partitions))
        results: dict[TopicPartition, ListedOffset | ApiError] = {}

        def one_round(notes: dict[str, str]) -> dict[TopicPartition, ListedOffset | ApiError] | None:
            by_leader, waiting = self.group_by_leader(pending)
            for tp, why in waiting.items():
                notes[str(tp)] = why
                self.mark_stale(tp.topic)
            for node_id, tps in by_leader.items():
                try:
                    conn = self.node_connection(node_id)
                    got = self._send_list_offsets(conn, tps, timestamp, isolation_level)
                except Unreachable as e:
                    notes.update(e.failures)
                    self.drop_node(node_id)
                    continue
                except (RetriableError, RemoteProtocolError) as e:
                    notes[f"broker {node_id}"] = str(e)
                    self.drop_node(node_id)
                    continue
                for tp in tps:
                    answer = got.get(tp, ApiError(ErrorCode.UNKNOWN_SERVER_ERROR, f"no answer for {tp}"))
                    if isinstance(answer, ApiError) and answer.code in _LIST_OFFSETS_RETRY_CODES:
                        notes[str(tp)] = f"broker {node_id} answered ListOffsets with {answer.name}"
                        if answer.code in STALE_METADATA_CODES:
                            self.mark_stale(tp.topic)
                        continue
                    notes.pop(str(tp), None)
                    results[tp] = answer
                    pending.remove(tp)
            return None if pending else {tp: results[tp] for tp in dict.fromkeys(partitions)}

        if not pending:
            return {}
        return self.rounds("offsets from the partition leaders", one_round)

    def _send_list_offsets(
        self, conn: Connection, tps: Sequence[TopicPartition], timestamp: int, isolation_level: int
    ) -> dict[TopicPartition, ListedOffset | ApiError]:
        api = list_offsets_msg.API
        version = conn.version_for(api)
        needed = max(1, LIST_OFFSETS_MIN_VERSION.get(timestamp, 1), 2 if isolation_level else 1)
        if version is None or version < needed:
            refusal = ApiError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"{conn.address} does not serve ListOffsets v{needed} or later (needed for timestamp "
                f"{timestamp}{' and read_committed' if isolation_level else ''})",
            )
            return dict.fromkeys(tps, refusal)
        cls = list_offsets_msg.REQUEST.cls
        topics: dict[str, list[Any]] = {}
        for tp in tps:
            topics.setdefault(tp.topic, []).append(
                cls.ListOffsetsTopic.ListOffsetsPartition(
                    partition_index=tp.partition,
                    current_leader_epoch=self.leader_epoch(tp),
                    timestamp=timestamp,
                )
            )
        body = cls(
            replica_id=-1,
            isolation_level=isolation_level,
            topics=[cls.ListOffsetsTopic(name=name, partitions=parts) for name, parts in topics.items()],
            timeout_ms=self._request_timeout_ms,
        )
        response: Any = conn.send(api, version, body)
        got: dict[TopicPartition, ListedOffset | ApiError] = {}
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if p.error_code != ErrorCode.NONE:
                    got[tp] = ApiError(p.error_code)
                else:
                    got[tp] = ListedOffset(p.offset, p.timestamp, p.leader_epoch)
        return got


def parse_list_offsets_time(text: str) -> int:
    """Kafka's ``--time`` values: a timestamp in ms, or ``latest`` (-1), ``earliest`` (-2),
    ``max-timestamp`` (-3), ``earliest-local`` (-4), ``latest-tiered`` (-5).

    Raises:
        ValueError: anything else (Kafka's -6, earliest-pending-upload, needs ListOffsets v11).
    """
    names = {
        "latest": LATEST_TIMESTAMP,
        "earliest": EARLIEST_TIMESTAMP,
        "max-timestamp": MAX_TIMESTAMP,
        "earliest-local": EARLIEST_LOCAL_TIMESTAMP,
        "latest-tiered": LATEST_TIERED_TIMESTAMP,
    }
    if text in names:
        return names[text]
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 or "
            "max-timestamp / -4 or earliest-local / -5 or latest-tiered, or a specified long format timestamp"
        ) from None
    if value < LATEST_TIERED_TIMESTAMP:
        raise ValueError(f"time {value} is not supported (kraft serves ListOffsets up to v10: -1 to -5)")
    return value


__all__ = [
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "STALE_METADATA_CODES",
    "UNKNOWN_OFFSET",
    "DataClient",
    "DataError",
    "ListedOffset",
    "PartitionLeader",
    "TopicMetadata",
    "TopicPartition",
    "Unreachable",
    "parse_list_offsets_time",
]
