"""Kafka's textual UUIDs (``kraft.common.uuids``): the one implementation every layer uses."""

from __future__ import annotations

import random
import uuid

import pytest

from kraft.common.uuids import ZERO_UUID, random_uuid, uuid_from_base64, uuid_to_base64


def test_uuid_to_base64_is_url_safe_base64_without_padding() -> None:
    assert uuid_to_base64(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert uuid_to_base64(uuid.UUID(int=1)) == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert uuid_to_base64(uuid.UUID(bytes=b"\xff" * 16)) == "_____________________w"


def test_base64_round_trips_and_refuses_what_is_not_canonical() -> None:
    value = random_uuid(random.Random(7))
    assert uuid_from_base64(uuid_to_base64(value)) == value
    for bad in ("short", "AAAAAAAAAAAAAAAAAAAAA=", "_____________________x", "AAAAAAAAAAAAAAAAAAAA+A"):
        with pytest.raises(ValueError):
            uuid_from_base64(bad)


def test_random_uuids_are_never_reserved_nor_look_like_options() -> None:
    rng = random.Random(1)
    for _ in range(2000):
        value = random_uuid(rng)
        assert value not in (ZERO_UUID, uuid.UUID(int=1)) and not uuid_to_base64(value).startswith("-")
