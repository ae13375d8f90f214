"""``QuorumApis``: what a controller listener answers about the quorum, inside the node.

Real raft cores on virtual time (``quorum_cluster``): the answers are the core's, so these tests pin
how requests reach it (the raft bridge, forwarding to the leader) and what comes back, including
while an election runs and after KIP-853 voter set changes.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from quorum_cluster import CLIENT, CLUSTER_ID, LISTENER, QuorumCluster, endpoint, key

from kraft.broker.lifecycle import LifecycleConfig, Listener
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.node.build import BrokerConfig, NodeConfig, NodeStorage, build_node
from kraft.node.quorum_apis import QuorumApis, quorum_endpoints
from kraft.protocol.envelope import ApiRequest, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    add_raft_voter,
    broker_registration,
    describe_cluster,
    describe_quorum,
    metadata,
    remove_raft_voter,
)
from kraft.raft.log import MemoryLog
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
)
from kraft.raft.node import QuorumConfig, RaftNode
from kraft.raft.store import ElectionState, MemoryElectionStore
from kraft.raft.types import Endpoint

MD: Any = metadata.REQUEST.cls
DC: Any = describe_cluster.REQUEST.cls


def follower_of(cluster: QuorumCluster, leader: int) -> int:
    return next(n for n in cluster.voters if n != leader)


def alone() -> QuorumCluster:
    """Voter 1 of {1, 2, 3} with the others never started: an election that never ends."""
    cluster = QuorumCluster(down=(2, 3))
    cluster.run_for(3_000)
    assert cluster.nodes[1].leader_and_epoch().leader_id is None
    return cluster


# -------------------------------------------------------------------------------------------------
# Metadata


def test_metadata_lists_only_the_leader_when_one_is_known() -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    body = cluster.ask(follower_of(cluster, leader), metadata, 13, MD(topics=[]))
    assert [(b.node_id, b.host, b.port) for b in body.brokers] == [(leader, "127.0.0.1", 1000 + leader)]
    assert body.controller_id == leader and body.cluster_id == CLUSTER_ID and body.topics == []


def test_metadata_lists_every_voter_and_no_controller_during_an_election() -> None:
    cluster = alone()
    body = cluster.ask(1, metadata, 13, MD(topics=None))
    assert [(b.node_id, b.port) for b in body.brokers] == [(1, 1001), (2, 1002), (3, 1003)]
    assert body.controller_id == -1


def test_metadata_for_a_named_topic_says_unknown() -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    topic_id = uuid.UUID(int=5)
    request = MD(
        topics=[MD.MetadataRequestTopic(name="t"), MD.MetadataRequestTopic(name="u", topic_id=topic_id)]
    )
    body = cluster.ask(leader, metadata, 12, request)
    assert [(t.name, t.topic_id, t.error_code) for t in body.topics] == [
        ("t", uuid.UUID(int=0), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("u", topic_id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]


# -------------------------------------------------------------------------------------------------
# DescribeCluster


@pytest.mark.parametrize("endpoint_type", [1, 2])
def test_describe_cluster_lists_the_controllers_with_the_leader_as_controller(endpoint_type: int) -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    body = cluster.ask(follower_of(cluster, leader), describe_cluster, 2, DC(endpoint_type=endpoint_type))
    assert body.error_code == 0 and body.endpoint_type == endpoint_type and body.cluster_id == CLUSTER_ID
    assert body.controller_id == leader
    assert [(b.broker_id, b.host, b.port) for b in body.brokers] == [
        (n, "127.0.0.1", 1000 + n) for n in (1, 2, 3)
    ]


def test_describe_cluster_during_an_election_has_no_controller() -> None:
    body = alone().ask(1, describe_cluster, 1, DC(endpoint_type=2))
    assert body.controller_id == -1 and [b.broker_id for b in body.brokers] == [1, 2, 3]


def test_describe_cluster_unknown_endpoint_type_is_refused() -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    body = cluster.ask(leader, describe_cluster, 1, DC(endpoint_type=7))
    assert body.error_code == ErrorCode.UNSUPPORTED_ENDPOINT_TYPE and body.brokers == []


# -------------------------------------------------------------------------------------------------
# DescribeQuorum


def test_describe_quorum_at_the_leader_is_answered_by_its_raft_core() -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    cluster.run_for(200)
    sent_before = len(cluster.sent)
    body = cluster.ask(leader, describe_quorum, 2, DescribeQuorumRequest())
    raft = cluster.nodes[leader].raft
    assert isinstance(body, DescribeQuorumResponse)
    assert (body.partition_error_code, body.leader_id, body.leader_epoch) == (0, leader, raft.epoch)
    assert body.high_watermark == raft.high_watermark > 0
    assert [v.replica_id for v in body.current_voters] == [1, 2, 3]
    assert body.nodes[leader] == (endpoint(leader),)
    # Answered inside the node: no controller request left it.
    assert not [e for e in cluster.sent[sent_before:] if isinstance(e, ControllerEnvelope) and e.is_request]


def test_describe_quorum_at_a_follower_is_forwarded_to_the_leader_and_its_answer_relayed() -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    follower = follower_of(cluster, leader)
    body = cluster.ask(follower, describe_quorum, 1, DescribeQuorumRequest())
    (forwarded,) = [e for e in cluster.sent_between(follower, leader) if e.is_request]
    assert isinstance(forwarded.body, ApiRequest)
    assert (forwarded.body.api, forwarded.body.version) == (describe_quorum.API, 1)
    assert isinstance(body, DescribeQuorumResponse)
    assert (body.partition_error_code, body.leader_id) == (0, leader)
    assert [v.replica_id for v in body.current_voters] == [1, 2, 3]  # only the leader knows these
    # What the leader answered is what the admin got.
    (answer,) = [e for e in cluster.sent_between(leader, follower) if not e.is_request]
    assert answer.body.body is not None and answer.body.body.high_watermark == body.high_watermark


def test_describe_quorum_forwarding_failure_is_a_retriable_error_with_the_leader_hint() -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    follower = follower_of(cluster, leader)
    cluster.cut_off.add(leader)  # the follower still knows it, but cannot reach it
    epoch = cluster.nodes[follower].leader_and_epoch().epoch
    body = cluster.ask(follower, describe_quorum, 2, DescribeQuorumRequest())
    assert isinstance(body, DescribeQuorumResponse)
    assert (body.partition_error_code, body.leader_id, body.leader_epoch) == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        leader,
        epoch,
    )
    assert body.partition_error_message == f"not the leader; the leader is node {leader}"


def test_describe_quorum_during_an_election_never_names_a_leader() -> None:
    cluster = alone()
    body = cluster.ask(1, describe_quorum, 2, DescribeQuorumRequest())
    assert isinstance(body, DescribeQuorumResponse)
    assert (body.partition_error_code, body.leader_id) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
    assert body.leader_epoch == cluster.nodes[1].leader_and_epoch().epoch
    forwarded = [e for e in cluster.sent if isinstance(e, ControllerEnvelope) and e.is_request]
    assert forwarded == []


# -------------------------------------------------------------------------------------------------
# KIP-853 voter changes, bridged to the raft core


def add_request(n: int, cluster_id: str | None = CLUSTER_ID) -> AddRaftVoterRequest:
    return AddRaftVoterRequest(
        cluster_id=cluster_id, timeout_ms=10_000, voter_key=key(n), listeners=(endpoint(n),)
    )


def test_a_static_quorums_leader_core_refuses_add_raft_voter_and_its_message_comes_back() -> None:
    cluster = QuorumCluster()
    leader = cluster.elected()
    body = cluster.ask(leader, add_raft_voter, 0, add_request(4))
    assert isinstance(body, AddRaftVoterResponse)
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert body.error_message is not None and "kraft.version 0" in body.error_message


def test_a_followers_core_answers_not_leader_or_follower_and_the_request_is_not_forwarded() -> None:
    cluster = QuorumCluster(voters=(1,), observers=(2,), dynamic=True)
    leader = cluster.elected()
    assert leader == 1
    body = cluster.ask(2, remove_raft_voter, 0, RemoveRaftVoterRequest(cluster_id=None, voter_key=key(1)))
    assert isinstance(body, RemoveRaftVoterResponse)
    assert (body.error_code, body.error_message) == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        "node 2 is not the leader",
    )
    assert not [e for e in cluster.sent_between(2, 1) if e.is_request]


def test_add_and_remove_raft_voter_change_the_voter_set_and_what_the_listener_reports() -> None:
    cluster = QuorumCluster(voters=(1,), observers=(2, 3), dynamic=True)
    assert cluster.elected() == 1
    cluster.run_for(500)  # the observers catch up

    def controllers(at: int) -> list[tuple[int, int]]:
        body = cluster.ask(at, describe_cluster, 1, DC(endpoint_type=2))
        return [(b.broker_id, b.port) for b in body.brokers]

    assert controllers(1) == [(1, 1001)]
    assert cluster.ask(1, add_raft_voter, 0, add_request(2)) == AddRaftVoterResponse()
    assert cluster.ask(1, add_raft_voter, 0, add_request(3)) == AddRaftVoterResponse()
    cluster.run_for(500)
    assert all(cluster.nodes[n].raft.voter_set.ids == {1, 2, 3} for n in (1, 2, 3))
    for n in (1, 2, 3):  # every controller reads the voter set from its own log
        assert controllers(n) == [(1, 1001), (2, 1002), (3, 1003)]

    body = cluster.ask(1, remove_raft_voter, 0, RemoveRaftVoterRequest(cluster_id=None, voter_key=key(9)))
    assert body.error_code == ErrorCode.VOTER_NOT_FOUND and "cannot remove voter 9" in body.error_message
    removed = cluster.ask(1, remove_raft_voter, 0, RemoveRaftVoterRequest(cluster_id=None, voter_key=key(3)))
    assert removed == RemoveRaftVoterResponse()
    cluster.run_for(500)
    assert controllers(2) == [(1, 1001), (2, 1002)]
    assert [(b.node_id, b.port) for b in cluster.ask(3, metadata, 13, MD(topics=[])).brokers] == [(1, 1001)]


def test_a_brokers_describe_cluster_follows_the_voter_set_of_a_dynamic_quorum() -> None:
    cluster = QuorumCluster(voters=(1,), observers=(2,), brokers=(5,), dynamic=True)
    assert cluster.elected() == 1
    cluster.run_for(500)

    def listed() -> tuple[int, list[int]]:
        body = cluster.ask(5, describe_cluster, 1, DC(endpoint_type=2), broker_listener=True)
        return body.controller_id, [b.broker_id for b in body.brokers]

    assert listed() == (1, [1])
    assert cluster.ask(1, add_raft_voter, 0, add_request(2)) == AddRaftVoterResponse()
    cluster.run_until(lambda: cluster.nodes[5].raft.voter_set.ids == {1, 2})
    cluster.step()
    assert listed() == (1, [1, 2])


def test_add_raft_voter_with_another_cluster_id_is_refused_by_the_core() -> None:
    cluster = QuorumCluster(voters=(1,), observers=(2,), dynamic=True)
    cluster.elected()
    body = cluster.ask(1, add_raft_voter, 0, add_request(2, cluster_id="other"))
    assert body.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert cluster.nodes[1].raft.voter_set.ids == {1}


# -------------------------------------------------------------------------------------------------
# A combined node's broker listener


def test_a_combined_leaders_broker_hands_voter_changes_to_its_own_raft_core() -> None:
    cluster = QuorumCluster(voters=(1,), observers=(2,), brokers=(1, 2), dynamic=True)
    assert cluster.elected() == 1
    cluster.run_for(500)
    sent_before = len(cluster.sent)
    body = cluster.ask(1, add_raft_voter, 0, add_request(2), broker_listener=True)
    assert body == AddRaftVoterResponse()
    assert cluster.nodes[1].raft.voter_set.ids == {1, 2}
    # Nothing left node 1 for it: its broker's forward went to its own controller side.
    assert not [
        e
        for e in cluster.sent[sent_before:]
        if isinstance(e, ControllerEnvelope)
        and isinstance(e.body, ApiRequest)
        and e.body.api is add_raft_voter.API
    ]


def test_another_nodes_broker_forwards_voter_changes_to_the_leader() -> None:
    cluster = QuorumCluster(voters=(1,), observers=(2,), brokers=(1, 2), dynamic=True)
    assert cluster.elected() == 1
    cluster.run_for(500)
    body = cluster.ask(
        2,
        remove_raft_voter,
        0,
        RemoveRaftVoterRequest(cluster_id=None, voter_key=key(7)),
        broker_listener=True,
    )
    assert body.error_code == ErrorCode.VOTER_NOT_FOUND  # the leader's core answered
    forwarded = [
        e for e in cluster.sent_between(2, 1) if e.is_request and e.body.api is remove_raft_voter.API
    ]
    assert len(forwarded) == 1


# -------------------------------------------------------------------------------------------------
# quorum_endpoints


def raft_node(config: QuorumConfig, node_id: int = 1) -> RaftNode:
    return RaftNode(
        node_id=node_id,
        directory_id=key(node_id).directory_id,
        cluster_id=CLUSTER_ID,
        config=config,
        log=MemoryLog(),
        store=MemoryElectionStore(),
        rng=random.Random(0),
        now_ms=0,
        local_endpoints=(endpoint(node_id),),
    )


def test_quorum_endpoints_prefer_the_raft_listener_and_fall_back_to_a_voters_first_endpoint() -> None:
    other = Endpoint("OTHER", "10.0.0.3", 9999)
    config = QuorumConfig(
        voters={
            3: (other,),
            1: (Endpoint("OTHER", "10.0.0.1", 9999), endpoint(1)),
            2: (endpoint(2),),
        }
    )
    assert quorum_endpoints(raft_node(config), LISTENER) == {1: endpoint(1), 2: endpoint(2), 3: other}


def test_a_controller_without_known_voters_lists_itself() -> None:
    raft = raft_node(QuorumConfig(voters={}, bootstrap_servers=(endpoint(1),)))
    apis = QuorumApis(raft=raft, cluster_id=CLUSTER_ID, listener_name=LISTENER, local_endpoint=endpoint(1))
    apis.handle(ControllerEnvelope(CLIENT, 1, 7, ApiRequest(describe_cluster.API, 1, DC(endpoint_type=2))))
    (answer,) = apis.drain()
    assert [(b.broker_id, b.port) for b in answer.body.body.brokers] == [(1, 1001)]


# -------------------------------------------------------------------------------------------------
# Answers find the part that asked


def test_a_combined_followers_forwarded_describe_quorum_and_its_brokers_requests_never_share_an_id() -> None:
    # Node 2 of {1, 2, 3}, combined, following leader 1: its broker registers with the leader while
    # an admin's DescribeQuorum is forwarded there too. Each answer must reach the part that asked.
    lifecycle = LifecycleConfig(
        node_id=2,
        cluster_id=CLUSTER_ID,
        incarnation_id=uuid.UUID(int=2),
        listeners=(Listener(name="PLAINTEXT", host="127.0.0.1", port=9002),),
        supported_features=dict(SUPPORTED_FEATURES),
        rack=None,
        log_dirs=(uuid.UUID(int=22),),
    )
    node = build_node(
        NodeConfig(
            node_id=2,
            cluster_id=CLUSTER_ID,
            directory_id=key(2).directory_id,
            quorum=QuorumConfig(voters={n: (endpoint(n),) for n in (1, 2, 3)}),
            local_endpoints=(endpoint(2),),
            quorum_apis=True,
            broker=BrokerConfig(lifecycle=lifecycle, client_listeners=("PLAINTEXT",)),
        ),
        NodeStorage(MemoryLog(), MemoryElectionStore(ElectionState(5, leader_id=1))),
        0,
        random.Random(0),
    )
    out = node.poll(0).outbound
    (registration,) = [e for e in out if isinstance(e, ControllerEnvelope) and e.is_request]
    assert registration.body.api is broker_registration.API
    admin = ControllerEnvelope(CLIENT, 2, 77, ApiRequest(describe_quorum.API, 2, DescribeQuorumRequest()))
    out = node.poll(1, [admin]).outbound
    (forwarded,) = [e for e in out if isinstance(e, ControllerEnvelope) and e.is_request]
    assert forwarded.body.api is describe_quorum.API and forwarded.destination == 1

    registered = registration.reply(
        broker_registration.RESPONSE.cls(throttle_time_ms=0, error_code=0, broker_epoch=10)
    )
    out = node.poll(2, [registered]).outbound
    assert not [e for e in out if e.destination == CLIENT]  # not an answer to the admin
    assert node.broker is not None and node.broker.lifecycle.broker_epoch == 10

    described = DescribeQuorumResponse(leader_id=1, leader_epoch=5, high_watermark=9)
    out = node.poll(3, [forwarded.reply(described)]).outbound
    (answer,) = [e for e in out if e.destination == CLIENT]
    assert answer.correlation_id == 77 and answer.body.body is described
