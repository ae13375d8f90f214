"""The broker listener's read-only APIs over the image (spec 6.3-6.5, DescribeConfigs of 6.6).

Each handler is a pure function of (image, body, version, context), so the tests build images
directly and read the response values; the wire tests at the end encode those responses at every
version and decode them with kafka-python 3.0.12, an independent implementation of the schemas.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from kafka_python_bridge import KAFKA_PYTHON, from_kp, to_kp

from kraft.broker.apis import (
    BrokerApiContext,
    MetadataResult,
    handle_describe_cluster,
    handle_describe_configs,
    handle_describe_topic_partitions,
    handle_list_offsets,
    handle_metadata,
)
from kraft.common.errors import ConfigError
from kraft.common.uuids import ZERO_UUID
from kraft.metadata.configs import ConfigSource
from kraft.metadata.image import BrokerRegistration, Endpoint, MetadataImage, TopicImage
from kraft.metadata.partition import PartitionRegistration
from kraft.metadata.records import ConfigResourceType
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    describe_cluster,
    describe_configs,
    describe_topic_partitions,
    list_offsets,
    metadata,
)

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
LISTENER = "PLAINTEXT"
TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)
NO_OPS = -2147483648
MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR = uuid.UUID(int=0), uuid.UUID(int=1), uuid.UUID(int=2)
E = ErrorCode

MD: Any = metadata.REQUEST.cls
DC: Any = describe_cluster.REQUEST.cls
DTP: Any = describe_topic_partitions.REQUEST.cls
DCF: Any = describe_configs.REQUEST.cls


# ---------------------------------------------------------------------------------------------------
# Builders


def tid(n: int) -> uuid.UUID:
    return uuid.UUID(int=0xABC000 + n)


def broker(
    broker_id: int,
    *,
    fenced: bool = False,
    shutting_down: bool = False,
    listeners: tuple[str, ...] = (LISTENER,),
    rack: str | None = None,
    dirs: tuple[uuid.UUID, ...] = (),
) -> BrokerRegistration:
    return BrokerRegistration(
        id=broker_id,
        epoch=100 + broker_id,
        incarnation_id=uuid.UUID(int=broker_id),
        listeners=tuple(
            Endpoint(
                name=name, host=f"{name.lower()}-b{broker_id}", port=9000 + broker_id, security_protocol=0
            )
            for name in listeners
        ),
        supported_features=(("metadata.version", 1, 25),),
        rack=rack,
        fenced=fenced,
        in_controlled_shutdown=shutting_down,
        is_migrating_zk_broker=False,
        directories=dirs,
        registration_offset=0,
    )


def part(
    replicas: tuple[int, ...],
    *,
    leader: int | None = None,
    isr: tuple[int, ...] | None = None,
    elr: tuple[int, ...] = (),
    lke: tuple[int, ...] = (),
    leader_epoch: int = 0,
    dirs: tuple[uuid.UUID, ...] = (),
) -> PartitionRegistration:
    return PartitionRegistration(
        replicas=replicas,
        directories=dirs,
        isr=replicas if isr is None else isr,
        elr=elr,
        last_known_elr=lke,
        leader=replicas[0] if leader is None else leader,
        leader_epoch=leader_epoch,
    )


def topic(name: str, n: int, partitions: list[PartitionRegistration] | int) -> TopicImage:
    if isinstance(partitions, int):
        partitions = [part((1, 2)) for _ in range(partitions)]
    return TopicImage(name=name, id=tid(n), partitions=dict(enumerate(partitions)))


def image(
    brokers: list[BrokerRegistration] | None = None,
    topics: Sequence[TopicImage] = (),
    configs: dict[tuple[int, str], dict[str, str]] | None = None,
) -> MetadataImage:
    if brokers is None:
        brokers = [broker(1), broker(2)]
    return MetadataImage(brokers={b.id: b for b in brokers}, topics=topics, configs=configs)


def ctx(node_id: int = 1, **kw: Any) -> BrokerApiContext:
    return BrokerApiContext(node_id=node_id, cluster_id=CLUSTER_ID, listener_name=LISTENER, **kw)


def md_request(names: list[str] | None, *, allow: bool = True, ids: Sequence[uuid.UUID] = ()) -> Any:
    if names is None and not ids:
        return MD(topics=None, allow_auto_topic_creation=allow)
    topics = [MD.MetadataRequestTopic(name=n, topic_id=ZERO_UUID) for n in names or ()]
    topics += [MD.MetadataRequestTopic(name=None, topic_id=i) for i in ids]
    return MD(topics=topics, allow_auto_topic_creation=allow)


def md(img: MetadataImage, body: Any, version: int = 13, c: BrokerApiContext | None = None) -> Any:
    result = handle_metadata(img, body, version, c or ctx())
    assert isinstance(result, MetadataResult)
    return result.response


def by_name(response: Any) -> dict[str, Any]:
    return {t.name: t for t in response.topics}


def dtp_request(names: list[str], limit: int = 2000, cursor: tuple[str, int] | None = None) -> Any:
    return DTP(
        topics=[DTP.TopicRequest(name=n) for n in names],
        response_partition_limit=limit,
        cursor=None if cursor is None else DTP.Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )


def dtp(img: MetadataImage, body: Any, c: BrokerApiContext | None = None) -> Any:
    return handle_describe_topic_partitions(img, body, 0, c or ctx())


def page(response: Any) -> tuple[list[str], tuple[str, int] | None]:
    """The partitions a DescribeTopicPartitions page lists ("a0") and its NextCursor."""
    listed = [f"{t.name}{p.partition_index}" for t in response.topics for p in t.partitions]
    nc = response.next_cursor
    return listed, None if nc is None else (nc.topic_name, nc.partition_index)


# ---------------------------------------------------------------------------------------------------
# Metadata (spec 6.4)


def test_metadata_null_topics_lists_every_topic_sorted_by_name_with_its_partitions() -> None:
    img = image(topics=[topic("zeta", 1, 1), topic("alpha", 2, 2), topic("__consumer_offsets", 3, 1)])
    resp = md(img, md_request(None))
    assert [t.name for t in resp.topics] == ["__consumer_offsets", "alpha", "zeta"]
    alpha = by_name(resp)["alpha"]
    assert alpha.error_code == E.NONE
    assert alpha.topic_id == tid(2)
    assert [p.partition_index for p in alpha.partitions] == [0, 1]
    assert resp.cluster_id == CLUSTER_ID
    assert resp.error_code == 0
    assert resp.cluster_authorized_operations == NO_OPS
    assert all(t.topic_authorized_operations == NO_OPS for t in resp.topics)


def test_metadata_empty_topic_list_means_none_from_v1_and_all_at_v0() -> None:
    img = image(topics=[topic("a", 1, 1), topic("b", 2, 1)])
    assert md(img, md_request([]), version=1).topics == []
    assert md(img, md_request([]), version=13).topics == []
    assert [t.name for t in md(img, md_request([]), version=0).topics] == ["a", "b"]


def test_metadata_brokers_are_the_unfenced_ones_with_the_listener_including_shutting_down() -> None:
    img = image(
        brokers=[
            broker(4, listeners=("INTERNAL",)),
            broker(1, rack="r1"),
            broker(3, fenced=True),
            broker(2, shutting_down=True),
            broker(5, listeners=("INTERNAL", LISTENER)),
        ]
    )
    resp = md(img, md_request([]))
    assert [(b.node_id, b.host, b.port, b.rack) for b in resp.brokers] == [
        (1, "plaintext-b1", 9001, "r1"),
        (2, "plaintext-b2", 9002, None),
        (5, "plaintext-b5", 9005, None),
    ]


@pytest.mark.parametrize(
    ("node_id", "brokers", "expected"),
    [
        pytest.param(3, [broker(1), broker(2), broker(3)], 3, id="self-when-alive-with-listener"),
        pytest.param(9, [broker(2), broker(1)], 1, id="lowest-alive-when-self-is-not-a-broker"),
        pytest.param(1, [broker(1, fenced=True), broker(3), broker(2)], 2, id="self-fenced"),
        pytest.param(
            1, [broker(1, listeners=("X",)), broker(2, listeners=("X",)), broker(3)], 3, id="listener"
        ),
        pytest.param(1, [broker(1, fenced=True), broker(2, listeners=("X",))], -1, id="none-alive"),
        pytest.param(1, [], -1, id="no-brokers"),
    ],
)
def test_metadata_controller_id_is_self_else_lowest_alive_broker_with_the_listener(
    node_id: int, brokers: list[BrokerRegistration], expected: int
) -> None:
    assert md(image(brokers=brokers), md_request([]), c=ctx(node_id)).controller_id == expected


def test_metadata_partition_reports_leader_epoch_replicas_isr_and_offline_replicas() -> None:
    img = image(
        brokers=[broker(1), broker(2), broker(3, fenced=True), broker(4, listeners=("X",))],
        topics=[topic("t", 1, [part((1, 2, 3, 4, 5), isr=(1, 2, 3), leader_epoch=7)])],
    )
    (p,) = by_name(md(img, md_request(["t"])))["t"].partitions
    assert (p.error_code, p.leader_id, p.leader_epoch) == (E.NONE, 1, 7)
    assert p.replica_nodes == [1, 2, 3, 4, 5]  # unfiltered after v0
    assert p.isr_nodes == [1, 2, 3]
    # 3 fenced, 4 without the listener, 5 not registered.
    assert p.offline_replicas == [3, 4, 5]


def test_offline_replicas_follow_the_replicas_directories() -> None:
    d1, d2 = uuid.UUID(int=1001), uuid.UUID(int=1002)
    img = image(
        brokers=[
            broker(1, dirs=(d1,)),
            broker(2, dirs=(d1,)),
            broker(3, dirs=(d1,)),
            broker(4, dirs=(d1,)),
            broker(5),
            broker(6, dirs=(d1,)),
            broker(7),
        ],
        topics=[
            topic(
                "t",
                1,
                [
                    part(
                        (1, 2, 3, 4, 5, 6, 7),
                        dirs=(d1, d2, LOST_DIR, MIGRATING_DIR, d2, UNASSIGNED_DIR, LOST_DIR),
                    )
                ],
            ),
            topic("old", 2, [part((1, 2))]),  # recorded before directory assignment: all online
        ],
    )
    resp = by_name(md(img, md_request(["t", "old"])))
    # 2's directory d2 is not among its online ones; LOST is offline even on a broker that
    # registered no directories; any other directory on such a broker (5) counts as online.
    assert resp["t"].partitions[0].offline_replicas == [2, 3, 7]
    assert resp["old"].partitions[0].offline_replicas == []


@pytest.mark.parametrize(
    ("leader_broker", "version", "error"),
    [
        pytest.param(None, 13, E.LEADER_NOT_AVAILABLE, id="leader-not-registered"),
        pytest.param(broker(7, listeners=("X",)), 6, E.LISTENER_NOT_FOUND, id="no-listener-v6"),
        pytest.param(broker(7, listeners=("X",)), 13, E.LISTENER_NOT_FOUND, id="no-listener-v13"),
        pytest.param(broker(7, listeners=("X",)), 5, E.LEADER_NOT_AVAILABLE, id="no-listener-v5"),
    ],
)
def test_metadata_leader_unavailable_on_the_listener_is_an_error_with_leader_minus_one(
    leader_broker: BrokerRegistration | None, version: int, error: ErrorCode
) -> None:
    brokers = [broker(1)] + ([leader_broker] if leader_broker else [])
    img = image(brokers=brokers, topics=[topic("t", 1, [part((7, 1), leader_epoch=4)])])
    (p,) = by_name(md(img, md_request(["t"]), version=version))["t"].partitions
    assert (p.error_code, p.leader_id, p.leader_epoch) == (error, -1, 4)
    assert p.replica_nodes == [7, 1]


def test_metadata_leaderless_partition_is_leader_not_available() -> None:
    img = image(topics=[topic("t", 1, [part((1, 2), leader=-1, isr=())])])
    (p,) = by_name(md(img, md_request(["t"]), version=13))["t"].partitions
    assert (p.error_code, p.leader_id) == (E.LEADER_NOT_AVAILABLE, -1)


def test_metadata_fenced_leader_with_the_listener_is_still_reported_as_leader() -> None:
    # Kafka's getAliveEndpoint does not check fencing: the image still names it leader.
    img = image(brokers=[broker(1, fenced=True), broker(2)], topics=[topic("t", 1, [part((1, 2))])])
    (p,) = by_name(md(img, md_request(["t"])))["t"].partitions
    assert (p.error_code, p.leader_id, p.offline_replicas) == (E.NONE, 1, [1])


def test_metadata_v0_filters_unavailable_replicas_and_reports_replica_not_available() -> None:
    img = image(
        brokers=[broker(1), broker(2, fenced=True), broker(3)],
        topics=[topic("t", 1, [part((1, 2, 3), isr=(1, 3))]), topic("u", 2, [part((1, 3))])],
    )
    resp = by_name(md(img, md_request(["t", "u"]), version=0))
    (p,) = resp["t"].partitions
    assert (p.error_code, p.replica_nodes, p.isr_nodes) == (E.REPLICA_NOT_AVAILABLE, [1, 3], [1, 3])
    assert resp["u"].partitions[0].error_code == E.NONE
    (p1,) = by_name(md(img, md_request(["t"]), version=1))["t"].partitions
    assert (p1.error_code, p1.replica_nodes) == (E.NONE, [1, 2, 3])


def test_metadata_unknown_topic_is_auto_created_by_default() -> None:
    result = handle_metadata(image(), md_request(["new", "other"]), 13, ctx())
    assert result.topics_to_create == ("new", "other")
    t = by_name(result.response)["new"]
    assert (t.error_code, t.topic_id, t.partitions, t.is_internal) == (
        E.LEADER_NOT_AVAILABLE,
        ZERO_UUID,
        [],
        False,
    )


@pytest.mark.parametrize(
    ("version", "allow", "static", "created"),
    [
        pytest.param(13, False, {}, False, id="v13-client-says-no"),
        pytest.param(4, False, {}, False, id="v4-client-says-no"),
        pytest.param(4, True, {}, True, id="v4-client-says-yes"),
        pytest.param(3, False, {}, True, id="v3-has-no-flag-so-always-asks"),
        pytest.param(0, True, {}, True, id="v0"),
        pytest.param(13, True, {"auto.create.topics.enable": "false"}, False, id="disabled-on-broker"),
        pytest.param(2, True, {"auto.create.topics.enable": " FALSE "}, False, id="disabled-v2"),
    ],
)
def test_metadata_auto_creation_needs_the_client_flag_and_the_broker_config(
    version: int, allow: bool, static: dict[str, str], created: bool
) -> None:
    result = handle_metadata(image(), md_request(["new"], allow=allow), version, ctx(static_configs=static))
    (t,) = result.response.topics
    assert result.topics_to_create == (("new",) if created else ())
    assert t.error_code == (E.LEADER_NOT_AVAILABLE if created else E.UNKNOWN_TOPIC_OR_PARTITION)


@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("name", ["", ".", "..", "x" * 250, "bad name", "caf\u00e9", "a/b"])
def test_metadata_invalid_topic_name_is_invalid_topic_exception_and_never_created(
    name: str, allow: bool
) -> None:
    result = handle_metadata(image(), md_request([name], allow=allow), 13, ctx())
    (t,) = result.response.topics
    assert (t.name, t.error_code) == (name, E.INVALID_TOPIC_EXCEPTION)
    assert result.topics_to_create == ()


def test_metadata_longest_legal_name_is_created() -> None:
    name = "x" * 249
    assert handle_metadata(image(), md_request([name]), 13, ctx()).topics_to_create == (name,)


def test_metadata_all_topics_never_auto_creates() -> None:
    assert handle_metadata(image(), md_request([]), 0, ctx()).topics_to_create == ()
    assert handle_metadata(image(), md_request(None), 13, ctx()).topics_to_create == ()


@pytest.mark.parametrize("name", ["__consumer_offsets", "__transaction_state", "__share_group_state"])
def test_metadata_internal_topics_are_flagged_existing_or_not(name: str) -> None:
    img = image(topics=[topic(name, 1, 1), topic("plain", 2, 1), topic("__cluster_metadata_x", 3, 1)])
    resp = by_name(md(img, md_request(None)))
    assert resp[name].is_internal
    assert not resp["plain"].is_internal
    assert not resp["__cluster_metadata_x"].is_internal
    missing = handle_metadata(image(), md_request([name], allow=False), 13, ctx()).response.topics[0]
    assert (missing.error_code, missing.is_internal) == (E.UNKNOWN_TOPIC_OR_PARTITION, True)


def test_metadata_requested_topics_are_deduplicated_and_sorted_by_name() -> None:
    img = image(topics=[topic("b", 1, 1), topic("a", 2, 1)])
    result = handle_metadata(img, md_request(["c", "b", "a", "b", "c"]), 13, ctx())
    assert [t.name for t in result.response.topics] == ["a", "b", "c"]
    assert result.topics_to_create == ("c",)


def test_metadata_v12_finds_topics_by_id_and_answers_unknown_topic_id() -> None:
    img = image(topics=[topic("b", 1, 2), topic("a", 2, 1)])
    unknown = uuid.UUID(int=77)
    resp = md(img, md_request([], ids=[tid(1), unknown, tid(2), tid(1)]), version=12)
    first, *named = resp.topics
    assert (first.error_code, first.name, first.topic_id, first.partitions) == (
        E.UNKNOWN_TOPIC_ID,
        None,
        unknown,
        [],
    )
    assert [(t.name, t.topic_id, t.error_code) for t in named] == [
        ("a", tid(2), E.NONE),
        ("b", tid(1), E.NONE),
    ]
    assert len(named[1].partitions) == 2


def test_metadata_by_id_ignores_names_in_the_same_request_as_kafka_does() -> None:
    img = image(topics=[topic("a", 1, 1), topic("b", 2, 1)])
    result = handle_metadata(img, md_request(["b", "new"], ids=[tid(1)]), 13, ctx())
    assert [t.name for t in result.response.topics] == ["a"]
    assert result.topics_to_create == ()


@pytest.mark.parametrize(
    ("version", "name", "topic_id"),
    [
        pytest.param(10, None, ZERO_UUID, id="v10-null-name"),
        pytest.param(11, None, tid(1), id="v11-null-name"),
        pytest.param(11, "a", tid(1), id="v11-topic-id"),
        pytest.param(13, None, ZERO_UUID, id="v13-neither-name-nor-id"),
    ],
)
def test_metadata_malformed_topic_entries_fail_the_whole_request_with_invalid_request(
    version: int, name: str | None, topic_id: uuid.UUID
) -> None:
    img = image(topics=[topic("a", 1, 1)])
    body = MD(
        topics=[
            MD.MetadataRequestTopic(name="a", topic_id=ZERO_UUID),
            MD.MetadataRequestTopic(name=name, topic_id=topic_id),
        ]
    )
    result = handle_metadata(img, body, version, ctx())
    assert result.topics_to_create == ()
    resp = result.response
    assert [(t.name, t.topic_id, t.error_code, t.partitions) for t in resp.topics] == [
        ("a", ZERO_UUID, E.INVALID_REQUEST, []),
        ("" if name is None else name, topic_id, E.INVALID_REQUEST, []),
    ]
    assert resp.brokers == []
    # The answer encodes at that version (a null name would not, before v12).
    metadata.API.encode_response_body(resp, version)


def test_metadata_topic_id_is_reported_for_existing_topics_and_zero_for_missing_ones() -> None:
    img = image(topics=[topic("a", 5, 1)])
    resp = by_name(md(img, md_request(["a", "gone"], allow=False), version=10))
    assert (resp["a"].topic_id, resp["gone"].topic_id) == (tid(5), ZERO_UUID)


def test_context_rejects_a_malformed_auto_create_setting() -> None:
    with pytest.raises(ConfigError):
        ctx(static_configs={"auto.create.topics.enable": "maybe"})


# ---------------------------------------------------------------------------------------------------
# DescribeCluster (spec 6.5)


def test_describe_cluster_brokers_are_the_live_ones_with_the_listener() -> None:
    img = image(
        brokers=[
            broker(2, rack="r2"),
            broker(1),
            broker(3, fenced=True),
            broker(4, listeners=("X",)),
            broker(5, shutting_down=True),
        ]
    )
    for version in (0, 1, 2):
        resp = handle_describe_cluster(img, DC(endpoint_type=1), version, ctx(2))
        assert (resp.error_code, resp.error_message, resp.cluster_id) == (E.NONE, None, CLUSTER_ID)
        assert resp.endpoint_type == 1
        assert resp.controller_id == 2
        assert resp.cluster_authorized_operations == NO_OPS
        assert [(b.broker_id, b.host, b.port, b.rack, b.is_fenced) for b in resp.brokers] == [
            (1, "plaintext-b1", 9001, None, False),
            (2, "plaintext-b2", 9002, "r2", False),
            (5, "plaintext-b5", 9005, None, False),
        ]


def test_describe_cluster_v2_includes_fenced_brokers_when_asked() -> None:
    img = image(brokers=[broker(1), broker(3, fenced=True), broker(4, fenced=True, listeners=("X",))])
    resp = handle_describe_cluster(img, DC(endpoint_type=1, include_fenced_brokers=True), 2, ctx(3))
    assert [(b.broker_id, b.is_fenced) for b in resp.brokers] == [(1, False), (3, True)]
    # The controller id stays an alive broker, not this fenced node.
    assert resp.controller_id == 1
    describe_cluster.API.encode_response_body(resp, 2)


def test_describe_cluster_controller_id_is_minus_one_without_alive_brokers() -> None:
    img = image(brokers=[broker(1, fenced=True)])
    resp = handle_describe_cluster(img, DC(endpoint_type=1, include_fenced_brokers=True), 2, ctx(1))
    assert [b.broker_id for b in resp.brokers] == [1]
    assert resp.controller_id == -1


CONTROLLERS = ((3001, "c1", 9093, None), (3000, "c0", 9093, "rack-c"))


@pytest.mark.parametrize(("active", "expected"), [(3001, 3001), (None, -1), (42, -1)])
def test_describe_cluster_type_2_lists_the_controllers_and_the_active_one(
    active: int | None, expected: int
) -> None:
    c = ctx(controllers=CONTROLLERS, active_controller_id=active)
    resp = handle_describe_cluster(image(), DC(endpoint_type=2), 1, c)
    assert (resp.error_code, resp.endpoint_type, resp.cluster_id) == (E.NONE, 2, CLUSTER_ID)
    assert [(b.broker_id, b.host, b.port, b.rack) for b in resp.brokers] == [
        (3000, "c0", 9093, "rack-c"),
        (3001, "c1", 9093, None),
    ]
    assert resp.controller_id == expected


def test_describe_cluster_v0_always_describes_brokers() -> None:
    c = ctx(controllers=CONTROLLERS, active_controller_id=3000)
    resp = handle_describe_cluster(image(), DC(endpoint_type=2), 0, c)  # v0 has no EndpointType
    assert [b.broker_id for b in resp.brokers] == [1, 2]
    describe_cluster.API.encode_response_body(resp, 0)


@pytest.mark.parametrize("endpoint_type", [0, 3, -1])
def test_describe_cluster_unknown_endpoint_type_is_unsupported(endpoint_type: int) -> None:
    resp = handle_describe_cluster(image(), DC(endpoint_type=endpoint_type), 1, ctx())
    assert resp.error_code == E.UNSUPPORTED_ENDPOINT_TYPE
    assert resp.error_message == f"Unsupported endpoint type {endpoint_type}"
    assert (resp.brokers, resp.controller_id) == ([], -1)


# ---------------------------------------------------------------------------------------------------
# DescribeTopicPartitions (spec 6.3)

AB = [topic("b", 2, 2), topic("a", 1, 3)]


@pytest.mark.parametrize("names", [[], ["b", "a"]], ids=["all-topics", "explicit"])
def test_describe_topic_partitions_spec_worked_example(names: list[str]) -> None:
    img = image(topics=AB)
    first = dtp(img, dtp_request(names, limit=4))
    assert page(first) == (["a0", "a1", "a2", "b0"], ("b", 1))
    second = dtp(img, dtp_request(names, limit=4, cursor=("b", 1)))
    assert page(second) == (["b1"], None)
    assert page(dtp(img, dtp_request(names, limit=3))) == (["a0", "a1", "a2"], ("b", 0))


def test_describe_topic_partitions_limit_is_at_least_one_and_capped_by_the_broker() -> None:
    img = image(topics=AB)
    assert page(dtp(img, dtp_request([], limit=0))) == (["a0"], ("a", 1))
    assert page(dtp(img, dtp_request([], limit=-5))) == (["a0"], ("a", 1))
    capped = ctx(max_request_partition_size_limit=2)
    assert page(dtp(img, dtp_request([], limit=2000), capped)) == (["a0", "a1"], ("a", 2))
    assert page(dtp(img, dtp_request([], limit=5))) == (["a0", "a1", "a2", "b0", "b1"], None)


def test_describe_topic_partitions_candidates_start_at_the_cursor_topic_in_code_point_order() -> None:
    img = image(topics=[topic(n, i, 1) for i, n in enumerate(["Z", "a", "a.b", "a-b", "a_b", "b"])])
    listed, _ = page(dtp(img, dtp_request([])))
    assert listed == ["Z0", "a0", "a-b0", "a.b0", "a_b0", "b0"]
    listed, _ = page(dtp(img, dtp_request([], cursor=("a.b", 0))))
    assert listed == ["a.b0", "a_b0", "b0"]
    # Duplicates and names before the cursor topic are dropped from an explicit list.
    resp = dtp(img, dtp_request(["b", "a.b", "Z", "b", "a.b"], cursor=("a.b", 0)))
    assert [t.name for t in resp.topics] == ["a.b", "b"]


def test_describe_topic_partitions_all_topics_cursor_need_not_exist() -> None:
    img = image(topics=AB)
    assert page(dtp(img, dtp_request([], cursor=("aa", 5)))) == (["b0", "b1"], None)


@pytest.mark.parametrize(
    ("names", "cursor"),
    [
        pytest.param(["a", "b"], ("c", 0), id="cursor-topic-not-in-list"),
        pytest.param(["b", "a"], ("a", -1), id="negative-partition"),
        pytest.param(["b", "zz"], ("a", 0), id="cursor-before-every-topic"),
    ],
)
def test_describe_topic_partitions_invalid_cursor_fails_every_requested_topic(
    names: list[str], cursor: tuple[str, int]
) -> None:
    img = image(topics=AB)
    resp = dtp(img, dtp_request(names + names[:1], cursor=cursor))
    assert [(t.name, t.error_code, t.topic_id, t.is_internal, t.partitions) for t in resp.topics] == [
        (n, E.INVALID_REQUEST, ZERO_UUID, False, []) for n in names + names[:1]
    ]
    assert resp.next_cursor is None


def test_describe_topic_partitions_negative_cursor_partition_for_all_topics_lists_nothing() -> None:
    resp = dtp(image(topics=AB), dtp_request([], cursor=("a", -1)))
    assert (resp.topics, resp.next_cursor) == ([], None)


def test_describe_topic_partitions_missing_topics_are_errors_only_for_an_explicit_list() -> None:
    img = image(topics=AB)
    resp = dtp(img, dtp_request(["a", "gone", "bad name", "__transaction_state"]))
    got = [(t.name, t.error_code, t.topic_id, t.is_internal, len(t.partitions)) for t in resp.topics]
    assert got == [
        ("__transaction_state", E.UNKNOWN_TOPIC_OR_PARTITION, ZERO_UUID, True, 0),
        ("a", E.NONE, tid(1), False, 3),
        ("bad name", E.INVALID_TOPIC_EXCEPTION, ZERO_UUID, False, 0),
        ("gone", E.UNKNOWN_TOPIC_OR_PARTITION, ZERO_UUID, False, 0),
    ]
    assert [t.name for t in dtp(img, dtp_request([])).topics] == ["a", "b"]


def test_describe_topic_partitions_empty_name_is_invalid_topic() -> None:
    # Kafka hits a NullPointerException here (no cursor, name == ""); we answer the name's error.
    resp = dtp(image(topics=AB), dtp_request(["", "a"]))
    assert [(t.name, t.error_code) for t in resp.topics] == [("", E.INVALID_TOPIC_EXCEPTION), ("a", E.NONE)]


def test_describe_topic_partitions_a_full_page_stops_before_the_next_topic_even_a_missing_one() -> None:
    img = image(topics=AB)
    resp = dtp(img, dtp_request(["a", "aa", "b"], limit=3))
    assert page(resp) == (["a0", "a1", "a2"], ("aa", 0))
    assert [t.name for t in resp.topics] == ["a"]
    # A missing topic takes no room: it is listed and the walk goes on.
    assert page(dtp(img, dtp_request(["a", "aa", "b"], limit=4))) == (["a0", "a1", "a2", "b0"], ("b", 1))
    assert [t.name for t in dtp(img, dtp_request(["a", "aa", "b"], limit=4)).topics] == ["a", "aa", "b"]


def test_describe_topic_partitions_cursor_past_the_last_partition_lists_the_topic_empty() -> None:
    img = image(topics=AB)
    resp = dtp(img, dtp_request([], limit=2, cursor=("a", 7)))
    assert [(t.name, len(t.partitions)) for t in resp.topics] == [("a", 0), ("b", 2)]
    assert resp.next_cursor is None


def test_describe_topic_partitions_reports_partition_state_on_the_listener() -> None:
    img = image(
        brokers=[broker(1), broker(2, fenced=True), broker(3, listeners=("X",))],
        topics=[
            topic(
                "t",
                1,
                [
                    part((1, 2, 4), isr=(1,), elr=(2,), lke=(4,), leader_epoch=9),
                    part((3, 1), isr=(3, 1)),  # leader without the listener
                    part((4, 1), isr=(1,), leader=4),  # leader not registered
                    part((2, 1), leader=2),  # fenced leader that has the listener
                    part((1, 2), leader=-1, isr=()),
                ],
            )
        ],
    )
    (t,) = dtp(img, dtp_request(["t"])).topics
    rows = [
        (
            p.partition_index,
            p.error_code,
            p.leader_id,
            p.leader_epoch,
            p.replica_nodes,
            p.isr_nodes,
            p.eligible_leader_replicas,
            p.last_known_elr,
            p.offline_replicas,
        )
        for p in t.partitions
    ]
    assert rows == [
        (0, E.NONE, 1, 9, [1, 2, 4], [1], [2], [4], [2, 4]),
        (1, E.NONE, -1, 0, [3, 1], [3, 1], [], [], [3]),
        (2, E.NONE, -1, 0, [4, 1], [1], [], [], [4]),
        (3, E.NONE, 2, 0, [2, 1], [2, 1], [], [], [2]),
        (4, E.NONE, -1, 0, [1, 2], [], [], [], [2]),
    ]
    assert t.topic_authorized_operations == NO_OPS


@pytest.mark.parametrize("name", ["__consumer_offsets", "__transaction_state", "__share_group_state"])
def test_describe_topic_partitions_flags_internal_topics(name: str) -> None:
    resp = dtp(image(topics=[topic(name, 1, 1), topic("x", 2, 1)]), dtp_request([]))
    assert {t.name: t.is_internal for t in resp.topics} == {name: True, "x": False}


# ---------------------------------------------------------------------------------------------------
# DescribeConfigs (spec 6.6, on the broker)

STATIC = {"min.insync.replicas": "2", "num.partitions": "4", "log.retention.ms": "5000"}
CONFIGS = {
    (TOPIC, "t"): {"retention.ms": "1000"},
    (BROKER, "1"): {"log.retention.bytes": "123"},
    (BROKER, "2"): {"log.retention.bytes": "999"},
    (BROKER, ""): {"num.partitions": "6", "unclean.leader.election.enable": "true"},
}


def dcf(resources: list[tuple[int, str, list[str] | None]], version: int = 4, synonyms: bool = False) -> Any:
    body = DCF(
        resources=[
            DCF.DescribeConfigsResource(resource_type=t, resource_name=n, configuration_keys=k)
            for t, n, k in resources
        ],
        include_synonyms=synonyms,
    )
    img = image(topics=[topic("t", 1, 1)], configs=CONFIGS)
    return handle_describe_configs(img, body, version, ctx(1, static_configs=STATIC))


def rows(result: Any) -> dict[str, tuple[str | None, int]]:
    return {c.name: (c.value, c.config_source) for c in result.configs}


def test_describe_configs_topic_resolves_topic_then_broker_then_static_then_default() -> None:
    (r,) = dcf([(TOPIC, "t", None)]).results
    assert (r.error_code, r.resource_type, r.resource_name) == (E.NONE, TOPIC, "t")
    got = rows(r)
    assert got["retention.ms"] == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert got["retention.bytes"] == ("123", ConfigSource.DYNAMIC_BROKER_CONFIG)  # this node's synonym
    assert got["unclean.leader.election.enable"] == ("true", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert got["min.insync.replicas"] == ("2", ConfigSource.STATIC_BROKER_CONFIG)
    assert got["compression.type"] == ("producer", ConfigSource.DEFAULT_CONFIG)


def test_describe_configs_this_broker_lists_its_own_dynamic_and_static_values() -> None:
    (r,) = dcf([(BROKER, "1", None)]).results
    assert (r.error_code, r.resource_name) == (E.NONE, "1")
    got = rows(r)
    assert got["log.retention.bytes"] == ("123", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert got["num.partitions"] == ("6", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert got["log.retention.ms"] == ("5000", ConfigSource.STATIC_BROKER_CONFIG)
    assert got["delete.topic.enable"] == ("true", ConfigSource.DEFAULT_CONFIG)


def test_describe_configs_broker_id_in_another_spelling_still_names_this_node() -> None:
    (r,) = dcf([(BROKER, "01", ["log.retention.bytes"])]).results
    assert (r.error_code, r.resource_name, rows(r)) == (
        E.NONE,
        "01",
        {"log.retention.bytes": ("123", ConfigSource.DYNAMIC_BROKER_CONFIG)},
    )


def test_describe_configs_cluster_default_lists_only_what_is_set_there() -> None:
    (r,) = dcf([(BROKER, "", None)]).results
    assert r.error_code == E.NONE
    assert rows(r) == {
        "num.partitions": ("6", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        "unclean.leader.election.enable": ("true", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
    }


def test_describe_configs_another_broker_or_a_bad_id_is_invalid_request() -> None:
    other, bad = dcf([(BROKER, "2", None), (BROKER, "two", None)]).results
    assert (other.error_code, other.configs, other.resource_name) == (E.INVALID_REQUEST, [], "2")
    assert other.error_message == "Unexpected broker id, expected 1 or empty string, but received 2"
    assert (bad.error_code, bad.error_message) == (
        E.INVALID_REQUEST,
        "Broker id must be an integer, but it is: two",
    )


def test_describe_configs_unknown_and_invalid_topics() -> None:
    unknown, invalid = dcf([(TOPIC, "gone", None), (TOPIC, "no way", None)]).results
    assert (unknown.error_code, unknown.configs) == (E.UNKNOWN_TOPIC_OR_PARTITION, [])
    assert (invalid.error_code, invalid.resource_name, invalid.configs) == (
        E.INVALID_TOPIC_EXCEPTION,
        "no way",
        [],
    )


def test_describe_configs_keys_filter_and_an_empty_list_means_every_key() -> None:
    (some,) = dcf([(TOPIC, "t", ["retention.ms", "nope"])]).results
    assert list(rows(some)) == ["retention.ms"]
    (every,) = dcf([(TOPIC, "t", [])]).results
    (null,) = dcf([(TOPIC, "t", None)]).results
    assert rows(every) == rows(null)
    assert len(rows(every)) > 5


def test_describe_configs_keeps_the_request_order_and_synonyms() -> None:
    results = dcf(
        [(BROKER, "9", None), (TOPIC, "t", ["retention.ms"]), (BROKER, "", None)], synonyms=True
    ).results
    assert [(r.resource_type, r.resource_name, r.error_code) for r in results] == [
        (BROKER, "9", E.INVALID_REQUEST),
        (TOPIC, "t", E.NONE),
        (BROKER, "", E.NONE),
    ]
    (row,) = results[1].configs
    assert [(s.name, s.value, s.source) for s in row.synonyms] == [
        ("retention.ms", "1000", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ("log.retention.ms", "5000", ConfigSource.STATIC_BROKER_CONFIG),
        ("retention.ms", "604800000", ConfigSource.DEFAULT_CONFIG),
    ]


# ---------------------------------------------------------------------------------------------------
# Wire exactness: our bytes, decoded by kafka-python 3.0.12, give the same values back, and
# kafka-python re-encodes them to the same bytes.


def _check_wire(api: Any, response: Any, version: int) -> Any:
    """Encode at ``version``; return kafka-python's decoded value after checking both directions."""
    _, kp_cls = KAFKA_PYTHON[api.key]
    flexible = api.is_flexible(version)
    ours = api.encode_response_body(response, version)
    ours_decoded = api.response.decode(ours, version, flexible)
    kp_value = kp_cls.decode(ours, version=version)
    assert from_kp(api.response, kp_value) == ours_decoded
    assert bytes(to_kp(api.response, ours_decoded, kp_cls, version).encode(version=version)) == ours
    return kp_value


