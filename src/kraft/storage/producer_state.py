"""Idempotent producers' state in one partition (Kafka's ``ProducerStateManager``, ``ProducerStateEntry``
and the sequence rules of ``ProducerAppendInfo``), without transactions.

Per producer id: its epoch and the metadata of its last ``NUM_BATCHES_TO_RETAIN`` (5) batches (first
and last sequence, first and last offset, max timestamp). Everything comes from batch headers
(producerId, producerEpoch, baseSequence, lastOffsetDelta, maxTimestamp): no record is decoded.

Pure and in memory. The partition log persists it in Kafka's ``<offset>.snapshot`` files
(``producer_snapshot``) at every segment roll and at close, and at open and after a truncation
loads the latest snapshot and replays the batches after it. A producer whose batches all left the
log (retention) stays known while a snapshot holds it, as in Kafka; one never snapshotted is then
unknown, and is accepted at any sequence (below).

The rules, as Kafka 4 applies them to a leader append (checked in this order, per batch):

1. From a client, a batch whose producer epoch and sequence range equal one of the producer's last 5
   batches is a duplicate (a retried send): the caller writes nothing and answers with the offsets
   of the original (``ProducerStateEntry.findDuplicateBatch``).
2. An epoch below the producer's current epoch: INVALID_PRODUCER_EPOCH (from any origin but
   replication, where Kafka only logs it).
3. From a client, with the same epoch: the first sequence must follow the last one (wrapping from
   ``INT32_MAX`` to 0), else OUT_OF_ORDER_SEQUENCE_NUMBER; with a new epoch (a bump) it must be 0,
   unless the producer is unknown (no epoch yet), which is accepted at any sequence: Kafka 4 no
   longer answers UNKNOWN_PRODUCER_ID (KIP-360), since the producer's state may simply have been
   removed by retention or expiry.

A control batch (a transaction marker) only moves the producer's epoch; transactions themselves
(ongoing transactions, the last stable offset, aborted-transaction indexes) are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kraft.protocol.primitives import INT32_MAX
from kraft.records.batch import NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP, BatchHeader
from kraft.storage.log_errors import InvalidProducerEpochError, OutOfOrderSequenceError

NUM_BATCHES_TO_RETAIN = 5
# Kafka's producer.id.expiration.ms default (one day).
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One written batch of a producer: its sequence range, offset range and max timestamp."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerStateEntry:
    """One producer's state. Invariant: at most ``NUM_BATCHES_TO_RETAIN`` batches, oldest first, all
    of ``producer_epoch`` (a new epoch clears them)."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batches: list[BatchMetadata] = field(default_factory=list)
    last_timestamp: int = NO_TIMESTAMP

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(
            self.producer_id, self.producer_epoch, list(self.batches), self.last_timestamp
        )

    def find_duplicate(self, producer_epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        if producer_epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None

    def maybe_update_epoch(self, producer_epoch: int) -> bool:
        """Move to ``producer_epoch`` (forgetting the batches of the old one); whether it moved."""
        if producer_epoch == self.producer_epoch:
            return False
        self.producer_epoch = producer_epoch
        self.batches.clear()
        return True

    def add_batch(self, producer_epoch: int, batch: BatchMetadata) -> None:
        self.maybe_update_epoch(producer_epoch)
        if len(self.batches) == NUM_BATCHES_TO_RETAIN:
            del self.batches[0]
        self.batches.append(batch)
        self.last_timestamp = batch.timestamp


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """Whether ``next_seq`` follows ``last_seq`` (sequences wrap from ``INT32_MAX`` to 0)."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


def batch_metadata(header: BatchHeader) -> BatchMetadata:
    """The metadata of a written batch (its base offset already assigned)."""
    return BatchMetadata(
        first_seq=header.base_sequence,
        last_seq=header.last_sequence,
        first_offset=header.base_offset,
        last_offset=header.last_offset,
        timestamp=header.max_timestamp,
    )


class ProducerStateManager:
    """The producers of one partition. ``check_append`` before a leader write (changes nothing),
    ``update`` for every batch written (leader, follower or rebuild), ``clear`` on a full truncation."""

    def __init__(self) -> None:
        self._producers: dict[int, ProducerStateEntry] = {}

    @property
    def producers(self) -> Mapping[int, ProducerStateEntry]:
        """Read-only view, by producer id. Callers must not change the entries."""
        return MappingProxyType(self._producers)

    def entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    def check_append(self, headers: Iterable[BatchHeader], *, origin_client: bool) -> BatchMetadata | None:
        """Apply the rules of the module docstring to the batches of one leader append.

        Returns the metadata of the original batch when a client's batch is a duplicate (the whole
        append is then not written), else ``None``.

        Raises:
            InvalidProducerEpochError: a batch from an older producer epoch.
            OutOfOrderSequenceError: a client's batch whose sequence does not follow.
        """
        pending: dict[int, ProducerStateEntry] = {}
        for header in headers:
            producer_id = header.producer_id
            if producer_id < 0:
                continue
            current = self._producers.get(producer_id)
            if origin_client and current is not None and not header.is_control:
                duplicate = current.find_duplicate(
                    header.producer_epoch, header.base_sequence, header.last_sequence
                )
                if duplicate is not None:
                    return duplicate
            entry = pending.get(producer_id)
            if entry is None:
                entry = ProducerStateEntry(producer_id) if current is None else current.copy()
                pending[producer_id] = entry
            epoch = header.producer_epoch
            if epoch < entry.producer_epoch:
                raise InvalidProducerEpochError(
                    f"producer {producer_id} wrote at epoch {epoch}, below its current epoch "
                    f"{entry.producer_epoch}"
                )
            if header.is_control:
                entry.maybe_update_epoch(epoch)
                continue
            if origin_client:
                self._check_sequence(entry, current, header)
            entry.add_batch(epoch, batch_metadata(header))
        return None

    @staticmethod
    def _check_sequence(
        entry: ProducerStateEntry, current: ProducerStateEntry | None, header: BatchHeader
    ) -> None:
        first_seq = header.base_sequence
        if header.producer_epoch != entry.producer_epoch:
            # A new epoch starts at sequence 0; a producer with no epoch yet may start anywhere.
            if first_seq != 0 and entry.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"producer {entry.producer_id} began epoch {header.producer_epoch} at sequence "
                    f"{first_seq}, not 0 (its current epoch is {entry.producer_epoch})"
                )
            return
        current_epoch = NO_PRODUCER_EPOCH if current is None else current.producer_epoch
        if current_epoch != NO_PRODUCER_EPOCH and not in_sequence(entry.last_seq, first_seq):
            raise OutOfOrderSequenceError(
                f"producer {entry.producer_id} sent sequence {first_seq} after {entry.last_seq} "
                f"in epoch {header.producer_epoch}"
            )

    def update(self, header: BatchHeader) -> None:
        """Record a written batch: Kafka's replication path, with no check (the leader made them)."""
        producer_id = header.producer_id
        if producer_id < 0:
            return
        entry = self._producers.get(producer_id)
        if entry is None:
            entry = self._producers[producer_id] = ProducerStateEntry(producer_id)
        if header.is_control:
            entry.maybe_update_epoch(header.producer_epoch)
            entry.last_timestamp = header.max_timestamp
            return
        entry.add_batch(header.producer_epoch, batch_metadata(header))

    def clear(self) -> None:
        self._producers.clear()

    def load(self, entries: Iterable[ProducerStateEntry]) -> None:
        """Replace the state with ``entries`` (a producer-state snapshot's)."""
        self._producers = {e.producer_id: e for e in entries}

    def remove_expired(self, now_ms: int, expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS) -> int:
        """Forget producers whose last batch is ``expiration_ms`` or more old (Kafka's
        ``removeExpiredProducers``, by batch timestamp); returns how many."""
        expired = [pid for pid, e in self._producers.items() if now_ms - e.last_timestamp >= expiration_ms]
        for pid in expired:
            del self._producers[pid]
        return len(expired)
