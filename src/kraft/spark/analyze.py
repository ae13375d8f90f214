"""``kraft analyze``: a cluster's history, rebuilt from its metadata logs as Spark tables.

The input is the records table of ``kraft.spark.columns`` (``spark.read.format("kraft")`` of one
node's metadata log directory, or the union of every node's log of a ``kraft cluster`` data
directory, told apart by ``node``). Every table is a pure ``DataFrame -> DataFrame`` transform of
it, tested on tiny hand-made frames:

* ``log_bounds``: per node, its log's first and end offsets, its snapshot base and how far its log
  is *committed*, judged from the logs themselves (below);
* ``mark_history``: the records with ``committed`` and ``in_history`` flags; the *history* is the
  committed prefix of the reference log (the node with the longest committed prefix) on top of the
  snapshot its log starts from, and every cluster table below is built from it;
* ``leader_changes``: one row per LEADER_CHANGE control record;
* ``quorum_timeline``: per time bucket, records committed, the last committed offset, the leader,
  and every node's log end and lag;
* ``partition_changes``: each partition's state after every PartitionRecord / PartitionChangeRecord
  / ClearElrRecord / RemoveTopicRecord, replayed with the image's own merge
  (``kraft.metadata.partition.PartitionRegistration.merge``);
* ``brokers_timeline``: each broker's lifecycle events, every re-registration classified by the
  controller's shutdown handling (``classify_registrations``).

**Committed, from the logs alone.** An entry (offset, epoch) held by a majority of the voters is
kept by every later leader (Raft's leader completeness), unless a later-epoch leader that lacked it
already wrote another entry at that offset (Raft's "figure 8"): so a node's committed end is 1 +
the last offset whose entry a majority of voter logs hold, below the first offset where some voter
holds an entry of a higher epoch than this node's. It can be wrong in one direction only: an entry
of an older epoch re-replicated to a majority by a leader that died before committing an entry of
its own epoch counts as committed although no leader ever advanced the high watermark past it. A
single node's log cannot be checked this way: then ``committed`` is null and the whole log is used.

Driver-side orchestration (``analyze``) reads the logs once into ``OUT/tables/records`` (Parquet)
and builds every other table from that Parquet copy, so that decoding (Python, slow) happens once.
Nothing here touches a socket; the ``--bootstrap-controller`` path reads through the streaming
source (``kraft.spark.stream``) in ``kraft.cli.analyze``.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kraft.metadata.partition import (
    NO_LEADER_CHANGE,
    NO_LEADER_RECOVERY_STATE_CHANGE,
    PartitionChange,
    PartitionRegistration,
)
from kraft.storage.log_dir import METADATA_PARTITION_DIR_NAME, metadata_partition_dir

# -------------------------------------------------------------------------------------------------
# Record types and their payload JSON (dump-log's ``payload.data``: camelCase, tagged defaults
# omitted, so an absent field is its default).

LEADER_CHANGE = "LEADER_CHANGE"
REGISTER_BROKER = "REGISTER_BROKER_RECORD"
UNREGISTER_BROKER = "UNREGISTER_BROKER_RECORD"
BROKER_REGISTRATION_CHANGE = "BROKER_REGISTRATION_CHANGE_RECORD"
FENCE_BROKER = "FENCE_BROKER_RECORD"
UNFENCE_BROKER = "UNFENCE_BROKER_RECORD"
TOPIC = "TOPIC_RECORD"
REMOVE_TOPIC = "REMOVE_TOPIC_RECORD"
PARTITION = "PARTITION_RECORD"
PARTITION_CHANGE = "PARTITION_CHANGE_RECORD"
CLEAR_ELR = "CLEAR_ELR_RECORD"
FEATURE_LEVEL = "FEATURE_LEVEL_RECORD"
ELR_FEATURE = "eligible.leader.replicas.version"

LEADER_CHANGE_JSON = (
    "leaderId INT, voters ARRAY<STRUCT<voterId: INT>>, grantingVoters ARRAY<STRUCT<voterId: INT>>"
)
REGISTER_BROKER_JSON = (
    "brokerId INT, incarnationId STRING, brokerEpoch BIGINT, rack STRING, fenced BOOLEAN, "
    "inControlledShutdown BOOLEAN"
)
BROKER_CHANGE_JSON = "brokerId INT, brokerEpoch BIGINT, fenced INT, inControlledShutdown INT"
FENCE_JSON = "id INT, epoch BIGINT"
UNREGISTER_JSON = "brokerId INT, brokerEpoch BIGINT"
TOPIC_JSON = "name STRING, topicId STRING"
REMOVE_TOPIC_JSON = "topicId STRING"
PARTITION_JSON = (
    "partitionId INT, topicId STRING, replicas ARRAY<INT>, isr ARRAY<INT>, "
    "removingReplicas ARRAY<INT>, addingReplicas ARRAY<INT>, leader INT, leaderRecoveryState INT, "
    "leaderEpoch INT, partitionEpoch INT, eligibleLeaderReplicas ARRAY<INT>, lastKnownElr ARRAY<INT>"
)
CLEAR_ELR_JSON = "topicName STRING"
FEATURE_JSON = "name STRING, featureLevel INT"

# -------------------------------------------------------------------------------------------------
# Output tables: (name, Spark type) in column order. The docs (docs/spark.md) describe each column.

LOG_BOUNDS_COLUMNS = (
    ("node", "INT"),
    ("voter", "BOOLEAN"),
    ("records", "BIGINT"),
    ("log_start", "BIGINT"),
    ("log_end", "BIGINT"),
    ("snapshot_base", "BIGINT"),
    ("majority_end", "BIGINT"),
    ("committed_end", "BIGINT"),
    ("first_timestamp", "TIMESTAMP"),
    ("last_timestamp", "TIMESTAMP"),
)

LEADER_CHANGE_COLUMNS = (
    ("offset", "BIGINT"),
    ("epoch", "INT"),
    ("leader", "INT"),
    ("voters", "ARRAY<INT>"),
    ("granting_voters", "ARRAY<INT>"),
    ("timestamp", "TIMESTAMP"),
    ("previous_epoch", "INT"),
    ("previous_leader", "INT"),
    ("leader_changed", "BOOLEAN"),
    ("previous_record_timestamp", "TIMESTAMP"),
    ("gap_ms", "BIGINT"),
)

QUORUM_TIMELINE_COLUMNS = (
    ("bucket_start", "TIMESTAMP"),
    ("bucket_end", "TIMESTAMP"),
    ("records", "BIGINT"),
    ("last_offset", "BIGINT"),
    ("epoch", "INT"),
    ("leader", "INT"),
    ("leader_changes", "BIGINT"),
    ("log_end", "MAP<INT, BIGINT>"),
    ("lag", "MAP<INT, BIGINT>"),
    ("max_lag", "BIGINT"),
)

# The rows ``replay_partition`` takes (one partition's events) ...
PARTITION_EVENT_COLUMNS = (
    ("topic_id", "STRING"),
    ("partition", "INT"),
    ("offset", "BIGINT"),
    ("batch_base_offset", "BIGINT"),
    ("timestamp", "TIMESTAMP"),
    ("cause", "STRING"),
    ("from_snapshot", "BOOLEAN"),
    ("replicas", "ARRAY<INT>"),
    ("isr", "ARRAY<INT>"),
    ("removing_replicas", "ARRAY<INT>"),
    ("adding_replicas", "ARRAY<INT>"),
    ("leader", "INT"),
    ("leader_recovery_state", "INT"),
    ("leader_epoch", "INT"),
    ("partition_epoch", "INT"),
    ("elr", "ARRAY<INT>"),
    ("last_known_elr", "ARRAY<INT>"),
)
# ... and the state rows it returns (``partition_changes`` adds ``topic`` after ``topic_id``).
PARTITION_STATE_COLUMNS = (
    ("topic_id", "STRING"),
    ("partition", "INT"),
    ("offset", "BIGINT"),
    ("batch_base_offset", "BIGINT"),
    ("timestamp", "TIMESTAMP"),
    ("cause", "STRING"),
    ("from_snapshot", "BOOLEAN"),
    ("leader", "INT"),
    ("leader_epoch", "INT"),
    ("partition_epoch", "INT"),
    ("leader_recovery_state", "INT"),
    ("replicas", "ARRAY<INT>"),
    ("isr", "ARRAY<INT>"),
    ("elr", "ARRAY<INT>"),
    ("last_known_elr", "ARRAY<INT>"),
    ("adding_replicas", "ARRAY<INT>"),
    ("removing_replicas", "ARRAY<INT>"),
    ("previous_leader", "INT"),
    ("leader_changed", "BOOLEAN"),
    ("isr_added", "ARRAY<INT>"),
    ("isr_removed", "ARRAY<INT>"),
    ("elr_added", "ARRAY<INT>"),
    ("elr_removed", "ARRAY<INT>"),
)
PARTITION_CHANGE_COLUMNS = (*PARTITION_STATE_COLUMNS[:1], ("topic", "STRING"), *PARTITION_STATE_COLUMNS[1:])

BROKER_EVENT_COLUMNS = (
    ("broker", "INT"),
    ("offset", "BIGINT"),
    ("batch_base_offset", "BIGINT"),
    ("timestamp", "TIMESTAMP"),
    ("event", "STRING"),
    ("state", "STRING"),
    ("broker_epoch", "BIGINT"),
    ("incarnation_id", "STRING"),
    ("rack", "STRING"),
    ("record_type", "STRING"),
    ("from_snapshot", "BOOLEAN"),
)
BROKERS_TIMELINE_COLUMNS = (
    *BROKER_EVENT_COLUMNS,
    ("previous_incarnation_id", "STRING"),
    ("registration", "STRING"),
    ("evidence", "STRING"),
)

# Broker events and the state each leaves the broker in.
REGISTERED, FENCED, UNFENCED = "registered", "fenced", "unfenced"
CONTROLLED_SHUTDOWN, UNREGISTERED, CHANGED = "controlled_shutdown", "unregistered", "registration_changed"
ACTIVE = "active"  # registered, unfenced, not in controlled shutdown (spec's "active")

# Registration classes (``classify_registrations``).
FIRST, FROM_SNAPSHOT, SAME_INCARNATION = "first", "snapshot", "same_incarnation"
CLEAN, UNCLEAN, INDETERMINATE, CONFLICTING = "clean", "unclean", "indeterminate", "conflicting"

DEFAULT_BUCKET_MS = 1000
MAX_BUCKETS = 200_000  # ``analyze`` widens the bucket past this many
ROWS_PER_SHUFFLE_PARTITION = 100_000


def ddl(columns: Sequence[tuple[str, str]]) -> str:
    """``(name, type)`` pairs as a Spark DDL schema string."""
    return ", ".join(f"`{name}` {kind}" for name, kind in columns)


def _names(columns: Sequence[tuple[str, str]]) -> list[str]:
    return [name for name, _ in columns]


def _typed(df: DataFrame, columns: Sequence[tuple[str, str]]) -> DataFrame:
    """``df``'s columns of ``columns``, in that order, cast to their types."""
    return df.select(*[F.col(name).cast(kind).alias(name) for name, kind in columns])


