"""The broker client listener's read-only APIs, answered from the metadata image (spec 6.3-6.6).

What this module owns: pure handlers for Metadata (v0-13), DescribeCluster (v0-2),
DescribeTopicPartitions (v0), DescribeConfigs (v0-4) and ListOffsets (v1-10, over empty logs until
the data plane exists). Each takes the image, the decoded
request body, the request's API version and a ``BrokerApiContext`` (what this node knows about
itself and its configuration) and returns the response body, built with the message's own value
classes, ready to encode at that version.

What it must not do: I/O, clocks, randomness, mutation of the image, or deciding anything a
controller decides. Metadata does not create topics: it names the ones to auto-create in
``MetadataResult.topics_to_create`` and the caller forwards a CreateTopics to the controller.
Config resolution and DescribeConfigs are ``kraft.metadata.configs``'s; topic-name rules are
``kraft.metadata.topic_names``'.

Main invariant: the answer is a function of (image, body, version, context) alone, and every list
in it is in a defined order (topics by name, partitions by index, nodes by id), so equal inputs
give equal bytes.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, TypeAlias

from kraft.common.config import get_bool
from kraft.common.uuids import ZERO_UUID
from kraft.metadata import configs
from kraft.metadata.configs import BROKER, TOPIC, ConfigResolver
from kraft.metadata.image import BrokerRegistration, MetadataImage, TopicImage
from kraft.metadata.partition import NO_LEADER, PartitionRegistration
from kraft.metadata.records import LOST_DIR_ID_INT, MIGRATING_DIR_ID_INT, UNASSIGNED_DIR_ID_INT
from kraft.metadata.topic_names import is_internal_topic, topic_name_problem
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    describe_cluster,
    describe_configs,
    describe_topic_partitions,
    list_offsets,
    metadata,
)
from kraft.protocol.schema import StructType
from kraft.security.acls import CLUSTER_NAME, AclOperation, ResourceType
from kraft.security.request_authz import Access

DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT: Final = 2000  # spec 7
# KIP-919 endpoint types (spec 6.5).
ENDPOINT_TYPE_BROKER: Final = 1
ENDPOINT_TYPE_CONTROLLER: Final = 2
NO_CONTROLLER_ID: Final = -1

_MIGRATING_DIR: Final = uuid.UUID(int=MIGRATING_DIR_ID_INT)
_UNASSIGNED_DIR: Final = uuid.UUID(int=UNASSIGNED_DIR_ID_INT)
_LOST_DIR: Final = uuid.UUID(int=LOST_DIR_ID_INT)
# Java's Integer.parseInt syntax, which Kafka uses for a BROKER resource name.
_JAVA_INT: Final = re.compile(r"[+-]?[0-9]+")

# (id, host, port, rack) of one controller, as DescribeCluster type 2 lists it.
ControllerEndpoint: TypeAlias = tuple[int, str, int, str | None]


def _cls(struct_type: StructType) -> Any:
    """The generated value class of a message struct (typed ``Any``: its fields are dynamic)."""
    return struct_type.cls


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerApiContext:
    """What the handlers know beyond the image: this node and the listener a request came in on.

    Attributes:
        node_id: this broker's id.
        cluster_id: the cluster id (Metadata v2+, DescribeCluster).
        listener_name: the listener the request arrived on; endpoints are reported for it only.
        static_configs: this node's static broker properties (``auto.create.topics.enable``, and the
            static level of DescribeConfigs).
        controllers: the controllers' endpoints on the controller listener, for DescribeCluster
            endpoint type 2.
        active_controller_id: the active controller, or None while unknown.
        max_request_partition_size_limit: the DescribeTopicPartitions cap (spec 6.3, 7).
    """

    node_id: int
    cluster_id: str
    listener_name: str
    static_configs: Mapping[str, str] = field(default_factory=dict)
    controllers: tuple[ControllerEndpoint, ...] = ()
    active_controller_id: int | None = None
    max_request_partition_size_limit: int = DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT

    def __post_init__(self) -> None:
        object.__setattr__(self, "static_configs", MappingProxyType(dict(self.static_configs)))
        # Validate once, so a bad value fails when the node starts rather than inside a request.
        get_bool(self.static_configs, "auto.create.topics.enable", True)

    @property
    def auto_create_topics_enable(self) -> bool:
        return get_bool(self.static_configs, "auto.create.topics.enable", True)


@dataclass(frozen=True, slots=True)
class MetadataResult:
    """A Metadata response and the topics the caller must auto-create (by a forwarded CreateTopics).

    ``topics_to_create`` is sorted; each name in it is valid and answered LEADER_NOT_AVAILABLE.
    """

    response: Any
    topics_to_create: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------------
# Shared helpers


def _missing_topic_error(name: str) -> ErrorCode:
    """Kafka's answer for a topic that does not exist: unknown, or invalid if the name is illegal."""
    if topic_name_problem(name) is not None:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _alive_brokers_with_listener(image: MetadataImage, listener: str) -> list[BrokerRegistration]:
    """Kafka's ``getAliveBrokerNodes``: unfenced (controlled shutdown included), with the listener."""
    return [b for _, b in sorted(image.brokers.items()) if not b.fenced and b.listener(listener) is not None]


