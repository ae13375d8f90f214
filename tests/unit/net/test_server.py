"""KafkaServer: framing, ApiVersions (KIP-511 fallback), strict response order, isolation of bad
connections, idle reaping. In-process asyncio with a fake handler; no raft core involved."""

from __future__ import annotations

import asyncio
import functools
import inspect
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kraft.net.server import InboundRequest, KafkaServer
from kraft.node.listeners import CONTROLLER_LISTENER_APIS
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import api_versions, describe_quorum, metadata

pytestmark = pytest.mark.timeout(30)


async def until(cond: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Until ``cond()`` holds: the server's accept, read and dispatch take turns of the loop that a
    stalled machine can leave behind a fixed sleep."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


class FakeHandler:
    """Answers Metadata with a controller id taken from the request; ``delays`` slow chosen ones."""

    def __init__(self) -> None:
        self.delays: dict[int, asyncio.Event] = {}  # correlation id -> released when set
        self.seen: list[int] = []
        self.fail_with: Exception | None = None

    async def handle(self, request: InboundRequest) -> Any:
        self.seen.append(request.header.correlation_id)
        if self.fail_with is not None:
            raise self.fail_with
        gate = self.delays.get(request.header.correlation_id)
        if gate is not None:
            await gate.wait()
        cls = metadata.RESPONSE.cls
        return cls(brokers=[], cluster_id="c", controller_id=request.header.correlation_id, topics=[])


class RawClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder()
        self.frames: list[bytes] = []

    async def send(self, api: Api, version: int, correlation_id: int, body: Any) -> None:
        self.writer.write(frame(encode_request(api, version, correlation_id, body)))
        await self.writer.drain()

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def next_frame(self) -> bytes:
        while not self.frames:
            data = await asyncio.wait_for(self.reader.read(65536), 5)
            if not data:
                raise ConnectionError("closed")
            self.frames.extend(self.decoder.feed(data))
        return self.frames.pop(0)

    async def response(self, api: Api, version: int) -> tuple[int, Any]:
        return decode_response(await self.next_frame(), api, version)

    async def closed_by_server(self) -> bool:
        try:
            data = await asyncio.wait_for(self.reader.read(65536), 5)
        except ConnectionError:
            return True
        return data == b""


Serve = Callable[..., Awaitable[tuple[KafkaServer, int]]]


def with_servers(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on a fresh loop, giving it ``serve(handler, **kwargs)``; closes servers after."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        async def main() -> None:
            servers: list[KafkaServer] = []

            async def serve(handler: Any, **options: Any) -> tuple[KafkaServer, int]:
                server = KafkaServer(
                    apis=dict(CONTROLLER_LISTENER_APIS),
                    handler=handler,
                    max_request_bytes=options.pop("max_bytes", 4096),
                    **options,
                )
                port = await server.listen("CONTROLLER", "127.0.0.1", 0)
                servers.append(server)
                return server, port

            try:
                await test(serve, *args, **kwargs)
            finally:
                for server in servers:
                    await server.close()

        asyncio.run(main())

    # pytest must not see the ``serve`` parameter.
    params = list(inspect.signature(test).parameters.values())[1:]
    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return run


async def connect(port: int) -> RawClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    return RawClient(reader, writer)


def _av_request() -> Any:
    return api_versions.REQUEST.cls(client_software_name="t", client_software_version="1")


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
@with_servers
async def test_api_versions_advertises_exactly_the_served_apis(serve: Serve, version: int) -> None:
    _, port = await serve(FakeHandler())
    client = await connect(port)
    await client.send(api_versions.API, version, 7, _av_request())
    correlation_id, body = await client.response(api_versions.API, version)
    assert correlation_id == 7 and body.error_code == 0
    advertised = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    assert advertised == {a.key: (a.served.low, a.served.high) for a in CONTROLLER_LISTENER_APIS.values()}
    assert advertised[1] == (13, 17)  # Fetch by topic id only


@with_servers
async def test_unsupported_api_versions_version_gets_a_v0_answer_with_our_ranges(serve: Serve) -> None:
    _, port = await serve(FakeHandler())
    client = await connect(port)
    # A v9 request: header v2 (flexible) with an empty compact body, built by hand.
    header = struct.pack(">hhi", 18, 9, 5) + struct.pack(">h", 1) + b"x" + b"\x00"
    await client.send_raw(frame(header + b"\x00"))
    correlation_id, body = await client.response(api_versions.API, 0)
    assert correlation_id == 5
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    assert ranges[18] == (0, 4)
    # The connection stays usable: the client retries at a version both sides know.
    await client.send(api_versions.API, 4, 6, _av_request())
    assert (await client.response(api_versions.API, 4))[1].error_code == 0


@with_servers
async def test_pipelined_responses_leave_in_request_order_even_when_the_first_is_slow(serve: Serve) -> None:
    handler = FakeHandler()
    handler.delays[1] = asyncio.Event()
    _, port = await serve(handler)
    client = await connect(port)
    for cid in (1, 2, 3):
        await client.send(metadata.API, 12, cid, metadata.REQUEST.cls(topics=[]))
    await until(lambda: handler.seen == [1, 2, 3])  # all three are being handled concurrently ...
    await asyncio.sleep(0.1)  # (time for an answer written out of order to arrive)
    assert not client.frames and client.reader._buffer == b""  # type: ignore[attr-defined]  # ... none answered
    handler.delays[1].set()
    got = [(await client.response(metadata.API, 12))[0] for _ in range(3)]
    assert got == [1, 2, 3]


@with_servers
async def test_garbage_closes_only_that_connection(serve: Serve) -> None:
    server, port = await serve(FakeHandler())
    good = await connect(port)
    bad = await connect(port)
    await bad.send_raw(frame(b"\x00\x03\x00"))  # truncated header
    assert await bad.closed_by_server()
    await good.send(metadata.API, 12, 1, metadata.REQUEST.cls(topics=[]))
    assert (await good.response(metadata.API, 12))[0] == 1
    assert server.stats.connections_closed_for_errors == 1


@with_servers
async def test_oversize_frame_is_refused_before_its_body_arrives(serve: Serve) -> None:
    _server, port = await serve(FakeHandler(), max_bytes=1000)
    client = await connect(port)
    await client.send_raw(struct.pack(">i", 1001))  # only the size prefix
    assert await client.closed_by_server()
    other = await connect(port)
    await other.send(api_versions.API, 3, 1, _av_request())
    assert (await other.response(api_versions.API, 3))[1].error_code == 0


@with_servers
async def test_unknown_api_key_and_unserved_version_close_the_connection(serve: Serve) -> None:
    _, port = await serve(FakeHandler())
    client = await connect(port)
    await client.send_raw(frame(struct.pack(">hhih", 999, 0, 1, -1)))
    assert await client.closed_by_server()
    client = await connect(port)
    await client.send_raw(frame(struct.pack(">hhih", 1, 12, 1, -1)))  # Fetch v12: not served
    assert await client.closed_by_server()


@with_servers
async def test_handler_bug_closes_the_connection_and_the_server_keeps_serving(serve: Serve) -> None:
    handler = FakeHandler()
    handler.fail_with = RuntimeError("boom")
    _server, port = await serve(handler)
    client = await connect(port)
    await client.send(metadata.API, 12, 1, metadata.REQUEST.cls(topics=[]))
    assert await client.closed_by_server()
    handler.fail_with = None
    client = await connect(port)
    await client.send(metadata.API, 12, 2, metadata.REQUEST.cls(topics=[]))
    assert (await client.response(metadata.API, 12))[0] == 2


@with_servers
async def test_idle_connections_are_reaped(serve: Serve) -> None:
    server, port = await serve(FakeHandler(), max_idle_ms=200)
    client = await connect(port)
    assert await client.closed_by_server()
    assert server.stats.connections_reaped == 1


@with_servers
async def test_a_request_split_across_many_writes_is_reassembled(serve: Serve) -> None:
    _, port = await serve(FakeHandler())
    client = await connect(port)
    data = frame(encode_request(describe_quorum.API, 0, 3, describe_quorum.REQUEST.cls(topics=[])))
    handler_data = frame(encode_request(metadata.API, 1, 4, metadata.REQUEST.cls(topics=[])))
    for i in range(len(handler_data)):
        await client.send_raw(handler_data[i : i + 1])
    assert (await client.response(metadata.API, 1))[0] == 4
    del data


@with_servers
async def test_an_answer_is_written_in_the_step_its_handler_finishes_before_the_next_callback(
    serve: Serve,
) -> None:
    # A leader's poll queues its next poll (an fsync) right after releasing the handlers: the answer
    # must already be in the socket by then, not waiting for a writer task's turn.
    handler = FakeHandler()
    handler.delays[1] = asyncio.Event()
    server, port = await serve(handler)
    client = await connect(port)
    await client.send(metadata.API, 12, 1, metadata.REQUEST.cls(topics=[]))
    await until(lambda: handler.seen == [1])
    (conn,) = server.connections.values()
    written: list[str] = []
    original = conn.writer.write
    conn.writer.write = lambda data: (written.append("answer"), original(data))[1]  # type: ignore[method-assign]
    loop = asyncio.get_running_loop()
    # Queued ahead of the handler's wake-up, so the marker lands in the same turn as anything the
    # handler's completion schedules (a writer task would come after it).
    loop.call_soon(lambda: loop.call_soon(written.append, "next callback"))
    handler.delays[1].set()  # resumes the handler at the next turn of the loop
    await asyncio.sleep(0.05)
    assert written == ["answer", "next callback"]
    assert (await client.response(metadata.API, 12))[0] == 1


class BigHandler:
    """Answers Metadata with ~900 KB (long topic names): more than the socket takes at once."""

    async def handle(self, request: InboundRequest) -> Any:
        cls = metadata.RESPONSE.cls
        topics = [
            cls.MetadataResponseTopic(
                error_code=0, name=f"{i}" + "t" * 30_000, is_internal=False, partitions=[]
            )
            for i in range(30)
        ]
        return cls(brokers=[], cluster_id="c", controller_id=request.header.correlation_id, topics=topics)


@with_servers
async def test_large_answers_wait_for_the_socket_to_drain_and_keep_their_order(serve: Serve) -> None:
    server, port = await serve(BigHandler(), max_bytes=1 << 20)
    drains: list[int] = []
    drain = server._drain

    async def counted(conn: Any) -> None:
        drains.append(conn.id)
        await drain(conn)

    server._drain = counted  # type: ignore[method-assign]
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 22)
    client = RawClient(reader, writer)
    for cid in range(1, 17):
        await client.send(metadata.API, 12, cid, metadata.REQUEST.cls(topics=[]))
    await asyncio.sleep(0.2)  # the server has written what the socket takes and waits to drain
    got = []
    for _ in range(16):
        correlation_id, body = await client.response(metadata.API, 12)
        got.append(correlation_id)
        assert [len(t.name) for t in body.topics] == [30_001] * 10 + [30_002] * 20
    assert got == list(range(1, 17))
    assert drains  # the server did wait for the socket at least once


class SameAnswerHandler:
    """Answers every Metadata with one answer object (as a broker caching per image does)."""

    def __init__(self) -> None:
        cls = metadata.RESPONSE.cls
        self.answer = cls(brokers=[], cluster_id="c", controller_id=7, topics=[])

    async def handle(self, request: InboundRequest) -> Any:
        return self.answer


@with_servers
async def test_an_answer_handed_out_again_is_encoded_once_with_each_requests_correlation_id(
    serve: Serve,
) -> None:
    handler = SameAnswerHandler()
    _, port = await serve(handler)
    api_class = type(metadata.API)
    encode = api_class.encode_response_body
    calls: list[int] = []

    def counting(self: Api, body: Any, version: int) -> bytes:
        calls.append(version)
        return encode(self, body, version)

    api_class.encode_response_body = counting  # type: ignore[method-assign]
    try:
        client = await connect(port)
        for cid in (11, 12, 13):
            await client.send(metadata.API, 12, cid, metadata.REQUEST.cls(topics=[]))
        answers = [await client.response(metadata.API, 12) for _ in range(3)]
    finally:
        api_class.encode_response_body = encode  # type: ignore[method-assign]
    assert [cid for cid, _ in answers] == [11, 12, 13]
    assert all(body.controller_id == 7 for _, body in answers)
    assert calls == [12]  # encoded once, the header written per request


def test_a_connection_still_open_when_the_loop_stops_ends_without_an_error_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # At a node's stop the loop cancels the connection handlers still running. A handler task that
    # ends cancelled makes Python 3.11's stream callback (``task.exception()``) log "Exception in
    # callback ... CancelledError" after the node's last line (seen once in a fresh-clone run).
    import logging

    async def main() -> None:
        server = KafkaServer(
            apis=dict(CONTROLLER_LISTENER_APIS), handler=FakeHandler(), max_request_bytes=4096
        )
        port = await server.listen("CONTROLLER", "127.0.0.1", 0)
        await connect(port)
        await until(lambda: len(server.connections) == 1)
        # No close: asyncio.run cancels the handler task, as a node's stop does.

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(main())
    assert "Exception in callback" not in caplog.text, caplog.text
