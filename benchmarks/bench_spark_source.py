"""Spark source benchmark: the ``kraft`` batch source against Spark's own Parquet reader and
``kraft dump-log`` on the same records, and the ``kraft`` streaming source's latency against the
quorum's own commit latency, each baseline measured in the same run.

    python benchmarks/bench_spark_source.py [--records N] [--metadata-records N] [--master local[2]]
        [--repeat N] [--stream-seconds S] [--quick] [--json] [--workdir DIR] [--skip-batch]
        [--skip-stream]

Prints, next to the baseline:

* batch read of a *data* log: ``--records`` (default 5,000,000; ``--quick`` 200,000) records of
  100-byte values like ``kraft test-raft-server``'s (``<node>:<epoch>:<seq>:`` padded with dots,
  ``--records-per-batch`` per RecordBatch v2, after a LeaderChange control batch), written with
  the project's own ``MetadataLog`` (Kafka's 1 GiB segments) under a ``meta.properties``:

  - kraft: rows/s of ``spark.read.format("kraft").load(DIR).write.format("noop")`` (every column
    materialised), on a session whose Python workers already ran one small read of the source;
    served by the JVM source (``kraft.spark.jvm``) when its jar is built, else by the Python one
    (the output says which); with the JVM source, the Python source (``kraft_python``) is read the
    same way too;
  - parquet (the baseline): the same rows written once to Parquet by Spark, read back the same
    way; the ratio kraft / parquet (goal: at least 0.5);
  - each of these two reads runs ``--repeat`` times (2) and the best run counts, so that neither
    side is charged the JVM's warm-up (the kraft read runs first, on a colder JIT); the first run
    of each is printed too;
  - no decoding (the ceiling of any Python data source here): a Python source with the same
    schema, partitions and row count that yields one real Arrow batch of each read unit (decoded
    once) over and over, read the same way: what Spark's Python Data Source path itself costs
    (Arrow from the Python worker to the JVM, rows from Arrow), and kraft / it;
  - the same two reads as an aggregate (``count(value)``, ``max(offset)``, ``sum(length(value))``,
    ``sum(length(payload))``) whose results are checked against the log, and a bare ``count()``:
    Python data sources get no column pruning (the scan's ReadSchema keeps all 14 columns, checked
    on the plan of ``select("offset")``), so every one of them decodes every record;
  - dump-log: ``kraft dump-log --print-records`` over the segment files (one process, stdout
    piped to this one, which counts the ``| offset:`` lines): rows/s and kraft / dump-log;
  - in process: ``kraft.spark.arrow_log.read_unit`` over every read unit in this process (one core,
    no Spark): what the source's tasks do, without Spark;
  - which record decoder ran: the C one (``kraft.records._native_decode``, plain data batches
    straight into Arrow buffers) or, with ``KRAFT_PURE_PYTHON=1`` in the environment (the Spark
    workers inherit it) or where the extension is not built, the pure-Python one: run the
    benchmark both ways for a before/after on the same machine;

* the same for a *metadata* log: ``--metadata-records`` (default 200,000; ``--quick`` 50,000)
  real metadata records (TopicRecord + 10 PartitionRecords per topic, 20 PartitionChangeRecords,
  8 NoOpRecords in batches of their own, Fence/UnfenceBrokerRecord, after bootstrap records), whose
  JSON payloads dominate the decoding; dump-log runs with ``--cluster-metadata-decoder``;
* where the in-process read of each log spends its time: ``cProfile`` of ``read_unit`` over the
  first ``--profile-rows`` rows, top functions by own time, and the cumulative share of the batch
  checks, the record decoding (C and Python), the payload decoding and the Arrow building;
* streaming latency: a 3-voter ``kraft test-raft-server`` quorum (the process-level tests'
  timeouts, ``controller.quorum.append.linger.ms`` 5) appending 100-byte records at
  ``--stream-rate`` (1,000/s) while it leads;
  ``spark.readStream.format("kraft")`` from ``latest`` into ``foreachBatch`` (default trigger),
  which collects each micro-batch's ``(offset, timestamp)`` and stamps the rows with the wall time
  after the collect. Latency = that arrival time - the record's timestamp (the time its batch was
  opened on the leader; one machine, one clock): p50/p99/max over ``--stream-seconds`` (30;
  ``--quick`` 10) after ``--stream-warmup-s`` of warm-up, next to the leader's commit latency
  (``kraft test-raft-server --json``'s total: append call to commit notification, over its whole
  run, which the query spans from the leader's first seconds to the end). Also: micro-batches,
  rows per batch, Spark's ``triggerExecution`` per batch, whether the offsets came contiguous.

Progress lines go to stderr. CPU-bound on a shared machine: figures move with whatever else runs
there (the load average at the start and the end is printed). Reported, not gated; not part of
the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent.parent / "src"))  # after PYTHONPATH (a compiled build)

from kraft.cli import cluster as cluster_cli
from kraft.cli import cluster_processes as processes
from kraft.cli.write_stats import percentile
from kraft.client.admin import AdminClient
from kraft.client.connection import AdminError
from kraft.common.uuids import random_uuid, uuid_to_base64
from kraft.metadata.records import MetadataRecordType, encode_record, make_record
from kraft.records.batch import SimpleRecord, build_batch
from kraft.records.control import ControlType, build_control_batch, leader_change_message
from kraft.spark import arrow_log
from kraft.spark.arrow_log import RowFilter, plan_units, read_unit
from kraft.storage.log_dir import metadata_partition_dir
from kraft.storage.meta_properties import MetaProperties, write_meta_properties
from kraft.storage.metadata_log import MetadataLog

RECORD_SIZE = 100
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
# tests/integration/conftest.py's FAST_TIMEOUTS: quick elections, linger 5 ms.
QUORUM_OVERRIDES = {
    "controller.quorum.election.timeout.ms": "500",
    "controller.quorum.fetch.timeout.ms": "1000",
    "controller.quorum.election.backoff.max.ms": "300",
    "controller.quorum.request.timeout.ms": "800",
    "controller.quorum.retry.backoff.ms": "20",
    "controller.quorum.append.linger.ms": "5",
}
STARTED = time.monotonic()


def progress(msg: str) -> None:
    print(
        f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - STARTED:6.1f} s] {msg}",
        file=sys.stderr,
        flush=True,
    )


# ------------------------------------------------------------------------------------------------
# The logs


def _new_log(log_dir: Path) -> MetadataLog:
    log_dir.mkdir(parents=True, exist_ok=True)
    write_meta_properties(
        log_dir, MetaProperties(cluster_id=CLUSTER_ID, node_id=1, directory_id=uuid.uuid4())
    )
    return MetadataLog(metadata_partition_dir(log_dir))


def _leader_change(timestamp_ms: int) -> bytes:
    return build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(1, [1, 2, 3], [1, 2]),
        base_offset=0,
        partition_leader_epoch=1,
        timestamp_ms=timestamp_ms,
    )


def _write(log_dir: Path, batches: Iterator[bytes]) -> dict[str, Any]:
    """Appends ``batches`` (offsets are assigned by the log) as leader in epoch 1, 256 at a time."""
    started = time.perf_counter()
    log = _new_log(log_dir)
    try:
        group: list[bytes] = []
        for batch in batches:
            group.append(batch)
            if len(group) >= 256:
                log.append_as_leader(b"".join(group), 1)
                group = []
        if group:
            log.append_as_leader(b"".join(group), 1)
        log.flush()
        rows = log.end_offset()
        segments = [str(p) for p in log.segment_paths()]
    finally:
        log.close()
    return {
        "rows": rows,
        "bytes": sum(os.path.getsize(p) for p in segments),
        "segments": segments,
        "write_s": time.perf_counter() - started,
    }


def data_batches(records: int, per_batch: int) -> Iterator[bytes]:
    """A LeaderChange, then ``records`` test-raft-server payloads (node 1, epoch 1)."""
    now_ms = int(time.time() * 1000) - records
    yield _leader_change(now_ms)
    seq = 0
    while seq < records:
        values = []
        for _ in range(min(per_batch, records - seq)):
            seq += 1
            values.append(SimpleRecord(value=f"1:1:{seq}:".encode().ljust(RECORD_SIZE, b".")))
        yield build_batch(values, partition_leader_epoch=1, timestamp_ms=now_ms + seq)


def metadata_batches(records: int) -> Iterator[bytes]:
    """A LeaderChange and bootstrap records, then rounds of 41 records in 13 batches until at least
    ``records``: a topic (TopicRecord + 10 PartitionRecords, RF 3), 20 PartitionChangeRecords (an
    ISR shrink and a re-expansion per partition, half of them moving the leader), 8 NoOpRecords
    each alone in its batch (as a controller writes them), a FenceBrokerRecord and an
    UnfenceBrokerRecord."""
    rng = random.Random(1)
    ts = int(time.time() * 1000) - records
    dirs = {b: uuid.UUID(int=(b << 64) | 5) for b in (1, 2, 3)}

    def batch(recs: list[Any]) -> bytes:
        nonlocal ts
        ts += 1
        return build_batch(
            [SimpleRecord(value=encode_record(r)) for r in recs], partition_leader_epoch=1, timestamp_ms=ts
        )

    yield _leader_change(ts)
    boot = [
        make_record(MetadataRecordType.FEATURE_LEVEL, name="metadata.version", feature_level=25),
        make_record(
            MetadataRecordType.FEATURE_LEVEL, name="eligible.leader.replicas.version", feature_level=1
        ),
    ]
    boot += [
        make_record(
            MetadataRecordType.REGISTER_BROKER,
            broker_id=b,
            incarnation_id=uuid.UUID(int=b),
            broker_epoch=b,
            end_points=[],
            features=[],
            rack=None,
            fenced=False,
            log_dirs=[dirs[b]],
        )
        for b in (1, 2, 3)
    ]
    yield batch(boot)
    written = 1 + len(boot)
    topic = 0
    while written < records:
        tid = uuid.UUID(int=rng.getrandbits(128))
        replicas = [[1 + (p + i) % 3 for i in range(3)] for p in range(10)]
        yield batch(
            [make_record(MetadataRecordType.TOPIC, name=f"topic-{topic:06d}", topic_id=tid)]
            + [
                make_record(
                    MetadataRecordType.PARTITION,
                    partition_id=p,
                    topic_id=tid,
                    replicas=r,
                    isr=r,
                    leader=r[0],
                    leader_epoch=0,
                    partition_epoch=0,
                    directories=[dirs[b] for b in r],
                )
                for p, r in enumerate(replicas)
            ]
        )
        shrink = [
            make_record(
                MetadataRecordType.PARTITION_CHANGE,
                partition_id=p,
                topic_id=tid,
                isr=r[:2] if p % 2 else r[1:],
                **({} if p % 2 else {"leader": r[1]}),
            )
            for p, r in enumerate(replicas)
        ]
        expand = [
            make_record(MetadataRecordType.PARTITION_CHANGE, partition_id=p, topic_id=tid, isr=r)
            for p, r in enumerate(replicas)
        ]
        yield batch(shrink)
        yield batch(expand)
        for _ in range(8):
            yield batch([make_record(MetadataRecordType.NO_OP)])
        broker = 1 + topic % 3
        yield batch([make_record(MetadataRecordType.FENCE_BROKER, id=broker, epoch=broker)])
        yield batch([make_record(MetadataRecordType.UNFENCE_BROKER, id=broker, epoch=broker)])
        written += 41
        topic += 1


# ------------------------------------------------------------------------------------------------
# Batch reads


def _aggregate(df: Any) -> dict[str, Any]:
    from pyspark.sql import functions as F

    row = df.agg(
        F.count(F.lit(1)).alias("rows"),
        F.count("value").alias("values"),
        F.min("offset").alias("min_offset"),
        F.max("offset").alias("max_offset"),
        F.sum(F.length("value")).alias("value_bytes"),
        F.sum(F.length("payload")).alias("payload_chars"),
    ).collect()[0]
    return {k: (0 if row[k] is None else int(row[k])) for k in row.asDict()}


def _timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def _best_of(runs: int, fn: Any) -> dict[str, float]:
    """Seconds of the best and of the first of ``runs`` calls of ``fn``."""
    times = [_timed(fn)[0] for _ in range(max(runs, 1))]
    return {"seconds": min(times), "first_seconds": times[0], "runs": len(times)}


def _noop(df: Any) -> None:
    df.write.format("noop").mode("overwrite").save()


def _scan_columns(df: Any) -> int:
    """How many columns the scan under ``df`` reads (its output attributes; -1: not found)."""
    try:
        scans = df._jdf.queryExecution().executedPlan().collectLeaves()
        return int(max(scans.apply(i).output().size() for i in range(scans.size())))
    except Exception:  # a py4j or plan-shape surprise must not cost the run
        return -1


PREBUILT_SOURCE = "kraft_bench_prebuilt"


def register_prebuilt_source(spark: Any) -> None:
    """``spark.read.format(PREBUILT_SOURCE).option("log", DIR).option("rows", N)``: ``N`` rows of
    ``RECORD_SCHEMA``, one partition per read unit of ``DIR``, each yielding the first Arrow batch
    of its unit (decoded once) until it has its share of the rows."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    from kraft.spark.columns import RECORD_DDL

    class Part(InputPartition):
        def __init__(self, unit: Any, rows: int) -> None:
            self.unit = unit
            self.rows = rows

    class Reader(DataSourceReader):
        def __init__(self, options: dict[str, str]) -> None:
            self.options = options

        def partitions(self) -> list[Part]:
            units = plan_units(self.options["log"])
            rows = int(self.options["rows"])
            return [Part(u, rows // len(units) + (i < rows % len(units))) for i, u in enumerate(units)]

        def read(self, partition: InputPartition) -> Iterator[Any]:
            assert isinstance(partition, Part)
            batch = next(iter(read_unit(partition.unit)))
            done = 0
            while done < partition.rows:
                out = batch.slice(0, partition.rows - done)
                done += out.num_rows
                yield out

    class Prebuilt(DataSource):
        @classmethod
        def name(cls) -> str:
            return PREBUILT_SOURCE

        def schema(self) -> str:
            return RECORD_DDL

        def reader(self, schema: Any) -> Reader:
            return Reader(dict(self.options))

    spark.dataSource.register(Prebuilt)


def dump_log_rate(files: list[str], metadata: bool) -> dict[str, Any]:
    """``kraft dump-log --print-records`` (``--cluster-metadata-decoder``) over ``files``, stdout
    piped here; counts the record lines."""
    args = ["dump-log", "--print-records", *(["--cluster-metadata-decoder"] if metadata else []), *files]
    pattern = b"| offset: "
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            processes.kraft_command(*args), stdout=subprocess.PIPE, stderr=err, env=processes.child_env()
        )
        assert proc.stdout is not None
        lines = 0
        out_bytes = 0
        tail = b""
        while chunk := proc.stdout.read(1 << 20):
            out_bytes += len(chunk)
            buf = tail + chunk
            lines += buf.count(pattern)
            tail = buf[-(len(pattern) - 1) :]
        code = proc.wait()
        elapsed = time.perf_counter() - started
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"kraft dump-log exited {code}: {err.read().decode(errors='replace')[-2000:]}")
    return {"seconds": elapsed, "rows": lines, "rows_per_s": lines / elapsed, "output_bytes": out_bytes}