def broker_controller_id(image: MetadataImage, ctx: BrokerApiContext) -> int:
    """ControllerId for Metadata and DescribeCluster type 1 on the broker listener (spec 6.4, 6.8).

    DECISION: Kafka answers a random alive broker (any broker forwards controller-bound requests).
    We answer this node when it is an alive broker with the listener, else the lowest such broker,
    else -1: deterministic (STYLE 3), and always a node of the Brokers list, so a client can reach it.
    """
    alive = _alive_brokers_with_listener(image, ctx.listener_name)
    if any(b.id == ctx.node_id for b in alive):
        return ctx.node_id
    return alive[0].id if alive else NO_CONTROLLER_ID


class _ListenerView:
    """The brokers as a request on ``listener`` sees them, computed once per request rather than
    once per replica of every partition (a Metadata of 10,000 partitions looked each replica's
    broker and listener up again)."""

    def __init__(self, image: MetadataImage, listener: str) -> None:
        # Registered brokers with the listener, fenced or not (Kafka's ``getAliveEndpoint``).
        self.with_listener: dict[int, BrokerRegistration] = {
            b.id: b for b in image.brokers.values() if b.listener(listener) is not None
        }
        # The alive ones (unfenced), with their registered (online) directories; None: none.
        self.usable: dict[int, frozenset[uuid.UUID] | None] = {
            b.id: frozenset(b.directories) if b.directories else None
            for b in _alive_brokers_with_listener(image, listener)
        }

    def leader(self, leader: int) -> BrokerRegistration | None:
        """The leader's registration if it has the listener (``NO_LEADER`` is never a key).

        Fencing is deliberately not checked (Kafka does not): the controller moves leadership off
        a fenced broker, and until that change is replayed the old leader is still the leader."""
        return self.with_listener.get(leader)

    def alive(self, ids: Iterable[int]) -> list[int]:
        """``ids`` whose broker is registered, unfenced and has the listener."""
        usable = self.usable
        return [i for i in ids if i in usable]

    def offline(self, p: PartitionRegistration) -> list[int]:
        """Replicas whose broker is missing, fenced, lacks the listener or has the replica's
        directory offline (spec 6.3; Kafka's ``getOfflineReplicas``), in replica order."""
        usable = self.usable
        directories = p.directories
        out: list[int] = []
        for index, replica in enumerate(p.replicas):
            if replica not in usable:
                out.append(replica)
            elif directories and not _dir_online(usable[replica], directories[index]):
                # (A partition recorded before MV 3.7-IV2 has no directories: Kafka reads them as
                # MIGRATING, which is online.)
                out.append(replica)
        return out


def _dir_online(registered: frozenset[uuid.UUID] | None, directory: uuid.UUID) -> bool:
    """Kafka's ``DirectoryId.isOnline`` against the broker's registered (online) directories."""
    if directory in (_MIGRATING_DIR, _UNASSIGNED_DIR):
        return True
    if directory == _LOST_DIR:
        return False
    # No directories registered (a broker from before MV 3.7-IV2): assume online (KAFKA-16162).
    return registered is None or directory in registered


def _sorted_partitions(topic: TopicImage) -> list[tuple[int, PartitionRegistration]]:
    return sorted(topic.partitions.items())


# ---------------------------------------------------------------------------------------------------
# Metadata (spec 6.4)


