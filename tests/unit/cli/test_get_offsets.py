"""kraft get-offsets: Kafka's GetOffsetShell filters, time values and output against in-process
brokers with in-memory logs (``data_brokers``)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from data_brokers import LIST_OFFSETS, DataCluster

from kraft.cli import get_offsets
from kraft.cli.common import UsageError
from kraft.protocol.error_codes import ErrorCode
from kraft.records.batch import SimpleRecord, build_batch

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cluster() -> Iterator[DataCluster]:
    with DataCluster() as c:
        c.create_topic("orders", 12)
        c.create_topic("audit", 1)
        for p in range(12):  # partition p holds p records, stamped 1000, 1001, ...
            if p:
                c.append(
                    "orders",
                    p,
                    build_batch([SimpleRecord(value=b"x", timestamp=1_000 + i) for i in range(p)]),
                )
        yield c


def run(cluster: DataCluster, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = get_offsets.main(["--bootstrap-server", cluster.bootstrap(2), *argv], out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_latest_offsets_of_every_partition_sorted_by_number(cluster: DataCluster) -> None:
    code, out, err = run(cluster, "--topic", "orders")
    assert (code, err) == (0, "")
    assert out.splitlines() == [f"orders:{p}:{p}" for p in range(12)]


def test_without_a_topic_every_topic_is_listed(cluster: DataCluster) -> None:
    code, out, _ = run(cluster, "--partitions", "0")
    assert (code, out) == (0, "audit:0:0\norders:0:0\n")


def test_partitions_earliest_and_a_timestamp(cluster: DataCluster) -> None:
    assert run(cluster, "--topic", "orders", "--partitions", "3,11", "--time", "earliest")[1] == (
        "orders:3:0\norders:11:0\n"
    )
    assert (
        run(cluster, "--topic", "orders", "--partitions", "3, 11", "--time", "-2")[1]
        == "orders:3:0\norders:11:0\n"
    )
    # The first record stamped at or after 1002; partitions without one print nothing (as Kafka).
    assert run(cluster, "--topic", "orders", "--partitions", "2,3,5", "--time", "1002")[1] == (
        "orders:3:2\norders:5:2\n"
    )
    assert (
        run(cluster, "--topic", "orders", "--partitions", "5", "--time", "max-timestamp")[1] == "orders:5:4\n"
    )


def test_topic_is_a_regular_expression_and_topic_partitions_takes_kafkas_rules(cluster: DataCluster) -> None:
    assert run(cluster, "--topic", "ord.*", "--partitions", "1")[1] == "orders:1:1\n"
    code, out, _ = run(cluster, "--topic-partitions", "orders:2-4,audit,orders:10-,:-1")
    assert code == 0
    assert out.splitlines() == [
        "audit:0:0",
        "orders:0:0",
        "orders:2:2",
        "orders:3:3",
        "orders:10:10",
        "orders:11:11",
    ]


def test_json_output(cluster: DataCluster) -> None:
    code, out, _ = run(cluster, "--topic", "orders", "--partitions", "4", "--json")
    assert code == 0
    assert json.loads(out) == {"time": -1, "offsets": [{"topic": "orders", "partition": 4, "offset": 4}]}


def test_no_match_is_an_error_exit_1(cluster: DataCluster) -> None:
    code, out, err = run(cluster, "--topic", "nothing")
    assert (code, out) == (1, "")
    assert err == "Error occurred: Could not match any topic-partitions with the specified filters\n"


def test_a_partition_that_answers_an_error_is_skipped_with_a_message(cluster: DataCluster) -> None:
    cluster.inject(LIST_OFFSETS, "orders", 1, ErrorCode.POLICY_VIOLATION)
    code, out, err = run(cluster, "--topic", "orders", "--partitions", "1,2")
    assert (code, out) == (0, "orders:2:2\n")
    assert err.startswith("Skip getting offsets for topic-partition orders-1 due to error: POLICY_VIOLATION")


def test_an_unreachable_cluster_is_an_error_exit_1() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = get_offsets.main(["--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "200"], out, err=err)
    assert code == 1
    assert err.getvalue().startswith("Error occurred: timed out after 200 ms waiting for the list of topics")
    assert len(err.getvalue().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--topic", "t"], 'Missing required argument "[bootstrap-server]"'),
        (
            ["--bootstrap-server", "h:1", "--topic-partitions", "t:1", "--topic", "t"],
            "--topic-partitions cannot be used with --topic or --partitions",
        ),
        (
            ["--bootstrap-server", "h:1", "--partitions", "1,x"],
            "--partitions expects a comma separated list of numeric partition ids, but received: 1,x",
        ),
        (["--bootstrap-server", "h:1", "--time", "noon"], "Malformed time argument noon"),
        (["--bootstrap-server", "h:1", "--time", "-6"], "not supported"),
        (["--bootstrap-server", "h:1", "--topic-partitions", "t:x-"], "Invalid rule specification: t:x-"),
        (["--bootstrap-server", "h:1", "--topic", "("], "is an invalid regex"),
        (["--bootstrap-server", "h:1", "--timeout-ms", "0"], "must be positive"),
    ],
)
def test_misuse_exits_2(argv: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert get_offsets.main(argv, out, err=err) == 2
    assert message in err.getvalue()


def test_topic_partition_rules_parse_like_kafkas_pattern() -> None:
    (single,) = get_offsets.parse_topic_partitions("t:3")
    assert (single.low, single.high) == (3, 4) and single.allows("t", 3) and not single.allows("t2", 3)
    (open_low,) = get_offsets.parse_topic_partitions(":-3")
    assert (open_low.low, open_low.high) == (0, 3) and open_low.allows("anything", 2)
    (open_high,) = get_offsets.parse_topic_partitions("a|b:5-")
    assert open_high.allows("b", 99) and not open_high.allows("b", 4)
    with pytest.raises(UsageError):
        get_offsets.parse_topic_partitions("t:1:2")