def in_process_rate(log_dir: Path) -> dict[str, Any]:
    units = plan_units(log_dir)
    started = time.perf_counter()
    rows = sum(b.num_rows for u in units for b in read_unit(u))
    elapsed = time.perf_counter() - started
    return {"seconds": elapsed, "rows": rows, "rows_per_s": rows / elapsed, "units": len(units)}


def bench_batch(
    spark: Any, name: str, log_dir: Path, info: dict[str, Any], work: Path, repeat: int
) -> dict[str, Any]:
    metadata = name == "metadata"
    rows = info["rows"]
    path = str(log_dir)
    out: dict[str, Any] = {
        "rows": rows,
        "bytes": info["bytes"],
        "segments": len(info["segments"]),
        "write_s": info["write_s"],
    }

    def kraft_df() -> Any:
        return spark.read.format("kraft").load(path)

    from kraft.spark.session import jvm_source_active

    out["implementation"] = "jvm" if jvm_source_active(spark) else "python"
    # Warm-up: the Python workers start and import kraft and pyarrow on a small read.
    _noop(spark.read.format("kraft").option("endingOffset", "1000").load(path))
    _noop(spark.read.format("kraft_python").option("endingOffset", "1000").load(path))
    df = kraft_df()
    out["partitions"] = df.rdd.getNumPartitions()
    out["scan_columns_for_select_offset"] = _scan_columns(df.select("offset"))
    progress(f"{name}: kraft source, noop write of {rows:,} rows ({out['partitions']} partition(s)) ...")
    timing = _best_of(repeat, lambda: _noop(kraft_df()))
    out["kraft"] = {
        **timing,
        "rows_per_s": rows / timing["seconds"],
        "first_rows_per_s": rows / timing["first_seconds"],
    }
    progress(f"{name}: kraft source, aggregate and count() ...")
    seconds, agg = _timed(lambda: _aggregate(kraft_df()))
    out["kraft"].update(agg_seconds=seconds, agg_rows_per_s=rows / seconds, agg=agg)
    seconds, counted = _timed(lambda: kraft_df().count())
    out["kraft"].update(count_seconds=seconds, count_rows_per_s=rows / seconds, count=counted)
    expected = {"rows": rows, "values": rows, "min_offset": 0, "max_offset": rows - 1}
    out["kraft"]["checked"] = counted == rows and all(agg[k] == v for k, v in expected.items())

    if out["implementation"] == "jvm":
        progress(f"{name}: the Python source (kraft_python), noop write ...")
        timing = _best_of(repeat, lambda: _noop(spark.read.format("kraft_python").load(path)))
        out["kraft_python"] = {
            **timing,
            "rows_per_s": rows / timing["seconds"],
            "first_rows_per_s": rows / timing["first_seconds"],
        }

    progress(f"{name}: writing the rows to Parquet with Spark ...")
    parquet = str(work / f"{name}.parquet")
    seconds, _ = _timed(lambda: kraft_df().write.mode("overwrite").parquet(parquet))
    out["parquet_write_s"] = seconds
    out["parquet_bytes"] = sum(p.stat().st_size for p in Path(parquet).glob("*.parquet"))
    _noop(spark.read.parquet(parquet).limit(1000))  # warm-up
    pq_df = spark.read.parquet(parquet)
    out["parquet_partitions"] = pq_df.rdd.getNumPartitions()
    progress(f"{name}: Parquet, noop write and aggregate ...")
    timing = _best_of(repeat, lambda: _noop(spark.read.parquet(parquet)))
    out["parquet"] = {
        **timing,
        "rows_per_s": rows / timing["seconds"],
        "first_rows_per_s": rows / timing["first_seconds"],
    }
    seconds, pq_agg = _timed(lambda: _aggregate(spark.read.parquet(parquet)))
    out["parquet"].update(agg_seconds=seconds, agg_rows_per_s=rows / seconds)
    out["parquet"]["same_aggregate"] = pq_agg == agg
    progress(f"{name}: a Python source without decoding (prebuilt batches), noop write ...")

    def prebuilt_df() -> Any:
        return spark.read.format(PREBUILT_SOURCE).option("log", path).option("rows", rows).load()

    _noop(prebuilt_df().limit(1000))  # warm-up
    timing = _best_of(repeat, lambda: _noop(prebuilt_df()))
    out["prebuilt"] = {
        **timing,
        "rows_per_s": rows / timing["seconds"],
        "first_rows_per_s": rows / timing["first_seconds"],
        "count": prebuilt_df().count(),
    }
    out["kraft_vs_prebuilt"] = out["kraft"]["rows_per_s"] / out["prebuilt"]["rows_per_s"]
    out["prebuilt_vs_parquet"] = out["prebuilt"]["rows_per_s"] / out["parquet"]["rows_per_s"]
    out["kraft_vs_parquet"] = out["kraft"]["rows_per_s"] / out["parquet"]["rows_per_s"]
    out["kraft_vs_parquet_first"] = out["kraft"]["first_rows_per_s"] / out["parquet"]["first_rows_per_s"]
    out["kraft_vs_parquet_agg"] = out["kraft"]["agg_rows_per_s"] / out["parquet"]["agg_rows_per_s"]
    if "kraft_python" in out:
        out["kraft_python_vs_parquet"] = out["kraft_python"]["rows_per_s"] / out["parquet"]["rows_per_s"]

    progress(f"{name}: kraft dump-log --print-records{' --cluster-metadata-decoder' if metadata else ''} ...")
    out["dump_log"] = dump_log_rate(info["segments"], metadata)
    out["dump_log"]["checked"] = out["dump_log"]["rows"] == rows
    out["kraft_vs_dump_log"] = out["kraft"]["rows_per_s"] / out["dump_log"]["rows_per_s"]

    progress(f"{name}: read_unit in this process ...")
    out["in_process"] = in_process_rate(log_dir)
    out["in_process"]["checked"] = out["in_process"]["rows"] == rows
    out["kraft_vs_in_process"] = out["kraft"]["rows_per_s"] / out["in_process"]["rows_per_s"]
    return out


