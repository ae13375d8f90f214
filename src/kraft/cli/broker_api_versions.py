"""``kraft broker-api-versions``: Kafka's ``kafka-broker-api-versions.sh``.

    kraft broker-api-versions --bootstrap-server HOST:PORT [--json]

Finds the brokers through Metadata, asks each for its ApiVersions and prints Kafka 4.x's block per
broker (by id)::

    127.0.0.1:9092 (id: 1 rack: null isFenced: false) -> (
    →Produce(0): UNSUPPORTED,
    →Metadata(3): 0 to 13 [usable: 13],
    ...
    →ReadShareGroupStateSummary(87): UNSUPPORTED
    )

(→ is a TAB). As ``NodeApiVersions.toString(true)`` does, it lists every API the broker advertises
plus, as ``UNSUPPORTED``, every client API of Kafka 4.0 it does not; ranges print ``min to max`` (or
one number). ``[usable: v]`` is the highest version *this* client can speak (our codec's range in
``kraft.protocol.messages``), ``[unusable: node too new|old]`` when the ranges do not meet; APIs we
have no codec for print their range alone, as Kafka prints APIs it does not know (``UNKNOWN(k)``
for keys without a name). A broker that cannot be reached prints ``... -> ERROR: <reason>``.

Exit status: 0 when every broker answered, 1 when one did not or no broker could be found, 2 on
misuse.
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
    BrokerNode,
)
from kraft.client.connection import AdminError
from kraft.protocol.messages import REGISTRY

PROG = "kraft broker-api-versions"

# Kafka 4.0's ApiKeys names (the ZooKeeper-only keys 4-7 are gone from 4.0).
API_NAMES: dict[int, str] = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
    10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
    15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics",
    20: "DeleteTopics", 21: "DeleteRecords", 22: "InitProducerId", 23: "OffsetForLeaderEpoch",
    24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn", 27: "WriteTxnMarkers",
    28: "TxnOffsetCommit", 29: "DescribeAcls", 30: "CreateAcls", 31: "DeleteAcls", 32: "DescribeConfigs",
    33: "AlterConfigs", 34: "AlterReplicaLogDirs", 35: "DescribeLogDirs", 36: "SaslAuthenticate",
    37: "CreatePartitions", 38: "CreateDelegationToken", 39: "RenewDelegationToken",
    40: "ExpireDelegationToken", 41: "DescribeDelegationToken", 42: "DeleteGroups", 43: "ElectLeaders",
    44: "IncrementalAlterConfigs", 45: "AlterPartitionReassignments", 46: "ListPartitionReassignments",
    47: "OffsetDelete", 48: "DescribeClientQuotas", 49: "AlterClientQuotas",
    50: "DescribeUserScramCredentials", 51: "AlterUserScramCredentials", 52: "Vote", 53: "BeginQuorumEpoch",
    54: "EndQuorumEpoch", 55: "DescribeQuorum", 56: "AlterPartition", 57: "UpdateFeatures", 58: "Envelope",
    59: "FetchSnapshot", 60: "DescribeCluster", 61: "DescribeProducers", 62: "BrokerRegistration",
    63: "BrokerHeartbeat", 64: "UnregisterBroker", 65: "DescribeTransactions", 66: "ListTransactions",
    67: "AllocateProducerIds", 68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe",
    70: "ControllerRegistration", 71: "GetTelemetrySubscriptions", 72: "PushTelemetry",
    73: "AssignReplicasToDirs", 74: "ListClientMetricsResources", 75: "DescribeTopicPartitions",
    76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch", 79: "ShareAcknowledge",
    80: "AddRaftVoter", 81: "RemoveRaftVoter", 82: "UpdateRaftVoter", 83: "InitializeShareGroupState",
    84: "ReadShareGroupState", 85: "WriteShareGroupState", 86: "DeleteShareGroupState",
    87: "ReadShareGroupStateSummary",
}  # fmt: skip

# Kafka 4.0's ApiKeys.clientApis(): listed as UNSUPPORTED when a broker does not advertise them.
CLIENT_API_KEYS: frozenset[int] = frozenset(
    [0, 1, 2, 3, *range(8, 52), 55, 57, 60, 61, 64, 65, 66, 68, 69, 71, 72, *range(74, 82), *range(83, 88)]
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="This tool helps to retrieve broker version information."
    )
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: The server to connect to.")
    add_json_option(parser)
    add_timeout_options(parser, request_timeout_ms_default=5_000)
    return parser


def node_string(node: BrokerNode) -> str:
    """Kafka 4.x's ``Node.toString`` (Metadata lists only unfenced brokers)."""
    rack = "null" if node.rack is None else node.rack
    return f"{node.host}:{node.port} (id: {node.node_id} rack: {rack} isFenced: false)"


