"""The per-connection authentication gate as tables: what is admitted in each state, and how each
SASL request moves it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.common.principal import ANONYMOUS, KafkaPrincipal
from kraft.net.auth_gate import ADMIT, TRANSITIONS, AuthGate, AuthState, Refusal
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import sasl_authenticate, sasl_handshake
from kraft.security.plain import PlainServer, client_token
from kraft.security.sasl import PLAIN, SaslAuthenticationError, mechanism_factory

METADATA, API_VERSIONS, CREATE_TOPICS = 3, 18, 19
ALICE = KafkaPrincipal("User", "alice")


def gate(enabled: tuple[str, ...] = (PLAIN, "SCRAM-SHA-512")) -> AuthGate:
    factory = mechanism_factory(enabled, {PLAIN: lambda: PlainServer({"alice": "pw"})})
    return AuthGate(sasl=True, enabled_mechanisms=enabled, factory=factory)


def hs(mechanism: str) -> Any:
    return sasl_handshake.REQUEST.cls(mechanism=mechanism)


def auth(token: bytes) -> Any:
    return sasl_authenticate.REQUEST.cls(auth_bytes=token)


def test_plaintext_or_ssl_listener_admits_everything_with_the_transport_principal() -> None:
    cert = KafkaPrincipal("User", "CN=client,O=kraft")
    g = AuthGate(sasl=False, transport_principal=cert)
    assert g.complete and g.principal == cert
    assert g.admit(METADATA) is ADMIT and g.admit(API_VERSIONS) is ADMIT
    assert AuthGate(sasl=False).principal == ANONYMOUS


@pytest.mark.parametrize("key", [METADATA, CREATE_TOPICS, 1, 0, 55])
def test_any_other_request_before_authentication_closes_the_connection(key: int) -> None:
    g = gate()
    reply = g.admit(key)
    assert reply is not None and reply.close and reply.body is None
    assert reply.refusal is Refusal.ILLEGAL_SASL_STATE
    assert g.state is AuthState.FAILED and g.principal == ANONYMOUS


def test_api_versions_is_admitted_once_before_the_handshake() -> None:
    g = gate()
    assert g.admit(API_VERSIONS) is ADMIT
    g.api_versions_answered()
    assert g.state is AuthState.HANDSHAKE
    reply = g.admit(API_VERSIONS)  # Kafka: a second one during the handshake is illegal
    assert reply is not None and reply.close


def test_plain_over_v1_handshake_completes_with_the_user_principal() -> None:
    g = gate()
    g.admit(API_VERSIONS)
    g.api_versions_answered()
    reply = g.handshake(1, hs(PLAIN))
    assert not reply.close and reply.body.error_code == ErrorCode.NONE
    assert reply.body.mechanisms == [PLAIN, "SCRAM-SHA-512"]
    assert g.state is AuthState.AUTHENTICATE
    assert g.admit(METADATA) is not ADMIT  # still not authenticated: closes
    g2 = gate()
    g2.handshake(1, hs(PLAIN))
    reply = g2.authenticate(2, auth(client_token("alice", "pw")))
    assert not reply.close and reply.body.error_code == ErrorCode.NONE and reply.body.auth_bytes == b""
    assert g2.complete and g2.principal == ALICE and g2.mechanism == PLAIN
    assert g2.admit(METADATA) is ADMIT


@pytest.mark.parametrize("mechanism", ["GSSAPI", "plain", "", "SCRAM-SHA-512"])
def test_unsupported_mechanism_lists_the_enabled_ones_and_closes(mechanism: str) -> None:
    g = gate()
    reply = g.handshake(1, hs(mechanism))
    assert reply.close and reply.refusal is Refusal.UNSUPPORTED_SASL_MECHANISM
    assert reply.body.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert reply.body.mechanisms == [PLAIN, "SCRAM-SHA-512"]
    assert g.state is AuthState.FAILED


@pytest.mark.parametrize("token", [client_token("alice", "nope"), client_token("eve", "pw"), b"garbage"])
def test_bad_credentials_answer_sasl_authentication_failed_then_close(token: bytes) -> None:
    g = gate()
    g.handshake(1, hs(PLAIN))
    reply = g.authenticate(1, auth(token))
    assert reply.close and reply.refusal is Refusal.AUTHENTICATION_FAILED
    assert reply.body.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED and reply.body.error_message
    assert g.state is AuthState.FAILED and g.principal == ANONYMOUS


def test_authenticate_before_handshake_closes() -> None:
    g = gate()
    reply = g.authenticate(2, auth(client_token("alice", "pw")))
    assert reply.close and reply.refusal is Refusal.ILLEGAL_SASL_STATE and not g.complete


def test_a_second_handshake_during_the_exchange_closes() -> None:
    g = gate()
    g.handshake(1, hs(PLAIN))
    assert g.handshake(1, hs(PLAIN)).close


def test_sasl_requests_after_authentication_answer_illegal_sasl_state_and_keep_the_connection() -> None:
    g = gate()
    g.handshake(1, hs(PLAIN))
    g.authenticate(1, auth(client_token("alice", "pw")))
    again = g.handshake(1, hs(PLAIN))
    assert not again.close and again.body.error_code == ErrorCode.ILLEGAL_SASL_STATE
    again = g.authenticate(1, auth(b""))
    assert not again.close and again.body.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert g.complete and g.principal == ALICE


def test_v0_handshake_takes_one_raw_token() -> None:
    g = gate()
    assert not g.handshake(0, hs(PLAIN)).close
    assert g.expects_raw_token
    reply = g.raw_token(client_token("alice", "pw"))
    assert not reply.close and reply.body == b"" and g.complete and g.principal == ALICE
    bad = gate()
    bad.handshake(0, hs(PLAIN))
    reply = bad.raw_token(client_token("alice", "x"))
    assert reply.close and reply.body is None and bad.state is AuthState.FAILED


class _TwoStep:
    """A multi-step mechanism (SCRAM's shape): a challenge, then completion."""

    mechanism = "TWO"

    def __init__(self) -> None:
        self.steps = 0

    def evaluate(self, token: bytes) -> bytes:
        if token != b"step%d" % self.steps:
            raise SaslAuthenticationError("bad step")
        self.steps += 1
        return b"challenge%d" % self.steps

    @property
    def complete(self) -> bool:
        return self.steps == 2

    @property
    def principal(self) -> KafkaPrincipal:
        return ALICE


def two_step_gate() -> AuthGate:
    return AuthGate(
        sasl=True, enabled_mechanisms=["TWO"], factory=mechanism_factory(["TWO"], {"TWO": _TwoStep})
    )


def test_a_multi_step_mechanism_stays_in_authenticate_until_complete() -> None:
    g = two_step_gate()
    g.handshake(1, hs("TWO"))
    first = g.authenticate(2, auth(b"step0"))
    assert first.body.auth_bytes == b"challenge1" and g.state is AuthState.AUTHENTICATE
    assert g.admit(METADATA) is not ADMIT
    g2 = AuthGate(
        sasl=True, enabled_mechanisms=["TWO"], factory=mechanism_factory(["TWO"], {"TWO": _TwoStep})
    )
    g2.handshake(1, hs("TWO"))
    g2.authenticate(2, auth(b"step0"))
    second = g2.authenticate(2, auth(b"step1"))
    assert second.body.auth_bytes == b"challenge2" and g2.complete and g2.principal == ALICE


def test_transitions_table_is_closed_and_terminal_states_are_final() -> None:
    assert set(TRANSITIONS) == set(AuthState)
    assert TRANSITIONS[AuthState.COMPLETE] == frozenset() == TRANSITIONS[AuthState.FAILED]
    for targets in TRANSITIONS.values():
        assert targets <= set(AuthState)


@settings(max_examples=300, deadline=None)
@given(token=st.binary(max_size=64), version=st.integers(0, 2))
def test_fuzzed_tokens_never_authenticate_without_the_password(token: bytes, version: int) -> None:
    g = gate()
    g.handshake(1, hs(PLAIN))
    reply = g.authenticate(version, auth(token))
    if token in (client_token("alice", "pw"), b"alice\x00alice\x00pw"):
        assert g.complete
    else:
        assert reply.close and g.state is AuthState.FAILED and g.principal == ANONYMOUS


@settings(max_examples=200, deadline=None)
@given(mechanism=st.text(max_size=20), key=st.integers(0, 90))
def test_fuzzed_handshakes_and_requests_never_admit_before_authentication(mechanism: str, key: int) -> None:
    g = gate()
    g.handshake(1, hs(mechanism))
    if key not in (17, 36):
        reply = g.admit(key)
        assert reply is not None and reply.close
    assert not g.complete and g.principal == ANONYMOUS
