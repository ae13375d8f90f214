"""Request header v1/v2 and response header v0/v1.

Header choice (Kafka's ``ApiMessageType.requestHeaderVersion``/``responseHeaderVersion``): request
header v2 when the API version is flexible, else v1; response header v1 when flexible, else v0,
except ApiVersions, whose response header is always v0 so that a client can parse the answer before
it knows which versions the server speaks. ``client_id`` keeps its int16 length even in v2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraft.common.errors import MalformedMessageError
from kraft.protocol.primitives import Reader, Writer

API_VERSIONS_KEY = 18


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None
    unknown_tags: tuple[tuple[int, bytes], ...] = field(default=())

    def encode(self, w: Writer, header_version: int) -> None:
        w.int16(self.api_key)
        w.int16(self.api_version)
        w.int32(self.correlation_id)
        w.string(self.client_id, compact=False, nullable=True)
        if header_version >= 2:
            write_tags(w, list(self.unknown_tags))


def read_request_header_prefix(r: Reader) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id): enough to answer even an unsupported request."""
    return r.int16("request api_key"), r.int16("request api_version"), r.int32("request correlation_id")


def read_request_header_rest(
    r: Reader, api_key: int, api_version: int, correlation_id: int, header_version: int
) -> RequestHeader:
    client_id = r.string("request client_id", compact=False, nullable=True)
    tags: tuple[tuple[int, bytes], ...] = ()
    if header_version >= 2:
        tags = tuple(read_tags(r, "request header"))
    return RequestHeader(
        api_key=api_key,
        api_version=api_version,
        correlation_id=correlation_id,
        client_id=client_id,
        unknown_tags=tags,
    )


def write_response_header(w: Writer, correlation_id: int, header_version: int) -> None:
    w.int32(correlation_id)
    if header_version >= 1:
        w.unsigned_varint(0)


def read_response_header(r: Reader, header_version: int) -> int:
    correlation_id = r.int32("response correlation_id")
    if header_version >= 1:
        read_tags(r, "response header")
    return correlation_id


def write_tags(w: Writer, tags: list[tuple[int, bytes]]) -> None:
    w.unsigned_varint(len(tags))
    for tag, payload in sorted(tags):
        w.unsigned_varint(tag)
        w.unsigned_varint(len(payload))
        w.raw(payload)


def read_tags(r: Reader, what: str) -> list[tuple[int, bytes]]:
    """A tagged-field section none of whose tags we know: kept as (tag, payload) pairs."""
    count = r.unsigned_varint(f"tagged field count of {what}")
    # Each tagged field takes at least two bytes (tag and size): a larger count is a lie.
    if count * 2 > r.remaining:
        raise MalformedMessageError(f"{what}: {count} tagged fields claimed, {r.remaining} bytes left")
    out = []
    last_tag = -1
    for _ in range(count):
        tag = r.unsigned_varint(f"tag in {what}")
        size = r.unsigned_varint(f"tag size in {what}")
        if tag <= last_tag:
            raise MalformedMessageError(f"{what}: tagged fields out of order ({tag} after {last_tag})")
        last_tag = tag
        out.append((tag, r.raw(size, f"tagged field {tag} of {what}")))
    return out
