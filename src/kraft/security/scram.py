"""SCRAM-SHA-256/512 (RFC 5802, RFC 7677): credential formatting and the server as a state machine.

What this module owns:

* the key derivations (Kafka's ``ScramFormatter``): SaltedPassword = PBKDF2-HMAC(password, salt,
  iterations) through ``hashlib.pbkdf2_hmac``, ClientKey/ServerKey through ``hmac``, StoredKey =
  H(ClientKey); ``credential_from_password`` and ``credential_from_salted_password`` turn them into
  the ``ScramCredential`` the metadata log stores (never the password, never the salted password);
* ``ScramSaslServer``: one authentication exchange, fed the client's tokens (Kafka's
  ``ScramSaslServer``): client-first -> server-first, client-final -> server-final, then complete;
* ``scram_server_factory``: the ``SaslServerFactory`` a listener plugs in, reading credentials from
  the broker's current metadata image.

What it must not do: I/O, clocks, module-level randomness. Salts and server nonces come from
injected sources, so an exchange replays from a seed in the simulator.

Rules the server keeps (each failure is a ``SaslAuthenticationError`` and leaves it FAILED):

* Only ``n`` as the GS2 channel-binding flag (no channel binding, as Kafka); the client-final ``c=``
  must be exactly the base64 of the client's GS2 header (RFC 5802 section 7).
* No SCRAM extensions, neither the reserved mandatory ``m=`` nor optional ones (Kafka ignores
  optional ones but honours ``tokenauth``; kraft has no delegation tokens, so none means anything).
* An authorization id, if given, must be the user name (checked before the user is looked up).
* No user enumeration: an unknown user (or one whose credential has too few iterations) gets a
  server-first message as a known one would, with a salt derived from the user name and a
  per-server secret (RFC 5802 section 5.1's advice), and fails at the client-final message with the
  same message as a wrong password. Proofs are compared with ``hmac.compare_digest``.
* The client-final nonce must equal the combined nonce exactly; the proof must be the hash's size.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import random
import re
from collections.abc import Callable, Collection
from typing import Final

from kraft.common.errors import KraftError
from kraft.common.principal import USER_TYPE, KafkaPrincipal
from kraft.metadata.image import MetadataImage
from kraft.metadata.scram import (
    DEFAULT_ITERATIONS,
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramCredential,
    ScramMechanism,
)
from kraft.security.sasl import SaslAuthenticationError, SaslServer, SaslServerFactory

__all__ = [
    "DEFAULT_ITERATIONS",
    "MAX_ITERATIONS",
    "MIN_ITERATIONS",
    "SCRAM_MECHANISM_NAMES",
    "ScramCredential",
    "ScramMechanism",
    "ScramSaslClient",
    "ScramSaslServer",
    "client_key",
    "credential_from_password",
    "credential_from_salted_password",
    "salted_password",
    "scram_server_factory",
    "server_key",
    "stored_key",
]

SCRAM_MECHANISM_NAMES: Final = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SALT_BYTES: Final = 32
# Far above any real client-first or client-final message (a user name, a nonce, a proof).
MAX_TOKEN_BYTES: Final = 8192

# Kafka's SaslServerAuthenticator answers every SCRAM credential failure with this text.
INVALID_CREDENTIALS: Final = (
    "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"
)

# RFC 5802's "printable": %x21-2B / %x2D-7E (no comma), the alphabet of nonces.
_PRINTABLE = re.compile(r"[\x21-\x2b\x2d-\x7e]+")
# value-safe-char of a saslname: any UTF-8 but NUL, "," and "="; "=" only as =2C / =3D.
_SASLNAME = re.compile(r"(?:[^\x00,=]|=2C|=3D)+")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


# ---------------------------------------------------------------------------------------------------
# Formatting (Kafka's ScramFormatter)


def _hmac(mechanism: ScramMechanism, key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, mechanism.hash_name).digest()


def _hash(mechanism: ScramMechanism, data: bytes) -> bytes:
    return hashlib.new(mechanism.hash_name, data).digest()


def _digest_size(mechanism: ScramMechanism) -> int:
    return hashlib.new(mechanism.hash_name).digest_size


def _known(mechanism: ScramMechanism) -> ScramMechanism:
    if mechanism is ScramMechanism.UNKNOWN:
        raise KraftError("no SCRAM formatting for the UNKNOWN mechanism")
    return mechanism


def salted_password(mechanism: ScramMechanism, password: str, salt: bytes, iterations: int) -> bytes:
    """RFC 5802 Hi(Normalize(password), salt, i): PBKDF2 with the mechanism's HMAC.

    The password is its UTF-8 bytes, as Kafka's ``ScramFormatter.normalize`` (no SASLprep)."""
    return hashlib.pbkdf2_hmac(_known(mechanism).hash_name, password.encode("utf-8"), salt, iterations)


