"""Outbound connections to peers: one client connection per destination, versions negotiated.

``PeerConnection`` owns one TCP connection to one address: it connects lazily, sends ApiVersions
first (retrying at the version the peer offers when it answers UNSUPPORTED_VERSION, KIP-511),
remembers the peer's ranges, and pipelines requests whose responses arrive in request order. It
backs off exponentially between failed connection attempts and fails fast while backing off.

``PeerChannel`` maps the core's destination ids to connections and turns the core's request
envelopes into wire calls and the answers back into response envelopes. Each peer gets one raft
connection, for the core's RPCs only, and, when needed, a second one for admin requests forwarded to
it (``call``): responses come back in request order, so an admin request pipelined behind a Fetch the
leader parks for up to fetch max wait would wait that long too. Any failure (refused
connection, disconnect, timeout, garbage) becomes a response carrying BROKER_NOT_AVAILABLE for the
core, and "no version both sides speak" (for example a pre-vote to a peer without Vote v2) becomes
UNSUPPORTED_VERSION, as spec raft.md 3.4 and 4.7 require. The core is never left waiting on a
request the shell knows is lost.

Security (``ClientSecurity``, per target listener): the connection is wrapped in TLS when the
listener is SSL or SASL_SSL (hostname checked as ``ssl.endpoint.identification.algorithm``
says), and on a SASL listener the node authenticates with its own credentials right after
ApiVersions (SaslHandshake v1, then SaslAuthenticate, KIP-152; PLAIN, or SCRAM-SHA-256/512 whose
server signature is checked) before any other request goes out.
A refused login fails the connection like any other error, with the server's message logged once
per 10 s: a node without valid credentials cannot talk to a secured listener.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import random
import secrets
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kraft.common import commit_trace
from kraft.common.errors import RemoteProtocolError
from kraft.net.codecs import CODECS, EncodeVersionError
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.error_codes import describe as code_name
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import api_versions, sasl_authenticate, sasl_handshake
from kraft.raft.messages import Envelope, FetchRequest, FetchResponse, RaftRequest, RaftResponse
from kraft.raft.rpc import api_key_of, error_response_for
from kraft.security.plain import client_token
from kraft.security.sasl import PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, SaslAuthenticationError
from kraft.security.scram import ScramSaslClient

log = logging.getLogger("kraft.net.channel")

# Kafka's reconnect.backoff.ms / reconnect.backoff.max.ms defaults.
RECONNECT_BACKOFF_MS = 50
RECONNECT_BACKOFF_MAX_MS = 1000
DEFAULT_MAX_RESPONSE_BYTES = 128 * 1024 * 1024
# What the node logs in with (kraft.server.listener_security decides which applies where).
OUTBOUND_MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512)


class ChannelError(Exception):
    """A request to a peer failed for a network reason; the peer's state is unknown."""


class NoCommonVersionError(ChannelError):
    """The peer does not speak any version of the API that we can write for this request."""


class AuthenticationFailedError(ChannelError):
    """The peer refused our TLS handshake or our SASL credentials."""


@dataclass(frozen=True, slots=True)
class ClientSecurity:
    """How to reach a secured listener: a TLS client context and/or a SASL mechanism with the
    node's own credentials (``sasl.mechanism.controller.protocol`` or
    ``sasl.mechanism.inter.broker.protocol`` and the listener's JAAS ``username``/``password``)."""

    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class PeerAddress:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(slots=True)
class _InFlight:
    correlation_id: int
    api: Api
    version: int
    future: asyncio.Future[Any]


# A request timer that fires this much (seconds) after its deadline found the loop held up (a long
# poll of a core that runs on the loop, e.g. a broker replaying a large metadata log): the answer
# may be waiting in the socket, unread only because of the stall. The request then waits a little
# more, so the loop reads its sockets before it is declared lost; again after each further stall,
# up to STALL_MAX_TIMEOUTS times its own timeout in all (a loop held that long serves nobody).
STALL_S = 0.1
STALL_GRACE_S = 0.05
STALL_MAX_TIMEOUTS = 10


