"""``build_node``: the one place that assembles a ``Node`` from its configuration, storage, time and
randomness. The server (``kraft.server``) and the simulator (``kraft.sim``) both call it, so the
simulator runs exactly the parts a process runs.

Sans-IO like the parts it builds: storage comes in as objects (a ``ReplicatedLog`` and an
``ElectionStore``: files in a process, memory in the simulator), time as ``now_ms`` (read once, for
the raft core's first deadlines), randomness as ``random.Random``s.
"""

from __future__ import annotations

import functools
import itertools
import random
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field

from kraft.broker.apis import DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT, BrokerApiContext
from kraft.broker.broker import Broker
from kraft.broker.client_apis import ClientApis
from kraft.broker.isr import IsrManager
from kraft.broker.lifecycle import BrokerLifecycle, LifecycleConfig
from kraft.broker.metadata_listener import BrokerMetadataListener
from kraft.broker.metrics import BrokerMetrics
from kraft.broker.producer_ids import ProducerIdManager
from kraft.broker.replica_manager import LogProvider, ReplicaConfig, ReplicaManager
from kraft.common.errors import KraftError
from kraft.controller.quorum_controller import ControllerConfig, QuorumController
from kraft.metadata.configs import ConfigResolver
from kraft.metadata.image import MetadataImage
from kraft.metadata.records import ApiMessageAndVersion
from kraft.node.node import Node
from kraft.node.quorum_apis import QuorumApis, quorum_endpoints
from kraft.raft.config import QuorumConfig
from kraft.raft.listener import CommittedBatchCache
from kraft.raft.log import ReplicatedLog
from kraft.raft.node import RaftNode
from kraft.raft.store import ElectionStore
from kraft.raft.types import Endpoint
from kraft.security.authorizer import AuthorizerConfig
from kraft.security.request_authz import RequestAuthorizer

