"""The data plane's sans-IO core: three ``ReplicaManager``s on in-memory partition logs, wired by hand.

The harness plays the network (it hands each manager's Fetch requests to the leader and the answers
back), the clients (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch envelopes) and the controller
(it turns the leaders' ISR proposals into PartitionChangeRecords, or changes leaders). Time is a
number the test moves. Every rule of ``../shared/spec/dataplane.md`` section 5 that the manager holds
has a test here that fails when the rule is broken.
"""

from __future__ import annotations

import itertools
import struct
import uuid
from typing import Any

import pytest

from kraft.broker.replica_manager import ReplicaConfig, ReplicaManager
from kraft.metadata.configs import ConfigResolver
from kraft.metadata.image import MetadataLoader
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, encode_record, make_record
from kraft.protocol.envelope import NO_RESPONSE, ApiRequest, ApiResponse, ClientEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import describe_log_dirs, fetch, list_offsets, offset_for_leader_epoch, produce
from kraft.records.batch import Compression, build_value_batch, iter_batches
from kraft.storage.memory_partition_log import MemoryPartitionLog

T = MetadataRecordType
E = ErrorCode
TOPIC_ID = uuid.UUID(int=0x7011)
LISTENER = "PLAINTEXT"
LAG_MS = 1_000
PR: Any = produce.REQUEST.cls
FR: Any = fetch.REQUEST.cls
LO: Any = list_offsets.REQUEST.cls
DLD: Any = describe_log_dirs.REQUEST.cls
OE: Any = offset_for_leader_epoch.REQUEST.cls


class MemoryLogs:
    """The ``LogProvider`` of one broker, in memory."""

    def __init__(self, segment_bytes: int = 1 << 30) -> None:
        self.logs: dict[tuple[str, int], MemoryPartitionLog] = {}
        self.deleted: list[tuple[str, int]] = []
        self.segment_bytes = segment_bytes

    def get_or_create(self, topic: str, partition: int, topic_id: uuid.UUID) -> MemoryPartitionLog:
        key = (topic, partition)
        if key not in self.logs:
            self.logs[key] = MemoryPartitionLog(topic, partition, topic_id, segment_bytes=self.segment_bytes)
        return self.logs[key]

    def delete(self, topic: str, partition: int) -> None:
        self.logs.pop((topic, partition), None)
        self.deleted.append((topic, partition))

    def checkpoint(self) -> None:
        pass

    def log_dir_states(self) -> list[tuple[str, int, int, list[MemoryPartitionLog]]]:
        return [("/data/a", 1000, 600, [self.logs[key] for key in sorted(self.logs)])]


def register(broker_id: int) -> ApiMessageAndVersion:
    data: Any = make_record(T.REGISTER_BROKER).data
    return make_record(
        T.REGISTER_BROKER,
        broker_id=broker_id,
        broker_epoch=100 + broker_id,
        incarnation_id=uuid.UUID(int=broker_id),
        end_points=[
            type(data).BrokerEndpoint(name=LISTENER, host=f"b{broker_id}", port=9092, security_protocol=0)
        ],
        features=[],
        rack=None,
        fenced=False,
        in_controlled_shutdown=False,
        log_dirs=[],
    )


def partition_record(
    topic_id: uuid.UUID, index: int, *, isr: tuple[int, ...] = (1, 2, 3), leader: int = 1
) -> ApiMessageAndVersion:
    """A PartitionRecord of a partition on brokers [1, 2, 3], led by broker 1 (or ``leader``) in
    epoch 0."""
    return make_record(
        T.PARTITION,
        partition_id=index,
        topic_id=topic_id,
        replicas=[1, 2, 3],
        isr=list(isr),
        removing_replicas=[],
        adding_replicas=[],
        leader=leader,
        leader_epoch=0,
        partition_epoch=0,
    )


class Cluster:
    """Three brokers hosting topic ``t`` (one partition, replicas [1, 2, 3], leader 1)."""

    def __init__(
        self,
        *,
        isr: tuple[int, ...] = (1, 2, 3),
        min_isr: int = 2,
        segment_bytes: int = 1 << 30,
        broker_config: dict[str, str] | None = None,
    ) -> None:
        self.now = 0
        self.loader = MetadataLoader()
        self.offset = 0
        self.logs = {b: MemoryLogs(segment_bytes) for b in (1, 2, 3)}
        self.managers: dict[int, ReplicaManager] = {}
        self.down: set[int] = set()  # brokers whose fetches and answers are dropped
        self.answers: dict[int, Any] = {}
        self._client_ids = itertools.count(1)
        for b in (1, 2, 3):
            m = ReplicaManager(
                node_id=b,
                logs=self.logs[b],
                resolver=ConfigResolver(
                    {"log.segment.bytes": str(segment_bytes), **(broker_config or {})}, b
                ),
                config=ReplicaConfig(
                    replica_lag_time_max_ms=LAG_MS,
                    fetch_wait_max_ms=100,
                    fetch_backoff_ms=50,
                    check_quiet=True,
                ),
                next_correlation_id=itertools.count(1).__next__,
            )
            self.managers[b] = m
            self.loader.install_publisher(m.publish)
            m.activate(0)
        self.load(
            *(register(b) for b in (1, 2, 3)),
            make_record(T.TOPIC, name="t", topic_id=TOPIC_ID),
            make_record(
                T.CONFIG, resource_type=2, resource_name="t", name="min.insync.replicas", value=str(min_isr)
            ),
            partition_record(TOPIC_ID, 0, isr=isr),
        )

    # -- the controller --------------------------------------------------------------------------

    def load(self, *records: ApiMessageAndVersion) -> None:
        for m in self.managers.values():
            m.now_ms = self.now
        self.loader.handle_batch(self.offset, 1, self.now, [encode_record(r) for r in records])
        self.offset += len(records)

    def change(self, **fields: Any) -> None:
        self.load(make_record(T.PARTITION_CHANGE, partition_id=0, topic_id=TOPIC_ID, **fields))

    def apply_isr_proposals(self) -> list[tuple[int, ...]]:
        """Commit what the leader proposes (as the controller would)."""
        applied = []
        for m in self.managers.values():
            for _, isr in m.isr_proposals(self.now):
                self.change(isr=list(isr))
                applied.append(isr)
        return applied

    # -- the network and the clock ---------------------------------------------------------------

    def run(self, ms: int, step_ms: int = 10) -> None:
        end = self.now + ms
        while self.now < end:
            self.now += step_ms
            for b, m in self.managers.items():
                if b not in self.down:
                    m.poll(self.now, 100 + b)
            self.deliver()

    def deliver(self) -> None:
        moving = True
        while moving:
            moving = False
            for b, m in self.managers.items():
                for env in m.drain():
                    moving = True
                    if b in self.down:
                        continue
                    if env.destination in self.down:
                        # The connection breaks: a broker's request gets an answer without a body.
                        if env.is_request and env.source > 0:
                            m.handle_answer(env.reply(None), self.now)
                            moving = True
                        elif not env.is_request and env.destination > 0:
                            lost = ApiResponse(env.body.api, env.body.version, None)  # type: ignore[union-attr]
                            self.managers[env.destination].handle_answer(
                                ClientEnvelope(
                                    env.source, env.destination, env.correlation_id, env.listener, lost
                                ),
                                self.now,
                            )
                        continue
                    if env.is_request:
                        self.managers[env.destination].handle(env, self.now)
                    elif env.destination < 0:
                        self.answers[env.correlation_id] = env.body
                    else:
                        self.managers[env.destination].handle_answer(env, self.now)

    def send(self, broker: int, api: Any, version: int, body: Any) -> int:
        cid = next(self._client_ids)
        self.managers[broker].handle(
            ClientEnvelope(-1000 - cid, broker, cid, LISTENER, ApiRequest(api, version, body)), self.now
        )
        self.deliver()
        return cid

    def answer(self, cid: int) -> Any:
        body = self.answers.get(cid)
        if body is None:
            return None
        if body is NO_RESPONSE:
            return NO_RESPONSE
        assert isinstance(body, ApiResponse)
        return body.body

    # -- clients ---------------------------------------------------------------------------------

    def produce(
        self, values: list[bytes], *, acks: int = -1, broker: int = 1, timeout_ms: int = 5_000
    ) -> int:
        batch = build_value_batch(values, base_offset=0, partition_leader_epoch=-1, timestamp_ms=self.now)
        body = PR(
            acks=acks,
            timeout_ms=timeout_ms,
            topic_data=[
                PR.TopicProduceData(
                    name="t",
                    partition_data=[PR.TopicProduceData.PartitionProduceData(index=0, records=batch)],
                )
            ],
        )
        return self.send(broker, produce.API, 12, body)

    def produce_to(self, partition: int, values: list[bytes]) -> int:
        batch = build_value_batch(values, base_offset=0, partition_leader_epoch=-1, timestamp_ms=self.now)
        part = PR.TopicProduceData.PartitionProduceData(index=partition, records=batch)
        body = PR(
            acks=-1, timeout_ms=5_000, topic_data=[PR.TopicProduceData(name="t", partition_data=[part])]
        )
        return self.send(1, produce.API, 12, body)

    def produce_result(self, cid: int) -> tuple[int, int]:
        answer = self.answer(cid)
        assert answer is not None, "no answer yet"
        row = answer.responses[0].partition_responses[0]
        return row.error_code, row.base_offset

    def consume(
        self, offset: int, *, broker: int = 1, epoch: int = -1, max_wait_ms: int = 0, version: int = 13
    ) -> Any:
        body = FR(
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=1 << 20,
            topics=[
                FR.FetchTopic(
                    topic="t",
                    topic_id=TOPIC_ID,
                    partitions=[
                        FR.FetchTopic.FetchPartition(
                            partition=0,
                            current_leader_epoch=epoch,
                            fetch_offset=offset,
                            partition_max_bytes=1 << 20,
                        )
                    ],
                )
            ],
        )
        return self.send(broker, fetch.CLIENT_API, version, body)

    def fetched(self, cid: int) -> tuple[int, int, list[bytes]]:
        """(error, high watermark, values) of a consumer fetch's answer."""
        answer = self.answer(cid)
        assert answer is not None, "no answer yet"
        row = answer.responses[0].partitions[0]
        values = [r.value for b in iter_batches(row.records or b"") for r in b.records]
        return row.error_code, row.high_watermark, values

    def log(self, broker: int) -> MemoryPartitionLog:
        return self.logs[broker].logs[("t", 0)]

    def values(self, broker: int) -> list[bytes]:
        log = self.log(broker)
        data = log.read(log.log_start_offset, 1 << 30, max_offset=log.log_end_offset)
        return [r.value for b in iter_batches(data) for r in b.records]


