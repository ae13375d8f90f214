"""What a controller listener answers about the quorum itself, inside the sans-IO core.

The controller APIs proper (CreateTopics, BrokerHeartbeat, ...) are the quorum controller's; this
part answers the rest of what arrives at a node's controller side as ``ControllerEnvelope``s:

* **Metadata** (v0-13): no topics. Brokers = the controllers a client should talk to: only the
  current leader when one is known (so kafka-python, which sends DescribeQuorum to a node from this
  list, lands on the leader), else every voter; ControllerId = the leader or -1 (kafka-python then
  retries); ClusterId.
* **DescribeCluster** (v0-2, KIP-919): the controllers, ControllerId = the leader (or -1). Endpoint
  type 2 (controllers) is the real question; type 1 (brokers, kafka-python's default) gets the same
  list, since on a controller-only cluster the controllers are the only nodes there are.
* **DescribeQuorum** (v0-2): the leader's raft core answers. Any other node forwards it to the leader
  (a ``ControllerEnvelope`` the shell sends on a connection apart from the raft one, so it never waits
  behind a long-polled Fetch) and relays the answer, so every controller gives the leader's view; if
  forwarding fails it answers NOT_LEADER_OR_FOLLOWER with the leader hint, and while an election runs
  NOT_LEADER_OR_FOLLOWER with leader -1 (retriable; never a wrong leader).
* **AddRaftVoter / RemoveRaftVoter** (v0, KIP-853) from admins (or forwarded by a broker): handed to
  the local raft core, which only accepts them as leader (any other node's core answers
  NOT_LEADER_OR_FOLLOWER and the admin client finds the leader itself, as Kafka's does).

Requests for the raft core travel to it as raft ``Envelope``s from a pseudo source id of this part's
own (one per request), and its answers, addressed to that id, come back here to be returned as the
``ControllerEnvelope`` answer: ``take_raft_answers`` picks them out of the core's outbound messages.
"""

from __future__ import annotations

from typing import Any, Final

from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    add_raft_voter,
    describe_cluster,
    describe_quorum,
    metadata,
    remove_raft_voter,
)
from kraft.raft.messages import DescribeQuorumRequest, DescribeQuorumResponse, Envelope
from kraft.raft.node import RaftNode
from kraft.raft.types import Endpoint

# KIP-919 endpoint types.
ENDPOINT_TYPE_BROKER: Final = 1
ENDPOINT_TYPE_CONTROLLER: Final = 2
QUORUM_APIS: Final = frozenset(
    m.API.key for m in (metadata, describe_cluster, describe_quorum, add_raft_voter, remove_raft_voter)
)
# Pseudo source ids of the requests this part hands to the raft core (apart from the shells' ranges
# for client connections, which count down from -1,000,000 and -2,000,000).
RAFT_BRIDGE_BASE: Final = -3_000_000


def quorum_endpoints(raft: RaftNode, listener_name: str) -> dict[int, Endpoint]:
    """Each voter's endpoint on ``listener_name`` (else its first one): ``controller.quorum.voters``
    when configured (static voters stay in force), else (KIP-853) the voter set the core reads from
    the log."""
    static = raft.config.voters
    voters = static.items() if static else ((v.key.id, v.endpoints) for v in raft.voter_set)
    out: dict[int, Endpoint] = {}
    for voter_id, endpoints in voters:
        if endpoints:
            out[voter_id] = next((e for e in endpoints if e.name == listener_name), endpoints[0])
    return dict(sorted(out.items()))


