"""Hostile input against the data APIs of running brokers (1 controller + 3 broker processes).

Produce, Fetch, ListOffsets and OffsetForLeaderEpoch requests that a well-behaved client never
sends, over raw sockets (frames built with ``encode_request``, or by hand). Each test asserts the
error code Kafka 4.x answers (``KafkaApis.handleProduceRequest``, ``ProduceRequest.validateRecords``,
``UnifiedLog.analyzeAndValidateRecords``, ``LogValidator.validateBatch``, ``Partition.fetchRecords``,
``FetchParams.fetchOnlyLeader``, ``ReplicaManager.appendRecords``), then that nothing was written
where nothing should be (the leader's log end, read with a debugging ListOffsets, and every replica's
segment files), that the leader still takes a normal produce and serves it back in a fetch, and that
every broker is still running with the same copy of the partition.

Where kraft answered differently from Kafka (a cut batch, the topic id of an unknown-topic answer, a
consumer fetching from a follower at v11+, a non-replica fetcher naming the current epoch) it was
fixed; the one deliberate departure (trailing bytes after a whole batch are refused, not trimmed)
says so in its test and in docs/dataplane.md.

The module's partition ``hostile-0`` (replication factor 3, ``max.message.bytes`` 2048) has its
leader stopped and restarted once at setup, so its leader epoch is 1 and an epoch "from the past"
(0) exists to be fenced.
"""

from __future__ import annotations

import signal
import socket
import struct
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from local_cluster import LocalCluster

from kraft.client.connection import Address
from kraft.protocol.api import Api, decode_response, encode_request
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import (
    create_topics,
    fetch,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    produce,
)
from kraft.records.batch import SimpleRecord, build_batch, iter_batches

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), pytest.mark.xdist_group("dataplane-bad-input")]

TOPIC = "hostile"
NARROW = "narrow"  # replication factor 2: one broker is not a replica
MAX_MESSAGE_BYTES = 2048
DEBUGGING_REPLICA_ID = -2  # ListOffsets latest from this id is the log end, not the high watermark
INT32_MAX = 2**31 - 1

FETCH = fetch.CLIENT_API  # the Fetch served on broker listeners (4-17)


class Conn:
    """A blocking connection speaking frames to one broker listener."""

    def __init__(self, address: Address) -> None:
        self.sock = socket.create_connection((address.host, address.port), timeout=10)
        self.decoder = FrameDecoder()
        self.frames: list[bytes] = []
        self.next_id = 1

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, api: Api, version: int, body: Any) -> int:
        cid = self.next_id
        self.next_id += 1
        self.send_raw(frame(encode_request(api, version, cid, body)))
        return cid

    def response(self, api: Api, version: int) -> tuple[int, Any]:
        while not self.frames:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed by the server")
            self.frames.extend(self.decoder.feed(data))
        return decode_response(self.frames.pop(0), api, version)

    def call(self, api: Api, version: int, body: Any) -> Any:
        cid = self.send(api, version, body)
        got, response = self.response(api, version)
        assert got == cid
        return response

    def closed_by_server(self) -> bool:
        try:
            return self.sock.recv(65536) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


@dataclass(frozen=True)
class Part:
    """What the metadata says of one partition."""

    topic: str
    topic_id: uuid.UUID
    leader: int
    epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]

    @property
    def followers(self) -> list[int]:
        return [r for r in self.replicas if r != self.leader]


@dataclass
class World:
    cluster: LocalCluster
    conns: dict[int, Conn]

    def conn(self, broker: int) -> Conn:
        return self.conns[broker]

    def fresh(self, broker: int) -> Conn:
        return Conn(self.cluster.broker_address(broker))


