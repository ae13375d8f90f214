"""In-process brokers with in-memory partition logs, for the data clients' and console tools' tests.

Each ``DataBroker`` is the project's real ``kraft.net.server.KafkaServer`` on 127.0.0.1 port 0 (so
framing, ApiVersions and every codec are the real ones). The brokers of one ``DataCluster`` share
the topics: each partition has a leader, a leader epoch and a log of record batches; the leader
answers Produce (offsets assigned by rewriting the batch header, acks=0 answered with nothing),
Fetch (from the batch holding the offset, at least one batch, ``partition_max_bytes`` otherwise,
waiting ``max_wait_ms`` when there is nothing), ListOffsets (earliest, latest, max timestamp, by
timestamp) and Metadata (brokers, leaders, epochs, topic ids) like a Kafka broker; any other broker
answers NOT_LEADER_OR_FOLLOWER. No replication: the high watermark is the log end.

Tests steer it: ``move_leader`` (a new leader, epoch + 1), ``inject`` (the next answers of one API
for one partition carry a given error code), ``served`` (a broker advertising fewer versions). Every
request is recorded per broker.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kraft.net.server import PLAINTEXT_AUTH, InboundRequest, KafkaServer, ListenerAuth
from kraft.protocol.api import Api
from kraft.protocol.envelope import NO_RESPONSE
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import REGISTRY, list_offsets, metadata, produce
from kraft.protocol.messages import fetch as fetch_msg
from kraft.protocol.schema import Versions
from kraft.records.batch import RecordBatch, assign_offsets_and_epoch, decode_batch, iter_batches

API_VERSIONS, PRODUCE, FETCH, LIST_OFFSETS, METADATA = 18, 0, 1, 2, 3


@dataclass
class PartitionLog:
    leader: int
    epoch: int = 0
    batches: list[bytes] = field(default_factory=list)  # with offsets assigned
    end_offset: int = 0

    def decoded(self) -> Iterator[RecordBatch]:
        for raw in self.batches:
            yield decode_batch(raw)

    def values(self) -> list[bytes | None]:
        return [r.value for b in self.decoded() if not b.is_control for r in b.records]


@dataclass
class TopicState:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionLog]


class DataBroker:
    def __init__(self, cluster: DataCluster, node_id: int) -> None:
        self.cluster = cluster
        self.node_id = node_id
        self.port = 0
        self.server: KafkaServer | None = None
        self.received: list[InboundRequest] = []

    def requests(self, api_key: int) -> list[InboundRequest]:
        return [r for r in self.received if r.api.key == api_key]

    async def handle(self, req: InboundRequest) -> Any:
        self.received.append(req)
        key = req.api.key
        if key == METADATA:
            return self.cluster.metadata_answer(req)
        if key == PRODUCE:
            return self.cluster.produce_answer(self.node_id, req)
        if key == LIST_OFFSETS:
            return self.cluster.list_offsets_answer(self.node_id, req)
        if key == FETCH:
            answer = self.cluster.fetch_answer(self.node_id, req)
            if answer is None:  # nothing to read: a long poll, then the (empty) answer
                await asyncio.sleep(req.body.max_wait_ms / 1000)
                answer = self.cluster.fetch_answer(self.node_id, req, final=True)
            return answer
        raise RuntimeError(f"data broker {self.node_id} does not serve {req.api.name}")


class DataCluster:
    """Brokers 1..n sharing topics; use as a context manager."""

    def __init__(
        self, brokers: int = 3, served: dict[int, Versions] | None = None, auth: ListenerAuth | None = None
    ) -> None:
        """``served``: per API key, a narrower served range (e.g. Fetch 4-12: topics by name);
        ``auth``: the listeners' TLS and SASL (PLAINTEXT without)."""
        self.topics: dict[str, TopicState] = {}
        self.injected: dict[tuple[int, str, int], list[int]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        apis: dict[int, Api] = {k: REGISTRY[k] for k in (API_VERSIONS, PRODUCE, LIST_OFFSETS, METADATA)} | {
            FETCH: fetch_msg.CLIENT_API
        }
        for key, versions in (served or {}).items():
            apis[key] = dataclasses.replace(apis[key], served_versions=versions)
        self.brokers: list[DataBroker] = []
        for node_id in range(1, brokers + 1):
            broker = DataBroker(self, node_id)
            self.brokers.append(broker)

            async def start(b: DataBroker = broker) -> None:
                class Handler:
                    def handle(self, req: InboundRequest) -> Any:
                        return b.handle(req)

                b.server = KafkaServer(apis=apis, handler=Handler(), max_request_bytes=8 << 20)
                b.port = await b.server.listen("PLAINTEXT", "127.0.0.1", 0, auth=auth or PLAINTEXT_AUTH)

            asyncio.run_coroutine_threadsafe(start(), self._loop).result(10)

    def __enter__(self) -> DataCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for b in self.brokers:
            if b.server is not None:
                asyncio.run_coroutine_threadsafe(b.server.close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    # -- steering --------------------------------------------------------------------------

    def bootstrap(self, *ids: int) -> str:
        chosen = [b for b in self.brokers if not ids or b.node_id in ids]
        return ",".join(f"127.0.0.1:{b.port}" for b in chosen)

    def broker(self, node_id: int) -> DataBroker:
        return next(b for b in self.brokers if b.node_id == node_id)

    def create_topic(
        self, name: str, partitions: int = 3, leaders: Iterable[int] | None = None
    ) -> TopicState:
        ids = [b.node_id for b in self.brokers]
        chosen = list(leaders) if leaders is not None else [ids[i % len(ids)] for i in range(partitions)]
        topic = TopicState(
            name, uuid.UUID(int=len(self.topics) + 1 << 64 | 7), [PartitionLog(x) for x in chosen]
        )
        self.topics[name] = topic
        return topic

    def log(self, topic: str, partition: int) -> PartitionLog:
        return self.topics[topic].partitions[partition]

    def move_leader(self, topic: str, partition: int, new_leader: int) -> None:
        log = self.log(topic, partition)
        log.leader = new_leader
        log.epoch += 1

    def inject(self, api_key: int, topic: str, partition: int, *codes: int) -> None:
        """The next ``len(codes)`` answers of ``api_key`` for the partition carry these codes."""
        self.injected.setdefault((api_key, topic, partition), []).extend(codes)

    def append(self, topic: str, partition: int, batch: bytes) -> int:
        """Appends ``batch`` as a leader would (offsets, epoch); returns its base offset."""
        log = self.log(topic, partition)
        base = log.end_offset
        stamped = assign_offsets_and_epoch(batch, base, log.epoch)
        log.batches.append(stamped)
        log.end_offset = decode_batch(stamped).next_offset
        return base

    # -- answers -----------------------------------------------------------------------------

    def _injected(self, api_key: int, topic: str, partition: int) -> int:
        codes = self.injected.get((api_key, topic, partition))
        return codes.pop(0) if codes else ErrorCode.NONE

    def _partition(self, node_id: int, topic: str | None, partition: int) -> tuple[PartitionLog | None, int]:
        state = self.topics.get(topic or "")
        if state is None or not 0 <= partition < len(state.partitions):
            return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        log = state.partitions[partition]
        if log.leader != node_id:
            return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
        return log, ErrorCode.NONE

    def _name(self, version: int, name: str | None, topic_id: uuid.UUID, by_id_from: int) -> str | None:
        if version < by_id_from:
            return name
        return next((t.name for t in self.topics.values() if t.topic_id == topic_id), None)

    def metadata_answer(self, req: InboundRequest) -> Any:
        cls: Any = metadata.RESPONSE.cls
        asked = req.body.topics
        names = sorted(self.topics) if asked is None else [t.name for t in asked]
        topics = []
        for name in names:
            state = self.topics.get(name)
            if state is None:
                topics.append(
                    cls.MetadataResponseTopic(
                        error_code=3, name=name, topic_id=uuid.UUID(int=0), partitions=[]
                    )
                )
                continue
            partitions = [
                cls.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0,
                    partition_index=i,
                    leader_id=p.leader,
                    leader_epoch=p.epoch,
                    replica_nodes=[b.node_id for b in self.brokers],
                    isr_nodes=[b.node_id for b in self.brokers],
                    offline_replicas=[],
                )
                for i, p in enumerate(state.partitions)
            ]
            topics.append(
                cls.MetadataResponseTopic(
                    error_code=0, name=name, topic_id=state.topic_id, is_internal=False, partitions=partitions
                )
            )
        brokers = [
            cls.MetadataResponseBroker(node_id=b.node_id, host="127.0.0.1", port=b.port, rack=None)
            for b in self.brokers
        ]
        return cls(brokers=brokers, cluster_id="data-cluster", controller_id=1, topics=topics)

    def produce_answer(self, node_id: int, req: InboundRequest) -> Any:
        cls: Any = produce.RESPONSE.cls
        body = req.body
        responses = []
        for t in body.topic_data:
            name = self._name(req.version, t.name, t.topic_id, 13)
            parts = []
            for p in t.partition_data:
                log, code = self._partition(node_id, name, p.index)
                code = self._injected(PRODUCE, name or "", p.index) or code
                base = -1
                if code == ErrorCode.NONE and log is not None:
                    batches = list(iter_batches(p.records or b""))
                    if len(batches) != 1:
                        code = ErrorCode.CORRUPT_MESSAGE
                    else:
                        base = self.append(name or "", p.index, p.records)
                parts.append(
                    cls.TopicProduceResponse.PartitionProduceResponse(
                        index=p.index,
                        error_code=code,
                        base_offset=base,
                        log_append_time_ms=-1,
                        log_start_offset=0,
                    )
                )
            responses.append(
                cls.TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=parts)
            )
        if body.acks == 0:
            return NO_RESPONSE
        return cls(responses=responses)

    def fetch_answer(self, node_id: int, req: InboundRequest, *, final: bool = False) -> Any | None:
        cls: Any = fetch_msg.RESPONSE.cls
        body = req.body
        topics = []
        has_data = False
        for t in body.topics:
            name = self._name(req.version, t.topic, t.topic_id, 13)
            parts = []
            for p in t.partitions:
                log, code = self._partition(node_id, name, p.partition)
                code = self._injected(FETCH, name or "", p.partition) or code
                records = b""
                high_watermark = -1
                if code == ErrorCode.NONE and log is not None:
                    if 0 <= p.current_leader_epoch < log.epoch:
                        code = ErrorCode.FENCED_LEADER_EPOCH
                    elif p.fetch_offset > log.end_offset or p.fetch_offset < 0:
                        code = ErrorCode.OFFSET_OUT_OF_RANGE
                    else:
                        high_watermark = log.end_offset
                        chunks: list[bytes] = []
                        for raw in log.batches:
                            if decode_batch(raw).next_offset <= p.fetch_offset:
                                continue
                            if chunks and sum(map(len, chunks)) + len(raw) > p.partition_max_bytes:
                                break  # KIP-74: the first batch always, then up to the limit
                            chunks.append(raw)
                        records = b"".join(chunks)
                        has_data = has_data or bool(records)
                has_data = has_data or code != ErrorCode.NONE
                parts.append(
                    cls.FetchableTopicResponse.PartitionData(
                        partition_index=p.partition,
                        error_code=code,
                        high_watermark=high_watermark,
                        last_stable_offset=high_watermark,
                        log_start_offset=0,
                        aborted_transactions=None,
                        preferred_read_replica=-1,
                        records=records if code == ErrorCode.NONE else b"",
                    )
                )
            topics.append(cls.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=parts))
        if not has_data and not final and body.max_wait_ms > 0:
            return None
        return cls(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)

    def list_offsets_answer(self, node_id: int, req: InboundRequest) -> Any:
        cls: Any = list_offsets.RESPONSE.cls
        topics = []
        for t in req.body.topics:
            parts = []
            for p in t.partitions:
                log, code = self._partition(node_id, t.name, p.partition_index)
                code = self._injected(LIST_OFFSETS, t.name, p.partition_index) or code
                offset, timestamp = -1, -1
                if code == ErrorCode.NONE and log is not None:
                    offset, timestamp = _look_up(log, p.timestamp)
                parts.append(
                    cls.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(
                        partition_index=p.partition_index,
                        error_code=code,
                        old_style_offsets=[],
                        timestamp=timestamp,
                        offset=offset,
                        leader_epoch=-1 if log is None else log.epoch,
                    )
                )
            topics.append(cls.ListOffsetsTopicResponse(name=t.name, partitions=parts))
        return cls(throttle_time_ms=0, topics=topics)


def _look_up(log: PartitionLog, timestamp: int) -> tuple[int, int]:
    records = [r for b in log.decoded() for r in b.records]
    if timestamp == -2:
        return 0, -1
    if timestamp == -1:
        return log.end_offset, -1
    if timestamp == -3:
        if not records:
            return -1, -1
        best = max(records, key=lambda r: (r.timestamp, -r.offset))
        return best.offset, best.timestamp
    for r in records:
        if r.timestamp >= timestamp:
            return r.offset, r.timestamp
    return -1, -1