def handle_metadata(
    image: MetadataImage, body: Any, version: int, ctx: BrokerApiContext, access: Access | None = None
) -> MetadataResult:
    """Answer a Metadata request (v0-13) on the broker listener ``ctx.listener_name``.

    Topics: null (v1+; v0: empty) = all; otherwise the named ones (or, v12+, the ones given by id),
    de-duplicated. Unknown-id entries come first (as in Kafka), then every named topic sorted by name.

    With ``access`` (an authorizer is configured), as Kafka's ``KafkaApis``: an all-topics answer
    lists only the topics the caller may DESCRIBE; a named topic it may not DESCRIBE is answered
    TOPIC_AUTHORIZATION_FAILED (by id: with a null name); a missing topic is auto-created only with
    CREATE on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED; and the authorised
    operations (KIP-430) are filled in when asked for.
    """
    cls = _cls(metadata.RESPONSE)
    requested = body.topics
    if _is_invalid_metadata_request(requested, version):
        return MetadataResult(_metadata_error_response(cls, requested))

    all_topics = requested is None or (version == 0 and not requested)
    view = _ListenerView(image, ctx.listener_name)
    topics: list[Any] = []
    to_create: list[str] = []

    def denied(name: str) -> Any:
        return cls.MetadataResponseTopic(
            error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            name=name,
            topic_id=ZERO_UUID,
            is_internal=is_internal_topic(name),
            partitions=[],
        )

    if all_topics:
        for name in sorted(image.topics_by_name):
            if access is not None and not access.allows(
                AclOperation.DESCRIBE, ResourceType.TOPIC, name, log=False
            ):
                continue  # Kafka: an all-topics answer leaves out what the caller may not see
            topics.append(_metadata_topic(cls, image, view, image.topics_by_name[name], version))
    else:
        ids = {t.topic_id for t in requested if t.topic_id != ZERO_UUID}
        if ids:
            # Kafka: once any topic is named by id, the request is by id and names are ignored.
            names: set[str] = set()
            for topic_id in sorted(ids, key=str):
                known = image.topics_by_id.get(topic_id)
                if known is not None and (
                    access is None or access.allows(AclOperation.DESCRIBE, ResourceType.TOPIC, known.name)
                ):
                    names.add(known.name)
                    continue
                if known is not None:
                    refused = denied(known.name)
                    refused.name, refused.topic_id = None, topic_id
                    topics.append(refused)
                    continue
                topics.append(
                    cls.MetadataResponseTopic(
                        error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                        name=None,
                        topic_id=topic_id,
                        is_internal=False,
                        partitions=[],
                    )
                )
        else:
            names = {t.name for t in requested}
        # v0-3 carry no AllowAutoTopicCreation: those clients always asked for auto-creation.
        allow = ctx.auto_create_topics_enable and (version < 4 or body.allow_auto_topic_creation)
        for name in sorted(names):
            if access is not None and not access.allows(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                topics.append(denied(name))
                continue
            topic = image.topics_by_name.get(name)
            if topic is not None:
                topics.append(_metadata_topic(cls, image, view, topic, version))
                continue
            error = _missing_topic_error(name)
            if error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and allow and not _may_create(access, name):
                topics.append(denied(name))
                continue
            if error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and allow:
                # Spec 6.4: answered LEADER_NOT_AVAILABLE while the forwarded CreateTopics runs.
                error = ErrorCode.LEADER_NOT_AVAILABLE
                to_create.append(name)
            topics.append(
                cls.MetadataResponseTopic(
                    error_code=error,
                    name=name,
                    topic_id=ZERO_UUID,
                    is_internal=is_internal_topic(name),
                    partitions=[],
                )
            )

    brokers = [
        cls.MetadataResponseBroker(node_id=b.id, host=ep.host, port=ep.port, rack=b.rack)
        for b in _alive_brokers_with_listener(image, ctx.listener_name)
        if (ep := b.listener(ctx.listener_name)) is not None
    ]
    response = cls(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=ctx.cluster_id,
        controller_id=broker_controller_id(image, ctx),
        topics=topics,
        error_code=0,
    )
    if access is not None:
        _authorized_operations(response, body, version, access)
    return MetadataResult(response, tuple(to_create))


def _may_create(access: Access | None, name: str) -> bool:
    """Kafka: auto-creation needs CREATE on the cluster, or else on the topic."""
    if access is None or access.allows_cluster(AclOperation.CREATE, log=False):
        return True
    return access.allows(AclOperation.CREATE, ResourceType.TOPIC, name)


def _authorized_operations(response: Any, body: Any, version: int, access: Access) -> None:
    """KIP-430 (Metadata v8+): the caller's operations on each listed topic and (v8-10) the cluster."""
    if version >= 8 and body.include_topic_authorized_operations:
        for t in response.topics:
            if t.error_code in (ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE) and t.name is not None:
                t.topic_authorized_operations = access.authorized_operations(ResourceType.TOPIC, t.name)
    if 8 <= version <= 10 and body.include_cluster_authorized_operations:
        # Kafka: 0 unless the caller may DESCRIBE the cluster.
        allowed = access.allows_cluster(AclOperation.DESCRIBE, log=False)
        response.cluster_authorized_operations = (
            access.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME) if allowed else 0
        )


