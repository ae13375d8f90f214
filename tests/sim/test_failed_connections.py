"""Error answers for failed connections: where the real sender's connection is refused or reset,
the world answers its raft request with BROKER_NOT_AVAILABLE (as ``kraft.net``'s channel does);
a partition or a lost message stays silent, and a response is never answered."""

from __future__ import annotations

import itertools
from typing import Any

from sim_fakes import fake_factory

from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import broker_heartbeat
from kraft.raft.messages import BeginQuorumEpochRequest, BeginQuorumEpochResponse, Envelope, FetchRequest
from kraft.raft.types import ReplicaKey
from kraft.sim.network import LinkProfile
from kraft.sim.world import SimNode, World

NOT_AVAILABLE = int(ErrorCode.BROKER_NOT_AVAILABLE)


def _world(seed: int = 7, **kw: Any) -> World:
    # Fake cores ping every peer every 100 ms (at 0, 100, ...) and never answer; links take 2-7 ms.
    world = World(seed=seed, voters=3, node_factory=fake_factory, end_ms=1000, **kw)
    world.start()
    return world


def _answers_from(world: World, node_id: int, source: int) -> list[tuple[int, int, int, int]]:
    return [a for a in world.nodes[node_id].raft.answers if a[1] == source]


def _ping(source: int, destination: int, correlation_id: int) -> Envelope:
    body = BeginQuorumEpochRequest(cluster_id=None, voter_key=ReplicaKey(1), leader_id=source, leader_epoch=0)
    return Envelope(source, destination, correlation_id, body)


def test_a_request_to_a_crashed_node_is_refused_after_about_one_round_trip() -> None:
    world = _world()
    world.schedule(1, "crash", lambda: world.crash(1))
    world.run()
    answers = _answers_from(world, 2, 1)
    # Pings leave at 0, 100, ..., 900: each is refused where it arrives (2-7 ms later) and the error
    # comes back on the reverse link (another 2-7 ms).
    assert len(answers) == 10 and len({corr for _, _, corr, _ in answers}) == 10
    assert all(4 <= t % 100 <= 14 and error == NOT_AVAILABLE for t, _, _, error in answers)
    assert world.network.stats.refused == 20  # nodes 2 and 3, ten pings each
    assert world.nodes[2].raft.answers == answers  # node 3 never stopped: nothing from it


