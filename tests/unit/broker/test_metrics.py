"""kraft.broker.metrics: the partition gauges follow each published delta and equal a fresh count."""

from __future__ import annotations

import random
import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from kraft.broker.metrics import BrokerMetrics
from kraft.metadata.configs import ConfigResolver
from kraft.metadata.image import MetadataImage, MetadataLoader
from kraft.metadata.records import MetadataRecordType, encode_record, make_record

T = MetadataRecordType
ME = 1
GAUGES = ("leader_count", "partition_count", "under_min_isr_partitions", "at_min_isr_partitions")


def _node(image: MetadataImage) -> Any:
    return SimpleNamespace(
        node_id=ME,
        image=image,
        lifecycle=SimpleNamespace(state=3, is_fenced=False, broker_epoch=1, registrations=1),
        isr=SimpleNamespace(partitions_expanded=0, requests_sent=0),
        replicas=None,
        metadata=None,
    )


def _gauges(metrics: BrokerMetrics, image: MetadataImage) -> tuple[float, ...]:
    out = metrics.collect(_node(image))
    return tuple(out[g] for g in GAUGES)


def _partition(rng: random.Random, topic_id: uuid.UUID, index: int) -> Any:
    replicas = rng.sample([1, 2, 3, 4], 3)
    return make_record(
        T.PARTITION,
        partition_id=index,
        topic_id=topic_id,
        replicas=replicas,
        isr=replicas[: rng.randrange(1, 4)],
        removing_replicas=[],
        adding_replicas=[],
        leader=replicas[0],
        leader_epoch=0,
        partition_epoch=0,
    )


@pytest.mark.parametrize("seed", range(8))
def test_the_gauges_moved_by_each_delta_equal_a_fresh_count(seed: int) -> None:
    rng = random.Random(seed)
    loader = MetadataLoader()
    followed = BrokerMetrics(ConfigResolver({}, ME))
    images: list[MetadataImage] = []

    def publish(delta: Any, image: MetadataImage) -> None:
        followed.publish(delta, image)
        images.append(image)

    loader.install_publisher(publish)
    topics: dict[str, tuple[uuid.UUID, int]] = {}
    offset = 0
    configs_moved = False
    configured: set[str] = set()
    for step in range(120):
        records = []
        for _ in range(rng.randrange(1, 4)):
            op = rng.randrange(5)
            if op == 0 or not topics:
                name, tid = f"t{step}-{len(records)}", uuid.UUID(int=rng.getrandbits(64) + 1)
                count = rng.randrange(1, 5)
                records.append(make_record(T.TOPIC, name=name, topic_id=tid))
                records += [_partition(rng, tid, i) for i in range(count)]
                topics[name] = (tid, count)
            elif op == 1:
                name = rng.choice(sorted(topics))
                tid, _ = topics.pop(name)
                records.append(make_record(T.REMOVE_TOPIC, topic_id=tid))
                if name in configured:  # its configs go with it
                    configured.discard(name)
                    configs_moved = True
            elif op == 2:  # a min.insync.replicas change: counted afresh
                configs_moved = True
                name = rng.choice(sorted(topics))
                configured.add(name)
                records.append(
                    make_record(
                        T.CONFIG,
                        resource_type=2,
                        resource_name=name,
                        name="min.insync.replicas",
                        value=str(rng.randrange(1, 4)),
                    )
                )
            else:  # a leader or ISR change
                tid, count = topics[rng.choice(sorted(topics))]
                isr = rng.sample([1, 2, 3, 4], rng.randrange(1, 4))
                fields: dict[str, Any] = {"isr": isr}
                if rng.random() < 0.5:
                    fields["leader"] = isr[0]
                records.append(
                    make_record(T.PARTITION_CHANGE, partition_id=rng.randrange(count), topic_id=tid, **fields)
                )
        if not records:
            continue
        loader.handle_batch(offset, 1, 0, [encode_record(r) for r in records])
        offset += len(records)
        image = images[-1]
        if step % 3 == 0:  # collected now and then, as the driver does; the deltas go on between
            # Counted afresh only after a config change (or the first time): else moved along.
            assert (followed._counted is not image) == (configs_moved or step == 0)
            configs_moved = False
            assert _gauges(followed, image) == _gauges(BrokerMetrics(ConfigResolver({}, ME)), image)


def test_an_image_the_counts_did_not_follow_is_counted_afresh() -> None:
    loader = MetadataLoader()
    metrics = BrokerMetrics(ConfigResolver({}, ME))
    tid = uuid.UUID(int=7)
    rng = random.Random(1)
    loader.handle_batch(0, 1, 0, [encode_record(make_record(T.TOPIC, name="a", topic_id=tid))])
    loader.handle_batch(1, 1, 0, [encode_record(_partition(rng, tid, 0))])
    image = loader.image
    assert _gauges(metrics, image) == _gauges(BrokerMetrics(ConfigResolver({}, ME)), image)