def describe(conn: Conn, topic: str) -> Part | None:
    cls: Any = metadata.REQUEST.cls
    body = cls(topics=[cls.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
    (t,) = conn.call(metadata.API, 12, body).topics
    if t.error_code != ErrorCode.NONE or not t.partitions:
        return None
    (p,) = t.partitions
    if p.leader_id < 0:
        return None
    return Part(topic, t.topic_id, p.leader_id, p.leader_epoch, tuple(p.replica_nodes), tuple(p.isr_nodes))


def settled(world: World, topic: str, min_epoch: int = 0) -> Part:
    """The partition once every running broker's metadata agrees on a leader, epoch and full ISR."""

    def probe() -> Part | None:
        views = set()
        for b in world.cluster.broker_ids:
            conn = world.fresh(b)
            try:
                views.add(describe(conn, topic))
            finally:
                conn.close()
        if len(views) != 1:
            return None
        (view,) = views
        ok = view is not None and view.epoch >= min_epoch and set(view.isr) == set(view.replicas)
        return view if ok else None

    return world.cluster.wait_for(f"{topic}-0 settled at epoch >= {min_epoch}", probe, timeout_s=30)


def create(conn: Conn, name: str, rf: int, configs: dict[str, str]) -> None:
    cls: Any = create_topics.REQUEST.cls
    topic = cls.CreatableTopic(
        name=name,
        num_partitions=1,
        replication_factor=rf,
        configs=[cls.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
    )
    (result,) = conn.call(create_topics.API, 7, cls(topics=[topic], timeout_ms=15_000)).topics
    assert result.error_code == ErrorCode.NONE, result.error_message


# ---------------------------------------------------------------------------------------------------
# Request builders


def batch(*values: bytes) -> bytes:
    return build_batch([SimpleRecord(value=v) for v in values], timestamp_ms=int(time.time() * 1000))


def legacy_message(magic: int, value: bytes) -> bytes:
    """One uncompressed message of the pre-0.11 formats (v0 or v1), offset 0, CRC-32 valid."""
    body = struct.pack(">bb", magic, 0)
    if magic == 1:
        body += struct.pack(">q", int(time.time() * 1000))
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value  # null key
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", 0, len(message)) + message


def produce_request(
    part: Part, records: bytes | None, *, acks: int = -1, index: int = 0, **topic: Any
) -> Any:
    cls: Any = produce.REQUEST.cls
    names = topic or {"name": part.topic, "topic_id": part.topic_id}
    data = cls.TopicProduceData.PartitionProduceData(index=index, records=records)
    return cls(
        transactional_id=None,
        acks=acks,
        timeout_ms=15_000,
        topic_data=[cls.TopicProduceData(partition_data=[data], **names)],
    )


def produce_to(conn: Conn, request: Any, version: int = 12) -> Any:
    """The one partition's answer."""
    return only_partition(conn.call(produce.API, version, request))


def only_partition(response: Any) -> Any:
    (t,) = response.responses
    (p,) = t.partition_responses
    return p


def fetch_request(
    part: Part,
    offset: int,
    *,
    version: int = 17,
    epoch: int = -1,
    replica: int = -1,
    replica_epoch: int = -1,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
    max_bytes: int = 1 << 20,
    partition_max_bytes: int = 1 << 20,
    topic_id: uuid.UUID | None = None,
    topic: str | None = None,
) -> Any:
    cls: Any = fetch.REQUEST.cls
    fp = cls.FetchTopic.FetchPartition(
        partition=0,
        current_leader_epoch=epoch,
        fetch_offset=offset,
        last_fetched_epoch=-1,
        log_start_offset=-1,
        partition_max_bytes=partition_max_bytes,
    )
    ft = cls.FetchTopic(
        topic=topic if topic is not None else part.topic,
        topic_id=topic_id if topic_id is not None else part.topic_id,
        partitions=[fp],
    )
    kwargs: dict[str, Any] = {}
    if version >= 15:
        kwargs["replica_state"] = cls.ReplicaState(replica_id=replica, replica_epoch=replica_epoch)
    else:
        kwargs["replica_id"] = replica
    return cls(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[ft],
        forgotten_topics_data=[],
        rack_id="",
        **kwargs,
    )


def fetch_row(conn: Conn, request: Any, version: int = 17) -> Any:
    response = conn.call(FETCH, version, request)
    assert response.error_code == ErrorCode.NONE
    (t,) = response.responses
    (row,) = t.partitions
    return row


def list_offsets_row(
    conn: Conn, topic: str, *, index: int = 0, epoch: int = -1, timestamp: int = -1, replica: int = -1
) -> Any:
    cls: Any = list_offsets.REQUEST.cls
    t = cls.ListOffsetsTopic(
        name=topic,
        partitions=[
            cls.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=index, current_leader_epoch=epoch, timestamp=timestamp, max_num_offsets=1
            )
        ],
    )
    response = conn.call(list_offsets.API, 7, cls(replica_id=replica, isolation_level=0, topics=[t]))
    ((row,),) = [r.partitions for r in response.topics]
    return row


def epoch_row(conn: Conn, topic: str, *, index: int = 0, current: int = -1, wanted: int = 0) -> Any:
    cls: Any = offset_for_leader_epoch.REQUEST.cls
    t = cls.OffsetForLeaderTopic(
        topic=topic,
        partitions=[
            cls.OffsetForLeaderTopic.OffsetForLeaderPartition(
                partition=index, current_leader_epoch=current, leader_epoch=wanted
            )
        ],
    )
    response = conn.call(offset_for_leader_epoch.API, 4, cls(replica_id=-1, topics=[t]))
    ((row,),) = [r.partitions for r in response.topics]
    return row


# ---------------------------------------------------------------------------------------------------
# Fixtures and the checks every test ends with


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    cluster = LocalCluster(tmp_path_factory.mktemp("dataplane-bad-input"), 1, brokers=3)
    conns: dict[int, Conn] = {}
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        cluster.wait_for_brokers()
        w = World(cluster, conns)
        first = cluster.broker_ids[0]
        setup = w.fresh(first)
        create(setup, TOPIC, 3, {"max.message.bytes": str(MAX_MESSAGE_BYTES)})
        create(setup, NARROW, 2, {})
        part = settled(w, TOPIC)
        settled(w, NARROW)
        setup.close()
        writer = w.fresh(part.leader)
        assert produce_to(writer, produce_request(part, batch(b"a", b"b"))).error_code == ErrorCode.NONE
        writer.close()
        # Move the leadership once (controlled shutdown, restart) so that epoch 0 is in the past.
        cluster.kill(part.leader, signal.SIGTERM)
        cluster.start(part.leader)
        cluster.wait_for_brokers()
        settled(w, TOPIC, min_epoch=part.epoch + 1)
        settled(w, NARROW)
        for b in cluster.broker_ids:
            conns[b] = w.fresh(b)
        yield w
    finally:
        for c in conns.values():
            c.close()
        cluster.stop_all()


@pytest.fixture
def part(world: World) -> Iterator[Part]:
    """``hostile-0`` as the metadata has it; after the test, the checks of the module docstring."""
    p = settled(world, TOPIC, min_epoch=1)
    before = log_end(world, p)
    yield p
    assert_untouched_and_serving(world, p, before)


def log_end(world: World, part: Part) -> int:
    row = list_offsets_row(world.conn(part.leader), part.topic, replica=DEBUGGING_REPLICA_ID)
    assert row.error_code == ErrorCode.NONE
    return int(row.offset)


def assert_untouched_and_serving(world: World, part: Part, before: int, written: int = 0) -> None:
    """The log end moved by exactly ``written``; a normal produce and fetch work; every broker runs
    and every replica holds the same records as the leader."""
    cluster = world.cluster
    assert all(cluster.is_running(b) for b in cluster.broker_ids), cluster.log_tails()
    assert log_end(world, part) == before + written
    leader = world.conn(part.leader)
    value = f"check-{time.monotonic_ns()}".encode()
    ok = produce_to(leader, produce_request(part, batch(value)))
    assert (ok.error_code, ok.base_offset) == (ErrorCode.NONE, before + written)
    row = fetch_row(leader, fetch_request(part, before + written, epoch=part.epoch))
    assert row.error_code == ErrorCode.NONE
    assert [r.value for b in iter_batches(bytes(row.records)) for r in b.records] == [value]
    expected = cluster.partition_records(part.leader, part.topic, 0)
    assert [o for o, _, _ in expected] == list(range(before + written + 1))
    for follower in part.followers:
        cluster.wait_for(
            f"broker {follower} to hold the leader's copy",
            lambda f=follower: cluster.partition_records(f, part.topic, 0) == expected,
            timeout_s=10,
        )
    assert settled(world, part.topic) == part  # same leader, epoch and full ISR


# ---------------------------------------------------------------------------------------------------
# Produce


def test_produce_with_a_wrong_crc_is_corrupt_message(world: World, part: Part) -> None:
    data = bytearray(batch(b"will-be-flipped"))
    data[-1] ^= 0xFF  # inside the records, which the CRC covers
    answer = produce_to(world.conn(part.leader), produce_request(part, bytes(data)))
    assert answer.error_code == ErrorCode.CORRUPT_MESSAGE


@pytest.mark.parametrize("magic", [0, 1])
def test_produce_of_a_legacy_message_set_is_invalid_record(world: World, part: Part, magic: int) -> None:
    # Kafka 4: ProduceRequest.validateRecords (v3+) refuses any first batch whose magic is not 2.
    answer = produce_to(world.conn(part.leader), produce_request(part, legacy_message(magic, b"old")))
    assert answer.error_code == ErrorCode.INVALID_RECORD


def test_produce_above_max_message_bytes_is_message_too_large(world: World, part: Part) -> None:
    big = batch(bytes(range(256)) * 12)  # uncompressed, above the topic's 2048
    assert len(big) > MAX_MESSAGE_BYTES
    answer = produce_to(world.conn(part.leader), produce_request(part, big))
    assert answer.error_code == ErrorCode.MESSAGE_TOO_LARGE


def test_produce_of_two_batches_in_one_partition_is_invalid_record(world: World, part: Part) -> None:
    answer = produce_to(world.conn(part.leader), produce_request(part, batch(b"one") + batch(b"two")))
    assert answer.error_code == ErrorCode.INVALID_RECORD


def test_produce_of_a_batch_with_a_nonzero_base_offset_is_invalid_record(world: World, part: Part) -> None:
    data = build_batch([SimpleRecord(value=b"x")], base_offset=7, timestamp_ms=int(time.time() * 1000))
    answer = produce_to(world.conn(part.leader), produce_request(part, data))
    assert answer.error_code == ErrorCode.INVALID_RECORD


def test_produce_with_empty_records_is_invalid_record(world: World, part: Part) -> None:
    answer = produce_to(world.conn(part.leader), produce_request(part, b""))
    assert answer.error_code == ErrorCode.INVALID_RECORD


@pytest.mark.parametrize("keep", [20, -5], ids=["header-cut", "records-cut"])
def test_produce_of_a_truncated_batch_is_invalid_record(world: World, part: Part, keep: int) -> None:
    data = batch(b"truncated", b"batch")[:keep]
    answer = produce_to(world.conn(part.leader), produce_request(part, data))
    assert answer.error_code == ErrorCode.INVALID_RECORD


def test_produce_of_a_batch_with_trailing_partial_bytes_is_refused_whole(world: World) -> None:
    # Beyond Kafka, on purpose: Kafka trims the trailing bytes (UnifiedLog.trimInvalidBytes) and
    # appends the whole batch; kraft refuses the request, as no client sends trailing garbage and a
    # request that carries some is not one to half-trust (docs/dataplane.md).
    part = settled(world, TOPIC, min_epoch=1)
    before = log_end(world, part)
    data = batch(b"whole") + batch(b"partial")[:30]
    answer = produce_to(world.conn(part.leader), produce_request(part, data))
    assert answer.error_code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD)
    assert_untouched_and_serving(world, part, before, written=0)


def test_a_control_batch_from_a_client_is_invalid_record(world: World, part: Part) -> None:
    control = build_batch(
        [SimpleRecord(key=b"\x00\x00\x00\x00", value=b"\x00\x00\x00\x00\x00\x00")],
        timestamp_ms=int(time.time() * 1000),
        is_control=True,
    )
    answer = produce_to(world.conn(part.leader), produce_request(part, control))
    assert answer.error_code == ErrorCode.INVALID_RECORD


@pytest.mark.parametrize("acks", [5, -2, 2])
def test_produce_with_invalid_acks_is_invalid_required_acks(world: World, part: Part, acks: int) -> None:
    answer = produce_to(world.conn(part.leader), produce_request(part, batch(b"acks"), acks=acks))
    assert answer.error_code == ErrorCode.INVALID_REQUIRED_ACKS


def test_produce_to_an_unknown_topic_name_is_unknown_topic_and_creates_nothing(
    world: World, part: Part
) -> None:
    conn = world.conn(part.leader)
    answer = produce_to(conn, produce_request(part, batch(b"x"), name="no-such-topic"), version=12)
    assert answer.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert describe(conn, "no-such-topic") is None  # produce never auto-creates


def test_produce_to_an_unknown_topic_id_is_unknown_topic_id(world: World, part: Part) -> None:
    unknown = uuid.uuid4()
    request = produce_request(part, batch(b"x"), topic_id=unknown, name="")
    response = world.conn(part.leader).call(produce.API, 13, request)
    assert only_partition(response).error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_produce_to_an_unknown_topic_id_echoes_the_id(world: World, part: Part) -> None:
    unknown = uuid.uuid4()
    request = produce_request(part, batch(b"x"), topic_id=unknown, name="")
    response = world.conn(part.leader).call(produce.API, 13, request)
    assert response.responses[0].topic_id == unknown


@pytest.mark.parametrize("index", [-1, 1, INT32_MAX])
def test_produce_to_a_partition_that_does_not_exist_is_unknown_topic_or_partition(
    world: World, part: Part, index: int
) -> None:
    answer = produce_to(world.conn(part.leader), produce_request(part, batch(b"x"), index=index))
    assert (answer.index, answer.error_code) == (index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


@pytest.mark.parametrize("version", [9, 12, 13])
def test_produce_to_a_follower_is_not_leader_with_the_leader_hint_from_v10(
    world: World, part: Part, version: int
) -> None:
    follower = part.followers[0]
    whole = world.conn(follower).call(produce.API, version, produce_request(part, batch(b"x")))
    answer = only_partition(whole)
    assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    if version >= 10:  # KIP-951
        assert (answer.current_leader.leader_id, answer.current_leader.leader_epoch) == (
            part.leader,
            part.epoch,
        )
        address = world.cluster.broker_address(part.leader)
        assert [(e.node_id, e.host, e.port) for e in whole.node_endpoints] == [
            (part.leader, address.host, address.port)
        ]
    assert world.cluster.partition_records(follower, part.topic, 0) == world.cluster.partition_records(
        part.leader, part.topic, 0
    )


@pytest.mark.parametrize("cut", ["body-cut-short", "garbage-body"])
def test_a_bad_produce_frame_closes_only_its_connection(world: World, part: Part, cut: str) -> None:
    bystander = world.fresh(part.leader)
    assert describe(bystander, TOPIC) == part  # in use before the bad frame arrives
    whole = encode_request(produce.API, 12, 1, produce_request(part, batch(b"never-written")))
    bad_bytes = whole[:-12] if cut == "body-cut-short" else whole[:20] + b"\xff" * (len(whole) - 20)
    bad = world.fresh(part.leader)
    try:
        bad.send_raw(frame(bad_bytes))
        assert bad.closed_by_server()
        assert describe(bystander, TOPIC) == part
    finally:
        bad.close()
        bystander.close()


# ---------------------------------------------------------------------------------------------------
# Fetch


@pytest.mark.parametrize("where", ["negative", "past-the-end"])
def test_fetch_outside_the_log_is_offset_out_of_range(world: World, part: Part, where: str) -> None:
    offset = -1 if where == "negative" else log_end(world, part) + 1
    row = fetch_row(world.conn(part.leader), fetch_request(part, offset, epoch=part.epoch))
    assert row.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert bytes(row.records or b"") == b""


def test_fetch_of_an_unknown_topic_id_is_unknown_topic_id(world: World, part: Part) -> None:
    row = fetch_row(world.conn(part.leader), fetch_request(part, 0, topic_id=uuid.uuid4()))
    assert row.error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_fetch_of_an_unknown_topic_name_is_unknown_topic_or_partition(world: World, part: Part) -> None:
    row = fetch_row(world.conn(part.leader), fetch_request(part, 0, version=12, topic="no-such-topic"), 12)
    assert row.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize(
    ("delta", "code"), [(-1, ErrorCode.FENCED_LEADER_EPOCH), (1, ErrorCode.UNKNOWN_LEADER_EPOCH)]
)
def test_fetch_with_a_stale_or_future_leader_epoch(world: World, part: Part, delta: int, code: int) -> None:
    assert part.epoch >= 1
    row = fetch_row(world.conn(part.leader), fetch_request(part, 0, epoch=part.epoch + delta))
    assert row.error_code == code
    assert bytes(row.records or b"") == b""


def test_consumer_fetch_from_a_follower_before_v11_is_not_leader(world: World, part: Part) -> None:
    # FetchParams.fetchOnlyLeader: a consumer without client metadata (Fetch < v11) reads the leader only.
    row = fetch_row(world.conn(part.followers[0]), fetch_request(part, 0, version=10), 10)
    assert row.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_consumer_fetch_from_a_follower_at_v11_plus_is_served(world: World, part: Part) -> None:
    row = fetch_row(world.conn(part.followers[0]), fetch_request(part, 0, epoch=part.epoch))
    assert row.error_code == ErrorCode.NONE
    assert [r.offset for b in iter_batches(bytes(row.records)) for r in b.records][:2] == [0, 1]


def test_replica_fetch_from_a_broker_that_is_not_a_replica(world: World) -> None:
    narrow = settled(world, NARROW)
    outsider = next(b for b in world.cluster.broker_ids if b not in narrow.replicas)
    conn = world.conn(narrow.leader)
    for replica in (outsider, 999):
        # No current leader epoch: Kafka's followerReplicaOrThrow answers NOT_LEADER_OR_FOLLOWER.
        row = fetch_row(conn, fetch_request(narrow, 0, replica=replica, replica_epoch=1))
        assert row.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert bytes(row.records or b"") == b""
    assert settled(world, NARROW) == narrow  # the outsider joined no ISR


def test_replica_fetch_from_a_non_replica_with_the_current_epoch_is_unknown_leader_epoch(
    world: World,
) -> None:
    narrow = settled(world, NARROW)
    outsider = next(b for b in world.cluster.broker_ids if b not in narrow.replicas)
    row = fetch_row(
        world.conn(narrow.leader),
        fetch_request(narrow, 0, epoch=narrow.epoch, replica=outsider, replica_epoch=1),
    )
    assert row.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


def test_fetch_with_max_bytes_zero_still_returns_one_batch(world: World, part: Part) -> None:
    # KIP-74: the first partition always gets at least one whole batch.
    row = fetch_row(
        world.conn(part.leader), fetch_request(part, 0, epoch=part.epoch, max_bytes=0, partition_max_bytes=0)
    )
    assert row.error_code == ErrorCode.NONE
    batches = list(iter_batches(bytes(row.records)))
    assert len(batches) == 1 and batches[0].header.base_offset == 0


def test_fetch_with_a_huge_max_wait_is_answered_by_new_data(world: World) -> None:
    part = settled(world, TOPIC, min_epoch=1)
    leader = world.conn(part.leader)
    # Data present: answered at once.
    row = fetch_row(leader, fetch_request(part, 0, epoch=part.epoch, max_wait_ms=INT32_MAX, min_bytes=1))
    assert row.error_code == ErrorCode.NONE and row.records
    # At the end: held until a record arrives (then the check's produce below is what it returns).
    end = log_end(world, part)
    waiting = world.fresh(part.leader)
    try:
        waiting.send(
            FETCH, 17, fetch_request(part, end, epoch=part.epoch, max_wait_ms=INT32_MAX, min_bytes=1)
        )
        waiting.sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            waiting.response(FETCH, 17)
        waiting.sock.settimeout(10)
        assert produce_to(leader, produce_request(part, batch(b"wake"))).error_code == ErrorCode.NONE
        _, answer = waiting.response(FETCH, 17)
        (row,) = answer.responses[0].partitions
        assert [r.value for b in iter_batches(bytes(row.records)) for r in b.records] == [b"wake"]
    finally:
        waiting.close()
    assert_untouched_and_serving(world, part, end, written=1)


# ---------------------------------------------------------------------------------------------------
# ListOffsets and OffsetForLeaderEpoch


@pytest.mark.parametrize(("topic", "index"), [("no-such-topic", 0), (TOPIC, -1), (TOPIC, 5)])
def test_list_offsets_of_an_unknown_partition(world: World, part: Part, topic: str, index: int) -> None:
    row = list_offsets_row(world.conn(part.leader), topic, index=index)
    assert (row.error_code, row.offset) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)


@pytest.mark.parametrize(
    ("delta", "code"), [(-1, ErrorCode.FENCED_LEADER_EPOCH), (1, ErrorCode.UNKNOWN_LEADER_EPOCH)]
)
def test_list_offsets_with_a_bad_leader_epoch(world: World, part: Part, delta: int, code: int) -> None:
    row = list_offsets_row(world.conn(part.leader), TOPIC, epoch=part.epoch + delta)
    assert (row.error_code, row.offset) == (code, -1)


def test_list_offsets_from_a_follower_is_not_leader(world: World, part: Part) -> None:
    row = list_offsets_row(world.conn(part.followers[0]), TOPIC)
    assert row.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


@pytest.mark.parametrize(("topic", "index"), [("no-such-topic", 0), (TOPIC, -1), (TOPIC, 5)])
def test_offset_for_leader_epoch_of_an_unknown_partition(
    world: World, part: Part, topic: str, index: int
) -> None:
    row = epoch_row(world.conn(part.leader), topic, index=index)
    assert (row.error_code, row.end_offset) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)