def _is_invalid_metadata_request(requested: Any, version: int) -> bool:
    """Kafka's whole-request checks (InvalidRequestException in ``handleTopicMetadataRequest``):
    before v12 a topic must have a name and no id."""
    for t in requested or ():
        if version < 12 and t.topic_id != ZERO_UUID:
            return True
        if t.name is None and t.topic_id == ZERO_UUID:
            # Before v12 this is Kafka's "Topic name can not be null". DECISION: from v12 on too, where
            # Kafka fails with an internal error: an entry needs a name or an id.
            return True
    return False


def _metadata_error_response(cls: Any, requested: Any) -> Any:
    """Kafka's ``MetadataRequest.getErrorResponse``: every requested topic gets INVALID_REQUEST."""
    return cls(
        throttle_time_ms=0,
        brokers=[],
        cluster_id=None,
        controller_id=NO_CONTROLLER_ID,
        topics=[
            cls.MetadataResponseTopic(
                error_code=ErrorCode.INVALID_REQUEST,
                # Kafka turns a null name into "" here, whatever the version.
                name="" if t.name is None else t.name,
                topic_id=t.topic_id,
                is_internal=False,
                partitions=[],
            )
            for t in requested or ()
        ],
        error_code=0,
    )


def _metadata_topic(
    cls: Any, image: MetadataImage, view: _ListenerView, topic: TopicImage, version: int
) -> Any:
    partition_cls = cls.MetadataResponseTopic.MetadataResponsePartition
    # v0 reported unavailable replicas by filtering them out with an error; later versions list
    # every replica and report the unavailable ones in OfflineReplicas (Kafka's KafkaApis).
    filter_unavailable = version == 0
    partitions = []
    for index, p in _sorted_partitions(topic):
        replicas = view.alive(p.replicas) if filter_unavailable else list(p.replicas)
        isr = view.alive(p.isr) if filter_unavailable else list(p.isr)
        leader = view.leader(p.leader)
        if leader is None:
            leader_id = NO_LEADER
            if p.leader in image.brokers and version >= 6:
                # Spec 6.4: registered, but without this listener: a configuration error to show.
                error = ErrorCode.LISTENER_NOT_FOUND
            else:
                error = ErrorCode.LEADER_NOT_AVAILABLE
        else:
            leader_id = leader.id
            if len(replicas) < len(p.replicas) or len(isr) < len(p.isr):
                error = ErrorCode.REPLICA_NOT_AVAILABLE  # v0 only: some were filtered out
            else:
                error = ErrorCode.NONE
        partitions.append(
            partition_cls(
                error_code=error,
                partition_index=index,
                leader_id=leader_id,
                leader_epoch=p.leader_epoch,
                replica_nodes=replicas,
                isr_nodes=isr,
                offline_replicas=view.offline(p),
            )
        )
    return cls.MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.id,
        is_internal=is_internal_topic(topic.name),
        partitions=partitions,
    )


# ---------------------------------------------------------------------------------------------------
# DescribeCluster (spec 6.5)


