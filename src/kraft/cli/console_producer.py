"""``kraft console-producer``: Kafka's ``kafka-console-producer.sh``, lines from stdin to a topic.

    kraft console-producer --bootstrap-server HOST:PORT --topic TOPIC
        [--producer-property acks=all ...] [--command-config FILE]
        [--property parse.key=true --property key.separator=: ...] [--reader-config FILE]
        [--compression-codec [gzip|lz4|zstd|none]] [--sync] [--request-required-acks ACKS]
        [--batch-size BYTES] [--timeout LINGER_MS] [--request-timeout-ms MS]
        [--message-send-max-retries N] [--retry-backoff-ms MS] [--max-block-ms MS]

Each line of stdin (UTF-8; undecodable bytes pass through unchanged) is one record, parsed as
Kafka's ``LineMessageReader`` does (``parse.key``, ``key.separator``, ``parse.headers``,
``headers.delimiter``, ``headers.separator``, ``headers.key.separator``, ``null.marker``,
``ignore.error``). Records are sent with kraft's own producer (``kraft.client.producer``): lines
that arrive within ``--timeout`` ms of the first unsent one go together (Kafka's ``linger.ms``), or
one at a time with ``--sync``. When stdin and stdout are terminals, ``>`` prompts for each line.

Options and their precedence follow Kafka 4.x's ``ConsoleProducer``: an option given on the command
line beats the same setting in ``--producer-property``, which beats ``--command-config`` (KIP-1147;
the older ``--producer.config`` still works, warned about as deprecated, and not with it); an option
left out does not override a property. The properties' ``security.protocol``, ``sasl.*`` and
``ssl.*`` reach a secured listener (``kraft.client.security``: TLS with a PEM truststore, SASL PLAIN
or SCRAM-SHA-256/512). Departures: ``--compression-codec`` left out keeps a
``compression.type`` property (Kafka overrides it with none); snappy cannot be written (no codec
installed) and is refused; ``enable.idempotence=true`` is refused (no InitProducerId here yet);
``--line-reader``, ``--metadata-expiry-ms``, ``--max-memory-bytes``,
``--max-partition-memory-bytes`` and ``--socket-buffer-size`` do not exist; ``--request-timeout-ms``
defaults to 30000 (Kafka's console producer: 1500; without idempotence, a batch resent after a
timed-out answer can be written twice); the first line that does not parse, or the first batch that
fails, stops the tool (Kafka logs a failed send and goes on).

Exit status: 0 when every line was acknowledged, 1 when a send failed or a line did not parse
(lines before it were sent), 2 on misuse, 130 after Ctrl-C (lines read so far are sent first).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import queue
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TextIO

from kraft.cli.client_properties import (
    bool_property,
    config_file,
    int_property,
    known_properties,
    merged_properties,
    security_of,
    warn_unknown,
)
from kraft.cli.common import UsageError, bootstrap_arg, one_line, run_tool
from kraft.records.batch import WRITABLE_COMPRESSION, Compression, Header

if TYPE_CHECKING:
    from kraft.client.security import ClientSecurityConfig

PROG = "kraft console-producer"
# Kafka's ConsoleProducer defaults (they differ from the Java producer's own).
DEFAULT_ACKS = "-1"
DEFAULT_LINGER_MS = 1_000
DEFAULT_BATCH_SIZE = 16_384
DEFAULT_RETRIES = 3
DEFAULT_RETRY_BACKOFF_MS = 100
# Kafka's console producer says 1500; without idempotence a batch resent after a timed-out
# answer may be written twice, so kraft keeps the Java producer's own 30 s.
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
DEFAULT_MAX_BLOCK_MS = 60_000
DEFAULT_DELIVERY_TIMEOUT_MS = 120_000
# Lines held before a send whatever the linger: bounds memory when a fast pipe feeds the tool.
MAX_PENDING_BYTES: Final = 1 << 20
PRODUCER_PROPERTIES: Final = frozenset(
    {
        "acks",
        "batch.size",
        "bootstrap.servers",
        "client.id",
        "compression.type",
        "delivery.timeout.ms",
        "enable.idempotence",
        "linger.ms",
        "max.block.ms",
        "request.timeout.ms",
        "retries",
        "retry.backoff.ms",
    }
)
_ACKS: Final = {"all": -1, "-1": -1, "0": 0, "1": 1}


# ---------------------------------------------------------------------------------------------------
# Lines to records (Kafka's LineMessageReader)


class LineError(Exception):
    """A line that does not parse as the reader properties say."""


@dataclass(frozen=True, slots=True)
class LineRecord:
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class LineReader:
    """Kafka's ``LineMessageReader``: ``[headers DELIM][key SEP]value`` per line."""

    parse_key: bool = False
    key_separator: str = "\t"
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    ignore_error: bool = False
    null_marker: str | None = None

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> LineReader:
        """The reader ``--property``/``--reader-config`` describe, checked as Kafka checks it.

        Raises:
            UsageError: two separators (or a separator and the null marker) are equal.
        """
        reader = cls(
            parse_key=bool_property(props, "parse.key"),
            key_separator=props.get("key.separator", "\t"),
            parse_headers=bool_property(props, "parse.headers"),
            headers_delimiter=props.get("headers.delimiter", "\t"),
            headers_separator=props.get("headers.separator", ","),
            headers_key_separator=props.get("headers.key.separator", ":"),
            ignore_error=bool_property(props, "ignore.error"),
            null_marker=props.get("null.marker"),
        )
        pairs = [
            ("headers.delimiter", reader.headers_delimiter, "headers.separator", reader.headers_separator),
            (
                "headers.delimiter",
                reader.headers_delimiter,
                "headers.key.separator",
                reader.headers_key_separator,
            ),
            (
                "headers.separator",
                reader.headers_separator,
                "headers.key.separator",
                reader.headers_key_separator,
            ),
            ("null.marker", reader.null_marker, "key.separator", reader.key_separator),
            ("null.marker", reader.null_marker, "headers.separator", reader.headers_separator),
            ("null.marker", reader.null_marker, "headers.delimiter", reader.headers_delimiter),
            ("null.marker", reader.null_marker, "headers.key.separator", reader.headers_key_separator),
        ]
        for name_a, a, name_b, b in pairs:
            if a is not None and a == b:
                raise UsageError(f"{name_a} and {name_b} may not be equal")
        for name, value in (
            ("key.separator", reader.key_separator),
            ("headers.delimiter", reader.headers_delimiter),
            ("headers.separator", reader.headers_separator),
            ("headers.key.separator", reader.headers_key_separator),
        ):
            if not value:
                raise UsageError(f"{name} may not be empty")
        return reader

    def _nullable(self, text: str) -> bytes | None:
        return None if text == self.null_marker else _utf8(text)

    def _cut(
        self, enabled: bool, line: str, start: int, separator: str, what: str, number: int
    ) -> str | None:
        if not enabled:
            return None
        index = line.find(separator, start)
        if index == -1:
            if self.ignore_error:
                return None
            raise LineError(f"No {what} found on line number {number}: '{line}'")
        return line[start:index]

    def parse(self, line: str, number: int) -> LineRecord:
        """One line (without its line break) as a record; ``number`` counts from 1.

        Raises:
            LineError: a separator is missing (unless ``ignore.error``), or a header key is the
                null marker.
        """
        headers_text = self._cut(
            self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter", number
        )
        header_end = 0 if headers_text is None else len(headers_text) + len(self.headers_delimiter)
        key_text = self._cut(self.parse_key, line, header_end, self.key_separator, "key separator", number)
        key_end = 0 if key_text is None else len(key_text) + len(self.key_separator)
        value_text = line[header_end + key_end :]
        headers: tuple[Header, ...] = ()
        if headers_text is not None and headers_text != self.null_marker:
            headers = tuple(
                self._header(pair, number) for pair in _split_dropping_trailing(headers_text, self)
            )
        return LineRecord(
            key=None if key_text is None else self._nullable(key_text),
            value=self._nullable(value_text),
            headers=headers,
        )

    def _header(self, pair: str, number: int) -> Header:
        index = pair.find(self.headers_key_separator)
        if index == -1:
            if self.ignore_error:
                return Header(key=pair, value=None)
            raise LineError(f"No header key separator found in pair '{pair}' on line number {number}")
        key = pair[:index]
        if key == self.null_marker:
            raise LineError(
                f"Header keys should not be equal to the null marker '{self.null_marker}' "
                "as they can't be null"
            )
        return Header(key=key, value=self._nullable(pair[index + len(self.headers_key_separator) :]))


