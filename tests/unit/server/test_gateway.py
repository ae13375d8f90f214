"""The gateway between the listeners and the node, on the wire: a real ``KafkaServer`` on loopback
in front of a real ``Node`` driven by ``LoopDriver`` (``served_node``), as the server wires them.

What the gateway owns and these tests pin: the raft decoding and its immediate answers to malformed
requests, the cluster-id check before the core, which envelope each request becomes (a raft
``Envelope`` from the voter it names, a ``ControllerEnvelope`` or ``ClientEnvelope`` from the
connection's pseudo id), what each listener advertises, and real clients (kafka-python's admin)
against it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient
from served_node import BROKER_LISTENER, CONTROLLER_LISTENER, Conn, ServedNode, directory

from kraft.broker.lifecycle import LifecycleConfig, Listener
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.controller.quorum_controller import ControllerConfig
from kraft.net.codecs import CODECS
from kraft.node.build import BrokerConfig, NodeConfig
from kraft.node.listeners import BROKER_LISTENER_APIS, CONTROLLER_LISTENER_APIS
from kraft.protocol.envelope import ApiRequest, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    add_raft_voter,
    api_versions,
    describe_quorum,
    metadata,
    remove_raft_voter,
    update_raft_voter,
    vote,
)
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    DescribeQuorumRequest,
    Envelope,
    RaftRequest,
    RemoveRaftVoterRequest,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    VoteRequest,
)
from kraft.raft.node import QuorumConfig
from kraft.raft.rpc import api_key_of
from kraft.raft.store import ElectionState, MemoryElectionStore
from kraft.raft.types import Endpoint, ReplicaKey
from kraft.server.gateway import BROKER_CLIENT_BASE, CONTROLLER_CLIENT_BASE

pytestmark = pytest.mark.timeout(60)

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
DIR = uuid.UUID(int=0x44)


def controller_config(ports: dict[str, int], *, broker: bool = False) -> NodeConfig:
    """Node 1, the only voter (so the leader), with a quorum controller; combined with ``broker``."""
    me = Endpoint(CONTROLLER_LISTENER, "127.0.0.1", ports[CONTROLLER_LISTENER])
    broker_config = None
    if broker:
        lifecycle = LifecycleConfig(
            node_id=1,
            cluster_id=CLUSTER_ID,
            incarnation_id=uuid.UUID(int=1),
            listeners=(Listener(name=BROKER_LISTENER, host="127.0.0.1", port=ports[BROKER_LISTENER]),),
            supported_features=dict(SUPPORTED_FEATURES),
            rack=None,
            log_dirs=(directory(11),),
        )
        broker_config = BrokerConfig(lifecycle=lifecycle, client_listeners=(BROKER_LISTENER,))
    return NodeConfig(
        node_id=1,
        cluster_id=CLUSTER_ID,
        directory_id=directory(1),
        quorum=QuorumConfig(voters={1: (me,)}, election_timeout_ms=200),
        local_endpoints=(me,),
        raft_listener_name=CONTROLLER_LISTENER,
        controller=ControllerConfig(),
        quorum_apis=True,
        broker=broker_config,
    )


@pytest.fixture
def leader() -> Iterator[ServedNode]:
    """Node 1 serving a controller listener, elected leader of {1}."""
    served = ServedNode(controller_config)
    try:
        served.wait_for("node 1 leads", lambda: served.driver.view.leader_and_epoch.leader_id == 1)
        yield served
    finally:
        served.close()


@pytest.fixture
def combined() -> Iterator[ServedNode]:
    served = ServedNode(lambda ports: controller_config(ports, broker=True), broker_listener=True)
    try:
        served.wait_for("node 1 leads", lambda: served.driver.view.leader_and_epoch.leader_id == 1)
        yield served
    finally:
        served.close()


def raft_call(served: ServedNode, request: RaftRequest, version: int = 0) -> Any:
    """Send a raft API request on the controller listener; returns the core's dataclass answer."""
    codec = CODECS[api_key_of(request)]
    api = codec.api
    conn = Conn(served.ports[CONTROLLER_LISTENER])
    try:
        wire = conn.call(api, version, codec.encode_request(request, version))
    finally:
        conn.close()
    return codec.decode_response(wire, version, CONTROLLER_LISTENER)