def handle_describe_cluster(image: MetadataImage, body: Any, version: int, ctx: BrokerApiContext) -> Any:
    """Answer DescribeCluster (v0-2) on the broker listener.

    Endpoint type 1: the alive brokers with the listener (v2 IncludeFencedBrokers: fenced ones too,
    IsFenced set), ControllerId as in Metadata. Type 2: the controllers from the context,
    ControllerId = the active controller. DECISION (this project's issue): the broker listener
    answers type 2 where Kafka answers MISMATCHED_ENDPOINT_TYPE.
    """
    cls = _cls(describe_cluster.RESPONSE)
    # v0 has no EndpointType: it always means brokers.
    endpoint_type = body.endpoint_type if version >= 1 else ENDPOINT_TYPE_BROKER
    if endpoint_type == ENDPOINT_TYPE_BROKER:
        include_fenced = version >= 2 and body.include_fenced_brokers
        nodes = []
        for _, b in sorted(image.brokers.items()):
            ep = b.listener(ctx.listener_name)
            if ep is None or (b.fenced and not include_fenced):
                continue
            nodes.append(
                cls.DescribeClusterBroker(
                    broker_id=b.id, host=ep.host, port=ep.port, rack=b.rack, is_fenced=b.fenced
                )
            )
        controller_id = broker_controller_id(image, ctx)
    elif endpoint_type == ENDPOINT_TYPE_CONTROLLER:
        nodes = [
            cls.DescribeClusterBroker(broker_id=i, host=host, port=port, rack=rack, is_fenced=False)
            for i, host, port, rack in sorted(ctx.controllers, key=lambda c: c[0])
        ]
        controller_id = NO_CONTROLLER_ID if ctx.active_controller_id is None else ctx.active_controller_id
    else:
        # Kafka's computeDescribeClusterResponse: only the error is set, the rest stays default.
        return cls(
            throttle_time_ms=0,
            error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message=f"Unsupported endpoint type {endpoint_type}",
        )
    # Kafka: a controller id that is not in the node list is reported as -1, not to confuse clients.
    if all(n.broker_id != controller_id for n in nodes):
        controller_id = NO_CONTROLLER_ID
    return cls(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        endpoint_type=endpoint_type,
        cluster_id=ctx.cluster_id,
        controller_id=controller_id,
        brokers=nodes,
    )


# ---------------------------------------------------------------------------------------------------
# DescribeTopicPartitions (spec 6.3)


def handle_describe_topic_partitions(
    image: MetadataImage, body: Any, version: int, ctx: BrokerApiContext, access: Access | None = None
) -> Any:
    """Answer DescribeTopicPartitions v0: one page of partitions, at most L, from the cursor on.

    With ``access``, as Kafka: the all-topics listing leaves out the topics the caller may not
    DESCRIBE (before paging, so pages stay full), a named one is answered TOPIC_AUTHORIZATION_FAILED.
    """
    del version  # only v0 exists
    cls = _cls(describe_topic_partitions.RESPONSE)
    topic_cls = cls.DescribeTopicPartitionsResponseTopic
    limit = max(1, min(body.response_partition_limit, ctx.max_request_partition_size_limit))
    fetch_all = not body.topics
    cursor = body.cursor
    cursor_name = cursor.topic_name if cursor is not None else ""
    source: Iterable[str] = image.topics_by_name if fetch_all else (t.name for t in body.topics)
    if fetch_all and access is not None:
        source = [n for n in source if access.allows(AclOperation.DESCRIBE, ResourceType.TOPIC, n, log=False)]
    # Spec 6.3: names >= the cursor topic, de-duplicated, in code-point order.
    candidates = sorted({name for name in source if name >= cursor_name})

    if (cursor is not None and not fetch_all and cursor_name not in candidates) or (
        cursor is not None and cursor.partition_index < 0
    ):
        # Spec 6.3: the whole request is invalid; Kafka's getErrorResponse answers every topic asked.
        return cls(
            throttle_time_ms=0,
            topics=[
                topic_cls(
                    error_code=ErrorCode.INVALID_REQUEST,
                    name=t.name,
                    topic_id=ZERO_UUID,
                    is_internal=False,
                    partitions=[],
                )
                for t in body.topics
            ],
            next_cursor=None,
        )

    view = _ListenerView(image, ctx.listener_name)
    topics: list[Any] = []
    next_cursor = None
    remaining = limit
    for name in candidates:
        if remaining == 0:
            # Spec 6.3: the next page starts at this topic, whether or not it exists.
            next_cursor = cls.Cursor(topic_name=name, partition_index=0)
            break
        if (
            access is not None
            and not fetch_all
            and not access.allows(AclOperation.DESCRIBE, ResourceType.TOPIC, name)
        ):
            topics.append(
                topic_cls(
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    name=name,
                    topic_id=ZERO_UUID,
                    is_internal=False,
                    partitions=[],
                )
            )
            continue
        topic = image.topics_by_name.get(name)
        if topic is None:
            # Only an explicit list names missing topics ("all topics" lists the image's).
            topics.append(
                topic_cls(
                    error_code=_missing_topic_error(name),
                    name=name,
                    topic_id=ZERO_UUID,
                    is_internal=is_internal_topic(name),
                    partitions=[],
                )
            )
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_name else 0
        count = len(topic.partitions)
        upper = min(count, start + remaining)
        partitions = [
            _describe_partition(cls, view, index, p)
            for index in range(start, upper)
            if (p := topic.partitions.get(index)) is not None
        ]
        topics.append(
            topic_cls(
                error_code=ErrorCode.NONE,
                name=name,
                topic_id=topic.id,
                is_internal=is_internal_topic(name),
                partitions=partitions,
            )
        )
        if access is not None:
            topics[-1].topic_authorized_operations = access.authorized_operations(ResourceType.TOPIC, name)
        if upper < count:
            next_cursor = cls.Cursor(topic_name=name, partition_index=upper)
            break
        remaining -= len(partitions)
    return cls(throttle_time_ms=0, topics=topics, next_cursor=next_cursor)


