"""Which operation each API checks, and what a refused request or resource is answered (Kafka's
``KafkaApis``/``ControllerApis`` authorisation, API by API), as pure functions of (principal, host,
request, ACLs).

What it owns: ``RequestAuthorizer.check``, which takes a decoded request and returns a ``Verdict``:

* ``Refuse(response)``: the whole request is refused (a cluster-level operation such as
  CLUSTER_ACTION for the broker-to-controller APIs, ALTER for ElectLeaders, DESCRIBE for
  DescribeQuorum, a transactional id the caller may not WRITE): answer ``response`` and run nothing;
* ``Proceed(body, merge, access)``: run ``body`` (the request with the refused resources taken out)
  and pass its answer through ``merge``, which adds one row per refused resource in the API's own
  shape (TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED...)
  after the authorised rows, as Kafka does. ``access`` is for the handlers that decide per topic
  themselves (Metadata, DescribeTopicPartitions: listing only what the caller may DESCRIBE).

The operations (Kafka 4.0): Produce WRITE topic (and WRITE on the transactional id when there is
one); Fetch READ topic, or CLUSTER_ACTION from a follower; ListOffsets and OffsetForLeaderEpoch
DESCRIBE topic (CLUSTER_ACTION from a follower); Metadata and DescribeTopicPartitions DESCRIBE
topic (auto-creation also CREATE, on the cluster or the topic); InitProducerId WRITE on the
transactional id, or for an idempotent producer IDEMPOTENT_WRITE on the cluster or WRITE on any
topic; CreateTopics CREATE on the cluster or the topic (DESCRIBE_CONFIGS to see the configs it
got); DeleteTopics DELETE, CreatePartitions ALTER topic; DescribeConfigs DESCRIBE_CONFIGS and
IncrementalAlterConfigs ALTER_CONFIGS on the topic, the group or (brokers, loggers, client metrics)
the cluster; ElectLeaders, UpdateFeatures, UnregisterBroker, AddRaftVoter, RemoveRaftVoter,
CreateAcls and DeleteAcls ALTER cluster; DescribeQuorum and DescribeAcls DESCRIBE cluster;
BrokerRegistration, BrokerHeartbeat, AlterPartition, AllocateProducerIds and UpdateRaftVoter
CLUSTER_ACTION. ApiVersions and DescribeCluster are open (on a controller listener DescribeCluster
needs ALTER on the cluster, as Kafka's ControllerApis; elsewhere it reports authorised
operations only when asked).

Every refusal of a resource the request named is logged (``kraft.security.audit``); topics left out
of an all-topics listing are not (Kafka's ``logIfDenied = false``).

What it must not do: I/O, clocks, mutation of the image. ``now_ms`` only paces the denial log.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kraft.common.principal import KafkaPrincipal
from kraft.common.uuids import ZERO_UUID
from kraft.metadata.acls import StandardAcl
from kraft.metadata.image import MetadataImage
from kraft.metadata.records import ConfigResourceType
from kraft.protocol.envelope import NO_RESPONSE
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.error_responses import error_response
from kraft.protocol.messages import (
    add_raft_voter,
    allocate_producer_ids,
    alter_partition,
    broker_heartbeat,
    broker_registration,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_quorum,
    elect_leaders,
    fetch,
    incremental_alter_configs,
    init_producer_id,
    list_offsets,
    offset_for_leader_epoch,
    produce,
    remove_raft_voter,
    unregister_broker,
    update_features,
    update_raft_voter,
)
from kraft.protocol.schema import StructValue
from kraft.raft.messages import (
    AddRaftVoterResponse,
    DescribeQuorumResponse,
    RemoveRaftVoterResponse,
    UpdateRaftVoterResponse,
)
from kraft.security.acl_apis import AuthorizerCache, acl_api_error
from kraft.security.acls import CLUSTER_NAME, AclOperation, ResourceType
from kraft.security.audit import DenialLog, denial_line
from kraft.security.authorizer import AuthorizerConfig

Op = AclOperation
RT = ResourceType

UNKNOWN_HOST: Final = ""
"""The host of a request whose envelope does not say where it came from: only ``*`` ACLs match it."""

# Kafka's Errors messages of the authorisation failures.
AUTHORIZATION_MESSAGES: Final[Mapping[ErrorCode, str]] = {
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
}
_TOPIC_DENIED: Final = ErrorCode.TOPIC_AUTHORIZATION_FAILED
_CLUSTER_DENIED: Final = ErrorCode.CLUSTER_AUTHORIZATION_FAILED

# KIP-430 authorised-operation bit fields: the operations each resource type reports.
TOPIC_OPERATIONS: Final = (
    Op.READ,
    Op.WRITE,
    Op.CREATE,
    Op.DESCRIBE,
    Op.DELETE,
    Op.ALTER,
    Op.DESCRIBE_CONFIGS,
    Op.ALTER_CONFIGS,
)
CLUSTER_OPERATIONS: Final = (
    Op.CREATE,
    Op.CLUSTER_ACTION,
    Op.DESCRIBE_CONFIGS,
    Op.ALTER_CONFIGS,
    Op.IDEMPOTENT_WRITE,
    Op.ALTER,
    Op.DESCRIBE,
)

# Whole-request checks: API key -> the operation on the cluster it needs.
_CLUSTER_CHECKS: Final[Mapping[int, AclOperation]] = {
    broker_registration.API.key: Op.CLUSTER_ACTION,
    broker_heartbeat.API.key: Op.CLUSTER_ACTION,
    alter_partition.API.key: Op.CLUSTER_ACTION,
    allocate_producer_ids.API.key: Op.CLUSTER_ACTION,
    update_raft_voter.API.key: Op.CLUSTER_ACTION,
    unregister_broker.API.key: Op.ALTER,
    elect_leaders.API.key: Op.ALTER,
    update_features.API.key: Op.ALTER,
    add_raft_voter.API.key: Op.ALTER,
    remove_raft_voter.API.key: Op.ALTER,
    create_acls.API.key: Op.ALTER,
    delete_acls.API.key: Op.ALTER,
    describe_acls.API.key: Op.DESCRIBE,
    describe_quorum.API.key: Op.DESCRIBE,
}
# Kafka's ControllerApis checks these differently on a controller listener: DescribeCluster (open on
# a broker) needs ALTER on the cluster there, since it names the controllers.
_CONTROLLER_LISTENER_CHECKS: Final[Mapping[int, AclOperation]] = {describe_cluster.API.key: Op.ALTER}


def _copy(value: Any, **changes: Any) -> Any:
    """A shallow copy of a message struct with ``changes`` (message values are mutable: never edit
    the caller's)."""
    assert isinstance(value, StructValue)
    fields = {n: getattr(value, n) for n in value._schema.field_names}
    fields.update(changes)
    return type(value)(**fields)


# ---------------------------------------------------------------------------------------------------
# Verdicts


@dataclass(frozen=True, slots=True)
class Refuse:
    """Answer ``response`` to the whole request; run nothing."""

    response: Any


@dataclass(frozen=True, slots=True)
class Proceed:
    """Run ``body``; pass the answer through ``merge`` (None: unchanged). ``access`` answers per-topic
    questions for the handlers that list topics (None: no authorizer, everything allowed)."""

    body: Any
    merge: Callable[[Any], Any] | None = None
    access: Access | None = None


Verdict = Refuse | Proceed


class Access:
    """One request's questions to the authorizer: who asks, from where, for which API.

    ``allows`` logs a denial unless told not to (a topic left out of an all-topics listing)."""

    def __init__(
        self,
        authorizer: Any,
        principal: KafkaPrincipal,
        host: str,
        api_name: str,
        audit: DenialLog,
        now_ms: int,
    ) -> None:
        self._authorizer = authorizer
        self.principal = principal
        self.host = host
        self._api_name = api_name
        self._audit = audit
        self._now_ms = now_ms

    @property
    def cache_key(self) -> tuple[str, str]:
        """What an answer built with this access depends on besides the request and the image."""
        return (str(self.principal), self.host)

    def allows(
        self, operation: AclOperation, resource_type: ResourceType, name: str, *, log: bool = True
    ) -> bool:
        decision = self._authorizer.decide(self.principal, self.host, operation, resource_type, name)
        if not decision.allowed and log:
            line = denial_line(
                self.principal, self.host, operation, resource_type, name, self._api_name, decision
            )
            self._audit.deny(self._now_ms, line)
        return bool(decision.allowed)

    def allows_cluster(self, operation: AclOperation, *, log: bool = True) -> bool:
        return self.allows(operation, RT.CLUSTER, CLUSTER_NAME, log=log)

    def allows_any_topic(self, operation: AclOperation) -> bool:
        """Kafka's ``authorizeByResourceType``: some ACL lets the caller do ``operation`` on some topic
        (and no DENY on the ``*`` wildcard or a prefix of everything takes it away)."""
        return bool(self._authorizer.allows_some_resource(self.principal, self.host, operation, RT.TOPIC))

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """KIP-430's bit field (bit n: operation code n allowed) over the type's reported operations."""
        ops = TOPIC_OPERATIONS if resource_type == RT.TOPIC else CLUSTER_OPERATIONS
        bits = 0
        for op in ops:
            if self.allows(op, resource_type, name, log=False):
                bits |= 1 << int(op)
        return bits


# ---------------------------------------------------------------------------------------------------
# The checks


class RequestAuthorizer:
    """A node part's authorisation of incoming requests (see the module docstring).

    ``trusted(source)``: requests from a source id >= 0 come from a node of the cluster (this node's
    own parts, or in the simulator another node over its network) and are authorised as the node
    itself, which Kafka requires to be a super user; wire clients have negative pseudo ids
    (``kraft.server.gateway``), and so do remote nodes reaching a listener over the network, whose
    principal is then the one their connection authenticated.
    """

    def __init__(self, config: AuthorizerConfig, audit: DenialLog | None = None) -> None:
        self.config = config
        self.audit = audit if audit is not None else DenialLog()
        self._cache = AuthorizerCache(config)

    @staticmethod
    def trusted(source: int) -> bool:
        return source >= 0

    def access(
        self,
        acls: Mapping[uuid.UUID, StandardAcl],
        principal: KafkaPrincipal,
        host: str,
        api_name: str,
        now_ms: int,
    ) -> Access:
        return Access(self._cache.get(acls), principal, host, api_name, self.audit, now_ms)

    def allows_cluster_action(
        self, image: MetadataImage, principal: KafkaPrincipal, host: str, api_name: str, now_ms: int
    ) -> bool:
        """Whether ``principal`` may send the raft RPCs (Vote, BeginQuorumEpoch, EndQuorumEpoch,
        Fetch, FetchSnapshot, UpdateRaftVoter): CLUSTER_ACTION on the cluster, as Kafka's
        ``ControllerApis`` checks them. A refusal is logged like any other."""
        access = self.access(image.acls, principal, host, api_name, now_ms)
        return access.allows_cluster(Op.CLUSTER_ACTION)

    def check(
        self,
        image: MetadataImage,
        principal: KafkaPrincipal,
        host: str,
        key: int,
        api_name: str,
        version: int,
        body: Any,
        now_ms: int,
        *,
        controller_listener: bool = False,
    ) -> Verdict:
        """The verdict on one request (see the module docstring); ``controller_listener``: it came
        in on a controller listener, where some APIs check more than on a broker."""
        access = self.access(image.acls, principal, host, api_name, now_ms)
        if str(principal) in self.config.super_users:
            return Proceed(body, None, access)
        cluster_op = _CONTROLLER_LISTENER_CHECKS.get(key) if controller_listener else None
        cluster_op = cluster_op or _CLUSTER_CHECKS.get(key)
        if cluster_op is not None:
            if access.allows_cluster(cluster_op):
                return Proceed(body, None, access)
            return Refuse(_cluster_refusal(key, version, body))
        handler = _PER_RESOURCE.get(key)
        if handler is None:
            return Proceed(body, None, access)  # open APIs; Metadata and DTP use ``access`` themselves
        return handler(access, image, version, body)


def _cluster_refusal(key: int, version: int, body: Any) -> Any:
    code = _CLUSTER_DENIED
    message = AUTHORIZATION_MESSAGES[code]
    if key in (create_acls.API.key, delete_acls.API.key, describe_acls.API.key):
        return acl_api_error(key, body, code, message)
    if key == describe_quorum.API.key:
        return DescribeQuorumResponse(error_code=int(code), error_message=message)
    if key == add_raft_voter.API.key:
        return AddRaftVoterResponse(error_code=int(code), error_message=message)
    if key == remove_raft_voter.API.key:
        return RemoveRaftVoterResponse(error_code=int(code), error_message=message)
    if key == update_raft_voter.API.key:
        return UpdateRaftVoterResponse(error_code=int(code))
    return error_response(key, version, body, code)


# -- Produce, Fetch, ListOffsets, OffsetForLeaderEpoch -------------------------------------------------


def _produce(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = produce.RESPONSE.cls
    if body.transactional_id is not None and not access.allows(
        Op.WRITE, RT.TRANSACTIONAL_ID, body.transactional_id
    ):
        # Kafka answers every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
        return Refuse(_produce_all(cls, body, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    allowed: list[Any] = []
    denied: list[Any] = []
    for t in body.topic_data:
        name = t.name if version < 13 else _topic_name(image, t.topic_id)
        # An unknown id goes to the handler, which answers UNKNOWN_TOPIC_ID.
        (allowed if name is None or access.allows(Op.WRITE, RT.TOPIC, name) else denied).append(t)
    if not denied:
        return Proceed(body, None, access)
    rows = [_produce_topic(cls, t, _TOPIC_DENIED) for t in denied]
    if not allowed:
        return Refuse(cls(responses=rows, throttle_time_ms=0) if body.acks != 0 else NO_RESPONSE)
    return Proceed(_copy(body, topic_data=allowed), _append("responses", rows), access)


def _produce_topic(cls: Any, t: Any, code: ErrorCode) -> Any:
    part = cls.TopicProduceResponse.PartitionProduceResponse
    return cls.TopicProduceResponse(
        name=t.name,
        topic_id=t.topic_id,
        partition_responses=[
            part(
                index=p.index,
                error_code=int(code),
                base_offset=-1,
                log_append_time_ms=-1,
                log_start_offset=-1,
            )
            for p in t.partition_data
        ],
    )


def _produce_all(cls: Any, body: Any, code: ErrorCode) -> Any:
    if body.acks == 0:
        return NO_RESPONSE
    return cls(responses=[_produce_topic(cls, t, code) for t in body.topic_data], throttle_time_ms=0)


def _fetch(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = fetch.RESPONSE.cls
    replica_id = body.replica_state.replica_id if version >= 15 else body.replica_id
    if replica_id >= 0:
        if access.allows_cluster(Op.CLUSTER_ACTION):
            return Proceed(body, None, access)
        # Kafka: an unauthorised follower gets TOPIC_AUTHORIZATION_FAILED for every partition.
        return Refuse(
            cls(
                throttle_time_ms=0,
                error_code=0,
                session_id=0,
                responses=[_fetch_topic(cls, t, _TOPIC_DENIED) for t in body.topics],
            )
        )
    allowed: list[Any] = []
    denied: list[Any] = []
    for t in body.topics:
        name = t.topic if version < 13 else _topic_name(image, t.topic_id)
        if name is None:
            allowed.append(t)  # an unknown id: the handler answers UNKNOWN_TOPIC_ID
        elif access.allows(Op.READ, RT.TOPIC, name):
            allowed.append(t)
        else:
            denied.append(t)
    if not denied:
        return Proceed(body, None, access)
    rows = [_fetch_topic(cls, t, _TOPIC_DENIED) for t in denied]
    # Nothing left to wait for: answer at once (Kafka completes a fetch with no partitions at once).
    changes: dict[str, Any] = {"topics": allowed}
    if not allowed:
        changes["max_wait_ms"] = 0
    return Proceed(_copy(body, **changes), _append("responses", rows), access)


def _fetch_topic(cls: Any, t: Any, code: ErrorCode) -> Any:
    part = cls.FetchableTopicResponse.PartitionData
    return cls.FetchableTopicResponse(
        topic=t.topic,
        topic_id=t.topic_id,
        partitions=[
            part(partition_index=p.partition, error_code=int(code), high_watermark=-1, records=None)
            for p in t.partitions
        ],
    )


def _list_offsets(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = list_offsets.RESPONSE.cls
    allowed: list[Any] = []
    denied: list[Any] = []
    for t in body.topics:
        (allowed if access.allows(Op.DESCRIBE, RT.TOPIC, t.name) else denied).append(t)
    if not denied:
        return Proceed(body, None, access)
    part = cls.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
    rows = [
        cls.ListOffsetsTopicResponse(
            name=t.name,
            partitions=[
                part(
                    partition_index=p.partition_index, error_code=int(_TOPIC_DENIED), timestamp=-1, offset=-1
                )
                for p in t.partitions
            ],
        )
        for t in denied
    ]
    return Proceed(_copy(body, topics=allowed), _append("topics", rows), access)


def _offset_for_leader_epoch(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = offset_for_leader_epoch.RESPONSE.cls
    if version >= 3 and body.replica_id >= 0:
        if access.allows_cluster(Op.CLUSTER_ACTION):
            return Proceed(body, None, access)
        return Refuse(cls(throttle_time_ms=0, topics=[_epoch_topic(cls, t) for t in body.topics]))
    allowed: list[Any] = []
    denied: list[Any] = []
    for t in body.topics:
        (allowed if access.allows(Op.DESCRIBE, RT.TOPIC, t.topic) else denied).append(t)
    if not denied:
        return Proceed(body, None, access)
    return Proceed(
        _copy(body, topics=allowed), _append("topics", [_epoch_topic(cls, t) for t in denied]), access
    )


def _epoch_topic(cls: Any, t: Any) -> Any:
    part = cls.OffsetForLeaderTopicResult.EpochEndOffset
    return cls.OffsetForLeaderTopicResult(
        topic=t.topic,
        partitions=[
            part(error_code=int(_TOPIC_DENIED), partition=p.partition, leader_epoch=-1, end_offset=-1)
            for p in t.partitions
        ],
    )


def _init_producer_id(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = init_producer_id.RESPONSE.cls
    if body.transactional_id is not None:
        if access.allows(Op.WRITE, RT.TRANSACTIONAL_ID, body.transactional_id):
            return Proceed(body, None, access)
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    else:
        # Kafka: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic (KIP-679).
        if access.allows_cluster(Op.IDEMPOTENT_WRITE, log=False) or access.allows_any_topic(Op.WRITE):
            return Proceed(body, None, access)
        access.allows_cluster(Op.IDEMPOTENT_WRITE)  # log the refusal once
        code = _CLUSTER_DENIED
    return Refuse(cls(throttle_time_ms=0, error_code=int(code), producer_id=-1, producer_epoch=-1))


# -- topic admin ------------------------------------------------------------------------------------


def _create_topics(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = create_topics.RESPONSE.cls
    cluster_create = access.allows_cluster(Op.CREATE, log=False)
    allowed: list[Any] = []
    denied: list[Any] = []
    for t in body.topics:
        (allowed if cluster_create or access.allows(Op.CREATE, RT.TOPIC, t.name) else denied).append(t)
    rows = [
        cls.CreatableTopicResult(
            name=t.name, error_code=int(_TOPIC_DENIED), error_message=AUTHORIZATION_MESSAGES[_TOPIC_DENIED]
        )
        for t in denied
    ]
    hide_configs = version >= 5

    def merge(response: Any) -> Any:
        topics = []
        for r in response.topics:
            if (
                hide_configs
                and r.error_code == 0
                and not access.allows(Op.DESCRIBE_CONFIGS, RT.TOPIC, r.name, log=False)
            ):
                # Kafka: created, but the caller may not see its configs.
                r = _copy(r, topic_config_error_code=int(_TOPIC_DENIED), configs=None)
            topics.append(r)
        return _copy(response, topics=topics + rows)

    return Proceed(_copy(body, topics=allowed) if denied else body, merge, access)


def _delete_topics(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = delete_topics.RESPONSE.cls
    message = AUTHORIZATION_MESSAGES[_TOPIC_DENIED] if version >= 5 else None
    if version < 6:
        allowed_names = [n for n in body.topic_names if access.allows(Op.DELETE, RT.TOPIC, n)]
        denied_names = [n for n in body.topic_names if n not in allowed_names]
        if not denied_names:
            return Proceed(body, None, access)
        rows = [
            cls.DeletableTopicResult(name=n, error_code=int(_TOPIC_DENIED), error_message=message)
            for n in denied_names
        ]
        return Proceed(_copy(body, topic_names=allowed_names), _append("responses", rows), access)
    allowed: list[Any] = []
    denied: list[Any] = []
    for t in body.topics:
        name = t.name if t.name is not None else _topic_name(image, t.topic_id)
        if name is None or access.allows(Op.DELETE, RT.TOPIC, name):
            allowed.append(t)  # an unknown id: the handler answers UNKNOWN_TOPIC_ID
        else:
            denied.append(t)
    if not denied:
        return Proceed(body, None, access)
    rows = [
        cls.DeletableTopicResult(
            name=t.name, topic_id=t.topic_id, error_code=int(_TOPIC_DENIED), error_message=message
        )
        for t in denied
    ]
    return Proceed(_copy(body, topics=allowed), _append("responses", rows), access)


def _create_partitions(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
    cls: Any = create_partitions.RESPONSE.cls
    allowed: list[Any] = []
    denied: list[Any] = []
    for t in body.topics:
        (allowed if access.allows(Op.ALTER, RT.TOPIC, t.name) else denied).append(t)
    if not denied:
        return Proceed(body, None, access)
    rows = [
        cls.CreatePartitionsTopicResult(
            name=t.name, error_code=int(_TOPIC_DENIED), error_message=AUTHORIZATION_MESSAGES[_TOPIC_DENIED]
        )
        for t in denied
    ]
    return Proceed(_copy(body, topics=allowed), _append("results", rows), access)


# -- configs ----------------------------------------------------------------------------------------


def _config_resource(resource_type: int, name: str) -> tuple[ResourceType, str, ErrorCode] | None:
    """The ACL resource a config resource is authorised on, and the error of a refusal."""
    if resource_type == ConfigResourceType.TOPIC:
        return RT.TOPIC, name, _TOPIC_DENIED
    if resource_type == ConfigResourceType.GROUP:
        return RT.GROUP, name, ErrorCode.GROUP_AUTHORIZATION_FAILED
    if resource_type in (
        ConfigResourceType.BROKER,
        ConfigResourceType.BROKER_LOGGER,
        ConfigResourceType.CLIENT_METRICS,
    ):
        return RT.CLUSTER, CLUSTER_NAME, _CLUSTER_DENIED
    return None  # an unknown type: the handler refuses it


def _configs(
    operation: AclOperation, result_field: str, row: Callable[[Any, ErrorCode], Any]
) -> Callable[[Access, MetadataImage, int, Any], Verdict]:
    """The check of DescribeConfigs or IncrementalAlterConfigs: ``operation`` per resource."""

    def check(access: Access, image: MetadataImage, version: int, body: Any) -> Verdict:
        allowed: list[Any] = []
        rows: list[Any] = []
        for r in body.resources:
            target = _config_resource(r.resource_type, r.resource_name)
            if target is None or access.allows(operation, target[0], target[1]):
                allowed.append(r)
            else:
                rows.append(row(r, target[2]))
        if not rows:
            return Proceed(body, None, access)
        return Proceed(_copy(body, resources=allowed), _append(result_field, rows), access)

    return check


def _describe_configs_row(r: Any, code: ErrorCode) -> Any:
    cls: Any = describe_configs.RESPONSE.cls
    return cls.DescribeConfigsResult(
        error_code=int(code),
        error_message=AUTHORIZATION_MESSAGES[code],
        resource_type=r.resource_type,
        resource_name=r.resource_name,
        configs=[],
    )


def _alter_configs_row(r: Any, code: ErrorCode) -> Any:
    cls: Any = incremental_alter_configs.RESPONSE.cls
    return cls.AlterConfigsResourceResponse(
        error_code=int(code),
        error_message=AUTHORIZATION_MESSAGES[code],
        resource_type=r.resource_type,
        resource_name=r.resource_name,
    )


# -- helpers ----------------------------------------------------------------------------------------


def _topic_name(image: MetadataImage, topic_id: uuid.UUID) -> str | None:
    if topic_id == ZERO_UUID:
        return None
    topic = image.topics_by_id.get(topic_id)
    return None if topic is None else topic.name


def _append(field: str, rows: list[Any]) -> Callable[[Any], Any]:
    """A merge that appends ``rows`` to the answer's ``field`` list (an answer that is not a message,
    such as NO_RESPONSE for acks=0, passes unchanged)."""

    def merge(response: Any) -> Any:
        if not isinstance(response, StructValue):
            return response
        return _copy(response, **{field: list(getattr(response, field)) + rows})

    return merge


_PER_RESOURCE: Final[Mapping[int, Callable[[Access, MetadataImage, int, Any], Verdict]]] = {
    produce.API.key: _produce,
    fetch.API.key: _fetch,
    list_offsets.API.key: _list_offsets,
    offset_for_leader_epoch.API.key: _offset_for_leader_epoch,
    init_producer_id.API.key: _init_producer_id,
    create_topics.API.key: _create_topics,
    delete_topics.API.key: _delete_topics,
    create_partitions.API.key: _create_partitions,
    describe_configs.API.key: _configs(Op.DESCRIBE_CONFIGS, "results", _describe_configs_row),
    incremental_alter_configs.API.key: _configs(Op.ALTER_CONFIGS, "responses", _alter_configs_row),
}
