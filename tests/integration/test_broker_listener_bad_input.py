"""Bad input on a broker's client listener, over raw sockets, against a real process.

One combined node (controller + broker) with ``socket.request.max.bytes`` set small. What Kafka
does, and so what is asserted (Kafka's ``SocketServer.parseRequestHeader`` and ``ApiKeys``):

* an unknown API key, an API this listener does not serve (Vote) or an unsupported version of a
  served one (Metadata v99) is not answered: the connection is closed;
* ApiVersions at any version is answered: an unknown version gets UNSUPPORTED_VERSION in v0 with
  the listener's ranges (KIP-511), and the connection stays usable;
* a frame that cannot be parsed (garbage, a body cut short, a negative size) or is larger than
  ``socket.request.max.bytes`` closes that connection only; other connections keep being served;
* illegal topic names are INVALID_TOPIC_EXCEPTION, in CreateTopics and in Metadata, and Metadata
  never auto-creates them.

Well-formed frames are built with the project's codec (``encode_request`` + ``frame``).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from local_cluster import LocalCluster

from kraft.client.connection import Address
from kraft.node.listeners import BROKER_LISTENER_APIS
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import api_versions, create_topics, describe_configs, metadata, vote

# One worker runs the module (`--dist loadgroup`): its node fixture is started once, not per worker.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.xdist_group("bad-input-node")]

MAX_REQUEST_BYTES = 4096
ILLEGAL_NAMES = ["bad/name", "..", "x" * 250, "spaced name"]


class Conn:
    """A blocking client connection speaking frames."""

    def __init__(self, address: Address) -> None:
        self.sock = socket.create_connection((address.host, address.port), timeout=10)
        self.decoder = FrameDecoder()
        self.frames: list[bytes] = []
        self.next_id = 1

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, api: Api, version: int, body: Any, correlation_id: int | None = None) -> int:
        cid = self.next_id if correlation_id is None else correlation_id
        self.next_id = cid + 1
        self.send_raw(frame(encode_request(api, version, cid, body)))
        return cid

    def response(self, api: Api, version: int) -> tuple[int, Any]:
        while not self.frames:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed by the server")
            self.frames.extend(self.decoder.feed(data))
        return decode_response(self.frames.pop(0), api, version)

    def call(self, api: Api, version: int, body: Any) -> Any:
        cid = self.send(api, version, body)
        got_cid, response = self.response(api, version)
        assert got_cid == cid
        return response

    def closed_by_server(self) -> bool:
        """True once the server closed the connection without answering anything."""
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            return True
        return data == b""

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        tmp_path_factory.mktemp("bad-input"),
        1,
        {"socket.request.max.bytes": str(MAX_REQUEST_BYTES)},
        combined=True,
    )
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        cluster.wait_for_brokers()
        yield cluster
    finally:
        cluster.stop_all()


@pytest.fixture
def connect(node: LocalCluster) -> Iterator[Callable[[], Conn]]:
    (broker,) = node.broker_ids
    made: list[Conn] = []

    def make() -> Conn:
        conn = Conn(node.broker_address(broker))
        made.append(conn)
        return conn

    yield make
    for conn in made:
        conn.close()


def metadata_request(*names: str, auto_create: bool = True) -> Any:
    cls: Any = metadata.REQUEST.cls
    topics = None if not names else [cls.MetadataRequestTopic(name=n) for n in names]
    return cls(topics=topics, allow_auto_topic_creation=auto_create)


def create_request(*names: str) -> Any:
    cls: Any = create_topics.REQUEST.cls
    return cls(
        topics=[cls.CreatableTopic(name=n, num_partitions=1, replication_factor=1) for n in names],
        timeout_ms=10_000,
    )


def topic_errors(response: Any) -> dict[str, int]:
    return {t.name: t.error_code for t in response.topics}


def assert_closed_for(node: LocalCluster, conn: Conn, reason: str) -> None:
    """The server closed ``conn`` without an answer, and logged ``reason`` for it."""
    assert conn.closed_by_server()
    node.wait_for(f"the node to log {reason!r}", lambda: reason in node.log(node.ids[0]) or None, timeout_s=5)


def assert_serves(conn: Conn) -> None:
    """The connection (and so the listener) still answers a Metadata request."""
    response = conn.call(metadata.API, 13, metadata_request())
    assert [b.node_id for b in response.brokers] == [1]


# ---------------------------------------------------------------------------------------------------
# API keys and versions


def test_unknown_api_key_closes_the_connection(node: LocalCluster, connect: Callable[[], Conn]) -> None:
    conn = connect()
    conn.send_raw(frame(struct.pack(">hhih", 999, 0, 1, -1)))  # header v1, null client id
    assert_closed_for(node, conn, "unknown API key 999")
    assert_serves(connect())


def test_an_api_not_served_on_the_broker_listener_closes_the_connection(
    node: LocalCluster, connect: Callable[[], Conn]
) -> None:
    assert vote.API.key not in BROKER_LISTENER_APIS  # a controller API: not on this listener
    conn = connect()
    conn.send(vote.API, 1, vote.REQUEST.cls())
    assert_closed_for(node, conn, f"unknown API key {vote.API.key}")


def test_unsupported_version_of_a_served_api_closes_the_connection(
    node: LocalCluster, connect: Callable[[], Conn]
) -> None:
    conn = connect()
    # A header v2 Metadata v99 with an empty body: the version alone decides.
    conn.send_raw(frame(struct.pack(">hhih", metadata.API.key, 99, 1, -1) + b"\x00"))
    assert_closed_for(node, conn, "Metadata (key 3) version 99 is not supported")
    assert_serves(connect())


def test_unsupported_api_versions_version_gets_a_v0_answer_with_the_broker_ranges(
    connect: Callable[[], Conn],
) -> None:
    conn = connect()
    # ApiVersions v99, header v2 (flexible), compact client software name/version and no tags.
    header = struct.pack(">hhih", api_versions.API.key, 99, 42, 1) + b"x" + b"\x00"
    conn.send_raw(frame(header + b"\x02a\x021\x00"))
    correlation_id, body = conn.response(api_versions.API, 0)
    assert correlation_id == 42
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    advertised = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    assert advertised == {a.key: (a.served.low, a.served.high) for a in BROKER_LISTENER_APIS.values()}
    assert vote.API.key not in advertised and advertised[metadata.API.key] == (0, 13)
    # KIP-511: the client retries on the same connection with a version both sides know.
    request: Any = api_versions.REQUEST.cls(client_software_name="t", client_software_version="1")
    retried = conn.call(api_versions.API, 3, request)
    assert retried.error_code == ErrorCode.NONE
    assert {k.api_key for k in retried.api_keys} == set(advertised)


# ---------------------------------------------------------------------------------------------------
# Malformed and oversized frames


@pytest.mark.parametrize(
    ("bad_frame", "reason"),
    [
        # Metadata v13, then 0xff bytes: a null client id and a tag count that is no varint.
        pytest.param(
            frame(b"\x00\x03\x00\x0d" + b"\xff" * 12),
            "invalid tagged field count of request header",
            id="garbage",
        ),
        pytest.param(frame(b"\x00\x03\x00"), "truncated request api_version", id="truncated-header"),
        pytest.param(
            frame(encode_request(create_topics.API, 7, 1, create_request("cut-short"))[:-3]),
            "truncated CreateTopicsRequest",
            id="truncated-body",
        ),
        pytest.param(struct.pack(">i", -1) + b"\x00" * 8, "negative frame size -1", id="negative-size"),
        pytest.param(
            struct.pack(">i", MAX_REQUEST_BYTES + 1),  # refused on the size prefix, before any body
            f"frame of {MAX_REQUEST_BYTES + 1} bytes exceeds the maximum request size",
            id="oversize-prefix",
        ),
    ],
)
def test_a_bad_frame_closes_only_its_connection(
    node: LocalCluster, connect: Callable[[], Conn], bad_frame: bytes, reason: str
) -> None:
    bystander = connect()
    assert_serves(bystander)  # open and in use before the bad frame arrives
    bad = connect()
    bad.send_raw(bad_frame)
    assert_closed_for(node, bad, reason)
    assert_serves(bystander)
    assert node.is_running(node.ids[0])


def test_a_request_above_socket_request_max_bytes_is_refused_and_has_no_effect(
    node: LocalCluster, connect: Callable[[], Conn]
) -> None:
    names = [f"big-{i:03d}-" + "n" * 90 for i in range(50)]
    oversized = frame(encode_request(create_topics.API, 7, 1, create_request(*names)))
    assert len(oversized) - 4 > MAX_REQUEST_BYTES
    conn = connect()
    conn.send_raw(oversized)
    assert_closed_for(node, conn, f"frame of {len(oversized) - 4} bytes exceeds the maximum request size")
    # The same request cut to fit is served; none of the refused topics was created.
    fits = connect()
    assert topic_errors(fits.call(create_topics.API, 7, create_request(*names[:2]))) == {
        names[0]: ErrorCode.NONE,
        names[1]: ErrorCode.NONE,
    }
    listed = {t.name for t in fits.call(metadata.API, 13, metadata_request()).topics}
    assert {n for n in names if n in listed} == set(names[:2])


# ---------------------------------------------------------------------------------------------------
# Topic names


def test_create_topics_with_illegal_names_is_invalid_topic_exception(connect: Callable[[], Conn]) -> None:
    conn = connect()
    response = conn.call(create_topics.API, 7, create_request(*ILLEGAL_NAMES, "legal-name"))
    errors = topic_errors(response)
    assert errors == {**{n: ErrorCode.INVALID_TOPIC_EXCEPTION for n in ILLEGAL_NAMES}, "legal-name": 0}
    assert all(t.error_message for t in response.topics if t.name in ILLEGAL_NAMES)
    listed = {t.name for t in conn.call(metadata.API, 13, metadata_request()).topics}
    assert "legal-name" in listed and not listed & set(ILLEGAL_NAMES)


@pytest.mark.parametrize("version", [4, 9, 13])
def test_metadata_for_illegal_names_is_invalid_topic_exception_and_never_auto_creates(
    node: LocalCluster, connect: Callable[[], Conn], version: int
) -> None:
    conn = connect()
    legal = f"auto-made-v{version}"
    first = conn.call(metadata.API, version, metadata_request(*ILLEGAL_NAMES, legal))
    assert topic_errors(first) == {
        **{n: ErrorCode.INVALID_TOPIC_EXCEPTION for n in ILLEGAL_NAMES},
        legal: ErrorCode.LEADER_NOT_AVAILABLE,  # being auto-created
    }

    def created() -> Any:
        again = conn.call(metadata.API, version, metadata_request(*ILLEGAL_NAMES, legal))
        return again if topic_errors(again)[legal] == ErrorCode.NONE else None

    # Once the legal name from the same request exists, the auto-creation has run: the illegal
    # names are still invalid, and no topic was created for them.
    again = node.wait_for(f"{legal} to be auto-created", created, timeout_s=15)
    assert {n: e for n, e in topic_errors(again).items() if n != legal} == {
        n: ErrorCode.INVALID_TOPIC_EXCEPTION for n in ILLEGAL_NAMES
    }
    listed = {t.name for t in conn.call(metadata.API, version, metadata_request()).topics}
    assert legal in listed and not listed & set(ILLEGAL_NAMES)


def test_describe_configs_of_an_illegal_topic_name_is_invalid_topic_exception(
    connect: Callable[[], Conn],
) -> None:
    cls: Any = describe_configs.REQUEST.cls
    request = cls(
        resources=[
            cls.DescribeConfigsResource(resource_type=2, resource_name=name, configuration_keys=None)
            for name in ("bad/name", "no-such-topic")
        ]
    )
    response = connect().call(describe_configs.API, 4, request)
    assert {r.resource_name: r.error_code for r in response.results} == {
        "bad/name": ErrorCode.INVALID_TOPIC_EXCEPTION,
        "no-such-topic": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
