"""The configuration of one server process, read from Kafka-named properties and validated.

Every error is a ``ConfigError`` whose message starts with the offending property, so
``kraft server-start`` can print it as is. Unknown properties are ignored (Kafka logs them as
unused); broker settings such as ``log.retention.hours`` may therefore sit in the same file.

Only ``process.roles=controller`` is supported: this process is a KRaft controller (a quorum voter).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kraft.common.config import get_bool, get_int, get_list, get_str, load_properties
from kraft.common.errors import ConfigError
from kraft.controller.quorum_controller import ControllerConfig
from kraft.protocol.framing import DEFAULT_MAX_FRAME_BYTES
from kraft.raft.config import QuorumConfig
from kraft.raft.types import Endpoint

DEFAULT_CONNECTIONS_MAX_IDLE_MS = 600_000
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

    ``listeners`` are all controller listeners; ``raft_listener`` (the first name in
    ``controller.listener.names``) carries raft traffic and is what other nodes know us by.
    """

    node_id: int
    voters: dict[int, Endpoint]
    bootstrap_servers: tuple[Endpoint, ...]
    listeners: tuple[Endpoint, ...]
    controller_listener_names: tuple[str, ...]
    metadata_log_dir: Path
    quorum: QuorumConfig
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    socket_request_max_bytes: int = DEFAULT_MAX_FRAME_BYTES
    connections_max_idle_ms: int = DEFAULT_CONNECTIONS_MAX_IDLE_MS
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"
    controller: ControllerConfig = field(default_factory=ControllerConfig)
    properties: Mapping[str, str] = field(default_factory=dict)

    @property
    def raft_listener(self) -> Endpoint:
        name = self.controller_listener_names[0]
        return next(e for e in self.listeners if e.name == name)


def parse_server_config(props: Mapping[str, str]) -> ServerConfig:
    """Validate ``props`` (Kafka property names) into a ``ServerConfig``."""
    roles = [r.lower() for r in get_list(props, "process.roles")]
    if not roles:
        raise ConfigError("process.roles is required (this server supports process.roles=controller)")
    unknown_roles = [r for r in roles if r not in ("controller", "broker")]
    if unknown_roles:
        raise ConfigError(f"process.roles: unknown role(s) {', '.join(unknown_roles)}")
    if roles != ["controller"]:
        raise ConfigError(
            f"process.roles={','.join(roles)} is not supported: this server runs KRaft controllers only "
            "(process.roles=controller)"
        )
    if get_str(props, "node.id") is None:
        raise ConfigError("node.id is required")
    node_id = get_int(props, "node.id", -1, minimum=0)

    controller_names = tuple(n.upper() for n in get_list(props, "controller.listener.names"))
    if not controller_names:
        raise ConfigError("controller.listener.names is required for a controller (e.g. CONTROLLER)")
    listeners = parse_listeners("listeners", get_list(props, "listeners"))
    if not listeners:
        raise ConfigError("listeners is required (e.g. listeners=CONTROLLER://127.0.0.1:9093)")
    for e in listeners:
        if e.name not in controller_names:
            raise ConfigError(
                f"listeners: listener {e.name} is not in controller.listener.names "
                f"({','.join(controller_names)}); a controller-only node serves only controller listeners"
            )
    if controller_names[0] not in {e.name for e in listeners}:
        raise ConfigError(
            f"controller.listener.names: the first name ({controller_names[0]}) carries raft traffic and "
            "must appear in listeners"
        )
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
    if voters and node_id not in voters:
        raise ConfigError(
            f"controller.quorum.voters: node.id {node_id} is not one of the voters "
            f"({', '.join(str(i) for i in sorted(voters))}); a controller must be a voter"
        )

    log_dir = get_str(props, "metadata.log.dir")
    if log_dir is None:
        dirs = get_list(props, "log.dirs") or get_list(props, "log.dir")
        if not dirs:
            raise ConfigError("metadata.log.dir (or log.dirs) is required")
        log_dir = dirs[0]

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
        connections_max_idle_ms=get_int(
            props, "connections.max.idle.ms", DEFAULT_CONNECTIONS_MAX_IDLE_MS, minimum=0
        ),
        metrics_port=get_int(props, "metrics.port", 0, minimum=0, maximum=65535),
        metrics_host=get_str(props, "metrics.host", "127.0.0.1") or "127.0.0.1",
        controller=controller,
        properties=dict(props),
    )


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
    )


def load_server_config(
    path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None
) -> ServerConfig:
    """Read a properties file, apply ``overrides`` (``--override key=value``) and validate."""
    props = load_properties(path)
    if overrides:
        props.update(overrides)
    return parse_server_config(props)
