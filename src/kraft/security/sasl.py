"""The mechanism-neutral face of SASL on the server side (Kafka's ``javax.security.sasl.SaslServer``
as ``SaslServerAuthenticator`` drives it).

What it owns: the interface every mechanism implements (PLAIN in ``plain.py``, SCRAM in
``scram.py``), the error a mechanism raises, and the mechanism names Kafka accepts. What it must not
do: touch a socket or a clock; a mechanism is a state machine fed with the client's tokens, one per
SaslAuthenticate request, and the network shell only carries the bytes.

Contract of a ``SaslServer`` (invariant): ``principal`` is read only once ``complete`` is true, and
``evaluate`` is never called again after it returned with ``complete`` true or after it raised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from kraft.common.errors import KraftError
from kraft.common.principal import KafkaPrincipal

PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_512 = "SCRAM-SHA-512"
# Kafka's sasl.enabled.mechanisms default (BrokerSecurityConfigs.DEFAULT_SASL_ENABLED_MECHANISMS).
DEFAULT_ENABLED_MECHANISMS = (PLAIN,)


class SaslAuthenticationError(KraftError):
    """The client's token was refused. ``str(e)`` goes back to the client as the SaslAuthenticate
    response's ErrorMessage (SASL_AUTHENTICATION_FAILED), so it must say nothing a stranger should
    not learn (Kafka answers "Invalid username or password" whether the user exists or not)."""


class SaslServer(Protocol):
    """One authentication exchange of one mechanism on one connection (fresh per attempt)."""

    mechanism: str

    def evaluate(self, token: bytes) -> bytes:
        """Take the client's next token; return the next challenge (b"" when there is none).

        Raises:
            SaslAuthenticationError: the token is malformed or the credentials are wrong.
        """
        ...

    @property
    def complete(self) -> bool:
        """True once the exchange has succeeded."""
        ...

    @property
    def principal(self) -> KafkaPrincipal:
        """Who authenticated; valid only once ``complete``."""
        ...


SaslServerFactory = Callable[[str], SaslServer | None]
"""Mechanism name -> a fresh server for one exchange, or None when that mechanism is not enabled."""


def mechanism_factory(
    enabled: Sequence[str], makers: Mapping[str, Callable[[], SaslServer]]
) -> SaslServerFactory:
    """A ``SaslServerFactory`` serving the ``enabled`` mechanisms that have a maker.

    A name in ``enabled`` without a maker (SCRAM before its credentials are wired) yields None, as
    does any name not enabled; mechanism names are matched exactly (Kafka's are case-sensitive).
    """
    allowed = {name: makers[name] for name in enabled if name in makers}

    def create(mechanism: str) -> SaslServer | None:
        maker = allowed.get(mechanism)
        return None if maker is None else maker()

    return create
