"""``spark.readStream.format("kraft").option("bootstrap.controllers", "h:p,...").load()``: the
committed log of a live quorum as a stream of ``kraft.spark.columns.RECORD_DDL`` rows.

The driver tails the quorum with one ``kraft.client.quorum_tail.QuorumTail``, a raft observer
(``kraft.raft.node.RaftNode``, no node id) of ``__cluster_metadata`` that finds the leader through
the bootstrap controllers and follows it through leader changes, as a broker does; its listener
keeps the committed batches (and the snapshots the leader serves it) the stream has not consumed.
``latestOffset`` is the tail's high watermark: everything below it is committed and already on the
driver. Each micro-batch is a range of log offsets ``[start, end)``, split into partitions of at
most ``maxOffsetsPerPartition`` offsets; planning puts each partition's raw batches into the
partition itself, and the tasks decode them into Arrow batches of ``RECORD_SCHEMA`` (the tasks
talk to no node). ``commit(end)`` lets the tail drop what lies below ``end``.

Offsets are ``{"offset": N}``: the next log offset to read. Everything below the high watermark is
committed and identical on every replica, so a range read again (a batch replayed after a driver
restart, by a new tail that starts over from the leader) yields the same rows, as long as the
leader still holds the range in its log; with Spark's checkpoint this gives exactly-once output
into an idempotent or transactional sink (the file sink). No row is read twice (the tail delivers
each committed batch once, in offset order, whichever leader served it) and no row at or above the
high watermark is ever emitted. The quorum holds no per-reader state: the checkpoint is the truth.

Options (names case-insensitive; unknown ones are refused):

* ``bootstrap.controllers`` (required): ``host:port,...`` of any controllers;
* ``startingOffset``: ``earliest`` (= 0, the default), ``latest`` (the leader's high watermark when
  the query first starts) or an offset; a restarted query goes on from its checkpoint instead;
* ``maxRecordsPerTrigger``: at most this many offsets per micro-batch (Spark's ``ReadMaxRows``;
  ``Trigger.AvailableNow`` respects it and catches up in several batches, ``Trigger.Once`` passes
  ``ReadAllAvailable`` and reads everything in one); a batch that begins with a snapshot (see
  ``includeSnapshots``) reaches at least the snapshot's end offset;
* ``includeSnapshots`` (``true``): when the stream is behind the leader's log start (the leader
  took a snapshot and cleaned its log meanwhile, e.g. while the query was stopped), emit the
  snapshot's rows (``from_snapshot`` = true, ``offset`` = the snapshot's end offset - 1, as a loader
  replays it) and carry on after it, as an observer would; with ``false`` such a stream fails
  (``OffsetCompactedError``) rather than skip records;
* ``maxOffsetsPerPartition`` (100000): the most offsets one task decodes;
* ``timeoutMs`` (60000): how long the driver waits for the tail to make progress (find a leader,
  catch up to a replayed batch's end) before the batch fails.

Columns: ``file`` is ``quorum:<bootstrap.controllers>``; ``node`` is null (the rows are the
quorum's committed log, the same whichever replica served them, and a replayed batch must not
depend on which leader it met).

Limits: a replayed batch (after a driver restart) yields the same rows only while the leader's log
still holds its range. A new tail begins with the leader's latest snapshot when it has one (a Fetch
at offset 0 gets it, Kafka's rule), and ours cleans its log below each snapshot at once, so a batch
replayed after that yields the snapshot (its rows belong to the batch holding the snapshot's end
offset - 1) instead of the records, or nothing when the snapshot ends past the batch. The data
travels to the tasks inside the partitions, at most ``MAX_PARTITION_BYTES`` each (a large snapshot
is spread over several), below Spark's ``spark.rpc.message.maxSize``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from kraft.client.quorum_tail import (
    Chunk,
    LogChunk,
    OffsetCompactedError,
    OffsetReleasedError,
    QuorumReadError,
    QuorumTail,
    SnapshotChunk,
)
from kraft.common.errors import ConfigError
from kraft.spark.arrow_log import ALL_ROWS, decode_records
from kraft.spark.columns import check_schema
from kraft.spark.options import bool_option, int_option, lowered_options

try:  # PySpark 4.2+: admission control and Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxRows,
        ReadMinRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # pragma: no cover - older PySpark: latestOffset() is called without a limit

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in: this PySpark has no Trigger.AvailableNow for Python sources."""

    ReadAllAvailable = ReadMaxRows = ReadMinRows = None  # type: ignore[assignment,misc]

