"""What a broker's client listener answers: Kafka's admin APIs for unmodified clients.

* **Read APIs** (Metadata, DescribeCluster, DescribeTopicPartitions, DescribeConfigs, and
  ListOffsets over partitions whose logs are still empty: no data plane yet) are answered
  from the broker's committed metadata image by the pure handlers of ``kraft.broker.apis``. The
  image is immutable and swapped by reference by the raft thread, so reading it here is safe.
  Metadata may name topics to auto-create: a CreateTopics (default partitions and replication
  factor) is forwarded for them in the background, as Kafka does, and the client retries.
* **DescribeQuorum** goes to the raft leader, like a controller listener does it
  (``ControllerApis.describe_quorum``).
* **AddRaftVoter and RemoveRaftVoter** (KIP-853) are forwarded to the raft leader (the active
  controller) as Kafka 4.x brokers do (``KafkaApis``: ``forwardToControllerOrFail``), over the same
  admin connection as the writes below, or handed to this node's own raft core in combined mode.
  A lost connection or an unknown leader is retried until the request's deadline (AddRaftVoter's
  ``TimeoutMs``, else the controller request timeout); then the answer is REQUEST_TIMED_OUT, as
  Kafka's forwarding manager answers. Whatever the controller answers (NOT_LEADER_OR_FOLLOWER from a
  controller that lost the leadership, DUPLICATE_VOTER, VOTER_NOT_FOUND, ...) goes back to the
  client unchanged, as in Kafka; the broker checks nothing itself, so a bad request changes nothing
  unless the leader accepts it. UpdateRaftVoter stays a controller-only API, as in Kafka.
* **Admin writes** (CreateTopics, DeleteTopics, CreatePartitions, IncrementalAlterConfigs,
  ElectLeaders, UpdateFeatures) are forwarded to the active controller (the raft leader) at the
  client's version, over the peer channel's admin connection, or handed to this node's own
  controller in combined mode. NOT_CONTROLLER, a lost connection or an unknown leader are retried
  inside the broker (backing off 50-500 ms) until the request's own timeout (``timeoutMs``, else
  the controller request timeout); then each item gets REQUEST_TIMED_OUT.
* **Read your writes** (beyond Kafka): after a forwarded CreateTopics, DeleteTopics,
  CreatePartitions or IncrementalAlterConfigs (SET and DELETE) succeeds, the answer waits (bounded
  by the same deadline) until this broker's own image shows the change, so a client that creates a
  topic through a broker and then asks the same broker for it finds it. Kafka answers at once, and
  its clients meet UNKNOWN_TOPIC_OR_PARTITION until the broker catches up.

This module decides nothing itself and never blocks: everything that waits is awaited.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from kraft.broker.apis import (
    BrokerApiContext,
    ControllerEndpoint,
    handle_describe_cluster,
    handle_describe_configs,
    handle_describe_topic_partitions,
    handle_list_offsets,
    handle_metadata,
)
from kraft.common.errors import RemoteProtocolError
from kraft.controller.errors import error_response, response_error_codes
from kraft.controller.quorum_controller import ControllerRequest, ControllerResponse
from kraft.metadata.image import MetadataImage
from kraft.net.channel import ChannelError
from kraft.net.server import InboundRequest
from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.messages import (
    add_raft_voter,
    api_versions,
    create_partitions,
    create_topics,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_quorum,
    describe_topic_partitions,
    elect_leaders,
    incremental_alter_configs,
    list_offsets,
    metadata,
    remove_raft_voter,
    update_features,
)
from kraft.raft.types import LeaderAndEpoch

log = logging.getLogger("kraft.net.broker_apis")

FORWARDED_APIS: Mapping[int, Api] = {
    m.API.key: m.API
    for m in (
        create_topics,
        delete_topics,
        create_partitions,
        incremental_alter_configs,
        elect_leaders,
        update_features,
    )
}
# KIP-853 voter changes a broker forwards to the raft leader (Kafka's ApiKeys: listeners "controller"
# and "broker", forwardable). They are raft RPCs, answered by the leader's raft core, not its
# quorum controller.
VOTER_CHANGE_APIS: Mapping[int, Api] = {m.API.key: m.API for m in (add_raft_voter, remove_raft_voter)}
# Kafka's Errors.REQUEST_TIMED_OUT message, which its forwarding manager answers on a timeout.
REQUEST_TIMED_OUT_MESSAGE = "The request timed out."
# Pseudo source ids of requests this listener hands to a co-located controller (apart from the
# controller listener's range, which counts down from -1,000,000).
FORWARD_SOURCE_BASE = -2_000_000
RETRY_BACKOFF_MIN_S = 0.05
RETRY_BACKOFF_MAX_S = 0.5
VISIBILITY_POLL_S = 0.005


def broker_served_apis() -> dict[int, Api]:
    """Exactly the APIs a broker listener implements (and advertises in ApiVersions)."""
    apis = {
        m.API.key: m.API
        for m in (
            api_versions,
            metadata,
            describe_cluster,
            describe_topic_partitions,
            describe_configs,
            describe_quorum,
            list_offsets,
        )
    }
    apis.update(FORWARDED_APIS)
    apis.update(VOTER_CHANGE_APIS)
    return apis


class BrokerCore(Protocol):
    """The node as the broker listener sees it (the server in production, a fake in tests)."""

    @property
    def node_id(self) -> int: ...

    def image(self) -> MetadataImage:
        """The broker's latest committed image."""
        ...

    def leader_and_epoch(self) -> LeaderAndEpoch: ...

    def submit_controller(self, source: int, request: ControllerRequest) -> Awaitable[ControllerResponse]:
        """Hand a request to this node's own controller (combined mode only)."""
        ...