def test_requests_waiting_on_a_node_fail_when_it_stops() -> None:
    world = _world()
    world.schedule(50, "crash", lambda: world.crash(1))
    world.run()
    # Node 2's ping of t=0 reached node 1 (unanswered: fakes never answer); the crash resets the
    # connection and the error arrives one link delay after it. Later pings are refused.
    first, *later = _answers_from(world, 2, 1)
    assert 52 <= first[0] <= 57 and first[3] == NOT_AVAILABLE
    assert [t // 100 for t, _, _, _ in later] == list(range(1, 10))
    assert world.network.stats.reset == 2  # one pending request each from nodes 2 and 3


def test_a_request_across_a_partition_or_lost_is_not_answered() -> None:
    world = _world()
    world.schedule(1, "crash", lambda: world.crash(1))
    world.network.block(2, 1)  # silent: the request never reaches the dead node's host
    world.network.block(1, 3)  # the refusal is lost on the way back
    world.run()
    assert world.nodes[2].raft.answers == [] and world.nodes[3].raft.answers == []
    assert world.network.stats.refused == 10  # node 3's, all dropped on the reverse link

    lossy = _world(link=LinkProfile(loss=1.0))
    lossy.schedule(1, "crash", lambda: lossy.crash(1))
    lossy.run()
    assert lossy.network.stats.refused == 0 and lossy.nodes[2].raft.answers == []


def test_a_response_to_a_stopped_node_is_dropped_without_an_answer() -> None:
    world = _world()
    world.end_ms = 90  # before the second round of pings
    response = Envelope(2, 1, 555, BeginQuorumEpochResponse(error_code=0))
    world.schedule(1, "crash", lambda: world.crash(1))
    world.schedule(20, "answer", lambda: world.send(response, world.now_ms))
    world.run()
    # The t=0 pings of nodes 2 and 3 are refused (node 1's own die with it): the response only
    # adds to the dead drops.
    assert world.network.stats.refused == 2 and world.network.stats.dropped_dead == 5
    assert [corr for _, _, corr, _ in world.nodes[2].raft.answers] != [] and all(
        corr != 555 for _, _, corr, _ in world.nodes[2].raft.answers
    )


def test_a_request_to_a_dead_voters_bootstrap_address_is_refused_from_that_address() -> None:
    world = _world(bootstrap_servers=True)  # bootstrap id -2 is voter 1's second address
    world.schedule(1, "crash", lambda: world.crash(1))
    world.schedule(20, "ask", lambda: world.send(_ping(2, -2, 777), world.now_ms))
    world.run()
    assert [(src, corr, error) for t, src, corr, error in world.nodes[2].raft.answers if corr == 777] == [
        (-2, 777, NOT_AVAILABLE)
    ]


def test_an_unreachable_endpoint_refuses_unless_black_holed() -> None:
    world = _world()
    world.network.block_endpoint(2, 1)
    world.network.block_endpoint(3, 1, refuse=False)
    world.run()
    answers = _answers_from(world, 2, 1)
    assert len(answers) == 10 and all(4 <= t % 100 <= 14 and e == NOT_AVAILABLE for t, _, _, e in answers)
    # Pings at 0, 100, ..., 1000 (the last one's answer would come after the end).
    assert world.nodes[3].raft.answers == [] and world.network.stats.dropped_endpoint == 22
    assert not any(src == 2 for _, src, _ in world.nodes[1].raft.received)  # node 1 never saw them


class _Client:
    """An actor that sends one controller request."""

    actor_id = 101
    incarnation = 0
    up = True

    def __init__(self) -> None:
        self.received: list[Any] = []

    def receive(self, envelope: Any) -> None:
        self.received.append(envelope)


def test_a_controller_request_to_a_dead_node_is_refused_with_an_answer_without_a_body() -> None:
    # As the server's shell answers a request whose connection fails: ApiResponse(body=None).
    world = _world()
    client = _Client()
    world.add_actor(client)
    request = ControllerEnvelope(101, 1, 1, ApiRequest(broker_heartbeat.API, 1, None))
    world.schedule(1, "crash", lambda: world.crash(1))
    world.schedule(10, "ask", lambda: world.send(request, world.now_ms))
    world.run()
    (answer,) = client.received
    assert isinstance(answer, ControllerEnvelope) and answer.correlation_id == 1
    assert answer.source == 1 and answer.destination == 101
    assert isinstance(answer.body, ApiResponse) and answer.body.body is None
    assert answer.body.api is broker_heartbeat.API and world.network.stats.refused == 21  # + the fakes' 20


def test_a_controller_request_a_node_took_fails_when_that_node_crashes() -> None:
    world = _world()
    client = _Client()
    world.add_actor(client)
    request = ControllerEnvelope(101, 1, 7, ApiRequest(broker_heartbeat.API, 1, None))
    world.schedule(5, "ask", lambda: world.send(request, world.now_ms))
    world.schedule(40, "crash", lambda: world.crash(1))  # the fake never answers it
    world.run()
    (answer,) = client.received
    assert answer.correlation_id == 7 and isinstance(answer.body, ApiResponse) and answer.body.body is None
    assert world.network.stats.reset >= 1


def test_a_follower_retries_a_crashed_leader_after_the_retry_backoff_not_the_request_timeout() -> None:
    # Real cores: request timeout 3000 ms, retry backoff 50 ms, links 2-7 ms.
    world = World(seed=3, voters=3, end_ms=3200)
    fetches: list[tuple[int, int]] = []  # (time, follower) of Fetches sent to the crashed leader
    crashed: list[int] = []

    def watch(node: SimNode, outbound: Any, _observed: Any) -> None:
        for envelope in outbound:
            if crashed and envelope.destination == crashed[0] and isinstance(envelope.body, FetchRequest):
                fetches.append((world.now_ms, node.node_id))

    def crash_leader() -> None:
        leader = world.current_leader()
        assert leader is not None
        crashed.append(leader.node_id)
        world.crash(leader.node_id)

    world.add_poll_watcher(watch)
    world.start()
    world.schedule(2000, "crash", crash_leader)
    world.run()
    followers = sorted({f for _, f in fetches})
    assert len(followers) == 2
    for follower in followers:
        times = [t for t, f in fetches if f == follower]
        # The Fetch waiting at the leader fails at the crash (reset): the next one goes out a link
        # delay plus the backoff later; each one after is refused a round trip after it left and
        # sent again a backoff later. Without error answers: nothing before the request timeout.
        assert 2000 < times[0] <= 2000 + 7 + 50, times
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert len(gaps) >= 15 and all(50 + 4 <= gap <= 50 + 14 for gap in gaps), gaps
    assert world.network.stats.reset >= 1 and world.network.stats.refused >= 30
