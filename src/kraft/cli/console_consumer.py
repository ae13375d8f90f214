"""``kraft console-consumer``: Kafka's ``kafka-console-consumer.sh``, records of a topic to stdout.

    kraft console-consumer --bootstrap-server HOST:PORT (--topic TOPIC [--partition N
        [--offset earliest|latest|N]] | --include REGEX) [--from-beginning] [--max-messages N]
        [--timeout-ms MS] [--property print.key=true ...] [--formatter-config FILE]
        [--consumer-property KEY=VALUE ...] [--command-config FILE] [--isolation-level LEVEL]

No consumer groups yet (kraft has no group coordinator): without ``--partition`` the tool reads
every partition of the topic (or of each topic ``--include`` matches) by assignment, from the end,
or from the beginning with ``--from-beginning``; ``--group`` (or ``group.id``) is refused. Records
are printed by Kafka's ``DefaultMessageFormatter`` rules (``print.timestamp``, ``print.partition``,
``print.offset``, ``print.headers``, ``print.key``, ``print.value``, ``key.separator``,
``line.separator``, ``headers.separator``, ``null.literal``), as raw bytes. At the end the tool
prints ``Processed a total of N messages`` to stderr, as Kafka's does; ``--timeout-ms`` ends it when
no record came for that long (exit 0, as in Kafka), ``--max-messages`` after N records. The
consumer properties (``--command-config`` FILE, KIP-1147, or the older ``--consumer.config``,
warned about as deprecated; ``--consumer-property`` wins) may hold ``security.protocol``, ``sasl.*``
and ``ssl.*`` to reach a secured listener (``kraft.client.security``).

Departures from Kafka: ``--property`` and ``--formatter-property`` are the same option (Kafka 4.2
deprecates the first); custom formatters and deserializers do not exist; a topic that does not
exist is an error (exit 1) once ``--timeout-ms`` (default: ``default.api.timeout.ms``, 60 s) has
passed, where Kafka's consumer waits for it.

Exit status: 0 at the end of the records asked for (or the timeout), 1 when the topic or a fetch
failed, 2 on misuse, 130 after Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
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
from kraft.cli.topics import include_pattern

if TYPE_CHECKING:
    from kraft.client.consumer import Consumer, ConsumerRecord
    from kraft.client.data import TopicPartition
    from kraft.client.security import ClientSecurityConfig

PROG = "kraft console-consumer"
DEFAULT_API_TIMEOUT_MS: Final = 60_000
CONSUMER_PROPERTIES: Final = frozenset(
    {
        "auto.offset.reset",
        "bootstrap.servers",
        "client.id",
        "default.api.timeout.ms",
        "enable.auto.commit",
        "fetch.max.bytes",
        "fetch.max.wait.ms",
        "fetch.min.bytes",
        "isolation.level",
        "max.partition.fetch.bytes",
        "request.timeout.ms",
        "retry.backoff.ms",
    }
)
_NO_GROUPS: Final = (
    "consumer groups are not supported yet (kraft has no group coordinator); without --group the console "
    "consumer reads every partition by assignment"
)


# ---------------------------------------------------------------------------------------------------
# Formatting (Kafka's DefaultMessageFormatter)


@dataclass(frozen=True, slots=True)
class MessageFormatter:
    print_timestamp: bool = False
    print_partition: bool = False
    print_offset: bool = False
    print_headers: bool = False
    print_key: bool = False
    print_value: bool = True
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    null_literal: bytes = b"null"

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> MessageFormatter:
        """Raises:
        UsageError: a custom deserializer was asked for (only raw bytes are printed).
        """
        for name in ("key.deserializer", "value.deserializer", "headers.deserializer"):
            if name in props:
                raise UsageError(f"{name} is not supported: kraft's console consumer prints raw bytes")

        def text(name: str, default: bytes) -> bytes:
            value = props.get(name)
            return default if value is None else value.encode("utf-8")

        return cls(
            print_timestamp=bool_property(props, "print.timestamp"),
            print_partition=bool_property(props, "print.partition"),
            print_offset=bool_property(props, "print.offset"),
            print_headers=bool_property(props, "print.headers"),
            print_key=bool_property(props, "print.key"),
            print_value=bool_property(props, "print.value", True),
            key_separator=text("key.separator", b"\t"),
            line_separator=text("line.separator", b"\n"),
            headers_separator=text("headers.separator", b","),
            null_literal=text("null.literal", b"null"),
        )

    def format(self, record: ConsumerRecord) -> bytes:
        """The bytes Kafka's formatter writes for ``record``: the chosen columns, each followed by
        ``key.separator`` when another column follows, the value then ``line.separator``."""
        columns: list[bytes] = []
        if self.print_timestamp:
            columns.append(f"{record.timestamp_type}:{record.timestamp_ms}".encode())
        if self.print_partition:
            columns.append(f"Partition:{record.partition}".encode())
        if self.print_offset:
            columns.append(f"Offset:{record.offset}".encode())
        if self.print_headers:
            if not record.headers:
                columns.append(b"NO_HEADERS")
            else:
                columns.append(
                    self.headers_separator.join(
                        h.key.encode("utf-8") + b":" + (self.null_literal if h.value is None else h.value)
                        for h in record.headers
                    )
                )
        if self.print_key:
            columns.append(self.null_literal if record.key is None else record.key)
        if self.print_value:
            columns.append(self.null_literal if record.value is None else record.value)
        # Each column is followed by key.separator when another one follows, the last by
        # line.separator (nothing at all when every column is off).
        return self.key_separator.join(columns) + self.line_separator if columns else b""


# ---------------------------------------------------------------------------------------------------
# Arguments


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="This tool helps to read data from Kafka topics and outputs it to standard output. "
        "No consumer groups yet: without --partition it reads every partition of the topic by "
        "assignment (from the end, or from the beginning with --from-beginning).",
    )
    parser.add_argument(
        "--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: The server(s) to connect to."
    )
    parser.add_argument("--topic", help="The topic to consume from.")
    parser.add_argument(
        "--include",
        metavar="REGEX",
        help="Regular expression of the topics to consume from (each partition of each, by assignment).",
    )
    parser.add_argument(
        "--partition",
        type=int,
        metavar="N",
        help="The partition to consume from. Consumption starts from the end of the partition unless "
        "'--offset' is specified.",
    )
    parser.add_argument(
        "--offset",
        metavar="OFFSET",
        help="The offset to consume from (a non-negative number), or 'earliest' which means from "
        "beginning, or 'latest' which means from end (default latest; needs --partition).",
    )
    parser.add_argument(
        "--from-beginning",
        action="store_true",
        help="Start with the earliest message present in the log rather than the latest message.",
    )
    parser.add_argument(
        "--max-messages",
        type=int,
        metavar="N",
        help="The maximum number of messages to consume before exiting. If not set, consumption is "
        "continual.",
    )
    parser.add_argument(
        "--timeout-ms",
        type=int,
        metavar="MS",
        help="If specified, exit if no message is available for consumption for the specified interval.",
    )
    parser.add_argument(
        "--property",
        "--formatter-property",
        dest="property",
        action="append",
        metavar="KEY=VALUE",
        help="A property of the message formatter: print.timestamp, print.key, print.offset, "
        "print.partition, print.headers, print.value (true|false), key.separator (default TAB), "
        "line.separator (default newline), headers.separator (,), null.literal (null).",
    )
    parser.add_argument(
        "--formatter-config", metavar="FILE", help="Properties file for the formatter (--property wins)."
    )
    parser.add_argument(
        "--consumer-property",
        "--command-property",
        dest="consumer_property",
        action="append",
        metavar="KEY=VALUE",
        help="A consumer property: fetch.max.wait.ms, fetch.min.bytes, fetch.max.bytes, "
        "max.partition.fetch.bytes, isolation.level, auto.offset.reset, request.timeout.ms, "
        "default.api.timeout.ms, retry.backoff.ms, client.id.",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="Consumer properties file (--consumer-property wins), with the settings of a secured "
        "listener: security.protocol, sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), "
        "sasl.jaas.config, ssl.truststore.location (ssl.truststore.type=PEM), ssl.keystore.location.",
    )
    parser.add_argument(
        "--consumer.config",
        dest="consumer_config",
        metavar="FILE",
        help="DEPRECATED (use --command-config): the same file.",
    )
    parser.add_argument(
        "--isolation-level",
        choices=("read_uncommitted", "read_committed"),
        help="read_committed reads up to the last stable offset; read_uncommitted (default) up to the high "
        "watermark.",
    )
    parser.add_argument(
        "--group",
        metavar="GROUP",
        help="Refused: kraft has no group coordinator yet (without --group every partition is read by "
        "assignment).",
    )
    parser.add_argument(
        "--skip-message-on-error",
        action="store_true",
        help="Accepted for compatibility (printing raw bytes cannot fail).",
    )
    return parser


@dataclass(frozen=True, slots=True)
class ConsumeSettings:
    """What to read and from where, once the arguments are checked."""

    start: int | None  # an offset with --partition --offset N, else None
    start_timestamp: int  # -2 earliest, -1 latest: where partitions without a --offset N start
    reset: str  # auto.offset.reset: earliest, latest or none
    max_messages: int  # -1: no limit
    timeout_ms: int | None
    api_timeout_ms: int
    request_timeout_ms: int
    retry_backoff_ms: int
    fetch_max_wait_ms: int
    fetch_min_bytes: int
    fetch_max_bytes: int
    max_partition_fetch_bytes: int
    isolation_level: int
    client_id: str
    security: ClientSecurityConfig | None = None  # None: PLAINTEXT


def _parse_offset(text: str) -> int | None:
    """None for earliest/latest (the caller knows which), else the offset."""
    lowered = text.lower()
    if lowered in ("earliest", "latest"):
        return None
    try:
        offset = int(text)
    except ValueError:
        offset = -1
    if offset < 0:
        raise UsageError(
            f"The provided offset value '{text}' is incorrect. Valid values are 'earliest', 'latest', or a "
            "non-negative long."
        )
    return offset


def settings_from_args(ns: argparse.Namespace, err: TextIO) -> ConsumeSettings:
    """Kafka's ``ConsoleConsumerOptions`` checks, with its messages.

    Raises:
        UsageError: the arguments do not make one valid command.
    """
    if ns.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if (ns.topic is None) == (ns.include is None):
        raise UsageError("Exactly one of --topic or --include is required.")
    if ns.partition is not None:
        if ns.topic is None:
            raise UsageError("The topic is required when partition is specified.")
        if ns.from_beginning and ns.offset is not None:
            raise UsageError("Options from-beginning and offset cannot be specified together.")
        if ns.partition < 0:
            raise UsageError(f"--partition must be >= 0, got {ns.partition}")
    elif ns.offset is not None:
        raise UsageError("The partition is required when offset is specified.")
    if ns.max_messages is not None and ns.max_messages < 0:
        raise UsageError(f"--max-messages must be >= 0, got {ns.max_messages}")
    path = config_file(ns.command_config, ns.consumer_config, "--consumer.config", err)
    props = merged_properties(path, ns.consumer_property)
    if ns.group is not None or "group.id" in props:
        raise UsageError(_NO_GROUPS)
    warn_unknown(props, known_properties(CONSUMER_PROPERTIES), err)
    reset = props.get("auto.offset.reset", "").strip().lower()
    if reset and ns.from_beginning and reset != "earliest":
        raise UsageError(
            f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={reset}', "
            "please remove one option"
        )
    if not reset:
        reset = "earliest" if ns.from_beginning else "latest"
    if reset not in ("earliest", "latest", "none"):
        raise UsageError(
            f"Invalid value {reset} for configuration auto.offset.reset: expected earliest, latest or none"
        )
    start: int | None = None
    start_timestamp = -2 if ns.from_beginning else -1
    if ns.offset is not None:
        start = _parse_offset(ns.offset)
        start_timestamp = -2 if ns.offset.lower() == "earliest" else -1
    isolation = ns.isolation_level or props.get("isolation.level", "read_uncommitted").strip().lower()
    if isolation not in ("read_uncommitted", "read_committed"):
        raise UsageError(f"Invalid value {isolation} for configuration isolation.level")
    timeout_ms = None if ns.timeout_ms is None or ns.timeout_ms < 0 else ns.timeout_ms
    api_timeout_ms = int_property(props, "default.api.timeout.ms", DEFAULT_API_TIMEOUT_MS, minimum=1)
    fetch_max_wait_ms = int_property(props, "fetch.max.wait.ms", 500, minimum=0)
    return ConsumeSettings(
        start=start,
        start_timestamp=start_timestamp,
        reset=reset,
        max_messages=-1 if ns.max_messages is None else ns.max_messages,
        timeout_ms=timeout_ms,
        api_timeout_ms=api_timeout_ms if timeout_ms is None else max(1, min(api_timeout_ms, timeout_ms)),
        request_timeout_ms=int_property(
            props, "request.timeout.ms", max(30_000, fetch_max_wait_ms + 1_000), minimum=fetch_max_wait_ms + 1
        ),
        retry_backoff_ms=int_property(props, "retry.backoff.ms", 100, minimum=0),
        fetch_max_wait_ms=fetch_max_wait_ms,
        fetch_min_bytes=int_property(props, "fetch.min.bytes", 1, minimum=0),
        fetch_max_bytes=int_property(props, "fetch.max.bytes", 52_428_800, minimum=0),
        max_partition_fetch_bytes=int_property(props, "max.partition.fetch.bytes", 1_048_576, minimum=0),
        isolation_level=1 if isolation == "read_committed" else 0,
        client_id=props.get("client.id", "console-consumer"),
        security=security_of(props),
    )


# ---------------------------------------------------------------------------------------------------
# Running


class _Output:
    """Writes the formatter's bytes to ``out`` (its binary buffer when it has one, as Kafka writes
    bytes to System.out; decoded as UTF-8 into a text-only stream such as a test's StringIO)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._buffer = getattr(out, "buffer", None)

    def write(self, data: bytes) -> None:
        if self._buffer is not None:
            self._buffer.write(data)
        else:
            self._out.write(data.decode("utf-8", "replace"))

    def flush(self) -> None:
        if self._buffer is not None:
            self._buffer.flush()
        self._out.flush()