def _rich_image() -> MetadataImage:
    return image(
        brokers=[broker(1, rack="r1"), broker(2), broker(3, fenced=True), broker(4, listeners=("X",))],
        topics=[
            topic("a", 1, [part((1, 2, 3), isr=(1, 2), elr=(3,), lke=(3,), leader_epoch=5), part((2, 1))]),
            topic("__consumer_offsets", 2, [part((4, 1), leader=4), part((1, 2), leader=-1, isr=())]),
        ],
    )


@pytest.mark.parametrize("version", range(0, 14))
def test_metadata_responses_decode_with_kafka_python_at_every_version(version: int) -> None:
    img = _rich_image()
    names: list[str] | None = None if version >= 1 else []
    for body in (md_request(names), md_request(["a", "new", "bad name", "__consumer_offsets"])):
        resp = handle_metadata(img, body, version, ctx(2)).response
        kp = _check_wire(metadata.API, resp, version)
        assert [b.node_id for b in kp.brokers] == [1, 2]
        assert {t.name for t in kp.topics} >= {"a", "__consumer_offsets"}
    if version >= 12:
        resp = md(img, md_request([], ids=[tid(1), uuid.UUID(int=5)]), version)
        kp = _check_wire(metadata.API, resp, version)
        assert [(t.name, t.error_code) for t in kp.topics] == [(None, E.UNKNOWN_TOPIC_ID), ("a", E.NONE)]
    if version >= 10:
        bad = MD(topics=[MD.MetadataRequestTopic(name=None, topic_id=ZERO_UUID)])
        _check_wire(metadata.API, handle_metadata(img, bad, version, ctx()).response, version)


