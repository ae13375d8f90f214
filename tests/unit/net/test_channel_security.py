"""The node's own outbound connections to secured listeners: TLS and SASL (PLAIN, SCRAM-SHA-512) with
its credentials before any request; refused credentials or an untrusted server fail the connection."""

from __future__ import annotations

import asyncio
import logging
import random
import ssl
from typing import Any

import pytest
from tls_certs import session_pki

from kraft.common.principal import KafkaPrincipal
from kraft.metadata.image import MetadataImage
from kraft.metadata.scram import ScramImage, ScramMechanism
from kraft.net.channel import AuthenticationFailedError, ClientSecurity, PeerAddress, PeerConnection
from kraft.net.server import InboundRequest, KafkaServer, ListenerAuth
from kraft.net.tls import TlsSettings, client_context, server_context
from kraft.node.listeners import BROKER_LISTENER_APIS
from kraft.protocol.messages import metadata
from kraft.security.plain import PlainServer
from kraft.security.sasl import PLAIN, mechanism_factory
from kraft.security.scram import credential_from_password, scram_server_factory

SCRAM_SHA_512 = ScramMechanism.SCRAM_SHA_512

pytestmark = pytest.mark.timeout(60)


class Recorder:
    def __init__(self) -> None:
        self.principals: list[KafkaPrincipal] = []

    async def handle(self, request: InboundRequest) -> Any:
        self.principals.append(request.principal)
        return metadata.RESPONSE.cls(brokers=[], cluster_id="c", controller_id=1, topics=[])


def _build(version: int) -> Any:
    return metadata.REQUEST.cls(topics=[], allow_auto_topic_creation=False)


def run(
    auth: ListenerAuth, security: ClientSecurity | None
) -> tuple[list[KafkaPrincipal], BaseException | None, KafkaServer]:
    async def main() -> tuple[list[KafkaPrincipal], BaseException | None, KafkaServer]:
        handler = Recorder()
        server = KafkaServer(apis=dict(BROKER_LISTENER_APIS), handler=handler, max_request_bytes=1 << 20)
        port = await server.listen("INTERNAL", "127.0.0.1", 0, auth=auth)
        conn = PeerConnection(
            "node 2",
            PeerAddress("127.0.0.1", port),
            apis=dict(BROKER_LISTENER_APIS),
            client_id="t",
            connect_timeout_ms=3000,
            security=security,
        )
        error: BaseException | None = None
        try:
            await conn.call(metadata.API, _build, 3000)
        except Exception as e:
            error = e
        conn.close()
        await server.close()
        return handler.principals, error, server

    return asyncio.run(main())


def sasl_listener(ctx: ssl.SSLContext | None = None) -> ListenerAuth:
    factory = mechanism_factory([PLAIN], {PLAIN: lambda: PlainServer({"broker": "broker-secret"})})
    return ListenerAuth(ssl_context=ctx, sasl=True, enabled_mechanisms=(PLAIN,), sasl_factory=factory)


def test_node_logs_in_with_its_plain_credentials_before_its_first_request() -> None:
    principals, error, _ = run(
        sasl_listener(), ClientSecurity(sasl_mechanism=PLAIN, username="broker", password="broker-secret")
    )
    assert error is None
    assert principals == [KafkaPrincipal("User", "broker")]


def test_node_over_tls_and_sasl() -> None:
    pki = session_pki()
    server_ctx = server_context(TlsSettings(keystore_location=pki.path("server.pem")))
    client_ctx = client_context(TlsSettings(truststore_location=pki.path("ca.pem")))
    security = ClientSecurity(
        ssl_context=client_ctx, sasl_mechanism=PLAIN, username="broker", password="broker-secret"
    )
    principals, error, _ = run(sasl_listener(server_ctx), security)
    assert error is None and principals == [KafkaPrincipal("User", "broker")]


def test_node_with_wrong_password_is_refused_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="kraft.net.channel"):
        principals, error, server = run(
            sasl_listener(), ClientSecurity(sasl_mechanism=PLAIN, username="broker", password="guess")
        )
    assert isinstance(error, AuthenticationFailedError)
    assert principals == [] and server.stats.authentications_failed == 1
    assert any("refused our PLAIN credentials" in r.getMessage() for r in caplog.records)


def test_node_without_sasl_is_not_served_by_a_sasl_listener() -> None:
    principals, error, _ = run(sasl_listener(), None)
    assert error is not None and principals == []


def test_node_refuses_a_server_certificate_it_does_not_trust() -> None:
    pki = session_pki()
    rogue = server_context(TlsSettings(keystore_location=pki.path("rogue-server.pem")))
    client_ctx = client_context(TlsSettings(truststore_location=pki.path("ca.pem")))
    principals, error, _ = run(ListenerAuth(ssl_context=rogue), ClientSecurity(ssl_context=client_ctx))
    assert isinstance(error, AuthenticationFailedError) and principals == []


def scram_listener(ctx: ssl.SSLContext | None = None) -> ListenerAuth:
    """A SCRAM-SHA-512 listener whose image holds user ``broker`` (password ``broker-secret``)."""
    credential = credential_from_password(
        SCRAM_SHA_512, "broker-secret", random_bytes=random.Random(3).randbytes
    )
    image = MetadataImage(scram=ScramImage({SCRAM_SHA_512: {"broker": credential}}))
    factory = scram_server_factory(lambda: image, ["SCRAM-SHA-512"], random.Random(4))
    return ListenerAuth(
        ssl_context=ctx, sasl=True, enabled_mechanisms=("SCRAM-SHA-512",), sasl_factory=factory
    )


def test_node_logs_in_with_scram_sha_512_over_tls_before_its_first_request() -> None:
    pki = session_pki()
    server_ctx = server_context(TlsSettings(keystore_location=pki.path("server.pem")))
    client_ctx = client_context(TlsSettings(truststore_location=pki.path("ca.pem")))
    security = ClientSecurity(
        ssl_context=client_ctx, sasl_mechanism="SCRAM-SHA-512", username="broker", password="broker-secret"
    )
    principals, error, _ = run(scram_listener(server_ctx), security)
    assert error is None and principals == [KafkaPrincipal("User", "broker")]


def test_node_with_a_wrong_scram_password_is_refused_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    security = ClientSecurity(sasl_mechanism="SCRAM-SHA-512", username="broker", password="guess")
    with caplog.at_level(logging.ERROR, logger="kraft.net.channel"):
        principals, error, server = run(scram_listener(), security)
    assert isinstance(error, AuthenticationFailedError)
    assert principals == [] and server.stats.authentications_failed == 1
    assert any("refused our SCRAM-SHA-512 credentials" in r.getMessage() for r in caplog.records)
