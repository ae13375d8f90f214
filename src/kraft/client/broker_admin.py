"""A small blocking admin client for the broker-facing operator tools (``kraft topics``,
``kraft configs``, ``kraft leader-election``, ``kraft broker-api-versions``).

It speaks to brokers' client listeners the way Kafka's admin client does (spec controller.md 6):

* **Bootstrap through Metadata.** The first call connects to any bootstrap address (each
  ``kraft.client.connection.Connection`` negotiates ApiVersions on open) and asks Metadata for the
  brokers, the cluster id and ``ControllerId``. Connections are kept per address until ``close``.
* **Reads** (Metadata, DescribeCluster, DescribeTopicPartitions, DescribeConfigs) go to any broker,
  except DescribeConfigs of one broker's configs, which goes to that broker (as Kafka's does).
* **Controller-bound requests** (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders,
  IncrementalAlterConfigs of topics and cluster defaults) go to the broker Metadata names as
  ``ControllerId``; the broker forwards them to the active controller (spec 6.8). NOT_CONTROLLER
  (top-level or per item), NETWORK_EXCEPTION and transport failures are retried, with a fresh
  Metadata and exponential backoff, until the call's deadline; only the items still failing are
  resent. Other errors are outcomes, returned per item as ``ApiError`` values.
* **DescribeTopicPartitions** follows ``NextCursor`` until it is null (spec 6.3) and falls back to
  Metadata when the broker does not serve it (UNSUPPORTED_VERSION); topics described through the
  fallback carry ``elr``/``last_known_elr`` = None, which the tools print as ``N/A``.

Every public call has an overall deadline (``timeout_ms``, ``kraft.client.connection``'s
``BootstrapClient``) and fails with ``AdminError`` naming each address tried and its last outcome,
or with ``ApiFailure`` when a whole request was refused with an error code. This module blocks and
reads the clock; it belongs to the clients and the tools, never to the core or the server.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, Unpack

from kraft.client.connection import (
    Address,
    AdminError,
    BootstrapClient,
    ClientOptions,
    Connection,
    RetriableError,
    Unreachable,
    error_name,
)
from kraft.common.errors import RemoteProtocolError
from kraft.common.uuids import ZERO_UUID
from kraft.metadata.configs import ConfigOperation, ConfigSource
from kraft.metadata.records import ConfigResourceType
from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import alter_user_scram_credentials as alter_scram_msg
from kraft.protocol.messages import create_acls as create_acls_msg
from kraft.protocol.messages import create_partitions as create_partitions_msg
from kraft.protocol.messages import create_topics as create_topics_msg
from kraft.protocol.messages import delete_acls as delete_acls_msg
from kraft.protocol.messages import delete_topics as delete_topics_msg
from kraft.protocol.messages import describe_acls as describe_acls_msg
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import describe_configs as describe_configs_msg
from kraft.protocol.messages import describe_log_dirs as describe_log_dirs_msg
from kraft.protocol.messages import describe_topic_partitions as dtp_msg
from kraft.protocol.messages import describe_user_scram_credentials as describe_scram_msg
from kraft.protocol.messages import elect_leaders as elect_leaders_msg
from kraft.protocol.messages import incremental_alter_configs as iac_msg
from kraft.protocol.messages import metadata as metadata_msg
from kraft.security.acls import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
    operation_of,
    pattern_type_of,
    permission_type_of,
    resource_type_of,
)

K = TypeVar("K")

# Kafka's Topic.INTERNAL_TOPICS.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})

# Codes after which a controller-bound request is resent (to the controller named by a fresh
# Metadata). REQUEST_TIMED_OUT is deliberately absent: the controller may have applied the change,
# and a resent CreateTopics would then fail with TOPIC_ALREADY_EXISTS.
RETRY_CODES = frozenset({ErrorCode.NOT_CONTROLLER, ErrorCode.NETWORK_EXCEPTION})

# Kafka's default message per error code (``Errors.java``), used when a response carries a code
# without an ErrorMessage; only the codes these tools meet.
_DEFAULT_MESSAGES: dict[int, str] = {
    -1: "The server experienced an unexpected error when processing the request.",
    3: "This server does not host this topic-partition.",
    5: "There is no leader for this topic-partition as we are in the middle of a leadership election.",
    7: "The request timed out.",
    8: "The broker is not available.",
    13: "The server disconnected before a response was received.",
    17: "The request attempted to perform an operation on an invalid topic.",
    19: "Messages are rejected since there are fewer in-sync replicas than required.",
    29: "Topic authorization failed.",
    31: "Cluster authorization failed.",
    35: "The version of API is not supported.",
    36: "Topic with this name already exists.",
    37: "Number of partitions is below 1.",
    38: "Replication factor is below 1 or larger than the number of available brokers.",
    39: "Replica assignment is invalid.",
    40: "Configuration is invalid.",
    41: "This is not the correct controller for this cluster.",
    42: "This most likely occurs because of a request being malformed by the client library or the "
    "message was sent to an incompatible broker. See the broker logs for more details.",
    44: "Request parameters do not satisfy the configured policy.",
    56: "Disk error when trying to access log file on the disk.",
    60: "A partition reassignment is in progress.",
    73: "Topic deletion is disabled.",
    80: "The preferred leader was not available.",
    83: "Eligible topic partition leaders are not available.",
    84: "Leader election not needed for topic partition.",
    89: "The throttling quota has been exceeded.",
    91: "A request illegally referred to a resource that does not exist.",
    100: "This server does not host this topic ID.",
    103: "The log's topic ID did not match the topic ID in the request.",
}


# ----------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, slots=True)
class ScramUpsertion:
    """One credential to set (KIP-554): the client salts and hashes the password itself, so only
    the salted password crosses the wire; ``mechanism`` is the wire code (1 SHA-256, 2 SHA-512)."""

    user: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes

    def __repr__(self) -> str:
        return f"ScramUpsertion({self.user!r}, mechanism={self.mechanism}, iterations={self.iterations})"


@dataclass(frozen=True, slots=True)
class ApiError:
    """An error code a response carried for one item (or the whole request), with its message."""

    code: int
    message: str | None = None  # the server's ErrorMessage, when it sent one

    @property
    def name(self) -> str:
        return error_name(self.code)

    @property
    def text(self) -> str:
        """The server's message, else Kafka's default message for the code, else its name."""
        if self.message:
            return self.message
        return _DEFAULT_MESSAGES.get(self.code, self.name)

    def __str__(self) -> str:
        return self.text


class ApiFailure(AdminError):
    """A whole request was answered with an error code (e.g. ElectLeaders' top-level ErrorCode)."""

    def __init__(self, what: str, error: ApiError) -> None:
        super().__init__(f"{what} failed: {error.name}: {error.text}")
        self.error = error


@dataclass(frozen=True, slots=True)
class BrokerNode:
    """A broker as Metadata or DescribeCluster lists it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> Address:
        return Address(self.host, self.port)


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition as described to clients. ``leader`` is -1 when there is none; ``elr`` and
    ``last_known_elr`` are None when the description came from Metadata (which has no ELR)."""

    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    elr: tuple[int, ...] | None
    last_known_elr: tuple[int, ...] | None
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """A topic and its partitions, sorted by partition index."""

    name: str
    topic_id: uuid.UUID
    internal: bool
    partitions: tuple[PartitionInfo, ...]


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """What one Metadata answer says about the cluster (and the topics asked for)."""

    cluster_id: str | None
    controller_id: int
    brokers: tuple[BrokerNode, ...]
    topics: tuple[TopicDescription, ...] = ()
    topic_errors: Mapping[str, ApiError] = field(default_factory=dict)

    def broker(self, node_id: int) -> BrokerNode | None:
        for node in self.brokers:
            if node.node_id == node_id:
                return node
        return None


@dataclass(frozen=True, slots=True)
class ConfigResource:
    """A config resource: ``type`` is Kafka's ConfigResource.Type (2 topic, 4 broker); the broker
    name "" is the cluster-wide default."""

    type: ConfigResourceType
    name: str

    @staticmethod
    def topic(name: str) -> ConfigResource:
        return ConfigResource(ConfigResourceType.TOPIC, name)

    @staticmethod
    def broker(name: str) -> ConfigResource:
        return ConfigResource(ConfigResourceType.BROKER, name)


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One DescribeConfigs entry. ``value`` is None for sensitive entries."""

    name: str
    value: str | None
    source: ConfigSource
    sensitive: bool = False
    read_only: bool = False
    synonyms: tuple[ConfigSynonym, ...] = ()

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A CreateTopics entry; -1 partitions / replication factor mean the cluster defaults, and a
    non-empty ``assignments`` (partition -> broker ids) replaces both."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: Mapping[int, Sequence[int]] = field(default_factory=dict)
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NewPartitions:
    """A CreatePartitions entry: grow to ``total_count``, optionally placing the new partitions."""

    total_count: int
    assignments: Sequence[Sequence[int]] | None = None


@dataclass(frozen=True, slots=True)
class AlterConfigOp:
    name: str
    operation: ConfigOperation
    value: str | None = None


@dataclass(frozen=True, slots=True)
class ReplicaLogInfo:
    """One partition's log in a log directory (DescribeLogDirs)."""

    topic: str
    partition: int
    size: int  # bytes of its segments
    offset_lag: int  # a future (moving) replica's lag; 0 here
    is_future: bool


@dataclass(frozen=True, slots=True)
class LogDirInfo:
    """One log directory of a broker: its error (None: online) and the partition logs it holds."""

    log_dir: str
    error: ApiError | None
    replicas: tuple[ReplicaLogInfo, ...]
    total_bytes: int = -1  # the volume's (v4+; -1: not told)
    usable_bytes: int = -1


class ElectionType(enum.IntEnum):
    """ElectLeaders' ElectionType (Kafka's ``ElectionType``)."""

    PREFERRED = 0
    UNCLEAN = 1


@dataclass(slots=True)
class _Retry:
    """An attempt that should be tried again (after a Metadata refresh and a backoff)."""

    address: Address
    reason: str


# ----------------------------------------------------------------------------------------------
# The client


class BrokerAdminClient(BootstrapClient):
    """Blocking admin calls against brokers' client listeners.

    Args:
        bootstrap: broker addresses to start from (any broker will do).
        client_id: the request header's client id.
        options: ``timeout_ms`` (overall deadline of each public call, retries included),
            ``request_timeout_ms`` (deadline of one request, and the TimeoutMs sent in
            controller-bound requests; the socket waits one second longer so the broker's own
            timeout answer wins) and the rest of ``BootstrapClient``'s.

    Use as a context manager, or call ``close``.
    """

    def __init__(
        self,
        bootstrap: Sequence[Address],
        *,
        client_id: str = "kraft-admin",
        **options: Unpack[ClientOptions],
    ) -> None:
        super().__init__(bootstrap, **options)
        self._pool = self._connection_pool(client_id)
        self._metadata: ClusterMetadata | None = None

    def __enter__(self) -> BrokerAdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._pool.close()

    # ------------------------------------------------------------------------------------------
    # Cluster

    def cluster_metadata(self) -> ClusterMetadata:
        """A fresh Metadata answer about the brokers (no topics) from any broker."""

        def attempt(conn: Connection) -> ClusterMetadata:
            return self._refresh_metadata(conn)

        return self._call("the cluster metadata", self._any_broker, attempt)

    def describe_cluster(self) -> tuple[BrokerNode, ...]:
        """The live brokers, from DescribeCluster (or Metadata on brokers without it), by id."""

        def attempt(conn: Connection) -> tuple[BrokerNode, ...]:
            api = describe_cluster_msg.API
            version = conn.version_for(api)
            if version is None:
                return self._refresh_metadata(conn).brokers
            body = api.request(endpoint_type=1) if version >= 1 else api.request()
            response = conn.send(api, version, body)
            if response.error_code != ErrorCode.NONE:
                raise ApiFailure("DescribeCluster", ApiError(response.error_code, response.error_message))
            nodes = [BrokerNode(b.broker_id, b.host, b.port, b.rack) for b in response.brokers]
            return tuple(sorted(nodes, key=lambda n: n.node_id))

        return self._call("DescribeCluster", self._any_broker, attempt)

    def api_versions(self, node: BrokerNode) -> dict[int, tuple[int, int]]:
        """The API versions ``node`` advertises (ApiVersions, KIP-511), key -> (min, max).

        Raises:
            AdminError: the node could not be reached or refused ApiVersions before the deadline.
        """
        outcomes: dict[Address, str] = {}

        def one_round(_deadline: float) -> dict[int, tuple[int, int]] | None:
            try:
                return dict(self._connection(node.address).versions)
            except Unreachable as e:
                outcomes.update(e.failures)
                return None

        return self._retry(f"ApiVersions of node {node.node_id}", outcomes, one_round)

    # ------------------------------------------------------------------------------------------
    # Topics: reads

    def list_topics(self, *, include_internal: bool = True) -> list[TopicDescription]:
        """Every topic (Metadata with all topics), sorted by name; internal ones unless asked not to."""

        def attempt(conn: Connection) -> list[TopicDescription]:
            meta = self._send_metadata(conn, None)
            return sorted(
                (t for t in meta.topics if include_internal or not t.internal), key=lambda t: t.name
            )

        return self._call("the topic list", self._any_broker, attempt)

    def describe_topics(
        self, names: Iterable[str], *, partition_limit: int = 2000
    ) -> dict[str, TopicDescription | ApiError]:
        """Describes topics by name with DescribeTopicPartitions, following NextCursor until it is
        null; falls back to Metadata (no ELR: ``elr`` None) when the broker does not serve API 75.

        Returns:
            name -> its description, or the error the broker answered for it.
        """
        wanted = sorted(set(names))
        if not wanted:
            return {}

        def attempt(conn: Connection) -> dict[str, TopicDescription | ApiError]:
            if conn.version_for(dtp_msg.API) is None:
                return self._describe_topics_with_metadata(conn, wanted)
            result = self._describe_topic_partitions(conn, wanted, partition_limit)
            if result is None:  # the broker answered UNSUPPORTED_VERSION for the topics
                return self._describe_topics_with_metadata(conn, wanted)
            return result

        return self._call("DescribeTopicPartitions", self._any_broker, attempt)

    def describe_topics_by_id(
        self, topic_ids: Iterable[uuid.UUID]
    ) -> dict[uuid.UUID, TopicDescription | ApiError]:
        """Describes topics by id with Metadata (v12+ looks them up by id; v10-11 list all topics)."""
        wanted = list(dict.fromkeys(topic_ids))
        if not wanted:
            return {}

        def attempt(conn: Connection) -> dict[uuid.UUID, TopicDescription | ApiError]:
            version = conn.version_for(metadata_msg.API)
            if version is None or version < 10:
                raise AdminError(
                    f"{conn.address} cannot describe topics by id (it serves Metadata below v10)"
                )
            cls: Any = metadata_msg.REQUEST.cls
            if version >= 12:
                body = cls(
                    topics=[cls.MetadataRequestTopic(topic_id=i, name=None) for i in wanted],
                    allow_auto_topic_creation=False,
                )
            else:
                body = cls(topics=None, allow_auto_topic_creation=False)
            response = conn.send(metadata_msg.API, version, body)
            meta = self._metadata_from_response(response)
            by_id = {t.topic_id: t for t in meta.topics}
            out: dict[uuid.UUID, TopicDescription | ApiError] = {}
            errors_by_id = {t.topic_id: t.error_code for t in response.topics if t.error_code}
            for topic_id in wanted:
                if topic_id in by_id:
                    out[topic_id] = by_id[topic_id]
                elif topic_id in errors_by_id:
                    out[topic_id] = ApiError(errors_by_id[topic_id])
                else:
                    out[topic_id] = ApiError(ErrorCode.UNKNOWN_TOPIC_ID)
            return out

        return self._call("Metadata", self._any_broker, attempt)

    # ------------------------------------------------------------------------------------------
    # Configs

    def describe_configs(
        self, resources: Iterable[ConfigResource], *, include_synonyms: bool = False
    ) -> dict[ConfigResource, list[ConfigEntry] | ApiError]:
        """DescribeConfigs (all keys) of each resource; one broker's own configs are asked of that
        broker, everything else of any broker.

        Returns:
            resource -> its entries in the broker's order, or the error answered for it.
        """
        wanted = list(dict.fromkeys(resources))
        groups: dict[int | None, list[ConfigResource]] = {}
        for resource in wanted:
            target: int | None = None
            if resource.type == ConfigResourceType.BROKER and resource.name:
                try:
                    target = int(resource.name)
                except ValueError:
                    raise AdminError(f"broker config resource '{resource.name}' is not a broker id") from None
            groups.setdefault(target, []).append(resource)
        out: dict[ConfigResource, list[ConfigEntry] | ApiError] = {}
        for target, group in groups.items():
            connect = self._any_broker if target is None else self._node_connector(target)
            out.update(
                self._call(
                    "DescribeConfigs", connect, self._describe_configs_attempt(group, include_synonyms)
                )
            )
        return {r: out[r] for r in wanted}

    def _describe_configs_attempt(
        self, group: list[ConfigResource], include_synonyms: bool
    ) -> Callable[[Connection], dict[ConfigResource, list[ConfigEntry] | ApiError]]:
        return lambda conn: self._send_describe_configs(conn, group, include_synonyms)

    def describe_log_dirs(
        self, node_ids: Iterable[int], topics: Iterable[str] | None = None
    ) -> dict[int, list[LogDirInfo]]:
        """DescribeLogDirs of each broker in ``node_ids`` (Kafka's ``describeLogDirs``): its log
        directories and the partition logs in them, of ``topics`` only if given.

        Raises:
            AdminError: a broker is not live, cannot be reached, or refused the request.
        """
        api = describe_log_dirs_msg.API
        cls: Any = describe_log_dirs_msg.REQUEST.cls
        wanted = None if topics is None else set(topics)

        def attempt(conn: Connection) -> list[LogDirInfo] | _Retry:
            version = _version_or_raise(conn, api)
            response = conn.send(api, version, cls(topics=None))
            if version >= 3 and response.error_code != ErrorCode.NONE:
                refused = ApiError(response.error_code, None)
                if response.error_code in RETRY_CODES:
                    return _Retry(conn.address, f"DescribeLogDirs answered {refused.name}")
                raise ApiFailure("DescribeLogDirs", refused)
            dirs = []
            for r in response.results:
                replicas = tuple(
                    ReplicaLogInfo(t.name, p.partition_index, p.partition_size, p.offset_lag, p.is_future_key)
                    for t in r.topics
                    if wanted is None or t.name in wanted
                    for p in t.partitions
                )
                error = None if r.error_code == ErrorCode.NONE else ApiError(r.error_code, None)
                total = r.total_bytes if version >= 4 else -1
                usable = r.usable_bytes if version >= 4 else -1
                dirs.append(
                    LogDirInfo(
                        r.log_dir,
                        error,
                        tuple(sorted(replicas, key=lambda x: (x.topic, x.partition))),
                        total,
                        usable,
                    )
                )
            return sorted(dirs, key=lambda d: d.log_dir)

        return {
            node_id: self._call(
                f"DescribeLogDirs of broker {node_id}", self._node_connector(node_id), attempt
            )
            for node_id in sorted(set(node_ids))
        }

    def incremental_alter_configs(
        self, resource: ConfigResource, operations: Sequence[AlterConfigOp], *, validate_only: bool = False
    ) -> ApiError | None:
        """IncrementalAlterConfigs of one resource: one broker's own configs go to that broker,
        topics and cluster defaults to the controller. Returns the error answered, or None."""
        api = iac_msg.API
        cls: Any = iac_msg.REQUEST.cls

        def send(conn: Connection, pending: list[ConfigResource]) -> dict[ConfigResource, ApiError | None]:
            version = _version_or_raise(conn, api)
            configs = [
                cls.AlterConfigsResource.AlterableConfig(
                    name=op.name, config_operation=int(op.operation), value=op.value
                )
                for op in operations
            ]
            body = cls(
                resources=[
                    cls.AlterConfigsResource(
                        resource_type=int(resource.type), resource_name=resource.name, configs=configs
                    )
                ],
                validate_only=validate_only,
            )
            response = conn.send(api, version, body)
            got = {
                ConfigResource(ConfigResourceType(r.resource_type), r.resource_name): _error_or_none(
                    r.error_code, r.error_message
                )
                for r in response.responses
                if r.resource_type in _RESOURCE_TYPES
            }
            return _complete(got, pending, "IncrementalAlterConfigs")

        if resource.type == ConfigResourceType.BROKER and resource.name:
            try:
                connect = self._node_connector(int(resource.name))
            except ValueError:
                raise AdminError(f"broker config resource '{resource.name}' is not a broker id") from None
        else:
            connect = self._controller
        return self._batch("IncrementalAlterConfigs", [resource], connect, send)[resource]

    # ------------------------------------------------------------------------------------------
    # SCRAM credentials (KIP-554)

    def describe_user_scram_credentials(
        self, users: Sequence[str] | None = None
    ) -> dict[str, list[tuple[int, int]] | ApiError]:
        """DescribeUserScramCredentials from any broker: user -> [(mechanism, iterations)], or the
        error answered for that user (RESOURCE_NOT_FOUND for a user without credentials). None or
        empty ``users``: every user with a credential.

        Raises:
            ApiFailure: the whole request was refused.
        """
        api = describe_scram_msg.API
        cls: Any = describe_scram_msg.REQUEST.cls

        def attempt(conn: Connection) -> dict[str, list[tuple[int, int]] | ApiError]:
            version = _version_or_raise(conn, api)
            body = cls(users=None if users is None else [cls.UserName(name=u) for u in users])
            response = conn.send(api, version, body)
            if response.error_code != ErrorCode.NONE:
                error = ApiError(response.error_code, response.error_message)
                raise ApiFailure("DescribeUserScramCredentials", error)
            out: dict[str, list[tuple[int, int]] | ApiError] = {}
            for r in response.results:
                if r.error_code != ErrorCode.NONE:
                    out[r.user] = ApiError(r.error_code, r.error_message)
                else:
                    out[r.user] = [(c.mechanism, c.iterations) for c in r.credential_infos]
            return out

        return self._call("DescribeUserScramCredentials", self._any_broker, attempt)

    def alter_user_scram_credentials(
        self, deletions: Sequence[tuple[str, int]] = (), upsertions: Sequence[ScramUpsertion] = ()
    ) -> dict[str, ApiError | None]:
        """AlterUserScramCredentials through the controller; user -> error, or None when done.
        ``deletions`` are (user, mechanism code). Name each user once: the controller refuses a user
        altered twice in one request (DUPLICATE_RESOURCE)."""
        api = alter_scram_msg.API
        cls: Any = alter_scram_msg.REQUEST.cls
        users = list(dict.fromkeys([u for u, _ in deletions] + [u.user for u in upsertions]))

        def send(conn: Connection, pending: list[str]) -> dict[str, ApiError | None]:
            version = _version_or_raise(conn, api)
            wanted = set(pending)
            body = cls(
                deletions=[
                    cls.ScramCredentialDeletion(name=u, mechanism=m) for u, m in deletions if u in wanted
                ],
                upsertions=[
                    cls.ScramCredentialUpsertion(
                        name=u.user,
                        mechanism=u.mechanism,
                        iterations=u.iterations,
                        salt=u.salt,
                        salted_password=u.salted_password,
                    )
                    for u in upsertions
                    if u.user in wanted
                ],
            )
            response = conn.send(api, version, body)
            got = {r.user: _error_or_none(r.error_code, r.error_message) for r in response.results}
            return _complete(got, pending, "AlterUserScramCredentials")

        return self._batch("AlterUserScramCredentials", users, self._controller, send)

    # ------------------------------------------------------------------------------------------
    # Topics: controller-bound

    def create_topics(
        self, topics: Sequence[NewTopic], *, validate_only: bool = False
    ) -> dict[str, ApiError | None]:
        """CreateTopics through the controller; name -> error, or None when it was created."""
        api = create_topics_msg.API
        cls: Any = create_topics_msg.REQUEST.cls
        by_name = {t.name: t for t in topics}

        def send(conn: Connection, pending: list[str]) -> dict[str, ApiError | None]:
            version = _version_or_raise(conn, api)
            entries = []
            for name in pending:
                topic = by_name[name]
                if (
                    version < 4
                    and not topic.assignments
                    and -1 in (topic.num_partitions, topic.replication_factor)
                ):
                    raise AdminError(
                        f"{conn.address} speaks only CreateTopics v{version}: it cannot apply the cluster's "
                        "default partitions or replication factor; give both"
                    )
                entries.append(
                    cls.CreatableTopic(
                        name=name,
                        num_partitions=topic.num_partitions if not topic.assignments else -1,
                        replication_factor=topic.replication_factor if not topic.assignments else -1,
                        assignments=[
                            cls.CreatableTopic.CreatableReplicaAssignment(
                                partition_index=p, broker_ids=list(ids)
                            )
                            for p, ids in sorted(topic.assignments.items())
                        ],
                        configs=[
                            cls.CreatableTopic.CreatableTopicConfig(name=k, value=v)
                            for k, v in topic.configs.items()
                        ],
                    )
                )
            body = cls(topics=entries, timeout_ms=self._request_timeout_ms)
            if version >= 1:
                body.validate_only = validate_only
            elif validate_only:
                raise AdminError(f"{conn.address} speaks only CreateTopics v0: no validate-only")
            response = conn.send(api, version, body)
            got = {t.name: _error_or_none(t.error_code, t.error_message) for t in response.topics}
            return _complete(got, pending, "CreateTopics")

        return self._batch("CreateTopics", list(by_name), self._controller, send)

    def delete_topics(self, names: Sequence[str]) -> dict[str, ApiError | None]:
        """DeleteTopics (by name) through the controller; name -> error, or None when deleted."""
        api = delete_topics_msg.API
        cls: Any = delete_topics_msg.REQUEST.cls

        def send(conn: Connection, pending: list[str]) -> dict[str, ApiError | None]:
            version = _version_or_raise(conn, api)
            if version >= 6:
                body = cls(
                    topics=[cls.DeleteTopicState(name=n, topic_id=ZERO_UUID) for n in pending],
                    timeout_ms=self._request_timeout_ms,
                )
            else:
                body = cls(topic_names=list(pending), timeout_ms=self._request_timeout_ms)
            response = conn.send(api, version, body)
            got = {
                r.name: _error_or_none(r.error_code, r.error_message) for r in response.responses if r.name
            }
            return _complete(got, pending, "DeleteTopics")

        return self._batch("DeleteTopics", list(dict.fromkeys(names)), self._controller, send)

    def create_partitions(self, updates: Mapping[str, NewPartitions]) -> dict[str, ApiError | None]:
        """CreatePartitions through the controller; name -> error, or None when it grew."""
        api = create_partitions_msg.API
        cls: Any = create_partitions_msg.REQUEST.cls

        def send(conn: Connection, pending: list[str]) -> dict[str, ApiError | None]:
            version = _version_or_raise(conn, api)
            topics = []
            for name in pending:
                update = updates[name]
                assignments = None
                if update.assignments is not None:
                    assignments = [
                        cls.CreatePartitionsTopic.CreatePartitionsAssignment(broker_ids=list(ids))
                        for ids in update.assignments
                    ]
                topics.append(
                    cls.CreatePartitionsTopic(name=name, count=update.total_count, assignments=assignments)
                )
            body = cls(topics=topics, timeout_ms=self._request_timeout_ms, validate_only=False)
            response = conn.send(api, version, body)
            got = {r.name: _error_or_none(r.error_code, r.error_message) for r in response.results}
            return _complete(got, pending, "CreatePartitions")

        return self._batch("CreatePartitions", list(updates), self._controller, send)

    def elect_leaders(
        self, election_type: ElectionType, partitions: Sequence[tuple[str, int]] | None
    ) -> dict[tuple[str, int], ApiError | None]:
        """ElectLeaders through the controller; ``partitions`` None means every partition.

        Returns:
            (topic, partition) -> error, or None when a leader was elected; with ``partitions``
            None, the partitions the controller reported on.

        Raises:
            ApiFailure: the request as a whole was refused (e.g. CLUSTER_AUTHORIZATION_FAILED).
        """
        api = elect_leaders_msg.API
        cls: Any = elect_leaders_msg.REQUEST.cls
        everything: tuple[str, int] = ("", -1)  # the key standing for "all partitions" while pending
        keys = list(dict.fromkeys(partitions)) if partitions is not None else [everything]
        results: dict[tuple[str, int], ApiError | None] = {}

        def send(conn: Connection, pending: list[tuple[str, int]]) -> dict[tuple[str, int], ApiError | None]:
            version = _version_or_raise(conn, api)
            if version == 0 and election_type != ElectionType.PREFERRED:
                raise AdminError(f"{conn.address} speaks only ElectLeaders v0: preferred elections only")
            if pending == [everything]:
                topic_partitions = None
            else:
                by_topic: dict[str, list[int]] = {}
                for topic, partition in pending:
                    by_topic.setdefault(topic, []).append(partition)
                topic_partitions = [cls.TopicPartitions(topic=t, partitions=p) for t, p in by_topic.items()]
            body = cls(topic_partitions=topic_partitions, timeout_ms=self._request_timeout_ms)
            if version >= 1:
                body.election_type = int(election_type)
            response = conn.send(api, version, body)
            top = getattr(response, "error_code", 0)
            if top != ErrorCode.NONE:
                if top in RETRY_CODES:
                    return {k: ApiError(top) for k in pending}
                raise ApiFailure("ElectLeaders", ApiError(top))
            got: dict[tuple[str, int], ApiError | None] = {}
            for topic in response.replica_election_results:
                for p in topic.partition_result:
                    got[(topic.topic, p.partition_id)] = _error_or_none(p.error_code, p.error_message)
            if pending == [everything]:
                results.update(got)
                return {everything: None}
            return _complete(got, pending, "ElectLeaders")

        done = self._batch("ElectLeaders", keys, self._controller, send)
        if partitions is None:
            return dict(sorted(results.items()))
        return done

    # ------------------------------------------------------------------------------------------
    # ACLs (Kafka's Admin.createAcls, describeAcls, deleteAcls)

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[ApiError | None]:
        """CreateAcls through the controller's broker (which forwards it); one error, or None when
        created (or already there), per binding, in order."""
        api = create_acls_msg.API
        cls: Any = create_acls_msg.REQUEST.cls

        def send(conn: Connection, pending: list[int]) -> dict[int, ApiError | None]:
            version = _version_or_raise(conn, api)
            body = cls(creations=[_acl_creation(cls, bindings[i]) for i in pending])
            response = conn.send(api, version, body)
            rows = [_error_or_none(r.error_code, r.error_message) for r in response.results]
            return _complete(dict(zip(pending, rows, strict=False)), pending, "CreateAcls")

        done = self._batch("CreateAcls", list(range(len(bindings))), self._controller, send)
        return [done[i] for i in range(len(bindings))]

    def describe_acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """DescribeAcls on any broker: the ACLs ``acl_filter`` matches, sorted.

        Raises:
            ApiFailure: the request was refused (SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED...).
        """
        api = describe_acls_msg.API
        cls: Any = describe_acls_msg.REQUEST.cls

        def attempt(conn: Connection) -> _Retry | list[AclBinding]:
            version = _version_or_raise(conn, api)
            response = conn.send(api, version, cls(**_filter_fields(acl_filter)))
            if response.error_code in RETRY_CODES:
                return _Retry(conn.address, f"DescribeAcls answered {error_name(response.error_code)}")
            if response.error_code != ErrorCode.NONE:
                raise ApiFailure("DescribeAcls", ApiError(response.error_code, response.error_message))
            found = [
                AclBinding(
                    ResourcePattern(
                        resource_type_of(r.resource_type), r.resource_name, pattern_type_of(r.pattern_type)
                    ),
                    AccessControlEntry(
                        a.principal, a.host, operation_of(a.operation), permission_type_of(a.permission_type)
                    ),
                )
                for r in response.resources
                for a in r.acls
            ]
            return sorted(found)

        return self._call("DescribeAcls", self._any_broker, attempt)

    def delete_acls(
        self, filters: Sequence[AclBindingFilter]
    ) -> list[tuple[ApiError | None, list[AclBinding]]]:
        """DeleteAcls through the controller's broker: per filter, its error (or None) and the ACLs
        it deleted."""
        api = delete_acls_msg.API
        cls: Any = delete_acls_msg.REQUEST.cls
        deleted: dict[int, list[AclBinding]] = {}

        def send(conn: Connection, pending: list[int]) -> dict[int, ApiError | None]:
            version = _version_or_raise(conn, api)
            body = cls(filters=[cls.DeleteAclsFilter(**_filter_fields(filters[i])) for i in pending])
            response = conn.send(api, version, body)
            got: dict[int, ApiError | None] = {}
            for i, r in zip(pending, response.filter_results, strict=False):
                got[i] = _error_or_none(r.error_code, r.error_message)
                deleted[i] = sorted(
                    AclBinding(
                        ResourcePattern(
                            resource_type_of(m.resource_type),
                            m.resource_name,
                            pattern_type_of(m.pattern_type),
                        ),
                        AccessControlEntry(
                            m.principal,
                            m.host,
                            operation_of(m.operation),
                            permission_type_of(m.permission_type),
                        ),
                    )
                    for m in r.matching_acls
                    if m.error_code == ErrorCode.NONE
                )
            return _complete(got, pending, "DeleteAcls")

        done = self._batch("DeleteAcls", list(range(len(filters))), self._controller, send)
        return [(done[i], deleted.get(i, [])) for i in range(len(filters))]

    # ------------------------------------------------------------------------------------------
    # One request on one connection

    def _refresh_metadata(self, conn: Connection) -> ClusterMetadata:
        self._metadata = self._send_metadata(conn, [])
        return self._metadata

    def _send_metadata(self, conn: Connection, topics: list[str] | None) -> ClusterMetadata:
        """Metadata for ``topics`` (None: all) without auto-creation; remembers the brokers."""
        api = metadata_msg.API
        version = conn.version_for(api)
        if version is None or version < 1:
            raise AdminError(f"{conn.address} does not serve Metadata v1 or later")
        cls: Any = metadata_msg.REQUEST.cls
        body = cls(
            topics=None if topics is None else [cls.MetadataRequestTopic(name=n) for n in topics],
            allow_auto_topic_creation=False,
        )
        response = conn.send(api, version, body)
        if getattr(response, "error_code", 0):
            raise RetriableError(f"Metadata failed: {error_name(response.error_code)}")
        meta = self._metadata_from_response(response)
        self._metadata = ClusterMetadata(meta.cluster_id, meta.controller_id, meta.brokers)
        return meta

    @staticmethod
    def _metadata_from_response(response: Any) -> ClusterMetadata:
        brokers = tuple(
            sorted(
                (BrokerNode(b.node_id, b.host, b.port, b.rack) for b in response.brokers),
                key=lambda n: n.node_id,
            )
        )
        topics: list[TopicDescription] = []
        errors: dict[str, ApiError] = {}
        for t in response.topics:
            if t.error_code != ErrorCode.NONE:
                if t.name is not None:
                    errors[t.name] = ApiError(t.error_code)
                continue
            partitions = tuple(
                sorted(
                    (_partition_info(p, with_elr=False) for p in t.partitions),
                    key=lambda p: p.partition,
                )
            )
            topics.append(
                TopicDescription(
                    name=t.name,
                    topic_id=t.topic_id or ZERO_UUID,
                    internal=bool(t.is_internal) or t.name in INTERNAL_TOPICS,
                    partitions=partitions,
                )
            )
        return ClusterMetadata(
            cluster_id=response.cluster_id,
            controller_id=response.controller_id,
            brokers=brokers,
            topics=tuple(topics),
            topic_errors=errors,
        )

    def _describe_topics_with_metadata(
        self, conn: Connection, names: list[str]
    ) -> dict[str, TopicDescription | ApiError]:
        meta = self._send_metadata(conn, names)
        found = {t.name: t for t in meta.topics}
        out: dict[str, TopicDescription | ApiError] = {}
        for name in names:
            if name in found:
                out[name] = found[name]
            else:
                out[name] = meta.topic_errors.get(
                    name, ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} not found.")
                )
        return out

    def _describe_topic_partitions(
        self, conn: Connection, names: list[str], partition_limit: int
    ) -> dict[str, TopicDescription | ApiError] | None:
        """Pages through DescribeTopicPartitions; None if the broker refused it as unsupported."""
        api = dtp_msg.API
        cls: Any = dtp_msg.REQUEST.cls
        heads: dict[str, TopicDescription] = {}
        partitions: dict[str, list[PartitionInfo]] = {}
        errors: dict[str, ApiError] = {}
        cursor: tuple[str, int] | None = None
        while True:
            body = cls(
                topics=[cls.TopicRequest(name=n) for n in names],
                response_partition_limit=partition_limit,
                cursor=None
                if cursor is None
                else cls.Cursor(topic_name=cursor[0], partition_index=cursor[1]),
            )
            response = conn.send(api, 0, body)
            for t in response.topics:
                if t.name is None:
                    continue
                if t.error_code != ErrorCode.NONE:
                    errors[t.name] = ApiError(t.error_code)
                    continue
                if t.name not in heads:
                    heads[t.name] = TopicDescription(
                        t.name, t.topic_id or ZERO_UUID, bool(t.is_internal) or t.name in INTERNAL_TOPICS, ()
                    )
                partitions.setdefault(t.name, []).extend(
                    _partition_info(p, with_elr=True) for p in t.partitions
                )
            if errors and all(e.code == ErrorCode.UNSUPPORTED_VERSION for e in errors.values()) and not heads:
                return None
            nxt = response.next_cursor
            if nxt is None:
                break
            following = (nxt.topic_name, nxt.partition_index)
            if cursor is not None and following <= cursor:
                raise RemoteProtocolError(
                    f"{conn.address} answered DescribeTopicPartitions with a cursor that does not advance "
                    f"({cursor[0]}:{cursor[1]} -> {following[0]}:{following[1]})"
                )
            cursor = following
        out: dict[str, TopicDescription | ApiError] = {}
        for name in names:
            if name in heads:
                head = heads[name]
                unique = {p.partition: p for p in partitions.get(name, [])}
                out[name] = TopicDescription(
                    head.name, head.topic_id, head.internal, tuple(unique[i] for i in sorted(unique))
                )
            elif name in errors:
                out[name] = errors[name]
            else:
                out[name] = ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} not found.")
        return out

    def _send_describe_configs(
        self, conn: Connection, resources: list[ConfigResource], include_synonyms: bool
    ) -> dict[ConfigResource, list[ConfigEntry] | ApiError]:
        api = describe_configs_msg.API
        version = _version_or_raise(conn, api)
        cls: Any = describe_configs_msg.REQUEST.cls
        body = cls(
            resources=[
                cls.DescribeConfigsResource(
                    resource_type=int(r.type), resource_name=r.name, configuration_keys=None
                )
                for r in resources
            ]
        )
        if version >= 1:
            body.include_synonyms = include_synonyms
        response = conn.send(api, version, body)
        got: dict[ConfigResource, list[ConfigEntry] | ApiError] = {}
        for result in response.results:
            if result.resource_type not in _RESOURCE_TYPES:
                continue
            key = ConfigResource(ConfigResourceType(result.resource_type), result.resource_name)
            if result.error_code != ErrorCode.NONE:
                got[key] = ApiError(result.error_code, result.error_message)
                continue
            got[key] = [_config_entry(c, version) for c in result.configs]
        for r in resources:
            if r not in got:
                got[r] = ApiError(
                    ErrorCode.UNKNOWN_SERVER_ERROR,
                    f"The broker's DescribeConfigs answer did not include {r.name!r}",
                )
        return got

    # ------------------------------------------------------------------------------------------
    # Choosing a node

    def _connection(self, address: Address) -> Connection:
        return self._pool.get(address)

    def _drop(self, address: Address) -> None:
        self._pool.drop(address)

    def _any_broker(self) -> Connection:
        """An open connection, else the first bootstrap address or known broker that accepts one."""
        known = [] if self._metadata is None else [b.address for b in self._metadata.brokers]
        return self._pool.first([*self._bootstrap, *known])

    def _metadata_or_refresh(self) -> ClusterMetadata:
        if self._metadata is None:
            conn = self._any_broker()
            try:
                self._refresh_metadata(conn)
            except (RetriableError, RemoteProtocolError) as e:
                self._drop(conn.address)
                raise Unreachable({conn.address: str(e)}) from None
        assert self._metadata is not None
        return self._metadata

    def _node_connector(self, node_id: int) -> Callable[[], Connection]:
        def connect() -> Connection:
            meta = self._metadata_or_refresh()
            node = meta.broker(node_id)
            if node is None:
                live = ", ".join(str(b.node_id) for b in meta.brokers) or "none"
                raise AdminError(f"broker {node_id} is not a live broker (live brokers: {live})")
            return self._connection(node.address)

        return connect

    def _controller(self) -> Connection:
        """The broker Metadata names as ControllerId (it forwards to the active controller)."""
        meta = self._metadata_or_refresh()
        node = meta.broker(meta.controller_id) if meta.controller_id >= 0 else None
        if node is None:
            asked = self._pool.any_address() or self._bootstrap[0]
            self._metadata = None  # ask again next time
            raise Unreachable(
                {asked: f"Metadata names no live controller (ControllerId {meta.controller_id})"}
            )
        return self._connection(node.address)

    # ------------------------------------------------------------------------------------------
    # Retry loops

    def _call(
        self, what: str, connect: Callable[[], Connection], attempt_fn: Callable[[Connection], _Retry | K]
    ) -> K:
        """Runs ``attempt_fn`` on a connection from ``connect`` until it returns a result (not a
        ``_Retry``) or the deadline passes; transport failures drop the connection and retry."""
        outcomes: dict[Address, str] = {}

        def one_round(_deadline: float) -> K | None:
            try:
                conn = connect()
            except Unreachable as e:
                outcomes.update(e.failures)
                return None
            try:
                result = attempt_fn(conn)
            except (RetriableError, RemoteProtocolError) as e:
                self._drop(conn.address)
                self._metadata = None
                outcomes[conn.address] = str(e)
                return None
            if isinstance(result, _Retry):
                outcomes[result.address] = result.reason
                self._metadata = None
                return None
            return result

        return self._retry(what, outcomes, one_round)

    def _batch(
        self,
        what: str,
        keys: list[K],
        connect: Callable[[], Connection],
        send: Callable[[Connection, list[K]], dict[K, ApiError | None]],
    ) -> dict[K, ApiError | None]:
        """A request over ``keys`` whose items may each answer a retriable code: items answered
        with one of ``RETRY_CODES`` are resent (to a freshly looked-up controller) until the
        deadline; the others keep their first answer."""
        results: dict[K, ApiError | None] = {}
        pending = list(keys)

        def attempt(conn: Connection) -> _Retry | dict[K, ApiError | None]:
            got = send(conn, pending)
            retry = [k for k in pending if (err := got.get(k)) is not None and err.code in RETRY_CODES]
            for k in pending:
                if k not in retry:
                    results[k] = got[k]
            if retry:
                codes = sorted({error_name(e.code) for k in retry if (e := got[k]) is not None})
                pending[:] = retry
                return _Retry(conn.address, f"{what} answered {', '.join(codes)}")
            return {k: results[k] for k in keys}

        if not keys:
            return {}
        return self._call(what, connect, attempt)


