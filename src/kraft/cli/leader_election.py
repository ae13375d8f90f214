"""``kraft leader-election``: Kafka's ``kafka-leader-election.sh`` against brokers.

    kraft leader-election --bootstrap-server HOST:PORT --election-type PREFERRED|UNCLEAN
        (--topic T --partition P | --all-topic-partitions | --path-to-json-file F) [--json]

Sends one ElectLeaders request (v1+ carries the election type; v0 knows only preferred elections)
to the controller through the broker Metadata names (spec controller.md 4.6, 6.8), following
NOT_CONTROLLER. The JSON file is Kafka's ``{"partitions": [{"topic": "foo", "partition": 1}, ...]}``.

Output is Kafka 4.x's ``LeaderElectionCommand``: ``Successfully completed leader election (PREFERRED)
for partitions foo-0, foo-1``, ``Valid replica already elected for partitions ...``
(ELECTION_NOT_NEEDED) and, per failed partition, ``Error completing leader election (PREFERRED) for
partition: foo-0: org.apache.kafka.common.errors.<Exception>: <message>`` followed on stderr by
``N replica(s) could not be elected``. Partitions are listed sorted (Kafka: hash order).

Exit status: 0 when every partition has a valid leader, 1 when an election failed or the cluster
could not be reached, 2 on misuse.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from kraft.cli.common import (
    Connect,
    UsageError,
    add_json_option,
    add_timeout_options,
    broker_tool,
    check_timeouts,
    one_line,
)
from kraft.client.broker_admin import (
    ApiError,
    ApiFailure,
    ElectionType,
)
from kraft.client.connection import AdminError
from kraft.protocol.error_codes import ErrorCode

PROG = "kraft leader-election"
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# Java exception classes whose names do not follow from the error code's name.
_EXCEPTION_NAMES = {
    ErrorCode.UNKNOWN_SERVER_ERROR: "UnknownServerException",
    ErrorCode.REQUEST_TIMED_OUT: "TimeoutException",
    ErrorCode.INVALID_TOPIC_EXCEPTION: "InvalidTopicException",
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "TopicAuthorizationException",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "ClusterAuthorizationException",
    ErrorCode.TOPIC_ALREADY_EXISTS: "TopicExistsException",
    ErrorCode.INVALID_CONFIG: "InvalidConfigurationException",
}

TopicPartition = tuple[str, int]


class _CommandError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="This tool attempts to elect a new leader for a set of topic partitions. The type of "
        "elections supported are preferred replicas and unclean replicas.",
    )
    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="A hostname and port for the broker to connect to, in the form host:port. REQUIRED.",
    )
    parser.add_argument(
        "--election-type",
        metavar="TYPE",
        help='Type of election to attempt: "preferred" or "unclean". REQUIRED.',
    )
    parser.add_argument(
        "--topic",
        metavar="TOPIC",
        help="Name of topic for which to perform an election. Not allowed if --path-to-json-file or "
        "--all-topic-partitions is specified.",
    )
    parser.add_argument(
        "--partition",
        type=int,
        metavar="P",
        help="Partition id for which to perform an election. REQUIRED if --topic is specified.",
    )
    parser.add_argument(
        "--all-topic-partitions",
        action="store_true",
        help="Perform election on all of the eligible topic partitions based on the type of election.",
    )
    parser.add_argument(
        "--path-to-json-file",
        metavar="FILE",
        help="The JSON file with the list of partitions for which leader elections should be performed, "
        'e.g. {"partitions": [{"topic": "foo", "partition": 1}]}',
    )
    add_json_option(parser)
    add_timeout_options(
        parser, request_timeout_ms_default=15_000, timeout_help="overall deadline of the election"
    )
    return parser


def validate(ns: argparse.Namespace) -> ElectionType:
    """Kafka's ``LeaderElectionCommandOptions.validate``, with its messages.

    Raises:
        UsageError: the arguments do not make one valid command.
    """
    missing = [
        name
        for name, value in (("bootstrap-server", ns.bootstrap_server), ("election-type", ns.election_type))
        if value is None
    ]
    if missing:
        raise UsageError(f"Missing required option(s): {', '.join(missing)}")
    chosen = [ns.topic is not None, ns.all_topic_partitions, ns.path_to_json_file is not None]
    if sum(chosen) != 1:
        raise UsageError(
            "One and only one of the following options is required: "
            "topic, all-topic-partitions, path-to-json-file"
        )
    if ns.topic is not None and ns.partition is None:
        raise UsageError("Missing required option(s): partition")
    if ns.topic is None and ns.partition is not None:
        raise UsageError("Option partition is only allowed if topic is used")
    if ns.partition is not None and not _INT32_MIN <= ns.partition <= _INT32_MAX:
        raise UsageError(f"--partition {ns.partition} is not a 32-bit integer")
    check_timeouts(ns)
    try:
        return ElectionType[ns.election_type.strip().upper()]
    except KeyError:
        raise UsageError(
            f"Invalid election type '{ns.election_type}': expected one of PREFERRED, UNCLEAN"
        ) from None


def parse_election_data(text: str) -> list[TopicPartition]:
    """Kafka's replica election JSON: ``{"partitions": [{"topic": T, "partition": P}, ...]}``.

    Raises:
        UsageError: not such a document, or a partition named twice.
    """
    if not text.strip():
        raise UsageError("Replica election data is empty")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"Replica election data is not valid JSON: {e}") from None
    if not isinstance(document, dict) or "partitions" not in document:
        raise UsageError('Replica election data is missing "partitions" field')
    entries = document["partitions"]
    if not isinstance(entries, list):
        raise UsageError('Replica election data\'s "partitions" field is not a list')
    partitions: list[TopicPartition] = []
    for entry in entries:
        topic = entry.get("topic") if isinstance(entry, dict) else None
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or isinstance(partition, bool) or not isinstance(partition, int):
            raise UsageError(
                f'Replica election data has an entry without a string "topic" and an integer "partition": '
                f"{json.dumps(entry)}"
            )
        partitions.append((topic, partition))
    duplicates = sorted({tp for tp in partitions if partitions.count(tp) > 1})
    if duplicates:
        raise UsageError(
            "Replica election data contains duplicate partitions: [" + ", ".join(map(_tp, duplicates)) + "]"
        )
    return partitions


def _tp(tp: TopicPartition) -> str:
    """Kafka's ``TopicPartition.toString``."""
    return f"{tp[0]}-{tp[1]}"


