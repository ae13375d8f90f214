"""``ProducerIdManager``: InitProducerId on a broker and the blocks it asks the controller for,
inside the sans-IO core on virtual time.

The controller is scripted: the test answers each AllocateProducerIds the manager sends (a block, an
error code, ``LOST``: an answer without a body, as the shell delivers a failed connection) or lets
it go unanswered. Time moves one millisecond per ``poll``, so every retry and deadline is seen when
it happens. At the end, broker nodes on real controllers (``BrokerCluster``) hand out ids from
blocks that never overlap, across a controller failover.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from clusters import CLIENT_ID, BrokerCluster

from kraft.broker.producer_ids import ProducerIdBlock, ProducerIdManager
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import allocate_producer_ids, init_producer_id

BROKER_ID = 4
BROKER_EPOCH = 17
CLIENT = -2_000_001
LISTENER = "PLAINTEXT"
IPI: Any = init_producer_id.REQUEST.cls
API_RESPONSE: Any = allocate_producer_ids.RESPONSE.cls
LOST = None


def block(start: int, length: int = 1000) -> Any:
    return API_RESPONSE(throttle_time_ms=0, error_code=0, producer_id_start=start, producer_id_len=length)


def refused(code: ErrorCode) -> Any:
    return API_RESPONSE(throttle_time_ms=0, error_code=int(code), producer_id_start=0, producer_id_len=0)


class Broker:
    """A ``ProducerIdManager`` of broker 4 on virtual time. ``sent`` holds (time, envelope) of
    every AllocateProducerIds; ``answers`` the client answers by correlation id as (time, body)."""

    def __init__(
        self, *, leader: int | None = 1, max_wait_ms: int = 5_000, request_timeout_ms: int = 30_000
    ) -> None:
        self.manager = ProducerIdManager(
            BROKER_ID,
            next_correlation_id=itertools.count(1).__next__,
            request_timeout_ms=request_timeout_ms,
            max_wait_ms=max_wait_ms,
        )
        self.leader = leader
        self.broker_epoch = BROKER_EPOCH
        self.now_ms = 0
        self.sent: list[tuple[int, ControllerEnvelope]] = []
        self.answers: dict[int, tuple[int, Any]] = {}
        self.wake_at_ms: int | None = None
        self._cids = itertools.count(100)

    # -- driving -----------------------------------------------------------------------------------

    def init(self, version: int = 4, **fields: Any) -> int:
        """Send one InitProducerId (an idempotent producer's unless ``fields`` say otherwise)."""
        fields.setdefault("transactional_id", None)
        fields.setdefault("transaction_timeout_ms", 2_147_483_647)
        cid = next(self._cids)
        request = ApiRequest(init_producer_id.API, version, IPI(**fields))
        self.manager.handle(ClientEnvelope(CLIENT, BROKER_ID, cid, LISTENER, request), self.now_ms)
        self._collect()
        return cid

    def poll(self) -> None:
        self.wake_at_ms = self.manager.poll(self.now_ms, self.broker_epoch, self.leader)
        self._collect()

    def advance(self, ms: int) -> None:
        """Poll once per millisecond for ``ms`` milliseconds."""
        for _ in range(ms):
            self.now_ms += 1
            self.poll()

    def reply(self, outcome: Any, which: int = -1) -> bool:
        """Answer the AllocateProducerIds ``sent[which]``; returns whether the manager took it."""
        _, envelope = self.sent[which]
        taken = self.manager.handle_answer(envelope.reply(outcome), self.now_ms)
        self._collect()
        return taken

    def _collect(self) -> None:
        for envelope in self.manager.drain():
            if isinstance(envelope, ClientEnvelope):
                assert envelope.destination == CLIENT and envelope.listener == LISTENER
                assert isinstance(envelope.body, ApiResponse)
                assert envelope.correlation_id not in self.answers, "answered twice"
                self.answers[envelope.correlation_id] = (self.now_ms, envelope.body.body)
            else:
                assert envelope.is_request and envelope.source == BROKER_ID
                self.sent.append((self.now_ms, envelope))

    # -- reading -----------------------------------------------------------------------------------

    def answer(self, cid: int) -> Any:
        assert cid in self.answers, f"request {cid} is not answered at {self.now_ms} ms"
        return self.answers[cid][1]

    def producer_id(self, cid: int) -> int:
        a = self.answer(cid)
        assert (a.error_code, a.producer_epoch) == (0, 0), a
        return int(a.producer_id)

    def sends(self) -> list[tuple[int, int, int, int]]:
        """(time, destination, broker id, broker epoch) of each AllocateProducerIds."""
        out = []
        for at, envelope in self.sent:
            request = envelope.body
            assert isinstance(request, ApiRequest) and request.api is allocate_producer_ids.API
            assert request.version == 0
            body: Any = request.body
            out.append((at, envelope.destination, body.broker_id, body.broker_epoch))
        return out


def test_the_first_producer_waits_for_the_first_block_then_ids_come_from_it_at_once() -> None:
    b = Broker()
    first = b.init()
    assert first not in b.answers
    b.poll()
    assert b.sends() == [(0, 1, BROKER_ID, BROKER_EPOCH)]
    b.advance(3)
    assert b.reply(block(0))
    assert b.producer_id(first) == 0
    assert [b.producer_id(b.init()) for _ in range(3)] == [1, 2, 3]
    b.advance(100)
    assert len(b.sent) == 1  # nothing more to ask for until 90% of the block is handed out


def test_no_block_is_asked_for_before_a_producer_asks() -> None:
    b = Broker()
    b.advance(10_000)
    assert b.sent == [] and b.wake_at_ms is None


def test_the_next_block_is_fetched_once_90_percent_of_the_current_one_is_handed_out() -> None:
    b = Broker()
    b.init()
    b.poll()
    b.reply(block(0))
    for expected in range(1, 900):
        assert b.producer_id(b.init()) == expected
    b.poll()
    assert len(b.sent) == 1  # 0..899 handed out: not yet
    assert b.producer_id(b.init()) == 900  # Kafka's prefetch point: first + 0.9 * size
    b.poll()
    assert len(b.sent) == 2
    b.advance(2)
    b.reply(block(1000))
    assert b.manager.next_block == ProducerIdBlock(1000, 1000)
    ids = [b.producer_id(b.init()) for _ in range(200)]
    assert ids == list(range(901, 1101))  # no producer waited: the next block was there in time
    assert b.manager.current_block == ProducerIdBlock(1000, 1000)


def test_producers_waiting_for_a_block_are_answered_in_arrival_order_by_one_request() -> None:
    b = Broker()
    cids = [b.init() for _ in range(3)]
    b.advance(5)
    assert len(b.sent) == 1 and b.manager.waiting == 3
    b.reply(block(5000))
    assert [b.producer_id(c) for c in cids] == [5000, 5001, 5002]
    assert b.manager.waiting == 0


def test_more_waiting_producers_than_ids_wait_for_the_next_block() -> None:
    b = Broker()
    cids = [b.init() for _ in range(3)]
    b.poll()
    b.reply(block(0, 2))
    assert [b.producer_id(c) for c in cids[:2]] == [0, 1]
    assert cids[2] not in b.answers
    b.poll()
    assert len(b.sent) == 2
    b.reply(block(2, 2))
    assert b.producer_id(cids[2]) == 2


def test_a_producer_waiting_past_max_wait_gets_coordinator_load_in_progress() -> None:
    b = Broker(max_wait_ms=1_000)
    cid = b.init()
    b.poll()  # the request goes out; the controller never answers
    b.advance(999)
    assert cid not in b.answers
    b.advance(1)
    a = b.answer(cid)
    assert (a.error_code, a.producer_id, a.producer_epoch) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1, -1)
    assert b.answers[cid][0] == 1_000
    # The block still serves the next producer once it comes.
    b.reply(block(0))
    assert b.producer_id(b.init()) == 0


