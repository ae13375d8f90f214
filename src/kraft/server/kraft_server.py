"""One server process (controller, broker or both): config -> storage + core + network + clock,
with a clean stop.

``KraftServer`` is the programmatic entry point (``kraft server-start`` and the tools use it):

    server = await KraftServer.start(config)      # binds listeners, starts polling the core
    server.listener_ports                               # {"CONTROLLER": 9093}
    server.view                                         # NodeView: leader, epoch, role, metrics
    await server.submit(lambda node, now_ms: node.raft.schedule_append(epoch, [b"x"]))
    exit_code = await server.serve_until_stopped()      # returns when stop() is called or fatal
    await server.stop()                                 # graceful: resign, EndQuorumEpoch, flush

``run_server(config)`` does all of that on a fresh event loop (uvloop when installed) with SIGTERM
and SIGINT wired to a graceful stop, and returns the process exit code.

Startup checks, in order, each a ``ConfigError`` that says what to do: the metadata log directory
is formatted (``meta.properties`` exists; else run ``kraft storage format``) and its ``node.id``
matches the configuration; every TLS listener's and outbound connection's PEM files load (the key
matches its certificate).

Security: ``sasl_mechanisms`` (mechanism name -> ``SaslServerFactory``) is consulted by every SASL
listener at each handshake, beside the PLAIN users of its JAAS config; SCRAM-SHA-256/512 register
there when a listener enables them, their credentials read from this node's committed image.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import signal
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from kraft.broker.lifecycle import LifecycleConfig, Listener
from kraft.broker.replica_manager import ReplicaConfig
from kraft.common.errors import ConfigError, StorageError
from kraft.common.uuids import uuid_to_base64
from kraft.controller.features import SUPPORTED_FEATURES, finalized_features
from kraft.metadata.image import MetadataImage
from kraft.metadata.image_snapshot import snapshot_records_bytes
from kraft.net.channel import ChannelError, PeerAddress, PeerChannel
from kraft.net.codecs import CODECS
from kraft.net.limits import ConnectionLimiter
from kraft.net.server import FeatureInfo, KafkaServer, ListenerAuth
from kraft.net.tls import KeystoreReloader
from kraft.node.build import BrokerConfig, NodeConfig, NodeStorage, build_node
from kraft.node.listeners import BROKER_LISTENER_APIS, CONTROLLER_LISTENER_APIS
from kraft.node.node import Node, NodeEnvelope
from kraft.protocol.envelope import ApiRequest, ClientEnvelope, ControllerEnvelope
from kraft.raft.messages import Envelope
from kraft.raft.types import Endpoint
from kraft.security.sasl import SaslServerFactory
from kraft.security.scram import SCRAM_MECHANISM_NAMES, scram_server_factory
from kraft.server.config import ServerConfig
from kraft.server.driver import LoopDriver, NodeView, RaftDriver, WallClock
from kraft.server.gateway import Gateway, ListenerHandler
from kraft.server.listener_security import build_client_security, build_listener_auth
from kraft.storage.clean_shutdown import take_previous_broker_epoch, write_clean_shutdown
from kraft.storage.meta_properties import META_PROPERTIES_FILE, MetaProperties
from kraft.storage.meta_properties import read_meta_properties as storage_read_meta_properties

log = logging.getLogger("kraft.server")

T = TypeVar("T")

DEFAULT_SHUTDOWN_TIMEOUT_MS = 5000


def read_meta_properties(
    log_dir: Path, expected_node_id: int, *, prop: str = "metadata.log.dir"
) -> MetaProperties:
    """Read ``<log_dir>/meta.properties`` and check it against the configuration.

    Raises:
        ConfigError: not formatted, unreadable, or formatted for another node (the message names
            the property to look at and what to run).
    """
    try:
        meta = storage_read_meta_properties(log_dir)
    except StorageError as e:
        raise ConfigError(f"{prop}: {e}") from None
    if meta is None:
        raise ConfigError(
            f"{prop}: {log_dir} is not formatted ({log_dir / META_PROPERTIES_FILE} is missing); "
            "run `kraft storage format --config <server.properties> --cluster-id <id>` first"
        )
    if meta.node_id != expected_node_id:
        raise ConfigError(
            f"node.id: the configuration says {expected_node_id} but {log_dir / META_PROPERTIES_FILE} was "
            f"formatted for node.id {meta.node_id}; use the right log directory or re-format it"
        )
    return meta


class KraftServer:
    """A running node (controller, broker or both). Build with ``await KraftServer.start(config)``."""

    def __init__(self, config: ServerConfig, *, log_prefix: str | None = None) -> None:
        self.config = config
        self.prefix = log_prefix if log_prefix is not None else f"[node {config.node_id}] "
        self.cluster_id = ""
        self.listener_ports: dict[str, int] = {}
        self.exit_code: int | None = None
        self.driver: RaftDriver | LoopDriver
        self.node: Node | None = None
        self._stopped = asyncio.Event()
        self._stopping = False
        self._gateway: Gateway | None = None
        self._kafka_servers: list[KafkaServer] = []
        self._channel: PeerChannel | None = None
        self._broker_channel: PeerChannel | None = None  # to other brokers (the replica fetcher)
        self._partition_logs: Any = None  # the broker's LogManager (owned by the raft thread)
        # inter.broker.listener.name, else the first broker listener (Kafka: the one whose
        # security protocol is security.inter.broker.protocol, PLAINTEXT).
        self._inter_broker_listener = config.inter_broker_listener
        # Extra SASL mechanisms (name -> factory) every SASL listener serves when enabled (SCRAM).
        self.sasl_mechanisms: dict[str, SaslServerFactory] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._metrics_server: Any = None
        self._log: Any = None
        self._tasks: set[asyncio.Task[Any]] = set()
        # Snapshots of the metadata image are encoded here, off the raft thread (snapshot_scheduler).
        self._snapshot_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kraft-snapshot")
        # Voter id -> endpoint on the raft listener: controller.quorum.voters, or (KIP-853) the
        # core's voter set, replaced on the event loop whenever the core's set changes.
        self.voter_endpoints: dict[int, Endpoint] = dict(config.voters)
        self._voter_set: Any = None

    def image(self) -> MetadataImage:
        """This node's committed metadata image (read from any thread: immutable, swapped by
        reference)."""
        node = self.node
        if node is not None and node.broker is not None:
            return node.broker.image
        if node is not None and node.controller is not None:
            return node.controller.image
        return MetadataImage.EMPTY

    def _feature_info(self) -> FeatureInfo:
        """ApiVersions v3+ features from the committed image, plus kraft.version from the raft log."""
        driver = getattr(self, "driver", None)
        kraft_version = 0 if driver is None else driver.view.kraft_version
        node = self.node
        if node is None or (node.controller is None and node.broker is None):
            return FeatureInfo(SUPPORTED_FEATURES, finalized_features(MetadataImage.EMPTY, kraft_version), -1)
        image = self.image()
        return FeatureInfo(
            SUPPORTED_FEATURES, finalized_features(image, kraft_version), image.provenance.last_offset
        )

    @property
    def view(self) -> NodeView:
        return self.driver.view

    @classmethod
    async def start(
        cls,
        config: ServerConfig,
        *,
        with_controller: bool = True,
        log_prefix: str | None = None,
    ) -> KraftServer:
        """Check the log directories, open storage, bind the listeners and start the core's driver.

        ``with_controller=False`` runs the bare raft core with no quorum controller on it (Kafka's
        TestRaftServer): its log holds test records, not metadata, so nothing may replay them.
        """
        server = cls(config, log_prefix=log_prefix)
        try:
            await server._start(with_controller)
        except BaseException:
            await server._close_resources()
            raise
        return server

    async def _start(self, with_controller: bool) -> None:
        from kraft.storage.log_dir import metadata_partition_dir
        from kraft.storage.metadata_log import MetadataLog
        from kraft.storage.quorum_state_file import QUORUM_STATE_FILE, FileQuorumStateStore

        config = self.config
        meta = read_meta_properties(config.metadata_log_dir, config.node_id)
        self.cluster_id = meta.cluster_id
        loop = asyncio.get_running_loop()
        raft_name = config.raft_listener_name

        # Bind first: with port 0 the advertised endpoints are only known after binding.
        # A request that arrives between bind and the node being wired waits for it (it cannot be
        # answered yet, and failing it would only make the peer reconnect).
        handlers: dict[str, ListenerHandler] = {}
        ready = asyncio.Event()

        class _Handler:
            def __init__(self, kind: str) -> None:
                self.kind = kind

            async def handle(self, request: Any) -> Any:
                if not ready.is_set():
                    await ready.wait()
                return await handlers[self.kind].handle(request)

        # SCRAM logins look their credentials up in this node's committed image at each login, so
        # a credential altered through the metadata log applies from the next login on.
        scram_names = {
            m for security in config.listener_security.values() for m in security.enabled_mechanisms
        } & set(SCRAM_MECHANISM_NAMES)
        if scram_names:
            scram = scram_server_factory(self.image, sorted(scram_names), random.SystemRandom())
            for name in scram_names:
                self.sasl_mechanisms.setdefault(name, scram)
        # TLS contexts and SASL factories first: a missing file or a key that does not match its
        # certificate stops the start-up with the property to fix, before anything is bound.
        auth: dict[str, ListenerAuth] = {
            name: build_listener_auth(security, self.sasl_mechanisms)
            for name, security in config.listener_security.items()
        }
        outbound = {name: build_client_security(o) for name, o in config.outbound_security.items()}
        self._watch_keystores(config, auth)
        limiter = ConnectionLimiter.of(
            max_connections=config.max_connections,
            max_per_ip=config.max_connections_per_ip,
            per_ip_overrides=config.max_connections_per_ip_overrides,
            # Kafka never refuses the inter-broker listener for max.connections; nor do we the quorum's.
            protected=(*config.controller_listener_names, config.inter_broker_listener),
        )
        common = {
            "max_request_bytes": config.socket_request_max_bytes,
            "max_idle_ms": config.connections_max_idle_ms,
            "failed_authentication_delay_ms": config.failed_authentication_delay_ms,
            "log_prefix": self.prefix,
            "features": self._feature_info,
            "limiter": limiter,
        }
        if config.controller_listeners:
            apis = dict(CONTROLLER_LISTENER_APIS)
            server = KafkaServer(apis=apis, handler=_Handler("controller"), **common)  # type: ignore[arg-type]
            self._kafka_servers.append(server)
            for listener in config.controller_listeners:
                self.listener_ports[listener.name] = await server.listen(
                    listener.name, listener.host, listener.port, auth=auth.get(listener.name, ListenerAuth())
                )
        if config.is_broker:
            server = KafkaServer(apis=dict(BROKER_LISTENER_APIS), handler=_Handler("broker"), **common)  # type: ignore[arg-type]
            self._kafka_servers.append(server)
            for listener in config.broker_listeners:
                self.listener_ports[listener.name] = await server.listen(
                    listener.name, listener.host, listener.port, auth=auth.get(listener.name, ListenerAuth())
                )
        if config.is_controller:
            raft_listener = config.raft_listener
            advertised = config.voters.get(config.node_id) or Endpoint(
                raft_name, raft_listener.host, self.listener_ports[raft_name]
            )
            local_endpoints: tuple[Endpoint, ...] = (advertised,)
        else:
            local_endpoints = ()  # a broker binds no controller listener

        directory_ids = {}
        if config.is_broker:
            directory_ids = await loop.run_in_executor(None, self._check_log_dirs, meta)
            if with_controller:
                from kraft.storage.log_manager import LogManager
                from kraft.storage.segment_index import IndexConfig

                # log.segment.bytes (Kafka's default 1 GiB), not the metadata log's own setting: the
                # size a log opens with; the replica manager then applies its topic's segment.bytes
                # and segment.ms (which fall back to log.segment.bytes and log.roll.ms).
                segment_bytes = int(config.properties.get("log.segment.bytes") or 1 << 30)
                index = IndexConfig(
                    interval_bytes=config.log_index_interval_bytes,
                    max_bytes=config.log_index_size_max_bytes,
                )
                open_files = config.log_max_open_segment_files
                if open_files < 0:
                    from kraft.server.process_limits import default_max_open_segment_files

                    open_files = default_max_open_segment_files()
                self._partition_logs = await loop.run_in_executor(
                    None,
                    lambda: LogManager(
                        config.log_dirs,
                        segment_bytes=segment_bytes,
                        index=index,
                        background_checkpoints=True,
                        max_open_segment_files=open_files,
                    ),
                )
        partition_dir = metadata_partition_dir(config.metadata_log_dir)
        self._log = await loop.run_in_executor(
            None, lambda: MetadataLog(partition_dir, segment_bytes=config.segment_bytes)
        )
        # Static voters: quorum-state v0 listing them; a dynamic quorum (KIP-853, voters in the
        # log) writes v1, with the voted directory id.
        store = FileQuorumStateStore(
            partition_dir / QUORUM_STATE_FILE,
            version=0 if config.voters else 1,
            voters=sorted(config.voters) or None,
        )
        bootstrap = None
        bootstrap_records: tuple[Any, ...] = ()
        if with_controller and config.is_controller:
            from kraft.storage.bootstrap_file import read_bootstrap_checkpoint

            # The features `kraft storage format` chose; None: the controller's defaults.
            checkpoint = await loop.run_in_executor(None, read_bootstrap_checkpoint, config.metadata_log_dir)
            bootstrap = None if checkpoint is None else dict(checkpoint.features)
            bootstrap_records = () if checkpoint is None else checkpoint.scram_records
        broker = None
        if with_controller and config.is_broker:
            broker = await self._broker_config(meta, directory_ids)
        clock = WallClock()
        node = self.node = build_node(
            NodeConfig(
                node_id=config.node_id,
                cluster_id=meta.cluster_id,
                directory_id=meta.directory_id or uuid.UUID(int=0),
                quorum=config.quorum,
                local_endpoints=local_endpoints,
                raft_listener_name=raft_name,
                controller=config.controller if with_controller and config.is_controller else None,
                bootstrap_features=bootstrap,
                bootstrap_records=bootstrap_records,
                quorum_apis=bool(config.controller_listeners),
                broker=broker,
            ),
            NodeStorage(self._log, store, self._partition_logs),
            clock(),
            random.Random(),
            snapshot_encoder=self._encode_snapshot,
        )
        self._voter_set = node.raft.voter_set
        if not config.voters:
            self.voter_endpoints = self._endpoints_of(self._voter_set)
        driver_type = LoopDriver if config.raft_driver == "loop" else RaftDriver
        self.driver = driver_type(node, clock=clock, log_prefix=self.prefix)

        addresses: dict[int, PeerAddress] = {
            i: PeerAddress(e.host, e.port) for i, e in self.voter_endpoints.items() if i != config.node_id
        }
        for n, e in enumerate(config.bootstrap_servers):
            addresses[-2 - n] = PeerAddress(e.host, e.port)
        self._channel = PeerChannel(
            local_id=config.node_id,
            addresses=addresses,
            apis=dict(CONTROLLER_LISTENER_APIS),
            deliver=lambda env: self.driver.deliver([env]),
            listener_name=raft_name,
            cluster_id=meta.cluster_id,
            request_timeout_ms=config.quorum.request_timeout_ms,
            log_prefix=self.prefix,
            security=outbound.get(raft_name),
        )
        gateway = self._gateway = Gateway(
            deliver=lambda envelopes: self.driver.deliver(envelopes),
            node_id=config.node_id,
            cluster_id=meta.cluster_id,
            leader=lambda: self.driver.view.leader_and_epoch,
            raft_listener_name=raft_name,
            log_prefix=self.prefix,
        )
        if config.is_broker:
            # Followers fetch from leaders over the inter-broker listener (addresses from the image).
            self._broker_channel = PeerChannel(
                local_id=config.node_id,
                addresses={},
                apis=dict(BROKER_LISTENER_APIS),
                deliver=lambda env: self.driver.deliver([env]),
                listener_name=self._inter_broker_listener,
                cluster_id=meta.cluster_id,
                request_timeout_ms=config.broker_request_timeout_ms,
                log_prefix=self.prefix,
                security=outbound.get(self._inter_broker_listener),
            )
        handlers["controller"] = ListenerHandler(gateway, broker=False)
        handlers["broker"] = ListenerHandler(gateway, broker=True)
        ready.set()
        if config.metrics_port:
            from kraft.server.metrics import start_metrics_server

            self._metrics_server = start_metrics_server(
                lambda: self.driver.view, config.metrics_host, config.metrics_port, node_id=config.node_id
            )
        log.info(
            "%sstarting (%s): cluster id %s, directory id %s, voters %s, metadata log dir %s",
            self.prefix,
            ",".join(sorted(config.roles)),
            meta.cluster_id,
            # Kafka's form, as meta.properties and the tools print it.
            None if meta.directory_id is None else uuid_to_base64(meta.directory_id),
            ",".join(f"{i}@{e.host}:{e.port}" for i, e in sorted(self.voter_endpoints.items()))
            or "(bootstrap)",
            config.metadata_log_dir,
        )
        self._loop = loop
        self.driver.start(loop, on_outbound=self._on_outbound, on_fatal=self._on_fatal, on_view=self._on_view)

    def _check_log_dirs(self, meta: MetaProperties) -> dict[str, uuid.UUID]:
        """Every broker log dir is formatted for this cluster and node; returns their directory ids."""
        ids: dict[str, uuid.UUID] = {}
        for directory in self.config.log_dirs:
            other = read_meta_properties(directory, self.config.node_id, prop="log.dirs")
            if other.cluster_id != meta.cluster_id:
                raise ConfigError(
                    f"log.dirs: {directory} belongs to cluster {other.cluster_id}, but "
                    f"{self.config.metadata_log_dir} to cluster {meta.cluster_id}; re-format one of them"
                )
            if other.directory_id is None:
                raise ConfigError(f"log.dirs: {directory} has no directory.id; re-format it")
            ids[str(directory)] = other.directory_id
        return ids

    async def _broker_config(self, meta: MetaProperties, directory_ids: dict[str, uuid.UUID]) -> BrokerConfig:
        config = self.config
        loop = asyncio.get_running_loop()
        previous_epoch = await loop.run_in_executor(None, take_previous_broker_epoch, list(config.log_dirs))
        listeners = []
        for e in config.advertised_listeners:
            port = e.port or self.listener_ports[e.name]
            listeners.append(
                Listener(
                    name=e.name,
                    host=e.host or "127.0.0.1",
                    port=port,
                    security_protocol=config.security_protocols[e.name],
                )
            )
        lifecycle = LifecycleConfig(
            node_id=config.node_id,
            cluster_id=meta.cluster_id,
            incarnation_id=uuid.uuid4(),
            listeners=tuple(listeners),
            supported_features=dict(SUPPORTED_FEATURES),
            rack=config.rack,
            log_dirs=tuple(directory_ids.values()),
            previous_broker_epoch=previous_epoch,
            heartbeat_interval_ms=config.controller.heartbeat_interval_ms,
            request_timeout_ms=config.broker_request_timeout_ms,
            registration_timeout_ms=config.registration_timeout_ms,
        )
        log.info(
            "%sbroker incarnation %s, previous broker epoch %d (%s), listeners %s",
            self.prefix,
            lifecycle.incarnation_id,
            previous_epoch,
            "clean shutdown" if previous_epoch >= 0 else "no clean shutdown recorded",
            ", ".join(f"{x.name}://{x.host}:{x.port}" for x in listeners),
        )
        return BrokerConfig(
            lifecycle=lifecycle,
            client_listeners=tuple(e.name for e in config.broker_listeners),
            static_configs=config.properties,
            request_timeout_ms=config.broker_request_timeout_ms,
            max_request_partition_size_limit=config.max_request_partition_size_limit,
            snapshot_max_bytes=config.controller.snapshot_max_bytes,
            snapshot_interval_ms=config.controller.snapshot_interval_ms,
            replication=replica_config(config.properties, self._inter_broker_listener),
        )

    # ------------------------------------------------------------------------------------ events

    def _on_outbound(self, envelopes: list[NodeEnvelope]) -> None:
        gateway = self._gateway
        for envelope in envelopes:
            match envelope:
                case Envelope() if envelope.is_request:
                    if self._channel is not None and not self._stopped.is_set():
                        self._channel.send(envelope)
                case ControllerEnvelope() if envelope.is_request:
                    self._send_to_controller(envelope)
                case ClientEnvelope() if envelope.is_request:
                    self._send_to_broker(envelope)
                case Envelope() | ControllerEnvelope() | ClientEnvelope():
                    if gateway is not None:
                        gateway.complete(envelope)

    def _send_to_controller(self, envelope: ControllerEnvelope) -> None:
        """A request to another node's controller side (a broker's lifecycle, AlterPartition and
        forwarded requests, a forwarded DescribeQuorum): sent on the peer's admin connection; the
        answer (a ``None`` body when the request failed) goes back to the node."""
        channel = self._channel
        request = envelope.body
        assert isinstance(request, ApiRequest)
        if channel is None or self._stopped.is_set():
            return
        api = request.api
        codec = CODECS.get(api.key)

        def encode(version: int) -> Any:
            return request.body if codec is None else codec.encode_request(request.body, version)

        async def call() -> None:
            body: Any
            try:
                version, body = await channel.call(
                    envelope.destination, api, encode, version=request.version, timeout_ms=envelope.timeout_ms
                )
                if codec is not None:
                    body = codec.decode_response(body, version, self.config.raft_listener_name)
            except ChannelError as e:
                log.debug("%s%s to controller %d failed: %s", self.prefix, api.name, envelope.destination, e)
                body = None
            self.driver.deliver([envelope.reply(body)])

        task = asyncio.get_running_loop().create_task(call())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _send_to_broker(self, envelope: ClientEnvelope) -> None:
        """A request to another broker (the replica fetcher's Fetch): sent to the address that
        broker registered for the listener the envelope names; the answer (a ``None`` body when it
        failed) goes back to the node."""
        channel = self._broker_channel
        request = envelope.body
        assert isinstance(request, ApiRequest)
        if channel is None or self._stopped.is_set():
            return
        destination = envelope.destination
        registration = self.image().brokers.get(destination)
        endpoint = registration.listener(envelope.listener) if registration is not None else None
        if endpoint is None:
            self.driver.deliver([envelope.reply(None)])
            return
        channel.set_address(destination, PeerAddress(endpoint.host, endpoint.port))

        async def call() -> None:
            body: Any
            try:
                _, body = await channel.call(
                    destination, request.api, lambda _: request.body, version=request.version
                )
            except ChannelError as e:
                log.debug("%s%s to broker %d failed: %s", self.prefix, request.api.name, destination, e)
                body = None
            self.driver.deliver([envelope.reply(body)])

        task = asyncio.get_running_loop().create_task(call())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_fatal(self, error: BaseException) -> None:
        log.critical("%sstopping after a fatal error: %s: %s", self.prefix, type(error).__name__, error)
        self.exit_code = 1
        asyncio.get_running_loop().create_task(self.stop(graceful=False))

    def _endpoints_of(self, voter_set: Any) -> dict[int, Endpoint]:
        """Each voter's endpoint on our raft listener (else its first one) in a KIP-853 voter set."""
        name = self.config.raft_listener_name
        out: dict[int, Endpoint] = {}
        for voter in voter_set:
            endpoints = voter.endpoints
            if endpoints:
                out[voter.key.id] = next((e for e in endpoints if e.name == name), endpoints[0])
        return out

    def _apply_voter_set(self, voter_set: Any) -> None:
        """On the event loop: the core's voter set changed (a VotersRecord was appended, truncated
        or loaded from a snapshot). Peers are addressed by node id, so the channel learns every
        voter's endpoint (what Metadata and DescribeCluster list, the node reads from its core)."""
        if voter_set is self._voter_set:
            return
        self._voter_set = voter_set
        if self.config.voters:
            return  # static voters (kraft.version 0): controller.quorum.voters stays in force
        endpoints = self._endpoints_of(voter_set)
        log.info(
            "%svoter set: %s",
            self.prefix,
            ", ".join(f"{i}@{e.host}:{e.port}" for i, e in sorted(endpoints.items())) or "(none)",
        )
        self.voter_endpoints = endpoints
        channel = self._channel
        if channel is not None:
            for node_id, e in endpoints.items():
                if node_id != self.config.node_id:
                    channel.set_address(node_id, PeerAddress(e.host, e.port))

    def _on_view(self, old: NodeView, new: NodeView) -> None:
        """Runs where the core runs (the event loop or the raft thread), after every poll: follow
        the voter set, learn an unconfigured leader's address, log role, leader and epoch changes.
        The first two are scheduled on the loop, ahead of the tasks that send this poll's
        outbound requests."""
        loop = self._loop
        changed = new.voter_set is not old.voter_set and new.voter_set is not None
        if changed and loop is not None and not loop.is_closed():
            # Scheduled before this poll's outbound messages, so they find the new addresses.
            loop.call_soon_threadsafe(self._apply_voter_set, new.voter_set)
        leader = new.leader_and_epoch.leader_id
        if leader is not None and leader != self.config.node_id and new.leader_endpoints:
            channel = self._channel
            if channel is not None and not channel.knows(leader):
                endpoint = next(
                    (e for e in new.leader_endpoints if e.name == self.config.raft_listener_name),
                    new.leader_endpoints[0],
                )
                # Scheduled before this poll's outbound messages, so the Fetch finds the address.
                if self._loop is not None and not self._loop.is_closed():
                    self._loop.call_soon_threadsafe(
                        channel.learn_address, leader, PeerAddress(endpoint.host, endpoint.port)
                    )
        if (old.role, old.leader_and_epoch) != (new.role, new.leader_and_epoch) and old.polls > 0:
            leader = new.leader_and_epoch.leader_id
            log.info(
                "%s%s -> %s (epoch %d, leader %s)",
                self.prefix,
                old.role,
                new.role,
                new.leader_and_epoch.epoch,
                "unknown" if leader is None else leader,
            )
        elif old.polls == 0:
            log.info("%sstarted as %s (epoch %d)", self.prefix, new.role, new.leader_and_epoch.epoch)

    # ------------------------------------------------------------------------------------ API

    async def submit(self, fn: Callable[[Any, int], T]) -> T:
        """Run ``fn(node, now_ms)`` where the core runs and await its result (``node``: the
        ``kraft.node.Node``; e.g. ``node.raft.schedule_append(epoch, records)``)."""
        return await self.driver.submit_async(fn)

    async def serve_until_stopped(self) -> int:
        await self._stopped.wait()
        return self.exit_code if self.exit_code is not None else 0

    def _encode_snapshot(self, image: MetadataImage) -> Future[list[bytes]]:
        return self._snapshot_pool.submit(snapshot_records_bytes, image)

    async def stop(self, *, graceful: bool = True, timeout_ms: int = DEFAULT_SHUTDOWN_TIMEOUT_MS) -> None:
        """Graceful: a broker first runs controlled shutdown (its leaderships move away), a leader
        resigns (EndQuorumEpoch), the raft thread finishes, files close, and a broker leaves its
        clean-shutdown marker (spec 2.2)."""
        if self._stopping:
            await self._stopped.wait()
            return
        self._stopping = True
        driver = getattr(self, "driver", None)
        clean = graceful and driver is not None and driver.failure is None
        broker = None if self.node is None else self.node.broker
        if clean and broker is not None and self.config.controlled_shutdown_enable:
            await self._controlled_shutdown()
        if driver is not None:
            if graceful and driver.failure is None:
                driver.request_shutdown(timeout_ms)
            else:
                driver.stop_now()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout_ms / 1000 + 2
            # The core waits (up to timeout_ms) for a successor to be elected. That cannot happen
            # when every other voter is gone, e.g. when the whole cluster is being stopped: each
            # follower stops at once (it knows the leader), leaving the resigned leader alone.
            watch_peers = graceful and driver.failure is None and bool(self._remote_voters())
            shutdown_started = time.monotonic()
            while not driver.stopped.is_set() and loop.time() < deadline:
                if watch_peers and self._no_other_voter_reachable(shutdown_started):
                    watch_peers = False
                    log.info(
                        "%sno other voter (%s) accepts connections any more: no successor can be "
                        "elected, so stopping without waiting out the shutdown timeout",
                        self.prefix,
                        ", ".join(str(i) for i in self._remote_voters()),
                    )
                    driver.stop_now()
                await asyncio.sleep(0.01)
            if not driver.stopped.is_set():
                log.warning("%sthe raft core did not stop within %d ms; forcing", self.prefix, timeout_ms)
                driver.stop_now()
                await asyncio.get_running_loop().run_in_executor(None, driver.join, 2.0)
            # Give the last outbound messages (EndQuorumEpoch) a moment to reach the sockets.
            await asyncio.sleep(0.05)
        await self._close_resources()
        self._snapshot_pool.shutdown(wait=False, cancel_futures=True)
        if clean and driver is not None and driver.failure is None and broker is not None:
            epoch = broker.lifecycle.broker_epoch
            if epoch >= 0:
                try:
                    write_clean_shutdown(self.config.log_dirs, epoch)
                    log.info("%srecorded a clean shutdown at broker epoch %d", self.prefix, epoch)
                except OSError as e:
                    log.error("%scannot record the clean shutdown: %s", self.prefix, e)
        log.info("%sstopped", self.prefix)
        self._stopped.set()

    async def _controlled_shutdown(self) -> None:
        """Kafka's broker shutdown: WantShutDown heartbeats until the controller has moved our
        leaderships away and answers ShouldShutDown, bounded by ``controlled.shutdown.timeout.ms``."""
        node = self.node
        assert node is not None and node.broker is not None
        lifecycle = node.broker.lifecycle
        log.info("%sbeginning controlled shutdown (broker state %s)", self.prefix, lifecycle.state.name)
        try:
            await self.submit(lambda node, now_ms: node.broker.begin_controlled_shutdown(now_ms))
        except RuntimeError:
            return  # the core has stopped
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.controlled_shutdown_timeout_ms / 1000
        while not lifecycle.controlled_shutdown_done and loop.time() < deadline:
            if self.driver.stopped.is_set():
                return
            await asyncio.sleep(0.02)
        if lifecycle.controlled_shutdown_done:
            log.info("%scontrolled shutdown complete", self.prefix)
        else:
            log.error(
                "%stimed out after %d ms waiting for the controller to approve controlled shutdown",
                self.prefix,
                self.config.controlled_shutdown_timeout_ms,
            )

    def _remote_voters(self) -> list[int]:
        return sorted(i for i in self.voter_endpoints if i != self.config.node_id)

    def _no_other_voter_reachable(self, since: float) -> bool:
        """True once a connection attempt to every other configured voter, made after ``since``,
        was refused. Probes the ones whose connection is down (paced by the reconnect backoff): the
        core may have stopped sending to a peer, e.g. one that acknowledged EndQuorumEpoch and then
        exited itself. A peer that still accepts connections, even one shutting down, counts as
        reachable: it may yet elect a successor or vote for one."""
        channel = self._channel
        if channel is None:
            return False
        voters = self._remote_voters()
        for voter in voters:
            channel.probe(voter)
        return all(channel.refused_since(voter, since) for voter in voters)

    def _watch_keystores(self, config: ServerConfig, auth: Mapping[str, ListenerAuth]) -> None:
        """Renewed certificates apply without a restart: every ``ssl.keystore.reload.interval.ms``
        each TLS listener's PEM files are looked at and, when they changed and are valid, loaded
        into its live context (``KeystoreReloader``); invalid ones are logged and not applied."""
        interval_ms = config.ssl_keystore_reload_interval_ms
        reloaders = [
            (name, KeystoreReloader(security.tls, context))
            for name, security in config.listener_security.items()
            if security.tls is not None and (context := auth[name].ssl_context) is not None
        ]
        reloaders = [(name, r) for name, r in reloaders if r.watched]
        if interval_ms <= 0 or not reloaders:
            return

        async def watch() -> None:
            while True:
                await asyncio.sleep(interval_ms / 1000)
                for name, reloader in reloaders:
                    try:
                        if reloader.check():
                            log.info("%slistener %s: reloaded its key and certificate", self.prefix, name)
                    except ConfigError as e:
                        log.error(
                            "%slistener %s: the renewed keystore is not applied, the old one serves on: %s",
                            self.prefix,
                            name,
                            e,
                        )

        task = asyncio.get_running_loop().create_task(watch())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _close_resources(self) -> None:
        if self._gateway is not None:
            self._gateway.fail_all("server stopping")
        for task in list(self._tasks):
            task.cancel()
        for server in self._kafka_servers:
            await server.close()
        if self._channel is not None:
            await self._channel.close()
        if self._broker_channel is not None:
            await self._broker_channel.close()
        if self._metrics_server is not None:
            with contextlib.suppress(Exception):
                self._metrics_server.shutdown()
        if self._log is not None:
            driver = getattr(self, "driver", None)
            if driver is None or driver.stopped.is_set() or driver.join(0):
                with contextlib.suppress(Exception):
                    self._log.flush()
                self._log.close()
                if self._partition_logs is not None:
                    self._partition_logs.close()
                    self._partition_logs = None
            self._log = None


def replica_config(props: Mapping[str, str], inter_broker_listener: str) -> ReplicaConfig:
    """The replica manager's settings from Kafka's ``replica.*`` broker properties."""
    defaults = ReplicaConfig()

    def get(name: str, default: int) -> int:
        value = props.get(name)
        try:
            return default if value is None else int(value)
        except ValueError:
            raise ConfigError(f"{name}: expected an integer, got {value!r}") from None

    return ReplicaConfig(
        replica_lag_time_max_ms=get("replica.lag.time.max.ms", defaults.replica_lag_time_max_ms),
        fetch_wait_max_ms=get("replica.fetch.wait.max.ms", defaults.fetch_wait_max_ms),
        fetch_min_bytes=get("replica.fetch.min.bytes", defaults.fetch_min_bytes),
        fetch_max_bytes=get("replica.fetch.max.bytes", defaults.fetch_max_bytes),
        fetch_response_max_bytes=get("replica.fetch.response.max.bytes", defaults.fetch_response_max_bytes),
        fetch_backoff_ms=get("replica.fetch.backoff.ms", defaults.fetch_backoff_ms),
        hw_checkpoint_interval_ms=get(
            "replica.high.watermark.checkpoint.interval.ms", defaults.hw_checkpoint_interval_ms
        ),
        retention_check_interval_ms=get(
            "log.retention.check.interval.ms", defaults.retention_check_interval_ms
        ),
        inter_broker_listener=inter_broker_listener,
        fetch_session_cache_slots=get(
            "max.incremental.fetch.session.cache.slots", defaults.fetch_session_cache_slots
        ),
        fetch_session_eviction_ms=get(
            "min.incremental.fetch.session.eviction.ms", defaults.fetch_session_eviction_ms
        ),
    )


def install_signal_handlers(
    server: KraftServer, signals: Iterable[int] = (signal.SIGTERM, signal.SIGINT)
) -> None:
    loop = asyncio.get_running_loop()
    for sig in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, _on_signal, server, sig)


def _on_signal(server: KraftServer, sig: int) -> None:
    log.info("%sreceived %s: shutting down gracefully", server.prefix, signal.Signals(sig).name)
    asyncio.get_running_loop().create_task(server.stop(graceful=True))


def run_server(
    config: ServerConfig,
    *,
    on_started: Callable[[KraftServer], Any] | None = None,
    use_uvloop: bool = True,
    with_controller: bool = True,
) -> int:
    """Run one node in the foreground until SIGTERM/SIGINT or a fatal error; returns the exit code.

    ``on_started(server)`` runs on the event loop once the node is serving (may be a coroutine
    function); the tools use it to register listeners or start a workload.
    """

    async def main() -> int:
        server = await KraftServer.start(config, with_controller=with_controller)
        install_signal_handlers(server)
        if on_started is not None:
            result = on_started(server)
            if asyncio.iscoroutine(result):
                await result
        return await server.serve_until_stopped()

    if use_uvloop:
        try:
            import uvloop

            return int(uvloop.run(main()))
        except ImportError:
            pass
    return asyncio.run(main())
