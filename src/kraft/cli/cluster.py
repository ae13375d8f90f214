"""``kraft cluster``: run a local KRaft cluster of controller and broker processes on loopback.

    kraft cluster up [--controllers N] [--brokers M] [--combined] [--dynamic-voters] [--secure]
                     [--data-dir DIR] [--base-port P] [--detach] [--override K=V]...
                     [--create-topic NAME[:PARTITIONS[:RF]]]
    kraft cluster down [--data-dir DIR]
    kraft cluster add-node [--port P] [--data-dir DIR]        (--dynamic-voters clusters)
    kraft cluster remove-node --id N [--data-dir DIR]          (--dynamic-voters clusters)
    kraft cluster status [--data-dir DIR] [--replication] [--json]
    kraft cluster stop-node --id N [--clean | --kill] [--data-dir DIR]
    kraft cluster start-node --id N [--data-dir DIR]

Layout under DIR (default ./data)::

    cluster.json                  {"cluster_id", "nodes": [{"id", "roles", "port", "broker_port", ...}]}
    node-<id>/server.properties   written on every ``up`` from cluster.json and the overrides
    node-<id>/server.log          the node's stdout and stderr (appended)
    node-<id>/metadata/           its metadata log directory (``kraft storage format``-ed once)
    node-<id>/data/               a broker's log directory (partition data will live here)
    (``--secure``) tls/, node-<id>/server.pem, credentials.json, client.properties, librdkafka.properties:
                                  see ``kraft.cli.cluster_security``

Nodes: controllers have ids 1..N, brokers N+1..N+M (Kafka's own examples number them so). With
``--combined`` the N nodes are both controller and broker (``process.roles=broker,controller``)
and ``--brokers`` must be N or left out. Ports: the controller listener of controller ``i`` is
``P + i - 1`` (9093, 9094, 9095 by default); the client (PLAINTEXT) listener of the ``j``-th broker is
``P + N + j - 1`` (9096, 9097, 9098); ``--base-port 0`` picks free ports instead. A DIR that already
has a cluster.json is *restarted*: same cluster id, ids, roles and ports; nothing is reformatted.
``--create-topic`` creates a topic through a broker once every broker is unfenced (unless it
exists) and prints it as ``kraft topics --describe`` does, then how to produce to it and consume
from it (``kraft console-producer``/``console-consumer``/``get-offsets`` and kcat, with the brokers'
real addresses); ``make run`` uses it for a demo topic.

``up`` waits for a leader, prints the endpoints and the ``metadata-quorum describe --status``
view (and, with brokers, waits until every broker is registered and unfenced), then stays in the
foreground until Ctrl-C or SIGTERM and stops every node (SIGTERM, then SIGKILL after
``--stop-timeout-s``). If ``up`` itself ends any other way (kill -9, a closed terminal), its nodes
stop by themselves: they watch a lock it holds (``kraft.cli.supervisor_lock``). A node that dies
meanwhile is reported, not restarted: that is how one watches a failover (see
docs/operations.md). ``--detach`` returns once the cluster is up (no lock: the nodes run until
``down``); ``down``
stops a detached cluster by the pids in cluster.json, after checking that each pid still runs our
server with that node's config file (a recycled pid is never signalled). Both stop the brokers
first (their controlled shutdown needs the controllers), then the controller followers, and the
leader last (see ``stop_leader_last``).

``--secure``: every listener is SASL_SSL, with a throwaway CA, one certificate per node, SCRAM-SHA-512
logins (the admin user's client properties in DIR/client.properties, mode 0600) and the
StandardAuthorizer (``kraft.cli.cluster_security`` says how). Every command here then talks to the
cluster as that admin, reading DIR/client.properties as ``--command-config`` would. A directory
keeps what it was made: ``up --secure`` on a PLAINTEXT one, or ``up`` without it on a secure one, is
refused and changes nothing; ``start-node``, ``stop-node`` and ``down`` need no flag.

``--dynamic-voters`` (KIP-853): the voters live in the metadata log instead of
``controller.quorum.voters``. Every node gets ``controller.quorum.bootstrap.servers`` (the
controllers' addresses); the first controller is formatted ``--standalone`` and the others
``--no-initial-controllers``; once the first one leads, ``up`` adds the others one at a time with
AddRaftVoter (``kraft metadata-quorum add-controller`` does the same), so the quorum ends with every
controller a voter. ``add-node`` starts one more controller (next free id, a free port unless
``--port``) as an observer and adds it as a voter; ``remove-node`` removes a controller from the
voter set (RemoveRaftVoter) and then stops it and drops it from cluster.json (its directory stays).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from kraft.cli import cluster_processes as processes
from kraft.cli import cluster_security, supervisor_lock
from kraft.cli.cluster_security import Credentials, SecureLayout
from kraft.cli.common import parse_args, streams
from kraft.client.admin import AdminClient
from kraft.client.connection import Address, AdminError, Connection
from kraft.client.quorum_info import QuorumInfo, format_replication, format_status, to_json
from kraft.client.security import ClientSecurityConfig
from kraft.common.errors import ConfigError
from kraft.common.uuids import random_uuid, uuid_to_base64
from kraft.raft.types import Endpoint
from kraft.storage.meta_properties import read_meta_properties

CLUSTER_FILE = "cluster.json"
DEFAULT_BASE_PORT = 9093
DEFAULT_HOST = "127.0.0.1"
LISTENER = "CONTROLLER"
BROKER_LISTENER = "PLAINTEXT"
CONTROLLER_ROLE = "controller"
BROKER_ROLE = "broker"


class ClusterError(Exception):
    """A cluster operation cannot proceed; the message says why and what to do."""


# -------------------------------------------------------------------------------------------------
# cluster.json


@dataclass(slots=True)
class NodeEntry:
    id: int
    port: int | None  # the controller listener's port; None for a broker-only node
    pid: int | None
    log_dir: str  # the node's metadata log directory
    node_dir: str
    roles: tuple[str, ...] = (CONTROLLER_ROLE,)
    broker_port: int | None = None  # the client (PLAINTEXT) listener's port, for a broker

    @property
    def is_controller(self) -> bool:
        return CONTROLLER_ROLE in self.roles

    @property
    def is_broker(self) -> bool:
        return BROKER_ROLE in self.roles

    @property
    def ports(self) -> list[int]:
        return [p for p in (self.port, self.broker_port) if p is not None]

    @property
    def data_dir(self) -> str:
        return str(Path(self.node_dir) / "data")

    @property
    def config_path(self) -> Path:
        return Path(self.node_dir) / "server.properties"

    @property
    def server_log(self) -> Path:
        return Path(self.node_dir) / "server.log"

    @property
    def address(self) -> Address:
        """The controller listener's address."""
        assert self.port is not None, f"node {self.id} is not a controller"
        return Address(DEFAULT_HOST, self.port)

    @property
    def broker_address(self) -> Address:
        assert self.broker_port is not None, f"node {self.id} is not a broker"
        return Address(DEFAULT_HOST, self.broker_port)

    @property
    def role_text(self) -> str:
        return ",".join(r for r in (BROKER_ROLE, CONTROLLER_ROLE) if r in self.roles)


