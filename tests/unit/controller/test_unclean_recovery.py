"""Unclean recovery's decisions (``kraft.controller.unclean_recovery``), as tables: which reports
elect whom, and when it waits.

Every row: replicas [1, 2, 3] of one partition at partition epoch 4, leaderless; brokers with their
epochs (10 + id) and fenced flags; the reports each broker's heartbeat carried, as
``(last written epoch, log end offset)`` (optionally with the partition and broker epochs it saw).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kraft.controller.unclean_recovery import (
    RecoveryElection,
    UncleanRecoveryManager,
    UncleanRecoveryStrategy,
    choose_leader,
)
from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataProvenance, TopicIdPartition
from kraft.metadata.records import MetadataRecordType, make_record
from kraft.metadata.replica_log_info import ReplicaLogInfo

T = MetadataRecordType
TOPIC = uuid.UUID(int=0x7011)
TP = TopicIdPartition(TOPIC, 0)
PE = 4  # the partition epoch of every row
TIMEOUT = 60_000
BALANCED = UncleanRecoveryStrategy.BALANCED
AGGRESSIVE = UncleanRecoveryStrategy.AGGRESSIVE
NONE = UncleanRecoveryStrategy.NONE


def image(
    *,
    fenced: frozenset[int] = frozenset(),
    leader: int = -1,
    isr: tuple[int, ...] = (),
    elr: tuple[int, ...] = (),
    topic: str = "t",
) -> MetadataImage:
    data: Any = make_record(T.REGISTER_BROKER).data
    records = [
        make_record(
            T.REGISTER_BROKER,
            broker_id=b,
            broker_epoch=10 + b,
            incarnation_id=uuid.UUID(int=b),
            end_points=[type(data).BrokerEndpoint(name="PLAINTEXT", host="h", port=1, security_protocol=0)],
            features=[],
            rack=None,
            fenced=b in fenced,
            in_controlled_shutdown=False,
            log_dirs=[],
        )
        for b in (1, 2, 3)
    ]
    records += [
        make_record(T.TOPIC, name=topic, topic_id=TOPIC),
        make_record(
            T.PARTITION,
            partition_id=0,
            topic_id=TOPIC,
            replicas=[1, 2, 3],
            isr=list(isr),
            removing_replicas=[],
            adding_replicas=[],
            leader=leader,
            leader_epoch=2,
            partition_epoch=PE,
            eligible_leader_replicas=list(elr),
        ),
    ]
    delta = MetadataDelta(MetadataImage.EMPTY)
    for i, r in enumerate(records):
        delta.replay(r, i)
    return delta.apply(MetadataProvenance(last_offset=len(records) - 1, last_epoch=1, last_append_ms=0))


def report(last_epoch: int, log_end: int, *, partition_epoch: int = PE) -> ReplicaLogInfo:
    return ReplicaLogInfo(
        topic_id=TOPIC,
        partition=0,
        partition_epoch=partition_epoch,
        last_epoch=last_epoch,
        log_end_offset=log_end,
    )


def run(
    img: MetadataImage,
    reports: dict[int, ReplicaLogInfo],
    *,
    strategy: UncleanRecoveryStrategy = BALANCED,
    broker_epochs: dict[int, int] | None = None,
    now_ms: int = 1_000,
    first_report_ms: int = 1_000,
    eligible: bool = True,
) -> tuple[list[RecoveryElection], int | None]:
    """Feed ``reports`` (each broker's heartbeat at ``first_report_ms``) and poll at ``now_ms``."""
    manager = UncleanRecoveryManager(strategy, TIMEOUT)
    for b, info in reports.items():
        manager.record(b, (broker_epochs or {}).get(b, 10 + b), [info])
    manager.poll(img, first_report_ms, is_acceptable=_active(img), eligible_topic=lambda _: eligible)
    return manager.poll(img, now_ms, is_acceptable=_active(img), eligible_topic=lambda _: eligible)


def _active(img: MetadataImage) -> Any:
    return lambda r: r in img.brokers and img.brokers[r].is_active


def winner(result: tuple[list[RecoveryElection], int | None]) -> int | None:
    elections, _ = result
    assert len(elections) <= 1
    return elections[0].leader if elections else None


LATE = 1_000 + TIMEOUT  # the first poll at or after the timeout


@pytest.mark.parametrize(
    ("name", "fenced", "reports", "now_ms", "expected"),
    [
        (
            "every replica reported: the longest log",
            frozenset(),
            {1: (0, 10), 2: (0, 30), 3: (0, 20)},
            1_000,
            2,
        ),
        ("a later epoch beats a longer log", frozenset(), {1: (3, 5), 2: (2, 90), 3: (-1, 0)}, 1_000, 1),
        ("ties go to replica order", frozenset(), {1: (1, 10), 2: (1, 40), 3: (1, 40)}, 1_000, 2),
        ("a replica missing: Balanced waits", frozenset(), {1: (0, 10), 2: (0, 30)}, 1_000, None),
        (
            "... until the timeout, then elects from what it has",
            frozenset(),
            {1: (0, 10), 2: (0, 30)},
            LATE,
            2,
        ),
        ("a fenced reporter is never elected", frozenset({2}), {1: (0, 10), 2: (0, 30), 3: (0, 20)}, LATE, 3),
        (
            "... and waited for while it holds the most",
            frozenset({2}),
            {1: (0, 10), 2: (0, 30), 3: (0, 20)},
            1_000,
            None,
        ),
        (
            "... not when another is as complete",
            frozenset({2}),
            {1: (0, 30), 2: (0, 30), 3: (0, 20)},
            1_000,
            1,
        ),
        (
            "nobody active: nothing to elect",
            frozenset({1, 2, 3}),
            {1: (0, 10), 2: (0, 30), 3: (0, 20)},
            LATE,
            None,
        ),
    ],
)
def test_balanced_elects_the_most_complete_log_once_every_replica_reported(
    name: str, fenced: frozenset[int], reports: dict[int, tuple[int, int]], now_ms: int, expected: int | None
) -> None:
    img = image(fenced=fenced)
    infos = {b: report(*r) for b, r in reports.items()}
    assert winner(run(img, infos, now_ms=now_ms)) == expected, name


def test_a_report_for_an_older_partition_epoch_is_ignored() -> None:
    img = image()
    infos = {1: report(0, 10), 2: report(0, 90, partition_epoch=PE - 1), 3: report(0, 20)}
    # Broker 2's report is stale: it counts as missing (Balanced waits), and after the timeout it is
    # no candidate, though its log looked the longest.
    assert winner(run(img, infos)) is None
    assert winner(run(img, infos, now_ms=LATE)) == 3


def test_a_report_from_an_earlier_incarnation_is_ignored() -> None:
    # Broker 2 reported, then restarted (a power loss may have shortened its log): new broker epoch.
    img = image()
    infos = {1: report(0, 10), 2: report(0, 90), 3: report(0, 20)}
    assert winner(run(img, infos, broker_epochs={2: 5})) is None
    assert winner(run(img, infos, broker_epochs={2: 5}, now_ms=LATE)) == 3


def test_none_never_elects() -> None:
    img = image()
    infos = {1: report(0, 10), 2: report(0, 30), 3: report(0, 20)}
    assert run(img, infos, strategy=NONE, now_ms=LATE) == ([], None)


def test_a_topic_the_caller_excludes_is_left_alone() -> None:
    img = image()
    infos = {1: report(0, 10), 2: report(0, 30), 3: report(0, 20)}
    assert run(img, infos, eligible=False, now_ms=LATE) == ([], None)


def test_aggressive_elects_past_a_fenced_elr_member_and_balanced_waits_for_it() -> None:
    img = image(fenced=frozenset({3}), elr=(3,))
    infos = {1: report(0, 10), 2: report(0, 30)}
    assert winner(run(img, infos, strategy=BALANCED, now_ms=LATE)) is None  # ELR non-empty: not its case
    # Aggressive waits only for the active replicas (1 and 2), both reported: at once.
    assert winner(run(img, infos, strategy=AGGRESSIVE)) == 2


def test_aggressive_waits_for_every_active_replica_before_the_timeout() -> None:
    img = image(fenced=frozenset({3}), elr=(3,))
    assert winner(run(img, {1: report(0, 10)}, strategy=AGGRESSIVE)) is None
    assert winner(run(img, {1: report(0, 10)}, strategy=AGGRESSIVE, now_ms=LATE)) == 1


@pytest.mark.parametrize(
    ("leader", "isr", "elr"),
    [(1, (1,), ()), (-1, (2,), ()), (-1, (), (2,))],
    ids=["led", "isr-member", "active-elr-member"],
)
def test_a_partition_that_has_or_can_get_a_clean_leader_is_not_recovered(
    leader: int, isr: tuple[int, ...], elr: tuple[int, ...]
) -> None:
    img = image(leader=leader, isr=isr, elr=elr)
    infos = {1: report(0, 10), 2: report(0, 30), 3: report(0, 20)}
    for strategy in (BALANCED, AGGRESSIVE):
        assert run(img, infos, strategy=strategy, now_ms=LATE) == ([], None)


def test_the_wait_is_timed_from_the_first_report_and_ends_once_elected() -> None:
    img = image()
    manager = UncleanRecoveryManager(BALANCED, TIMEOUT)
    active = _active(img)
    manager.record(1, 11, [report(0, 10)])
    assert manager.poll(img, 5_000, is_acceptable=active, eligible_topic=lambda _: True) == (
        [],
        5_000 + TIMEOUT,
    )
    manager.record(2, 12, [report(0, 30)])  # a later report does not restart the wait
    assert manager.poll(img, 9_000, is_acceptable=active, eligible_topic=lambda _: True) == (
        [],
        5_000 + TIMEOUT,
    )
    assert manager.waiting() == {TP: 5_000}
    elections, _ = manager.poll(img, 5_000 + TIMEOUT, is_acceptable=active, eligible_topic=lambda _: True)
    assert [(e.leader, e.timed_out) for e in elections] == [(2, True)]
    led = image(leader=2, isr=(2,))
    assert manager.poll(led, 5_000 + TIMEOUT + 1, is_acceptable=active, eligible_topic=lambda _: True) == (
        [],
        None,
    )
    assert manager.waiting() == {}


def test_an_empty_heartbeat_withdraws_a_brokers_reports_and_reset_forgets_everything() -> None:
    img = image()
    manager = UncleanRecoveryManager(BALANCED, TIMEOUT)
    active = _active(img)
    for b, end in ((1, 10), (2, 30), (3, 20)):
        manager.record(b, 10 + b, [report(0, end)])
    manager.record(2, 12, [])  # its partition no longer awaits recovery in broker 2's image
    assert manager.poll(img, 1_000, is_acceptable=active, eligible_topic=lambda _: True)[0] == []
    manager.reset()  # a new active controller: nothing known, nothing waiting
    assert manager.waiting() == {}
    assert manager.poll(img, LATE, is_acceptable=active, eligible_topic=lambda _: True) == ([], None)


def test_choose_leader_is_pure_and_never_names_an_unacceptable_replica() -> None:
    img = image()
    p = img.partition(TOPIC, 0)
    assert p is not None
    reports = {1: report(0, 10), 2: report(0, 30), 3: report(0, 20)}
    assert choose_leader(p, reports, is_acceptable=lambda r: r != 2, awaited=(1, 2, 3), timed_out=True) == 3
    assert choose_leader(p, reports, is_acceptable=lambda r: False, awaited=(), timed_out=True) is None