# Functions whose cumulative time the profile reports, by (file suffix, function name).
PROFILE_PARTS = {
    "batch checks (_batch_problem: header, CRC, offsets, epochs)": ("spark/arrow_log.py", "_batch_problem"),
    "  of which batch_crc_valid (CRC-32C)": ("records/batch.py", "batch_crc_valid"),
    "plain data batches (_Columns.add_plain)": ("spark/arrow_log.py", "add_plain"),
    "  of which the C decoder (ColumnBuilder.add_batch)": (
        "~",
        "<method 'add_batch' of 'kraft.records._native_decode.ColumnBuilder' objects>",
    ),
    "decode_batch (kraft.records.batch, the Python path: header, records)": (
        "records/batch.py",
        "decode_batch",
    ),
    "payload decoding (_PayloadDecoder.metadata)": ("spark/arrow_log.py", "metadata"),
    "  of which decode_record": ("metadata/records.py", "decode_record"),
    "  of which record_to_json": ("metadata/records.py", "record_to_json"),
    "  of which json.dumps": ("spark/arrow_log.py", "_compact"),
    "control records (_Columns.add_control)": ("spark/arrow_log.py", "add_control"),
    "column lists (_Columns.add_data)": ("spark/arrow_log.py", "add_data"),
    "Arrow arrays (_Columns.take)": ("spark/arrow_log.py", "take"),
}


