"""One blocking connection to one node, with the one version negotiation every client uses.

``Connection`` opens a TCP connection, sends ApiVersions first (KIP-511: v3, and v0 again when the
node answers UNSUPPORTED_VERSION) and remembers the ranges the node serves; ``version_for`` then
picks, for any API, the highest version both sides speak. The admin client (``kraft.client.admin``),
the broker admin client (``kraft.client.broker_admin``) and the controller client
(``kraft.client.controller``) all talk through it; ``BootstrapClient`` is what the first two share
around it: bootstrap addresses, an overall deadline per call, and exponential backoff between
rounds of attempts.

Also here: ``Address`` and ``parse_bootstrap`` (``host:port,...``), the errors every client raises
(``AdminError``, ``RetriableError``) and ``timeout_message``, which names each address tried and
its last outcome.

This module blocks and reads the clock; it belongs to the clients and the tools, never to the core
or the server.
"""

from __future__ import annotations

import secrets
import socket
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from kraft.common.errors import KraftError, RemoteProtocolError
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import api_versions as api_versions_msg
from kraft.protocol.messages import sasl_authenticate as sasl_authenticate_msg
from kraft.protocol.messages import sasl_handshake as sasl_handshake_msg
from kraft.security.plain import client_token as plain_client_token
from kraft.security.sasl import SaslAuthenticationError
from kraft.security.scram import ScramSaslClient

if TYPE_CHECKING:
    from kraft.client.security import ClientSecurityConfig

T = TypeVar("T")

# Responses larger than this are refused rather than buffered (a DescribeQuorum answer is tiny).
_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


def error_name(code: int) -> str:
    known = ErrorCode.from_wire(code)
    return f"error code {code}" if known is None else known.name


class AdminError(KraftError):
    """An admin operation failed; the message says what was tried and why it failed."""


class RetriableError(AdminError):
    """A condition that may clear by itself (no leader yet, node unreachable)."""


class AuthenticationError(AdminError):
    """The server refused this client's login or TLS handshake (wrong password, unknown user, a
    mechanism it does not enable, a certificate one side does not trust). Retrying cannot help, so
    callers give up at once, as Kafka's clients do on a SaslAuthenticationException or
    SslAuthenticationException, instead of retrying until the call's timeout."""


@dataclass(frozen=True, slots=True)
class FeatureMetadata:
    """What ApiVersions v3+ says about features (Kafka's ``FeatureMetadata``)."""

    supported: dict[str, tuple[int, int]]  # name -> (min, max) this node supports
    finalized: dict[str, int]  # name -> finalized level (max version level); level-0 ones absent
    epoch: int | None  # FinalizedFeaturesEpoch; None when the node did not say (-1)


