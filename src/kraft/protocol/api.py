"""APIs (key, versions, request and response schemas) and whole-message encode/decode.

Each module in ``kraft.protocol.messages`` declares one ``Api``; ``kraft.protocol.messages.REGISTRY``
maps api key to ``Api``. ``encode_request``/``decode_request`` and the response pair put a header
and a body together into a frame payload (the int32 size prefix is ``framing.frame``'s job).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kraft.common.errors import MalformedMessageError, UnsupportedApiError
from kraft.protocol.framing import FRAME_SIZE
from kraft.protocol.headers import (
    API_VERSIONS_KEY,
    RequestHeader,
    read_request_header_prefix,
    read_request_header_rest,
    read_response_header,
    write_response_header,
)
from kraft.protocol.primitives import Reader, Writer
from kraft.protocol.schema import StructType, Versions


@dataclass(frozen=True, slots=True)
class Api:
    """One Kafka API as this node implements it.

    ``versions`` is the range the schemas describe, so the range we can encode and decode;
    ``served_versions`` (default: all of ``versions``) is the narrower range this node accepts in
    requests and advertises in ApiVersions. Fetch, for example, is described for 0-17 but served
    only for 13-17, where it names the topic by id. ``flexible`` is Kafka's flexibleVersions.
    """

    key: int
    name: str
    versions: Versions
    flexible: Versions
    request: StructType
    response: StructType
    served_versions: Versions | None = None

    @property
    def served(self) -> Versions:
        """The versions to accept from peers and advertise in ApiVersions."""
        return self.versions if self.served_versions is None else self.served_versions

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible

    def request_header_version(self, version: int) -> int:
        return 2 if self.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        if self.key == API_VERSIONS_KEY:
            return 0
        return 1 if self.is_flexible(version) else 0

    def check_version(self, version: int) -> None:
        if version not in self.versions:
            raise UnsupportedApiError(
                f"{self.name} (key {self.key}) version {version} is not supported "
                f"(supported: {self.versions})",
                api_key=self.key,
                api_version=version,
            )

    def encode_request_body(self, body: Any, version: int) -> bytes:
        self.check_version(version)
        return self.request.encode(body, version, self.is_flexible(version))

    def decode_request_body(self, data: bytes | memoryview | Reader, version: int) -> Any:
        self.check_version(version)
        return self.request.decode(data, version, self.is_flexible(version))

    def encode_response_body(self, body: Any, version: int) -> bytes:
        self.check_version(version)
        return self.response.encode(body, version, self.is_flexible(version))

    def decode_response_body(self, data: bytes | memoryview | Reader, version: int) -> Any:
        self.check_version(version)
        return self.response.decode(data, version, self.is_flexible(version))


def encode_request(
    api: Api, version: int, correlation_id: int, body: Any, client_id: str | None = "kraft"
) -> bytes:
    """Header + body, ready for ``framing.frame``."""
    api.check_version(version)
    w = Writer()
    header = RequestHeader(
        api_key=api.key, api_version=version, correlation_id=correlation_id, client_id=client_id
    )
    header.encode(w, api.request_header_version(version))
    api.request.encode(body, version, api.is_flexible(version), w)
    return w.getvalue()


def decode_request(payload: bytes | memoryview, registry: Mapping[int, Api]) -> tuple[RequestHeader, Any]:
    """Decode one request frame payload.

    Only ``api.served`` versions are accepted: this is the server's entry point.

    Raises:
        UnsupportedApiError: unknown key or unserved version; carries the key, version and
            ``correlation_id`` needed to answer.
        MalformedMessageError: truncated or invalid bytes.

    Bytes left over after the body are ignored, as Kafka's ``AbstractRequest.parseRequest`` ignores
    them: real clients send some (librdkafka 2.16's Metadata v13 for all topics carries 3 extra
    bytes), and refusing them would cut those clients off. Responses stay strict.
    """
    r = Reader(payload)
    api_key, api_version, correlation_id = read_request_header_prefix(r)
    api = registry.get(api_key)
    if api is None:
        raise UnsupportedApiError(
            f"unknown API key {api_key}",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    if api_version not in api.served:
        raise UnsupportedApiError(
            f"{api.name} (key {api_key}) version {api_version} is not supported (supported: {api.served})",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    header = read_request_header_rest(
        r, api_key, api_version, correlation_id, api.request_header_version(api_version)
    )
    body = api.request.decode(r, api_version, api.is_flexible(api_version))
    return header, body


def encode_response(api: Api, version: int, correlation_id: int, body: Any) -> bytes:
    """Header + body, ready for ``framing.frame``."""
    api.check_version(version)
    w = Writer()
    write_response_header(w, correlation_id, api.response_header_version(version))
    api.response.encode(body, version, api.is_flexible(version), w)
    return w.getvalue()


def encode_response_frame(api: Api, version: int, correlation_id: int, body: Any) -> bytes:
    """``framing.frame(encode_response(...))`` in one buffer: the size prefix is reserved first and
    filled in at the end, so a fetch answer's records are not copied once more to prefix them."""
    api.check_version(version)
    w = Writer(bytearray(4))
    write_response_header(w, correlation_id, api.response_header_version(version))
    api.response.encode(body, version, api.is_flexible(version), w)
    buf = w.buf
    FRAME_SIZE.pack_into(buf, 0, len(buf) - 4)
    return bytes(buf)


def decode_response(payload: bytes | memoryview, api: Api, version: int) -> tuple[int, Any]:
    """Returns (correlation_id, body).

    Raises:
        MalformedMessageError: truncated or invalid bytes, or bytes left over after the body.
    """
    api.check_version(version)
    r = Reader(payload)
    correlation_id = read_response_header(r, api.response_header_version(version))
    body = api.response.decode(r, version, api.is_flexible(version))
    if r.remaining:
        raise MalformedMessageError(f"{api.name} v{version} response has {r.remaining} trailing bytes")
    return correlation_id, body