# ---------------------------------------------------------------------------------------------------


def test_acks_all_is_answered_once_the_isr_has_the_records_and_consumers_read_them() -> None:
    c = Cluster()
    cid = c.produce([b"a", b"b", b"c"])
    assert c.answer(cid) is None  # waits in the purgatory for the followers
    assert c.log(1).log_end_offset == 3 and c.log(1).high_watermark == 0
    c.run(200)
    assert c.produce_result(cid) == (E.NONE, 0)
    assert c.log(1).high_watermark == 3
    assert c.values(2) == c.values(3) == [b"a", b"b", b"c"]
    assert c.fetched(c.consume(0)) == (E.NONE, 3, [b"a", b"b", b"c"])
    # A follower learns the high watermark from its next fetch.
    c.run(200)
    assert c.log(2).high_watermark == 3 and c.log(3).high_watermark == 3


def test_consumers_never_see_past_the_high_watermark() -> None:
    c = Cluster()
    c.down = {2, 3}
    c.produce([b"x"], acks=1)
    assert c.log(1).log_end_offset == 1 and c.log(1).high_watermark == 0
    assert c.fetched(c.consume(0)) == (E.NONE, 0, [])


def test_acks_all_below_min_isr_is_refused_before_anything_is_written() -> None:
    c = Cluster(isr=(1,), min_isr=2)
    cid = c.produce([b"a"])
    assert c.produce_result(cid) == (E.NOT_ENOUGH_REPLICAS, -1)
    assert c.log(1).log_end_offset == 0
    # acks=1 is not bound by min ISR: it is written, but the high watermark does not move (strict).
    cid = c.produce([b"b"], acks=1)
    assert c.produce_result(cid) == (E.NONE, 0)
    c.run(300)
    assert c.log(1).log_end_offset == 1 and c.log(2).log_end_offset == 1
    assert c.log(1).high_watermark == 0


def test_a_lagging_follower_leaves_the_isr_and_the_high_watermark_freezes_below_min_isr() -> None:
    c = Cluster(isr=(1, 2), min_isr=2)
    c.run(100)
    assert c.apply_isr_proposals() == [(1, 2, 3)]  # 3 caught up: the leader adds it
    c.produce([b"one"])
    c.run(200)
    assert c.log(1).high_watermark == 1
    c.down = {2, 3}  # both followers stop fetching
    waiting = c.produce([b"two"])
    c.run(LAG_MS + 100)
    assert c.answer(waiting) is None
    assert c.apply_isr_proposals() == [(1,)]
    c.run(20)
    # The ISR fell below min ISR while the request waited: NOT_ENOUGH_REPLICAS_AFTER_APPEND.
    assert c.produce_result(waiting) == (E.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 1)
    c.down = set()
    c.run(300)
    # Followers are back and hold the record, but the committed ISR is {1}: the HW stays frozen.
    assert c.log(2).log_end_offset == 2
    assert c.log(1).high_watermark == 1
    assert c.apply_isr_proposals() == [(1, 2, 3)]
    c.run(300)
    assert c.log(1).high_watermark == 2