@dataclass(slots=True)
class ClusterFile:
    cluster_id: str
    nodes: list[NodeEntry]
    host: str = DEFAULT_HOST
    overrides: dict[str, str] = field(default_factory=dict)
    # KIP-853: voters in the metadata log (controller.quorum.bootstrap.servers), not static.
    dynamic_voters: bool = False
    # ``up --secure``: SASL_SSL listeners, the files of kraft.cli.cluster_security under ``root``.
    secure: bool = False
    # Not in cluster.json: the cluster directory, and what a secure cluster's files hold, read once.
    root: Path | None = field(default=None, compare=False, repr=False)
    _credentials: Credentials | None = field(default=None, init=False, compare=False, repr=False)
    _security: ClientSecurityConfig | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def layout(self) -> SecureLayout:
        assert self.root is not None, "a cluster planned or loaded knows its directory"
        return SecureLayout(self.root)

    @property
    def broker_listener(self) -> str:
        return cluster_security.BROKER_LISTENER if self.secure else BROKER_LISTENER

    def credentials(self) -> Credentials:
        """The users of a secure cluster (DIR/credentials.json).

        Raises:
            ClusterError: the file is missing or damaged.
        """
        if self._credentials is None:
            try:
                self._credentials = cluster_security.load_credentials(self.layout.root)
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise ClusterError(
                    f"{self.layout.credentials} cannot be read ({e}): the secure cluster in "
                    f"{self.layout.root} lost its credentials; start afresh in another --data-dir"
                ) from None
        return self._credentials

    def admin_security(self) -> ClientSecurityConfig | None:
        """How kraft's own clients reach the cluster: the admin's TLS and SASL from DIR/client.properties
        for a secure cluster, None (PLAINTEXT) otherwise.

        Raises:
            ClusterError: client.properties is missing or wrong.
        """
        if not self.secure:
            return None
        if self._security is None:
            try:
                self._security = cluster_security.admin_security(self.layout.root)
            except ConfigError as e:
                raise ClusterError(f"{self.layout.client_properties}: {e}") from None
        return self._security

    def admin(
        self,
        bootstrap: Sequence[Address] | None = None,
        *,
        timeout_ms: int,
        request_timeout_ms: int = 5_000,
        retry_backoff_ms: int = 100,
    ) -> AdminClient:
        """An admin client to ``bootstrap`` (default: the controllers) with the cluster's security.

        Raises:
            ClusterError: a secure cluster's client.properties is missing or wrong.
        """
        return AdminClient(
            self.bootstrap() if bootstrap is None else bootstrap,
            security=self.admin_security(),
            timeout_ms=timeout_ms,
            request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=retry_backoff_ms,
        )

    def node(self, node_id: int) -> NodeEntry:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise ClusterError(f"no node {node_id} in this cluster (nodes: {[n.id for n in self.nodes]})")

    @property
    def controllers(self) -> list[NodeEntry]:
        return [n for n in self.nodes if n.is_controller]

    @property
    def brokers(self) -> list[NodeEntry]:
        return [n for n in self.nodes if n.is_broker]

    def voters(self) -> str:
        return ",".join(f"{n.id}@{self.host}:{n.port}" for n in self.controllers)

    def bootstrap_servers_property(self) -> str:
        """``controller.quorum.bootstrap.servers`` of a dynamic quorum: every controller."""
        return ",".join(f"{self.host}:{n.port}" for n in self.controllers)

    def bootstrap(self) -> list[Address]:
        """The controllers' addresses (``--bootstrap-controller``)."""
        return [Address(self.host, n.port) for n in self.controllers if n.port is not None]

    def bootstrap_servers(self) -> list[Address]:
        """The brokers' client addresses (``--bootstrap-server``)."""
        return [Address(self.host, n.broker_port) for n in self.brokers if n.broker_port is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster_id": self.cluster_id,
            "host": self.host,
            "nodes": [
                {
                    "id": n.id,
                    "roles": list(n.roles),
                    "port": n.port,
                    "broker_port": n.broker_port,
                    "pid": n.pid,
                    "log_dir": n.log_dir,
                    "node_dir": n.node_dir,
                }
                for n in self.nodes
            ],
            "overrides": dict(self.overrides),
            "dynamic_voters": self.dynamic_voters,
            "secure": self.secure,
        }

    @staticmethod
    def load(path: Path) -> ClusterFile:
        try:
            data = json.loads(path.read_text())
            nodes = [
                NodeEntry(
                    id=int(n["id"]),
                    port=None if n.get("port") is None else int(n["port"]),
                    pid=None if n.get("pid") is None else int(n["pid"]),
                    log_dir=str(n["log_dir"]),
                    node_dir=str(n.get("node_dir") or path.parent / f"node-{int(n['id'])}"),
                    # Files written before brokers existed hold controllers only.
                    roles=tuple(str(r) for r in n.get("roles", [CONTROLLER_ROLE])),
                    broker_port=None if n.get("broker_port") is None else int(n["broker_port"]),
                )
                for n in data["nodes"]
            ]
            return ClusterFile(
                cluster_id=str(data["cluster_id"]),
                nodes=nodes,
                host=str(data.get("host", DEFAULT_HOST)),
                overrides={str(k): str(v) for k, v in data.get("overrides", {}).items()},
                dynamic_voters=bool(data.get("dynamic_voters", False)),
                secure=bool(data.get("secure", False)),
                root=path.parent,
            )
        except FileNotFoundError:
            raise ClusterError(f"{path} does not exist: no cluster was started in {path.parent}") from None
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ClusterError(
                f"{path} is not a valid cluster file ({e}); remove it to start afresh"
            ) from None

    def save(self, path: Path) -> None:
        # Atomic replace: a reader (``down`` in another shell) never sees half a file.
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        os.replace(tmp, path)


def node_properties(cluster: ClusterFile, node: NodeEntry) -> str:
    """A Kafka-style config for one node (controller, broker or both): static voters, or with
    ``dynamic_voters`` the controllers as bootstrap servers (KIP-853); a secure cluster's nodes get
    SASL_SSL listeners (``kraft.cli.cluster_security``)."""
    listeners = []
    if node.is_controller:
        listeners.append(f"{LISTENER}://{cluster.host}:{node.port}")
    if node.is_broker:
        listeners.append(f"{cluster.broker_listener}://{cluster.host}:{node.broker_port}")
    lines = [
        "# Written by `kraft cluster up`; regenerated on every start (put changes in --override).",
        f"process.roles={node.role_text}",
        f"node.id={node.id}",
        f"controller.quorum.bootstrap.servers={cluster.bootstrap_servers_property()}"
        if cluster.dynamic_voters
        else f"controller.quorum.voters={cluster.voters()}",
        f"listeners={','.join(listeners)}",
        f"controller.listener.names={LISTENER}",
        f"log.dirs={node.data_dir if node.is_broker else node.log_dir}",
        f"metadata.log.dir={node.log_dir}",
    ]
    if cluster.secure:
        lines += cluster_security.node_properties(
            cluster.layout,
            cluster.credentials(),
            node.node_dir,
            controller_listener=LISTENER,
            is_controller=node.is_controller,
            is_broker=node.is_broker,
        )
    lines += [f"{k}={v}" for k, v in cluster.overrides.items()]
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------------------------
# Operations


