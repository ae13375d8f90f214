"""The SCRAM server state machine and credential formatting (RFC 5802, RFC 7677)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from kafka.net.sasl.scram import ScramClient
from rfc7677 import (
    RFC_CLIENT_FINAL,
    RFC_CLIENT_FIRST,
    RFC_SALT,
    RFC_SERVER_FINAL,
    RFC_SERVER_FIRST,
    RFC_SERVER_NONCE,
)

from kraft.common.errors import KraftError
from kraft.common.principal import KafkaPrincipal
from kraft.metadata.image import MetadataImage
from kraft.metadata.scram import ScramCredential, ScramImage, ScramMechanism
from kraft.security.sasl import SaslAuthenticationError, SaslServer
from kraft.security.scram import (
    INVALID_CREDENTIALS,
    ScramSaslServer,
    credential_from_password,
    credential_from_salted_password,
    salted_password,
    scram_server_factory,
)

SHA256 = ScramMechanism.SCRAM_SHA_256
SHA512 = ScramMechanism.SCRAM_SHA_512
MECHANISMS = [SHA256, SHA512]


def _random_bytes(n: int) -> bytes:
    return random.Random(7).randbytes(n)


def _server(
    mechanism: ScramMechanism,
    users: dict[str, ScramCredential],
    nonce: str = "servernonce",
) -> ScramSaslServer:
    return ScramSaslServer(mechanism.mechanism_name, users.get, lambda: nonce, fake_salt_key=b"k")


def _credential(mechanism: ScramMechanism, password: str, iterations: int = 4096) -> ScramCredential:
    return credential_from_password(mechanism, password, random_bytes=_random_bytes, iterations=iterations)


# ---------------------------------------------------------------------------------------------------
# RFC 7677's example, byte for byte


def test_rfc7677_example_exchange_byte_for_byte() -> None:
    credential = credential_from_password(SHA256, "pencil", random_bytes=_random_bytes, salt=RFC_SALT)
    server = _server(SHA256, {"user": credential}, nonce=RFC_SERVER_NONCE)
    assert server.evaluate(RFC_CLIENT_FIRST) == RFC_SERVER_FIRST
    assert not server.complete
    assert server.evaluate(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL
    assert server.complete
    assert server.principal == KafkaPrincipal("User", "user")


def test_credential_holds_keys_derived_as_rfc5802_says_and_never_the_password() -> None:
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", RFC_SALT, 4096)
    assert salted_password(SHA256, "pencil", RFC_SALT, 4096) == salted
    credential = credential_from_salted_password(SHA256, RFC_SALT, salted, 4096)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    assert credential.stored_key == hashlib.sha256(client_key).digest()
    assert credential.server_key == hmac.new(salted, b"Server Key", "sha256").digest()
    assert salted not in (credential.stored_key, credential.server_key, credential.salt)
    text = repr(credential)
    assert "hidden" in text and repr(RFC_SALT) not in text and credential.stored_key.hex() not in text


@pytest.mark.parametrize("iterations", [4095, 16385])
def test_credential_iterations_outside_kafkas_range_are_refused(iterations: int) -> None:
    with pytest.raises(KraftError, match="iterations"):
        _credential(SHA256, "x", iterations)


def test_salt_comes_from_the_injected_random_source() -> None:
    credential = credential_from_password(SHA512, "pw", random_bytes=lambda n: b"\x01" * n)
    assert credential.salt == b"\x01" * 32
    assert len(credential.stored_key) == len(credential.server_key) == 64


# ---------------------------------------------------------------------------------------------------
# An independent client (kafka-python's ScramClient) against the server


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.mechanism_name)
def test_kafka_python_client_authenticates_with_both_mechanisms(mechanism: ScramMechanism) -> None:
    server = _server(mechanism, {"alice": _credential(mechanism, "alice-secret", 8192)})
    client = ScramClient("alice", "alice-secret", mechanism.mechanism_name)
    client.process_server_first_message(server.evaluate(client.first_message()))
    client.process_server_final_message(server.evaluate(client.final_message()))  # checks v=
    assert server.complete and server.principal == KafkaPrincipal("User", "alice")


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.mechanism_name)
def test_wrong_password_and_unknown_user_fail_alike(mechanism: ScramMechanism) -> None:
    users = {"alice": _credential(mechanism, "alice-secret")}
    outcomes = []
    for user, password in (("alice", "wrong"), ("mallory", "alice-secret")):
        server = _server(mechanism, users)
        client = ScramClient(user, password, mechanism.mechanism_name)
        first = server.evaluate(client.first_message())  # an unknown user gets a challenge too
        client.process_server_first_message(first)
        with pytest.raises(SaslAuthenticationError) as e:
            server.evaluate(client.final_message())
        outcomes.append(str(e.value))
        assert not server.complete
    assert outcomes[0] == outcomes[1] == INVALID_CREDENTIALS.format(mechanism.mechanism_name)


def test_unknown_users_salt_is_stable_so_probes_cannot_tell_it_from_a_real_one() -> None:
    def salt_of(user: str, nonce_key: bytes) -> bytes:
        server = ScramSaslServer("SCRAM-SHA-256", {}.get, lambda: "n", fake_salt_key=nonce_key)
        first = server.evaluate(f"n,,n={user},r=abc".encode()).decode()
        return base64.b64decode(first.split(",")[1][2:])

    assert salt_of("ghost", b"k1") == salt_of("ghost", b"k1")
    assert salt_of("ghost", b"k1") != salt_of("other", b"k1")
    assert salt_of("ghost", b"k1") != salt_of("ghost", b"k2")


def test_credential_below_the_minimum_iterations_never_authenticates() -> None:
    salted = salted_password(SHA256, "pw", b"salt", 1000)
    weak = credential_from_salted_password(SHA256, b"salt", salted, 1000)
    client = _Client(SHA256, "bob", "pw")
    server = _server(SHA256, {"bob": weak})
    first = server.evaluate(client.first())
    assert b"i=4096" in first  # the stand-in, not the stored credential
    with pytest.raises(SaslAuthenticationError):
        server.evaluate(client.final(first))


# ---------------------------------------------------------------------------------------------------
# Every step cut or tampered


@dataclass
class _Client:
    """A tiny RFC 5802 client whose every part can be tampered with, keeping the proof valid over
    whatever it sends (so only the tampered part can be what the server refuses)."""

    mechanism: ScramMechanism
    user: str
    password: str
    gs2: str = "n,,"
    nonce: str = "clientnonce"
    first_extra: str = ""
    channel: str | None = None
    final_nonce: Callable[[str], str] = lambda n: n
    final_extra: str = ""

    def first(self) -> bytes:
        self.bare = f"n={self.user},r={self.nonce}{self.first_extra}"
        return (self.gs2 + self.bare).encode()

    def final(self, server_first: bytes) -> bytes:
        fields = dict(p.split("=", 1) for p in server_first.decode().split(","))
        channel = self.channel if self.channel is not None else base64.b64encode(self.gs2.encode()).decode()
        without_proof = f"c={channel},r={self.final_nonce(fields['r'])}{self.final_extra}"
        salted = salted_password(
            self.mechanism, self.password, base64.b64decode(fields["s"]), int(fields["i"])
        )
        name = self.mechanism.hash_name
        client_key = hmac.new(salted, b"Client Key", name).digest()
        stored = hashlib.new(name, client_key).digest()
        auth = f"{self.bare},{server_first.decode()},{without_proof}".encode()
        signature = hmac.new(stored, auth, name).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def _alice_server(mechanism: ScramMechanism = SHA256) -> ScramSaslServer:
    return _server(mechanism, {"alice": _credential(mechanism, "pw"), "a,b=c": _credential(mechanism, "pw")})


def test_the_tampering_client_authenticates_when_untampered() -> None:
    server = _alice_server()
    client = _Client(SHA256, "alice", "pw")
    answer = server.evaluate(client.final(server.evaluate(client.first())))
    assert server.complete and answer.startswith(b"v=")


def test_a_second_client_first_is_a_protocol_error() -> None:
    server = _alice_server()
    client = _Client(SHA256, "alice", "pw")
    server.evaluate(client.first())
    with pytest.raises(SaslAuthenticationError):
        server.evaluate(client.first())
    assert not server.complete


def test_user_names_with_escaped_comma_and_equals_decode() -> None:
    server = _alice_server()
    client = _Client(SHA256, "a=2Cb=3Dc", "pw")
    server.evaluate(client.final(server.evaluate(client.first())))
    assert server.principal == KafkaPrincipal("User", "a,b=c")


@pytest.mark.parametrize(
    "client",
    [
        _Client(SHA256, "alice", "pw", gs2="y,,"),  # channel binding flags other than n
        _Client(SHA256, "alice", "pw", gs2="p=tls-unique,,"),
        _Client(SHA256, "alice", "pw", gs2="n,a=bob,"),  # authzid of someone else
        _Client(SHA256, "alice", "pw", first_extra=",tokenauth=true"),  # extensions
        _Client(SHA256, "alice", "pw", first_extra=",x=1"),
        _Client(SHA256, "alice", "pw", nonce="has space"),
        _Client(SHA256, "al=ice", "pw"),  # a bare "=" in a saslname
        _Client(SHA256, "", "pw"),
    ],
    ids=["flag-y", "flag-p", "authzid", "tokenauth", "extension", "bad-nonce", "bad-name", "no-name"],
)
def test_refuses_tampered_client_first(client: _Client) -> None:
    server = _alice_server()
    with pytest.raises(SaslAuthenticationError):
        server.evaluate(client.first())
    assert not server.complete


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"n,,",
        b"n,",
        b"n,,r=abc,n=alice",
        b"n,,n=alice",
        b"n,,m=ext,n=alice,r=abc",
        b"\xff\xfe",
        b"n,,n=al\x00ice,r=abc",
        b"n,x,n=alice,r=abc",
        b"n,,n=alice,r=" + b"a" * 9000,
    ],
)
def test_refuses_malformed_client_first(raw: bytes) -> None:
    with pytest.raises(SaslAuthenticationError):
        _alice_server().evaluate(raw)


@pytest.mark.parametrize(
    "client",
    [
        _Client(SHA256, "alice", "pw", channel=base64.b64encode(b"y,,").decode()),  # bad channel binding
        _Client(SHA256, "alice", "pw", channel="eSws"),
        _Client(SHA256, "alice", "pw", final_nonce=lambda n: n + "x"),  # bad nonce
        _Client(SHA256, "alice", "pw", final_nonce=lambda n: n[: len("clientnonce")]),
        _Client(SHA256, "alice", "pw", final_nonce=lambda n: "evil" + n[len("clientnonce") :]),
        _Client(SHA256, "alice", "pw", final_extra=",x=1"),  # extensions
        _Client(SHA256, "alice", "wrong"),  # bad proof
    ],
    ids=[
        "cbind-y",
        "cbind-garbage",
        "nonce-longer",
        "nonce-client-only",
        "nonce-other-client",
        "ext",
        "proof",
    ],
)
def test_refuses_tampered_client_final(client: _Client) -> None:
    server = _alice_server()
    first = server.evaluate(client.first())
    with pytest.raises(SaslAuthenticationError):
        server.evaluate(client.final(first))
    assert not server.complete
    with pytest.raises(SaslAuthenticationError):  # and stays failed
        server.evaluate(client.final(first))


def _valid_final() -> tuple[ScramSaslServer, bytes]:
    server = _alice_server()
    client = _Client(SHA256, "alice", "pw")
    return server, client.final(server.evaluate(client.first()))


def _flip_proof_bit(final: bytes) -> bytes:
    head, proof = final.rsplit(b",p=", 1)
    raw = bytearray(base64.b64decode(proof))
    raw[0] ^= 1
    return head + b",p=" + base64.b64encode(bytes(raw))


@pytest.mark.parametrize(
    "mutate",
    [
        lambda f: f[:-1],  # cut anywhere
        lambda f: f[: len(f) // 2],
        lambda f: f.split(b",p=")[0],  # no proof
        lambda f: f + b"AAAA",  # proof too long
        lambda f: f.replace(b"c=biws", b"c=bi!s"),
        _flip_proof_bit,
        lambda f: b"r=x," + f,
        lambda f: b"",
    ],
)
def test_refuses_cut_or_corrupted_client_final(mutate: Callable[[bytes], bytes]) -> None:
    server, final = _valid_final()
    with pytest.raises(SaslAuthenticationError):
        server.evaluate(mutate(final))
    assert not server.complete


def test_every_cut_of_either_client_message_is_refused() -> None:
    client = _Client(SHA256, "alice", "pw")
    first = client.first()
    for i in range(len(first)):
        server = _alice_server()
        try:
            answer = server.evaluate(first[:i])
        except SaslAuthenticationError:
            continue
        # A prefix that parses (a shorter nonce) must still not let the exchange complete.
        with pytest.raises(SaslAuthenticationError):
            server.evaluate(client.final(answer))
    server, final = _valid_final()
    for i in range(len(final)):
        server, final = _valid_final()
        with pytest.raises(SaslAuthenticationError):
            server.evaluate(final[:i])


def test_tokens_after_completion_are_refused_and_principal_needs_completion() -> None:
    server, final = _valid_final()
    server.evaluate(final)
    with pytest.raises(SaslAuthenticationError):
        server.evaluate(final)
    fresh = _alice_server()
    with pytest.raises(KraftError):
        _ = fresh.principal


def test_a_non_scram_mechanism_name_is_misuse() -> None:
    with pytest.raises(KraftError):
        ScramSaslServer("PLAIN", {}.get, lambda: "n")


# ---------------------------------------------------------------------------------------------------
# The factory over an image


def test_factory_reads_credentials_from_the_current_image_and_only_serves_enabled_mechanisms() -> None:
    images = [MetadataImage.EMPTY]
    factory = scram_server_factory(lambda: images[-1], ["SCRAM-SHA-512"], random.Random(1))
    assert factory("SCRAM-SHA-256") is None
    assert factory("PLAIN") is None
    credential = _credential(SHA512, "s3cret")

    def login() -> SaslServer:
        server = factory("SCRAM-SHA-512")
        assert server is not None and server.mechanism == "SCRAM-SHA-512"
        client = ScramClient("carol", "s3cret", "SCRAM-SHA-512")
        client.process_server_first_message(server.evaluate(client.first_message()))
        server.evaluate(client.final_message())
        return server

    with pytest.raises(SaslAuthenticationError):
        login()
    images.append(MetadataImage(scram=ScramImage({SHA512: {"carol": credential}})))
    assert login().principal == KafkaPrincipal("User", "carol")


def test_factory_nonces_are_fresh_and_seeded() -> None:
    def nonce_of(seed: int) -> list[bytes]:
        factory = scram_server_factory(lambda: MetadataImage.EMPTY, ["SCRAM-SHA-256"], random.Random(seed))
        out = []
        for _ in range(2):
            server = factory("SCRAM-SHA-256")
            assert server is not None
            out.append(server.evaluate(b"n,,n=u,r=c").split(b",")[0])
        return out

    first, second = nonce_of(5)
    assert first != second
    assert nonce_of(5) == [first, second]


def test_factory_refuses_non_scram_mechanisms() -> None:
    with pytest.raises(KraftError):
        scram_server_factory(lambda: MetadataImage.EMPTY, ["PLAIN"], random.Random(0))


def test_factory_takes_the_system_random_source_the_server_uses() -> None:
    factory = scram_server_factory(lambda: MetadataImage.EMPTY, ["SCRAM-SHA-256"], random.SystemRandom())
    first = [factory("SCRAM-SHA-256") for _ in range(2)]
    nonces = {s.evaluate(b"n,,n=u,r=c").split(b",")[0] for s in first if s is not None}
    assert len(nonces) == 2 and all(len(n) == len(b"r=c") + 32 for n in nonces)
