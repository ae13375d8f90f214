"""An image written as snapshot records (spec 1.7) and loaded back."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

from kraft.metadata.image import (
    MetadataDelta,
    MetadataImage,
    MetadataLoader,
    MetadataProvenance,
    image_differences,
    image_equal,
)
from kraft.metadata.image_snapshot import image_to_records, snapshot_records_bytes
from kraft.metadata.records import (
    ApiMessageAndVersion,
    ConfigResourceType,
    MetadataRecordType,
    decode_record,
    encode_record,
    make_record,
)

T = MetadataRecordType
TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)


def u(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)


def feature(name: str, level: int) -> ApiMessageAndVersion:
    return make_record(T.FEATURE_LEVEL, name=name, feature_level=level)


def register(broker_id: int, epoch: int, *, fenced: bool = True, version: int | None = None,
             dirs: tuple[uuid.UUID, ...] = ()) -> ApiMessageAndVersion:
    cls: Any = type(make_record(T.REGISTER_BROKER).data)
    fields: dict[str, Any] = dict(
        broker_id=broker_id, broker_epoch=epoch, incarnation_id=u(7000 + broker_id),
        end_points=[cls.BrokerEndpoint(name="PLAINTEXT", host=f"h{broker_id}", port=9092 + broker_id,
                                       security_protocol=0),
                    cls.BrokerEndpoint(name="SSL", host=f"h{broker_id}", port=9192, security_protocol=1)],
        features=[cls.BrokerFeature(name="metadata.version", min_supported_version=1,
                                    max_supported_version=25),
                  cls.BrokerFeature(name="kraft.version", min_supported_version=0, max_supported_version=1)],
        rack=f"rack{broker_id % 2}" if broker_id % 3 else None, fenced=fenced,
    )
    if version is None or version >= 3:
        fields["log_dirs"] = list(dirs) or [u(500 + broker_id)]
    return make_record(T.REGISTER_BROKER, version, **fields)


def controller(controller_id: int) -> ApiMessageAndVersion:
    cls: Any = type(make_record(T.REGISTER_CONTROLLER).data)
    return make_record(
        T.REGISTER_CONTROLLER, controller_id=controller_id, incarnation_id=u(8000 + controller_id),
        zk_migration_ready=False,
        end_points=[cls.ControllerEndpoint(name="CONTROLLER", host="c", port=9093, security_protocol=0)],
        features=[cls.ControllerFeature(name="metadata.version", min_supported_version=1,
                                        max_supported_version=25)],
    )


def partition(tid: uuid.UUID, pid: int, replicas: list[int], **kw: Any) -> ApiMessageAndVersion:
    isr = kw.pop("isr", list(replicas))
    return make_record(
        T.PARTITION, kw.pop("version", None), partition_id=pid, topic_id=tid, replicas=replicas, isr=isr,
        removing_replicas=[], adding_replicas=kw.pop("adding", []),
        leader=kw.pop("leader", isr[0] if isr else -1),
        leader_epoch=kw.pop("leader_epoch", 0), partition_epoch=kw.pop("partition_epoch", 0), **kw,
    )


def replay(records: list[ApiMessageAndVersion], image: MetadataImage = MetadataImage.EMPTY,
           start: int = 0) -> MetadataImage:
    delta = MetadataDelta(image)
    for i, r in enumerate(records):
        delta.replay(r, start + i)
    last = start + len(records) - 1
    return delta.apply(MetadataProvenance(last_offset=last, last_epoch=2, last_append_ms=9))


def random_log(seed: int, length: int = 120) -> list[ApiMessageAndVersion]:
    """A valid log touching every record type the image models."""
    rng = random.Random(seed)
    log: list[ApiMessageAndVersion] = [feature("metadata.version", 25), feature("kraft.version", 1),
                                       make_record(T.ZK_MIGRATION_STATE, zk_migration_state=0)]
    brokers: dict[int, int] = {}
    topics: dict[uuid.UUID, tuple[str, dict[int, list[int]]]] = {}
    next_pid_block = 0
    while len(log) < length:
        kind = rng.choice(["register", "register", "broker", "topic", "topic", "change", "change", "change",
                           "remove", "config", "feature", "pid", "controller", "clear", "noop"])
        if kind == "register" or not brokers:
            b = rng.randrange(6)
            brokers[b] = len(log)
            log.append(register(b, len(log), fenced=rng.random() < 0.5))
        elif kind == "broker":
            b = rng.choice(sorted(brokers))
            log.append(make_record(T.BROKER_REGISTRATION_CHANGE, broker_id=b, broker_epoch=brokers[b],
                                   fenced=rng.choice([-1, 0, 1]), in_controlled_shutdown=rng.choice([0, 1])))
        elif kind == "topic":
            tid = u(rng.getrandbits(128))
            name = f"topic-{rng.randrange(1000):03d}"
            if any(n == name for n, _ in topics.values()):
                continue
            parts: dict[int, list[int]] = {}
            log.append(make_record(T.TOPIC, name=name, topic_id=tid))
            for pid in range(rng.randrange(1, 5)):
                replicas = rng.sample(range(6), 3)
                parts[pid] = replicas
                elr = [replicas[2]] if rng.random() < 0.3 else None
                log.append(partition(tid, pid, replicas, isr=replicas[:2] if elr else replicas,
                                     eligible_leader_replicas=elr,
                                     last_known_elr=[replicas[1]] if elr else None,
                                     directories=[u(500 + r) for r in replicas]))
            topics[tid] = (name, parts)
        elif kind == "change" and topics:
            tid = rng.choice(sorted(topics))
            name, parts = topics[tid]
            pid = rng.choice(sorted(parts))
            replicas = parts[pid]
            fields: dict[str, Any] = {}
            if rng.random() < 0.6:
                fields["isr"] = rng.sample(replicas, rng.randrange(0, 4))
            if rng.random() < 0.5:
                fields["leader"] = rng.choice([-1, *replicas])
            if rng.random() < 0.3:
                fields["eligible_leader_replicas"] = rng.sample(replicas, rng.randrange(0, 3))
            if rng.random() < 0.3:
                fields["last_known_elr"] = rng.sample(replicas, rng.randrange(0, 2))
            if rng.random() < 0.2:
                fields["adding_replicas"] = [replicas[0]]
            if rng.random() < 0.2:
                fields["leader_recovery_state"] = rng.choice([0, 1])
            log.append(make_record(T.PARTITION_CHANGE, partition_id=pid, topic_id=tid, **fields))
        elif kind == "remove" and topics and rng.random() < 0.3:
            tid = rng.choice(sorted(topics))
            topics.pop(tid)
            log.append(make_record(T.REMOVE_TOPIC, topic_id=tid))
        elif kind == "config":
            if topics and rng.random() < 0.6:
                key = (TOPIC, rng.choice([n for n, _ in topics.values()]))
            else:
                key = (BROKER, rng.choice(["", "1", "2"]))
            log.append(make_record(T.CONFIG, resource_type=key[0], resource_name=key[1],
                                   name=rng.choice(["a.b", "c", "retention.ms"]),
                                   value=rng.choice([None, "1", "2", "x"])))
        elif kind == "feature":
            log.append(feature(rng.choice(["group.version", "transaction.version"]), rng.randrange(0, 3)))
        elif kind == "pid":
            next_pid_block += 1000
            log.append(make_record(T.PRODUCER_IDS, broker_id=rng.choice(sorted(brokers)), broker_epoch=5,
                                   next_producer_id=next_pid_block))
        elif kind == "controller":
            log.append(controller(rng.choice([3000, 3001])))
        elif kind == "clear" and topics:
            target = rng.choice(["", *[n for n, _ in topics.values()]])
            log.append(make_record(T.CLEAR_ELR, topic_name=target))
        else:
            log.append(make_record(T.NO_OP))
    return log


@pytest.mark.parametrize("seed", range(12))
def test_snapshot_plus_the_rest_of_the_log_equals_the_image_replayed_from_the_log(seed: int) -> None:
    log = random_log(seed)
    full = replay(log)
    assert full.partition_count > 0
    for split in sorted({1, 3, len(log) // 3, len(log) // 2, len(log) - 1, len(log)}):
        at_split = replay(log[:split])
        records = snapshot_records_bytes(at_split)
        assert [decode_record(b) for b in records] == image_to_records(at_split)
        loader = MetadataLoader()
        loaded = loader.load_snapshot(split, 2, 9, records)
        assert image_equal(loaded, at_split, ignore_registration_offsets=True), image_differences(
            loaded, at_split, ignore_registration_offsets=True)
        assert loaded.provenance.last_offset == split - 1
        # Counters are rebuilt by the load, not copied.
        assert (loaded.partition_count, loaded.offline_partition_count, loaded.preferred_imbalance_count) == (
            at_split.partition_count, at_split.offline_partition_count, at_split.preferred_imbalance_count)
        rest = log[split:]
        if rest:
            loader.handle_batch(split, 2, 9, [encode_record(r) for r in rest])
        assert image_equal(loader.image, full, ignore_registration_offsets=True), image_differences(
            loader.image, full, ignore_registration_offsets=True)
        # Registration offsets: exact when the broker registered after the snapshot, else the
        # snapshot's last contained offset.
        for b, reg in full.brokers.items():
            got = loader.image.brokers[b].registration_offset
            assert got == (reg.registration_offset if reg.registration_offset >= split else split - 1)
        # A snapshot of the loaded image is the same snapshot.
        assert snapshot_records_bytes(loaded) == records


def test_snapshot_records_come_in_kafka_order() -> None:
    t1, t2 = u(0xFF), u(0x01)
    image = replay([
        feature("kraft.version", 1), feature("metadata.version", 25), feature("group.version", 1),
        register(2, 2, fenced=False), register(1, 3), controller(3001), controller(3000),
        make_record(T.TOPIC, name="zeta", topic_id=t2), partition(t2, 1, [1]), partition(t2, 0, [2]),
        make_record(T.TOPIC, name="alpha", topic_id=t1), partition(t1, 0, [1, 2]),
        make_record(T.CONFIG, resource_type=TOPIC, resource_name="zeta", name="b", value="1"),
        make_record(T.CONFIG, resource_type=TOPIC, resource_name="zeta", name="a", value="1"),
        make_record(T.CONFIG, resource_type=BROKER, resource_name="", name="x", value="1"),
        make_record(T.PRODUCER_IDS, broker_id=1, broker_epoch=3, next_producer_id=2000),
        make_record(T.ZK_MIGRATION_STATE, zk_migration_state=0),
    ])
    out = image_to_records(image)

    def key(r: ApiMessageAndVersion) -> Any:
        d = r.data
        match r.type:
            case T.FEATURE_LEVEL | T.TOPIC:
                return d.name
            case T.REGISTER_BROKER:
                return d.broker_id
            case T.REGISTER_CONTROLLER:
                return d.controller_id
            case T.PARTITION:
                return (d.topic_id, d.partition_id)
            case T.CONFIG:
                return (d.resource_type, d.resource_name, d.name)
            case T.PRODUCER_IDS:
                return d.next_producer_id
            case _:
                return None

    assert [(r.type, key(r)) for r in out] == [
        (T.FEATURE_LEVEL, "metadata.version"), (T.FEATURE_LEVEL, "group.version"),
        (T.FEATURE_LEVEL, "kraft.version"), (T.ZK_MIGRATION_STATE, None),
        (T.REGISTER_BROKER, 1), (T.REGISTER_BROKER, 2),
        (T.REGISTER_CONTROLLER, 3000), (T.REGISTER_CONTROLLER, 3001),
        (T.TOPIC, "alpha"), (T.PARTITION, (t1, 0)),
        (T.TOPIC, "zeta"), (T.PARTITION, (t2, 0)), (T.PARTITION, (t2, 1)),
        (T.CONFIG, (TOPIC, "zeta", "a")), (T.CONFIG, (TOPIC, "zeta", "b")), (T.CONFIG, (BROKER, "", "x")),
        (T.PRODUCER_IDS, 2000),
    ]


def test_broker_records_carry_the_current_flags_and_epoch() -> None:
    image = replay([feature("metadata.version", 25), register(1, 1),
                    make_record(T.BROKER_REGISTRATION_CHANGE, broker_id=1, broker_epoch=1, fenced=-1),
                    make_record(T.BROKER_REGISTRATION_CHANGE, broker_id=1, broker_epoch=1,
                                in_controlled_shutdown=1, log_dirs=[u(9)])])
    (rec,) = [r for r in image_to_records(image) if r.type is T.REGISTER_BROKER]
    assert rec.version == 3
    d = rec.data
    assert (d.broker_id, d.broker_epoch, d.fenced, d.in_controlled_shutdown) == (1, 1, False, True)
    assert d.log_dirs == [u(9)]
    assert [e.name for e in d.end_points] == ["PLAINTEXT", "SSL"] and d.rack == "rack1"


def test_elr_and_last_known_elr_are_written_only_when_non_empty() -> None:
    tid = u(5)
    image = replay([feature("metadata.version", 25), make_record(T.TOPIC, name="t", topic_id=tid),
                    partition(tid, 0, [1, 2, 3], isr=[1], eligible_leader_replicas=[2], last_known_elr=[]),
                    partition(tid, 1, [1, 2, 3])])
    p0, p1 = (r for r in image_to_records(image) if r.type is T.PARTITION)
    assert p0.version == p1.version == 2
    assert (p0.data.eligible_leader_replicas, p0.data.last_known_elr) == ([2], None)
    assert (p1.data.eligible_leader_replicas, p1.data.last_known_elr) == (None, None)
    # Tagged fields at their (null) default are left out of the bytes entirely.
    assert encode_record(p1) == encode_record(make_record(
        T.PARTITION, 2, partition_id=1, topic_id=tid, replicas=[1, 2, 3], isr=[1, 2, 3], removing_replicas=[],
        adding_replicas=[], leader=1, leader_epoch=0, partition_epoch=0, directories=[]))


def test_record_versions_follow_the_metadata_version_and_losses_are_reported() -> None:
    tid = u(5)
    image = replay([feature("metadata.version", 14), register(1, 1, version=2),
                    make_record(T.TOPIC, name="t", topic_id=tid), partition(tid, 0, [1], version=0)])
    losses: list[str] = []
    out = image_to_records(image, losses=losses)
    versions = {r.type: r.version for r in out}
    assert versions[T.REGISTER_BROKER] == 2 and versions[T.PARTITION] == 0
    assert losses == []
    loaded = MetadataLoader().load_snapshot(4, 1, 0, snapshot_records_bytes(image))
    assert image_equal(loaded, image, ignore_registration_offsets=True)
    # An ELR the MV 14 PartitionRecord cannot carry is reported, not silently written or raised.
    add_elr = make_record(T.PARTITION_CHANGE, topic_id=tid, partition_id=0, eligible_leader_replicas=[2])
    elr_image = replay([add_elr], image, start=4)
    image_to_records(elr_image, losses=losses)
    assert losses == ["t-0: ELR/LastKnownElr (PartitionRecord v0)"]
    # Likewise log dirs that a v2 RegisterBrokerRecord cannot carry.
    dirs_image = replay([register(1, 5)], image, start=5)
    losses.clear()
    (rec,) = [r for r in image_to_records(dirs_image, losses=losses) if r.type is T.REGISTER_BROKER]
    assert rec.version == 2 and losses == ["broker 1: LogDirs (RegisterBrokerRecord v2)"]


def test_an_empty_image_is_an_empty_snapshot() -> None:
    assert image_to_records(MetadataImage.EMPTY) == []
    loaded = MetadataLoader().load_snapshot(0, 0, 0, [])
    assert loaded.is_empty and loaded.provenance.last_offset == -1
