"""``kraft consumer-perf-test``: Kafka's ``kafka-consumer-perf-test.sh`` against a kraft cluster.

Reads ``--messages`` records of ``--topic`` from the beginning (``--from-latest``: from the end),
every partition assigned (kraft has no consumer groups yet: ``--group`` is accepted and unused, and
the rebalance time is 0), and prints Kafka's header and line::

    start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
        rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec      (one line)
    2026-11-28 10:00:00:000, 2026-11-28 10:00:02:113, 9.5367, 4.5134, 100000, 47326.0294,
        0, 2113, 4.5134, 47326.0294                                          (one line)

It stops when ``--messages`` records were read or when no record came for ``--timeout`` ms (Kafka's
default 10 s; then it warns, as Kafka does). ``--show-detailed-stats`` prints one line per
``--reporting-interval`` instead. Consumer properties: ``--command-config`` (or the older
``--consumer.config``) and ``--consumer-property``-style overrides are not needed beyond the
security properties and ``client.id``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TextIO

from kraft.cli.client_properties import config_file, merged_properties, security_of
from kraft.cli.common import UsageError, bootstrap_arg, one_line, run_tool

PROG = "kraft consumer-perf-test"
HEADER = (
    "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
    "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)
DETAILED_HEADER = (
    "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
    "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)
_MB = 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Measure consume throughput (Kafka's kafka-consumer-perf-test).",
    )
    parser.add_argument("--bootstrap-server", required=True, help="HOST:PORT[,...] of brokers")
    parser.add_argument("--topic", required=True, help="the topic to read")
    parser.add_argument("--messages", type=int, required=True, help="how many records to read")
    parser.add_argument(
        "--timeout", type=int, default=10_000, help="ms without a record before giving up (default 10000)"
    )
    parser.add_argument("--from-latest", action="store_true", help="start at the end, not the beginning")
    parser.add_argument("--group", help="accepted for Kafka's scripts; kraft has no groups yet (unused)")
    parser.add_argument("--fetch-size", type=int, default=1_048_576, help="bytes per partition per fetch")
    parser.add_argument("--show-detailed-stats", action="store_true", help="a line per reporting interval")
    parser.add_argument("--reporting-interval", type=int, default=5_000, help="ms (default 5000)")
    parser.add_argument("--hide-header", action="store_true", help="no header line")
    parser.add_argument("--date-format", default="%Y-%m-%d %H:%M:%S:%f", help=argparse.SUPPRESS)
    parser.add_argument("--command-config", metavar="FILE", help="client properties file (security, ...)")
    parser.add_argument("--consumer.config", dest="consumer_config", metavar="FILE", help=argparse.SUPPRESS)
    return parser


def _stamp(epoch_ms: float) -> str:
    # Kafka's default "yyyy-MM-dd HH:mm:ss:SSS".
    return datetime.fromtimestamp(epoch_ms / 1000).strftime("%Y-%m-%d %H:%M:%S:%f")[:-3]


def _line(start: str, end: str, nbytes: int, records: int, elapsed_ms: float) -> str:
    seconds = max(elapsed_ms, 1.0) / 1000
    mb = nbytes / _MB
    return (
        f"{start}, {end}, {mb:.4f}, {mb / seconds:.4f}, {records}, {records / seconds:.4f}, "
        f"0, {elapsed_ms:.0f}, {mb / seconds:.4f}, {records / seconds:.4f}"
    )


def _run(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kraft.client.connection import AdminError
    from kraft.client.consumer import Consumer, OffsetReset
    from kraft.client.data import DataError, TopicPartition

    if ns.messages < 0 or ns.timeout <= 0 or ns.fetch_size <= 0 or ns.reporting_interval <= 0:
        raise UsageError("--messages must not be negative; --timeout, --fetch-size, --reporting-interval > 0")
    path = config_file(ns.command_config, ns.consumer_config, "--consumer.config", err)
    props = merged_properties(path, None)
    bootstrap = bootstrap_arg(ns.bootstrap_server)
    consumer = Consumer(
        bootstrap,
        client_id=props.get("client.id", "perf-consumer-client"),
        max_partition_fetch_bytes=ns.fetch_size,
        auto_offset_reset=OffsetReset.LATEST if ns.from_latest else OffsetReset.EARLIEST,
        security=security_of(props),
    )
    if not ns.hide_header:
        print(DETAILED_HEADER if ns.show_detailed_stats else HEADER, file=out)
    records = nbytes = 0
    start_wall = time.time() * 1000
    start = last_record = window_start = time.monotonic() * 1000
    window_records = window_bytes = 0
    try:
        with consumer:
            topic = consumer.topic(ns.topic)
            consumer.assign([TopicPartition(ns.topic, p) for p in topic.partition_ids()])
            while records < ns.messages:
                now = time.monotonic() * 1000
                if now - last_record > ns.timeout:
                    print(
                        f"WARNING: Exiting before consuming the expected number of messages: timeout "
                        f"({ns.timeout} ms) exceeded. You can use the --timeout option to increase the "
                        "timeout.",
                        file=err,
                    )
                    break
                for record in consumer.poll(min(100, ns.timeout)):
                    size = len(record.value or b"") + len(record.key or b"")
                    records, nbytes = records + 1, nbytes + size
                    window_records, window_bytes = window_records + 1, window_bytes + size
                    last_record = time.monotonic() * 1000
                    if records >= ns.messages:
                        break
                now = time.monotonic() * 1000
                if ns.show_detailed_stats and now - window_start >= ns.reporting_interval:
                    stamp = _stamp(start_wall + (now - start))
                    # Kafka's detailed line: the time, then thread id 0, then the window's figures.
                    line = _line(stamp, "0", window_bytes, window_records, now - window_start)
                    print(line, file=out, flush=True)
                    window_start, window_records, window_bytes = now, 0, 0
    except (AdminError, DataError, ValueError) as e:
        print(f"ERROR {one_line(e)}", file=err)
        return 1
    except KeyboardInterrupt:
        return 130
    end = time.monotonic() * 1000
    if not ns.show_detailed_stats:
        print(
            _line(_stamp(start_wall), _stamp(start_wall + end - start), nbytes, records, end - start),
            file=out,
        )
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, *, err: TextIO | None = None) -> int:
    """``kraft consumer-perf-test``."""
    return run_tool(PROG, build_parser(), argv, out, err, _run)


if __name__ == "__main__":
    sys.exit(main())