# ----------------------------------------------------------------------------------------------
# Helpers

_RESOURCE_TYPES = frozenset(int(t) for t in ConfigResourceType)


def _version_or_raise(conn: Connection, api: Api) -> int:
    """``conn.version_for(api)``, or ``AdminError`` naming both sides' ranges."""
    version = conn.version_for(api)
    if version is None:
        served = conn.versions.get(api.key)
        detail = "does not serve it" if served is None else f"serves v{served[0]}-{served[1]}"
        raise AdminError(
            f"{conn.address} cannot take {api.name} ({detail}; this client speaks {api.versions})"
        )
    return version


def _partition_info(p: Any, *, with_elr: bool) -> PartitionInfo:
    """A partition of a Metadata answer (no ELR: ``with_elr`` False) or of DescribeTopicPartitions."""
    elr = last_known_elr = None
    if with_elr:
        elr = None if p.eligible_leader_replicas is None else tuple(p.eligible_leader_replicas)
        last_known_elr = None if p.last_known_elr is None else tuple(p.last_known_elr)
    return PartitionInfo(
        partition=p.partition_index,
        leader=p.leader_id,
        leader_epoch=p.leader_epoch,
        replicas=tuple(p.replica_nodes),
        isr=tuple(p.isr_nodes),
        elr=elr,
        last_known_elr=last_known_elr,
        offline_replicas=tuple(p.offline_replicas or ()),
        error_code=p.error_code,
    )