@pytest.mark.parametrize(
    "failure",
    [
        refused(ErrorCode.NOT_CONTROLLER),
        refused(ErrorCode.STALE_BROKER_EPOCH),
        refused(ErrorCode.UNKNOWN_SERVER_ERROR),
        LOST,
    ],
    ids=["not-controller", "stale-broker-epoch", "unknown-server-error", "lost-connection"],
)
def test_a_failed_allocation_is_asked_again_after_50_ms_of_whichever_node_leads(failure: Any) -> None:
    b = Broker()
    cid = b.init()
    b.poll()
    b.advance(10)
    assert b.reply(failure)
    b.leader = 2  # a new active controller, elected meanwhile
    b.advance(49)
    assert len(b.sent) == 1
    b.advance(1)
    assert b.sends() == [(0, 1, BROKER_ID, BROKER_EPOCH), (60, 2, BROKER_ID, BROKER_EPOCH)]
    b.reply(block(0))
    assert b.producer_id(cid) == 0


def test_an_unanswered_allocation_is_sent_again_after_the_request_timeout_and_a_late_answer_ignored() -> None:
    b = Broker(request_timeout_ms=500)
    cid = b.init()
    b.poll()
    b.advance(499)
    assert len(b.sent) == 1
    b.advance(1)
    assert [at for at, _ in b.sent] == [0, 500]
    assert not b.reply(block(0), which=0)  # the first request's answer: no longer awaited
    assert cid not in b.answers
    assert b.reply(block(1000), which=1)
    assert b.producer_id(cid) == 1000


def test_a_block_overlapping_the_one_in_use_is_refused_so_no_id_is_handed_out_twice() -> None:
    b = Broker()
    b.init()
    b.poll()
    b.reply(block(0, 10))
    handed = [0] + [b.producer_id(b.init()) for _ in range(9)]
    b.poll()  # past the prefetch point
    b.reply(block(5, 10))  # overlaps 0..9
    assert b.manager.next_block is None
    waiting = b.init()
    assert waiting not in b.answers
    b.advance(50)
    assert len(b.sent) == 3
    b.reply(block(10, 10))
    handed.append(b.producer_id(waiting))
    assert handed == list(range(11))


