"""PeerChannel/PeerConnection: negotiation, failures surfaced to the core as responses, backoff."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kraft.cli.cluster_processes import free_ports
from kraft.net.channel import ChannelError, PeerAddress, PeerChannel
from kraft.net.codecs import CODECS, ImmediateResponse
from kraft.net.codecs import describe_quorum as describe_quorum_codec
from kraft.net.server import InboundRequest, KafkaServer
from kraft.node.listeners import CONTROLLER_LISTENER_APIS
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import describe_quorum
from kraft.protocol.schema import Versions
from kraft.raft.messages import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    Envelope,
    FetchRequest,
    FetchResponse,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.types import ReplicaKey

pytestmark = pytest.mark.timeout(30)

PRE_VOTE = VoteRequest(
    cluster_id="c",
    candidate_epoch=3,
    candidate_key=ReplicaKey(1),
    voter_key=ReplicaKey(2),
    last_offset_epoch=3,
    last_offset=9,
    pre_vote=True,
)
VOTE = VoteRequest(
    cluster_id="c",
    candidate_epoch=4,
    candidate_key=ReplicaKey(1),
    voter_key=ReplicaKey(2),
    last_offset_epoch=3,
    last_offset=9,
    pre_vote=False,
)
FETCH = FetchRequest(
    cluster_id="c",
    replica_key=ReplicaKey(1),
    max_wait_ms=0,
    fetch_offset=0,
    last_fetched_epoch=0,
    current_leader_epoch=1,
)


class PeerHandler:
    """A peer that grants every vote and records the versions it was asked at."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.versions: list[tuple[int, int]] = []
        self.delay_s = delay_s

    async def handle(self, request: InboundRequest) -> Any:
        self.versions.append((request.api.key, request.version))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        codec = CODECS[request.api.key]
        decoded = codec.decode_request(request.body, request.version, None)
        assert not isinstance(decoded, ImmediateResponse)
        response: Any
        if isinstance(decoded, VoteRequest):
            response = VoteResponse(leader_epoch=decoded.candidate_epoch, vote_granted=True)
        else:
            response = FetchResponse(high_watermark=5, current_leader_id=2, current_leader_epoch=1)
        return codec.encode_response(response, request.version, "CONTROLLER")


async def start_peer(handler: Any, vote_max: int = 2) -> tuple[KafkaServer, int]:
    apis = dict(CONTROLLER_LISTENER_APIS)
    vote_api = apis[52]
    # An older peer: narrow its served Vote versions.
    apis[52] = type(vote_api)(
        key=vote_api.key,
        name=vote_api.name,
        versions=vote_api.versions,
        flexible=vote_api.flexible,
        request=vote_api.request,
        response=vote_api.response,
        served_versions=Versions(0, vote_max),
    )
    server = KafkaServer(apis=apis, handler=handler, max_request_bytes=1 << 20)
    return server, await server.listen("CONTROLLER", "127.0.0.1", 0)


def peer_channel(port: int | None, deliver: Any, *, timeout_ms: int) -> PeerChannel:
    """Node 1's channel to node 2 listening on ``port`` (None: no address known for node 2)."""
    return PeerChannel(
        local_id=1,
        addresses={} if port is None else {2: PeerAddress("127.0.0.1", port)},
        apis=dict(CONTROLLER_LISTENER_APIS),
        deliver=deliver,
        listener_name="CONTROLLER",
        cluster_id="c",
        request_timeout_ms=timeout_ms,
    )


async def exchange(port: int, envelopes: list[Envelope], timeout_ms: int = 2000) -> list[Envelope]:
    got: list[Envelope] = []
    done = asyncio.Event()

    def deliver(env: Envelope) -> None:
        got.append(env)
        if len(got) == len(envelopes):
            done.set()

    channel = peer_channel(port, deliver, timeout_ms=timeout_ms)
    for env in envelopes:
        channel.send(env)
    await asyncio.wait_for(done.wait(), 10)
    await channel.close()
    return got


def test_requests_are_answered_at_the_highest_common_version() -> None:
    async def main() -> None:
        handler = PeerHandler()
        server, port = await start_peer(handler)
        got = await exchange(port, [Envelope(1, 2, 11, VOTE), Envelope(1, 2, 12, FETCH)])
        await server.close()
        by_id = {e.correlation_id: e for e in got}
        assert isinstance(by_id[11].body, VoteResponse) and by_id[11].body.vote_granted
        assert isinstance(by_id[12].body, FetchResponse) and by_id[12].body.high_watermark == 5
        assert all(e.source == 2 and e.destination == 1 for e in got)
        assert sorted(handler.versions) == [(1, 17), (52, 2)]

    asyncio.run(main())


