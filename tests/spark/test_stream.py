"""``spark.readStream.format("kraft")`` tailing live quorums of real processes: exactly the
committed log, in order; ``maxRecordsPerTrigger`` bounds the micro-batches; exactly-once into a
file sink across a driver killed with -9 and restarted on its checkpoint; the stream carries on
through a leader killed with -9; a snapshot the leader took while the stream was behind is read,
then the log after it."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from kraft.cli import cluster_processes as processes
from kraft.client.quorum_tail import LogChunk, OffsetCompactedError, QuorumTail, SnapshotChunk
from kraft.common.errors import ConfigError
from kraft.raft.types import OffsetAndEpoch
from kraft.records.batch import SimpleRecord, build_batch
from kraft.spark.columns import RECORD_SCHEMA
from kraft.spark.stream import KraftStreamReader, StreamOptions, decode_chunks, pack_chunks, plan_ranges

# One worker runs every Spark test of a parallel run (`--dist loadgroup`): one SparkSession.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

# A voter appending 500 records/s of 64 bytes while it leads (``kraft test-raft-server``).
APPEND = ["--throughput", "500", "--record-size", "64", "--report-interval-s", "5"]
# Every column but the two that name where a row was read (a file, or the quorum).
CONTENT = [f.name for f in RECORD_SCHEMA if f.name not in ("node", "file")]
# A controller writing a NoOpRecord every 20 ms and a snapshot every 6 s (its log is cleaned below
# each snapshot at once): a stream stopped for a few seconds finds its position compacted away.
SNAPSHOTTING = {
    "metadata.log.segment.bytes": "4096",
    "metadata.log.max.snapshot.interval.ms": "6000",
    "metadata.max.idle.interval.ms": "20",
}


@dataclass
class Quorum:
    cluster: Any  # LocalCluster
    bootstrap: str

    def high_watermark(self) -> int:
        return int(self.cluster.describe().high_watermark)

    def wait_for_high_watermark(self, offset: int, timeout_s: float = 30.0) -> int:
        return int(
            self.cluster.wait_for(
                f"high watermark >= {offset}",
                lambda: hw if (hw := self.high_watermark()) >= offset else None,
                timeout_s,
            )
        )


def _quorum(cluster: Any) -> Quorum:
    cluster.wait_for_leader()
    return Quorum(cluster, ",".join(str(a) for a in cluster.bootstrap()))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, local_cluster_class: Any) -> Iterator[Quorum]:
    """Three voters appending 1,000 records/s, shared by the tests that kill nothing."""
    cluster = local_cluster_class(tmp_path_factory.mktemp("live"), 3)
    cluster.start_all(tool_args=APPEND)
    try:
        yield _quorum(cluster)
    finally:
        cluster.stop_all()


def stream(spark: Any, bootstrap: str, **options: Any) -> Any:
    reader = spark.readStream.format("kraft").option("bootstrap.controllers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def _offset(text: str | None, initial: int = 0) -> int:
    """An offset of a progress report (the first batch's start is null: the initial offset)."""
    value = json.loads(text) if text else None
    return initial if value is None else int(value["offset"])


def end_offset(query: Any) -> int:
    """The end offset of the last micro-batch that read anything."""
    return max((_offset(p["sources"][0]["endOffset"]) for p in query.recentProgress), default=0)


def content(rows: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(r[c] for c in CONTENT) for r in rows]


def batch_read(spark: Any, log_dir: str, end: int) -> list[Any]:
    """The rows ``spark.read.format("kraft")`` reads from a node's files, below ``end``."""
    df = spark.read.format("kraft").option("endingOffset", str(end)).load(log_dir)
    rows: list[Any] = df.orderBy("offset").collect()
    return rows


def progress_rows(query: Any) -> list[int]:
    return [int(p["numInputRows"]) for p in query.recentProgress if p["numInputRows"]]


# ------------------------------------------------------------------------------------------------
# (a) exactly the committed log


def test_available_now_emits_exactly_the_committed_records_in_order(spark: Any, live: Quorum) -> None:
    live.wait_for_high_watermark(1500)
    query = (
        stream(spark, live.bootstrap, maxOffsetsPerPartition=700)
        .writeStream.format("memory")
        .queryName("stream_all")
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(90)
    end = end_offset(query)
    assert end >= 1500
    rows = spark.sql("SELECT * FROM stream_all").collect()
    # In order, no gap, no duplicate: offsets 0..end-1, one row each, as the sink received them.
    assert [r["offset"] for r in rows] == list(range(end))
    assert {(r["node"], r["file"], r["from_snapshot"]) for r in rows} == {
        (None, f"quorum:{live.bootstrap}", False)
    }
    assert end <= live.high_watermark()  # nothing above the high watermark
    # The same records as the leader's files: every column, as the batch source reads them...
    leader = live.cluster.describe().leader_id
    log_dir = live.cluster.node(leader).log_dir
    assert content(rows) == content(batch_read(spark, log_dir, end))
    # ... and the data records as the cluster helper reads the segments.
    data = [(r["offset"], r["leader_epoch"], bytes(r["value"])) for r in rows if not r["is_control"]]
    assert data == live.cluster.records(leader, end)
    assert any(r["is_control"] and r["control_type"] == "LEADER_CHANGE" for r in rows)


# ------------------------------------------------------------------------------------------------
# (b) maxRecordsPerTrigger


def test_max_records_per_trigger_bounds_every_micro_batch(spark: Any, live: Quorum) -> None:
    start = live.wait_for_high_watermark(3600) - 3600
    query = (
        stream(spark, live.bootstrap, maxRecordsPerTrigger=1200, startingOffset=start)
        .writeStream.format("memory")
        .queryName("stream_limited")
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(90)
    sizes = progress_rows(query)
    assert len(sizes) >= 3 and max(sizes) == 1200 and all(s == 1200 for s in sizes[:-1]), sizes
    # Each batch continues exactly where the previous ended.
    ranges = [
        (_offset(p["sources"][0]["startOffset"], start), _offset(p["sources"][0]["endOffset"]))
        for p in query.recentProgress
        if p["numInputRows"]
    ]
    assert ranges[0][0] == start
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert [hi - lo for lo, hi in ranges] == sizes
    offsets = [r["offset"] for r in spark.sql("SELECT offset FROM stream_limited").collect()]
    assert offsets == list(range(start, end_offset(query)))


# ------------------------------------------------------------------------------------------------
# (c) exactly-once across a driver kill -9

DRIVER = """
import sys
from kraft.spark.session import kraft_session

bootstrap, checkpoint, out, limit, start = sys.argv[1:6]
conf = {
    "spark.sql.shuffle.partitions": "1",
    # A quicker JVM start (no C2 compiler, serial GC): this driver lives for seconds.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}
spark = kraft_session("local[1]", "kraft-stream-driver", conf)
writer = (
    spark.readStream.format("kraft")
    .option("bootstrap.controllers", bootstrap)
    .option("maxRecordsPerTrigger", limit)
    .option("startingOffset", start)  # used by the first run only: a restart goes by its checkpoint
    .load()
    .writeStream.format("parquet")
    .option("path", out)
    .option("checkpointLocation", checkpoint)
)
writer.trigger(processingTime="100 milliseconds").start().awaitTermination()
"""


def _batch_ids(directory: Path) -> set[int]:
    return {int(p.name) for p in directory.glob("[0-9]*")} if directory.is_dir() else set()


def _start_driver(script: Path, args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, str(script), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=processes.child_env(),
            start_new_session=True,  # its own process group: the JVM dies with it
        )


def test_exactly_once_into_parquet_across_a_driver_kill_9(spark: Any, live: Quorum, tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    checkpoint, out, log = tmp_path / "checkpoint", tmp_path / "out", tmp_path / "driver.log"
    # From near the end of the live log: what the restarted driver catches up on is what was
    # appended since, not the whole history of the shared cluster (minutes of it, late in a run).
    start = live.wait_for_high_watermark(2000) - 2000
    args = [live.bootstrap, str(checkpoint), str(out)]
    # Small batches, so that it is killed mid-stream...
    started = time.monotonic()
    for _attempt in range(3):
        driver = _start_driver(script, [*args, "400", str(start)], log)
        try:
            # Kill it in the middle of a micro-batch: its offsets are logged, its commit is not.
            deadline = time.monotonic() + 120
            while True:
                assert driver.poll() is None, processes.tail(log, 40)
                assert time.monotonic() < deadline, "the driver never got going\n" + processes.tail(log, 40)
                pending = _batch_ids(checkpoint / "offsets") - _batch_ids(checkpoint / "commits")
                if _batch_ids(checkpoint / "commits") and pending:
                    break
                time.sleep(0.005)
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(timeout=30)
        finally:
            if driver.poll() is None:
                os.killpg(driver.pid, signal.SIGKILL)
                driver.wait(timeout=30)
        # The batch may have committed between the look and the kill (this process descheduled
        # meanwhile): then the kill fell between batches, and the next attempt goes on from there.
        committed_before = _batch_ids(checkpoint / "commits")
        if _batch_ids(checkpoint / "offsets") - committed_before:
            break
    interrupted = max(_batch_ids(checkpoint / "offsets"))
    assert interrupted not in committed_before, "three kills in a row fell between batches"
    logged = (checkpoint / "offsets" / str(interrupted)).read_text()
    interrupted_end = json.loads(logged.splitlines()[-1])
    killed = time.monotonic()
    # ... then restarted on the same checkpoint by another driver (this test's own session: a
    # third JVM start would cost half a minute and prove nothing more): it replays the
    # interrupted batch (the same range, from the offset log) and catches up in large batches.
    restarted = (
        stream(spark, live.bootstrap, maxRecordsPerTrigger=100000, startingOffset=start)
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert restarted.awaitTermination(150), "the restarted query did not catch up"
    assert restarted.exception() is None, restarted.exception()
    print(f"killed after {killed - started:.1f} s, caught up after {time.monotonic() - killed:.1f} s")
    assert interrupted not in committed_before and interrupted in _batch_ids(checkpoint / "commits")
    # The replay read the very range the killed driver had logged.
    assert (checkpoint / "offsets" / str(interrupted)).read_text() == logged
    offsets = [r["offset"] for r in spark.read.parquet(str(out)).select("offset").collect()]
    assert len(offsets) == len(set(offsets)), "duplicates in the file sink"
    assert sorted(offsets) == list(range(start, max(offsets) + 1)), "a gap in the file sink"
    assert max(offsets) + 1 >= interrupted_end["offset"]


# ------------------------------------------------------------------------------------------------
# (d) a leader kill -9 mid-stream


def test_the_stream_carries_on_through_a_leader_kill_9(spark: Any, local_cluster: Callable[..., Any]) -> None:
    cluster = local_cluster(3)
    cluster.start_all(tool_args=APPEND)
    quorum = _quorum(cluster)
    before = cluster.wait_for_leader()
    start = quorum.wait_for_high_watermark(1500) - 1000
    query = (
        stream(spark, quorum.bootstrap, maxRecordsPerTrigger=1500, timeoutMs=30000, startingOffset=start)
        .writeStream.format("memory")
        .queryName("through_failover")
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        quorum.cluster.wait_for("two micro-batches", lambda: len(progress_rows(query)) >= 2 or None, 60)
        quorum.cluster.kill(before.leader_id)
        survivors = [i for i in quorum.cluster.ids if i != before.leader_id]
        after = quorum.cluster.wait_for_leader(among=survivors, min_epoch=before.leader_epoch + 1)

        def new_epoch_rows() -> int | None:
            assert query.exception() is None, query.exception()
            sql = f"SELECT count(*) FROM through_failover WHERE leader_epoch >= {after.leader_epoch}"
            n = int(spark.sql(sql).first()[0])
            return n if n >= 300 else None

        # The stream must read on through the records of the new leader's epoch.
        quorum.cluster.wait_for("the stream to read on with the new leader", new_epoch_rows, 90)
    finally:
        query.stop()
    assert query.exception() is None
    rows = spark.sql("SELECT offset, leader_epoch, value, is_control FROM through_failover").collect()
    end = start + len(rows)
    assert [r["offset"] for r in rows] == list(range(start, end))
    epochs = {r["leader_epoch"] for r in rows}
    assert {before.leader_epoch, after.leader_epoch} <= epochs
    data = [(r["offset"], r["leader_epoch"], bytes(r["value"])) for r in rows if not r["is_control"]]
    assert data == [r for r in quorum.cluster.records(after.leader_id, end) if r[0] >= start]


# ------------------------------------------------------------------------------------------------
# (e) a snapshot taken while the stream was behind


class SnapshotKeeper:
    """Copies every snapshot file the node publishes before its log cleaning deletes it."""

    def __init__(self, partition_dir: Path, keep: Path) -> None:
        self.partition_dir = partition_dir
        self.keep = keep
        keep.mkdir(parents=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for path in self.partition_dir.glob("*.checkpoint"):
                target = self.keep / path.name
                if not target.exists():
                    # Cleaned between listing and copying: the next one is still ahead.
                    with contextlib.suppress(FileNotFoundError):
                        shutil.copyfile(path, target)
            time.sleep(0.02)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def latest(self) -> int:
        """The end offset of the latest snapshot kept (0: none yet)."""
        ends = [int(p.name.split("-")[0]) for p in self.keep.glob("[0-9]*-*.checkpoint")]
        return max(ends, default=0)

    def path(self, end_offset: int) -> Path:
        (found,) = self.keep.glob(f"{end_offset:020d}-*.checkpoint")
        return found


def test_a_snapshot_taken_while_the_stream_was_behind_is_read_then_the_log(
    spark: Any, local_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = local_cluster(1, SNAPSHOTTING)
    cluster.start_all()
    quorum = _quorum(cluster)
    keeper = SnapshotKeeper(Path(cluster.node(1).log_dir) / "__cluster_metadata-0", tmp_path / "kept")
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "out"

    def start(**trigger: Any) -> Any:
        return (
            stream(spark, quorum.bootstrap)
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(checkpoint))
            .trigger(**trigger)
            .start()
        )

    try:
        quorum.wait_for_high_watermark(30)
        query = start(availableNow=True)
        assert query.awaitTermination(90)
        first_end = end_offset(query)
        # The stream stops; the controller writes on, snapshots past it and cleans its log.
        cluster.wait_for(
            "a snapshot past the stream's position", lambda: keeper.latest() > first_end or None, 20
        )
        # A new tail begins with that snapshot (or a later one): the log no longer holds first_end.
        with QuorumTail(quorum.bootstrap, timeout_s=10) as tail:
            snapshot = tail.snapshot_at(first_end)
            assert snapshot is not None and snapshot.offset > first_end
            with pytest.raises(OffsetCompactedError) as compacted:
                tail.read(first_end, tail.high_watermark, include_snapshots=False)
            assert compacted.value.log_start_offset > first_end
            assert compacted.value.snapshot_id == snapshot
        # Restarted on its checkpoint, the stream's new tail begins with the leader's latest
        # snapshot: the stream reads it, then the log after it (the tail keeps up from there on).
        query = start(processingTime="200 milliseconds")
        try:

            def past_a_snapshot() -> int | None:
                assert query.exception() is None, query.exception()
                where = f"from_snapshot AND offset >= {first_end}"
                last = spark.read.parquet(str(out)).where(where).agg({"offset": "max"}).first()[0]
                return last if last is not None and end_offset(query) > last + 100 else None

            cluster.wait_for("the stream to read a snapshot and the log after it", past_a_snapshot, 90)
        finally:
            query.stop()
        second_end = end_offset(query)
    finally:
        keeper.stop()
    rows = spark.read.parquet(str(out)).collect()
    log = sorted(r["offset"] for r in rows if not r["from_snapshot"])
    snapshots: dict[int, list[Any]] = {}
    for r in rows:
        if r["from_snapshot"]:
            snapshots.setdefault(r["offset"] + 1, []).append(r)
    # The second run began with a snapshot that covers where the first stopped...
    behind = min(e for e in snapshots if e > first_end)
    assert not [o for o in log if first_end <= o < behind]
    # ... and the log is contiguous except where a snapshot took over; nothing twice.
    assert len(log) == len(set(log))
    assert all(o == 0 or o - 1 in set(log) or o in snapshots for o in log)
    assert max([*log, *(e - 1 for e in snapshots)]) >= second_end - 1
    # Each snapshot's rows are the snapshot file's, as the batch source reads it.
    for snapshot_end, snapshot_rows in snapshots.items():
        file_rows = spark.read.format("kraft").load(str(keeper.path(snapshot_end))).collect()
        assert sorted(content(snapshot_rows)) == sorted(content(file_rows))
        assert {"SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"} <= {r["control_type"] for r in snapshot_rows}


# ------------------------------------------------------------------------------------------------
# Options and planning (no cluster)


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"needs .*bootstrap\.controllers"):
        StreamOptions.parse({})
    with pytest.raises(ConfigError, match=r"unknown option.*maxrecordspertriger"):
        StreamOptions.parse({"bootstrap.controllers": "h:1", "maxRecordsPerTriger": "5"})
    with pytest.raises(ConfigError, match="not files"):
        StreamOptions.parse({"bootstrap.controllers": "h:1", "path": "/x"})
    with pytest.raises(ConfigError, match="startingOffset"):
        StreamOptions.parse({"bootstrap.controllers": "h:1", "startingOffset": "soon"})
    with pytest.raises(ConfigError, match="must be positive"):
        StreamOptions.parse({"bootstrap.controllers": "h:1", "maxOffsetsPerPartition": "0"})
    with pytest.raises(ConfigError, match=r"option bootstrap\.controllers: invalid bootstrap address"):
        StreamOptions.parse({"bootstrap.controllers": "nohost"})
    parsed = StreamOptions.parse(
        {"BOOTSTRAP.CONTROLLERS": " a:1, b:2 ", "startingoffset": "LATEST", "includesnapshots": "False"}
    )
    assert (parsed.bootstrap_controllers, parsed.starting_offset, parsed.include_snapshots) == (
        "a:1,b:2",
        "latest",
        False,
    )
    assert parsed.source == "quorum:a:1,b:2"
    reader = KraftStreamReader({"bootstrap.controllers": "a:1", "startingOffset": "42"}, None)
    assert reader.initialOffset() == {"offset": 42}
    assert reader.partitions({"offset": 7}, {"offset": 7}) == []


def test_plan_ranges() -> None:
    assert plan_ranges(0, 10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert plan_ranges(5, 6, 4) == [(5, 6)]
    assert plan_ranges(3, 3, 4) == []
    # A snapshot served at offset 0 ends at 9: the first task must read past it.
    assert plan_ranges(0, 20, 4, whole_below=9) == [(0, 9), (9, 13), (13, 17), (17, 20)]
    assert plan_ranges(0, 6, 4, whole_below=9) == [(0, 6)]


def test_pack_chunks_keeps_the_order_and_bounds_each_partition() -> None:
    sid = OffsetAndEpoch(9, 1)
    a, b, c, d = (
        LogChunk(b"a" * 10, 0, 9),
        SnapshotChunk(sid, b"b" * 30, 0, 60),
        SnapshotChunk(sid, b"c" * 30, 30, 60),
        LogChunk(b"d" * 5, 9, 20),
    )
    assert pack_chunks([a, b, c, d], 40) == [[a, b], [c, d]]
    assert pack_chunks([a, b, c, d], 1) == [[a], [b], [c], [d]]  # a chunk over the bound goes alone
    assert pack_chunks([], 40) == []


def test_decode_chunks_keeps_a_log_chunks_range_and_puts_a_snapshots_rows_at_its_end() -> None:
    log = build_batch([SimpleRecord(value=b"x")] * 3, base_offset=0) + build_batch(
        [SimpleRecord(value=b"y")] * 3, base_offset=3
    )
    snapshot = build_batch([SimpleRecord(value=b"s")] * 2, base_offset=0)
    chunks = [LogChunk(log, 1, 5), SnapshotChunk(OffsetAndEpoch(9, 1), snapshot, 0, len(snapshot))]
    rows = [r for batch in decode_chunks(chunks, "quorum:q") for r in batch.to_pylist()]
    assert [(r["offset"], r["from_snapshot"], r["value"]) for r in rows] == [
        (1, False, b"x"),
        (2, False, b"x"),
        (3, False, b"y"),
        (4, False, b"y"),
        (8, True, b"s"),
        (8, True, b"s"),
    ]
    assert {r["file"] for r in rows} == {"quorum:q"}


def test_the_schema_is_fixed() -> None:
    from pyspark.sql.types import LongType, StructField, StructType

    with pytest.raises(ConfigError, match="fixed schema"):
        KraftStreamReader({"bootstrap.controllers": "a:1"}, StructType([StructField("offset", LongType())]))


def test_rows_of_a_stream_are_the_record_columns(spark: Any) -> None:
    df = spark.readStream.format("kraft").option("bootstrap.controllers", "127.0.0.1:1").load()
    assert df.isStreaming
    assert [f.name for f in df.schema.fields] == [f.name for f in RECORD_SCHEMA]
