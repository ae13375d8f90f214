"""``kraft analyze``: a cluster's history from its metadata logs, as Parquet tables, an HTML report
and PNG plots (on Spark; ``kraft[spark]``).

    kraft analyze --log-dir DIR --out OUT [--master URL] [--bucket-ms MS] [--no-progress]
    kraft analyze --bootstrap-controller HOST:PORT --out OUT [--master URL] ...

``--log-dir`` takes one node's metadata log dir or a ``kraft cluster`` data dir (``cluster.json``,
``node-*/metadata``): then every node's log is read (the ``node`` column tells them apart), the
committed prefix is judged by majority among the voters, and the longest committed history is the
one the cluster tables describe. ``--bootstrap-controller`` reads the live quorum's committed log
through ``spark.readStream.format("kraft")`` (``kraft.spark.stream``), ``trigger(availableNow=True)``
into a temporary Parquet table first.

Writes ``OUT/tables/{records,leader_changes,quorum_timeline,partition_changes,brokers_timeline}``
(Parquet), ``OUT/report.html``, ``OUT/*.png`` and ``OUT/analysis.json``, prints a summary, and shows
progress stage by stage on stderr. Exit status 0, 1 when the logs cannot be read, 2 on bad
arguments. pyspark is imported only once the arguments are good, so ``kraft --help`` never needs it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from kraft.cli.common import parse_args, streams


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kraft analyze",
        description="Rebuild a KRaft cluster's history from its metadata logs on Spark: Parquet "
        "tables, an HTML report and PNG plots.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--log-dir",
        metavar="DIR",
        help="a node's metadata log dir, or a `kraft cluster` data dir (cluster.json, node-*/metadata)",
    )
    source.add_argument(
        "--bootstrap-controller",
        metavar="HOST:PORT",
        help="HOST:PORT[,...] of controllers: read the live quorum's committed log (streaming source)",
    )
    parser.add_argument("--out", required=True, metavar="OUT", help="output directory")
    parser.add_argument("--master", default=None, metavar="URL", help="Spark master URL (default local[*])")
    parser.add_argument(
        "--bucket-ms",
        type=int,
        default=1000,
        metavar="MS",
        help="quorum_timeline bucket width (default: %(default)s)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = streams(out, err)
    ns = parse_args(build_parser(), argv)
    if isinstance(ns, int):
        return ns
    if ns.bucket_ms <= 0:
        print(f"kraft analyze: --bucket-ms must be positive, got {ns.bucket_ms}", file=err)
        return 2
    if ns.log_dir is not None and not Path(ns.log_dir).is_dir():
        print(f"kraft analyze: {ns.log_dir} is not a directory", file=err)
        return 2
    try:
        from kraft.spark import analyze as pipeline
    except ModuleNotFoundError as e:
        print(f"kraft analyze: needs kraft[spark] ({e.name} is missing)", file=err)
        return 2
    source = None
    if ns.log_dir is not None:
        try:
            source = pipeline.locate_logs(ns.log_dir)
        except (FileNotFoundError, ValueError) as e:
            print(f"kraft analyze: {e}", file=err)
            return 2
    else:
        from kraft.client.connection import AdminError, parse_bootstrap

        try:
            parse_bootstrap(ns.bootstrap_controller)
        except AdminError as e:
            print(f"kraft analyze: --bootstrap-controller: {e}", file=err)
            return 2
    return _run(ns, source, out, err)


def read_quorum(spark: Any, bootstrap: str, scratch: Path) -> Any:
    """The quorum's committed log, read by ``spark.readStream.format("kraft")`` with
    ``trigger(availableNow=True)`` into Parquet under ``scratch`` (everything below the high
    watermark when the query starts), then read back as a records table."""
    from kraft.spark.columns import RECORD_DDL

    stream = spark.readStream.format("kraft").option("bootstrap.controllers", bootstrap).load()
    query = (
        stream.writeStream.format("parquet")
        .option("path", str(scratch / "records"))
        .option("checkpointLocation", str(scratch / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return spark.read.schema(RECORD_DDL).parquet(str(scratch / "records"))


def _run(ns: argparse.Namespace, source: Any, out: TextIO, err: TextIO) -> int:
    import shutil

    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession

    from kraft.common.errors import KraftError
    from kraft.spark import analyze as pipeline
    from kraft.spark.report import write_report
    from kraft.spark.session import kraft_session

    out_dir = Path(ns.out)
    existing = SparkSession.getActiveSession()
    spark = kraft_session(ns.master, "kraft-analyze")
    if existing is None:
        spark.sparkContext.setLogLevel("ERROR")
    streamed = source is None
    stages = (STREAM_STAGE, *pipeline.STAGES) if streamed else pipeline.STAGES
    progress = pipeline.Progress(stages, enabled=False if ns.no_progress else None, file=err)
    scratch = out_dir / "tables" / "_stream"
    try:
        common: dict[str, Any] = {"bucket_ms": ns.bucket_ms, "progress": progress, "report": write_report}
        if source is not None:
            records = pipeline.read_logs(spark, source)
            analysis = pipeline.analyze(
                spark,
                records,
                out_dir,
                source=str(source.root),
                cluster=source.cluster,
                verified=source.cluster,
                voters=source.voters,
                notes=source.skipped,
                **common,
            )
        else:
            progress.start(STREAM_STAGE)
            shutil.rmtree(scratch, ignore_errors=True)
            records = read_quorum(spark, ns.bootstrap_controller, scratch)
            progress.done()
            analysis = pipeline.analyze(
                spark,
                records,
                out_dir,
                source=pipeline.QUORUM_SOURCE_PREFIX + ns.bootstrap_controller,
                cluster=False,
                verified=False,
                all_committed=True,
                **common,
            )
    except (KraftError, OSError, ValueError, PySparkException) as e:
        print(f"kraft analyze: {e}", file=err)
        return 1
    finally:
        progress.close()
        if streamed:
            shutil.rmtree(scratch, ignore_errors=True)
        if existing is None:
            spark.stop()
    _print_summary(analysis, out)
    return 0


STREAM_STAGE = "read quorum"


def _print_summary(analysis: Any, out: TextIO) -> None:
    from kraft.spark.analyze import describe_kind

    a = analysis
    print(f"kraft analyze: {a.source}", file=out)
    reference = "the quorum's" if a.reference is None else f"node {a.reference}'s"
    print(f"  {describe_kind(a)}; the history is {reference} log", file=out)
    print(f"  committed end offset {a.committed_end}, {a.committed_by}", file=out)
    for b in a.logs:
        role = "voter" if b.voter else ("observer" if b.voter is not None else "log")
        name = "quorum" if b.node is None else f"node {b.node} {role}"
        print(
            f"  {name}: {b.records} records, offsets {b.log_start}..{b.log_end}, "
            f"committed end {b.committed_end}",
            file=out,
        )
    for name, rows in a.counts.items():
        print(f"  tables/{name}: {rows} rows", file=out)
    for note in a.notes:
        print(f"  note: {note}", file=out)
    print(f"  report: {a.out_dir / 'report.html'} ({a.wall_s:.1f} s)", file=out)