def test_describe_topic_partitions_response_decodes_with_kafka_python_and_elr_is_never_null() -> None:
    img = _rich_image()
    for body in (dtp_request([], limit=3), dtp_request(["a", "gone"]), dtp_request(["a"], cursor=("b", 0))):
        _check_wire(describe_topic_partitions.API, dtp(img, body), 0)
    kp = _check_wire(describe_topic_partitions.API, dtp(img, dtp_request(["a"])), 0)
    (t,) = kp.topics
    assert [(p.eligible_leader_replicas, p.last_known_elr) for p in t.partitions] == [([3], [3]), ([], [])]
    kp = _check_wire(describe_topic_partitions.API, dtp(img, dtp_request([], limit=1)), 0)
    assert (kp.next_cursor.topic_name, kp.next_cursor.partition_index) == ("__consumer_offsets", 1)


@pytest.mark.parametrize("version", range(0, 3))
def test_describe_cluster_responses_decode_with_kafka_python_at_every_version(version: int) -> None:
    img = _rich_image()
    c = ctx(controllers=CONTROLLERS, active_controller_id=3000)
    bodies = [DC(endpoint_type=1, include_fenced_brokers=version >= 2)]
    if version >= 1:
        bodies += [DC(endpoint_type=2), DC(endpoint_type=9)]
    for body in bodies:
        _check_wire(describe_cluster.API, handle_describe_cluster(img, body, version, c), version)
    if version >= 2:
        kp = _check_wire(describe_cluster.API, handle_describe_cluster(img, bodies[0], version, c), version)
        assert [(b.broker_id, b.is_fenced) for b in kp.brokers] == [(1, False), (2, False), (3, True)]


