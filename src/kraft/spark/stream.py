"""``spark.readStream.format("kraft").option("bootstrap.controllers", "h:p,...").load()``: the
committed log of a live quorum as a stream of ``kraft.spark.columns.RECORD_DDL`` rows.

The driver asks the quorum's leader for its high watermark (``latestOffset``); each micro-batch is
a range of log offsets ``[start, end)`` below it, split into partitions of at most
``maxOffsetsPerPartition`` offsets; each task reads its range from the leader with its own
``kraft.tools.quorum_reader.QuorumReader`` (Fetch as an observer with replica id -1, FetchSnapshot
when the range was compacted into a snapshot) and yields Arrow batches of ``RECORD_SCHEMA``.

Offsets are ``{"offset": N}``: the next log offset to read. Everything below the high watermark is
committed and identical on every replica, so a range read again (a batch replayed after a driver
restart, a task retried, a read that moved to a new leader mid-way) yields the same rows, as long
as the leader still holds the range in its log; with Spark's checkpoint this gives exactly-once
output into an idempotent or transactional sink (the file sink). ``commit()`` keeps nothing: the
quorum holds no per-reader state and the checkpoint is the truth.

Options (names case-insensitive; unknown ones are refused):

* ``bootstrap.controllers`` (required): ``host:port,...`` of any controllers;
* ``startingOffset``: ``earliest`` (= 0, the default), ``latest`` (the high watermark when the
  query first starts) or an offset; a restarted query goes on from its checkpoint instead;
* ``maxRecordsPerTrigger``: at most this many offsets per micro-batch (Spark's ``ReadMaxRows``;
  ``Trigger.AvailableNow`` respects it and catches up in several batches, ``Trigger.Once`` passes
  ``ReadAllAvailable`` and reads everything in one); a batch that begins with a snapshot (see
  ``includeSnapshots``) reaches at least the snapshot's end offset;
* ``includeSnapshots`` (``true``): when the stream is behind the leader's log start (the leader
  took a snapshot and cleaned its log meanwhile), emit the snapshot's rows (``from_snapshot`` =
  true, ``offset`` = the snapshot's end offset - 1, as a loader replays it) and carry on after it,
  as an observer would; with ``false`` such a stream fails (``OffsetCompactedError``) rather than
  skip records;
* ``maxOffsetsPerPartition`` (100000): the most offsets one task reads;
* ``timeoutMs`` (60000): how long a read (or a high-watermark query) keeps retrying through leader
  changes and lost connections without progress before the batch fails.

Columns: ``file`` is ``quorum:<bootstrap.controllers>``; ``node`` is null (the rows are the
quorum's committed log, the same whichever replica served them, and a replayed batch must not
depend on which leader it met).

Limits, all about a leader that snapshots and cleans its log while a batch is in flight:

* a replayed batch yields the same rows only while the leader's log still holds its range; ours
  cleans its log below each snapshot at once, so a batch replayed after that yields the snapshot
  (its rows belong to the batch holding the snapshot's end offset - 1) instead of the records;
* a batch whose range the leader compacts, between the batch's planning and its read, into a
  snapshot ending past the batch's end yields nothing (the snapshot comes with a later batch):
  the stream keeps up only while snapshots are rarer than that interval (Kafka's defaults: every
  20 MiB of records or every hour);
* a batch split into several partitions can lose the records of one partition if the leader
  publishes a snapshot ending inside the batch after another partition read its range from the
  log and before this one starts; a batch that begins with a snapshot keeps it whole in its first
  partition, and the default ``maxOffsetsPerPartition`` leaves live batches unsplit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from kraft.common.errors import ConfigError
from kraft.spark.arrow_log import ALL_ROWS, decode_records
from kraft.spark.columns import RECORD_DDL, RECORD_SCHEMA
from kraft.spark.options import bool_option, int_option, lowered_options
from kraft.tools.quorum_reader import (
    LeaderHint,
    LogChunk,
    OffsetCompactedError,
    QuorumReader,
    QuorumReadError,
    SnapshotChunk,
)

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
    """Offsets ``[start, end)`` to read, with what the driver knew of the leader (picklable)."""

    def __init__(self, start: int, end: int, options: StreamOptions, hint: LeaderHint | None) -> None:
        super().__init__(f"{start}-{end}")
        self.start = start
        self.end = end
        self.options = options
        self.hint = hint


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


def read_range(
    start: int, end: int, options: StreamOptions, hint: LeaderHint | None = None
) -> Iterator[pa.RecordBatch]:
    """The rows of offsets ``[start, end)`` of the quorum's committed log (what a task yields)."""
    source = options.source
    with QuorumReader(
        options.bootstrap_controllers, timeout_s=options.timeout_ms / 1000, leader_hint=hint
    ) as reader:
        rows = ALL_ROWS.offset_at_least(start).offset_below(end)
        for chunk in reader.read(start, end, include_snapshots=options.include_snapshots):
            if isinstance(chunk, LogChunk):
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