def random_cluster_id() -> str:
    return uuid_to_base64(random_uuid())


def format_flags(cluster: ClusterFile, node: NodeEntry, *, standalone: bool = False) -> list[str]:
    """The KIP-853 flag of ``kraft storage format`` for this node: none for a static quorum (or a
    broker-only node); ``--standalone`` for the first controller of a new dynamic quorum, else
    ``--no-initial-controllers`` (it joins as an observer and is added as a voter later)."""
    if not cluster.dynamic_voters or not node.is_controller:
        return []
    return ["--standalone"] if standalone else ["--no-initial-controllers"]


def format_node(cluster: ClusterFile, node: NodeEntry, *, standalone: bool = False) -> None:
    """``kraft storage format`` of one node, run in this process: a child process per node cost
    its interpreter start and imports (about half a second of CPU each, six per ``up`` of a 3+3
    cluster), and the users' SCRAM passwords (``--add-scram``) must not appear on a child's command
    line, where ``ps`` shows them to every user."""
    import io

    from kraft.cli import storage

    args = [
        "format",
        "--cluster-id",
        cluster.cluster_id,
        "--config",
        str(node.config_path),
        "--ignore-formatted",
        *format_flags(cluster, node, standalone=standalone),
    ]
    if cluster.secure and node.is_controller:
        args += cluster_security.scram_format_arguments(cluster.credentials())
    what = f"kraft storage format of node {node.id}"
    out, err = io.StringIO(), io.StringIO()
    try:
        status = storage.main(args, out=out, err=err)
    except SystemExit as e:  # argparse refused the arguments (a bug of this module)
        status = e.code if isinstance(e.code, int) else 2
    if status != 0:
        raise ClusterError(f"{what} failed (exit {status}): {(err.getvalue() or out.getvalue()).strip()}")


def _is_formatted(node: NodeEntry) -> bool:
    dirs = [node.log_dir, *([node.data_dir] if node.is_broker else [])]
    return all((Path(d) / "meta.properties").exists() for d in dirs)


def plan_new_cluster(
    data_dir: Path,
    controllers: int,
    base_port: int,
    overrides: dict[str, str],
    cluster_id: str = "",
    *,
    brokers: int = 0,
    combined: bool = False,
    secure: bool = False,
) -> ClusterFile:
    """Controllers 1..N, brokers N+1..N+M (or N combined nodes), ports from BASE in that order (or
    free ones for BASE 0). The caller sets the cluster id once the ports are known to be free, so a
    doomed start does not run the random-uuid tool."""
    if controllers < 1:
        raise ClusterError(f"--controllers must be at least 1, got {controllers}")
    if brokers < 0:
        raise ClusterError(f"--brokers must be at least 0, got {brokers}")
    if combined and brokers not in (0, controllers):
        raise ClusterError(
            f"--combined makes each of the {controllers} controller(s) a broker too; "
            f"--brokers {brokers} does not match (leave it out or give {controllers})"
        )
    extra_brokers = 0 if combined else brokers
    count = controllers * (2 if combined else 1) + extra_brokers
    if base_port == 0:
        ports = processes.free_ports(count, DEFAULT_HOST)
    else:
        if not 0 < base_port <= 65536 - count:
            raise ClusterError(f"--base-port {base_port} leaves no room for {count} ports below 65536")
        ports = [base_port + i for i in range(count)]
    controller_ports, broker_ports = ports[:controllers], ports[controllers:]
    nodes = []
    for i in range(1, controllers + extra_brokers + 1):
        node_dir = (data_dir / f"node-{i}").resolve()
        is_controller = i <= controllers
        roles: tuple[str, ...] = (CONTROLLER_ROLE,) if is_controller else (BROKER_ROLE,)
        if combined:
            roles = (BROKER_ROLE, CONTROLLER_ROLE)
        is_broker = BROKER_ROLE in roles
        nodes.append(
            NodeEntry(
                id=i,
                port=controller_ports[i - 1] if is_controller else None,
                pid=None,
                log_dir=str(node_dir / "metadata"),
                node_dir=str(node_dir),
                roles=roles,
                broker_port=broker_ports.pop(0) if is_broker else None,
            )
        )
    return ClusterFile(
        cluster_id=cluster_id, nodes=nodes, overrides=overrides, root=data_dir.resolve(), secure=secure
    )


def running_nodes(cluster: ClusterFile) -> list[NodeEntry]:
    """Nodes whose recorded pid still runs our server for that node."""
    return [n for n in cluster.nodes if n.pid is not None and processes.is_our_server(n.pid, n.config_path)]


def check_ports_free(cluster: ClusterFile, nodes: Sequence[NodeEntry]) -> None:
    busy = [(n, p) for n in nodes for p in n.ports if processes.port_in_use(cluster.host, p)]
    if busy:
        listing = ", ".join(f"{cluster.host}:{p} (node {n.id})" for n, p in busy)
        raise ClusterError(
            f"port(s) already in use: {listing}. Is another cluster or program using them? "
            "Stop it, or choose other ports with --base-port (0 picks free ones) and a new --data-dir."
        )


def start_node(
    cluster: ClusterFile, node: NodeEntry, supervisor_lock: Path | None = None, *, standalone: bool = False
) -> subprocess.Popen[bytes]:
    """Write the node's config, format it if it is not (``standalone``: as the only initial voter
    of a new dynamic quorum) and start it."""
    node.config_path.parent.mkdir(parents=True, exist_ok=True)
    if cluster.secure:
        cluster_security.ensure_keystore(cluster.layout, node.id, node.node_dir, cluster.host)
        # It holds the node's password (JAAS): its owner's only.
        cluster_security.write_private(node.config_path, node_properties(cluster, node))
    else:
        node.config_path.write_text(node_properties(cluster, node))
    if not _is_formatted(node):
        format_node(cluster, node, standalone=standalone)
    with open(node.server_log, "ab") as log:
        log.write(
            f"---- kraft cluster: starting node {node.id} at {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode()
        )
    child = processes.start_server(node.config_path, node.server_log, supervisor_lock)
    node.pid = child.pid
    return child


def _check_still_running(nodes: Sequence[NodeEntry], children: dict[int, subprocess.Popen[bytes]]) -> None:
    """Raises ClusterError (with the node's log tail) if the child of one of ``nodes`` has exited."""
    for node in nodes:
        child = children.get(node.pid or -1)
        if child is not None and child.poll() is not None:
            raise ClusterError(
                f"node {node.id} (pid {child.pid}) exited with code {child.returncode} during startup; "
                f"last lines of {node.server_log}:\n{processes.tail(node.server_log)}"
            )


