"""ControllerApis: Metadata, DescribeCluster and DescribeQuorum as real clients see them.

kafka-python 3.0.12 is the judge: its KafkaAdminClient talks to an in-process server whose core is a
fake, so these tests pin what the listener answers, not what raft decides.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient

from kraft.net.codecs import CODECS
from kraft.net.controller_apis import ADMIN_SOURCE_BASE, ControllerApis, served_apis
from kraft.net.server import InboundRequest, KafkaServer
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.headers import RequestHeader
from kraft.protocol.messages import describe_cluster, describe_quorum, metadata, vote
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    ReplicaState,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
)
from kraft.raft.rpc import api_key_of
from kraft.raft.types import Endpoint, LeaderAndEpoch, ReplicaKey

pytestmark = pytest.mark.timeout(60)

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"


class FakeCore:
    def __init__(self, node_id: int, leader: LeaderAndEpoch) -> None:
        self._node_id = node_id
        self.leader = leader
        self.submitted: list[tuple[int, RaftRequest]] = []

    @property
    def node_id(self) -> int:
        return self._node_id

    @property
    def cluster_id(self) -> str:
        return CLUSTER_ID

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self.leader

    async def submit(self, source: int, request: RaftRequest) -> RaftResponse:
        self.submitted.append((source, request))
        assert isinstance(request, DescribeQuorumRequest)
        return DescribeQuorumResponse(
            leader_id=self._node_id,
            leader_epoch=self.leader.epoch,
            high_watermark=17,
            current_voters=tuple(ReplicaState(replica_id=i, log_end_offset=17) for i in (1, 2, 3)),
            nodes={i: (Endpoint("CONTROLLER", "127.0.0.1", 1000 + i),) for i in (1, 2, 3)},
        )


class FakeForwarder:
    def __init__(self, answer: Any = None) -> None:
        self.answer = answer
        self.calls: list[int] = []

    async def call(self, destination: int, api: Any, build_body: Any) -> tuple[int, Any]:
        self.calls.append(destination)
        if self.answer is None:
            raise ConnectionError("leader unreachable")
        version = api.served.high
        build_body(version)
        return version, CODECS[api_key_of(self.answer)].encode_response(self.answer, version, "CONTROLLER")


def make_apis(core: FakeCore, voters: dict[int, Endpoint], forwarder: Any = None) -> ControllerApis:
    return ControllerApis(
        core=core,
        listener_name="CONTROLLER",
        voter_endpoints=voters,
        local_endpoint=voters[core.node_id],
        forwarder=forwarder,
    )


def request(api: Any, version: int, body: Any, connection_id: int = 1) -> InboundRequest:
    header = RequestHeader(api_key=api.key, api_version=version, correlation_id=1, client_id="t")
    return InboundRequest(
        header=header, api=api, body=body, connection_id=connection_id, peer="p", listener="C"
    )


VOTERS = {i: Endpoint("CONTROLLER", "127.0.0.1", 1000 + i) for i in (1, 2, 3)}


def test_metadata_lists_only_the_leader_when_one_is_known() -> None:
    apis = make_apis(FakeCore(1, LeaderAndEpoch(2, 5)), VOTERS)
    body = asyncio.run(apis.handle(request(metadata.API, 13, metadata.REQUEST.cls(topics=[]))))
    assert [(b.node_id, b.port) for b in body.brokers] == [(2, 1002)]
    assert body.controller_id == 2 and body.cluster_id == CLUSTER_ID and body.topics == []


def test_metadata_lists_every_voter_and_no_controller_during_an_election() -> None:
    apis = make_apis(FakeCore(1, LeaderAndEpoch(None, 5)), VOTERS)
    body = asyncio.run(apis.handle(request(metadata.API, 13, metadata.REQUEST.cls(topics=None))))
    assert [b.node_id for b in body.brokers] == [1, 2, 3]
    assert body.controller_id == -1


def test_metadata_for_a_named_topic_says_unknown() -> None:
    apis = make_apis(FakeCore(1, LeaderAndEpoch(1, 5)), VOTERS)
    cls = metadata.REQUEST.cls
    body = asyncio.run(
        apis.handle(request(metadata.API, 9, cls(topics=[cls.MetadataRequestTopic(name="t")])))
    )
    assert [(t.name, t.error_code) for t in body.topics] == [("t", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]


@pytest.mark.parametrize("endpoint_type", [1, 2])
def test_describe_cluster_lists_the_controllers_with_the_leader_as_controller(endpoint_type: int) -> None:
    apis = make_apis(FakeCore(3, LeaderAndEpoch(1, 5)), VOTERS)
    body_in = describe_cluster.REQUEST.cls(endpoint_type=endpoint_type)
    body = asyncio.run(apis.handle(request(describe_cluster.API, 2, body_in)))
    assert body.error_code == 0 and body.endpoint_type == endpoint_type
    assert body.controller_id == 1 and [b.broker_id for b in body.brokers] == [1, 2, 3]


def test_describe_cluster_unknown_endpoint_type_is_refused() -> None:
    apis = make_apis(FakeCore(3, LeaderAndEpoch(1, 5)), VOTERS)
    body = asyncio.run(
        apis.handle(request(describe_cluster.API, 1, describe_cluster.REQUEST.cls(endpoint_type=7)))
    )
    assert body.error_code == ErrorCode.UNSUPPORTED_ENDPOINT_TYPE


def _dq_body() -> Any:
    return CODECS[describe_quorum.API.key].encode_request(DescribeQuorumRequest(), 2)


def test_describe_quorum_at_the_leader_goes_to_its_core() -> None:
    core = FakeCore(1, LeaderAndEpoch(1, 5))
    body = asyncio.run(
        make_apis(core, VOTERS).handle(request(describe_quorum.API, 2, _dq_body(), connection_id=9))
    )
    partition = body.topics[0].partitions[0]
    assert (partition.error_code, partition.leader_id, partition.high_watermark) == (0, 1, 17)
    assert core.submitted and core.submitted[0][0] < 0  # admin pseudo-source


def test_describe_quorum_at_a_follower_is_forwarded_to_the_leader() -> None:
    core = FakeCore(2, LeaderAndEpoch(1, 5))
    leader_answer = DescribeQuorumResponse(leader_id=1, leader_epoch=5, high_watermark=42)
    forwarder = FakeForwarder(leader_answer)
    body = asyncio.run(make_apis(core, VOTERS, forwarder).handle(request(describe_quorum.API, 1, _dq_body())))
    assert forwarder.calls == [1] and not core.submitted
    partition = body.topics[0].partitions[0]
    assert (partition.error_code, partition.leader_id, partition.high_watermark) == (0, 1, 42)


def test_describe_quorum_forwarding_failure_is_a_retriable_error_with_the_leader_hint() -> None:
    core = FakeCore(2, LeaderAndEpoch(1, 5))
    body = asyncio.run(
        make_apis(core, VOTERS, FakeForwarder()).handle(request(describe_quorum.API, 2, _dq_body()))
    )
    partition = body.topics[0].partitions[0]
    assert partition.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (partition.leader_id, partition.leader_epoch) == (1, 5)


def test_describe_quorum_during_an_election_never_names_a_leader() -> None:
    core = FakeCore(2, LeaderAndEpoch(None, 6))
    body = asyncio.run(
        make_apis(core, VOTERS, FakeForwarder()).handle(request(describe_quorum.API, 2, _dq_body()))
    )
    partition = body.topics[0].partitions[0]
    assert partition.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and partition.leader_id == -1


def test_raft_request_with_another_cluster_id_is_refused_without_the_core(
    caplog: pytest.LogCaptureFixture,
) -> None:
    core = FakeCore(1, LeaderAndEpoch(1, 5))
    from kraft.raft.messages import VoteRequest

    vote_request = VoteRequest(
        cluster_id="other-cluster",
        candidate_epoch=6,
        candidate_key=ReplicaKey(3),
        voter_key=ReplicaKey(1),
        last_offset_epoch=5,
        last_offset=10,
    )
    wire = request(vote.API, 2, CODECS[vote.API.key].encode_request(vote_request, 2))
    body = asyncio.run(make_apis(core, VOTERS).handle(wire))
    assert body.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert not core.submitted
    assert "other-cluster" in caplog.text and CLUSTER_ID in caplog.text


# --------------------------------------------------------------------------------------------------
# kafka-python end to end


@pytest.fixture
def served_node() -> Iterator[tuple[int, FakeCore]]:
    """One listener on a loop thread whose core is node 1, the leader; voters 2 and 3 are fake."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict[str, Any] = {}

    async def start() -> None:
        core = FakeCore(1, LeaderAndEpoch(1, 5))
        holder: list[ControllerApis] = []

        class Handler:
            def handle(self, req: InboundRequest) -> Any:
                return holder[0].handle(req)

        server = KafkaServer(apis=served_apis(), handler=Handler(), max_request_bytes=1 << 20)
        port = await server.listen("CONTROLLER", "127.0.0.1", 0)
        voters = {
            1: Endpoint("CONTROLLER", "127.0.0.1", port),
            2: Endpoint("CONTROLLER", "127.0.0.1", 1),
            3: Endpoint("CONTROLLER", "127.0.0.1", 2),
        }
        holder.append(make_apis(core, voters))
        box.update(server=server, port=port, core=core)
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop)
    assert started.wait(10)
    yield box["port"], box["core"]
    asyncio.run_coroutine_threadsafe(box["server"].close(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def test_kafka_python_admin_describes_quorum_and_cluster(served_node: tuple[int, FakeCore]) -> None:
    port, core = served_node
    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=10_000)
    try:
        quorum = admin.describe_metadata_quorum()
        partition = quorum["topics"][0]["partitions"][0]
        assert (
            partition["leader_id"] == 1 and partition["high_watermark"] == 17 and partition["error"] is None
        )
        assert [v["replica_id"] for v in partition["current_voters"]] == [1, 2, 3]
        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == CLUSTER_ID and cluster["controller_id"] == 1
        assert sorted(b["broker_id"] for b in cluster["brokers"]) == [1, 2, 3]
    finally:
        admin.close()
    assert core.submitted, "DescribeQuorum reached the (leader's) core"


# --------------------------------------------------------------------------------------------------
# KIP-853 voter changes


class VoterChangeCore(FakeCore):
    """Answers AddRaftVoter/RemoveRaftVoter as a leader would, after recording the source."""

    async def submit(self, source: int, request: RaftRequest) -> RaftResponse:
        self.submitted.append((source, request))
        if isinstance(request, AddRaftVoterRequest):
            return AddRaftVoterResponse()
        if isinstance(request, RemoveRaftVoterRequest):
            return RemoveRaftVoterResponse(error_code=ErrorCode.VOTER_NOT_FOUND, error_message="no voter 9")
        if isinstance(request, UpdateRaftVoterRequest):
            return UpdateRaftVoterResponse(leader_id=1, leader_epoch=5, leader_endpoints=(VOTERS[1],))
        raise AssertionError(request)


DIR = uuid.UUID(int=0x44)


def _voter_change(core: FakeCore, rpc: RaftRequest, connection_id: int = 7) -> Any:
    codec = CODECS[api_key_of(rpc)]
    wire = request(codec.api, 0, codec.encode_request(rpc, 0), connection_id=connection_id)
    return asyncio.run(make_apis(core, VOTERS).handle(wire))


def test_add_raft_voter_goes_to_the_core_from_the_admin_connection() -> None:
    core = VoterChangeCore(1, LeaderAndEpoch(1, 5))
    add = AddRaftVoterRequest(
        cluster_id=CLUSTER_ID, timeout_ms=1000, voter_key=ReplicaKey(4, DIR), listeners=(VOTERS[1],)
    )
    body = _voter_change(core, add, connection_id=7)
    assert (body.error_code, body.error_message) == (0, None)
    assert core.submitted == [(ADMIN_SOURCE_BASE - 7, add)]


def test_remove_raft_voter_error_comes_back_with_its_message() -> None:
    core = VoterChangeCore(1, LeaderAndEpoch(1, 5))
    body = _voter_change(core, RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(9, DIR)))
    assert (body.error_code, body.error_message) == (ErrorCode.VOTER_NOT_FOUND, "no voter 9")
    assert core.submitted[0][0] < ADMIN_SOURCE_BASE + 1