def _split_dropping_trailing(text: str, reader: LineReader) -> list[str]:
    # Java's String.split (Kafka splits headers with it) drops trailing empty strings.
    parts = text.split(reader.headers_separator)
    while parts and not parts[-1]:
        parts.pop()
    return parts


# ---------------------------------------------------------------------------------------------------
# Arguments


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="This tool helps to read data from standard input and publish it to Kafka. Each line "
        "is one record; with kraft's own producer (no idempotence, no transactions).",
    )
    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="REQUIRED: The server(s) to connect to, in the form HOST1:PORT1,HOST2:PORT2.",
    )
    parser.add_argument("--topic", help="REQUIRED: The topic to produce messages to.")
    parser.add_argument(
        "--sync", action="store_true", help="Send each message on its own and wait for its acknowledgement."
    )
    parser.add_argument(
        "--compression-codec",
        nargs="?",
        const="gzip",
        metavar="CODEC",
        help="The compression codec: 'none', 'gzip', 'lz4' or 'zstd' ('snappy' cannot be written here). "
        "Without a value: gzip.",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        metavar="BYTES",
        help=f"The most bytes of records in one batch (batch.size; default {DEFAULT_BATCH_SIZE}).",
    )
    parser.add_argument(
        "--message-send-max-retries",
        type=int,
        metavar="N",
        help=f"How many times a failed batch is sent again (retries; default {DEFAULT_RETRIES}).",
    )
    parser.add_argument(
        "--retry-backoff-ms",
        type=int,
        metavar="MS",
        help=f"The wait before a retry (retry.backoff.ms; default {DEFAULT_RETRY_BACKOFF_MS}).",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        metavar="MS",
        help="How long a line waits for more lines to share its request (linger.ms; default "
        f"{DEFAULT_LINGER_MS}).",
    )
    parser.add_argument(
        "--request-required-acks",
        metavar="ACKS",
        help=f"The required acks of the produce requests: all/-1, 1 or 0 (acks; default {DEFAULT_ACKS}).",
    )
    parser.add_argument(
        "--request-timeout-ms",
        type=int,
        metavar="MS",
        help="The ack timeout of the produce requests (request.timeout.ms; default "
        f"{DEFAULT_REQUEST_TIMEOUT_MS}).",
    )
    parser.add_argument(
        "--max-block-ms",
        type=int,
        metavar="MS",
        help=f"How long to wait for the topic's metadata (max.block.ms; default {DEFAULT_MAX_BLOCK_MS}).",
    )
    parser.add_argument(
        "--property",
        action="append",
        metavar="KEY=VALUE",
        help="A property of the line reader: parse.key, key.separator (default TAB), parse.headers, "
        "headers.delimiter (TAB), headers.separator (,), headers.key.separator (:), ignore.error, "
        "null.marker. With parse.key=true a line is KEY<key.separator>VALUE; with parse.headers=true it "
        "starts with h1:v1,h2:v2<headers.delimiter>.",
    )
    parser.add_argument(
        "--reader-config", metavar="FILE", help="Properties file for the line reader (--property wins)."
    )
    parser.add_argument(
        "--producer-property",
        action="append",
        metavar="KEY=VALUE",
        help="A producer property: acks, compression.type, linger.ms, batch.size, retries, "
        "retry.backoff.ms, request.timeout.ms, delivery.timeout.ms, max.block.ms, client.id, "
        "enable.idempotence (false only).",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="Producer properties file (--producer-property wins), with the settings of a secured "
        "listener: security.protocol, sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), "
        "sasl.jaas.config, ssl.truststore.location (ssl.truststore.type=PEM), ssl.keystore.location.",
    )
    parser.add_argument(
        "--producer.config",
        dest="producer_config",
        metavar="FILE",
        help="DEPRECATED (use --command-config): the same file.",
    )
    return parser


