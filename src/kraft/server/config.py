"""The configuration of one server process, read from Kafka-named properties and validated.

Every error is a ``ConfigError`` whose message starts with the offending property, so
``kraft server-start`` can print it as is. Unknown properties are ignored (Kafka logs them as
unused); broker settings such as ``log.retention.hours`` may therefore sit in the same file.

``process.roles`` may be ``controller`` (a quorum voter), ``broker`` (a raft observer of the
metadata log that serves clients) or both (a combined node). Listeners named in
``controller.listener.names`` are controller listeners; every other listener is a broker (client)
listener. Each listener's protocol (``listener.security.protocol.map``: PLAINTEXT, SSL,
SASL_PLAINTEXT, SASL_SSL) and its TLS and SASL settings are parsed here
(``kraft.server.listener_security``), as are the node's own credentials for the listeners it connects
to (the first controller listener, and the inter-broker one for a broker); the PEM files are read at
start-up.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kraft.common.config import get_bool, get_int, get_list, get_str, load_properties
from kraft.common.errors import ConfigError, KraftError
from kraft.controller.quorum_controller import ControllerConfig
from kraft.controller.unclean_recovery import UncleanRecoveryStrategy
from kraft.protocol.framing import DEFAULT_MAX_FRAME_BYTES
from kraft.raft.config import QuorumConfig
from kraft.raft.types import Endpoint
from kraft.security.authorizer import AuthorizerConfig
from kraft.server.listener_security import (
    ListenerSecurityConfig,
    OutboundSecurityConfig,
    parse_listener_security,
    parse_outbound_security,
)

DEFAULT_CONNECTIONS_MAX_IDLE_MS = 600_000
CONTROLLER = "controller"
BROKER = "broker"
# Kafka's SecurityProtocol ids and listener.security.protocol.map default.
SECURITY_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
DEFAULT_PROTOCOL_MAP = {name: name for name in SECURITY_PROTOCOLS}
DEFAULT_SEGMENT_BYTES = 1_073_741_824
# Kafka's lower bound for metadata.log.segment.bytes is 8 MiB; tests use smaller segments, so we
# only insist on room for one batch header.
MIN_SEGMENT_BYTES = 1024

_LISTENER = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)://(?P<host>\[[^\]]*\]|[^:/]*):(?P<port>\d+)$")
_HOST_PORT = re.compile(r"^(?P<host>\[[^\]]*\]|[^:/]+):(?P<port>\d+)$")
_VOTER = re.compile(r"^(?P<id>-?\d+)@(?P<host>\[[^\]]*\]|[^:/]+):(?P<port>\d+)$")


def _host(text: str) -> str:
    return text[1:-1] if text.startswith("[") else text


def _port(prop: str, text: str, item: str, *, allow_zero: bool) -> int:
    port = int(text)
    if not (0 if allow_zero else 1) <= port <= 65535:
        raise ConfigError(f"{prop}: port out of range in {item!r}")
    return port


def parse_listeners(prop: str, value: list[str]) -> tuple[Endpoint, ...]:
    """``NAME://host:port,...``; port 0 means "pick a free port" (tests)."""
    out: list[Endpoint] = []
    for item in value:
        m = _LISTENER.match(item)
        if m is None:
            raise ConfigError(f"{prop}: {item!r} is not of the form NAME://host:port")
        name = m["name"].upper()
        if any(e.name == name for e in out):
            raise ConfigError(f"{prop}: listener name {name} appears twice")
        out.append(Endpoint(name, _host(m["host"]), _port(prop, m["port"], item, allow_zero=True)))
    return tuple(out)


def parse_voters(prop: str, value: list[str], listener_name: str) -> dict[int, Endpoint]:
    """``controller.quorum.voters``: ``id@host:port,...``."""
    voters: dict[int, Endpoint] = {}
    for item in value:
        m = _VOTER.match(item)
        if m is None:
            raise ConfigError(f"{prop}: {item!r} is not of the form id@host:port")
        voter_id = int(m["id"])
        if voter_id < 0:
            raise ConfigError(f"{prop}: voter id must be >= 0 in {item!r}")
        if voter_id in voters:
            raise ConfigError(f"{prop}: voter id {voter_id} appears twice")
        voters[voter_id] = Endpoint(
            listener_name, _host(m["host"]), _port(prop, m["port"], item, allow_zero=False)
        )
    return voters


