"""Deltas to publishers (``MetadataLoader.install_publisher``) and what a delta means for one broker
(``local_changes``, Kafka's ``TopicsDelta.localChanges``)."""

from __future__ import annotations

import uuid
from typing import Any

from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataLoader, TopicIdPartition
from kraft.metadata.image_snapshot import snapshot_records_bytes
from kraft.metadata.publisher import local_changes
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, encode_record, make_record

T = MetadataRecordType
FOO, BAR = uuid.UUID(int=11), uuid.UUID(int=12)


def topic(name: str, tid: uuid.UUID) -> ApiMessageAndVersion:
    return make_record(T.TOPIC, name=name, topic_id=tid)


def partition(tid: uuid.UUID, pid: int, replicas: list[int], leader: int) -> ApiMessageAndVersion:
    return make_record(
        T.PARTITION,
        partition_id=pid,
        topic_id=tid,
        replicas=replicas,
        isr=replicas,
        removing_replicas=[],
        adding_replicas=[],
        leader=leader,
        leader_epoch=0,
        partition_epoch=0,
    )


def change(tid: uuid.UUID, pid: int, **fields: Any) -> ApiMessageAndVersion:
    return make_record(T.PARTITION_CHANGE, partition_id=pid, topic_id=tid, **fields)


class Recorder:
    def __init__(self) -> None:
        self.published: list[tuple[MetadataDelta, MetadataImage]] = []

    def __call__(self, delta: MetadataDelta, image: MetadataImage) -> None:
        self.published.append((delta, image))


def load(loader: MetadataLoader, base: int, *records: ApiMessageAndVersion) -> None:
    loader.handle_batch(base, 1, 0, [encode_record(r) for r in records])


def two_topics() -> MetadataLoader:
    loader = MetadataLoader()
    load(
        loader,
        0,
        topic("foo", FOO),
        partition(FOO, 0, [1, 2], leader=1),
        partition(FOO, 1, [2, 3], leader=2),
        topic("bar", BAR),
        partition(BAR, 0, [3, 1], leader=3),
    )
    return loader


def test_every_published_image_reaches_the_publishers_with_the_delta_that_made_it() -> None:
    loader = MetadataLoader()
    seen = Recorder()
    loader.install_publisher(seen)
    load(loader, 0, topic("foo", FOO), partition(FOO, 0, [1], leader=1))
    loader.handle_control_batch(2, 1, 0)
    assert [image.provenance.last_offset for _, image in seen.published] == [1, 2]
    delta, image = seen.published[0]
    assert delta.image is MetadataImage.EMPTY and "foo" in image.topics_by_name
    assert [(tp, name) for tp, name, _ in delta.changed_partitions()] == [(TopicIdPartition(FOO, 0), "foo")]
    assert not seen.published[1][0].has_topic_changes  # a control batch changes nothing but the offset


def test_records_before_a_transaction_are_published_before_it_and_the_transaction_at_its_end() -> None:
    loader = MetadataLoader()
    seen = Recorder()
    loader.install_publisher(seen)
    begin = make_record(T.BEGIN_TRANSACTION, name="t")
    load(loader, 0, topic("foo", FOO), begin, topic("bar", BAR))
    assert [image.provenance.last_offset for _, image in seen.published] == [0]
    load(loader, 3, make_record(T.END_TRANSACTION))
    assert [image.provenance.last_offset for _, image in seen.published] == [0, 3]
    assert "bar" in seen.published[-1][1].topics_by_name


def test_local_changes_sort_a_delta_into_leaders_followers_and_deletes() -> None:
    loader = two_topics()
    seen = Recorder()
    loader.install_publisher(seen)
    # Broker 1 takes over foo-1 (reassigned to 1, 2), foo-0's leadership moves to 2, bar is deleted.
    load(
        loader,
        5,
        change(FOO, 0, leader=2),
        change(FOO, 1, replicas=[1, 2], isr=[1, 2], leader=1),
        make_record(T.REMOVE_TOPIC, topic_id=BAR),
    )
    (delta, _image) = seen.published[-1]
    one = local_changes(delta, 1)
    assert list(one.leaders) == [TopicIdPartition(FOO, 1)]
    assert list(one.followers) == [TopicIdPartition(FOO, 0)]
    assert one.deletes == {TopicIdPartition(BAR, 0): "bar"}
    three = local_changes(delta, 3)
    # Broker 3 was reassigned away from foo-1 and hosted bar-0: both go.
    assert three.deletes == {TopicIdPartition(FOO, 1): "foo", TopicIdPartition(BAR, 0): "bar"}
    assert not three.leaders and not three.followers
    assert local_changes(delta, 9).empty


def test_a_snapshot_load_counts_everything_as_changed_and_deletes_what_it_no_longer_assigns() -> None:
    loader = two_topics()
    # The snapshot: foo-0 now on 2 and 3 only, foo-1 unchanged, bar gone.
    target = MetadataLoader()
    load(
        target, 0, topic("foo", FOO), partition(FOO, 0, [2, 3], leader=2), partition(FOO, 1, [2, 3], leader=2)
    )
    seen = Recorder()
    loader.install_publisher(seen)
    loader.load_snapshot(40, 2, 0, snapshot_records_bytes(target.image))
    (delta, image) = seen.published[-1]
    assert delta.replaced is not None and delta.previous is delta.replaced
    assert "bar" not in image.topics_by_name
    one = local_changes(delta, 1)
    assert one.deletes == {TopicIdPartition(FOO, 0): "foo", TopicIdPartition(BAR, 0): "bar"}
    two = local_changes(delta, 2)
    assert list(two.leaders) == [TopicIdPartition(FOO, 0), TopicIdPartition(FOO, 1)] and not two.deletes


def test_an_adopted_image_is_published_with_the_writers_delta() -> None:
    loader = two_topics()
    seen = Recorder()
    loader.install_publisher(seen)
    delta = MetadataDelta(loader.image)
    delta.replay(change(FOO, 0, leader=2), 5)
    image = delta.apply(loader.image.provenance)
    loader.adopt(image, delta)
    assert seen.published == [(delta, image)] and loader.image is image
    assert list(local_changes(delta, 2).leaders) == [TopicIdPartition(FOO, 0)]