@dataclass(frozen=True, slots=True)
class ProducerSettings:
    """The producer ``ns`` asks for, after Kafka's precedence (option > property > file > default)."""

    acks: int
    compression: int
    linger_ms: int
    batch_size: int
    retries: int
    retry_backoff_ms: int
    request_timeout_ms: int
    delivery_timeout_ms: int
    max_block_ms: int
    client_id: str
    security: ClientSecurityConfig | None = None  # None: PLAINTEXT


def parse_acks(text: str) -> int:
    """``acks`` as the producer takes it (all/-1, 0, 1).

    Raises:
        UsageError: any other value (Kafka's message)."""
    acks = _ACKS.get(text.strip().lower())
    if acks is None:
        raise UsageError(
            f"Invalid value {text.strip().lower()} for configuration acks: expected all, -1, 0 or 1"
        )
    return acks


def compression_codec(name: str) -> int:
    """``compression.type`` as a codec id this producer can write.

    Raises:
        UsageError: an unknown name, or one with no codec installed (snappy)."""
    codecs = {v: k for k, v in Compression.NAMES.items()}
    codec = codecs.get(name.strip().lower())
    if codec is None:
        raise UsageError(f"Invalid compression codec '{name}': expected none, gzip, lz4 or zstd")
    if codec not in WRITABLE_COMPRESSION:
        raise UsageError(f"compression codec '{name}' cannot be written here (no {name} codec installed)")
    return codec


