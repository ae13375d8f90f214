"""``--add-scram`` arguments of ``kraft storage format`` (Kafka's ``ScramParser``), as records.

    SCRAM-SHA-256=[name=alice,password=alice-secret]
    SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]

Rules, as Kafka's: the mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512; the settings sit in square
brackets, comma-separated ``key=value`` (a value may be wrapped in double quotes); ``name`` is
required; exactly one of ``password`` or ``saltedpassword`` (base64, and then ``salt`` is required
too); ``salt`` is base64 (random when absent); ``iterations`` defaults to 4096 and must lie in
4096..16384; any other key is refused. The result is a UserScramCredentialRecord holding the salt,
stored key and server key, never the password.

Pure: the random salt comes from the caller's ``random_bytes``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass

from kraft.common.errors import KraftError
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, make_record
from kraft.metadata.scram import DEFAULT_ITERATIONS, MAX_ITERATIONS, MIN_ITERATIONS, ScramMechanism
from kraft.security.scram import SALT_BYTES, credential_from_salted_password, salted_password


class ScramArgumentError(KraftError):
    """An ``--add-scram`` argument Kafka's StorageTool would refuse; the message says why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScramArgument:
    """One parsed ``--add-scram`` argument (its password, if any, is only held until ``to_record``)."""

    mechanism: ScramMechanism
    name: str
    salt: bytes | None
    iterations: int
    password: str | None
    salted_password: bytes | None

    def __repr__(self) -> str:
        m = self.mechanism.mechanism_name
        return f"ScramArgument({m}, name={self.name!r}, iterations={self.iterations})"

    def to_record(self, random_bytes: Callable[[int], bytes]) -> ApiMessageAndVersion:
        """The UserScramCredentialRecord (v0) for this argument.

        Raises:
            ScramArgumentError: iterations outside 4096..16384.
        """
        m = self.mechanism
        if self.iterations < MIN_ITERATIONS:
            raise ScramArgumentError(
                f"The 'iterations' value must be >= {MIN_ITERATIONS} for add-scram using {m.mechanism_name}"
            )
        if self.iterations > MAX_ITERATIONS:
            raise ScramArgumentError(
                f"The 'iterations' value must be <= {MAX_ITERATIONS} for add-scram using {m.mechanism_name}"
            )
        salt = self.salt if self.salt is not None else random_bytes(SALT_BYTES)
        if self.salted_password is not None:
            salted = self.salted_password
        else:
            assert self.password is not None
            salted = salted_password(m, self.password, salt, self.iterations)
        credential = credential_from_salted_password(m, salt, salted, self.iterations)
        return make_record(
            MetadataRecordType.USER_SCRAM_CREDENTIAL,
            0,
            name=self.name,
            mechanism=int(m),
            salt=credential.salt,
            stored_key=credential.stored_key,
            server_key=credential.server_key,
            iterations=credential.iterations,
        )


def _base64(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ScramArgumentError(f"Failed to decode given {what}: {value}") from None


def parse_scram_argument(text: str) -> ScramArgument:
    """One ``--add-scram`` argument (module docstring).

    Raises:
        ScramArgumentError: with Kafka's message for what is wrong.
    """
    text = text.strip()
    mechanism_name, sep, config = text.partition("=")
    if not sep:
        raise ScramArgumentError(f"Failed to find equals sign in SCRAM argument '{text}'")
    mechanism = ScramMechanism.from_name(mechanism_name)
    if mechanism is None:
        raise ScramArgumentError(f"The add-scram mechanism {mechanism_name} is not supported.")
    if not config.startswith("["):
        raise ScramArgumentError("Expected configuration string to start with [")
    if not config.endswith("]"):
        raise ScramArgumentError("Expected configuration string to end with ]")
    components: dict[str, str] = {}
    for component in config[1:-1].split(","):
        key, sep, value = component.partition("=")
        if not sep:
            raise ScramArgumentError(f"No equals sign found in SCRAM component: {component}")
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        components[key] = value
    name = components.pop("name", None)
    if name is None:
        raise ScramArgumentError("You must supply 'name' to add-scram")
    salt_text = components.pop("salt", None)
    salt = None if salt_text is None else _base64(salt_text, "salt")
    iterations_text = components.pop("iterations", None)
    iterations = DEFAULT_ITERATIONS
    if iterations_text is not None:
        try:
            iterations = int(iterations_text)
        except ValueError:
            raise ScramArgumentError(f"Failed to parse iterations count: {iterations_text}") from None
    password = components.pop("password", None)
    salted_text = components.pop("saltedpassword", None)
    salted: bytes | None = None
    if password is None:
        if salted_text is None:
            raise ScramArgumentError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise ScramArgumentError("You must supply 'salt' with 'saltedpassword' to add-scram")
        salted = _base64(salted_text, "saltedPassword")
    if components:
        raise ScramArgumentError(f"Unknown SCRAM configurations: {', '.join(sorted(components))}")
    return ScramArgument(
        mechanism=mechanism,
        name=name,
        salt=salt,
        iterations=iterations,
        password=password,
        salted_password=salted,
    )
