"""The raft thread: ``Node.poll`` driven on its own thread, as Kafka's ``KafkaRaftClientDriver``.

Why a thread: ``poll`` appends and fsyncs the log and the quorum-state file. On the asyncio loop an
fsync would stall every socket; on its own thread it stalls only the core, which is what "persist
before send" requires anyway.

Threading contract:

* Only the raft thread calls into the ``Node`` (``poll``, and functions given to ``submit``).
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
from kraft.node.node import Node, NodeEnvelope, NodePollResult
from kraft.raft.messages import Envelope, FetchRequest, FetchResponse
from kraft.raft.types import Endpoint, LeaderAndEpoch

log = logging.getLogger("kraft.server.driver")

T = TypeVar("T")

# The metrics the server exports, read off the raft core's ``RaftMetrics`` after each poll.
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


# The metrics computed over time windows (a scan of the window per read): refreshed in the view at
# most every WINDOWED_METRICS_REFRESH_S, not on every poll (several polls per commit), with the
# controller's and the broker's metrics.
WINDOWED_METRIC_FIELDS = frozenset(
    {
        "election_latency_avg",
        "election_latency_max",
        "commit_latency_avg",
        "commit_latency_max",
        "append_records_rate",
        "fetch_records_rate",
        "poll_idle_ratio_avg",
    }
)
WINDOWED_METRICS_REFRESH_S = 0.1


def _read_metrics(node: Node, names: Iterable[str]) -> dict[str, Any]:
    m = node.raft.metrics
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(m, name, None)
        if value is not None:
            out[name] = value
    return out


_INSTANT_METRIC_FIELDS = tuple(n for n in METRIC_FIELDS if n not in WINDOWED_METRIC_FIELDS)


def _controller_metrics(node: Node) -> dict[str, float]:
    return {} if node.controller is None else dict(node.controller.metrics.as_dict())


def _controller_queue_time(node: Node) -> Any:
    return None if node.controller is None else node.controller.metrics.queue_time_histogram()


def _leader_endpoints(node: Node) -> tuple[Endpoint, ...]:
    return tuple(getattr(node.raft.quorum.state, "leader_endpoints", ()))


class _Driver:
    """What both drivers share: the step around one ``poll``, the published view, commit tracing."""

    def __init__(self, node: Node, *, clock: Callable[[], int], log_prefix: str = "") -> None:
        self.node = node
        self._clock = clock
        self._prefix = log_prefix
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_outbound: Callable[[list[NodeEnvelope]], None] | None = None
        self._on_fatal: Callable[[BaseException], None] | None = None
        self._on_view: Callable[[NodeView, NodeView], None] | None = None
        self._shutting_down = False
        # Input for the next step, filled from any thread (each driver guards them with its lock):
        # messages, functions with their futures, a requested shutdown, an immediate stop.
        self._inbound: list[NodeEnvelope] = []
        self._tasks: list[tuple[Callable[[Node, int], Any], Any]] = []
        self._shutdown_timeout_ms: int | None = None
        self._stop_now = False
        # What _publish reads at most every WINDOWED_METRICS_REFRESH_S, and when it last did.
        self._windowed: dict[str, Any] = {}
        self._parts: tuple[dict[str, float], Any, dict[str, float]] = ({}, None, {})
        self._windowed_at = -1e9
        self.view = NodeView()
        self.stopped = threading.Event()
        self.failure: BaseException | None = None

    def _attach(
        self,
        loop: asyncio.AbstractEventLoop,
        on_outbound: Callable[[list[NodeEnvelope]], None],
        on_fatal: Callable[[BaseException], None],
        on_view: Callable[[NodeView, NodeView], None] | None,
    ) -> None:
        """Take the loop and the callbacks of ``start`` and publish the first view."""
        self._loop = loop
        self._on_outbound = on_outbound
        self._on_fatal = on_fatal
        self._on_view = on_view
        self._publish()

    def _step(
        self,
        inbound: list[NodeEnvelope],
        tasks: list[tuple[Callable[[Node, int], Any], Any]],
        shutdown_timeout_ms: int | None,
    ) -> NodePollResult:
        """Run the queued functions, begin a requested shutdown, poll once and publish the view."""
        node = self.node
        now_ms = self._clock()
        for fn, future in tasks:
            _run_task(fn, future, node, now_ms)
        if shutdown_timeout_ms is not None and not self._shutting_down:
            self._shutting_down = True
            log.info("%sshutting down: resigning if leader, then stopping", self._prefix)
            node.shutdown(now_ms, shutdown_timeout_ms)
        trace = commit_trace.TRACE
        if trace is not None:
            leo_before = self._trace_inbound(trace, inbound)
        result = node.poll(now_ms, inbound)
        if trace is not None:
            self._trace_written(trace, leo_before)
        self._publish()
        return result

    def _shutdown_done(self) -> bool:
        if self._shutting_down and self.node.is_shutdown_complete(self._clock()):
            log.info("%sraft shutdown complete", self._prefix)
            return True
        return False

    def _trace_inbound(self, trace: commit_trace.CommitTrace, inbound: list[NodeEnvelope]) -> int:
        for envelope in inbound:
            if type(envelope) is not Envelope:
                continue
            body = envelope.body
            if isinstance(body, FetchRequest):
                trace.note(commit_trace.FETCH_REQ_POLLED, envelope.source, body.fetch_offset)
            elif isinstance(body, FetchResponse) and body.records:
                trace.note(commit_trace.FETCH_RESP_POLLED, commit_trace.records_base_offset(body.records))
        return int(self.node.raft.log.end_offset())

    def _trace_written(self, trace: commit_trace.CommitTrace, leo_before: int) -> None:
        # A follower fsyncs what it appended before poll returns; a leader with Fetch responses to
        # send returns them first and fsyncs in the next poll (see RaftNode._flush_leader_log).
        leo = int(self.node.raft.log.end_offset())
        if leo > leo_before:
            trace.note(commit_trace.WRITTEN, leo)

    def _refresh_windowed(self) -> None:
        """Read what changes slowly or costs a walk: the raft core's windowed averages, and the
        controller's and the broker's metrics (a data-plane broker polls thousands of times a
        second; reading those after every poll cost 2-3 % of its CPU, and scrapes come seconds
        apart). At most every WINDOWED_METRICS_REFRESH_S."""
        now = time.monotonic()
        if now - self._windowed_at < WINDOWED_METRICS_REFRESH_S:
            return
        self._windowed_at = now
        node = self.node
        self._windowed = _read_metrics(node, WINDOWED_METRIC_FIELDS)
        self._parts = (
            _controller_metrics(node),
            _controller_queue_time(node),
            {} if node.broker is None else node.broker.metrics_snapshot(),
        )

    def _publish(self) -> None:
        node = self.node
        raft = node.raft
        self._refresh_windowed()
        metrics = _read_metrics(node, _INSTANT_METRIC_FIELDS)
        metrics.update(self._windowed)
        controller_metrics, controller_queue_time, broker_metrics = self._parts
        view = NodeView(
            leader_and_epoch=raft.leader_and_epoch(),
            role=raft.role.name.lower(),
            high_watermark=raft.high_watermark,
            metrics=metrics,
            polls=self.view.polls + 1,
            leader_endpoints=_leader_endpoints(node),
            controller_metrics=controller_metrics,
            controller_queue_time=controller_queue_time,
            broker_metrics=broker_metrics,
            voter_set=raft.voter_set,
            kraft_version=raft.kraft_version,
        )
        old, self.view = self.view, view
        if self._on_view is not None:
            self._on_view(old, view)


def _run_task(fn: Callable[[Node, int], Any], future: Any, node: Node, now_ms: int) -> None:
    """Run a submitted function and settle its future (concurrent or asyncio) with the outcome."""
    if isinstance(future, concurrent.futures.Future):
        if not future.set_running_or_notify_cancel():
            return
    elif future.done():  # an asyncio future its caller cancelled
        return
    try:
        result = fn(node, now_ms)
    except Exception as e:  # the caller's problem, reported to the caller
        future.set_exception(e)
    else:
        future.set_result(result)


def _fail_task(future: Any) -> None:
    if not future.done():
        future.set_exception(RuntimeError("the raft core has stopped"))


class RaftDriver(_Driver):
    """Owns the raft thread for one ``Node``.

    Args:
        node: the node (``kraft.node.Node``).
        clock: milliseconds; the same clock the node was constructed with.
        log_prefix: e.g. ``"[node 1] "``.
    """

    def __init__(self, node: Node, *, clock: Callable[[], int], log_prefix: str = "") -> None:
        super().__init__(node, clock=clock, log_prefix=log_prefix)
        self._cond = threading.Condition()  # guards the inputs of _Driver
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------------------------ control

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        on_outbound: Callable[[list[NodeEnvelope]], None],
        on_fatal: Callable[[BaseException], None],
        on_view: Callable[[NodeView, NodeView], None] | None = None,
    ) -> None:
        """Start the thread. ``on_outbound``/``on_fatal`` run on ``loop``; ``on_view`` on the raft thread."""
        self._attach(loop, on_outbound, on_fatal, on_view)
        self._thread = threading.Thread(target=self._run, name=f"raft-{self.node.node_id}", daemon=True)
        self._thread.start()

    def deliver(self, envelopes: Iterable[NodeEnvelope]) -> None:
        """Queue inbound envelopes for the next poll (any thread)."""
        with self._cond:
            self._inbound.extend(envelopes)
            self._cond.notify()

    def submit(self, fn: Callable[[Node, int], T]) -> concurrent.futures.Future[T]:
        """Run ``fn(node, now_ms)`` on the raft thread before the next poll; returns its future."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._cond:
            if self.stopped.is_set():
                future.set_exception(RuntimeError("the raft core has stopped"))
                return future
            self._tasks.append((fn, future))
            self._cond.notify()
        return future

    def submit_async(self, fn: Callable[[Node, int], T]) -> asyncio.Future[T]:
        """``submit`` for a caller on the event loop: the result as an asyncio future."""
        return asyncio.wrap_future(self.submit(fn))

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
        wake_at_ms = self._clock()
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
                            or (self._shutdown_timeout_ms is not None and not self._shutting_down)
                        ):
                            break
                        self._cond.wait(timeout=(wake_at_ms - now_ms) / 1000)
                    inbound, self._inbound = self._inbound, []
                    tasks, self._tasks = self._tasks, []
                    stop_now = self._stop_now
                    shutdown_timeout_ms = self._shutdown_timeout_ms
                if stop_now:
                    for _, future in tasks:
                        _fail_task(future)
                    return
                result = self._step(inbound, tasks, shutdown_timeout_ms)
                if result.outbound:
                    self._hand_off(result.outbound)
                wake_at_ms = result.wake_at_ms
                if self._shutdown_done():
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
                _fail_task(future)
            # Reported only once the thread counts as stopped, so the handler sees it stopped.
            failure = self.failure
            if failure is not None and self._loop is not None and self._on_fatal is not None:
                with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nobody to tell
                    self._loop.call_soon_threadsafe(self._on_fatal, failure)

    def _hand_off(self, outbound: list[NodeEnvelope]) -> None:
        loop = self._loop
        if loop is None or self._on_outbound is None or loop.is_closed():
            return
        # A loop closed during shutdown raises RuntimeError: the messages are moot then.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._on_outbound, outbound)