# Encodes an image's snapshot records off the core's thread (the server's pool); None: inline.
SnapshotEncoder = Callable[[MetadataImage], Future[list[bytes]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerConfig:
    """The broker part's settings (Kafka property names in comments)."""

    lifecycle: LifecycleConfig
    client_listeners: tuple[str, ...]  # the broker listeners' names (listeners)
    static_configs: Mapping[str, str] = field(default_factory=dict)  # this node's properties
    request_timeout_ms: int = 30_000  # request.timeout.ms: forwarded requests' default deadline
    max_request_partition_size_limit: int = DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT
    snapshot_max_bytes: int = 20 * 1024 * 1024  # metadata.log.max.record.bytes.between.snapshots
    snapshot_interval_ms: int = 3_600_000  # metadata.log.max.snapshot.interval.ms
    replication: ReplicaConfig = field(default_factory=ReplicaConfig)  # replica.* properties


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeConfig:
    """What ``build_node`` needs to know.

    Attributes:
        local_endpoints: this node's advertised raft endpoints (a controller's; empty on a broker).
        raft_listener_name: the controller listener the raft RPCs use (endpoints are reported on it).
        controller: the quorum controller's settings, or None for no quorum controller (a broker, or
            the test raft server, whose log holds test records nobody may replay as metadata).
        bootstrap_features: the features ``kraft storage format`` chose (None: the defaults).
        bootstrap_records: the other records of the bootstrap metadata (``--add-scram``'s SCRAM
            credentials), written with the features by the first active controller.
        quorum_apis: whether the node serves a controller listener (Metadata, DescribeCluster,
            DescribeQuorum and voter changes about the quorum).
        broker: the broker part's settings, or None.
    """

    node_id: int | None  # None: a raft-only observer without an id (replica id -1)
    cluster_id: str
    directory_id: uuid.UUID
    quorum: QuorumConfig
    local_endpoints: tuple[Endpoint, ...] = ()
    raft_listener_name: str = "CONTROLLER"
    controller: ControllerConfig | None = None
    bootstrap_features: Mapping[str, int] | None = None
    bootstrap_records: tuple[ApiMessageAndVersion, ...] = ()
    quorum_apis: bool = False
    broker: BrokerConfig | None = None


@dataclass(frozen=True, slots=True)
class NodeStorage:
    """The node's durable state: the metadata log, the election state (quorum-state) and, on a
    broker that holds data, its partition logs (None: the broker serves metadata only, as the
    simulator's controller worlds build it)."""

    log: ReplicatedLog
    store: ElectionStore
    partition_logs: LogProvider | None = None


def build_node(
    config: NodeConfig,
    storage: NodeStorage,
    now_ms: int,
    rng: random.Random,
    *,
    controller_rng: random.Random | None = None,
    snapshot_encoder: SnapshotEncoder | None = None,
    batch_cache: CommittedBatchCache | None = None,
) -> Node:
    """Assemble a node.

    Args:
        rng: the raft core's randomness.
        controller_rng: the quorum controller's (topic ids, replica placement); default: seeded from
            ``rng``. The simulator passes its own so that each stream depends on the seed alone.
        batch_cache: decoded committed batches shared by nodes in one process (the simulator).
    """
    if config.node_id is None and (config.controller is not None or config.broker is not None):
        raise KraftError("a controller or a broker needs a node.id")
    raft = RaftNode(
        node_id=config.node_id,
        directory_id=config.directory_id,
        cluster_id=config.cluster_id,
        config=config.quorum,
        log=storage.log,
        store=storage.store,
        rng=rng,
        now_ms=now_ms,
        local_endpoints=config.local_endpoints,
        batch_cache=batch_cache,
    )
    controller = None
    if config.controller is not None:
        assert config.node_id is not None
        controller = QuorumController(
            node_id=config.node_id,
            cluster_id=config.cluster_id,
            raft=raft,
            rng=controller_rng if controller_rng is not None else random.Random(rng.getrandbits(64)),
            config=config.controller,
            bootstrap_features=None if config.bootstrap_features is None else dict(config.bootstrap_features),
            bootstrap_records=config.bootstrap_records,
            snapshot_encoder=snapshot_encoder,
        )
    quorum_apis = None
    if config.quorum_apis:
        local = next(iter(config.local_endpoints), Endpoint(config.raft_listener_name, "", 0))
        quorum_apis = QuorumApis(
            raft=raft,
            cluster_id=config.cluster_id,
            listener_name=config.raft_listener_name,
            local_endpoint=local,
        )
    broker = None
    if config.broker is not None:
        broker = _build_broker(
            config, config.broker, raft, controller, now_ms, snapshot_encoder, storage.partition_logs
        )
    return Node(raft=raft, controller=controller, quorum_apis=quorum_apis, broker=broker)


def _build_broker(
    config: NodeConfig,
    settings: BrokerConfig,
    raft: RaftNode,
    controller: QuorumController | None,
    now_ms: int,
    snapshot_encoder: SnapshotEncoder | None,
    partition_logs: LogProvider | None,
) -> Broker:
    node_id = config.node_id
    assert node_id is not None
    ids = itertools.count(1)
    next_id = ids.__next__
    lifecycle = BrokerLifecycle(settings.lifecycle, next_correlation_id=next_id)
    lifecycle.start(now_ms)
    metadata = None
    if controller is None:
        metadata = BrokerMetadataListener(
            node_id=node_id,
            raft=raft,
            snapshot_max_bytes=settings.snapshot_max_bytes,
            snapshot_interval_ms=settings.snapshot_interval_ms,
            snapshot_encoder=snapshot_encoder,
        )
        raft.register(metadata)
        loader = metadata.loader
    else:
        loader = controller.loader
    controllers = tuple(
        (i, e.host, e.port, None) for i, e in quorum_endpoints(raft, config.raft_listener_name).items()
    )
    contexts = {
        name: BrokerApiContext(
            node_id=node_id,
            cluster_id=config.cluster_id,
            listener_name=name,
            static_configs=settings.static_configs,
            controllers=controllers,
            max_request_partition_size_limit=settings.max_request_partition_size_limit,
        )
        for name in settings.client_listeners
    }
    authorizer = AuthorizerConfig.from_properties(settings.static_configs)
    client_apis = ClientApis(
        node_id=node_id,
        contexts=contexts,
        request_timeout_ms=settings.request_timeout_ms,
        next_correlation_id=next_id,
        acls_enabled=authorizer is not None,
    )
    resolver = ConfigResolver(dict(settings.static_configs), node_id)
    replicas = None
    if partition_logs is not None:
        replicas = ReplicaManager(
            node_id=node_id,
            logs=partition_logs,
            resolver=resolver,
            config=settings.replication,
            next_correlation_id=next_id,
            # Fetch session ids (KIP-227): a stream of its own, from this broker's start, so ids
            # differ across restarts (a client's old id is not somebody else's new session) while
            # the simulator stays deterministic; the raft core's ``rng`` is left untouched.
            new_session_id=functools.partial(
                random.Random(f"fetch-sessions:{config.cluster_id}:{node_id}:{now_ms}").getrandbits, 31
            ),
        )
    isr = IsrManager(
        node_id,
        request_timeout_ms=settings.lifecycle.request_timeout_ms,
        retry_backoff_ms=settings.lifecycle.retry_backoff_ms,
        next_correlation_id=next_id,
        replicas=replicas,
    )
    producer_ids = ProducerIdManager(
        node_id,
        next_correlation_id=next_id,
        request_timeout_ms=settings.lifecycle.request_timeout_ms,
    )
    return Broker(
        node_id=node_id,
        lifecycle=lifecycle,
        loader=loader,
        metadata=metadata,
        client_apis=client_apis,
        isr=isr,
        producer_ids=producer_ids,
        metrics=BrokerMetrics(resolver),
        raft_listener_name=config.raft_listener_name,
        replicas=replicas,
        authz=None if authorizer is None else RequestAuthorizer(authorizer),
    )
