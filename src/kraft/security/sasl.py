"""The SASL server seam: what a mechanism (PLAIN, SCRAM) offers the network shell."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kraft.common.errors import KraftError
from kraft.common.principal import KafkaPrincipal


class SaslAuthenticationError(KraftError): ...  # str(e) goes to the client as ErrorMessage


class SaslServer(Protocol):
    mechanism: str

    def evaluate(self, token: bytes) -> bytes: ...  # next challenge; raises SaslAuthenticationError

    @property
    def complete(self) -> bool: ...

    @property
    def principal(self) -> KafkaPrincipal: ...  # valid once complete


SaslServerFactory = Callable[[str], SaslServer | None]