def test_pre_vote_to_a_peer_without_vote_v2_becomes_unsupported_version_for_the_core() -> None:
    async def main() -> None:
        handler = PeerHandler()
        server, port = await start_peer(handler, vote_max=1)
        got = await exchange(port, [Envelope(1, 2, 5, PRE_VOTE), Envelope(1, 2, 6, VOTE)])
        await server.close()
        by_id = {e.correlation_id: e.body for e in got}
        assert by_id[5].error_code == ErrorCode.UNSUPPORTED_VERSION
        assert isinstance(by_id[6], VoteResponse) and by_id[6].vote_granted  # a standard vote goes at v1
        assert handler.versions == [(52, 1)]

    asyncio.run(main())


def test_unreachable_peer_becomes_broker_not_available() -> None:
    async def main() -> None:
        got = await exchange(free_ports(1)[0], [Envelope(1, 2, 7, FETCH)])
        assert got[0].body.error_code == ErrorCode.BROKER_NOT_AVAILABLE
        assert got[0].correlation_id == 7

    asyncio.run(main())


def test_request_timeout_becomes_broker_not_available() -> None:
    async def main() -> None:
        server, port = await start_peer(PeerHandler(delay_s=2.0))
        got = await exchange(port, [Envelope(1, 2, 8, FETCH)], timeout_ms=300)
        await server.close()
        assert got[0].body.error_code == ErrorCode.BROKER_NOT_AVAILABLE

    asyncio.run(main())


def test_a_call_waits_for_its_own_timeout_not_the_channels_default() -> None:
    """A forwarded request carries what is left of its client's timeout: the channel's shorter
    default must not cut it off (its sender would retry a request the peer may be carrying out)."""

    async def main() -> None:
        server, port = await start_peer(PeerHandler(delay_s=0.6))
        channel = peer_channel(port, lambda _: None, timeout_ms=200)
        codec = CODECS[52]
        api = CONTROLLER_LISTENER_APIS[52]
        with pytest.raises(ChannelError, match="timed out after 200 ms"):
            await channel.call(2, api, lambda v: codec.encode_request(VOTE, v))
        await asyncio.sleep(0.3)  # the timed-out connection's reconnect backoff
        version, body = await channel.call(2, api, lambda v: codec.encode_request(VOTE, v), timeout_ms=5_000)
        assert codec.decode_response(body, version, "CONTROLLER").vote_granted
        await channel.close()
        await server.close()

    asyncio.run(main())


def test_unknown_destination_fails_fast() -> None:
    async def main() -> None:
        got: list[Envelope] = []
        channel = peer_channel(None, got.append, timeout_ms=1000)
        channel.send(Envelope(1, 9, 3, FETCH))
        for _ in range(100):
            if got:
                break
            await asyncio.sleep(0.01)
        await channel.close()
        assert got and got[0].body.error_code == ErrorCode.BROKER_NOT_AVAILABLE

    asyncio.run(main())


def test_reconnects_after_the_peer_comes_back() -> None:
    async def main() -> None:
        port = free_ports(1)[0]
        got: list[Envelope] = []
        channel = peer_channel(port, got.append, timeout_ms=1000)
        channel.send(Envelope(1, 2, 1, FETCH))
        while not got:
            await asyncio.sleep(0.01)
        assert got[0].body.error_code == ErrorCode.BROKER_NOT_AVAILABLE
        server = KafkaServer(
            apis=dict(CONTROLLER_LISTENER_APIS), handler=PeerHandler(), max_request_bytes=1 << 20
        )
        await server.listen("CONTROLLER", "127.0.0.1", port)
        deadline = asyncio.get_running_loop().time() + 5
        while asyncio.get_running_loop().time() < deadline:
            got.clear()
            channel.send(Envelope(1, 2, 2, FETCH))
            while not got:
                await asyncio.sleep(0.01)
            if got[0].body.error_code == 0:
                break
            await asyncio.sleep(0.05)
        await channel.close()
        await server.close()
        assert got[0].body.error_code == 0 and got[0].body.high_watermark == 5

    asyncio.run(main())


class ParkingLeader:
    """A leader that holds every Fetch (a long poll) and answers DescribeQuorum at once; it records
    which connection each request came in on."""

    def __init__(self, park_s: float) -> None:
        self.park_s = park_s  # the first Fetch only: later ones are answered at once
        self.fetch_parked = asyncio.Event()
        self.connections: list[tuple[str, int, str | None]] = []

    async def handle(self, request: InboundRequest) -> Any:
        self.connections.append((request.api.name, request.connection_id, request.header.client_id))
        codec = CODECS[request.api.key]
        decoded = codec.decode_request(request.body, request.version, None)
        response: Any
        if isinstance(decoded, DescribeQuorumRequest):
            response = DescribeQuorumResponse(leader_id=2, leader_epoch=1)
        else:
            if not self.fetch_parked.is_set():
                self.fetch_parked.set()
                await asyncio.sleep(self.park_s)
            response = FetchResponse(high_watermark=5, current_leader_id=2, current_leader_epoch=1)
        return codec.encode_response(response, request.version, "CONTROLLER")