def client_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return _hmac(mechanism, salted, b"Client Key")


def stored_key(mechanism: ScramMechanism, client: bytes) -> bytes:
    return _hash(mechanism, client)


def server_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return _hmac(mechanism, salted, b"Server Key")


def check_iterations(iterations: int) -> None:
    """Raises ``KraftError`` outside Kafka's accepted range (4096..16384)."""
    if iterations < MIN_ITERATIONS:
        raise KraftError(f"SCRAM iterations must be >= {MIN_ITERATIONS}, not {iterations}")
    if iterations > MAX_ITERATIONS:
        raise KraftError(f"SCRAM iterations must be <= {MAX_ITERATIONS}, not {iterations}")


def credential_from_salted_password(
    mechanism: ScramMechanism, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    """What the controller stores for an AlterUserScramCredentials upsertion (Kafka's
    ``ScramControlManager.finishUpsertion``): the salted password itself is dropped."""
    _known(mechanism)
    return ScramCredential(
        salt=salt,
        stored_key=stored_key(mechanism, client_key(mechanism, salted)),
        server_key=server_key(mechanism, salted),
        iterations=iterations,
    )


def credential_from_password(
    mechanism: ScramMechanism,
    password: str,
    *,
    random_bytes: Callable[[int], bytes],
    iterations: int = DEFAULT_ITERATIONS,
    salt: bytes | None = None,
) -> ScramCredential:
    """A new credential for ``password``; the salt (unless given) is ``random_bytes(32)``.

    Raises:
        KraftError: iterations outside 4096..16384, or the UNKNOWN mechanism.
    """
    check_iterations(iterations)
    if salt is None:
        salt = random_bytes(SALT_BYTES)
    return credential_from_salted_password(
        mechanism, salt, salted_password(mechanism, password, salt, iterations), iterations
    )


# ---------------------------------------------------------------------------------------------------
# The server


class _State(enum.Enum):
    CLIENT_FIRST = enum.auto()
    CLIENT_FINAL = enum.auto()
    COMPLETE = enum.auto()
    FAILED = enum.auto()


class ScramSaslServer:
    """One SCRAM authentication exchange, server side (a ``SaslServer``).

    Lifecycle: CLIENT_FIRST --client-first--> CLIENT_FINAL --client-final--> COMPLETE; any refused
    token -> FAILED, and every later token is refused too. ``principal`` is ``User:<name>`` once
    COMPLETE.

    Args:
        mechanism: ``SCRAM-SHA-256`` or ``SCRAM-SHA-512``.
        lookup: user name -> its credential for this mechanism, or None.
        nonce: the server's part of the nonce, fresh per exchange (printable, no comma).
        fake_salt_key: the per-server secret that derives an unknown user's stand-in salt; keep
            it the same for the life of the server, so a user who does not exist looks the same to
            every probe (see the module docstring).
    """

    def __init__(
        self,
        mechanism: str,
        lookup: Callable[[str], ScramCredential | None],
        nonce: Callable[[], str],
        *,
        fake_salt_key: bytes = b"",
    ) -> None:
        found = ScramMechanism.from_name(mechanism)
        if found is None:
            raise KraftError(
                f"{mechanism!r} is not a SCRAM mechanism (known: {', '.join(SCRAM_MECHANISM_NAMES)})"
            )
        self.mechanism = mechanism
        self._scram = found
        self._lookup = lookup
        self._nonce = nonce
        self._fake_salt_key = fake_salt_key
        self._state = _State.CLIENT_FIRST
        self._user = ""
        self._credential: ScramCredential | None = None
        self._real = False
        self._gs2_header = b""
        self._client_first_bare = ""
        self._server_first = ""
        self._combined_nonce = ""

    @property
    def complete(self) -> bool:
        return self._state is _State.COMPLETE

    @property
    def principal(self) -> KafkaPrincipal:
        if self._state is not _State.COMPLETE:
            raise KraftError("the SCRAM exchange has not completed")
        return KafkaPrincipal(USER_TYPE, self._user)

    def evaluate(self, token: bytes) -> bytes:
        """The answer to the client's next token.

        Raises:
            SaslAuthenticationError: a malformed or refused token, bad credentials, or any token
                after completion or failure. The server is FAILED afterwards.
        """
        try:
            if len(token) > MAX_TOKEN_BYTES:
                raise self._malformed("SCRAM message")
            match self._state:
                case _State.CLIENT_FIRST:
                    answer = self._client_first(token)
                    self._state = _State.CLIENT_FINAL
                    return answer
                case _State.CLIENT_FINAL:
                    answer = self._client_final(token)
                    self._state = _State.COMPLETE
                    return answer
                case _State.COMPLETE | _State.FAILED:
                    state = self._state.name.lower()
                    raise SaslAuthenticationError(
                        f"Unexpected SASL token: the {self.mechanism} exchange is already {state}"
                    )
        except SaslAuthenticationError:
            self._state = _State.FAILED
            self._credential = None
            raise

    # -- steps ----------------------------------------------------------------------------------

    def _client_first(self, token: bytes) -> bytes:
        text = self._text(token, "client first message")
        # gs2-header = gs2-cbind-flag "," [ authzid ] ","
        flag, sep1, rest = text.partition(",")
        authzid_part, sep2, bare = rest.partition(",")
        if not sep1 or not sep2:
            raise self._malformed("client first message")
        if flag != "n":
            raise SaslAuthenticationError(
                f"{self.mechanism}: channel binding is not supported (GS2 flag {flag[:1]!r}; only 'n')"
            )
        authzid: str | None = None
        if authzid_part:
            if not authzid_part.startswith("a="):
                raise self._malformed("client first message")
            authzid = self._saslname(authzid_part[2:], "client first message")
        parts = bare.split(",")
        if parts[0].startswith("m="):
            raise SaslAuthenticationError(f"{self.mechanism}: mandatory SCRAM extensions are not supported")
        if len(parts) < 2 or not parts[0].startswith("n=") or not parts[1].startswith("r="):
            raise self._malformed("client first message")
        if len(parts) > 2:
            raise SaslAuthenticationError(f"{self.mechanism}: SCRAM extensions are not supported")
        user = self._saslname(parts[0][2:], "client first message")
        client_nonce = parts[1][2:]
        if not _PRINTABLE.fullmatch(client_nonce):
            raise self._malformed("client first message")
        if authzid is not None and authzid != user:
            # Before the lookup, so the answer says nothing about whether the user exists.
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        server_nonce = self._nonce()
        if not _PRINTABLE.fullmatch(server_nonce):
            raise KraftError("the SCRAM server nonce must be printable ASCII without commas")
        credential = self._lookup(user)
        self._real = credential is not None and credential.iterations >= MIN_ITERATIONS
        if credential is None or not self._real:
            credential = self._stand_in(user)
        self._user = user
        self._credential = credential
        self._gs2_header = f"{flag},{authzid_part},".encode()
        self._client_first_bare = bare
        self._combined_nonce = client_nonce + server_nonce
        salt = base64.b64encode(credential.salt).decode("ascii")
        self._server_first = f"r={self._combined_nonce},s={salt},i={credential.iterations}"
        return self._server_first.encode("ascii")

    def _client_final(self, token: bytes) -> bytes:
        text = self._text(token, "client final message")
        without_proof, sep, proof_part = text.rpartition(",p=")
        if not sep:
            raise self._malformed("client final message")
        parts = without_proof.split(",")
        if len(parts) < 2 or not parts[0].startswith("c=") or not parts[1].startswith("r="):
            raise self._malformed("client final message")
        if len(parts) > 2:
            raise SaslAuthenticationError(f"{self.mechanism}: SCRAM extensions are not supported")
        channel_binding = self._base64(parts[0][2:], "client final message")
        if not hmac.compare_digest(channel_binding, self._gs2_header):
            raise SaslAuthenticationError(
                f"{self.mechanism}: the channel binding does not match the client's GS2 header"
            )
        if parts[1][2:] != self._combined_nonce:
            raise SaslAuthenticationError(f"{self.mechanism}: invalid nonce in the client final message")
        proof = self._base64(proof_part, "client final message")
        credential = self._credential
        assert credential is not None
        m = self._scram
        if len(proof) != _digest_size(m):
            raise self._malformed("client final message")
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        signature = _hmac(m, credential.stored_key, auth_message)
        claimed_client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        # Computed for unknown users too, so both paths cost the same.
        matches = hmac.compare_digest(_hash(m, claimed_client_key), credential.stored_key)
        if not (matches and self._real):
            raise SaslAuthenticationError(INVALID_CREDENTIALS.format(self.mechanism))
        server_signature = _hmac(m, credential.server_key, auth_message)
        self._credential = None
        return b"v=" + base64.b64encode(server_signature)

    # -- helpers --------------------------------------------------------------------------------

    def _stand_in(self, user: str) -> ScramCredential:
        """The credential an unknown user appears to have: a stable salt, keys nobody can match."""
        m = self._scram
        seed = _hmac(m, self._fake_salt_key, f"{self.mechanism}\x00{user}".encode())
        size = _digest_size(m)
        return ScramCredential(
            salt=seed[:SALT_BYTES] if len(seed) >= SALT_BYTES else seed,
            stored_key=_hmac(m, seed, b"stored")[:size],
            server_key=_hmac(m, seed, b"server")[:size],
            iterations=DEFAULT_ITERATIONS,
        )

    def _malformed(self, what: str) -> SaslAuthenticationError:
        return SaslAuthenticationError(f"{self.mechanism}: invalid SCRAM {what}")

    def _text(self, token: bytes, what: str) -> str:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise self._malformed(what) from None
        if "\x00" in text:
            raise self._malformed(what)
        return text

    def _saslname(self, raw: str, what: str) -> str:
        if not _SASLNAME.fullmatch(raw):
            raise self._malformed(what)
        return raw.replace("=2C", ",").replace("=3D", "=")

    def _base64(self, raw: str, what: str) -> bytes:
        if not raw or not _BASE64.fullmatch(raw):
            raise self._malformed(what)
        try:
            return base64.b64decode(raw, validate=True)
        except binascii.Error:
            raise self._malformed(what) from None


def scram_server_factory(
    image_getter: Callable[[], MetadataImage],
    mechanisms: Collection[str],
    rng: random.Random,
) -> SaslServerFactory:
    """The ``SaslServerFactory`` for ``mechanisms`` (the SCRAM ones of ``sasl.enabled.mechanisms``),
    looking credentials up in ``image_getter()`` at the client's first message, so a credential
    altered through the metadata log applies from the next login on.

    ``rng`` gives the per-factory secret for unknown users' stand-in salts (drawn once, here) and
    every server nonce (32 hex digits from 128 random bits). Both must be unpredictable to a
    client (a guessable nonce lets a recorded client-final message be replayed): the server passes
    ``random.SystemRandom()``; the simulator a seeded ``random.Random``.

    Raises:
        KraftError: a name in ``mechanisms`` that is not a SCRAM mechanism.
    """
    enabled = tuple(mechanisms)
    for name in enabled:
        if ScramMechanism.from_name(name) is None:
            raise KraftError(f"{name!r} is not a SCRAM mechanism (known: {', '.join(SCRAM_MECHANISM_NAMES)})")
    secret = rng.getrandbits(256).to_bytes(32, "big")

    def nonce() -> str:
        return f"{rng.getrandbits(128):032x}"

    def create(mechanism: str) -> SaslServer | None:
        if mechanism not in enabled:
            return None
        m = ScramMechanism.from_name(mechanism)
        assert m is not None

        def lookup(user: str) -> ScramCredential | None:
            return image_getter().scram.get(m, user)

        return ScramSaslServer(mechanism, lookup, nonce, fake_salt_key=secret)

    return create


class ScramSaslClient:
    """The client side of SCRAM (RFC 5802 section 3), as Kafka's ``ScramSaslClient``: no channel
    binding (``n,,``), no extensions. ``first()`` is the client-first message; ``evaluate`` takes the
    server-first message and returns the client-final one, then takes the server-final message and
    checks the server's signature (a server that cannot prove it holds the credential is refused).
    Pure: the nonce comes from the caller."""

    def __init__(self, mechanism: str, username: str, password: str, nonce: str) -> None:
        m = ScramMechanism.from_name(mechanism)
        if m is None:
            raise KraftError(
                f"{mechanism!r} is not a SCRAM mechanism (known: {', '.join(SCRAM_MECHANISM_NAMES)})"
            )
        if not _PRINTABLE.fullmatch(nonce):
            raise KraftError("the SCRAM client nonce must be printable ASCII without commas")
        self.mechanism = mechanism
        self._scram = m
        self._password = password
        name = username.replace("=", "=3D").replace(",", "=2C")
        self._client_first_bare = f"n={name},r={nonce}"
        self._nonce = nonce
        self._auth_message: bytes | None = None
        self._salted: bytes | None = None
        self.complete = False

    def first(self) -> bytes:
        return f"n,,{self._client_first_bare}".encode()

    def evaluate(self, challenge: bytes) -> bytes:
        """The answer to the server's message: the client-final message, then b"" once verified.

        Raises:
            SaslAuthenticationError: a malformed server message, a nonce that does not extend ours,
                too few iterations, or a server signature that does not verify.
        """
        if self._auth_message is None:
            return self._client_final(challenge)
        if self.complete:
            raise SaslAuthenticationError(f"{self.mechanism}: unexpected message after the exchange")
        text = challenge.decode("ascii", errors="replace")
        if text.startswith("e="):
            raise SaslAuthenticationError(f"{self.mechanism}: the server refused: {text[2:]}")
        if not text.startswith("v="):
            raise SaslAuthenticationError(f"{self.mechanism}: malformed server final message")
        assert self._salted is not None
        expected = _hmac(self._scram, server_key(self._scram, self._salted), self._auth_message)
        try:
            claimed = base64.b64decode(text[2:], validate=True)
        except ValueError:
            raise SaslAuthenticationError(f"{self.mechanism}: malformed server final message") from None
        if not hmac.compare_digest(claimed, expected):
            raise SaslAuthenticationError(f"{self.mechanism}: the server's signature does not verify")
        self.complete = True
        return b""

    def _client_final(self, challenge: bytes) -> bytes:
        text = challenge.decode("ascii", errors="replace")
        fields = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
        nonce, salt_text, iterations_text = fields.get("r"), fields.get("s"), fields.get("i")
        if nonce is None or salt_text is None or iterations_text is None or not iterations_text.isdigit():
            raise SaslAuthenticationError(f"{self.mechanism}: malformed server first message")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise SaslAuthenticationError(f"{self.mechanism}: the server nonce does not extend the client's")
        iterations = int(iterations_text)
        if iterations < MIN_ITERATIONS:
            raise SaslAuthenticationError(f"{self.mechanism}: {iterations} iterations is too few")
        try:
            salt = base64.b64decode(salt_text, validate=True)
        except ValueError:
            raise SaslAuthenticationError(f"{self.mechanism}: malformed salt") from None
        m = self._scram
        self._salted = salted_password(m, self._password, salt, iterations)
        without_proof = f"c=biws,r={nonce}"
        self._auth_message = f"{self._client_first_bare},{text},{without_proof}".encode()
        key = client_key(m, self._salted)
        signature = _hmac(m, stored_key(m, key), self._auth_message)
        proof = bytes(a ^ b for a, b in zip(key, signature, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode()