def _expire(
    future: asyncio.Future[Any], due: float, give_up_at: float, timer: list[asyncio.TimerHandle]
) -> None:
    if future.done():
        return
    loop = future.get_loop()
    now = loop.time()
    if now - due > STALL_S and now < give_up_at:
        # ``timer`` holds the live handle, so that the caller cancels the re-armed one.
        timer[0] = loop.call_later(STALL_GRACE_S, _expire, future, now + STALL_GRACE_S, give_up_at, timer)
        return
    future.set_exception(TimeoutError())


async def _within(future: asyncio.Future[Any], deadline: float) -> Any:
    """``await future``, failing with ``TimeoutError`` at ``deadline`` (``time.monotonic()``).

    A timer on the future itself, not ``asyncio.wait_for``: that wraps the future and resumes the
    caller a turn of the loop later, on every response. A timer found overdue after a stall of the
    loop lets the loop read its sockets first (``_expire``)."""
    loop = asyncio.get_running_loop()
    delay = max(0.0, deadline - time.monotonic())
    due = loop.time() + delay
    timer: list[asyncio.TimerHandle] = []
    timer.append(loop.call_later(delay, _expire, future, due, due + STALL_MAX_TIMEOUTS * delay, timer))
    try:
        return await future
    finally:
        timer[0].cancel()