class LoopDriver(_Driver):
    """``Node.poll`` on the event loop's own thread: no hand-off between threads per message.

    Same interface and contract as ``RaftDriver`` (``deliver``/``submit`` from any thread,
    ``on_outbound`` and ``on_fatal`` on the loop), but a poll runs as a loop callback, queued as
    soon as there is input and at the node's ``wake_at_ms`` otherwise, and its outbound messages go
    to ``on_outbound`` in the same callback.

    Why it is faster: each crossing between a process's raft thread and its event loop costs a
    futex or self-pipe wake-up and a wait for the GIL (0.05-0.3 ms measured, four per commit).

    What it costs: the fsyncs inside ``poll`` hold the loop. A follower waits for its fsync before
    it may fetch again anyway. A leader answers the parked Fetches before it fsyncs (the core's
    ``_flush_leader_log`` runs in the next poll), and that next poll is queued behind the
    callbacks that write the answers, so they reach the sockets first.
    """

    # A poll longer than this is logged as a warning (see _note_duration).
    SLOW_POLL_S = 1.0

    def __init__(self, node: Node, *, clock: Callable[[], int], log_prefix: str = "") -> None:
        super().__init__(node, clock=clock, log_prefix=log_prefix)
        self._lock = threading.Lock()  # guards _inbound and _tasks against other threads
        self._queued = False  # a poll is queued with call_soon
        self._timer: asyncio.TimerHandle | None = None
        self._loop_thread: int | None = None
        self._slow_warned_at = -1e9

    # ------------------------------------------------------------------------------------ control

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        on_outbound: Callable[[list[NodeEnvelope]], None],
        on_fatal: Callable[[BaseException], None],
        on_view: Callable[[NodeView, NodeView], None] | None = None,
    ) -> None:
        """Begin polling on ``loop`` (call from the loop's thread)."""
        self._loop_thread = threading.get_ident()
        self._attach(loop, on_outbound, on_fatal, on_view)
        self._queue()

    def deliver(self, envelopes: Iterable[NodeEnvelope]) -> None:
        """Queue inbound envelopes for the next poll (any thread)."""
        with self._lock:
            self._inbound.extend(envelopes)
        self._wake()

    def submit(self, fn: Callable[[Node, int], T]) -> concurrent.futures.Future[T]:
        """Run ``fn(node, now_ms)`` before the next poll (any thread); returns its future."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._enqueue(fn, future)
        return future

    def submit_async(self, fn: Callable[[Node, int], T]) -> asyncio.Future[T]:
        """``submit`` for a caller on the event loop: an asyncio future, settled with no wake-up."""
        assert self._loop is not None, "start the driver first"
        future: asyncio.Future[T] = self._loop.create_future()
        self._enqueue(fn, future)
        return future

    def request_shutdown(self, timeout_ms: int) -> None:
        """Begin a graceful shutdown (leader resigns; EndQuorumEpoch goes out)."""
        if self._shutdown_timeout_ms is None:
            self._shutdown_timeout_ms = timeout_ms
        self._wake()

    def stop_now(self) -> None:
        """Stop before the next poll without the graceful protocol (tests, fatal paths)."""
        self._stop_now = True
        self._wake()

    def join(self, timeout_s: float | None = None) -> bool:
        """Whether polling has stopped; waits up to ``timeout_s`` unless called on the loop."""
        if threading.get_ident() == self._loop_thread:
            return self.stopped.is_set()
        return self.stopped.wait(timeout_s)

    # ------------------------------------------------------------------------------------ polling

    def _enqueue(self, fn: Callable[[Node, int], Any], future: Any) -> None:
        with self._lock:
            if self.stopped.is_set():
                _fail_task(future)
                return
            self._tasks.append((fn, future))
        self._wake()

    def _wake(self) -> None:
        loop = self._loop
        if loop is None:
            return  # not started: the first poll takes what was queued
        if threading.get_ident() == self._loop_thread:
            self._queue()
        else:
            with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nothing left to run
                loop.call_soon_threadsafe(self._queue)

    def _queue(self) -> None:
        if not self._queued and not self.stopped.is_set() and self._loop is not None:
            self._queued = True
            self._loop.call_soon(self._poll)

    def _on_timer(self) -> None:
        self._timer = None
        self._queue()

    def _poll(self) -> None:
        self._queued = False
        if self.stopped.is_set():
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        with self._lock:
            inbound, self._inbound = self._inbound, []
            tasks, self._tasks = self._tasks, []
        if self._stop_now:
            self._stop(tasks)
            return
        started = time.monotonic()
        try:
            result = self._step(inbound, tasks, self._shutdown_timeout_ms)
        except BaseException as e:
            self.failure = e
            log.critical("%sraft core failed: %s: %s", self._prefix, type(e).__name__, e, exc_info=e)
            self._stop([])
            if self._loop is not None and self._on_fatal is not None:
                self._loop.call_soon(self._on_fatal, e)
            if not isinstance(e, Exception):
                raise
            return
        self._note_duration(time.monotonic() - started)
        if result.outbound and self._on_outbound is not None:
            try:
                self._on_outbound(result.outbound)
            except Exception:  # the shell's bug: logged as the loop would, and polling goes on
                log.exception("%sfailed to hand off the core's outbound messages", self._prefix)
        if self._shutdown_done():
            self._stop([])
            return
        delay_ms = result.wake_at_ms - self._clock()
        if delay_ms <= 0 or self._inbound or self._tasks:
            # Queued after the callbacks on_outbound scheduled (the handlers that write the
            # answers), so a leader's Fetch answers leave before this poll's fsync.
            self._queue()
        elif self._loop is not None:
            self._timer = self._loop.call_later(delay_ms / 1000, self._on_timer)

    def _note_duration(self, seconds: float) -> None:
        """Warn (at most once a minute) about a poll that held the loop, and every socket of the
        node with it, for longer than SLOW_POLL_S: typically a large metadata replay."""
        if seconds < self.SLOW_POLL_S:
            return
        now = time.monotonic()
        if now - self._slow_warned_at >= 60:
            self._slow_warned_at = now
            log.warning(
                "%sa poll of the raft core held the event loop for %d ms (raft.driver=loop: the "
                "node's sockets waited meanwhile; raft.driver=thread keeps them served)",
                self._prefix,
                seconds * 1000,
            )

    def _stop(self, tasks: list[tuple[Callable[[Node, int], Any], Any]]) -> None:
        with self._lock:
            pending, self._tasks = self._tasks, []
            self.stopped.set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for _, future in [*tasks, *pending]:
            _fail_task(future)