def _parsed(history: DataFrame, record_type: str, schema: str) -> DataFrame:
    """The rows of ``record_type`` with their payload parsed into ``p``."""
    return history.where(F.col("record_type") == record_type).withColumn("p", F.from_json("payload", schema))


def _ids(column: Column) -> Column:
    """``[{voterId: 1, ...}, ...]`` -> ``[1, ...]``."""
    return F.transform(column, lambda v: v["voterId"])


def _no_ids() -> Column:
    return F.array().cast("array<int>")


def _ms(column: str | Column) -> Column:
    return F.unix_millis(F.col(column) if isinstance(column, str) else column)


# -------------------------------------------------------------------------------------------------
# Which records are committed, and the history the cluster tables are built from


def log_bounds(records: DataFrame, voters: Sequence[int] | None) -> DataFrame:
    """Per node: its log (``log_start``, ``log_end``: first offset and last offset + 1 of its log
    rows, ``records``), the snapshot its log starts from (``snapshot_base``: the offset of the
    rows of the latest snapshot with end offset <= ``log_start``, when ``log_start`` > 0), and the
    committed end judged from the logs (module docstring). ``voters`` None: not judged (one log
    alone), ``majority_end`` is null and ``committed_end`` = ``log_end``.

    Voters whose log is missing hold nothing, so a majority must be found among the logs given.
    The entries of a node's log that a majority holds form one run of offsets (by Raft's log
    matching, a majority holding an entry holds every entry before it, except where their logs
    start later), so one pass over the log finds where the run ends.
    """
    # A log without meta.properties has a null node: a stand-in id keeps the grouping simple.
    records = records.withColumn("node", F.coalesce(F.col("node"), F.lit(_UNKNOWN_NODE)))
    log = ~F.col("from_snapshot")
    if voters is None:
        judged = records.withColumn("held", F.lit(False)).withColumn("overtaken", F.lit(False))
    else:
        voter_ids = sorted(set(voters))
        majority = len(voter_ids) // 2 + 1
        epochs = (
            records.where(log & F.col("node").isin(voter_ids))
            .groupBy("offset")
            .agg(F.collect_list("leader_epoch").alias("epochs"))
        )
        same = F.size(F.filter(F.col("epochs"), lambda e: e == F.col("leader_epoch")))
        judged = (
            records.join(epochs, "offset", "left")
            .withColumn("held", log & F.coalesce(same >= majority, F.lit(False)))
            .withColumn(
                "overtaken", log & F.coalesce(F.array_max("epochs") > F.col("leader_epoch"), F.lit(False))
            )
        )
    stats = judged.groupBy("node").agg(
        F.count(F.when(log, 1)).alias("records"),
        F.min(F.when(log, F.col("offset"))).alias("log_start"),
        (F.max(F.when(log, F.col("offset"))) + 1).alias("log_end"),
        F.min(F.when(log, F.col("timestamp"))).alias("first_timestamp"),
        F.max(F.when(log, F.col("timestamp"))).alias("last_timestamp"),
        F.array_distinct(F.collect_list(F.when(~log, F.col("offset")))).alias("snapshots"),
        F.min(F.when(F.col("held"), F.col("offset"))).alias("first_held"),
        F.max(F.when(F.col("held"), F.col("offset"))).alias("last_held"),
        F.min(F.when(F.col("overtaken"), F.col("offset"))).alias("first_overtaken"),
    )
    base = F.array_max(
        F.filter(F.col("snapshots"), lambda o: F.col("log_start").isNull() | (o < F.col("log_start")))
    )
    stats = stats.withColumn(
        "snapshot_base", F.when(F.col("log_start").isNull() | (F.col("log_start") > 0), base)
    )
    if voters is None:
        stats = stats.withColumn("voter", F.lit(None).cast("boolean"))
        stats = stats.withColumn("majority_end", F.lit(None).cast("bigint"))
        stats = stats.withColumn("committed_end", F.col("log_end"))
    else:
        majority_end = (
            F.when(F.col("first_held").isNull(), F.lit(None))
            .when(F.col("first_overtaken").isNull(), F.col("last_held") + 1)
            .when(F.col("first_overtaken") <= F.col("first_held"), F.lit(None))
            .otherwise(F.least(F.col("last_held") + 1, F.col("first_overtaken")))
        )
        # Nothing majority-held: only the snapshot (if any) is known committed.
        nothing = F.coalesce(F.col("snapshot_base") + 1, F.col("log_start"), F.lit(0))
        stats = (
            stats.withColumn("voter", F.col("node").isin(voter_ids))
            .withColumn("majority_end", majority_end)
            .withColumn("committed_end", F.coalesce(F.col("majority_end"), nothing))
        )
    return _typed(_known_node(stats), LOG_BOUNDS_COLUMNS)


_UNKNOWN_NODE = -(1 << 31)


def _known_node(df: DataFrame) -> DataFrame:
    return df.withColumn("node", F.when(F.col("node") != _UNKNOWN_NODE, F.col("node")))


@dataclass(frozen=True, slots=True)
class NodeLog:
    """One row of ``log_bounds``, on the driver."""

    node: int | None
    voter: bool | None
    records: int
    log_start: int | None
    log_end: int | None
    snapshot_base: int | None
    majority_end: int | None
    committed_end: int | None
    first_timestamp: Any = None
    last_timestamp: Any = None


