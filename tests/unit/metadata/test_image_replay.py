"""Replay of metadata records into the image (spec 1.6), the loader's transactions, and the
incrementally maintained counters and lazy indexes checked against a brute-force model."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraft.common.errors import KraftError
from kraft.metadata.image import (
    BrokerRegistration,
    Endpoint,
    MetadataDelta,
    MetadataImage,
    MetadataLoader,
    MetadataProvenance,
    ReplayError,
    TopicIdPartition,
    image_differences,
    image_equal,
)
from kraft.metadata.partition import PartitionRegistration
from kraft.metadata.records import (
    ApiMessageAndVersion,
    ConfigResourceType,
    MetadataRecordType,
    encode_record,
    make_record,
)

T = MetadataRecordType
TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)


def u(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)


def prov(offset: int) -> MetadataProvenance:
    return MetadataProvenance(last_offset=offset, last_epoch=1, last_append_ms=1000 + offset)


def register(
    broker_id: int,
    epoch: int,
    *,
    fenced: bool = True,
    in_controlled_shutdown: bool = False,
    dirs: tuple[uuid.UUID, ...] = (),
    rack: str | None = None,
    incarnation: int = 0,
) -> ApiMessageAndVersion:
    cls: Any = make_record(T.REGISTER_BROKER).data
    return make_record(
        T.REGISTER_BROKER,
        broker_id=broker_id,
        broker_epoch=epoch,
        incarnation_id=u(1000 + incarnation),
        end_points=[type(cls).BrokerEndpoint(name="PLAINTEXT", host=f"b{broker_id}", port=9092,
                                             security_protocol=0)],
        features=[type(cls).BrokerFeature(name="metadata.version", min_supported_version=1,
                                          max_supported_version=25)],
        rack=rack,
        fenced=fenced,
        in_controlled_shutdown=in_controlled_shutdown,
        log_dirs=list(dirs),
    )


def broker_change(broker_id: int, epoch: int, *, fenced: int = 0, ics: int = 0,
                  dirs: tuple[uuid.UUID, ...] = ()) -> ApiMessageAndVersion:
    return make_record(T.BROKER_REGISTRATION_CHANGE, broker_id=broker_id, broker_epoch=epoch, fenced=fenced,
                       in_controlled_shutdown=ics, log_dirs=list(dirs))


def topic(name: str, tid: uuid.UUID) -> ApiMessageAndVersion:
    return make_record(T.TOPIC, name=name, topic_id=tid)


def partition(
    tid: uuid.UUID,
    pid: int,
    replicas: list[int],
    *,
    isr: list[int] | None = None,
    leader: int | None = None,
    leader_epoch: int = 0,
    partition_epoch: int = 0,
    elr: list[int] | None = None,
    lke: list[int] | None = None,
    adding: list[int] | None = None,
    removing: list[int] | None = None,
    dirs: list[uuid.UUID] | None = None,
    version: int | None = None,
) -> ApiMessageAndVersion:
    isr = list(replicas) if isr is None else isr
    fields: dict[str, Any] = dict(
        partition_id=pid, topic_id=tid, replicas=replicas, isr=isr,
        removing_replicas=removing or [], adding_replicas=adding or [],
        leader=(isr[0] if isr else -1) if leader is None else leader,
        leader_epoch=leader_epoch, partition_epoch=partition_epoch,
    )
    if version is None or version >= 1:
        fields["directories"] = [u(500 + r) for r in replicas] if dirs is None else dirs
    if version is None or version >= 2:
        fields["eligible_leader_replicas"] = elr
        fields["last_known_elr"] = lke
    return make_record(T.PARTITION, version, **fields)


def change(tid: uuid.UUID, pid: int, **fields: Any) -> ApiMessageAndVersion:
    if "elr" in fields:
        fields["eligible_leader_replicas"] = fields.pop("elr")
    return make_record(T.PARTITION_CHANGE, partition_id=pid, topic_id=tid, **fields)


def config(rtype: int, rname: str, name: str, value: str | None) -> ApiMessageAndVersion:
    return make_record(T.CONFIG, resource_type=rtype, resource_name=rname, name=name, value=value)


def replay(records: list[ApiMessageAndVersion], image: MetadataImage = MetadataImage.EMPTY,
           start: int = 0) -> MetadataImage:
    delta = MetadataDelta(image)
    for i, r in enumerate(records):
        delta.replay(r, start + i)
    return delta.apply(prov(start + len(records) - 1))


def replay_error(records: list[ApiMessageAndVersion], bad: ApiMessageAndVersion, *,
                 start: int = 0) -> ReplayError:
    image = replay(records, start=start) if records else MetadataImage.EMPTY
    offset = start + len(records) + 7
    delta = MetadataDelta(image)
    with pytest.raises(ReplayError) as info:
        delta.replay(bad, offset)
    assert info.value.offset == offset
    assert f"offset {offset}" in str(info.value)
    assert bad.type.record_name in str(info.value)
    # A rejected record leaves the delta as it was.
    assert image_equal(delta.apply(image.provenance), image)
    return info.value


FOO, BAR = u(0xF00), u(0xBA7)


# ---------------------------------------------------------------------------------------------------
# Brokers


def test_register_broker_record_sets_every_field_and_the_registration_offset() -> None:
    image = replay([register(1, 5, fenced=True, dirs=(u(7),), rack="r1")], start=5)
    b = image.brokers[1]
    assert b == BrokerRegistration(
        id=1, epoch=5, incarnation_id=u(1000),
        listeners=(Endpoint(name="PLAINTEXT", host="b1", port=9092, security_protocol=0),),
        supported_features=(("metadata.version", 1, 25),), rack="r1", fenced=True,
        in_controlled_shutdown=False, is_migrating_zk_broker=False, directories=(u(7),),
        registration_offset=5,
    )
    assert b.listener("PLAINTEXT") is not None and b.listener("SSL") is None
    assert not b.is_active


def test_a_new_register_broker_record_replaces_the_entry_and_resets_controlled_shutdown() -> None:
    image = replay([register(1, 0, fenced=False), broker_change(1, 0, ics=1)])
    assert image.brokers[1].in_controlled_shutdown and not image.brokers[1].is_active
    image = replay([register(1, 9, incarnation=2)], image, start=9)
    b = image.brokers[1]
    assert (b.epoch, b.fenced, b.in_controlled_shutdown, b.registration_offset) == (9, True, False, 9)
    assert b.incarnation_id == u(1002)


def test_broker_registration_change_fences_unfences_and_enters_controlled_shutdown() -> None:
    image = replay([register(1, 0)])
    image = replay([broker_change(1, 0, fenced=-1)], image, start=1)
    assert not image.brokers[1].fenced and image.brokers[1].is_active
    image = replay([broker_change(1, 0, fenced=0)], image, start=2)
    assert not image.brokers[1].fenced
    image = replay([broker_change(1, 0, ics=1)], image, start=3)
    assert image.brokers[1].in_controlled_shutdown and not image.brokers[1].fenced
    image = replay([broker_change(1, 0, ics=0)], image, start=4)
    assert image.brokers[1].in_controlled_shutdown  # only a new registration clears it
    image = replay([broker_change(1, 0, fenced=1)], image, start=5)
    assert image.brokers[1].fenced
    assert image.brokers[1].registration_offset == 0


def test_broker_registration_change_replaces_log_dirs_only_when_non_empty() -> None:
    image = replay([register(1, 0, dirs=(u(1), u(2)))])
    image = replay([broker_change(1, 0, fenced=-1)], image, start=1)
    assert image.brokers[1].directories == (u(1), u(2))
    image = replay([broker_change(1, 0, dirs=(u(2),))], image, start=2)
    assert image.brokers[1].directories == (u(2),)


def test_old_fence_and_unfence_records_set_fenced() -> None:
    image = replay([register(1, 0), make_record(T.UNFENCE_BROKER, id=1, epoch=0)])
    assert not image.brokers[1].fenced
    image = replay([make_record(T.FENCE_BROKER, id=1, epoch=0)], image, start=2)
    assert image.brokers[1].fenced


def test_unregister_broker_removes_it() -> None:
    unregister = make_record(T.UNREGISTER_BROKER, broker_id=1, broker_epoch=0)
    image = replay([register(1, 0), register(2, 1), unregister])
    assert sorted(image.brokers) == [2]


@pytest.mark.parametrize(
    "bad",
    [
        make_record(T.UNREGISTER_BROKER, broker_id=1, broker_epoch=4),
        make_record(T.UNREGISTER_BROKER, broker_id=2, broker_epoch=3),
        make_record(T.FENCE_BROKER, id=1, epoch=4),
        make_record(T.UNFENCE_BROKER, id=1, epoch=2),
        make_record(T.UNFENCE_BROKER, id=9, epoch=3),
        broker_change(1, 2, fenced=-1),
        broker_change(7, 3, fenced=-1),
        broker_change(1, 3, fenced=2),
        broker_change(1, 3, ics=-1),
    ],
    ids=["unregister-epoch", "unregister-unknown", "fence-epoch", "unfence-epoch", "unfence-unknown",
         "change-epoch", "change-unknown", "change-bad-fenced", "change-bad-ics"],
)
def test_broker_records_must_name_the_current_registration(bad: ApiMessageAndVersion) -> None:
    err = replay_error([register(1, 3)], bad, start=3)
    assert "broker" in err.rule


# ---------------------------------------------------------------------------------------------------
# Topics and partitions


def test_topic_and_partition_records_build_the_topic() -> None:
    image = replay([topic("foo", FOO), partition(FOO, 0, [1, 2, 3], elr=[4], lke=[5]),
                    partition(FOO, 1, [2, 3, 1], isr=[2])])
    t = image.topic("foo")
    assert t is not None and t is image.topics_by_id[FOO] and t.id == FOO
    p0 = image.partition(FOO, 0)
    assert p0 == PartitionRegistration(
        replicas=(1, 2, 3), directories=(u(501), u(502), u(503)), isr=(1, 2, 3), elr=(4,),
        last_known_elr=(5,),
        leader=1, leader_epoch=0, partition_epoch=0,
    )
    assert image.partition(FOO, 2) is None and image.partition(BAR, 0) is None
    assert image.partition_count == 2


def test_partition_record_replaces_an_existing_partition() -> None:
    image = replay([topic("foo", FOO), partition(FOO, 0, [1, 2])])
    image = replay([partition(FOO, 0, [3], leader_epoch=7, partition_epoch=9)], image, start=2)
    p = image.partition(FOO, 0)
    assert p is not None and (p.replicas, p.leader, p.leader_epoch, p.partition_epoch) == ((3,), 3, 7, 9)
    assert image.partition_count == 1


def test_partition_record_v0_has_no_directories_and_null_elr_is_empty() -> None:
    image = replay([topic("foo", FOO), partition(FOO, 0, [1, 2], version=0)])
    p = image.partition(FOO, 0)
    assert p is not None and p.directories == () and p.elr == () and p.last_known_elr == ()


def test_duplicate_topic_name_or_id_is_a_replay_error() -> None:
    err = replay_error([topic("foo", FOO)], topic("foo", BAR))
    assert "already exists" in err.rule
    err = replay_error([topic("foo", FOO)], topic("bar", FOO))
    assert "already used" in err.rule


def test_a_topic_name_and_id_are_reusable_after_removal_in_the_same_delta() -> None:
    base = replay([topic("foo", FOO), partition(FOO, 0, [1])])
    image = replay([make_record(T.REMOVE_TOPIC, topic_id=FOO), topic("foo", FOO), partition(FOO, 5, [2]),
                    topic("bar", BAR), make_record(T.REMOVE_TOPIC, topic_id=BAR), topic("baz", BAR)],
                   base, start=2)
    assert sorted(image.topics_by_name) == ["baz", "foo"]
    assert sorted(image.topics_by_id[FOO].partitions) == [5]
    assert image.topics_by_id[BAR].name == "baz" and not image.topics_by_id[BAR].partitions
    assert image.partition_count == 1


def test_partition_record_for_an_unknown_topic_is_a_replay_error() -> None:
    replay_error([topic("foo", FOO)], partition(BAR, 0, [1]))
    err = replay_error([topic("foo", FOO)], partition(FOO, 0, [1, 2], dirs=[u(1)]))
    assert "directories" in err.rule


def test_partition_change_merges_and_bumps_epochs() -> None:
    image = replay([topic("foo", FOO), partition(FOO, 0, [1, 2, 3], leader_epoch=4, partition_epoch=6)])
    image = replay([change(FOO, 0, isr=[1, 2])], image, start=2)
    p = image.partition(FOO, 0)
    assert p is not None and (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2), 1, 4, 7)
    image = replay([change(FOO, 0, leader=2, elr=[3], last_known_elr=[], leader_recovery_state=1)],
                   image, start=3)
    p = image.partition(FOO, 0)
    assert p is not None
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.elr, p.leader_recovery_state) == (2, 5, 8, (3,), 1)
    image = replay([change(FOO, 0, leader=-1, replicas=[2, 1, 3], adding_replicas=[3])], image, start=4)
    p = image.partition(FOO, 0)
    assert p is not None
    assert (p.leader, p.leader_epoch, p.replicas, p.adding_replicas) == (-1, 6, (2, 1, 3), (3,))
    assert image.offline_partition_count == 1
    assert image.reassigning_partitions() == (TopicIdPartition(FOO, 0),)


def test_partition_change_for_an_unknown_topic_or_partition_is_a_replay_error() -> None:
    err = replay_error([topic("foo", FOO), partition(FOO, 0, [1])], change(BAR, 0, isr=[1]))
    assert "unknown topic" in err.rule
    err = replay_error([topic("foo", FOO), partition(FOO, 0, [1])], change(FOO, 1, isr=[1]))
    assert "unknown partition 1" in err.rule


def test_partition_change_in_the_same_delta_as_its_partition_record() -> None:
    image = replay([topic("foo", FOO), partition(FOO, 0, [1, 2]), change(FOO, 0, isr=[2], leader=2)])
    p = image.partition(FOO, 0)
    assert p is not None and (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((2,), 2, 1, 1)


def test_remove_topic_drops_the_topic_its_partitions_and_its_configs() -> None:
    image = replay([topic("foo", FOO), partition(FOO, 0, [1]), partition(FOO, 1, [2], leader=-1, isr=[]),
                    topic("bar", BAR), partition(BAR, 0, [1]),
                    config(TOPIC, "foo", "retention.ms", "1"), config(TOPIC, "bar", "retention.ms", "2"),
                    config(BROKER, "", "foo", "x")])
    assert (image.offline_partition_count, image.no_electable_leader_count) == (1, 1)
    image = replay([make_record(T.REMOVE_TOPIC, topic_id=FOO)], image, start=8)
    assert list(image.topics_by_name) == ["bar"] and FOO not in image.topics_by_id
    assert (TOPIC, "foo") not in image.configs
    assert image.configs[(TOPIC, "bar")] == {"retention.ms": "2"}
    assert image.configs[(BROKER, "")] == {"foo": "x"}
    counts = (image.partition_count, image.offline_partition_count, image.no_electable_leader_count)
    assert counts == (1, 0, 0)
    assert image.partitions_with_isr_member(2) == ()


def test_remove_topic_of_an_unknown_topic_is_a_replay_error() -> None:
    replay_error([topic("foo", FOO)], make_record(T.REMOVE_TOPIC, topic_id=BAR))
    replay_error([topic("foo", FOO), make_record(T.REMOVE_TOPIC, topic_id=FOO)],
                 make_record(T.REMOVE_TOPIC, topic_id=FOO))


# ---------------------------------------------------------------------------------------------------
# Configs, features, producer ids, the rest


def test_config_records_set_and_delete_keys_and_drop_empty_resources() -> None:
    image = replay([config(BROKER, "", "a", "1"), config(BROKER, "", "b", "2"),
                    config(BROKER, "3", "a", "x")])
    assert image.configs == {(BROKER, ""): {"a": "1", "b": "2"}, (BROKER, "3"): {"a": "x"}}
    before = image
    image = replay([config(BROKER, "", "a", None), config(BROKER, "3", "a", None),
                    config(BROKER, "9", "z", None)], image, start=3)
    assert image.configs == {(BROKER, ""): {"b": "2"}}
    assert before.configs[(BROKER, "")] == {"a": "1", "b": "2"}  # the old image is untouched
    with pytest.raises(TypeError):
        image.configs[(BROKER, "")]["c"] = "3"  # type: ignore[index]


def test_feature_level_records_set_and_level_zero_deletes() -> None:
    image = replay([make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=25),
                    make_record(T.FEATURE_LEVEL, name="kraft.version", feature_level=1)])
    assert image.metadata_version == 25 and image.features == {"metadata.version": 25, "kraft.version": 1}
    image = replay([make_record(T.FEATURE_LEVEL, name="kraft.version", feature_level=0)], image, start=2)
    assert image.features == {"metadata.version": 25}
    assert MetadataImage.EMPTY.metadata_version == 0


def test_producer_ids_record_must_move_forward() -> None:
    assert MetadataImage.EMPTY.producer_ids == (-1, -1, 0)
    records = [make_record(T.PRODUCER_IDS, broker_id=1, broker_epoch=3, next_producer_id=1000)]
    image = replay(records)
    assert image.producer_ids == (1, 3, 1000)
    backwards = make_record(T.PRODUCER_IDS, broker_id=2, broker_epoch=4, next_producer_id=999)
    err = replay_error(records, backwards)
    assert "999" in err.rule
    replay_error(records, make_record(T.PRODUCER_IDS, broker_id=2, broker_epoch=4, next_producer_id=1000))


def test_zk_migration_noop_and_controller_records() -> None:
    rc: Any = make_record(T.REGISTER_CONTROLLER).data
    image = replay([
        make_record(T.ZK_MIGRATION_STATE, zk_migration_state=3),
        make_record(T.NO_OP),
        make_record(T.REGISTER_CONTROLLER, controller_id=3000, incarnation_id=u(9), zk_migration_ready=True,
                    end_points=[type(rc).ControllerEndpoint(name="CONTROLLER", host="c", port=9093,
                                                            security_protocol=0)],
                    features=[type(rc).ControllerFeature(name="kraft.version", min_supported_version=0,
                                                         max_supported_version=1)]),
    ])
    assert image.zk_migration_state == 3
    c = image.controllers[3000]
    assert c.incarnation_id == u(9) and c.zk_migration_ready
    assert c.listener("CONTROLLER") == Endpoint(name="CONTROLLER", host="c", port=9093, security_protocol=0)
    assert c.supported_features == (("kraft.version", 0, 1),)
    assert not image.is_empty and MetadataImage.EMPTY.is_empty


def test_transaction_markers_are_not_for_the_delta() -> None:
    delta = MetadataDelta(MetadataImage.EMPTY)
    for t in (T.BEGIN_TRANSACTION, T.END_TRANSACTION, T.ABORT_TRANSACTION):
        with pytest.raises(KraftError) as info:
            delta.replay(make_record(t), 3)
        assert not isinstance(info.value, ReplayError)


# ---------------------------------------------------------------------------------------------------
# ClearElr


def _elr_image() -> MetadataImage:
    return replay([
        topic("foo", FOO), partition(FOO, 0, [1, 2, 3], isr=[1], elr=[2], lke=[3], leader_epoch=2),
        partition(FOO, 1, [1, 2, 3], isr=[1, 2, 3]),
        topic("bar", BAR), partition(BAR, 0, [1, 2, 3], isr=[], leader=-1, lke=[1]),
        partition(BAR, 1, [1, 2, 3], isr=[2], elr=[1, 3]),
    ])


def test_clear_elr_for_one_topic() -> None:
    before = _elr_image()
    image = replay([make_record(T.CLEAR_ELR, topic_name="foo")], before, start=10)
    p = image.partition(FOO, 0)
    assert p is not None and (p.elr, p.last_known_elr, p.leader_epoch, p.partition_epoch) == ((), (), 2, 1)
    assert image.partition(FOO, 1) is before.partition(FOO, 1)  # nothing to clear: untouched
    assert image.topics_by_id[BAR] is before.topics_by_id[BAR]
    assert image.partitions_with_elr_member(2) == ()
    assert image.partitions_with_elr_member(1) == (TopicIdPartition(BAR, 1),)


def test_clear_elr_for_all_topics() -> None:
    before = _elr_image()
    image = replay([make_record(T.CLEAR_ELR, topic_name="")], before, start=10)
    for tid, pid in [(FOO, 0), (BAR, 0), (BAR, 1)]:
        p, old = image.partition(tid, pid), before.partition(tid, pid)
        assert p is not None and old is not None
        assert (p.elr, p.last_known_elr) == ((), ())
        assert (p.leader_epoch, p.partition_epoch) == (old.leader_epoch, old.partition_epoch + 1)
    assert image.partition(FOO, 1) is before.partition(FOO, 1)


def test_clear_elr_of_an_unknown_topic_is_a_replay_error() -> None:
    err = replay_error([topic("foo", FOO)], make_record(T.CLEAR_ELR, topic_name="nope"))
    assert "nope" in err.rule


# ---------------------------------------------------------------------------------------------------
# Image immutability, structural sharing, counters, indexes


def test_apply_shares_untouched_topics_and_leaves_the_old_image_unchanged() -> None:
    base = replay([topic("foo", FOO), partition(FOO, 0, [1, 2]),
                   topic("bar", BAR), partition(BAR, 0, [2, 1])])
    isr_before = base.partitions_with_isr_member(1)
    image = replay([change(FOO, 0, isr=[2], leader=2), register(1, 4)], base, start=4)
    assert image.topics_by_id[BAR] is base.topics_by_id[BAR]
    assert image.topics_by_id[FOO] is not base.topics_by_id[FOO]
    p = base.partition(FOO, 0)
    assert p is not None and p.isr == (1, 2) and not base.brokers
    assert base.partitions_with_isr_member(1) == isr_before
    assert image.partitions_with_isr_member(1) == (TopicIdPartition(BAR, 0),)
    assert (base.preferred_imbalance_count, image.preferred_imbalance_count) == (0, 1)


def test_image_fields_are_read_only() -> None:
    image = replay([topic("foo", FOO), partition(FOO, 0, [1])])
    with pytest.raises(AttributeError):
        image.features = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        image._partition_count = 5
    with pytest.raises(TypeError):
        image.topics_by_id[BAR] = image.topics_by_id[FOO]  # type: ignore[index]
    with pytest.raises(TypeError):
        image.topics_by_id[FOO].partitions[1] = image.topics_by_id[FOO].partitions[0]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        image.topics_by_id[FOO].name = "x"  # type: ignore[misc]


def test_a_leaderless_partition_counts_as_offline_and_imbalanced() -> None:
    # Kafka: hasPreferredLeader() is leader == replicas[0], so -1 is not the preferred leader.
    image = replay([topic("foo", FOO), partition(FOO, 0, [1, 2], isr=[], leader=-1),
                    partition(FOO, 1, [1, 2], leader=2), partition(FOO, 2, [1, 2])])
    counts = (image.partition_count, image.offline_partition_count, image.preferred_imbalance_count)
    assert counts == (3, 1, 2)
    assert image.leaderless_partitions() == (TopicIdPartition(FOO, 0),)
    assert image.imbalanced_partitions() == (TopicIdPartition(FOO, 0), TopicIdPartition(FOO, 1))
    assert image.partitions_led_by(2) == (TopicIdPartition(FOO, 1),)


def test_indexes_are_sorted_by_topic_name_then_partition() -> None:
    z, a = u(1), u(0xFFFF)  # the topic id order is the opposite of the name order
    image = replay([topic("zzz", z), partition(z, 1, [1]), partition(z, 0, [1]),
                    topic("aaa", a), partition(a, 3, [1]), partition(a, 2, [1])])
    assert image.partitions_with_isr_member(1) == (
        TopicIdPartition(a, 2), TopicIdPartition(a, 3), TopicIdPartition(z, 0), TopicIdPartition(z, 1))


def test_images_equal_ignores_provenance_and_optionally_registration_offsets() -> None:
    a = replay([register(1, 0), topic("foo", FOO), partition(FOO, 0, [1])])
    b = replay([make_record(T.NO_OP), register(1, 0), topic("foo", FOO), partition(FOO, 0, [1])])
    assert a != b  # provenance and registration offset differ
    assert not image_equal(a, b)
    assert image_equal(a, b, ignore_registration_offsets=True)
    assert not image_equal(a, b, ignore_provenance=False, ignore_registration_offsets=True)
    assert image_differences(a, b) == [f"brokers[1]: {a.brokers[1]!r} != {b.brokers[1]!r}"]
    c = replay([register(1, 0), topic("foo", FOO), partition(FOO, 0, [2])])
    assert not image_equal(a, c, ignore_registration_offsets=True)
    assert len(image_differences(a, c)) == 1
    assert a == replay([register(1, 0), topic("foo", FOO), partition(FOO, 0, [1])])


# ---------------------------------------------------------------------------------------------------
# The loader


def enc(*records: ApiMessageAndVersion) -> list[bytes]:
    return [encode_record(r) for r in records]


BEGIN = make_record(T.BEGIN_TRANSACTION, name="tx")
END = make_record(T.END_TRANSACTION)
ABORT = make_record(T.ABORT_TRANSACTION, reason="failover")


def test_loader_publishes_one_image_per_batch_with_its_provenance() -> None:
    loader = MetadataLoader()
    image = loader.handle_batch(10, 3, 777, enc(topic("foo", FOO), partition(FOO, 0, [1])))
    assert image is loader.image and image is not None
    assert image.provenance == MetadataProvenance(last_offset=11, last_epoch=3, last_append_ms=777)
    assert image.partition(FOO, 0) is not None
    assert loader.handle_batch(12, 3, 778, []) is None
    control = loader.handle_control_batch(12, 4, 779)
    assert control is not None and control.provenance.last_offset == 12
    assert image_equal(control, image) and control.topics_by_id is image.topics_by_id


def test_loader_transaction_across_batches_is_published_at_its_end() -> None:
    loader = MetadataLoader()
    first = loader.handle_batch(0, 1, 0, enc(topic("foo", FOO), BEGIN, partition(FOO, 0, [1])))
    assert first is not None and first.provenance.last_offset == 0  # the record before Begin
    assert first.partition_count == 0 and loader.in_transaction
    assert loader.handle_batch(3, 1, 0, enc(partition(FOO, 1, [1]))) is None
    assert loader.handle_control_batch(4, 1, 0) is None
    assert loader.image is first
    done = loader.handle_batch(5, 1, 0, enc(partition(FOO, 2, [1]), END, make_record(T.NO_OP)))
    assert done is not None and done.partition_count == 3 and done.provenance.last_offset == 7
    assert not loader.in_transaction


def test_loader_abort_discards_the_transaction_but_not_what_came_before() -> None:
    loader = MetadataLoader()
    loader.handle_batch(0, 1, 0, enc(topic("foo", FOO), BEGIN, topic("bar", BAR)))
    loader.handle_batch(3, 1, 0, enc(partition(BAR, 0, [1])))
    image = loader.handle_batch(4, 1, 0, enc(ABORT, partition(FOO, 0, [2])))
    assert image is not None and list(image.topics_by_name) == ["foo"] and image.partition_count == 1
    assert image.provenance.last_offset == 5


def test_loader_transaction_within_one_batch() -> None:
    loader = MetadataLoader()
    image = loader.handle_batch(0, 1, 0, enc(BEGIN, topic("foo", FOO), END, BEGIN, topic("bar", BAR), ABORT))
    assert image is not None and list(image.topics_by_name) == ["foo"]


@pytest.mark.parametrize(
    ("batches", "bad_offset", "rule"),
    [
        ([[BEGIN, make_record(T.NO_OP)], [BEGIN]], 2, "already open"),
        ([[make_record(T.NO_OP), END]], 1, "no transaction"),
        ([[BEGIN, ABORT], [ABORT]], 2, "no transaction"),
    ],
)
def test_loader_rejects_misplaced_transaction_markers(
    batches: list[list[ApiMessageAndVersion]], bad_offset: int, rule: str
) -> None:
    loader = MetadataLoader()
    offset = 0
    with pytest.raises(ReplayError) as info:
        for batch in batches:
            loader.handle_batch(offset, 1, 0, enc(*batch))
            offset += len(batch)
    assert info.value.offset == bad_offset and rule in str(info.value)
    assert f"offset {bad_offset}" in str(info.value)
    with pytest.raises(KraftError):
        loader.handle_control_batch(9, 1, 0)  # a replay error stops the loader


def test_loader_names_the_offset_of_an_undecodable_or_invalid_record() -> None:
    loader = MetadataLoader()
    with pytest.raises(ReplayError) as info:
        loader.handle_batch(40, 1, 0, [encode_record(make_record(T.NO_OP)), b"\x01\x02\x00\xff"])
    assert info.value.offset == 41 and "offset 41" in str(info.value) and "decode" in str(info.value)
    loader = MetadataLoader()
    with pytest.raises(ReplayError, match="offset 42"):
        loader.handle_batch(40, 1, 0, enc(make_record(T.NO_OP), topic("foo", FOO), partition(BAR, 0, [1])))


def test_loader_skips_unmodelled_record_types() -> None:
    acl = b"\x01\x0e\x00\x00"  # an AccessControlEntryRecord frame (key 14): read past, not modelled
    image = MetadataLoader().handle_batch(0, 1, 0, [acl, *enc(topic("foo", FOO))])
    assert image is not None and list(image.topics_by_name) == ["foo"] and image.provenance.last_offset == 1


def test_load_snapshot_starts_from_empty_and_replays_at_the_last_contained_offset() -> None:
    loader = MetadataLoader()
    loader.handle_batch(0, 1, 0, enc(topic("old", BAR), BEGIN))
    image = loader.load_snapshot(100, 4, 55, enc(register(1, 17), topic("foo", FOO), partition(FOO, 0, [1])))
    assert image.provenance == MetadataProvenance(last_offset=99, last_epoch=4, last_append_ms=55)
    assert list(image.topics_by_name) == ["foo"] and not loader.in_transaction
    assert image.brokers[1].registration_offset == 99 and image.brokers[1].epoch == 17
    with pytest.raises(ReplayError, match="offset 99") as info:
        MetadataLoader().load_snapshot(100, 4, 55, enc(topic("foo", FOO), topic("foo", BAR)))
    assert "record 1 of snapshot" in str(info.value)


# ---------------------------------------------------------------------------------------------------
# Random valid record sequences: incremental counters and lazy indexes vs brute force, and replay vs
# an independent model of the spec's rules.

BROKERS = range(5)
NAMES = ["t0", "t1", "t2", "t3", "t4", "t5"]


class Model:
    """A direct, slow statement of spec 1.6 for the records the generator emits."""

    def __init__(self) -> None:
        self.brokers: dict[int, tuple[int, bool]] = {}  # id -> (epoch, fenced)
        self.topics: dict[uuid.UUID, tuple[str, dict[int, dict[str, Any]]]] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.next_topic = 1

    def copy(self) -> Model:
        m = Model()
        m.brokers = dict(self.brokers)
        m.topics = {k: (n, {p: dict(v) for p, v in parts.items()}) for k, (n, parts) in self.topics.items()}
        m.configs = {k: dict(v) for k, v in self.configs.items()}
        return m


def _sub(draw: Any, pool: list[int], *, min_size: int = 0) -> list[int]:
    if not pool:
        return []
    return list(draw(st.lists(st.sampled_from(pool), unique=True, min_size=min_size, max_size=len(pool))))


def _gen_record(draw: Any, m: Model, offset: int) -> list[ApiMessageAndVersion]:
    kinds = ["register", "create"]
    if m.brokers:
        kinds.append("broker_change")
    parts = [(tid, pid) for tid, (_, ps) in m.topics.items() for pid in ps]
    if parts:
        kinds += ["change", "change", "change", "partition"]
    if m.topics:
        kinds += ["remove", "clear_elr", "config"]
    kind = draw(st.sampled_from(kinds))
    if kind == "register":
        b = draw(st.sampled_from(list(BROKERS)))
        fenced = draw(st.booleans())
        m.brokers[b] = (offset, fenced)
        return [register(b, offset, fenced=fenced)]
    if kind == "broker_change":
        b = draw(st.sampled_from(sorted(m.brokers)))
        epoch, fenced = m.brokers[b]
        f = draw(st.sampled_from([-1, 0, 1]))
        m.brokers[b] = (epoch, fenced if f == 0 else f == 1)
        return [broker_change(b, epoch, fenced=f)]
    if kind == "create":
        free = [n for n in NAMES if n not in {name for name, _ in m.topics.values()}]
        if not free:
            return [make_record(T.NO_OP)]
        name = draw(st.sampled_from(free))
        tid = u(m.next_topic)
        m.next_topic += 1
        out = [topic(name, tid)]
        ps: dict[int, dict[str, Any]] = {}
        for pid in range(draw(st.integers(0, 3))):
            out.append(_new_partition(draw, tid, pid, ps))
        m.topics[tid] = (name, ps)
        return out
    if kind == "partition":
        tid = draw(st.sampled_from(sorted(m.topics)))
        ps = m.topics[tid][1]
        pid = draw(st.integers(0, max(ps, default=0) + 1))
        return [_new_partition(draw, tid, pid, ps)]
    if kind == "change":
        tid, pid = draw(st.sampled_from(sorted(parts)))
        p = m.topics[tid][1][pid]
        fields: dict[str, Any] = {}
        if draw(st.booleans()):
            p["isr"] = fields["isr"] = _sub(draw, p["replicas"])
        if draw(st.booleans()):
            leader = draw(st.sampled_from([-1, *p["replicas"]]))
            fields["leader"] = leader
            p["leader"], p["le"] = leader, p["le"] + 1
        if draw(st.booleans()):
            p["elr"] = fields["elr"] = _sub(draw, p["replicas"])
        if draw(st.booleans()):
            p["lke"] = fields["last_known_elr"] = _sub(draw, p["replicas"])
        if draw(st.booleans()):
            replicas = _sub(draw, list(BROKERS), min_size=1)
            adding = _sub(draw, replicas)
            p["replicas"], p["adding"] = fields["replicas"], fields["adding_replicas"] = replicas, adding
            p["dirs"] = fields["directories"] = [u(500 + r) for r in replicas]
        p["pe"] += 1
        return [change(tid, pid, **fields)]
    if kind == "remove":
        tid = draw(st.sampled_from(sorted(m.topics)))
        name, _ = m.topics.pop(tid)
        m.configs.pop((TOPIC, name), None)
        return [make_record(T.REMOVE_TOPIC, topic_id=tid)]
    if kind == "clear_elr":
        target = draw(st.sampled_from(["", *sorted(name for name, _ in m.topics.values())]))
        for name, ps in m.topics.values():
            if target in ("", name):
                for p in ps.values():
                    if p["elr"] or p["lke"]:
                        p["elr"], p["lke"], p["pe"] = [], [], p["pe"] + 1
        return [make_record(T.CLEAR_ELR, topic_name=target)]
    assert kind == "config"
    name = draw(st.sampled_from(sorted(name for name, _ in m.topics.values())))
    key = draw(st.sampled_from(["a", "b"]))
    value = draw(st.sampled_from([None, "1", "2"]))
    entries = m.configs.setdefault((TOPIC, name), {})
    if value is None:
        entries.pop(key, None)
    else:
        entries[key] = value
    if not entries:
        del m.configs[(TOPIC, name)]
    return [config(TOPIC, name, key, value)]


def _new_partition(
    draw: Any, tid: uuid.UUID, pid: int, ps: dict[int, dict[str, Any]]
) -> ApiMessageAndVersion:
    replicas = _sub(draw, list(BROKERS), min_size=1)
    isr = _sub(draw, replicas)
    leader = draw(st.sampled_from([-1, *replicas]))
    elr = _sub(draw, [r for r in replicas if r not in isr])
    lke = _sub(draw, replicas)
    le, pe = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    ps[pid] = {"replicas": replicas, "isr": isr, "leader": leader, "elr": elr, "lke": lke, "le": le, "pe": pe,
               "adding": [], "dirs": [u(500 + r) for r in replicas]}
    return partition(tid, pid, replicas, isr=isr, leader=leader, elr=elr, lke=lke, leader_epoch=le,
                     partition_epoch=pe)


def check_against_model(image: MetadataImage, m: Model) -> None:
    assert {b: (r.epoch, r.fenced) for b, r in image.brokers.items()} == m.brokers
    assert {tid: t.name for tid, t in image.topics_by_id.items()} == {k: n for k, (n, _) in m.topics.items()}
    assert {n: t.id for n, t in image.topics_by_name.items()} == {n: k for k, (n, _) in m.topics.items()}
    assert {k: dict(v) for k, v in image.configs.items()} == m.configs
    for tid, (_, ps) in m.topics.items():
        got = image.topics_by_id[tid].partitions
        assert sorted(got) == sorted(ps)
        for pid, want in ps.items():
            p = got[pid]
            assert (list(p.replicas), list(p.isr), p.leader, list(p.elr), list(p.last_known_elr),
                    p.leader_epoch, p.partition_epoch, list(p.adding_replicas), list(p.directories)) == (
                want["replicas"], want["isr"], want["leader"], want["elr"], want["lke"],
                want["le"], want["pe"], want["adding"], want["dirs"])


def check_counters_and_indexes(image: MetadataImage) -> None:
    ordered = [(t, pid, t.partitions[pid]) for t in sorted(image.topics_by_id.values(), key=lambda t: t.name)
               for pid in sorted(t.partitions)]
    all_parts = [p for _, _, p in ordered]
    assert image.partition_count == len(all_parts)
    assert image.offline_partition_count == sum(1 for p in all_parts if p.leader == -1)
    assert image.preferred_imbalance_count == sum(
        1 for p in all_parts if p.leader != (p.replicas[0] if p.replicas else -1))
    assert image.no_electable_leader_count == sum(1 for p in all_parts if not p.isr and not p.elr)

    def where(keep: Any) -> tuple[TopicIdPartition, ...]:
        return tuple(TopicIdPartition(t.id, pid) for t, pid, p in ordered if keep(p))

    assert image.partitions_led_by(-1) == ()  # leaderless partitions are led by nobody
    for b in [*BROKERS, 99]:
        assert image.partitions_with_isr_member(b) == where(lambda p, b=b: b in p.isr)
        assert image.partitions_led_by(b) == where(lambda p, b=b: p.leader == b)
        assert image.partitions_with_elr_member(b) == where(lambda p, b=b: b in p.elr)
    assert image.leaderless_partitions() == where(lambda p: p.leader == -1)
    assert image.imbalanced_partitions() == where(lambda p: p.leader != (p.replicas[0] if p.replicas else -1))
    assert image.reassigning_partitions() == where(lambda p: bool(p.adding_replicas or p.removing_replicas))
    recount = MetadataImage(topics=image.topics_by_id.values())
    assert (recount.partition_count, recount.offline_partition_count, recount.preferred_imbalance_count,
            recount.no_electable_leader_count) == (
        image.partition_count, image.offline_partition_count, image.preferred_imbalance_count,
        image.no_electable_leader_count)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_record_sequences_match_the_model_counters_and_indexes(data: st.DataObject) -> None:
    m = Model()
    loader = MetadataLoader()
    history: list[tuple[MetadataImage, Model]] = []
    all_records: list[ApiMessageAndVersion] = []
    offset = 0
    for _ in range(data.draw(st.integers(1, 12), label="batches")):
        batch: list[ApiMessageAndVersion] = []
        for _ in range(data.draw(st.integers(1, 6), label="steps")):
            batch.extend(_gen_record(data.draw, m, offset + len(batch)))
        if data.draw(st.booleans(), label="query indexes first"):
            check_counters_and_indexes(loader.image)  # builds the caches of the image before
        image = loader.handle_batch(offset, 1, 0, enc(*batch))
        offset += len(batch)
        all_records.extend(batch)
        assert image is not None and image.provenance.last_offset == offset - 1
        check_against_model(image, m)
        check_counters_and_indexes(image)
        history.append((image, m.copy()))
    for old, model in history:  # copy-on-write: no later delta changed an earlier image
        check_against_model(old, model)
        check_counters_and_indexes(old)
    # One delta over the whole log gives the same image as one delta per batch.
    assert image_equal(replay(all_records), loader.image)
