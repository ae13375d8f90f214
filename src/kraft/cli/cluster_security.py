"""``kraft cluster up --secure``: the files and the properties of a secured local cluster.

Layout under the cluster directory DIR (private files have mode 0600)::

    tls/ca.pem                the throwaway CA's certificate: the truststore of every node and client
    tls/ca-key.pem            its private key (0600), kept to sign the certificate of a node added later
    node-<id>/server.pem      the node's key and certificate (0600); subjectAltName localhost, 127.0.0.1
    credentials.json          the nodes' own user and the admin user, with their passwords (0600)
    client.properties         the admin's client properties in Kafka's names (0600): --command-config
    librdkafka.properties     the same in librdkafka's names (0600): kcat -F, confluent-kafka

How the nodes are secured, the way Kafka is run in production:

* every listener is SASL_SSL: TLS with the node's certificate, then a SASL login;
* the brokers' listener (``SASL_SSL``, also the inter-broker listener) enables SCRAM-SHA-512 only.
  The admin's credential and the nodes' own are written into the metadata log at format time
  (``kraft storage format --add-scram``: a salted hash, never the password); brokers fetch from each
  other logging in with SCRAM-SHA-512 as the node user;
* the controller listener enables PLAIN, which the nodes log in with (as in Kafka, a SCRAM
  credential cannot be used there: it lives in the metadata log, which a node reads from the
  controllers), and SCRAM-SHA-512, for the admin's tools (``--bootstrap-controller``);
* the StandardAuthorizer, with the admin and the node user as super users: other users need ACLs.

Passwords come from ``secrets``. They appear only in the 0600 files above and in each node's
server.properties (written 0600 by ``kraft.cli.cluster``), never on a command line or in output.
What this module must not do: start or stop anything, or decide whether a directory is secure
(``cluster.json`` says so; ``kraft.cli.cluster`` checks it).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kraft.client.security import ClientSecurityConfig

ADMIN_USER = "admin"
NODE_USER = "kraft-node"
MECHANISM = "SCRAM-SHA-512"
NODE_MECHANISM = "PLAIN"  # the nodes' login on the controller listener
SECURITY_PROTOCOL = "SASL_SSL"
BROKER_LISTENER = "SASL_SSL"  # the brokers' client and inter-broker listener
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
PRIVATE = 0o600
# The names every node's certificate carries (subjectAltName), so that clients verify the host.
NODE_HOSTS = ("localhost", "127.0.0.1")


def _password() -> str:
    # URL-safe base64 (A-Z a-z 0-9 - _): nothing to quote in JAAS, --add-scram or a properties file.
    return secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class Credentials:
    """The users of a secure cluster: the nodes' own and the admin's (a super user)."""

    node_user: str
    node_password: str = field(repr=False)
    admin_user: str
    admin_password: str = field(repr=False)

    @classmethod
    def random(cls) -> Credentials:
        return cls(NODE_USER, _password(), ADMIN_USER, _password())

    def to_json(self) -> dict[str, dict[str, str]]:
        return {
            "node": {"username": self.node_user, "password": self.node_password},
            "admin": {"username": self.admin_user, "password": self.admin_password},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[str, str]]) -> Credentials:
        node, admin = data["node"], data["admin"]
        return cls(
            str(node["username"]), str(node["password"]), str(admin["username"]), str(admin["password"])
        )


@dataclass(frozen=True, slots=True)
class SecureLayout:
    """Where a secure cluster's files are, under its directory ``root``."""

    root: Path

    @property
    def tls_dir(self) -> Path:
        return self.root / "tls"

    @property
    def ca_certificate(self) -> Path:
        return self.tls_dir / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.tls_dir / "ca-key.pem"

    @property
    def credentials(self) -> Path:
        return self.root / "credentials.json"

    @property
    def client_properties(self) -> Path:
        return self.root / "client.properties"

    @property
    def librdkafka_properties(self) -> Path:
        return self.root / "librdkafka.properties"

    @staticmethod
    def keystore(node_dir: str | Path) -> Path:
        return Path(node_dir) / "server.pem"


def write_private(path: Path, data: str | bytes) -> None:
    """Writes ``data`` to ``path`` readable by its owner only (0600, also when it existed), through a
    temporary file so that a reader never sees half of it."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE)
    try:
        os.fchmod(fd, PRIVATE)  # O_CREAT's mode is not applied to a file that existed
        os.write(fd, data.encode() if isinstance(data, str) else data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _properties_text(props: Mapping[str, str], comment: str) -> str:
    # Backslash is the properties files' escape character; nothing else here needs one.
    lines = [f"# {comment}"] + [f"{k}={v.replace(chr(92), chr(92) * 2)}" for k, v in props.items()]
    return "\n".join(lines) + "\n"


def jaas(module: str, username: str, password: str, users: Mapping[str, str] | None = None) -> str:
    """A ``sasl.jaas.config`` value: ``MODULE required username="..." password="..." [user_X="..."];``"""
    options = [f'username="{username}"', f'password="{password}"']
    options += [f'user_{name}="{secret}"' for name, secret in (users or {}).items()]
    return f"{module} required {' '.join(options)};"


def client_properties(layout: SecureLayout, credentials: Credentials) -> dict[str, str]:
    """The admin's client properties, in Kafka's names (``--command-config``, kafka-*.sh)."""
    return {
        "security.protocol": SECURITY_PROTOCOL,
        "sasl.mechanism": MECHANISM,
        "sasl.jaas.config": jaas(SCRAM_LOGIN_MODULE, credentials.admin_user, credentials.admin_password),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(layout.ca_certificate),
    }


def librdkafka_properties(layout: SecureLayout, credentials: Credentials) -> dict[str, str]:
    """The same settings in librdkafka's names (kcat ``-F``, confluent-kafka's config dict)."""
    return {
        "security.protocol": SECURITY_PROTOCOL,
        "sasl.mechanisms": MECHANISM,
        "sasl.username": credentials.admin_user,
        "sasl.password": credentials.admin_password,
        "ssl.ca.location": str(layout.ca_certificate),
    }


def write_client_files(layout: SecureLayout, credentials: Credentials, *, only_missing: bool = False) -> None:
    """client.properties and librdkafka.properties (``only_missing``: those that do not exist)."""
    files = (
        (
            layout.client_properties,
            client_properties(layout, credentials),
            "Written by `kraft cluster up --secure`: the admin's client properties (--command-config).",
        ),
        (
            layout.librdkafka_properties,
            librdkafka_properties(layout, credentials),
            "Written by `kraft cluster up --secure`: the admin's settings for librdkafka (kcat -F).",
        ),
    )
    for path, props, comment in files:
        if not (only_missing and path.exists()):
            write_private(path, _properties_text(props, comment))


def ensure_client_files(layout: SecureLayout, credentials: Credentials) -> None:
    """Writes the admin's client files again if they were removed (a restart)."""
    write_client_files(layout, credentials, only_missing=True)