def _count_proposed_isr(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The partitions ``Partition.proposed_isr`` is asked about from now on, by index, in order."""
    from kraft.broker.partition import Partition

    looked: list[int] = []
    original = Partition.proposed_isr

    def spy(self: Partition, *args: Any) -> Any:
        looked.append(self.index)
        return original(self, *args)

    monkeypatch.setattr(Partition, "proposed_isr", spy)
    return looked


def test_a_follower_that_caught_up_is_proposed_without_looking_at_every_partition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As Kafka's maybeExpandIsr on each follower fetch: the partition whose follower reached the
    # high watermark, not every led partition (a broker in controlled shutdown, out of every ISR
    # and still fetching, had the others look at all 15,000 per poll).
    c = Cluster(isr=(1, 2), min_isr=2)
    c.load(partition_record(TOPIC_ID, 1), partition_record(TOPIC_ID, 2))
    leader = c.managers[1]
    assert leader.isr_proposals(c.now) == []  # every partition after the role change; 3 not heard yet
    looked = _count_proposed_isr(monkeypatch)
    assert leader.isr_proposals(c.now) == [] and looked == []
    c.run(50)  # 3 fetches partition 0 at its high watermark
    assert [(p.index, isr) for p, isr in leader.isr_proposals(c.now)] == [(0, (1, 2, 3))]
    assert looked == [0]
    # Half a lag time on, every led partition is looked at again (followers that fell behind).
    looked.clear()
    c.run(LAG_MS // 2)
    leader.isr_proposals(c.now)
    assert sorted(looked) == [0, 1, 2]


def test_lowering_min_insync_replicas_unfreezes_the_high_watermark_at_once() -> None:
    c = Cluster(isr=(1,), min_isr=2)
    c.down = {2, 3}
    c.produce([b"a", b"b"], acks=1)
    assert c.log(1).log_end_offset == 2 and c.log(1).high_watermark == 0  # ISR 1 < min ISR 2: frozen
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="min.insync.replicas", value="1"))
    # The config delta changes no partition: the leader still looks at every high watermark.
    assert c.log(1).high_watermark == 2


def test_acks_all_times_out_when_the_isr_does_not_catch_up() -> None:
    c = Cluster()
    c.down = {3}
    cid = c.produce([b"a"], timeout_ms=300)
    c.run(400)
    assert c.produce_result(cid) == (E.REQUEST_TIMED_OUT, 0)
    assert c.log(1).log_end_offset == 1  # the data stays in the log, as in Kafka


def test_acks_zero_gets_no_answer_at_all() -> None:
    c = Cluster()
    cid = c.produce([b"a"], acks=0)
    assert c.answer(cid) is NO_RESPONSE
    assert c.log(1).log_end_offset == 1


def test_invalid_acks_and_unknown_topics_and_followers_refuse_produce() -> None:
    c = Cluster()
    assert c.produce_result(c.produce([b"a"], acks=2)) == (E.INVALID_REQUIRED_ACKS, -1)
    assert c.produce_result(c.produce([b"a"], broker=2)) == (E.NOT_LEADER_OR_FOLLOWER, -1)
    answer = c.answer(c.produce([b"a"], broker=2))
    hint = answer.responses[0].partition_responses[0].current_leader
    assert (hint.leader_id, hint.leader_epoch) == (1, 0)
    assert [(n.node_id, n.host) for n in answer.node_endpoints] == [(1, "b1")]
    assert c.log(1).log_end_offset == 0 and c.log(2).log_end_offset == 0


def test_a_corrupt_batch_is_refused_and_nothing_is_appended() -> None:
    c = Cluster()
    batch = bytearray(build_value_batch([b"a"], base_offset=0, partition_leader_epoch=-1, timestamp_ms=0))
    batch[-1] ^= 0xFF
    body = PR(
        acks=1,
        timeout_ms=1000,
        topic_data=[
            PR.TopicProduceData(
                name="t",
                partition_data=[PR.TopicProduceData.PartitionProduceData(index=0, records=bytes(batch))],
            )
        ],
    )
    cid = c.send(1, produce.API, 9, body)
    assert c.produce_result(cid)[0] == E.CORRUPT_MESSAGE
    assert c.log(1).log_end_offset == 0


def test_fetch_fences_stale_and_future_epochs_and_points_followers_fetchers_at_the_leader() -> None:
    c = Cluster()
    assert c.fetched(c.consume(0, epoch=0))[0] == E.NONE
    c.change(leader=2)  # leader epoch 1, on broker 2
    c.run(200)
    assert c.fetched(c.consume(0, broker=2, epoch=0))[0] == E.FENCED_LEADER_EPOCH
    assert c.fetched(c.consume(0, broker=2, epoch=5))[0] == E.UNKNOWN_LEADER_EPOCH
    assert c.fetched(c.consume(0, broker=1, version=10))[0] == E.NOT_LEADER_OR_FOLLOWER  # before KIP-392
    row = c.answer(c.consume(0, broker=1, epoch=0)).responses[0].partitions[0]
    assert row.error_code == E.FENCED_LEADER_EPOCH
    assert (row.current_leader.leader_id, row.current_leader.leader_epoch) == (2, 1)  # v12+: the hint


def test_a_consumer_with_client_metadata_reads_a_follower_up_to_its_high_watermark() -> None:
    c = Cluster()
    c.produce([b"a", b"b"])
    c.run(300)  # committed, and the followers learned the high watermark
    c.down = {2, 3}
    c.produce([b"c"], acks=1)  # on the leader only
    c.down = set()  # (no time passes: the followers have not fetched it)
    assert c.fetched(c.consume(0, broker=2, epoch=0)) == (E.NONE, 2, [b"a", b"b"])
    assert c.fetched(c.consume(0, broker=2, version=10))[0] == E.NOT_LEADER_OR_FOLLOWER


def test_a_consumer_long_poll_is_answered_when_records_commit() -> None:
    c = Cluster()
    cid = c.consume(0, max_wait_ms=5_000)
    assert c.answer(cid) is None
    c.produce([b"late"])
    assert c.answer(cid) is None  # written, not yet committed
    c.run(200)
    assert c.fetched(cid) == (E.NONE, 1, [b"late"])


def test_parked_follower_fetches_wake_on_an_append_and_not_on_a_high_watermark_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = Cluster()
    c.run(50)  # both followers' fetches parked at the leader (fetch.wait.max.ms 100)
    leader = c.managers[1]
    reads: list[int] = []
    read = leader._read

    def counted(body: Any, version: int, now_ms: int, **kwargs: Any) -> Any:
        reads.append(body.replica_state.replica_id)
        return read(body, version, now_ms, **kwargs)

    monkeypatch.setattr(leader, "_read", counted)
    cid = c.produce([b"a"])
    assert sorted(reads) == [2, 3]  # the append re-read both parked fetches: they left with it
    reads.clear()
    c.run(10)  # one step: each follower's next fetch arrives, the second one moves the HW
    assert c.produce_result(cid) == (E.NONE, 0)
    # The first one parked again; the HW move gives a follower nothing to read, so it is not
    # re-read (each follower fetch moves the HW: re-reading on it cost a read per fetch).
    assert reads == [2, 3]


def test_a_long_poll_with_nothing_to_read_answers_empty_at_its_deadline() -> None:
    c = Cluster()
    cid = c.consume(0, max_wait_ms=300)
    c.run(200)
    assert c.answer(cid) is None
    c.run(200)
    assert c.fetched(cid) == (E.NONE, 0, [])


def test_a_new_leader_keeps_its_log_and_a_diverged_follower_truncates_to_it() -> None:
    c = Cluster()
    c.produce([b"committed"])
    c.run(200)
    assert c.log(1).high_watermark == 1
    # Broker 1 appends alone (its followers cut off), then loses the leadership to broker 2.
    c.down = {2, 3}
    c.produce([b"lost-1", b"lost-2"], acks=1)
    assert c.log(1).log_end_offset == 3
    c.down = {1}
    c.change(leader=2, isr=[2, 3])
    cid = c.produce([b"new"], broker=2)
    c.run(300)
    assert c.produce_result(cid) == (E.NONE, 1)
    c.down = set()
    c.run(500)
    # Broker 1 fetched with LastFetchedEpoch 0 from offset 3: the leader answered DivergingEpoch
    # (epoch 0 ends at 1 on its log) and broker 1 truncated its unacknowledged tail.
    assert c.values(1) == c.values(2) == c.values(3) == [b"committed", b"new"]
    assert c.log(1).epoch_entries == c.log(2).epoch_entries


def test_list_offsets_and_offset_for_leader_epoch_come_from_the_log() -> None:
    c = Cluster()
    c.produce([b"a", b"b"])
    c.run(200)
    c.change(leader=2)
    c.produce([b"c"], broker=2)
    c.run(300)
    body = LO(
        replica_id=-1,
        isolation_level=0,
        topics=[
            LO.ListOffsetsTopic(
                name="t",
                partitions=[
                    LO.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=ts)
                    for ts in (-2, -1)
                ],
            )
        ],
    )
    rows = c.answer(c.send(2, list_offsets.API, 8, body)).topics[0].partitions
    assert [(r.error_code, r.offset) for r in rows] == [(E.NONE, 0), (E.NONE, 3)]
    assert rows[1].leader_epoch == 1
    body = OE(
        replica_id=-1,
        topics=[
            OE.OffsetForLeaderTopic(
                topic="t",
                partitions=[
                    OE.OffsetForLeaderTopic.OffsetForLeaderPartition(
                        partition=0, current_leader_epoch=1, leader_epoch=e
                    )
                    for e in (0, 1)
                ],
            )
        ],
    )
    rows = c.answer(c.send(2, offset_for_leader_epoch.API, 4, body)).topics[0].partitions
    assert [(r.error_code, r.leader_epoch, r.end_offset) for r in rows] == [(E.NONE, 0, 2), (E.NONE, 1, 3)]


def test_describe_log_dirs_lists_the_logs_each_directory_holds_with_their_sizes() -> None:
    c = Cluster()
    c.produce([b"a", b"b"])
    c.run(200)
    size = c.log(2).size_in_bytes
    assert size > 0
    everything = c.answer(c.send(2, describe_log_dirs.API, 4, DLD(topics=None)))
    assert everything.error_code == E.NONE
    [result] = everything.results
    assert (result.error_code, result.log_dir, result.total_bytes, result.usable_bytes) == (
        E.NONE,
        "/data/a",
        1000,
        600,
    )
    assert [
        (t.name, [(p.partition_index, p.partition_size, p.offset_lag, p.is_future_key) for p in t.partitions])
        for t in result.topics
    ] == [("t", [(0, size, 0, False)])]
    # Only the asked partitions: another topic, or a partition the broker does not hold, is left out.
    asked = DLD(
        topics=[
            DLD.DescribableLogDirTopic(topic="t", partitions=[1]),
            DLD.DescribableLogDirTopic(topic="other", partitions=[0]),
        ]
    )
    assert c.answer(c.send(2, describe_log_dirs.API, 1, asked)).results[0].topics == []


def test_a_topic_compression_type_re_encodes_produced_batches_and_followers_copy_them() -> None:
    c = Cluster()
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="compression.type", value="zstd"))
    c.produce([b"v" * 200] * 20)  # an uncompressed batch from the producer
    c.run(300)
    for broker in (1, 2, 3):
        log = c.log(broker)
        [stored] = list(iter_batches(log.read(0, 1 << 30, max_offset=log.log_end_offset)))
        assert stored.header.compression == Compression.ZSTD
        assert [r.value for r in stored.records] == [b"v" * 200] * 20
    c.load(
        make_record(T.CONFIG, resource_type=2, resource_name="t", name="compression.type", value="producer")
    )
    c.produce([b"w"])
    c.run(300)
    log = c.log(1)
    codecs = [b.header.compression for b in iter_batches(log.read(0, 1 << 30, max_offset=log.log_end_offset))]
    assert codecs == [Compression.ZSTD, Compression.NONE]  # "producer" keeps what the producer sent


def test_a_topic_segment_bytes_change_rolls_the_open_logs_by_it() -> None:
    c = Cluster()
    for _i in range(3):
        c.produce([b"x" * 100])
        c.run(100)
    assert c.log(1).segment_base_offsets() == [0]  # 1 GiB: one segment
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="segment.bytes", value="300"))
    for _i in range(4):
        c.produce([b"y" * 100])
        c.run(100)
    for broker in (1, 2, 3):  # leader and followers alike: each batch (~170 bytes) rolls
        assert len(c.log(broker).segment_base_offsets()) >= 4, c.log(broker).segment_base_offsets()


def test_a_high_watermark_move_checks_only_the_produces_it_can_settle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every acks=all produce waiting on a partition was checked on each of its appends and high
    # watermark moves: at 1,000 records/s a broker spent most of its time there, and the backlog
    # that made grew the next scan. They wait oldest first, and a later one needs a higher offset.
    c = Cluster()
    c.down = {2, 3}  # the followers fetch nothing: the high watermark stays at 0
    cids = [c.produce([b"v%d" % i]) for i in range(100)]
    calls = 0
    original = ReplicaManager._settle_produce

    def counting(self: ReplicaManager, op: Any) -> Any:
        nonlocal calls
        calls += 1
        return original(self, op)

    monkeypatch.setattr(ReplicaManager, "_settle_produce", counting)
    cids.append(c.produce([b"last"]))  # an append: its partition changed
    c.managers[1].poll(c.now, 101)
    assert calls <= 3, calls  # the new one, then the oldest waiting (still short): not all 101
    assert all(c.answer(cid) is None for cid in cids)
    c.down = set()
    c.run(300)
    assert [c.produce_result(cid) for cid in cids] == [(E.NONE, i) for i in range(101)]


def test_a_topics_index_configs_reach_its_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    # index.interval.bytes and segment.index.bytes (Kafka topic configs, refused as unknown before)
    # are handed to every replica's log, from the broker's log.index.* until the topic sets its own.
    seen: list[tuple[int | None, int | None]] = []
    original = MemoryPartitionLog.configure_segments

    def spy(self: MemoryPartitionLog, *args: Any, **kwargs: Any) -> None:
        seen.append((args[2] if len(args) > 2 else None, args[3] if len(args) > 3 else None))
        original(self, *args, **kwargs)

    monkeypatch.setattr(MemoryPartitionLog, "configure_segments", spy)
    c = Cluster()
    c.produce([b"x"])
    c.run(100)
    assert set(seen) == {(4096, 10_485_760)}  # Kafka's defaults, one per replica
    seen.clear()
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="index.interval.bytes", value="0"))
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="segment.index.bytes", value="80"))
    assert seen[-3:] == [(0, 80)] * 3


def test_a_deleted_topic_is_deleted_from_every_replica() -> None:
    c = Cluster()
    c.produce([b"a"])
    c.run(200)
    c.load(make_record(T.REMOVE_TOPIC, topic_id=TOPIC_ID))
    for b in (1, 2, 3):
        assert c.logs[b].deleted == [("t", 0)]
        assert not c.managers[b].partitions


def test_roles_follow_the_published_deltas() -> None:
    c = Cluster()
    roles = {b: [p.is_leader for p in m.partitions.values()] for b, m in c.managers.items()}
    assert roles == {1: [True], 2: [False], 3: [False]}
    c.change(leader=3)
    roles = {b: [p.is_leader for p in m.partitions.values()] for b, m in c.managers.items()}
    assert roles == {1: [False], 2: [False], 3: [True]}


def test_a_broker_takes_no_role_before_it_is_activated_then_takes_the_image() -> None:
    c = Cluster()
    late = ReplicaManager(
        node_id=2,
        logs=MemoryLogs(),
        resolver=ConfigResolver({}, 2),
        next_correlation_id=itertools.count(1).__next__,
    )
    c.loader.install_publisher(late.publish)
    c.change(leader=2)  # a delta naming it leader: ignored until it has caught up with its registration
    assert late.partitions == {}
    late.activate(c.now)
    assert [p.is_leader for p in late.partitions.values()] == [True]


def test_a_follower_with_an_empty_epoch_of_its_own_truncates_its_epoch_cache_and_catches_up() -> None:
    # Broker 2 leads epoch 1 without appending anything (its cache ends with (1, 2)); broker 1 takes
    # over in epoch 2. Broker 2's fetch names epoch 1, the leader answers DivergingEpoch (epoch 0 ends
    # at 2): the end of its log, so only the epoch cache is trimmed, and then it fetches normally.
    c = Cluster()
    c.produce([b"a", b"b"])
    c.run(200)
    c.change(leader=2)
    c.run(50)
    assert [(e.epoch, e.start_offset) for e in c.log(2).epoch_entries] == [(0, 0), (1, 2)]
    c.change(leader=1)
    cid = c.produce([b"c"])
    c.run(500)
    assert c.produce_result(cid) == (E.NONE, 2)
    assert c.values(2) == [b"a", b"b", b"c"]
    assert [(e.epoch, e.start_offset) for e in c.log(2).epoch_entries] == [(0, 0), (2, 2)]


def test_error_partitions_carry_empty_records_never_null() -> None:
    c = Cluster()
    row = c.answer(c.consume(0, broker=2, version=10)).responses[0].partitions[0]
    assert row.error_code == E.NOT_LEADER_OR_FOLLOWER
    assert row.records == b""  # librdkafka refuses a whole answer holding a null record set


def test_flush_messages_one_makes_every_acknowledged_record_survive_a_power_loss_of_every_replica() -> None:
    for flush_messages, survives in ((None, False), ("1", True)):
        c = Cluster()
        if flush_messages is not None:
            c.load(
                make_record(
                    T.CONFIG, resource_type=2, resource_name="t", name="flush.messages", value=flush_messages
                )
            )
        cid = c.produce([b"a", b"b"])
        c.run(300)
        assert c.produce_result(cid) == (E.NONE, 0)
        for b in (1, 2, 3):
            c.log(b).crash()  # every replica loses power at once
        assert all(c.log(b).log_end_offset == (2 if survives else 0) for b in (1, 2, 3)), flush_messages


@pytest.mark.parametrize("where", ["topic", "broker", "none"])
def test_flush_ms_fsyncs_the_logs_of_the_topics_that_set_it_at_the_checkpoint_interval(where: str) -> None:
    c = Cluster()
    if where == "topic":
        c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="flush.ms", value="1000"))
    elif where == "broker":  # log.flush.interval.ms, the broker's default for every topic
        for m in c.managers.values():
            m.resolver = ConfigResolver({"log.flush.interval.ms": "1000"}, m.node_id)
    c.load(make_record(T.TOPIC, name="other", topic_id=uuid.UUID(int=0x0E)))
    cid = c.produce([b"a", b"b"])
    c.run(300)
    assert c.produce_result(cid) == (E.NONE, 0)
    c.run(6_000)  # past a flush.ms and a checkpoint interval (5 s)
    for b in (1, 2, 3):
        c.log(b).crash()  # every replica loses power at once
    assert [c.log(b).log_end_offset for b in (1, 2, 3)] == [0 if where == "none" else 2] * 3


def test_topic_configs_resolved_by_name_follow_config_and_topic_changes_and_only_those() -> None:
    c = Cluster(broker_config={"log.flush.interval.ms": "5000"})  # every topic's flush.ms, new ones too
    m = c.managers[1]
    assert m._flush_ms_by_topic() == {"t": 5000}
    resolved = m._topic_config("t")
    c.change(isr=[1, 2])  # a delta that only moves a partition keeps what was resolved
    assert m._topic_config("t") is resolved and m._flush_ms_by_topic() == {"t": 5000}
    c.load(make_record(T.TOPIC, name="u", topic_id=uuid.UUID(int=0x0F)))  # a new name, no config
    assert m._flush_ms_by_topic() == {"t": 5000, "u": 5000}
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="flush.ms", value="1000"))
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="max.message.bytes", value="100"))
    assert m._flush_ms_by_topic() == {"t": 1000, "u": 5000}
    assert m._topic_config("t").max_message_bytes == 100
    cid = c.produce([b"x" * 200])  # the new limit applies at once
    c.run(100)
    assert c.produce_result(cid)[0] == E.MESSAGE_TOO_LARGE
    c.load(make_record(T.REMOVE_TOPIC, topic_id=uuid.UUID(int=0x0F)))
    assert m._flush_ms_by_topic() == {"t": 1000}


def test_retention_bytes_deletes_old_segments_on_the_retention_check() -> None:
    c = Cluster(segment_bytes=100)  # about one batch per segment
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="retention.bytes", value="1"))
    for i in range(4):
        cid = c.produce([f"r{i}".encode() * 10])
        c.run(200)
        assert c.produce_result(cid)[0] == E.NONE
    log = c.log(1)
    assert len(log.segment_base_offsets()) > 1 and log.log_start_offset == 0
    c.run(ReplicaConfig().retention_check_interval_ms + 100, step_ms=1000)
    assert log.log_start_offset > 0  # whole segments went, the active one stayed
    assert c.fetched(c.consume(0))[0] == E.OFFSET_OUT_OF_RANGE


def test_a_followers_log_start_moved_by_its_retention_reaches_the_leader() -> None:
    # A follower's retention pass moves its log start with nothing from the leader to tell its
    # fetcher; the pass itself makes the fetcher look at every partition again.
    c = Cluster(segment_bytes=100)
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="retention.bytes", value="1"))
    for i in range(4):
        cid = c.produce([f"r{i}".encode() * 10])
        c.run(200)
        assert c.produce_result(cid)[0] == E.NONE
    second_pass = c.managers[1]._next_retention_ms
    for b in (2, 3):
        c.managers[b]._next_retention_ms = second_pass + 5_000  # the followers' passes come later
    c.run(second_pass - c.now + 1_000, step_ms=1000)  # the leader's: its log start moves
    assert c.log(1).log_start_offset > 0
    assert c.log(2).log_start_offset == c.log(3).log_start_offset == 0
    c.run(5_000)
    starts = sorted(c.log(b).log_start_offset for b in (2, 3))
    assert starts[0] > 0
    sessions = [s for s in c.managers[1].fetch_sessions.sessions.values() if s.privileged]
    assert sorted(cp.request.log_start_offset for s in sessions for cp in s.partitions.values()) == starts


def test_each_broker_reports_its_log_of_a_partition_nobody_can_lead() -> None:
    # Unclean recovery's input (``leaderless_log_info``, carried by the heartbeat): for a hosted
    # partition that is leaderless with no active ISR or ELR member, the partition epoch of the
    # broker's image, the epoch of the log's last batch and the log end offset.
    c = Cluster()
    c.produce([b"a", b"b", b"c"])
    c.run(200)
    assert all(m.leaderless_log_info() == [] for m in c.managers.values())  # led: nothing to report
    c.change(leader=2)  # epoch 1: broker 2 writes one record that nobody fetches
    c.produce([b"d"], acks=1, broker=2)
    c.change(leader=-1, isr=[])  # every replica left (ISR and ELR empty)
    p = c.loader.image.partition(TOPIC_ID, 0)
    assert p is not None and p.leader == -1
    reports = {b: m.leaderless_log_info() for b, m in c.managers.items()}
    assert {b: [(r.topic_id, r.partition, r.partition_epoch) for r in rs] for b, rs in reports.items()} == {
        b: [(TOPIC_ID, 0, p.partition_epoch)] for b in (1, 2, 3)
    }
    assert {b: (rs[0].last_epoch, rs[0].log_end_offset) for b, rs in reports.items()} == {
        1: (0, 3),
        2: (1, 4),
        3: (0, 3),
    }
    c.change(eligible_leader_replicas=[3])  # an active ELR member: a clean election comes, no report
    assert all(m.leaderless_log_info() == [] for m in c.managers.values())


def test_a_broker_reports_nothing_before_it_is_activated() -> None:
    c = Cluster()
    late = ReplicaManager(
        node_id=2,
        logs=MemoryLogs(),
        resolver=ConfigResolver({}, 2),
        next_correlation_id=itertools.count(1).__next__,
    )
    c.loader.install_publisher(late.publish)
    c.change(leader=-1, isr=[])
    assert late.leaderless_log_info() == []  # its image may predate its own restart
    late.activate(c.now)
    assert [(r.last_epoch, r.log_end_offset) for r in late.leaderless_log_info()] == [(-1, 0)]


# -- fetch sessions (KIP-227) ----------------------------------------------------------------------


def _two_partitions() -> Cluster:
    """Partition 0 with three records, partition 1 empty, both led by broker 1 and replicated."""
    c = Cluster()
    c.load(partition_record(TOPIC_ID, 1))
    c.produce([b"a", b"b", b"c"])
    c.run(300)
    assert c.log(1).high_watermark == 3
    return c


def _session_fetch(
    c: Cluster,
    offsets: dict[int, int],
    *,
    session_id: int,
    epoch: int,
    forgotten: tuple[int, ...] = (),
    max_wait_ms: int = 0,
    version: int = 13,
) -> int:
    """A consumer's Fetch as it goes over the wire: encoded, decoded, then handled."""
    body = FR(
        replica_id=-1,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        session_id=session_id,
        session_epoch=epoch,
        topics=[
            FR.FetchTopic(
                topic="t",
                topic_id=TOPIC_ID,
                partitions=[
                    FR.FetchTopic.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20)
                    for p, o in sorted(offsets.items())
                ],
            )
        ]
        if offsets
        else [],
        forgotten_topics_data=[FR.ForgottenTopic(topic="t", topic_id=TOPIC_ID, partitions=list(forgotten))]
        if forgotten
        else [],
    )
    wire = fetch.CLIENT_API.decode_request_body(fetch.CLIENT_API.encode_request_body(body, version), version)
    return c.send(1, fetch.CLIENT_API, version, wire)


