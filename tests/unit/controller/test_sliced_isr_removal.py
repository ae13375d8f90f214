"""Taking a broker out of many ISRs is sliced (cluster_control.ISR_REMOVAL_SLICE partitions per
controller step): controlled shutdown and session expiry end in the same image as Kafka's single
step, no batch holds more than a slice, and a new active controller picks up unfinished work."""

from __future__ import annotations

import pytest
from clusters import ControllerCluster

from kraft.controller import cluster_control
from kraft.controller.quorum_controller import ControllerConfig
from kraft.controller.replication_control import ReplicationControl

SLICE = 3


@pytest.fixture(autouse=True)
def small_slices(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Slices of 3, and the partition changes each controller step wrote (the raft accumulator may
    put several steps' records in one batch, so batches do not show the steps), by broker."""
    monkeypatch.setattr(cluster_control, "ISR_REMOVAL_SLICE", SLICE)
    steps: list[tuple[int, int]] = []
    real = ReplicationControl.remove_broker_from_isrs

    def spy(self: ReplicationControl, image, broker_id, records, stats, **kw):  # type: ignore[no-untyped-def]
        n = len(records)
        changed = real(self, image, broker_id, records, stats, **kw)
        steps.append((broker_id, len(records) - n))
        return changed

    monkeypatch.setattr(ReplicationControl, "remove_broker_from_isrs", spy)
    return steps


def test_controlled_shutdown_of_a_broker_in_many_isrs_is_written_in_slices(
    small_slices: list[tuple[int, int]],
) -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 10, 3)
    first = c.heartbeat(1, epochs[1], want_shutdown=True)
    assert not first.should_shut_down
    c.run_until(lambda: not c.image().partitions_with_isr_member(1), timeout_ms=2_000)
    img = c.image()
    assert img.brokers[1].in_controlled_shutdown and not img.brokers[1].fenced
    assert not img.partitions_led_by(1)
    assert all(p.leader in (2, 3) for p in img.topics_by_name["t"].partitions.values())
    assert [n for b, n in small_slices if b == 1] == [3, 3, 3, 1]
    for b in (2, 3):
        c.heartbeat(b, epochs[b])
    done = c.heartbeat(1, epochs[1], want_shutdown=True)
    assert done.should_shut_down and c.image().brokers[1].fenced


def test_should_shut_down_waits_for_the_last_slice() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 10, 3)
    active = c.wait_active()
    c.heartbeat(1, epochs[1], want_shutdown=True)
    if 1 in active.heartbeats.isr_removals:  # slices left: the broker is told to keep waiting
        assert not c.heartbeat(1, epochs[1], want_shutdown=True).should_shut_down


def test_a_new_active_controller_finishes_a_sliced_shutdown() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 10, 3)
    active = c.wait_active()
    c.heartbeat(1, epochs[1], want_shutdown=True)
    # What a newly active controller knows: the image, no soft state.
    active.heartbeats.start_sessions(active.latest_image, c.now_ms)
    assert not active.heartbeats.isr_removals
    c.run_for(100)
    left = len(c.image().partitions_with_isr_member(1))
    assert left > 0  # nothing resumes the work until the broker's next heartbeat
    assert not c.heartbeat(1, epochs[1], want_shutdown=True).should_shut_down
    c.run_until(lambda: not c.image().partitions_with_isr_member(1), timeout_ms=2_000)
    for b in (2, 3):
        c.heartbeat(b, epochs[b])
    assert c.heartbeat(1, epochs[1], want_shutdown=True).should_shut_down


def test_session_expiry_of_a_broker_in_many_isrs_fences_it_with_the_last_slice(
    small_slices: list[tuple[int, int]],
) -> None:
    c = ControllerCluster(1, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=3000))
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 10, 3)
    seen: list[tuple[bool, int]] = []  # (fenced, partitions with broker 1 in ISR), per step
    last_heartbeat_ms = [c.now_ms]

    def keep_others_alive() -> bool:
        if c.now_ms - last_heartbeat_ms[0] >= 500:
            last_heartbeat_ms[0] = c.now_ms
            for b in (2, 3):
                c.heartbeat(b, epochs[b])
        img = c.image()
        seen.append((img.brokers[1].fenced, len(img.partitions_with_isr_member(1))))
        return img.brokers[1].fenced

    c.run_until(keep_others_alive, timeout_ms=10_000)
    assert [n for b, n in small_slices if b == 1] == [3, 3, 3, 1]
    # Slices shrink the ISR membership while broker 1 is still unfenced; the fencing record comes
    # with the last slice, so a fenced broker 1 is never in an ISR.
    assert any(0 < left < 10 for fenced, left in seen if not fenced)
    assert all(left == 0 for fenced, left in seen if fenced)
    assert not c.image().partitions_led_by(1)


def test_a_heartbeat_cancels_an_unfinished_fencing() -> None:
    c = ControllerCluster(1, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=3000))
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 10, 3)
    active = c.wait_active()
    active.heartbeats.last_contact_ms[1] = c.now_ms - 10_000  # expired
    c.run_until(lambda: 1 in active.heartbeats.isr_removals, timeout_ms=1_000)
    assert not c.heartbeat(1, epochs[1]).is_fenced
    assert 1 not in active.heartbeats.isr_removals
    assert not c.image().brokers[1].fenced


def test_each_later_slice_of_a_controlled_shutdown_logs_its_progress(
    caplog: pytest.LogCaptureFixture,
) -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 10, 3)
    with caplog.at_level("INFO", logger="kraft.controller"):
        c.heartbeat(1, epochs[1], want_shutdown=True)
        c.run_until(lambda: not c.image().partitions_with_isr_member(1), timeout_ms=2_000)
    progress = [r.getMessage() for r in caplog.records if "controlled shutdown of broker 1" in r.getMessage()]
    assert [m.split(": ", 2)[2] for m in progress] == [
        "3 partition(s) changed, 4 more to look at",
        "3 partition(s) changed, 1 more to look at",
        "1 partition(s) changed, 0 more to look at",
    ]
