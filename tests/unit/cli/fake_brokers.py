"""In-process fake brokers for the broker-facing tool tests (topics, configs, leader-election,
broker-api-versions).

Each ``FakeBroker`` is the project's real ``kraft.net.server.KafkaServer`` on 127.0.0.1 port 0 (so
framing, headers, ApiVersions and every codec are the real ones), with a handler that answers each
API from a per-key script: a callable ``(InboundRequest) -> body`` or a list of bodies used in turn.
Every request is recorded. The ``*_body`` builders make response bodies with our message classes.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kraft.common.uuids import uuid_from_base64
from kraft.net.server import InboundRequest, KafkaServer
from kraft.protocol.api import Api
from kraft.protocol.messages import REGISTRY
from kraft.protocol.messages import create_partitions as create_partitions_msg
from kraft.protocol.messages import create_topics as create_topics_msg
from kraft.protocol.messages import delete_topics as delete_topics_msg
from kraft.protocol.messages import describe_cluster as describe_cluster_msg
from kraft.protocol.messages import describe_configs as describe_configs_msg
from kraft.protocol.messages import describe_topic_partitions as dtp_msg
from kraft.protocol.messages import elect_leaders as elect_leaders_msg
from kraft.protocol.messages import incremental_alter_configs as iac_msg
from kraft.protocol.messages import metadata as metadata_msg

# What a broker's client listener serves (spec controller.md 6.2), plus ApiVersions.
BROKER_API_KEYS = (3, 18, 19, 20, 32, 37, 43, 44, 60, 75)

Script = Callable[[InboundRequest], Any] | list[Any]


class FakeBroker:
    """One listener answering from ``script`` (api key -> callable or list of bodies)."""

    def __init__(self, node_id: int, server: KafkaServer, port: int) -> None:
        self.node_id = node_id
        self.server = server
        self.port = port
        self.script: dict[int, Script] = {}
        self.received: list[InboundRequest] = []

    def on(self, api: Api, answer: Script | Any) -> None:
        """Answers ``api`` with ``answer``: a callable, a list of bodies (one per request, the last
        one repeated), or a single body."""
        self.script[api.key] = answer if callable(answer) or isinstance(answer, list) else [answer]

    def requests(self, api: Api) -> list[InboundRequest]:
        return [r for r in self.received if r.api.key == api.key]

    async def handle(self, request: InboundRequest) -> Any:
        self.received.append(request)
        answer = self.script.get(request.api.key)
        if answer is None:
            raise RuntimeError(f"fake broker {self.node_id} has no answer for {request.api.name}")
        if isinstance(answer, list):
            return answer.pop(0) if len(answer) > 1 else answer[0]
        return answer(request)


class FakeCluster:
    """A loop thread hosting any number of fake brokers; use as a context manager."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.brokers: list[FakeBroker] = []

    def __enter__(self) -> FakeCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_broker(
        self, node_id: int, api_keys: Iterable[int] = BROKER_API_KEYS, extra_apis: Iterable[Api] = ()
    ) -> FakeBroker:
        """A broker serving (and advertising) ``api_keys`` from our registry plus ``extra_apis``."""
        apis = {k: REGISTRY[k] for k in api_keys} | {a.key: a for a in extra_apis}
        box: list[FakeBroker] = []

        async def start() -> None:
            class Handler:
                def handle(self, req: InboundRequest) -> Any:
                    return box[0].handle(req)

            server = KafkaServer(apis=apis, handler=Handler(), max_request_bytes=1 << 20)
            port = await server.listen("PLAINTEXT", "127.0.0.1", 0)
            box.append(FakeBroker(node_id, server, port))

        asyncio.run_coroutine_threadsafe(start(), self._loop).result(10)
        self.brokers.append(box[0])
        return box[0]

    def close(self) -> None:
        for broker in self.brokers:
            asyncio.run_coroutine_threadsafe(broker.server.close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


# -----------------------------------------------------------------------------------------------
# Response bodies


@dataclass
class Part:
    index: int
    leader: int
    replicas: list[int]
    isr: list[int]
    elr: list[int] | None = field(default_factory=list)
    last_known_elr: list[int] | None = field(default_factory=list)
    leader_epoch: int = 0


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Part]
    internal: bool = False
    error_code: int = 0