def _partitions(ns: argparse.Namespace, consumer: Consumer) -> list[TopicPartition]:
    from kraft.client.data import DataError, TopicPartition

    if ns.include is not None:
        pattern = include_pattern(ns.include)
        topics = [t for t in consumer.topics(include_internal=False) if pattern.fullmatch(t.name)]
        if not topics:
            raise DataError(f"No topic matches --include {ns.include}")
    else:
        topics = [consumer.topic(ns.topic)]
    if ns.partition is not None:
        if ns.partition not in topics[0].partitions:
            raise DataError(
                f"Topic {ns.topic} has no partition {ns.partition} ({len(topics[0].partitions)} partitions)"
            )
        return [TopicPartition(ns.topic, ns.partition)]
    return [TopicPartition(t.name, p) for t in topics for p in t.partition_ids()]


def _run(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kraft.client.connection import AdminError
    from kraft.client.consumer import Consumer, OffsetReset

    settings = settings_from_args(ns, err)
    formatter = MessageFormatter.from_properties(merged_properties(ns.formatter_config, ns.property))
    if ns.include is not None:
        include_pattern(ns.include)  # a bad regex is misuse, found before connecting
    bootstrap = bootstrap_arg(ns.bootstrap_server)
    consumer = Consumer(
        bootstrap,
        client_id=settings.client_id,
        fetch_max_wait_ms=settings.fetch_max_wait_ms,
        fetch_min_bytes=settings.fetch_min_bytes,
        fetch_max_bytes=settings.fetch_max_bytes,
        max_partition_fetch_bytes=settings.max_partition_fetch_bytes,
        isolation_level=settings.isolation_level,
        auto_offset_reset=OffsetReset(settings.reset),
        timeout_ms=settings.api_timeout_ms,
        request_timeout_ms=settings.request_timeout_ms,
        retry_backoff_ms=settings.retry_backoff_ms,
        security=settings.security,
    )
    output = _Output(out)
    progress = _Progress()
    status = 0
    try:
        with consumer:
            partitions = _partitions(ns, consumer)
            consumer.assign(partitions)
            if settings.start is not None:
                consumer.seek(partitions[0], settings.start)
            elif settings.start_timestamp == -2:
                consumer.seek_to_beginning()
            else:
                consumer.seek_to_end()
            _consume(consumer, formatter, output, settings, progress, err)
    except AdminError as e:
        print(f"ERROR Error processing message, terminating consumer process: {one_line(e)}", file=err)
        status = 1
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        # The reader went away (`| head`): Kafka's words, the count, then main's quiet exit.
        print("Unable to write to standard out, closing consumer.", file=err)
        print(f"Processed a total of {progress.count} messages", file=err)
        raise
    print(f"Processed a total of {progress.count} messages", file=err)
    return status


@dataclass(slots=True)
class _Progress:
    count: int = 0  # records printed so far: reported however the tool ends


def _consume(
    consumer: Consumer,
    formatter: MessageFormatter,
    output: _Output,
    settings: ConsumeSettings,
    progress: _Progress,
    err: TextIO,
) -> None:
    last_record_at = time.monotonic()
    while settings.max_messages < 0 or progress.count < settings.max_messages:
        if settings.timeout_ms is None:
            wait_ms = 1_000
        else:
            wait_ms = int(settings.timeout_ms - (time.monotonic() - last_record_at) * 1000)
            if wait_ms <= 0:
                # Kafka logs its TimeoutException and ends normally (exit 0).
                print(
                    "ERROR Error processing message, terminating consumer process: no message within "
                    f"{settings.timeout_ms} ms (TimeoutException)",
                    file=err,
                )
                return
        records = consumer.poll(wait_ms)
        if records:
            last_record_at = time.monotonic()
        for record in records:
            output.write(formatter.format(record))
            progress.count += 1
            if progress.count == settings.max_messages:
                break
        output.flush()


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, *, err: TextIO | None = None) -> int:
    return run_tool(PROG, build_parser(), argv, out, err, _run)


if __name__ == "__main__":
    sys.exit(main())