def wait_for_leader(
    cluster: ClusterFile,
    children: dict[int, subprocess.Popen[bytes]],
    timeout_s: float,
    expected_voters: int | None = None,
) -> QuorumInfo:
    """Waits until DescribeQuorum names a leader (and, if given, that many voters).

    Raises:
        ClusterError: a node exited during startup (its log tail is shown), or the deadline passed.
    """
    deadline = time.monotonic() + timeout_s
    last_error = "no answer yet"
    while True:
        _check_still_running(cluster.nodes, children)
        remaining_ms = int((deadline - time.monotonic()) * 1000)
        if remaining_ms <= 0:
            raise ClusterError(
                f"no leader was elected within {timeout_s:.0f} s ({last_error}); see the server.log files"
            )
        client = cluster.admin(
            timeout_ms=min(1_000, remaining_ms),
            request_timeout_ms=1_000,
            retry_backoff_ms=50,
        )
        try:
            info = client.describe_quorum()
        except AdminError as e:
            last_error = str(e).splitlines()[0]
            continue
        if expected_voters is None or len(info.voters) == expected_voters:
            return info
        last_error = f"leader knows {len(info.voters)} voters, expected {expected_voters}"


def directory_id_of(node: NodeEntry) -> uuid.UUID:
    """The ``directory.id`` of the node's metadata log directory (its voter identity, KIP-853)."""
    meta = read_meta_properties(node.log_dir)
    if meta is None or meta.directory_id is None:
        raise ClusterError(f"node {node.id}: {node.log_dir} is not formatted (no directory.id)")
    return meta.directory_id


def add_missing_voters(cluster: ClusterFile, timeout_s: float, out: TextIO | None = None) -> QuorumInfo:
    """KIP-853: make every controller of ``cluster`` that is not a voter yet one, in id order
    (AddRaftVoter; the leader answers once the new set is committed, and a new controller must
    have caught up as an observer first, which the admin client waits for). Returns the final
    DescribeQuorum view."""
    client = cluster.admin(timeout_ms=int(timeout_s * 1000), request_timeout_ms=5_000)
    info = client.describe_quorum()
    voters = {v.replica_id for v in info.voters}
    for node in sorted(cluster.controllers, key=lambda n: n.id):
        if node.id in voters or node.port is None:
            continue
        directory_id = directory_id_of(node)
        endpoint = Endpoint(LISTENER, cluster.host, node.port)
        client.add_raft_voter(node.id, directory_id, [endpoint])
        if out is not None:
            print(
                f"Added controller {node.id} with directory id {uuid_to_base64(directory_id)} "
                f"and endpoints: {endpoint}",
                file=out,
            )
            out.flush()
        info = client.describe_quorum()
    return info


def unfenced_brokers(
    address: Address, timeout_s: float, security: ClientSecurityConfig | None = None
) -> set[int]:
    """The broker ids a broker's Metadata lists (Metadata lists only registered, unfenced brokers)."""
    from kraft.protocol.messages import metadata

    conn = Connection(address, timeout_s, security=security)
    try:
        version = min(12, conn.versions.get(metadata.API.key, (0, 12))[1])
        response = conn.send(metadata.API, version, metadata.REQUEST.cls(topics=[]))
    finally:
        conn.close()
    return {b.node_id for b in response.brokers}


def wait_for_brokers(
    cluster: ClusterFile, children: dict[int, subprocess.Popen[bytes]], timeout_s: float
) -> None:
    """Waits until every broker is registered and unfenced, as the brokers themselves see it.

    Raises:
        ClusterError: a broker exited during startup (its log tail is shown), or the deadline passed.
    """
    expected = {n.id for n in cluster.brokers}
    if not expected:
        return
    deadline = time.monotonic() + timeout_s
    seen: set[int] = set()
    while True:
        _check_still_running(cluster.brokers, children)
        for node in cluster.brokers:
            with contextlib.suppress(AdminError, OSError):
                seen = unfenced_brokers(node.broker_address, 1.0, cluster.admin_security())
                if expected <= seen:
                    return
        if time.monotonic() >= deadline:
            missing = ", ".join(str(i) for i in sorted(expected - seen))
            raise ClusterError(
                f"broker(s) {missing} not registered and unfenced within {timeout_s:.0f} s; "
                "see their server.log files"
            )
        time.sleep(0.1)


def create_demo_topic(cluster: ClusterFile, spec: str) -> str:
    """``NAME[:PARTITIONS[:RF]]``: create it through the brokers (unless it exists) and return its
    ``kraft topics --describe`` text. RF defaults to min(3, brokers), partitions to 3."""
    import io

    from kraft.cli import topics

    if not cluster.brokers:
        raise ClusterError("--create-topic needs brokers (--brokers M or --combined)")
    parts = spec.split(":")
    try:
        name = parts[0]
        partitions = int(parts[1]) if len(parts) > 1 else 3
        rf = int(parts[2]) if len(parts) > 2 else min(3, len(cluster.brokers))
    except ValueError:
        raise ClusterError(f"--create-topic expects NAME[:PARTITIONS[:RF]], got '{spec}'") from None
    if len(parts) > 3 or not name:
        raise ClusterError(f"--create-topic expects NAME[:PARTITIONS[:RF]], got '{spec}'")
    bootstrap = ",".join(str(a) for a in cluster.bootstrap_servers())
    base = ["--bootstrap-server", bootstrap, "--topic", name]
    if cluster.secure:
        base += ["--command-config", str(cluster.layout.client_properties)]
    out, err = io.StringIO(), io.StringIO()
    create = [*base, "--create", "--if-not-exists", "--partitions", str(partitions)]
    if topics.main([*create, "--replication-factor", str(rf)], out, err=err) != 0:
        raise ClusterError(f"creating topic {name} failed: {err.getvalue().strip()}")
    # Every broker is up: leaders re-add returning replicas to the ISR within a heartbeat or two.
    # Give that a few seconds, so the view printed is the settled one (an unsettled one is printed
    # as it is: a slow ISR is worth seeing).
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        lagging = io.StringIO()
        if topics.main([*base, "--describe", "--under-replicated-partitions"], lagging, err=err) != 0:
            break
        if not lagging.getvalue().strip():
            break
        time.sleep(0.2)
    described = io.StringIO()
    if topics.main([*base, "--describe"], described, err=err) != 0:
        raise ClusterError(f"describing topic {name} failed: {err.getvalue().strip()}")
    return (out.getvalue() + described.getvalue()).rstrip("\n")


def _kraft_command() -> str:
    """How the user ran ``kraft``: ``kraft`` when that is the one on PATH, else the path used
    (``make run`` runs ``.venv/bin/kraft``, which another terminal needs spelled out)."""
    invoked = sys.argv[0] if sys.argv else ""
    if os.path.basename(invoked) != "kraft":
        return "kraft"
    on_path = shutil.which("kraft")
    if on_path is not None and os.path.realpath(on_path) == os.path.realpath(invoked):
        return "kraft"
    return invoked