def _check_schema(schema: StructType | None) -> None:
    if schema is None:
        return
    from pyspark.sql.pandas.types import to_arrow_schema

    if not to_arrow_schema(schema, timezone="UTC").equals(RECORD_SCHEMA):
        raise ConfigError(
            f"the kraft source has a fixed schema ({RECORD_DDL}); got {schema.simpleString()}: "
            "select the columns you need after load() instead of passing a schema"
        )


class KraftStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The stream reader of the ``kraft`` format (see the module docstring).

    One instance lives on the driver for the whole query and keeps a ``QuorumReader`` (one
    connection to the leader) for its high-watermark queries; Spark pickles a fresh instance into
    the tasks, where ``read`` opens its own.
    """

    def __init__(self, options: Mapping[str, str], schema: StructType | None = None) -> None:
        _check_schema(schema)
        self.options = StreamOptions.parse(options)
        self._reader: QuorumReader | None = None
        self._target: int | None = None  # Trigger.AvailableNow: the high watermark at its start
        # (offset, end of the snapshot a read from it begins with, or None): the last probe
        self._snapshot_probe: tuple[int, int | None] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_reader"] = None  # a connection does not travel
        return state

    # -- driver ----------------------------------------------------------------------------------

    def _quorum(self) -> QuorumReader:
        if self._reader is None:
            self._reader = QuorumReader(
                self.options.bootstrap_controllers, timeout_s=self.options.timeout_ms / 1000
            )
        return self._reader

    def _high_watermark(self) -> int:
        return self._quorum().high_watermark().high_watermark

    def initialOffset(self) -> dict[str, int]:
        starting = self.options.starting_offset
        if starting == LATEST:
            return {"offset": self._high_watermark()}
        assert isinstance(starting, int)
        return {"offset": starting}

    def getDefaultReadLimit(self) -> Any:
        if self.options.max_records_per_trigger is not None and ReadMaxRows is not None:
            return ReadMaxRows(self.options.max_records_per_trigger)
        return ReadAllAvailable() if ReadAllAvailable is not None else None

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._high_watermark()

    def latestOffset(self, start: dict[str, Any] | None = None, limit: Any = None) -> dict[str, int]:
        """The high watermark (at most the AvailableNow target), bounded by ``limit``: Spark's
        ``ReadMaxRows``/``ReadMinRows``/``ReadAllAvailable``, or with no limit passed (PySpark
        before 4.2) ``maxRecordsPerTrigger``."""
        available = self._high_watermark()
        if self._target is not None:
            available = min(available, self._target)
        begin = _offset(start)
        if begin is None:
            return {"offset": available}
        end = max(begin, available)
        bounded = self._bounded(begin, end, limit)
        if bounded > begin:
            # Behind the leader's log start (or at 0 while the leader has a snapshot), a read
            # begins with a snapshot whose rows carry its end offset - 1: reach past it, so that
            # the snapshot comes with this batch rather than after batches that yield nothing.
            snapshot_end = self._snapshot_end(begin)
            if snapshot_end is not None and snapshot_end <= end:
                return {"offset": max(snapshot_end, bounded)}
        return {"offset": bounded}

    def _snapshot_end(self, offset: int) -> int | None:
        """The end offset of the snapshot a read from ``offset`` begins with (one Fetch)."""
        sid = self._quorum().snapshot_at(offset)
        self._snapshot_probe = (offset, None if sid is None else sid.offset)
        return self._snapshot_probe[1]

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
        reader = self._reader
        return None if reader is None else {"offset": reader.committed}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        lo, hi = _offset(start), _offset(end)
        assert lo is not None and hi is not None
        if hi <= lo:
            return []
        reader = self._quorum()
        if reader.committed < hi:
            reader.high_watermark()  # a replayed batch after a restart: learn the leader first
        probe = self._snapshot_probe
        whole_below = probe[1] if probe is not None and probe[0] == lo else self._snapshot_end(lo)
        hint = reader.leader_hint()
        return [
            KraftStreamPartition(a, b, self.options, hint)
            for a, b in plan_ranges(lo, hi, self.options.max_offsets_per_partition, whole_below)
        ]

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to release: the quorum keeps no state for this reader."""

    def stop(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # -- tasks -----------------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, KraftStreamPartition):
            return iter(())
        return read_range(partition.start, partition.end, partition.options, partition.hint)


__all__ = [
    "KraftStreamPartition",
    "KraftStreamReader",
    "OffsetCompactedError",
    "QuorumReadError",
    "StreamOptions",
    "plan_ranges",
    "read_range",
]