def parse_bootstrap_servers(prop: str, value: list[str], listener_name: str) -> tuple[Endpoint, ...]:
    out: list[Endpoint] = []
    for item in value:
        m = _HOST_PORT.match(item)
        if m is None:
            raise ConfigError(f"{prop}: {item!r} is not of the form host:port")
        out.append(Endpoint(listener_name, _host(m["host"]), _port(prop, m["port"], item, allow_zero=False)))
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """A validated server configuration.

    ``listeners`` are every listener to bind; those named in ``controller.listener.names`` are
    controller listeners, the others broker listeners. ``raft_listener`` (the first controller
    listener name) carries raft traffic: a controller is known by it, and a broker reaches the
    controllers on it. ``advertised_listeners`` are the broker listeners as registered with the
    controller (port 0 is replaced by the bound port at start).
    """

    node_id: int
    roles: frozenset[str]
    voters: dict[int, Endpoint]
    bootstrap_servers: tuple[Endpoint, ...]
    listeners: tuple[Endpoint, ...]
    controller_listener_names: tuple[str, ...]
    metadata_log_dir: Path
    quorum: QuorumConfig
    advertised_listeners: tuple[Endpoint, ...] = ()
    security_protocols: Mapping[str, int] = field(default_factory=dict)  # listener -> protocol id
    # What each bound listener demands of its clients (TLS, SASL).
    listener_security: Mapping[str, ListenerSecurityConfig] = field(default_factory=dict)
    # How this node connects to a listener of other nodes (the raft listener, the inter-broker one).
    outbound_security: Mapping[str, OutboundSecurityConfig] = field(default_factory=dict)
    # inter.broker.listener.name, else the first broker listener ("" for a controller-only node).
    inter_broker_listener: str = ""
    max_connections: int = 2**31 - 1
    max_connections_per_ip: int = 2**31 - 1
    max_connections_per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    rack: str | None = None
    log_dirs: tuple[Path, ...] = ()
    controlled_shutdown_enable: bool = True
    # How long a stopping broker waits for the controller to approve controlled shutdown. Kafka
    # 4.0 waits 5 minutes; kraft's own property, default 30 s, so a SIGTERM with no controller
    # left does not hang the process for minutes.
    controlled_shutdown_timeout_ms: int = 30_000
    registration_timeout_ms: int = 60_000
    # request.timeout.ms: forwarded admin requests without a timeout of their own.
    broker_request_timeout_ms: int = 30_000
    max_request_partition_size_limit: int = 2000  # DescribeTopicPartitions cap (spec 6.3)
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    # The data partitions' .index/.timeindex: an entry every log.index.interval.bytes, files of at
    # most log.index.size.max.bytes (Kafka's defaults 4096 and 10 MiB).
    log_index_interval_bytes: int = 4096
    log_index_size_max_bytes: int = 10 * 1024 * 1024
    # kraft-specific log.max.open.segment.files: the data partitions' segment files open at once
    # (the least recently used is closed and reopened when used); -1: derived from the process's
    # open-file limit when the broker starts (``default_max_open_segment_files``).
    log_max_open_segment_files: int = -1
    socket_request_max_bytes: int = DEFAULT_MAX_FRAME_BYTES
    connections_max_idle_ms: int = DEFAULT_CONNECTIONS_MAX_IDLE_MS
    # connection.failed.authentication.delay.ms: a refused login is answered (and closed) this late.
    failed_authentication_delay_ms: int = 100
    # kraft-specific: how often TLS listeners look for a renewed keystore (0: never; Kafka reloads
    # only through a dynamic config change).
    ssl_keystore_reload_interval_ms: int = 60_000
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"
    # Where RaftNode.poll runs: "loop" (on the event loop thread, no hand-off per message) or
    # "thread" (its own thread, as Kafka's KafkaRaftClientDriver); kraft.server.driver.
    raft_driver: str = "loop"
    controller: ControllerConfig = field(default_factory=ControllerConfig)
    properties: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_controller(self) -> bool:
        return CONTROLLER in self.roles

    @property
    def is_broker(self) -> bool:
        return BROKER in self.roles

    @property
    def controller_listeners(self) -> tuple[Endpoint, ...]:
        return tuple(e for e in self.listeners if e.name in self.controller_listener_names)

    @property
    def broker_listeners(self) -> tuple[Endpoint, ...]:
        return tuple(e for e in self.listeners if e.name not in self.controller_listener_names)

    @property
    def raft_listener(self) -> Endpoint:
        """This controller's raft listener (only for a controller; a broker binds none)."""
        name = self.controller_listener_names[0]
        return next(e for e in self.listeners if e.name == name)

    @property
    def raft_listener_name(self) -> str:
        return self.controller_listener_names[0]


