"""KIP-853 in the shell: a controller without controller.quorum.voters, the voter set published after
each poll, and the channel following it. (What the listeners report from the voter set is the core's:
``tests/unit/node/test_quorum_apis.py``.)"""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import pytest

from kraft.net.channel import PeerAddress, PeerChannel
from kraft.node.build import NodeConfig, NodeStorage, build_node
from kraft.node.listeners import CONTROLLER_LISTENER_APIS
from kraft.node.node import Node
from kraft.raft.listener import SnapshotWriter
from kraft.raft.log import MemoryLog
from kraft.raft.messages import Envelope, UpdateRaftVoterRequest
from kraft.raft.node import QuorumConfig
from kraft.raft.store import MemoryElectionStore
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey
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


def standalone_node(port: int = 9093) -> Node:
    """Node 1 formatted ``--standalone`` (kraft.version 1, voter set {1} in its bootstrap checkpoint)."""
    me = voter(1, port)
    log = MemoryLog()
    writer = SnapshotWriter(
        log.store_snapshot(OffsetAndEpoch(0, 0)), 0, lambda _sid: None, kraft_version=1, voters=VoterSet([me])
    )
    writer.freeze()
    config = NodeConfig(
        node_id=1,
        cluster_id="c",
        directory_id=me.key.directory_id,
        quorum=QuorumConfig(voters={}, bootstrap_servers=me.endpoints),
        local_endpoints=me.endpoints,
        quorum_apis=True,
    )
    return build_node(config, NodeStorage(log, MemoryElectionStore()), 0, random.Random(0))


def test_the_driver_publishes_the_voter_set_and_kraft_version() -> None:
    async def body() -> None:
        node = standalone_node()
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
            for _ in range(500):
                if driver.view.leader_and_epoch.leader_id == 1 and driver.view.high_watermark:
                    break
                await asyncio.sleep(0.01)
            view = driver.view
            assert view.voter_set is node.raft.voter_set and view.kraft_version == 1
            assert [v.endpoints for v in view.voter_set] == [(Endpoint("CONTROLLER", "127.0.0.1", 9093),)]
            # Voter 1 announces a new endpoint (KIP-853 UpdateRaftVoter): a new voter set in the log.
            moved = Endpoint("CONTROLLER", "127.0.0.1", 9999)
            update = UpdateRaftVoterRequest(
                cluster_id="c",
                current_leader_epoch=view.leader_and_epoch.epoch,
                voter_key=ReplicaKey(1, uuid.UUID(int=1)),
                listeners=(moved,),
            )
            driver.deliver([Envelope(1, 1, 5, update)])
            for _ in range(500):
                if [v.endpoints for v in driver.view.voter_set] == [(moved,)]:
                    break
                await asyncio.sleep(0.01)
            assert driver.view.voter_set is node.raft.voter_set
            assert [v.endpoints for v in driver.view.voter_set] == [(moved,)]
            assert seen[-1] is driver.view.voter_set and [v.endpoints for v in seen[0]] != [(moved,)]
        finally:
            driver.stop_now()
            driver.join(5)

    asyncio.run(body())


def test_the_server_points_the_channel_at_each_new_voter_set() -> None:
    async def body() -> None:
        server = KraftServer(parse_server_config(DYNAMIC))
        channel = PeerChannel(
            local_id=1,
            addresses={-2: PeerAddress("127.0.0.1", 9093)},
            apis=dict(CONTROLLER_LISTENER_APIS),
            deliver=lambda _: None,
            listener_name="CONTROLLER",
            cluster_id="c",
            request_timeout_ms=1000,
        )
        server._channel = channel
        three = VoterSet([voter(1, 9093), voter(2, 9094), voter(3, 9095, name="OTHER")])
        server._apply_voter_set(three)
        assert channel.knows(2) and channel.knows(3) and not channel.knows(1)
        assert server._remote_voters() == [2, 3]
        # A voter without an endpoint on our raft listener is reached on its first one.
        assert server.voter_endpoints[3] == Endpoint("OTHER", "127.0.0.1", 9095)
        assert channel._addresses[3] == PeerAddress("127.0.0.1", 9095)
        # Voter 3 moves and voter 2 leaves: the address follows; ids no longer voters are dropped
        # from the voters (the channel may still reach them as observers).
        moved = VoterSet([voter(1, 9093), voter(3, 9999)])
        server._apply_voter_set(moved)
        assert channel._addresses[3] == PeerAddress("127.0.0.1", 9999)
        assert server._remote_voters() == [3] and sorted(server.voter_endpoints) == [1, 3]
        # The same object again does nothing (the address learnt meanwhile stays).
        channel.set_address(3, PeerAddress("127.0.0.1", 7777))
        server._apply_voter_set(moved)
        assert channel._addresses[3] == PeerAddress("127.0.0.1", 7777)
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
