"""kraft metadata-quorum: golden text of --status/--replication, argument rules, and the admin
client's leader discovery against scripted in-process servers speaking our real codec."""

from __future__ import annotations

import io
import json
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kraft.cli import cluster_processes as processes
from kraft.cli import metadata_quorum
from kraft.client.admin import AdminClient
from kraft.client.connection import Address, AdminError, parse_bootstrap
from kraft.client.quorum_info import (
    ClockDriftError,
    QuorumInfo,
    ReplicaInfo,
    format_replication,
    format_status,
    to_json,
)
from kraft.protocol.api import decode_request, encode_response
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import REGISTRY
from kraft.protocol.messages import api_versions as api_versions_msg
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import describe_quorum as describe_quorum_msg
from kraft.raft.types import Endpoint

ZERO = uuid.UUID(int=0)
NOW_MS = 10_000


def replica(
    replica_id: int, leo: int, fetch: int | None, caught_up: int | None, directory: int = 0
) -> ReplicaInfo:
    return ReplicaInfo(replica_id, uuid.UUID(int=directory), leo, fetch, caught_up)


def sample_info() -> QuorumInfo:
    return QuorumInfo(
        leader_id=1,
        leader_epoch=5,
        high_watermark=98,
        voters=(
            replica(1, 100, NOW_MS, NOW_MS, directory=1),
            replica(2, 98, 9_900, 9_500, directory=2),
            replica(3, 100, 9_950, 9_950),
        ),
        observers=(replica(4, 90, None, None, directory=3),),
        nodes={
            1: (Endpoint("CONTROLLER", "127.0.0.1", 9093),),
            2: (Endpoint("CONTROLLER", "127.0.0.1", 9094),),
            3: (Endpoint("CONTROLLER", "::1", 9095),),
        },
    )


# -----------------------------------------------------------------------------------------------
# Golden text


def test_status_matches_kafka_layout() -> None:
    expected = (
        "ClusterId:              MkU3OEVBNTcwNTJENDM2Qg\n"
        "LeaderId:               1\n"
        "LeaderEpoch:            5\n"
        "HighWatermark:          98\n"
        "MaxFollowerLag:         2\n"
        "MaxFollowerLagTimeMs:   500\n"
        'CurrentVoters:          [{"id": 1, "directoryId": "AAAAAAAAAAAAAAAAAAAAAQ", '
        '"endpoints": ["CONTROLLER://127.0.0.1:9093"]}, '
        '{"id": 2, "directoryId": "AAAAAAAAAAAAAAAAAAAAAg", "endpoints": ["CONTROLLER://127.0.0.1:9094"]}, '
        '{"id": 3, "directoryId": null, "endpoints": ["CONTROLLER://[::1]:9095"]}]\n'
        'CurrentObservers:       [{"id": 4, "directoryId": "AAAAAAAAAAAAAAAAAAAAAw"}]'
    )
    assert format_status("MkU3OEVBNTcwNTJENDM2Qg", sample_info()) == expected


def test_replication_table_matches_kafka_layout() -> None:
    expected = [
        "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t",  # noqa: E501
        "1     \tAAAAAAAAAAAAAAAAAAAAAQ\t100         \t0  \t10000             \t10000                \tLeader  \t",  # noqa: E501
        "2     \tAAAAAAAAAAAAAAAAAAAAAg\t98          \t2  \t9900              \t9500                 \tFollower\t",  # noqa: E501
        "3     \tAAAAAAAAAAAAAAAAAAAAAA\t100         \t0  \t9950              \t9950                 \tFollower\t",  # noqa: E501
        "4     \tAAAAAAAAAAAAAAAAAAAAAw\t90          \t10 \t-1                \t-1                   \tObserver\t",  # noqa: E501
    ]
    assert format_replication(sample_info(), NOW_MS).split("\n") == expected


def test_replication_human_readable_shows_ms_ago_and_keeps_unknown_as_minus_one() -> None:
    rows = [line.split("\t") for line in format_replication(sample_info(), NOW_MS, True).split("\n")]
    assert [r[4].strip() for r in rows[1:]] == ["0 ms ago", "100 ms ago", "50 ms ago", "-1"]
    assert [r[5].strip() for r in rows[1:]] == ["0 ms ago", "500 ms ago", "50 ms ago", "-1"]


