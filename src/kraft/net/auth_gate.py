"""The authentication gate of one connection: which requests it may send before it has
authenticated, and the SASL exchange itself (Kafka's ``SaslServerAuthenticator`` state machine).

Sans-IO: the server feeds it decoded requests (or, after a v0 handshake, raw token frames) and
sends what it answers; it never touches the socket, the clock or a log. What it must not do: serve
anything. It only admits a request to the node or answers the SASL ones itself.

Main invariant: while ``state`` is not ``COMPLETE`` no request but ApiVersions, SaslHandshake and
SaslAuthenticate is admitted; anything else closes the connection (Kafka: ILLEGAL_SASL_STATE, "
Unexpected Kafka request ... during SASL handshake"). A refused exchange (unknown mechanism, bad
credentials, a malformed token) is answered with its error code and the connection is closed.

States (transitions in ``TRANSITIONS``, checked on every move)::

    HANDSHAKE_OR_VERSIONS --ApiVersions--> HANDSHAKE
    HANDSHAKE_OR_VERSIONS | HANDSHAKE --SaslHandshake v1--> AUTHENTICATE
                                      --SaslHandshake v0--> RAW_TOKEN   (tokens without headers)
    AUTHENTICATE --SaslAuthenticate, more to come--> AUTHENTICATE
    RAW_TOKEN --more to come--> RAW_TOKEN
    AUTHENTICATE | RAW_TOKEN --exchange done--> COMPLETE
    any but COMPLETE --refused--> FAILED (the connection closes)

A listener without SASL (PLAINTEXT, SSL) starts ``COMPLETE`` with the transport's principal (the
client certificate's subject, or ANONYMOUS). Re-authentication (KIP-368) is not supported: once
``COMPLETE``, SaslHandshake and SaslAuthenticate are answered ILLEGAL_SASL_STATE, as Kafka answers
them on a connection that has authenticated.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kraft.common.principal import ANONYMOUS, KafkaPrincipal
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.headers import API_VERSIONS_KEY
from kraft.protocol.messages import sasl_authenticate, sasl_handshake
from kraft.security.sasl import SaslAuthenticationError, SaslServer, SaslServerFactory

SASL_HANDSHAKE_KEY: Final = sasl_handshake.API.key
SASL_AUTHENTICATE_KEY: Final = sasl_authenticate.API.key


class AuthState(enum.Enum):
    HANDSHAKE_OR_VERSIONS = enum.auto()
    HANDSHAKE = enum.auto()
    AUTHENTICATE = enum.auto()
    RAW_TOKEN = enum.auto()
    COMPLETE = enum.auto()
    FAILED = enum.auto()


S = AuthState
TRANSITIONS: Final[Mapping[AuthState, frozenset[AuthState]]] = {
    S.HANDSHAKE_OR_VERSIONS: frozenset({S.HANDSHAKE, S.AUTHENTICATE, S.RAW_TOKEN, S.FAILED}),
    S.HANDSHAKE: frozenset({S.AUTHENTICATE, S.RAW_TOKEN, S.FAILED}),
    S.AUTHENTICATE: frozenset({S.AUTHENTICATE, S.COMPLETE, S.FAILED}),
    S.RAW_TOKEN: frozenset({S.RAW_TOKEN, S.COMPLETE, S.FAILED}),
    S.COMPLETE: frozenset(),
    S.FAILED: frozenset(),
}


class Refusal(enum.Enum):
    """Why the gate closed a connection (the server counts these per reason, not per line)."""

    ILLEGAL_SASL_STATE = "request before SASL authentication"
    UNSUPPORTED_SASL_MECHANISM = "unsupported SASL mechanism"
    AUTHENTICATION_FAILED = "SASL authentication failed"


@dataclass(frozen=True, slots=True)
class GateReply:
    """What to do with one request the gate looked at.

    ``body``: a response body (a struct of the request's API) to send, None for none; ``close``:
    close the connection once it is sent; ``refusal``: why, when closing.
    """

    body: Any = None
    close: bool = False
    refusal: Refusal | None = None


ADMIT: Final = None  # ``AuthGate.admit`` returns this for "serve the request as usual"


class AuthGate:
    """One connection's authentication state.

    Args:
        sasl: the listener's protocol is SASL_PLAINTEXT or SASL_SSL.
        enabled_mechanisms: ``sasl.enabled.mechanisms`` (what an UNSUPPORTED_SASL_MECHANISM answer
            lists).
        factory: mechanism name -> a fresh ``SaslServer``, None when not enabled.
        transport_principal: who the transport says the peer is (the TLS client certificate's
            subject), the principal of a connection without SASL.
    """

    def __init__(
        self,
        *,
        sasl: bool,
        enabled_mechanisms: Sequence[str] = (),
        factory: SaslServerFactory | None = None,
        transport_principal: KafkaPrincipal = ANONYMOUS,
    ) -> None:
        self._enabled = list(enabled_mechanisms)
        self._factory = factory
        self._server: SaslServer | None = None
        self.principal = transport_principal if not sasl else ANONYMOUS
        self.state = AuthState.HANDSHAKE_OR_VERSIONS if sasl else AuthState.COMPLETE
        self.mechanism: str | None = None

    @property
    def complete(self) -> bool:
        return self.state is AuthState.COMPLETE

    @property
    def expects_raw_token(self) -> bool:
        """After a v0 handshake the next frame is a bare token, not a request (KIP-43)."""
        return self.state is AuthState.RAW_TOKEN

    def _move(self, to: AuthState) -> None:
        # Invariant: every move is one TRANSITIONS allows.
        if to not in TRANSITIONS[self.state]:
            raise AssertionError(f"illegal authentication transition {self.state.name} -> {to.name}")
        self.state = to

    def _fail(self, refusal: Refusal, body: Any = None) -> GateReply:
        if self.state is not AuthState.FAILED:  # a failed connection stays failed, whatever follows
            self._move(AuthState.FAILED)
        self._server = None
        return GateReply(body, close=True, refusal=refusal)

    def admit(self, api_key: int) -> GateReply | None:
        """Before a request other than SaslHandshake/SaslAuthenticate is served: ``ADMIT`` (None)
        to serve it, else a reply that closes the connection."""
        if self.state is AuthState.COMPLETE:
            return ADMIT
        if api_key == API_VERSIONS_KEY and self.state is AuthState.HANDSHAKE_OR_VERSIONS:
            return ADMIT
        return self._fail(Refusal.ILLEGAL_SASL_STATE)

    def api_versions_answered(self) -> None:
        """A successful ApiVersions was answered before the handshake (a KIP-511 retry answer does
        not count: the client may send ApiVersions again)."""
        if self.state is AuthState.HANDSHAKE_OR_VERSIONS:
            self._move(AuthState.HANDSHAKE)

    def handshake(self, version: int, request: Any) -> GateReply:
        """A SaslHandshake request (``sasl_handshake.REQUEST`` value)."""
        cls = sasl_handshake.RESPONSE.cls
        if self.state is AuthState.COMPLETE:
            return GateReply(cls(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=list(self._enabled)))
        if self.state not in (AuthState.HANDSHAKE_OR_VERSIONS, AuthState.HANDSHAKE):
            return self._fail(Refusal.ILLEGAL_SASL_STATE)
        mechanism = str(request.mechanism)
        server = self._factory(mechanism) if self._factory is not None else None
        if server is None:
            body = cls(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=list(self._enabled))
            return self._fail(Refusal.UNSUPPORTED_SASL_MECHANISM, body)
        self._server = server
        self.mechanism = mechanism
        # KIP-152: v1 and later carry the tokens in SaslAuthenticate requests; v0 sends them bare.
        self._move(AuthState.AUTHENTICATE if version >= 1 else AuthState.RAW_TOKEN)
        return GateReply(cls(error_code=ErrorCode.NONE, mechanisms=list(self._enabled)))

    def authenticate(self, version: int, request: Any) -> GateReply:
        """A SaslAuthenticate request (``sasl_authenticate.REQUEST`` value)."""
        cls = sasl_authenticate.RESPONSE.cls
        if self.state is AuthState.COMPLETE:
            return GateReply(
                cls(
                    error_code=ErrorCode.ILLEGAL_SASL_STATE,
                    error_message="SaslAuthenticate request received after successful authentication",
                    auth_bytes=b"",
                )
            )
        if self.state is not AuthState.AUTHENTICATE or self._server is None:
            return self._fail(Refusal.ILLEGAL_SASL_STATE)
        try:
            challenge = self._evaluate(bytes(request.auth_bytes))
        except SaslAuthenticationError as e:
            body = cls(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=str(e), auth_bytes=b"")
            return self._fail(Refusal.AUTHENTICATION_FAILED, body)
        return GateReply(cls(error_code=ErrorCode.NONE, error_message=None, auth_bytes=challenge))

    def raw_token(self, token: bytes) -> GateReply:
        """A bare token after a v0 handshake; ``body`` is the bare challenge (bytes) to frame."""
        if self.state is not AuthState.RAW_TOKEN or self._server is None:
            return self._fail(Refusal.ILLEGAL_SASL_STATE)
        try:
            challenge = self._evaluate(token)
        except SaslAuthenticationError:
            # v0 has no error channel: Kafka closes the connection.
            return self._fail(Refusal.AUTHENTICATION_FAILED)
        return GateReply(challenge)

    def _evaluate(self, token: bytes) -> bytes:
        server = self._server
        assert server is not None
        challenge = server.evaluate(token)
        if server.complete:
            self.principal = server.principal
            self._server = None
            self._move(AuthState.COMPLETE)
        else:
            # A multi-step mechanism (SCRAM): the next token continues the same exchange.
            self._move(self.state)
        return challenge
