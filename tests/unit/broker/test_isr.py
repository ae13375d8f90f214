"""The ISR manager with the data plane: what a partition leader asks the controller, from the
published deltas (an unclean leader's RECOVERING partitions reported RECOVERED)."""

from __future__ import annotations

import uuid
from typing import Any

from tests.unit.broker.test_replica_manager import TOPIC_ID, Cluster, partition_record

from kraft.broker.isr import IsrManager
from kraft.metadata.records import MetadataRecordType, make_record

T = MetadataRecordType
RECOVERING, RECOVERED = 1, 0
CONTROLLER = 3000


def asked(isr: IsrManager, now_ms: int) -> list[tuple[uuid.UUID, int, int]]:
    """(topic id, partition, leader recovery state) of each partition the AlterPartition due now names."""
    out, _ = isr.poll(now_ms, 100 + isr.node_id, CONTROLLER, True)
    rows: list[tuple[uuid.UUID, int, int]] = []
    for envelope in out:
        body: Any = envelope.body.body
        rows += [
            (t.topic_id, p.partition_index, p.leader_recovery_state)
            for t in body.topics
            for p in t.partitions
        ]
    return rows


def unclean_leader(cluster: Cluster, broker: int) -> IsrManager:
    isr = IsrManager(broker, replicas=cluster.managers[broker], request_timeout_ms=1_000)
    cluster.loader.install_publisher(isr.publish)
    cluster.change(leader=broker, isr=[broker], leader_recovery_state=RECOVERING)
    return isr


def test_an_unclean_leader_reports_its_partition_recovered_once() -> None:
    cluster = Cluster()
    isr = unclean_leader(cluster, 2)
    assert asked(isr, 10) == [(TOPIC_ID, 0, RECOVERED)]
    assert asked(isr, 20) == []  # in flight
    # Lost: asked again after the timeout, then settled by the metadata and never asked again.
    assert asked(isr, 1_100) == [(TOPIC_ID, 0, RECOVERED)]
    cluster.change(leader_recovery_state=RECOVERED)
    assert asked(isr, 2_200) == []
    assert isr.partitions_recovered == 2


def test_a_recovering_partition_that_moved_away_or_was_deleted_is_not_reported() -> None:
    cluster = Cluster()
    isr = unclean_leader(cluster, 2)
    cluster.change(leader=3, isr=[3])  # still RECOVERING, now another broker's
    assert asked(isr, 10) == []
    cluster.change(leader=2, isr=[2])  # back: still RECOVERING
    assert asked(isr, 20) == [(TOPIC_ID, 0, RECOVERED)]
    other = IsrManager(2, replicas=cluster.managers[2])
    cluster.loader.install_publisher(other.publish)
    cluster.change(leader=2, isr=[2], leader_recovery_state=RECOVERING)
    cluster.load(make_record(T.REMOVE_TOPIC, topic_id=TOPIC_ID))
    assert asked(other, 30) == []


def test_recovering_partitions_are_asked_in_the_images_order() -> None:
    cluster = Cluster()
    isr = IsrManager(1, replicas=cluster.managers[1])
    cluster.loader.install_publisher(isr.publish)
    late = uuid.UUID(int=0x7012)
    cluster.load(
        make_record(T.TOPIC, name="a-first", topic_id=late),
        partition_record(late, 1),
        partition_record(late, 0),
    )
    for topic_id in (TOPIC_ID, late):
        for index in (0,) if topic_id == TOPIC_ID else (1, 0):
            cluster.load(
                make_record(
                    T.PARTITION_CHANGE,
                    partition_id=index,
                    topic_id=topic_id,
                    isr=[1],
                    leader_recovery_state=RECOVERING,
                )
            )
    assert asked(isr, 10) == [(late, 0, RECOVERED), (late, 1, RECOVERED), (TOPIC_ID, 0, RECOVERED)]
