"""The commands of the cluster transcripts: controllers and real brokers in the simulated world.

Where ``raft_env`` drives bare raft cores message by message, this environment runs whole nodes
built by ``build_node`` (quorum controllers, brokers with their lifecycle, ISR manager and client
APIs, or both in one process) on the simulator's world (``tests/support/clusters.BrokerCluster``:
one seeded event queue, simulated network and disks), so a transcript shows what a cluster does
over time rather than every fetch. Time moves only in ``run`` (and while a command waits for its
answer); everything printed carries the virtual time it happened at (``@1234``).

What is printed (see README.md): the controller requests between brokers and the active
controller that change something (registrations, AlterPartition, heartbeats that ask for or
answer a state change; the steady heartbeats are left out), the committed metadata as the active
controller sees it (brokers, topics, partitions with ISR and ELR, topic configs) whenever it
changes, what each broker's publisher is told about its own replicas (``local_changes``: leads,
follows, deletes), each broker's lifecycle state, and which controller is active.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from clusters import BrokerCluster
from transcript import Command, TranscriptError

from kraft.metadata.image import MetadataDelta, MetadataImage
from kraft.metadata.publisher import local_changes
from kraft.node.node import NodeEnvelope
from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    alter_partition,
    broker_heartbeat,
    broker_registration,
    create_topics,
    incremental_alter_configs,
)
from kraft.sim.world import Observed, SimNode

TOPIC = 2  # ConfigResource type of a topic


def _ids(values: Any) -> str:
    return "(" + ",".join(str(v) for v in values) + ")"


def _error(code: int) -> str:
    return "" if code == ErrorCode.NONE else f" error={ErrorCode(code).name}"


class ClusterEnv:
    def __init__(self) -> None:
        self.cluster: BrokerCluster | None = None
        self.lines: list[str] = []
        self._names: dict[uuid.UUID, str] = {}
        self._seen_brokers: dict[int, str] = {}
        self._seen_partitions: dict[tuple[str, int], str] = {}
        self._seen_configs: dict[str, str] = {}
        self._seen_states: dict[int, str] = {}
        self._seen_fenced: dict[int, tuple[bool, bool, int]] = {}
        self._publishers: dict[int, object] = {}  # broker id -> the process its recorder is on
        self._active: int | None = None

    def handle(self, command: Command) -> list[str]:
        method = getattr(self, "cmd_" + command.name.replace("-", "_"), None)
        if method is None:
            raise TranscriptError(f"{command.where}: unknown command {command.name!r}")
        if command.name != "cluster" and self.cluster is None:
            raise TranscriptError(f"{command.where}: start with a `cluster` command")
        self.lines = []
        result: list[str] = method(command)
        return self.lines + result

    @property
    def c(self) -> BrokerCluster:
        assert self.cluster is not None
        return self.cluster

    # ---- commands ------------------------------------------------------------------------------

    def cmd_cluster(self, c: Command) -> list[str]:
        """cluster controllers=N brokers=(101,...) [combined=(1,...)] [seed=N]: build the world and
        start it (nothing runs until ``run``)."""
        brokers = c.opt_ints("brokers") or []
        combined = c.opt_ints("combined") or []
        self.cluster = BrokerCluster(
            c.opt_int("controllers", 3),
            brokers=[*brokers, *combined],
            combined=combined,
            seed=c.opt_int("seed", 0),
        )
        self.cluster.world.add_poll_watcher(self._watch_poll)
        self._observe()
        return []

    def cmd_run(self, c: Command) -> list[str]:
        """run ms=N: let the world run N ms of virtual time."""
        self.c.run_for(c.opt_int("ms"), watch=self._observe)
        return []

    def cmd_create_topic(self, c: Command) -> list[str]:
        """create-topic NAME partitions=N rf=N [min-isr=N]: CreateTopics to the active controller;
        runs until its answer."""
        name = c.args[0]
        cls = create_topics.REQUEST.cls
        configs = []
        if "min-isr" in c.options:
            configs.append(
                cls.CreatableTopic.CreatableTopicConfig(
                    name="min.insync.replicas", value=c.options["min-isr"]
                )
            )
        topic = cls.CreatableTopic(
            name=name,
            num_partitions=c.opt_int("partitions", 1),
            replication_factor=c.opt_int("rf", 1),
            assignments=[],
            configs=configs,
        )
        answer = self._call(create_topics, 7, topics=[topic], timeout_ms=5000, validate_only=False)
        result = answer.topics[0]
        return [f"@{self.c.now_ms} CreateTopics {name}{_error(result.error_code) or ' ok'}"]

    def cmd_set_config(self, c: Command) -> list[str]:
        """set-config TOPIC KEY=VALUE: IncrementalAlterConfigs (SET) on a topic; runs until its answer."""
        if len(c.args) != 2 or "=" not in c.args[1]:
            raise TranscriptError(f"{c.where}: set-config TOPIC KEY=VALUE")
        key, _, value = c.args[1].partition("=")
        cls = incremental_alter_configs.REQUEST.cls
        resource = cls.AlterConfigsResource(
            resource_type=TOPIC,
            resource_name=c.args[0],
            configs=[cls.AlterConfigsResource.AlterableConfig(name=key, config_operation=0, value=value)],
        )
        answer = self._call(incremental_alter_configs, 1, resources=[resource], validate_only=False)
        code = answer.responses[0].error_code
        return [f"@{self.c.now_ms} IncrementalAlterConfigs {c.args[0]} {key}={value}{_error(code) or ' ok'}"]

    def cmd_lag(self, c: Command) -> list[str]:
        """lag LEADER FOLLOWER topic=NAME [partition=0] ms=N: the leader's ISR manager sees the
        follower out of sync for N ms (as a follower that stopped fetching would be)."""
        leader, follower = c.int_arg(0), c.int_arg(1)
        broker = self.c.broker(leader)
        topic = broker.image.topic(c.options["topic"])
        if topic is None:
            raise TranscriptError(f"{c.where}: broker {leader} knows no topic {c.options['topic']}")
        until = self.c.now_ms + c.opt_int("ms")
        broker.isr.set_out_of_sync(topic.id, c.opt_int("partition", 0), follower, until)
        self.c.world.request_poll(self.c.node(leader), self.c.now_ms)
        return [f"@{self.c.now_ms} {leader} sees {follower} out of sync until @{until}"]

    def cmd_pause(self, c: Command) -> list[str]:
        """pause ID ms=N: the node's process stops for N ms (SIGSTOP) and then goes on."""
        node_id = c.int_arg(0)
        self.c.world.pause(node_id, self.c.now_ms + c.opt_int("ms"))
        return [f"@{self.c.now_ms} {node_id} paused until @{self.c.now_ms + c.opt_int('ms')}"]

    def cmd_shutdown(self, c: Command) -> list[str]:
        """shutdown ID: a broker's controlled shutdown, then its clean stop (as ``kraft server-start``
        on SIGTERM); it runs in the next ``run``."""
        node_id = c.int_arg(0)
        self.c.sim_broker(node_id).shut_down()
        return [f"@{self.c.now_ms} {node_id} begins controlled shutdown"]

    def cmd_crash(self, c: Command) -> list[str]:
        """crash ID: the process dies (a broker's next start is unclean)."""
        node_id = c.int_arg(0)
        self.c.crash(node_id)
        return [f"@{self.c.now_ms} {node_id} crashed"]

    def cmd_start(self, c: Command) -> list[str]:
        """start ID: a stopped node starts again from its disk."""
        node_id = c.int_arg(0)
        self.c.restart(node_id)
        return [f"@{self.c.now_ms} {node_id} started"]

    def cmd_describe(self, c: Command) -> list[str]:
        """describe: the active controller's committed image: brokers, then every partition."""
        image = self.c.committed_image()
        lines = [
            f"broker {b.id} {self._broker(b)}" for b in sorted(image.brokers.values(), key=lambda b: b.id)
        ]
        for topic in sorted(image.topics_by_name.values(), key=lambda t: t.name):
            for partition_id, p in sorted(topic.partitions.items()):
                lines.append(f"{topic.name}-{partition_id} {self._partition(p)}")
        return lines

    # ---- what is printed -----------------------------------------------------------------------

    def _call(self, api: Any, version: int, **fields: Any) -> Any:
        correlation_id = self.c.request(api, version, **fields)
        answers = self.c.client.answers

        def answered() -> bool:
            self._observe()
            return correlation_id in answers

        self.c.run_until(answered)
        return self.c.answer(correlation_id)

    def _emit(self, text: str) -> None:
        self.lines.append(f"@{self.c.now_ms} {text}")

    @staticmethod
    def _broker(b: Any) -> str:
        state = "fenced" if b.fenced else "controlled-shutdown" if b.in_controlled_shutdown else "unfenced"
        return f"epoch={b.epoch} {state}"

    @staticmethod
    def _partition(p: Any) -> str:
        return (
            f"leader={p.leader} leader_epoch={p.leader_epoch} isr={_ids(p.isr)} elr={_ids(p.elr)} "
            f"last_known_elr={_ids(p.last_known_elr)} partition_epoch={p.partition_epoch}"
        )

    def _observe(self) -> bool:
        """Print what changed since the last look (called whenever the world's clock moves)."""
        cluster = self.c
        active = cluster.cworld.active_controller()
        active_id = None if active is None or active.process is None else active.node_id
        if active_id != self._active and active_id is not None:
            self._active = active_id
            self._emit(f"controller {active_id} active (epoch {cluster.raft(active_id).epoch})")
        if active_id is not None:
            controller = cluster.process(active_id).controller
            assert controller is not None
            self._diff_image(controller.image)
        for broker_id in cluster.broker_ids:
            node = cluster.node(broker_id)
            process = node.process
            state = "DOWN" if process is None or process.broker is None else process.broker.broker_state.name
            before = self._seen_states.get(broker_id, "DOWN")
            if state != before:
                self._seen_states[broker_id] = state
                self._emit(f"{broker_id} {before} -> {state}")
            if (
                process is not None
                and process.broker is not None
                and self._publishers.get(broker_id) is not process
            ):
                self._publishers[broker_id] = process
                process.broker.install_publisher(self._recorder(broker_id))
        return False

    def _diff_image(self, image: MetadataImage) -> None:
        brokers = {b.id: self._broker(b) for b in image.brokers.values()}
        for broker_id in sorted(set(brokers) | set(self._seen_brokers)):
            now, before = brokers.get(broker_id), self._seen_brokers.get(broker_id)
            if now != before:
                self._emit(f"image: broker {broker_id} {now or 'unregistered'}")
        self._seen_brokers = brokers
        partitions: dict[tuple[str, int], str] = {}
        for topic in image.topics_by_name.values():
            self._names[topic.id] = topic.name
            for partition_id, p in topic.partitions.items():
                partitions[(topic.name, partition_id)] = self._partition(p)
        for key in sorted(set(partitions) | set(self._seen_partitions)):
            now, before = partitions.get(key), self._seen_partitions.get(key)
            if now != before:
                self._emit(f"image: {key[0]}-{key[1]} {now or 'deleted'}")
        self._seen_partitions = partitions
        configs = {
            name: ",".join(f"{k}={v}" for k, v in sorted(values.items()))
            for (kind, name), values in image.configs.items()
            if kind == TOPIC
        }
        for name in sorted(set(configs) | set(self._seen_configs)):
            if configs.get(name) != self._seen_configs.get(name):
                self._emit(f"image: config {name} {configs.get(name) or '(none)'}")
        self._seen_configs = configs

    def _recorder(self, broker_id: int) -> Any:
        def publish(delta: MetadataDelta, image: MetadataImage) -> None:
            changes = local_changes(delta, broker_id)
            for tp, p in changes.leaders.items():
                self._emit(f"{broker_id} publisher: leads {self._tp(image, tp)} ({self._epochs(p)})")
            for tp, p in changes.followers.items():
                where = f"{self._tp(image, tp)} (leader {p.leader}, {self._epochs(p)})"
                self._emit(f"{broker_id} publisher: follows {where}")
            for tp, name in changes.deletes.items():
                self._emit(f"{broker_id} publisher: deletes {name}-{tp.partition_id}")

        return publish

    @staticmethod
    def _epochs(p: Any) -> str:
        return f"leader_epoch {p.leader_epoch}, partition_epoch {p.partition_epoch}"

    def _tp(self, image: MetadataImage, tp: Any) -> str:
        topic = image.topics_by_id.get(tp.topic_id)
        return f"{topic.name if topic is not None else tp.topic_id}-{tp.partition_id}"

    def _watch_poll(self, node: SimNode, outbound: Sequence[NodeEnvelope], observed: Observed) -> None:
        for env in outbound:
            if type(env) is ControllerEnvelope:
                text = self._show(env)
                if text is not None:
                    self._emit(f"{env.source}->{env.destination} {text}")

    def _show(self, env: ControllerEnvelope) -> str | None:
        """A controller request or answer worth a line (None: a steady heartbeat, or not a broker's)."""
        message = env.body
        body: Any = message.body
        api = message.api
        if isinstance(message, ApiRequest):
            if api is broker_registration.API:
                incarnation = str(body.incarnation_id)[:8]
                previous = body.previous_broker_epoch
                return f"BrokerRegistration incarnation={incarnation} previous_epoch={previous}"
            if api is broker_heartbeat.API:
                if not (body.want_shut_down or body.want_fence):
                    return None
                wants = "want_shut_down" if body.want_shut_down else "want_fence"
                return f"BrokerHeartbeat epoch={body.broker_epoch} {wants}=true"
            if api is alter_partition.API:
                parts = [
                    f"{self._names.get(t.topic_id, t.topic_id)}-{p.partition_index} isr="
                    f"{_ids([s.broker_id for s in p.new_isr_with_epochs] or p.new_isr)} "
                    f"leader_epoch={p.leader_epoch} partition_epoch={p.partition_epoch}"
                    for t in body.topics
                    for p in t.partitions
                ]
                return f"AlterPartition epoch={body.broker_epoch} " + " ".join(parts)
            return None
        assert isinstance(message, ApiResponse)
        if body is None:
            return f"{api.name}Response (no answer: connection failed)"
        if api is broker_registration.API:
            return f"BrokerRegistrationResponse epoch={body.broker_epoch}{_error(body.error_code)}"
        if api is broker_heartbeat.API:
            key = (body.is_fenced, body.should_shut_down, body.error_code)
            if self._seen_fenced.get(env.destination) == key:
                return None
            self._seen_fenced[env.destination] = key
            return (
                f"BrokerHeartbeatResponse fenced={str(body.is_fenced).lower()} "
                f"should_shut_down={str(body.should_shut_down).lower()}{_error(body.error_code)}"
            )
        if api is alter_partition.API:
            parts = [
                f"{self._names.get(t.topic_id, t.topic_id)}-{p.partition_index}"
                + (
                    _error(p.error_code)
                    or f" isr={_ids(p.isr)} leader_epoch={p.leader_epoch} partition_epoch={p.partition_epoch}"
                )
                for t in body.topics
                for p in t.partitions
            ]
            return f"AlterPartitionResponse{_error(body.error_code)} " + " ".join(parts)
        return None