def test_forwarded_admin_request_does_not_wait_behind_a_parked_fetch() -> None:
    """A DescribeQuorum forwarded to the leader must not queue behind the follower's long-polled
    Fetch (responses on one connection come back in order): it has its own connection."""

    async def main() -> None:
        leader = ParkingLeader(park_s=3.0)
        server, port = await start_peer(leader)
        got: list[Envelope] = []
        channel = peer_channel(port, got.append, timeout_ms=5000)
        channel.send(Envelope(1, 2, 1, FETCH))
        await asyncio.wait_for(leader.fetch_parked.wait(), 5)
        loop = asyncio.get_running_loop()
        started = loop.time()
        version, body = await channel.call(
            2, describe_quorum.API, lambda v: describe_quorum_codec.encode_request(DescribeQuorumRequest(), v)
        )
        elapsed = loop.time() - started
        answer = describe_quorum_codec.decode_response(body, version, "CONTROLLER")
        assert isinstance(answer, DescribeQuorumResponse) and answer.leader_id == 2
        # The Fetch stays parked 3 s: 2 s leaves a stalled machine room and still tells them apart.
        assert elapsed < 2.0, f"forwarded DescribeQuorum took {elapsed:.3f} s behind a parked Fetch"
        assert not got, "the parked Fetch cannot have been answered yet"
        # The core's raft traffic keeps a single connection per peer: a second Fetch reuses it.
        channel.send(Envelope(1, 2, 2, FETCH))
        while len(got) < 2:
            await asyncio.sleep(0.01)
        await channel.close()
        await server.close()
        fetch_conns = {c for name, c, _ in leader.connections if name == "Fetch"}
        admin_conns = {c for name, c, _ in leader.connections if name == "DescribeQuorum"}
        assert len(fetch_conns) == 1 and len(admin_conns) == 1 and fetch_conns != admin_conns
        assert {client for name, _, client in leader.connections if name == "Fetch"} == {"raft-client-1"}

    asyncio.run(main())


def test_refused_since_reports_a_peer_gone_only_after_a_failed_attempt_since_then() -> None:
    async def main() -> None:
        import time

        server, port = await start_peer(PeerHandler())
        channel = peer_channel(port, lambda _: None, timeout_ms=1000)
        since = time.monotonic()
        channel.probe(2)
        conn = channel.connection(2)
        assert conn is not None
        for _ in range(200):
            if conn.connected:
                break
            await asyncio.sleep(0.01)
        assert conn.connected and not channel.refused_since(2, since)
        await server.close()  # the peer goes away: connection dropped, then refused
        for _ in range(300):
            channel.probe(2)
            if channel.refused_since(2, since):
                break
            await asyncio.sleep(0.01)
        assert channel.refused_since(2, since)
        assert not channel.refused_since(2, time.monotonic() + 1)  # no attempt failed after that
        assert not channel.refused_since(3, since)  # unknown peer: no evidence either way
        await channel.close()

    asyncio.run(main())


def test_an_answer_that_arrived_while_the_loop_was_held_is_not_declared_timed_out() -> None:
    # A core that runs on the event loop may hold it for longer than a request timeout (a broker
    # replaying a large metadata log). The answer that came meanwhile waits in the socket: when
    # the loop resumes, the overdue timer must not fail the request before the socket is read.
    import threading
    import time

    ready = threading.Event()
    ports: list[int] = []

    def serve() -> None:  # the peer, on its own thread and loop (a daemon: it ends with the test run)
        async def main() -> None:
            _server, port = await start_peer(PeerHandler(delay_s=0.1))
            ports.append(port)
            ready.set()
            while True:
                await asyncio.sleep(3600)

        asyncio.run(main())

    threading.Thread(target=serve, daemon=True).start()
    assert ready.wait(5)

    async def main() -> None:
        got: list[Envelope] = []
        channel = peer_channel(ports[0], got.append, timeout_ms=300)
        await channel.connection(2).connect(2000)  # type: ignore[union-attr]
        channel.send(Envelope(1, 2, 21, FETCH))
        await asyncio.sleep(0.02)  # the request is on the wire
        time.sleep(1.5)  # the loop is held past the timeout; the answer arrives 0.1 s in
        for _ in range(200):
            if got:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)  # the request's task ends after the answer is delivered
        # The re-armed timer was cancelled with the request (a peek at asyncio's own timer heap).
        from kraft.net.channel import _expire

        loop = asyncio.get_running_loop()
        live = [h for h in loop._scheduled if not h.cancelled() and h._callback is _expire]  # type: ignore[attr-defined]
        await channel.close()
        assert got and isinstance(got[0].body, FetchResponse)
        assert got[0].body.high_watermark == 5  # the peer's answer, not BROKER_NOT_AVAILABLE
        assert live == []

    asyncio.run(main())