def usable_version(key: int, low: int, high: int) -> str | None:
    """`` [usable: v]`` (or why not) for an API this client has a codec for, else None."""
    api = REGISTRY.get(key)
    if api is None:
        return None
    if api.versions.high < low:
        return "unusable: node too new"
    if high < api.versions.low:
        return "unusable: node too old"
    return f"usable: {min(api.versions.high, high)}"


def api_line(key: int, versions: tuple[int, int] | None) -> str:
    name = API_NAMES.get(key)
    label = f"{name}({key})" if name is not None else f"UNKNOWN({key})"
    if versions is None:
        return f"{label}: UNSUPPORTED"
    low, high = versions
    text = f"{label}: {low}" if low == high else f"{label}: {low} to {high}"
    usable = usable_version(key, low, high) if name is not None else None
    return text if usable is None else f"{text} [{usable}]"


def format_versions(versions: Mapping[int, tuple[int, int]]) -> str:
    """``NodeApiVersions.toString(true)``: ``(``, one TAB-led line per API by key, ``)``."""
    keys = sorted(set(versions) | CLIENT_API_KEYS)
    return "(\n\t" + ",\n\t".join(api_line(k, versions.get(k)) for k in keys) + "\n)"


def versions_json(versions: Mapping[int, tuple[int, int]]) -> list[dict[str, Any]]:
    rows = []
    for key in sorted(versions):
        low, high = versions[key]
        usable = usable_version(key, low, high)
        rows.append(
            {
                "apiKey": key,
                "name": API_NAMES.get(key),
                "minVersion": low,
                "maxVersion": high,
                "usableVersion": int(usable.split(": ")[1])
                if usable and usable.startswith("usable")
                else None,
            }
        )
    return rows


def _node_json(node: BrokerNode, key: str, value: object) -> dict[str, Any]:
    """One broker's entry in ``--json`` output: its address and ``key`` (``apis`` or ``error``)."""
    return {"id": node.node_id, "host": node.host, "port": node.port, "rack": node.rack, key: value}


@broker_tool(PROG, build_parser)
def main(ns: argparse.Namespace, _args: list[str], connect: Connect, out: TextIO, err: TextIO) -> int:
    if ns.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    check_timeouts(ns)
    client = connect()
    failed = 0
    brokers_json: list[dict[str, Any]] = []
    with client:
        try:
            brokers = client.cluster_metadata().brokers
        except AdminError as e:
            print(f"{PROG}: cannot find the brokers: {one_line(e)}", file=err)
            return 1
        if not brokers:
            print(f"{PROG}: Metadata lists no brokers", file=err)
            return 1
        for node in brokers:
            try:
                versions = client.api_versions(node)
            except AdminError as e:
                failed += 1
                if ns.json:
                    brokers_json.append(_node_json(node, "error", one_line(e)))
                else:
                    print(f"{node_string(node)} -> ERROR: {one_line(e)}", file=out)
                continue
            if ns.json:
                brokers_json.append(_node_json(node, "apis", versions_json(versions)))
            else:
                print(f"{node_string(node)} -> {format_versions(versions)}", file=out)
    if ns.json:
        print(json.dumps({"brokers": brokers_json}, indent=2), file=out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
