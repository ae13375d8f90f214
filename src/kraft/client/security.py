"""How kraft's tools reach a secured listener: Kafka's client properties (``--command-config``).

The properties are Kafka's own (``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``,
``ssl.truststore.location``/``ssl.truststore.type=PEM``, ``ssl.keystore.location`` for a client
certificate, ``ssl.endpoint.identification.algorithm``, ``ssl.enabled.protocols``,
``ssl.cipher.suites``; the ``ssl.*`` ones read by ``kraft.net.tls_properties``, as a listener's
are), so one ``client.properties`` serves ``kafka-topics.sh --command-config`` and
``kraft topics --command-config`` alike. Mechanisms:
PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (the credentials come from the JAAS config's ``username``
and ``password``).
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from kraft.common.errors import ConfigError
from kraft.net.tls import client_context
from kraft.net.tls_properties import tls_settings
from kraft.security.jaas import parse_jaas_config

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Every property ``client_security`` reads (a tool warns about the others it does not know).
PROPERTIES = (
    "security.protocol",
    "sasl.mechanism",
    "sasl.jaas.config",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.key.password",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.certificates",
    "ssl.enabled.protocols",
    "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm",
)


@dataclass(frozen=True, slots=True)
class ClientSecurityConfig:
    """What a ``Connection`` does after TCP connect: TLS (``ssl_context``), then a SASL login."""

    protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)


def client_security(props: Mapping[str, str]) -> ClientSecurityConfig:
    """The security of a client with these properties.

    Raises:
        ConfigError: an unknown protocol or mechanism, a SASL protocol without a JAAS config naming
            ``username`` and ``password``, or PEM files that do not load (naming the property).
    """
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ConfigError(f"security.protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    context = None
    if protocol in ("SSL", "SASL_SSL"):
        context = client_context(tls_settings(props))
    if not protocol.startswith("SASL"):
        return ClientSecurityConfig(protocol, context)
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper()
    if mechanism not in MECHANISMS:
        raise ConfigError(
            f"sasl.mechanism: kraft's tools log in with {', '.join(MECHANISMS)}, not {mechanism}"
        )
    text = props.get("sasl.jaas.config")
    if text is None:
        raise ConfigError(f"sasl.jaas.config: {protocol} needs a JAAS config with username and password")
    entry = parse_jaas_config(text, "sasl.jaas.config")
    username, password = entry.option("username"), entry.option("password")
    if username is None or password is None:
        raise ConfigError("sasl.jaas.config: the login module must name username and password")
    return ClientSecurityConfig(protocol, context, mechanism, username, password)