def create(root: Path) -> Credentials:
    """A new CA, random credentials and the admin's client files under ``root`` (which exists)."""
    from kraft.cli import local_ca

    layout = SecureLayout(root)
    layout.tls_dir.mkdir(mode=0o700, exist_ok=True)
    ca = local_ca.new_ca(f"kraft local cluster CA ({root.name})")
    write_private(layout.ca_key, ca.key)
    layout.ca_certificate.write_bytes(ca.certificate)  # public: clients anywhere on the host read it
    credentials = Credentials.random()
    write_private(layout.credentials, json.dumps(credentials.to_json(), indent=2) + "\n")
    write_client_files(layout, credentials)
    return credentials


def load_credentials(root: Path) -> Credentials:
    """Raises:
    OSError: the file cannot be read. ValueError, KeyError: it does not hold the credentials.
    """
    return Credentials.from_json(json.loads(SecureLayout(root).credentials.read_text()))


def ensure_keystore(layout: SecureLayout, node_id: int, node_dir: str | Path, host: str) -> Path:
    """The node's key and certificate, made if missing: signed by the cluster's CA for
    ``localhost``, ``127.0.0.1`` and ``host`` (the address in its listeners)."""
    from kraft.cli import local_ca

    path = layout.keystore(node_dir)
    if not path.exists():
        ca = local_ca.Pem(layout.ca_key.read_bytes(), layout.ca_certificate.read_bytes())
        hosts = list(dict.fromkeys([*NODE_HOSTS, host]))
        issued = local_ca.issue(ca, f"kraft node {node_id}", hosts)
        Path(node_dir).mkdir(parents=True, exist_ok=True)
        write_private(path, issued.keystore)
    return path


def node_properties(
    layout: SecureLayout,
    credentials: Credentials,
    node_dir: str | Path,
    *,
    controller_listener: str,
    is_controller: bool,
    is_broker: bool,
) -> list[str]:
    """The security lines of one node's server.properties (``key=value``)."""
    node, secret = credentials.node_user, credentials.node_password
    controller = controller_listener.lower()
    broker = BROKER_LISTENER.lower()
    # The controllers accept the nodes' PLAIN login from this JAAS user list; a node reads its own
    # username and password for its connections to the controllers from the same entry.
    users = {node: secret} if is_controller else None
    props = {
        "listener.security.protocol.map": f"{controller_listener}:SASL_SSL,{BROKER_LISTENER}:SASL_SSL",
        f"listener.name.{controller}.plain.sasl.jaas.config": jaas(PLAIN_LOGIN_MODULE, node, secret, users),
        "sasl.mechanism.controller.protocol": NODE_MECHANISM,
    }
    if is_controller:
        props[f"listener.name.{controller}.sasl.enabled.mechanisms"] = f"{NODE_MECHANISM},{MECHANISM}"
    if is_broker:
        props |= {
            "inter.broker.listener.name": BROKER_LISTENER,
            f"listener.name.{broker}.sasl.enabled.mechanisms": MECHANISM,
            "sasl.mechanism.inter.broker.protocol": MECHANISM,
            f"listener.name.{broker}.{MECHANISM.lower()}.sasl.jaas.config": jaas(
                SCRAM_LOGIN_MODULE, node, secret
            ),
        }
    props |= {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(layout.keystore(node_dir)),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(layout.ca_certificate),
        "authorizer.class.name": AUTHORIZER,
        "super.users": f"User:{credentials.admin_user};User:{node}",
    }
    return [f"{k}={v}" for k, v in props.items()]


def scram_format_arguments(credentials: Credentials) -> list[str]:
    """``kraft storage format`` arguments that put both users' SCRAM-SHA-512 credentials into the
    bootstrap metadata (Kafka's ``--add-scram``)."""
    return [
        arg
        for user, password in (
            (credentials.admin_user, credentials.admin_password),
            (credentials.node_user, credentials.node_password),
        )
        for arg in ("--add-scram", f"{MECHANISM}=[name={user},password={password}]")
    ]


def admin_security(root: Path) -> ClientSecurityConfig:
    """The admin's TLS and SASL, read from ``root``'s client.properties as ``--command-config``
    reads it.

    Raises:
        ConfigError: the file is missing, or a setting in it is wrong (the property is named).
    """
    from kraft.client.security import client_security
    from kraft.common.config import load_properties

    return client_security(load_properties(SecureLayout(root).client_properties))
