"""KIP-853 in the shell: a controller without controller.quorum.voters, the voter set published after
each poll, and the channel and listeners following it."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from kraft.net.controller_apis import served_apis

from kraft.net.channel import PeerAddress, PeerChannel
from kraft.raft.messages import Envelope
from kraft.raft.types import Endpoint, LeaderAndEpoch, ReplicaKey
from kraft.raft.voters import VoterNode, VoterSet
from kraft.server.config import parse_server_config
from kraft.server.driver import RaftDriver, WallClock
from kraft.server.kraft_server import KraftServer

pytestmark = pytest.mark.timeout(30)

DYNAMIC = {
    "process.roles": "controller",
    "node.id": "1",
    "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
    "listeners": "CONTROLLER://127.0.0.1:9093",
    "controller.listener.names": "CONTROLLER",
    "log.dirs": "/tmp/unused",
}


def voter(node_id: int, port: int, *, name: str = "CONTROLLER") -> VoterNode:
    return VoterNode(ReplicaKey(node_id, uuid.UUID(int=node_id)), (Endpoint(name, "127.0.0.1", port),))


def test_a_controller_needs_no_static_voters_with_bootstrap_servers() -> None:
    cfg = parse_server_config(DYNAMIC)
    assert cfg.is_controller and cfg.voters == {}
    assert cfg.bootstrap_servers == (Endpoint("CONTROLLER", "127.0.0.1", 9093),)
    assert dict(cfg.quorum.voters) == {}


@dataclass
class FakePollResult:
    outbound: list[Envelope]
    wake_at_ms: int


@dataclass
class VoterSetNode:
    """A core whose voter set changes when told to."""

    node_id: int = 1
    voter_set: VoterSet = field(default_factory=lambda: VoterSet([voter(1, 9093)]))
    kraft_version: int = 1
    polls: int = 0

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(1, 1)

    def poll(self, now_ms: int, inbound: Any = ()) -> FakePollResult:
        self.polls += 1
        return FakePollResult([], now_ms + 20)


def test_the_driver_publishes_the_voter_set_and_kraft_version() -> None:
    async def body() -> None:
        node = VoterSetNode()
        seen: list[Any] = []
        driver = RaftDriver(node, clock=WallClock())
        driver.start(
            asyncio.get_running_loop(),
            on_outbound=lambda _: None,
            on_fatal=lambda _: None,
            on_view=lambda old, new: (
                seen.append(new.voter_set) if new.voter_set is not old.voter_set else None
            ),
        )
        try:
            assert driver.view.voter_set is node.voter_set and driver.view.kraft_version == 1
            bigger = node.voter_set.add(voter(2, 9094))
            assert bigger is not None
            await asyncio.wrap_future(driver.submit(lambda n, _now: setattr(n, "voter_set", bigger)))
            for _ in range(100):
                if driver.view.voter_set is bigger:
                    break
                await asyncio.sleep(0.01)
            assert driver.view.voter_set is bigger
            assert seen[0].ids == {1} and seen[-1].ids == {1, 2}
        finally:
            driver.stop_now()
            driver.join(5)

    asyncio.run(body())


def test_the_server_points_the_channel_and_listener_at_each_new_voter_set() -> None:
    async def body() -> None:
        server = KraftServer(parse_server_config(DYNAMIC))
        channel = PeerChannel(
            local_id=1,
            addresses={-2: PeerAddress("127.0.0.1", 9093)},
            apis=served_apis(),
            deliver=lambda _: None,
            listener_name="CONTROLLER",
            cluster_id="c",
            request_timeout_ms=1000,
        )
        server._channel = channel
        updates: list[dict[int, Endpoint]] = []

        class Apis:
            def update_voters(self, endpoints: dict[int, Endpoint]) -> None:
                updates.append(dict(endpoints))

        server._controller_apis = Apis()  # type: ignore[assignment]
        three = VoterSet([voter(1, 9093), voter(2, 9094), voter(3, 9095, name="OTHER")])
        server._apply_voter_set(three)
        assert channel.knows(2) and channel.knows(3) and not channel.knows(1)
        assert server._remote_voters() == [2, 3]
        assert updates[-1][3] == Endpoint("OTHER", "127.0.0.1", 9095)
        # Voter 3 moves and voter 2 leaves: the address follows; ids no longer voters are dropped
        # from what the listener reports (the channel may still reach them as observers).
        moved = VoterSet([voter(1, 9093), voter(3, 9999)])
        server._apply_voter_set(moved)
        assert channel._addresses[3] == PeerAddress("127.0.0.1", 9999)
        assert server._remote_voters() == [3]
        assert sorted(updates[-1]) == [1, 3]
        # The same object again does nothing.
        server._apply_voter_set(moved)
        assert len(updates) == 2
        await channel.close()

    asyncio.run(body())


def test_static_voters_are_never_replaced_by_a_voter_set() -> None:
    static = dict(DYNAMIC, **{"controller.quorum.voters": "1@127.0.0.1:9093"})
    server = KraftServer(parse_server_config(static))
    server._apply_voter_set(VoterSet([voter(1, 9093), voter(2, 9094)]))
    assert server.voter_endpoints == {1: Endpoint("CONTROLLER", "127.0.0.1", 9093)}


def test_api_versions_finalize_kraft_version_from_the_raft_log() -> None:
    server = KraftServer(parse_server_config(DYNAMIC))
    assert server._feature_info().supported["kraft.version"] == (0, 1)
    assert "kraft.version" not in server._feature_info().finalized  # no core yet: level 0

    class View:
        kraft_version = 1

    class Driver:
        view = View()

    server.driver = Driver()  # type: ignore[assignment]
    assert server._feature_info().finalized["kraft.version"] == 1
