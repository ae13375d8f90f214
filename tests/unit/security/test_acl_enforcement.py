"""ACLs end to end in one combined node (``acl_node``): written through CreateAcls, committed to the
metadata log, replayed into the broker's image, enforced on every API a client calls.

The scenario of issue #26: alice may read (and so describe) topic ``a`` and not ``b``; she sees exactly
that through Metadata, DescribeTopicPartitions, Produce, Fetch and ListOffsets. Plus: a deny beats
an allow, prefixed patterns, super users, cluster-level operations, the ACL APIs themselves, and the
node without an authorizer (SECURITY_DISABLED, everything allowed).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from acl_node import ADMIN, ALICE, BOB, AclNode

from kraft.common.principal import KafkaPrincipal
from kraft.common.uuids import ZERO_UUID
from kraft.metadata.image import MetadataLoader
from kraft.metadata.image_snapshot import snapshot_records_bytes
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    broker_heartbeat,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_quorum,
    describe_topic_partitions,
    elect_leaders,
    fetch,
    incremental_alter_configs,
    init_producer_id,
    list_offsets,
    metadata,
    produce,
)
from kraft.raft.messages import DescribeQuorumRequest, Envelope, VoteRequest, VoteResponse
from kraft.raft.types import ReplicaKey
from kraft.records.batch import build_value_batch, iter_batches
from kraft.security.acls import AclOperation, AclPermissionType, PatternType, ResourceType

E = ErrorCode
Op = AclOperation
CT: Any = create_topics.REQUEST.cls
CA: Any = create_acls.REQUEST.cls
DA: Any = delete_acls.REQUEST.cls
MD: Any = metadata.REQUEST.cls
DTP: Any = describe_topic_partitions.REQUEST.cls
PR: Any = produce.REQUEST.cls
FR: Any = fetch.REQUEST.cls
LO: Any = list_offsets.REQUEST.cls
DC: Any = describe_configs.REQUEST.cls
IAC: Any = incremental_alter_configs.REQUEST.cls
CP: Any = create_partitions.REQUEST.cls
DT: Any = delete_topics.REQUEST.cls


def acl(
    name: str,
    op: AclOperation,
    principal: KafkaPrincipal = ALICE,
    *,
    deny: bool = False,
    rt: ResourceType = ResourceType.TOPIC,
    prefixed: bool = False,
) -> Any:
    return CA.AclCreation(
        resource_type=int(rt),
        resource_name=name,
        resource_pattern_type=int(PatternType.PREFIXED if prefixed else PatternType.LITERAL),
        principal=str(principal),
        host="*",
        operation=int(op),
        permission_type=int(AclPermissionType.DENY if deny else AclPermissionType.ALLOW),
    )


def add_acls(node: AclNode, *creations: Any) -> None:
    response = node.call(create_acls, 3, ADMIN, creations=list(creations))
    assert [r.error_code for r in response.results] == [0] * len(creations), response


def create_topic(node: AclNode, name: str, principal: KafkaPrincipal = ADMIN) -> int:
    topic = CT.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[])
    response = node.call(create_topics, 7, principal, topics=[topic], timeout_ms=5000)
    return int(response.topics[0].error_code)


@pytest.fixture(scope="module")
def node() -> AclNode:
    """Topics a, b, payments-1, payments-2; alice: READ a, WRITE a, prefixed READ on ``payments-``,
    and a DENY READ on payments-2 (deny beats the prefixed allow)."""
    n = AclNode()
    for name in ("a", "b", "payments-1", "payments-2"):
        assert create_topic(n, name) == 0
    add_acls(
        n,
        acl("a", Op.READ),
        acl("a", Op.WRITE),
        acl("payments-", Op.READ, prefixed=True),
        acl("payments-2", Op.READ, deny=True),
    )
    return n


def metadata_topics(node: AclNode, principal: KafkaPrincipal, names: list[str] | None) -> dict[str, int]:
    topics = None if names is None else [MD.MetadataRequestTopic(name=n) for n in names]
    response = node.call(metadata, 12, principal, topics=topics, allow_auto_topic_creation=False)
    return {t.name: t.error_code for t in response.topics}


def test_metadata_lists_only_what_the_caller_may_describe(node: AclNode) -> None:
    # READ implies DESCRIBE; a DENY READ does not deny DESCRIBE (Kafka), so payments-2 is listed.
    assert metadata_topics(node, ALICE, None) == {"a": 0, "payments-1": 0, "payments-2": 0}
    assert metadata_topics(node, ALICE, ["a", "b"]) == {"a": 0, "b": E.TOPIC_AUTHORIZATION_FAILED}
    assert metadata_topics(node, BOB, None) == {}
    assert set(metadata_topics(node, ADMIN, None)) == {"a", "b", "payments-1", "payments-2"}


def test_metadata_does_not_auto_create_a_topic_without_create(node: AclNode) -> None:
    add_acls(node, acl("new-topic", Op.DESCRIBE))
    response = node.call(
        metadata,
        12,
        ALICE,
        topics=[MD.MetadataRequestTopic(name="new-topic")],
        allow_auto_topic_creation=True,
    )
    assert [(t.name, t.error_code) for t in response.topics] == [("new-topic", E.TOPIC_AUTHORIZATION_FAILED)]
    node.run_until(lambda: True)
    assert "new-topic" not in node.node.broker.image.topics_by_name  # type: ignore[union-attr]


def test_metadata_reports_authorized_operations_when_asked(node: AclNode) -> None:
    response = node.call(
        metadata,
        10,
        ALICE,
        topics=[MD.MetadataRequestTopic(name="a")],
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=True,
        include_cluster_authorized_operations=True,
    )
    ops = response.topics[0].topic_authorized_operations
    assert ops == (1 << Op.READ) | (1 << Op.WRITE) | (1 << Op.DESCRIBE)
    assert response.cluster_authorized_operations == 0  # no DESCRIBE on the cluster


def test_describe_topic_partitions_lists_only_what_the_caller_may_describe(node: AclNode) -> None:
    everything = node.call(describe_topic_partitions, 0, ALICE, topics=[], response_partition_limit=100)
    assert [t.name for t in everything.topics] == ["a", "payments-1", "payments-2"]
    named = node.call(
        describe_topic_partitions,
        0,
        ALICE,
        topics=[DTP.TopicRequest(name=n) for n in ("a", "b")],
        response_partition_limit=100,
    )
    assert [(t.name, t.error_code) for t in named.topics] == [("a", 0), ("b", E.TOPIC_AUTHORIZATION_FAILED)]
    assert named.topics[1].partitions == [] and named.topics[1].topic_id == ZERO_UUID


def produce_codes(node: AclNode, principal: KafkaPrincipal, names: list[str], **extra: Any) -> dict[str, int]:
    batch = build_value_batch([b"v"], base_offset=0, partition_leader_epoch=-1, timestamp_ms=0)
    body_topics = [
        PR.TopicProduceData(
            name=n, partition_data=[PR.TopicProduceData.PartitionProduceData(index=0, records=batch)]
        )
        for n in names
    ]
    response = node.call(produce, 12, principal, acks=-1, timeout_ms=5000, topic_data=body_topics, **extra)
    return {t.name: t.partition_responses[0].error_code for t in response.responses}


def test_produce_writes_only_where_the_caller_may_write(node: AclNode) -> None:
    assert produce_codes(node, ALICE, ["a", "b"]) == {"a": 0, "b": E.TOPIC_AUTHORIZATION_FAILED}
    assert produce_codes(node, ALICE, ["payments-1"]) == {"payments-1": E.TOPIC_AUTHORIZATION_FAILED}
    assert ("b", 0) not in node.logs.logs or node.logs.logs[("b", 0)].log_end_offset == 0


def test_produce_with_a_transactional_id_needs_write_on_it(node: AclNode) -> None:
    codes = produce_codes(node, ALICE, ["a"], transactional_id="tx-1")
    assert codes == {"a": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}


def fetch_codes(node: AclNode, principal: KafkaPrincipal, names: list[str]) -> dict[str, tuple[int, int]]:
    topics = [
        FR.FetchTopic(
            topic=n,
            partitions=[
                FR.FetchTopic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)
            ],
        )
        for n in names
    ]
    response = node.call(
        fetch,
        12,
        principal,
        api=fetch.CLIENT_API,
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=topics,
    )
    out = {}
    for t in response.responses:
        row = t.partitions[0]
        out[t.topic] = (row.error_code, sum(len(b.records) for b in iter_batches(row.records or b"")))
    return out


def test_fetch_reads_only_what_the_caller_may_read(node: AclNode) -> None:
    assert produce_codes(node, ADMIN, ["a", "b", "payments-1", "payments-2"]) == dict.fromkeys(
        ["a", "b", "payments-1", "payments-2"], 0
    )
    got = fetch_codes(node, ALICE, ["a", "b", "payments-1", "payments-2"])
    assert got["b"] == (E.TOPIC_AUTHORIZATION_FAILED, 0)
    assert got["payments-2"] == (E.TOPIC_AUTHORIZATION_FAILED, 0)  # the DENY beats the prefixed ALLOW
    assert got["a"][0] == 0 and got["a"][1] >= 1
    assert got["payments-1"][0] == 0 and got["payments-1"][1] >= 1
    only_denied = fetch_codes(node, BOB, ["a"])  # answered at once, not after a long poll
    assert only_denied == {"a": (E.TOPIC_AUTHORIZATION_FAILED, 0)}


def test_list_offsets_needs_describe(node: AclNode) -> None:
    topics = [
        LO.ListOffsetsTopic(
            name=n, partitions=[LO.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1)]
        )
        for n in ("a", "b")
    ]
    response = node.call(list_offsets, 7, ALICE, replica_id=-1, topics=topics)
    assert {t.name: t.partitions[0].error_code for t in response.topics} == {
        "a": 0,
        "b": E.TOPIC_AUTHORIZATION_FAILED,
    }


def test_super_users_may_do_anything_and_others_nothing_by_default(node: AclNode) -> None:
    assert produce_codes(node, ADMIN, ["b"]) == {"b": 0}
    assert create_topic(node, "bobs", BOB) == E.TOPIC_AUTHORIZATION_FAILED


def test_topic_admin_needs_its_operation_per_topic(node: AclNode) -> None:
    add_acls(node, acl("alice-", Op.CREATE, prefixed=True), acl("alice-", Op.DELETE, prefixed=True))
    assert create_topic(node, "alice-1", ALICE) == 0
    assert create_topic(node, "other", ALICE) == E.TOPIC_AUTHORIZATION_FAILED
    grow = node.call(
        create_partitions,
        3,
        ALICE,
        topics=[CP.CreatePartitionsTopic(name="alice-1", count=2)],
        timeout_ms=5000,
    )
    assert grow.results[0].error_code == E.TOPIC_AUTHORIZATION_FAILED  # no ALTER
    gone = node.call(
        delete_topics,
        6,
        ALICE,
        topics=[DT.DeleteTopicState(name=n) for n in ("alice-1", "a")],
        timeout_ms=5000,
    )
    assert {r.name: r.error_code for r in gone.responses} == {"alice-1": 0, "a": E.TOPIC_AUTHORIZATION_FAILED}


def test_configs_need_describe_configs_and_alter_configs(node: AclNode) -> None:
    resources = [
        DC.DescribeConfigsResource(resource_type=2, resource_name="a", configuration_keys=None),
        DC.DescribeConfigsResource(resource_type=4, resource_name="", configuration_keys=None),
    ]
    described = node.call(describe_configs, 4, ALICE, resources=resources)
    assert {r.resource_type: r.error_code for r in described.results} == {
        2: E.TOPIC_AUTHORIZATION_FAILED,
        4: E.CLUSTER_AUTHORIZATION_FAILED,
    }
    add_acls(node, acl("a", Op.ALTER_CONFIGS))  # implies DESCRIBE_CONFIGS
    described = node.call(describe_configs, 4, ALICE, resources=resources[:1])
    assert described.results[0].error_code == 0 and described.results[0].configs
    change = IAC.AlterConfigsResource(
        resource_type=2,
        resource_name="b",
        configs=[
            IAC.AlterConfigsResource.AlterableConfig(name="retention.ms", config_operation=0, value="1000")
        ],
    )
    altered = node.call(incremental_alter_configs, 1, ALICE, resources=[change])
    assert altered.responses[0].error_code == E.TOPIC_AUTHORIZATION_FAILED


def test_cluster_operations_are_refused_whole(node: AclNode) -> None:
    elect = node.call(elect_leaders, 2, ALICE, election_type=0, topic_partitions=None, timeout_ms=1000)
    assert elect.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    quorum = node.call(describe_quorum, 2, ALICE, controller=True, body=DescribeQuorumRequest())
    assert quorum.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    ids = node.call(init_producer_id, 4, BOB, transactional_id=None, transaction_timeout_ms=60000)
    assert ids.error_code == E.CLUSTER_AUTHORIZATION_FAILED  # no WRITE on any topic
    ids = node.call(init_producer_id, 4, ALICE, transactional_id=None, transaction_timeout_ms=60000)
    assert ids.error_code == 0  # WRITE on topic a is enough for an idempotent producer (KIP-679)


def test_the_acl_apis_need_alter_and_describe_on_the_cluster(node: AclNode) -> None:
    refused = node.call(create_acls, 3, ALICE, creations=[acl("b", Op.READ)])
    assert refused.results[0].error_code == E.CLUSTER_AUTHORIZATION_FAILED
    listed = node.call(
        describe_acls, 3, ALICE, resource_type_filter=1, pattern_type_filter=1, operation=1, permission_type=1
    )
    assert listed.error_code == E.CLUSTER_AUTHORIZATION_FAILED


def test_describe_and_delete_acls_on_the_broker_and_the_controller(node: AclNode) -> None:
    add_acls(node, acl("zz", Op.READ, BOB), acl("zz", Op.WRITE, BOB))
    for controller in (False, True):
        listed = node.call(
            describe_acls,
            3,
            ADMIN,
            controller=controller,
            resource_type_filter=2,
            resource_name_filter="zz",
            pattern_type_filter=3,
            principal_filter=None,
            host_filter=None,
            operation=1,
            permission_type=1,
        )
        assert listed.error_code == 0
        assert [(r.resource_name, sorted(a.operation for a in r.acls)) for r in listed.resources] == [
            ("zz", [Op.READ, Op.WRITE])
        ]
    removed = node.call(
        delete_acls,
        3,
        ADMIN,
        filters=[
            DA.DeleteAclsFilter(
                resource_type_filter=2,
                resource_name_filter="zz",
                pattern_type_filter=1,
                principal_filter="User:bob",
                host_filter=None,
                operation=int(Op.WRITE),
                permission_type=1,
            )
        ],
    )
    (result,) = removed.filter_results
    assert result.error_code == 0 and [m.operation for m in result.matching_acls] == [Op.WRITE]
    # Read your writes: the broker that answered already has the change in its image.
    left = [a for a in node.node.broker.image.acls.values() if a.resource_name == "zz"]  # type: ignore[union-attr]
    assert [a.operation for a in left] == [Op.READ]


def test_invalid_acls_are_refused_with_kafkas_message(node: AclNode) -> None:
    bad = CA.AclCreation(
        resource_type=2,
        resource_name="t",
        resource_pattern_type=3,
        principal="alice",
        host="*",
        operation=3,
        permission_type=3,
    )
    response = node.call(create_acls, 3, ADMIN, creations=[bad, acl("ok", Op.READ)])
    assert response.results[0].error_code == E.INVALID_REQUEST
    assert response.results[0].error_message.startswith("Could not parse principal from `alice`")
    assert response.results[1].error_code == 0


def test_denials_are_logged_in_kafkas_shape(node: AclNode, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="kraft.authorizer"):
        fetch_codes(node, BOB, ["a"])
    assert (
        "Principal = User:bob is Denied operation = READ from host = unknown on resource = Topic:LITERAL:a "
        "for request = Fetch with resourceRefCount = 1 based on rule DefaultDeny"
    ) in caplog.messages


def test_without_an_authorizer_everything_is_allowed_and_the_acl_apis_are_disabled() -> None:
    open_node = AclNode(props={})
    assert create_topic(open_node, "t", BOB) == 0
    response = open_node.call(create_acls, 3, ADMIN, creations=[acl("t", Op.READ)])
    assert response.results[0].error_code == E.SECURITY_DISABLED
    assert response.results[0].error_message == "No Authorizer is configured."
    listed = open_node.call(
        describe_acls, 3, ADMIN, resource_type_filter=1, pattern_type_filter=1, operation=1, permission_type=1
    )
    assert listed.error_code == E.SECURITY_DISABLED
    assert not open_node.node.broker.image.acls  # type: ignore[union-attr]


def test_a_describe_quorum_request_from_a_super_user_is_answered(node: AclNode) -> None:
    quorum = node.call(describe_quorum, 2, ADMIN, controller=True, body=DescribeQuorumRequest())
    assert quorum.error_code == 0 and quorum.leader_id == 1


def test_creating_an_existing_acl_succeeds_without_a_second_record(node: AclNode) -> None:
    add_acls(node, acl("twice", Op.READ), acl("twice", Op.READ))
    add_acls(node, acl("twice", Op.READ))
    image = node.node.broker.image  # type: ignore[union-attr]
    assert [a.operation for a in image.acls.values() if a.resource_name == "twice"] == [Op.READ]


def test_acls_survive_a_snapshot_of_the_controller(node: AclNode) -> None:
    controller = node.node.controller
    assert controller is not None
    loaded = MetadataLoader().load_snapshot(10**6, 1, 0, snapshot_records_bytes(controller.image))
    assert loaded.acls == controller.image.acls and len(loaded.acls) >= 4


def test_describe_cluster_reports_the_cluster_operations_of_the_caller(node: AclNode) -> None:
    add_acls(node, acl("kafka-cluster", Op.ALTER, BOB, rt=ResourceType.CLUSTER))
    bob = node.call(describe_cluster, 1, BOB, include_cluster_authorized_operations=True)
    assert bob.cluster_authorized_operations == (1 << Op.ALTER) | (1 << Op.DESCRIBE)  # ALTER implies DESCRIBE
    alice = node.call(describe_cluster, 1, ALICE, include_cluster_authorized_operations=True)
    assert alice.cluster_authorized_operations == 0


def test_the_controller_listener_checks_as_the_broker_does(node: AclNode) -> None:
    topic = CT.CreatableTopic(
        name="via-controller", num_partitions=1, replication_factor=1, assignments=[], configs=[]
    )
    refused = node.call(create_topics, 7, BOB, controller=True, topics=[topic], timeout_ms=5000)
    assert refused.topics[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    heartbeat = node.call(
        broker_heartbeat,
        1,
        ALICE,
        controller=True,
        broker_id=1,
        broker_epoch=0,
        current_metadata_offset=0,
        want_fence=False,
        want_shut_down=False,
    )
    assert heartbeat.error_code == E.CLUSTER_AUTHORIZATION_FAILED  # CLUSTER_ACTION is the nodes' own
    created = node.call(create_topics, 7, ADMIN, controller=True, topics=[topic], timeout_ms=5000)
    assert created.topics[0].error_code == 0


def test_an_acl_for_one_host_applies_to_requests_from_that_address_only(node: AclNode) -> None:
    carol = KafkaPrincipal("User", "carol")
    creation = acl("b", Op.DESCRIBE, carol)
    creation.host = "10.0.0.7"
    add_acls(node, creation)

    def listed(host: str) -> dict[str, int]:
        response = node.call(metadata, 12, carol, host=host, topics=None, allow_auto_topic_creation=False)
        return {t.name: t.error_code for t in response.topics}

    assert listed("10.0.0.7") == {"b": 0}
    assert listed("10.0.0.8") == {}
    assert listed("") == {}  # a request that does not say where it came from matches only host "*"


def test_raft_rpcs_from_a_listener_need_cluster_action(node: AclNode) -> None:
    # Kafka's ControllerApis checks CLUSTER_ACTION on every raft RPC: a user who may log in to the
    # controller listener must not be able to vote or depose the leader.
    def vote(principal: KafkaPrincipal | None, correlation_id: int) -> VoteResponse | None:
        request = VoteRequest(
            cluster_id=None,
            candidate_epoch=10**6,
            candidate_key=ReplicaKey(2, None),
            voter_key=ReplicaKey(1, None),
            last_offset_epoch=10**6,
            last_offset=10**6,
            pre_vote=True,
        )
        envelope = Envelope(2, 1, correlation_id, request, principal, "127.0.0.1")
        node.now_ms += 5
        for out in node.node.poll(node.now_ms, [envelope]).outbound:
            if isinstance(out, Envelope) and out.correlation_id == correlation_id and not out.is_request:
                assert isinstance(out.body, VoteResponse)
                return out.body
        return None

    refused = vote(BOB, 1)
    assert refused is not None and refused.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    # The super user (a node's own principal) and a request from inside (no principal) reach the
    # core, which answers them itself (a pre-vote it does not grant: its own leader is live).
    for principal, cid in ((ADMIN, 2), (None, 3)):
        answered = vote(principal, cid)
        assert answered is not None and answered.error_code == 0, answered
    add_acls(node, acl("kafka-cluster", Op.CLUSTER_ACTION, BOB, rt=ResourceType.CLUSTER))
    allowed = vote(BOB, 4)
    assert allowed is not None and allowed.error_code == 0


def test_describe_cluster_on_the_controller_listener_needs_alter(node: AclNode) -> None:
    # Kafka's ControllerApis: unlike on a broker (open), DescribeCluster on a controller needs ALTER
    # on the cluster. (Carol: no test of this module's shared node gives her anything else.)
    CAROL = KafkaPrincipal("User", "carol")
    refused = node.call(
        describe_cluster, 1, CAROL, controller=True, include_cluster_authorized_operations=False
    )
    assert refused.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert node.call(describe_cluster, 1, CAROL, include_cluster_authorized_operations=False).error_code == 0
    admin = node.call(
        describe_cluster, 1, ADMIN, controller=True, include_cluster_authorized_operations=False
    )
    assert admin.error_code == 0 and admin.cluster_id
    add_acls(node, acl("kafka-cluster", Op.ALTER, CAROL, rt=ResourceType.CLUSTER))
    allowed = node.call(
        describe_cluster, 1, CAROL, controller=True, include_cluster_authorized_operations=False
    )
    assert allowed.error_code == 0