class PeerConnection:
    """One client connection to ``address``.

    Args:
        apis: the APIs we can send, by key (for the version ranges on our side).
        client_id: the request header's client id.
        log_prefix: the local node id, for log lines.
    """

    def __init__(
        self,
        name: str,
        address: PeerAddress,
        *,
        apis: Mapping[int, Api],
        client_id: str,
        connect_timeout_ms: int,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        log_prefix: str = "",
        rng: random.Random | None = None,
        security: ClientSecurity | None = None,
    ) -> None:
        self.name = name
        self.address = address
        self._security = security
        self._last_auth_warning = -1e9
        self._apis = apis
        self._client_id = client_id
        self._connect_timeout_s = connect_timeout_ms / 1000
        self._max_response_bytes = max_response_bytes
        self._prefix = log_prefix
        self._rng = rng or random.Random()
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._in_flight: collections.deque[_InFlight] = collections.deque()
        self._correlation = itertools.count(1)
        self._connect_lock = asyncio.Lock()
        self._backoff_ms = 0
        self._retry_at = 0.0
        self._was_connected = False
        self._closed = False
        # When the latest attempt to open a TCP connection failed (monotonic seconds); None once
        # one succeeds. "Refused since t" is how the server tells that a peer is gone.
        self.last_connect_failure: float | None = None
        # api key -> (min, max) the peer advertised
        self.peer_versions: dict[int, tuple[int, int]] = {}

    @property
    def connected(self) -> bool:
        return self._writer is not None

    @property
    def connecting(self) -> bool:
        return self._connect_lock.locked()

    async def connect(self, timeout_ms: int) -> None:
        """Connect now if not connected (and not backing off); raises ``ChannelError`` on failure."""
        await self._ensure_connected(time.monotonic() + timeout_ms / 1000)

    def negotiated_version(self, api: Api) -> int:
        """min(our max, peer max), if it is within both ranges (spec raft.md 3.10)."""
        peer = self.peer_versions.get(api.key)
        if peer is None:
            raise NoCommonVersionError(f"{self.name} does not support {api.name}")
        version = min(api.served.high, peer[1])
        if version < max(api.served.low, peer[0]):
            raise NoCommonVersionError(
                f"{self.name} supports {api.name} v{peer[0]}-{peer[1]}, we speak v{api.served}"
            )
        return version

    async def call(
        self, api: Api, build_body: Callable[[int], Any], timeout_ms: int, *, version: int | None = None
    ) -> tuple[int, Any]:
        """Send one request and wait for its response body.

        ``build_body(version)`` builds the request body once the version is known; it may raise
        (e.g. ``kraft.net.codecs.EncodeVersionError``), which propagates. ``version``: send at this version
        when the peer speaks it (a forwarded request keeps its client's version), else the highest
        common one.

        Returns:
            (version used, decoded response body).

        Raises:
            ChannelError: not connected and cannot connect now, disconnect, timeout or a bad response.
        """
        deadline = time.monotonic() + timeout_ms / 1000
        await self._ensure_connected(deadline)
        highest = self.negotiated_version(api)
        peer_low = self.peer_versions[api.key][0]
        if version is None or not (max(api.served.low, peer_low) <= version <= highest):
            version = highest
        body = build_body(version)
        future = self._send(api, version, body)
        try:
            return version, await _within(future, deadline)
        except TimeoutError:
            # Responses come back in order, so a lost one stalls the rest: start afresh, as Kafka's
            # NetworkClient does on a request timeout.
            self._fail(f"{api.name} request timed out after {timeout_ms} ms")
            raise ChannelError(f"{api.name} to {self.name} timed out after {timeout_ms} ms") from None

    def close(self) -> None:
        self._closed = True
        self._fail("channel closed")

    # -------------------------------------------------------------------------------------------

    def _send(self, api: Api, version: int, body: Any) -> asyncio.Future[Any]:
        if self._writer is None:
            raise ChannelError(f"not connected to {self.name}")
        correlation_id = next(self._correlation) & 0x7FFFFFFF
        payload = encode_request(api, version, correlation_id, body, client_id=self._client_id)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._in_flight.append(_InFlight(correlation_id, api, version, future))
        self._writer.write(frame(payload))
        return future

    async def _ensure_connected(self, deadline: float) -> None:
        if self._writer is not None:
            return
        async with self._connect_lock:
            if self._writer is not None:
                return
            if self._closed:
                raise ChannelError("channel closed")
            now = time.monotonic()
            if now < self._retry_at:
                raise ChannelError(
                    f"backing off {int((self._retry_at - now) * 1000)} ms before reconnecting to {self.name}"
                )
            try:
                timeout = max(0.001, min(self._connect_timeout_s, deadline - now))
                ctx = self._security.ssl_context if self._security is not None else None
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(
                        self.address.host,
                        self.address.port,
                        limit=256 * 1024,
                        ssl=ctx,
                        server_hostname=self.address.host if ctx is not None else None,
                    ),
                    timeout,
                )
            except ssl.SSLError as e:
                self.last_connect_failure = None  # it answers: it is running, it refused us
                self._schedule_retry()
                self._warn_auth(f"TLS handshake with {self.name} at {self.address} failed: {e}")
                raise AuthenticationFailedError(f"TLS handshake with {self.name} failed: {e}") from None
            except (OSError, TimeoutError) as e:
                self.last_connect_failure = time.monotonic()
                self._schedule_retry()
                if self._was_connected or self._backoff_ms >= RECONNECT_BACKOFF_MAX_MS:
                    log.debug("%scannot connect to %s at %s: %s", self._prefix, self.name, self.address, e)
                raise ChannelError(f"cannot connect to {self.name} at {self.address}: {e}") from None
            self.last_connect_failure = None
            self._writer = writer
            self._reader_task = asyncio.create_task(self._read_loop(reader, writer))
            try:
                await self._handshake(deadline)
                if self._security is not None and self._security.sasl_mechanism is not None:
                    await self._authenticate(self._security, deadline)
            except ChannelError:
                self._schedule_retry()
                raise
            self._backoff_ms = 0
            if not self._was_connected:
                log.info("%sconnected to %s at %s", self._prefix, self.name, self.address)
            self._was_connected = True

    async def _handshake(self, deadline: float) -> None:
        api = api_versions.API
        version = api.served.high
        for _ in range(2):
            body = api_versions.REQUEST.cls(client_software_name="kraft", client_software_version="0.1.0")
            future = self._send(api, version, body)
            try:
                response = await _within(future, deadline)
            except TimeoutError:
                self._fail("ApiVersions timed out")
                raise ChannelError(f"ApiVersions to {self.name} timed out") from None
            ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            if response.error_code == Code.UNSUPPORTED_VERSION and api.key in ranges:
                # KIP-511: retry at the highest version both sides know.
                version = min(api.served.high, ranges[api.key][1])
                continue
            if response.error_code != Code.NONE:
                self._fail(f"ApiVersions answered {code_name(response.error_code)}")
                raise ChannelError(f"{self.name} refused ApiVersions: {code_name(response.error_code)}")
            self.peer_versions = ranges
            return
        self._fail("ApiVersions negotiation did not converge")
        raise ChannelError(f"{self.name}: ApiVersions negotiation failed")

    async def _exchange(self, api: Api, version: int, body: Any, deadline: float) -> Any:
        future = self._send(api, version, body)
        try:
            return await _within(future, deadline)
        except TimeoutError:
            self._fail(f"{api.name} timed out")
            raise ChannelError(f"{api.name} to {self.name} timed out") from None

    async def _authenticate(self, security: ClientSecurity, deadline: float) -> None:
        """SASL with the node's own credentials, before anything else is sent (KIP-152)."""
        mechanism = security.sasl_mechanism
        username, password = security.username, security.password
        if mechanism not in OUTBOUND_MECHANISMS or username is None or password is None:
            self._fail("no usable SASL credentials")
            raise AuthenticationFailedError(f"no usable {mechanism} credentials for {self.name}")
        hs_api, auth_api = sasl_handshake.API, sasl_authenticate.API
        if hs_api.key not in self.peer_versions or auth_api.key not in self.peer_versions:
            self._fail("the peer does not serve SASL")
            self._warn_auth(
                f"{self.name} at {self.address} does not offer SASL; check its listener's protocol"
            )
            raise AuthenticationFailedError(f"{self.name} does not serve SaslHandshake/SaslAuthenticate")
        hs_version = min(hs_api.served.high, self.peer_versions[hs_api.key][1])
        if hs_version < 1:
            self._fail("the peer speaks only SaslHandshake v0")
            raise AuthenticationFailedError(f"{self.name} speaks only SaslHandshake v0")
        response = await self._exchange(hs_api, hs_version, hs_api.request.cls(mechanism=mechanism), deadline)
        if response.error_code != Code.NONE:
            self._fail(f"SaslHandshake answered {code_name(response.error_code)}")
            self._warn_auth(
                f"{self.name} at {self.address} refused SASL mechanism {mechanism} "
                f"({code_name(response.error_code)}; it enables {', '.join(response.mechanisms) or 'none'})"
            )
            raise AuthenticationFailedError(f"{self.name} refused mechanism {mechanism}")
        auth_version = self.negotiated_version(auth_api)
        # PLAIN is one token; SCRAM (RFC 5802) two rounds, the server's signature checked at the end.
        scram = None
        if mechanism != PLAIN:
            scram = ScramSaslClient(mechanism, username, password, secrets.token_hex(16))
        token = client_token(username, password) if scram is None else scram.first()
        while True:
            body = auth_api.request.cls(auth_bytes=token)
            answer = await self._exchange(auth_api, auth_version, body, deadline)
            if answer.error_code != Code.NONE:
                self._fail(f"SaslAuthenticate answered {code_name(answer.error_code)}")
                self._warn_auth(
                    f"{self.name} at {self.address} refused our {mechanism} credentials "
                    f"(user {username!r}): {answer.error_message}"
                )
                raise AuthenticationFailedError(
                    f"{self.name} refused our credentials: {answer.error_message}"
                )
            if scram is None:
                return
            try:
                token = scram.evaluate(bytes(answer.auth_bytes))
            except SaslAuthenticationError as e:
                self._fail(f"SCRAM exchange failed: {e}")
                self._warn_auth(f"{self.name} at {self.address}: {e}")
                raise AuthenticationFailedError(f"{self.name}: {e}") from None
            if scram.complete:
                return

    def _warn_auth(self, message: str) -> None:
        """At most one line per 10 s per connection: a refused node retries every second."""
        now = time.monotonic()
        if now - self._last_auth_warning >= 10:
            self._last_auth_warning = now
            log.error("%s%s", self._prefix, message)

    async def _read_loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder(self._max_response_bytes)
        reason = "connection closed by peer"
        try:
            while True:
                data = await reader.read(256 * 1024)
                if not data:
                    break
                for payload in decoder.feed(data):
                    if not self._in_flight:
                        raise RemoteProtocolError("response without a request")
                    entry = self._in_flight.popleft()
                    correlation_id, body = decode_response(payload, entry.api, entry.version)
                    if correlation_id != entry.correlation_id:
                        raise RemoteProtocolError(
                            f"response correlation id {correlation_id}, expected {entry.correlation_id}"
                        )
                    if not entry.future.done():
                        entry.future.set_result(body)
        except (OSError, ConnectionError) as e:
            reason = f"connection error: {e}"
        except RemoteProtocolError as e:
            reason = f"bad response: {e}"
            log.warning("%sclosing connection to %s: %s", self._prefix, self.name, e)
        finally:
            if self._writer is writer:
                self._fail(reason)

    def _fail(self, reason: str) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            if self._was_connected and not self._closed:
                log.info("%sdisconnected from %s: %s", self._prefix, self.name, reason)
            self._schedule_retry()
        task, self._reader_task = self._reader_task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        while self._in_flight:
            entry = self._in_flight.popleft()
            if not entry.future.done():
                entry.future.set_exception(ChannelError(f"{self.name}: {reason}"))

    def _schedule_retry(self) -> None:
        self._backoff_ms = min(RECONNECT_BACKOFF_MAX_MS, max(RECONNECT_BACKOFF_MS, self._backoff_ms * 2))
        # Jitter (+-20%) so that peers restarted together do not reconnect in lockstep.
        delay_ms = self._backoff_ms * self._rng.uniform(0.8, 1.2)
        self._retry_at = time.monotonic() + delay_ms / 1000


