"""``kraft producer-perf-test``: Kafka's ``kafka-producer-perf-test.sh`` against a kraft cluster.

Sends ``--num-records`` records of ``--record-size`` bytes (random upper-case letters, as Kafka's
tool) to ``--topic``, at most ``--throughput`` records/s (-1: as fast as it goes), and prints Kafka's
lines: one per 5 s window, then the summary with latency percentiles::

    50000 records sent, 9997.0 records/sec (0.95 MB/sec), 3.1 ms avg latency, 48.0 ms max latency.
    100000 records sent, 9998.400160 records/sec (0.95 MB/sec), 3.05 ms avg latency, 48.00 ms
    max latency, 2 ms 50th, 6 ms 95th, 11 ms 99th, 40 ms 99.9th.      (one line)

Producer properties come from ``--producer-props k=v ...`` and ``--command-config`` (or the older
``--producer.config``): ``bootstrap.servers`` (or ``--bootstrap-server``), ``acks`` (default all),
``batch.size``, ``linger.ms``, ``compression.type``, ``client.id`` and the security properties.

How it measures: kraft's producer sends a batch and waits for its acknowledgement, so the records
are sent in batches of ``batch.size`` bytes (at least one record), and a record's latency is the time
from its batch being built to that batch's acknowledgement (Kafka's: from ``send()`` to the
callback). Differs from Kafka: no ``--payload-file``, ``--transactional-id`` or ``--print-metrics``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from kraft.cli.client_properties import config_file, merged_properties, security_of
from kraft.cli.common import UsageError, bootstrap_arg, one_line, run_tool

PROG = "kraft producer-perf-test"
REPORTING_INTERVAL_MS = 5_000  # Kafka's ProducerPerformance prints a window every 5 s


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Measure produce throughput and latency with records of a fixed size "
        "(Kafka's kafka-producer-perf-test).",
    )
    parser.add_argument("--topic", required=True, help="the topic to produce to")
    parser.add_argument("--num-records", type=int, required=True, help="how many records to send")
    parser.add_argument("--record-size", type=int, required=True, help="bytes per record value")
    parser.add_argument(
        "--throughput",
        type=float,
        required=True,
        help="at most this many records/s; -1: no limit",
    )
    parser.add_argument(
        "--producer-props", nargs="+", metavar="PROP", help="producer properties as key=value"
    )
    parser.add_argument("--bootstrap-server", help="HOST:PORT[,...] (or bootstrap.servers in the properties)")
    parser.add_argument("--command-config", metavar="FILE", help="client properties file (security, ...)")
    parser.add_argument("--producer.config", dest="producer_config", metavar="FILE", help=argparse.SUPPRESS)
    return parser


@dataclass
class Stats:
    """Kafka's ``ProducerPerformance.Stats``: totals, the current window, and every latency (ms)
    for the percentiles."""

    start_ms: float
    now: Callable[[], float]
    records: int = 0
    bytes: int = 0
    total_latency: float = 0.0
    max_latency: float = 0.0
    latencies: list[float] = field(default_factory=list)
    window_start_ms: float = 0.0
    window_records: int = 0
    window_bytes: int = 0
    window_latency: float = 0.0
    window_max: float = 0.0

    def __post_init__(self) -> None:
        self.window_start_ms = self.start_ms

    def record(self, latency_ms: float, size: int, count: int) -> None:
        self.records += count
        self.bytes += size * count
        self.total_latency += latency_ms * count
        self.max_latency = max(self.max_latency, latency_ms)
        self.latencies.extend([latency_ms] * count)
        self.window_records += count
        self.window_bytes += size * count
        self.window_latency += latency_ms * count
        self.window_max = max(self.window_max, latency_ms)

    def maybe_print_window(self, out: TextIO) -> None:
        now = self.now()
        if now - self.window_start_ms < REPORTING_INTERVAL_MS or not self.window_records:
            return
        elapsed_s = (now - self.window_start_ms) / 1000
        print(
            f"{self.window_records} records sent, {self.window_records / elapsed_s:.1f} records/sec "
            f"({self.window_bytes / elapsed_s / (1024 * 1024):.2f} MB/sec), "
            f"{self.window_latency / self.window_records:.1f} ms avg latency, "
            f"{self.window_max:.1f} ms max latency.",
            file=out,
            flush=True,
        )
        self.window_start_ms = now
        self.window_records = self.window_bytes = 0
        self.window_latency = self.window_max = 0.0

    def summary(self) -> str:
        elapsed_s = max(self.now() - self.start_ms, 1e-3) / 1000
        ordered = sorted(self.latencies)

        def pct(p: float) -> int:
            return int(ordered[min(len(ordered) - 1, int(len(ordered) * p))]) if ordered else 0

        avg = self.total_latency / self.records if self.records else 0.0
        return (
            f"{self.records} records sent, {self.records / elapsed_s:f} records/sec "
            f"({self.bytes / elapsed_s / (1024 * 1024):.2f} MB/sec), {avg:.2f} ms avg latency, "
            f"{self.max_latency:.2f} ms max latency, {pct(0.5)} ms 50th, {pct(0.95)} ms 95th, "
            f"{pct(0.99)} ms 99th, {pct(0.999)} ms 99.9th."
        )


def _payload(size: int) -> bytes:
    rng = random.Random()
    return bytes(rng.randrange(65, 91) for _ in range(size))  # Kafka's: random 'A'..'Z'


def _run(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kraft.cli.console_producer import compression_codec, parse_acks
    from kraft.client.connection import AdminError
    from kraft.client.producer import Producer, ProducerRecord

    if ns.num_records < 0 or ns.record_size < 0:
        raise UsageError("--num-records and --record-size must not be negative")
    if ns.throughput == 0 or (ns.throughput < 0 and ns.throughput != -1):
        raise UsageError("--throughput must be positive, or -1 for no limit")
    path = config_file(ns.command_config, ns.producer_config, "--producer.config", err)
    props = merged_properties(path, ns.producer_props)
    servers = ns.bootstrap_server or props.get("bootstrap.servers")
    if not servers:
        raise UsageError("give --bootstrap-server or bootstrap.servers in --producer-props")
    acks = parse_acks(props.get("acks", "all"))
    try:
        batch_size = int(props.get("batch.size", "16384"))
    except ValueError as e:
        raise UsageError(one_line(e)) from None
    bootstrap = bootstrap_arg(servers)
    producer = Producer(
        bootstrap,
        acks=acks,
        compression=compression_codec(props.get("compression.type", "none")),
        batch_size=max(batch_size, ns.record_size),
        client_id=props.get("client.id", "perf-producer-client"),
        security=security_of(props),
    )
    payload = _payload(ns.record_size)
    per_batch = max(1, batch_size // max(1, ns.record_size))
    clock: Callable[[], float] = lambda: time.monotonic() * 1000  # noqa: E731
    stats = Stats(clock(), clock)
    sent = 0
    try:
        with producer:
            while sent < ns.num_records:
                count = min(per_batch, ns.num_records - sent)
                if ns.throughput > 0:
                    # Kafka's ThroughputThrottler: never ahead of the target rate.
                    count = min(count, max(1, int(ns.throughput / 100)))
                    ahead_ms = (sent + count) * 1000 / ns.throughput - (clock() - stats.start_ms)
                    if ahead_ms > 0:
                        time.sleep(ahead_ms / 1000)
                built = clock()
                producer.send(ns.topic, [ProducerRecord(value=payload) for _ in range(count)])
                stats.record(clock() - built, ns.record_size, count)
                sent += count
                stats.maybe_print_window(out)
    except (AdminError, ValueError) as e:
        print(f"ERROR {one_line(e)}", file=err)
        print(stats.summary(), file=out)
        return 1
    except KeyboardInterrupt:
        print(stats.summary(), file=out)
        return 130
    print(stats.summary(), file=out)
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, *, err: TextIO | None = None) -> int:
    """``kraft producer-perf-test``."""
    return run_tool(PROG, build_parser(), argv, out, err, _run)


if __name__ == "__main__":
    sys.exit(main())