class Forwarder(Protocol):
    def call(
        self,
        destination: int,
        api: Api,
        build_body: Callable[[int], Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> Awaitable[tuple[int, Any]]: ...


class BrokerApis:
    """The ``RequestHandler`` of a broker listener.

    Args:
        core: the local node.
        forwarder: the peer channel to the controllers.
        contexts: listener name -> the static part of ``BrokerApiContext`` for that listener.
        describe_quorum: answers DescribeQuorum (``ControllerApis.describe_quorum``).
        colocated_controller: this node is also a controller (combined mode).
        local_raft: in combined mode, answers AddRaftVoter/RemoveRaftVoter with this node's own
            raft core (``ControllerApis.local_raft``) when it is the leader.
        request_timeout_ms: the default deadline of a forwarded request.
    """

    def __init__(
        self,
        *,
        core: BrokerCore,
        forwarder: Forwarder,
        contexts: Mapping[str, BrokerApiContext],
        describe_quorum: Callable[[InboundRequest], Awaitable[Any]],
        colocated_controller: bool,
        local_raft: Callable[[InboundRequest], Awaitable[Any]] | None = None,
        request_timeout_ms: int = 30_000,
        log_prefix: str = "",
    ) -> None:
        self._core = core
        self._forwarder = forwarder
        self._contexts = dict(contexts)
        self._describe_quorum = describe_quorum
        self._colocated = colocated_controller
        self._local_raft = local_raft
        self._request_timeout_ms = request_timeout_ms
        self._prefix = log_prefix
        self._tasks: set[asyncio.Task[Any]] = set()
        self._auto_creating: set[str] = set()

    def update_controllers(self, controllers: Iterable[ControllerEndpoint]) -> None:
        """The voter set changed (KIP-853): DescribeCluster lists these controllers from now on.

        Called on the event loop; the contexts are replaced whole, never mutated in place."""
        listed = tuple(sorted(controllers, key=lambda c: c[0]))
        self._contexts = {name: replace(ctx, controllers=listed) for name, ctx in self._contexts.items()}

    async def handle(self, request: InboundRequest) -> Any:
        key = request.api.key
        if key in FORWARDED_APIS:
            return await self.forward(request)
        if key in VOTER_CHANGE_APIS:
            return await self.forward_voter_change(request)
        image = self._core.image()
        if key == metadata.API.key:
            result = handle_metadata(image, request.body, request.version, self._context(request))
            if result.topics_to_create:
                self._auto_create(result.topics_to_create)
            return result.response
        if key == describe_topic_partitions.API.key:
            return handle_describe_topic_partitions(
                image, request.body, request.version, self._context(request)
            )
        if key == describe_cluster.API.key:
            return handle_describe_cluster(image, request.body, request.version, self._context(request))
        if key == describe_configs.API.key:
            return handle_describe_configs(image, request.body, request.version, self._context(request))
        if key == list_offsets.API.key:
            return handle_list_offsets(image, request.body, request.version, self._context(request))
        if key == describe_quorum.API.key:
            return await self._describe_quorum(request)
        raise RemoteProtocolError(f"{request.api.name} is not served on this listener")

    def _context(self, request: InboundRequest) -> BrokerApiContext:
        ctx = self._contexts[request.listener]
        leader = self._core.leader_and_epoch().leader_id
        return ctx if ctx.active_controller_id == leader else replace(ctx, active_controller_id=leader)

    # -- forwarding --------------------------------------------------------------------------------

    async def forward(self, request: InboundRequest) -> Any:
        key, version, body = request.api.key, request.version, request.body
        timeout_ms = self._timeout_of(body)
        deadline = time.monotonic() + timeout_ms / 1000
        response, why = await self._forward_until(request.api, version, body, deadline, request.connection_id)
        if response is None:
            log.info(
                "%s%s: no active controller answered within %d ms (%s)",
                self._prefix,
                request.api.name,
                timeout_ms,
                why,
            )
            return error_response(key, version, body, Code.REQUEST_TIMED_OUT)
        await self._wait_visible(key, version, body, response, deadline)
        return response

    async def forward_voter_change(self, request: InboundRequest) -> Any:
        """AddRaftVoter / RemoveRaftVoter: the raft leader's answer, or REQUEST_TIMED_OUT when no
        leader answered before the deadline (Kafka's ``ForwardingManager`` on a timeout)."""
        api, version, body = request.api, request.version, request.body
        timeout_ms = self._timeout_of(body)
        deadline = time.monotonic() + timeout_ms / 1000
        local_raft = self._local_raft
        local = None if local_raft is None else (lambda: local_raft(request))
        response, why = await self._forward_until(
            api, version, body, deadline, request.connection_id, local=local
        )
        if response is not None:
            return response
        log.info(
            "%s%s: no active controller answered within %d ms (%s)", self._prefix, api.name, timeout_ms, why
        )
        cls: Any = api.response.cls
        return cls(
            throttle_time_ms=0,
            error_code=Code.REQUEST_TIMED_OUT,
            error_message=f"{REQUEST_TIMED_OUT_MESSAGE} Broker {self._core.node_id} found no active "
            f"controller to answer it within {timeout_ms} ms ({why}).",
        )

    def _timeout_of(self, body: Any) -> int:
        """The request's own ``TimeoutMs`` when it has a positive one, else the configured default."""
        timeout_ms = getattr(body, "timeout_ms", None)
        if not isinstance(timeout_ms, int) or timeout_ms <= 0:
            return self._request_timeout_ms
        return timeout_ms

    async def _forward_until(
        self,
        api: Api,
        version: int,
        body: Any,
        deadline: float,
        connection_id: int,
        *,
        local: Callable[[], Awaitable[Any]] | None = None,
    ) -> tuple[Any, str]:
        """Forward to the active controller until one answers other than NOT_CONTROLLER.

        ``local`` answers when this node is the leader in combined mode (default: hand the request
        to this node's quorum controller).

        Returns:
            (the answer, "") or, at the deadline, (None, why the last attempt failed).
        """
        backoff = RETRY_BACKOFF_MIN_S
        why = "its deadline passed before it could be forwarded"
        while True:
            leader = self._core.leader_and_epoch().leader_id
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                return None, why
            response = None
            if leader is None:
                why = "no raft leader is known: an election may be running, or no controller is reachable"
            else:
                try:
                    if self._colocated and leader == self._core.node_id:
                        if local is not None:
                            response = await local()
                        else:
                            answer = await self._core.submit_controller(
                                FORWARD_SOURCE_BASE - connection_id, ControllerRequest(api.key, version, body)
                            )
                            response = answer.body
                    else:
                        _, response = await self._forwarder.call(
                            leader, api, lambda _v: body, version=version, timeout_ms=remaining_ms
                        )
                except (ChannelError, ConnectionAbortedError) as e:
                    log.debug("%sforwarding %s to %d failed: %s", self._prefix, api.name, leader, e)
                    why = f"the active controller, node {leader}, did not answer: {e}"
                    response = None
            if response is not None:
                if Code.NOT_CONTROLLER not in response_error_codes(api.key, response):
                    return response, ""
                why = f"node {leader} answered NOT_CONTROLLER"
            await asyncio.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
            backoff = min(backoff * 2, RETRY_BACKOFF_MAX_S)

    async def _wait_visible(self, key: int, version: int, body: Any, response: Any, deadline: float) -> None:
        """Read your writes: wait until this broker's image shows what the controller committed."""
        check = _visibility_check(key, version, body, response)
        if check is None:
            return
        while not check(self._core.image()) and time.monotonic() < deadline:
            await asyncio.sleep(VISIBILITY_POLL_S)

    def _auto_create(self, names: tuple[str, ...]) -> None:
        """Forward a CreateTopics for topics Metadata asked for (``auto.create.topics.enable``)."""
        todo = [n for n in names if n not in self._auto_creating]
        if not todo:
            return
        self._auto_creating.update(todo)
        cls: Any = create_topics.REQUEST.cls
        body = cls(
            topics=[cls.CreatableTopic(name=n, num_partitions=-1, replication_factor=-1) for n in todo],
            timeout_ms=self._request_timeout_ms,
        )

        async def run() -> None:
            try:
                deadline = time.monotonic() + self._request_timeout_ms / 1000
                response, _ = await self._forward_until(create_topics.API, 7, body, deadline, 0)
                if response is not None:
                    for t in response.topics:
                        if t.error_code not in (Code.NONE, Code.TOPIC_ALREADY_EXISTS):
                            log.info(
                                "%sauto-creating topic %s failed: %s",
                                self._prefix,
                                t.name,
                                Code(t.error_code).name,
                            )
                        else:
                            log.info("%sauto-created topic %s", self._prefix, t.name)
            finally:
                self._auto_creating.difference_update(todo)

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def _visibility_check(
    key: int, version: int, body: Any, response: Any
) -> Callable[[MetadataImage], bool] | None:
    """A predicate true once an image reflects a successful forwarded write, or None (nothing to wait for)."""
    if getattr(body, "validate_only", False):
        return None
    if key == create_topics.API.key:
        made = [t.name for t in response.topics if t.error_code == Code.NONE]
        return (lambda image: all(n in image.topics_by_name for n in made)) if made else None
    if key == delete_topics.API.key:
        gone_names = [r.name for r in response.responses if r.error_code == Code.NONE and r.name]
        gone_ids = [r.topic_id for r in response.responses if r.error_code == Code.NONE and not r.name]
        if not gone_names and not gone_ids:
            return None
        return lambda image: (
            all(n not in image.topics_by_name for n in gone_names)
            and all(i not in image.topics_by_id for i in gone_ids)
        )
    if key == create_partitions.API.key:
        counts = {t.name: t.count for t in body.topics}
        grown = [r.name for r in response.results if r.error_code == Code.NONE and r.name in counts]
        if not grown:
            return None

        def check(image: MetadataImage) -> bool:
            for name in grown:
                topic = image.topics_by_name.get(name)
                if topic is None or len(topic.partitions) < counts[name]:
                    return False
            return True

        return check
    if key == incremental_alter_configs.API.key:
        ok = {(r.resource_type, r.resource_name) for r in response.responses if r.error_code == Code.NONE}
        wanted: list[tuple[tuple[int, str], str, str | None]] = []
        for resource in body.resources:
            where = (resource.resource_type, resource.resource_name)
            if where not in ok:
                continue
            for c in resource.configs:
                if c.config_operation == 0:  # SET
                    wanted.append((where, c.name, c.value))
                elif c.config_operation == 1:  # DELETE
                    wanted.append((where, c.name, None))
                # APPEND and SUBTRACT depend on the value before: not waited for.
        if not wanted:
            return None
        return lambda image: all(image.configs.get(w, {}).get(n) == v for w, n, v in wanted)
    return None