def producer_settings(ns: argparse.Namespace, err: TextIO) -> ProducerSettings:
    """Raises:
    UsageError: a value out of range or of the wrong type, snappy, enable.idempotence=true, or
        security settings that are wrong (the property is named).
    """
    path = config_file(ns.command_config, ns.producer_config, "--producer.config", err)
    props = merged_properties(path, ns.producer_property)
    warn_unknown(props, known_properties(PRODUCER_PROPERTIES), err)
    # Kafka's maybeMergeOptions: an option on the command line beats the property.
    overrides = {
        "acks": ns.request_required_acks,
        "linger.ms": ns.timeout,
        "batch.size": ns.batch_size,
        "retries": ns.message_send_max_retries,
        "retry.backoff.ms": ns.retry_backoff_ms,
        "request.timeout.ms": ns.request_timeout_ms,
        "max.block.ms": ns.max_block_ms,
        "compression.type": ns.compression_codec,
    }
    for name, value in overrides.items():
        if value is not None:
            props[name] = str(value)
    acks = parse_acks(props.get("acks", DEFAULT_ACKS))
    if bool_property(props, "enable.idempotence"):
        raise UsageError(
            "enable.idempotence=true is not supported: kraft's producer has no InitProducerId yet"
        )
    settings = ProducerSettings(
        acks=acks,
        compression=compression_codec(props.get("compression.type", "none")),
        linger_ms=int_property(props, "linger.ms", DEFAULT_LINGER_MS, minimum=0),
        batch_size=int_property(props, "batch.size", DEFAULT_BATCH_SIZE, minimum=0),
        retries=int_property(props, "retries", DEFAULT_RETRIES, minimum=0),
        retry_backoff_ms=int_property(props, "retry.backoff.ms", DEFAULT_RETRY_BACKOFF_MS, minimum=0),
        request_timeout_ms=int_property(props, "request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS, minimum=1),
        delivery_timeout_ms=int_property(
            props, "delivery.timeout.ms", DEFAULT_DELIVERY_TIMEOUT_MS, minimum=1
        ),
        max_block_ms=int_property(props, "max.block.ms", DEFAULT_MAX_BLOCK_MS, minimum=1),
        client_id=props.get("client.id", "console-producer"),
        security=security_of(props),
    )
    return settings


def validate(ns: argparse.Namespace) -> None:
    if ns.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if ns.topic is None:
        raise UsageError('Missing required argument "[topic]"')


# ---------------------------------------------------------------------------------------------------
# Running


_EOF: Final = object()


def _read_lines(stdin: TextIO, lines: queue.Queue[object], prompt: Callable[[], None] | None) -> None:
    """The reader thread: each line of ``stdin`` (or the exception that stopped it), then _EOF."""
    try:
        while True:
            if prompt is not None:
                prompt()
            line = stdin.readline()
            if not line:
                break
            lines.put(line)
    except Exception as e:  # handed to the main thread, which reports it
        lines.put(e)
    lines.put(_EOF)


def _default_stdin() -> TextIO:
    # Lines are UTF-8; bytes that are not pass through unchanged (surrogateescape).
    return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")


class _SendFailed(Exception):
    """A send failed; its error is already on stderr."""


def _without_line_break(line: str) -> str:
    line = line[:-1] if line.endswith("\n") else line
    return line[:-1] if line.endswith("\r") else line


def _run(ns: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    from kraft.client.connection import AdminError
    from kraft.client.producer import Producer, ProducerRecord

    validate(ns)
    settings = producer_settings(ns, err)
    reader = LineReader.from_properties(merged_properties(ns.reader_config, ns.property))
    bootstrap = bootstrap_arg(ns.bootstrap_server)
    producer = Producer(
        bootstrap,
        acks=settings.acks,
        compression=settings.compression,
        batch_size=settings.batch_size,
        retries=settings.retries,
        delivery_timeout_ms=settings.delivery_timeout_ms,
        client_id=settings.client_id,
        timeout_ms=settings.max_block_ms,
        request_timeout_ms=settings.request_timeout_ms,
        retry_backoff_ms=settings.retry_backoff_ms,
        security=settings.security,
    )
    pending: list[ProducerRecord] = []
    pending_bytes = 0

    def flush() -> None:
        nonlocal pending_bytes
        if not pending:
            return
        try:
            producer.send(ns.topic, pending)
        except (AdminError, ValueError) as e:
            print(f"ERROR Error when sending message to topic {ns.topic}: {one_line(e)}", file=err)
            raise _SendFailed from None
        finally:
            pending.clear()
            pending_bytes = 0

    interactive = stdin.isatty() and out.isatty()

    def prompt() -> None:
        out.write(">")
        out.flush()

    lines: queue.Queue[object] = queue.Queue()
    reader_thread = threading.Thread(
        target=_read_lines, args=(stdin, lines, prompt if interactive else None), daemon=True, name="stdin"
    )
    reader_thread.start()
    number = 0
    linger_deadline = 0.0
    try:
        with producer:
            while True:
                timeout = None if not pending else max(0.0, linger_deadline - time.monotonic())
                try:
                    item = lines.get(timeout=timeout)
                except queue.Empty:  # the linger passed: send what is there
                    flush()
                    continue
                if item is _EOF:
                    flush()
                    return 0
                if isinstance(item, Exception):
                    flush()
                    print(f"ERROR cannot read standard input: {item}", file=err)
                    return 1
                assert isinstance(item, str)
                number += 1
                try:
                    parsed = reader.parse(_without_line_break(item), number)
                except LineError as e:
                    flush()
                    print(f"ERROR {e}", file=err)
                    return 1
                record = ProducerRecord(value=parsed.value, key=parsed.key, headers=parsed.headers)
                if not pending:
                    linger_deadline = time.monotonic() + settings.linger_ms / 1000
                pending.append(record)
                pending_bytes += record.size_estimate()
                if ns.sync or pending_bytes >= MAX_PENDING_BYTES or settings.linger_ms == 0:
                    flush()
    except _SendFailed:
        return 1
    except KeyboardInterrupt:
        # Kafka's shutdown hook closes the producer, which sends what it holds first.
        with contextlib.suppress(_SendFailed):  # its error is on stderr already
            flush()
        return 130


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    *,
    err: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """``kraft console-producer``; ``stdin`` defaults to the process's (read as UTF-8)."""
    return run_tool(
        PROG,
        build_parser(),
        argv,
        out,
        err,
        lambda ns, o, e: _run(ns, o, e, stdin if stdin is not None else _default_stdin()),
    )


if __name__ == "__main__":
    sys.exit(main())
