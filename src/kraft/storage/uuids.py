"""Kafka's textual UUIDs; they live in ``kraft.common.uuids`` (the cores need them too)."""

from kraft.common.uuids import ZERO_UUID, random_uuid, uuid_from_base64, uuid_to_base64

__all__ = ["ZERO_UUID", "random_uuid", "uuid_from_base64", "uuid_to_base64"]
