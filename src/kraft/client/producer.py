"""A small blocking producer for the tools: records in, offsets out (``kraft console-producer``).

``Producer.send(topic, records)`` returns when every record is acknowledged (or raises):

* **Partitioning** as Kafka's Java producer does: a record's own partition if it names one, else
  ``murmur2(key) % partitions`` for a keyed record (the same partition Kafka's clients pick), else
  a *sticky* partition for keyless records (KIP-480): the batch being filled, a new partition
  chosen when it is full.
* **Batches** of at most ``batch_size`` bytes of records (at least one record), built once with
  ``kraft.records.batch.build_batch`` (CreateTime, ``compression`` as asked) and resent as they are.
* **Requests**: each round sends, to every leader, one Produce with the head batch of each of its
  partitions (one batch in flight per partition keeps each partition's order across retries), all
  requests written before any answer is read. ``acks`` 0 writes the request and reads nothing (the
  broker answers nothing; offsets are then -1).
* **Retries**: NOT_LEADER_OR_FOLLOWER and the other ``STALE_METADATA_CODES`` look the leader up
  again; they, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT and dropped connections are
  retried (after ``retry_backoff_ms``) up to ``retries`` times per batch and until
  ``delivery_timeout_ms``; any other code fails the call with ``ProduceError``.

Without idempotence (no InitProducerId here) a retry after a lost answer can write a batch twice,
as Kafka's producer does with ``enable.idempotence=false``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Unpack

from kraft.client.broker_admin import ApiError
from kraft.client.connection import Address, ClientOptions, Connection, RetriableError
from kraft.client.data import STALE_METADATA_CODES, DataClient, DataError, TopicPartition, Unreachable
from kraft.common.errors import RemoteProtocolError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import produce as produce_msg
from kraft.records.batch import WRITABLE_COMPRESSION, Compression, Header, SimpleRecord, build_batch

# Codes after which a batch is sent again (Kafka's RetriableException family, as Produce meets it).
RETRIABLE_CODES: Final = STALE_METADATA_CODES | {
    ErrorCode.NOT_ENOUGH_REPLICAS,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    ErrorCode.REQUEST_TIMED_OUT,
    ErrorCode.NETWORK_EXCEPTION,
}
VALID_ACKS: Final = (-1, 0, 1)
# What a record adds to a batch beyond its key, value and headers (length, attributes, deltas, ...):
# an upper bound, for sizing batches.
_RECORD_OVERHEAD: Final = 21
_LAST_NAMED_TOPIC_VERSION: Final = 12  # Produce v13 names topics by id (KIP-516)


@dataclass(frozen=True, slots=True)
class ProducerRecord:
    """One record to send; ``partition`` None lets the partitioner choose, ``timestamp_ms`` None
    stamps it with the time of the batch."""

    value: bytes | None
    key: bytes | None = None
    headers: tuple[Header, ...] = ()
    partition: int | None = None
    timestamp_ms: int | None = None

    def size_estimate(self) -> int:
        size = _RECORD_OVERHEAD + len(self.key or b"") + len(self.value or b"")
        return size + sum(len(h.key) + len(h.value or b"") + 10 for h in self.headers)


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where a record went: ``offset`` -1 with acks=0; ``timestamp_ms`` is the broker's append time
    for a LogAppendTime topic, else the record's own."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int


class ProduceError(DataError):
    """A batch could not be written: an error code retrying cannot change, retries exhausted, or
    the delivery timeout passed. ``error`` is the last answer."""

    def __init__(self, tp: TopicPartition, records: int, error: ApiError, detail: str = "") -> None:
        super().__init__(
            f"Error when sending {records} record(s) to {tp}: {error.name}: {error.text}{detail}"
        )
        self.tp = tp
        self.error = error


@dataclass(slots=True)
class _Batch:
    tp: TopicPartition
    indexes: list[int]  # positions in the records given to send()
    records: list[ProducerRecord]
    size: int = 0
    data: bytes = b""
    timestamp_ms: int = -1
    attempts: int = 0
    last_error: ApiError = field(default_factory=lambda: ApiError(ErrorCode.NONE))


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2``: 32-bit MurmurHash2 with Kafka's seed, as a signed int."""
    m = 0x5BD1E995
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    end = length - length % 4
    for i in range(0, end, 4):
        k = (int.from_bytes(data[i : i + 4], "little") * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    rest = length % 4
    if rest == 3:
        h ^= data[end + 2] << 16
    if rest >= 2:
        h ^= data[end + 1] << 8
    if rest >= 1:
        h ^= data[end]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for_key(key: bytes, partitions: int) -> int:
    """Kafka's built-in partitioner for a keyed record: ``toPositive(murmur2(key)) % partitions``."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class Producer(DataClient):
    """See the module docstring.

    Args:
        bootstrap: broker addresses to start from.
        acks: -1 (all in-sync replicas), 1 (the leader) or 0 (no answer).
        compression: a ``Compression`` id of ``WRITABLE_COMPRESSION``.
        batch_size: the most bytes of records in one batch (Kafka's ``batch.size``).
        retries: how many times one batch is resent (Kafka's ``retries``).
        delivery_timeout_ms: the longest one ``send`` may take (Kafka's ``delivery.timeout.ms``).
        rng: picks the sticky partitions of keyless records.
        wall_clock_ms: the records' CreateTime (the injected ``clock`` is monotonic seconds).
        options: ``timeout_ms`` bounds the wait for a topic's metadata (Kafka's ``max.block.ms``);
            ``request_timeout_ms`` is Produce's TimeoutMs and one request's deadline;
            ``retry_backoff_ms`` the pause before a retry; and the rest of ``ClientOptions``.

    Raises:
        ValueError: ``acks``, ``compression``, ``batch_size`` or ``retries`` out of range.
    """

    def __init__(
        self,
        bootstrap: Sequence[Address],
        *,
        acks: int = -1,
        compression: int = Compression.NONE,
        batch_size: int = 16_384,
        retries: int = 2_147_483_647,
        delivery_timeout_ms: int = 120_000,
        client_id: str = "kraft-producer",
        rng: random.Random | None = None,
        wall_clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        **options: Unpack[ClientOptions],
    ) -> None:
        if acks not in VALID_ACKS:
            raise ValueError(f"acks must be -1 (all), 0 or 1, got {acks}")
        if compression not in WRITABLE_COMPRESSION:
            raise ValueError(f"compression {compression} cannot be written (writable: none, gzip, lz4, zstd)")
        if batch_size < 0 or retries < 0 or delivery_timeout_ms <= 0:
            raise ValueError("batch_size and retries must be >= 0, delivery_timeout_ms > 0")
        super().__init__(bootstrap, client_id=client_id, **options)
        self.acks = acks
        self.compression = compression
        self.batch_size = batch_size
        self.retries = retries
        self.delivery_timeout_ms = delivery_timeout_ms
        self._rng = rng if rng is not None else random.Random()
        self._wall_clock_ms = wall_clock_ms
        self._sticky: dict[str, int] = {}

    def __enter__(self) -> Producer:
        return self

    # ------------------------------------------------------------------------------------------
    # Sending

    def send(self, topic: str, records: Sequence[ProducerRecord]) -> list[RecordMetadata]:
        """Sends ``records`` to ``topic`` and waits for every acknowledgement; the answer is in the
        order of ``records``.

        Raises:
            ValueError: a record names a partition the topic does not have.
            ProduceError: a batch failed (see the module docstring); batches of other partitions
                may have been written.
            AdminError: the topic's metadata did not arrive within ``timeout_ms``.
        """
        if not records:
            return []
        start = self._clock()
        meta = self.topic(topic)
        queues = self._batches(topic, len(meta.partitions), records)
        results: list[RecordMetadata | None] = [None] * len(records)
        deadline = start + self.delivery_timeout_ms / 1000
        rounds = 0
        while queues:
            heads = {tp: queue[0] for tp, queue in queues.items()}
            progressed = self._send_round(topic, heads, results)
            for tp in [tp for tp in queues if not heads[tp].indexes]:
                queues[tp].pop(0)
                if not queues[tp]:
                    del queues[tp]
            if not queues:
                break
            if self._clock() >= deadline:
                batch = next(iter(queues.values()))[0]
                raise ProduceError(
                    batch.tp,
                    len(batch.records),
                    batch.last_error,
                    f" ({self.delivery_timeout_ms} ms passed since the batch was created)",
                )
            if not progressed:
                self._backoff(rounds, deadline)
                rounds += 1
        return [r for r in results if r is not None]

    def _partition(self, topic: str, record: ProducerRecord, count: int) -> int:
        if record.partition is not None:
            if not 0 <= record.partition < count:
                raise ValueError(
                    f"Invalid partition given with record: {record.partition} is not in the range "
                    f"[0...{count})."
                )
            return record.partition
        if record.key is not None:
            return partition_for_key(record.key, count)
        if topic not in self._sticky or self._sticky[topic] >= count:
            self._sticky[topic] = self._rng.randrange(count)
        return self._sticky[topic]

    def _next_sticky(self, topic: str, count: int) -> int:
        """KIP-480: once a keyless batch is full, keyless records move to another partition."""
        current = self._sticky.get(topic, 0)
        if count > 1:
            choice = self._rng.randrange(count - 1)
            self._sticky[topic] = choice if choice < current else choice + 1
        return self._sticky.get(topic, 0)

    def _batches(
        self, topic: str, count: int, records: Sequence[ProducerRecord]
    ) -> dict[TopicPartition, list[_Batch]]:
        queues: dict[TopicPartition, list[_Batch]] = {}
        for i, record in enumerate(records):
            size = record.size_estimate()
            partition = self._partition(topic, record, count)
            if record.partition is None and record.key is None:
                sticky = queues.get(TopicPartition(topic, partition))
                if sticky and sticky[-1].size + size > self.batch_size:
                    partition = self._next_sticky(topic, count)
            tp = TopicPartition(topic, partition)
            queue = queues.setdefault(tp, [])
            if not queue or queue[-1].size + size > self.batch_size:
                queue.append(_Batch(tp, [], []))
            batch = queue[-1]
            batch.indexes.append(i)
            batch.records.append(record)
            batch.size += size
        return queues

    def _send_round(
        self, topic: str, heads: dict[TopicPartition, _Batch], results: list[RecordMetadata | None]
    ) -> bool:
        """Sends each partition's head batch to its leader; a batch written empties its ``indexes``
        (its results are in ``results``). Returns whether any batch was written."""
        by_leader, waiting = self.group_by_leader(heads)
        for tp, why in waiting.items():
            # Not an attempt: nothing was sent (Kafka's producer waits for a leader the same way).
            self._failed(heads[tp], ApiError(ErrorCode.LEADER_NOT_AVAILABLE, why), attempted=False)
        sent: list[tuple[int, Connection, int, int, list[_Batch]]] = []
        for node_id, tps in by_leader.items():
            batches = [heads[tp] for tp in tps]
            try:
                conn = self.node_connection(node_id)
                version = conn.version_or_raise(produce_msg.API)
                meta = self.cached_topic(topic)
                if meta is None or meta.topic_id == ZERO_UUID:
                    version = min(version, _LAST_NAMED_TOPIC_VERSION)
                body = self._produce_request(topic, batches)
                correlation_id = conn.send_request(produce_msg.API, version, body)
            except (Unreachable, RetriableError) as e:
                self.drop_node(node_id)
                for batch in batches:
                    self._failed(batch, ApiError(ErrorCode.NETWORK_EXCEPTION, str(e)))
                continue
            sent.append((node_id, conn, version, correlation_id, batches))
        progressed = False
        for node_id, conn, version, correlation_id, batches in sent:
            if self.acks == 0:  # the broker writes no answer (Kafka's acks=0)
                for batch in batches:
                    self._written(batch, -1, -1, results)
                progressed = True
                continue
            try:
                response: Any = conn.read_response(produce_msg.API, version, correlation_id)
            except (RetriableError, RemoteProtocolError) as e:
                self.drop_node(node_id)
                for batch in batches:
                    self._failed(batch, ApiError(ErrorCode.NETWORK_EXCEPTION, str(e)))
                continue
            answers: dict[int, Any] = {}
            for t in response.responses:
                name = t.name if version <= _LAST_NAMED_TOPIC_VERSION else self.topic_name(t.topic_id)
                if name == topic:
                    answers.update((p.index, p) for p in t.partition_responses)
            for batch in batches:
                p = answers.get(batch.tp.partition)
                if p is None:
                    self._failed(
                        batch, ApiError(ErrorCode.UNKNOWN_SERVER_ERROR, "no answer for the partition")
                    )
                elif p.error_code == ErrorCode.NONE:
                    self._written(batch, p.base_offset, p.log_append_time_ms, results)
                    progressed = True
                else:
                    self._failed(batch, ApiError(p.error_code, p.error_message))
        return progressed

    def _produce_request(self, topic: str, batches: Sequence[_Batch]) -> Any:
        meta = self.cached_topic(topic)
        now_ms = self._wall_clock_ms()
        cls = produce_msg.REQUEST.cls
        partitions = []
        for batch in batches:
            if not batch.data:  # built once: a retry resends the same bytes
                batch.timestamp_ms = now_ms
                batch.data = build_batch(
                    [
                        SimpleRecord(key=r.key, value=r.value, headers=r.headers, timestamp=r.timestamp_ms)
                        for r in batch.records
                    ],
                    timestamp_ms=now_ms,
                    compression=self.compression,
                )
            partitions.append(
                cls.TopicProduceData.PartitionProduceData(index=batch.tp.partition, records=batch.data)
            )
        return cls(
            transactional_id=None,
            acks=self.acks,
            timeout_ms=self._request_timeout_ms,
            topic_data=[
                cls.TopicProduceData(
                    name=topic,
                    topic_id=ZERO_UUID if meta is None else meta.topic_id,
                    partition_data=partitions,
                )
            ],
        )

    def _written(
        self, batch: _Batch, base_offset: int, log_append_time_ms: int, results: list[RecordMetadata | None]
    ) -> None:
        for delta, (i, record) in enumerate(zip(batch.indexes, batch.records, strict=True)):
            if log_append_time_ms != -1:
                timestamp = log_append_time_ms
            else:
                timestamp = batch.timestamp_ms if record.timestamp_ms is None else record.timestamp_ms
            offset = -1 if base_offset < 0 else base_offset + delta
            results[i] = RecordMetadata(batch.tp.topic, batch.tp.partition, offset, timestamp)
        batch.indexes = []

    def _failed(self, batch: _Batch, error: ApiError, *, attempted: bool = True) -> None:
        """A failed attempt: retried later when retriable and attempts remain, else fatal."""
        batch.last_error = error
        batch.attempts += attempted
        if error.code in STALE_METADATA_CODES or error.code == ErrorCode.NETWORK_EXCEPTION:
            self.mark_stale(batch.tp.topic)
        if error.code not in RETRIABLE_CODES:
            raise ProduceError(batch.tp, len(batch.records), error)
        if batch.attempts > self.retries:
            raise ProduceError(batch.tp, len(batch.records), error, f" (after {self.retries} retries)")


__all__ = [
    "RETRIABLE_CODES",
    "ProduceError",
    "Producer",
    "ProducerRecord",
    "RecordMetadata",
    "murmur2",
    "partition_for_key",
]