def test_leader_row_comes_first_even_when_listed_later() -> None:
    info = QuorumInfo(
        leader_id=3,
        leader_epoch=2,
        high_watermark=7,
        voters=(replica(1, 7, 1, 1), replica(2, 6, 1, 1), replica(3, 8, 2, 2)),
        observers=(),
    )
    rows = format_replication(info, NOW_MS).split("\n")[1:]
    assert [(r.split("\t")[0].strip(), r.split("\t")[6].strip()) for r in rows] == [
        ("3", "Leader"),
        ("1", "Follower"),
        ("2", "Follower"),
    ]
    assert [r.split("\t")[3].strip() for r in rows] == ["0", "1", "2"]


def test_human_readable_refuses_timestamps_from_the_future() -> None:
    info = QuorumInfo(1, 1, 0, (replica(1, 0, NOW_MS + 5, NOW_MS + 5),), ())
    with pytest.raises(ClockDriftError, match="possible drift in system clock"):
        format_replication(info, NOW_MS, human_readable=True)


def test_max_follower_lag_time_is_zero_when_the_laggard_is_the_leader() -> None:
    info = QuorumInfo(1, 1, 0, (replica(1, 5, 1, 1), replica(2, 5, None, None)), ())
    # Ties keep the first voter: the leader, so the lag time is 0 even though 2's is unknown.
    assert info.max_follower_lag() == (0, 0)


def test_max_follower_lag_time_is_minus_one_when_a_caught_up_time_is_unknown() -> None:
    info = QuorumInfo(1, 1, 0, (replica(1, 9, 5, 5), replica(2, 3, 4, None)), ())
    assert info.max_follower_lag() == (6, -1)


def test_json_holds_status_and_replication_facts() -> None:
    data = to_json("cid", sample_info(), NOW_MS)
    assert data["clusterId"] == "cid"
    assert (data["leaderId"], data["leaderEpoch"], data["highWatermark"]) == (1, 5, 98)
    assert (data["maxFollowerLag"], data["maxFollowerLagTimeMs"]) == (2, 500)
    assert [v["lag"] for v in data["currentVoters"]] == [0, 2, 0]
    assert data["currentVoters"][2]["directoryId"] is None
    assert data["currentVoters"][2]["endpoints"] == ["CONTROLLER://[::1]:9095"]
    assert data["currentObservers"][0]["lastFetchTimestamp"] is None
    json.dumps(data)  # serialisable as is


def test_leader_missing_from_voters_is_an_error_not_a_wrong_table() -> None:
    info = QuorumInfo(9, 1, 0, (replica(1, 0, 1, 1),), ())
    with pytest.raises(ValueError, match="leader 9 is not among the current voters"):
        format_status("c", info)


# -----------------------------------------------------------------------------------------------
# Arguments


def run_cli(argv: list[str], client: Any = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def factory(_ns: Any) -> Any:
        assert client is not None, "the command should have failed before connecting"
        return client

    code = metadata_quorum.main(argv, out=out, err=err, client_factory=factory, now_ms=lambda: NOW_MS)
    return code, out.getvalue(), err.getvalue()


class FakeClient:
    def __init__(self, info: QuorumInfo, cluster_id: str = "cid") -> None:
        self.info = info
        self._cluster_id = cluster_id

    def describe_quorum(self) -> QuorumInfo:
        return self.info

    def cluster_id(self) -> str:
        return self._cluster_id


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["describe", "--status", "--replication"], "Only one of --status or --replication"),
        (["describe"], "One of --status or --replication must be specified"),
        (["describe", "--status", "--human-readable"], "--human-readable is only supported along with"),
    ],
)
def test_rejects_bad_describe_flags_with_kafkas_messages(args: list[str], message: str) -> None:
    code, out, err = run_cli(["--bootstrap-controller", "h:1", *args])
    assert code == 2
    assert message in err
    assert out == ""


