"""What a broker reports for unclean recovery: which partitions, the last written epoch, the order of
completeness, and the heartbeat field's conversion."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataProvenance
from kraft.metadata.records import MetadataRecordType, make_record
from kraft.metadata.replica_log_info import (
    NO_EPOCH,
    ReplicaLogInfo,
    awaits_recovery,
    from_heartbeat,
    last_written_epoch,
    to_heartbeat,
)
from kraft.protocol.messages import broker_heartbeat

T = MetadataRecordType
TOPIC = uuid.UUID(int=0x7011)


@dataclass(frozen=True)
class Entry:
    epoch: int
    start_offset: int


@pytest.mark.parametrize(
    ("entries", "log_end", "expected"),
    [
        ([], 0, NO_EPOCH),  # empty log
        ([Entry(0, 0)], 10, 0),
        ([Entry(0, 0), Entry(3, 10)], 15, 3),
        # epoch 3 began at the log end and nothing was written in it: the last batch is epoch 0's
        ([Entry(0, 0), Entry(3, 10)], 10, 0),
        ([Entry(2, 0)], 0, NO_EPOCH),  # a leader that never appended
    ],
)
def test_the_last_written_epoch_is_the_epoch_of_the_last_batch(
    entries: list[Entry], log_end: int, expected: int
) -> None:
    assert last_written_epoch(entries, log_end) == expected


def test_a_later_epoch_is_more_complete_than_a_longer_log() -> None:
    def info(epoch: int, end: int) -> ReplicaLogInfo:
        return ReplicaLogInfo(
            topic_id=TOPIC, partition=0, partition_epoch=1, last_epoch=epoch, log_end_offset=end
        )

    assert info(2, 5).completeness > info(1, 500).completeness
    assert info(1, 501).completeness > info(1, 500).completeness


def _image(
    *, leader: int, isr: list[int], elr: list[int], fenced: set[int], shutting: frozenset[int] = frozenset()
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
            in_controlled_shutdown=b in shutting,
            log_dirs=[],
        )
        for b in (1, 2, 3)
    ]
    records += [
        make_record(T.TOPIC, name="t", topic_id=TOPIC),
        make_record(
            T.PARTITION,
            partition_id=0,
            topic_id=TOPIC,
            replicas=[1, 2, 3],
            isr=isr,
            removing_replicas=[],
            adding_replicas=[],
            leader=leader,
            leader_epoch=3,
            partition_epoch=4,
            eligible_leader_replicas=elr,
        ),
    ]
    delta = MetadataDelta(MetadataImage.EMPTY)
    for i, r in enumerate(records):
        delta.replay(r, i)
    return delta.apply(MetadataProvenance(last_offset=len(records) - 1, last_epoch=1, last_append_ms=0))


@pytest.mark.parametrize(
    ("leader", "isr", "elr", "fenced", "shutting", "reported"),
    [
        (1, [1, 2], [], set(), set(), False),  # led
        (-1, [], [], {1, 2, 3}, set(), True),  # ISR and ELR empty
        (-1, [], [2], {2}, set(), True),  # the only ELR member is fenced (Aggressive's case)
        (-1, [], [2], set(), set(), False),  # an active ELR member: a clean election is coming
        (-1, [], [2], set(), {2}, True),  # ... unless it is shutting down
        (-1, [3], [], {3}, set(), True),  # ELR off: the last ISR member is fenced
    ],
)
def test_a_partition_awaits_recovery_when_leaderless_with_no_active_isr_or_elr_member(
    leader: int, isr: list[int], elr: list[int], fenced: set[int], shutting: set[int], reported: bool
) -> None:
    image = _image(leader=leader, isr=isr, elr=elr, fenced=fenced, shutting=frozenset(shutting))
    p = image.partition(TOPIC, 0)
    assert p is not None
    assert awaits_recovery(p, image) is reported


def test_reports_go_to_the_heartbeat_grouped_by_topic_and_come_back_unchanged() -> None:
    other = uuid.UUID(int=0x2)
    infos = [
        ReplicaLogInfo(topic_id=TOPIC, partition=1, partition_epoch=4, last_epoch=2, log_end_offset=9),
        ReplicaLogInfo(topic_id=other, partition=0, partition_epoch=1, last_epoch=NO_EPOCH, log_end_offset=0),
        ReplicaLogInfo(topic_id=TOPIC, partition=0, partition_epoch=3, last_epoch=1, log_end_offset=7),
    ]
    field = to_heartbeat(infos)
    assert [(t.topic_id, [p.partition_index for p in t.partitions]) for t in field] == [
        (other, [0]),
        (TOPIC, [0, 1]),
    ]
    request = broker_heartbeat.REQUEST.cls(
        broker_id=1,
        broker_epoch=2,
        current_metadata_offset=3,
        want_fence=False,
        want_shut_down=False,
        offline_log_dirs=[],
        replica_log_info=field,
    )
    wire = broker_heartbeat.REQUEST.decode(broker_heartbeat.REQUEST.encode(request, 1, True), 1, True)
    assert sorted(from_heartbeat(wire), key=lambda i: (str(i.topic_id), i.partition)) == sorted(
        infos, key=lambda i: (str(i.topic_id), i.partition)
    )
    assert to_heartbeat([]) == []