class PeerChannel:
    """The core's outbound requests over ``PeerConnection``s, answers delivered as envelopes.

    Args:
        addresses: destination id -> address (voters by id; bootstrap servers by -2, -3, ...).
        deliver: called on the event loop with each response envelope for the core.
        listener_name: the raft listener name, for endpoints decoded from responses.
        cluster_id: our cluster id, for the log line when a peer refuses it.
    """

    def __init__(
        self,
        *,
        local_id: int,
        addresses: Mapping[int, PeerAddress],
        apis: Mapping[int, Api],
        deliver: Callable[[Envelope], None],
        listener_name: str,
        cluster_id: str,
        request_timeout_ms: int,
        log_prefix: str = "",
        rng: random.Random | None = None,
        security: ClientSecurity | None = None,
    ) -> None:
        self._local_id = local_id
        self._security = security
        self._addresses = dict(addresses)
        self._apis = apis
        self._deliver = deliver
        self._listener_name = listener_name
        self._cluster_id = cluster_id
        self._request_timeout_ms = request_timeout_ms
        self._prefix = log_prefix
        self._rng = rng or random.Random()
        self._connections: dict[int, PeerConnection] = {}
        # Forwarded admin requests: never queued behind the raft connection's long-polled Fetch.
        self._admin_connections: dict[int, PeerConnection] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._warned_unknown: set[int] = set()
        self._last_cluster_warning = 0.0

    def knows(self, destination: int) -> bool:
        return destination in self._addresses

    def learn_address(self, node_id: int, address: PeerAddress) -> None:
        """Add the address of a node that was not configured (a leader found through the bootstrap
        servers). Configured addresses are never replaced."""
        if node_id not in self._addresses:
            self._addresses[node_id] = address
            log.info("%slearned the address of node %d: %s", self._prefix, node_id, address)

    def set_address(self, node_id: int, address: PeerAddress) -> None:
        """Point ``node_id`` at ``address`` (a voter of a KIP-853 voter set, whose endpoints may
        change); connections to an old address are closed and reopen lazily at the new one."""
        if self._addresses.get(node_id) == address:
            return
        old = self._addresses.get(node_id)
        self._addresses[node_id] = address
        for pool in (self._connections, self._admin_connections):
            conn = pool.pop(node_id, None)
            if conn is not None:
                conn.close()
        if old is None:
            log.info("%slearned the address of node %d: %s", self._prefix, node_id, address)
        else:
            log.info("%snode %d moved from %s to %s", self._prefix, node_id, old, address)

    def connection(self, destination: int) -> PeerConnection | None:
        """The raft connection to ``destination`` (created on first use), None if no address."""
        return self._connection(self._connections, destination, "raft-client")

    def admin_connection(self, destination: int) -> PeerConnection | None:
        """The connection for admin requests forwarded to ``destination``, apart from raft traffic."""
        return self._connection(self._admin_connections, destination, "admin-forwarder")

    def _connection(
        self, pool: dict[int, PeerConnection], destination: int, client: str
    ) -> PeerConnection | None:
        conn = pool.get(destination)
        if conn is None:
            address = self._addresses.get(destination)
            if address is None:
                return None
            name = f"node {destination}" if destination >= 0 else f"bootstrap server {address}"
            conn = PeerConnection(
                name,
                address,
                apis=self._apis,
                client_id=f"{client}-{self._local_id}",
                connect_timeout_ms=self._request_timeout_ms,
                log_prefix=self._prefix,
                rng=self._rng,
                security=self._security,
            )
            pool[destination] = conn
        return conn

    def probe(self, destination: int) -> None:
        """Try to connect to ``destination`` if its raft connection is down (never blocks).

        Attempts are paced by the connection's reconnect backoff; the outcome shows in
        ``refused_since``. A graceful shutdown uses this to notice that its peers are gone even when
        the core has stopped sending to them.
        """
        conn = self.connection(destination)
        if conn is None or conn.connected or conn.connecting:
            return

        async def attempt() -> None:
            with contextlib.suppress(ChannelError):
                await conn.connect(self._request_timeout_ms)

        task = asyncio.create_task(attempt())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def refused_since(self, destination: int, since: float) -> bool:
        """True if the raft connection to ``destination`` is down and the latest attempt to open it,
        made at or after ``since`` (``time.monotonic()``), failed: as far as we can tell, the peer
        is not running."""
        conn = self._connections.get(destination)
        if conn is None or conn.connected:
            return False
        return conn.last_connect_failure is not None and conn.last_connect_failure >= since

    def send(self, envelope: Envelope) -> None:
        """Start sending one request envelope from the core (never blocks)."""
        task = asyncio.create_task(self._send(envelope))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def call(
        self,
        destination: int,
        api: Api,
        build_body: Callable[[int], Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> tuple[int, Any]:
        """A raw request to a peer (forwarded admin requests, a broker's lifecycle requests).

        Goes over the peer's admin connection, never the raft one: there it would queue behind a
        Fetch the leader holds for up to fetch max wait (500 ms by default).
        """
        conn = self.admin_connection(destination)
        if conn is None:
            raise ChannelError(f"no address for node {destination}")
        timeout = self._request_timeout_ms if timeout_ms is None else timeout_ms
        return await conn.call(api, build_body, timeout, version=version)

    async def close(self) -> None:
        for conn in [*self._connections.values(), *self._admin_connections.values()]:
            conn.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _send(self, envelope: Envelope) -> None:
        request = envelope.body
        assert envelope.is_request, envelope
        request_rpc: RaftRequest = request  # type: ignore[assignment]
        key = api_key_of(request_rpc)
        codec = CODECS[key]
        api = self._apis[key]
        response: RaftResponse
        try:
            conn = self.connection(envelope.destination)
            if conn is None:
                if envelope.destination not in self._warned_unknown:
                    self._warned_unknown.add(envelope.destination)
                    log.error(
                        "%sno address for destination %d; its requests fail",
                        self._prefix,
                        envelope.destination,
                    )
                raise ChannelError(f"no address for node {envelope.destination}")
            trace = commit_trace.TRACE
            if trace is not None and isinstance(request_rpc, FetchRequest):
                trace.note(commit_trace.FETCH_REQ_SENT, request_rpc.fetch_offset)
            version, body = await conn.call(
                api, lambda v: codec.encode_request(request_rpc, v), self._request_timeout_ms
            )
            response = codec.decode_response(body, version, self._listener_name)
            if trace is not None and isinstance(response, FetchResponse) and response.records:
                trace.note(
                    commit_trace.FETCH_RESP_RECEIVED, commit_trace.records_base_offset(response.records)
                )
            if response.error_code == Code.INCONSISTENT_CLUSTER_ID:
                self._warn_cluster_id(envelope.destination)
        except (EncodeVersionError, NoCommonVersionError) as e:
            log.info("%s%s to %d cannot be sent: %s", self._prefix, api.name, envelope.destination, e)
            response = error_response_for(request_rpc, Code.UNSUPPORTED_VERSION)
        except ChannelError:
            response = error_response_for(request_rpc, Code.BROKER_NOT_AVAILABLE)
        except asyncio.CancelledError:
            raise
        self._deliver(
            Envelope(
                source=envelope.destination,
                destination=envelope.source,
                correlation_id=envelope.correlation_id,
                body=response,
            )
        )

    def _warn_cluster_id(self, destination: int) -> None:
        now = time.monotonic()
        if now - self._last_cluster_warning >= 10:
            self._last_cluster_warning = now
            log.error(
                "%snode %d refused our request with INCONSISTENT_CLUSTER_ID: our cluster id %s does not "
                "match its own; was this node's log directory formatted with another cluster id?",
                self._prefix,
                destination,
                self._cluster_id,
            )