DEFAULT_MAX_OFFSETS_PER_PARTITION = 100_000
# How far the driver's tail reads ahead of the batches Spark has committed (it waits for a batch
# that needs more): the catching up shares the driver's Python process with Spark's calls.
TAIL_BUFFER_BYTES = 16 * 1024 * 1024
# The most raw bytes one partition carries to its task (Spark sends a task in one RPC message, at
# most spark.rpc.message.maxSize, 128 MiB by default).
MAX_PARTITION_BYTES = 32 * 1024 * 1024
DEFAULT_TIMEOUT_MS = 60_000
EARLIEST = "earliest"
LATEST = "latest"

STREAM_OPTIONS = {
    name.lower(): name
    for name in (
        "bootstrap.controllers",
        "startingOffset",
        "maxRecordsPerTrigger",
        "includeSnapshots",
        "maxOffsetsPerPartition",
        "timeoutMs",
    )
}


def _positive(lowered: Mapping[str, str], name: str) -> int | None:
    value = int_option(lowered, name)
    if value is not None and value <= 0:
        raise ConfigError(f"option {name} must be positive, got {value}")
    return value


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """The options of one streaming read, checked."""

    bootstrap_controllers: str
    starting_offset: int | str = 0  # an offset, or LATEST
    max_records_per_trigger: int | None = None
    include_snapshots: bool = True
    max_offsets_per_partition: int = DEFAULT_MAX_OFFSETS_PER_PARTITION
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> StreamOptions:
        """From Spark's (case-insensitive) options.

        Raises:
            ConfigError: a missing ``bootstrap.controllers``, an unknown option, a bad value.
        """
        from kraft.client.connection import AdminError, parse_bootstrap

        if any(str(k).lower() == "path" for k in options):
            raise ConfigError(
                'spark.readStream.format("kraft") reads a live quorum, not files: pass '
                '.option("bootstrap.controllers", "host:port,...") and call load() without a path'
            )
        lowered = lowered_options(options, STREAM_OPTIONS, "kraft stream")
        bootstrap = str(lowered.get("bootstrap.controllers") or "").strip()
        if not bootstrap:
            raise ConfigError(
                'the kraft stream needs .option("bootstrap.controllers", "host:port,...") '
                "(any controllers of the quorum)"
            )
        try:
            addresses = parse_bootstrap(bootstrap)
        except AdminError as e:
            raise ConfigError(f"option bootstrap.controllers: {e}") from None
        starting: int | str = 0
        text = str(lowered.get("startingoffset", EARLIEST)).strip().lower()
        if text == LATEST:
            starting = LATEST
        elif text != EARLIEST:
            try:
                starting = int(text)
            except ValueError:
                raise ConfigError(
                    f"option startingOffset must be earliest, latest or an offset, got {text!r}"
                ) from None
            if starting < 0:
                raise ConfigError(f"option startingOffset must be >= 0, got {starting}")
        return cls(
            bootstrap_controllers=",".join(str(a) for a in addresses),
            starting_offset=starting,
            max_records_per_trigger=_positive(lowered, "maxRecordsPerTrigger"),
            include_snapshots=bool_option(lowered, "includeSnapshots", default=True),
            max_offsets_per_partition=_positive(lowered, "maxOffsetsPerPartition")
            or DEFAULT_MAX_OFFSETS_PER_PARTITION,
            timeout_ms=_positive(lowered, "timeoutMs") or DEFAULT_TIMEOUT_MS,
        )

    @property
    def source(self) -> str:
        """The ``file`` column of every row."""
        return f"quorum:{self.bootstrap_controllers}"


class KraftStreamPartition(InputPartition):
    """Offsets ``[start, end)`` of a micro-batch and the raw batches that hold them (picklable):
    planning fetched them, the task only decodes."""

    def __init__(self, start: int, end: int, chunks: list[Chunk], source: str) -> None:
        super().__init__(f"{start}-{end}")
        self.start = start
        self.end = end
        self.chunks = chunks
        self.source = source