def test_requires_exactly_one_bootstrap_option() -> None:
    code, _, _ = run_cli(["describe", "--status"])
    assert code == 2
    code, _, _ = run_cli(
        ["--bootstrap-server", "a:1", "--bootstrap-controller", "b:1", "describe", "--status"]
    )
    assert code == 2


def test_cli_prints_status_and_replication() -> None:
    client = FakeClient(sample_info(), "abc")
    code, out, _ = run_cli(["--bootstrap-controller", "h:1", "describe", "--status"], client)
    assert code == 0
    assert out == format_status("abc", sample_info()) + "\n"
    code, out, _ = run_cli(["--bootstrap-server", "h:1", "describe", "--replication"], client)
    assert code == 0
    assert out == format_replication(sample_info(), NOW_MS) + "\n"


def test_cli_json_output_parses() -> None:
    code, out, _ = run_cli(
        ["--bootstrap-controller", "h:1", "describe", "--status", "--json"], FakeClient(sample_info())
    )
    assert code == 0
    assert json.loads(out)["leaderId"] == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("localhost:9093", [Address("localhost", 9093)]),
        ("a:1, b:2", [Address("a", 1), Address("b", 2)]),
        ("[::1]:9093", [Address("::1", 9093)]),
    ],
)
def test_parses_bootstrap_lists(text: str, expected: list[Address]) -> None:
    assert parse_bootstrap(text) == expected


@pytest.mark.parametrize("text", ["", "host", "host:", "host:abc", "host:70000", "[::1:9093"])
def test_rejects_bad_bootstrap_lists(text: str) -> None:
    with pytest.raises(AdminError, match="bootstrap address"):
        parse_bootstrap(text)


def test_cli_reports_bad_bootstrap_address_without_a_traceback() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = metadata_quorum.main(
        ["--bootstrap-controller", "nohost", "describe", "--status"], out=out, err=err
    )
    assert code == 1
    assert "invalid bootstrap address 'nohost'" in err.getvalue()


# -----------------------------------------------------------------------------------------------
# Admin client against scripted servers (real sockets, real codec)

Handler = Callable[[int, int, Any], Any]


