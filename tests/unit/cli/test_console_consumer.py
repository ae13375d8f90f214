"""kraft console-consumer: Kafka's DefaultMessageFormatter layouts, ConsoleConsumerOptions' checks
and messages, and reading from in-process brokers with in-memory logs (``data_brokers``)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from data_brokers import FETCH, DataCluster

from kraft.cli import console_consumer
from kraft.cli.console_consumer import MessageFormatter
from kraft.client.consumer import ConsumerRecord
from kraft.protocol.error_codes import ErrorCode
from kraft.records.batch import Header, SimpleRecord, TimestampType, build_batch

pytestmark = pytest.mark.timeout(60)

RECORD = ConsumerRecord(
    topic="t",
    partition=2,
    offset=41,
    timestamp_ms=1_700_000_000_123,
    timestamp_type=TimestampType.CREATE_TIME,
    key=b"k1",
    value=b"hello",
    headers=(Header(key="a", value=b"1"), Header(key="b", value=None)),
    leader_epoch=0,
)


@pytest.fixture
def cluster() -> Iterator[DataCluster]:
    with DataCluster() as c:
        c.create_topic("t", 3)
        c.create_topic("other", 1)
        for p in range(3):
            batch = build_batch(
                [SimpleRecord(key=f"k{p}{i}".encode(), value=f"p{p}-{i}".encode()) for i in range(2)],
                timestamp_ms=1_000 + p,
            )
            c.append("t", p, batch)
        yield c


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = console_consumer.main(argv, out, err=err)
    return code, out.getvalue(), err.getvalue()


def base(cluster: DataCluster, *extra: str) -> list[str]:
    return [
        "--bootstrap-server",
        cluster.bootstrap(3),
        "--consumer-property",
        "fetch.max.wait.ms=20",
        *extra,
    ]


# -- the formatter --------------------------------------------------------------------------------


def fmt(**props: str) -> bytes:
    return MessageFormatter.from_properties({k.replace("_", "."): v for k, v in props.items()}).format(RECORD)


def test_the_value_alone_by_default() -> None:
    assert fmt() == b"hello\n"


def test_every_column_in_kafkas_order_and_separators() -> None:
    assert (
        fmt(
            print_timestamp="true",
            print_partition="true",
            print_offset="true",
            print_headers="true",
            print_key="true",
        )
        == b"CreateTime:1700000000123\tPartition:2\tOffset:41\ta:1,b:null\tk1\thello\n"
    )


def test_separators_null_literal_and_no_headers() -> None:
    record = ConsumerRecord(
        topic="t",
        partition=0,
        offset=0,
        timestamp_ms=5,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        key=None,
        value=None,
        headers=(),
        leader_epoch=0,
    )
    formatter = MessageFormatter.from_properties(
        {
            "print.key": "TRUE",
            "print.headers": "true",
            "print.timestamp": " true ",
            "key.separator": " | ",
            "line.separator": ";",
            "null.literal": "<none>",
        }
    )
    assert formatter.format(record) == b"LogAppendTime:5 | NO_HEADERS | <none> | <none>;"


def test_without_the_value_the_last_column_ends_the_line() -> None:
    assert fmt(print_key="true", print_value="false") == b"k1\n"
    assert fmt(print_offset="true", print_value="false") == b"Offset:41\n"
    assert fmt(print_value="false") == b""
    assert fmt(print_key="yes") == b"hello\n"  # only "true" turns a column on, as in Kafka


def test_custom_deserializers_are_refused() -> None:
    with pytest.raises(console_consumer.UsageError, match=r"key\.deserializer is not supported"):
        MessageFormatter.from_properties({"key.deserializer": "org.apache.kafka.StringDeserializer"})


# -- arguments ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "Exactly one of --topic or --include is required."),
        (["--topic", "t", "--include", "t.*"], "Exactly one of --topic or --include is required."),
        (["--include", "t", "--partition", "0"], "The topic is required when partition is specified."),
        (
            ["--topic", "t", "--partition", "0", "--offset", "3", "--from-beginning"],
            "Options from-beginning and offset cannot be specified together.",
        ),
        (["--topic", "t", "--offset", "3"], "The partition is required when offset is specified."),
        (
            ["--topic", "t", "--partition", "0", "--offset", "-3"],
            "The provided offset value '-3' is incorrect. Valid values are 'earliest', 'latest', or a "
            "non-negative long.",
        ),
        (["--topic", "t", "--partition", "0", "--offset", "soon"], "The provided offset value 'soon'"),
        (["--topic", "t", "--group", "g"], "consumer groups are not supported yet"),
        (["--topic", "t", "--consumer-property", "group.id=g"], "consumer groups are not supported yet"),
        (
            ["--topic", "t", "--from-beginning", "--consumer-property", "auto.offset.reset=latest"],
            "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest'",
        ),
        (["--topic", "t", "--consumer-property", "auto.offset.reset=middle"], "auto.offset.reset"),
        (["--topic", "t", "--max-messages", "-1"], "--max-messages must be >= 0"),
        (["--topic", "t", "--property", "value.deserializer=x"], "value.deserializer is not supported"),
        (["--include", "t(", "--timeout-ms", "1"], "is an invalid regex"),
    ],
)
def test_misuse_exits_2_with_kafkas_message(extra: list[str], message: str) -> None:
    code, out, err = run(["--bootstrap-server", "127.0.0.1:1", *extra])
    assert code == 2, err
    assert out == ""
    assert err.startswith("kraft console-consumer: ")
    assert message in err


def test_bootstrap_server_is_required() -> None:
    code, _, err = run(["--topic", "t"])
    assert code == 2
    assert 'Missing required argument "[bootstrap-server]"' in err


def test_help_says_there_are_no_groups_and_lists_the_properties(capsys: pytest.CaptureFixture[str]) -> None:
    assert console_consumer.main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "No consumer groups yet: without --partition it reads every partition of the topic by assignment"
        in text
    )
    for prop in ("print.key", "print.offset", "print.partition", "print.timestamp", "key.separator"):
        assert prop in text


# -- reading --------------------------------------------------------------------------------------


def test_from_beginning_reads_every_partition_and_counts_on_stderr(cluster: DataCluster) -> None:
    code, out, err = run(
        base(
            cluster,
            "--topic",
            "t",
            "--from-beginning",
            "--max-messages",
            "6",
            "--property",
            "print.partition=true",
        )
    )
    assert code == 0, err
    lines = out.splitlines()
    assert sorted(lines) == sorted(f"Partition:{p}\tp{p}-{i}" for p in range(3) for i in range(2))
    for p in range(3):  # each partition in order
        assert [x for x in lines if x.startswith(f"Partition:{p}")] == [
            f"Partition:{p}\tp{p}-0",
            f"Partition:{p}\tp{p}-1",
        ]
    assert err == "Processed a total of 6 messages\n"


def test_max_messages_stops_early(cluster: DataCluster) -> None:
    code, out, err = run(
        base(cluster, "--topic", "t", "--partition", "1", "--offset", "earliest", "--max-messages", "1")
    )
    assert (code, out, err) == (0, "p1-0\n", "Processed a total of 1 messages\n")


def test_partition_and_offset_with_keys_offsets_and_a_key_separator(cluster: DataCluster) -> None:
    argv = base(
        cluster,
        "--topic",
        "t",
        "--partition",
        "2",
        "--offset",
        "1",
        "--max-messages",
        "1",
        "--property",
        "print.key=true",
        "--property",
        "print.offset=true",
        "--property",
        "key.separator=:",
    )
    code, out, _ = run(argv)
    assert (code, out) == (0, "Offset:1:k21:p2-1\n")


def test_without_from_beginning_it_starts_at_the_end_and_times_out_with_exit_0(cluster: DataCluster) -> None:
    code, out, err = run(base(cluster, "--topic", "t", "--timeout-ms", "300"))
    assert (code, out) == (0, "")
    assert "terminating consumer process: no message within 300 ms" in err
    assert err.endswith("Processed a total of 0 messages\n")


def test_include_reads_every_matching_topic(cluster: DataCluster) -> None:
    cluster.append("other", 0, build_batch([SimpleRecord(value=b"o")]))
    code, out, err = run(base(cluster, "--include", "oth.*|nope", "--from-beginning", "--max-messages", "1"))
    assert (code, out) == (0, "o\n"), err


def test_an_unknown_topic_or_partition_is_an_error_exit_1(cluster: DataCluster) -> None:
    code, _, err = run(base(cluster, "--topic", "missing", "--timeout-ms", "200"))
    assert code == 1
    assert re.search(r"ERROR .*timed out after 200 ms waiting for topic missing in the metadata", err)
    assert err.endswith("Processed a total of 0 messages\n")
    code, _, err = run(base(cluster, "--topic", "t", "--partition", "7", "--timeout-ms", "200"))
    assert code == 1 and "Topic t has no partition 7 (3 partitions)" in err


def test_a_fetch_error_ends_the_tool_with_what_was_printed_counted(cluster: DataCluster) -> None:
    cluster.inject(FETCH, "t", 0, ErrorCode.NONE, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    argv = base(cluster, "--topic", "t", "--partition", "0", "--offset", "earliest", "--max-messages", "5")
    cluster.append("t", 0, build_batch([SimpleRecord(value=b"x")]))
    code, out, err = run(argv)
    assert code == 1
    assert out == "p0-0\np0-1\nx\n"
    assert "Fetch of t-0 failed: CLUSTER_AUTHORIZATION_FAILED" in err
    assert err.endswith("Processed a total of 3 messages\n")