def plan_ranges(
    start: int, end: int, max_per_partition: int, whole_below: int | None = None
) -> list[tuple[int, int]]:
    """``[start, end)`` cut into consecutive ranges of at most ``max_per_partition`` offsets, except
    that the first range reaches at least ``whole_below`` (capped at ``end``)."""
    ranges: list[tuple[int, int]] = []
    lo = start
    if whole_below is not None and whole_below > start:
        first = min(end, max(whole_below, start + max_per_partition))
        ranges.append((start, first))
        lo = first
    ranges += [(a, min(a + max_per_partition, end)) for a in range(lo, end, max_per_partition)]
    return ranges


def pack_chunks(chunks: list[Chunk], max_bytes: int) -> list[list[Chunk]]:
    """The chunks of one range in order, in groups of at most ``max_bytes`` (a chunk larger than
    that alone): one partition per group, so that no task carries more (a large snapshot is
    spread over several tasks; its rows all stand at one offset, in any of them)."""
    groups: list[list[Chunk]] = []
    size = 0
    for chunk in chunks:
        if not groups or (size + len(chunk.records) > max_bytes and groups[-1]):
            groups.append([])
            size = 0
        groups[-1].append(chunk)
        size += len(chunk.records)
    return groups


def decode_chunks(chunks: list[Chunk], source: str) -> Iterator[pa.RecordBatch]:
    """The rows of a partition's chunks: a log chunk's records with ``start <= offset < end``, a
    snapshot chunk's all at the snapshot's end offset - 1."""
    for chunk in chunks:
        if isinstance(chunk, LogChunk):
            rows = ALL_ROWS.offset_at_least(chunk.start).offset_below(chunk.end)
            yield from decode_records(chunk.records, source=source, row_filter=rows)
        else:
            assert isinstance(chunk, SnapshotChunk)
            yield from decode_records(chunk.records, source=source, snapshot_offset=chunk.offset)


def _offset(value: Mapping[str, Any] | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value["offset"])
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"not a kraft stream offset: {value!r} (expected {{'offset': N}})") from None


class KraftStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The stream reader of the ``kraft`` format (see the module docstring).

    One instance lives on the driver for the whole query and keeps one ``QuorumTail``; Spark
    pickles a fresh instance into the tasks (without the tail), where ``read`` decodes what the
    partition carries.
    """

    def __init__(self, options: Mapping[str, str], schema: StructType | None = None) -> None:
        check_schema(schema)
        self.options = StreamOptions.parse(options)
        self._tail: QuorumTail | None = None
        self._target: int | None = None  # Trigger.AvailableNow: the high watermark at its start

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_tail"] = None  # a tail (a thread and its connections) does not travel
        return state

    # -- driver ----------------------------------------------------------------------------------

    def _quorum(self, from_offset: int | None = None) -> QuorumTail:
        """The tail, started on first use keeping nothing below ``from_offset``; a new one when
        the current one no longer holds ``from_offset`` (it was released: Spark went back) or
        has stopped (a fatal error in its observer)."""
        tail = self._tail
        if tail is not None and (
            (from_offset is not None and from_offset < tail.buffer.floor) or tail.buffer.failure is not None
        ):
            tail.close()
            tail = self._tail = None
        if tail is None:
            tail = QuorumTail(
                self.options.bootstrap_controllers,
                from_offset=from_offset or 0,
                timeout_s=self.options.timeout_ms / 1000,
                max_buffered_bytes=TAIL_BUFFER_BYTES,
            )
            tail.start()
            self._tail = tail
        return tail

    def _leader_high_watermark(self) -> int:
        return self._quorum().wait_for_leader()

    def initialOffset(self) -> dict[str, int]:
        starting = self.options.starting_offset
        if starting == LATEST:
            latest = self._leader_high_watermark()
            self._quorum().release(latest)  # nothing below it will be read
            return {"offset": latest}
        assert isinstance(starting, int)
        return {"offset": starting}

    def getDefaultReadLimit(self) -> Any:
        if self.options.max_records_per_trigger is not None and ReadMaxRows is not None:
            return ReadMaxRows(self.options.max_records_per_trigger)
        return ReadAllAvailable() if ReadAllAvailable is not None else None

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._leader_high_watermark()

    def latestOffset(self, start: dict[str, Any] | None = None, limit: Any = None) -> dict[str, int]:
        """The tail's high watermark (with ``Trigger.AvailableNow``: its target, once the tail has
        caught up to it), bounded by ``limit``: Spark's ``ReadMaxRows``/``ReadMinRows``/
        ``ReadAllAvailable``, or with no limit passed (PySpark before 4.2) ``maxRecordsPerTrigger``."""
        begin = _offset(start)
        tail = self._quorum(begin)
        if begin is None:
            return {"offset": tail.high_watermark}
        tail.release(begin)
        if self._target is not None:
            # Wait for the offsets this batch may take: up to the target, bounded by the limit
            # (an AvailableNow query ends at the first batch that finds nothing new).
            goal = self._bounded(begin, max(begin, self._target), limit)
            if tail.high_watermark < goal:
                tail.wait_for(goal)
            available = min(tail.high_watermark, self._target)
        else:
            available = tail.high_watermark
        end = max(begin, available)
        bounded = self._bounded(begin, end, limit)
        if bounded > begin:
            # Behind the leader's log start (or at 0 while the leader has a snapshot), the tail
            # begins with a snapshot whose rows carry its end offset - 1: reach past it, so that
            # the snapshot comes with this batch rather than after batches that yield nothing.
            sid = tail.snapshot_at(begin)
            if sid is not None and sid.offset <= end:
                return {"offset": max(sid.offset, bounded)}
        return {"offset": bounded}

    def _bounded(self, begin: int, end: int, limit: Any) -> int:
        if limit is None:
            if self.options.max_records_per_trigger is not None:
                end = min(end, begin + self.options.max_records_per_trigger)
        elif ReadMaxRows is not None and isinstance(limit, ReadMaxRows):
            end = min(end, begin + max(1, limit.max_rows))
        elif ReadMinRows is not None and isinstance(limit, ReadMinRows) and end - begin < limit.min_rows:
            end = begin
        return end

    def reportLatestOffset(self) -> dict[str, int] | None:
        tail = self._tail
        return None if tail is None else {"offset": max(tail.high_watermark, tail.leader_high_watermark)}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        """The batch's ranges with their data, read from the tail (a replayed batch after a restart:
        once the new tail has caught up to its end)."""
        lo, hi = _offset(start), _offset(end)
        assert lo is not None and hi is not None
        if hi <= lo:
            return []
        tail = self._quorum(lo)
        tail.release(lo)
        tail.wait_for(hi)
        sid = tail.snapshot_at(lo)
        whole_below = None if sid is None else sid.offset
        partitions: list[InputPartition] = []
        for a, b in plan_ranges(lo, hi, self.options.max_offsets_per_partition, whole_below):
            try:
                chunks = tail.read(a, b, include_snapshots=self.options.include_snapshots)
            except OffsetReleasedError as e:  # not expected: _quorum(lo) keeps lo
                raise QuorumReadError(f"offsets {a}-{b}: {e}") from None
            partitions += [
                KraftStreamPartition(a, b, group, self.options.source)
                for group in pack_chunks(chunks, MAX_PARTITION_BYTES)
            ]
        return partitions

    def commit(self, end: dict[str, Any]) -> None:
        """The batch below ``end`` is done: the tail may drop it."""
        offset = _offset(end)
        if self._tail is not None and offset is not None:
            self._tail.release(offset)

    def stop(self) -> None:
        if self._tail is not None:
            self._tail.close()
            self._tail = None

    # -- tasks -----------------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, KraftStreamPartition):
            return iter(())
        return decode_chunks(partition.chunks, partition.source)


__all__ = [
    "KraftStreamPartition",
    "KraftStreamReader",
    "OffsetCompactedError",
    "QuorumReadError",
    "StreamOptions",
    "decode_chunks",
    "pack_chunks",
    "plan_ranges",
]