def topic_id(text: str) -> uuid.UUID:
    return uuid_from_base64(text)


def metadata_body(
    brokers: Sequence[FakeBroker | tuple[int, str, int, str | None]],
    controller_id: int,
    topics: Sequence[Topic] = (),
    cluster_id: str = "MkU3OEVBNTcwNTJENDM2Qg",
) -> Any:
    cls: Any = metadata_msg.RESPONSE.cls
    rows = []
    for b in brokers:
        if isinstance(b, FakeBroker):
            rows.append(
                cls.MetadataResponseBroker(node_id=b.node_id, host="127.0.0.1", port=b.port, rack=None)
            )
        else:
            rows.append(cls.MetadataResponseBroker(node_id=b[0], host=b[1], port=b[2], rack=b[3]))
    return cls(
        brokers=rows,
        cluster_id=cluster_id,
        controller_id=controller_id,
        topics=[
            cls.MetadataResponseTopic(
                error_code=t.error_code,
                name=t.name,
                topic_id=t.topic_id,
                is_internal=t.internal,
                partitions=[
                    cls.MetadataResponseTopic.MetadataResponsePartition(
                        error_code=0,
                        partition_index=p.index,
                        leader_id=p.leader,
                        leader_epoch=p.leader_epoch,
                        replica_nodes=list(p.replicas),
                        isr_nodes=list(p.isr),
                        offline_replicas=[],
                    )
                    for p in t.partitions
                ],
            )
            for t in topics
        ],
    )


def dtp_body(topics: Sequence[Topic], next_cursor: tuple[str, int] | None = None) -> Any:
    cls: Any = dtp_msg.RESPONSE.cls
    topic_cls = cls.DescribeTopicPartitionsResponseTopic
    return cls(
        topics=[
            topic_cls(
                error_code=t.error_code,
                name=t.name,
                topic_id=t.topic_id,
                is_internal=t.internal,
                partitions=[
                    topic_cls.DescribeTopicPartitionsResponsePartition(
                        error_code=0,
                        partition_index=p.index,
                        leader_id=p.leader,
                        leader_epoch=p.leader_epoch,
                        replica_nodes=list(p.replicas),
                        isr_nodes=list(p.isr),
                        eligible_leader_replicas=p.elr,
                        last_known_elr=p.last_known_elr,
                        offline_replicas=[],
                    )
                    for p in t.partitions
                ],
            )
            for t in topics
        ],
        next_cursor=None
        if next_cursor is None
        else cls.Cursor(topic_name=next_cursor[0], partition_index=next_cursor[1]),
    )


def describe_cluster_body(brokers: Sequence[FakeBroker | int], controller_id: int = -1) -> Any:
    cls: Any = describe_cluster_msg.RESPONSE.cls
    rows = []
    for b in brokers:
        node_id, port = (b.node_id, b.port) if isinstance(b, FakeBroker) else (b, 9092)
        rows.append(cls.DescribeClusterBroker(broker_id=node_id, host="127.0.0.1", port=port, rack=None))
    return cls(error_code=0, cluster_id="MkU3OEVBNTcwNTJENDM2Qg", controller_id=controller_id, brokers=rows)


# (name, value, source, sensitive, synonyms [(name, value, source)])
ConfigRow = tuple[str, str | None, int, bool, Sequence[tuple[str, str | None, int]]]


def config(
    name: str, value: str | None, source: int, *synonyms: tuple[str, str | None, int], sensitive: bool = False
) -> ConfigRow:
    return (name, value, source, sensitive, synonyms)