def parse_server_config(props: Mapping[str, str]) -> ServerConfig:
    """Validate ``props`` (Kafka property names) into a ``ServerConfig``."""
    role_list = [r.lower() for r in get_list(props, "process.roles")]
    if not role_list:
        raise ConfigError("process.roles is required: controller, broker, or broker,controller")
    unknown_roles = [r for r in role_list if r not in (CONTROLLER, BROKER)]
    if unknown_roles:
        raise ConfigError(f"process.roles: unknown role(s) {', '.join(unknown_roles)}")
    if len(set(role_list)) != len(role_list):
        raise ConfigError(f"process.roles: a role appears twice in {','.join(role_list)}")
    roles = frozenset(role_list)
    is_controller, is_broker = CONTROLLER in roles, BROKER in roles
    if get_str(props, "node.id") is None:
        raise ConfigError("node.id is required")
    node_id = get_int(props, "node.id", -1, minimum=0)

    controller_names = tuple(n.upper() for n in get_list(props, "controller.listener.names"))
    if not controller_names:
        raise ConfigError("controller.listener.names is required (e.g. CONTROLLER)")
    listeners = parse_listeners("listeners", get_list(props, "listeners"))
    if not listeners:
        raise ConfigError("listeners is required (e.g. listeners=CONTROLLER://127.0.0.1:9093)")
    names = {e.name for e in listeners}
    broker_names = [e.name for e in listeners if e.name not in controller_names]
    if not is_broker and broker_names:
        raise ConfigError(
            f"listeners: listener {broker_names[0]} is not in controller.listener.names "
            f"({','.join(controller_names)}); a controller-only node serves only controller listeners"
        )
    if is_controller and controller_names[0] not in names:
        raise ConfigError(
            f"controller.listener.names: the first name ({controller_names[0]}) carries raft traffic and "
            "must appear in listeners"
        )
    if not is_controller and names & set(controller_names):
        raise ConfigError(
            f"listeners: a broker-only node must not bind a controller listener "
            f"({', '.join(sorted(names & set(controller_names)))} is in controller.listener.names)"
        )
    if is_broker and not broker_names:
        raise ConfigError(
            "listeners: a broker needs a client listener besides the controller ones "
            "(e.g. PLAINTEXT://127.0.0.1:9092)"
        )
    protocol_names = _security_protocols(props, listeners, controller_names)
    protocols = {name: SECURITY_PROTOCOLS[p] for name, p in protocol_names.items()}
    listener_security = {
        e.name: parse_listener_security(props, e.name, protocol_names[e.name]) for e in listeners
    }
    inter_broker = ""
    if is_broker:
        inter_broker = (get_str(props, "inter.broker.listener.name") or broker_names[0]).upper()
        if inter_broker not in names or inter_broker in controller_names:
            raise ConfigError(
                f"inter.broker.listener.name: {inter_broker} is not one of this broker's listeners "
                f"({', '.join(broker_names)})"
            )
    raft_protocol = _protocol_of(props, controller_names[0], controller_names)
    outbound = {
        controller_names[0]: parse_outbound_security(
            props, controller_names[0], raft_protocol, controller=True
        )
    }
    if inter_broker:
        outbound[inter_broker] = parse_outbound_security(
            props, inter_broker, protocol_names[inter_broker], controller=False
        )
    advertised = _advertised_listeners(props, listeners, controller_names) if is_broker else ()
    raft_name = controller_names[0]

    voters = parse_voters("controller.quorum.voters", get_list(props, "controller.quorum.voters"), raft_name)
    bootstrap = parse_bootstrap_servers(
        "controller.quorum.bootstrap.servers",
        get_list(props, "controller.quorum.bootstrap.servers"),
        raft_name,
    )
    if not voters and not bootstrap:
        raise ConfigError(
            "controller.quorum.voters is required (id@host:port,...), or controller.quorum.bootstrap.servers"
        )
    if is_controller and voters and node_id not in voters:
        raise ConfigError(
            f"controller.quorum.voters: node.id {node_id} is not one of the voters "
            f"({', '.join(str(i) for i in sorted(voters))}); a controller must be a voter"
        )
    if not is_controller and node_id in voters:
        raise ConfigError(
            f"controller.quorum.voters: node.id {node_id} is a voter, but process.roles=broker: a broker "
            "is never a voter (give it another node.id, or add the controller role)"
        )

    dirs = get_list(props, "log.dirs") or get_list(props, "log.dir")
    log_dir = get_str(props, "metadata.log.dir")
    if log_dir is None:
        if not dirs:
            raise ConfigError("metadata.log.dir (or log.dirs) is required")
        log_dir = dirs[0]
    if is_broker and not dirs:
        raise ConfigError("log.dirs is required for a broker (where its partition data will live)")

    def ms(name: str, default: int, minimum: int = 0) -> int:
        return get_int(props, name, default, minimum=minimum)

    quorum = QuorumConfig(
        voters={i: (e,) for i, e in voters.items()},
        bootstrap_servers=bootstrap,
        election_timeout_ms=ms("controller.quorum.election.timeout.ms", 1000, 1),
        fetch_timeout_ms=ms("controller.quorum.fetch.timeout.ms", 2000, 1),
        election_backoff_max_ms=ms("controller.quorum.election.backoff.max.ms", 1000, 1),
        append_linger_ms=ms("controller.quorum.append.linger.ms", 25),
        request_timeout_ms=ms("controller.quorum.request.timeout.ms", 2000, 1),
        retry_backoff_ms=ms("controller.quorum.retry.backoff.ms", 20),
        pre_vote_enabled=get_bool(props, "controller.quorum.pre.vote.enable", True),
    )
    controller = parse_controller_config(props)
    return ServerConfig(
        node_id=node_id,
        roles=roles,
        advertised_listeners=advertised,
        security_protocols=protocols,
        listener_security=listener_security,
        outbound_security=outbound,
        inter_broker_listener=inter_broker,
        max_connections=get_int(props, "max.connections", 2**31 - 1, minimum=0),
        max_connections_per_ip=get_int(props, "max.connections.per.ip", 2**31 - 1, minimum=0),
        max_connections_per_ip_overrides=_per_ip_overrides(props),
        rack=get_str(props, "broker.rack"),
        log_dirs=tuple(Path(os.path.expanduser(d)) for d in dirs),
        controlled_shutdown_enable=get_bool(props, "controlled.shutdown.enable", True),
        controlled_shutdown_timeout_ms=get_int(props, "controlled.shutdown.timeout.ms", 30_000, minimum=0),
        broker_request_timeout_ms=get_int(props, "request.timeout.ms", 30_000, minimum=1),
        max_request_partition_size_limit=get_int(props, "max.request.partition.size.limit", 2000, minimum=1),
        registration_timeout_ms=get_int(props, "initial.broker.registration.timeout.ms", 60_000, minimum=1),
        voters=voters,
        bootstrap_servers=bootstrap,
        listeners=listeners,
        controller_listener_names=controller_names,
        metadata_log_dir=Path(os.path.expanduser(log_dir)),
        quorum=quorum,
        segment_bytes=get_int(
            props, "metadata.log.segment.bytes", DEFAULT_SEGMENT_BYTES, minimum=MIN_SEGMENT_BYTES
        ),
        socket_request_max_bytes=get_int(
            props, "socket.request.max.bytes", DEFAULT_MAX_FRAME_BYTES, minimum=1
        ),
        # Kafka's bounds: at least 0, and at least 4 (one time index entry is 12 bytes, one offset
        # entry 8; the storage rounds the size down to whole entries).
        log_index_interval_bytes=get_int(props, "log.index.interval.bytes", 4096, minimum=0),
        log_index_size_max_bytes=get_int(props, "log.index.size.max.bytes", 10 * 1024 * 1024, minimum=4),
        log_max_open_segment_files=_max_open_segment_files(props),
        connections_max_idle_ms=get_int(
            props, "connections.max.idle.ms", DEFAULT_CONNECTIONS_MAX_IDLE_MS, minimum=0
        ),
        failed_authentication_delay_ms=_failed_authentication_delay_ms(props),
        ssl_keystore_reload_interval_ms=get_int(props, "ssl.keystore.reload.interval.ms", 60_000, minimum=0),
        metrics_port=get_int(props, "metrics.port", 0, minimum=0, maximum=65535),
        metrics_host=get_str(props, "metrics.host", "127.0.0.1") or "127.0.0.1",
        raft_driver=_raft_driver(props),
        controller=controller,
        properties=dict(props),
    )