def pick_reference(bounds: Iterable[NodeLog]) -> NodeLog:
    """The log the cluster tables are built from: the longest committed prefix; ties go to a voter,
    then to the longest log, then to the lowest node id.

    Raises:
        ValueError: no log at all.
    """
    logs = list(bounds)
    if not logs:
        raise ValueError("no log to analyze")
    return max(
        logs,
        key=lambda b: (
            b.committed_end if b.committed_end is not None else -1,
            bool(b.voter),
            b.log_end if b.log_end is not None else -1,
            -(b.node if b.node is not None else 1 << 31),
        ),
    )


def mark_history(
    records: DataFrame, bounds: DataFrame, reference: int | None, verified: bool = True
) -> DataFrame:
    """``records`` with two flags added: ``committed`` (the row's offset is below its node's
    ``committed_end``, or it is a snapshot row: snapshots hold committed state only; null when
    ``verified`` is false: one log alone cannot tell) and ``in_history`` (the row belongs to the
    history the cluster tables use: the ``reference`` node's committed log rows and the rows of its
    ``snapshot_base`` snapshot)."""
    b = bounds.select("node", "committed_end", "snapshot_base")
    joined = records.join(F.broadcast(b), records["node"].eqNullSafe(b["node"]), "left").drop(b["node"])
    committed = F.col("from_snapshot") | (F.col("offset") < F.col("committed_end"))
    same_node = (
        F.col("node").isNull() if reference is None else F.coalesce(F.col("node") == reference, F.lit(False))
    )
    in_history = same_node & F.when(
        F.col("from_snapshot"), F.coalesce(F.col("offset") == F.col("snapshot_base"), F.lit(False))
    ).otherwise(F.coalesce(F.col("offset") < F.col("committed_end"), F.lit(False)))
    out = joined.withColumn("committed", committed if verified else F.lit(None).cast("boolean")).withColumn(
        "in_history", in_history
    )
    return out.select(*records.columns, "committed", "in_history")


def history_of(marked: DataFrame) -> DataFrame:
    """The rows of ``mark_history`` that the cluster tables are built from."""
    return marked.where(F.col("in_history"))


# -------------------------------------------------------------------------------------------------
# leader_changes


def leader_changes(history: DataFrame) -> DataFrame:
    """One row per LEADER_CHANGE control record of ``history`` (a leader's first record of its
    epoch): offset, epoch (the batch's epoch), leader, voters and granting voters (ids), timestamp
    (the new leader's append time), the previous LEADER_CHANGE's epoch and leader, whether the
    leader changed, and ``gap_ms``: the time since the record just before it in the log (for a
    failover: from the old leader's last append to the new leader's first, an upper bound of how
    long nothing was written)."""
    lc = history.where((F.col("control_type") == LEADER_CHANGE) & ~F.col("from_snapshot")).select(
        "offset",
        F.col("leader_epoch").alias("epoch"),
        "timestamp",
        F.from_json("payload", LEADER_CHANGE_JSON).alias("p"),
    )
    before = history.where(~F.col("from_snapshot")).select(
        (F.col("offset") + 1).alias("offset"), F.col("timestamp").alias("previous_record_timestamp")
    )
    order = Window.orderBy("offset")
    out = (
        lc.select(
            "offset",
            "epoch",
            F.col("p.leaderId").alias("leader"),
            F.array_sort(_ids(F.col("p.voters"))).alias("voters"),
            F.array_sort(_ids(F.col("p.grantingVoters"))).alias("granting_voters"),
            "timestamp",
        )
        .join(before, "offset", "left")
        .withColumn("previous_epoch", F.lag("epoch").over(order))
        .withColumn("previous_leader", F.lag("leader").over(order))
        .withColumn("leader_changed", F.coalesce(F.col("leader") != F.col("previous_leader"), F.lit(True)))
        .withColumn("gap_ms", _ms("timestamp") - _ms("previous_record_timestamp"))
    )
    return _typed(out, LEADER_CHANGE_COLUMNS)


# -------------------------------------------------------------------------------------------------
# quorum_timeline


def _bucket(bucket_ms: int) -> Column:
    return F.floor(_ms("timestamp") / F.lit(bucket_ms)).cast("bigint")


def quorum_timeline(
    history: DataFrame,
    records: DataFrame,
    bucket_ms: int = DEFAULT_BUCKET_MS,
    nodes: Sequence[int] | None = None,
) -> DataFrame:
    """Per bucket of ``bucket_ms`` of append time, from the first to the last log record of any
    node: ``records`` of ``history`` appended in it; ``last_offset``, the last committed offset
    appended by its end (a record commits after its append, so the high watermark at
    ``bucket_end`` was at most ``last_offset + 1``; equal when replication keeps up); the
    ``epoch`` of that record and the ``leader`` the last LEADER_CHANGE by then names;
    ``leader_changes`` in it; and with ``nodes`` (a cluster dir), each node's ``log_end`` at
    ``bucket_end`` (1 + the last offset of its log appended by then; before its first record, its
    ``log_start``) and ``lag`` (the longest of those log ends minus its own), ``max_lag`` the
    largest lag.

    A log holds the leader's append times, not when the node received a record: so lag is
    replication lag as the logs show it, what a node's log (as it is now) lacks of what the
    longest log had appended by then. It shows a node that stopped replicating (crashed, stopped,
    cut off) from then on until its log ends; a node that fell behind and caught up before the
    logs were read shows no lag.
    """
    if bucket_ms <= 0:
        raise ValueError(f"bucket_ms must be positive, got {bucket_ms}")
    bucket = _bucket(bucket_ms)
    all_log = records.where(~F.col("from_snapshot")).withColumn("bucket", bucket)
    log = history.where(~F.col("from_snapshot")).withColumn("bucket", bucket)
    is_change = F.col("control_type") == LEADER_CHANGE
    per_bucket = log.groupBy("bucket").agg(
        F.count(F.lit(1)).alias("records"),
        F.max("offset").alias("max_offset"),
        F.max_by("leader_epoch", "offset").alias("last_epoch"),
        F.count(F.when(is_change, 1)).alias("leader_changes"),
        F.max_by(
            F.from_json("payload", LEADER_CHANGE_JSON)["leaderId"], F.when(is_change, F.col("offset"))
        ).alias("last_leader"),
    )
    span = all_log.agg(F.min("bucket").alias("lo"), F.max("bucket").alias("hi")).where(
        F.col("lo").isNotNull()
    )
    buckets = span.select(F.explode(F.sequence("lo", "hi")).alias("bucket"))
    upto = Window.orderBy("bucket").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    timeline = (
        buckets.join(per_bucket, "bucket", "left")
        .withColumn("records", F.coalesce(F.col("records"), F.lit(0)))
        .withColumn("leader_changes", F.coalesce(F.col("leader_changes"), F.lit(0)))
        .withColumn("last_offset", F.max("max_offset").over(upto))
        .withColumn("epoch", F.last("last_epoch", ignorenulls=True).over(upto))
        .withColumn("leader", F.last("last_leader", ignorenulls=True).over(upto))
    )
    if nodes:
        ends = all_log.groupBy("node", "bucket").agg(
            (F.max("offset") + 1).alias("end"), F.min("offset").alias("first")
        )
        grid = buckets.withColumn("node", F.explode(F.array(*[F.lit(int(n)) for n in sorted(set(nodes))])))
        by_node = Window.partitionBy("node").orderBy("bucket")
        per_node = (
            grid.join(ends, ["node", "bucket"], "left")
            .withColumn("running", F.max("end").over(by_node.rowsBetween(Window.unboundedPreceding, 0)))
            .withColumn("start", F.min("first").over(Window.partitionBy("node")))
            .withColumn("log_end", F.coalesce(F.col("running"), F.col("start"), F.lit(0)).cast("bigint"))
        )
        maps = (
            per_node.groupBy("bucket")
            .agg(
                F.array_sort(F.collect_list(F.struct("node", "log_end"))).alias("ends"),
                F.max("log_end").alias("longest"),
            )
            .select(
                "bucket",
                F.map_from_entries("ends").alias("log_end"),
                F.map_from_entries(
                    F.transform(
                        "ends",
                        lambda e: F.struct(
                            e["node"].alias("node"), (F.col("longest") - e["log_end"]).alias("lag")
                        ),
                    )
                ).alias("lag"),
                (F.col("longest") - F.array_min(F.transform("ends", lambda e: e["log_end"]))).alias(
                    "max_lag"
                ),
            )
        )
        timeline = timeline.join(maps, "bucket", "left")
    else:
        timeline = (
            timeline.withColumn("log_end", F.lit(None).cast("map<int,bigint>"))
            .withColumn("lag", F.lit(None).cast("map<int,bigint>"))
            .withColumn("max_lag", F.lit(None).cast("bigint"))
        )
    timeline = timeline.withColumn(
        "bucket_start", F.timestamp_millis(F.col("bucket") * F.lit(bucket_ms))
    ).withColumn("bucket_end", F.timestamp_millis((F.col("bucket") + 1) * F.lit(bucket_ms)))
    return _typed(timeline, QUORUM_TIMELINE_COLUMNS)


