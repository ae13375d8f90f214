"""``Node``: one kraft process's state machine, made of typed parts and driven by one sans-IO ``poll``.

Parts (Kafka: ``SharedServer`` under ``ControllerServer`` and ``BrokerServer``):

* ``raft``: the consensus core (``kraft.raft.node.RaftNode``), always there: a voter on a
  controller, an observer of ``__cluster_metadata`` on a broker-only node;
* ``controller``: the quorum controller (``process.roles`` has ``controller``), or None;
* ``quorum_apis``: what a controller listener answers about the quorum (Metadata, DescribeCluster,
  DescribeQuorum, voter changes), on every node with a controller listener, or None;
* ``broker``: the broker part (``process.roles`` has ``broker``), or None.

``poll(now_ms, inbound)`` keeps the raft core's contract (STYLE.md section 2): it never blocks, reads
no clock and touches no socket; it routes each inbound envelope by its type, runs every part and
returns the envelopes to send with the absolute time by which it must run again:

=========================================  ===============================================
inbound                                    goes to
=========================================  ===============================================
``Envelope`` (raft RPC or answer)          the raft core
``ControllerEnvelope`` request             ``quorum_apis`` (its APIs) or ``controller``
``ControllerEnvelope`` answer              whichever part asked (broker, quorum_apis)
``ClientEnvelope`` request                 the broker's client APIs or replica manager
``ClientEnvelope`` answer                  the broker's replica fetcher
=========================================  ===============================================

A request a part sends to this very node (a combined node's broker heartbeating its own controller,
or forwarding to it) is routed inside ``poll`` without touching the network, and so are the answers.

Order within one poll, which keeps a controller's records and answers moving in the same poll:
inbound routing; the broker's timers (its requests to our own controller are queued with the
controller before it runs); the controller; the raft core (drains the controller's records into
the log, advances the high watermark, publishes committed metadata to every part); the controller
again (answers of batches that just committed leave at once, a just-announced leader activates);
the broker's after-commit work (answers that a new image completed, metadata snapshots).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import assert_never

from kraft.broker.broker import Broker
from kraft.common.errors import KraftError
from kraft.controller.quorum_controller import QuorumController
from kraft.node.quorum_apis import QUORUM_APIS, QuorumApis, quorum_endpoints
from kraft.protocol.envelope import ApiRequest, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.error_responses import error_response
from kraft.raft.messages import Envelope
from kraft.raft.node import RaftNode
from kraft.raft.rpc import error_response_for
from kraft.raft.types import LeaderAndEpoch
from kraft.security.request_authz import UNKNOWN_HOST, Refuse

# One closed union: every message a node takes in or sends out.
NodeEnvelope = Envelope | ControllerEnvelope | ClientEnvelope


@dataclass(slots=True)
class NodePollResult:
    outbound: list[NodeEnvelope]
    wake_at_ms: int  # absolute; call poll again by then


class Node:
    """One node: typed parts, one ``poll`` (see the module docstring). Build with
    ``kraft.node.build.build_node``; a test may assemble the parts itself."""

    def __init__(
        self,
        *,
        raft: RaftNode,
        controller: QuorumController | None = None,
        quorum_apis: QuorumApis | None = None,
        broker: Broker | None = None,
    ) -> None:
        self.raft = raft
        self.controller = controller
        self.quorum_apis = quorum_apis
        self.broker = broker
        if controller is not None:
            raft.register(controller)
        self._plain = controller is None and quorum_apis is None and broker is None
        self._refusals: list[ControllerEnvelope] = []  # answers to requests no part here serves
        self._raft_refusals: list[Envelope] = []  # raft RPCs refused CLUSTER_ACTION, answered here
        self._voter_set = raft.voter_set  # what the broker's DescribeCluster lists as controllers

    # -- observation -------------------------------------------------------------------------------

    @property
    def node_id(self) -> int | None:
        return self.raft.node_id

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self.raft.leader_and_epoch()

    # -- lifecycle ---------------------------------------------------------------------------------

    def shutdown(self, now_ms: int, timeout_ms: int) -> None:
        """Begin a graceful shutdown of the raft core (a leader resigns; EndQuorumEpoch goes out)."""
        self.raft.shutdown(now_ms, timeout_ms)

    def is_shutdown_complete(self, now_ms: int) -> bool:
        return self.raft.is_shutdown_complete(now_ms)

    # -- poll --------------------------------------------------------------------------------------

    def poll(self, now_ms: int, inbound: Iterable[NodeEnvelope] = ()) -> NodePollResult:
        raft = self.raft
        if self._plain:  # a bare raft core (the simulator's raft worlds, the test raft server)
            result = raft.poll(now_ms, inbound)  # type: ignore[arg-type]  # only raft envelopes come
            return NodePollResult(list(result.outbound), result.wake_at_ms)
        controller, quorum_apis, broker = self.controller, self.quorum_apis, self.broker
        if broker is not None and raft.voter_set is not self._voter_set:
            # KIP-853: the voter set changed (appended, truncated, or loaded from a snapshot).
            self._voter_set = raft.voter_set
            endpoints = quorum_endpoints(raft, broker.raft_listener_name)
            broker.client_apis.update_controllers(
                tuple((i, e.host, e.port, None) for i, e in endpoints.items())
            )
        raft_in: list[Envelope] = []
        for envelope in inbound:
            self._route_in(envelope, raft_in, now_ms)
        out: list[NodeEnvelope] = []
        wake: int | None = None
        answered_locally = False
        if broker is not None:
            requests, broker_wake = broker.poll(now_ms, raft.leader_and_epoch())
            answered_locally |= self._route_out(requests, out, now_ms)
            if broker_wake is not None:
                wake = max(broker_wake, now_ms + 1)
        wake_before = None
        if controller is not None:
            answers, wake_before = controller.poll(now_ms)
            answered_locally |= self._route_out(answers, out, now_ms)
        if quorum_apis is not None:
            answered_locally |= self._route_out(quorum_apis.drain(), out, now_ms)
            raft_in.extend(quorum_apis.drain_to_raft())
        result = raft.poll(now_ms, raft_in)
        raft_out: list[NodeEnvelope] = list(result.outbound)
        if quorum_apis is not None:
            raft_out = quorum_apis.take_raft_answers(raft_out)
            answered_locally |= self._route_out(quorum_apis.drain(), out, now_ms)
        wake_at_ms = result.wake_at_ms
        if controller is not None:
            appended_from = raft.next_append_offset()
            answers, wake_after = controller.poll(now_ms)
            answered_locally |= self._route_out(answers, out, now_ms)
            for w in (wake_before, wake_after):
                if w is not None:
                    wake_at_ms = min(wake_at_ms, max(w, now_ms))
            if raft.next_append_offset() != appended_from:
                # Records queued after the core's poll: come back when the accumulator lingers out.
                wake_at_ms = min(wake_at_ms, now_ms + raft.config.append_linger_ms)
            if controller.has_queued_requests:
                wake_at_ms = min(wake_at_ms, now_ms + 1)
        if broker is not None:
            completed, early = broker.after_raft_poll(now_ms)
            answered_locally |= self._route_out(completed, out, now_ms)
            if early is not None:
                wake = early if wake is None else min(wake, early)
        if self._refusals:
            refusals, self._refusals = self._refusals, []
            answered_locally |= self._route_out(refusals, out, now_ms)
        if answered_locally:
            wake_at_ms = now_ms + 1  # a part answered another: what comes next may be due at once
        elif wake is not None:
            wake_at_ms = min(wake_at_ms, wake)
        raft_out.extend(out)
        if self._raft_refusals:
            raft_out.extend(self._raft_refusals)
            self._raft_refusals = []
        return NodePollResult(raft_out, wake_at_ms)

    # -- routing -----------------------------------------------------------------------------------

    def _route_in(self, envelope: NodeEnvelope, raft_in: list[Envelope], now_ms: int) -> None:
        match envelope:
            case Envelope():
                refusal = None if envelope.principal is None else self._raft_refusal(envelope, now_ms)
                if refusal is None:
                    raft_in.append(envelope)
                else:
                    self._raft_refusals.append(refusal)
            case ControllerEnvelope():
                if type(envelope.body) is ApiRequest:
                    self._to_controller_side(envelope, now_ms)
                else:
                    self._to_asker(envelope, now_ms)
            case ClientEnvelope():
                broker = self.broker
                if broker is None:
                    raise KraftError(f"node {self.node_id} has no broker part for {envelope!r}")
                if type(envelope.body) is ApiRequest:
                    broker.handle_client_request(envelope, now_ms, self.raft.leader_and_epoch())
                else:
                    broker.handle_client_answer(envelope, now_ms)  # a leader answered our fetcher
            case _:
                assert_never(envelope)

    def _route_out(
        self, envelopes: Iterable[ControllerEnvelope | ClientEnvelope], out: list[NodeEnvelope], now_ms: int
    ) -> bool:
        """Send ``envelopes``, keeping those addressed to this node's own parts inside it.

        Returns:
            Whether an answer went to one of our own parts.
        """
        me = self.raft.node_id
        answered = False
        for envelope in envelopes:
            if type(envelope) is ControllerEnvelope and envelope.destination == me:
                if type(envelope.body) is ApiRequest:
                    self._to_controller_side(envelope, now_ms)
                else:
                    self._to_asker(envelope, now_ms)
                    answered = True
            else:
                out.append(envelope)
        return answered

    def _to_controller_side(self, envelope: ControllerEnvelope, now_ms: int) -> None:
        request = envelope.body
        assert isinstance(request, ApiRequest)
        if request.api.key in QUORUM_APIS and self.quorum_apis is not None:
            refusal = self._quorum_refusal(envelope, request, now_ms)
            if refusal is not None:
                self._refusals.append(envelope.reply(refusal))
                return
            self.quorum_apis.handle(envelope)
        elif self.controller is not None:
            self.controller.handle(envelope, now_ms)
        else:
            # No quorum controller here (the test raft server): its APIs are never served.
            code = ErrorCode.NOT_CONTROLLER
            self._refusals.append(
                envelope.reply(error_response(request.api.key, request.version, request.body, code))
            )

    def _raft_refusal(self, envelope: Envelope, now_ms: int) -> Envelope | None:
        """The answer refusing a raft RPC from a listener whose principal may not CLUSTER_ACTION
        (Kafka's ``ControllerApis`` checks every raft RPC so), or None. Without an authorizer, or
        on a node without a controller part, everything passes."""
        controller = self.controller
        authz = None if controller is None else controller.authz
        if controller is None or authz is None or envelope.principal is None or not envelope.is_request:
            return None
        body = envelope.body
        name = type(body).__name__.removesuffix("Request")
        if authz.allows_cluster_action(
            controller.image, envelope.principal, envelope.host or UNKNOWN_HOST, name, now_ms
        ):
            return None
        answer = error_response_for(body, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)  # type: ignore[arg-type]
        return Envelope(envelope.destination, envelope.source, envelope.correlation_id, answer)

    def _quorum_refusal(
        self, envelope: ControllerEnvelope, request: ApiRequest, now_ms: int
    ) -> object | None:
        """The answer refusing a quorum API request the caller may not make (DescribeQuorum needs
        DESCRIBE, DescribeCluster and the voter changes ALTER on the cluster), or None. Checked
        with the controller's authorizer and committed ACLs; a node without a controller part (the
        test raft server) checks nothing."""
        controller = self.controller
        authz = None if controller is None else controller.authz
        if controller is None or authz is None or authz.trusted(envelope.source):
            return None
        verdict = authz.check(
            controller.image,
            envelope.principal,
            envelope.host or UNKNOWN_HOST,
            request.api.key,
            request.api.name,
            request.version,
            request.body,
            now_ms,
            controller_listener=True,
        )
        return verdict.response if isinstance(verdict, Refuse) else None

    def _to_asker(self, envelope: ControllerEnvelope, now_ms: int) -> None:
        if self.quorum_apis is not None and self.quorum_apis.handle_answer(envelope):
            return
        if self.broker is not None:
            self.broker.handle_answer(envelope, now_ms)
