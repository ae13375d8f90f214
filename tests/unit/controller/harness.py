"""In-memory controller clusters for controller tests: real raft cores and quorum controllers on
virtual time, messages delivered on the next step, plus a scripted broker's requests."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from kraft.controller.quorum_controller import ControllerConfig, QuorumController
from kraft.metadata.image import MetadataImage
from kraft.node.build import NodeConfig, NodeStorage, build_node
from kraft.node.node import Node
from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.messages import (
    alter_partition,
    broker_heartbeat,
    broker_registration,
    create_topics,
    delete_topics,
    elect_leaders,
    incremental_alter_configs,
)
from kraft.raft.log import MemoryLog
from kraft.raft.messages import Envelope
from kraft.raft.node import QuorumConfig
from kraft.raft.store import MemoryElectionStore

CLUSTER_ID = "kraft-test-cluster-id"
CLIENT = -1000


class ControllerCluster:
    def __init__(
        self,
        voters: int = 1,
        *,
        seed: int = 0,
        config: ControllerConfig | None = None,
        bootstrap: dict[str, int] | None = None,
        **quorum: Any,
    ) -> None:
        quorum.setdefault("fetch_max_wait_ms", 50)
        quorum.setdefault("append_linger_ms", 5)
        self.quorum = QuorumConfig(voters={v: () for v in range(1, voters + 1)}, **quorum)
        self.config = config or ControllerConfig(max_idle_interval_ms=0, verify_leader_replay=True)
        self.bootstrap = bootstrap
        self.seed = seed
        self.now_ms = 0
        self.logs = {n: MemoryLog() for n in self.quorum.voters}
        self.stores = {n: MemoryElectionStore() for n in self.quorum.voters}
        self.nodes: dict[int, Node] = {}
        self.down: set[int] = set()
        self.in_flight: list[Any] = []
        self.responses: dict[int, ApiResponse] = {}
        self._ids = 0
        for n in self.quorum.voters:
            self.start(n)

    def start(self, n: int) -> None:
        config = NodeConfig(
            node_id=n,
            cluster_id=CLUSTER_ID,
            directory_id=uuid.UUID(int=n),
            quorum=self.quorum,
            controller=self.config,
            bootstrap_features=self.bootstrap,
        )
        self.nodes[n] = build_node(
            config,
            NodeStorage(self.logs[n], self.stores[n]),
            self.now_ms,
            random.Random(f"{self.seed}:{n}"),
            controller_rng=random.Random(f"{self.seed}:c{n}"),
        )
        self.down.discard(n)

    def crash(self, n: int) -> None:
        self.logs[n].crash()
        self.down.add(n)
        del self.nodes[n]

    def controller(self, n: int) -> QuorumController:
        controller = self.nodes[n].controller
        assert controller is not None
        return controller

    def active(self) -> QuorumController | None:
        for node in self.nodes.values():
            controller = node.controller
            if controller is not None and controller.is_active and node.raft.leader_state() is not None:
                return controller
        return None

    def step(self, ms: int = 5) -> None:
        self.now_ms += ms
        inbound: dict[int, list[Any]] = {n: [] for n in self.nodes}
        for env in self.in_flight:
            if env.destination in inbound:
                inbound[env.destination].append(env)
            elif env.destination == CLIENT and isinstance(env, ControllerEnvelope):
                assert isinstance(env.body, ApiResponse)
                self.responses[env.correlation_id] = env.body
        self.in_flight = []
        for n in sorted(self.nodes):
            result = self.nodes[n].poll(self.now_ms, inbound[n])
            for env in result.outbound:
                if isinstance(env, ControllerEnvelope) and env.destination == CLIENT:
                    assert isinstance(env.body, ApiResponse)
                    self.responses[env.correlation_id] = env.body
                else:
                    self.in_flight.append(env)

    def run_until(self, cond: Callable[[], bool], timeout_ms: int = 30_000) -> None:
        deadline = self.now_ms + timeout_ms
        while not cond():
            if self.now_ms > deadline:
                raise AssertionError("condition not reached in time")
            self.step()

    def wait_active(self) -> QuorumController:
        self.run_until(
            lambda: self.active() is not None and "metadata.version" in self.active().image.features
        )
        c = self.active()
        assert c is not None
        return c

    def call(self, api: Any, version: int, to: int | None = None, **fields: Any) -> Any:
        """Send one controller request (to the active controller by default) and wait for its answer."""
        target = to
        if target is None:
            c = self.wait_active()
            target = c.node_id
        self._ids += 1
        cid = self._ids
        # Every request and response goes through the wire codec at ``version``, as on a socket.
        flexible = api.API.is_flexible(version)
        built = api.REQUEST.cls(**fields)
        body = api.REQUEST.decode(api.REQUEST.encode(built, version, flexible), version, flexible)
        env = ControllerEnvelope(CLIENT, target, cid, ApiRequest(api.API, version, body))
        self.in_flight.append(env)
        self.run_until(lambda: cid in self.responses)
        response = self.responses.pop(cid).body
        return api.RESPONSE.decode(api.RESPONSE.encode(response, version, flexible), version, flexible)

    def image(self) -> MetadataImage:
        c = self.wait_active()
        return c.latest_image

    # ---------------------------------------------------------------- a scripted broker

    def register(
        self,
        broker_id: int,
        *,
        incarnation: uuid.UUID | None = None,
        rack: str | None = None,
        previous_epoch: int = -1,
        version: int = 4,
        log_dir: uuid.UUID | None = None,
    ) -> Any:
        cls = broker_registration.REQUEST.cls
        return self.call(
            broker_registration,
            version,
            broker_id=broker_id,
            cluster_id=CLUSTER_ID,
            incarnation_id=incarnation or uuid.UUID(int=1000 + broker_id),
            listeners=[
                cls.Listener(name="PLAINTEXT", host="127.0.0.1", port=9092 + broker_id, security_protocol=0)
            ],
            features=[
                cls.Feature(name="metadata.version", min_supported_version=1, max_supported_version=25),
                cls.Feature(
                    name="eligible.leader.replicas.version", min_supported_version=0, max_supported_version=1
                ),
            ],
            rack=rack,
            log_dirs=[log_dir or uuid.UUID(int=(broker_id << 64) | 7)],
            previous_broker_epoch=previous_epoch,
        )

    def heartbeat(
        self,
        broker_id: int,
        epoch: int,
        *,
        offset: int | None = None,
        want_fence: bool = False,
        want_shutdown: bool = False,
    ) -> Any:
        if offset is None:
            offset = self.image().provenance.last_offset
        return self.call(
            broker_heartbeat,
            1,
            broker_id=broker_id,
            broker_epoch=epoch,
            current_metadata_offset=offset,
            want_fence=want_fence,
            want_shut_down=want_shutdown,
        )

    def start_brokers(self, ids: list[int]) -> dict[int, int]:
        """Register and unfence ``ids``; returns broker id -> epoch."""
        epochs = {}
        for b in ids:
            r = self.register(b)
            assert r.error_code == 0, r
            epochs[b] = r.broker_epoch
        for b in ids:
            r = self.heartbeat(b, epochs[b])
            assert r.error_code == 0 and not r.is_fenced, r
        return epochs

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        rf: int = 1,
        configs: dict[str, str] | None = None,
        assignments: dict[int, list[int]] | None = None,
        version: int = 7,
    ) -> Any:
        cls = create_topics.REQUEST.cls
        t = cls.CreatableTopic(
            name=name,
            num_partitions=-1 if assignments else partitions,
            replication_factor=-1 if assignments else rf,
            assignments=[
                cls.CreatableTopic.CreatableReplicaAssignment(partition_index=i, broker_ids=b)
                for i, b in (assignments or {}).items()
            ],
            configs=[
                cls.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()
            ],
        )
        return self.call(create_topics, version, topics=[t]).topics[0]

    def delete_topic(self, name: str) -> Any:
        return self.call(delete_topics, 5, topic_names=[name], timeout_ms=1000).responses[0]

    def alter_partition(
        self,
        broker_id: int,
        epoch: int,
        topic_id: uuid.UUID,
        partition: int,
        new_isr: list[int],
        *,
        leader_epoch: int,
        partition_epoch: int,
        version: int = 3,
        lrs: int = 0,
    ) -> Any:
        cls = alter_partition.REQUEST.cls
        p = cls.TopicData.PartitionData(
            partition_index=partition,
            leader_epoch=leader_epoch,
            partition_epoch=partition_epoch,
            leader_recovery_state=lrs,
        )
        if version >= 3:
            p.new_isr_with_epochs = [
                cls.TopicData.PartitionData.BrokerState(broker_id=b, broker_epoch=-1) for b in new_isr
            ]
        else:
            p.new_isr = new_isr
        return self.call(
            alter_partition,
            version,
            broker_id=broker_id,
            broker_epoch=epoch,
            topics=[cls.TopicData(topic_id=topic_id, partitions=[p])],
        )

    def set_config(self, resource_type: int, name: str, key: str, value: str | None, op: int = 0) -> Any:
        cls = incremental_alter_configs.REQUEST.cls
        return self.call(
            incremental_alter_configs,
            1,
            resources=[
                cls.AlterConfigsResource(
                    resource_type=resource_type,
                    resource_name=name,
                    configs=[
                        cls.AlterConfigsResource.AlterableConfig(name=key, config_operation=op, value=value)
                    ],
                )
            ],
            validate_only=False,
        ).responses[0]

    def elect(self, election_type: int, topic: str, partitions: list[int]) -> Any:
        cls = elect_leaders.REQUEST.cls
        return self.call(
            elect_leaders,
            2,
            election_type=election_type,
            topic_partitions=[cls.TopicPartitions(topic=topic, partitions=partitions)],
            timeout_ms=1000,
        )


def wire(envelope: Envelope) -> Envelope:
    return envelope
