"""kraft console-producer: Kafka's LineMessageReader rules, option precedence and misuse, and lines
piped through to in-process brokers with in-memory logs (``data_brokers``)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from data_brokers import PRODUCE, DataCluster

from kraft.cli import console_producer
from kraft.cli.common import UsageError
from kraft.cli.console_producer import LineError, LineReader
from kraft.protocol.error_codes import ErrorCode
from kraft.records.batch import Compression, Header

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cluster() -> Iterator[DataCluster]:
    with DataCluster() as c:
        c.create_topic("t", 1)
        yield c


def run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = console_producer.main(argv, out, err=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def base(cluster: DataCluster, *extra: str) -> list[str]:
    return ["--bootstrap-server", cluster.bootstrap(2), "--topic", "t", "--retry-backoff-ms", "10", *extra]


# -- the line reader ------------------------------------------------------------------------------


def test_a_plain_line_is_the_value_and_keys_parse_with_their_separator() -> None:
    assert LineReader().parse("a\tb", 1) == console_producer.LineRecord(None, b"a\tb", ())
    keyed = LineReader(parse_key=True, key_separator="::")
    assert keyed.parse("k::v::w", 1) == console_producer.LineRecord(b"k", b"v::w", ())
    assert keyed.parse("::", 1) == console_producer.LineRecord(b"", b"", ())


def test_headers_then_key_then_value() -> None:
    reader = LineReader(parse_key=True, parse_headers=True)
    parsed = reader.parse("h1:v1,h2:\tkey\tvalue", 1)
    assert parsed.headers == (Header(key="h1", value=b"v1"), Header(key="h2", value=b""))
    assert (parsed.key, parsed.value) == (b"key", b"value")
    # Java's String.split drops trailing empty strings: "h1:v1," is one header.
    assert reader.parse("h1:v1,\tk\tv", 1).headers == (Header(key="h1", value=b"v1"),)


def test_the_null_marker_makes_keys_values_and_header_values_null() -> None:
    reader = LineReader(parse_key=True, parse_headers=True, null_marker="<NULL>", key_separator=":")
    parsed = reader.parse("h:<NULL>\t<NULL>:<NULL>", 1)
    assert parsed == console_producer.LineRecord(None, None, (Header(key="h", value=None),))
    with pytest.raises(LineError, match="Header keys should not be equal to the null marker '<NULL>'"):
        reader.parse("<NULL>:x\tk:v", 1)


def test_a_missing_separator_is_an_error_unless_ignore_error() -> None:
    with pytest.raises(LineError, match="No key separator found on line number 3: 'novalue'"):
        LineReader(parse_key=True).parse("novalue", 3)
    assert LineReader(parse_key=True, ignore_error=True).parse("novalue", 3).key is None
    with pytest.raises(LineError, match="No header key separator found in pair 'h' on line number 2"):
        LineReader(parse_headers=True).parse("h\tv", 2)
    assert LineReader(parse_headers=True, ignore_error=True).parse("h\tv", 2).headers == (
        Header(key="h", value=None),
    )


def test_undecodable_bytes_pass_through_unchanged() -> None:
    line = b"caf\xe9".decode("utf-8", "surrogateescape")
    assert LineReader().parse(line, 1).value == b"caf\xe9"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"headers.delimiter": ",", "headers.separator": ","}, "headers.delimiter and headers.separator"),
        ({"null.marker": "\t"}, "null.marker and key.separator may not be equal"),
        ({"headers.separator": ":"}, "headers.separator and headers.key.separator may not be equal"),
        ({"key.separator": ""}, "key.separator may not be empty"),
    ],
)
def test_reader_properties_that_clash_are_misuse(props: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        LineReader.from_properties(props)


# -- arguments ------------------------------------------------------------------------------------


def settings(*argv: str, config: Path | None = None) -> tuple[console_producer.ProducerSettings, str]:
    args = ["--bootstrap-server", "h:1", "--topic", "t", *argv]
    if config is not None:
        args += ["--producer.config", str(config)]
    ns = console_producer.build_parser().parse_args(args)
    err = io.StringIO()
    return console_producer.producer_settings(ns, err), err.getvalue()


def test_kafkas_console_defaults_apply_when_nothing_is_said() -> None:
    s, warnings = settings()
    assert (s.acks, s.compression, s.linger_ms, s.batch_size, s.retries) == (
        -1,
        Compression.NONE,
        1000,
        16384,
        3,
    )
    # Kafka's console producer waits 1500 ms; kraft's (no idempotence) waits the Java client's 30 s.
    assert (s.request_timeout_ms, s.max_block_ms, s.client_id) == (30000, 60000, "console-producer")
    assert warnings == ""


def test_options_beat_producer_properties_which_beat_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "producer.properties"
    config.write_text("acks=0\nlinger.ms=7\nretries=9\n")
    s, _ = settings("--producer-property", "acks=1", "--producer-property", "linger.ms=8", config=config)
    assert (s.acks, s.linger_ms, s.retries) == (1, 8, 9)
    s, _ = settings("--producer-property", "acks=1", "--request-required-acks", "all", config=config)
    assert s.acks == -1


def test_compression_codec_without_a_value_is_gzip_and_a_property_is_kept() -> None:
    assert settings("--compression-codec")[0].compression == Compression.GZIP
    assert settings("--compression-codec", "zstd")[0].compression == Compression.ZSTD
    assert settings("--producer-property", "compression.type=lz4")[0].compression == Compression.LZ4


def test_unknown_producer_properties_are_warned_about() -> None:
    _, warnings = settings("--producer-property", "linger.ms=5", "--producer-property", "buffer.memory=1")
    assert warnings == "WARN The configuration 'buffer.memory' was supplied but isn't a known config.\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--topic", "t"], 'Missing required argument "\\[bootstrap-server\\]"'),
        (["--bootstrap-server", "h:1"], 'Missing required argument "\\[topic\\]"'),
        (["--bootstrap-server", "nohost", "--topic", "t"], "invalid bootstrap address 'nohost'"),
        (["--bootstrap-server", "h:1", "--topic", "t", "--compression-codec", "snappy"], "cannot be written"),
        (
            ["--bootstrap-server", "h:1", "--topic", "t", "--compression-codec", "brotli"],
            "Invalid compression",
        ),
        (["--bootstrap-server", "h:1", "--topic", "t", "--request-required-acks", "2"], "configuration acks"),
        (
            ["--bootstrap-server", "h:1", "--topic", "t", "--producer-property", "enable.idempotence=true"],
            "enable.idempotence=true is not supported",
        ),
        (["--bootstrap-server", "h:1", "--topic", "t", "--producer-property", "retries=x"], "Not a number"),
        (["--bootstrap-server", "h:1", "--topic", "t", "--producer-property", "=1"], "Invalid command line"),
        (["--bootstrap-server", "h:1", "--topic", "t", "--reader-config", "/no/such/file"], "does not exist"),
        (
            ["--bootstrap-server", "h:1", "--topic", "t", "--property", "headers.separator=:"],
            "headers.separator and headers.key.separator",
        ),
    ],
)
def test_misuse_exits_2_with_one_clear_line_before_connecting(argv: list[str], message: str) -> None:
    code, out, err = run(argv, "never read\n")
    assert code == 2, err
    assert out == ""
    assert err.startswith("kraft console-producer: ")
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err), err


# -- end to end against in-process brokers --------------------------------------------------------


def test_each_line_becomes_one_record_in_order(cluster: DataCluster) -> None:
    code, out, err = run(base(cluster), "first\nsecond line\n\nlast without newline")
    assert (code, out, err) == (0, "", "")
    assert cluster.log("t", 0).values() == [b"first", b"second line", b"", b"last without newline"]
    # Lines that arrive together share one request and one batch (the linger).
    assert len(cluster.broker(1).requests(PRODUCE)) == 1


def test_keys_and_headers_and_crlf_lines(cluster: DataCluster) -> None:
    argv = base(
        cluster,
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
        "--property",
        "parse.headers=true",
        "--property",
        "headers.delimiter=|",
    )
    code, _, err = run(argv, "trace:abc|user-1:hello\r\ntrace:def|user-2:world:!\n")
    assert code == 0, err
    records = [r for b in cluster.log("t", 0).decoded() for r in b.records]
    assert [(r.key, r.value, r.headers) for r in records] == [
        (b"user-1", b"hello", (Header(key="trace", value=b"abc"),)),
        (b"user-2", b"world:!", (Header(key="trace", value=b"def"),)),
    ]


def test_sync_sends_each_line_on_its_own_with_the_codec_asked(cluster: DataCluster) -> None:
    code, _, err = run(
        base(cluster, "--sync", "--compression-codec", "lz4", "--request-required-acks", "1"), "a\nb\n"
    )
    assert code == 0, err
    requests = cluster.broker(1).requests(PRODUCE)
    assert [r.body.acks for r in requests] == [1, 1]
    assert [b.header.compression for b in cluster.log("t", 0).decoded()] == [Compression.LZ4] * 2
    assert cluster.log("t", 0).values() == [b"a", b"b"]


def test_a_line_that_does_not_parse_stops_the_tool_after_sending_the_lines_before(
    cluster: DataCluster,
) -> None:
    code, _, err = run(base(cluster, "--property", "parse.key=true"), "k\tv\nno-key-here\nk\tlater\n")
    assert code == 1
    assert err == "ERROR No key separator found on line number 2: 'no-key-here'\n"
    assert cluster.log("t", 0).values() == [b"v"]


def test_a_failed_send_is_reported_and_exits_1(cluster: DataCluster) -> None:
    cluster.inject(PRODUCE, "t", 0, ErrorCode.RECORD_LIST_TOO_LARGE)
    code, _, err = run(base(cluster), "x\n")
    assert code == 1
    assert err.startswith(
        "ERROR Error when sending message to topic t: Error when sending 1 record(s) to t-0: "
    )
    assert "RECORD_LIST_TOO_LARGE" in err


def test_an_unknown_topic_gives_up_after_max_block_ms(cluster: DataCluster) -> None:
    argv = ["--bootstrap-server", cluster.bootstrap(1), "--topic", "nope", "--max-block-ms", "300"]
    code, _, err = run(argv, "x\n")
    assert code == 1
    assert "timed out after 300 ms waiting for topic nope in the metadata" in err
    assert len(err.strip().splitlines()) == 1


def test_empty_input_sends_nothing_and_connects_nowhere(cluster: DataCluster) -> None:
    code, _, err = run(base(cluster), "")
    assert (code, err) == (0, "")
    assert all(not b.received for b in cluster.brokers)
