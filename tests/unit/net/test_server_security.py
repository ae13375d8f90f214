"""KafkaServer with TLS and SASL on its listeners, in process: who gets served, with which
principal, and what is refused (and how it is logged). Real TLS (Python's ``ssl``) with throwaway
certificates; raw Kafka frames for SASL so that every step is visible."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import ssl
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tls_certs import CLIENT_DN, Pki, session_pki

from kraft.common.errors import ConfigError
from kraft.common.principal import ANONYMOUS, KafkaPrincipal
from kraft.net.limits import ConnectionLimiter
from kraft.net.server import InboundRequest, KafkaServer, ListenerAuth
from kraft.net.tls import KeystoreReloader, TlsSettings, server_context
from kraft.node.listeners import BROKER_LISTENER_APIS
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import api_versions, metadata, sasl_authenticate, sasl_handshake
from kraft.security.plain import PlainServer, client_token
from kraft.security.sasl import PLAIN, mechanism_factory

pytestmark = pytest.mark.timeout(60)


class Recorder:
    """Answers Metadata; remembers every request it was handed."""

    def __init__(self) -> None:
        self.seen: list[InboundRequest] = []

    async def handle(self, request: InboundRequest) -> Any:
        self.seen.append(request)
        return metadata.RESPONSE.cls(brokers=[], cluster_id="c", controller_id=1, topics=[])


class Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.decoder = FrameDecoder()
        self.frames: list[bytes] = []
        self.cid = 0

    async def call(self, api: Api, version: int, body: Any) -> Any:
        self.cid += 1
        self.writer.write(frame(encode_request(api, version, self.cid, body)))
        await self.writer.drain()
        cid, response = decode_response(await self.next_frame(), api, version)
        assert cid == self.cid
        return response

    async def send(self, api: Api, version: int, body: Any) -> None:
        self.cid += 1
        self.writer.write(frame(encode_request(api, version, self.cid, body)))
        await self.writer.drain()

    async def next_frame(self) -> bytes:
        while not self.frames:
            data = await asyncio.wait_for(self.reader.read(65536), 5)
            if not data:
                raise ConnectionError("closed")
            self.frames.extend(self.decoder.feed(data))
        return self.frames.pop(0)

    async def closed_by_server(self) -> bool:
        try:
            while True:
                data = await asyncio.wait_for(self.reader.read(65536), 5)
                if not data:
                    return True
        except (ConnectionError, ssl.SSLError):
            return True


METADATA_V = 12


def metadata_request() -> Any:
    return metadata.REQUEST.cls(topics=[], allow_auto_topic_creation=False)


def av() -> Any:
    return api_versions.REQUEST.cls(client_software_name="t", client_software_version="1")


def sasl_auth(*, mechanisms: tuple[str, ...] = (PLAIN,), ctx: ssl.SSLContext | None = None) -> ListenerAuth:
    factory = mechanism_factory(mechanisms, {PLAIN: lambda: PlainServer({"alice": "alice-secret"})})
    return ListenerAuth(ssl_context=ctx, sasl=True, enabled_mechanisms=mechanisms, sasl_factory=factory)


def tls_server(pki: Pki, client_auth: str = "none") -> ssl.SSLContext:
    return server_context(
        TlsSettings(
            keystore_location=pki.path("server.pem"),
            truststore_location=pki.path("ca.pem"),
            client_auth=client_auth,
        )
    )


def tls_client(pki: Pki, *, cert: str | None = None, ca: str = "ca.pem") -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=pki.path(ca))
    if cert is not None:
        ctx.load_cert_chain(pki.path(f"{cert}.crt"), pki.path(f"{cert}.key"))
    return ctx


Test = Callable[[Recorder, KafkaServer, int], Awaitable[None]]


def serving(auth: ListenerAuth, test: Test, *, loop: str = "asyncio", **options: Any) -> None:
    """Run ``test`` against a server on ``auth``'s listener, on the stdlib loop or uvloop (what
    ``kraft server-start`` uses when installed)."""

    # A refused login's connection is closed by the client or after the linger: short here.
    options.setdefault("refusal_linger_s", 0.2)

    async def main() -> None:
        handler = Recorder()
        server = KafkaServer(
            apis=dict(BROKER_LISTENER_APIS), handler=handler, max_request_bytes=1 << 20, **options
        )
        port = await server.listen("EXTERNAL", "127.0.0.1", 0, auth=auth)
        try:
            await test(handler, server, port)
        finally:
            await server.close()

    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        uvloop.run(main())
    else:
        asyncio.run(main())


LOOPS = ["asyncio", "uvloop"]


async def connect(port: int, ctx: ssl.SSLContext | None = None) -> Client:
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=ctx, server_hostname="localhost" if ctx else None
    )
    return Client(reader, writer)


async def login(c: Client, user: str, password: str) -> Any:
    assert (await c.call(sasl_handshake.API, 1, sasl_handshake.REQUEST.cls(mechanism=PLAIN))).error_code == 0
    body = sasl_authenticate.REQUEST.cls(auth_bytes=client_token(user, password))
    return await c.call(sasl_authenticate.API, 2, body)


# ------------------------------------------------------------------------------------------- TLS


@pytest.mark.parametrize("loop", LOOPS)
def test_ssl_listener_names_the_client_certificate_subject_as_principal(loop: str) -> None:
    pki = session_pki()

    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port, tls_client(pki, cert="client"))
        await c.call(metadata.API, METADATA_V, metadata_request())
        assert handler.seen[-1].principal == KafkaPrincipal("User", CLIENT_DN)

    serving(ListenerAuth(ssl_context=tls_server(pki, "required")), test, loop=loop)


def test_ssl_listener_without_client_certificate_is_anonymous_when_requested_not_required() -> None:
    pki = session_pki()

    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port, tls_client(pki))
        await c.call(metadata.API, METADATA_V, metadata_request())
        assert handler.seen[-1].principal == ANONYMOUS

    serving(ListenerAuth(ssl_context=tls_server(pki, "requested")), test)


@pytest.mark.parametrize("loop", LOOPS)
def test_ssl_refuses_untrusted_client_certificate_plaintext_bytes_and_tls_1_1_but_keeps_serving(
    loop: str,
) -> None:
    pki = session_pki()

    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        # An untrusted client certificate (TLS 1.3: the refusal shows on the first read).
        with pytest.raises((ssl.SSLError, ConnectionError)):
            c = await connect(port, tls_client(pki, cert="rogue-client"))
            await c.call(metadata.API, METADATA_V, metadata_request())
        # Plaintext Kafka bytes to the TLS port.
        plain = await connect(port)
        await plain.send(api_versions.API, 3, av())
        assert await plain.closed_by_server()
        # A TLS 1.1 client.
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
        with pytest.warns(DeprecationWarning):
            old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
        old.set_ciphers("DEFAULT:@SECLEVEL=0")  # so that the client does send a TLS 1.1 hello
        with pytest.raises((ssl.SSLError, ConnectionError)):
            await connect(port, old)
        # A client that never starts its handshake is cut at the handshake deadline.
        silent = await connect(port)
        assert await silent.closed_by_server()
        good = await connect(port, tls_client(pki, cert="client"))
        await good.call(metadata.API, METADATA_V, metadata_request())
        assert [r.principal.name for r in handler.seen] == [CLIENT_DN]
        assert server.stats.connections_accepted == 1  # none of the refused ones got that far

    serving(
        ListenerAuth(ssl_context=tls_server(pki, "required")), test, loop=loop, tls_handshake_timeout_s=0.5
    )


def test_expired_certificates_are_refused_both_ways() -> None:
    pki = session_pki()

    async def client_side(handler: Recorder, server: KafkaServer, port: int) -> None:
        # A client certificate signed by the trusted CA but expired: refused by the listener.
        with pytest.raises((ssl.SSLError, ConnectionError)):
            c = await connect(port, tls_client(pki, cert="expired-client"))
            await c.call(metadata.API, METADATA_V, metadata_request())
        good = await connect(port, tls_client(pki, cert="client"))
        await good.call(metadata.API, METADATA_V, metadata_request())
        assert len(handler.seen) == 1

    serving(ListenerAuth(ssl_context=tls_server(pki, "required")), client_side)

    expired = server_context(
        TlsSettings(keystore_location=pki.path("expired-server.pem"), truststore_location=pki.path("ca.pem"))
    )

    async def server_side(handler: Recorder, server: KafkaServer, port: int) -> None:
        # A listener serving an expired certificate: the client (Python's ssl, as kafka-python's)
        # refuses it with the reason.
        with pytest.raises(ssl.SSLCertVerificationError, match="expired"):
            await connect(port, tls_client(pki))
        assert not handler.seen

    serving(ListenerAuth(ssl_context=expired), server_side)


# ------------------------------------------------------------------------------------------- SASL


def test_sasl_plain_login_then_requests_carry_the_user_principal() -> None:
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port)
        versions = await c.call(api_versions.API, 3, av())
        advertised = {k.api_key for k in versions.api_keys}
        assert {sasl_handshake.API.key, sasl_authenticate.API.key} <= advertised
        answer = await login(c, "alice", "alice-secret")
        assert answer.error_code == ErrorCode.NONE
        await c.call(metadata.API, METADATA_V, metadata_request())
        assert [r.principal for r in handler.seen] == [KafkaPrincipal("User", "alice")]

    serving(sasl_auth(), test)


@pytest.mark.parametrize("loop", LOOPS)
def test_sasl_ssl_does_tls_then_sasl(loop: str) -> None:
    pki = session_pki()

    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port, tls_client(pki))
        assert (await login(c, "alice", "alice-secret")).error_code == ErrorCode.NONE
        await c.call(metadata.API, METADATA_V, metadata_request())
        assert handler.seen[-1].principal == KafkaPrincipal("User", "alice")

    serving(sasl_auth(ctx=tls_server(pki)), test, loop=loop)


def test_request_before_authentication_is_not_served_and_closes_the_connection() -> None:
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port)
        await c.send(metadata.API, METADATA_V, metadata_request())
        assert await c.closed_by_server()
        # Half way: after the handshake, before SaslAuthenticate.
        c = await connect(port)
        await c.call(sasl_handshake.API, 1, sasl_handshake.REQUEST.cls(mechanism=PLAIN))
        await c.send(metadata.API, METADATA_V, metadata_request())
        assert await c.closed_by_server()
        assert handler.seen == []
        assert server.stats.authentications_failed == 2

    serving(sasl_auth(), test)


def test_wrong_mechanism_gets_the_enabled_list_and_bad_password_sasl_authentication_failed() -> None:
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port)
        answer = await c.call(sasl_handshake.API, 1, sasl_handshake.REQUEST.cls(mechanism="SCRAM-SHA-512"))
        assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM and answer.mechanisms == [PLAIN]
        assert await c.closed_by_server()
        for user, password in (("alice", "wrong"), ("mallory", "alice-secret")):
            c = await connect(port)
            answer = await login(c, user, password)
            assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
            assert answer.error_message == "Authentication failed: Invalid username or password"
            assert await c.closed_by_server()
        good = await connect(port)
        assert (await login(good, "alice", "alice-secret")).error_code == ErrorCode.NONE
        await good.call(metadata.API, METADATA_V, metadata_request())
        assert len(handler.seen) == 1

    serving(sasl_auth(), test)


def test_a_refused_login_is_answered_after_the_failed_authentication_delay() -> None:
    # connection.failed.authentication.delay.ms: the refusal (and the close) wait; a good login and
    # the other connections are not held up meanwhile.
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        loop = asyncio.get_running_loop()
        bad = await connect(port)
        started = loop.time()
        pending = asyncio.ensure_future(login(bad, "alice", "wrong"))
        good = await connect(port)
        assert (await login(good, "alice", "alice-secret")).error_code == ErrorCode.NONE
        assert not pending.done(), "the refusal went out before the delay"
        answer = await pending
        assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert loop.time() - started >= 0.3
        assert await bad.closed_by_server()
        await good.call(metadata.API, METADATA_V, metadata_request())
        assert server.stats.authentications_failed == 1

    serving(sasl_auth(), test, failed_authentication_delay_ms=300)


def test_a_refused_login_is_closed_by_the_client_first_or_by_the_server_after_the_linger() -> None:
    # Closing right after the answer makes kafka-python lose it when it reads both in one wake-up.
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        loop = asyncio.get_running_loop()
        c = await connect(port)
        assert (await login(c, "alice", "wrong")).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        with pytest.raises(TimeoutError):  # no close behind the answer
            await asyncio.wait_for(c.reader.read(65536), 0.3)
        assert len(server.connections) == 1
        c.writer.write(frame(encode_request(metadata.API, METADATA_V, 9, metadata_request())))
        c.writer.close()  # what clients do with the refusal; the request above is dropped
        deadline = loop.time() + 2
        while server.connections and loop.time() < deadline:
            await asyncio.sleep(0.01)
        assert not server.connections and handler.seen == []
        # A client that keeps the connection open is closed when the linger is over.
        quiet = await connect(port)
        assert (await login(quiet, "alice", "wrong")).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        answered = loop.time()
        assert await quiet.closed_by_server()
        assert 0.9 <= loop.time() - answered < 3
        assert server.stats.authentications_failed == 2

    serving(sasl_auth(), test, refusal_linger_s=1.0)


def test_sasl_handshake_v0_takes_a_raw_token() -> None:
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port)
        answer = await c.call(sasl_handshake.API, 0, sasl_handshake.REQUEST.cls(mechanism=PLAIN))
        assert answer.error_code == 0
        c.writer.write(frame(client_token("alice", "alice-secret")))
        assert await c.next_frame() == b""  # PLAIN's empty challenge, bare
        await c.call(metadata.API, METADATA_V, metadata_request())
        assert handler.seen[-1].principal == KafkaPrincipal("User", "alice")

    serving(sasl_auth(), test)


def test_sasl_apis_are_not_served_on_a_plaintext_listener() -> None:
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port)
        versions = await c.call(api_versions.API, 3, av())
        assert sasl_handshake.API.key not in {k.api_key for k in versions.api_keys}
        await c.call(metadata.API, METADATA_V, metadata_request())
        assert handler.seen[-1].principal == ANONYMOUS

    serving(ListenerAuth(), test)


# ---------------------------------------------------------------------- limits, idle, log flood


def test_per_ip_limit_closes_extra_connections_at_accept_and_frees_slots_on_close() -> None:
    limiter = ConnectionLimiter.of(max_per_ip=2)

    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        first, second = await connect(port), await connect(port)
        await first.call(metadata.API, METADATA_V, metadata_request())
        await second.call(metadata.API, METADATA_V, metadata_request())
        third = await connect(port)
        assert await third.closed_by_server()
        assert server.stats.connections_refused == 1
        first.writer.close()
        deadline = asyncio.get_running_loop().time() + 5
        while limiter.total > 1:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.01)
        fourth = await connect(port)
        await fourth.call(metadata.API, METADATA_V, metadata_request())
        assert limiter.total == 2 and limiter.per_host["127.0.0.1"] == 2

    serving(ListenerAuth(), test, limiter=limiter)


def test_limiter_counts_per_host_and_protects_named_listeners() -> None:
    limiter = ConnectionLimiter.of(
        max_connections=1, max_per_ip=5, per_ip_overrides={"10.0.0.9": 0}, protected=["CONTROLLER"]
    )
    assert limiter.try_acquire("EXTERNAL", "10.0.0.1") is None
    refusal = limiter.try_acquire("EXTERNAL", "10.0.0.2")
    assert refusal is not None and "max.connections=1" in refusal
    assert limiter.try_acquire("CONTROLLER", "10.0.0.2") is None  # the quorum's own listener
    assert "max.connections.per.ip=0" in (limiter.try_acquire("CONTROLLER", "10.0.0.9") or "")
    limiter.release("10.0.0.1")
    # The protected connection still counts towards max.connections, as Kafka's do.
    assert limiter.try_acquire("EXTERNAL", "10.0.0.3") is not None
    limiter.release("10.0.0.2")
    assert limiter.try_acquire("EXTERNAL", "10.0.0.3") is None and limiter.total == 1
    assert dict(limiter.per_host) == {"10.0.0.3": 1}


def test_an_unauthenticated_idle_connection_is_reaped() -> None:
    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        c = await connect(port)
        await c.call(api_versions.API, 3, av())
        assert await c.closed_by_server()
        assert server.stats.connections_reaped == 1

    serving(sasl_auth(), test, max_idle_ms=200)


def test_a_thousand_failed_logins_write_a_handful_of_log_lines_and_leave_memory_flat(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import gc
    import tracemalloc

    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        token = client_token("alice", "wrong")

        async def failed_login() -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            hs = encode_request(sasl_handshake.API, 1, 1, sasl_handshake.REQUEST.cls(mechanism=PLAIN))
            auth = encode_request(
                sasl_authenticate.API, 1, 2, sasl_authenticate.REQUEST.cls(auth_bytes=token)
            )
            writer.write(frame(hs) + frame(auth))
            decoder, answers = FrameDecoder(1 << 20), 0
            while answers < 2:  # both answers, then close first as a client does
                data = await reader.read(65536)
                if not data:
                    break
                answers += len(decoder.feed(data))
            writer.close()
            await writer.wait_closed()

        for _ in range(100):  # warm-up: caches, the bad-connection summary's entries
            await failed_login()
        await asyncio.sleep(0.05)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(1000):
                await failed_login()
            await asyncio.sleep(0.05)  # the server side of the last connections closes
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert server.stats.authentications_failed == 1100
        # Flat: nothing kept per refused connection (1,000 of them would be hundreds of KB).
        assert grown < 100_000, f"{grown} bytes more after 1,000 failed logins"
        assert not server._connections  # every refused connection is gone

    with caplog.at_level(logging.WARNING, logger="kraft.net.server"):
        serving(sasl_auth(), test)
    lines = [r.getMessage() for r in caplog.records]
    # One line in full per quiet period, then one summary per 10 s window (a slow run spans two).
    assert 1 <= len(lines) <= 6, lines
    assert "SASL authentication failed" in lines[0]
    full = [line for line in lines if line.startswith("closing connection")]
    summed = [int(m) for line in lines for m in re.findall(r"closed (\d+) more bad connection", line)]
    assert len(full) + sum(summed) == 1100, lines


def test_each_distinct_bad_request_is_logged_in_full_up_to_a_cap_per_window() -> None:
    from kraft.net.bad_connections import DETAILED_PER_WINDOW, BadConnectionLog

    log = BadConnectionLog(interval_s=10.0)
    lines: list[str] = []
    for i in range(3 * DETAILED_PER_WINDOW):
        for _ in range(5):  # each kind five times: logged once in full, the repeats counted
            lines += log.record(1.0, "unsupported request", "10.0.0.1:4000", f"unknown API key {1000 + i}")
    assert [line.rsplit(": ", 1)[1] for line in lines] == [
        f"unknown API key {1000 + i}" for i in range(DETAILED_PER_WINDOW)
    ]
    [summary] = log.flush(11.5)
    assert f"closed {15 * DETAILED_PER_WINDOW - DETAILED_PER_WINDOW} more bad connection(s)" in summary


def test_a_renewed_keystore_is_served_to_new_connections_and_a_broken_one_is_not(tmp_path: Path) -> None:
    pki = session_pki()
    keystore = tmp_path / "server.pem"
    keystore.write_bytes(Path(pki.path("server.pem")).read_bytes())
    settings = TlsSettings(keystore_location=str(keystore), truststore_location=pki.path("ca.pem"))
    ctx = server_context(settings)
    reloader = KeystoreReloader(settings, ctx)

    async def test(handler: Recorder, server: KafkaServer, port: int) -> None:
        before = await connect(port, tls_client(pki))
        assert await before.call(api_versions.API, 3, av())
        assert not reloader.check()  # nothing changed
        # Renewed (here: by another CA's certificate, so that the client can tell them apart).
        keystore.write_bytes(Path(pki.path("rogue-server.pem")).read_bytes())
        os.utime(keystore, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
        assert reloader.check()
        renewed = await connect(port, tls_client(pki, ca="rogue-ca.pem"))
        assert await renewed.call(api_versions.API, 3, av())
        with pytest.raises(ssl.SSLCertVerificationError):
            await connect(port, tls_client(pki))
        assert await before.call(api_versions.API, 3, av())  # the open connection keeps its session
        # A key that does not match its certificate is refused; the renewed certificate serves on.
        keystore.write_bytes(Path(pki.path("mismatch.pem")).read_bytes())
        os.utime(keystore, ns=(time.time_ns(), time.time_ns() + 2_000_000_000))
        with pytest.raises(ConfigError, match="does not match"):
            reloader.check()
        assert not reloader.check()  # the same broken files are not tried again
        again = await connect(port, tls_client(pki, ca="rogue-ca.pem"))
        assert await again.call(api_versions.API, 3, av())

    serving(ListenerAuth(ssl_context=ctx), test)