# -------------------------------------------------------------------------------------------------
# topics and partition_changes


def topics(history: DataFrame) -> DataFrame:
    """One row per TopicRecord: ``topic_id``, ``topic`` (name), ``created_offset`` and, if a
    RemoveTopicRecord followed, ``removed_offset``."""
    created = _parsed(history, TOPIC, TOPIC_JSON).select(
        F.col("p.topicId").alias("topic_id"),
        F.col("p.name").alias("topic"),
        F.col("offset").alias("created_offset"),
    )
    removed = (
        _parsed(history, REMOVE_TOPIC, REMOVE_TOPIC_JSON)
        .groupBy(F.col("p.topicId").alias("topic_id"))
        .agg(F.min("offset").alias("removed_offset"))
    )
    return created.join(removed, "topic_id", "left").select(
        "topic_id", "topic", "created_offset", "removed_offset"
    )


def partition_events(history: DataFrame) -> DataFrame:
    """The events ``replay_partition`` replays, ``PARTITION_EVENT_COLUMNS``: every PartitionRecord
    and PartitionChangeRecord (absent fields are null; an absent Leader is -2 and an absent
    LeaderRecoveryState -1, "unchanged"; a PartitionRecord's absent LeaderRecoveryState is 0),
    every ClearElrRecord once per partition of the topics it names (all topics for ""), as they
    existed at its offset, and every RemoveTopicRecord once per partition of the topic."""
    base = ["offset", "batch_base_offset", "timestamp", "from_snapshot"]

    def fields(p: str, leader_default: int, lrs_default: int) -> list[Column]:
        return [
            F.col(f"{p}.replicas").alias("replicas"),
            F.col(f"{p}.isr").alias("isr"),
            F.col(f"{p}.removingReplicas").alias("removing_replicas"),
            F.col(f"{p}.addingReplicas").alias("adding_replicas"),
            F.coalesce(F.col(f"{p}.leader"), F.lit(leader_default)).alias("leader"),
            F.coalesce(F.col(f"{p}.leaderRecoveryState"), F.lit(lrs_default)).alias("leader_recovery_state"),
            F.col(f"{p}.leaderEpoch").alias("leader_epoch"),
            F.col(f"{p}.partitionEpoch").alias("partition_epoch"),
            F.col(f"{p}.eligibleLeaderReplicas").alias("elr"),
            F.col(f"{p}.lastKnownElr").alias("last_known_elr"),
        ]

    created = _parsed(history, PARTITION, PARTITION_JSON).select(
        F.col("p.topicId").alias("topic_id"),
        F.col("p.partitionId").alias("partition"),
        *base,
        F.lit(PARTITION).alias("cause"),
        *fields("p", -1, 0),
    )
    changed = _parsed(history, PARTITION_CHANGE, PARTITION_JSON).select(
        F.col("p.topicId").alias("topic_id"),
        F.col("p.partitionId").alias("partition"),
        *base,
        F.lit(PARTITION_CHANGE).alias("cause"),
        *fields("p", NO_LEADER_CHANGE, NO_LEADER_RECOVERY_STATE_CHANGE),
    )
    known = created.groupBy("topic_id", "partition").agg(F.min("offset").alias("first_offset"))
    names = topics(history)
    clears = _parsed(history, CLEAR_ELR, CLEAR_ELR_JSON).select(
        *base, F.coalesce(F.col("p.topicName"), F.lit("")).alias("topic_name")
    )
    t = names.alias("t")
    c = clears.alias("c")
    cleared_topics = F.broadcast(c).join(
        t,
        ((F.col("c.topic_name") == "") | (F.col("c.topic_name") == F.col("t.topic")))
        & (F.col("t.created_offset") < F.col("c.offset"))
        & (F.col("t.removed_offset").isNull() | (F.col("t.removed_offset") > F.col("c.offset"))),
    )
    empty = [
        F.lit(None).cast(kind).alias(name)
        for name, kind in PARTITION_EVENT_COLUMNS
        if name not in {"topic_id", "partition", "cause", *base}
    ]
    cleared = (
        cleared_topics.join(known.alias("k"), F.col("k.topic_id") == F.col("t.topic_id"))
        .where(F.col("k.first_offset") < F.col("c.offset"))
        .select(
            F.col("t.topic_id").alias("topic_id"),
            F.col("k.partition").alias("partition"),
            *[F.col(f"c.{name}").alias(name) for name in base],
            F.lit(CLEAR_ELR).alias("cause"),
            *empty,
        )
    )
    removed = (
        _parsed(history, REMOVE_TOPIC, REMOVE_TOPIC_JSON)
        .join(known, F.col("p.topicId") == known["topic_id"])
        .where(F.col("first_offset") < F.col("offset"))
        .select("topic_id", "partition", *base, F.lit(REMOVE_TOPIC).alias("cause"), *empty)
    )
    out = _typed(created, PARTITION_EVENT_COLUMNS)
    for other in (changed, cleared, removed):
        out = out.unionByName(_typed(other, PARTITION_EVENT_COLUMNS))
    return _typed(out, PARTITION_EVENT_COLUMNS)


_CAUSE_ORDER = {PARTITION: 0, PARTITION_CHANGE: 1, CLEAR_ELR: 2, REMOVE_TOPIC: 3}
_ANY_TOPIC = uuid.UUID(int=0)  # PartitionChange wants a topic id; merge never reads it


