"""DUPLICATE_BROKER_REGISTRATION after a controller failover (spec 2.1 step 2, 2.4; cluster_control's
module docstring): a new active controller counts a broker session as live only once it heard that
incarnation itself. A broker killed around a failover re-registers at once; two live processes with
one id are still refused; fencing of silent brokers is unchanged.

First ``BrokerHeartbeats`` alone, then three controllers on real raft cores with a scripted broker.
"""

from __future__ import annotations

import uuid

from clusters import ControllerCluster

from kraft.controller.cluster_control import BrokerHeartbeats
from kraft.controller.quorum_controller import ControllerConfig, QuorumController
from kraft.metadata.image import MetadataImage
from kraft.protocol.error_codes import ErrorCode

SESSION_MS = 3000
NEW_INCARNATION = uuid.UUID(int=0xBEEF)


# ------------------------------------------------------------------------------ BrokerHeartbeats


def test_a_session_started_at_activation_is_not_live_until_the_broker_is_heard() -> None:
    hb = BrokerHeartbeats(SESSION_MS)
    hb.last_contact_ms[1] = 0
    hb.heard.add(1)
    hb.start_sessions(MetadataImage.EMPTY, 10_000)  # a new term: nothing heard any more
    hb.last_contact_ms[1] = 10_000  # as start_sessions does for an unfenced broker
    assert not hb.has_live_session(1, 10_001)
    hb.touch(1, 10_500)  # a heartbeat
    assert hb.has_live_session(1, 10_500 + SESSION_MS - 1)
    assert not hb.has_live_session(1, 10_500 + SESSION_MS)  # expired


def test_a_registration_of_the_current_incarnation_counts_as_heard_without_moving_the_clock() -> None:
    hb = BrokerHeartbeats(SESSION_MS)
    hb.last_contact_ms[1] = 1000  # started at activation
    hb.heard_registration(1)
    assert hb.has_live_session(1, 1000 + SESSION_MS - 1)
    assert hb.last_contact_ms[1] == 1000  # fencing reads the same deadline as before
    assert not hb.has_live_session(1, 1000 + SESSION_MS)
    hb.forget(1)  # a new incarnation replaced it
    assert 1 not in hb.heard and not hb.has_live_session(1, 1001)


# ------------------------------------------------------------------------------ with failover


def failed_over(c: ControllerCluster) -> tuple[dict[int, int], QuorumController]:
    """Brokers 1-3 registered and unfenced at the first active controller, which then crashes;
    the new active controller (no broker has contacted it yet)."""
    epochs = c.start_brokers([1, 2, 3])
    old = c.wait_active()
    c.crash(old.node_id)
    c.run_until(lambda: c.active() is not None and c.active() is not old)
    new = c.wait_active()
    assert new is not old and not c.image().brokers[1].fenced
    return epochs, new


def test_an_incarnation_the_new_controller_never_heard_is_replaced_at_once() -> None:
    c = ControllerCluster(3, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=SESSION_MS))
    epochs, new = failed_over(c)
    # Broker 1 was killed (never heartbeats the new controller); its next process starts now,
    # well inside the session the activation gave the dead one.
    activated_ms = new.heartbeats.last_contact_ms[1]
    r = c.register(1, incarnation=NEW_INCARNATION)
    assert c.now_ms - activated_ms < SESSION_MS
    assert r.error_code == ErrorCode.NONE
    assert r.broker_epoch > epochs[1]
    b = c.image().brokers[1]
    assert b.incarnation_id == NEW_INCARNATION and b.epoch == r.broker_epoch and b.fenced


def test_two_live_processes_with_one_id_are_still_refused_after_failover() -> None:
    c = ControllerCluster(3, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=SESSION_MS))
    epochs, _ = failed_over(c)
    assert c.heartbeat(1, epochs[1]).error_code == ErrorCode.NONE  # the first process is alive
    r = c.register(1, incarnation=NEW_INCARNATION)
    assert r.error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    assert c.image().brokers[1].epoch == epochs[1]


def test_a_retried_registration_of_the_live_incarnation_also_counts_as_heard() -> None:
    c = ControllerCluster(3, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=SESSION_MS))
    epochs, _ = failed_over(c)
    again = c.register(1)  # the registered incarnation, e.g. retrying an answer it lost
    assert again.error_code == ErrorCode.NONE and again.broker_epoch == epochs[1]
    assert c.register(1, incarnation=NEW_INCARNATION).error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION


def test_a_heard_broker_blocks_a_new_incarnation_until_its_session_expires() -> None:
    c = ControllerCluster(3, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=SESSION_MS))
    epochs, new = failed_over(c)
    assert c.heartbeat(1, epochs[1]).error_code == ErrorCode.NONE
    heard_ms = new.heartbeats.last_contact_ms[1]
    # Then the process dies: its next incarnation retries registering every 100 ms (as Kafka).
    refused_until = accepted_at = None
    while accepted_at is None:
        r = c.register(1, incarnation=NEW_INCARNATION)
        if r.error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION:
            refused_until = c.now_ms
            c.run_for(100)
        else:
            assert r.error_code == ErrorCode.NONE
            accepted_at = c.now_ms
        assert c.now_ms - heard_ms < 3 * SESSION_MS, "never accepted"
    assert refused_until is not None and refused_until - heard_ms >= SESSION_MS - 200
    assert accepted_at - heard_ms >= SESSION_MS


def test_a_broker_silent_since_the_failover_is_still_fenced_a_session_timeout_after_activation() -> None:
    c = ControllerCluster(3, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=SESSION_MS))
    epochs, new = failed_over(c)
    activated_ms = new.heartbeats.last_contact_ms[1]
    fenced_at: dict[int, int] = {}
    last_heartbeat_ms = [c.now_ms]

    def keep_others_alive() -> bool:
        if c.now_ms - last_heartbeat_ms[0] >= 500:
            last_heartbeat_ms[0] = c.now_ms
            for b in (2, 3):
                c.heartbeat(b, epochs[b])
        if c.image().brokers[1].fenced:
            fenced_at.setdefault(1, c.now_ms)
        return 1 in fenced_at

    c.run_until(keep_others_alive, timeout_ms=3 * SESSION_MS)
    assert SESSION_MS <= fenced_at[1] - activated_ms < SESSION_MS + 1000
    image = c.image()
    assert not image.brokers[2].fenced and not image.brokers[3].fenced
