"""The two drivers (RaftDriver: the raft thread; LoopDriver: the event loop) with a fake node, and
the Prometheus exposition of their view."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import generate_latest

from kraft.common.errors import FatalError
from kraft.raft.messages import DescribeQuorumRequest, DescribeQuorumResponse, Envelope
from kraft.raft.states import Role
from kraft.raft.types import LeaderAndEpoch
from kraft.server import driver as driver_module
from kraft.server.driver import LoopDriver, NodeView, RaftDriver, WallClock
from kraft.server.metrics import build_registry

pytestmark = pytest.mark.timeout(30)


@dataclass
class FakePollResult:
    outbound: list[Envelope]
    wake_at_ms: int


@dataclass
class FakeMetrics:
    current_state: str = "leader"
    current_epoch: int = 4
    high_watermark: int = 12
    commit_latency_avg: float = 1.5


@dataclass
class FakeNode:
    """Answers every inbound request with a DescribeQuorumResponse; raises when told to.

    Both the node and its raft part (``raft`` is the node itself): what the driver reads after
    each poll (leader, role, high watermark, metrics, voter set) and the parts it looks for."""

    node_id: int = 1
    polls: int = 0
    inbound_seen: list[Envelope] = field(default_factory=list)
    fail: Exception | None = None
    shutdown_at: int | None = None
    metrics: FakeMetrics = field(default_factory=FakeMetrics)
    thread_names: set[str] = field(default_factory=set)
    role: Role = Role.LEADER
    quorum: Any = field(default_factory=lambda: SimpleNamespace(state=None))
    controller: None = None
    broker: None = None
    voter_set: Any = None
    kraft_version: int = 0

    @property
    def raft(self) -> FakeNode:
        return self

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(1, 4)

    @property
    def high_watermark(self) -> int:
        return 12

    def poll(self, now_ms: int, inbound: Any = ()) -> FakePollResult:
        self.thread_names.add(threading.current_thread().name)
        self.polls += 1
        if self.fail is not None:
            raise self.fail
        out = []
        for env in inbound:
            self.inbound_seen.append(env)
            out.append(Envelope(1, env.source, env.correlation_id, DescribeQuorumResponse(leader_id=1)))
        return FakePollResult(out, now_ms + 50)

    def shutdown(self, now_ms: int, timeout_ms: int) -> None:
        self.shutdown_at = now_ms

    def is_shutdown_complete(self, now_ms: int) -> bool:
        return self.shutdown_at is not None


DRIVERS = [RaftDriver, LoopDriver]
Driver = RaftDriver | LoopDriver


def _poll_thread(driver_type: type) -> str:
    """The thread a driver polls on: its own raft thread, or the event loop's."""
    return "raft-1" if driver_type is RaftDriver else threading.current_thread().name


async def _run_driver(
    node: FakeNode, body: Any, driver_type: type = RaftDriver
) -> tuple[list[list[Envelope]], list[BaseException]]:
    outbound: list[list[Envelope]] = []
    fatal: list[BaseException] = []
    driver = driver_type(node, clock=WallClock(), log_prefix="[t] ")
    driver.start(asyncio.get_running_loop(), on_outbound=outbound.append, on_fatal=fatal.append)
    try:
        await body(driver, outbound, fatal)
    finally:
        driver.stop_now()
        await asyncio.get_running_loop().run_in_executor(None, driver.join, 5)
    return outbound, fatal


async def _until(condition: Any, timeout_s: float = 5) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("driver_type", DRIVERS)
def test_inbound_envelopes_are_polled_by_the_driver_and_answers_come_back_on_the_loop(
    driver_type: type,
) -> None:
    node = FakeNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        driver.deliver([Envelope(-5, 1, 77, DescribeQuorumRequest())])
        await _until(lambda: any(outbound))
        assert [e.correlation_id for batch in outbound for e in batch] == [77]
        assert node.thread_names == {_poll_thread(driver_type)}
        assert driver.view.leader_and_epoch == LeaderAndEpoch(1, 4)
        assert driver.view.metrics["current_epoch"] == 4

    asyncio.run(_run_driver(node, body, driver_type))


