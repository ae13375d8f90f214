"""RequestManager: one request in flight per destination, backoff after a failure, and the time
the node must wake for the next destination to become ready."""

from __future__ import annotations

from test_fetch_fallback import BOOTSTRAP, _fetches, _observer_following

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import FetchRequest, FetchResponse
from kraft.raft.request_manager import RequestManager


def _manager() -> RequestManager:
    return RequestManager(request_timeout_ms=1000, retry_backoff_ms=50)


def test_one_request_in_flight_until_answered_or_timed_out() -> None:
    requests = _manager()
    requests.on_request_sent(2, correlation_id=7, now_ms=0)
    assert not requests.is_ready(2, 999) and requests.has_any_inflight(999)
    assert requests.is_response_expected(2, 7) and not requests.is_response_expected(2, 8)
    assert requests.is_ready(2, 1000) and not requests.has_any_inflight(1000)
    assert not requests.is_response_expected(2, 7)  # a late answer no longer matches


def test_a_failed_answer_backs_off_and_a_good_one_does_not() -> None:
    requests = _manager()
    requests.on_request_sent(2, correlation_id=1, now_ms=0)
    requests.on_response(2, success=False, now_ms=10)
    assert not requests.is_ready(2, 59) and requests.is_ready(2, 60)
    requests.on_request_sent(3, correlation_id=2, now_ms=0)
    requests.on_response(3, success=True, now_ms=10)
    assert requests.is_ready(3, 10)


def test_next_event_is_the_earliest_deadline_or_backoff_end_to_come() -> None:
    requests = _manager()
    assert requests.next_event_ms(0) is None
    requests.on_request_sent(2, correlation_id=1, now_ms=0)
    requests.backoff(3, now_ms=100)
    assert requests.next_event_ms(100) == 150
    assert requests.next_event_ms(150) == 1000


def test_a_request_that_timed_out_unread_does_not_hide_a_backoff_to_come() -> None:
    # Nobody asked is_ready(2) after its deadline (1000) passed; the backoff of 3 ends at 1550.
    requests = _manager()
    requests.on_request_sent(2, correlation_id=1, now_ms=0)
    requests.backoff(3, now_ms=1500)
    assert requests.next_event_ms(1500) == 1550


def test_an_observer_that_tried_every_bootstrap_server_wakes_when_the_first_backoff_ends() -> None:
    # Its fetch to the leader's endpoint timed out without an answer; every bootstrap server then
    # answered "not the leader". The stale request hid the backoffs and the node slept to its
    # next fetch timeout (found by: kraft sim run --scenario voter-changes --seed 5856).
    ctx = _observer_following()  # its fetch to the leader's endpoint is never answered
    ctx.poll(advance_ms=2_001)
    for _ in BOOTSTRAP:
        [request] = ctx.sent_of(FetchRequest)
        assert request.destination < 0
        ctx.respond_to(
            request,
            FetchResponse(
                partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                current_leader_id=2,
                current_leader_epoch=5,
            ),
        )
        ctx.poll(advance_ms=1)
    assert _fetches(ctx) == []  # all three back off
    assert ctx.wake_at_ms is not None and ctx.wake_at_ms <= ctx.now_ms + 20  # retry.backoff.ms
    ctx.poll(advance_ms=ctx.wake_at_ms - ctx.now_ms)
    assert len(_fetches(ctx)) == 1