def _acl_creation(cls: Any, binding: AclBinding) -> Any:
    p, e = binding.pattern, binding.entry
    return cls.AclCreation(
        resource_type=int(p.resource_type),
        resource_name=p.name,
        resource_pattern_type=int(p.pattern_type),
        principal=e.principal,
        host=e.host,
        operation=int(e.operation),
        permission_type=int(e.permission_type),
    )


def _filter_fields(f: AclBindingFilter) -> dict[str, Any]:
    """The fields of a DescribeAcls request or a DeleteAcls filter row."""
    return {
        "resource_type_filter": int(f.resource_type),
        "resource_name_filter": f.name,
        "pattern_type_filter": int(f.pattern_type),
        "principal_filter": f.principal,
        "host_filter": f.host,
        "operation": int(f.operation),
        "permission_type": int(f.permission_type),
    }


def _error_or_none(code: int, message: str | None) -> ApiError | None:
    return None if code == ErrorCode.NONE else ApiError(code, message)


def _complete(got: Mapping[K, ApiError | None], pending: Sequence[K], what: str) -> dict[K, ApiError | None]:
    """``got`` restricted to ``pending``; an item the broker left out becomes an error."""
    out: dict[K, ApiError | None] = {}
    for key in pending:
        if key in got:
            out[key] = got[key]
        else:
            out[key] = ApiError(
                ErrorCode.UNKNOWN_SERVER_ERROR, f"The {what} response did not contain a result for {key}"
            )
    return out