def _rows(answer: Any) -> dict[int, tuple[int, int, list[bytes]]]:
    """partition -> (error, high watermark, values) of every partition an answer carries."""
    return {
        row.partition_index: (
            row.error_code,
            row.high_watermark,
            [r.value for b in iter_batches(row.records or b"") for r in b.records],
        )
        for t in answer.responses
        for row in t.partitions
    }


def test_an_incremental_fetch_answers_only_the_partitions_that_changed_on_the_wire() -> None:
    c = _two_partitions()
    sessions = c.managers[1].fetch_sessions
    followers = len(sessions)  # the two followers' replica fetchers have theirs
    full = c.answer(_session_fetch(c, {0: 0, 1: 0}, session_id=0, epoch=0))
    sid = full.session_id
    assert sid != 0 and len(sessions) == followers + 1 and len(sessions.sessions[sid].partitions) == 2
    assert _rows(full) == {0: (E.NONE, 3, [b"a", b"b", b"c"]), 1: (E.NONE, 0, [])}
    # Partition 0 listed at its new offset, nothing new anywhere: an empty answer, still in the session.
    empty = c.answer(_session_fetch(c, {0: 3}, session_id=sid, epoch=1))
    assert (empty.error_code, empty.session_id, empty.responses) == (E.NONE, sid, [])
    # Partition 0 moves on (listed with its new offset); partition 1 has not changed and is left out.
    c.produce([b"d"])
    c.run(300)
    cid = _session_fetch(c, {}, session_id=sid, epoch=2)
    log = c.log(1)
    records = log.read(3, 1 << 20, max_offset=4)
    # FetchResponse v13 (flexible), field by field: no partition 1 in it.
    expected = (
        struct.pack(">ihi", 0, 0, sid)  # ThrottleTimeMs, ErrorCode, SessionId
        + b"\x02"  # Responses: one topic
        + TOPIC_ID.bytes
        + b"\x02"  # Partitions: one
        + struct.pack(">ihqqq", 0, 0, 4, 4, 0)  # index, error, HW, LSO, log start
        + b"\x01"  # AbortedTransactions: empty
        + struct.pack(">i", -1)  # PreferredReadReplica
        + bytes([len(records) + 1])
        + records
        + b"\x00\x00\x00"  # tagged fields: partition, topic, response
    )
    assert len(records) < 127  # one byte of uvarint above
    assert fetch.CLIENT_API.encode_response_body(c.answer(cid), 13) == expected
    # Partition 1 gets a record: only it is carried (partition 0, listed at its new offset, has
    # nothing new and the same high watermark).
    c.produce_to(1, [b"x"])
    c.run(300)
    assert _rows(c.answer(_session_fetch(c, {0: 4}, session_id=sid, epoch=3))) == {1: (E.NONE, 1, [b"x"])}
    # Forgetting a partition drops it from the session; forgetting both closes the session.
    assert c.answer(_session_fetch(c, {}, session_id=sid, epoch=4, forgotten=(0,))).session_id == sid
    assert list(sessions.sessions[sid].partitions) == [(TOPIC_ID, 1)]
    closed = c.answer(_session_fetch(c, {}, session_id=sid, epoch=5, forgotten=(1,)))
    assert (closed.session_id, len(sessions)) == (0, followers)