@pytest.mark.parametrize(
    ("delta", "code"), [(-1, ErrorCode.FENCED_LEADER_EPOCH), (1, ErrorCode.UNKNOWN_LEADER_EPOCH)]
)
def test_offset_for_leader_epoch_with_a_bad_current_epoch(
    world: World, part: Part, delta: int, code: int
) -> None:
    row = epoch_row(world.conn(part.leader), TOPIC, current=part.epoch + delta, wanted=0)
    assert (row.error_code, row.end_offset) == (code, -1)


def test_offset_for_leader_epoch_from_a_follower_is_not_leader(world: World, part: Part) -> None:
    row = epoch_row(world.conn(part.followers[0]), TOPIC, current=part.epoch, wanted=0)
    assert row.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_offset_for_leader_epoch_of_epochs_beyond_and_at_the_log(world: World, part: Part) -> None:
    conn = world.conn(part.leader)
    # LeaderEpochFileCache.endOffsetFor: an epoch above the latest is undefined, not an error.
    beyond = epoch_row(conn, TOPIC, current=part.epoch, wanted=part.epoch + 10)
    assert (beyond.error_code, beyond.leader_epoch, beyond.end_offset) == (ErrorCode.NONE, -1, -1)
    # Epoch 0 ended where epoch 1 began: after the two records written at setup.
    first = epoch_row(conn, TOPIC, current=part.epoch, wanted=0)
    assert (first.error_code, first.leader_epoch, first.end_offset) == (ErrorCode.NONE, 0, 2)
    # The current epoch ends at the log end.
    current = epoch_row(conn, TOPIC, current=part.epoch, wanted=part.epoch)
    assert (current.error_code, current.leader_epoch, current.end_offset) == (
        ErrorCode.NONE,
        part.epoch,
        log_end(world, part),
    )
