"""``kraft producer-perf-test`` and ``kraft consumer-perf-test`` against in-process brokers: what is
sent and read, and Kafka's output lines."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from data_brokers import DataCluster

from kraft.cli import consumer_perf_test, producer_perf_test

pytestmark = pytest.mark.timeout(60)

SUMMARY = re.compile(
    r"^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
    r"[\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$"
)
HEADER = (
    "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
    "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)


@pytest.fixture
def cluster() -> Iterator[DataCluster]:
    with DataCluster() as c:
        c.create_topic("t", 2)
        yield c


def produce(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return producer_perf_test.main(list(argv), out, err=err), out.getvalue(), err.getvalue()


def consume(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return consumer_perf_test.main(list(argv), out, err=err), out.getvalue(), err.getvalue()


def test_the_producer_sends_every_record_of_the_size_asked_and_prints_kafkas_summary(
    cluster: DataCluster,
) -> None:
    code, out, err = produce(
        "--topic", "t", "--num-records", "250", "--record-size", "100", "--throughput", "-1",
        "--producer-props", f"bootstrap.servers={cluster.bootstrap(1)}", "batch.size=2000", "acks=1",
    )  # fmt: skip
    assert code == 0, err
    match = SUMMARY.match(out.splitlines()[-1])
    assert match and match.group(1) == "250", out
    values = cluster.log("t", 0).values() + cluster.log("t", 1).values()
    assert len(values) == 250 and {len(v or b"") for v in values} == {100}
    assert all(v is not None and v.isalpha() and v.isupper() for v in values)  # Kafka's 'A'..'Z'


def test_the_producer_keeps_to_the_throughput_asked(cluster: DataCluster) -> None:
    import time

    started = time.monotonic()
    code, _out, err = produce(
        "--topic", "t", "--num-records", "60", "--record-size", "10", "--throughput", "100",
        "--bootstrap-server", cluster.bootstrap(1),
    )  # fmt: skip
    assert code == 0, err
    assert time.monotonic() - started >= 0.5  # 60 records at 100/s: never ahead of the rate


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--num-records", "1", "--record-size", "1", "--throughput", "-1"], "bootstrap"),
        (
            ["--num-records", "1", "--record-size", "1", "--throughput", "0", "--bootstrap-server", "h:1"],
            "throughput",
        ),
        (
            ["--num-records", "-1", "--record-size", "1", "--throughput", "5", "--bootstrap-server", "h:1"],
            "negative",
        ),
    ],
)
def test_producer_misuse_exits_2_before_connecting(argv: list[str], message: str) -> None:
    code, _, err = produce("--topic", "t", *argv)
    assert code == 2 and message in err, err


def test_the_consumer_reads_what_was_produced_and_prints_kafkas_line(cluster: DataCluster) -> None:
    assert produce(
        "--topic", "t", "--num-records", "120", "--record-size", "50", "--throughput", "-1",
        "--bootstrap-server", cluster.bootstrap(1),
    )[0] == 0  # fmt: skip
    code, out, err = consume("--bootstrap-server", cluster.bootstrap(1), "--topic", "t", "--messages", "120")
    assert code == 0, err
    header, line = out.splitlines()
    assert header == HEADER
    fields = line.split(", ")
    assert len(fields) == 10 and fields[4] == "120"
    assert float(fields[2]) == pytest.approx(120 * 50 / (1024 * 1024), abs=1e-4)
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}$", fields[0])


def test_the_consumer_gives_up_after_its_timeout_with_kafkas_warning(cluster: DataCluster) -> None:
    code, out, err = consume(
        "--bootstrap-server", cluster.bootstrap(1), "--topic", "t", "--messages", "5",
        "--timeout", "300", "--hide-header",
    )  # fmt: skip
    assert code == 0
    assert "Exiting before consuming the expected number of messages" in err
    assert out.split(", ")[4] == "0"
