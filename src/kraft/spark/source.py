"""``spark.read.format("kraft").load(PATH)``: a node's metadata log as a DataFrame of
``kraft.spark.columns.RECORD_DDL`` rows (PySpark's Python Data Source API, Arrow batches).

``PATH`` is a node's ``metadata.log.dir``, its ``__cluster_metadata-0`` directory, or one segment
or snapshot file. Each read unit of ``kraft.spark.arrow_log.plan_units`` (a segment or snapshot
file, or a slice of a large one) is one Spark partition; workers decode the files themselves, so
the path must be readable where the tasks run (local mode, or a shared file system).

Options (names are case-insensitive; unknown ones are refused, so that a typo never reads
everything):

* ``startingOffset``, ``endingOffset``: keep rows with ``startingOffset <= offset < endingOffset``;
* ``includeSnapshots`` (``false``): also read the snapshot files, whose rows have
  ``from_snapshot`` = true and ``offset`` = the snapshot's end offset - 1;
* ``committedOnly`` (``false``): keep only committed records, below ``endingOffset`` (a high
  watermark the caller knows) and/or below the high watermark that the quorum's leader reports to
  DescribeQuorum, asked at planning through ``bootstrap.controllers`` (``host:port,...``);
* ``maxBytesPerPartition`` (32 MiB): larger files are split at batch boundaries;
* ``pushFilters`` (``false``): let Spark push filters into the read (below).

Filter pushdown, with ``pushFilters=true``: comparisons of ``offset`` with an integer (=, <, <=,
>, >=, IN) prune whole read units and rows; ``record_type`` = / IN / IS NOT NULL prune rows (and
skip control batches undecoded); everything else is left to Spark. It is off by default because
PySpark 4.3.0 keeps the read plan made during pushdown on the *relation*, not the scan
(``PythonScanBuilder.pushFilters`` calls ``PythonDataSourceV2.setReadInfo``): every other scan of
the same DataFrame or temporary view that has no filter of its own to push then reads the rows
pushed for the last query, including the other side of a self-join or union. With it on, call
``load()`` once per query. ``startingOffset``/``endingOffset`` prune the same way and are safe.
Spark needs ``spark.sql.python.filterPushdown.enabled`` for it (``kraft_session`` sets it).

Spark keeps a read plan on the relation, so a later action on the same DataFrame may read the
files and sizes an earlier action planned: ``load()`` again to see new records.

``spark.readStream.format("kraft")`` is served by ``kraft.spark.stream.KraftStreamReader``.

Where the JVM source (``kraft.spark.jvm``) is built and on the session's classpath, it serves
``kraft`` batch reads instead (same rows, options and errors, several times faster), and this source
is registered as ``kraft_python`` (``kraft.spark.session``), to which the JVM source hands streaming
reads and reads that ask a quorum for its high watermark.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StructType

from kraft.common.errors import ConfigError
from kraft.spark.arrow_log import (
    ALL_ROWS,
    DEFAULT_MAX_BYTES_PER_UNIT,
    ReadUnit,
    RowFilter,
    plan_units,
    read_unit,
)
from kraft.spark.columns import RECORD_DDL, check_schema
from kraft.spark.options import bool_option, int_option, lowered_options

SOURCE_NAME = "kraft"
PYTHON_SOURCE_NAME = "kraft_python"

# Lower-cased option name -> the spelling the documentation uses.
OPTIONS = {
    name.lower(): name
    for name in (
        "path",
        "startingOffset",
        "endingOffset",
        "includeSnapshots",
        "committedOnly",
        "bootstrap.controllers",
        "maxBytesPerPartition",
        "pushFilters",
    )
}


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The options of one batch read, checked."""

    path: str
    starting_offset: int | None = None
    ending_offset: int | None = None
    include_snapshots: bool = False
    committed_only: bool = False
    bootstrap_controllers: str | None = None
    max_bytes_per_partition: int = DEFAULT_MAX_BYTES_PER_UNIT
    push_filters: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        """From Spark's (case-insensitive) options.

        Raises:
            ConfigError: a missing path, an unknown option, or a value out of place.
        """
        lowered = lowered_options(options, OPTIONS, "kraft source")
        path = lowered.get("path")
        if not path:
            raise ConfigError(
                'the kraft source needs a path: spark.read.format("kraft").load(METADATA_LOG_DIR)'
            )
        committed = bool_option(lowered, "committedOnly")
        ending = int_option(lowered, "endingOffset")
        bootstrap = lowered.get("bootstrap.controllers")
        bootstrap = str(bootstrap).strip() if bootstrap is not None else None
        if committed and ending is None and not bootstrap:
            raise ConfigError(
                "committedOnly needs endingOffset (a high watermark you know) or bootstrap.controllers "
                "(host:port,... of the controllers, to ask the quorum's leader for its high watermark)"
            )
        if bootstrap is not None and not committed:
            raise ConfigError("bootstrap.controllers is only used with committedOnly=true")
        max_bytes = int_option(lowered, "maxBytesPerPartition")
        if max_bytes is not None and max_bytes <= 0:
            raise ConfigError(f"option maxBytesPerPartition must be positive, got {max_bytes}")
        return cls(
            path=str(path),
            starting_offset=int_option(lowered, "startingOffset"),
            ending_offset=ending,
            include_snapshots=bool_option(lowered, "includeSnapshots"),
            committed_only=committed,
            bootstrap_controllers=bootstrap or None,
            max_bytes_per_partition=DEFAULT_MAX_BYTES_PER_UNIT if max_bytes is None else max_bytes,
            push_filters=bool_option(lowered, "pushFilters"),
        )

    def row_filter(self) -> RowFilter:
        """The offset bounds the options set (without the high watermark, asked at planning)."""
        rf = ALL_ROWS
        if self.starting_offset is not None:
            rf = rf.offset_at_least(self.starting_offset)
        if self.ending_offset is not None:
            rf = rf.offset_below(self.ending_offset)
        return rf