class ScriptedNode:
    """A loopback listener answering ApiVersions itself and other requests with ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[int] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self.port: int = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> Address:
        return Address("127.0.0.1", self.port)

    def close(self) -> None:
        self._sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_conn, args=(conn,), daemon=True).start()

    def _serve_conn(self, conn: socket.socket) -> None:
        decoder = FrameDecoder()
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                for payload in decoder.feed(data):
                    header, body = decode_request(payload, REGISTRY)
                    self.requests.append(header.api_key)
                    api = REGISTRY[header.api_key]
                    if header.api_key == api_versions_msg.API.key:
                        response = api_versions_response()
                    else:
                        response = self.handler(header.api_key, header.api_version, body)
                    conn.sendall(
                        frame(encode_response(api, header.api_version, header.correlation_id, response))
                    )


def api_versions_response() -> Any:
    cls = api_versions_msg.RESPONSE.cls
    keys = [
        cls.ApiVersion(api_key=api.key, min_version=api.served.low, max_version=min(api.served.high, 32767))
        for api in (api_versions_msg.API, describe_quorum_msg.API, describe_cluster_msg.API)
    ]
    return api_versions_msg.RESPONSE(error_code=0, api_keys=keys)


def quorum_response(
    error: int,
    leader_id: int,
    epoch: int,
    voters: list[tuple[int, int]] = (),
    ports: dict[int, int] | None = None,
) -> Any:  # type: ignore[assignment]
    cls = describe_quorum_msg.RESPONSE.cls
    partition_cls = cls.TopicData.PartitionData
    state_cls = partition_cls.ReplicaState
    partition = partition_cls(
        partition_index=0,
        error_code=error,
        leader_id=leader_id,
        leader_epoch=epoch,
        high_watermark=10 if error == 0 else 0,
        current_voters=[
            state_cls(
                replica_id=i, log_end_offset=leo, last_fetch_timestamp=NOW_MS, last_caught_up_timestamp=NOW_MS
            )
            for i, leo in voters
        ],
        observers=[],
    )
    nodes = [
        cls.Node(node_id=i, listeners=[cls.Node.Listener(name="CONTROLLER", host="127.0.0.1", port=p)])
        for i, p in sorted((ports or {}).items())
    ]
    topic = cls.TopicData(topic_name="__cluster_metadata", partitions=[partition])
    return describe_quorum_msg.RESPONSE(error_code=0, topics=[topic], nodes=nodes)


def cluster_response(controller_id: int, ports: dict[int, int]) -> Any:
    cls = describe_cluster_msg.RESPONSE.cls
    return describe_cluster_msg.RESPONSE(
        error_code=0,
        endpoint_type=2,
        cluster_id="the-cluster",
        controller_id=controller_id,
        brokers=[
            cls.DescribeClusterBroker(broker_id=i, host="127.0.0.1", port=p) for i, p in sorted(ports.items())
        ],
    )


@pytest.fixture
def nodes() -> Iterator[list[ScriptedNode]]:
    created: list[ScriptedNode] = []
    yield created
    for n in created:
        n.close()


def test_client_follows_describe_cluster_to_the_leader(nodes: list[ScriptedNode]) -> None:
    ports: dict[int, int] = {}

    def follower(key: int, _v: int, _body: Any) -> Any:
        if key == describe_cluster_msg.API.key:
            return cluster_response(controller_id=2, ports=ports)
        return quorum_response(6, 0, 0)

    def leader(key: int, _v: int, _body: Any) -> Any:
        if key == describe_cluster_msg.API.key:
            return cluster_response(controller_id=2, ports=ports)
        return quorum_response(0, 2, 7, voters=[(1, 9), (2, 10)], ports=ports)

    nodes += [ScriptedNode(follower), ScriptedNode(leader)]
    ports.update({1: nodes[0].port, 2: nodes[1].port})
    client = AdminClient([nodes[0].address], timeout_ms=5_000)
    info = client.describe_quorum()
    assert (info.leader_id, info.leader_epoch, info.high_watermark) == (2, 7, 10)
    assert [v.replica_id for v in info.voters] == [1, 2]
    assert info.nodes[2] == (Endpoint("CONTROLLER", "127.0.0.1", nodes[1].port),)
    assert client.cluster_id() == "the-cluster"


def test_client_retries_while_an_election_runs(nodes: list[ScriptedNode]) -> None:
    answers = iter([quorum_response(6, 0, 0), quorum_response(6, 0, 0)])

    def electing(key: int, _v: int, _body: Any) -> Any:
        if key == describe_cluster_msg.API.key:
            return describe_cluster_msg.RESPONSE(error_code=0, cluster_id="c", controller_id=-1)
        return next(answers, quorum_response(0, 1, 3, voters=[(1, 4)]))

    nodes.append(ScriptedNode(electing))
    client = AdminClient([nodes[0].address], timeout_ms=5_000, retry_backoff_ms=1)
    info = client.describe_quorum()
    assert (info.leader_id, info.leader_epoch) == (1, 3)
    assert nodes[0].requests.count(describe_quorum_msg.API.key) == 3


def test_client_times_out_naming_every_address_and_its_last_error(nodes: list[ScriptedNode]) -> None:
    def never_leader(key: int, _v: int, _body: Any) -> Any:
        if key == describe_cluster_msg.API.key:
            return describe_cluster_msg.RESPONSE(error_code=0, cluster_id="c", controller_id=-1)
        return quorum_response(6, 0, 0)

    nodes.append(ScriptedNode(never_leader))
    (dead_port,) = processes.free_ports(1)  # nothing listens there
    client = AdminClient(
        [nodes[0].address, Address("127.0.0.1", dead_port)], timeout_ms=1_000, retry_backoff_ms=10
    )
    with pytest.raises(AdminError) as excinfo:
        client.describe_quorum()
    message = str(excinfo.value)
    assert "timed out after 1000 ms waiting for DescribeQuorum" in message
    assert f"127.0.0.1:{nodes[0].port}: NOT_LEADER_OR_FOLLOWER" in message
    assert f"127.0.0.1:{dead_port}: cannot connect" in message
