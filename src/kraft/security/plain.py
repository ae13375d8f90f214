"""SASL/PLAIN (RFC 4616) with users from a JAAS config (Kafka's ``PlainSaslServer`` and
``PlainServerCallbackHandler``).

The client sends one token, ``[authzid] NUL authcid NUL passwd`` in UTF-8; the server answers with
nothing and the exchange is over. Users are the ``user_<name>="<password>"`` options of a
``PlainLoginModule`` entry; its ``username``/``password`` options are the node's own credentials for
its outbound connections (``client_token``).

PLAIN sends the password in clear: run it over SASL_SSL outside a test bench (Kafka says the same).

Invariant: the time to refuse a login does not depend on whether the user exists nor on how much of
the password matched (``hmac.compare_digest``, against a dummy password for an unknown user).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field

from kraft.common.errors import ConfigError
from kraft.common.principal import USER_TYPE, KafkaPrincipal
from kraft.security.jaas import PLAIN_LOGIN_MODULE, JaasEntry
from kraft.security.sasl import PLAIN, SaslAuthenticationError

_USER_PREFIX = "user_"
# Kafka's answer for both an unknown user and a wrong password: it tells a stranger nothing.
INVALID_CREDENTIALS = "Authentication failed: Invalid username or password"
_DUMMY = b"\x00" * 32


@dataclass(frozen=True, slots=True)
class PlainUsers:
    """The users a PLAIN listener accepts (name -> password) and the node's own credentials."""

    users: Mapping[str, str] = field(repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def from_jaas(cls, entry: JaasEntry, prop: str = "sasl.jaas.config") -> PlainUsers:
        if entry.login_module != PLAIN_LOGIN_MODULE:
            raise ConfigError(f"{prop}: PLAIN needs {PLAIN_LOGIN_MODULE}, not {entry.login_module}")
        users = {
            name[len(_USER_PREFIX) :]: value
            for name, value in entry.options.items()
            if name.startswith(_USER_PREFIX) and len(name) > len(_USER_PREFIX)
        }
        return cls(users, entry.option("username"), entry.option("password"))


class PlainServer:
    """One PLAIN exchange: one token in, empty challenge out, then complete (or refused)."""

    mechanism = PLAIN

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self._principal: KafkaPrincipal | None = None

    @property
    def complete(self) -> bool:
        return self._principal is not None

    @property
    def principal(self) -> KafkaPrincipal:
        if self._principal is None:
            raise SaslAuthenticationError("PLAIN authentication is not complete")
        return self._principal

    def evaluate(self, token: bytes) -> bytes:
        if self._principal is not None:
            raise SaslAuthenticationError("PLAIN authentication is already complete")
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise SaslAuthenticationError("Invalid SASL/PLAIN response: not UTF-8") from None
        parts = text.split("\x00")
        if len(parts) != 3:
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = parts
        if not username:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        expected = self._users.get(username)
        ok = hmac.compare_digest(
            password.encode("utf-8"), _DUMMY if expected is None else expected.encode("utf-8")
        )
        if expected is None or not ok:
            raise SaslAuthenticationError(INVALID_CREDENTIALS)
        if authzid and authzid != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self._principal = KafkaPrincipal(USER_TYPE, username)
        return b""


def client_token(username: str, password: str) -> bytes:
    """The PLAIN token a client sends (no authorization id, as Kafka's client)."""
    return b"\x00" + username.encode("utf-8") + b"\x00" + password.encode("utf-8")
