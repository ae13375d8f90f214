"""The broker lifecycle state machine against scripted controller answers (no raft, no network)."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from kraft.broker.lifecycle import (
    FIRST_SHUTDOWN_RECHECK_MS,
    PEER_SHUTDOWN_REPORT_MS,
    SHUTDOWN_RECHECK_MS,
    BrokerLifecycle,
    BrokerState,
    LifecycleConfig,
    Listener,
)
from kraft.metadata.replica_log_info import ReplicaLogInfo
from kraft.protocol.envelope import ApiRequest, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import broker_heartbeat, broker_registration

INCARNATION = uuid.UUID(int=77)
LOG_DIR = uuid.UUID(int=(5 << 64) | 9)


def make(**overrides: Any) -> BrokerLifecycle:
    fields: dict[str, Any] = {
        "node_id": 5,
        "cluster_id": "c1",
        "incarnation_id": INCARNATION,
        "listeners": (Listener(name="PLAINTEXT", host="h", port=9092),),
        "supported_features": {"metadata.version": (1, 25)},
        "rack": "r1",
        "log_dirs": (LOG_DIR,),
        "previous_broker_epoch": 42,
        "heartbeat_interval_ms": 100,
        "request_timeout_ms": 1000,
        "registration_timeout_ms": 5000,
    }
    fields.update(overrides)
    lifecycle = BrokerLifecycle(LifecycleConfig(**fields))
    lifecycle.start(0)
    return lifecycle


def one(lifecycle: BrokerLifecycle, now_ms: int, controller: int | None = 1, offset: int = 10) -> Any:
    requests, _wake = lifecycle.poll(now_ms, controller, offset)
    assert len(requests) == 1, requests
    return requests[0]


def answer(lifecycle: BrokerLifecycle, request: ControllerEnvelope, now_ms: int, **fields: Any) -> None:
    body = request.body
    assert isinstance(body, ApiRequest)
    api = broker_registration if body.api is broker_registration.API else broker_heartbeat
    response = None if fields.get("fail") else api.RESPONSE.cls(**fields)
    lifecycle.handle_response(request.reply(response), now_ms)


def register(lifecycle: BrokerLifecycle, now_ms: int = 0, epoch: int = 7) -> None:
    request = one(lifecycle, now_ms)
    assert request.body.api is broker_registration.API
    answer(lifecycle, request, now_ms, error_code=0, broker_epoch=epoch)


def test_registration_carries_what_the_controller_needs() -> None:
    lifecycle = make()
    request = one(lifecycle, 0, controller=3)
    assert request.destination == 3 and request.source == 5
    body = request.body.body
    assert (body.broker_id, body.cluster_id, body.incarnation_id, body.rack) == (5, "c1", INCARNATION, "r1")
    assert body.previous_broker_epoch == 42 and body.log_dirs == [LOG_DIR]
    assert [(x.name, x.host, x.port) for x in body.listeners] == [("PLAINTEXT", "h", 9092)]
    assert [(f.name, f.min_supported_version, f.max_supported_version) for f in body.features] == [
        ("metadata.version", 1, 25)
    ]


def test_one_request_in_flight_and_nothing_without_a_controller() -> None:
    lifecycle = make()
    assert lifecycle.poll(0, None, 0)[0] == []
    request = one(lifecycle, 200)
    assert lifecycle.poll(201, 1, 0)[0] == []  # still in flight
    answer(lifecycle, request, 250, error_code=int(ErrorCode.DUPLICATE_BROKER_REGISTRATION))
    assert not lifecycle.registered
    assert lifecycle.poll(300, 1, 0)[0] == []  # backs off one heartbeat interval
    assert one(lifecycle, 350).body.api is broker_registration.API


def test_starting_recovery_running_and_the_flags_each_heartbeat_carries() -> None:
    lifecycle = make()
    register(lifecycle, 0, epoch=7)
    assert lifecycle.state == BrokerState.STARTING and lifecycle.broker_epoch == 7
    hb = one(lifecycle, 0, offset=3)  # a heartbeat at once after registering
    assert (hb.body.body.broker_epoch, hb.body.body.current_metadata_offset) == (7, 3)
    assert hb.body.body.want_fence and not hb.body.body.want_shut_down
    answer(lifecycle, hb, 5, error_code=0, is_caught_up=False, is_fenced=True)
    assert lifecycle.state == BrokerState.STARTING
    hb = one(lifecycle, 15)  # re-checked 10 ms later while starting
    answer(lifecycle, hb, 16, error_code=0, is_caught_up=True, is_fenced=True)
    assert lifecycle.state == BrokerState.RECOVERY
    lifecycle.set_ready_to_unfence(16)
    hb = one(lifecycle, 26)
    assert not hb.body.body.want_fence
    answer(lifecycle, hb, 27, error_code=0, is_caught_up=True, is_fenced=False)
    assert lifecycle.state == BrokerState.RUNNING and not lifecycle.is_fenced
    assert lifecycle.poll(100, 1, 0)[0] == []
    assert one(lifecycle, 127).body.api is broker_heartbeat.API  # every interval


def running(lifecycle: BrokerLifecycle) -> int:
    register(lifecycle, 0)
    answer(lifecycle, one(lifecycle, 0), 1, error_code=0, is_caught_up=True, is_fenced=True)
    lifecycle.set_ready_to_unfence(1)
    answer(lifecycle, one(lifecycle, 11), 12, error_code=0, is_caught_up=True, is_fenced=False)
    assert lifecycle.state == BrokerState.RUNNING
    return 12


def test_a_fenced_running_broker_keeps_heartbeating_with_its_epoch_until_unfenced() -> None:
    lifecycle = make()
    now = running(lifecycle)
    hb = one(lifecycle, now + 100)
    answer(lifecycle, hb, now + 101, error_code=0, is_caught_up=True, is_fenced=True)
    assert lifecycle.state == BrokerState.RUNNING and lifecycle.is_fenced
    hb = one(lifecycle, now + 201)
    assert hb.body.body.broker_epoch == 7 and not hb.body.body.want_fence
    answer(lifecycle, hb, now + 202, error_code=0, is_caught_up=True, is_fenced=False)
    assert not lifecycle.is_fenced and lifecycle.registrations == 1


def test_a_stale_epoch_means_the_registration_is_lost_and_the_same_incarnation_registers_again() -> None:
    lifecycle = make()
    now = running(lifecycle)
    hb = one(lifecycle, now + 100)
    answer(lifecycle, hb, now + 101, error_code=int(ErrorCode.STALE_BROKER_EPOCH))
    request = one(lifecycle, now + 101)
    assert request.body.api is broker_registration.API
    assert request.body.body.incarnation_id == INCARNATION
    answer(lifecycle, request, now + 102, error_code=0, broker_epoch=99)
    assert lifecycle.broker_epoch == 99 and lifecycle.registrations == 2


def test_not_controller_retries_soon_and_a_failure_waits_an_interval() -> None:
    lifecycle = make(retry_backoff_ms=20)
    now = running(lifecycle)
    hb = one(lifecycle, now + 100, controller=1)
    answer(lifecycle, hb, now + 100, error_code=int(ErrorCode.NOT_CONTROLLER))
    assert lifecycle.poll(now + 110, 2, 0)[0] == []
    hb = one(lifecycle, now + 120, controller=2)
    assert hb.destination == 2
    answer(lifecycle, hb, now + 120, fail=True)
    assert lifecycle.poll(now + 200, 2, 0)[0] == []
    assert one(lifecycle, now + 220, controller=2).body.api is broker_heartbeat.API


def test_an_unanswered_request_times_out() -> None:
    lifecycle = make(request_timeout_ms=300)
    one(lifecycle, 0)
    assert lifecycle.poll(299, 1, 0)[0] == []
    assert lifecycle.poll(300, 1, 0)[0] == []  # given up: waits an interval
    assert one(lifecycle, 400).body.api is broker_registration.API


def test_controlled_shutdown_waits_for_should_shut_down() -> None:
    lifecycle = make()
    now = running(lifecycle)
    lifecycle.begin_controlled_shutdown(now)
    assert lifecycle.state == BrokerState.PENDING_CONTROLLED_SHUTDOWN
    hb = one(lifecycle, now)
    assert hb.body.body.want_shut_down
    answer(lifecycle, hb, now + 1, error_code=0, is_caught_up=True, is_fenced=False, should_shut_down=False)
    assert lifecycle.poll(now + 50, 1, 0)[0] == []
    hb = one(lifecycle, now + 51)  # the first re-check comes 50 ms later
    answer(lifecycle, hb, now + 52, error_code=0, is_caught_up=True, is_fenced=True, should_shut_down=True)
    assert lifecycle.state == BrokerState.SHUTTING_DOWN and lifecycle.controlled_shutdown_done
    assert lifecycle.poll(now + 1000, 1, 0) == ([], None)


def test_controlled_shutdown_rechecks_faster_than_the_heartbeat_interval() -> None:
    # Kafka re-checks at the interval (2 s) after the first 50 ms; kraft every SHUTDOWN_RECHECK_MS.
    lifecycle = make(heartbeat_interval_ms=2000)
    now = running(lifecycle)
    lifecycle.begin_controlled_shutdown(now)
    sent = []
    t = now
    for _ in range(4):
        hb = one(lifecycle, t)
        sent.append(t)
        answer(lifecycle, hb, t, error_code=0, is_caught_up=True, is_fenced=False, should_shut_down=False)
        _, wake = lifecycle.poll(t, 1, 0)
        assert wake is not None
        t = wake
    assert [b - a for a, b in itertools.pairwise(sent)] == [
        FIRST_SHUTDOWN_RECHECK_MS,
        SHUTDOWN_RECHECK_MS,
        SHUTDOWN_RECHECK_MS,
    ]


def test_metadata_applied_while_a_peer_shuts_down_is_reported_soon() -> None:
    lifecycle = make(heartbeat_interval_ms=2000)
    now = running(lifecycle)
    assert lifecycle.poll(now, 1, 10) == ([], now + 2000)  # the interval
    assert lifecycle.early_report_ms(now) is None  # nothing requested
    lifecycle.request_report()
    assert lifecycle.early_report_ms(now + 5) == now + 5 + PEER_SHUTDOWN_REPORT_MS
    assert lifecycle.early_report_ms(now + 6) is None  # applied once
    hb = one(lifecycle, now + 5 + PEER_SHUTDOWN_REPORT_MS)
    assert hb.body.body.current_metadata_offset == 10
    # A request while a heartbeat is in flight is applied once its answer is in.
    lifecycle.request_report()
    assert lifecycle.early_report_ms(now + 110) is None
    answer(lifecycle, hb, now + 120, error_code=0, is_caught_up=True, is_fenced=False)
    assert lifecycle.early_report_ms(now + 121) == now + 121 + PEER_SHUTDOWN_REPORT_MS
    # Not before the broker runs.
    starting = make()
    starting.request_report()
    assert starting.early_report_ms(0) is None


def test_a_broker_that_never_ran_skips_controlled_shutdown() -> None:
    lifecycle = make()
    register(lifecycle)
    lifecycle.begin_controlled_shutdown(5)
    assert lifecycle.controlled_shutdown_done


def test_no_registration_within_the_timeout_gives_up() -> None:
    lifecycle = make(registration_timeout_ms=1000)
    assert lifecycle.poll(999, None, 0)[0] == []
    assert lifecycle.poll(1000, None, 0) == ([], None)
    assert lifecycle.registration_timed_out and lifecycle.state == BrokerState.SHUTTING_DOWN


def test_a_late_answer_to_a_timed_out_request_is_ignored() -> None:
    lifecycle = make(request_timeout_ms=100)
    first = one(lifecycle, 0)
    lifecycle.poll(100, 1, 0)
    second = one(lifecycle, 200)
    answer(lifecycle, first, 201, error_code=0, broker_epoch=1)
    assert not lifecycle.registered
    answer(lifecycle, second, 202, error_code=0, broker_epoch=2)
    assert lifecycle.broker_epoch == 2


def test_heartbeats_carry_the_replica_log_info_of_the_moment_and_registrations_do_not_ask_for_it() -> None:
    topic = uuid.UUID(int=0x7011)
    asked: list[int] = []
    reports = [
        ReplicaLogInfo(topic_id=topic, partition=2, partition_epoch=9, last_epoch=4, log_end_offset=120)
    ]

    def log_info() -> list[ReplicaLogInfo]:
        asked.append(1)
        return reports

    lifecycle = make()
    registration, _ = lifecycle.poll(0, 1, 0, log_info)
    assert registration[0].body.api is broker_registration.API and asked == []
    answer(lifecycle, registration[0], 0, error_code=0, broker_epoch=7)
    (hb,), _ = lifecycle.poll(0, 1, 0, log_info)
    assert asked == [1]
    field = hb.body.body.replica_log_info
    assert [(t.topic_id, [(p.partition_index, p.partition_epoch) for p in t.partitions]) for t in field] == [
        (topic, [(2, 9)])
    ]
    part = field[0].partitions[0]
    assert (part.last_written_leader_epoch, part.log_end_offset) == (4, 120)
    answer(lifecycle, hb, 1, error_code=0, is_caught_up=True, is_fenced=True)
    reports = []  # the partition got a leader: the next heartbeat reports nothing
    (hb,), _ = lifecycle.poll(20, 1, 0, log_info)
    assert hb.body.body.replica_log_info == []
    assert lifecycle.poll(21, 1, 0, log_info)[0] == [] and len(asked) == 2  # nothing built: not asked
