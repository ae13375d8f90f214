"""The raft thread: ``RaftNode.poll`` driven on its own thread, as Kafka's ``KafkaRaftClientDriver``.

Why a thread: ``poll`` appends and fsyncs the log and the quorum-state file. On the asyncio loop an
fsync would stall every socket; on its own thread it stalls only the core, which is what "persist
before send" requires anyway.

Threading contract:

* Only the raft thread calls into the ``RaftNode`` (``poll``, and functions given to ``submit``).
* Other threads talk to it through ``deliver`` (inbound envelopes) and ``submit`` (run a function
  on the raft thread between polls, e.g. ``schedule_append``); both wake it at once.
* Outbound envelopes are handed to ``on_outbound`` on the event loop via ``call_soon_threadsafe``.
* After every poll the thread publishes an immutable ``NodeView`` (leader, epoch, role, metrics);
  readers on other threads see a consistent snapshot at most one poll old.

Lifecycle: ``start`` -> running -> ``request_shutdown`` (the node resigns if leader and sends
EndQuorumEpoch; polled until ``is_shutdown_complete``) -> stopped. An exception from ``poll`` (a
``FatalError`` from storage or a broken invariant) stops the thread and is reported through
``on_fatal``; the process must then exit non-zero, never carry on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kraft.common import commit_trace
from kraft.raft.messages import Envelope, FetchRequest, FetchResponse
from kraft.raft.types import Endpoint, LeaderAndEpoch

log = logging.getLogger("kraft.server.driver")

T = TypeVar("T")

# The metrics the server exports, read off ``RaftNode.metrics`` after each poll.
METRIC_FIELDS = (
    "current_state",
    "current_leader",
    "current_vote",
    "current_epoch",
    "high_watermark",
    "log_end_offset",
    "log_end_epoch",
    "election_latency_avg",
    "election_latency_max",
    "commit_latency_avg",
    "commit_latency_max",
    "append_records_rate",
    "fetch_records_rate",
    "poll_idle_ratio_avg",
    "number_unknown_voter_connections",
)


class WallClock:
    """Milliseconds since the epoch that never go backwards.

    The core stamps replica fetch times with ``now_ms`` (DescribeQuorum shows them, as Kafka's
    ``time.milliseconds()`` does) and also derives its timers from it; holding the value when the
    wall clock steps back keeps every timer monotonic.
    """

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def __call__(self) -> int:
        now = time.time_ns() // 1_000_000
        with self._lock:
            if now < self._last:
                now = self._last
            self._last = now
        return now


_NO_LEADER = LeaderAndEpoch(None, 0)


@dataclass(frozen=True, slots=True)
class NodeView:
    """What the raft thread last published (read from any thread)."""

    leader_and_epoch: LeaderAndEpoch = _NO_LEADER
    role: str = "unattached"
    high_watermark: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    polls: int = 0
    # Endpoints of the known leader as the core learned them (from a peer's NodeEndpoints): how a
    # node that is not configured with the voters (an observer) finds the leader's address.
    leader_endpoints: tuple[Endpoint, ...] = ()
    # The quorum controller's metrics (``ControllerMetrics.as_dict``), empty without a controller.
    controller_metrics: dict[str, float] = field(default_factory=dict)
    # EventQueueTimeMs (``ControllerMetrics.queue_time_histogram``); None without a controller.
    controller_queue_time: Any = None
    # The broker's metrics (``kraft.broker.metrics``), empty without a broker.
    broker_metrics: dict[str, float] = field(default_factory=dict)
    # KIP-853: the core's ``voter_set`` (a ``kraft.raft.voters.VoterSet``, immutable; the same
    # object until the set changes) and ``kraft_version``; None/0 for a core without them.
    voter_set: Any = None
    kraft_version: int = 0


def _snapshot_metrics(node: Any) -> dict[str, Any]:
    m = getattr(node, "metrics", None)
    if m is None:
        return {}
    out: dict[str, Any] = {}
    for name in METRIC_FIELDS:
        value = getattr(m, name, None)
        if value is not None:
            out[name] = value
    return out


def _controller_metrics(node: Any) -> dict[str, float]:
    controller = getattr(node, "controller", None)
    metrics = getattr(controller, "metrics", None)
    if metrics is None:
        return {}
    return dict(metrics.as_dict())


def _controller_queue_time(node: Any) -> Any:
    metrics = getattr(getattr(node, "controller", None), "metrics", None)
    return None if metrics is None else metrics.queue_time_histogram()


def _leader_endpoints(node: Any) -> tuple[Endpoint, ...]:
    state = getattr(getattr(node, "quorum", None), "state", None)
    return tuple(getattr(state, "leader_endpoints", ()))


class RaftDriver:
    """Owns the raft thread for one ``RaftNode``.

    Args:
        node: the core (``kraft.raft.node.RaftNode`` or anything with the same ``poll`` contract).
        clock: milliseconds; the same clock the node was constructed with.
        log_prefix: e.g. ``"[node 1] "``.
    """

    def __init__(self, node: Any, *, clock: Callable[[], int], log_prefix: str = "") -> None:
        self.node = node
        self._clock = clock
        self._prefix = log_prefix
        self._cond = threading.Condition()
        self._inbound: list[Envelope] = []
        self._tasks: list[tuple[Callable[[Any, int], Any], concurrent.futures.Future[Any]]] = []
        self._shutdown_timeout_ms: int | None = None
        self._stop_now = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_outbound: Callable[[list[Envelope]], None] | None = None
        self._on_fatal: Callable[[BaseException], None] | None = None
        self._on_view: Callable[[NodeView, NodeView], None] | None = None
        self.view = NodeView()
        self.stopped = threading.Event()
        self.failure: BaseException | None = None

    # ------------------------------------------------------------------------------------ control

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        on_outbound: Callable[[list[Envelope]], None],
        on_fatal: Callable[[BaseException], None],
        on_view: Callable[[NodeView, NodeView], None] | None = None,
    ) -> None:
        """Start the thread. ``on_outbound``/``on_fatal`` run on ``loop``; ``on_view`` on the raft thread."""
        self._loop = loop
        self._on_outbound = on_outbound
        self._on_fatal = on_fatal
        self._on_view = on_view
        self._publish()
        self._thread = threading.Thread(
            target=self._run, name=f"raft-{getattr(self.node, 'node_id', '?')}", daemon=True
        )
        self._thread.start()

    def deliver(self, envelopes: Iterable[Envelope]) -> None:
        """Queue inbound envelopes for the next poll (any thread)."""
        with self._cond:
            self._inbound.extend(envelopes)
            self._cond.notify()

    def submit(self, fn: Callable[[Any, int], T]) -> concurrent.futures.Future[T]:
        """Run ``fn(node, now_ms)`` on the raft thread before the next poll; returns its future."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._cond:
            if self.stopped.is_set():
                future.set_exception(RuntimeError("the raft thread has stopped"))
                return future
            self._tasks.append((fn, future))
            self._cond.notify()
        return future

    def request_shutdown(self, timeout_ms: int) -> None:
        """Begin a graceful shutdown (leader resigns; EndQuorumEpoch goes out)."""
        with self._cond:
            if self._shutdown_timeout_ms is None:
                self._shutdown_timeout_ms = timeout_ms
            self._cond.notify()

    def stop_now(self) -> None:
        """Stop after the current poll without the graceful protocol (tests, fatal paths)."""
        with self._cond:
            self._stop_now = True
            self._cond.notify()

    def join(self, timeout_s: float | None = None) -> bool:
        if self._thread is None:
            return True
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    # ------------------------------------------------------------------------------------ thread

    def _run(self) -> None:
        node = self.node
        wake_at_ms = self._clock()
        shutting_down = False
        try:
            while True:
                with self._cond:
                    while True:
                        now_ms = self._clock()
                        if (
                            self._inbound
                            or self._tasks
                            or self._stop_now
                            or now_ms >= wake_at_ms
                            or (self._shutdown_timeout_ms is not None and not shutting_down)
                        ):
                            break
                        self._cond.wait(timeout=(wake_at_ms - now_ms) / 1000)
                    inbound, self._inbound = self._inbound, []
                    tasks, self._tasks = self._tasks, []
                    stop_now = self._stop_now
                    shutdown_timeout_ms = self._shutdown_timeout_ms
                if stop_now:
                    for _, future in tasks:
                        future.set_exception(RuntimeError("the raft thread has stopped"))
                    return
                now_ms = self._clock()
                for fn, future in tasks:
                    if future.set_running_or_notify_cancel():
                        try:
                            future.set_result(fn(node, now_ms))
                        except Exception as e:  # the caller's problem, reported to the caller
                            future.set_exception(e)
                if shutdown_timeout_ms is not None and not shutting_down:
                    shutting_down = True
                    log.info("%sshutting down: resigning if leader, then stopping", self._prefix)
                    node.shutdown(now_ms, shutdown_timeout_ms)
                trace = commit_trace.TRACE
                if trace is not None:
                    leo_before = self._trace_inbound(trace, inbound)
                result = node.poll(now_ms, inbound)
                if trace is not None:
                    self._trace_written(trace, leo_before)
                self._publish()
                if result.outbound:
                    self._hand_off(result.outbound)
                wake_at_ms = result.wake_at_ms
                if shutting_down and node.is_shutdown_complete(self._clock()):
                    log.info("%sraft shutdown complete", self._prefix)
                    return
        except BaseException as e:
            self.failure = e
            log.critical("%sraft thread failed: %s: %s", self._prefix, type(e).__name__, e, exc_info=e)
        finally:
            with self._cond:
                pending = self._tasks
                self._tasks = []
                self.stopped.set()
            for _, future in pending:
                if not future.done():
                    future.set_exception(RuntimeError("the raft thread has stopped"))
            # Reported only once the thread counts as stopped, so the handler sees it stopped.
            failure = self.failure
            if failure is not None and self._loop is not None and self._on_fatal is not None:
                with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nobody to tell
                    self._loop.call_soon_threadsafe(self._on_fatal, failure)

    def _trace_inbound(self, trace: commit_trace.CommitTrace, inbound: list[Envelope]) -> int:
        for envelope in inbound:
            body = envelope.body
            if isinstance(body, FetchRequest):
                trace.note(commit_trace.FETCH_REQ_POLLED, envelope.source, body.fetch_offset)
            elif isinstance(body, FetchResponse) and body.records:
                trace.note(commit_trace.FETCH_RESP_POLLED, commit_trace.records_base_offset(body.records))
        log = getattr(self.node, "log", None)
        return -1 if log is None else int(log.end_offset())

    def _trace_written(self, trace: commit_trace.CommitTrace, leo_before: int) -> None:
        # A follower fsyncs what it appended before poll returns; a leader with Fetch responses to
        # send returns them first and fsyncs in the next poll (see RaftNode._flush_leader_log).
        log = getattr(self.node, "log", None)
        if log is not None:
            leo = int(log.end_offset())
            if leo > leo_before:
                trace.note(commit_trace.WRITTEN, leo)

    def _hand_off(self, outbound: list[Envelope]) -> None:
        loop = self._loop
        if loop is None or self._on_outbound is None or loop.is_closed():
            return
        # A loop closed during shutdown raises RuntimeError: the messages are moot then.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._on_outbound, outbound)

    def _publish(self) -> None:
        node = self.node
        role = getattr(node, "role", None)
        view = NodeView(
            leader_and_epoch=node.leader_and_epoch(),
            role=getattr(role, "name", str(role)).lower(),
            high_watermark=getattr(node, "high_watermark", None),
            metrics=_snapshot_metrics(node),
            polls=self.view.polls + 1,
            leader_endpoints=_leader_endpoints(node),
            controller_metrics=_controller_metrics(node),
            controller_queue_time=_controller_queue_time(node),
            broker_metrics=node.metrics_snapshot() if hasattr(node, "metrics_snapshot") else {},
            voter_set=getattr(node, "voter_set", None),
            kraft_version=getattr(node, "kraft_version", 0),
        )
        old, self.view = self.view, view
        if self._on_view is not None:
            self._on_view(old, view)
