"""Listener security from Kafka's properties: the protocol map, per-listener overrides, JAAS users,
the node's own credentials, connection limits, and the start-up errors naming the property."""

from __future__ import annotations

import pytest
from tls_certs import session_pki

from kraft.common.errors import ConfigError
from kraft.server.config import parse_server_config
from kraft.server.listener_security import build_client_security, build_listener_auth

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="broker" password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";'
)
BASE = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": "1@127.0.0.1:9093",
    "controller.listener.names": "CONTROLLER",
    "listeners": "CONTROLLER://127.0.0.1:9093,INTERNAL://127.0.0.1:9094,EXTERNAL://127.0.0.1:9095",
    "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT,INTERNAL:SASL_SSL,EXTERNAL:SSL",
    "inter.broker.listener.name": "INTERNAL",
    "sasl.enabled.mechanisms": "PLAIN",
    "sasl.mechanism.controller.protocol": "PLAIN",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "listener.name.controller.plain.sasl.jaas.config": PLAIN_JAAS,
    "listener.name.internal.plain.sasl.jaas.config": PLAIN_JAAS,
    "log.dirs": "/data/a",
}


def tls(props: dict[str, str]) -> dict[str, str]:
    pki = session_pki()
    return {
        **props,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": pki.path("server.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": pki.path("ca.pem"),
    }


def test_parses_each_listener_protocol_mechanisms_and_the_node_credentials() -> None:
    cfg = parse_server_config({**BASE, "listener.name.external.ssl.client.auth": "required"})
    sec = cfg.listener_security
    assert {n: s.protocol for n, s in sec.items()} == {
        "CONTROLLER": "SASL_PLAINTEXT",
        "INTERNAL": "SASL_SSL",
        "EXTERNAL": "SSL",
    }
    assert cfg.security_protocols == {"CONTROLLER": 2, "INTERNAL": 3, "EXTERNAL": 1}
    assert sec["CONTROLLER"].enabled_mechanisms == ("PLAIN",)
    assert sec["CONTROLLER"].plain_users is not None
    assert dict(sec["CONTROLLER"].plain_users.users) == {"broker": "broker-secret", "alice": "alice-secret"}
    assert sec["EXTERNAL"].tls is not None and sec["EXTERNAL"].tls.client_auth == "required"
    assert sec["EXTERNAL"].tls.prefix == "listener.name.external."
    assert sec["CONTROLLER"].tls is None
    out = cfg.outbound_security
    assert set(out) == {"CONTROLLER", "INTERNAL"} and cfg.inter_broker_listener == "INTERNAL"
    assert (out["CONTROLLER"].mechanism, out["CONTROLLER"].username, out["CONTROLLER"].tls) == (
        "PLAIN",
        "broker",
        None,
    )
    assert out["INTERNAL"].tls is not None and out["INTERNAL"].password == "broker-secret"


SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="node" password="pw";'


def test_the_inter_broker_login_may_be_scram_but_the_controller_login_stays_plain() -> None:
    scram = {
        **BASE,
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.internal.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
    }
    out = parse_server_config(scram).outbound_security
    assert (out["INTERNAL"].mechanism, out["INTERNAL"].username, out["INTERNAL"].password) == (
        "SCRAM-SHA-512",
        "node",
        "pw",
    )
    assert out["CONTROLLER"].mechanism == "PLAIN"
    with pytest.raises(ConfigError, match=r"^sasl\.mechanism\.controller\.protocol: .*metadata log"):
        parse_server_config({**scram, "sasl.mechanism.controller.protocol": "SCRAM-SHA-512"})
    plain_module = {**scram, "listener.name.internal.scram-sha-512.sasl.jaas.config": PLAIN_JAAS}
    with pytest.raises(ConfigError, match=r"^listener\.name\.internal\.scram-sha-512\.sasl\.jaas\.config: "):
        parse_server_config(plain_module)


def test_kip_684_ssl_client_auth_applies_to_sasl_ssl_only_with_the_listener_prefix() -> None:
    cfg = parse_server_config({**BASE, "ssl.client.auth": "required"})
    internal, external = cfg.listener_security["INTERNAL"].tls, cfg.listener_security["EXTERNAL"].tls
    assert internal is not None and internal.client_auth == "none"
    assert external is not None and external.client_auth == "required"
    cfg = parse_server_config({**BASE, "listener.name.internal.ssl.client.auth": "requested"})
    assert cfg.listener_security["INTERNAL"].tls.client_auth == "requested"  # type: ignore[union-attr]