def _describe_partition(cls: Any, view: _ListenerView, index: int, p: PartitionRegistration) -> Any:
    leader = view.leader(p.leader)
    return cls.DescribeTopicPartitionsResponseTopic.DescribeTopicPartitionsResponsePartition(
        error_code=ErrorCode.NONE,
        partition_index=index,
        leader_id=NO_LEADER if leader is None else leader.id,
        leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas),
        isr_nodes=list(p.isr),
        # Spec 6.3: always arrays, never null: the Java admin client fails on a null ELR.
        eligible_leader_replicas=list(p.elr),
        last_known_elr=list(p.last_known_elr),
        offline_replicas=view.offline(p),
    )


# ---------------------------------------------------------------------------------------------------
# DescribeConfigs (spec 6.6)


def handle_describe_configs(image: MetadataImage, body: Any, version: int, ctx: BrokerApiContext) -> Any:
    """Answer DescribeConfigs (v0-4) as this broker sees its configuration.

    Resolution is ``kraft.metadata.configs``, over this node's static configs. What differs on a broker
    (Kafka's ``ConfigHelper``) is checked first: an illegal topic name is INVALID_TOPIC_EXCEPTION; a
    BROKER resource must name this node or be "" (the cluster default), else INVALID_REQUEST; and
    an empty ConfigurationKeys list means every key, as null does.
    """
    cls = _cls(describe_configs.RESPONSE)
    request_cls = _cls(describe_configs.REQUEST)
    resolver = ConfigResolver(ctx.static_configs, ctx.node_id)
    results = []
    for res in body.resources:
        rejected = _broker_side_config_error(res.resource_type, res.resource_name, ctx.node_id)
        if rejected is not None:
            code, message = rejected
            results.append(
                cls.DescribeConfigsResult(
                    error_code=code,
                    error_message=message,
                    resource_type=res.resource_type,
                    resource_name=res.resource_name,
                    configs=[],
                )
            )
            continue
        name = res.resource_name
        if res.resource_type == BROKER and name:
            name = str(ctx.node_id)  # "+1" or "01" name this node too (Integer.parseInt)
        one = request_cls(
            resources=[
                request_cls.DescribeConfigsResource(
                    resource_type=res.resource_type,
                    resource_name=name,
                    configuration_keys=res.configuration_keys,
                )
            ],
            include_synonyms=body.include_synonyms,
            include_documentation=body.include_documentation,
        )
        (result,) = configs.describe_configs(resolver, image, one, version).results
        result.resource_name = res.resource_name
        results.append(result)
    return cls(throttle_time_ms=0, results=results)


