"""Between the listeners and the node: a decoded request becomes an envelope, its answer a response body.

The network (``kraft.net.server.KafkaServer``) decodes frames and answers ApiVersions; everything
else it hands to a ``ListenerHandler``, which turns the request into the node's envelope, delivers
it to the driver, awaits the answer the node's ``poll`` gives, and returns its body for the network
to encode. Nothing here decides anything about a request's meaning: that is the node's.

Which envelope (the one table a new API is added to):

* on a controller listener, a raft RPC between quorum members (Vote, BeginQuorumEpoch,
  EndQuorumEpoch, Fetch, FetchSnapshot, UpdateRaftVoter) becomes a raft ``Envelope`` from the node
  id the request names; every other API a ``ControllerEnvelope`` from this connection's pseudo id;
* on a broker listener, every API becomes a ``ClientEnvelope`` from this connection's pseudo id.

Bodies are what the API's codec decodes to: the raft APIs (``kraft.net.codecs``) become the raft
core's dataclasses both ways (a request too malformed for the core is answered here, as the codec says);
the others stay message structs.

The cluster id of a raft request on a controller listener is checked here, before the core: a
misconfigured peer gets INCONSISTENT_CLUSTER_ID and a warning (at most one per 10 s per cluster id).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from kraft.common import commit_trace
from kraft.common.errors import RemoteProtocolError
from kraft.net.codecs import CODECS, Codec, ImmediateResponse
from kraft.net.server import InboundRequest
from kraft.node.listeners import RAFT_PEER_APIS
from kraft.protocol.api import Api
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import add_raft_voter, describe_quorum, remove_raft_voter
from kraft.raft.messages import Envelope, FetchRequest, FetchResponse
from kraft.raft.rpc import error_response_for, request_cluster_id, request_source
from kraft.raft.types import LeaderAndEpoch

log = logging.getLogger("kraft.server.gateway")

# Admin clients and other nodes' brokers have no node id on a connection: their requests reach the
# node from these pseudo ids, one per connection (controller listener and broker listener apart).
CONTROLLER_CLIENT_BASE: Final = -1_000_000
BROKER_CLIENT_BASE: Final = -2_000_000

NodeMessage = Envelope | ControllerEnvelope | ClientEnvelope
# The raft APIs a broker listener takes (and forwards to the raft leader) as raft dataclasses.
BROKER_RAFT_KEYS: Final = frozenset(m.API.key for m in (describe_quorum, add_raft_voter, remove_raft_voter))


class Gateway:
    """Matches the node's answers to the requests awaiting them (by correlation id).

    Args:
        deliver: hands envelopes to the driver (any thread).
        node_id: this node.
        cluster_id: this node's cluster.
        leader: the latest leader and epoch the core published (for the codec's answers).
    """

    def __init__(
        self,
        *,
        deliver: Callable[[Iterable[NodeMessage]], None],
        node_id: int,
        cluster_id: str,
        leader: Callable[[], LeaderAndEpoch],
        raft_listener_name: str,
        log_prefix: str = "",
    ) -> None:
        self._deliver = deliver
        self.node_id = node_id
        self.cluster_id = cluster_id
        self._leader = leader
        self.raft_listener_name = raft_listener_name
        self._prefix = log_prefix
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._warned_at: dict[str, float] = {}

    def ask(self, make: Callable[[int], NodeMessage]) -> asyncio.Future[Any]:
        """Deliver ``make(correlation_id)`` to the node; the future resolves with the answer's body."""
        correlation_id = next(self._ids) & 0x7FFFFFFF
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[correlation_id] = future
        future.add_done_callback(lambda _: self._pending.pop(correlation_id, None))
        self._deliver([make(correlation_id)])
        return future

    def complete(self, envelope: NodeMessage) -> None:
        """An answer the node gave (on the event loop)."""
        future = self._pending.pop(envelope.correlation_id, None)
        if future is None or future.done():
            return
        body = envelope.body
        future.set_result(body.body if isinstance(body, ApiResponse) else body)

    def fail_all(self, reason: str) -> None:
        for future in list(self._pending.values()):
            if not future.done():
                future.set_exception(ConnectionAbortedError(reason))
        self._pending.clear()

    def warn(self, key: str, fmt: str, *args: Any) -> None:
        """Log a warning at most once every 10 s per ``key`` (a misconfigured peer retries fast)."""
        now = time.monotonic()
        if now - self._warned_at.get(key, -1e9) >= 10:
            self._warned_at[key] = now
            log.warning(fmt, *args)

    @property
    def prefix(self) -> str:
        return self._prefix

    def leader(self) -> LeaderAndEpoch:
        return self._leader()


class ListenerHandler:
    """The ``RequestHandler`` of one kind of listener (``controller`` or ``broker``)."""

    def __init__(self, gateway: Gateway, *, broker: bool) -> None:
        self._gateway = gateway
        self._broker = broker

    async def handle(self, request: InboundRequest) -> Any:
        gateway = self._gateway
        api, version, key = request.api, request.version, request.api.key
        # On a broker listener only the APIs it forwards to the raft core take the raft codecs:
        # its Fetch is the data plane's (a consumer's or a follower's), not a raft Fetch.
        codec = None if self._broker and key not in BROKER_RAFT_KEYS else CODECS.get(key)
        body: Any = request.body
        if codec is not None:
            decoded = codec.decode_request(body, version, gateway.leader())
            if isinstance(decoded, ImmediateResponse):
                gateway.warn(
                    f"bad-shape:{key}",
                    "%s%s from %s answered without the core: %s",
                    gateway.prefix,
                    api.name,
                    request.peer,
                    decoded.reason,
                )
                return decoded.body
            # A broker forwards voter changes unchecked: the leader checks them (and answers alike).
            refusal = None if self._broker else self._check_cluster_id(request, decoded, codec)
            if refusal is not None:
                return refusal
            body = decoded
        if self._broker:
            source = BROKER_CLIENT_BASE - request.connection_id
            listener, principal, host = request.listener, request.principal, request.host
            answer = await gateway.ask(
                lambda cid: ClientEnvelope(
                    source, gateway.node_id, cid, listener, ApiRequest(api, version, body), principal, host
                )
            )
        elif key in RAFT_PEER_APIS:
            answer = await self._raft_peer(api, body, request)
        else:
            source = CONTROLLER_CLIENT_BASE - request.connection_id
            principal, host = request.principal, request.host
            answer = await gateway.ask(
                lambda cid: ControllerEnvelope(
                    source, gateway.node_id, cid, ApiRequest(api, version, body), principal, host
                )
            )
        if answer is None:
            raise RemoteProtocolError(f"{api.name}: the node gave no answer")  # a bug: close the connection
        if codec is not None:
            return codec.encode_response(answer, version, gateway.raft_listener_name)
        return answer

    async def _raft_peer(self, api: Api, request: Any, inbound: InboundRequest) -> Any:
        gateway = self._gateway
        trace = commit_trace.TRACE
        replica = -1
        if trace is not None and isinstance(request, FetchRequest):
            replica = request.replica_key.id
            trace.note(commit_trace.FETCH_REQ_RECEIVED, replica, request.fetch_offset)
        source = request_source(request)
        principal, host = inbound.principal, inbound.host
        response = await gateway.ask(
            lambda cid: Envelope(source, gateway.node_id, cid, request, principal, host)
        )
        if trace is not None and isinstance(response, FetchResponse) and response.records:
            trace.note(
                commit_trace.FETCH_RESP_READY, replica, commit_trace.records_base_offset(response.records)
            )
        return response

    def _check_cluster_id(self, request: InboundRequest, decoded: Any, codec: Codec[Any, Any]) -> Any:
        gateway = self._gateway
        cluster_id = request_cluster_id(decoded)
        if cluster_id is None or cluster_id == gateway.cluster_id:
            return None
        gateway.warn(
            f"cluster:{cluster_id}",
            "%srefusing %s from %s (node %d): its cluster id %s does not match ours %s "
            "(INCONSISTENT_CLUSTER_ID)",
            gateway.prefix,
            request.api.name,
            request.peer,
            request_source(decoded),
            cluster_id,
            gateway.cluster_id,
        )
        return codec.encode_response(
            error_response_for(decoded, ErrorCode.INCONSISTENT_CLUSTER_ID),
            request.version,
            gateway.raft_listener_name,
        )
