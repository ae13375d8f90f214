"""kraft's own SCRAM client (what its tools log in with): RFC 7677's exchange byte for byte, both
mechanisms against kraft's server, and a server that cannot prove the credential is refused."""

from __future__ import annotations

import base64
import random

import pytest
from rfc7677 import RFC_CLIENT_FINAL, RFC_CLIENT_FIRST, RFC_CLIENT_NONCE, RFC_SERVER_FINAL, RFC_SERVER_FIRST

from kraft.common.errors import KraftError
from kraft.metadata.scram import ScramMechanism
from kraft.security.sasl import SaslAuthenticationError
from kraft.security.scram import ScramSaslClient, ScramSaslServer, credential_from_password


def test_rfc7677_exchange_byte_for_byte() -> None:
    client = ScramSaslClient("SCRAM-SHA-256", "user", "pencil", RFC_CLIENT_NONCE)
    assert client.first() == RFC_CLIENT_FIRST
    assert client.evaluate(RFC_SERVER_FIRST) == RFC_CLIENT_FINAL
    assert not client.complete
    assert client.evaluate(RFC_SERVER_FINAL) == b""
    assert client.complete


@pytest.mark.parametrize("mechanism", [ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512])
def test_logs_in_to_krafts_server_and_a_wrong_password_does_not(mechanism: ScramMechanism) -> None:
    rng = random.Random(3)
    credential = credential_from_password(mechanism, "s3cret", random_bytes=rng.randbytes, iterations=4096)

    def login(password: str) -> bool:
        server = ScramSaslServer(mechanism.mechanism_name, {"al,ice=": credential}.get, lambda: "srv")
        client = ScramSaslClient(mechanism.mechanism_name, "al,ice=", password, "cli")
        try:
            final = client.evaluate(server.evaluate(client.first()))
            client.evaluate(server.evaluate(final))
        except SaslAuthenticationError:
            return False
        return server.complete and client.complete and str(server.principal) == "User:al,ice="

    assert login("s3cret")
    assert not login("wrong")


def test_a_server_that_cannot_prove_the_credential_is_refused() -> None:
    client = ScramSaslClient("SCRAM-SHA-256", "user", "pencil", RFC_CLIENT_NONCE)
    client.evaluate(RFC_SERVER_FIRST)
    forged = b"v=" + base64.b64encode(bytes(32))
    with pytest.raises(SaslAuthenticationError, match="signature does not verify"):
        client.evaluate(forged)
    assert not client.complete


@pytest.mark.parametrize(
    "server_first, reason",
    [
        (b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "does not extend"),
        (b"r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "does not extend"),
        (b"r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=10", "too few"),
        (b"r=rOprNGfwEbeRWgbNEkqOx,i=4096", "malformed"),
        (b"e=invalid-proof", "malformed"),
    ],
)
def test_a_bad_server_first_message_is_refused(server_first: bytes, reason: str) -> None:
    client = ScramSaslClient("SCRAM-SHA-256", "user", "pencil", RFC_CLIENT_NONCE)
    with pytest.raises(SaslAuthenticationError, match=reason):
        client.evaluate(server_first)


def test_an_unknown_mechanism_or_a_bad_nonce_is_a_programming_error() -> None:
    with pytest.raises(KraftError, match="not a SCRAM mechanism"):
        ScramSaslClient("SCRAM-MD5", "u", "p", "n")
    with pytest.raises(KraftError, match="nonce"):
        ScramSaslClient("SCRAM-SHA-256", "u", "p", "has,comma")
