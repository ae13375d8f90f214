"""What the controller listener answers: the raft RPCs and the admin APIs real clients need.

Raft RPCs are decoded (``kraft.net.codecs``), checked for the cluster id and handed to the core through
a ``CoreGateway``; the core's answer is encoded at the request's version. Admin APIs:

* **Metadata** (v0-13): no topics. Brokers = the controllers a client should talk to: only the
  current leader when one is known (so kafka-python, which sends DescribeQuorum to a node from this
  list, lands on the leader), else every voter; ControllerId = the leader or -1 (kafka-python then
  retries); ClusterId.
* **DescribeCluster** (v0-2, KIP-919): the controllers, ControllerId = the leader (or -1). Endpoint
  type 2 (controllers) is the real question; type 1 (brokers, kafka-python's default) gets the same
  list, since on a controller-only cluster the controllers are the only nodes there are.
* **AddRaftVoter / RemoveRaftVoter / UpdateRaftVoter** (v0, KIP-853): handed to the local core like
  the other raft RPCs (cluster id checked first); only the leader accepts them, any other node's
  core answers NOT_LEADER_OR_FOLLOWER and the admin client finds the leader itself, as Kafka's does.
* **DescribeQuorum** (v0-2): the leader's core answers. Any other controller forwards the request to
  the leader over its peer channel (a connection apart from the raft one, so it never waits behind a
  long-polled Fetch) and relays the answer, so every controller gives the leader's
  view; if forwarding fails it answers NOT_LEADER_OR_FOLLOWER with the leader hint, and while an
  election runs NOT_LEADER_OR_FOLLOWER with leader -1 (retriable; never a wrong leader).

* **Controller APIs** (spec 6.2, 6.8): CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs,
  IncrementalAlterConfigs, ElectLeaders, UpdateFeatures, and the broker-to-controller APIs
  (BrokerRegistration, BrokerHeartbeat, AlterPartition, UnregisterBroker) go to the local quorum
  controller, which answers NOT_CONTROLLER when it is not the active one.

This module decides nothing about raft. It must not block: everything that waits is awaited.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from kraft.common import commit_trace
from kraft.common.errors import RemoteProtocolError
from kraft.controller.quorum_controller import CONTROLLER_APIS, ControllerRequest, ControllerResponse
from kraft.net.codecs import CODECS, RAFT_APIS, ImmediateResponse
from kraft.net.server import InboundRequest
from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.messages import (
    alter_partition,
    api_versions,
    broker_heartbeat,
    broker_registration,
    create_partitions,
    create_topics,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_quorum,
    elect_leaders,
    incremental_alter_configs,
    metadata,
    unregister_broker,
    update_features,
)
from kraft.protocol.schema import StructType
from kraft.raft.messages import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    FetchRequest,
    FetchResponse,
    RaftRequest,
    RaftResponse,
)
from kraft.raft.rpc import error_response_for, is_admin_request, request_cluster_id, request_source
from kraft.raft.types import Endpoint, LeaderAndEpoch

log = logging.getLogger("kraft.net.controller_apis")

# KIP-919 endpoint types.
ENDPOINT_TYPE_BROKER = 1
ENDPOINT_TYPE_CONTROLLER = 2
# Admin clients have no node id; their requests reach the core from these pseudo-ids.
ADMIN_SOURCE_BASE = -1_000_000


def _cls(struct_type: StructType) -> Any:
    """The generated value class of a message struct (typed ``Any``: its fields are dynamic)."""
    return struct_type.cls


def _controller_api_modules() -> tuple[Any, ...]:
    return (
        create_topics,
        delete_topics,
        create_partitions,
        describe_configs,
        incremental_alter_configs,
        elect_leaders,
        alter_partition,
        update_features,
        broker_registration,
        broker_heartbeat,
        unregister_broker,
    )


# The controller APIs by key (what a broker sends its controller: lifecycle and forwarded writes).
CONTROLLER_API_BY_KEY: dict[int, Api] = {m.API.key: m.API for m in _controller_api_modules()}


def served_apis() -> dict[int, Api]:
    """Exactly the APIs the controller listener implements (and advertises in ApiVersions)."""
    apis = dict(RAFT_APIS)
    for module in (api_versions, metadata, describe_cluster, *_controller_api_modules()):
        apis[module.API.key] = module.API
    return apis


class CoreGateway(Protocol):
    """The node as the request handler sees it (the driver in production, a fake in tests)."""

    @property
    def node_id(self) -> int: ...

    @property
    def cluster_id(self) -> str: ...

    def leader_and_epoch(self) -> LeaderAndEpoch:
        """The latest view published by the core (thread-safe, possibly a poll behind)."""
        ...

    def submit_controller(self, source: int, request: ControllerRequest) -> Awaitable[ControllerResponse]:
        """Hand a controller API request to the quorum controller; resolves once it is answered
        (after its records commit, for writes)."""
        ...

    def submit(self, source: int, request: RaftRequest) -> Awaitable[RaftResponse]:
        """Hand a request to the core; resolves with the core's response."""
        ...


