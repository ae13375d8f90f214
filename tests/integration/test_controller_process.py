"""The quorum controller in real processes: three controllers from `kraft cluster up`'s layout, a
scripted broker speaking BrokerRegistration/BrokerHeartbeat/AlterPartition over TCP, topics made
through the active controller, then kill -9 of the active controller."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from local_cluster import LocalCluster

from kraft.client.controller import ControllerClient
from kraft.metadata.image import MetadataImage, MetadataLoader, image_equal
from kraft.records.batch import iter_batches

pytestmark = pytest.mark.slow

BROKERS = (101, 102, 103)


def replay_log_dir(log_dir: str) -> MetadataImage:
    """The image a controller would build from these segment files (read offline, whole batches)."""
    loader = MetadataLoader()
    for segment in sorted(Path(log_dir).glob("__cluster_metadata-0/*.log")):
        for batch in iter_batches(segment.read_bytes()):
            if batch.is_control:
                loader.handle_control_batch(batch.last_offset, batch.partition_leader_epoch, 0)
            else:
                loader.handle_batch(
                    batch.base_offset,
                    batch.partition_leader_epoch,
                    0,
                    [r.value or b"" for r in batch.records],
                )
    return loader.image


def test_brokers_topics_and_elr_survive_kill_9_of_the_active_controller(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    # The scripted brokers heartbeat only at the test's steps, which a slow machine can spread over
    # more than the default 9 s session: fencing them would empty partition 0's ISR. No fencing here.
    cluster = local_cluster(3, overrides={"broker.session.timeout.ms": "60000"})
    cluster.start_all()
    first = cluster.wait_for_leader()
    cluster_id = cluster.spec.cluster_id
    client = ControllerClient(cluster.bootstrap(), timeout_s=20)
    epochs: dict[int, int] = {}
    for b in BROKERS:
        r = client.register_broker(
            b, cluster_id, incarnation_id=uuid.uuid4(), log_dir=uuid.uuid4(), port=9000 + b
        )
        assert r.error_code == 0, r
        epochs[b] = r.broker_epoch
    offset = max(epochs.values())

    def heartbeat_all() -> None:
        for b in BROKERS:
            r = client.heartbeat(b, epochs[b], offset + 1_000_000)
            assert r.error_code == 0, r

    heartbeat_all()
    heartbeat_all()
    made = client.create_topics([("orders", 3, 3, {"min.insync.replicas": "2"}), ("events", 2, 2, {})])
    assert [t.error_code for t in made.topics] == [0, 0], made
    orders_id = made.topics[0].topic_id
    # Partition 0's leader drops both followers: below min ISR, they become eligible leader replicas.
    leader = None
    for _ in range(50):
        cluster_images = [replay_log_dir(cluster.node(i).log_dir) for i in cluster.ids]
        parts = [
            img.topics_by_name["orders"].partitions[0]
            for img in cluster_images
            if "orders" in img.topics_by_name
        ]
        if parts:
            leader = parts[0].leader
            p0 = parts[0]
            break
        time.sleep(0.1)
    assert leader is not None
    r = client.alter_partition(
        leader,
        epochs[leader],
        orders_id,
        0,
        [leader],
        leader_epoch=p0.leader_epoch,
        partition_epoch=p0.partition_epoch,
    )
    assert r.error_code == 0 and r.topics[0].partitions[0].error_code == 0, r

    old = first.leader_id
    cluster.kill(old)  # SIGKILL: no resignation, no flush
    survivors = [i for i in cluster.ids if i != old]
    killed_at = time.monotonic()
    second = cluster.wait_for_leader(among=survivors, min_epoch=first.leader_epoch + 1)
    heartbeat_all()
    after = client.create_topics([("after-failover", 1, 3, {})], timeout_s=30)
    served_after_s = time.monotonic() - killed_at
    assert after.topics[0].error_code == 0, after
    assert served_after_s < 15, served_after_s
    assert second.leader_id != old

    cluster.start(old)
    time.sleep(1.0)
    heartbeat_all()
    cluster.wait_for(
        "the restarted controller to catch up",
        lambda: (
            True
            if cluster.describe(survivors).voters
            and all(
                v.log_end_offset >= cluster.describe(survivors).high_watermark
                for v in cluster.describe(survivors).voters
            )
            else None
        ),
    )
    cluster.stop_all(graceful=True)
    images = {i: replay_log_dir(cluster.node(i).log_dir) for i in cluster.ids}
    reference = images[second.leader_id]
    assert set(reference.topics_by_name) == {"orders", "events", "after-failover"}
    p0 = reference.topics_by_name["orders"].partitions[0]
    assert p0.isr == (leader,) and sorted(p0.elr) == sorted(b for b in BROKERS if b != leader)
    assert len(reference.topics_by_name["orders"].partitions) == 3
    assert all(b in reference.brokers for b in BROKERS)
    # The three controllers hold the same metadata, up to the shortest log.
    shortest = min(img.provenance.last_offset for img in images.values())
    assert shortest >= reference.topics_by_name["after-failover"].partitions[0].partition_epoch
    for i, img in images.items():
        if img.provenance.last_offset == reference.provenance.last_offset:
            assert image_equal(img, reference), f"controller {i} diverged"
