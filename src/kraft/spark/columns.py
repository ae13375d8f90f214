"""The columns of a kraft log read as a table: the contract between the sources, the pipeline and
their tests (``spark.read.format("kraft")`` and ``spark.readStream.format("kraft")`` yield these).

One row per record of the log (data and control records alike) and, with ``includeSnapshots``,
per record of a snapshot. Field by field it is what ``kraft dump-log --cluster-metadata-decoder
--json`` prints for the record:

* ``offset``: the record's offset; a snapshot record carries the snapshot's last contained offset
  (end offset - 1), as a loader replays it;
* ``leader_epoch``, ``batch_base_offset``: its batch's partitionLeaderEpoch and base offset;
* ``timestamp``: the record's timestamp (UTC, microseconds);
* ``is_control``, ``control_type`` (``LEADER_CHANGE``, ``SNAPSHOT_HEADER``, ...; null for data);
* ``record_type`` (dump-log's payload ``type``, e.g. ``PARTITION_CHANGE_RECORD``; null for a
  control record or a value that is not a metadata record, such as the test-raft-server's),
  ``record_version``;
* ``key``, ``value``: the raw bytes;
* ``payload``: the decoded record as JSON (dump-log's payload ``data`` for a metadata record, its
  ``control`` for a control record), null when the value does not decode as either (it stays in
  ``value`` as bytes);
* ``from_snapshot``: the row comes from a snapshot, not the log;
* ``node``: the node id of the log directory (meta.properties), null if unknown;
* ``file``: the segment or snapshot file the row was read from (or the quorum, for a stream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from kraft.common.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

RECORD_SCHEMA = pa.schema(
    [
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("leader_epoch", pa.int32(), nullable=False),
        pa.field("batch_base_offset", pa.int64(), nullable=False),
        pa.field("timestamp", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("is_control", pa.bool_(), nullable=False),
        pa.field("control_type", pa.string()),
        pa.field("record_type", pa.string()),
        pa.field("record_version", pa.int16()),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("payload", pa.string()),
        pa.field("from_snapshot", pa.bool_(), nullable=False),
        pa.field("node", pa.int32()),
        pa.field("file", pa.string(), nullable=False),
    ]
)

# The same schema as Spark DDL (the sources declare it; the names and order must match above).
RECORD_DDL = (
    "offset BIGINT NOT NULL, leader_epoch INT NOT NULL, batch_base_offset BIGINT NOT NULL, "
    "timestamp TIMESTAMP NOT NULL, is_control BOOLEAN NOT NULL, control_type STRING, "
    "record_type STRING, record_version SMALLINT, key BINARY, value BINARY, payload STRING, "
    "from_snapshot BOOLEAN NOT NULL, node INT, file STRING NOT NULL"
)


def check_schema(schema: StructType | None) -> None:
    """A schema given to a source (``spark.read.schema(...)``) must be ``RECORD_DDL``'s.

    Raises:
        ConfigError: another schema.
    """
    if schema is None:
        return
    from pyspark.sql.pandas.types import to_arrow_schema

    if not to_arrow_schema(schema, timezone="UTC").equals(RECORD_SCHEMA):
        raise ConfigError(
            f"the kraft source has a fixed schema ({RECORD_DDL}); got {schema.simpleString()}: "
            "select the columns you need after load() instead of passing a schema"
        )