RAFT_DRIVERS = ("loop", "thread")


def _raft_driver(props: Mapping[str, str]) -> str:
    value = (get_str(props, "raft.driver", "loop") or "loop").strip().lower()
    if value not in RAFT_DRIVERS:
        raise ConfigError(f"raft.driver: {value!r} is not one of {', '.join(RAFT_DRIVERS)}")
    return value


def _per_ip_overrides(props: Mapping[str, str]) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:count,...`` (Kafka's form)."""
    prop = "max.connections.per.ip.overrides"
    out: dict[str, int] = {}
    for item in get_list(props, prop):
        host, sep, count = item.rpartition(":")
        if not sep or not host or not count.strip().isdigit():
            raise ConfigError(f"{prop}: {item!r} is not host:count")
        out[host.strip()] = int(count)
    return out


def _protocol_map(props: Mapping[str, str]) -> dict[str, str]:
    prop = "listener.security.protocol.map"
    mapping = dict(DEFAULT_PROTOCOL_MAP)
    if props.get(prop, "").strip():
        mapping = {}
        for item in get_list(props, prop):
            name, sep, value = item.partition(":")
            if not sep or not name.strip() or value.strip().upper() not in SECURITY_PROTOCOLS:
                known = ", ".join(SECURITY_PROTOCOLS)
                raise ConfigError(f"{prop}: {item!r} is not NAME:PROTOCOL with PROTOCOL one of {known}")
            mapping[name.strip().upper()] = value.strip().upper()
    return mapping


def _protocol_of(props: Mapping[str, str], listener: str, controller_names: tuple[str, ...]) -> str:
    """The protocol of a listener this node may not bind (a broker's controller listener)."""
    protocol = _protocol_map(props).get(listener)
    if protocol is None:
        if listener in controller_names:
            return "PLAINTEXT"
        raise ConfigError(f"listener.security.protocol.map: listener {listener} has no security protocol")
    return protocol


def _security_protocols(
    props: Mapping[str, str], listeners: tuple[Endpoint, ...], controller_names: tuple[str, ...]
) -> dict[str, str]:
    """``listener.security.protocol.map`` (NAME:PROTOCOL,...) -> listener -> protocol name. A
    controller listener missing from the map is PLAINTEXT (Kafka does the same in KRaft mode)."""
    prop = "listener.security.protocol.map"
    mapping = _protocol_map(props)
    out: dict[str, str] = {}
    for e in listeners:
        protocol: str | None = mapping.get(e.name, "PLAINTEXT" if e.name in controller_names else None)
        if protocol is None:
            raise ConfigError(f"{prop}: listener {e.name} has no security protocol (add {e.name}:PLAINTEXT)")
        out[e.name] = protocol
    return out


def _advertised_listeners(
    props: Mapping[str, str], listeners: tuple[Endpoint, ...], controller_names: tuple[str, ...]
) -> tuple[Endpoint, ...]:
    """``advertised.listeners`` for the broker listeners (default: the bound ones, as Kafka does);
    a broker listener not named there is advertised as bound."""
    bound = [e for e in listeners if e.name not in controller_names]
    given = parse_listeners("advertised.listeners", get_list(props, "advertised.listeners"))
    by_name = {e.name: e for e in given if e.name not in controller_names}
    known = {e.name for e in bound}
    for e in given:
        if e.name not in known and e.name not in controller_names:
            raise ConfigError(f"advertised.listeners: {e.name} is not one of the broker listeners")
        if e.name in by_name and e.port == 0:
            raise ConfigError(f"advertised.listeners: {e.name} needs a real port, not 0")
    return tuple(by_name.get(e.name, e) for e in bound)


# Static broker-level configs the controller resolves topic configs against (spec 4.1).
_STATIC_CONFIG_KEYS = (
    "min.insync.replicas",
    "unclean.leader.election.enable",
    "default.replication.factor",
    "num.partitions",
    "delete.topic.enable",
    "auto.create.topics.enable",
    "log.retention.ms",
    "log.retention.bytes",
    "log.cleanup.policy",
    "log.segment.bytes",
    "message.max.bytes",
)


def _failed_authentication_delay_ms(props: Mapping[str, str]) -> int:
    """``connection.failed.authentication.delay.ms`` (Kafka: at least 0, default 100, and below
    ``connections.max.idle.ms`` so that the idle reaper does not close the connection first)."""
    delay = get_int(props, "connection.failed.authentication.delay.ms", 100, minimum=0)
    idle = get_int(props, "connections.max.idle.ms", DEFAULT_CONNECTIONS_MAX_IDLE_MS, minimum=0)
    if idle > 0 and delay >= idle:
        raise ConfigError(
            f"connection.failed.authentication.delay.ms: {delay} must be less than "
            f"connections.max.idle.ms ({idle})"
        )
    return delay


def parse_controller_config(props: Mapping[str, str]) -> ControllerConfig:
    """The controller's settings from Kafka's property names (spec 7), each validated."""
    for key in ("min.insync.replicas", "default.replication.factor", "num.partitions"):
        get_int(props, key, 1, minimum=1)
    for key in ("unclean.leader.election.enable", "delete.topic.enable", "auto.leader.rebalance.enable"):
        get_bool(props, key, True)
    session = get_int(props, "broker.session.timeout.ms", 9000, minimum=1)
    heartbeat = get_int(props, "broker.heartbeat.interval.ms", 2000, minimum=1)
    if heartbeat >= session:
        raise ConfigError(
            f"broker.heartbeat.interval.ms ({heartbeat}) must be less than "
            f"broker.session.timeout.ms ({session})"
        )
    return ControllerConfig(
        session_timeout_ms=session,
        heartbeat_interval_ms=heartbeat,
        default_replication_factor=get_int(props, "default.replication.factor", 1, minimum=1),
        num_partitions=get_int(props, "num.partitions", 1, minimum=1),
        delete_topic_enable=get_bool(props, "delete.topic.enable", True),
        auto_leader_rebalance_enable=get_bool(props, "auto.leader.rebalance.enable", True),
        leader_imbalance_check_interval_ms=1000
        * get_int(props, "leader.imbalance.check.interval.seconds", 300, minimum=1),
        unclean_election_interval_ms=get_int(
            props, "unclean.leader.election.interval.ms", 300_000, minimum=1
        ),
        max_idle_interval_ms=get_int(props, "metadata.max.idle.interval.ms", 500, minimum=0),
        snapshot_max_bytes=get_int(
            props, "metadata.log.max.record.bytes.between.snapshots", 20 * 1024 * 1024, minimum=1
        ),
        snapshot_interval_ms=get_int(props, "metadata.log.max.snapshot.interval.ms", 3_600_000, minimum=0),
        static_configs={k: props[k] for k in _STATIC_CONFIG_KEYS if k in props},
        authorizer=AuthorizerConfig.from_properties(props),
        unclean_recovery_manager_enabled=get_bool(props, "unclean.recovery.manager.enabled", True),
        unclean_recovery_strategy=_unclean_recovery_strategy(props),
        unclean_recovery_timeout_ms=get_int(props, "unclean.recovery.timeout.ms", 300_000, minimum=1),
    )


def _unclean_recovery_strategy(props: Mapping[str, str]) -> UncleanRecoveryStrategy:
    """``unclean.recovery.strategy``: None, Balanced (kraft's default) or Aggressive (KIP-966)."""
    text = get_str(props, "unclean.recovery.strategy", UncleanRecoveryStrategy.BALANCED.value)
    assert text is not None
    try:
        return UncleanRecoveryStrategy.parse(text)
    except KraftError as e:
        raise ConfigError(str(e)) from None


def load_server_config(
    path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None
) -> ServerConfig:
    """Read a properties file, apply ``overrides`` (``--override key=value``) and validate."""
    props = load_properties(path)
    if overrides:
        props.update(overrides)
    return parse_server_config(props)


def _max_open_segment_files(props: Mapping[str, str]) -> int:
    value = get_int(props, "log.max.open.segment.files", -1, minimum=-1)
    if value == 0:
        raise ConfigError(
            "log.max.open.segment.files: must be positive, or -1 (derived from the open-file limit)"
        )
    return value