def test_a_parked_incremental_fetch_is_answered_by_the_session_rule() -> None:
    c = _two_partitions()
    sid = c.answer(_session_fetch(c, {0: 3, 1: 0}, session_id=0, epoch=0)).session_id
    assert sid != 0
    cid = _session_fetch(c, {}, session_id=sid, epoch=1, max_wait_ms=5_000)
    assert c.answer(cid) is None  # nothing to read: it waits
    c.produce([b"d"])
    c.run(300)
    answer = c.answer(cid)
    assert answer.session_id == sid and _rows(answer) == {0: (E.NONE, 4, [b"d"])}
    # Waiting until max_wait_ms with nothing new answers the session with no partitions.
    cid = _session_fetch(c, {0: 4}, session_id=sid, epoch=2, max_wait_ms=200)
    c.run(300)
    assert (c.answer(cid).session_id, c.answer(cid).responses) == (sid, [])


@pytest.mark.parametrize(
    ("session_id", "epoch", "version", "error"),
    [
        (77, 1, 13, E.FETCH_SESSION_ID_NOT_FOUND),
        (None, 3, 13, E.INVALID_FETCH_SESSION_EPOCH),  # None: the session opened
        (None, 1, 12, E.FETCH_SESSION_TOPIC_ID_ERROR),  # the session was opened with topic ids (v13)
    ],
)
def test_fetch_session_errors_are_answered_at_once(
    session_id: int | None, epoch: int, version: int, error: E
) -> None:
    c = _two_partitions()
    sid = c.answer(_session_fetch(c, {0: 0, 1: 0}, session_id=0, epoch=0)).session_id
    assert sid != 0
    named = sid if session_id is None else session_id
    answer = c.answer(
        _session_fetch(c, {0: 0}, session_id=named, epoch=epoch, version=version, max_wait_ms=500)
    )
    assert (answer.error_code, answer.session_id, answer.responses) == (error, 0, [])


def test_sessionless_fetches_open_no_session() -> None:
    """librdkafka (and kafka-python before v7) send SessionId 0, SessionEpoch -1: full answers only."""
    c = _two_partitions()
    for _ in range(3):
        answer = c.answer(_session_fetch(c, {0: 3, 1: 0}, session_id=0, epoch=-1))
        assert answer.session_id == 0 and _rows(answer) == {0: (E.NONE, 3, []), 1: (E.NONE, 0, [])}
    assert all(s.privileged for s in c.managers[1].fetch_sessions.sessions.values())  # followers' only
    # A v12 (topic names) session works the same way.
    sid = c.answer(_session_fetch(c, {0: 3, 1: 0}, session_id=0, epoch=0, version=12)).session_id
    assert not c.managers[1].fetch_sessions.sessions[sid].uses_topic_ids
    assert _rows(c.answer(_session_fetch(c, {}, session_id=sid, epoch=1, version=12))) == {}


def _record_fetches(c: Cluster, source: int, leaders: tuple[int, ...]) -> list[tuple[int, int, Any]]:
    """Every Fetch ``source`` sends to ``leaders`` from now on, as (leader, version, body)."""
    sent: list[tuple[int, int, Any]] = []
    for b in leaders:

        def recording(env: ClientEnvelope, now_ms: int, handle: Any = c.managers[b].handle) -> None:
            request = env.body
            assert isinstance(request, ApiRequest)
            if request.api.key == fetch.API.key and env.source == source:
                sent.append((env.destination, request.version, request.body))
            handle(env, now_ms)

        c.managers[b].handle = recording  # type: ignore[method-assign]
    return sent