@pytest.mark.parametrize("driver_type", DRIVERS)
def test_submit_runs_between_polls_and_returns_the_result(driver_type: type) -> None:
    node = FakeNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        result = await asyncio.wrap_future(
            driver.submit(lambda n, now_ms: (n.node_id, threading.current_thread().name))
        )
        assert result == (1, _poll_thread(driver_type))
        assert await driver.submit_async(lambda n, now_ms: n.polls >= 1)
        with pytest.raises(ValueError):
            await asyncio.wrap_future(driver.submit(lambda n, now_ms: int("x")))

    asyncio.run(_run_driver(node, body, driver_type))


@pytest.mark.parametrize("driver_type", DRIVERS)
def test_a_fatal_error_in_poll_stops_the_thread_and_is_reported(driver_type: type) -> None:
    node = FakeNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        node.fail = FatalError("disk on fire")
        driver.deliver([])
        await _until(lambda: fatal)
        assert isinstance(fatal[0], FatalError) and driver.stopped.is_set()
        with pytest.raises(RuntimeError):
            driver.submit(lambda n, now_ms: None).result(1)

    asyncio.run(_run_driver(node, body, driver_type))


@pytest.mark.parametrize("driver_type", DRIVERS)
def test_graceful_shutdown_asks_the_node_to_shut_down_and_stops_when_complete(driver_type: type) -> None:
    node = FakeNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        driver.request_shutdown(1000)
        await _until(driver.stopped.is_set)
        assert node.shutdown_at is not None and not fatal

    asyncio.run(_run_driver(node, body, driver_type))


def test_loop_driver_polls_again_at_the_time_the_node_asks_for_without_input() -> None:
    node = FakeNode()  # asks to be woken 50 ms after each poll

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        await _until(lambda: node.polls >= 4, timeout_s=2)
        assert not fatal

    asyncio.run(_run_driver(node, body, LoopDriver))


def test_loop_driver_is_woken_by_envelopes_delivered_from_another_thread() -> None:
    node = FakeNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        envelope = Envelope(-5, 1, 9, DescribeQuorumRequest())
        sender = threading.Thread(target=driver.deliver, args=([envelope],))
        sender.start()
        sender.join()
        await _until(lambda: any(outbound))
        assert [e.correlation_id for batch in outbound for e in batch] == [9]
        assert node.thread_names == {threading.current_thread().name}
        # submit() from another thread also reaches the loop and settles a concurrent future.
        other: list[Any] = []
        t = threading.Thread(target=lambda: other.append(driver.submit(lambda n, now: n.polls).result(5)))
        t.start()
        await _until(lambda: bool(other))
        t.join()
        assert other[0] >= 1

    asyncio.run(_run_driver(node, body, LoopDriver))


@dataclass
class FlushingNode(FakeNode):
    """Like a leader with appended records: asks to be polled again at once (to fsync) after a poll
    that answered something, and records what had happened on the loop by then."""

    loop_events: list[str] = field(default_factory=list)
    seen_at_poll: list[list[str]] = field(default_factory=list)

    def poll(self, now_ms: int, inbound: Any = ()) -> FakePollResult:
        self.seen_at_poll.append(list(self.loop_events))
        result = super().poll(now_ms, inbound)
        if result.outbound:
            return FakePollResult(result.outbound, now_ms)
        return result


def test_loop_driver_runs_callbacks_queued_by_on_outbound_before_the_next_immediate_poll() -> None:
    # The server's handler that writes a Fetch answer is resumed by a callback the answer queues;
    # the leader's next poll (its fsync) must come after it, or the answer waits for the disk.
    node = FlushingNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        loop = asyncio.get_running_loop()
        polls_before = node.polls
        driver._on_outbound = lambda out: loop.call_soon(node.loop_events.append, "answer written")
        driver.deliver([Envelope(-5, 1, 3, DescribeQuorumRequest())])
        await _until(lambda: node.polls >= polls_before + 2)
        answered = next(i for i, seen in enumerate(node.seen_at_poll) if i >= polls_before and not seen)
        assert node.seen_at_poll[answered + 1] == ["answer written"]

    asyncio.run(_run_driver(node, body, LoopDriver))


