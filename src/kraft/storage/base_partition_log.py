"""``BasePartitionLog``: what a data partition's log adds to a segment log (Kafka's ``UnifiedLog``),
written once for its two twins: ``PartitionLog`` (files) and ``MemoryPartitionLog`` (the simulator).

A twin supplies a ``LogStore``: ``SegmentLog`` on files, or ``MemorySegmentLog``, its in-memory
mirror. The store owns the batches, segments, epoch cache, truncation and durability; this class
owns the rest:

* validation and offset assignment of produced batches (``log_validator``) and the idempotent
  producers' state (``producer_state``), checked before anything is written;
* the high watermark (stored here; the replica manager decides when it moves) and the recovery
  point, with their clamps;
* reads bounded by an offset (the high watermark for consumers, the log end for followers) with
  KIP-74's "at least one whole batch";
* ListOffsets by timestamp, from where the store's segment timestamps and time indexes place it;
* producer-state snapshots (a twin stores them: files or memory) at every roll and at close,
  loaded at open and after a truncation so that only the batches after the latest are replayed;
* retention by time and by size, whole segments at a time, and the roll after ``segment.ms``.

Invariants (after every public call): ``log_start_offset <= high_watermark <= log_end_offset`` and
``recovery_point <= log_end_offset``; ``recovery_point`` is at most the store's flushed end, so
everything below it survives a crash; a producer snapshot at offset X holds the producer state of
exactly the batches below X (each producer's last batch, as Kafka's), and none lies past the log
end or below the first segment.

Durability is Kafka's default: an append is never fsynced by itself. ``flush`` (the caller applies
``flush.messages``/``flush.ms``), a segment roll (Kafka schedules a flush up to the new segment at
every roll) and a truncation make data durable; a crash loses what was appended since.

Errors: a refused request raises a ``log_errors.PartitionLogError`` carrying Kafka's error code;
misuse by our own caller a ``KraftError``; a broken invariant or failed write a ``FatalError``.
"""

from __future__ import annotations

import bisect
import logging
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Protocol

from kraft.common.errors import CorruptRecordError, KraftError, StorageError
from kraft.common.uuids import uuid_to_base64
from kraft.protocol.primitives import INT32_MAX
from kraft.records.batch import (
    NO_TIMESTAMP,
    BatchHeader,
    decode_batch,
    iter_batch_headers,
    peek_batch_size,
    read_batch_header,
)
from kraft.storage.epoch_cache import EpochEntry
from kraft.storage.log_errors import (
    CorruptMessageError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    UnexpectedAppendOffsetError,
)
from kraft.storage.log_validator import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ValidatedAppend,
    validate_follower_append,
    validate_leader_append,
)
from kraft.storage.producer_snapshot import decode_producer_snapshot, encode_producer_snapshot
from kraft.storage.producer_state import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    ProducerStateEntry,
    ProducerStateManager,
)
from kraft.storage.segment_log import SegmentInfo

logger = logging.getLogger(__name__)

# ListOffsets' special timestamps (Kafka's ListOffsetsRequest).
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

# How much a scan of the whole log (open, rebuild) reads at a time.
_SCAN_BYTES = 8 * 1024 * 1024
# A timestamp search's first read from where the time index points: two index intervals, which
# hold the batch sought unless it is larger; later reads grow fourfold.
_FIRST_SEARCH_BYTES = 8 * 1024

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "AppendInfo",
    "BasePartitionLog",
    "LogStore",
]


