"""``kraft log-dirs``: Kafka's ``kafka-log-dirs.sh``.

    kraft log-dirs --bootstrap-server HOST:PORT --describe [--broker-list 1,2] [--topic-list a,b]

Asks each broker (all live brokers, or those of ``--broker-list``) for its log directories
(DescribeLogDirs) and prints Kafka's three lines: ``Querying brokers for log directories
information``, ``Received log directory information from brokers 1,2,3`` and one JSON document::

    {"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"t-0","size":1024,
      "offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data/node-1/data"}]}],"version":1}

with the keys in the order Kafka's tool prints them, brokers by id, log directories by path and
partitions by topic and index (Kafka's order there is a hash map's). ``error`` is null for an
online directory, else the class name of Kafka's exception for its error code (the code's name
for codes a log directory does not answer with). ``--topic-list`` keeps the
partitions of those topics only. ``--json`` prints the document alone, indented.

Exit status: 0 when every broker answered, 1 when a broker of ``--broker-list`` is not live or a
broker could not be asked, 2 on misuse.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from kraft.cli.common import Connect, UsageError, add_json_option, add_timeout_options, broker_tool, one_line
from kraft.client.broker_admin import LogDirInfo
from kraft.client.connection import AdminError

PROG = "kraft log-dirs"

# Kafka's exception class of the error codes a log directory answers with.
_ERROR_CLASSES = {
    56: "org.apache.kafka.common.errors.KafkaStorageException",
    57: "org.apache.kafka.common.errors.LogDirNotFoundException",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="This tool helps to query log directory usage on the specified brokers."
    )
    parser.add_argument(
        "--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: the server(s) to use for bootstrapping"
    )
    parser.add_argument(
        "--describe",
        action="store_true",
        help="Describe the specified log directories on the specified brokers.",
    )
    parser.add_argument(
        "--topic-list",
        default="",
        metavar="TOPICS",
        help='The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be '
        "queried if no topic list is specified",
    )
    parser.add_argument(
        "--broker-list",
        default="",
        metavar="BROKERS",
        help='The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be '
        "queried if no broker list is specified",
    )
    add_json_option(parser)
    add_timeout_options(parser, request_timeout_ms_default=5_000)
    return parser


def _brokers(text: str) -> set[int]:
    try:
        return {int(x) for x in text.split(",") if x.strip()}
    except ValueError:
        raise UsageError(f"--broker-list must be broker ids separated by commas, not {text!r}") from None


def _error_name(info: LogDirInfo) -> str | None:
    if info.error is None:
        return None
    return _ERROR_CLASSES.get(info.error.code, info.error.name)


def document(by_broker: dict[int, list[LogDirInfo]]) -> dict[str, Any]:
    """Kafka's ``formatAsJson``, its keys in the order Kafka's tool prints them."""
    return {
        "brokers": [
            {
                "broker": broker,
                "logDirs": [
                    {
                        "partitions": [
                            {
                                "partition": f"{r.topic}-{r.partition}",
                                "size": r.size,
                                "offsetLag": r.offset_lag,
                                "isFuture": r.is_future,
                            }
                            for r in info.replicas
                        ],
                        "error": _error_name(info),
                        "logDir": info.log_dir,
                    }
                    for info in dirs
                ],
            }
            for broker, dirs in sorted(by_broker.items())
        ],
        "version": 1,
    }


@broker_tool(PROG, build_parser)
def main(ns: argparse.Namespace, _args: list[str], connect: Connect, out: TextIO, err: TextIO) -> int:
    if ns.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if not ns.describe:
        raise UsageError('Missing required argument "[describe]"')
    wanted = _brokers(ns.broker_list)
    topics = {t.strip() for t in ns.topic_list.split(",") if t.strip()}
    with connect() as client:
        try:
            live = {b.node_id for b in client.cluster_metadata().brokers}
        except AdminError as e:
            print(f"{PROG}: cannot find the brokers: {one_line(e)}", file=err)
            return 1
        missing = wanted - live
        if missing:
            print(
                "ERROR: The given brokers do not exist from --broker-list: "
                f"{','.join(map(str, sorted(missing)))}. Current existent brokers: "
                f"{','.join(map(str, sorted(live)))}",
                file=err,
            )
            return 1
        asked = sorted(wanted or live)
        if not ns.json:
            print("Querying brokers for log directories information", file=out)
        try:
            by_broker = client.describe_log_dirs(asked, topics or None)
        except AdminError as e:
            print(f"{PROG}: {one_line(e)}", file=err)
            return 1
    if ns.json:
        print(json.dumps(document(by_broker), indent=2), file=out)
    else:
        print(f"Received log directory information from brokers {','.join(map(str, asked))}", file=out)
        print(json.dumps(document(by_broker), separators=(",", ":")), file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
