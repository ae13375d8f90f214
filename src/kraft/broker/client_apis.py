"""What a broker listener answers, inside the sans-IO core: Kafka's admin APIs for unmodified clients.

Requests arrive as ``ClientEnvelope``s through ``Node.poll`` and are answered from a later ``poll``
(the same one when nothing waits). Nothing here reads a clock or touches a socket: a request that
must wait (a forwarded write, the controller's answer, this broker's image catching up) waits in a
``Purgatory`` with its deadline on the node's clock, so the simulator drives it as the server does.

* **Read APIs** (Metadata, DescribeCluster, DescribeTopicPartitions, DescribeConfigs,
  DescribeUserScramCredentials, and ListOffsets over partitions whose logs are still empty: no data
  plane yet) are answered at once from the broker's committed image by the pure handlers of
  ``kraft.broker.apis`` (``kraft.broker.scram_apis`` for SCRAM). Metadata may name
  topics to auto-create: a CreateTopics (default partitions and replication factor) is forwarded for
  them in the background, as Kafka does, and the client retries.
* **DescribeQuorum** goes to the raft leader (this node's own controller side in combined mode) as
  a ``ControllerEnvelope``; without a known leader, or when the leader does not answer, the answer is
  NOT_LEADER_OR_FOLLOWER with the leader hint (retriable; never a wrong leader).
* **AddRaftVoter and RemoveRaftVoter** (KIP-853) are forwarded to the raft leader, as Kafka 4.x brokers
  do (``KafkaApis``: ``forwardToControllerOrFail``). A lost connection or an unknown leader is retried
  until the request's deadline (AddRaftVoter's ``TimeoutMs``, else the controller request timeout);
  then the answer is REQUEST_TIMED_OUT, as Kafka's forwarding manager answers. Whatever the leader
  answers goes back to the client unchanged; the broker checks nothing itself. UpdateRaftVoter stays
  a controller-only API, as in Kafka.
* **Admin writes** (CreateTopics, DeleteTopics, CreatePartitions, IncrementalAlterConfigs,
  ElectLeaders, UpdateFeatures, AlterUserScramCredentials) are forwarded to the active controller
  (the raft leader) at the client's version. NOT_CONTROLLER, a lost connection or an unknown
  leader are retried (backing off 50 ms, doubling to 500 ms) until the request's own timeout
  (``timeoutMs``, else the controller request timeout); then each item gets REQUEST_TIMED_OUT.
* **ACLs**: CreateAcls and DeleteAcls are forwarded like the admin writes (and wait until this
  broker's image shows the ACLs created or gone); DescribeAcls is answered from the image, or
  SECURITY_DISABLED when no authorizer is configured, as Kafka. Authorisation itself happens before a
  request gets here (``kraft.broker.broker``); Metadata and DescribeTopicPartitions take the caller's
  ``Access`` to list only the topics it may describe.
* **Read your writes** (beyond Kafka): after a forwarded CreateTopics, DeleteTopics,
  CreatePartitions, IncrementalAlterConfigs (SET and DELETE) or AlterUserScramCredentials
  succeeds, the answer waits (bounded by the same deadline) until this broker's own image shows
  the change, so a client that creates a topic through a broker and then asks the same broker for
  it finds it. Kafka answers at once, and its
  clients meet UNKNOWN_TOPIC_OR_PARTITION until the broker catches up.

Bodies are what the API's codec decodes to: the message struct, or for the raft APIs (DescribeQuorum,
AddRaftVoter, RemoveRaftVoter) the raft core's dataclass.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from kraft.broker.apis import (
    BrokerApiContext,
    ControllerEndpoint,
    handle_describe_cluster,
    handle_describe_configs,
    handle_describe_topic_partitions,
    handle_list_offsets,
    handle_metadata,
)
from kraft.broker.purgatory import Purgatory
from kraft.broker.scram_apis import alter_visible, handle_describe_user_scram_credentials
from kraft.common.errors import KraftError
from kraft.metadata.image import MetadataDelta, MetadataImage
from kraft.protocol.api import Api
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.error_responses import error_response, response_error_codes
from kraft.protocol.messages import (
    add_raft_voter,
    alter_user_scram_credentials,
    api_versions,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_log_dirs,
    describe_quorum,
    describe_topic_partitions,
    describe_user_scram_credentials,
    elect_leaders,
    fetch,
    incremental_alter_configs,
    init_producer_id,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    produce,
    remove_raft_voter,
    update_features,
)
from kraft.raft.messages import AddRaftVoterResponse, DescribeQuorumResponse, RemoveRaftVoterResponse
from kraft.raft.types import LeaderAndEpoch
from kraft.security.acl_apis import (
    NO_AUTHORIZER_MESSAGE,
    acl_api_error,
    creation_binding,
    describe_acls_response,
    standard_acl_of,
)
from kraft.security.acls import CLUSTER_NAME, AclOperation, ResourceType, new_acl_problem
from kraft.security.request_authz import Access

log = logging.getLogger("kraft.broker.client_apis")

FORWARDED_APIS: Final[Mapping[int, Api]] = {
    m.API.key: m.API
    for m in (
        create_topics,
        delete_topics,
        create_partitions,
        incremental_alter_configs,
        elect_leaders,
        update_features,
        alter_user_scram_credentials,
        create_acls,  # Kafka 4.x brokers forward the ACL writes; the controller writes the records
        delete_acls,
    )
}
# KIP-853 voter changes a broker forwards to the raft leader (Kafka's ApiKeys: listeners "controller"
# and "broker", forwardable). They are raft RPCs, answered by the leader's raft core.
VOTER_CHANGE_APIS: Final[Mapping[int, Api]] = {m.API.key: m.API for m in (add_raft_voter, remove_raft_voter)}
# What a broker listener serves (and advertises in ApiVersions, which the network shell answers).
BROKER_APIS: Final[Mapping[int, Api]] = {
    **{
        m.API.key: m.API
        for m in (
            api_versions,
            metadata,
            describe_cluster,
            describe_topic_partitions,
            describe_configs,
            describe_log_dirs,
            describe_quorum,
            list_offsets,
            produce,
            offset_for_leader_epoch,
            init_producer_id,  # answered by kraft.broker.producer_ids
            describe_user_scram_credentials,  # answered from the image (kraft.broker.scram_apis)
            describe_acls,  # answered from this broker's image
        )
    },
    # Consumers and followers fetch over a broker listener (v4-17); a controller listener's Fetch
    # is raft's (v13-17).
    fetch.CLIENT_API.key: fetch.CLIENT_API,
    **FORWARDED_APIS,
    **VOTER_CHANGE_APIS,
}
# Kafka's Errors.REQUEST_TIMED_OUT message, which its forwarding manager answers on a timeout.
REQUEST_TIMED_OUT_MESSAGE: Final = "The request timed out."
RETRY_BACKOFF_MIN_MS: Final = 50
# Metadata answers kept per image (each distinct request shape is one entry; clients send few).
METADATA_CACHE_ENTRIES: Final = 64
RETRY_BACKOFF_MAX_MS: Final = 500


class _Phase:
    RETRY: Final = "retry"  # waiting out a backoff before the next attempt
    IN_FLIGHT: Final = "in-flight"  # sent to the controller, waiting for its answer
    VISIBLE: Final = "visible"  # answered; waiting until this broker's image shows the write


@dataclass(slots=True, eq=False)
class _Forward:
    """One request on its way to the controller (``request`` None: an auto-create, answered to no one)."""

    request: ClientEnvelope | None
    api: Api
    version: int
    body: Any
    timeout_ms: int
    deadline_ms: int
    retries: bool  # retry NOT_CONTROLLER, lost connections and an unknown leader until the deadline
    phase: str = _Phase.RETRY
    backoff_ms: int = RETRY_BACKOFF_MIN_MS
    why: str = "its deadline passed before it could be forwarded"
    leader: int | None = None
    response: Any = None
    visible: Callable[[MetadataImage], bool] | None = None


_IMAGE: Final = "image"
_RETRY: Final = "retry"


class ClientApis:
    """A broker listener's request handling (see the module docstring).

    Args:
        node_id: this broker.
        contexts: listener name -> what the read handlers know about that listener.
        request_timeout_ms: the default deadline of a forwarded request.
        acls_enabled: an authorizer is configured (else DescribeAcls answers SECURITY_DISABLED, as
            Kafka without one).
        next_correlation_id: hands out the correlation ids of this broker's controller requests
            (shared with its lifecycle and ISR manager, so every answer finds its owner).
    """

    def __init__(
        self,
        *,
        node_id: int,
        contexts: Mapping[str, BrokerApiContext],
        request_timeout_ms: int,
        next_correlation_id: Callable[[], int],
        acls_enabled: bool = False,
    ) -> None:
        self.node_id = node_id
        self.acls_enabled = acls_enabled
        self._contexts = dict(contexts)
        self._request_timeout_ms = request_timeout_ms
        self._next_correlation_id = next_correlation_id
        self._image = MetadataImage.EMPTY
        self._leader = LeaderAndEpoch(None, 0)
        self._waiting: Purgatory[object, _Forward] = Purgatory()
        self._auto_creating: set[str] = set()
        self._outbound: list[ClientEnvelope | ControllerEnvelope] = []
        self._metadata_image: MetadataImage | None = None
        self._metadata_answers: dict[tuple[Any, ...], Any] = {}

    # -- inputs ------------------------------------------------------------------------------------

    def update_controllers(self, controllers: tuple[ControllerEndpoint, ...]) -> None:
        """The voter set changed (KIP-853): DescribeCluster lists these controllers from now on."""
        listed = tuple(sorted(controllers, key=lambda c: c[0]))
        self._contexts = {name: replace(ctx, controllers=listed) for name, ctx in self._contexts.items()}

    def publish(self, delta: MetadataDelta, image: MetadataImage) -> None:
        """A ``MetadataPublisher``: answers the writes this image makes visible."""
        self._image = image
        for op in self._waiting.take(_IMAGE):
            if op.visible is not None and op.visible(image):
                self._finish(op, op.response)
            else:
                self._waiting.watch(_IMAGE, op, op.deadline_ms)

    def handle(
        self, envelope: ClientEnvelope, now_ms: int, leader: LeaderAndEpoch, access: Access | None = None
    ) -> None:
        """Take a client's request; its answer comes out of ``drain`` (now or after waiting).

        ``leader``: the raft leader as this node knows it (the active controller). ``access``: the
        caller's authorisation when an authorizer is configured (Metadata and DescribeTopicPartitions
        list only the topics it may see); None: everything is visible."""
        self._follow_leader(leader, now_ms)
        request = envelope.body
        if not isinstance(request, ApiRequest):
            raise KraftError(f"a broker listener takes requests, not {request!r}")
        api, version, body = request.api, request.version, request.body
        key = api.key
        if key in FORWARDED_APIS:
            self._forward(envelope, api, version, body, now_ms, retries=True)
            return
        if key in VOTER_CHANGE_APIS:
            self._forward(envelope, api, version, body, now_ms, retries=True)
            return
        if key == describe_quorum.API.key:
            if leader.leader_id is None:
                message = f"no leader is elected yet (epoch {leader.epoch}); retry"
                self._outbound.append(envelope.reply(_no_quorum_leader(leader, message)))
                return
            self._forward(envelope, api, version, body, now_ms, retries=False)
            return
        image = self._image
        ctx = self._context(envelope.listener, leader.leader_id)
        if key == metadata.API.key:
            answer = self._metadata(image, body, version, ctx, envelope.listener, now_ms, access)
        elif key == describe_topic_partitions.API.key:
            answer = handle_describe_topic_partitions(image, body, version, ctx, access)
        elif key == describe_acls.API.key:
            if self.acls_enabled:
                answer = describe_acls_response(image.acls, body, version)
            else:
                answer = acl_api_error(key, body, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE)
        elif key == describe_cluster.API.key:
            answer = handle_describe_cluster(image, body, version, ctx)
            if access is not None and getattr(body, "include_cluster_authorized_operations", False):
                # KIP-430, as Kafka: 0 unless the caller may DESCRIBE the cluster.
                allowed = access.allows_cluster(AclOperation.DESCRIBE, log=False)
                answer.cluster_authorized_operations = (
                    access.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME) if allowed else 0
                )
        elif key == describe_configs.API.key:
            answer = handle_describe_configs(image, body, version, ctx)
        elif key == list_offsets.API.key:
            answer = handle_list_offsets(image, body, version, ctx)
        elif key == describe_log_dirs.API.key:
            # A broker without partition storage (the replica manager answers otherwise) has none.
            answer = describe_log_dirs.RESPONSE.cls(throttle_time_ms=0, error_code=0, results=[])
        elif key == describe_user_scram_credentials.API.key:
            answer = handle_describe_user_scram_credentials(image, body, version)
        else:
            raise KraftError(f"{api.name} is not served on a broker listener")
        self._outbound.append(envelope.reply(answer))

    def handle_answer(self, envelope: ControllerEnvelope, now_ms: int) -> bool:
        """The controller's answer to one of our forwarded requests (returns whether it was ours)."""
        ops = self._waiting.take(("answer", envelope.correlation_id))
        if not ops:
            return False
        (op,) = ops
        answer = envelope.body
        assert isinstance(answer, ApiResponse)
        body = answer.body
        if body is None:
            op.why = f"the active controller, node {op.leader}, did not answer"
            self._retry_or_give_up(op, now_ms)
        elif op.retries and ErrorCode.NOT_CONTROLLER in response_error_codes(op.api.key, body):
            op.why = f"node {op.leader} answered NOT_CONTROLLER"
            self._retry_or_give_up(op, now_ms)
        else:
            op.response = body
            op.visible = _visibility_check(op.api.key, op.body, body)
            if op.visible is None or op.visible(self._image):
                self._finish(op, body)
            else:
                op.phase = _Phase.VISIBLE
                self._waiting.watch(_IMAGE, op, op.deadline_ms)
        return True

    def _metadata(
        self,
        image: MetadataImage,
        body: Any,
        version: int,
        ctx: BrokerApiContext,
        listener: str,
        now_ms: int,
        access: Access | None = None,
    ) -> Any:
        """Metadata, answered once per image for each kind of request: every client refreshes it, and
        building the answer for 10,000 partitions costs ~100 ms of Python. A cached answer is never
        changed afterwards (the network shell also reuses its encoding, ``kraft.net.server``)."""
        topics = None if body.topics is None else tuple((t.name, t.topic_id) for t in body.topics)
        cache_key = (
            listener,
            version,
            topics,
            bool(getattr(body, "allow_auto_topic_creation", True)),
            bool(getattr(body, "include_cluster_authorized_operations", False)),
            bool(getattr(body, "include_topic_authorized_operations", False)),
            ctx.active_controller_id,
            None if access is None else access.cache_key,  # who asks decides what is listed
        )
        if self._metadata_image is not image:
            self._metadata_image = image
            self._metadata_answers.clear()
        cached = self._metadata_answers.get(cache_key)
        if cached is not None:
            return cached
        result = handle_metadata(image, body, version, ctx, access)
        if result.topics_to_create:
            self._auto_create(result.topics_to_create, now_ms)  # not cached: the answer will change
        elif len(self._metadata_answers) < METADATA_CACHE_ENTRIES:
            self._metadata_answers[cache_key] = result.response
        return result.response

    # -- outputs -----------------------------------------------------------------------------------

    def poll(self, now_ms: int, leader: LeaderAndEpoch) -> int | None:
        """Run what is due (retries, deadlines); returns when to poll again (None: nothing waits)."""
        self._follow_leader(leader, now_ms)
        for op in self._waiting.expire(now_ms):
            if op.phase == _Phase.RETRY and now_ms < op.deadline_ms:
                self._send(op, now_ms)
            elif op.phase == _Phase.VISIBLE:
                self._finish(op, op.response)  # the deadline passed: answer what the controller said
            else:
                if op.phase == _Phase.IN_FLIGHT:
                    op.why = f"the active controller, node {op.leader}, did not answer before the deadline"
                self._give_up(op)
        return self._waiting.next_deadline_ms()

    def drain(self) -> list[ClientEnvelope | ControllerEnvelope]:
        """Answers to clients and requests to the controller produced since the last drain."""
        out, self._outbound = self._outbound, []
        return out

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    # -- forwarding --------------------------------------------------------------------------------

    def _forward(
        self, request: ClientEnvelope | None, api: Api, version: int, body: Any, now_ms: int, *, retries: bool
    ) -> None:
        timeout_ms = self._timeout_of(body)
        op = _Forward(request, api, version, body, timeout_ms, now_ms + timeout_ms, retries)
        self._send(op, now_ms)

    def _send(self, op: _Forward, now_ms: int) -> None:
        leader = self._leader.leader_id
        op.leader = leader
        if leader is None:
            op.why = "no raft leader is known: an election may be running, or no controller is reachable"
            self._retry_or_give_up(op, now_ms)
            return
        correlation_id = self._next_correlation_id()
        op.phase = _Phase.IN_FLIGHT
        self._waiting.watch(("answer", correlation_id), op, op.deadline_ms)
        request = ApiRequest(op.api, op.version, op.body)
        # The shell waits for the answer until the client's deadline, not the shorter default of the
        # controller channel: giving up earlier would retry a request the controller may be
        # carrying out (a retried CreateTopics answers TOPIC_ALREADY_EXISTS for its own topic).
        wait_ms = max(1, op.deadline_ms - now_ms)
        self._outbound.append(
            ControllerEnvelope(self.node_id, leader, correlation_id, request, timeout_ms=wait_ms)
        )

    def _follow_leader(self, leader: LeaderAndEpoch, now_ms: int) -> None:
        """Take the raft leader as the node knows it now. A request in flight to another node is
        sent again to the new leader: each attempt waits for its answer until the client's deadline
        (``_send``), so one sent to a controller that was paused, cut off or deposed would
        otherwise wait that long for an answer that may never come (Kafka's forwarding channel
        disconnects from the old controller when the active one changes, and re-sends)."""
        new = leader.leader_id
        moved = new is not None and new != self._leader.leader_id  # None: the old one may still answer
        self._leader = leader
        if not moved:
            return
        for op in list(self._waiting):
            if op.phase == _Phase.IN_FLIGHT and op.leader != new:
                self._waiting.remove(op)
                op.why = f"the raft leader moved from node {op.leader} to node {new} while it waited"
                if not op.retries:
                    op.leader = new  # a DescribeQuorum given up on names the new leader
                self._retry_or_give_up(op, now_ms)

    def _retry_or_give_up(self, op: _Forward, now_ms: int) -> None:
        if not op.retries or now_ms >= op.deadline_ms:
            self._give_up(op)
            return
        op.phase = _Phase.RETRY
        self._waiting.watch(_RETRY, op, min(now_ms + op.backoff_ms, op.deadline_ms))
        op.backoff_ms = min(op.backoff_ms * 2, RETRY_BACKOFF_MAX_MS)

    def _give_up(self, op: _Forward) -> None:
        key = op.api.key
        if key == describe_quorum.API.key:
            message = f"not the leader; the leader is node {op.leader}"
            self._finish(op, _no_quorum_leader(LeaderAndEpoch(op.leader, self._leader.epoch), message))
            return
        log.info(
            "broker %d: %s: no active controller answered within %d ms (%s)",
            self.node_id,
            op.api.name,
            op.timeout_ms,
            op.why,
        )
        if key in VOTER_CHANGE_APIS:
            cls = AddRaftVoterResponse if key == add_raft_voter.API.key else RemoveRaftVoterResponse
            message = (
                f"{REQUEST_TIMED_OUT_MESSAGE} Broker {self.node_id} found no active controller to answer "
                f"it within {op.timeout_ms} ms ({op.why})."
            )
            self._finish(op, cls(error_code=ErrorCode.REQUEST_TIMED_OUT, error_message=message))
            return
        self._finish(op, error_response(key, op.version, op.body, ErrorCode.REQUEST_TIMED_OUT))

    def _finish(self, op: _Forward, body: Any) -> None:
        self._waiting.remove(op)
        if op.request is not None:
            self._outbound.append(op.request.reply(body))
        else:
            self._auto_created(op, body)

    def _timeout_of(self, body: Any) -> int:
        """The request's own ``TimeoutMs`` when it has a positive one, else the configured default."""
        timeout_ms = getattr(body, "timeout_ms", None)
        if not isinstance(timeout_ms, int) or timeout_ms <= 0:
            return self._request_timeout_ms
        return timeout_ms

    def _context(self, listener: str, leader_id: int | None) -> BrokerApiContext:
        ctx = self._contexts[listener]
        if ctx.active_controller_id != leader_id:
            # Kept for the next request: a copy per request cost a third of a Metadata answer's poll.
            ctx = self._contexts[listener] = replace(ctx, active_controller_id=leader_id)
        return ctx

    # -- auto-creation -------------------------------------------------------------------------------

    def _auto_create(self, names: tuple[str, ...], now_ms: int) -> None:
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
        self._forward(None, create_topics.API, 7, body, now_ms, retries=True)

    def _auto_created(self, op: _Forward, response: Any) -> None:
        self._auto_creating.difference_update(t.name for t in op.body.topics)
        for t in response.topics:
            if t.error_code not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
                log.info(
                    "broker %d: auto-creating topic %s failed: %s",
                    self.node_id,
                    t.name,
                    ErrorCode(t.error_code).name,
                )
            else:
                log.info("broker %d: auto-created topic %s", self.node_id, t.name)