def data_tools_hint(cluster: ClusterFile, topic: str) -> str:
    """How to produce to and consume from ``topic``: kraft's console tools and kcat, with the
    brokers' addresses (and, for a secure cluster, the admin's client files)."""
    bootstrap = ",".join(str(a) for a in cluster.bootstrap_servers())
    kraft = _kraft_command()
    server = f"--bootstrap-server {bootstrap} --topic {topic}"
    kcat = f"kcat -b {bootstrap}"
    if cluster.secure:
        server += f" --command-config {cluster.layout.client_properties}"
        kcat += f" -F {cluster.layout.librdkafka_properties}"
    return "\n".join(
        [
            f"Produce to and consume from {topic} (one record per line; Ctrl-D ends the producer, Ctrl-C "
            "the consumer):",
            f"  {kraft} console-producer {server}",
            f"  {kraft} console-consumer {server} --from-beginning",
            f"  {kraft} get-offsets {server}",
            "or with kcat:",
            f"  {kcat} -t {topic} -P",
            f"  {kcat} -t {topic} -C -o beginning",
        ]
    )


def secure_usage_text(cluster: ClusterFile) -> str:
    """How to reach a secure cluster with kraft's tools, kafka-python, confluent-kafka and kcat. The
    admin's password is never printed: it is in the 0600 client files named here."""
    layout = cluster.layout
    credentials = cluster.credentials()
    user, ca = credentials.admin_user, layout.ca_certificate
    kraft = _kraft_command()
    servers = ",".join(str(a) for a in cluster.bootstrap_servers())
    controllers = ",".join(str(a) for a in cluster.bootstrap())
    config = f"--command-config {layout.client_properties}"
    lines = [
        f"Secured: every listener is SASL_SSL (TLS; the CA is {ca}). Clients log in with "
        f"{cluster_security.MECHANISM} as {user} (a super user; the StandardAuthorizer is on).",
        f"{user}'s password (PASSWORD below) is only in {layout.client_properties} (Kafka's client "
        f"properties) and {layout.librdkafka_properties} (librdkafka's), both mode 0600.",
        "  kraft's tools (as Kafka's: --command-config):",
        f"    {kraft} metadata-quorum --bootstrap-controller {controllers} {config} describe --status",
    ]
    if cluster.brokers:
        lines += [
            f"    {kraft} topics --bootstrap-server {servers} {config} --list",
            f"    {kraft} console-producer --bootstrap-server {servers} --topic TOPIC {config}",
            f"    {kraft} console-consumer --bootstrap-server {servers} --topic TOPIC --from-beginning "
            f"{config}",
            "  kafka-python:",
            f'    KafkaProducer(bootstrap_servers="{servers}", security_protocol="SASL_SSL", '
            f'ssl_cafile="{ca}",',
            f'                  sasl_mechanism="{cluster_security.MECHANISM}", '
            f'sasl_plain_username="{user}", sasl_plain_password=PASSWORD)',
            "  confluent-kafka:",
            f'    Producer({{"bootstrap.servers": "{servers}", "security.protocol": "SASL_SSL", '
            f'"ssl.ca.location": "{ca}",',
            f'              "sasl.mechanism": "{cluster_security.MECHANISM}", "sasl.username": "{user}", '
            '"sasl.password": PASSWORD})',
            "  kcat (SCRAM needs librdkafka 2.6.1 or later: older ones repeat the client nonce, which "
            "Kafka 4.x and kraft refuse):",
            f"    kcat -b {servers} -X security.protocol=SASL_SSL "
            f"-X sasl.mechanisms={cluster_security.MECHANISM} -X sasl.username={user} "
            f"-X sasl.password=PASSWORD -X ssl.ca.location={ca} -L",
            f"    kcat -b {servers} -F {layout.librdkafka_properties} -L   "
            "(the same -X settings, from the file)",
        ]
    return "\n".join(lines)


def _settled(info: QuorumInfo) -> bool:
    """The leader knows its high watermark and every voter has fetched up to it."""
    return info.high_watermark >= 0 and all(v.log_end_offset >= info.high_watermark for v in info.voters)


def wait_until_settled(cluster: ClusterFile, info: QuorumInfo, timeout_s: float) -> QuorumInfo:
    """Best effort: right after an election the leader does not know the high watermark yet and
    followers have not fetched, so the first status would show -1s. Waits up to ``timeout_s`` for a
    settled view, else returns the latest one (a slow follower is worth seeing, not hiding)."""
    deadline = time.monotonic() + timeout_s
    while not _settled(info) and time.monotonic() < deadline:
        time.sleep(0.05)
        with contextlib.suppress(AdminError):
            info = cluster.admin(timeout_ms=1_000, request_timeout_ms=1_000).describe_quorum()
    return info


def quorum_status_text(cluster: ClusterFile, info: QuorumInfo | None = None) -> str:
    client = cluster.admin(timeout_ms=10_000)
    if info is None:
        info = client.describe_quorum()
    try:
        cluster_id = client.cluster_id()
    except AdminError:
        cluster_id = cluster.cluster_id  # the server may not serve DescribeCluster; we formatted it
    return format_status(cluster_id, info)


def _endpoints_text(cluster: ClusterFile) -> str:
    combined = sum(1 for n in cluster.nodes if n.is_broker and n.is_controller)
    counts = [f"{len(cluster.controllers)} controller(s)"]
    if cluster.brokers:
        counts.append(f"{len(cluster.brokers)} broker(s)" + (f", {combined} combined" if combined else ""))
    lines = [f"Cluster {cluster.cluster_id}: {', '.join(counts)}"]
    for n in cluster.nodes:
        listeners = []
        if n.is_controller:
            listeners.append(f"{LISTENER}://{cluster.host}:{n.port}")
        if n.is_broker:
            listeners.append(f"{cluster.broker_listener}://{cluster.host}:{n.broker_port}")
        lines.append(f"  node {n.id} ({n.role_text}): {' '.join(listeners)}  pid {n.pid}  log {n.server_log}")
    lines.append(f"Bootstrap: --bootstrap-controller {','.join(str(a) for a in cluster.bootstrap())}")
    if cluster.brokers:
        lines.append(f"           --bootstrap-server {','.join(str(a) for a in cluster.bootstrap_servers())}")
    return "\n".join(lines)


# -------------------------------------------------------------------------------------------------
# Commands


