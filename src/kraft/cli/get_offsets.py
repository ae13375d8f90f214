"""``kraft get-offsets``: Kafka's ``kafka-get-offsets.sh`` (``GetOffsetShell``), one line per partition.

    kraft get-offsets --bootstrap-server HOST:PORT [--topic REGEX] [--partitions 0,1]
        [--topic-partitions 'REGEX:N,REGEX:A-B,...'] [--time latest|earliest|max-timestamp|-1|-2|-3|TS]
        [--exclude-internal-topics] [--json] [--command-config FILE]

Prints ``topic:partition:offset`` for each partition the filters select, from ListOffsets sent to
each partition's leader: ``--time`` -1/latest is the high watermark (the next offset to be written),
-2/earliest the log start, -3/max-timestamp the offset of the record with the largest timestamp, a
timestamp in ms the first offset whose timestamp is at least that (partitions with no such record
print nothing, as in Kafka). ``--topic`` is a regular expression (Kafka's ``IncludeList``; all
topics without it); ``--topic-partitions`` takes Kafka's ``TOPIC_REGEX[:N|:A-B|:A-|:-B]`` list and
cannot be used with ``--topic`` or ``--partitions``. A partition whose leader answers an error is
skipped with ``Skip getting offsets for topic-partition T-P due to error: ...`` on stderr.

Departures from Kafka: lines are sorted by topic, then partition number (Kafka sorts the text
``topic-partition``, so 10 before 2); ``--json`` prints one object instead; errors go to stderr with
exit 1 as Kafka's do, misuse exits 2 (Kafka: 1); ``--command-config`` takes the security
properties only (``security.protocol``, ``sasl.*``, ``ssl.*``; others are ignored); -6
(earliest-pending-upload, ListOffsets v11) is refused.

Exit status: 0 success, 1 no partition matched or the cluster could not be reached, 2 on misuse.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TextIO

from kraft.cli.common import (
    UsageError,
    add_command_config_option,
    add_json_option,
    add_timeout_options,
    bootstrap_arg,
    check_timeouts,
    one_line,
    run_tool,
    security_from_args,
)
from kraft.cli.topics import include_pattern

PROG = "kraft get-offsets"
_INT32_MAX: Final = 2**31 - 1
# Kafka's TOPIC_PARTITION_PATTERN: an optional topic regex, then ':' and a number or a range.
TOPIC_PARTITION_PATTERN: Final = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")


@dataclass(frozen=True, slots=True)
class PartitionRule:
    """One rule of the filter: topics ``topic`` matches whole, partitions in [low, high)."""

    topic: re.Pattern[str]
    low: int = 0
    high: int = _INT32_MAX

    def allows(self, topic: str, partition: int) -> bool:
        return bool(self.topic.fullmatch(topic)) and self.low <= partition < self.high


def parse_topic_partitions(text: str) -> list[PartitionRule]:
    """Kafka's ``--topic-partitions`` list: ``t1:1,t2:0-3,t3,t4:5-,t5:-3,:0``.

    Raises:
        UsageError: an item that does not match the pattern, or a bad regex.
    """
    rules: list[PartitionRule] = []
    for spec in text.split(","):
        match = TOPIC_PARTITION_PATTERN.fullmatch(spec)
        if match is None:
            raise UsageError(f"Invalid rule specification: {spec}")
        topic, single, low, high = (g or None for g in match.groups())
        pattern = include_pattern(topic) if topic is not None else re.compile(".*")
        if single is not None:
            rules.append(PartitionRule(pattern, int(single), int(single) + 1))
        else:
            rules.append(PartitionRule(pattern, int(low) if low else 0, int(high) if high else _INT32_MAX))
    return rules


def parse_partition_ids(text: str) -> set[int]:
    """``--partitions 0,1``: a set of partition ids (empty means all).

    Raises:
        UsageError: an id that is not a number.
    """
    if not text:
        return set()
    try:
        return {int(item.strip()) for item in text.split(",")}
    except ValueError:
        raise UsageError(
            f"--partitions expects a comma separated list of numeric partition ids, but received: {text}"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="An interactive shell for getting topic-partition offsets."
    )
    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST1:PORT1,...",
        help="REQUIRED. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2.",
    )
    parser.add_argument(
        "--topic",
        metavar="TOPIC",
        help="The topic to get the offsets for. It also accepts a regular expression. If not present, all "
        "topics are queried. Cannot be used if --topic-partitions is present.",
    )
    parser.add_argument(
        "--partitions",
        metavar="IDS",
        help="Comma separated list of partition ids to get the offsets for. If not present, all partitions "
        "of the topics are queried. Cannot be used if --topic-partitions is present.",
    )
    parser.add_argument(
        "--topic-partitions",
        metavar="topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3",
        help="Comma separated list of topic-partition patterns: an optional topic regex, then ':' and a "
        "partition number, a range NUMBER-NUMBER (upper bound exclusive), NUMBER- or -NUMBER, or nothing "
        "for every partition.",
    )
    parser.add_argument(
        "--time",
        default="latest",
        metavar="TIME",
        help="<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / "
        "-5 or latest-tiered (default latest). No offset is printed for a timestamp after the last "
        "record's.",
    )
    parser.add_argument(
        "--exclude-internal-topics",
        action="store_true",
        help="By default, internal topics are included. If specified, internal topics are excluded.",
    )
    add_json_option(parser)
    add_timeout_options(parser, request_timeout_ms_default=10_000)
    add_command_config_option(parser)
    return parser


def _run(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kraft.client.connection import AdminError
    from kraft.client.data import (
        UNKNOWN_OFFSET,
        DataClient,
        ListedOffset,
        TopicPartition,
        parse_list_offsets_time,
    )

    if ns.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if ns.topic_partitions is not None and (ns.topic is not None or ns.partitions is not None):
        raise UsageError("--topic-partitions cannot be used with --topic or --partitions")
    check_timeouts(ns)
    try:
        timestamp = parse_list_offsets_time(ns.time)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if ns.topic_partitions is not None:
        rules = parse_topic_partitions(ns.topic_partitions)
    else:
        ids = parse_partition_ids(ns.partitions or "")
        pattern = include_pattern(ns.topic) if ns.topic is not None else re.compile(".*")
        rules = [PartitionRule(pattern, 0, _INT32_MAX)]
        if ids:
            rules = [PartitionRule(pattern, i, i + 1) for i in sorted(ids)]
    bootstrap = bootstrap_arg(ns.bootstrap_server)
    client = DataClient(
        bootstrap,
        security=security_from_args(ns),
        client_id="GetOffsetShell",
        timeout_ms=ns.timeout_ms,
        request_timeout_ms=ns.request_timeout_ms,
    )
    try:
        with client:
            topics = client.topics(include_internal=not ns.exclude_internal_topics)
            selected = [
                TopicPartition(t.name, p)
                for t in topics
                for p in t.partition_ids()
                if any(rule.allows(t.name, p) for rule in rules)
            ]
            if not selected:
                print(
                    "Error occurred: Could not match any topic-partitions with the specified filters",
                    file=err,
                )
                return 1
            answers = client.list_offsets(selected, timestamp)
    except AdminError as e:
        print(f"Error occurred: {one_line(e)}", file=err)
        return 1
    found: list[tuple[TopicPartition, int]] = []
    for tp in sorted(answers):
        answer = answers[tp]
        if not isinstance(answer, ListedOffset):
            print(
                f"Skip getting offsets for topic-partition {tp} due to error: {answer.name}: {answer}",
                file=err,
            )
        elif answer.offset != UNKNOWN_OFFSET:
            found.append((tp, answer.offset))
    if ns.json:
        rows = [{"topic": tp.topic, "partition": tp.partition, "offset": offset} for tp, offset in found]
        print(json.dumps({"time": timestamp, "offsets": rows}, indent=2), file=out)
    else:
        for tp, offset in found:
            print(f"{tp.topic}:{tp.partition}:{offset}", file=out)
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, *, err: TextIO | None = None) -> int:
    return run_tool(PROG, build_parser(), argv, out, err, _run)


if __name__ == "__main__":
    sys.exit(main())
