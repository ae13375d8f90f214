"""The Kafka-protocol TCP server: one asyncio server per listener, one ``Connection`` per socket.

What it owns: framing (size prefix, ``socket.request.max.bytes``), request header decoding, the
ApiVersions exchange (KIP-511 fallback included), strict response ordering, idle reaping and
isolating one bad connection from the rest. What it must not do: decide anything about raft or
the controller. Every other request goes to a ``RequestHandler``; whatever it answers is encoded
with the request's version and correlation id.

Main invariant: responses on one connection leave in the order their requests arrived, whatever
order the handler finishes them in (a long-polled Fetch holds back the answers queued behind it),
because Kafka clients match responses to requests by position as well as by correlation id.

Security (``ListenerAuth`` per listener): TLS is the event loop's (with a handshake deadline), and
every decoded request passes the connection's ``AuthGate`` first: on a
SASL listener nothing but ApiVersions, SaslHandshake and SaslAuthenticate reaches anyone before the
exchange completes, and the request handler only ever sees requests of authenticated connections,
each carrying its principal. Connection limits (``ConnectionLimiter``) are applied at accept, and
bad connections are logged in aggregate (``BadConnectionLog``), never one line each.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kraft.common.errors import MalformedMessageError, RemoteProtocolError, UnsupportedApiError
from kraft.common.principal import ANONYMOUS, KafkaPrincipal
from kraft.net.auth_gate import SASL_HANDSHAKE_KEY, AuthGate, GateReply
from kraft.net.bad_connections import BadConnectionLog, peer_host
from kraft.net.limits import ConnectionLimiter
from kraft.net.tls import peer_principal
from kraft.protocol.api import Api, decode_request, encode_response, encode_response_frame
from kraft.protocol.envelope import NO_RESPONSE
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.framing import FRAME_SIZE, FrameDecoder, frame
from kraft.protocol.headers import API_VERSIONS_KEY, RequestHeader, write_response_header
from kraft.protocol.messages import api_versions, sasl_authenticate, sasl_handshake
from kraft.protocol.primitives import Writer
from kraft.security.sasl import SaslServerFactory

log = logging.getLogger("kraft.net.server")

# Kafka's connections.max.idle.ms default.
DEFAULT_MAX_IDLE_MS = 600_000
# Requests one connection may have outstanding before the server stops reading from it.
MAX_IN_FLIGHT_PER_CONNECTION = 128
# Unsent response bytes on one connection above which the server waits for the socket to drain
# before it writes more (asyncio's default high-water mark).
_WRITE_HIGH_WATER = 64 * 1024
_READ_CHUNK = 256 * 1024
METADATA_KEY = 3
# Encoded Metadata answers kept (a strong reference to each body keeps its id from being reused).
_ENCODED_CACHE_ENTRIES = 8
# How long a client may take to finish the TLS handshake before the socket is closed.
DEFAULT_TLS_HANDSHAKE_TIMEOUT_S = 10.0
# How long a refused login's connection waits for the client to close it (``KafkaServer._linger``).
DEFAULT_REFUSAL_LINGER_S = 2.0
SASL_APIS: Mapping[int, Api] = {m.API.key: m.API for m in (sasl_handshake, sasl_authenticate)}


@dataclass(frozen=True, slots=True)
class ListenerAuth:
    """What one listener demands: TLS (a server context) and/or SASL (the mechanisms it enables and
    the factory of their servers). The default is PLAINTEXT."""

    ssl_context: ssl.SSLContext | None = None
    sasl: bool = False
    enabled_mechanisms: tuple[str, ...] = ()
    sasl_factory: SaslServerFactory | None = None

    def gate(self, transport_principal: KafkaPrincipal) -> AuthGate:
        return AuthGate(
            sasl=self.sasl,
            enabled_mechanisms=self.enabled_mechanisms,
            factory=self.sasl_factory,
            transport_principal=transport_principal,
        )


PLAINTEXT_AUTH = ListenerAuth()


@dataclass(frozen=True, slots=True)
class InboundRequest:
    """One decoded request, with where it came from."""

    header: RequestHeader
    api: Api
    body: Any
    connection_id: int
    peer: str
    listener: str
    principal: KafkaPrincipal = ANONYMOUS
    host: str = ""  # the peer's host, as ACLs match it (``peer_host(peer)``, once per connection)

    @property
    def version(self) -> int:
        return self.header.api_version


class RequestHandler(Protocol):
    """Answers every request except ApiVersions.

    ``handle`` returns the response body (a struct value of ``request.api.RESPONSE``). It may take
    as long as it needs (a long-polled Fetch); the server keeps later responses behind it. Raising
    ``RemoteProtocolError`` closes the connection as a protocol violation; any other exception is
    logged as a server bug and also closes that connection, leaving the node running.
    """

    def handle(self, request: InboundRequest) -> Awaitable[Any]: ...


@dataclass(frozen=True, slots=True)
class FeatureInfo:
    """What ApiVersions v3+ says about features (spec 6.7): supported ranges, finalized levels and
    the epoch (offset) of the image they come from."""

    supported: Mapping[str, tuple[int, int]]
    finalized: Mapping[str, int]
    epoch: int


def api_versions_body(
    apis: Iterable[Api], error_code: int = Code.NONE, *, features: FeatureInfo | None = None
) -> api_versions.ApiVersionsResponse:
    """An ApiVersions response body advertising ``apis`` (their served ranges), sorted by key, and
    (v3+) ``features``: level-0 features are not finalized; metadata.version always is."""
    cls = api_versions.RESPONSE.cls
    keys = [
        cls.ApiVersion(api_key=a.key, min_version=a.served.low, max_version=a.served.high)
        for a in sorted(apis, key=lambda a: a.key)
    ]
    body = cls(error_code=error_code, api_keys=keys, throttle_time_ms=0)
    if features is not None:
        body.supported_features = [
            cls.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
            for n, (lo, hi) in sorted(features.supported.items())
        ]
        body.finalized_features = [
            cls.FinalizedFeatureKey(name=n, max_version_level=v, min_version_level=v)
            for n, v in sorted(features.finalized.items())
            if v > 0
        ]
        body.finalized_features_epoch = features.epoch
    return body


@dataclass(slots=True)
class ServerStats:
    """Counters for tests and logs."""

    connections_accepted: int = 0
    connections_closed_for_errors: int = 0
    connections_reaped: int = 0
    connections_refused: int = 0  # over a connection limit, closed at accept
    authentications_failed: int = 0  # refused by the gate (state, mechanism or credentials)
    requests: int = 0


@dataclass(slots=True)
class Connection:
    """One accepted socket. The reader side decodes frames; ``KafkaServer._pump`` writes the answers
    at the head of ``pending`` as soon as they are ready, in request order."""

    id: int
    peer: str
    host: str  # ``peer_host(peer)``: what connection limits and ACL host patterns match
    listener: str
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    last_active: float = field(default_factory=time.monotonic)
    in_flight: int = 0
    closed: bool = False
    # One slot per request, in arrival order: the framed answer, or None to close the connection.
    pending: collections.deque[asyncio.Future[bytes | None]] = field(default_factory=collections.deque)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    draining: bool = False  # waiting for the socket to take the bytes already written
    # Set once the writer side is done: the closing slot was reached or the socket failed.
    written: asyncio.Future[None] | None = None
    gate: AuthGate = field(default_factory=lambda: AuthGate(sasl=False))
    refused: bool = False  # a refused login was answered: the server waits for the client's close

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.writer.close()


class KafkaServer:
    """Serves the given APIs on one or more listeners.

    Args:
        apis: api key -> Api for every API this node implements (ApiVersions included); exactly
            these are advertised.
        handler: answers everything but ApiVersions.
        max_request_bytes: ``socket.request.max.bytes``.
        max_idle_ms: ``connections.max.idle.ms``; idle connections with nothing in flight are closed.
        log_prefix: prepended to every log line (the node id).
        limiter: ``max.connections`` / ``max.connections.per.ip``, shared by the node's servers
            (applied at accept; on a TLS listener, once the handshake is done).
        tls_handshake_timeout_s: a TLS client that has not finished its handshake by then is closed.
        failed_authentication_delay_ms: ``connection.failed.authentication.delay.ms``: a refused
            login's answer (and the close after it) waits this long, so that a client guessing
            passwords gets one answer per delay per connection (Kafka's default 100; 0 here, which
            the node overrides with the configured value).
        refusal_linger_s: after a refused login's answer, the server waits up to this long for the
            client to close before it closes (see ``_linger``).
    """

    def __init__(
        self,
        *,
        apis: Mapping[int, Api],
        handler: RequestHandler,
        max_request_bytes: int,
        max_idle_ms: int = DEFAULT_MAX_IDLE_MS,
        log_prefix: str = "",
        features: Callable[[], FeatureInfo] | None = None,
        limiter: ConnectionLimiter | None = None,
        tls_handshake_timeout_s: float = DEFAULT_TLS_HANDSHAKE_TIMEOUT_S,
        failed_authentication_delay_ms: int = 0,
        refusal_linger_s: float = DEFAULT_REFUSAL_LINGER_S,
    ) -> None:
        if API_VERSIONS_KEY not in apis:
            raise ValueError("the served APIs must include ApiVersions")
        self._apis = dict(apis)
        self._handler = handler
        self._max_request_bytes = max_request_bytes
        self._max_idle_ms = max_idle_ms
        self._failed_auth_delay_s = failed_authentication_delay_ms / 1000
        self._refusal_linger_s = refusal_linger_s
        self._prefix = log_prefix
        self._servers: list[asyncio.Server] = []
        self._connections: dict[int, Connection] = {}
        self._ids = itertools.count(1)
        self._reaper: asyncio.Task[None] | None = None
        self.stats = ServerStats()
        self._api_versions_ok = api_versions_body(self._apis.values())
        self._encoded: dict[tuple[int, int], tuple[Any, bytes]] = {}  # see _encode_response
        self._features = features
        self._limiter = limiter
        self._tls_handshake_timeout_s = tls_handshake_timeout_s
        # Per listener: its security, the APIs it serves (the SASL ones on SASL listeners only) and
        # its ApiVersions answer.
        self._auth: dict[str, ListenerAuth] = {}
        self._listener_apis: dict[str, dict[int, Api]] = {}
        self._listener_versions: dict[str, api_versions.ApiVersionsResponse] = {}
        self.bad_connections = BadConnectionLog()
        self._flusher: asyncio.Task[None] | None = None

    @property
    def connections(self) -> Mapping[int, Connection]:
        return self._connections

    async def listen(
        self, listener: str, host: str, port: int, *, auth: ListenerAuth = PLAINTEXT_AUTH
    ) -> int:
        """Start serving ``listener`` on host:port; returns the bound port (useful with port 0)."""
        apis = {**self._apis, **SASL_APIS} if auth.sasl else self._apis
        self._auth[listener] = auth
        self._listener_apis[listener] = apis
        self._listener_versions[listener] = api_versions_body(apis.values())
        # TLS is the event loop's own (``ssl=``), not ``start_tls`` after accept: uvloop's server-side
        # start_tls on a stream waits for a ClientHello the plain stream already consumed. So a TLS
        # connection reaches ``_accept`` (and the connection limits) only once its handshake is
        # done; one that fails or stalls its handshake is dropped by the loop at the deadline,
        # silently (asyncio and uvloop log an OSError in a handshake at debug level only).
        server = await asyncio.start_server(
            lambda r, w: self._accept(listener, r, w),
            host=host or None,
            port=port,
            reuse_address=True,
            limit=_READ_CHUNK,
            ssl=auth.ssl_context,
            ssl_handshake_timeout=self._tls_handshake_timeout_s if auth.ssl_context is not None else None,
        )
        self._servers.append(server)
        bound = int(server.sockets[0].getsockname()[1])
        kind = (
            ("SASL_SSL" if auth.sasl else "SSL")
            if auth.ssl_context
            else ("SASL_PLAINTEXT" if auth.sasl else "")
        )
        log.info(
            "%slistening on %s://%s:%d%s", self._prefix, listener, host, bound, f" ({kind})" if kind else ""
        )
        if self._reaper is None and self._max_idle_ms > 0:
            self._reaper = asyncio.create_task(self._reap_idle())
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush_bad_connections())
        return bound

    async def close(self) -> None:
        for server in self._servers:
            server.close()
        for conn in list(self._connections.values()):
            conn.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        for task in (self._reaper, self._flusher):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._reaper = self._flusher = None
        self._log_bad(self.bad_connections.flush(time.monotonic(), force=True))
        self._servers.clear()

    # -------------------------------------------------------------------------------------------

    async def _accept(
        self, listener: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        peername = writer.get_extra_info("peername")
        peer = f"{peername[0]}:{peername[1]}" if isinstance(peername, tuple) else str(peername)
        host = peer_host(peer)
        if self._limiter is not None:
            refusal = self._limiter.try_acquire(listener, host)
            if refusal is not None:
                # Kafka's ConnectionQuotas: closed at accept, before a byte is read.
                self.stats.connections_refused += 1
                self._note_bad(listener, peer, "connection limit", refusal)
                writer.close()
                return
        try:
            await self._serve(listener, peer, host, reader, writer)
        except asyncio.CancelledError:
            # The loop is stopping (``_serve`` closed the connection). Ending cancelled would make
            # Python 3.11's stream callback log "Exception in callback" (3.12 checks for it).
            pass
        finally:
            if self._limiter is not None:
                self._limiter.release(host)

    async def _serve(
        self,
        listener: str,
        peer: str,
        host: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        auth = self._auth.get(listener, PLAINTEXT_AUTH)
        principal = ANONYMOUS
        if auth.ssl_context is not None:
            principal = peer_principal(writer.get_extra_info("peercert"))
        conn = Connection(
            id=next(self._ids), peer=peer, host=host, listener=listener, reader=reader, writer=writer
        )
        conn.gate = auth.gate(principal)
        conn.written = asyncio.get_running_loop().create_future()
        self._connections[conn.id] = conn
        self.stats.connections_accepted += 1
        try:
            await self._read_loop(conn)
            if conn.refused and not conn.closed:
                await self._linger(conn)
        finally:
            # Let responses already queued go out, then stop the writer.
            conn.pending.append(_closed_marker())
            self._pump(conn)
            with contextlib.suppress(Exception):
                await conn.written
            for task in list(conn.tasks):
                task.cancel()
            conn.close()
            self._connections.pop(conn.id, None)

    async def _read_loop(self, conn: Connection) -> None:
        decoder = FrameDecoder(self._max_request_bytes)
        while not conn.closed:
            try:
                data = await conn.reader.read(_READ_CHUNK)
            except (ConnectionError, OSError):
                return
            if not data:
                return
            conn.last_active = time.monotonic()
            try:
                frames = decoder.feed(data)
            except RemoteProtocolError as e:
                self._protocol_error(conn, "bad frame", str(e))
                return
            for payload in frames:
                if conn.gate.expects_raw_token:
                    if not self._raw_token(conn, payload):
                        return
                    continue
                if not self._dispatch(conn, payload):
                    return
                # Back-pressure: stop reading while too many requests are outstanding.
                while conn.in_flight >= MAX_IN_FLIGHT_PER_CONNECTION and not conn.closed:
                    await asyncio.sleep(0.001)

    def _protocol_error(self, conn: Connection, reason: str, detail: str = "") -> None:
        self.stats.connections_closed_for_errors += 1
        self._note_bad(conn.listener, conn.peer, reason, detail or reason)
        conn.close()

    def _note_bad(self, listener: str, peer: str, reason: str, detail: str) -> None:
        self._log_bad(self.bad_connections.record(time.monotonic(), f"{reason} on {listener}", peer, detail))

    def _log_bad(self, lines: list[str]) -> None:
        for line in lines:
            log.warning("%s%s", self._prefix, line)

    async def _flush_bad_connections(self) -> None:
        while True:
            await asyncio.sleep(self.bad_connections.interval_s / 2)
            self._log_bad(self.bad_connections.flush(time.monotonic()))

    def _refused(self, conn: Connection, reply: GateReply, what: str) -> None:
        """The gate closes ``conn``: its answer (if any) is already queued and goes out first."""
        self.stats.authentications_failed += 1
        refusal = reply.refusal.value if reply.refusal is not None else "refused"
        detail = what
        body = reply.body
        if body is not None and getattr(body, "error_message", None):
            detail = f"{what}: {body.error_message}"
        self._note_bad(conn.listener, conn.peer, refusal, detail)

    def _answer_now(self, conn: Connection, api: Api, header: RequestHeader, body: Any) -> None:
        self._queue_ready(conn, encode_response_frame(api, header.api_version, header.correlation_id, body))

    def _raw_token(self, conn: Connection, token: bytes) -> bool:
        """A bare SASL token after a v0 SaslHandshake (KIP-43): answered with a bare challenge."""
        self.stats.requests += 1
        reply = conn.gate.raw_token(token)
        if reply.close:
            self._refused(conn, reply, f"{conn.gate.mechanism} token (SaslHandshake v0)")
            return False
        self._queue_ready(conn, frame(bytes(reply.body)))
        return True

    def _sasl_request(self, conn: Connection, api: Api, header: RequestHeader, body: Any) -> bool:
        gate = conn.gate
        if header.api_key == SASL_HANDSHAKE_KEY:
            reply = gate.handshake(header.api_version, body)
            what = f"SaslHandshake for mechanism {str(body.mechanism)[:64]!r}"
        else:
            reply = gate.authenticate(header.api_version, body)
            what = f"SaslAuthenticate ({gate.mechanism})"
        if reply.close:
            if reply.body is not None:
                encoded = encode_response(api, header.api_version, header.correlation_id, reply.body)
                self._queue_refusal(conn, frame(encoded))
            self._refused(conn, reply, what)
            return False
        if reply.body is not None:
            self._answer_now(conn, api, header, reply.body)
        return True

    def _dispatch(self, conn: Connection, payload: bytes) -> bool:
        """Decode one frame and queue its answer; False if the connection must close."""
        self.stats.requests += 1
        apis = self._listener_apis.get(conn.listener, self._apis)
        gate = conn.gate
        try:
            header, body = decode_request(payload, apis)
        except UnsupportedApiError as e:
            if e.api_key == API_VERSIONS_KEY and e.correlation_id is not None:
                refusal = gate.admit(API_VERSIONS_KEY)
                if refusal is not None:
                    self._refused(conn, refusal, "ApiVersions")
                    return False
                # KIP-511: answer an unknown ApiVersions version in v0 with UNSUPPORTED_VERSION and our
                # ranges, so the client can retry with a version both sides know.
                body = api_versions_body(apis.values(), Code.UNSUPPORTED_VERSION)
                response = encode_response(api_versions.API, 0, e.correlation_id, body)
                self._queue_ready(conn, frame(response))
                return True
            self._protocol_error(conn, "unsupported request", str(e))
            return False
        except MalformedMessageError as e:
            self._protocol_error(conn, "malformed request", str(e))
            return False
        api = apis[header.api_key]
        if header.api_key in SASL_APIS:
            return self._sasl_request(conn, api, header, body)
        refusal = gate.admit(header.api_key)
        if refusal is not None:
            # Kafka's ILLEGAL_SASL_STATE: nothing is answered, the connection is closed.
            self._refused(conn, refusal, f"{api.name} before authentication")
            return False
        if header.api_key == API_VERSIONS_KEY:
            body = self._listener_versions.get(conn.listener, self._api_versions_ok)
            if self._features is not None and header.api_version >= 3:
                body = api_versions_body(apis.values(), features=self._features())
            self._answer_now(conn, api, header, body)
            gate.api_versions_answered()
            return True
        request = InboundRequest(
            header=header,
            api=api,
            body=body,
            connection_id=conn.id,
            peer=conn.peer,
            listener=conn.listener,
            principal=gate.principal,
            host=conn.host,
        )
        slot = self._new_slot(conn)
        task = asyncio.create_task(self._run_handler(conn, request, slot))
        conn.tasks.add(task)
        task.add_done_callback(conn.tasks.discard)
        return True

    def _queue_refusal(self, conn: Connection, data: bytes) -> None:
        """A refused login's answer, held for ``connection.failed.authentication.delay.ms`` (Kafka's
        ``delayCloseOnAuthenticationFailure``); the close queued after it waits with it."""
        conn.refused = True
        if self._failed_auth_delay_s <= 0:
            self._queue_ready(conn, data)
            return
        slot = self._new_slot(conn)

        def release() -> None:
            if not slot.done():
                slot.set_result(data)
            self._pump(conn)

        asyncio.get_running_loop().call_later(self._failed_auth_delay_s, release)

    async def _linger(self, conn: Connection) -> None:
        """After a refused login's answer, wait for the client to close (what clients do on
        SASL_AUTHENTICATION_FAILED), up to ``refusal_linger_s``; bytes it still sends are dropped.

        Kafka closes right after the answer. A client that reads the answer and the close in one
        wake-up can lose the answer: kafka-python 3.0's transport (``_sock_recv``) drops the bytes
        it read when the same read loop then sees EOF, and reports "socket disconnected" instead of
        the server's "Invalid username or password". Closing second gives every client the reason.
        """
        with contextlib.suppress(TimeoutError, ConnectionError, OSError):
            async with asyncio.timeout(self._failed_auth_delay_s + self._refusal_linger_s):
                if conn.pending:
                    await asyncio.wait(list(conn.pending))  # the delayed answer is released...
                await conn.writer.drain()  # ...and written
                while not conn.closed and await conn.reader.read(_READ_CHUNK):
                    pass

    @staticmethod
    def _new_slot(conn: Connection) -> asyncio.Future[bytes | None]:
        """The place of the next answer in ``conn``'s request order (filled when it is ready)."""
        slot: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        conn.pending.append(slot)
        conn.in_flight += 1
        return slot

    def _queue_ready(self, conn: Connection, data: bytes) -> None:
        self._new_slot(conn).set_result(data)
        self._pump(conn)

    async def _run_handler(
        self, conn: Connection, request: InboundRequest, slot: asyncio.Future[bytes | None]
    ) -> None:
        # The answer is written in this same step of the task (``_pump``), not by another task in a
        # later turn of the loop: a leader's poll that fsyncs may be queued next.
        try:
            await self._answer(conn, request, slot)
        finally:
            self._pump(conn)

    async def _answer(
        self, conn: Connection, request: InboundRequest, slot: asyncio.Future[bytes | None]
    ) -> None:
        try:
            body = await self._handler.handle(request)
            if body is NO_RESPONSE:  # acks=0: Kafka writes nothing back
                if not slot.done():
                    slot.set_result(b"")
                return
            framed = self._encode_response(request, body)
        except asyncio.CancelledError:
            if not slot.done():
                slot.set_result(None)
            raise
        except RemoteProtocolError as e:
            self._protocol_error(conn, f"bad {request.api.name} request", f"v{request.version}: {e}")
            slot.set_result(None)
            return
        except ConnectionAbortedError as e:
            # The node is shutting down and abandoned the request: not a bug, no traceback.
            log.info(
                "%sabandoned %s v%d from %s: %s",
                self._prefix,
                request.api.name,
                request.version,
                conn.peer,
                e,
            )
            slot.set_result(None)
            conn.close()
            return
        except Exception:
            log.exception(
                "%sfailed to answer %s v%d from %s; closing that connection",
                self._prefix,
                request.api.name,
                request.version,
                conn.peer,
            )
            self.stats.connections_closed_for_errors += 1
            slot.set_result(None)
            conn.close()
            return
        if not slot.done():
            slot.set_result(framed)

    def _encode_response(self, request: InboundRequest, body: Any) -> bytes:
        """The framed answer: size, header, body. A Metadata answer the node hands out again (it
        caches them per image) is encoded once: only its header, which carries the correlation id,
        is written per request."""
        api, version = request.api, request.version
        if api.key != METADATA_KEY:
            return encode_response_frame(api, version, request.header.correlation_id, body)
        cache = self._encoded
        key = (id(body), version)
        hit = cache.get(key)
        if hit is None or hit[0] is not body:
            hit = (body, api.encode_response_body(body, version))
            cache[key] = hit
            while len(cache) > _ENCODED_CACHE_ENTRIES:
                cache.pop(next(iter(cache)))
        w = Writer(bytearray(4))
        write_response_header(w, request.header.correlation_id, api.response_header_version(version))
        header = w.buf
        FRAME_SIZE.pack_into(header, 0, len(header) - 4 + len(hit[1]))
        return b"".join((header, hit[1]))

    def _pump(self, conn: Connection) -> None:
        """Write every answer at the head of ``conn.pending`` that is ready, in request order."""
        pending = conn.pending
        while pending and not conn.draining:
            slot = pending[0]
            if not slot.done():
                return
            pending.popleft()
            data = None if slot.cancelled() else slot.result()
            if data is None or conn.closed or conn.writer.transport.is_closing():
                if data is None:
                    conn.close()
                self._writer_done(conn)
                return
            conn.in_flight -= 1
            try:
                conn.writer.write(data)
            except (ConnectionError, OSError):
                conn.close()
                self._writer_done(conn)
                return
            conn.last_active = time.monotonic()
            if conn.writer.transport.get_write_buffer_size() > _WRITE_HIGH_WATER:
                conn.draining = True
                task = asyncio.create_task(self._drain(conn))
                conn.tasks.add(task)
                task.add_done_callback(conn.tasks.discard)

    async def _drain(self, conn: Connection) -> None:
        try:
            await conn.writer.drain()
        except (ConnectionError, OSError):
            conn.close()
            self._writer_done(conn)
            return
        conn.draining = False
        self._pump(conn)

    @staticmethod
    def _writer_done(conn: Connection) -> None:
        if conn.written is not None and not conn.written.done():
            conn.written.set_result(None)

    async def _reap_idle(self) -> None:
        interval = max(0.05, min(self._max_idle_ms / 1000 / 4, 30.0))
        while True:
            await asyncio.sleep(interval)
            now = time.monotonic()
            for conn in list(self._connections.values()):
                if conn.in_flight == 0 and (now - conn.last_active) * 1000 >= self._max_idle_ms:
                    self.stats.connections_reaped += 1
                    log.info(
                        "%sclosing idle connection from %s (idle > connections.max.idle.ms=%d)",
                        self._prefix,
                        conn.peer,
                        self._max_idle_ms,
                    )
                    conn.close()


def _closed_marker() -> asyncio.Future[bytes | None]:
    fut: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
    fut.set_result(None)
    return fut


def install_uvloop() -> bool:
    """Use uvloop's event loop policy when it is installed; returns whether it is in use."""
    try:
        import uvloop
    except ImportError:
        return False
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return True
