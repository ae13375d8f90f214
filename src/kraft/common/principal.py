"""Who sent a request: Kafka's ``KafkaPrincipal`` (``User:alice``), as authentication found it.

It lives below the protocol layer because every request envelope carries one: the network shell sets
it when a connection authenticates (TLS client certificate, SASL), the sans-IO cores read it to
authorise. A connection that did not authenticate (a PLAINTEXT listener, or SSL without a client
certificate) is ``User:ANONYMOUS``, as in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraft.common.errors import KraftError

USER_TYPE = "User"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    """A principal type (``User``, or ``Group`` in ACLs) and a name; ``str()`` is Kafka's form."""

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """``"User:alice"`` -> ``KafkaPrincipal("User", "alice")``; the name may contain ``:``."""
        kind, sep, name = text.partition(":")
        if not sep or not kind or not name:
            raise KraftError(f"a principal is TYPE:NAME (for example User:alice), not {text!r}")
        return cls(kind, name)


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")
"""The principal of a connection that did not authenticate (Kafka's ``KafkaPrincipal.ANONYMOUS``)."""