def test_windowed_metrics_are_refreshed_at_most_every_interval_and_the_rest_on_every_poll(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A whole second (100 ms in production): a stalled machine cannot let the interval pass
    # between the two polls that must fall within it.
    monkeypatch.setattr(driver_module, "WINDOWED_METRICS_REFRESH_S", 1.0)
    node = FakeNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        await _until(lambda: driver.view.polls >= 2)
        node.metrics.current_epoch = 5
        node.metrics.commit_latency_avg = 9.0
        polls = driver.view.polls
        driver.deliver([])
        await _until(lambda: driver.view.polls > polls)
        assert driver.view.metrics["current_epoch"] == 5  # read on every poll
        assert driver.view.metrics["commit_latency_avg"] == 1.5  # within the refresh interval
        await asyncio.sleep(driver_module.WINDOWED_METRICS_REFRESH_S + 0.05)
        polls = driver.view.polls
        driver.deliver([])
        await _until(lambda: driver.view.polls > polls)
        assert driver.view.metrics["commit_latency_avg"] == 9.0

    asyncio.run(_run_driver(node, body, LoopDriver))


def test_wall_clock_never_goes_backwards() -> None:
    clock = WallClock()
    clock._last = 10**15  # as if the wall clock had just stepped back
    assert clock() == 10**15


def test_prometheus_exposition_has_kafka_raft_names_and_a_labelled_state() -> None:
    view = NodeView(
        leader_and_epoch=LeaderAndEpoch(1, 4),
        role="leader",
        high_watermark=12,
        metrics={
            "current_state": "leader",
            "current_epoch": 4,
            "high_watermark": 12,
            "commit_latency_avg": 1.5,
            "current_leader": 1,
            "poll_idle_ratio_avg": 0.9,
        },
    )
    text = generate_latest(build_registry(lambda: view, 3)).decode()
    assert 'kafka_raft_current_state{node_id="3",state="leader"} 1.0' in text
    assert 'kafka_raft_current_state{node_id="3",state="follower"} 0.0' in text
    assert 'kafka_raft_current_epoch{node_id="3"} 4.0' in text
    assert 'kafka_raft_high_watermark{node_id="3"} 12.0' in text
    assert 'kafka_raft_commit_latency_avg{node_id="3"} 1.5' in text
    assert 'kafka_raft_poll_idle_ratio_avg{node_id="3"} 0.9' in text
    assert "kafka_raft_append_records_rate" not in text  # not provided: omitted, not invented


def test_loop_driver_keeps_polling_after_the_outbound_handler_raises() -> None:
    node = FakeNode()

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        def broken(out: list[Envelope]) -> None:
            raise RuntimeError("a bug in the shell")

        driver._on_outbound = broken
        driver.deliver([Envelope(-5, 1, 3, DescribeQuorumRequest())])
        polls = node.polls
        await _until(lambda: node.polls >= polls + 3, timeout_s=2)  # the timer is still armed
        assert not fatal and not driver.stopped.is_set()

    asyncio.run(_run_driver(node, body, LoopDriver))


@dataclass
class SlowNode(FakeNode):
    """A poll that takes ``seconds`` (a large replay, say)."""

    seconds: float = 0.0

    def poll(self, now_ms: int, inbound: Any = ()) -> FakePollResult:
        time.sleep(self.seconds)
        return super().poll(now_ms, inbound)


def test_loop_driver_warns_once_about_a_poll_that_held_the_loop(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(LoopDriver, "SLOW_POLL_S", 0.05)
    node = SlowNode(seconds=0.06)

    async def body(driver: Driver, outbound: list[list[Envelope]], fatal: list[BaseException]) -> None:
        await _until(lambda: node.polls >= 3)

    with caplog.at_level(logging.WARNING, logger="kraft.server.driver"):
        asyncio.run(_run_driver(node, body, LoopDriver))
    slow = [r for r in caplog.records if "held the event loop" in r.getMessage()]
    assert len(slow) == 1  # once a minute at most, not once per slow poll