@dataclass(frozen=True, slots=True, order=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_bootstrap(text: str) -> list[Address]:
    """Parses ``host:port[,host:port...]`` (IPv6 hosts in brackets).

    Raises:
        AdminError: an entry without a port, or a port that is not 1-65535.
    """
    addresses: list[Address] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        if item.startswith("["):
            host, sep, rest = item[1:].partition("]")
            port_text = rest[1:] if rest.startswith(":") else ""
            if not sep:
                raise AdminError(f"invalid bootstrap address '{item}': unclosed '['")
        else:
            host, _, port_text = item.rpartition(":")
        if not host or not port_text:
            raise AdminError(f"invalid bootstrap address '{item}': expected HOST:PORT")
        try:
            port = int(port_text)
        except ValueError:
            raise AdminError(
                f"invalid bootstrap address '{item}': port '{port_text}' is not a number"
            ) from None
        if not 0 < port < 65536:
            raise AdminError(f"invalid bootstrap address '{item}': port {port} is out of range")
        addresses.append(Address(host, port))
    if not addresses:
        raise AdminError("no bootstrap address given")
    return addresses


def highest_common_version(
    api: Api, served: tuple[int, int] | None, highest: int | None = None
) -> int | None:
    """The highest version of ``api`` that this client can write and a node serving ``served``
    (its ApiVersions range, None when it does not serve the API) accepts, at most ``highest``;
    None when the ranges do not meet."""
    if served is None:
        return None
    top = min(served[1], api.versions.high, highest if highest is not None else api.versions.high)
    low = max(served[0], api.versions.low)
    return top if top >= low else None


class Connection:
    """One blocking connection to one node, with API versions negotiated on open.

    Every request waits at most ``timeout_s`` for its response; a connection that saw an error is
    closed and must not be reused.
    """

    def __init__(
        self,
        address: Address,
        timeout_s: float,
        client_id: str = "kraft-admin",
        security: ClientSecurityConfig | None = None,
    ) -> None:
        self.address = address
        self._timeout_s = timeout_s
        self._client_id = client_id
        self._next_correlation_id = 1
        self._decoder = FrameDecoder(max_frame_bytes=_MAX_RESPONSE_BYTES)
        self._frames: list[bytes] = []
        try:
            self._sock = socket.create_connection((address.host, address.port), timeout=timeout_s)
        except OSError as e:
            raise RetriableError(f"cannot connect: {e.strerror or e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.versions: dict[int, tuple[int, int]] = {}
        self.features: FeatureMetadata | None = None  # set when ApiVersions v3+ answered
        try:
            if security is not None and security.ssl_context is not None:
                self._sock = _tls(self._sock, security.ssl_context, address)
            self._negotiate()
            if security is not None and security.mechanism is not None:
                self._login(security)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def timeout_s(self) -> float:
        """How long one request waits for its response."""
        return self._timeout_s

    def close(self) -> None:
        self._sock.close()

    def _negotiate(self) -> None:
        api = api_versions_msg.API
        body = api.request(client_software_name="kraft-admin", client_software_version="0.1.0")
        try:
            response = self.send(api, 3, body)
        except RemoteProtocolError:
            # KIP-511: a server that does not know v3 answers in v0 with UNSUPPORTED_VERSION,
            # which does not decode as v3; ask again in v0.
            response = None
        if response is not None and response.error_code == ErrorCode.NONE:
            self.features = FeatureMetadata(
                supported={f.name: (f.min_version, f.max_version) for f in response.supported_features},
                finalized={f.name: f.max_version_level for f in response.finalized_features},
                epoch=response.finalized_features_epoch if response.finalized_features_epoch >= 0 else None,
            )
        if response is None or response.error_code == ErrorCode.UNSUPPORTED_VERSION:
            response = self.send(api, 0, api.request())
        if response.error_code != ErrorCode.NONE:
            raise AdminError(f"{self.address} refused ApiVersions: {error_name(response.error_code)}")
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}

    def _login(self, security: ClientSecurityConfig) -> None:
        """SaslHandshake v1, then SaslAuthenticate v1+ tokens until the mechanism completes (KIP-152).

        Raises:
            AuthenticationError: the listener does not enable the mechanism, or refused the
                credentials (its message, as Kafka's clients report it).
        """
        mechanism, username, password = security.mechanism, security.username, security.password
        assert mechanism is not None and username is not None and password is not None
        handshake = self.send(sasl_handshake_msg.API, 1, sasl_handshake_msg.API.request(mechanism=mechanism))
        if handshake.error_code != ErrorCode.NONE:
            raise AuthenticationError(
                f"{self.address} does not enable SASL mechanism {mechanism} "
                f"(it enables {', '.join(handshake.mechanisms) or 'none'})"
            )
        api = sasl_authenticate_msg.API
        version = self.version_or_raise(api, 2)
        scram: ScramSaslClient | None = None
        if mechanism == "PLAIN":
            token = plain_client_token(username, password)
        else:
            scram = ScramSaslClient(mechanism, username, password, secrets.token_hex(16))
            token = scram.first()
        while True:
            answer = self.send(api, version, api.request(auth_bytes=token))
            if answer.error_code != ErrorCode.NONE:
                raise AuthenticationError(
                    f"{self.address} refused the login of {username!r}: "
                    f"{answer.error_message or error_name(answer.error_code)}"
                )
            if scram is None:
                return
            try:
                token = scram.evaluate(bytes(answer.auth_bytes))
            except SaslAuthenticationError as e:
                raise AuthenticationError(f"{self.address}: {e}") from None
            if scram.complete:
                return

    def version_for(self, api: Api, highest: int | None = None) -> int | None:
        """The highest version both sides speak (at most ``highest``), or None if none."""
        return highest_common_version(api, self.versions.get(api.key), highest)

    def version_or_raise(self, api: Api, highest: int | None = None) -> int:
        """``version_for``, or ``AdminError`` "ADDRESS does not serve NAME" when there is none."""
        version = self.version_for(api, highest)
        if version is None:
            raise AdminError(f"{self.address} does not serve {api.name}")
        return version

    def send(self, api: Api, version: int, body: Any) -> Any:
        """Sends one request and returns the decoded response body.

        Raises:
            RetriableError: the connection failed or timed out.
            RemoteProtocolError: the response could not be decoded.
        """
        return self.read_response(api, version, self.send_request(api, version, body))

    def send_request(self, api: Api, version: int, body: Any) -> int:
        """Writes one request without waiting for its answer and returns its correlation id.

        What ``read_response`` is for: a client with requests to several nodes writes them all, then
        reads each answer, so that their waits overlap (the consumer's long-polled Fetch to every
        leader). A request the node never answers (Produce with acks=0) is written and not read.
        Responses come back in request order (Kafka's rule), so read them in the order written.

        Raises:
            RetriableError: the connection failed or timed out.
        """
        correlation_id = self._next_correlation_id
        self._next_correlation_id += 1
        payload = encode_request(api, version, correlation_id, body, client_id=self._client_id)
        try:
            self._sock.sendall(frame(payload))
        except TimeoutError:
            raise RetriableError(
                f"could not send {api.name} within {self._timeout_s * 1000:.0f} ms"
            ) from None
        except OSError as e:
            raise RetriableError(f"connection failed: {e.strerror or e}") from None
        return correlation_id

    def read_response(self, api: Api, version: int, correlation_id: int) -> Any:
        """Reads the answer to the request ``send_request`` wrote as ``correlation_id``.

        Raises:
            RetriableError: the connection failed or timed out.
            RemoteProtocolError: the response could not be decoded or answers another request.
        """
        try:
            response = self._read_frame()
        except TimeoutError:
            raise RetriableError(f"no answer to {api.name} within {self._timeout_s * 1000:.0f} ms") from None
        except OSError as e:
            raise RetriableError(f"connection failed: {e.strerror or e}") from None
        got_id, decoded = decode_response(response, api, version)
        if got_id != correlation_id:
            raise RemoteProtocolError(
                f"{self.address} answered correlation id {got_id} to request {correlation_id}"
            )
        return decoded

    def _read_frame(self) -> bytes:
        while not self._frames:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionResetError(0, "connection closed by the server")
            self._frames.extend(self._decoder.feed(chunk))
        return self._frames.pop(0)


class Unreachable(Exception):
    """No node (or not the one wanted) could be reached; ``failures`` says why, per address.
    Raised inside the clients' rounds and caught there: it never leaves a public call."""

    def __init__(self, failures: Mapping[Address, str]) -> None:
        super().__init__("; ".join(f"{a}: {r}" for a, r in failures.items()))
        self.failures = dict(failures)


class ConnectionPool:
    """The open connections of one client, one per address, opened on first use.

    A connection that failed is dropped (``drop``) and opened again when next asked for.
    """

    def __init__(self, timeout_s: float, client_id: str, security: ClientSecurityConfig | None) -> None:
        self._timeout_s = timeout_s
        self._client_id = client_id
        self._security = security
        self._connections: dict[Address, Connection] = {}

    def get(self, address: Address) -> Connection:
        """The connection to ``address``, opened (and its versions negotiated) if needed.

        Raises:
            Unreachable: no connection, or ApiVersions refused.
            AuthenticationError: refused credentials or certificate (no retry can help).
        """
        conn = self._connections.get(address)
        if conn is not None:
            return conn
        try:
            conn = Connection(address, self._timeout_s, client_id=self._client_id, security=self._security)
        except AuthenticationError:
            raise
        except (AdminError, RemoteProtocolError) as e:  # unreachable, or ApiVersions refused
            raise Unreachable({address: str(e)}) from None
        self._connections[address] = conn
        return conn

    def first(self, candidates: Sequence[Address]) -> Connection:
        """An open connection, else the first of ``candidates`` that takes one.

        Raises:
            Unreachable: none did (why, per candidate).
        """
        for conn in self._connections.values():
            return conn
        failures: dict[Address, str] = {}
        for address in dict.fromkeys(candidates):
            try:
                return self.get(address)
            except Unreachable as e:
                failures.update(e.failures)
        raise Unreachable(failures)

    def any_address(self) -> Address | None:
        """The address of an open connection, or None."""
        return next(iter(self._connections), None)

    def drop(self, address: Address) -> None:
        conn = self._connections.pop(address, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()


def timeout_message(what: str, timeout_ms: int, outcomes: Mapping[Address, str]) -> str:
    """ "timed out after N ms waiting for WHAT", then each address tried and its last outcome."""
    lines = [f"timed out after {timeout_ms} ms waiting for {what}"]
    if not outcomes:
        lines.append("  (no address could be tried)")
    for address in sorted(outcomes):
        lines.append(f"  {address}: {outcomes[address]}")
    return "\n".join(lines)


def _tls(sock: socket.socket, context: ssl.SSLContext, address: Address) -> socket.socket:
    try:
        return context.wrap_socket(sock, server_hostname=address.host)
    except ssl.SSLError as e:
        sock.close()
        raise AuthenticationError(f"{address}: TLS handshake failed: {e.reason or e}") from None
    except OSError as e:
        sock.close()
        raise RetriableError(f"TLS handshake failed: {e.strerror or e}") from None


class ClientOptions(TypedDict, total=False):
    """The keyword arguments every ``BootstrapClient`` takes (see its docstring)."""

    security: ClientSecurityConfig | None
    timeout_ms: int
    request_timeout_ms: int
    retry_backoff_ms: int
    retry_backoff_max_ms: int
    clock: Callable[[], float]
    sleep: Callable[[float], None]


class BootstrapClient:
    """Bootstrap addresses, an overall deadline per public call, and backoff between attempts.

    Args:
        bootstrap: addresses to start from.
        timeout_ms: overall deadline of each public call, retries included.
        request_timeout_ms: deadline of one request on one connection.
        retry_backoff_ms, retry_backoff_max_ms: the pause after the n-th failed round is
            ``retry_backoff_ms * 2**n``, at most ``retry_backoff_max_ms`` (and never past the
            deadline).
        clock, sleep: seconds, for tests.
        security: TLS and SASL of every connection (``kraft.client.security``; None: PLAINTEXT).

    Raises:
        AdminError: no bootstrap address given.
    """

    def __init__(
        self,
        bootstrap: Sequence[Address],
        *,
        security: ClientSecurityConfig | None = None,
        timeout_ms: int = 30_000,
        request_timeout_ms: int = 5_000,
        retry_backoff_ms: int = 100,
        retry_backoff_max_ms: int = 1_000,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not bootstrap:
            raise AdminError("no bootstrap address given")
        self._security = security  # TLS and SASL for every connection (None: PLAINTEXT)
        self._bootstrap = list(bootstrap)
        self._timeout_ms = timeout_ms
        self._request_timeout_ms = request_timeout_ms
        self._retry_backoff_ms = retry_backoff_ms
        self._retry_backoff_max_ms = retry_backoff_max_ms
        self._clock = clock
        self._sleep = sleep

    def _connection_pool(self, client_id: str) -> ConnectionPool:
        """This client's connections: each socket waits a second longer than a request's timeout,
        so that a broker's own timeout answer wins."""
        return ConnectionPool((self._request_timeout_ms + 1_000) / 1000, client_id, self._security)

    def _deadline(self) -> float:
        return self._clock() + self._timeout_ms / 1000

    def _backoff(self, attempt: int, deadline: float) -> None:
        delay_ms = min(self._retry_backoff_max_ms, self._retry_backoff_ms * (2 ** min(attempt, 10)))
        remaining = deadline - self._clock()
        if remaining > 0:
            self._sleep(min(delay_ms / 1000, remaining))

    def _retry(self, what: str, outcomes: Mapping[Address, str], one_round: Callable[[float], T | None]) -> T:
        """Runs ``one_round(deadline)`` until it returns a result (not None), backing off between
        rounds; once a round ends past the call's deadline, raises ``AdminError`` with
        ``timeout_message`` over ``outcomes`` (which the rounds fill as they go)."""
        deadline = self._deadline()
        attempt = 0
        while True:
            result = one_round(deadline)
            if result is not None:
                return result
            if self._clock() >= deadline:
                raise AdminError(timeout_message(what, self._timeout_ms, outcomes))
            self._backoff(attempt, deadline)
            attempt += 1


__all__ = [
    "Address",
    "AdminError",
    "AuthenticationError",
    "BootstrapClient",
    "ClientOptions",
    "Connection",
    "ConnectionPool",
    "FeatureMetadata",
    "RetriableError",
    "Unreachable",
    "error_name",
    "highest_common_version",
    "parse_bootstrap",
    "timeout_message",
]