def exception_name(code: int) -> str:
    """The Java exception Kafka's admin client raises for ``code`` (``Errors.exception()``)."""
    known = ErrorCode.from_wire(code) or ErrorCode.UNKNOWN_SERVER_ERROR
    name = _EXCEPTION_NAMES.get(known)
    if name is None:
        name = "".join(word.capitalize() for word in known.name.split("_")) + "Exception"
    return f"org.apache.kafka.common.errors.{name}"


def format_results(
    election_type: ElectionType, results: Mapping[TopicPartition, ApiError | None]
) -> tuple[list[str], int]:
    """Kafka's output lines and the number of partitions that could not be elected."""
    succeeded = sorted(tp for tp, e in results.items() if e is None)
    noop = sorted(
        tp for tp, e in results.items() if e is not None and e.code == ErrorCode.ELECTION_NOT_NEEDED
    )
    failed = sorted(
        (tp, e) for tp, e in results.items() if e is not None and e.code != ErrorCode.ELECTION_NOT_NEEDED
    )
    kind = election_type.name
    lines: list[str] = []
    if succeeded:
        lines.append(
            f"Successfully completed leader election ({kind}) for partitions {', '.join(map(_tp, succeeded))}"
        )
    if noop:
        lines.append(f"Valid replica already elected for partitions {', '.join(map(_tp, noop))}")
    for tp, error in failed:
        lines.append(
            f"Error completing leader election ({kind}) for partition: {_tp(tp)}: "
            f"{exception_name(error.code)}: {error.text}"
        )
    return lines, len(failed)


def results_json(
    election_type: ElectionType, results: Mapping[TopicPartition, ApiError | None]
) -> dict[str, Any]:
    ordered = sorted(results.items())
    return {
        "electionType": election_type.name,
        "succeeded": [{"topic": t, "partition": p} for (t, p), e in ordered if e is None],
        "noop": [
            {"topic": t, "partition": p}
            for (t, p), e in ordered
            if e and e.code == ErrorCode.ELECTION_NOT_NEEDED
        ],
        "failed": [
            {"topic": t, "partition": p, "error": e.name, "message": e.text}
            for (t, p), e in ordered
            if e and e.code != ErrorCode.ELECTION_NOT_NEEDED
        ],
    }


def _partitions(ns: argparse.Namespace) -> list[TopicPartition] | None:
    if ns.path_to_json_file is not None:
        try:
            with open(ns.path_to_json_file, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise UsageError(f"cannot read {ns.path_to_json_file}: {e.strerror or e}") from None
        return parse_election_data(text)
    if ns.topic is not None:
        return [(ns.topic, ns.partition)]
    return None  # --all-topic-partitions


@broker_tool(PROG, build_parser)
def main(ns: argparse.Namespace, _args: list[str], connect: Connect, out: TextIO, err: TextIO) -> int:
    election_type = validate(ns)
    partitions = _partitions(ns)
    client = connect()
    try:
        with client:
            results = client.elect_leaders(election_type, partitions)
    except ApiFailure as e:
        if e.error.code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
            print("Not authorized to perform leader election", file=err)
        else:
            print(f"Error while making request: {e.error.name}: {e.error.text}", file=err)
        return 1
    except AdminError as e:
        print(f"Timeout waiting for election results: {one_line(e)}", file=err)
        return 1
    lines, failures = format_results(election_type, results)
    if ns.json:
        print(json.dumps(results_json(election_type, results), indent=2), file=out)
    else:
        for line in lines:
            print(line, file=out)
    if failures:
        print(f"{failures} replica(s) could not be elected", file=err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