def test_builds_contexts_and_factories_from_pem_files() -> None:
    cfg = parse_server_config(tls(BASE))
    internal = build_listener_auth(cfg.listener_security["INTERNAL"])
    assert internal.ssl_context is not None and internal.sasl and internal.sasl_factory is not None
    assert internal.sasl_factory("PLAIN") is not None and internal.sasl_factory("SCRAM-SHA-256") is None
    external = build_listener_auth(cfg.listener_security["EXTERNAL"])
    assert external.ssl_context is not None and not external.sasl
    client = build_client_security(cfg.outbound_security["INTERNAL"])
    assert client is not None and client.ssl_context is not None and client.username == "broker"
    assert build_client_security(cfg.outbound_security["CONTROLLER"]).ssl_context is None  # type: ignore[union-attr]


def test_an_extra_mechanism_registered_later_is_served_when_enabled() -> None:
    cfg = parse_server_config({**BASE, "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512"})
    extra: dict[str, object] = {}
    auth = build_listener_auth(cfg.listener_security["CONTROLLER"], extra)  # type: ignore[arg-type]
    assert auth.sasl_factory is not None and auth.sasl_factory("SCRAM-SHA-512") is None
    sentinel = object()
    extra["SCRAM-SHA-512"] = lambda name: sentinel
    assert auth.sasl_factory("SCRAM-SHA-512") is sentinel  # the seam SCRAM plugs into


def test_connection_limits_parse() -> None:
    cfg = parse_server_config(
        {
            **BASE,
            "max.connections": "100",
            "max.connections.per.ip": "10",
            "max.connections.per.ip.overrides": "127.0.0.1:50,host-a:0",
        }
    )
    assert (cfg.max_connections, cfg.max_connections_per_ip) == (100, 10)
    assert dict(cfg.max_connections_per_ip_overrides) == {"127.0.0.1": 50, "host-a": 0}


@pytest.mark.parametrize(
    ("changes", "property_name", "text"),
    [
        ({"sasl.enabled.mechanisms": None}, "sasl.enabled.mechanisms", "GSSAPI"),
        ({"sasl.enabled.mechanisms": "OAUTHBEARER"}, "sasl.enabled.mechanisms", "OAUTHBEARER"),
        (
            {"listener.name.internal.plain.sasl.jaas.config": None},
            "listener.name.internal.plain.sasl.jaas.config",
            "users",
        ),
        ({"sasl.mechanism.controller.protocol": None}, "sasl.mechanism.controller.protocol", "GSSAPI"),
        (
            {"listener.name.controller.plain.sasl.jaas.config": PLAIN_JAAS.replace('username="broker" ', "")},
            "listener.name.controller.plain.sasl.jaas.config",
            "own username and password",
        ),
        (
            {"listener.name.controller.plain.sasl.jaas.config": "Plain required"},
            "listener.name.controller",
            "end with",
        ),
        ({"inter.broker.listener.name": "NOPE"}, "inter.broker.listener.name", "NOPE"),
        ({"max.connections.per.ip.overrides": "nohost"}, "max.connections.per.ip.overrides", "host:count"),
    ],
)
def test_config_errors_name_the_property(
    changes: dict[str, str | None], property_name: str, text: str
) -> None:
    props = dict(BASE)
    for key, value in changes.items():
        if value is None:
            props.pop(key, None)
        else:
            props[key] = value
    with pytest.raises(ConfigError) as info:
        parse_server_config(props)
    assert str(info.value).startswith(property_name) and text in str(info.value), str(info.value)


@pytest.mark.parametrize(
    ("changes", "property_name", "text"),
    [
        ({"ssl.keystore.location": "/no/such.pem"}, "ssl.keystore.location", "does not exist"),
        ({"ssl.keystore.location": "mismatch.pem"}, "ssl.keystore.location", "does not match"),
        ({"ssl.keystore.location": "server-encrypted.pem"}, "ssl.key.password", "encrypted"),
        ({"ssl.keystore.type": "JKS"}, "ssl.keystore.type", "only PEM"),
        ({"ssl.enabled.protocols": "TLSv1.1,TLSv1.2"}, "ssl.enabled.protocols", "TLS 1.2 is the minimum"),
        (
            {"listener.name.external.ssl.client.auth": "required", "ssl.truststore.location": None},
            "listener.name.external.ssl.truststore.location",
            "truststore",
        ),
        ({"ssl.keystore.location": None}, "ssl.keystore.location", "needs a key and certificate"),
    ],
)
def test_start_up_errors_name_the_property(
    changes: dict[str, str | None], property_name: str, text: str
) -> None:
    pki = session_pki()
    props = tls(BASE)
    for key, value in changes.items():
        if value is None:
            props.pop(key, None)
        else:
            props[key] = pki.path(value) if value.endswith(".pem") and not value.startswith("/") else value
    with pytest.raises(ConfigError) as info:
        cfg = parse_server_config(props)
        for security in cfg.listener_security.values():
            build_listener_auth(security)
        for outbound in cfg.outbound_security.values():
            build_client_security(outbound)
    assert str(info.value).startswith(property_name) and text in str(info.value), str(info.value)
