"""A broker node: its metadata replica and its lifecycle, driven by one sans-IO ``poll``.

``BrokerNode.poll(now_ms, inbound)`` keeps the raft core's contract (never blocks, no clock, no
socket). It wraps the node's raft side, which is either a bare ``RaftNode`` (``process.roles=broker``:
an observer of ``__cluster_metadata`` that replays into its own ``BrokerMetadataListener``) or a
``ControllerNode`` (``process.roles=broker,controller``: the broker reads the co-located controller's
committed image, which is the very same image, so nothing is replayed twice).

Routing: answers to this node's own controller requests (``ControllerEnvelope`` responses addressed
to it) go to the ISR manager (AlterPartition) or the lifecycle; everything else goes to the
wrapped node. The lifecycle's requests go to
the raft leader, the active controller (Kafka's brokers find it the same way); in combined mode a
request to ourselves is handed to our own controller without touching the network. Every other
attribute reads through to the wrapped node, so the shells treat this as the node.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from kraft.broker.isr import IsrManager
from kraft.broker.lifecycle import BrokerLifecycle, BrokerState
from kraft.broker.metadata_listener import BrokerMetadataListener
from kraft.broker.metrics import BrokerMetrics
from kraft.controller.quorum_controller import ControllerEnvelope, ControllerResponse
from kraft.metadata.image import MetadataImage
from kraft.raft.messages import Envelope
from kraft.raft.node import PollResult
from kraft.raft.types import LeaderAndEpoch


class MetadataSource(Protocol):
    """Where the broker's committed image comes from."""

    @property
    def image(self) -> MetadataImage: ...


class BrokerNode:
    def __init__(
        self,
        inner: Any,
        lifecycle: BrokerLifecycle,
        metadata: BrokerMetadataListener | None,
        *,
        node_id: int,
        colocated_controller: bool = False,
        metrics: BrokerMetrics | None = None,
    ) -> None:
        """``inner``: a ``RaftNode`` (then ``metadata`` is registered on it) or a ``ControllerNode``
        (combined mode: ``metadata`` is None and the controller's image is used)."""
        self.inner = inner
        self.lifecycle = lifecycle
        self.isr = IsrManager(
            node_id,
            request_timeout_ms=lifecycle.config.request_timeout_ms,
            retry_backoff_ms=lifecycle.config.retry_backoff_ms,
        )
        self.metadata = metadata
        self.node_id = node_id
        self.colocated_controller = colocated_controller
        self.metrics = metrics
        if metadata is not None:
            inner.register(metadata)
        self._source: MetadataSource = metadata if metadata is not None else inner.controller
        self._lifecycle_wake: int | None = None

    @property
    def image(self) -> MetadataImage:
        """The broker's committed metadata image (safe to read from any thread)."""
        return self._source.image

    def metrics_snapshot(self) -> dict[str, float]:
        """The broker's metrics (``kraft.broker.metrics``), read on the raft thread after a poll."""
        return self.metrics.collect(self) if self.metrics is not None else {}

    @property
    def broker_state(self) -> BrokerState:
        return self.lifecycle.state

    def controller_id(self) -> int | None:
        leader: LeaderAndEpoch = self.inner.leader_and_epoch()
        return leader.leader_id

    def begin_controlled_shutdown(self, now_ms: int) -> None:
        self.lifecycle.begin_controlled_shutdown(now_ms)

    def poll(self, now_ms: int, inbound: Iterable[Envelope | ControllerEnvelope] = ()) -> PollResult:
        passed: list[Any] = []
        for envelope in inbound:
            if isinstance(envelope, ControllerEnvelope) and self._is_answer_for_us(envelope):
                self._take_answer(envelope, now_ms)
            else:
                passed.append(envelope)
        remote: list[ControllerEnvelope] = []
        for request in self._poll_lifecycle(now_ms):
            if self.colocated_controller and request.destination == self.node_id:
                passed.append(request)  # to our own controller, no network
            else:
                remote.append(request)
        result: PollResult = self.inner.poll(now_ms, passed)
        outbound: list[Any] = []
        answered = False
        for envelope in result.outbound:
            if isinstance(envelope, ControllerEnvelope) and self._is_answer_for_us(envelope):
                self._take_answer(envelope, now_ms)
                answered = True
            else:
                outbound.append(envelope)
        outbound.extend(remote)
        result.outbound = outbound
        wake = result.wake_at_ms
        if answered:
            wake = now_ms + 1  # our own controller answered: the next request may be due at once
        elif self._lifecycle_wake is not None:
            wake = min(wake, max(self._lifecycle_wake, now_ms + 1))
        if self.metadata is not None:
            self.metadata.maybe_snapshot(now_ms)
        result.wake_at_ms = wake
        return result

    def _poll_lifecycle(self, now_ms: int) -> list[ControllerEnvelope]:
        lifecycle = self.lifecycle
        offset = self.image.provenance.last_offset
        if lifecycle.state == BrokerState.RECOVERY and not lifecycle.ready_to_unfence:
            # Nothing to recover (no partition data yet): ready once the image is caught up, which
            # is what the controller checked when it answered IsCaughtUp.
            lifecycle.set_ready_to_unfence(now_ms)
        controller_id = self.controller_id()
        requests, self._lifecycle_wake = lifecycle.poll(now_ms, controller_id, offset)
        running = lifecycle.state == BrokerState.RUNNING and not lifecycle.is_fenced
        isr_requests, isr_wake = self.isr.poll(
            now_ms, self.image, lifecycle.broker_epoch, controller_id, running
        )
        if isr_wake is not None:
            self._lifecycle_wake = (
                isr_wake if self._lifecycle_wake is None else min(self._lifecycle_wake, isr_wake)
            )
        return requests + isr_requests

    def _take_answer(self, envelope: ControllerEnvelope, now_ms: int) -> None:
        if not self.isr.handle_response(envelope, now_ms):
            self.lifecycle.handle_response(envelope, now_ms)

    def _is_answer_for_us(self, envelope: ControllerEnvelope) -> bool:
        """An answer to our lifecycle or AlterPartition requests (not one to a client of our own
        controller, in combined mode: those go to negative pseudo ids or other brokers)."""
        return isinstance(envelope.body, ControllerResponse) and envelope.destination == self.node_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