class Forwarder(Protocol):
    def call(self, destination: int, api: Api, build_body: Any) -> Awaitable[tuple[int, Any]]: ...


class ControllerApis:
    """The ``RequestHandler`` of a controller listener.

    Args:
        core: the local node.
        voter_endpoints: voter id -> its endpoint on the raft listener (from
            ``controller.quorum.voters``; empty when only bootstrap servers are configured, until
            the server calls ``update_voters`` with the voter set the core reads from the log).
        local_endpoint: this node's advertised raft endpoint.
        forwarder: the peer channel, to forward DescribeQuorum to the leader (None: never forward).
    """

    def __init__(
        self,
        *,
        core: CoreGateway,
        listener_name: str,
        voter_endpoints: Mapping[int, Endpoint],
        local_endpoint: Endpoint,
        forwarder: Forwarder | None,
        log_prefix: str = "",
    ) -> None:
        self._core = core
        self._listener_name = listener_name
        self._voters = dict(voter_endpoints)
        self._local_endpoint = local_endpoint
        self._forwarder = forwarder
        self._prefix = log_prefix
        self._warned_at: dict[str, float] = {}

    def update_voters(self, voter_endpoints: Mapping[int, Endpoint]) -> None:
        """The voter set changed (KIP-853): Metadata and DescribeCluster list these from now on.

        Called on the event loop; the mapping is replaced whole, never mutated in place."""
        self._voters = dict(voter_endpoints)

    async def handle(self, request: InboundRequest) -> Any:
        key = request.api.key
        if key == metadata.API.key:
            return self._metadata(request)
        if key == describe_cluster.API.key:
            return self._describe_cluster(request)
        if key in RAFT_APIS:
            return await self._raft(request)
        if key in CONTROLLER_APIS:
            source = ADMIN_SOURCE_BASE - request.connection_id
            response = await self._core.submit_controller(
                source, ControllerRequest(key, request.version, request.body)
            )
            return response.body
        raise RemoteProtocolError(f"{request.api.name} is not served on this listener")

    # ---------------------------------------------------------------------------------------------

    def _endpoint_of(self, node_id: int) -> Endpoint | None:
        if node_id == self._core.node_id:
            return self._local_endpoint
        return self._voters.get(node_id)

    def _controllers(self) -> list[tuple[int, Endpoint]]:
        if not self._voters:
            return [(self._core.node_id, self._local_endpoint)]
        return sorted((i, self._endpoint_of(i) or e) for i, e in self._voters.items())

    def _metadata(self, request: InboundRequest) -> Any:
        leader = self._core.leader_and_epoch()
        leader_endpoint = None if leader.leader_id is None else self._endpoint_of(leader.leader_id)
        if leader.leader_id is not None and leader_endpoint is not None:
            nodes = [(leader.leader_id, leader_endpoint)]
        else:
            nodes = self._controllers()
        cls = _cls(metadata.RESPONSE)
        topics = []
        # No topics live on the controller listener: a named topic is unknown (null/empty = none).
        for t in request.body.topics or ():
            topics.append(
                cls.MetadataResponseTopic(
                    error_code=Code.UNKNOWN_TOPIC_OR_PARTITION,
                    name=t.name,
                    topic_id=t.topic_id,
                    partitions=[],
                )
            )
        return cls(
            throttle_time_ms=0,
            brokers=[
                cls.MetadataResponseBroker(node_id=i, host=e.host, port=e.port, rack=None) for i, e in nodes
            ],
            cluster_id=self._core.cluster_id,
            controller_id=-1 if leader.leader_id is None else leader.leader_id,
            topics=topics,
            error_code=0,
        )

    def _describe_cluster(self, request: InboundRequest) -> Any:
        cls = _cls(describe_cluster.RESPONSE)
        endpoint_type = request.body.endpoint_type
        leader = self._core.leader_and_epoch()
        if endpoint_type not in (ENDPOINT_TYPE_BROKER, ENDPOINT_TYPE_CONTROLLER):
            return cls(
                error_code=Code.UNSUPPORTED_ENDPOINT_TYPE,
                error_message=f"unsupported endpoint type {endpoint_type}",
                endpoint_type=endpoint_type if request.version >= 1 else ENDPOINT_TYPE_BROKER,
                cluster_id=self._core.cluster_id,
            )
        return cls(
            throttle_time_ms=0,
            error_code=0,
            error_message=None,
            endpoint_type=endpoint_type,
            cluster_id=self._core.cluster_id,
            controller_id=-1 if leader.leader_id is None else leader.leader_id,
            brokers=[
                cls.DescribeClusterBroker(broker_id=i, host=e.host, port=e.port, rack=None, is_fenced=False)
                for i, e in self._controllers()
            ],
        )

    async def describe_quorum(self, request: InboundRequest) -> Any:
        """DescribeQuorum arriving on any listener (a broker's too): the leader's answer."""
        return await self._raft(request)

    async def local_raft(self, request: InboundRequest) -> Any:
        """A raft admin RPC (AddRaftVoter, RemoveRaftVoter) that a broker listener of this same
        process (combined mode) hands to the local core, as it arrived: answered exactly as on this
        listener (cluster id checked; only the leader accepts it)."""
        return await self._raft(request)

    async def _raft(self, request: InboundRequest) -> Any:
        key = request.api.key
        codec = CODECS[key]
        decoded = codec.decode_request(request.body, request.version, self._core.leader_and_epoch())
        if isinstance(decoded, ImmediateResponse):
            self._warn(
                f"bad-shape:{key}",
                "%s%s from %s answered without the core: %s",
                self._prefix,
                request.api.name,
                request.peer,
                decoded.reason,
            )
            return decoded.body
        cluster_id = request_cluster_id(decoded)
        if cluster_id is not None and cluster_id != self._core.cluster_id:
            self._warn(
                f"cluster:{cluster_id}",
                "%srefusing %s from %s (node %d): its cluster id %s does not match ours %s "
                "(INCONSISTENT_CLUSTER_ID)",
                self._prefix,
                request.api.name,
                request.peer,
                request_source(decoded),
                cluster_id,
                self._core.cluster_id,
            )
            return codec.encode_response(
                error_response_for(decoded, Code.INCONSISTENT_CLUSTER_ID),
                request.version,
                self._listener_name,
            )
        if isinstance(decoded, DescribeQuorumRequest):
            response = await self._describe_quorum(request)
        else:
            trace = commit_trace.TRACE
            if trace is not None and isinstance(decoded, FetchRequest):
                replica = decoded.replica_key.id
                trace.note(commit_trace.FETCH_REQ_RECEIVED, replica, decoded.fetch_offset)
            source = request_source(decoded)
            if is_admin_request(decoded):
                # AddRaftVoter/RemoveRaftVoter come from an admin client: the core answers (after
                # the new voter set commits, or with NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, ...)
                # to this connection's pseudo id.
                source = ADMIN_SOURCE_BASE - request.connection_id
            response = await self._core.submit(source, decoded)
            if trace is not None and isinstance(response, FetchResponse) and response.records:
                base = commit_trace.records_base_offset(response.records)
                trace.note(commit_trace.FETCH_RESP_READY, replica, base)
        return codec.encode_response(response, request.version, self._listener_name)

    async def _describe_quorum(self, request: InboundRequest) -> RaftResponse:
        leader = self._core.leader_and_epoch()
        if leader.leader_id == self._core.node_id:
            return await self._core.submit(ADMIN_SOURCE_BASE - request.connection_id, DescribeQuorumRequest())
        if leader.leader_id is None:
            return DescribeQuorumResponse(
                partition_error_code=Code.NOT_LEADER_OR_FOLLOWER,
                partition_error_message=f"no leader is elected yet (epoch {leader.epoch}); retry",
                leader_id=-1,
                leader_epoch=leader.epoch,
            )
        if self._forwarder is not None:
            try:
                codec = CODECS[describe_quorum.API.key]
                version, body = await self._forwarder.call(
                    leader.leader_id, codec.api, lambda v: codec.encode_request(DescribeQuorumRequest(), v)
                )
                answer: RaftResponse = codec.decode_response(body, version, self._listener_name)
                return answer
            except Exception as e:  # any failure to reach the leader becomes a retriable answer
                self._warn(
                    "forward",
                    "%scannot forward DescribeQuorum to leader %d: %s",
                    self._prefix,
                    leader.leader_id,
                    e,
                )
        return DescribeQuorumResponse(
            partition_error_code=Code.NOT_LEADER_OR_FOLLOWER,
            partition_error_message=f"not the leader; the leader is node {leader.leader_id}",
            leader_id=leader.leader_id,
            leader_epoch=leader.epoch,
        )

    def _warn(self, key: str, fmt: str, *args: Any) -> None:
        """Log a warning at most once every 10 s per ``key`` (a misconfigured peer retries fast)."""
        now = time.monotonic()
        if now - self._warned_at.get(key, -1e9) >= 10:
            self._warned_at[key] = now
            log.warning(fmt, *args)