def test_nothing_is_asked_without_a_known_leader_or_before_the_broker_registered() -> None:
    b = Broker(leader=None)
    b.broker_epoch = -1
    cid = b.init()
    b.advance(200)
    assert b.sent == []
    b.leader = 3
    b.advance(200)
    assert b.sent == []  # the controller would only answer STALE_BROKER_EPOCH
    b.broker_epoch = 42
    b.advance(50)
    assert [(dest, epoch) for _, dest, _, epoch in b.sends()] == [(3, 42)]
    b.reply(block(0))
    assert b.producer_id(cid) == 0


@pytest.mark.parametrize(
    ("transactional_id", "code"),
    [("", ErrorCode.INVALID_REQUEST), ("orders-tx", ErrorCode.NOT_COORDINATOR)],
    ids=["empty", "transactional"],
)
def test_a_transactional_id_is_refused_as_kafka_refuses_it_without_a_coordinator(
    transactional_id: str, code: ErrorCode
) -> None:
    b = Broker()
    cid = b.init(transactional_id=transactional_id)
    a = b.answer(cid)
    assert (a.error_code, a.producer_id, a.producer_epoch) == (code, -1, -1)
    b.advance(100)
    assert b.sent == []  # no block is asked for on its behalf


def test_v3_producer_id_and_epoch_must_come_together_and_do_not_pick_the_id() -> None:
    b = Broker()
    half = b.init(version=3, producer_id=77, producer_epoch=-1)
    assert b.answer(half).error_code == ErrorCode.INVALID_REQUEST
    other_half = b.init(version=4, producer_id=-1, producer_epoch=3)
    assert b.answer(other_half).error_code == ErrorCode.INVALID_REQUEST
    bump = b.init(version=4, producer_id=77, producer_epoch=3)  # KIP-360 without a transactional id
    b.poll()
    b.reply(block(0))
    assert b.producer_id(bump) == 0  # a fresh id, epoch 0, as Kafka answers


def test_every_id_is_handed_out_once_and_every_request_answered_once_whatever_the_controller_does() -> None:
    """Random producers, controller answers, losses, timeouts and leader changes; a controller that
    hands out increasing blocks (some of them lost on the way back, as a committed block whose
    answer never arrives is)."""
    for seed in range(20):
        rng = random.Random(seed)
        b = Broker(max_wait_ms=300, request_timeout_ms=200)
        next_start = 0
        asked: list[int] = []
        for _ in range(3_000):
            roll = rng.random()
            if roll < 0.3:
                asked.append(b.init())
            elif roll < 0.35:
                b.leader = rng.choice([None, 1, 2])
            if b.sent and b.manager.in_flight and rng.random() < 0.2:
                kind = rng.random()
                if kind < 0.6:
                    b.reply(block(next_start, rng.choice([1, 3, 10])))
                elif kind < 0.8:
                    b.reply(refused(ErrorCode.NOT_CONTROLLER))
                else:
                    b.reply(LOST)
                next_start += 10  # what the controller committed, answered or not
            b.advance(1)
        b.leader = 1
        if b.manager.in_flight:
            b.reply(block(next_start, 10_000))
        b.advance(400)  # whatever still waits is answered by its deadline
        assert sorted(b.answers) == sorted(asked), f"seed {seed}"
        granted = [a.producer_id for _, a in b.answers.values() if a.error_code == 0]
        assert len(granted) == len(set(granted)), f"seed {seed}: an id was handed out twice"
        assert {a.error_code for _, a in b.answers.values()} <= {0, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
        assert granted, f"seed {seed}: no producer ever got an id"


# -- broker nodes on real controllers ------------------------------------------------------------------


def init_producer_id_via(cluster: BrokerCluster, broker: int) -> Any:
    body = IPI(transactional_id=None, transaction_timeout_ms=60_000)
    cid = cluster.send(
        lambda c: ClientEnvelope(CLIENT_ID, broker, c, LISTENER, ApiRequest(init_producer_id.API, 4, body))
    )
    envelope = cluster.wait_answer(cid)
    assert isinstance(envelope.body, ApiResponse)
    return envelope.body.body


def test_brokers_get_disjoint_blocks_from_the_controller_and_keep_going_after_a_failover() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    first = init_producer_id_via(cluster, 101)
    assert (first.error_code, first.producer_id, first.producer_epoch) == (0, 0, 0)
    assert init_producer_id_via(cluster, 101).producer_id == 1
    other = init_producer_id_via(cluster, 102)
    assert (other.error_code, other.producer_id) == (0, 1000)
    image = cluster.committed_image()
    assert image.producer_ids == (102, cluster.broker(102).lifecycle.broker_epoch, 2000)
    old = cluster.wait_active()
    cluster.crash(old.node_id)
    cluster.run_until(lambda: cluster.active() is not None and cluster.active() is not old)
    cluster.run_until(cluster.all_running)
    after = init_producer_id_via(cluster, 103)
    assert (after.error_code, after.producer_id) == (0, 2000)
    assert init_producer_id_via(cluster, 101).producer_id == 2  # its block is still its own
