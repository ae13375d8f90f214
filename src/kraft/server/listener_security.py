"""Each listener's security (protocol, TLS, SASL) and the node's own credentials for its outbound
connections, read from Kafka's property names with Kafka's per-listener overrides.

Lookup rule (Kafka's ``ListenerName.configPrefix``): a listener's ``<prop>`` is
``listener.name.<listener in lower case>.<prop>`` if set, else ``<prop>``; a mechanism's JAAS config
is ``listener.name.<listener>.<mechanism in lower case>.sasl.jaas.config``, else ``sasl.jaas.config``.
KIP-684: ``ssl.client.auth`` applies to a SASL_SSL listener only when set with the listener prefix.

Two steps: ``parse_*`` is pure (properties -> settings, JAAS parsed, every error a ``ConfigError``
naming its property), called by ``parse_server_config``; ``build_*`` reads the PEM files and makes
the TLS contexts, called once at start-up by ``KraftServer``. What it must not do: accept a SASL
mechanism it cannot serve (GSSAPI, OAUTHBEARER), or let a node start without the credentials its
own connections to a SASL listener need.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kraft.common.config import get_str
from kraft.common.errors import ConfigError
from kraft.net.channel import ClientSecurity
from kraft.net.server import ListenerAuth
from kraft.net.tls import TlsSettings, client_context, server_context
from kraft.net.tls_properties import listener_prefix, lookup, tls_settings
from kraft.security.jaas import SCRAM_LOGIN_MODULE, JaasEntry, parse_jaas_config
from kraft.security.plain import PlainServer, PlainUsers
from kraft.security.sasl import (
    PLAIN,
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    SaslServer,
    SaslServerFactory,
    mechanism_factory,
)

PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL = "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"
TLS_PROTOCOLS = frozenset({SSL, SASL_SSL})
SASL_PROTOCOLS = frozenset({SASL_PLAINTEXT, SASL_SSL})
# What kraft's listeners can serve; Kafka's default (sasl.enabled.mechanisms=GSSAPI) is not one.
SUPPORTED_MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512)
KAFKA_DEFAULT_MECHANISM = "GSSAPI"
# Mechanisms the node logs in with on its own connections. Towards a controller listener PLAIN only,
# as in Kafka: SCRAM credentials live in the metadata log, which the node has not read yet.
CONTROLLER_OUTBOUND_MECHANISMS = (PLAIN,)
INTER_BROKER_OUTBOUND_MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512)
CONTROLLER_MECHANISM_PROP = "sasl.mechanism.controller.protocol"
INTER_BROKER_MECHANISM_PROP = "sasl.mechanism.inter.broker.protocol"


def _jaas(props: Mapping[str, str], listener: str, mechanism: str) -> tuple[str, JaasEntry | None]:
    prefixed = f"{listener_prefix(listener)}{mechanism.lower()}.sasl.jaas.config"
    for prop in (prefixed, "sasl.jaas.config"):
        text = get_str(props, prop)
        if text is not None:
            return prop, parse_jaas_config(text, prop)
    return prefixed, None


@dataclass(frozen=True, slots=True, kw_only=True)
class ListenerSecurityConfig:
    """What one listener demands of its clients (parsed, no file read yet)."""

    listener: str
    protocol: str
    tls: TlsSettings | None = None
    enabled_mechanisms: tuple[str, ...] = ()
    plain_users: PlainUsers | None = None

    @property
    def sasl(self) -> bool:
        return self.protocol in SASL_PROTOCOLS


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboundSecurityConfig:
    """How this node connects to ``listener`` on other nodes (parsed, no file read yet)."""

    listener: str
    protocol: str
    tls: TlsSettings | None = None
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None


def parse_listener_security(props: Mapping[str, str], listener: str, protocol: str) -> ListenerSecurityConfig:
    if protocol not in SASL_PROTOCOLS:
        tls = tls_settings(props, listener) if protocol in TLS_PROTOCOLS else None
        return ListenerSecurityConfig(listener=listener, protocol=protocol, tls=tls)
    prop, value = lookup(props, listener, "sasl.enabled.mechanisms")
    mechanisms = tuple(m.strip() for m in (value or KAFKA_DEFAULT_MECHANISM).split(",") if m.strip())
    unsupported = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
    if unsupported or not mechanisms:
        what = ", ".join(unsupported) if unsupported else "(none)"
        hint = " (Kafka's default, GSSAPI)" if value is None else ""
        raise ConfigError(
            f"{prop}: {what}{hint} is not supported on {protocol} listener {listener}; "
            f"use {', '.join(SUPPORTED_MECHANISMS)}"
        )
    plain_users = None
    if PLAIN in mechanisms:
        jaas_prop, entry = _jaas(props, listener, PLAIN)
        if entry is None:
            raise ConfigError(
                f"{jaas_prop}: listener {listener} enables PLAIN but has no JAAS config with its users "
                '(PlainLoginModule required user_alice="...";)'
            )
        plain_users = PlainUsers.from_jaas(entry, jaas_prop)
    tls = tls_settings(props, listener, sasl=True) if protocol in TLS_PROTOCOLS else None
    return ListenerSecurityConfig(
        listener=listener,
        protocol=protocol,
        tls=tls,
        enabled_mechanisms=mechanisms,
        plain_users=plain_users,
    )


def parse_outbound_security(
    props: Mapping[str, str], listener: str, protocol: str, *, controller: bool
) -> OutboundSecurityConfig:
    """The node's own side of a connection to ``listener`` (a controller listener when
    ``controller``, else the inter-broker listener)."""
    tls = tls_settings(props, listener) if protocol in TLS_PROTOCOLS else None
    if protocol not in SASL_PROTOCOLS:
        return OutboundSecurityConfig(listener=listener, protocol=protocol, tls=tls)
    prop = CONTROLLER_MECHANISM_PROP if controller else INTER_BROKER_MECHANISM_PROP
    mechanism = get_str(props, prop, KAFKA_DEFAULT_MECHANISM) or KAFKA_DEFAULT_MECHANISM
    usable = CONTROLLER_OUTBOUND_MECHANISMS if controller else INTER_BROKER_OUTBOUND_MECHANISMS
    if mechanism not in usable:
        why = (
            " (SCRAM credentials live in the metadata log, which a node reads from the controllers)"
            if controller and mechanism in SUPPORTED_MECHANISMS
            else ""
        )
        raise ConfigError(
            f"{prop}: this node connects to {protocol} listener {listener} with {mechanism}, which kraft "
            f"cannot use for its own connections there{why}; set {prop} to {' or '.join(usable)}"
        )
    jaas_prop, entry = _jaas(props, listener, mechanism)
    username, password = None, None
    if entry is not None and mechanism == PLAIN:
        users = PlainUsers.from_jaas(entry, jaas_prop)
        username, password = users.username, users.password
    elif entry is not None:
        if entry.login_module != SCRAM_LOGIN_MODULE:
            raise ConfigError(
                f"{jaas_prop}: {mechanism} needs {SCRAM_LOGIN_MODULE}, not {entry.login_module}"
            )
        username, password = entry.option("username"), entry.option("password")
    if not username or password is None:
        raise ConfigError(
            f'{jaas_prop}: the node\'s own username and password (username="..." password="...") are '
            f"needed for its connections to {protocol} listener {listener}"
        )
    return OutboundSecurityConfig(
        listener=listener,
        protocol=protocol,
        tls=tls,
        mechanism=mechanism,
        username=username,
        password=password,
    )


def plain_factory(
    config: ListenerSecurityConfig, extra: Mapping[str, SaslServerFactory] | None = None
) -> SaslServerFactory:
    """The listener's ``SaslServerFactory``: PLAIN from its JAAS users; ``extra`` mechanisms (SCRAM,
    from the metadata image, once written) are plugged in by name."""
    users = config.plain_users.users if config.plain_users is not None else {}
    makers: dict[str, Callable[[], SaslServer]] = {}
    if config.plain_users is not None:
        makers[PLAIN] = lambda: PlainServer(users)
    base = mechanism_factory(config.enabled_mechanisms, makers)
    enabled = set(config.enabled_mechanisms)

    def create(mechanism: str) -> SaslServer | None:
        if extra is not None and mechanism in extra and mechanism in enabled:
            return extra[mechanism](mechanism)
        return base(mechanism)

    return create


def build_listener_auth(
    config: ListenerSecurityConfig, extra: Mapping[str, SaslServerFactory] | None = None
) -> ListenerAuth:
    """Read the listener's PEM files and make what ``KafkaServer.listen`` takes."""
    ctx = server_context(config.tls) if config.tls is not None else None
    if not config.sasl:
        return ListenerAuth(ssl_context=ctx)
    return ListenerAuth(
        ssl_context=ctx,
        sasl=True,
        enabled_mechanisms=config.enabled_mechanisms,
        sasl_factory=plain_factory(config, extra),
    )


def build_client_security(config: OutboundSecurityConfig) -> ClientSecurity | None:
    """What ``PeerConnection`` needs to reach ``config.listener``; None for PLAINTEXT."""
    if config.tls is None and config.mechanism is None:
        return None
    return ClientSecurity(
        ssl_context=client_context(config.tls) if config.tls is not None else None,
        sasl_mechanism=config.mechanism,
        username=config.username,
        password=config.password,
    )