def _broker_side_config_error(resource_type: int, name: str, node_id: int) -> tuple[ErrorCode, str] | None:
    if resource_type == TOPIC:
        problem = topic_name_problem(name)
        if problem is not None:
            return (ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
    elif resource_type == BROKER and name:
        if not _JAVA_INT.fullmatch(name):
            return (ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
        if int(name) != node_id:
            return (
                ErrorCode.INVALID_REQUEST,
                f"Unexpected broker id, expected {node_id} or empty string, but received {name}",
            )
    return None


# ---------------------------------------------------------------------------------------------------
# ListOffsets (partition logs are empty until the data plane exists)

# ListOffsets query timestamps (Kafka's ListOffsetsRequest constants) and the version each needs.
LATEST_TIMESTAMP: Final = -1
EARLIEST_TIMESTAMP: Final = -2
MAX_TIMESTAMP: Final = -3  # v7+ (KIP-734)
EARLIEST_LOCAL_TIMESTAMP: Final = -4  # v8+ (KIP-405)
LATEST_TIERED_TIMESTAMP: Final = -5  # v9+ (KIP-1005)
_SPECIAL_MIN_VERSION: Final = {MAX_TIMESTAMP: 7, EARLIEST_LOCAL_TIMESTAMP: 8, LATEST_TIERED_TIMESTAMP: 9}
# Kafka's ListOffsetsRequest.DEBUGGING_REPLICA_ID: may read from a follower.
DEBUGGING_REPLICA_ID: Final = -2


def handle_list_offsets(image: MetadataImage, body: Any, version: int, ctx: BrokerApiContext) -> Any:
    """Answer ListOffsets (v1-10) for partitions whose logs are empty (no data plane yet).

    Kafka's partition checks apply as they will with data: an unknown partition is
    UNKNOWN_TOPIC_OR_PARTITION; a consumer (replica id -1) must ask the leader
    (NOT_LEADER_OR_FOLLOWER); a stale or future CurrentLeaderEpoch is FENCED_LEADER_EPOCH /
    UNKNOWN_LEADER_EPOCH; a special timestamp newer than the request version is UNSUPPORTED_VERSION.
    The offsets are those of an empty log: start = end = 0 (EARLIEST, LATEST, EARLIEST_LOCAL, with
    the leader's epoch), and "no such record" (offset -1, timestamp -1) for MAX_TIMESTAMP, a
    timestamp lookup and LATEST_TIERED (no tiered storage). The data plane replaces only that part.
    """
    cls: Any = _cls(list_offsets.RESPONSE)
    part_cls = cls.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
    topics = []
    for t in body.topics:
        topic = image.topics_by_name.get(t.name)
        rows = []
        for req in t.partitions:
            p = topic.partitions.get(req.partition_index) if topic is not None else None
            code, offset, timestamp, epoch = _list_offset(p, req, body.replica_id, version, ctx.node_id)
            rows.append(
                part_cls(
                    partition_index=req.partition_index,
                    error_code=int(code),
                    old_style_offsets=[],
                    timestamp=timestamp,
                    offset=offset,
                    leader_epoch=epoch if version >= 4 else -1,  # LeaderEpoch is v4+ and not ignorable
                )
            )
        topics.append(cls.ListOffsetsTopicResponse(name=t.name, partitions=rows))
    return cls(throttle_time_ms=0, topics=topics)


def _list_offset(
    p: PartitionRegistration | None, req: Any, replica_id: int, version: int, node_id: int
) -> tuple[ErrorCode, int, int, int]:
    """(error, offset, timestamp, leader epoch) for one partition of an empty log."""
    if p is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1
    if replica_id != DEBUGGING_REPLICA_ID and p.leader != node_id:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1, -1
    if replica_id == DEBUGGING_REPLICA_ID and node_id not in p.replicas:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1, -1
    current = req.current_leader_epoch
    if current >= 0 and current < p.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH, -1, -1, -1
    if current > p.leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1, -1
    ts = req.timestamp
    if version < _SPECIAL_MIN_VERSION.get(ts, 0):
        return ErrorCode.UNSUPPORTED_VERSION, -1, -1, -1
    if ts in (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        return ErrorCode.NONE, 0, -1, p.leader_epoch  # an empty log starts and ends at 0
    return ErrorCode.NONE, -1, -1, -1  # no record at or after the timestamp; nothing tiered