def delivered_bodies(served: ServedNode) -> list[Any]:
    out = []
    for envelope in served.delivered:
        body = envelope.body
        out.append(body.body if isinstance(body, ApiRequest) else body)
    return out


# -------------------------------------------------------------------------------------------------
# Raft requests: cluster id, malformed requests, sources


def test_a_raft_request_with_another_cluster_id_is_refused_without_the_core(
    leader: ServedNode, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "kraft.server.gateway")
    request = VoteRequest(
        cluster_id="other-cluster",
        candidate_epoch=60,
        candidate_key=ReplicaKey(3),
        voter_key=ReplicaKey(1),
        last_offset_epoch=50,
        last_offset=10,
    )
    answer = raft_call(leader, request, version=2)
    assert answer.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert not [b for b in delivered_bodies(leader) if isinstance(b, VoteRequest)]
    assert "other-cluster" in caplog.text and CLUSTER_ID in caplog.text
    assert leader.driver.view.leader_and_epoch.leader_id == 1  # the epoch-60 candidate changed nothing


def test_a_voter_change_with_another_cluster_id_is_refused_without_the_core(leader: ServedNode) -> None:
    add = AddRaftVoterRequest(cluster_id="other", timeout_ms=1000, voter_key=ReplicaKey(4, DIR), listeners=())
    answer = raft_call(leader, add)
    assert answer.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert not [b for b in delivered_bodies(leader) if isinstance(b, AddRaftVoterRequest)]


def test_malformed_raft_requests_are_answered_as_the_codec_says_without_the_core(
    leader: ServedNode, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "kraft.server.gateway")
    conn = Conn(leader.ports[CONTROLLER_LISTENER])
    try:
        body: Any = vote.REQUEST.cls(cluster_id=CLUSTER_ID, voter_id=1, topics=[])  # no partition at all
        assert conn.call(vote.API, 2, body).error_code == ErrorCode.INVALID_REQUEST
        dq: Any = describe_quorum.REQUEST.cls
        other = dq(
            topics=[
                dq.TopicData(topic_name="other", partitions=[dq.TopicData.PartitionData(partition_index=0)])
            ]
        )
        answer = conn.call(describe_quorum.API, 2, other)
        assert answer.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    finally:
        conn.close()
    assert not leader.delivered
    assert "answered without the core" in caplog.text


def test_update_raft_voter_from_a_voter_reaches_the_core_as_a_raft_envelope_from_that_voter(
    leader: ServedNode,
) -> None:
    epoch = leader.driver.view.leader_and_epoch.epoch
    update = UpdateRaftVoterRequest(
        cluster_id=CLUSTER_ID,
        current_leader_epoch=epoch,
        voter_key=ReplicaKey(3, DIR),
        listeners=(Endpoint(CONTROLLER_LISTENER, "127.0.0.1", 1003),),
    )
    answer = raft_call(leader, update)
    (envelope,) = [e for e in leader.delivered if isinstance(e.body, UpdateRaftVoterRequest)]
    assert isinstance(envelope, Envelope)
    assert (envelope.source, envelope.destination, envelope.body) == (3, 1, update)
    assert isinstance(answer, UpdateRaftVoterResponse)
    # The core's answer (a static quorum takes no voter changes) names the leader and its endpoint.
    assert answer.error_code == ErrorCode.UNSUPPORTED_VERSION
    port = leader.ports[CONTROLLER_LISTENER]
    assert (answer.leader_id, answer.leader_epoch) == (1, epoch)
    assert [(e.host, e.port) for e in answer.leader_endpoints] == [("127.0.0.1", port)]