def test_the_replica_fetcher_uses_a_fetch_session() -> None:
    c = _two_partitions()
    leader = c.managers[1]
    sent = _record_fetches(c, 2, (1,))

    def fetches() -> list[tuple[int, int, int, list[int]]]:  # broker 2's: (id, epoch, version, partitions)
        return [
            (b.session_id, b.session_epoch, version, [p.partition for t in b.topics for p in t.partitions])
            for _, version, b in sent
        ]

    follower = {s.id: s for s in leader.fetch_sessions.sessions.values() if s.privileged}
    assert len(follower) == 2 and all(len(s.partitions) == 2 for s in follower.values())
    c.produce([b"d", b"e"])
    c.run(300)
    assert c.values(2) == c.values(1) == [b"a", b"b", b"c", b"d", b"e"] and c.log(2).high_watermark == 5
    # Incremental fetches of the session: partition 0, which moved, is listed once; partition 1 never.
    seen = fetches()
    sid = seen[0][0]
    assert sid in follower and all(s == sid and e > 0 for s, e, _, _ in seen)
    assert [e for _, e, _, _ in seen] == list(range(seen[0][1], seen[0][1] + len(seen)))
    assert [0] in [ps for *_, ps in seen] and all(1 not in ps for *_, ps in seen)
    # The leader forgets the session (as after a restart): the fetch waiting there is answered
    # INVALID_FETCH_SESSION_EPOCH, the next one FETCH_SESSION_ID_NOT_FOUND or a full fetch opens a
    # new session, and replication goes on.
    leader.fetch_sessions.remove(sid)
    sent.clear()
    c.produce_to(1, [b"x"])
    c.run(500)
    assert c.values(2) == c.values(1) and c.logs[2].logs[("t", 1)].log_end_offset == 1
    full = [(s, e, ps) for s, e, _, ps in fetches() if e == 0]
    assert full and sorted(full[0][2]) == [0, 1]  # a full fetch lists every partition
    assert any(s.privileged and s.id != sid for s in leader.fetch_sessions.sessions.values())


def _followers_reads(monkeypatch: pytest.MonkeyPatch, leader: ReplicaManager) -> list[tuple[int, list[int]]]:
    """From now on, each follower fetch ``leader`` reads as (follower, the partitions it read)."""
    read: list[tuple[int, list[int]]] = []
    original = leader._read

    def counted(body: Any, version: int, now_ms: int, **kwargs: Any) -> Any:
        if body.replica_state.replica_id >= 0:
            read.append(
                (body.replica_state.replica_id, [p.partition for t in body.topics for p in t.partitions])
            )
        return original(body, version, now_ms, **kwargs)

    monkeypatch.setattr(leader, "_read", counted)
    return read


def test_a_followers_quiet_partitions_are_not_read_again_until_they_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An idle follower's session holds every partition it follows; reading each on every fetch was
    # an idle broker's CPU. A partition caught up with nothing to send is skipped while its role,
    # log end, high watermark and log start stay as they were.
    c = _two_partitions()
    c.run(300)  # both partitions quiet in both followers' sessions
    leader = c.managers[1]
    read = _followers_reads(monkeypatch, leader)
    c.run(500)
    assert read and all(parts == [] for _, parts in read)
    # Idle for three lag times: the skipped fetches still count as caught up (nobody leaves the ISR).
    c.run(LAG_MS * 3)
    assert c.apply_isr_proposals() == []
    p0 = leader.partitions[next(tp for tp in leader.partitions if tp.partition_id == 0)]
    assert all(c.now - s.last_caught_up_ms <= 200 for s in p0.followers.values())
    # An append to a quiet partition wakes the parked fetches at once, and only it is read.
    read.clear()
    cid = c.produce_to(1, [b"x"])
    assert sorted(read) == [(2, [1]), (3, [1])]
    c.run(10)
    assert c.produce_result(cid) == (E.NONE, 0)
    assert c.logs[2].logs[("t", 1)].log_end_offset == c.logs[3].logs[("t", 1)].log_end_offset == 1
    # The high watermark it moved reaches the followers (with their next data or long-poll answer).
    c.run(300)
    assert c.logs[2].logs[("t", 1)].high_watermark == c.logs[3].logs[("t", 1)].high_watermark == 1
    # An ISR change makes the partition read again by the session of the follower it removed, not
    # by those of the followers still in the ISR (their answers cannot have changed).
    read.clear()
    c.change(isr=[1, 2])
    c.run(300)
    assert any(0 in parts for b, parts in read if b == 3)
    assert not any(0 in parts for b, parts in read if b == 2)
    # So does a min.insync.replicas change (both partitions), once they are quiet again.
    c.run(300)
    read.clear()
    c.load(make_record(T.CONFIG, resource_type=2, resource_name="t", name="min.insync.replicas", value="1"))
    c.run(300)
    assert {p for _, parts in read for p in parts} == {0, 1}
    # And the leader no longer hosting one (its metadata ahead of the followers'): read, and
    # answered with an error, rather than skipped as quiet.
    c.run(300)
    read.clear()
    tp1 = next(tp for tp in leader.partitions if tp.partition_id == 1)
    leader._stop(tp1, "t")
    c.run(100)
    assert any(1 in parts for _, parts in read)


