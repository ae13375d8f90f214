"""What the core tells its state machines (Kafka's ``RaftClient.Listener``) and snapshot I/O.

Guarantees to each registered listener: ``handle_commit`` sees only committed batches, in offset
order, each exactly once; ``handle_load_snapshot`` only when the listener is new or behind the log
start; the local node is announced as leader only after the listener consumed everything before the
leader's epoch start offset, so a leader's listener is never asked to load a snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kraft.common.errors import CorruptRecordError, KraftError
from kraft.common.fast_init import speed_up_inits
from kraft.protocol.schema import StructValue
from kraft.raft.log import RawSnapshotReader, RawSnapshotWriter
from kraft.raft.types import LeaderAndEpoch, OffsetAndEpoch
from kraft.raft.voters import VoterSet
from kraft.records.batch import (
    RecordBatch,
    SimpleRecord,
    assign_offsets_and_epoch,
    build_batch,
    decode_batch_values,
    iter_batches,
    read_batch_header,
)
from kraft.records.control import (
    ControlType,
    build_control_batch_of,
    control_records,
    kraft_version_record,
    snapshot_footer_record,
    snapshot_header_record,
)


@dataclass(frozen=True, slots=True)
class CommittedBatch:
    """A committed batch. Control batches advance the offset only: ``records=()``."""

    base_offset: int
    last_offset: int
    epoch: int
    append_timestamp_ms: int
    records: tuple[bytes, ...]
    is_control: bool = False

    @staticmethod
    def from_bytes(
        data: bytes | bytearray | memoryview, pos: int = 0, *, from_offset: int | None = None
    ) -> CommittedBatch:
        """The batch at ``pos``, as ``from_batch(decode_batch(data, pos))`` gives it, without a
        ``Record`` per record (``decode_batch_values``).

        Raises:
            CorruptRecordError: as ``decode_batch``.
        """
        header, values = decode_batch_values(data, pos, from_offset)
        start = header.base_offset if from_offset is None else max(from_offset, header.base_offset)
        return CommittedBatch(
            start,
            header.base_offset + header.last_offset_delta,
            header.partition_leader_epoch,
            header.max_timestamp,
            values,
            header.is_control,
        )

    @staticmethod
    def from_batch(batch: RecordBatch, *, from_offset: int | None = None) -> CommittedBatch:
        start = batch.base_offset if from_offset is None else max(from_offset, batch.base_offset)
        records: tuple[bytes, ...] = ()
        if not batch.is_control:
            records = tuple(r.value or b"" for r in batch.records if r.offset >= start)
        return CommittedBatch(
            start,
            batch.last_offset,
            batch.partition_leader_epoch,
            batch.header.max_timestamp,
            records,
            batch.is_control,
        )


class CommittedBatchCache:
    """Committed batches already decoded, by their exact bytes (an opt-in, bounded memo).

    Decoding is a pure function of a batch's bytes, and followers hold the leader's bytes, so
    several nodes in one process (the simulator) decode the same batches again and again. A node
    given a cache looks a batch up by its bytes before decoding it. The bytes include the base
    offset, epoch and CRC, so a hit is the batch itself. The oldest entries are dropped beyond
    ``max_entries``; batches above ``max_batch_bytes`` are never kept.
    """

    __slots__ = ("_entries", "hits", "max_batch_bytes", "max_entries", "misses")

    def __init__(self, max_entries: int = 4096, max_batch_bytes: int = 64 * 1024) -> None:
        self._entries: dict[bytes, CommittedBatch] = {}
        self.max_entries = max_entries
        self.max_batch_bytes = max_batch_bytes
        self.hits = 0
        self.misses = 0

    def decode(self, raw: bytes) -> CommittedBatch:
        """The whole committed batch ``raw`` (exactly one batch), decoded once per cache.

        Raises:
            CorruptRecordError: as ``decode_batch`` (nothing is cached then).
        """
        entries = self._entries
        found = entries.get(raw)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        batch = CommittedBatch.from_bytes(raw)
        if len(raw) <= self.max_batch_bytes:
            if len(entries) >= self.max_entries:
                del entries[next(iter(entries))]  # the oldest (dicts keep insertion order)
            entries[raw] = batch
        return batch


class SnapshotReader:
    """The committed data of one frozen snapshot (header and footer consumed, not delivered)."""

    def __init__(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        self.snapshot_id = snapshot_id
        self.last_contained_log_timestamp = -1
        batches: list[CommittedBatch] = []
        for batch in iter_batches(data):
            if batch.is_control:
                for kind, message in control_records(batch):
                    if kind is ControlType.SNAPSHOT_HEADER:
                        header: Any = message
                        self.last_contained_log_timestamp = int(header.last_contained_log_timestamp)
                continue
            batches.append(CommittedBatch.from_batch(batch))
        self.batches: tuple[CommittedBatch, ...] = tuple(batches)

    @staticmethod
    def from_raw(raw: RawSnapshotReader) -> SnapshotReader:
        size = raw.size_in_bytes()
        data = raw.read(0, size)
        if len(data) != size:
            raise CorruptRecordError(f"snapshot {raw.snapshot_id} returned {len(data)} of {size} bytes")
        return SnapshotReader(raw.snapshot_id, data)

    def records(self) -> Iterator[bytes]:
        for batch in self.batches:
            yield from batch.records


class SnapshotWriter:
    """Writes header, data batches and footer of a snapshot, as Kafka's ``RecordsSnapshotWriter``,
    over any ``RawSnapshotWriter`` (a ``MemoryLog``'s, or ``kraft.storage``'s file writer);
    ``freeze`` publishes it.

    Offsets inside the snapshot start at 0; every batch carries the snapshot's epoch as its
    partitionLeaderEpoch, and each batch it builds has ``last_contained_log_timestamp_ms`` as its
    timestamp (``append_batch`` keeps the batch's own). With ``kraft_version`` >= 1 the header
    batch also holds a KRaftVersionRecord and, if given, the VotersRecord of ``voters`` (KIP-853).
    ``on_frozen``, if given, is called after ``freeze``.
    """

    def __init__(
        self,
        raw: RawSnapshotWriter,
        last_contained_log_timestamp_ms: int,
        on_frozen: Callable[[OffsetAndEpoch], None] | None = None,
        *,
        kraft_version: int = 0,
        voters: VoterSet | None = None,
    ) -> None:
        self._raw = raw
        self._on_frozen = on_frozen
        self._epoch = raw.snapshot_id.epoch
        self._timestamp_ms = last_contained_log_timestamp_ms
        self._next_offset = 0
        self._frozen = False
        header: list[tuple[ControlType, StructValue]] = [
            (ControlType.SNAPSHOT_HEADER, snapshot_header_record(last_contained_log_timestamp_ms))
        ]
        if kraft_version > 0:
            # KIP-853, as Kafka's RecordsSnapshotWriter (and write_bootstrap_voters): the
            # kraft.version and the voter set of the snapshot's offset share the header's batch.
            header.append((ControlType.KRAFT_VERSION, kraft_version_record(kraft_version)))
            if voters is not None:
                header.append((ControlType.KRAFT_VOTERS, voters.to_record()))
        self._write_control(header)

    @property
    def snapshot_id(self) -> OffsetAndEpoch:
        return self._raw.snapshot_id

    def _write_control(self, entries: list[tuple[ControlType, StructValue]]) -> None:
        data = build_control_batch_of(
            entries,
            base_offset=self._next_offset,
            partition_leader_epoch=self._epoch,
            timestamp_ms=self._timestamp_ms,
        )
        self._raw.append(data)
        self._next_offset += len(entries)

    def append(self, records: Sequence[bytes]) -> None:
        if self._frozen:
            raise KraftError(f"snapshot {self.snapshot_id} is frozen")
        if not records:
            return
        data = build_batch(
            [SimpleRecord(value=r) for r in records],
            base_offset=self._next_offset,
            partition_leader_epoch=self._epoch,
            timestamp_ms=self._timestamp_ms,
        )
        self._raw.append(data)
        self._next_offset += len(records)

    def append_batch(self, batch: bytes | bytearray) -> None:
        """One already-built batch, as is but for its base offset and epoch, which are rewritten.

        Raises:
            KraftError: the snapshot is frozen, or ``batch`` is not exactly one whole batch.
        """
        if self._frozen:
            raise KraftError(f"snapshot {self.snapshot_id} is frozen")
        header = read_batch_header(batch)
        if header is None or header.size_in_bytes != len(batch):
            raise KraftError("a snapshot batch must be exactly one whole record batch")
        self._raw.append(assign_offsets_and_epoch(batch, self._next_offset, self._epoch))
        self._next_offset += header.last_offset_delta + 1

    def freeze(self) -> None:
        if self._frozen:
            raise KraftError(f"snapshot {self.snapshot_id} is already frozen")
        self._write_control([(ControlType.SNAPSHOT_FOOTER, snapshot_footer_record())])
        self._raw.freeze()
        self._frozen = True
        if self._on_frozen is not None:
            self._on_frozen(self.snapshot_id)

    def abort(self) -> None:
        if not self._frozen:
            self._raw.abort()


class RaftListener(Protocol):
    def handle_commit(self, batch: CommittedBatch) -> None: ...

    def handle_load_snapshot(self, reader: SnapshotReader) -> None: ...

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None: ...


@dataclass(slots=True)
class ListenerContext:
    listener: RaftListener
    next_offset: int | None = None
    last_leader: LeaderAndEpoch | None = None
    # The quorum state object last_leader was read from (its leader and epoch never change).
    last_state: object | None = None


# Built for every committed batch: see kraft.common.fast_init.
speed_up_inits(CommittedBatch)