@pytest.mark.parametrize(
    "request_",
    [
        AddRaftVoterRequest(
            cluster_id=CLUSTER_ID,
            timeout_ms=1000,
            voter_key=ReplicaKey(4, DIR),
            listeners=(Endpoint(CONTROLLER_LISTENER, "127.0.0.1", 1004),),
        ),
        RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(9, DIR)),
    ],
)
def test_an_admins_voter_change_reaches_the_quorum_apis_from_its_connection_and_the_cores_answer_returns(
    leader: ServedNode, request_: RaftRequest
) -> None:
    answer = raft_call(leader, request_)
    assert answer.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert answer.error_message is not None and "kraft.version 0" in answer.error_message
    (envelope,) = [e for e in leader.delivered if isinstance(e, ControllerEnvelope)]
    assert isinstance(envelope.body, ApiRequest) and envelope.body.body == request_
    assert BROKER_CLIENT_BASE < envelope.source < CONTROLLER_CLIENT_BASE  # a controller-listener client


# -------------------------------------------------------------------------------------------------
# Client requests: which envelope, from whom


def test_each_connection_reaches_the_node_from_a_pseudo_id_of_its_own(combined: ServedNode) -> None:
    request: Any = metadata.REQUEST.cls(topics=[])
    sources: dict[str, list[int]] = {CONTROLLER_LISTENER: [], BROKER_LISTENER: []}
    for name in (CONTROLLER_LISTENER, CONTROLLER_LISTENER, BROKER_LISTENER, BROKER_LISTENER):
        conn = Conn(combined.ports[name])
        try:
            before = len(combined.delivered)
            body = conn.call(metadata.API, 12, request)
            conn.call(metadata.API, 12, request)  # the same connection: the same id
        finally:
            conn.close()
        assert body.cluster_id == CLUSTER_ID
        first, second = combined.delivered[before : before + 2]
        assert first.source == second.source
        sources[name].append(first.source)
        if name == BROKER_LISTENER:
            assert isinstance(first, ClientEnvelope) and first.listener == BROKER_LISTENER
            assert first.source < BROKER_CLIENT_BASE
        else:
            assert isinstance(first, ControllerEnvelope)
            assert BROKER_CLIENT_BASE < first.source < CONTROLLER_CLIENT_BASE
        assert isinstance(first.body, ApiRequest) and (first.body.api, first.body.version) == (
            metadata.API,
            12,
        )
    assert len(set(sources[CONTROLLER_LISTENER])) == 2 and len(set(sources[BROKER_LISTENER])) == 2


@pytest.mark.parametrize(
    ("listener", "apis"),
    [(CONTROLLER_LISTENER, CONTROLLER_LISTENER_APIS), (BROKER_LISTENER, BROKER_LISTENER_APIS)],
)
def test_each_listener_advertises_exactly_what_it_serves(
    combined: ServedNode, listener: str, apis: Any
) -> None:
    conn = Conn(combined.ports[listener])
    try:
        request: Any = api_versions.REQUEST.cls(client_software_name="t", client_software_version="1")
        body = conn.call(api_versions.API, 3, request)
    finally:
        conn.close()
    advertised = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    assert advertised == {a.key: (a.served.low, a.served.high) for a in apis.values()}
    voter_changes = {add_raft_voter.API.key, remove_raft_voter.API.key}
    assert voter_changes <= set(advertised)
    assert (update_raft_voter.API.key in advertised) == (listener == CONTROLLER_LISTENER)


def test_update_raft_voter_on_a_broker_listener_closes_the_connection(combined: ServedNode) -> None:
    update = UpdateRaftVoterRequest(
        cluster_id=CLUSTER_ID, current_leader_epoch=1, voter_key=ReplicaKey(1, DIR), listeners=()
    )
    conn = Conn(combined.ports[BROKER_LISTENER])
    try:
        conn.send(update_raft_voter.API, 0, CODECS[update_raft_voter.API.key].encode_request(update, 0))
        assert conn.closed_by_server()
    finally:
        conn.close()
    assert not [b for b in delivered_bodies(combined) if isinstance(b, UpdateRaftVoterRequest)]


# -------------------------------------------------------------------------------------------------
# A broker listener forwards voter changes unchecked