@pytest.mark.parametrize("version", range(0, 5))
def test_describe_configs_responses_decode_with_kafka_python_at_every_version(version: int) -> None:
    resp = dcf(
        [(TOPIC, "t", None), (BROKER, "1", None), (BROKER, "", None), (BROKER, "7", None)],
        version,
        synonyms=version >= 1,
    )
    kp = _check_wire(describe_configs.API, resp, version)
    assert [r.error_code for r in kp.results] == [0, 0, 0, E.INVALID_REQUEST]


# ---------------------------------------------------------------------------------------------------
# ListOffsets over empty logs

LO: Any = list_offsets.REQUEST.cls


def lo_request(queries: list[tuple[str, int, int]], *, replica: int = -1, epoch: int = -1) -> Any:
    by_topic: dict[str, list[Any]] = {}
    for name, partition, ts in queries:
        by_topic.setdefault(name, []).append(
            LO.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=partition, current_leader_epoch=epoch, timestamp=ts
            )
        )
    return LO(
        replica_id=replica,
        isolation_level=0,
        topics=[LO.ListOffsetsTopic(name=n, partitions=ps) for n, ps in by_topic.items()],
    )


def lo_rows(response: Any) -> list[tuple[str, int, int, int, int, int]]:
    return [
        (t.name, p.partition_index, p.error_code, p.offset, p.timestamp, p.leader_epoch)
        for t in response.topics
        for p in t.partitions
    ]