class LogStore(Protocol):
    """The segment log under a partition log: ``SegmentLog``'s methods, which ``MemorySegmentLog``
    mirrors exactly (segments, rolls, truncation, epoch cache, flushed end, errors)."""

    @property
    def closed(self) -> bool: ...
    def start_offset(self) -> int: ...
    def end_offset(self) -> int: ...
    def last_flushed_offset(self) -> int: ...
    def segment_base_offsets(self) -> list[int]: ...
    def size_in_bytes(self) -> int: ...
    def segment_infos(self) -> list[SegmentInfo]: ...
    def active_first_timestamp(self) -> int | None: ...
    def timestamp_search_offset(self, timestamp_ms: int, from_offset: int) -> int | None: ...
    def latest_epoch(self) -> int | None: ...
    def epoch_entries(self) -> tuple[EpochEntry, ...]: ...
    def initialize_leader_epoch(self, epoch: int) -> None: ...
    def append_as_leader(self, batches: bytes, epoch: int) -> int: ...
    def append_as_follower(self, batches: bytes, epoch: int) -> int: ...
    def read(self, start_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes: ...
    def truncate_to(self, offset: int) -> None: ...
    def truncate_fully_and_start_at(self, offset: int) -> None: ...
    def advance_start_offset(self, offset: int) -> bool: ...
    def roll(self) -> bool: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def set_segment_bytes(self, segment_bytes: int) -> None: ...
    def set_index_config(self, interval_bytes: int | None, max_bytes: int | None) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendInfo:
    """The outcome of an append (Kafka's ``LogAppendInfo``, what a Produce response needs).

    ``log_append_time_ms`` is -1 under CreateTime. ``max_timestamp``/``offset_of_max_timestamp`` are
    Kafka 4's shallow values (see ``ValidatedAppend``). ``duplicate``: a retried idempotent batch
    that was already written; nothing was written now and the offsets are the original's. A
    follower append of nothing (an empty fetch) has ``record_count`` 0 and offsets -1.
    """

    first_offset: int
    last_offset: int
    log_append_time_ms: int
    max_timestamp: int
    offset_of_max_timestamp: int
    record_count: int
    valid_bytes: int
    duplicate: bool = False


_NOTHING_APPENDED = AppendInfo(
    first_offset=-1,
    last_offset=-1,
    log_append_time_ms=NO_TIMESTAMP,
    max_timestamp=NO_TIMESTAMP,
    offset_of_max_timestamp=-1,
    record_count=0,
    valid_bytes=0,
)


class BasePartitionLog:
    """One partition's data log over a ``LogStore``. Single-threaded: the caller serializes calls.

    Lifecycle: a twin's constructor opens the store and calls ``_open``; then appends, reads,
    truncations and retention until ``close()``; ``crash()`` models a power loss (everything after
    the last flush is lost). Calls after ``close()`` raise ``KraftError``.
    """

    def __init__(
        self,
        topic: str,
        partition: int,
        topic_id: uuid.UUID | None,
        store: LogStore,
        *,
        high_watermark: int,
        segment_bytes: int,
        segment_ms: int | None,
        now_ms: int,
    ) -> None:
        if segment_ms is not None and segment_ms < 1:
            raise KraftError(f"segment_ms must be positive, got {segment_ms}")
        self._topic = topic
        self._partition = partition
        self._topic_id = topic_id
        self._store = store
        self._segment_bytes = segment_bytes
        self._segment_ms = segment_ms
        self._last_flush_ms = now_ms
        self._producers = ProducerStateManager()
        self._high_watermark = 0
        self._recovery_point = 0
        # Where to note that checkpoint_offsets() moved (the log manager's set of logs to read again
        # at its next checkpoint); None: nobody asks.
        self._checkpoint_dirty: set[BasePartitionLog] | None = None
        self._open(high_watermark)

    def _open(self, high_watermark: int) -> None:
        """(Re)build the in-memory state from the store: what open and a crash both end with."""
        self._load_producers()
        # Kafka's UnifiedLog clamps the checkpointed high watermark into [log start, log end].
        self._high_watermark = self._clamp(high_watermark)
        # Opening a store makes everything it holds durable (SegmentLog fdatasyncs at open).
        self._recovery_point = self._store.last_flushed_offset()
        self._offsets_moved()

    # ------------------------------------------------------------------ producer-state snapshots

    def _load_producers(self) -> None:
        """Kafka's ``loadProducerState``: drop snapshots past the log end or below the first segment,
        load the latest one that reads (a corrupt one is deleted, the next tried), and replay the
        batches after it; with none, replay the whole log."""
        store = self._store
        end = store.end_offset()
        first_base = store.segment_base_offsets()[0]
        self._producers.clear()
        loaded_at: int | None = None
        for offset in sorted(self._snapshot_offsets(), reverse=True):
            if offset > end or offset < first_base:
                self._delete_snapshot(offset)
                continue
            if loaded_at is not None:
                continue
            try:
                entries = decode_producer_snapshot(self._read_snapshot(offset))
            except StorageError as e:
                logger.warning(
                    "%s-%d: deleting producer snapshot %d: %s", self._topic, self._partition, offset, e
                )
                self._delete_snapshot(offset)
                continue
            self._producers.load(entries)
            loaded_at = offset
        self._replay_producers(store.start_offset() if loaded_at is None else loaded_at)

    def _replay_producers(self, from_offset: int) -> None:
        store = self._store
        offset, end = max(from_offset, store.start_offset()), store.end_offset()
        update = self._producers.update
        while offset < end:
            data = store.read(offset, _SCAN_BYTES)
            if not data:
                break
            # A read begins with the batch holding ``offset``: none of them ends at or below it.
            header = None
            for _, header in iter_batch_headers(data):
                update(header)
            assert header is not None
            offset = header.base_offset + header.last_offset_delta + 1

    def _take_snapshot(self, offset: int) -> None:
        """Write the producer state as of ``offset`` (which the state must reflect exactly)."""
        self._write_snapshot(offset, encode_producer_snapshot(self._producers.producers.values()))

    def _snapshot_offsets(self) -> list[int]:
        """The offsets of the stored producer snapshots (a twin's files or memory)."""
        raise NotImplementedError

    def _read_snapshot(self, offset: int) -> bytes:
        raise NotImplementedError

    def _write_snapshot(self, offset: int, data: bytes) -> None:
        """Store a snapshot durably (it must survive a crash, as Kafka fsyncs them)."""
        raise NotImplementedError

    def _delete_snapshot(self, offset: int) -> None:
        raise NotImplementedError

    @property
    def producer_snapshot_offsets(self) -> list[int]:
        """The offsets of the producer-state snapshots kept, ascending."""
        return sorted(self._snapshot_offsets())

    # ------------------------------------------------------------------ identity and positions

    @property
    def topic(self) -> str:
        return self._topic

    @property
    def partition(self) -> int:
        return self._partition

    @property
    def topic_id(self) -> uuid.UUID | None:
        """The topic id; ``None`` only for a directory opened without ``partition.metadata``."""
        return self._topic_id

    @property
    def directory(self) -> PurePath:
        raise NotImplementedError

    def assign_topic_id(self, topic_id: uuid.UUID) -> None:
        """Record the topic id of a log opened without one (Kafka's ``assignTopicId``); a no-op when
        it already has this one.

        Raises:
            StorageError: the log already has another topic id.
        """
        self._check_open()
        if self._topic_id is None:
            self._persist_topic_id(topic_id)
            self._topic_id = topic_id
        elif self._topic_id != topic_id:
            raise StorageError(
                f"partition {self._topic}-{self._partition} holds topic id "
                f"{uuid_to_base64(self._topic_id)}, not {uuid_to_base64(topic_id)}"
            )

    def _persist_topic_id(self, topic_id: uuid.UUID) -> None:
        """Where a twin records a newly assigned topic id (``partition.metadata`` on files)."""

    @property
    def log_start_offset(self) -> int:
        return self._store.start_offset()

    @property
    def log_end_offset(self) -> int:
        return self._store.end_offset()

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def recovery_point(self) -> int:
        """Everything below it is durable (Kafka's recovery point)."""
        return self._recovery_point

    def checkpoint_offsets(self) -> tuple[int, int, int]:
        """(high watermark, log start offset, recovery point): what the broker's checkpoint files
        hold of this log, in one call."""
        return self._high_watermark, self._store.start_offset(), self._recovery_point

    def track_checkpoint(self, dirty: set[BasePartitionLog]) -> None:
        """From now on, add this log to ``dirty`` whenever ``checkpoint_offsets()`` may have moved
        (each method that moves one of the three calls ``_offsets_moved``)."""
        self._checkpoint_dirty = dirty

    def _offsets_moved(self) -> None:
        dirty = self._checkpoint_dirty
        if dirty is not None:
            dirty.add(self)

    @property
    def unflushed_messages(self) -> int:
        """Offsets appended since the recovery point (for ``flush.messages``)."""
        return self._store.end_offset() - self._recovery_point

    @property
    def last_flush_ms(self) -> int:
        """``now_ms`` of the last ``flush`` given one, else of construction (for ``flush.ms``)."""
        return self._last_flush_ms

    @property
    def size_in_bytes(self) -> int:
        """Bytes of every segment (Kafka's ``UnifiedLog.size``)."""
        return self._store.size_in_bytes()

    @property
    def producers(self) -> Mapping[int, ProducerStateEntry]:
        """The idempotent producers' state, by producer id (read-only)."""
        return self._producers.producers

    def segment_base_offsets(self) -> list[int]:
        return self._store.segment_base_offsets()

    @property
    def closed(self) -> bool:
        return self._store.closed

    def _check_open(self) -> None:
        if self._store.closed:
            raise KraftError(f"partition log {self._topic}-{self._partition} is closed")

    def _clamp(self, offset: int) -> int:
        return min(max(offset, self._store.start_offset()), self._store.end_offset())

    # ------------------------------------------------------------------ high watermark

    def update_high_watermark(self, offset: int) -> bool:
        """Raise the high watermark to ``offset`` clamped into [log start, log end]; returns whether
        it moved. Never lowers it (Kafka's ``maybeUpdateHighWatermark``)."""
        self._check_open()
        new = self._clamp(offset)
        if new <= self._high_watermark:
            return False
        self._high_watermark = new
        self._offsets_moved()
        return True

    def set_high_watermark_after_truncation(self, offset: int) -> bool:
        """Set the high watermark to ``offset`` clamped into [log start, log end], lower or not (a
        follower after truncation, a new leader); returns whether it changed."""
        self._check_open()
        new = self._clamp(offset)
        changed = new != self._high_watermark
        self._high_watermark = new
        if changed:
            self._offsets_moved()
        return changed

    # ------------------------------------------------------------------ epochs

    @property
    def latest_epoch(self) -> int | None:
        return self._store.latest_epoch()

    @property
    def epoch_entries(self) -> tuple[EpochEntry, ...]:
        return self._store.epoch_entries()

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetForLeaderEpoch answers it (Kafka's
        ``LeaderEpochFileCache.endOffsetFor``):

        * ``epoch`` is the latest epoch: (``epoch``, log end offset);
        * else, with a known epoch above it: (largest known epoch <= ``epoch``, start offset of the
          first epoch above it); when no known epoch is <= ``epoch`` (it is below the earliest, whose
          history retention removed), (``epoch``, start offset of the earliest epoch);
        * ``epoch`` is -1, or above every known epoch, or nothing is known: (-1, -1).
        """
        entries = self._store.epoch_entries()
        if epoch == UNDEFINED_EPOCH or not entries:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if entries[-1].epoch == epoch:
            return epoch, self._store.end_offset()
        i = bisect.bisect_right([e.epoch for e in entries], epoch)  # first entry above ``epoch``
        if i == len(entries):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        higher = entries[i]
        if i == 0:
            return epoch, higher.start_offset
        return entries[i - 1].epoch, higher.start_offset

    def assign_epoch_start(self, epoch: int, offset: int) -> None:
        """A new leader's ``epoch`` starts at ``offset``, which must be the log end offset (Kafka's
        ``maybeAssignEpochStartOffset`` from ``Partition.makeLeader``); nothing is appended. The
        entry reaches ``leader-epoch-checkpoint`` at the next flush.

        Raises:
            KraftError: ``offset`` is not the log end offset.
            FatalError: ``epoch`` is below the latest epoch of the log.
        """
        self._check_open()
        if offset != self._store.end_offset():
            raise KraftError(
                f"epoch {epoch} must start at the log end offset {self._store.end_offset()}, not {offset}"
            )
        self._store.initialize_leader_epoch(epoch)

    def configure_segments(
        self,
        segment_bytes: int,
        segment_ms: int | None,
        index_interval_bytes: int | None = None,
        index_max_bytes: int | None = None,
    ) -> None:
        """Take a topic's ``segment.bytes`` and ``segment.ms`` (``None``: no time roll), as Kafka
        applies a topic config change to its open logs: later appends roll by them; and its
        ``index.interval.bytes`` and ``segment.index.bytes`` (``None``: as they are), which the
        segments created from now on index by."""
        if segment_ms is not None and segment_ms < 1:
            raise KraftError(f"segment_ms must be positive, got {segment_ms}")
        self._check_open()
        self._store.set_segment_bytes(segment_bytes)
        if index_interval_bytes is not None or index_max_bytes is not None:
            self._store.set_index_config(index_interval_bytes, index_max_bytes)
        self._segment_bytes = segment_bytes
        self._segment_ms = segment_ms

    # ------------------------------------------------------------------ appends

    def append_as_leader(
        self,
        batches: bytes,
        leader_epoch: int,
        *,
        now_ms: int,
        log_append_time: bool,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        origin_client: bool = True,
        timestamp_before_max_ms: int | None = None,
        timestamp_after_max_ms: int | None = None,
        compression: int | None = None,
    ) -> AppendInfo:
        """Validate produced ``batches``, give them offsets from the log end and ``leader_epoch``, and
        append them (not fsynced). See ``log_validator`` for the checks, ``producer_state`` for
        idempotence; ``origin_client=False`` is our own code appending (no client-only checks);
        ``compression``: the topic's codec when it is not ``producer`` (batches are re-encoded).

        Raises:
            PartitionLogError: a refused append (its ``error_code`` for the response); nothing is written.
            FatalError: ``leader_epoch`` is below the latest epoch of the log, or the write failed.
        """
        self._check_open()
        validated = validate_leader_append(
            batches,
            next_offset=self._store.end_offset(),
            leader_epoch=leader_epoch,
            now_ms=now_ms,
            log_append_time=log_append_time,
            max_message_bytes=max_message_bytes,
            origin_client=origin_client,
            timestamp_before_max_ms=timestamp_before_max_ms,
            timestamp_after_max_ms=timestamp_after_max_ms,
            compression=compression,
        )
        if len(validated.data) > self._segment_bytes:
            raise RecordBatchTooLargeError(
                f"an append of {len(validated.data)} bytes exceeds segment.bytes {self._segment_bytes}"
            )
        duplicate = self._producers.check_append(validated.headers, origin_client=origin_client)
        if duplicate is not None:
            return AppendInfo(
                first_offset=duplicate.first_offset,
                last_offset=duplicate.last_offset,
                log_append_time_ms=duplicate.timestamp if log_append_time else NO_TIMESTAMP,
                max_timestamp=duplicate.timestamp,
                offset_of_max_timestamp=duplicate.last_offset,
                record_count=duplicate.last_offset - duplicate.first_offset + 1,
                valid_bytes=0,
                duplicate=True,
            )
        self._write(validated, leader_epoch)
        return self._append_info(validated)

    def append_as_follower(self, batches: bytes) -> AppendInfo:
        """Append batches fetched from the leader as they are (offsets and epochs kept); their epochs
        enter the epoch cache and their producers the producer state. A trailing partial batch is
        ignored; nothing at all (an empty fetch) appends nothing.

        Raises:
            UnexpectedAppendOffsetError: the first batch does not begin at the log end offset.
            CorruptMessageError, UnsupportedMagicError: a batch that is not a valid v2 batch, or
                batches whose offsets are not contiguous (nothing is written).
            FatalError: batch epochs that go backwards over batches already written.
        """
        self._check_open()
        validated = validate_follower_append(batches)
        if validated is None:
            return _NOTHING_APPENDED
        expected = self._store.end_offset()
        if validated.first_offset != expected:
            raise UnexpectedAppendOffsetError(
                f"follower append to {self._topic}-{self._partition} begins at offset "
                f"{validated.first_offset}, not at the log end offset {expected}"
            )
        for header in validated.headers:
            if header.base_offset != expected:
                raise CorruptMessageError(
                    f"fetched batches are not contiguous: a batch at offset {header.base_offset} "
                    f"follows one that ends before {expected}"
                )
            expected = header.next_offset
        self._write(validated, None)
        return self._append_info(validated)

    @staticmethod
    def _append_info(validated: ValidatedAppend) -> AppendInfo:
        return AppendInfo(
            first_offset=validated.first_offset,
            last_offset=validated.last_offset,
            log_append_time_ms=validated.log_append_time_ms,
            max_timestamp=validated.max_timestamp,
            offset_of_max_timestamp=validated.offset_of_max_timestamp,
            record_count=validated.record_count,
            valid_bytes=len(validated.data),
        )

    def _write(self, validated: ValidatedAppend, leader_epoch: int | None) -> None:
        """Write validated batches (as leader in ``leader_epoch``, or as follower when ``None``), then
        index them; flush if the write rolled a segment (Kafka flushes up to each new segment)."""
        store = self._store
        rolled = self._maybe_roll_for_timestamp(validated.max_timestamp)
        if rolled:
            self._take_snapshot(store.end_offset())
        segments_before = len(store.segment_base_offsets())
        if leader_epoch is None:
            # The leader stamped the epochs; the store only checks they do not go backwards.
            store.append_as_follower(validated.data, INT32_MAX)
        else:
            store.append_as_leader(validated.data, leader_epoch)
        bases = store.segment_base_offsets()
        # Kafka snapshots the producer state at every roll, as of the new segment's base offset.
        new_bases = set(bases[segments_before:]) if len(bases) != segments_before else ()
        for header in validated.headers:
            if header.base_offset in new_bases:
                self._take_snapshot(header.base_offset)
            self._producers.update(header)
        if rolled or new_bases:
            self._flush_store()

    # ------------------------------------------------------------------ rolls

    def _active_segment_first_timestamp(self) -> int | None:
        """The max timestamp of the active segment's first batch (Kafka's ``rollingBasedTimestamp``);
        ``None`` when the active segment is empty."""
        return self._store.active_first_timestamp()

    def _maybe_roll_for_timestamp(self, incoming_max_timestamp: int) -> bool:
        """Kafka's time-based roll at append: roll when the incoming batches' max timestamp is more
        than ``segment_ms`` after the active segment's first batch. A segment whose first batch has
        no timestamp is not rolled by time (Kafka would use its creation time, which we do not keep).
        """
        if self._segment_ms is None:
            return False
        first = self._active_segment_first_timestamp()
        if first is None or first < 0 or incoming_max_timestamp - first <= self._segment_ms:
            return False
        return self._store.roll()

    def maybe_roll(self, now_ms: int) -> bool:
        """Roll the active segment when its first batch is more than ``segment_ms`` older than
        ``now_ms`` (a periodic check, so that a quiet partition's segment also becomes eligible for
        retention); size rolls happen during appends. Returns whether it rolled (and flushed)."""
        self._check_open()
        if self._segment_ms is None:
            return False
        first = self._active_segment_first_timestamp()
        if first is None or first < 0 or now_ms - first <= self._segment_ms:
            return False
        if self._store.roll():
            self._take_snapshot(self._store.end_offset())
            self._flush_store()
            return True
        return False

    # ------------------------------------------------------------------ reads

    def read(
        self, fetch_offset: int, max_bytes: int, *, max_offset: int, min_one_batch: bool = True
    ) -> bytes:
        """Whole batches from the one that holds ``fetch_offset``, none reaching ``max_offset`` or
        beyond (exclusive: the high watermark for consumers, the log end for followers), at most
        ``max_bytes`` of them, but with ``min_one_batch`` at least the first even when it alone is
        over ``max_bytes`` (KIP-74). Empty when ``fetch_offset >= max_offset`` or when the batch
        holding ``fetch_offset`` reaches ``max_offset``.

        Raises:
            OffsetOutOfRangeError: ``fetch_offset`` is below the log start or above the log end.
        """
        self._check_open()
        start, end = self._store.start_offset(), self._store.end_offset()
        if fetch_offset < start or fetch_offset > end:
            raise OffsetOutOfRangeError(
                f"fetch offset {fetch_offset} of {self._topic}-{self._partition} is outside the log "
                f"[{start}, {end}]"
            )
        limit = min(max_offset, end)
        if fetch_offset >= limit:
            return b""
        # The store stops before the first batch reaching ``limit`` (the high watermark for
        # consumers) from the offset index, without walking the batches it returns.
        data = self._store.read(fetch_offset, max_bytes, None if limit >= end else limit)
        first_size = peek_batch_size(data) or 0
        if first_size > max_bytes and not min_one_batch:
            return b""
        return data

    def _batch_records(self, data: bytes) -> tuple[int, int, list[tuple[int, int]] | None]:
        """(leader epoch or -1, max timestamp, (offset, timestamp) of each record at or after the log
        start offset) of the batch ``data``; the list is ``None`` when the batch cannot be decoded here
        (e.g. snappy)."""
        start = self._store.start_offset()
        header = read_batch_header(data)
        assert header is not None
        epoch = header.partition_leader_epoch if header.partition_leader_epoch >= 0 else UNDEFINED_EPOCH
        try:
            batch = decode_batch(data, 0)
        except CorruptRecordError as e:
            logger.warning(
                "%s-%d: cannot decode the batch at offset %d: %s",
                self._topic,
                self._partition,
                header.base_offset,
                e,
            )
            return epoch, header.max_timestamp, None
        return (
            epoch,
            header.max_timestamp,
            [(r.offset, r.timestamp) for r in batch.records if r.offset >= start],
        )

    def offset_for_timestamp(self, timestamp_ms: int, *, max_offset: int) -> tuple[int, int, int] | None:
        """ListOffsets: (offset, timestamp, leader epoch) for ``timestamp_ms``, or ``None`` when there
        is no answer (Kafka then answers offset -1). The leader epoch is -1 when unknown.

        * a timestamp >= 0: the first record at or after the log start offset whose timestamp is
          >= ``timestamp_ms`` (Kafka's ``FileRecords.searchForTimestamp``: the record, not its batch),
          found through the in-memory time index (first batch whose max timestamp is >= it);
        * ``MAX_TIMESTAMP`` (-3): the first record holding the largest timestamp of the log;
        * ``EARLIEST_TIMESTAMP`` (-2) and ``EARLIEST_LOCAL_TIMESTAMP`` (-4): the log start offset;
        * ``LATEST_TIMESTAMP`` (-1): ``min(max_offset, log end)`` with the latest epoch;
        * any other negative value: ``None``.

        As in Kafka, a found offset at or above ``max_offset`` (the high watermark for consumers) is
        no answer. A batch that cannot be decoded (snappy) answers with its first offset and max
        timestamp.
        """
        self._check_open()
        store = self._store
        if timestamp_ms in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            entries = store.epoch_entries()
            start = store.start_offset()
            epoch = entries[0].epoch if entries and entries[0].start_offset <= start else UNDEFINED_EPOCH
            return start, NO_TIMESTAMP, epoch
        if timestamp_ms == LATEST_TIMESTAMP:
            latest = store.latest_epoch()
            return (
                min(max_offset, store.end_offset()),
                NO_TIMESTAMP,
                UNDEFINED_EPOCH if latest is None else latest,
            )
        start = store.start_offset()
        if timestamp_ms == MAX_TIMESTAMP:
            target = self._max_timestamp_from(start)
            if target < 0:
                return None
            found = self._find_record(target, lambda ts: ts == target)
        elif timestamp_ms >= 0:
            found = self._find_record(timestamp_ms, lambda ts: ts >= timestamp_ms)
        else:
            return None
        if found is None or found[0] >= max_offset:
            return None
        return found

    def _max_timestamp_from(self, start: int) -> int:
        """The largest batch max timestamp of the batches holding offsets at or after ``start``: the
        segments' largest timestamps, but the first segment's batches are read when ``start`` is
        inside it (its largest may belong to batches below the log start)."""
        infos = [i for i in self._store.segment_infos() if i.next_offset > start]
        if not infos:
            return NO_TIMESTAMP
        top = max((i.max_timestamp for i in infos[1:]), default=NO_TIMESTAMP)
        first = infos[0]
        if first.base_offset >= start:
            return max(top, first.max_timestamp)
        for header in self._headers_from(start, first.next_offset):
            top = max(top, header.max_timestamp)
        return top

    def _headers_from(self, offset: int, stop: int) -> Iterator[BatchHeader]:
        """The headers of the batches from the one holding ``offset`` until one reaches ``stop``."""
        store = self._store
        end = min(stop, store.end_offset())
        while offset < end:
            data = store.read(offset, _SCAN_BYTES)
            if not data:
                return
            for _, header in iter_batch_headers(data):
                yield header
                offset = header.next_offset
                if offset >= end:
                    return

    def _find_record(self, target: int, matches: _TimestampPredicate) -> tuple[int, int, int] | None:
        """The first record at or after the log start offset whose timestamp ``matches`` (a batch can
        hold one only if its max timestamp matches: the predicates are ``>= t`` and ``== t``), from
        where the segments' time indexes place the first batch whose max timestamp is >= ``target``
        (Kafka's ``fetchOffsetByTimestamp``: time index, then offset index, then a scan)."""
        store = self._store
        start = store.start_offset()
        offset = store.timestamp_search_offset(target, start)
        if offset is None:
            return None
        end = store.end_offset()
        chunk = _FIRST_SEARCH_BYTES
        while offset < end:
            data = store.read(offset, chunk)
            if not data:
                return None
            for position, header in iter_batch_headers(data):
                offset = header.next_offset
                if header.next_offset <= start or not matches(header.max_timestamp):
                    continue
                raw = data[position : position + header.size_in_bytes]
                epoch, batch_max, records = self._batch_records(raw)
                if records is None:
                    return max(header.base_offset, start), batch_max, epoch
                for record_offset, ts in records:
                    if matches(ts):
                        return record_offset, ts, epoch
            chunk = min(chunk * 4, _SCAN_BYTES)
        return None

    # ------------------------------------------------------------------ truncation

    def truncate_to(self, offset: int) -> bool:
        """Follower truncation: drop every batch holding an offset at or after ``offset`` (a batch
        holding ``offset`` goes whole, so the log may end below ``offset``), and the epoch cache
        beyond. The high watermark and recovery point clamp to the new end; the producer state is
        rebuilt from the log. Durable on return. Returns whether anything was dropped.

        An ``offset`` below the log start offset empties the log and starts it there.
        """
        self._check_open()
        if offset < 0:
            raise KraftError(f"cannot truncate to a negative offset {offset}")
        store = self._store
        if offset < store.start_offset():
            self.truncate_fully_and_start_at(offset)
            return True
        if offset >= store.end_offset():
            store.truncate_to(offset)  # trims epoch cache entries at or beyond ``offset``
            return False
        store.truncate_to(offset)
        end = store.end_offset()
        self._load_producers()  # snapshots past the new end go; replay from the latest kept
        self._high_watermark = min(self._high_watermark, end)
        self._recovery_point = min(self._recovery_point, end)
        self._offsets_moved()
        return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Empty the log and begin it at ``offset`` (start = end = high watermark = ``offset``), with
        no epochs and no producers; durable on return (Kafka's ``truncateFullyAndStartAt``)."""
        self._check_open()
        self._store.truncate_fully_and_start_at(offset)
        for snapshot in self._snapshot_offsets():
            self._delete_snapshot(snapshot)
        self._producers.clear()
        self._high_watermark = offset
        self._recovery_point = offset
        self._offsets_moved()

    # ------------------------------------------------------------------ start offset and retention

    def _advance_start(self, offset: int) -> None:
        store = self._store
        if offset > store.last_flushed_offset():
            # The store keeps its start within its durable prefix, so that a crash cannot leave the
            # log shorter than its own start.
            self._flush_store()
        store.advance_start_offset(offset)
        first_base = store.segment_base_offsets()[0]
        for snapshot in self._snapshot_offsets():
            if snapshot < first_base:  # the snapshots of deleted segments (Kafka deletes them too)
                self._delete_snapshot(snapshot)
        self._high_watermark = max(self._high_watermark, store.start_offset())
        self._offsets_moved()

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Raise the log start offset to ``offset`` (DeleteRecords, or a follower taking its leader's
        start offset), deleting the segments wholly below it; returns whether it moved.

        Raises:
            OffsetOutOfRangeError: ``offset`` is above the high watermark.
        """
        self._check_open()
        if offset > self._high_watermark:
            raise OffsetOutOfRangeError(
                f"cannot move the log start offset of {self._topic}-{self._partition} to {offset}, "
                f"above the high watermark {self._high_watermark}"
            )
        if offset <= self._store.start_offset():
            return False
        self._advance_start(offset)
        return True

    def _segment_stats(self) -> list[tuple[int, int, int]]:
        """(upper bound offset, size in bytes, largest timestamp) per segment, oldest first, leaving
        out segments wholly below the log start offset (left by a start offset that a checkpoint or
        ``maybe_increment_log_start_offset`` placed; the store deletes them at the next start move)."""
        start = self._store.start_offset()
        infos = self._store.segment_infos()
        return [
            (info.next_offset, info.size, info.max_timestamp)
            for i, info in enumerate(infos)
            if not (i + 1 < len(infos) and info.next_offset <= start)
        ]

    def _delete_segments_while(self, deletable: _SegmentPredicate) -> int:
        """Kafka's ``deletableSegments``: from the oldest segment on, while ``deletable`` holds and
        the segment ends at or below the high watermark; never the active (last) segment. Deletes
        them by moving the log start offset to the next segment's base; returns how many."""
        stats = self._segment_stats()
        count = 0
        for upper, size, largest in stats[:-1]:
            if upper > self._high_watermark or not deletable(size, largest):
                break
            count += 1
        if count:
            self._advance_start(stats[count - 1][0])
        return count

    def delete_old_segments(self, now_ms: int, retention_ms: int, retention_bytes: int) -> int:
        """Retention (Kafka's ``deleteOldSegments`` for ``cleanup.policy=delete``): whole segments,
        oldest first, by size (``retention.bytes``) then by time (``retention.ms``: a segment whose
        largest timestamp is more than ``retention_ms`` before ``now_ms``); -1 means unlimited.
        Never the active segment (Kafka may roll and delete it), never a segment reaching above
        the high watermark. A segment without any timestamp is not deleted by time (Kafka uses its
        file's mtime). Advances the log start offset; returns how many segments were deleted.
        """
        self._check_open()
        deleted = 0
        if retention_bytes >= 0:
            excess = self.size_in_bytes - retention_bytes
            if excess > 0:

                def over_size(size: int, largest: int) -> bool:
                    nonlocal excess
                    if excess - size < 0:
                        return False
                    excess -= size
                    return True

                deleted += self._delete_segments_while(over_size)
        if retention_ms >= 0:
            deleted += self._delete_segments_while(
                lambda size, largest: largest >= 0 and now_ms - largest > retention_ms
            )
        return deleted

    def remove_expired_producers(
        self, now_ms: int, expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS
    ) -> int:
        """Forget idempotent producers idle for ``producer.id.expiration.ms``; returns how many."""
        self._check_open()
        return self._producers.remove_expired(now_ms, expiration_ms)

    # ------------------------------------------------------------------ durability and lifecycle

    def _flush_store(self) -> None:
        self._store.flush()
        self._recovery_point = self._store.end_offset()
        self._offsets_moved()

    def flush(self, up_to: int | None = None, *, now_ms: int | None = None) -> None:
        """Make the log durable at least below ``up_to`` (default: the log end) and move the recovery
        point there. The store can only flush everything, so the recovery point becomes the log end;
        nothing is done when ``up_to`` is already below the recovery point. ``now_ms`` (if given)
        becomes ``last_flush_ms``."""
        self._check_open()
        if up_to is None or up_to > self._recovery_point:
            self._flush_store()
        if now_ms is not None:
            self._last_flush_ms = now_ms

    def close(self) -> None:
        """Snapshot the producer state at the log end (Kafka's close) and release the log. Does not
        flush the log (``LogManager.close`` flushes first)."""
        if not self._store.closed:
            end = self._store.end_offset()
            # Kafka's ``takeSnapshot``: only past the latest snapshot (so not for an empty log,
            # whose directory is not even listed: a broker hosting 15,000 new partitions spent a
            # third of its clean stop listing them).
            if end > 0 and end > max(self._snapshot_offsets(), default=0):
                self._take_snapshot(end)
        self._store.close()

    def crash(self) -> None:
        raise NotImplementedError


class _TimestampPredicate(Protocol):
    def __call__(self, timestamp: int, /) -> bool: ...


class _SegmentPredicate(Protocol):
    def __call__(self, size: int, largest_timestamp: int, /) -> bool: ...
