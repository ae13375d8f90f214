"""A real ``Node`` served on loopback the way ``KraftServer`` serves one, for tests of the plumbing.

``KafkaServer`` listeners (controller and/or broker) -> ``ListenerHandler`` -> ``Gateway`` ->
``LoopDriver`` -> ``Node`` (built by ``build_node`` on memory storage), on an event loop of its own in
a background thread, so blocking clients (kafka-python, the CLI tools, raw sockets) can talk to it.

What the node sends to other nodes is scripted instead of sent: a raft request is dropped (no peer
answers it), a controller request (a broker's forward, a lifecycle request, a forwarded
DescribeQuorum) is answered with ``controller_peer(envelope)``: a response body, ``None`` (the call
failed, as the server's shell reports it) or ``SILENT`` (never answered). Every envelope the gateway
hands the node is recorded in ``delivered``, every controller request the node sends in ``forwarded``.
"""

from __future__ import annotations

import asyncio
import random
import socket
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Final

from kraft.net.server import KafkaServer
from kraft.node.build import NodeConfig, NodeStorage, build_node
from kraft.node.listeners import BROKER_LISTENER_APIS, CONTROLLER_LISTENER_APIS
from kraft.node.node import Node, NodeEnvelope
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.envelope import ControllerEnvelope
from kraft.protocol.framing import FrameDecoder, frame
from kraft.raft.log import MemoryLog
from kraft.raft.messages import Envelope
from kraft.raft.store import ElectionStore, MemoryElectionStore
from kraft.server.driver import LoopDriver, WallClock
from kraft.server.gateway import Gateway, ListenerHandler

SILENT: Final = object()
CONTROLLER_LISTENER = "CONTROLLER"
BROKER_LISTENER = "PLAINTEXT"


def never_answers(_envelope: ControllerEnvelope) -> Any:
    return SILENT


class ServedNode:
    """Args:
    make_config: the node's configuration, given the bound ports by listener name.
    controller_listener / broker_listener: which listeners to bind (port 0).
    store: the node's election state (e.g. to start as a follower of a given leader).
    controller_peer: answers the node's controller requests (see the module docstring).
    """

    def __init__(
        self,
        make_config: Callable[[dict[str, int]], NodeConfig],
        *,
        controller_listener: bool = True,
        broker_listener: bool = False,
        store: ElectionStore | None = None,
        controller_peer: Callable[[ControllerEnvelope], Any] = never_answers,
    ) -> None:
        self.controller_peer = controller_peer
        self.delivered: list[NodeEnvelope] = []
        self.forwarded: list[ControllerEnvelope] = []
        self.fatal: list[BaseException] = []
        self.ports: dict[str, int] = {}
        self.node: Node
        self.gateway: Gateway
        self.driver: LoopDriver
        self._servers: list[KafkaServer] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="served-node")
        self._thread.start()
        store = store or MemoryElectionStore()
        try:
            self.run(self._start(make_config, controller_listener, broker_listener, store))
        except BaseException:
            self.close()
            raise

    def run(self, coro: Any, timeout_s: float = 10) -> Any:
        """Run ``coro`` on the node's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    async def _start(
        self,
        make_config: Callable[[dict[str, int]], NodeConfig],
        controller_listener: bool,
        broker_listener: bool,
        store: ElectionStore,
    ) -> None:
        handlers: dict[str, ListenerHandler] = {}

        class Handler:
            def __init__(self, kind: str) -> None:
                self.kind = kind

            async def handle(self, request: Any) -> Any:
                return await handlers[self.kind].handle(request)

        for enabled, kind, apis, name in (
            (controller_listener, "controller", CONTROLLER_LISTENER_APIS, CONTROLLER_LISTENER),
            (broker_listener, "broker", BROKER_LISTENER_APIS, BROKER_LISTENER),
        ):
            if enabled:
                server = KafkaServer(apis=dict(apis), handler=Handler(kind), max_request_bytes=1 << 20)
                self._servers.append(server)
                self.ports[name] = await server.listen(name, "127.0.0.1", 0)
        config = make_config(dict(self.ports))
        clock = WallClock()
        node = self.node = build_node(config, NodeStorage(MemoryLog(), store), clock(), random.Random(0))
        self.driver = LoopDriver(node, clock=clock, log_prefix=f"[node {config.node_id}] ")

        def deliver(envelopes: Iterable[NodeEnvelope]) -> None:
            envelopes = list(envelopes)
            self.delivered.extend(envelopes)
            self.driver.deliver(envelopes)

        self.gateway = Gateway(
            deliver=deliver,
            node_id=config.node_id,
            cluster_id=config.cluster_id,
            leader=lambda: self.driver.view.leader_and_epoch,
            raft_listener_name=config.raft_listener_name,
        )
        handlers["controller"] = ListenerHandler(self.gateway, broker=False)
        handlers["broker"] = ListenerHandler(self.gateway, broker=True)
        self.driver.start(
            asyncio.get_running_loop(), on_outbound=self._on_outbound, on_fatal=self.fatal.append
        )

    def _on_outbound(self, envelopes: list[NodeEnvelope]) -> None:
        for envelope in envelopes:
            if isinstance(envelope, Envelope) and envelope.is_request:
                continue  # no peer answers raft requests
            if isinstance(envelope, ControllerEnvelope) and envelope.is_request:
                self.forwarded.append(envelope)
                outcome = self.controller_peer(envelope)
                if outcome is not SILENT:
                    self.driver.deliver([envelope.reply(outcome)])
                continue
            self.gateway.complete(envelope)

    def wait_for(self, what: str, cond: Callable[[], bool], timeout_s: float = 10) -> None:
        async def wait() -> None:
            deadline = self.loop.time() + timeout_s
            while not cond():
                if self.loop.time() > deadline:
                    raise AssertionError(f"not reached within {timeout_s} s: {what}")
                await asyncio.sleep(0.01)

        self.run(wait(), timeout_s + 5)

    def close(self) -> None:
        async def stop() -> None:
            driver = getattr(self, "driver", None)
            if driver is not None:
                driver.stop_now()
            gateway = getattr(self, "gateway", None)
            if gateway is not None:
                gateway.fail_all("test over")
            for server in self._servers:
                await server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self.loop.is_running():
            self.run(stop())
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
        self.loop.close()
        assert not self.fatal, self.fatal


def directory(node_id: int) -> uuid.UUID:
    return uuid.UUID(int=0xD00 + node_id)


class Conn:
    """A blocking client connection speaking frames."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.decoder = FrameDecoder()
        self.frames: list[bytes] = []
        self.next_id = 1

    def send(self, api: Api, version: int, body: Any) -> int:
        cid = self.next_id
        self.next_id += 1
        self.sock.sendall(frame(encode_request(api, version, cid, body)))
        return cid

    def call(self, api: Api, version: int, body: Any) -> Any:
        cid = self.send(api, version, body)
        while not self.frames:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed by the server")
            self.frames.extend(self.decoder.feed(data))
        got, response = decode_response(self.frames.pop(0), api, version)
        assert got == cid
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
