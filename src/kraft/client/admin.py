"""A small blocking admin client for the operator tools, speaking our own wire codec.

It does what Kafka's admin client does for ``kafka-metadata-quorum`` and ``kafka-features``:
negotiate versions with ApiVersions (KIP-511), send DescribeQuorum to the quorum leader, learn the
cluster id, read feature levels (ApiVersions v3+, KIP-584), send UpdateFeatures to the active
controller and AddRaftVoter/RemoveRaftVoter (KIP-853) to the quorum leader, retrying while the
leader answers a retriable error (REQUEST_TIMED_OUT: a new voter not caught up yet). With broker
bootstrap addresses (``controller_endpoints=False``, ``--bootstrap-server``) every request goes to
a broker, which forwards DescribeQuorum, AddRaftVoter, RemoveRaftVoter and UpdateFeatures to the
active controller, as Kafka's admin client does. The
leader is found by asking any reachable bootstrap node: a non-leader answers
NOT_LEADER_OR_FOLLOWER, and the client then follows the ``LeaderId`` hint (DescribeQuorum v2 with a
known epoch, or DescribeCluster's ``ControllerId``), else tries the other known nodes, backing off
between rounds while an election runs. Every call has an overall deadline and fails with an
``AdminError`` that names each address tried and why it failed.

The connection, the version negotiation and the retry rounds are ``kraft.client.connection``'s.
This module blocks and reads the clock; it belongs to the clients and the tools, never to the core
or the server.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Unpack

from kraft.client.connection import (
    Address,
    AdminError,
    BootstrapClient,
    ClientOptions,
    Connection,
    FeatureMetadata,
    RetriableError,
    error_name,
)
from kraft.client.quorum_info import QuorumInfo
from kraft.common.errors import RemoteProtocolError
from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import add_raft_voter as add_raft_voter_msg
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import describe_quorum as describe_quorum_msg
from kraft.protocol.messages import metadata as metadata_msg
from kraft.protocol.messages import remove_raft_voter as remove_raft_voter_msg
from kraft.protocol.messages import update_features as update_features_msg
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC, Endpoint

T = TypeVar("T")

# Error codes this client acts on (Kafka's Errors.java).
NONE = 0
NOT_LEADER_OR_FOLLOWER = 6
NOT_CONTROLLER = 41


class ApiError(AdminError):
    """The leader refused the request: ``code`` (an ``ErrorCode`` value) and its ``message``."""

    def __init__(self, what: str, code: int, message: str | None) -> None:
        self.code = code
        self.error_message = message
        detail = f": {message}" if message else ""
        super().__init__(f"{what} failed: {error_name(code)}{detail}")


class AdminClient(BootstrapClient):
    """Finds the quorum leader among bootstrap nodes and asks it about the quorum.

    Args:
        bootstrap: addresses to start from (any node of the quorum will do).
        controller_endpoints: True when the bootstrap nodes are controllers
            (``--bootstrap-controller``); selects DescribeCluster's EndpointType.
        options: ``timeout_ms`` (overall deadline of each public call, retries included),
            ``request_timeout_ms`` (deadline of one request on one connection) and the rest of
            ``BootstrapClient``'s.
    """

    def __init__(
        self,
        bootstrap: Sequence[Address],
        *,
        controller_endpoints: bool = True,
        **options: Unpack[ClientOptions],
    ) -> None:
        super().__init__(bootstrap, **options)
        self._controller_endpoints = controller_endpoints
        # Addresses learnt from Nodes / DescribeCluster, by node id.
        self._known: dict[int, Address] = {}

    # ------------------------------------------------------------------------------------------
    # Public calls

    def describe_quorum(self) -> QuorumInfo:
        """DescribeQuorum answered by the current leader.

        Raises:
            AdminError: no leader answered before the deadline; the message lists the last
                outcome per address.
        """
        return self._with_leader_retries("DescribeQuorum", self._try_describe_quorum)

    def cluster_id(self) -> str:
        """The cluster id, from DescribeCluster (as Kafka's tool does) or else Metadata.

        Raises:
            AdminError: no node answered with a cluster id before the deadline.
        """
        return self._any_node("the cluster id", self._try_cluster_id)

    def describe_features(self) -> FeatureMetadata:
        """Supported and finalized features from any node's ApiVersions v3+ answer.

        Raises:
            AdminError: no node answered before the deadline, or one answered only ApiVersions v0.
        """

        def attempt(conn: Connection) -> FeatureMetadata:
            if conn.features is None:
                raise AdminError(f"{conn.address} does not report features (it answered ApiVersions v0)")
            return conn.features

        return self._any_node("the feature metadata", attempt)

    def update_features(
        self, updates: dict[str, tuple[int, int]], *, validate_only: bool = False
    ) -> dict[str, tuple[int, str] | None]:
        """UpdateFeatures on the active controller: ``updates`` maps a feature to (level, upgrade
        type: 1 upgrade, 2 safe downgrade, 3 unsafe downgrade). NOT_CONTROLLER is followed to the
        active controller (DescribeCluster ControllerId, else DescribeQuorum LeaderId).

        Returns:
            Per feature: None when it succeeded (or would, with ``validate_only``), else
            (error code, message). A top-level error fails every feature with its message, as
            Kafka's admin client does.

        Raises:
            AdminError: no active controller answered before the deadline.
        """
        return self._with_leader_retries(
            "UpdateFeatures", lambda conn: self._try_update_features(conn, updates, validate_only)
        )

    def add_raft_voter(self, voter_id: int, directory_id: uuid.UUID, endpoints: Sequence[Endpoint]) -> None:
        """AddRaftVoter (KIP-853) on the quorum leader: make the observer ``voter_id`` (with the
        metadata directory ``directory_id``) a voter reachable at ``endpoints``. Returns once the
        leader committed the new voter set.

        Raises:
            ApiError: the leader refused it (DUPLICATE_VOTER, INVALID_REQUEST, UNSUPPORTED_VERSION, ...).
            AdminError: no leader accepted it before the deadline (the message lists the last answer
                of each node, e.g. REQUEST_TIMED_OUT while the new voter catches up).
        """
        cls: Any = add_raft_voter_msg.REQUEST.cls

        def body(conn: Connection) -> Any:
            # The leader (or a broker forwarding to it) answers by itself when TimeoutMs runs out;
            # keep that inside our own wait, with at least half of it left for the answer to come.
            wait_ms = int(conn.timeout_s * 1000)
            timeout_ms = max(1, wait_ms - 500, wait_ms // 2)
            return cls(
                cluster_id=None,
                timeout_ms=timeout_ms,
                voter_id=voter_id,
                voter_directory_id=directory_id,
                listeners=[cls.Listener(name=e.name, host=e.host, port=e.port) for e in endpoints],
            )

        self._with_leader_retries(
            "AddRaftVoter", lambda conn: self._try_voter_change(conn, add_raft_voter_msg.API, body(conn))
        )

    def remove_raft_voter(self, voter_id: int, directory_id: uuid.UUID) -> None:
        """RemoveRaftVoter (KIP-853) on the quorum leader; returns once the new set committed.

        Raises:
            ApiError: the leader refused it (VOTER_NOT_FOUND, ...).
            AdminError: no leader accepted it before the deadline.
        """
        body = remove_raft_voter_msg.REQUEST.cls(
            cluster_id=None, voter_id=voter_id, voter_directory_id=directory_id
        )
        self._with_leader_retries(
            "RemoveRaftVoter", lambda conn: self._try_voter_change(conn, remove_raft_voter_msg.API, body)
        )

    # ------------------------------------------------------------------------------------------
    # One attempt against one connection

    def _try_voter_change(self, conn: Connection, api: Api, body: Any) -> tuple[bool | None, int | None, str]:
        """One AddRaftVoter/RemoveRaftVoter: (True, None, "ok") when done; (None, leader hint,
        outcome) to retry elsewhere or later; raises ``ApiError`` for a final refusal."""
        version = conn.version_for(api)
        if version is None:
            raise AdminError(
                f"{conn.address} does not serve {api.name}: it needs KIP-853 support (a kraft "
                "controller, or a kraft broker, which forwards it to the active controller)"
            )
        response = conn.send(api, version, body)
        code = response.error_code
        if code == NONE:
            return True, None, "ok"
        outcome = f"{error_name(code)}{': ' + response.error_message if response.error_message else ''}"
        if code == NOT_LEADER_OR_FOLLOWER:
            return None, self._active_controller_hint(conn), outcome
        known = ErrorCode.from_wire(code)
        if known is not None and known.retriable:
            return None, None, outcome
        raise ApiError(api.name, code, response.error_message)

    def _try_describe_quorum(self, conn: Connection) -> tuple[QuorumInfo | None, int | None, str]:
        """Returns (info, leader hint, outcome text)."""
        api = describe_quorum_msg.API
        version = conn.version_or_raise(api)
        request = _describe_quorum_request()
        response = conn.send(api, version, request)
        # Nodes are the controllers' endpoints: follow them only when talking to controllers. With
        # --bootstrap-server every request goes through the brokers (which forward to the leader),
        # as Kafka's admin client does.
        for node in (getattr(response, "nodes", []) or []) if self._controller_endpoints else ():
            for listener in node.listeners:
                self._known.setdefault(node.node_id, Address(listener.host, listener.port))
        if response.error_code != NONE:
            return None, None, f"DescribeQuorum failed: {error_name(response.error_code)}"
        partition = _metadata_partition(response)
        if partition is None:
            raise AdminError(f"{conn.address} answered DescribeQuorum without {METADATA_TOPIC}-0")
        if partition.error_code == NONE:
            info = QuorumInfo.from_partition(partition, getattr(response, "nodes", []) or [])
            info.leader()  # a leader missing from the voters is a broken answer: fail loudly
            return info, None, "ok"
        hint = None
        # Spec raft.md 9: a non-leader leaves LeaderId/LeaderEpoch at 0 unless it knows better;
        # only trust a hint that carries a real epoch.
        if partition.error_code == NOT_LEADER_OR_FOLLOWER and partition.leader_epoch > 0:
            hint = partition.leader_id
        message = partition.error_message if getattr(partition, "error_message", None) else ""
        outcome = f"{error_name(partition.error_code)}{': ' + message if message else ''}"
        if hint is None:
            hint = self._controller_hint(conn)
        return None, hint, outcome

    def _try_update_features(
        self, conn: Connection, updates: dict[str, tuple[int, int]], validate_only: bool
    ) -> tuple[dict[str, tuple[int, str] | None] | None, int | None, str]:
        api = update_features_msg.API
        version = conn.version_or_raise(api, highest=1)  # v2 drops the per-feature results
        if version == 0 and (validate_only or any(kind == 3 for _, kind in updates.values())):
            raise AdminError(f"{conn.address} speaks only UpdateFeatures v0: no dry run, no unsafe downgrade")
        cls: Any = update_features_msg.REQUEST.cls
        keys = [
            # v0 says AllowDowngrade, v1+ UpgradeType; a field of the other version must stay unset.
            cls.FeatureUpdateKey(feature=name, max_version_level=level, allow_downgrade=kind != 1)
            if version == 0
            else cls.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=kind)
            for name, (level, kind) in updates.items()
        ]
        body = cls(timeout_ms=self._request_timeout_ms, feature_updates=keys)
        if version >= 1:
            body.validate_only = validate_only
        response = conn.send(api, version, body)
        if response.error_code == NOT_CONTROLLER:
            return None, self._active_controller_hint(conn), "NOT_CONTROLLER"
        results: dict[str, tuple[int, str] | None] = {}
        if response.error_code != NONE:
            failure = (response.error_code, response.error_message or error_name(response.error_code))
            return {name: failure for name in updates}, None, "ok"
        for row in response.results or ():
            if row.feature in updates:
                message = row.error_message or error_name(row.error_code)
                results[row.feature] = None if row.error_code == NONE else (row.error_code, message)
        for name in updates:
            if name not in results:
                results[name] = (-1, f"The controller response did not contain a result for feature {name}")
        return results, None, "ok"

    def _active_controller_hint(self, conn: Connection) -> int | None:
        """The active controller's id as ``conn`` knows it: DescribeCluster, else DescribeQuorum."""
        hint = self._controller_hint(conn)
        if hint is not None:
            return hint
        try:
            info, leader, _ = self._try_describe_quorum(conn)
        except (AdminError, RemoteProtocolError):
            return None
        return info.leader_id if info is not None else leader

    def _controller_hint(self, conn: Connection) -> int | None:
        """Asks a non-leader who the active controller is (DescribeCluster), learning addresses."""
        api = describe_cluster_msg.API
        version = conn.version_for(api)
        if version is None:
            return None
        endpoint_type = 2 if self._controller_endpoints else 1
        try:
            response = conn.send(
                api, version, api.request(endpoint_type=endpoint_type) if version >= 1 else api.request()
            )
        except RemoteProtocolError:
            return None
        if response.error_code != NONE:
            return None
        for broker in response.brokers:
            self._known[broker.broker_id] = Address(broker.host, broker.port)
        return response.controller_id if response.controller_id >= 0 else None

    def _try_cluster_id(self, conn: Connection) -> str | None:
        api = describe_cluster_msg.API
        version = conn.version_for(api)
        if version is not None:
            for endpoint_type in (2, 1) if self._controller_endpoints else (1, 2):
                if version < 1 and endpoint_type != 1:
                    continue
                body = api.request(endpoint_type=endpoint_type) if version >= 1 else api.request()
                response = conn.send(api, version, body)
                if response.error_code == NONE and response.cluster_id:
                    return str(response.cluster_id)
        api = metadata_msg.API
        version = conn.version_for(api, highest=12)
        if version is not None and version >= 2:
            response = conn.send(api, version, api.request(topics=[]))
            if response.cluster_id:
                return str(response.cluster_id)
        return None

    # ------------------------------------------------------------------------------------------
    # Retry loops

    def _connect(self, address: Address, deadline: float) -> Connection:
        remaining = max(0.05, min(self._request_timeout_ms / 1000, deadline - self._clock()))
        return Connection(address, remaining, security=self._security)

    def _candidates(self, preferred: int | None) -> list[Address]:
        order: list[Address] = []
        if preferred is not None and preferred in self._known:
            order.append(self._known[preferred])
        for address in [*self._bootstrap, *(self._known[k] for k in sorted(self._known))]:
            if address not in order:
                order.append(address)
        return order

    def _with_leader_retries(
        self, what: str, attempt_fn: Callable[[Connection], tuple[T | None, int | None, str]]
    ) -> T:
        """Tries the nodes in turn, going straight to the leader a node names, until
        ``attempt_fn`` returns a result (not None) or the call's deadline passes."""
        outcomes: dict[Address, str] = {}
        preferred: int | None = None

        def one_round(deadline: float) -> T | None:
            nonlocal preferred
            for address in self._candidates(preferred):
                if self._clock() >= deadline:
                    break
                try:
                    with self._connect(address, deadline) as conn:
                        result, hint, outcome = attempt_fn(conn)
                except (RetriableError, RemoteProtocolError) as e:
                    outcomes[address] = str(e)
                    continue
                if result is not None:
                    return result
                outcomes[address] = outcome
                if hint is not None and hint in self._known and self._known[hint] != address:
                    preferred = hint
                    break  # go straight to the named leader
            return None

        return self._retry(what, outcomes, one_round)

    def _any_node(self, what: str, attempt_fn: Callable[[Connection], T | None]) -> T:
        """Asks the nodes in turn until one answers ``attempt_fn`` with a result (not None)."""
        outcomes: dict[Address, str] = {}

        def one_round(deadline: float) -> T | None:
            for address in self._candidates(None):
                if self._clock() >= deadline:
                    break
                try:
                    with self._connect(address, deadline) as conn:
                        result = attempt_fn(conn)
                except (RetriableError, RemoteProtocolError) as e:
                    outcomes[address] = str(e)
                    continue
                if result is not None:
                    return result
                outcomes[address] = f"no {what} in its answers"
            return None

        return self._retry(what, outcomes, one_round)


def _describe_quorum_request() -> Any:
    """DescribeQuorum for the one metadata partition (nested classes come from the schema)."""
    topic_cls: Any = describe_quorum_msg.REQUEST.cls.TopicData
    partition = topic_cls.PartitionData(partition_index=METADATA_PARTITION)
    return describe_quorum_msg.REQUEST(topics=[topic_cls(topic_name=METADATA_TOPIC, partitions=[partition])])


def _metadata_partition(response: Any) -> Any | None:
    for topic in response.topics:
        if topic.topic_name != METADATA_TOPIC:
            continue
        for partition in topic.partitions:
            if partition.partition_index == METADATA_PARTITION:
                return partition
    return None


__all__ = ["AdminClient", "ApiError"]