def describe_configs_body(results: Mapping[tuple[int, str], Sequence[ConfigRow] | tuple[int, str]]) -> Any:
    """(resource type, name) -> config rows, or (error code, message)."""
    cls: Any = describe_configs_msg.RESPONSE.cls
    result_cls = cls.DescribeConfigsResult
    entry_cls = result_cls.DescribeConfigsResourceResult
    out = []
    for (resource_type, name), rows in results.items():
        if rows and isinstance(rows[0], int):
            code, message = rows  # type: ignore[misc]
            out.append(
                result_cls(
                    error_code=code,
                    error_message=message,
                    resource_type=resource_type,
                    resource_name=name,
                    configs=[],
                )
            )
            continue
        entries = [
            entry_cls(
                name=n,
                value=v,
                read_only=False,
                config_source=source,
                is_sensitive=sensitive,
                synonyms=[
                    entry_cls.DescribeConfigsSynonym(name=sn, value=sv, source=ss) for sn, sv, ss in synonyms
                ],
            )
            for n, v, source, sensitive, synonyms in rows  # type: ignore[misc]
        ]
        out.append(
            result_cls(
                error_code=0,
                error_message=None,
                resource_type=resource_type,
                resource_name=name,
                configs=entries,
            )
        )
    return cls(results=out)


def create_topics_body(*results: tuple[str, int, str | None]) -> Any:
    cls: Any = create_topics_msg.RESPONSE.cls
    return cls(
        topics=[cls.CreatableTopicResult(name=n, error_code=c, error_message=m) for n, c, m in results]
    )


def delete_topics_body(*results: tuple[str, int, str | None]) -> Any:
    cls: Any = delete_topics_msg.RESPONSE.cls
    return cls(
        responses=[cls.DeletableTopicResult(name=n, error_code=c, error_message=m) for n, c, m in results]
    )


def create_partitions_body(*results: tuple[str, int, str | None]) -> Any:
    cls: Any = create_partitions_msg.RESPONSE.cls
    return cls(
        results=[
            cls.CreatePartitionsTopicResult(name=n, error_code=c, error_message=m) for n, c, m in results
        ]
    )


def alter_configs_body(*results: tuple[int, str, int, str | None]) -> Any:
    """(resource type, name, error code, message) per resource."""
    cls: Any = iac_msg.RESPONSE.cls
    return cls(
        responses=[
            cls.AlterConfigsResourceResponse(error_code=c, error_message=m, resource_type=t, resource_name=n)
            for t, n, c, m in results
        ]
    )


def elect_leaders_body(results: Mapping[tuple[str, int], tuple[int, str | None]], error_code: int = 0) -> Any:
    cls: Any = elect_leaders_msg.RESPONSE.cls
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), (code, message) in sorted(results.items()):
        by_topic.setdefault(topic, []).append(
            cls.ReplicaElectionResult.PartitionResult(
                partition_id=partition, error_code=code, error_message=message
            )
        )
    return cls(
        error_code=error_code,
        replica_election_results=[
            cls.ReplicaElectionResult(topic=t, partition_result=p) for t, p in by_topic.items()
        ],
    )


# -----------------------------------------------------------------------------------------------
# Answers that look at the request


def metadata_answer(
    brokers: Sequence[FakeBroker | tuple[int, str, int, str | None]],
    controller_id: int,
    topics: Sequence[Topic] = (),
) -> Callable[[InboundRequest], Any]:
    """Metadata as a broker answers it: all topics for null, none for [], else those named (an
    unknown name gets UNKNOWN_TOPIC_OR_PARTITION) or, v12+, those with the ids asked for."""

    def answer(req: InboundRequest) -> Any:
        asked = req.body.topics
        if asked is None:
            chosen = list(topics)
        else:
            chosen = []
            for wanted in asked:
                match = [
                    t
                    for t in topics
                    if (wanted.name is not None and t.name == wanted.name)
                    or (wanted.name is None and t.topic_id == wanted.topic_id)
                ]
                if match:
                    chosen.extend(match)
                else:
                    chosen.append(Topic(wanted.name, uuid.UUID(int=0), [], error_code=3))
        return metadata_body(brokers, controller_id, chosen)

    return answer


def configs_answer(
    configs: Mapping[tuple[int, str], Sequence[ConfigRow]],
) -> Callable[[InboundRequest], Any]:
    """DescribeConfigs over ``configs``: a resource it does not hold gets UNKNOWN_TOPIC_OR_PARTITION."""

    def answer(req: InboundRequest) -> Any:
        results: dict[tuple[int, str], Sequence[ConfigRow] | tuple[int, str]] = {}
        for r in req.body.resources:
            key = (r.resource_type, r.resource_name)
            results[key] = configs.get(key, (3, f"Topic {r.resource_name} does not exist."))
        return describe_configs_body(results)

    return answer