def _no_quorum_leader(leader: LeaderAndEpoch, message: str) -> DescribeQuorumResponse:
    return DescribeQuorumResponse(
        partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
        partition_error_message=message,
        leader_id=-1 if leader.leader_id is None else leader.leader_id,
        leader_epoch=leader.epoch,
    )


def _visibility_check(key: int, body: Any, response: Any) -> Callable[[MetadataImage], bool] | None:
    """A predicate true once an image reflects a successful forwarded write, or None (nothing to wait for)."""
    if getattr(body, "validate_only", False):
        return None
    if key == create_topics.API.key:
        made = [t.name for t in response.topics if t.error_code == ErrorCode.NONE]
        return (lambda image: all(n in image.topics_by_name for n in made)) if made else None
    if key == delete_topics.API.key:
        gone_names = [r.name for r in response.responses if r.error_code == ErrorCode.NONE and r.name]
        gone_ids = [r.topic_id for r in response.responses if r.error_code == ErrorCode.NONE and not r.name]
        if not gone_names and not gone_ids:
            return None
        return lambda image: (
            all(n not in image.topics_by_name for n in gone_names)
            and all(i not in image.topics_by_id for i in gone_ids)
        )
    if key == create_partitions.API.key:
        counts = {t.name: t.count for t in body.topics}
        grown = [r.name for r in response.results if r.error_code == ErrorCode.NONE and r.name in counts]
        if not grown:
            return None

        def check(image: MetadataImage) -> bool:
            for name in grown:
                topic = image.topics_by_name.get(name)
                if topic is None or len(topic.partitions) < counts[name]:
                    return False
            return True

        return check
    if key == alter_user_scram_credentials.API.key:
        return alter_visible(body, response)
    if key == incremental_alter_configs.API.key:
        ok = {
            (r.resource_type, r.resource_name) for r in response.responses if r.error_code == ErrorCode.NONE
        }
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
    if key == create_acls.API.key:
        created = [
            standard_acl_of(binding)
            for row, result in zip(body.creations, response.results, strict=False)
            if result.error_code == ErrorCode.NONE
            and new_acl_problem(binding := creation_binding(row, 1)) is None
        ]
        if not created:
            return None
        return lambda image: set(created) <= set(image.acls.values())
    if key == delete_acls.API.key:
        removed = {
            (
                m.resource_type,
                m.resource_name,
                m.pattern_type,
                m.principal,
                m.host,
                m.operation,
                m.permission_type,
            )
            for r in response.filter_results
            if r.error_code == ErrorCode.NONE
            for m in r.matching_acls
        }
        if not removed:
            return None
        return lambda image: (
            not any(
                (
                    a.resource_type,
                    a.resource_name,
                    a.pattern_type,
                    a.principal,
                    a.host,
                    a.operation,
                    a.permission_type,
                )
                in removed
                for a in image.acls.values()
            )
        )
    return None