def profile_read(log_dir: Path, rows: int, top: int) -> dict[str, Any]:
    """cProfile of ``read_unit`` over the first ``rows`` rows of the log."""
    rf = RowFilter(end=rows)
    units = plan_units(log_dir, row_filter=rf)
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    got = sum(b.num_rows for u in units for b in read_unit(u, rf))
    profiler.disable()
    wall = time.perf_counter() - started
    stats = pstats.Stats(profiler)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_cc, _nc, tt, _ct, _callers) in entries.values())
    src = str(Path(__file__).resolve().parent.parent / "src") + os.sep

    def where(key: tuple[str, int, str]) -> str:
        file, line, func = key
        return f"{file.replace(src, '')}:{line}({func})" if line else func

    ordered = sorted(entries.items(), key=lambda kv: kv[1][2], reverse=True)
    top_list = [
        {
            "function": where(key),
            "calls": nc,
            "own_s": tt,
            "own_share": tt / total,
            "cumulative_s": ct,
            "cumulative_share": ct / total,
        }
        for key, (_cc, nc, tt, ct, _callers) in ordered[:top]
    ]
    parts = {}
    for label, (suffix, func) in PROFILE_PARTS.items():
        ct = sum(v[3] for k, v in entries.items() if k[0].endswith(suffix) and k[2] == func)
        parts[label] = {"cumulative_s": ct, "share": ct / total}
    return {
        "rows": got,
        "profiled_s": total,
        "wall_s": wall,
        "rows_per_s_under_profiler": got / wall,
        "top": top_list,
        "parts": parts,
    }


