"""SCRAM credentials as the metadata log holds them (Kafka's ``ScramImage``, ``ScramCredentialData``).

What this module owns: the mechanism codes of the wire and the records (``ScramMechanism``), one
stored credential (``ScramCredential``: salt, stored key, server key, iterations; never a password)
and the immutable ``ScramImage`` (mechanism -> user -> credential) with its DescribeUserScramCredentials
rules. Deriving keys from a password is ``kraft.security.scram``'s job, above this layer.

Invariant: nothing here can print a secret. ``ScramCredential.__repr__`` hides the salt and keys, so a
log line, an exception or a ``metadata-shell`` listing never shows them (Kafka's
``ScramCredentialValue.toString`` hides them the same way).

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Final

MIN_ITERATIONS: Final = 4096  # Kafka's ScramMechanism.minIterations (both mechanisms)
MAX_ITERATIONS: Final = 16384  # Kafka's ScramControlManager.MAX_ITERATIONS
DEFAULT_ITERATIONS: Final = 4096  # kafka-configs.sh and StorageTool when none is given

# The messages of Kafka's ScramImage.describe, which clients show as they are.
DESCRIBE_DUPLICATE_USER: Final = (
    "Cannot describe SCRAM credentials for the same user twice in a single request: "
)
DESCRIBE_MISSING_USER: Final = "Attempt to describe a user credential that does not exist: "


class ScramMechanism(enum.IntEnum):
    """The ``Mechanism`` int8 of the SCRAM records and APIs (Kafka's admin ``ScramMechanism``)."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        """The SASL name: ``SCRAM-SHA-256``."""
        return self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        """The ``hashlib`` name of the mechanism's hash: ``sha256``."""
        return {ScramMechanism.SCRAM_SHA_256: "sha256", ScramMechanism.SCRAM_SHA_512: "sha512"}[self]

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism | None:
        """``SCRAM-SHA-256`` -> SCRAM_SHA_256; None for anything else (UNKNOWN included)."""
        for m in (cls.SCRAM_SHA_256, cls.SCRAM_SHA_512):
            if m.mechanism_name == name:
                return m
        return None

    @classmethod
    def from_type(cls, code: int) -> ScramMechanism:
        """The mechanism of a wire or record code; UNKNOWN for a code we do not know."""
        try:
            return cls(code)
        except ValueError:
            return cls.UNKNOWN


@dataclass(frozen=True, slots=True, kw_only=True)
class ScramCredential:
    """One user's credential for one mechanism (RFC 5802: what the server stores).

    ``stored_key`` = H(HMAC(SaltedPassword, "Client Key")) and ``server_key`` =
    HMAC(SaltedPassword, "Server Key"): enough to check a client's proof and sign the answer, not
    enough to log in as the user.
    """

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:
        hidden = "salt=[hidden], stored_key=[hidden], server_key=[hidden]"
        return f"ScramCredential({hidden}, iterations={self.iterations})"


@dataclass(frozen=True, slots=True)
class UserScramDescription:
    """One row of a DescribeUserScramCredentials answer: a user's (mechanism, iterations) pairs, or
    an error (``error_code`` as Kafka's ``Errors`` codes: 91 RESOURCE_NOT_FOUND, 92 DUPLICATE_RESOURCE)."""

    user: str
    error_code: int
    error_message: str | None
    credentials: tuple[tuple[ScramMechanism, int], ...]


_RESOURCE_NOT_FOUND: Final = 91
_DUPLICATE_RESOURCE: Final = 92


class ScramImage:
    """The SCRAM credentials of an image: mechanism -> user -> credential, read-only.

    A mechanism with no user is absent (Kafka's ``ScramDelta.apply`` drops it), so two images with
    the same credentials are equal however they got there.
    """

    __slots__ = ("_mechanisms",)

    EMPTY: ClassVar[ScramImage]

    def __init__(
        self, mechanisms: Mapping[ScramMechanism, Mapping[str, ScramCredential]] | None = None
    ) -> None:
        frozen = {
            m: MappingProxyType(dict(users)) for m, users in sorted((mechanisms or {}).items()) if users
        }
        self._mechanisms: Mapping[ScramMechanism, Mapping[str, ScramCredential]] = MappingProxyType(frozen)

    @property
    def mechanisms(self) -> Mapping[ScramMechanism, Mapping[str, ScramCredential]]:
        return self._mechanisms

    @property
    def is_empty(self) -> bool:
        return not self._mechanisms

    def get(self, mechanism: ScramMechanism, user: str) -> ScramCredential | None:
        users = self._mechanisms.get(mechanism)
        return None if users is None else users.get(user)

    def users(self) -> list[str]:
        """Every user with at least one credential, sorted."""
        return sorted({u for users in self._mechanisms.values() for u in users})

    def __iter__(self) -> Iterator[tuple[ScramMechanism, str, ScramCredential]]:
        """(mechanism, user, credential) by mechanism code, then user: the snapshot order."""
        for m in sorted(self._mechanisms):
            users = self._mechanisms[m]
            for user in sorted(users):
                yield m, user, users[user]

    def describe(self, users: Sequence[str] | None) -> list[UserScramDescription]:
        """DescribeUserScramCredentials over this image (Kafka's ``ScramImage.describe``).

        ``users`` None or empty: every user with a credential. A user named twice gets
        DUPLICATE_RESOURCE once; a user without any credential RESOURCE_NOT_FOUND. Rows come in
        first-mention order (all users: sorted), where Kafka's follow a hash map's order.
        """
        if not users:
            wanted = {u: False for u in self.users()}
        else:
            wanted = {}
            for u in users:
                wanted[u] = u in wanted
        out: list[UserScramDescription] = []
        for user, duplicate in wanted.items():
            if duplicate:
                out.append(
                    UserScramDescription(user, _DUPLICATE_RESOURCE, DESCRIBE_DUPLICATE_USER + user, ())
                )
                continue
            found = tuple(
                (m, users_of_m[user].iterations)
                for m, users_of_m in sorted(self._mechanisms.items())
                if user in users_of_m
            )
            if found:
                out.append(UserScramDescription(user, 0, None, found))
            else:
                out.append(UserScramDescription(user, _RESOURCE_NOT_FOUND, DESCRIBE_MISSING_USER + user, ()))
        return out

    def with_changes(
        self, changes: Mapping[tuple[ScramMechanism, str], ScramCredential | None]
    ) -> ScramImage:
        """This image with each (mechanism, user) set to a credential, or removed for None."""
        if not changes:
            return self
        merged: dict[ScramMechanism, dict[str, ScramCredential]] = {
            m: dict(users) for m, users in self._mechanisms.items()
        }
        for (m, user), credential in changes.items():
            if credential is None:
                merged.get(m, {}).pop(user, None)
            else:
                merged.setdefault(m, {})[user] = credential
        return ScramImage(merged)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScramImage):
            return NotImplemented
        return self._mechanisms == other._mechanisms

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = ", ".join(f"{m.mechanism_name}: {sorted(users)}" for m, users in self._mechanisms.items())
        return f"ScramImage({{{parts}}})"


ScramImage.EMPTY = ScramImage()