def _config_source(value: Any, version: int, is_default: bool) -> ConfigSource:
    if version == 0:
        return ConfigSource.DEFAULT_CONFIG if is_default else ConfigSource.UNKNOWN
    try:
        return ConfigSource(value)
    except ValueError:
        return ConfigSource.UNKNOWN


def _config_entry(c: Any, version: int) -> ConfigEntry:
    synonyms = tuple(
        ConfigSynonym(s.name, s.value, _config_source(s.source, version, False)) for s in (c.synonyms or ())
    )
    return ConfigEntry(
        name=c.name,
        value=c.value,
        source=_config_source(c.config_source, version, bool(getattr(c, "is_default", False))),
        sensitive=bool(c.is_sensitive),
        read_only=bool(c.read_only),
        synonyms=synonyms,
    )


def is_internal_topic(name: str) -> bool:
    """Kafka's ``Topic.isInternal``."""
    return name in INTERNAL_TOPICS


__all__ = [
    "INTERNAL_TOPICS",
    "AlterConfigOp",
    "ApiError",
    "ApiFailure",
    "BrokerAdminClient",
    "BrokerNode",
    "ClusterMetadata",
    "ConfigEntry",
    "ConfigOperation",
    "ConfigResource",
    "ConfigSource",
    "ConfigSynonym",
    "ElectionType",
    "LogDirInfo",
    "NewPartitions",
    "NewTopic",
    "PartitionInfo",
    "ReplicaLogInfo",
    "TopicDescription",
    "is_internal_topic",
]