# ------------------------------------------------------------------------------------------------
# Streaming latency


class Quorum:
    """Three ``kraft test-raft-server`` voters on loopback."""

    def __init__(self, root: Path, rate: float) -> None:
        self.spec = cluster_cli.plan_new_cluster(
            root, 3, 0, dict(QUORUM_OVERRIDES), cluster_id=uuid_to_base64(random_uuid())
        )
        root.mkdir(parents=True, exist_ok=True)
        self.rate = rate
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def bootstrap(self) -> str:
        return ",".join(str(a) for a in self.spec.bootstrap())

    def start_all(self) -> None:
        for node in self.spec.nodes:
            Path(node.node_dir).mkdir(parents=True, exist_ok=True)
            node.config_path.write_text(cluster_cli.node_properties(self.spec, node))
            cluster_cli.format_node(self.spec, node)
        for node in self.spec.nodes:
            args = [
                "test-raft-server",
                "--config",
                str(node.config_path),
                "--throughput",
                str(self.rate),
                "--record-size",
                str(RECORD_SIZE),
                "--json",
                "--report-interval-s",
                "5",
                "--log-level",
                "WARNING",
            ]
            self.procs[node.id] = processes.start_kraft(args, node.server_log)

    def wait_for_commits(self, timeout_s: float = 60.0) -> tuple[int, int]:
        """(leader, high watermark) once the leader has committed some of its records."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(AdminError):
                info = AdminClient(
                    self.spec.bootstrap(), timeout_ms=1_000, request_timeout_ms=500
                ).describe_quorum()
                if info.high_watermark > 100:
                    return info.leader_id, info.high_watermark
            time.sleep(0.1)
        raise RuntimeError(
            f"the quorum committed nothing within {timeout_s} s; see {self.spec.nodes[0].server_log}"
        )

    def events(self, node_id: int) -> list[dict[str, Any]]:
        path = self.spec.node(node_id).server_log
        out = []
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("{"):
                    with contextlib.suppress(ValueError):
                        out.append(json.loads(line))
        return out

    def stop(self) -> None:
        """SIGTERM to all (each prints its total), SIGKILL after 20 s."""
        live = {p.pid: p for p in self.procs.values() if p.poll() is None}
        if live:
            processes.stop_processes(sorted(live), timeout_s=20, children=live)

    def leader_total(self) -> dict[str, Any] | None:
        totals = [
            e
            for n in self.spec.nodes
            for e in self.events(n.id)
            if e.get("type") == "total" and e.get("records")
        ]
        return max(totals, key=lambda e: e["records"]) if totals else None


def bench_stream(spark: Any, root: Path, rate: float, warmup_s: float, seconds: float) -> dict[str, Any]:
    from pyspark.sql import functions as F

    quorum = Quorum(root / "quorum", rate)
    arrivals: list[tuple[int, list[tuple[int, int, bool]]]] = []  # (arrival µs, [(offset, ts µs, control)])

    # Stopping a query while foreachBatch is inside a py4j call fails the stream thread (Spark
    # pattern-matches the Py4J error text; here that overflowed the JVM's stack): before stop(),
    # the sink stops reading and the stop waits for a batch that did nothing.
    state = {"collect": True, "idle": 0}

    def sink(batch_df: Any, _batch_id: int) -> None:
        if not state["collect"]:
            state["idle"] += 1
            return
        got = batch_df.select("offset", F.unix_micros("timestamp").alias("ts"), "is_control").collect()
        arrivals.append((time.time_ns() // 1000, [(r[0], r[1], r[2]) for r in got]))

    query = None
    out: dict[str, Any] = {"rate": rate, "warmup_s": warmup_s, "seconds": seconds}
    try:
        progress(f"stream: starting 3 test-raft-server voters appending {rate:,.0f} records/s ...")
        quorum.start_all()
        leader, hw = quorum.wait_for_commits()
        progress(f"stream: leader {leader}, high watermark {hw}; starting the query from latest ...")
        query = (
            spark.readStream.format("kraft")
            .option("bootstrap.controllers", quorum.bootstrap)
            .option("startingOffset", "latest")
            .load()
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(root / "checkpoint"))
            .start()
        )
        deadline = time.monotonic() + 120
        while not any(rows for _, rows in arrivals):
            if time.monotonic() > deadline:
                raise RuntimeError("the streaming query delivered nothing within 120 s")
            if query.exception() is not None:
                raise RuntimeError(f"the streaming query failed: {query.exception()}")
            time.sleep(0.05)
        window_start = time.time_ns() // 1000 + int(warmup_s * 1e6)
        progress(f"stream: first rows arrived; {warmup_s:.0f} s warm-up, then {seconds:.0f} s measured ...")
        time.sleep(warmup_s + seconds)
        window_end = time.time_ns() // 1000
        if query.exception() is not None:
            raise RuntimeError(f"the streaming query failed: {query.exception()}")
        batch_ms = sorted(
            float(p["durationMs"]["triggerExecution"])
            for p in query.recentProgress
            if p["numInputRows"] and p["timestamp"]
        )
        state["collect"] = False
        idle_deadline = time.monotonic() + 30
        while not state["idle"] and time.monotonic() < idle_deadline and query.exception() is None:
            time.sleep(0.02)
        query.stop()
        query = None
        progress("stream: query stopped; stopping the quorum ...")
    finally:
        if query is not None:
            with contextlib.suppress(Exception):
                query.stop()
        quorum.stop()
    total = quorum.leader_total()
    in_window = [(t, rows) for t, rows in arrivals if window_start <= t <= window_end and rows]
    latencies = sorted((t - ts) / 1000 for t, rows in in_window for _o, ts, control in rows if not control)
    offsets = [o for _t, rows in arrivals for o, _ts, _c in rows]
    out.update(
        micro_batches=len(in_window),
        rows=len(latencies),
        rows_per_batch_p50=statistics.median(len(r) for _t, r in in_window) if in_window else 0,
        latency_ms={
            "p50": percentile(latencies, 50),
            "p99": percentile(latencies, 99),
            "max": latencies[-1] if latencies else 0.0,
        },
        trigger_execution_ms={
            "p50": percentile(batch_ms, 50),
            "max": batch_ms[-1] if batch_ms else 0.0,
            "batches": len(batch_ms),
        },
        offsets_contiguous=bool(offsets) and offsets == list(range(offsets[0], offsets[0] + len(offsets))),
        commit=None
        if total is None
        else {
            "records": total["records"],
            "duration_s": total["duration_s"],
            "latency_ms": total["latency_ms"],
        },
    )
    if total is not None and total["latency_ms"]["p50"]:
        out["latency_vs_commit_p50"] = out["latency_ms"]["p50"] / total["latency_ms"]["p50"]
    return out


# ------------------------------------------------------------------------------------------------
# Output


def _rate(x: float) -> str:
    return f"{x:,.0f} rows/s"


def print_batch(name: str, r: dict[str, Any]) -> None:
    k, p, d, i = r["kraft"], r["parquet"], r["dump_log"], r["in_process"]
    print(
        f"{name} log: {r['rows']:,} records, {r['bytes'] / 1e6:,.1f} MB in {r['segments']} segment(s) "
        f"(written in {r['write_s']:.1f} s); {r['partitions']} Spark partition(s) (Parquet: "
        f"{r['parquet_partitions']})"
    )
    print(
        f"  parquet (the baseline), noop write:   {_rate(p['rows_per_s']):>16}  (best of {p['runs']}: "
        f"{p['seconds']:.2f} s; first {_rate(p['first_rows_per_s'])})"
    )
    print(
        f"  kraft source ({r['implementation']}), noop write:       {_rate(k['rows_per_s']):>16}  "
        f"(best of {k['runs']}: {k['seconds']:.2f} s; first {_rate(k['first_rows_per_s'])})"
    )
    if "kraft_python" in r:
        kp = r["kraft_python"]
        print(
            f"  kraft_python (the Python source), noop write: {_rate(kp['rows_per_s']):>16}  (best of "
            f"{kp['runs']}: {kp['seconds']:.2f} s); {r['kraft_python_vs_parquet']:.3f} of parquet"
        )
    print(
        f"  kraft / parquet: {r['kraft_vs_parquet']:.3f} (goal >= 0.5); first runs: "
        f"{r['kraft_vs_parquet_first']:.3f}"
    )
    b = r["prebuilt"]
    print(
        f"  no decoding (prebuilt batches, the ceiling of a Python source): {_rate(b['rows_per_s'])} "
        f"(best of {b['runs']}: {b['seconds']:.2f} s), {r['prebuilt_vs_parquet']:.3f} of parquet; "
        f"kraft {r['kraft_vs_prebuilt']:.3f} of it"
    )
    print(
        f"  aggregate: parquet {_rate(p['agg_rows_per_s'])}, kraft {_rate(k['agg_rows_per_s'])} "
        f"({r['kraft_vs_parquet_agg']:.3f}); kraft count() {_rate(k['count_rows_per_s'])}"
    )
    print(
        f"  kraft dump-log{' --cluster-metadata-decoder' if name == 'metadata' else ' --print-records'} "
        f"(1 process): {_rate(d['rows_per_s'])} ({d['seconds']:.2f} s); kraft source "
        f"{r['kraft_vs_dump_log']:.2f}x of it"
    )
    print(
        f"  read_unit in process (1 core, no Spark): {_rate(i['rows_per_s'])}; kraft source "
        f"{r['kraft_vs_in_process']:.2f}x of it"
    )
    print(
        f"  checks: rows and offsets {k['checked']}, same aggregate from Parquet {p['same_aggregate']}, "
        f"dump-log rows {d['checked']}, in-process rows {i['checked']}; the scan of select(offset) "
        f"reads {r['scan_columns_for_select_offset']} of 14 columns"
    )


def print_profile(name: str, prof: dict[str, Any]) -> None:
    print(
        f"profile of read_unit, {name} log, first {prof['rows']:,} rows "
        f"({prof['profiled_s']:.2f} s profiled, {_rate(prof['rows_per_s_under_profiler'])} under cProfile):"
    )
    print("    own%   cum%     calls  function")
    for e in prof["top"]:
        own, cum = e["own_share"] * 100, e["cumulative_share"] * 100
        print(f"  {own:6.1f} {cum:6.1f} {e['calls']:>9,}  {e['function']}")
    print("  cumulative:")
    for label, part in prof["parts"].items():
        print(f"  {part['share'] * 100:6.1f}%  {label}")


def print_stream(s: dict[str, Any]) -> None:
    c = s["commit"]
    print(
        f"streaming: 3 test-raft-server voters at {s['rate']:,.0f} records/s, foreachBatch, "
        f"{s['seconds']:.0f} s after {s['warmup_s']:.0f} s warm-up"
    )
    if c is not None:
        print(
            f"  commit latency on the leader (the baseline): p50 {c['latency_ms']['p50']:.1f} ms, "
            f"p99 {c['latency_ms']['p99']:.1f} ms, max {c['latency_ms']['max']:.1f} ms "
            f"({c['records']:,} records over {c['duration_s']:.0f} s)"
        )
    ratio = f" ({s['latency_vs_commit_p50']:.0f}x the commit p50)" if "latency_vs_commit_p50" in s else ""
    lat = s["latency_ms"]
    print(
        f"  append to foreachBatch row: p50 {lat['p50']:.0f} ms, p99 {lat['p99']:.0f} ms, "
        f"max {lat['max']:.0f} ms{ratio}"
    )
    t = s["trigger_execution_ms"]
    print(
        f"  {s['rows']:,} rows in {s['micro_batches']} micro-batches (median {s['rows_per_batch_p50']:.0f} "
        f"rows); triggerExecution p50 {t['p50']:.0f} ms, max {t['max']:.0f} ms; offsets contiguous "
        f"{s['offsets_contiguous']}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=5_000_000, help="records of the data log")
    ap.add_argument("--records-per-batch", type=int, default=50, help="records per batch of the data log")
    ap.add_argument("--metadata-records", type=int, default=200_000, help="records of the metadata log")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument(
        "--repeat", type=int, default=2, help="noop reads of each source (kraft, Parquet); the best counts"
    )
    ap.add_argument("--profile-rows", type=int, default=200_000, help="rows read under cProfile")
    ap.add_argument("--profile-top", type=int, default=12)
    ap.add_argument("--stream-rate", type=float, default=1000.0, help="records/s the leader appends")
    ap.add_argument("--stream-seconds", type=float, default=30.0, help="measured streaming window")
    ap.add_argument("--stream-warmup-s", type=float, default=10.0)
    ap.add_argument("--skip-batch", action="store_true")
    ap.add_argument("--skip-stream", action="store_true")
    ap.add_argument(
        "--quick", action="store_true", help="200,000 + 50,000 records, 10 s of streaming after 5 s"
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--workdir", type=Path, help="where the logs, Parquet files and nodes go (default: a temp dir)"
    )
    args = ap.parse_args()
    if args.quick:
        args.records, args.metadata_records = 200_000, 50_000
        args.profile_rows = min(args.profile_rows, 100_000)
        args.stream_seconds, args.stream_warmup_s = 10.0, 5.0
    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "loadavg_start": os.getloadavg(),
        },
        "decoder": "C" if arrow_log.USE_NATIVE else "pure Python",
    }
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kraft-bench-spark-", dir=args.workdir) as tmp:
        root = Path(tmp)
        if not args.skip_batch:
            progress(f"writing a data log of {args.records:,} records ...")
            data_info = _write(root / "data" / "metadata", data_batches(args.records, args.records_per_batch))
            progress(f"writing a metadata log of {args.metadata_records:,} records ...")
            meta_info = _write(root / "meta" / "metadata", metadata_batches(args.metadata_records))
        from kraft.spark.session import kraft_session

        progress(f"starting Spark ({args.master}) ...")
        session_s, spark = _timed(
            lambda: kraft_session(
                args.master, "kraft-bench-spark-source", {"spark.sql.shuffle.partitions": "4"}
            )
        )
        spark.sparkContext.setLogLevel("ERROR")
        register_prebuilt_source(spark)
        report["spark"] = {"master": args.master, "session_start_s": session_s, "version": spark.version}
        try:
            if not args.skip_batch:
                report["data"] = bench_batch(
                    spark, "data", root / "data" / "metadata", data_info, root, args.repeat
                )
                report["metadata"] = bench_batch(
                    spark, "metadata", root / "meta" / "metadata", meta_info, root, args.repeat
                )
                progress("profiling read_unit ...")
                report["profile_data"] = profile_read(
                    root / "data" / "metadata", args.profile_rows, args.profile_top
                )
                report["profile_metadata"] = profile_read(
                    root / "meta" / "metadata", args.profile_rows, args.profile_top
                )
            if not args.skip_stream:
                report["stream"] = bench_stream(
                    spark, root / "stream", args.stream_rate, args.stream_warmup_s, args.stream_seconds
                )
        finally:
            spark.stop()
    report["wall_s"] = time.monotonic() - STARTED
    report["machine"]["loadavg_end"] = os.getloadavg()
    progress(f"done in {report['wall_s']:.0f} s")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"machine: {report['machine']['cpus']} CPUs, Python {report['machine']['python']}; Spark "
            f"{report['spark']['version']} {args.master} (session start {session_s:.1f} s); record "
            f"decoder: {report['decoder']}; load average {report['machine']['loadavg_start'][0]:.1f} at "
            f"the start, {report['machine']['loadavg_end'][0]:.1f} at the end"
        )
        if "data" in report:
            print_batch("data", report["data"])
            print_batch("metadata", report["metadata"])
            print_profile("data", report["profile_data"])
            print_profile("metadata", report["profile_metadata"])
        if "stream" in report:
            print_stream(report["stream"])
        print(f"total {report['wall_s']:.0f} s")
    checks = []
    for name in ("data", "metadata"):
        if name in report:
            r = report[name]
            checks += [r["kraft"]["checked"], r["parquet"]["same_aggregate"], r["dump_log"]["checked"]]
            checks.append(r["prebuilt"]["count"] == r["rows"])
            checks.append(r["in_process"]["checked"])
    if "stream" in report:
        checks += [report["stream"]["offsets_contiguous"], report["stream"]["rows"] > 0]
    return 0 if all(checks) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
