"""``kraft topics``: Kafka's ``kafka-topics.sh`` against brokers' client listeners.

    kraft topics --bootstrap-server HOST:PORT --list [--topic REGEX] [--exclude-internal]
    kraft topics --bootstrap-server HOST:PORT --describe [--topic REGEX | --topic-id ID] [filters]
    kraft topics --bootstrap-server HOST:PORT --create --topic NAME [--partitions N]
        [--replication-factor R | --replica-assignment 1:2,2:3] [--config K=V ...] [--if-not-exists]
    kraft topics --bootstrap-server HOST:PORT --alter --topic REGEX --partitions N
        [--replica-assignment ...] [--if-exists]
    kraft topics --bootstrap-server HOST:PORT --delete --topic REGEX [--if-exists]

Options, argument rules and messages follow Kafka 4.x's ``TopicCommand``: ``--topic`` is a regular
expression (Kafka's ``TopicFilter.IncludeList``: commas mean "or", spaces and surrounding quotes
are dropped, the whole name must match) except with ``--create``; ``--list`` prints one name per
line; ``--create`` prints ``Created topic X.``; ``--alter`` (CreatePartitions) and ``--delete``
print nothing on success. ``--describe`` prints spec controller.md 8.1's layout: a TAB-separated
topic line (``Configs:`` lists the non-default DescribeConfigs entries) and one TAB-led line per
partition with ``Elr:`` and ``LastKnownElr:`` (``N/A`` when the broker had no
DescribeTopicPartitions and Metadata answered instead, and always with ``--topic-id``, which
describes through Metadata as Kafka does). ``--json`` prints one JSON object instead.

Departures from Kafka: errors go to stderr (Kafka prints "Error while executing topic command : ..."
to stdout), misuse exits 2 (Kafka: 1), configs in ``Configs:`` are sorted by name (Kafka: hash
order), and reassignments are not shown (no ListPartitionReassignments here).

Exit status: 0 success, 1 when an operation failed or the cluster could not be reached, 2 on misuse.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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
    BrokerAdminClient,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    PartitionInfo,
    TopicDescription,
    is_internal_topic,
)
from kraft.client.connection import AdminError
from kraft.common.uuids import uuid_from_base64, uuid_to_base64
from kraft.protocol.error_codes import ErrorCode

PROG = "kraft topics"
ACTIONS = ("list", "describe", "create", "alter", "delete")
REPORT_OPTIONS = (
    "under_replicated_partitions",
    "under_min_isr_partitions",
    "at_min_isr_partitions",
    "unavailable_partitions",
)
MIN_ISR = "min.insync.replicas"
_INT16_MAX = 0x7FFF
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_ALTER_HINT = " (To alter topic configurations, the kafka-configs tool can be used.)"
_COLLISION_WARNING = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
    "collide. To avoid issues it is best to use either, but not both."
)


class _CommandError(Exception):
    """The operation failed; each argument is one line for stderr."""


# ---------------------------------------------------------------------------------------------------
# Arguments


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="This tool helps to create, delete, describe, or change a topic."
    )
    parser.add_argument(
        "--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: The Kafka server to connect to."
    )
    actions = parser.add_argument_group("actions (exactly one)")
    actions.add_argument("--list", action="store_true", help="List all available topics.")
    actions.add_argument("--describe", action="store_true", help="List details for the given topics.")
    actions.add_argument("--create", action="store_true", help="Create a new topic.")
    actions.add_argument(
        "--alter",
        action="store_true",
        help="Alter the number of partitions and replica assignment." + _ALTER_HINT,
    )
    actions.add_argument("--delete", action="store_true", help="Delete a topic.")
    parser.add_argument(
        "--topic",
        metavar="TOPIC",
        help="The topic to create, alter, describe or delete. It also accepts a regular expression, except "
        "for --create option.",
    )
    parser.add_argument("--topic-id", metavar="TOPIC_ID", help="The topic-id to describe.")
    parser.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="The number of partitions for the topic being created or altered.",
    )
    parser.add_argument(
        "--replication-factor",
        type=int,
        metavar="R",
        help="The replication factor for each partition in the topic.",
    )
    parser.add_argument(
        "--replica-assignment",
        metavar="B1:B2,B3:B4",
        help="A list of manual partition-to-broker assignments for the topic being created or altered.",
    )
    parser.add_argument(
        "--config",
        action="append",
        metavar="NAME=VALUE",
        help="A topic configuration override (with --create).",
    )
    parser.add_argument(
        "--if-exists",
        action="store_true",
        help="With --alter, --delete or --describe: only if the topic exists.",
    )
    parser.add_argument(
        "--if-not-exists", action="store_true", help="With --create: only if the topic does not exist yet."
    )
    parser.add_argument(
        "--exclude-internal",
        action="store_true",
        help="Exclude internal topics when listing or describing topics.",
    )
    reports = parser.add_argument_group("describe filters")
    reports.add_argument(
        "--under-replicated-partitions", action="store_true", help="Only show under-replicated partitions."
    )
    reports.add_argument(
        "--under-min-isr-partitions",
        action="store_true",
        help="Only show partitions whose isr count is less than the configured minimum.",
    )
    reports.add_argument(
        "--at-min-isr-partitions",
        action="store_true",
        help="Only show partitions whose isr count is equal to the configured minimum.",
    )
    reports.add_argument(
        "--unavailable-partitions",
        action="store_true",
        help="Only show partitions whose leader is not available.",
    )
    reports.add_argument(
        "--topics-with-overrides", action="store_true", help="Only show topics that have overridden configs."
    )
    parser.add_argument(
        "--partition-size-limit-per-response",
        type=int,
        metavar="N",
        help="The maximum partition size to be included in one DescribeTopicPartitions response "
        "(default 2000).",
    )
    add_json_option(parser)
    add_timeout_options(parser, request_timeout_ms_default=10_000)
    return parser


def _opt(dest: str) -> str:
    return f'"[{dest.replace("_", "-")}]"'


def validate(ns: argparse.Namespace) -> None:
    """Kafka's ``TopicCommandOptions.checkArgs``, with its messages.

    Raises:
        UsageError: the arguments do not make one valid command.
    """
    used = [a for a in ACTIONS if getattr(ns, a)]
    if len(used) != 1:
        raise UsageError(
            "Command must include exactly one action: --list, --describe, --create, --alter or --delete"
        )
    action = used[0]
    if ns.bootstrap_server is None:
        raise UsageError("--bootstrap-server must be specified")
    if action == "describe" and ns.if_exists and ns.topic is None and ns.topic_id is None:
        raise UsageError("--topic or --topic-id is required to describe a topic")
    if action not in ("list", "describe") and ns.topic is None:
        raise UsageError(f"Missing required argument {_opt('topic')}")
    if action == "alter":
        if ns.config:
            raise UsageError(
                f"Option {_opt('config')} can't be used with option {_opt('alter')}{_ALTER_HINT}"
            )
        if ns.partitions is None:
            raise UsageError(f"Missing required argument {_opt('partitions')}")

    def only_with(dest: str, allowed: Iterable[str], present: bool | None = None) -> None:
        if not (getattr(ns, dest) if present is None else present):
            return
        if action not in allowed:
            raise UsageError(f"Option {_opt(dest)} can't be used with option {_opt(action)}")

    only_with("config", ("alter", "create"), bool(ns.config))
    only_with("partitions", ("alter", "create"), ns.partitions is not None)
    only_with("replication_factor", ("create",), ns.replication_factor is not None)
    only_with("replica_assignment", ("alter", "create"), ns.replica_assignment is not None)
    if action == "create" and ns.replica_assignment is not None:
        for other in ("partitions", "replication_factor"):
            if getattr(ns, other) is not None:
                raise UsageError(
                    f"Option {_opt('replica_assignment')} can't be used with option {_opt(other)}"
                )
    for report in REPORT_OPTIONS:
        only_with(report, ("describe",))
        if getattr(ns, report) and ns.topics_with_overrides:
            raise UsageError(
                f"Option {_opt(report)} can't be used with option {_opt('topics_with_overrides')}"
            )
    only_with("topics_with_overrides", ("describe",))
    only_with("if_exists", ("alter", "delete", "describe"))
    only_with("if_not_exists", ("create",))
    only_with("exclude_internal", ("list", "describe"))
    only_with("topic_id", ("describe",), ns.topic_id is not None)
    only_with(
        "partition_size_limit_per_response", ("describe",), ns.partition_size_limit_per_response is not None
    )
    limit = ns.partition_size_limit_per_response
    if limit is not None and not _INT32_MIN <= limit <= _INT32_MAX:
        raise UsageError(f"--partition-size-limit-per-response {limit} is not a 32-bit integer")
    if ns.partitions is not None and not _INT32_MIN <= ns.partitions <= _INT32_MAX:
        raise UsageError(f"--partitions {ns.partitions} is not a 32-bit integer")
    check_timeouts(ns)
    # Parse everything before connecting, so that misuse never waits for a cluster.
    ns.assignment = parse_replica_assignment(ns.replica_assignment) if ns.replica_assignment else {}
    ns.configs = parse_topic_configs(ns.config or ())
    ns.pattern = include_pattern(ns.topic) if ns.topic is not None and action != "create" else None
    ns.topic_uuid = _parse_topic_id(ns.topic_id) if ns.topic_id is not None else None
    if action == "create":
        rf = ns.replication_factor
        if rf is not None and not 1 <= rf <= _INT16_MAX:
            raise UsageError(f"The replication factor must be between 1 and {_INT16_MAX} inclusive")
        if ns.partitions is not None and ns.partitions < 1:
            raise UsageError("The partitions must be greater than 0")


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """``1:2,2:3`` -> {0: [1, 2], 1: [2, 3]} (Kafka's ``parseReplicaAssignment``).

    Raises:
        UsageError: a broker id that is not an integer, duplicates within a partition, or
            partitions with different replication factors.
    """
    out: dict[int, list[int]] = {}
    for index, item in enumerate(text.split(",")):
        try:
            brokers = [int(b.strip()) for b in item.split(":")]
        except ValueError:
            raise UsageError(
                f"Invalid replica assignment '{text}': '{item}' is not a ':'-separated list of broker ids"
            ) from None
        duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
        if duplicates:
            raise UsageError(
                "Partition replica lists may not contain duplicate entries: " + ",".join(map(str, duplicates))
            )
        out[index] = brokers
        if len(brokers) != len(out[0]):
            raise UsageError(
                f"Partition {index} has different replication factor: [{', '.join(map(str, brokers))}]"
            )
    return out


def parse_topic_configs(items: Sequence[str]) -> dict[str, str]:
    """``--config k=v`` values (Kafka splits on ``\\s*=\\s*`` and wants exactly two parts).

    Raises:
        UsageError: an item without exactly one ``=`` separating a key and a non-empty value.
    """
    configs: dict[str, str] = {}
    for item in items:
        parts = re.split(r"\s*=\s*", item)
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise UsageError(
                "requirement failed: Invalid topic config: all configs to be added must be in the format "
                '"key=val".'
            )
        configs[parts[0].strip()] = parts[1].strip()
    return configs


def include_pattern(raw: str) -> re.Pattern[str]:
    """Kafka's ``TopicFilter``: commas become alternatives, spaces and surrounding quotes go.

    Raises:
        UsageError: not a valid regular expression.
    """
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"""^["']+""", "", regex)
    regex = re.sub(r"""["']+$""", "", regex)
    try:
        return re.compile(regex)
    except re.error:
        raise UsageError(f"{regex} is an invalid regex.") from None


def select_topics(names: Iterable[str], pattern: re.Pattern[str] | None, exclude_internal: bool) -> list[str]:
    """Kafka's ``doGetTopics``: the names ``pattern`` matches whole (all without one), sorted."""
    return sorted(
        n
        for n in names
        if (pattern is None or pattern.fullmatch(n)) and not (exclude_internal and is_internal_topic(n))
    )


def has_collision_chars(name: str) -> bool:
    return "." in name or "_" in name


# ---------------------------------------------------------------------------------------------------
# Describe: pure rendering


@dataclass(frozen=True, slots=True)
class DescribeFilters:
    under_replicated: bool = False
    under_min_isr: bool = False
    at_min_isr: bool = False
    unavailable: bool = False
    with_overrides: bool = False

    @property
    def any_report(self) -> bool:
        return self.under_replicated or self.under_min_isr or self.at_min_isr or self.unavailable


def _java(value: str | None) -> str:
    return "null" if value is None else value  # Java prints a null value (sensitive entries) as null


def _ids(values: Sequence[int] | None) -> str:
    return "N/A" if values is None else ",".join(str(v) for v in values)


def non_default_configs(entries: Sequence[ConfigEntry]) -> list[ConfigEntry]:
    return sorted((e for e in entries if not e.is_default), key=lambda e: e.name)


def min_isr(entries: Sequence[ConfigEntry]) -> int:
    """The topic's effective ``min.insync.replicas`` (1 when the broker did not say)."""
    for entry in entries:
        if entry.name == MIN_ISR and entry.value is not None:
            try:
                return int(entry.value)
            except ValueError:
                return 1
    return 1


def _has_leader(p: PartitionInfo, live: frozenset[int]) -> bool:
    # Kafka's admin client resolves LeaderId against the live brokers; an unknown one is no leader.
    return p.leader >= 0 and p.leader in live


def partition_selected(
    p: PartitionInfo, entries: Sequence[ConfigEntry], live: frozenset[int], filters: DescribeFilters
) -> bool:
    """Kafka's ``DescribeOptions.shouldPrintTopicPartition``."""
    if not filters.any_report:
        return True
    has_leader = _has_leader(p, live)
    minimum = min_isr(entries)
    return (
        (filters.under_replicated and len(p.replicas) - len(p.isr) > 0)
        or (filters.unavailable and not has_leader)
        or (filters.under_min_isr and (not has_leader or len(p.isr) < minimum))
        or (filters.at_min_isr and len(p.isr) == minimum)
    )


def format_topic_line(desc: TopicDescription, entries: Sequence[ConfigEntry]) -> str:
    fields = [f"Topic: {desc.name}"]
    if desc.topic_id.int != 0:
        fields.append(f"TopicId: {uuid_to_base64(desc.topic_id)}")
    rf = len(desc.partitions[0].replicas) if desc.partitions else 0
    configs = ",".join(f"{e.name}={_java(e.value)}" for e in non_default_configs(entries))
    fields += [f"PartitionCount: {len(desc.partitions)}", f"ReplicationFactor: {rf}", f"Configs: {configs}"]
    return "\t".join(fields)


def format_partition_line(topic: str, p: PartitionInfo, live: frozenset[int]) -> str:
    leader = str(p.leader) if _has_leader(p, live) else "none"
    return (
        f"\tTopic: {topic}\tPartition: {p.partition}\tLeader: {leader}\tReplicas: {_ids(p.replicas)}"
        f"\tIsr: {_ids(p.isr)}\tElr: {_ids(p.elr)}\tLastKnownElr: {_ids(p.last_known_elr)}"
    )


def describe_lines(
    descriptions: Sequence[TopicDescription],
    configs: Mapping[str, Sequence[ConfigEntry]],
    live: frozenset[int],
    filters: DescribeFilters,
) -> list[str]:
    """The text ``kafka-topics --describe`` prints for ``descriptions`` (in the given order)."""
    lines: list[str] = []
    for desc in descriptions:
        entries = configs.get(desc.name, ())
        if not filters.any_report and (not filters.with_overrides or non_default_configs(entries)):
            lines.append(format_topic_line(desc, entries))
        if filters.with_overrides:
            continue
        for p in desc.partitions:
            if partition_selected(p, entries, live, filters):
                lines.append(format_partition_line(desc.name, p, live))
    return lines


def describe_json(
    descriptions: Sequence[TopicDescription],
    configs: Mapping[str, Sequence[ConfigEntry]],
    live: frozenset[int],
    filters: DescribeFilters,
) -> dict[str, Any]:
    topics = []
    for desc in descriptions:
        entries = configs.get(desc.name, ())
        overrides = non_default_configs(entries)
        if filters.with_overrides and not overrides:
            continue
        topic: dict[str, Any] = {
            "name": desc.name,
            "topicId": uuid_to_base64(desc.topic_id) if desc.topic_id.int else None,
            "internal": desc.internal,
            "partitionCount": len(desc.partitions),
            "replicationFactor": len(desc.partitions[0].replicas) if desc.partitions else 0,
            "configs": {e.name: e.value for e in overrides},
        }
        if not filters.with_overrides:
            partitions = [
                {
                    "partition": p.partition,
                    "leader": p.leader if _has_leader(p, live) else None,
                    "leaderEpoch": p.leader_epoch,
                    "replicas": list(p.replicas),
                    "isr": list(p.isr),
                    "elr": None if p.elr is None else list(p.elr),
                    "lastKnownElr": None if p.last_known_elr is None else list(p.last_known_elr),
                    "offlineReplicas": list(p.offline_replicas),
                }
                for p in desc.partitions
                if partition_selected(p, entries, live, filters)
            ]
            if filters.any_report and not partitions:
                continue
            topic["partitions"] = partitions
        topics.append(topic)
    return {"topics": topics}


# ---------------------------------------------------------------------------------------------------
# Commands


def _failure(error: ApiError, topic: str) -> str:
    """Kafka prints the exception's message; name the topic and the code when it does not."""
    text = error.text
    if not re.search(rf"(?<![\w.-]){re.escape(topic)}(?![\w-])(?!\.[\w-])", text):
        text = f"{text} (topic '{topic}': {error.name})"
    return text


def _raise_failures(results: Mapping[str, ApiError | None]) -> None:
    failures = [_failure(err, name) for name, err in sorted(results.items()) if err is not None]
    if failures:
        raise _CommandError(*failures)


def _ensure_exists(found: Sequence[str], requested: str | None, if_exists: bool) -> None:
    if requested and not if_exists and not found:
        raise _CommandError(f"Topic '{requested}' does not exist as expected")


def _emit(out: TextIO, ns: argparse.Namespace, text: str | None, data: Any) -> None:
    if ns.json:
        print(json.dumps(data, indent=2), file=out)
    elif text is not None:
        print(text, file=out)


def _list(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO) -> None:
    topics = client.list_topics(include_internal=not ns.exclude_internal)
    names = select_topics((t.name for t in topics), ns.pattern, ns.exclude_internal)
    # Kafka prints the joined names even when there are none (one empty line).
    _emit(out, ns, "\n".join(names), {"topics": names})


def _create(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO, err: TextIO) -> None:
    name: str = ns.topic
    if has_collision_chars(name):
        print(_COLLISION_WARNING, file=err if ns.json else out)
    topic = NewTopic(
        name=name,
        num_partitions=-1 if ns.partitions is None else ns.partitions,
        replication_factor=-1 if ns.replication_factor is None else ns.replication_factor,
        assignments=ns.assignment,
        configs=ns.configs,
    )
    error = client.create_topics([topic])[name]
    if error is None:
        _emit(out, ns, f"Created topic {name}.", {"topic": name, "created": True})
    elif error.code == ErrorCode.TOPIC_ALREADY_EXISTS and ns.if_not_exists:
        # Kafka swallows TopicExistsException under --if-not-exists and prints nothing.
        _emit(out, ns, None, {"topic": name, "created": False})
    else:
        raise _CommandError(_failure(error, name))


def _matching(ns: argparse.Namespace, client: BrokerAdminClient, include_internal: bool = True) -> list[str]:
    topics = client.list_topics(include_internal=include_internal)
    return select_topics((t.name for t in topics), ns.pattern, ns.exclude_internal)


def _alter(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO) -> None:
    assignment: dict[int, list[int]] = ns.assignment
    names = _matching(ns, client)
    _ensure_exists(names, ns.topic, ns.if_exists)
    if names:
        updates: dict[str, NewPartitions] = {}
        current: dict[str, TopicDescription | ApiError] = client.describe_topics(names) if assignment else {}
        for name in names:
            new_assignment = None
            if assignment:
                desc = current[name]
                if isinstance(desc, ApiError):
                    raise _CommandError(_failure(desc, name))
                # Kafka drops the entries for the partitions the topic already has.
                new_assignment = [ids for p, ids in sorted(assignment.items()) if p >= len(desc.partitions)]
            updates[name] = NewPartitions(ns.partitions, new_assignment)
        _raise_failures(client.create_partitions(updates))
    _emit(out, ns, None, {"altered": names, "partitions": ns.partitions})


def _delete(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO) -> None:
    names = _matching(ns, client)
    _ensure_exists(names, ns.topic, ns.if_exists)
    if names:
        _raise_failures(client.delete_topics(names))
    _emit(out, ns, None, {"deleted": names})


def _parse_topic_id(text: str) -> uuid.UUID:
    try:
        return uuid_from_base64(text.strip())
    except ValueError as e:
        raise UsageError(f"Invalid --topic-id: {e}") from None


def _describe(ns: argparse.Namespace, client: BrokerAdminClient, out: TextIO) -> None:
    topic_id: uuid.UUID | None = ns.topic_uuid
    if topic_id is not None and topic_id.int == 0:
        topic_id = None  # Kafka ignores the zero id and goes by name
    if topic_id is not None and ns.topic is not None and ns.if_exists and not ns.json:
        print(
            "Only topic id will be used when both --topic and --topic-id are specified and topicId is not "
            "Uuid.ZERO_UUID",
            file=out,
        )
    descriptions: list[TopicDescription] = []
    if topic_id is not None:
        listing = client.list_topics(include_internal=not ns.exclude_internal)
        if all(t.topic_id != topic_id for t in listing):
            if not ns.if_exists:
                raise _CommandError(f"TopicId '{uuid_to_base64(topic_id)}' does not exist as expected")
        else:
            found = client.describe_topics_by_id([topic_id])[topic_id]
            if isinstance(found, ApiError):
                raise _CommandError(_failure(found, uuid_to_base64(topic_id)))
            descriptions.append(found)
    else:
        names = _matching(ns, client, include_internal=not ns.exclude_internal)
        _ensure_exists(names, ns.topic, ns.if_exists)
        limit = ns.partition_size_limit_per_response
        described = client.describe_topics(names, partition_limit=2000 if limit is None else limit)
        for name in names:
            result = described[name]
            if isinstance(result, ApiError):
                raise _CommandError(_failure(result, name))
            descriptions.append(result)
    configs: dict[str, list[ConfigEntry]] = {}
    live: frozenset[int] = frozenset()
    if descriptions:
        answered = client.describe_configs([ConfigResource.topic(d.name) for d in descriptions])
        for resource, entries in answered.items():
            if isinstance(entries, ApiError):
                raise _CommandError(_failure(entries, resource.name))
            configs[resource.name] = entries
        live = frozenset(b.node_id for b in client.describe_cluster())
    filters = DescribeFilters(
        under_replicated=ns.under_replicated_partitions,
        under_min_isr=ns.under_min_isr_partitions,
        at_min_isr=ns.at_min_isr_partitions,
        unavailable=ns.unavailable_partitions,
        with_overrides=ns.topics_with_overrides,
    )
    if ns.json:
        print(json.dumps(describe_json(descriptions, configs, live, filters), indent=2), file=out)
        return
    for line in describe_lines(descriptions, configs, live, filters):
        print(line, file=out)


# ---------------------------------------------------------------------------------------------------
# main


@broker_tool(PROG, build_parser)
def main(ns: argparse.Namespace, _args: list[str], connect: Connect, out: TextIO, err: TextIO) -> int:
    validate(ns)
    client = connect()
    try:
        with client:
            if ns.list:
                _list(ns, client, out)
            elif ns.create:
                _create(ns, client, out, err)
            elif ns.alter:
                _alter(ns, client, out)
            elif ns.delete:
                _delete(ns, client, out)
            else:
                _describe(ns, client, out)
    except _CommandError as e:
        for line in e.args:
            print(f"Error while executing topic command : {line}", file=err)
        return 1
    except AdminError as e:
        print(f"Error while executing topic command : {one_line(e)}", file=err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
