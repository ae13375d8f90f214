"""A node's broker part: its metadata replica, lifecycle, ISR requests and client APIs, sans-IO.

``Broker`` is one of a ``kraft.node.Node``'s typed parts; the node routes to it what is the
broker's (client requests on a broker listener, answers to its controller requests) and polls it.
It never touches a socket or a clock.

Where its image comes from: a broker-only node (``process.roles=broker``) is a raft observer of
``__cluster_metadata`` that replays into its own ``BrokerMetadataListener``; a combined node reads
the co-located controller's committed image, which is the very same image, so nothing is replayed
twice. Either way the broker's parts are ``MetadataPublisher``s installed on that loader: the ISR
manager and the client APIs see every published image with the delta that made it.

Controller requests (registration and heartbeats, AlterPartition, AllocateProducerIds, forwarded
client requests) go to the raft leader, the active controller (Kafka's brokers find it the same
way); their correlation ids come from one counter, so every answer finds the part that asked.
InitProducerId (idempotent producers) is the producer id manager's (``kraft.broker.producer_ids``).

Authorisation (when ``authorizer.class.name`` is set): every client request passes
``kraft.security.request_authz`` first, with the broker's committed ACLs. A refused request is
answered at once; otherwise the part runs the request without its refused resources and its answer,
whenever it comes (a long poll, a forwarded write), gets their rows merged in on the way out. Requests
from other nodes of the cluster (a source id >= 0: follower fetches in the simulator) are the nodes'
own and not checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kraft.broker.client_apis import ClientApis
from kraft.broker.isr import IsrManager
from kraft.broker.lifecycle import BrokerLifecycle, BrokerState
from kraft.broker.metadata_listener import BrokerMetadataListener
from kraft.broker.metrics import BrokerMetrics
from kraft.broker.producer_ids import ProducerIdManager
from kraft.broker.replica_manager import DATA_API_KEYS, ReplicaManager
from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataLoader, Publisher
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.protocol.messages import init_producer_id
from kraft.raft.types import LeaderAndEpoch
from kraft.security.request_authz import UNKNOWN_HOST, Refuse, RequestAuthorizer


class Broker:
    """See the module docstring.

    Args:
        loader: the loader whose images this broker serves (its listener's, or the co-located
            controller's); the broker installs its publishers on it.
        metadata: this broker's own metadata replica, or None in combined mode.
    """

    def __init__(
        self,
        *,
        node_id: int,
        lifecycle: BrokerLifecycle,
        loader: MetadataLoader,
        metadata: BrokerMetadataListener | None,
        client_apis: ClientApis,
        isr: IsrManager,
        producer_ids: ProducerIdManager,
        metrics: BrokerMetrics | None = None,
        raft_listener_name: str = "CONTROLLER",
        replicas: ReplicaManager | None = None,
        authz: RequestAuthorizer | None = None,
    ) -> None:
        self.node_id = node_id
        self.authz = authz
        # (client source, correlation id) -> what completes the answer with the refused resources.
        self._merges: dict[tuple[int, int], Callable[[Any], Any]] = {}
        self._refused: list[ClientEnvelope] = []
        self.raft_listener_name = raft_listener_name  # where DescribeCluster finds the controllers
        self.lifecycle = lifecycle
        self.metadata = metadata
        self.client_apis = client_apis
        self.isr = isr
        self.producer_ids = producer_ids
        self.replicas = replicas
        self.metrics = metrics
        self._loader = loader
        self.install_publisher(self.publish)

    def install_publisher(self, publish: Publisher) -> None:
        """Let ``publish`` see this broker's images: the current one at once (with an empty delta),
        then every later one with its delta (the publisher rules of ``kraft.metadata.publisher``)."""
        self._loader.install_publisher(publish)
        current = self._loader.image
        publish(MetadataDelta(current), current)

    @property
    def image(self) -> MetadataImage:
        """The broker's committed metadata image (immutable, swapped by reference: safe to read
        from any thread)."""
        return self._loader.image

    @property
    def broker_state(self) -> BrokerState:
        return self.lifecycle.state

    def metrics_snapshot(self) -> dict[str, float]:
        """The broker's metrics (``kraft.broker.metrics``), read where the core runs, after a poll."""
        return self.metrics.collect(self) if self.metrics is not None else {}

    def begin_controlled_shutdown(self, now_ms: int) -> None:
        self.lifecycle.begin_controlled_shutdown(now_ms)
        if self.replicas is not None:
            self.replicas.stop_opening_partitions()

    # -- inputs ------------------------------------------------------------------------------------

    def publish(self, delta: MetadataDelta, image: MetadataImage) -> None:
        """The ``MetadataPublisher`` of the broker's parts."""
        me = self.lifecycle.config.node_id
        if any(b.in_controlled_shutdown and b.id != me for b in image.brokers.values()):
            self.lifecycle.request_report()  # the peer waits for every broker to report this
        self.isr.publish(delta, image)
        if self.replicas is not None:
            self.replicas.publish(delta, image)
        self.client_apis.publish(delta, image)
        if self.metrics is not None:
            self.metrics.publish(delta, image)

    def handle_client_request(self, envelope: ClientEnvelope, now_ms: int, leader: LeaderAndEpoch) -> None:
        request = envelope.body
        assert type(request) is ApiRequest
        access = None
        if self.authz is not None and not self.authz.trusted(envelope.source):
            verdict = self.authz.check(
                self.image,
                envelope.principal,
                envelope.host or UNKNOWN_HOST,
                request.api.key,
                request.api.name,
                request.version,
                request.body,
                now_ms,
            )
            if isinstance(verdict, Refuse):
                self._refused.append(envelope.reply(verdict.response))
                return
            if verdict.body is not request.body:
                request = ApiRequest(request.api, request.version, verdict.body)
                envelope = replace(envelope, body=request)
            if verdict.merge is not None:
                self._merges[(envelope.source, envelope.correlation_id)] = verdict.merge
            access = verdict.access
        if self.replicas is not None and request.api.key in DATA_API_KEYS:
            self.replicas.handle(envelope, now_ms)
        elif request.api.key == init_producer_id.API.key:
            self.producer_ids.handle(envelope, now_ms)
        else:
            self.client_apis.handle(envelope, now_ms, leader, access)

    def _completed(
        self, out: list[ControllerEnvelope | ClientEnvelope]
    ) -> list[ControllerEnvelope | ClientEnvelope]:
        """``out`` with the refused requests' answers added and the refused resources merged into
        the answers of the requests that ran without them."""
        if self._refused:
            out.extend(self._refused)
            self._refused = []
        if not self._merges:
            return out
        for i, envelope in enumerate(out):
            if type(envelope) is not ClientEnvelope or type(envelope.body) is not ApiResponse:
                continue
            merge = self._merges.pop((envelope.destination, envelope.correlation_id), None)
            if merge is not None:
                answer = envelope.body
                out[i] = replace(envelope, body=ApiResponse(answer.api, answer.version, merge(answer.body)))
        return out

    def handle_client_answer(self, envelope: ClientEnvelope, now_ms: int) -> None:
        """An answer to one of this broker's requests to another broker (the replica fetcher's). A late
        answer, to a fetch the fetcher already gave up on, is dropped (it asks again anyway)."""
        if self.replicas is not None:
            self.replicas.handle_answer(envelope, now_ms)

    def handle_answer(self, envelope: ControllerEnvelope, now_ms: int) -> None:
        """An answer to one of this broker's controller requests."""
        if (
            not self.isr.handle_response(envelope, now_ms)
            and not self.producer_ids.handle_answer(envelope, now_ms)
            and not self.client_apis.handle_answer(envelope, now_ms)
        ):
            self.lifecycle.handle_response(envelope, now_ms)

    # -- poll --------------------------------------------------------------------------------------

    def poll(
        self, now_ms: int, leader: LeaderAndEpoch
    ) -> tuple[list[ControllerEnvelope | ClientEnvelope], int | None]:
        """Run the lifecycle, the ISR manager, the client APIs' and the producer id manager's timers.

        Returns:
            The controller requests and client answers to send, and when to poll again (None:
            nothing scheduled).
        """
        lifecycle = self.lifecycle
        image = self.image
        if lifecycle.state == BrokerState.RECOVERY and not lifecycle.ready_to_unfence:
            # Nothing to recover (no partition data yet): ready once the image is caught up, which
            # is what the controller checked when it answered IsCaughtUp.
            lifecycle.set_ready_to_unfence(now_ms)
        controller_id = leader.leader_id
        out: list[ControllerEnvelope | ClientEnvelope] = []
        log_info = self.replicas.leaderless_log_info if self.replicas is not None else None
        requests, wake = lifecycle.poll(now_ms, controller_id, image.provenance.last_offset, log_info)
        out.extend(requests)
        running = lifecycle.state == BrokerState.RUNNING and not lifecycle.is_fenced
        isr_requests, isr_wake = self.isr.poll(now_ms, lifecycle.broker_epoch, controller_id, running)
        out.extend(isr_requests)
        apis_wake = self.client_apis.poll(now_ms, leader)
        out.extend(self.client_apis.drain())
        ids_wake = self.producer_ids.poll(now_ms, lifecycle.broker_epoch, controller_id)
        out.extend(self.producer_ids.drain())
        replicas_wake = None
        if self.replicas is not None and not self.replicas.active and lifecycle.state >= BrokerState.RECOVERY:
            self.replicas.activate(now_ms)  # caught up with our registration (see ``activate``)
        if self.replicas is not None:
            replicas_wake = self.replicas.poll(now_ms, lifecycle.broker_epoch)
            out.extend(self.replicas.drain())
        for w in (isr_wake, apis_wake, ids_wake, replicas_wake):
            if w is not None:
                wake = w if wake is None else min(wake, w)
        return self._completed(out), wake

    def after_raft_poll(self, now_ms: int) -> tuple[list[ControllerEnvelope | ClientEnvelope], int | None]:
        """After the raft core ran (and published): answers that new images completed, the
        broker's own metadata snapshot when one is due, and when to come back (a heartbeat that
        new metadata brought forward: a peer's controlled shutdown waits for it), or None."""
        if self.metadata is not None:
            self.metadata.maybe_snapshot(now_ms)
        out: list[ControllerEnvelope | ClientEnvelope] = list(self.client_apis.drain())
        out.extend(self.producer_ids.drain())  # InitProducerIds a block answered
        early = self.lifecycle.early_report_ms(now_ms)
        if self.replicas is not None:
            self.replicas.complete_waiting(now_ms)
            out.extend(self.replicas.drain())
            if self.replicas.has_pending_roles:
                # A publish left new partitions for later polls: the next one takes more.
                early = now_ms if early is None else min(early, now_ms)
        return self._completed(out), early
