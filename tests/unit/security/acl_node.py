"""One combined kraft node (controller + broker with in-memory partition logs) on virtual time, with
an authorizer configured, for the ACL tests: clients are envelopes with a principal each.

Built by ``build_node`` as the server builds one; the harness plays the clock and the clients. The
node is the only voter, so it elects itself, its broker registers with its own controller (in-process
requests, trusted as the node's own) and runs. Requests go through the wire codec both ways.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Callable
from typing import Any

from kraft.broker.lifecycle import BrokerState, LifecycleConfig, Listener
from kraft.common.principal import KafkaPrincipal
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.controller.quorum_controller import ControllerConfig
from kraft.node.build import BrokerConfig, NodeConfig, NodeStorage, build_node
from kraft.node.node import Node, NodeEnvelope
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.raft.log import MemoryLog
from kraft.raft.node import QuorumConfig
from kraft.raft.store import MemoryElectionStore
from kraft.raft.types import Endpoint
from kraft.security.authorizer import STANDARD_AUTHORIZER, AuthorizerConfig
from kraft.storage.memory_partition_log import MemoryPartitionLog

CLUSTER_ID = "acl-cluster-id"
LISTENER = "PLAINTEXT"
ADMIN = KafkaPrincipal("User", "admin")
ALICE = KafkaPrincipal("User", "alice")
BOB = KafkaPrincipal("User", "bob")


class MemoryLogs:
    """A broker's partition logs in memory (the ``LogProvider`` protocol)."""

    def __init__(self) -> None:
        self.logs: dict[tuple[str, int], MemoryPartitionLog] = {}

    def get_or_create(self, topic: str, partition: int, topic_id: uuid.UUID) -> MemoryPartitionLog:
        key = (topic, partition)
        if key not in self.logs:
            self.logs[key] = MemoryPartitionLog(topic, partition, topic_id)
        return self.logs[key]

    def delete(self, topic: str, partition: int) -> None:
        self.logs.pop((topic, partition), None)

    def checkpoint(self) -> None:
        pass


def codec(schema: Any, body: Any, version: int, flexible: bool) -> Any:
    """``body`` encoded and decoded at ``version``: what a real peer would hand over."""
    return schema.decode(schema.encode(body, version, flexible), version, flexible)


class AclNode:
    """See the module docstring. ``props``: the node's properties (the authorizer's among them)."""

    def __init__(self, props: dict[str, str] | None = None) -> None:
        self.props = (
            props
            if props is not None
            else {"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": str(ADMIN)}
        )
        lifecycle = LifecycleConfig(
            node_id=1,
            cluster_id=CLUSTER_ID,
            incarnation_id=uuid.UUID(int=11),
            listeners=(Listener(name=LISTENER, host="127.0.0.1", port=9092),),
            supported_features=dict(SUPPORTED_FEATURES),
            rack=None,
            log_dirs=(uuid.UUID(int=(1 << 64) | 1),),
            heartbeat_interval_ms=100,
            request_timeout_ms=500,
        )
        voter = Endpoint("CONTROLLER", "127.0.0.1", 9093)
        config = NodeConfig(
            node_id=1,
            cluster_id=CLUSTER_ID,
            directory_id=uuid.UUID(int=1001),
            quorum=QuorumConfig(voters={1: (voter,)}),
            local_endpoints=(voter,),
            quorum_apis=True,
            controller=ControllerConfig(
                max_idle_interval_ms=0,
                verify_leader_replay=True,
                authorizer=AuthorizerConfig.from_properties(self.props),
            ),
            broker=BrokerConfig(lifecycle=lifecycle, client_listeners=(LISTENER,), static_configs=self.props),
        )
        self.logs = MemoryLogs()
        self.node: Node = build_node(
            config, NodeStorage(MemoryLog(), MemoryElectionStore(), self.logs), 0, random.Random(0)
        )
        self.now_ms = 0
        self.inbound: list[NodeEnvelope] = []
        self.answers: dict[int, Any] = {}
        self._ids = itertools.count(1)
        self.run_until(self.running)

    def running(self) -> bool:
        broker = self.node.broker
        return broker is not None and broker.broker_state == BrokerState.RUNNING

    def step(self, ms: int = 5) -> None:
        self.now_ms += ms
        inbound, self.inbound = self.inbound, []
        for envelope in self.node.poll(self.now_ms, inbound).outbound:
            if isinstance(envelope, ClientEnvelope | ControllerEnvelope) and not envelope.is_request:
                self.answers[envelope.correlation_id] = envelope
            # Raft requests have no peer (one voter); nothing else leaves a lone node.

    def run_until(self, condition: Callable[[], object], timeout_ms: int = 20_000) -> None:
        deadline = self.now_ms + timeout_ms
        while not condition():
            if self.now_ms >= deadline:
                raise AssertionError(f"not reached within {timeout_ms} ms")
            self.step()

    def send(
        self,
        module: Any,
        version: int,
        principal: KafkaPrincipal,
        *,
        controller: bool = False,
        api: Any = None,
        body: Any = None,
        host: str = "",
        **fields: Any,
    ) -> int:
        """Send a request built from ``fields`` through the codec (or ``body`` as it is: a raft
        API's dataclass); its correlation id."""
        api = api or module.API
        if body is None:
            body = codec(module.REQUEST, module.REQUEST.cls(**fields), version, api.is_flexible(version))
        correlation_id = next(self._ids)
        request = ApiRequest(api, version, body)
        if controller:
            self.inbound.append(
                ControllerEnvelope(-1_000_000 - correlation_id, 1, correlation_id, request, principal, host)
            )
        else:
            self.inbound.append(
                ClientEnvelope(
                    -2_000_000 - correlation_id, 1, correlation_id, LISTENER, request, principal, host
                )
            )
        return correlation_id

    def answer(self, module: Any, correlation_id: int, timeout_ms: int = 10_000) -> Any:
        self.run_until(lambda: correlation_id in self.answers, timeout_ms)
        envelope = self.answers.pop(correlation_id)
        response = envelope.body
        assert isinstance(response, ApiResponse)
        if not hasattr(response.body, "_schema"):
            return response.body  # NO_RESPONSE, a raft dataclass
        return codec(
            module.RESPONSE, response.body, response.version, module.API.is_flexible(response.version)
        )

    def call(
        self,
        module: Any,
        version: int,
        principal: KafkaPrincipal,
        *,
        controller: bool = False,
        api: Any = None,
        body: Any = None,
        host: str = "",
        **fields: Any,
    ) -> Any:
        cid = self.send(
            module, version, principal, controller=controller, api=api, body=body, host=host, **fields
        )
        return self.answer(module, cid)