def test_update_raft_voter_comes_from_the_voter_and_names_the_leader() -> None:
    core = VoterChangeCore(1, LeaderAndEpoch(1, 5))
    update = UpdateRaftVoterRequest(
        cluster_id=CLUSTER_ID, current_leader_epoch=5, voter_key=ReplicaKey(3, DIR), listeners=(VOTERS[3],)
    )
    body = _voter_change(core, update)
    assert core.submitted == [(3, update)]
    current = body.current_leader
    assert (current.leader_id, current.leader_epoch, current.host, current.port) == (1, 5, "127.0.0.1", 1001)


def test_voter_change_with_another_cluster_id_is_refused_without_the_core() -> None:
    core = VoterChangeCore(1, LeaderAndEpoch(1, 5))
    add = AddRaftVoterRequest(cluster_id="other", timeout_ms=1000, voter_key=ReplicaKey(4, DIR), listeners=())
    body = _voter_change(core, add)
    assert body.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert not core.submitted


def test_controller_listener_advertises_the_voter_change_apis() -> None:
    assert {80, 81, 82} <= set(served_apis())


def test_metadata_follows_the_voter_set_after_update_voters() -> None:
    core = FakeCore(1, LeaderAndEpoch(None, 3))
    apis = make_apis(core, {1: VOTERS[1]})
    body = apis._metadata(request(metadata.API, 12, metadata.API.request(topics=[])))
    assert [b.node_id for b in body.brokers] == [1]
    apis.update_voters(VOTERS)
    body = apis._metadata(request(metadata.API, 12, metadata.API.request(topics=[])))
    assert [(b.node_id, b.port) for b in body.brokers] == [(1, 1001), (2, 1002), (3, 1003)]