def test_list_offsets_answers_an_empty_log_on_the_leader_only() -> None:
    img = image(topics=[topic("t", 1, [part((1, 2), leader_epoch=4), part((2, 1), leader_epoch=2)])])
    queries = [
        ("t", 0, -1),
        ("t", 0, -2),
        ("t", 0, 1_700_000_000_000),
        ("t", 1, -1),
        ("t", 9, -1),
        ("x", 0, -1),
    ]
    rows = lo_rows(handle_list_offsets(img, lo_request(queries), 10, ctx(1)))
    assert rows == [
        ("t", 0, 0, 0, -1, 4),  # latest: the end of an empty log, with the leader's epoch
        ("t", 0, 0, 0, -1, 4),  # earliest: its start
        ("t", 0, 0, -1, -1, -1),  # no record at or after the timestamp
        ("t", 1, E.NOT_LEADER_OR_FOLLOWER, -1, -1, -1),  # broker 2 leads partition 1
        ("t", 9, E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1),
        ("x", 0, E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1),
    ]
    # The debugging replica id may ask a follower.
    follower = lo_rows(handle_list_offsets(img, lo_request([("t", 1, -2)], replica=-2), 10, ctx(1)))
    assert follower == [("t", 1, 0, 0, -1, 2)]


def test_list_offsets_fences_stale_epochs_and_gates_special_timestamps_by_version() -> None:
    img = image(topics=[topic("t", 1, [part((1, 2), leader_epoch=4)])])
    assert lo_rows(handle_list_offsets(img, lo_request([("t", 0, -1)], epoch=3), 10, ctx(1)))[0][2] == (
        E.FENCED_LEADER_EPOCH
    )
    assert lo_rows(handle_list_offsets(img, lo_request([("t", 0, -1)], epoch=5), 10, ctx(1)))[0][2] == (
        E.UNKNOWN_LEADER_EPOCH
    )
    for ts, first in ((-3, 7), (-4, 8), (-5, 9)):
        below = lo_rows(handle_list_offsets(img, lo_request([("t", 0, ts)]), first - 1, ctx(1)))
        at = lo_rows(handle_list_offsets(img, lo_request([("t", 0, ts)]), first, ctx(1)))
        assert below[0][2] == E.UNSUPPORTED_VERSION and at[0][2] == E.NONE
    assert lo_rows(handle_list_offsets(img, lo_request([("t", 0, -4)]), 10, ctx(1)))[0][3] == 0  # local start
    assert lo_rows(handle_list_offsets(img, lo_request([("t", 0, -5)]), 10, ctx(1)))[0][3] == -1  # no tiers


@pytest.mark.parametrize("version", range(1, 11))
def test_list_offsets_responses_decode_with_kafka_python(version: int) -> None:
    img = image(topics=[topic("t", 1, [part((1, 2), leader_epoch=4)])])
    response = handle_list_offsets(img, lo_request([("t", 0, -1), ("u", 1, -2)]), version, ctx(1))
    schema = list_offsets.RESPONSE
    flexible = list_offsets.API.is_flexible(version)
    ours = schema.encode(response, version, flexible)
    kp_cls = KAFKA_PYTHON[list_offsets.API.key][1]
    assert bytes(to_kp(schema, response, kp_cls, version).encode(version=version)) == ours
    assert from_kp(schema, kp_cls.decode(ours, version=version)) == schema.decode(ours, version, flexible)
