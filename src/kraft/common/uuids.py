"""Kafka's textual UUIDs: URL-safe base64 of the 16 bytes, without padding (22 characters)."""

from __future__ import annotations

import base64
import binascii
import random
import secrets
import uuid

ZERO_UUID = uuid.UUID(int=0)
# Kafka reserves these two: the zero UUID means "unset" and 1 is the metadata topic id.
_RESERVED = (ZERO_UUID, uuid.UUID(int=1))


def uuid_to_base64(value: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def uuid_from_base64(text: str) -> uuid.UUID:
    """Parse a 22-character base64url UUID.

    Raises:
        ValueError: wrong length, characters outside the base64url alphabet, or padding bits set.
    """
    if len(text) != 22:
        raise ValueError(f"'{text}' is not a base64 UUID: expected 22 characters, got {len(text)}")
    try:
        raw = base64.b64decode(text + "==", altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"'{text}' is not a base64url UUID") from None
    if len(raw) != 16 or uuid_to_base64(uuid.UUID(bytes=raw)) != text:
        raise ValueError(f"'{text}' is not a canonical base64url UUID")
    return uuid.UUID(bytes=raw)


def random_uuid(rng: random.Random | None = None) -> uuid.UUID:
    """A random UUID as Kafka's ``Uuid.randomUuid``: never reserved, never printed with a leading '-'
    (which a command line would take for an option). The sans-IO cores pass their injected ``rng``;
    without one the bytes come from ``secrets``."""
    while True:
        raw = secrets.token_bytes(16) if rng is None else rng.getrandbits(128).to_bytes(16, "big")
        value = uuid.UUID(bytes=raw, version=4)
        if value not in _RESERVED and not uuid_to_base64(value).startswith("-"):
            return value