def broker_config(ports: dict[str, int]) -> NodeConfig:
    """Broker 4 of a quorum {1, 2, 3} it never reaches (its election state says leader 2, epoch 7)."""
    lifecycle = LifecycleConfig(
        node_id=4,
        cluster_id=CLUSTER_ID,
        incarnation_id=uuid.UUID(int=4),
        listeners=(Listener(name=BROKER_LISTENER, host="127.0.0.1", port=ports[BROKER_LISTENER]),),
        supported_features=dict(SUPPORTED_FEATURES),
        rack=None,
        log_dirs=(directory(44),),
    )
    return NodeConfig(
        node_id=4,
        cluster_id=CLUSTER_ID,
        directory_id=directory(4),
        quorum=QuorumConfig(
            voters={n: (Endpoint(CONTROLLER_LISTENER, "127.0.0.1", 1000 + n),) for n in (1, 2, 3)},
            fetch_timeout_ms=600_000,
        ),
        raft_listener_name=CONTROLLER_LISTENER,
        broker=BrokerConfig(
            lifecycle=lifecycle, client_listeners=(BROKER_LISTENER,), request_timeout_ms=5_000
        ),
    )


def test_a_broker_listener_forwards_a_voter_change_unchecked_and_relays_the_leaders_answer() -> None:
    refusal = AddRaftVoterResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID, error_message="not ours")

    def leader(envelope: ControllerEnvelope) -> Any:
        assert isinstance(envelope.body, ApiRequest)
        return refusal if envelope.body.api is add_raft_voter.API else None

    served = ServedNode(
        broker_config,
        controller_listener=False,
        broker_listener=True,
        store=MemoryElectionStore(ElectionState(7, leader_id=2)),
        controller_peer=leader,
    )
    try:
        add = AddRaftVoterRequest(
            cluster_id="other", timeout_ms=5000, voter_key=ReplicaKey(5, DIR), listeners=()
        )
        conn = Conn(served.ports[BROKER_LISTENER])
        try:
            wire = conn.call(add_raft_voter.API, 0, CODECS[add_raft_voter.API.key].encode_request(add, 0))
        finally:
            conn.close()
        answer = CODECS[add_raft_voter.API.key].decode_response(wire, 0, CONTROLLER_LISTENER)
        assert (answer.error_code, answer.error_message) == (ErrorCode.INCONSISTENT_CLUSTER_ID, "not ours")
        (forwarded,) = [e for e in served.forwarded if e.body.api is add_raft_voter.API]  # type: ignore[union-attr]
        assert forwarded.destination == 2 and forwarded.body.body == add  # type: ignore[union-attr]
    finally:
        served.close()


# -------------------------------------------------------------------------------------------------
# kafka-python end to end


def test_kafka_python_admin_describes_quorum_and_cluster(leader: ServedNode) -> None:
    port = leader.ports[CONTROLLER_LISTENER]
    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=10_000)
    try:
        quorum = admin.describe_metadata_quorum()
        partition = quorum["topics"][0]["partitions"][0]
        assert partition["leader_id"] == 1 and partition["error"] is None
        assert partition["leader_epoch"] == leader.driver.view.leader_and_epoch.epoch
        assert partition["high_watermark"] > 0
        assert [v["replica_id"] for v in partition["current_voters"]] == [1]
        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == CLUSTER_ID and cluster["controller_id"] == 1
        assert [(b["broker_id"], b["port"]) for b in cluster["brokers"]] == [(1, port)]
    finally:
        admin.close()
    # DescribeQuorum reached the node as a controller request from the admin's connection.
    asked = [
        e
        for e in leader.delivered
        if isinstance(e, ControllerEnvelope)
        and isinstance(e.body, ApiRequest)
        and e.body.api is describe_quorum.API
    ]
    assert asked and all(e.source < CONTROLLER_CLIENT_BASE for e in asked)
    assert all(isinstance(e.body, ApiRequest) and e.body.body == DescribeQuorumRequest() for e in asked)