def quorum_high_watermark(bootstrap_controllers: str) -> int:
    """The high watermark the quorum's leader reports (DescribeQuorum).

    Raises:
        AdminError: a bad address list, or no leader answered in time.
    """
    from kraft.client.admin import AdminClient
    from kraft.client.connection import parse_bootstrap

    return AdminClient(parse_bootstrap(bootstrap_controllers)).describe_quorum().high_watermark


class KraftPartition(InputPartition):
    """One read unit and the row filter to apply to it (both picklable)."""

    def __init__(self, unit: ReadUnit, row_filter: RowFilter) -> None:
        super().__init__(f"{unit.path}@{unit.start}")
        self.unit = unit
        self.row_filter = row_filter


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def push_filter(row_filter: RowFilter, f: Filter) -> RowFilter | None:
    """``row_filter`` narrowed by ``f``, or None if the source cannot apply ``f`` exactly."""
    attribute = tuple(a.lower() for a in getattr(f, "attribute", ()))
    if attribute == ("offset",):
        if isinstance(f, IsNotNull):
            return row_filter  # offset is never null
        value: Any = getattr(f, "value", None)
        if isinstance(f, In):
            values = [v for v in value if v is not None]  # x IN (.., NULL) is never true for NULL
            return row_filter.offset_in(values) if all(_is_int(v) for v in values) else None
        if not _is_int(value):
            return None
        if isinstance(f, EqualTo):
            return row_filter.offset_in([value])
        if isinstance(f, GreaterThan):
            return row_filter.offset_at_least(value + 1)
        if isinstance(f, GreaterThanOrEqual):
            return row_filter.offset_at_least(value)
        if isinstance(f, LessThan):
            return row_filter.offset_below(value)
        if isinstance(f, LessThanOrEqual):
            return row_filter.offset_below(value + 1)
        return None
    if attribute == ("record_type",):
        if isinstance(f, IsNotNull):
            return row_filter.record_type_present()
        if isinstance(f, EqualTo) and isinstance(f.value, str):
            return row_filter.record_type_in([f.value])
        if isinstance(f, In):
            names = [v for v in f.value if v is not None]
            return row_filter.record_type_in(names) if all(isinstance(v, str) for v in names) else None
    return None


class KraftReader(DataSourceReader):
    """Plans the read units (on the driver) and reads them (in the tasks). Takes no filters
    (Spark's default ``pushFilters``); ``KraftPushdownReader`` does."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self.pushed_filter = ALL_ROWS

    def row_filter(self) -> RowFilter:
        """Options and pushed filters together, with the high watermark if ``committedOnly`` asks
        the quorum (a network call: done once, when planning)."""
        rf = self.options.row_filter().intersect(self.pushed_filter)
        if self.options.committed_only and self.options.bootstrap_controllers:
            rf = rf.offset_below(quorum_high_watermark(self.options.bootstrap_controllers))
        return rf

    def partitions(self) -> list[InputPartition]:
        rf = self.row_filter()
        units = plan_units(
            self.options.path,
            include_snapshots=self.options.include_snapshots,
            max_bytes_per_unit=self.options.max_bytes_per_partition,
            row_filter=rf,
        )
        return [KraftPartition(unit, rf) for unit in units]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, KraftPartition):
            return iter(())  # Spark's stand-in partition when nothing was planned
        return read_unit(partition.unit, partition.row_filter)


class KraftPushdownReader(KraftReader):
    """``KraftReader`` that takes the filters ``push_filter`` can apply exactly (``pushFilters``
    option). ``pushed`` and ``rejected`` record what it took and gave back."""

    def __init__(self, options: ReadOptions) -> None:
        super().__init__(options)
        self.pushed: list[Filter] = []
        self.rejected: list[Filter] = []

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        for f in filters:
            narrowed = push_filter(self.pushed_filter, f)
            if narrowed is None:
                self.rejected.append(f)
            else:
                self.pushed_filter = narrowed
                self.pushed.append(f)
        return list(self.rejected)


class KraftDataSource(DataSource):
    """The ``kraft`` format: ``spark.read.format("kraft").load(path)`` (see the module docstring)."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        return RECORD_DDL

    def reader(self, schema: StructType) -> KraftReader:
        check_schema(schema)
        options = ReadOptions.parse(self.options)
        return KraftPushdownReader(options) if options.push_filters else KraftReader(options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from kraft.spark.stream import KraftStreamReader  # imported only when streaming

        return KraftStreamReader(self.options, schema)


class KraftPythonDataSource(KraftDataSource):
    """The same source under the name ``kraft_python``: the JVM source (``kraft.spark.jvm``), when it
    serves ``kraft``, hands streaming reads and reads that ask a quorum to it under this name."""

    @classmethod
    def name(cls) -> str:
        return PYTHON_SOURCE_NAME