def _ints(value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    return tuple(int(v) for v in value)


def _minus(a: Sequence[int], b: Sequence[int]) -> list[int]:
    gone = set(b)
    return [x for x in a if x not in gone]


def replay_partition(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One partition's ``partition_events`` replayed in offset order into state rows
    (``PARTITION_STATE_COLUMNS``): a PartitionRecord creates (or replaces) the partition, a
    PartitionChangeRecord merges into it with ``PartitionRegistration.merge`` (spec 1.6: absent
    fields and Leader -2 / LeaderRecoveryState -1 keep the current value; every change bumps the
    partition epoch, a present Leader the leader epoch), a ClearElrRecord empties ELR and
    LastKnownElr where either is non-empty (no row where both are empty: the record does not
    touch it), and a RemoveTopicRecord ends it (a row with the state columns null).

    A change with no partition to merge into (the history starts after the partition was
    created and holds no snapshot of it) gives a row with what the change itself sets and null
    epochs, so that it is seen, not dropped.
    """
    rows: list[dict[str, Any]] = []
    state: PartitionRegistration | None = None
    ordered = sorted(events, key=lambda e: (int(e["offset"]), _CAUSE_ORDER.get(e["cause"], 9)))
    for e in ordered:
        cause = e["cause"]
        before = state
        after: PartitionRegistration | None
        if cause == PARTITION:
            after = PartitionRegistration(
                replicas=_ints(e["replicas"]) or (),
                isr=_ints(e["isr"]) or (),
                removing_replicas=_ints(e["removing_replicas"]) or (),
                adding_replicas=_ints(e["adding_replicas"]) or (),
                elr=_ints(e["elr"]) or (),
                last_known_elr=_ints(e["last_known_elr"]) or (),
                leader=int(e["leader"]),
                leader_recovery_state=int(e["leader_recovery_state"]),
                leader_epoch=int(e["leader_epoch"]) if e["leader_epoch"] is not None else 0,
                partition_epoch=int(e["partition_epoch"]) if e["partition_epoch"] is not None else 0,
            )
        elif cause in (PARTITION_CHANGE, CLEAR_ELR):
            if cause == CLEAR_ELR:
                if state is None or not (state.elr or state.last_known_elr):
                    continue
                change = PartitionChange(topic_id=_ANY_TOPIC, partition_id=0, elr=(), last_known_elr=())
            else:
                change = PartitionChange(
                    topic_id=_ANY_TOPIC,
                    partition_id=0,
                    isr=_ints(e["isr"]),
                    leader=int(e["leader"]) if e["leader"] is not None else NO_LEADER_CHANGE,
                    replicas=_ints(e["replicas"]),
                    removing_replicas=_ints(e["removing_replicas"]),
                    adding_replicas=_ints(e["adding_replicas"]),
                    leader_recovery_state=(
                        int(e["leader_recovery_state"])
                        if e["leader_recovery_state"] is not None
                        else NO_LEADER_RECOVERY_STATE_CHANGE
                    ),
                    elr=_ints(e["elr"]),
                    last_known_elr=_ints(e["last_known_elr"]),
                )
            if state is None:
                rows.append(_orphan_row(e, change))
                continue
            after = state.merge(change)
        elif cause == REMOVE_TOPIC:
            if state is None:
                continue
            after = None
        else:
            raise ValueError(f"unknown partition event {cause!r}")
        rows.append(_state_row(e, before, after))
        state = after
    return rows


def _state_row(
    e: Mapping[str, Any], before: PartitionRegistration | None, after: PartitionRegistration | None
) -> dict[str, Any]:
    row: dict[str, Any] = {name: e[name] for name in ("topic_id", "partition", "offset", "batch_base_offset")}
    row.update(timestamp=e["timestamp"], cause=e["cause"], from_snapshot=bool(e["from_snapshot"]))
    old_isr = list(before.isr) if before else []
    old_elr = list(before.elr) if before else []
    if after is None:
        row.update({name: None for name in _STATE_FIELDS})
        row.update(isr_added=[], isr_removed=old_isr, elr_added=[], elr_removed=old_elr)
    else:
        row.update(
            leader=after.leader,
            leader_epoch=after.leader_epoch,
            partition_epoch=after.partition_epoch,
            leader_recovery_state=int(after.leader_recovery_state),
            replicas=list(after.replicas),
            isr=list(after.isr),
            elr=list(after.elr),
            last_known_elr=list(after.last_known_elr),
            adding_replicas=list(after.adding_replicas),
            removing_replicas=list(after.removing_replicas),
            isr_added=_minus(after.isr, old_isr),
            isr_removed=_minus(old_isr, after.isr),
            elr_added=_minus(after.elr, old_elr),
            elr_removed=_minus(old_elr, after.elr),
        )
    row["previous_leader"] = before.leader if before else None
    row["leader_changed"] = before is not None and after is not None and before.leader != after.leader
    return row


_STATE_FIELDS = (
    "leader",
    "leader_epoch",
    "partition_epoch",
    "leader_recovery_state",
    "replicas",
    "isr",
    "elr",
    "last_known_elr",
    "adding_replicas",
    "removing_replicas",
)


def _orphan_row(e: Mapping[str, Any], change: PartitionChange) -> dict[str, Any]:
    row: dict[str, Any] = {name: e[name] for name in ("topic_id", "partition", "offset", "batch_base_offset")}
    row.update(timestamp=e["timestamp"], cause=e["cause"], from_snapshot=bool(e["from_snapshot"]))

    def listed(v: tuple[int, ...] | None) -> list[int] | None:
        return None if v is None else list(v)

    row.update(
        leader=None if change.leader == NO_LEADER_CHANGE else change.leader,
        leader_epoch=None,
        partition_epoch=None,
        leader_recovery_state=(
            None
            if change.leader_recovery_state == NO_LEADER_RECOVERY_STATE_CHANGE
            else change.leader_recovery_state
        ),
        replicas=listed(change.replicas),
        isr=listed(change.isr),
        elr=listed(change.elr),
        last_known_elr=listed(change.last_known_elr),
        adding_replicas=listed(change.adding_replicas),
        removing_replicas=listed(change.removing_replicas),
        previous_leader=None,
        leader_changed=False,
        isr_added=None,
        isr_removed=None,
        elr_added=None,
        elr_removed=None,
    )
    return row


def replay_partition_frame(frame: Any) -> Any:
    """``replay_partition`` as an ``applyInPandas`` function (one partition's events in, its
    state rows out, ``PARTITION_STATE_COLUMNS``)."""
    return _pandas_rows(replay_partition(_records_of(frame)), PARTITION_STATE_COLUMNS)


def partition_changes(history: DataFrame) -> DataFrame:
    """Each partition's state after every change (``PARTITION_CHANGE_COLUMNS``), replayed per
    (topic_id, partition) with ``replay_partition`` in ``applyInPandas``, with the topic's name."""
    events = partition_events(history)
    states = events.groupBy("topic_id", "partition").applyInPandas(
        replay_partition_frame, ddl(PARTITION_STATE_COLUMNS)
    )
    names = topics(history).select("topic_id", "topic").dropDuplicates(["topic_id"])
    return _typed(states.join(names, "topic_id", "left"), PARTITION_CHANGE_COLUMNS)


# -------------------------------------------------------------------------------------------------
# brokers_timeline


def broker_events(history: DataFrame) -> DataFrame:
    """Every broker lifecycle record of ``history`` as events (``BROKER_EVENT_COLUMNS``):
    ``registered`` (RegisterBrokerRecord: epoch, incarnation, rack), ``fenced`` / ``unfenced``
    (BrokerRegistrationChangeRecord Fenced 1 / -1, or Fence/UnfenceBrokerRecord before MV 3.3-IV2),
    ``controlled_shutdown`` (InControlledShutdown 1), ``unregistered``, and
    ``registration_changed`` for a change record that carries none of these (log dirs). ``state``
    is the state the event puts the broker in (``active``: registered, unfenced, not shutting down;
    ``fenced``; ``controlled_shutdown``; ``unregistered``), null for ``registration_changed``, which
    keeps the previous one (``replay_broker`` fills it in)."""
    common = ["offset", "batch_base_offset", "timestamp", "from_snapshot", "record_type"]
    none = F.lit(None).cast("string")
    registered = _parsed(history, REGISTER_BROKER, REGISTER_BROKER_JSON).select(
        F.col("p.brokerId").alias("broker"),
        *common,
        F.lit(REGISTERED).alias("event"),
        F.when(F.coalesce(F.col("p.inControlledShutdown"), F.lit(False)), F.lit(CONTROLLED_SHUTDOWN))
        .when(F.coalesce(F.col("p.fenced"), F.lit(True)), F.lit(FENCED))
        .otherwise(F.lit(ACTIVE))
        .alias("state"),
        F.col("p.brokerEpoch").alias("broker_epoch"),
        F.col("p.incarnationId").alias("incarnation_id"),
        F.col("p.rack").alias("rack"),
    )
    kinds = F.filter(
        F.array(
            F.when(F.col("p.inControlledShutdown") == 1, F.lit(CONTROLLED_SHUTDOWN)),
            F.when(F.col("p.fenced") == 1, F.lit(FENCED)),
            F.when(F.col("p.fenced") == -1, F.lit(UNFENCED)),
        ),
        lambda k: k.isNotNull(),
    )
    changed = _parsed(history, BROKER_REGISTRATION_CHANGE, BROKER_CHANGE_JSON).select(
        F.col("p.brokerId").alias("broker"),
        *common,
        F.explode(F.when(F.size(kinds) > 0, kinds).otherwise(F.array(F.lit(CHANGED)))).alias("event"),
        F.col("p.brokerEpoch").alias("broker_epoch"),
    )
    others = [changed]
    for record_type, schema, event, broker, epoch in (
        (FENCE_BROKER, FENCE_JSON, FENCED, "p.id", "p.epoch"),
        (UNFENCE_BROKER, FENCE_JSON, UNFENCED, "p.id", "p.epoch"),
        (UNREGISTER_BROKER, UNREGISTER_JSON, UNREGISTERED, "p.brokerId", "p.brokerEpoch"),
    ):
        others.append(
            _parsed(history, record_type, schema).select(
                F.col(broker).alias("broker"),
                *common,
                F.lit(event).alias("event"),
                F.col(epoch).alias("broker_epoch"),
            )
        )
    out = _typed(registered, BROKER_EVENT_COLUMNS)
    implied = (
        F.when(F.col("event") == FENCED, F.lit(FENCED))
        .when(F.col("event") == UNFENCED, F.lit(ACTIVE))
        .when(F.col("event") == CONTROLLED_SHUTDOWN, F.lit(CONTROLLED_SHUTDOWN))
        .when(F.col("event") == UNREGISTERED, F.lit(UNREGISTERED))
    )
    for df in others:
        df = df.withColumn("state", implied).withColumn("incarnation_id", none).withColumn("rack", none)
        out = out.unionByName(_typed(df, BROKER_EVENT_COLUMNS))
    return out


def elr_levels(history: DataFrame) -> DataFrame:
    """``offset``, ``level`` of every FeatureLevelRecord of eligible.leader.replicas.version."""
    return (
        _parsed(history, FEATURE_LEVEL, FEATURE_JSON)
        .where(F.col("p.name") == ELR_FEATURE)
        .select("offset", F.col("p.featureLevel").alias("level"))
    )


# What ``replay_broker`` knows about a broker besides its own records: per partition change that
# involves it, whether it is in the ELR afterwards and whether the change took it out of the ELR,
# out of the ISR (not into the ELR) or from the ISR into the ELR; and the ELR feature's levels.
BROKER_FACT_COLUMNS = (
    ("broker", "INT"),
    ("kind", "STRING"),  # "partition" or "elr_level"
    ("offset", "BIGINT"),
    ("batch_base_offset", "BIGINT"),
    ("from_snapshot", "BOOLEAN"),
    ("topic_id", "STRING"),
    ("partition", "INT"),
    ("label", "STRING"),
    ("in_elr", "BOOLEAN"),
    ("left_elr", "BOOLEAN"),
    ("left_isr", "BOOLEAN"),
    ("isr_to_elr", "BOOLEAN"),
    ("level", "INT"),
)
PARTITION_FACT, LEVEL_FACT = "partition", "elr_level"


def broker_facts(history: DataFrame, changes: DataFrame) -> DataFrame:
    """``BROKER_FACT_COLUMNS``: one row per (partition change, broker in its ISR or ELR, before or
    after) from ``partition_changes``, and every ELR feature level once per broker of ``history``."""

    def has(column: str) -> Column:
        return F.array_contains(F.coalesce(F.col(column), _no_ids()), F.col("broker"))

    involved = F.array_distinct(
        F.concat(*[F.coalesce(F.col(c), _no_ids()) for c in ("isr", "elr", "isr_removed", "elr_removed")])
    )
    label = F.concat(
        F.coalesce(F.col("topic"), F.col("topic_id")), F.lit("-"), F.col("partition").cast("string")
    )
    partition_facts = (
        changes.select("*", F.explode(involved).alias("broker"))
        .withColumn("kind", F.lit(PARTITION_FACT))
        .withColumn("label", label)
        .withColumn("in_elr", has("elr"))
        .withColumn("left_elr", has("elr_removed"))
        .withColumn("left_isr", has("isr_removed") & ~has("elr_added"))
        .withColumn("isr_to_elr", has("isr_removed") & has("elr_added"))
        .withColumn("level", F.lit(None).cast("int"))
    )
    brokers = broker_events(history).select("broker").distinct()
    levels = (
        elr_levels(history)
        .crossJoin(brokers)
        .withColumn("kind", F.lit(LEVEL_FACT))
        .withColumn("batch_base_offset", F.col("offset"))
        .withColumn("from_snapshot", F.lit(False))
    )
    for name, kind in BROKER_FACT_COLUMNS:
        if name not in levels.columns:
            levels = levels.withColumn(name, F.lit(None).cast(kind))
    return _typed(partition_facts, BROKER_FACT_COLUMNS).unionByName(_typed(levels, BROKER_FACT_COLUMNS))


def _rank(event: str) -> int:
    # Within one record, controlled shutdown comes before fenced (the order the broker lives it).
    return 0 if event == CONTROLLED_SHUTDOWN else 1


def replay_broker(
    events: Iterable[Mapping[str, Any]], facts: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One broker's ``broker_events`` in offset order, as ``BROKERS_TIMELINE_COLUMNS`` rows: the
    state after each event (a ``registration_changed`` keeps the previous one), the previous
    incarnation and, for every registration, ``classify_registration``'s verdict."""
    ordered = sorted(events, key=lambda e: (int(e["offset"]), _rank(str(e["event"]))))
    known = sorted(facts, key=lambda f: int(f["offset"]))
    rows: list[dict[str, Any]] = []
    state: str | None = None
    incarnation: str | None = None
    for e in ordered:
        row = {name: e[name] for name, _ in BROKER_EVENT_COLUMNS}
        state = e["state"] if e["state"] is not None else state
        row["state"] = state
        row.update(previous_incarnation_id=None, registration=None, evidence=None)
        if e["event"] == REGISTERED:
            row["previous_incarnation_id"] = incarnation
            row["registration"], row["evidence"] = classify_registration(e, incarnation, known)
            incarnation = e["incarnation_id"]
        rows.append(row)
    return rows


def classify_registration(
    registration: Mapping[str, Any], previous_incarnation: str | None, facts: Sequence[Mapping[str, Any]]
) -> tuple[str, str | None]:
    """(class, evidence) of one RegisterBrokerRecord, from the controller's shutdown handling that
    the records show (``facts``: the broker's ``broker_facts``, by offset):

    * ``first``: the broker's first registration in the history; ``snapshot``: one read from the
      snapshot the history starts from; ``same_incarnation``: the same incarnation registering
      again (a retry, or after losing its registration), which involves no shutdown handling;
    * a new incarnation is judged by the partition changes of its registration's batch that come
      before the RegisterBrokerRecord (spec 2.1 step 5: the shutdown handling precedes it in the same
      batch) and by the partitions' ELRs just before that batch:

      - ``unclean`` if a change takes the broker out of an ELR (an unclean restart loses ELR
        membership, spec 2.5 and 5.3 rule 4; fencing and clean restarts never remove a broker from
        an ELR, 5.3 rule 8), or, with ELR enabled, out of an ISR without putting it in the ELR (the
        unclean path never makes it eligible);
      - ``clean`` if a change moves it from an ISR into the ELR (the clean path's fence-style
        removal), if it stays in the ELR of some partition through the batch (the unclean path
        would have removed it), or if ELR was disabled (eligible.leader.replicas.version 0: every
        re-registration is handled as clean, spec 5.2);
      - ``indeterminate`` if none of these: the broker was in no ISR and no ELR, and both paths
        write nothing;
      - ``conflicting`` if both kinds of evidence are there (not expected from a correct
        controller: worth a look).

    Where it can be wrong: the ISR rule assumes a broker restarting cleanly is in no ISR (its
    controlled shutdown or fencing took it out, and a fenced broker is never re-added); a log
    written by a controller that keeps fenced brokers in ISRs would read as unclean. It is the
    controller's judgement (spec 2.2: clean means the broker sent the epoch of its last clean
    shutdown), not a fact about the broker's disk: a clean stop whose marker was lost is unclean.
    """
    if registration["from_snapshot"]:
        return FROM_SNAPSHOT, None
    if previous_incarnation is None:
        return FIRST, None
    if previous_incarnation == registration["incarnation_id"]:
        return SAME_INCARNATION, None
    offset, batch = int(registration["offset"]), int(registration["batch_base_offset"])
    level = 0
    in_elr: dict[tuple[Any, Any], str | None] = {}  # (topic_id, partition) -> label, while in its ELR
    left_elr: list[str] = []
    left_isr: list[str] = []
    isr_to_elr: list[str] = []
    for f in facts:
        at = int(f["offset"])
        if at >= offset:
            break
        if f["kind"] == LEVEL_FACT:
            level = int(f["level"] or 0)
            continue
        key = (f["topic_id"], f["partition"])
        if at < batch:
            if f["in_elr"]:
                in_elr[key] = f["label"]
            else:
                in_elr.pop(key, None)
        elif int(f["batch_base_offset"]) == batch and not f["from_snapshot"]:
            if f["left_elr"]:
                left_elr.append(str(f["label"]))
                in_elr.pop(key, None)
            if f["left_isr"]:
                left_isr.append(str(f["label"]))
            if f["isr_to_elr"]:
                isr_to_elr.append(str(f["label"]))
    kept = sorted(str(label) for label in in_elr.values())
    elr_enabled = level > 0
    unclean = bool(left_elr) or (elr_enabled and bool(left_isr))
    clean = bool(isr_to_elr) or bool(kept) or not elr_enabled
    if not (unclean or clean):
        return INDETERMINATE, "in no ISR or ELR when it registered: both paths write nothing"

    def listed(labels: list[str]) -> str:
        return ", ".join(sorted(dict.fromkeys(labels)))

    reasons = []
    if left_elr:
        reasons.append(f"taken out of the ELR of {listed(left_elr)}")
    if elr_enabled and left_isr:
        reasons.append(f"taken out of the ISR (not into the ELR) of {listed(left_isr)}")
    if isr_to_elr:
        reasons.append(f"moved from the ISR into the ELR of {listed(isr_to_elr)}")
    if kept:
        reasons.append(f"kept in the ELR of {listed(kept)}")
    if not elr_enabled:
        reasons.append("ELR disabled (eligible.leader.replicas.version 0): handled as clean")
    verdict = CONFLICTING if (unclean and clean) else UNCLEAN if unclean else CLEAN
    return verdict, f"{'; '.join(reasons)} in its registration batch (offset {batch})"


def _records_of(frame: Any) -> list[dict[str, Any]]:
    """A pandas frame's rows as plain dicts (NaN -> None: pandas' null in numeric columns)."""

    def plain(v: Any) -> Any:
        if v is None or (isinstance(v, float) and v != v):
            return None
        return v

    return [{k: plain(v) for k, v in rec.items()} for rec in frame.astype(object).to_dict("records")]


def _pandas_rows(rows: list[dict[str, Any]], columns: Sequence[tuple[str, str]]) -> Any:
    """Rows as a pandas frame whose integer and boolean columns stay nullable."""
    import pandas as pd

    out = pd.DataFrame(rows, columns=_names(columns))
    for name, kind in columns:
        if kind in ("INT", "BIGINT"):
            out[name] = out[name].astype("Int64")
        elif kind == "BOOLEAN":
            out[name] = out[name].astype("boolean")
    return out


def replay_broker_frames(events: Any, facts: Any) -> Any:
    """``replay_broker`` as a cogrouped ``applyInPandas`` function (one broker's events and facts
    in, its timeline rows out)."""
    return _pandas_rows(replay_broker(_records_of(events), _records_of(facts)), BROKERS_TIMELINE_COLUMNS)


def brokers_timeline(history: DataFrame, changes: DataFrame) -> DataFrame:
    """Each broker's lifecycle (``BROKERS_TIMELINE_COLUMNS``): ``broker_events`` and
    ``broker_facts`` cogrouped by broker and replayed by ``replay_broker``. ``changes`` is
    ``partition_changes(history)``."""
    events = broker_events(history).groupBy("broker")
    facts = broker_facts(history, changes).groupBy("broker")
    return events.cogroup(facts).applyInPandas(replay_broker_frames, ddl(BROKERS_TIMELINE_COLUMNS))


# -------------------------------------------------------------------------------------------------
# Reading the source: one node's log dir or a ``kraft cluster`` data dir


@dataclass(frozen=True, slots=True)
class LogSource:
    """What to read: ``paths`` (node id -> metadata log dir; None for a lone dir without a
    meta.properties) and the voters if the layout says (``cluster.json``'s controllers)."""

    root: Path
    paths: dict[int | None, Path]
    cluster: bool
    voters: tuple[int, ...] | None = None
    skipped: tuple[str, ...] = ()


def locate_logs(directory: str | Path) -> LogSource:
    """``directory`` as a ``kraft cluster`` data dir (``cluster.json`` and/or ``node-*/metadata``)
    or one node's metadata log dir (or its ``__cluster_metadata-0``).

    Raises:
        FileNotFoundError: no such directory, or no metadata log in it.
    """
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory")
    cluster_file = root / "cluster.json"
    node_dirs = sorted(root.glob("node-*/metadata"))
    if cluster_file.exists() or node_dirs:
        paths: dict[int | None, Path] = {}
        skipped: list[str] = []
        voters: tuple[int, ...] | None = None
        if cluster_file.exists():
            for node_id, roles, log_dir in _cluster_nodes(cluster_file):
                local = root / f"node-{node_id}" / "metadata"
                path = local if local.is_dir() else Path(log_dir)
                if metadata_partition_dir(path).is_dir():
                    paths[node_id] = path
                else:
                    skipped.append(f"node {node_id}: no metadata log in {path}")
                if "controller" in roles:
                    voters = (*(voters or ()), node_id)
        else:
            for d in node_dirs:
                suffix = d.parent.name.removeprefix("node-")
                if suffix.isdigit() and metadata_partition_dir(d).is_dir():
                    paths[int(suffix)] = d
                else:
                    skipped.append(f"{d}: not a node's metadata log")
        if not paths:
            raise FileNotFoundError(f"{root}: no node of the cluster has a metadata log")
        return LogSource(root, paths, True, voters, tuple(skipped))
    if root.name == METADATA_PARTITION_DIR_NAME or metadata_partition_dir(root).is_dir():
        return LogSource(root, {None: root}, False)
    raise FileNotFoundError(
        f"{root} is neither a metadata log dir (with {METADATA_PARTITION_DIR_NAME}) nor a kraft cluster dir "
        "(cluster.json, node-*/metadata)"
    )


def _cluster_nodes(path: Path) -> list[tuple[int, tuple[str, ...], str]]:
    """(id, roles, metadata log dir) of each node of a ``kraft cluster`` ``cluster.json`` (read
    here rather than through ``kraft.cli.cluster``: spark depends on the core, not on the CLI).

    Raises:
        ValueError: not a cluster file.
    """
    try:
        data = json.loads(path.read_text())
        return [
            (int(n["id"]), tuple(str(r) for r in n.get("roles", ["controller"])), str(n.get("log_dir", "")))
            for n in data["nodes"]
        ]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a kraft cluster file: {e}") from None


def read_logs(spark: Any, source: LogSource) -> DataFrame:
    """Every node's log and snapshots (``includeSnapshots``) as one records table; a node whose
    log dir has no meta.properties gets its id from the layout."""
    frames = []
    for node, path in sorted(source.paths.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        df = spark.read.format("kraft").option("includeSnapshots", "true").load(str(path))
        if node is not None:
            df = df.withColumn("node", F.coalesce(F.col("node"), F.lit(node)).cast("int"))
        frames.append(df)
    out: DataFrame = frames[0]
    for df in frames[1:]:
        out = out.unionByName(df)
    return out


def voters_from_logs(records: DataFrame) -> list[int] | None:
    """The voters named by the LEADER_CHANGE record of the highest epoch in any log (None if no
    log has one). A driver-side action."""
    row = (
        records.where(F.col("control_type") == LEADER_CHANGE)
        .orderBy(F.col("leader_epoch").desc(), F.col("offset").desc())
        .select(F.from_json("payload", LEADER_CHANGE_JSON).alias("p"))
        .limit(1)
        .collect()
    )
    if not row or row[0]["p"] is None or not row[0]["p"]["voters"]:
        return None
    return sorted({int(v["voterId"]) for v in row[0]["p"]["voters"]})


# -------------------------------------------------------------------------------------------------
# The pipeline (driver side)

STAGES = (
    "read logs",
    "committed prefix",
    "records",
    "leader_changes",
    "quorum_timeline",
    "partition_changes",
    "brokers_timeline",
    "report",
)
TABLES = ("records", "leader_changes", "quorum_timeline", "partition_changes", "brokers_timeline")


@dataclass(slots=True)
class Analysis:
    """What ``analyze`` wrote and what the report needs about the source."""

    out_dir: Path
    source: str
    cluster: bool
    verified: bool
    voters: list[int] | None
    reference: int | None
    committed_by: str
    committed_end: int | None
    bucket_ms: int
    logs: list[NodeLog]
    tables: dict[str, Path] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stage_s: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0


class Progress:
    """Stage-by-stage progress on stderr (tqdm; off when not a terminal unless forced)."""

    def __init__(
        self, stages: Sequence[str], enabled: bool | None = None, file: TextIO | None = None
    ) -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=len(stages),
            file=file or sys.stderr,
            unit="stage",
            disable=None if enabled is None else not enabled,
            bar_format="{desc:<32} {n_fmt}/{total_fmt} stages [{elapsed}]",
        )

    def start(self, stage: str) -> None:
        self._bar.set_description(f"kraft analyze: {stage}")

    def done(self) -> None:
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


# How each table is sorted in its Parquet file.
TABLE_ORDER: dict[str, tuple[str, ...]] = {
    "records": ("node", "offset"),
    "leader_changes": ("offset",),
    "quorum_timeline": ("bucket_start",),
    "partition_changes": ("offset", "topic", "partition"),
    "brokers_timeline": ("offset", "broker", "event"),
}


def _write(df: DataFrame, path: Path, order: Sequence[str] = ()) -> int:
    """``df`` as one Parquet file under ``path``, sorted by ``order`` (sorted inside the one
    partition: no range-sampling job); returns its rows (from the Parquet footer: no second job)."""
    import pyarrow.parquet as pq

    if order:
        df = df.repartition(1).sortWithinPartitions(*order)
    else:
        df = df.coalesce(1)
    df.write.mode("overwrite").parquet(str(path))
    return sum(pq.ParquetFile(part).metadata.num_rows for part in sorted(path.glob("*.parquet")))


class _Stages:
    """Times each stage and moves the progress bar: ``with stages("records"): ...``."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        import time

        if self.progress:
            self.progress.start(name)
        started = time.perf_counter()
        yield
        self.seconds[name] = round(time.perf_counter() - started, 2)
        if self.progress:
            self.progress.done()


def analyze(
    spark: Any,
    records: DataFrame,
    out_dir: Path,
    *,
    source: str,
    cluster: bool,
    verified: bool,
    voters: Sequence[int] | None = None,
    all_committed: bool = False,
    bucket_ms: int = DEFAULT_BUCKET_MS,
    progress: Progress | None = None,
    notes: Sequence[str] = (),
    report: Callable[[Any, Analysis], Any] | None = None,
) -> Analysis:
    """Build and write every table of ``records`` under ``out_dir/tables`` and, with ``report``,
    the report; returns what was written (also as ``out_dir/analysis.json``).

    ``records`` is decoded once (cached while the committed prefix is judged and the ``records``
    table is written); every later table is built from that Parquet copy. ``cluster``: the records
    hold several nodes' logs (log ends and lags per node). ``verified``: judge committedness by
    majority among ``voters`` (default: those the logs' latest LEADER_CHANGE names); false for one
    log, whose ``committed`` flags are then null, unless ``all_committed``: the rows were read below
    the quorum's high watermark (the streaming source), so every one is committed.

    Raises:
        ValueError: the logs hold no records.
    """
    import time

    started = time.perf_counter()
    stages = _Stages(progress)
    tables = out_dir / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    with stages("read logs"):
        records = records.persist()
        total = records.count()
    if total == 0:
        records.unpersist()
        raise ValueError("the logs hold no records")
    # For this run (restored after): few shuffle partitions for small logs (each partition is a
    # task in every stage; never more than configured), and Parquet timestamps as the records
    # contract has them (microseconds, UTC) rather than Spark's legacy INT96.
    shuffle = "spark.sql.shuffle.partitions"
    settings = {
        shuffle: str(max(1, min(int(spark.conf.get(shuffle)), -(-total // ROWS_PER_SHUFFLE_PARTITION)))),
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    }
    configured = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        with stages("committed prefix"):
            if voters is None and verified:
                voters = voters_from_logs(records)
            judge = list(voters) if (verified and voters) else None
            logs = sorted(
                (NodeLog(**r.asDict()) for r in log_bounds(records, judge).collect()),
                key=lambda b: -1 if b.node is None else b.node,
            )
            reference = pick_reference(logs)
        analysis = Analysis(
            out_dir=out_dir,
            source=source,
            cluster=cluster,
            verified=judge is not None or all_committed,
            voters=list(voters) if voters else None,
            reference=reference.node,
            committed_by=(
                f"judged by a majority of the voters {list(voters or [])}"
                if judge is not None
                else "below the quorum's high watermark (read by the streaming source)"
                if all_committed
                else "not judged (one log alone)"
            ),
            committed_end=reference.committed_end,
            bucket_ms=_bucket_for(logs, bucket_ms),
            logs=logs,
            notes=list(notes),
            stage_s=stages.seconds,
        )
        if verified and judge is None:
            analysis.notes.append("no voter set found: committedness not judged")
        if analysis.bucket_ms != bucket_ms:
            analysis.notes.append(
                f"buckets widened from {bucket_ms} ms to {analysis.bucket_ms} ms "
                f"(at most {MAX_BUCKETS} buckets)"
            )

        with stages("records"):
            bounds = spark.createDataFrame(
                [(b.node, b.committed_end, b.snapshot_base) for b in logs],
                "node INT, committed_end BIGINT, snapshot_base BIGINT",
            )
            marked = mark_history(
                records, bounds, reference.node, verified=judge is not None or all_committed
            )
            analysis.counts["records"] = _write(marked, tables / "records", TABLE_ORDER["records"])
            analysis.tables["records"] = tables / "records"
            records.unpersist()
            stored = spark.read.parquet(str(tables / "records"))
            history = history_of(stored).cache()

        nodes = [b.node for b in logs if b.node is not None] if cluster else None
        builders: list[tuple[str, Callable[[], DataFrame]]] = [
            ("leader_changes", lambda: leader_changes(history)),
            ("quorum_timeline", lambda: quorum_timeline(history, stored, analysis.bucket_ms, nodes)),
            ("partition_changes", lambda: partition_changes(history)),
            (
                "brokers_timeline",
                lambda: brokers_timeline(history, spark.read.parquet(str(tables / "partition_changes"))),
            ),
        ]
        for name, build in builders:
            with stages(name):
                analysis.counts[name] = _write(build(), tables / name, TABLE_ORDER[name])
                analysis.tables[name] = tables / name
        with stages("report"):
            analysis.wall_s = time.perf_counter() - started  # so far: the report shows it
            if report is not None:
                report(spark, analysis)
            history.unpersist()
            analysis.wall_s = time.perf_counter() - started
            (out_dir / "analysis.json").write_text(
                json.dumps(analysis_json(analysis), indent=2, default=str) + "\n"
            )
        return analysis
    finally:
        records.unpersist()
        for key, value in configured.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _bucket_for(logs: Sequence[NodeLog], bucket_ms: int) -> int:
    """``bucket_ms``, widened if the logs' time span would need more than ``MAX_BUCKETS``."""
    firsts = [b.first_timestamp for b in logs if b.first_timestamp is not None]
    lasts = [b.last_timestamp for b in logs if b.last_timestamp is not None]
    if not firsts or not lasts:
        return bucket_ms
    span_ms = int((max(lasts) - min(firsts)).total_seconds() * 1000)
    return bucket_ms if span_ms // bucket_ms <= MAX_BUCKETS else -(-span_ms // MAX_BUCKETS)


QUORUM_SOURCE_PREFIX = "quorum:"  # ``Analysis.source`` of a live quorum read through the stream


def describe_kind(a: Analysis) -> str:
    """What was analyzed, in words."""
    if a.cluster:
        return "kraft cluster data dir (every node's log)"
    if a.source.startswith(QUORUM_SOURCE_PREFIX):
        return "a live quorum's committed log (streaming source)"
    return "one metadata log"


def analysis_json(a: Analysis) -> dict[str, Any]:
    """The run's facts as JSON (``OUT/analysis.json``)."""
    return {
        "source": a.source,
        "cluster": a.cluster,
        "verified": a.verified,
        "committed_by": a.committed_by,
        "voters": a.voters,
        "reference_node": a.reference,
        "committed_end": a.committed_end,
        "bucket_ms": a.bucket_ms,
        "logs": [
            {
                "node": b.node,
                "voter": b.voter,
                "records": b.records,
                "log_start": b.log_start,
                "log_end": b.log_end,
                "snapshot_base": b.snapshot_base,
                "majority_end": b.majority_end,
                "committed_end": b.committed_end,
            }
            for b in a.logs
        ],
        "tables": {k: str(v) for k, v in a.tables.items()},
        "rows": a.counts,
        "notes": a.notes,
        "stage_s": a.stage_s,
        "wall_s": round(a.wall_s, 2),
    }
