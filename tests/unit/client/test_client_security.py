"""``--command-config``: Kafka's client properties read into TLS and SASL settings, with the property
named in every refusal."""

from __future__ import annotations

import ssl

import pytest
from tls_certs import session_pki

from kraft.client.security import client_security
from kraft.common.errors import ConfigError

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="pw";'


def test_plaintext_by_default_and_sasl_ssl_with_scram() -> None:
    assert client_security({}).protocol == "PLAINTEXT" and client_security({}).ssl_context is None
    pki = session_pki()
    config = client_security(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": JAAS,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": pki.path("ca.pem"),
        }
    )
    assert (config.protocol, config.mechanism, config.username, config.password) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "alice",
        "pw",
    )
    assert isinstance(config.ssl_context, ssl.SSLContext)
    assert config.ssl_context.verify_mode == ssl.CERT_REQUIRED and config.ssl_context.check_hostname
    assert "pw" not in repr(config)


@pytest.mark.parametrize(
    "props, names",
    [
        ({"security.protocol": "TLS"}, "security.protocol"),
        ({"security.protocol": "SASL_PLAINTEXT"}, "sasl.mechanism"),  # Kafka's default GSSAPI
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config"),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;",
            },
            "username and password",
        ),
        ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/ca.pem"}, "ssl.truststore"),
    ],
)
def test_bad_settings_are_refused_naming_the_property(props: dict[str, str], names: str) -> None:
    with pytest.raises(ConfigError, match=names.replace(".", r"\.")):
        client_security(props)


def test_tls_protocols_and_cipher_suites_are_read_as_a_listener_reads_them() -> None:
    ca = session_pki().path("ca.pem")
    base = {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca}
    only_13 = client_security({**base, "ssl.enabled.protocols": "TLSv1.3"}).ssl_context
    assert only_13 is not None
    assert (only_13.minimum_version, only_13.maximum_version) == (ssl.TLSVersion.TLSv1_3,) * 2
    one_suite = client_security({**base, "ssl.cipher.suites": "ECDHE-ECDSA-AES128-GCM-SHA256"}).ssl_context
    assert one_suite is not None
    tls12 = [c["name"] for c in one_suite.get_ciphers() if c["protocol"] == "TLSv1.2"]
    assert tls12 == ["ECDHE-ECDSA-AES128-GCM-SHA256"]
    with pytest.raises(ConfigError, match=r"^ssl\.enabled\.protocols: TLSv1\.1 is refused"):
        client_security({**base, "ssl.enabled.protocols": "TLSv1.1,TLSv1.2"})
    with pytest.raises(ConfigError, match=r"^ssl\.cipher\.suites: no usable cipher suite"):
        client_security({**base, "ssl.cipher.suites": "NO-SUCH-CIPHER"})
    # A listener's prefix means nothing to a client: only the plain names are read.
    prefixed = client_security({**base, "listener.name.x.ssl.enabled.protocols": "TLSv1.3"}).ssl_context
    assert prefixed is not None and prefixed.minimum_version == ssl.TLSVersion.TLSv1_2