def test_a_follower_that_cannot_join_the_isr_is_not_read_again_until_it_can(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A broker in controlled shutdown (or fenced) is out of every ISR and still fetches until it
    # stops: its session holds its caught-up partitions quiet as if it were in the ISR (read on each
    # of its fetches, they were most of the reads of a 100,000-partition controlled shutdown). Once
    # it may join again, its fetches are read and it rejoins.
    c = _two_partitions()
    c.run(300)
    leader = c.managers[1]
    read = _followers_reads(monkeypatch, leader)
    c.load(make_record(T.BROKER_REGISTRATION_CHANGE, 1, broker_id=3, broker_epoch=103, fenced=1))
    c.change(isr=[1, 2])
    c.run(300)
    read.clear()
    c.run(1000)
    assert [b for b, _ in read].count(3) >= 5  # it fetches on,
    assert all(parts == [] for _, parts in read)  # and reads nothing while it cannot join
    assert c.apply_isr_proposals() == []
    c.load(make_record(T.BROKER_REGISTRATION_CHANGE, 1, broker_id=3, broker_epoch=103, fenced=-1))
    c.run(300)
    assert {p for b, parts in read if b == 3 for p in parts} == {0}  # (still in the ISR of 1)
    assert c.apply_isr_proposals() == [(1, 2, 3)]


def test_a_followers_fetch_lists_what_changed_and_forgets_what_it_no_longer_follows() -> None:
    # The replica fetcher checks only the partitions answered or whose role changed since its last
    # Fetch (its session holds every partition it follows); a role change must still reach it.
    c = _two_partitions()
    c.load(partition_record(TOPIC_ID, 2))
    c.run(300)
    sent = _record_fetches(c, 2, (1, 3))

    def seen() -> list[tuple[int, int, list[int], list[int]]]:  # broker 2's: (to, epoch, listed, forgotten)
        return [
            (
                to,
                body.session_epoch,
                [p.partition for t in body.topics for p in t.partitions],
                [i for t in body.forgotten_topics_data for i in t.partitions],
            )
            for to, _, body in sent
        ]

    def fetches(to: int) -> list[tuple[int, list[int], list[int]]]:
        out = [
            (e, listed, forgotten) for d, e, listed, forgotten in seen() if d == to and (listed or forgotten)
        ]
        sent.clear()
        return out

    c.produce_to(2, [b"x"])
    c.run(300)
    got = fetches(1)
    assert got and all(e > 0 and listed == [2] and not forgotten for e, listed, forgotten in got)
    # Partition 1 moves to broker 3: the fetch to 1 forgets it, a new session with 3 lists it.
    c.load(make_record(T.PARTITION_CHANGE, partition_id=1, topic_id=TOPIC_ID, leader=3))
    c.run(300)
    assert [listed for d, e, listed, _ in seen() if d == 3 and e == 0] == [[1]]
    assert [(listed, forgotten) for _, listed, forgotten in fetches(1)] == [([], [1])]
    c.produce_to(2, [b"z"])
    c.run(300)
    c.load(make_record(T.PARTITION_CHANGE, partition_id=2, topic_id=TOPIC_ID, leader=2))
    c.run(300)
    # Broker 2 leads partition 2 now: its fetch to 1 forgets it (after listing its last record).
    got = fetches(1)
    assert got[-1][1:] == ([], [2]) and all(2 not in listed for _, listed, _ in got[1:])
    assert (
        c.managers[2]
        .partitions[next(tp for tp in c.managers[2].partitions if tp.partition_id == 2)]
        .is_leader
    )
    # Partition 1 comes back to broker 1: listed again, and replication of it goes on.
    c.load(make_record(T.PARTITION_CHANGE, partition_id=1, topic_id=TOPIC_ID, leader=1))
    c.run(300)
    assert [(listed, forgotten) for _, listed, forgotten in fetches(1)] == [([1], [])]
    c.produce_to(1, [b"w"])
    c.run(300)
    assert c.logs[2].logs[("t", 1)].log_end_offset == c.logs[1].logs[("t", 1)].log_end_offset == 1


# ------------------------------------------------------------------------------ many new partitions

BIG_ID = uuid.UUID(int=0xB16)


def _big_topic(partitions: int) -> list[ApiMessageAndVersion]:
    return [
        make_record(T.TOPIC, name="big", topic_id=BIG_ID),
        *(partition_record(BIG_ID, index) for index in range(partitions)),
    ]


def _produce_big(c: Cluster, index: int) -> int:
    batch = build_value_batch([b"v"], base_offset=0, partition_leader_epoch=-1, timestamp_ms=c.now)
    part = PR.TopicProduceData.PartitionProduceData(index=index, records=batch)
    body = PR(acks=1, timeout_ms=5_000, topic_data=[PR.TopicProduceData(name="big", partition_data=[part])])
    return c.send(1, produce.API, 12, body)


def test_a_delta_of_many_new_partitions_is_taken_in_slices_between_polls() -> None:
    # 10,000 new partitions in one delta held a broker's event loop (creating their logs) past its
    # session timeout: every broker was fenced. Now NEW_PARTITIONS_PER_POLL are taken per poll.
    from kraft.broker.replica_manager import NEW_PARTITIONS_PER_POLL as SLICE

    c = Cluster()
    c.run(10)  # a poll: a fresh budget
    c.load(*_big_topic(SLICE * 2 + 10))
    for b in (1, 2, 3):
        assert len(c.managers[b].partitions) == 1 + SLICE  # t-0, then the first slice
        assert len(c.logs[b].logs) == 1 + SLICE
    last = SLICE * 2 + 9
    code, _ = c.produce_result(_produce_big(c, last))
    assert code == E.NOT_LEADER_OR_FOLLOWER  # not taken yet: a retriable error, nothing written
    assert c.managers[1].poll(c.now, 101) == c.now  # more to take: poll again at once
    c.run(50)
    for b in (1, 2, 3):
        assert len(c.managers[b].partitions) == 1 + SLICE * 2 + 10
    code, offset = c.produce_result(_produce_big(c, last))
    assert (code, offset) == (E.NONE, 0)


def test_the_new_partitions_budget_is_per_poll_not_per_publish() -> None:
    # One poll of a node can deliver many committed batches, each published: with a budget for
    # each, 15 CreateTopics of 1,000 partitions took 15 slices in one poll and all three brokers
    # were fenced again (15,000 partitions on the processes).
    from kraft.broker.replica_manager import NEW_PARTITIONS_PER_POLL as SLICE

    c = Cluster()
    c.run(10)
    records = _big_topic(SLICE * 3)
    head, partitions = records[:1], records[1:]
    c.load(*head)
    for i in range(0, len(partitions), SLICE // 2):  # six publishes, no poll between them
        c.load(*partitions[i : i + SLICE // 2])
    m = c.managers[2]
    assert len(m.partitions) == 1 + SLICE
    assert m.has_pending_roles
    m.poll(c.now, 102)
    assert len(m.partitions) == 1 + SLICE * 2  # each poll takes one more slice
    c.run(50)
    assert len(m.partitions) == 1 + SLICE * 3 and not m.has_pending_roles


def test_a_broker_in_controlled_shutdown_opens_no_more_partitions() -> None:
    # A stopping broker went on creating the logs of every queued partition (about 1 s of CPU
    # per 15,000) while the others took over its leaderships.
    from kraft.broker.replica_manager import NEW_PARTITIONS_PER_POLL as SLICE

    c = Cluster()
    c.run(10)
    c.load(*_big_topic(SLICE * 2 + 10))
    c.managers[2].stop_opening_partitions()
    c.run(50)
    assert len(c.managers[2].partitions) == 1 + SLICE  # what it had opened before, no more
    assert len(c.logs[2].logs) == 1 + SLICE
    for b in (1, 3):
        assert len(c.managers[b].partitions) == 1 + SLICE * 2 + 10
    # A later delta's new partition is not opened on it either; the others take it.
    c.load(partition_record(BIG_ID, SLICE * 2 + 10))
    c.run(50)
    assert len(c.managers[2].partitions) == 1 + SLICE
    assert len(c.managers[1].partitions) == 1 + SLICE * 2 + 11


def test_queued_partitions_follow_later_deltas_and_deletions() -> None:
    from kraft.broker.replica_manager import NEW_PARTITIONS_PER_POLL as SLICE

    c = Cluster()
    c.load(*_big_topic(SLICE + 5))
    # The topic goes before its queued partitions are taken: none of them is created.
    c.load(make_record(T.REMOVE_TOPIC, topic_id=BIG_ID))
    c.run(50)
    assert len(c.managers[2].partitions) == 1
    assert {name for name, _ in c.logs[2].logs} == {"t"}


def test_the_role_lists_stay_in_topic_partition_order_as_partitions_come_and_go() -> None:
    # The fetchers list their partitions by (topic, partition) and the lag deadline is the earliest
    # over the led ones; both come from a list kept in that order as partitions are created and
    # deleted (a full sort per role change cost a tenth of a 100,000-partition controlled shutdown).
    c = Cluster()
    m_id, z_id, m2_id = uuid.UUID(int=0xA1), uuid.UUID(int=0xA2), uuid.UUID(int=0xA3)

    def topic(name: str, topic_id: uuid.UUID, leaders: dict[int, int]) -> list[ApiMessageAndVersion]:
        return [
            make_record(T.TOPIC, name=name, topic_id=topic_id),
            *(partition_record(topic_id, index, leader=leader) for index, leader in leaders.items()),
        ]

    def expected(m: ReplicaManager) -> tuple[dict[int, list[tuple[str, int]]], list[tuple[str, int]]]:
        ordered = sorted(m.partitions.values(), key=lambda p: (p.topic, p.index))
        followed: dict[int, list[tuple[str, int]]] = {}
        for p in ordered:
            if not p.is_leader and p.leader_id >= 0 and p.leader_id != m.node_id:
                followed.setdefault(p.leader_id, []).append((p.topic, p.index))
        return followed, [(p.topic, p.index) for p in ordered if p.is_leader]

    def actual(m: ReplicaManager) -> tuple[dict[int, list[tuple[str, int]]], list[tuple[str, int]]]:
        followed = m._followed_by_leader()
        return (
            {leader: [(p.topic, p.index) for p in ps] for leader, ps in followed.items()},
            sorted((p.topic, p.index) for p in m._led),
        )

    # Created out of order: topic z before m, partitions in shuffled order, three leaders.
    c.load(*topic("z", z_id, {3: 2, 0: 1, 2: 3, 1: 2}))
    c.load(*topic("m", m_id, {1: 3, 4: 1, 0: 2, 3: 3, 2: 1}))
    c.run(30)
    for m in c.managers.values():
        assert actual(m) == expected(m)
    assert actual(c.managers[1])[0][2] == [("m", 0), ("z", 1), ("z", 3)]
    # m goes, and comes back under a new id: its partitions are new objects, in their places.
    c.load(make_record(T.REMOVE_TOPIC, topic_id=m_id))
    c.run(30)
    for m in c.managers.values():
        assert actual(m) == expected(m)
        assert all(p.topic != "m" for p in m._ordered)
    c.load(*topic("m", m2_id, {2: 2, 0: 3, 1: 1}))
    c.run(30)
    for m in c.managers.values():
        assert actual(m) == expected(m)
        assert [(p.topic, p.index) for p in m._ordered] == sorted((p.topic, p.index) for p in m._ordered)
    assert actual(c.managers[1])[1] == [("m", 1), ("t", 0), ("z", 0)]
    # A leader change moves t-0 between the lists; an ISR change alone leaves them (no new pass).
    c.change(leader=2, isr=[1, 2, 3])
    c.run(30)
    for m in c.managers.values():
        assert actual(m) == expected(m)
    assert actual(c.managers[1])[1] == [("m", 1), ("z", 0)]
    layout = {b: m._layout_version for b, m in c.managers.items()}
    c.change(isr=[1, 2])
    c.run(30)
    assert {b: m._layout_version for b, m in c.managers.items()} == layout
    for m in c.managers.values():
        assert actual(m) == expected(m)


def _whole_scan(m: ReplicaManager, now_ms: int) -> list[tuple[int, tuple[int, ...]]]:
    """What isr_proposals answered after every delta before it looked at only some partitions: every
    led partition, in the manager's order."""
    eligible = {b.id for b in m._image.brokers.values() if b.is_active}
    out = []
    for p in m.partitions.values():
        if p.is_leader and p.pending_isr is None:
            proposal = p.proposed_isr(now_ms, m.config.replica_lag_time_max_ms, eligible)
            if proposal is not None:
                out.append((p.index, proposal))
    return out


@pytest.mark.parametrize("seed", range(24))
def test_after_a_delta_isr_proposals_answer_what_a_scan_of_every_led_partition_would(seed: int) -> None:
    # A delta makes isr_proposals look at the partitions whose answer can have changed (see
    # ReplicaManager.__init__), not at every led one. Random deltas, outages, fencing and time:
    # each answer after a delta is the whole scan's, in its order.
    import random

    rng = random.Random(seed)
    c = Cluster(isr=(1, 2, 3), min_isr=1)
    c.load(*(partition_record(TOPIC_ID, i, isr=(1, 2, 3)) for i in range(1, 8)))
    leader = c.managers[1]
    epochs = dict.fromkeys(range(8), 0)
    compared = 0
    for _ in range(300):
        op = rng.randrange(7)
        if op == 0:  # the controller moves an ISR (a shrink or an expansion the leader did not ask)
            index = rng.randrange(8)
            isr = [1, *sorted(rng.sample([2, 3], rng.randrange(3)))]
            epochs[index] += 1
            c.load(make_record(T.PARTITION_CHANGE, partition_id=index, topic_id=TOPIC_ID, isr=isr))
        elif op == 1:
            c.down = set(rng.sample([2, 3], rng.randrange(3)))
        elif op == 2:  # a broker fenced or unfenced: who may join an ISR changes
            b = rng.choice([2, 3])
            kind = rng.choice([T.FENCE_BROKER, T.UNFENCE_BROKER])
            c.load(make_record(kind, id=b, epoch=100 + b))
        elif op == 3:
            c.run(rng.choice([10, 50, LAG_MS // 3, LAG_MS]))
        elif op == 4:  # some of the leader's proposals are committed, as the controller would
            for p, isr in leader.isr_proposals(c.now)[: rng.randrange(3)]:
                c.load(
                    make_record(T.PARTITION_CHANGE, partition_id=p.index, topic_id=TOPIC_ID, isr=list(isr))
                )
            continue
        elif op == 5:  # the ISR manager looks (and sends nothing: a request is in flight, say)
            leader.isr_proposals(c.now)
            continue
        else:
            c.produce_to(rng.randrange(8), [b"x"])
        if leader._isr_dirty:
            expected = _whole_scan(leader, c.now)
            assert [(p.index, isr) for p, isr in leader.isr_proposals(c.now)] == expected
            compared += 1
    assert compared >= 15


def test_a_delta_of_one_partition_looks_at_that_partition_only(monkeypatch: pytest.MonkeyPatch) -> None:
    c = Cluster(isr=(1, 2, 3), min_isr=1)
    c.load(*(partition_record(TOPIC_ID, i) for i in range(1, 6)))
    c.run(50)
    leader = c.managers[1]
    assert leader.isr_proposals(c.now) == []
    looked = _count_proposed_isr(monkeypatch)
    c.change(isr=[1, 2])  # 3 is caught up: the leader asks for it back
    assert [(p.index, isr) for p, isr in leader.isr_proposals(c.now)] == [(0, (1, 2, 3))]
    assert looked == [0]


def test_a_delta_that_adds_a_lagging_member_to_the_isr_brings_the_lag_wake_forward() -> None:
    # The lag deadline is a bound kept across deltas (not a scan of every led partition per delta):
    # a member the controller adds must fold its own deadline in, or its removal waits for the
    # periodic check.
    c = Cluster(isr=(1,), min_isr=1)
    c.run(100)  # 2 and 3 fetch and are caught up; none of them is in the ISR: no deadline
    leader = c.managers[1]
    assert leader._next_lag_wake(c.now) is None
    c.down = {2, 3}
    c.run(LAG_MS // 2)
    c.change(isr=[1, 2, 3])
    wake = leader._next_lag_wake(c.now)
    assert wake is not None and wake <= c.now + LAG_MS  # its followers were caught up before now


def test_a_replica_fenced_and_back_is_proposed_at_the_next_delta() -> None:
    # Partitions with an eligible replica out of their ISR are looked at after every delta; one
    # looked at while that replica was fenced must not be left out once it is back.
    c = Cluster(isr=(1, 2), min_isr=1)
    c.load(partition_record(TOPIC_ID, 1))
    leader = c.managers[1]
    assert leader.isr_proposals(c.now) == []  # the whole scan after the roles were taken
    c.load(make_record(T.FENCE_BROKER, id=3, epoch=103))
    c.run(50)  # 3 fetches partition 0 at its high watermark, fenced: nothing to propose
    assert leader.isr_proposals(c.now) == []
    c.load(make_record(T.UNFENCE_BROKER, id=3, epoch=103))
    c.run(50)
    c.load(make_record(T.PARTITION_CHANGE, partition_id=1, topic_id=TOPIC_ID, isr=[1, 2]))  # a delta
    assert [(p.index, isr) for p, isr in leader.isr_proposals(c.now)] == [(0, (1, 2, 3)), (1, (1, 2, 3))]


def test_a_member_added_by_a_delta_is_shrunk_by_a_later_scan_without_a_poll_between() -> None:
    # The lag bound isr_proposals goes by takes in the deadlines of the partitions a delta touched,
    # so it holds whatever polls came between (here none): a member the controller added with an
    # old caught-up time is removed by the first scan after its deadline, even one that a delta of
    # another partition called for.
    c = Cluster(isr=(1, 2), min_isr=1)
    c.load(partition_record(TOPIC_ID, 1, isr=(1, 2)))
    c.load(make_record(T.FENCE_BROKER, id=3, epoch=103))  # 3 out of every ISR, and not eligible
    c.down = {3}
    c.run(LAG_MS // 2)
    leader = c.managers[1]
    assert leader.isr_proposals(c.now) == []  # the whole scan; the next one is half a lag away
    c.run(LAG_MS // 2 - 110)
    # A role change: the next poll computes the lag deadline afresh, from 2's latest fetches.
    c.load(make_record(T.PARTITION_CHANGE, partition_id=1, topic_id=TOPIC_ID, isr=[1, 2]))
    assert leader.isr_proposals(c.now) == []
    c.run(10)
    assert leader._next_lag_wake(c.now) > LAG_MS + 100
    c.change(isr=[1, 2, 3])  # 3 never fetched: caught up at 0, due out at LAG_MS + 1
    assert leader.isr_proposals(c.now) == []
    c.now = LAG_MS + 10  # no poll between
    c.load(make_record(T.PARTITION_CHANGE, partition_id=1, topic_id=TOPIC_ID, isr=[1, 2]))
    assert [(p.index, isr) for p, isr in leader.isr_proposals(c.now)] == [(0, (1, 2))]


@pytest.mark.parametrize("seed", range(6))
def test_the_roles_kept_as_they_change_are_the_ones_a_pass_over_every_partition_finds(seed: int) -> None:
    # The led partitions and the followed leaders (in the order fetches go out) are kept as roles
    # change, not made by a pass over every hosted partition after each leader change.
    import random

    rng = random.Random(seed)
    c = Cluster()
    other = uuid.UUID(int=0x0707)
    c.load(*(partition_record(TOPIC_ID, i, leader=rng.choice([1, 2, 3])) for i in range(1, 10)))
    m = c.managers[1]
    other_exists = False
    for _ in range(120):
        op = rng.randrange(5)
        if op < 3:
            index, leader = rng.randrange(10), rng.choice([1, 2, 3, -1])
            c.load(make_record(T.PARTITION_CHANGE, partition_id=index, topic_id=TOPIC_ID, leader=leader))
        elif op == 3 and not other_exists:
            c.load(
                make_record(T.TOPIC, name="u", topic_id=other),
                *(partition_record(other, i, leader=rng.choice([1, 2, 3])) for i in range(5)),
            )
            other_exists = True
        elif other_exists:
            c.load(make_record(T.REMOVE_TOPIC, topic_id=other))
            other_exists = False
        assert m._followed_leaders() == list(m._followed_by_leader())
        assert set(m._led) == {p for p in m.partitions.values() if p.is_leader}


def test_in_controlled_shutdown_a_follower_out_of_the_isr_stops_replicating_and_keeps_its_log() -> None:
    # As Kafka's brokers since KAFKA-13858: once the controller took the stopping broker out of a
    # partition's ISR, the broker stops that replica (no fetching, no serving) and keeps its log for
    # its next start; the partitions whose ISR still holds it are followed as before.
    c = _two_partitions()
    c.run(300)
    leader, stopping = c.managers[1], c.managers[3]
    stopping.stop_opening_partitions()  # what the broker does as its controlled shutdown begins
    c.change(isr=[1, 2])  # partition 0 without broker 3
    c.run(300)
    hosted = {tp.partition_id for tp in stopping.partitions}
    assert hosted == {1}
    assert ("t", 0) in c.logs[3].logs and c.logs[3].logs[("t", 0)].log_end_offset == 3  # kept, not deleted
    (session,) = [
        s
        for s in leader.fetch_sessions.sessions.values()
        if s.reader is not None and s.reader.replica_id == 3
    ]  # type: ignore[attr-defined]
    assert {key[1] for key in session.partitions} == {1}  # its fetches forgot partition 0
    # New records of partition 0 reach broker 2 only; partition 1 still reaches broker 3.
    c.produce([b"d"])
    c.produce_to(1, [b"x"])
    c.run(300)
    assert c.logs[2].logs[("t", 0)].log_end_offset == 4
    assert c.logs[3].logs[("t", 0)].log_end_offset == 3
    assert c.logs[3].logs[("t", 1)].log_end_offset == 1