def _parse_overrides(items: Sequence[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ClusterError(f"--override expects KEY=VALUE, got '{item}'")
        overrides[key.strip()] = value.strip()
    return overrides


def cmd_up(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    data_dir = Path(ns.data_dir).resolve()
    path = data_dir / CLUSTER_FILE
    overrides = _parse_overrides(ns.override or [])
    if path.exists():
        cluster = ClusterFile.load(path)
        if ns.controllers is not None and ns.controllers != len(cluster.controllers):
            raise ClusterError(
                f"{path} describes {len(cluster.controllers)} controller(s) but --controllers "
                f"{ns.controllers} was given; use another --data-dir for a different cluster"
            )
        if ns.brokers is not None and ns.brokers != len(cluster.brokers):
            raise ClusterError(
                f"{path} describes {len(cluster.brokers)} broker(s) but --brokers "
                f"{ns.brokers} was given; use another --data-dir for a different cluster"
            )
        if ns.dynamic_voters and not cluster.dynamic_voters:
            raise ClusterError(
                f"{path} describes a cluster with static voters (controller.quorum.voters); "
                "--dynamic-voters conflicts; use another --data-dir for a dynamic quorum"
            )
        combined = any(n.is_broker and n.is_controller for n in cluster.nodes)
        if ns.combined and not combined:
            raise ClusterError(f"{path} describes separate controllers and brokers; --combined conflicts")
        if ns.secure and not cluster.secure:
            raise ClusterError(
                f"{path} describes a PLAINTEXT cluster (started without --secure); --secure conflicts: "
                "use another --data-dir for a secure cluster"
            )
        if cluster.secure and not ns.secure:
            raise ClusterError(
                f"{path} describes a secure cluster (SASL_SSL listeners); restart it with "
                f"'kraft cluster up --secure --data-dir {ns.data_dir}', or use another --data-dir for a "
                "PLAINTEXT one"
            )
        first_port = cluster.controllers[0].port
        if ns.base_port is not None and ns.base_port not in (0, first_port):
            raise ClusterError(f"{path} uses ports from {first_port}; --base-port {ns.base_port} conflicts")
        alive = running_nodes(cluster)
        if alive:
            pids = ", ".join(f"node {n.id} pid {n.pid}" for n in alive)
            raise ClusterError(
                f"the cluster in {data_dir} is already running ({pids}); stop it with "
                f"'kraft cluster down --data-dir {ns.data_dir}'"
            )
        stale = [n for n in cluster.nodes if n.pid is not None]
        if stale:
            print(f"Restarting cluster {cluster.cluster_id} (recorded pids are no longer running).", file=out)
        if overrides:
            cluster.overrides = overrides
    else:
        if data_dir.exists() and any(data_dir.glob("node-*")):
            raise ClusterError(
                f"{data_dir} has node directories but no {CLUSTER_FILE}; "
                "remove them or choose another --data-dir"
            )
        controllers = ns.controllers if ns.controllers is not None else 3
        cluster = plan_new_cluster(
            data_dir,
            controllers,
            ns.base_port if ns.base_port is not None else DEFAULT_BASE_PORT,
            overrides,
            brokers=ns.brokers if ns.brokers is not None else (controllers if ns.combined else 0),
            combined=ns.combined,
            secure=ns.secure,
        )
        cluster.dynamic_voters = ns.dynamic_voters
    # A new dynamic quorum starts from its first controller alone (kraft storage format --standalone).
    new_cluster = not path.exists()
    check_ports_free(cluster, cluster.nodes)
    if not cluster.cluster_id:
        cluster.cluster_id = random_cluster_id()
    data_dir.mkdir(parents=True, exist_ok=True)
    if cluster.secure and new_cluster:
        cluster_security.create(data_dir)  # the CA, the users' passwords, the admin's client files
    elif cluster.secure:
        cluster_security.ensure_client_files(cluster.layout, cluster.credentials())

    children: dict[int, subprocess.Popen[bytes]] = {}
    stop_requested = threading.Event()
    # Foreground: the nodes watch this lock and stop when this process ends, even by kill -9.
    lock_path = None if ns.detach else data_dir / supervisor_lock.LOCK_FILE
    try:
        lock = None if lock_path is None else supervisor_lock.hold(lock_path)
    except supervisor_lock.SupervisorLockHeld:
        raise ClusterError(
            f"another `kraft cluster up` is running in the foreground on {data_dir}; stop it first"
        ) from None
    if lock is None:
        lock_path = None
    previous_handlers = _install_stop_handlers(stop_requested) if not ns.detach else {}
    try:
        first_controller = min(n.id for n in cluster.controllers)
        for node in cluster.nodes:
            standalone = new_cluster and cluster.dynamic_voters and node.id == first_controller
            child = start_node(cluster, node, lock_path, standalone=standalone)
            children[child.pid] = child
        cluster.save(path)
        if cluster.dynamic_voters:
            # KIP-853: a leader first (the standalone controller), then the others join as voters.
            wait_for_leader(cluster, children, ns.wait_timeout_s)
            add_missing_voters(cluster, ns.wait_timeout_s, out)
        info = wait_for_leader(cluster, children, ns.wait_timeout_s, expected_voters=len(cluster.controllers))
        if cluster.brokers:
            wait_for_brokers(cluster, children, ns.wait_timeout_s)
            with contextlib.suppress(AdminError):  # a view that lists the brokers as observers
                info = cluster.admin(timeout_ms=5_000).describe_quorum()
        info = wait_until_settled(cluster, info, timeout_s=10.0)
        print(_endpoints_text(cluster), file=out)
        print("", file=out)
        print(quorum_status_text(cluster, info), file=out)
        if cluster.secure:
            print("", file=out)
            print(secure_usage_text(cluster), file=out)
        if ns.create_topic:
            print("", file=out)
            print(create_demo_topic(cluster, ns.create_topic), file=out)
            print("", file=out)
            print(data_tools_hint(cluster, ns.create_topic.split(":")[0]), file=out)
        out.flush()
        if ns.detach:
            print(f"\nDetached. Stop with: kraft cluster down --data-dir {ns.data_dir}", file=out)
            return 0
        print("\nRunning; press Ctrl-C to stop all nodes.", file=out)
        out.flush()
        _watch(cluster, path, children, stop_requested, out)
    except BaseException:
        # Failed start (or Ctrl-C during it): leave nothing running behind.
        _stop_all(cluster, path, children, ns.stop_timeout_s, out=None)
        if lock is not None:
            lock.close()
        raise
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)
    try:
        print("Stopping all nodes...", file=out)
        _stop_all(cluster, path, children, ns.stop_timeout_s, out=out)
    finally:
        if lock is not None:
            lock.close()
    return 0


def _install_stop_handlers(event: threading.Event) -> dict[int, Any]:
    def handler(_signum: int, _frame: FrameType | None) -> None:
        event.set()

    previous: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handler)
    return previous


def _watch(
    cluster: ClusterFile,
    path: Path,
    children: dict[int, subprocess.Popen[bytes]],
    stop_requested: threading.Event,
    out: TextIO,
) -> None:
    """Reports nodes that exit until a stop is requested (nodes restarted by ``start-node`` are
    picked up from cluster.json)."""
    reported: set[int] = set()
    while not stop_requested.wait(0.5):
        for child in children.values():
            if child.pid not in reported and child.poll() is not None:
                reported.add(child.pid)
                node = next((n for n in cluster.nodes if n.pid == child.pid), None)
                name = f"node {node.id}" if node else "a node"
                print(
                    f"{time.strftime('%H:%M:%S')} {name} (pid {child.pid}) "
                    f"exited with code {child.returncode}",
                    file=out,
                )
                out.flush()
        with contextlib.suppress(ClusterError):
            latest = ClusterFile.load(path)
            for n in latest.nodes:
                current = cluster.node(n.id)
                if n.pid != current.pid and n.pid is not None:
                    print(f"{time.strftime('%H:%M:%S')} node {n.id} restarted as pid {n.pid}", file=out)
                    out.flush()
                current.pid = n.pid


def _current_leader(cluster: ClusterFile) -> int | None:
    """The leader's id, if a quick DescribeQuorum finds one (stopping must not hang on it)."""
    try:
        return cluster.admin(timeout_ms=1_000, request_timeout_ms=500).describe_quorum().leader_id
    except (AdminError, OSError, ClusterError):
        return None


def stop_leader_last(
    cluster: ClusterFile,
    pids: Sequence[int],
    timeout_s: float,
    children: dict[int, subprocess.Popen[bytes]] | None = None,
) -> processes.StopReport:
    """SIGTERM the brokers, wait for them, then the controller followers, then the leader.

    A follower stops at once (it knows the leader). Stopping the leader last keeps its
    EndQuorumEpoch from turning a follower that is about to stop into a candidate that then waits
    out its own shutdown timeout for an election nobody can win; alone, the leader sees its peers
    refuse connections and stops without waiting for a successor. Without a known leader every pid
    is signalled at once.
    """
    leader = _current_leader(cluster)
    leader_pid = next((n.pid for n in cluster.nodes if n.id == leader), None)
    # Broker-only nodes first: their controlled shutdown needs the controllers.
    broker_pids = {n.pid for n in cluster.nodes if n.is_broker and not n.is_controller}
    brokers = [p for p in pids if p in broker_pids]
    first = [p for p in pids if p != leader_pid and p not in broker_pids]
    last = [p for p in pids if p == leader_pid]
    reports = [
        processes.stop_processes(group, timeout_s=timeout_s, children=children)
        for group in (brokers, first, last)
        if group
    ]
    return processes.StopReport(
        terminated=tuple(p for r in reports for p in r.terminated),
        killed=tuple(p for r in reports for p in r.killed),
        already_gone=tuple(p for r in reports for p in r.already_gone),
    )


def _stop_all(
    cluster: ClusterFile,
    path: Path,
    children: dict[int, subprocess.Popen[bytes]],
    timeout_s: float,
    out: TextIO | None,
) -> None:
    with contextlib.suppress(ClusterError):
        latest = ClusterFile.load(path)
        for n in latest.nodes:
            cluster.node(n.id).pid = n.pid
    pids = {n.pid for n in running_nodes(cluster)} | {c.pid for c in children.values() if c.poll() is None}
    report = stop_leader_last(cluster, sorted(p for p in pids if p is not None), timeout_s, children)
    for n in cluster.nodes:
        n.pid = None
    if path.parent.exists():
        cluster.save(path)
    if out is not None:
        print(
            f"Stopped {len(report.terminated)} node(s) cleanly"
            + (f", killed {len(report.killed)} after {timeout_s:.0f} s" if report.killed else "")
            + ".",
            file=out,
        )


def cmd_down(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path, cluster = _load_cluster(ns)
    ours = running_nodes(cluster)
    for n in cluster.nodes:
        if n.pid is not None and n not in ours:
            print(
                f"node {n.id}: pid {n.pid} is not running our server any more (stale); skipping it", file=err
            )
    if not ours:
        print(f"No node of the cluster in {path.parent} is running.", file=out)
    else:
        report = stop_leader_last(cluster, [n.pid for n in ours if n.pid is not None], ns.stop_timeout_s)
        print(
            f"Stopped node(s) {', '.join(str(n.id) for n in ours)}"
            + (
                f" (killed pids {list(report.killed)} after {ns.stop_timeout_s:.0f} s)"
                if report.killed
                else ""
            )
            + ".",
            file=out,
        )
    for n in cluster.nodes:
        n.pid = None
    cluster.save(path)
    return 0


def cmd_status(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    cluster = ClusterFile.load(Path(ns.data_dir).resolve() / CLUSTER_FILE)
    client = cluster.admin(timeout_ms=ns.timeout_ms)
    info = client.describe_quorum()
    if ns.json:
        try:
            cluster_id: str | None = client.cluster_id()
        except AdminError:
            cluster_id = cluster.cluster_id
        print(json.dumps(to_json(cluster_id, info, time.time_ns() // 1_000_000), indent=2), file=out)
    elif ns.replication:
        print(format_replication(info, time.time_ns() // 1_000_000, human_readable=True), file=out)
    else:
        print(quorum_status_text(cluster, info), file=out)
    return 0


def _load_cluster(ns: argparse.Namespace) -> tuple[Path, ClusterFile]:
    """The cluster file under ``--data-dir`` (its path, to save it again) and what it holds."""
    path = Path(ns.data_dir).resolve() / CLUSTER_FILE
    return path, ClusterFile.load(path)


def cmd_stop_node(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path, cluster = _load_cluster(ns)
    node = cluster.node(ns.id)
    if node.pid is None or not processes.is_our_server(node.pid, node.config_path):
        raise ClusterError(f"node {node.id} is not running")
    if ns.kill:  # --clean (SIGTERM: controlled shutdown, resignation) is the default
        os.kill(node.pid, signal.SIGKILL)
        processes.wait_for_exit([node.pid], time.monotonic() + 5, {})
        print(f"Killed node {node.id} (pid {node.pid}) with SIGKILL.", file=out)
    else:
        processes.stop_processes([node.pid], timeout_s=ns.stop_timeout_s)
        print(f"Stopped node {node.id} (pid {node.pid}).", file=out)
    node.pid = None
    cluster.save(path)
    return 0


def cmd_start_node(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path, cluster = _load_cluster(ns)
    node = cluster.node(ns.id)
    if node.pid is not None and processes.is_our_server(node.pid, node.config_path):
        raise ClusterError(f"node {node.id} is already running as pid {node.pid}")
    check_ports_free(cluster, [node])
    # A node started into a foreground cluster ends with it, like the ones it started.
    lock_path = path.parent / supervisor_lock.LOCK_FILE
    child = start_node(cluster, node, lock_path if supervisor_lock.is_held(lock_path) else None)
    cluster.save(path)
    print(f"Started node {node.id} as pid {child.pid} (log {node.server_log}).", file=out)
    return 0


def _require_dynamic(cluster: ClusterFile, path: Path, command: str) -> None:
    if not cluster.dynamic_voters:
        raise ClusterError(
            f"the cluster in {path.parent} has static voters (controller.quorum.voters); {command} needs "
            "a dynamic quorum (start one with `kraft cluster up --dynamic-voters`)"
        )


def cmd_add_node(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Start one more controller as an observer and add it to the voter set (KIP-853)."""
    path, cluster = _load_cluster(ns)
    _require_dynamic(cluster, path, "add-node")
    if not running_nodes(cluster):
        raise ClusterError(
            f"no node of the cluster in {path.parent} is running; start it with `kraft cluster up`"
        )
    # Never reuse the id of a removed node: its directory (and its voter identity) is still there.
    used = {n.id for n in cluster.nodes}
    for d in path.parent.glob("node-*"):
        with contextlib.suppress(ValueError):
            used.add(int(d.name.removeprefix("node-")))
    node_id = max(used) + 1
    port = ns.port if ns.port else processes.free_ports(1, cluster.host)[0]
    node_dir = (path.parent / f"node-{node_id}").resolve()
    if node_dir.exists():
        raise ClusterError(f"{node_dir} exists already; remove it or choose another --data-dir")
    node = NodeEntry(
        id=node_id, port=port, pid=None, log_dir=str(node_dir / "metadata"), node_dir=str(node_dir)
    )
    check_ports_free(cluster, [node])
    cluster.nodes.append(node)
    lock_path = path.parent / supervisor_lock.LOCK_FILE
    child = start_node(cluster, node, lock_path if supervisor_lock.is_held(lock_path) else None)
    cluster.save(path)
    print(f"Started node {node_id} as pid {child.pid} (log {node.server_log}).", file=out)
    out.flush()
    try:
        add_missing_voters(cluster, ns.wait_timeout_s, out)
    except (AdminError, ClusterError):
        # Leave nothing half-done: the node would stay an observer nobody lists.
        processes.stop_processes([child.pid], timeout_s=ns.stop_timeout_s, children={child.pid: child})
        cluster.nodes.remove(node)
        cluster.save(path)
        print(f"Stopped node {node_id} again; its directory {node_dir} is left as it is.", file=err)
        raise
    return 0


def cmd_remove_node(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Remove a controller from the voter set (KIP-853), then stop it and forget it."""
    path, cluster = _load_cluster(ns)
    _require_dynamic(cluster, path, "remove-node")
    node = cluster.node(ns.id)
    if not node.is_controller:
        raise ClusterError(f"node {node.id} is not a controller; remove-node removes voters")
    if len(cluster.controllers) == 1:
        raise ClusterError(f"node {node.id} is the only controller; a quorum needs at least one voter")
    directory_id = directory_id_of(node)
    others = [Address(cluster.host, n.port) for n in cluster.controllers if n.id != node.id and n.port]
    client = cluster.admin(others, timeout_ms=int(ns.wait_timeout_s * 1000), request_timeout_ms=5_000)
    client.remove_raft_voter(node.id, directory_id)
    print(f"Removed  KRaft controller {node.id} with directory id {uuid_to_base64(directory_id)}", file=out)
    if node.pid is not None and processes.is_our_server(node.pid, node.config_path):
        processes.stop_processes([node.pid], timeout_s=ns.stop_timeout_s)
        print(
            f"Stopped node {node.id} (pid {node.pid}); its directory {node.node_dir} is left as it is.",
            file=out,
        )
    cluster.nodes.remove(node)
    cluster.save(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kraft cluster", description="Run a local cluster of KRaft controllers."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def data_dir(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", default="./data", help="cluster directory (default: %(default)s)")

    def stop_timeout(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--stop-timeout-s",
            type=float,
            default=10.0,
            help="wait this long after SIGTERM before SIGKILL (default: %(default)s)",
        )

    up = sub.add_parser("up", help="format (first time), start the nodes and wait for a leader")
    up.add_argument("--controllers", type=int, default=None, help="number of controllers (default: 3)")
    up.add_argument("--brokers", type=int, default=None, help="number of brokers (default: 0)")
    up.add_argument(
        "--combined",
        action="store_true",
        help="every controller is a broker too (process.roles=broker,controller)",
    )
    up.add_argument(
        "--dynamic-voters",
        action="store_true",
        help="KIP-853: voters in the metadata log (controller.quorum.bootstrap.servers); the first "
        "controller starts alone (--standalone) and the others are added as voters",
    )
    up.add_argument(
        "--secure",
        action="store_true",
        help="secure every listener the way Kafka runs in production: SASL_SSL with a throwaway CA and "
        "one certificate per node (under DIR/tls), SCRAM-SHA-512 logins (an admin user, whose client "
        "properties go to DIR/client.properties, mode 0600, for --command-config) and ACLs "
        "(StandardAuthorizer, the admin a super user)",
    )
    up.add_argument(
        "--create-topic",
        metavar="NAME[:PARTITIONS[:RF]]",
        help="once the brokers are up, create this topic (unless it exists) and describe it",
    )
    data_dir(up)
    up.add_argument(
        "--base-port",
        type=int,
        default=None,
        help=f"node i listens on BASE+i-1 (default: {DEFAULT_BASE_PORT}; 0 = pick free ports)",
    )
    up.add_argument(
        "--detach", action="store_true", help="return once the quorum has a leader and the brokers are up"
    )
    up.add_argument(
        "--override",
        action="append",
        metavar="KEY=VALUE",
        help="extra server property for every node (repeatable), e.g. controller.quorum.fetch.timeout.ms=500",
    )
    up.add_argument(
        "--wait-timeout-s", type=float, default=60.0, help="leader election deadline (default: %(default)s)"
    )
    stop_timeout(up)

    down = sub.add_parser("down", help="stop a running cluster (by the pids in cluster.json)")
    data_dir(down)
    stop_timeout(down)

    status = sub.add_parser("status", help="describe the quorum of the cluster in DIR")
    data_dir(status)
    status.add_argument("--replication", action="store_true", help="the replication table instead")
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.add_argument("--timeout-ms", type=int, default=10_000)

    stop_node = sub.add_parser("stop-node", help="stop one node (SIGTERM, or SIGKILL with --kill)")
    stop_node.add_argument("--id", type=int, required=True)
    how = stop_node.add_mutually_exclusive_group()
    how.add_argument(
        "--clean",
        action="store_true",
        help="SIGTERM (the default): a broker runs controlled shutdown, a leader resigns",
    )
    how.add_argument("--kill", action="store_true", help="kill -9: no controlled shutdown, no resignation")
    data_dir(stop_node)
    stop_timeout(stop_node)

    start = sub.add_parser("start-node", help="start one stopped node again")
    start.add_argument("--id", type=int, required=True)
    data_dir(start)

    def wait_timeout(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--wait-timeout-s",
            type=float,
            default=60.0,
            help="give up when the voter change is not committed by then (default: %(default)s)",
        )

    add_node = sub.add_parser(
        "add-node", help="start one more controller and add it to the voters (--dynamic-voters clusters)"
    )
    add_node.add_argument("--port", type=int, default=0, help="its controller port (default: a free one)")
    data_dir(add_node)
    wait_timeout(add_node)
    stop_timeout(add_node)

    remove_node = sub.add_parser(
        "remove-node", help="remove a controller from the voters, then stop it (--dynamic-voters clusters)"
    )
    remove_node.add_argument("--id", type=int, required=True)
    data_dir(remove_node)
    wait_timeout(remove_node)
    stop_timeout(remove_node)
    return parser


_COMMANDS = {
    "up": cmd_up,
    "down": cmd_down,
    "status": cmd_status,
    "stop-node": cmd_stop_node,
    "start-node": cmd_start_node,
    "add-node": cmd_add_node,
    "remove-node": cmd_remove_node,
}


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = streams(out, err)
    ns = parse_args(build_parser(), argv)
    if isinstance(ns, int):
        return ns
    try:
        return _COMMANDS[ns.command](ns, out, err)
    except (ClusterError, AdminError) as e:
        print(f"kraft cluster {ns.command}: {e}", file=err)
        return 1
    except KeyboardInterrupt:
        print(f"kraft cluster {ns.command}: interrupted", file=err)
        return 130


if __name__ == "__main__":
    sys.exit(main())
