"""Kafka's ``ssl.*`` properties read into ``TlsSettings``: the one place that reads them.

Both sides read through here: a listener (``kraft.server.listener_security``, with Kafka's
per-listener override ``listener.name.<listener in lower case>.<prop>`` winning over ``<prop>``) and
a client of kraft's tools (``kraft.client.security``, ``--command-config``: the plain names only).
What it must not do: read a file or build a context (``kraft.net.tls`` does, at start-up or when a
tool connects); every value stays as the properties hold it, checked later by ``kraft.net.tls``.
"""

from __future__ import annotations

from collections.abc import Mapping

from kraft.common.config import get_str
from kraft.net.tls import DEFAULT_ENABLED_PROTOCOLS, TlsSettings


def listener_prefix(listener: str) -> str:
    return f"listener.name.{listener.lower()}."


def lookup(props: Mapping[str, str], listener: str | None, name: str) -> tuple[str, str | None]:
    """(the property name that supplied the value, the value) for ``name`` on ``listener``: the
    listener-prefixed property if set, else the plain one. ``listener`` None: the plain one only."""
    if listener is not None:
        prefixed = listener_prefix(listener) + name
        value = get_str(props, prefixed)
        if value is not None:
            return prefixed, value
    return name, get_str(props, name)


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip()) if text else ()


def tls_settings(props: Mapping[str, str], listener: str | None = None, *, sasl: bool = False) -> TlsSettings:
    """``ssl.*`` of ``listener`` (each from its listener-prefixed property if set), or of a client
    when ``listener`` is None.

    ``sasl``: the listener is SASL_SSL, where only a listener-prefixed ``ssl.client.auth`` applies
    (KIP-684). An empty ``ssl.endpoint.identification.algorithm`` turns host-name checks off.
    """

    def get(name: str, default: str | None = None) -> str | None:
        return lookup(props, listener, name)[1] or default

    prefix = "" if listener is None else listener_prefix(listener)
    prefixed_any = bool(prefix) and any(k.startswith(prefix + "ssl.") for k in props)
    client_auth = get("ssl.client.auth", "none")
    if sasl and listener is not None:  # KIP-684
        client_auth = get_str(props, prefix + "ssl.client.auth", "none")
    protocols = get("ssl.enabled.protocols")
    endpoint = get_str(props, prefix + "ssl.endpoint.identification.algorithm") if prefix else None
    if endpoint is None:  # set but empty: off (get_str would read it as unset)
        endpoint = props.get("ssl.endpoint.identification.algorithm", "https").strip()
    return TlsSettings(
        prefix=prefix if prefixed_any else "",
        keystore_type=get("ssl.keystore.type", "PEM") or "PEM",
        keystore_location=get("ssl.keystore.location"),
        keystore_certificate_chain=get("ssl.keystore.certificate.chain"),
        keystore_key=get("ssl.keystore.key"),
        key_password=get("ssl.key.password"),
        truststore_type=get("ssl.truststore.type", "PEM") or "PEM",
        truststore_location=get("ssl.truststore.location"),
        truststore_certificates=get("ssl.truststore.certificates"),
        client_auth=(client_auth or "none").lower(),
        enabled_protocols=_names(protocols) if protocols else DEFAULT_ENABLED_PROTOCOLS,
        cipher_suites=_names(get("ssl.cipher.suites")),
        endpoint_identification_algorithm=endpoint,
    )
