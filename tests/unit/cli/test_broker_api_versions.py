"""kraft broker-api-versions: Kafka 4.x's kafka-broker-api-versions.sh blocks against in-process fake
brokers: brokers found through Metadata, one ApiVersions per broker, usable versions against our own
codec, UNSUPPORTED client APIs, unknown keys, unreachable brokers, and misuse."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator

import pytest
from fake_brokers import FakeBroker, FakeCluster, metadata_answer

from kraft.cli import broker_api_versions
from kraft.protocol.api import Api
from kraft.protocol.messages import REGISTRY
from kraft.protocol.messages import metadata as metadata_msg
from kraft.protocol.schema import Versions

pytestmark = pytest.mark.timeout(60)

# What our fake broker's listener advertises (spec 6.2's broker APIs), as Kafka 4.x prints it (→ is a TAB).
BROKER_BLOCK = """
(
→Produce(0): UNSUPPORTED,
→Fetch(1): UNSUPPORTED,
→ListOffsets(2): UNSUPPORTED,
→Metadata(3): 0 to 13 [usable: 13],
→OffsetCommit(8): UNSUPPORTED,
→OffsetFetch(9): UNSUPPORTED,
→FindCoordinator(10): UNSUPPORTED,
→JoinGroup(11): UNSUPPORTED,
→Heartbeat(12): UNSUPPORTED,
→LeaveGroup(13): UNSUPPORTED,
→SyncGroup(14): UNSUPPORTED,
→DescribeGroups(15): UNSUPPORTED,
→ListGroups(16): UNSUPPORTED,
→SaslHandshake(17): UNSUPPORTED,
→ApiVersions(18): 0 to 4 [usable: 4],
→CreateTopics(19): 0 to 7 [usable: 7],
→DeleteTopics(20): 0 to 6 [usable: 6],
→DeleteRecords(21): UNSUPPORTED,
→InitProducerId(22): UNSUPPORTED,
→OffsetForLeaderEpoch(23): UNSUPPORTED,
→AddPartitionsToTxn(24): UNSUPPORTED,
→AddOffsetsToTxn(25): UNSUPPORTED,
→EndTxn(26): UNSUPPORTED,
→WriteTxnMarkers(27): UNSUPPORTED,
→TxnOffsetCommit(28): UNSUPPORTED,
→DescribeAcls(29): UNSUPPORTED,
→CreateAcls(30): UNSUPPORTED,
→DeleteAcls(31): UNSUPPORTED,
→DescribeConfigs(32): 0 to 4 [usable: 4],
→AlterConfigs(33): UNSUPPORTED,
→AlterReplicaLogDirs(34): UNSUPPORTED,
→DescribeLogDirs(35): UNSUPPORTED,
→SaslAuthenticate(36): UNSUPPORTED,
→CreatePartitions(37): 0 to 3 [usable: 3],
→CreateDelegationToken(38): UNSUPPORTED,
→RenewDelegationToken(39): UNSUPPORTED,
→ExpireDelegationToken(40): UNSUPPORTED,
→DescribeDelegationToken(41): UNSUPPORTED,
→DeleteGroups(42): UNSUPPORTED,
→ElectLeaders(43): 0 to 2 [usable: 2],
→IncrementalAlterConfigs(44): 0 to 1 [usable: 1],
→AlterPartitionReassignments(45): UNSUPPORTED,
→ListPartitionReassignments(46): UNSUPPORTED,
→OffsetDelete(47): UNSUPPORTED,
→DescribeClientQuotas(48): UNSUPPORTED,
→AlterClientQuotas(49): UNSUPPORTED,
→DescribeUserScramCredentials(50): UNSUPPORTED,
→AlterUserScramCredentials(51): UNSUPPORTED,
→DescribeQuorum(55): UNSUPPORTED,
→UpdateFeatures(57): UNSUPPORTED,
→DescribeCluster(60): 0 to 2 [usable: 2],
→DescribeProducers(61): UNSUPPORTED,
→UnregisterBroker(64): UNSUPPORTED,
→DescribeTransactions(65): UNSUPPORTED,
→ListTransactions(66): UNSUPPORTED,
→ConsumerGroupHeartbeat(68): UNSUPPORTED,
→ConsumerGroupDescribe(69): UNSUPPORTED,
→GetTelemetrySubscriptions(71): UNSUPPORTED,
→PushTelemetry(72): UNSUPPORTED,
→ListClientMetricsResources(74): UNSUPPORTED,
→DescribeTopicPartitions(75): 0 [usable: 0],
→ShareGroupHeartbeat(76): UNSUPPORTED,
→ShareGroupDescribe(77): UNSUPPORTED,
→ShareFetch(78): UNSUPPORTED,
→ShareAcknowledge(79): UNSUPPORTED,
→AddRaftVoter(80): UNSUPPORTED,
→RemoveRaftVoter(81): UNSUPPORTED,
→InitializeShareGroupState(83): UNSUPPORTED,
→ReadShareGroupState(84): UNSUPPORTED,
→WriteShareGroupState(85): UNSUPPORTED,
→DeleteShareGroupState(86): UNSUPPORTED,
→ReadShareGroupStateSummary(87): UNSUPPORTED
)
""".strip().replace("→", "\t")


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster() as c:
        yield c


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = broker_api_versions.main(argv, out, err=err)
    return code, out.getvalue(), err.getvalue()


def bootstrap(broker: FakeBroker) -> list[str]:
    return [
        "--bootstrap-server",
        f"127.0.0.1:{broker.port}",
        "--timeout-ms",
        "3000",
        "--request-timeout-ms",
        "2000",
    ]


def test_prints_one_block_per_broker_found_through_metadata(cluster: FakeCluster) -> None:
    b1, b2 = cluster.add_broker(1), cluster.add_broker(2)
    b2.on(metadata_msg.API, metadata_answer([b2, (1, "127.0.0.1", b1.port, "rack-a")], controller_id=2))
    code, out, err = run(bootstrap(b2))
    assert (code, err) == (0, "")
    assert out == (
        f"127.0.0.1:{b1.port} (id: 1 rack: rack-a isFenced: false) -> {BROKER_BLOCK}\n"
        f"127.0.0.1:{b2.port} (id: 2 rack: null isFenced: false) -> {BROKER_BLOCK}\n"
    )
    (request,) = b2.requests(metadata_msg.API)
    assert request.body.topics == []
    assert not b1.received  # ApiVersions is answered by the server itself; nothing else was asked


def test_usable_versions_are_this_clients_and_unknown_apis_are_named_so(cluster: FakeCluster) -> None:
    odd = [
        dataclasses.replace(REGISTRY[3], served_versions=Versions(1, 20)),  # newer than our codec
        dataclasses.replace(REGISTRY[60], served_versions=Versions(5, 6)),  # all above what we speak
        dataclasses.replace(REGISTRY[1], served_versions=Versions(4, 17)),
        Api(key=0, name="Produce", versions=Versions(0, 12), flexible=Versions(9, 0x7FFF),
            request=REGISTRY[3].request, response=REGISTRY[3].response),  # Kafka 4.0's advertised range
        Api(key=8, name="OffsetCommit", versions=Versions(2, 9), flexible=Versions(8, 0x7FFF),
            request=REGISTRY[3].request, response=REGISTRY[3].response),  # no codec here
        Api(key=200, name="Future", versions=Versions(0, 1), flexible=Versions(0, 0x7FFF),
            request=REGISTRY[3].request, response=REGISTRY[3].response),  # a key Kafka 4.0 does not name
    ]  # fmt: skip
    b1 = cluster.add_broker(1, api_keys=(18,), extra_apis=odd)
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    code, out, _ = run(bootstrap(b1))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"127.0.0.1:{b1.port} (id: 1 rack: null isFenced: false) -> ("
    assert lines[1:5] == [
        "\tProduce(0): 0 to 12 [usable: 12],",  # our Produce codec describes 3-13
        "\tFetch(1): 4 to 17 [usable: 17],",
        "\tListOffsets(2): UNSUPPORTED,",
        "\tMetadata(3): 1 to 20 [usable: 13],",
    ]
    assert "\tOffsetCommit(8): 2 to 9," in lines
    assert "\tDescribeCluster(60): 5 to 6 [unusable: node too new]," in lines
    assert "\tApiVersions(18): 0 to 4 [usable: 4]," in lines
    assert lines[-2:] == ["\tUNKNOWN(200): 0 to 1", ")"]


def test_an_unreachable_broker_prints_an_error_line_and_exits_1(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1)
    b1.on(metadata_msg.API, metadata_answer([b1, (7, "127.0.0.1", 1, None)], controller_id=1))
    code, out, _ = run(
        ["--bootstrap-server", f"127.0.0.1:{b1.port}", "--timeout-ms", "2000", "--request-timeout-ms", "1000"]
    )
    assert code == 1
    first, second = out.split("\n)\n")[0], out.split("\n)\n")[1]
    assert first == f"127.0.0.1:{b1.port} (id: 1 rack: null isFenced: false) -> {BROKER_BLOCK}"[:-2]
    assert second.startswith(
        "127.0.0.1:1 (id: 7 rack: null isFenced: false) -> ERROR: timed out after 2000 ms waiting for "
        "ApiVersions of node 7; 127.0.0.1:1: cannot connect"
    )
    assert second.count("\n") == 1


def test_json_output(cluster: FakeCluster) -> None:
    b1 = cluster.add_broker(1, api_keys=(3, 18, 75))
    b1.on(metadata_msg.API, metadata_answer([b1], controller_id=1))
    code, out, _ = run([*bootstrap(b1), "--json"])
    assert code == 0
    assert json.loads(out) == {
        "brokers": [
            {
                "id": 1,
                "host": "127.0.0.1",
                "port": b1.port,
                "rack": None,
                "apis": [
                    {"apiKey": 3, "name": "Metadata", "minVersion": 0, "maxVersion": 13, "usableVersion": 13},
                    {
                        "apiKey": 18,
                        "name": "ApiVersions",
                        "minVersion": 0,
                        "maxVersion": 4,
                        "usableVersion": 4,
                    },
                    {
                        "apiKey": 75,
                        "name": "DescribeTopicPartitions",
                        "minVersion": 0,
                        "maxVersion": 0,
                        "usableVersion": 0,
                    },
                ],
            }
        ]
    }


def test_an_unreachable_cluster_exits_1() -> None:
    code, out, err = run(["--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "200"])
    assert (code, out) == (1, "")
    assert err.startswith(
        "kraft broker-api-versions: cannot find the brokers: "
        "timed out after 200 ms waiting for the cluster metadata"
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], 'Missing required argument "[bootstrap-server]"'),
        (["--bootstrap-server", "h"], "invalid bootstrap address 'h': expected HOST:PORT"),
        (
            ["--bootstrap-server", "h:1", "--timeout-ms", "0"],
            "--timeout-ms and --request-timeout-ms must be positive",
        ),
    ],
)
def test_misuse_exits_2(argv: list[str], message: str) -> None:
    code, out, err = run(argv)
    assert (code, out, err) == (2, "", f"{broker_api_versions.PROG}: {message}\n")