class QuorumApis:
    """See the module docstring. ``local_endpoint``: this node's advertised raft endpoint."""

    def __init__(
        self, *, raft: RaftNode, cluster_id: str, listener_name: str, local_endpoint: Endpoint
    ) -> None:
        self.raft = raft
        self.cluster_id = cluster_id
        self.listener_name = listener_name
        self.local_endpoint = local_endpoint
        self._next_bridge = RAFT_BRIDGE_BASE
        self._bridged: dict[int, ControllerEnvelope] = {}  # pseudo source -> the request it carries
        # Our correlation id -> the client request a forwarded DescribeQuorum answers. Negative: apart
        # from the ids of the broker part's own controller requests (a combined node has both).
        self._forwarded: dict[int, ControllerEnvelope] = {}
        self._next_correlation = 0
        self._outbound: list[ControllerEnvelope] = []
        self._to_raft: list[Envelope] = []

    # -- inputs ------------------------------------------------------------------------------------

    def handle(self, envelope: ControllerEnvelope) -> None:
        """A request in ``QUORUM_APIS``; its answer comes out of ``drain`` now or later."""
        request = envelope.body
        assert isinstance(request, ApiRequest)
        key = request.api.key
        if key == metadata.API.key:
            self._outbound.append(envelope.reply(self._metadata(request.body)))
        elif key == describe_cluster.API.key:
            self._outbound.append(envelope.reply(self._describe_cluster(request)))
        elif key == describe_quorum.API.key:
            self._describe_quorum(envelope)
        else:
            self._bridge(envelope, request.body)

    def handle_answer(self, envelope: ControllerEnvelope) -> bool:
        """The leader's answer to a DescribeQuorum we forwarded (returns whether it was ours)."""
        if envelope.destination != self.raft.source_id or envelope.correlation_id >= 0:
            return False
        request = self._forwarded.pop(envelope.correlation_id, None)
        if request is None:
            return False
        answer = envelope.body
        assert isinstance(answer, ApiResponse)
        body = answer.body
        if body is None:
            leader = self.raft.leader_and_epoch()
            body = DescribeQuorumResponse(
                partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                partition_error_message=f"not the leader; the leader is node {leader.leader_id}",
                leader_id=-1 if leader.leader_id is None else leader.leader_id,
                leader_epoch=leader.epoch,
            )
        self._outbound.append(request.reply(body))
        return True

    def take_raft_answers(self, outbound: list[Any]) -> list[Any]:
        """Move the raft core's answers to bridged requests out of ``outbound`` (returns the rest)."""
        if not self._bridged:
            return outbound
        rest = []
        for envelope in outbound:
            request = self._bridged.pop(envelope.destination, None) if type(envelope) is Envelope else None
            if request is None:
                rest.append(envelope)
            else:
                self._outbound.append(request.reply(envelope.body))
        return rest

    # -- outputs -----------------------------------------------------------------------------------

    def drain_to_raft(self) -> list[Envelope]:
        out, self._to_raft = self._to_raft, []
        return out

    def drain(self) -> list[ControllerEnvelope]:
        out, self._outbound = self._outbound, []
        return out

    # -- handlers ----------------------------------------------------------------------------------

    def _bridge(self, envelope: ControllerEnvelope, body: object) -> None:
        self._next_bridge -= 1
        source = self._next_bridge
        self._bridged[source] = envelope
        self._to_raft.append(Envelope(source, self.raft.source_id, envelope.correlation_id, body))  # type: ignore[arg-type]

    def _describe_quorum(self, envelope: ControllerEnvelope) -> None:
        leader = self.raft.leader_and_epoch()
        if leader.leader_id == self.raft.node_id:
            self._bridge(envelope, DescribeQuorumRequest())
        elif leader.leader_id is None:
            self._outbound.append(
                envelope.reply(
                    DescribeQuorumResponse(
                        partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                        partition_error_message=f"no leader is elected yet (epoch {leader.epoch}); retry",
                        leader_id=-1,
                        leader_epoch=leader.epoch,
                    )
                )
            )
        else:
            self._next_correlation -= 1
            self._forwarded[self._next_correlation] = envelope
            request = ApiRequest(describe_quorum.API, _version(envelope), DescribeQuorumRequest())
            self._outbound.append(
                ControllerEnvelope(self.raft.source_id, leader.leader_id, self._next_correlation, request)
            )

    def _controllers(self) -> list[tuple[int, Endpoint]]:
        voters = quorum_endpoints(self.raft, self.listener_name)
        if not voters:
            return [(self.raft.source_id, self.local_endpoint)]
        me = self.raft.node_id
        return sorted((i, self.local_endpoint if i == me else e) for i, e in voters.items())

    def _endpoint_of(self, node_id: int) -> Endpoint | None:
        if node_id == self.raft.node_id:
            return self.local_endpoint
        return quorum_endpoints(self.raft, self.listener_name).get(node_id)

    def _metadata(self, body: Any) -> Any:
        leader = self.raft.leader_and_epoch()
        leader_endpoint = None if leader.leader_id is None else self._endpoint_of(leader.leader_id)
        if leader.leader_id is not None and leader_endpoint is not None:
            nodes = [(leader.leader_id, leader_endpoint)]
        else:
            nodes = self._controllers()
        cls: Any = metadata.RESPONSE.cls
        # No topics live on the controller listener: a named topic is unknown (null/empty = none).
        topics = [
            cls.MetadataResponseTopic(
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                name=t.name,
                topic_id=t.topic_id,
                partitions=[],
            )
            for t in body.topics or ()
        ]
        return cls(
            throttle_time_ms=0,
            brokers=[
                cls.MetadataResponseBroker(node_id=i, host=e.host, port=e.port, rack=None) for i, e in nodes
            ],
            cluster_id=self.cluster_id,
            controller_id=-1 if leader.leader_id is None else leader.leader_id,
            topics=topics,
            error_code=0,
        )

    def _describe_cluster(self, request: ApiRequest) -> Any:
        cls: Any = describe_cluster.RESPONSE.cls
        body: Any = request.body
        endpoint_type = body.endpoint_type
        leader = self.raft.leader_and_epoch()
        if endpoint_type not in (ENDPOINT_TYPE_BROKER, ENDPOINT_TYPE_CONTROLLER):
            return cls(
                error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                error_message=f"unsupported endpoint type {endpoint_type}",
                endpoint_type=endpoint_type if request.version >= 1 else ENDPOINT_TYPE_BROKER,
                cluster_id=self.cluster_id,
            )
        return cls(
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            endpoint_type=endpoint_type,
            cluster_id=self.cluster_id,
            controller_id=-1 if leader.leader_id is None else leader.leader_id,
            brokers=[
                cls.DescribeClusterBroker(broker_id=i, host=e.host, port=e.port, rack=None, is_fenced=False)
                for i, e in self._controllers()
            ],
        )


def _version(envelope: ControllerEnvelope) -> int:
    request = envelope.body
    assert isinstance(request, ApiRequest)
    return request.version
