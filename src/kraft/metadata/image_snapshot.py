"""A metadata image written as records: the data of a snapshot (spec 1.7).

Owns the image -> records direction only; loading is ``MetadataLoader.load_snapshot`` (empty
image + every record). No I/O: the storage layer frames these records with the SnapshotHeader and
SnapshotFooter control records and writes the file.

Order (Kafka's ``MetadataImage.write``): FeatureLevelRecord for metadata.version, the other
finalized features by name; ZkMigrationStateRecord; RegisterBrokerRecord per broker by id (with
its current epoch, fenced and controlled-shutdown flags); RegisterControllerRecord per controller
by id; per topic by name, TopicRecord then its PartitionRecords by partition id (current leader,
epochs, ISR; ELR and LastKnownElr only when non-empty, as Kafka's writers do); ConfigRecords by
(resource type, resource name, key); ProducerIdsRecord when one was ever replayed;
UserScramCredentialRecord per credential by mechanism then user (Kafka writes them only from
metadata.version 3.5-IV2 on and reports a loss below it; so do we); AccessControlEntryRecord per
ACL by id.

Record versions follow the image's metadata.version (``records.record_version``), so a snapshot
is what a controller at that level would write. A field the chosen version cannot carry is left
out and named in ``losses`` (Kafka's ``ImageWriterOptions.handleLoss``); with the versions the
controller itself writes this never happens.

Round trip: ``load_snapshot(image_to_records(img))`` equals ``img`` (``image_equal``) except for
provenance, which becomes (snapshot offset - 1, epoch, append time), and the brokers' registration
offsets. A RegisterBrokerRecord does not carry its own offset, so a broker loaded from a snapshot
takes the snapshot's last contained offset, as Kafka's ``QuorumController`` replays snapshot
records at ``lastContainedLogOffset``. That offset is >= the true one, so the only effect is that
a fenced broker registered before the snapshot must have replayed up to the snapshot before it can
be unfenced (spec 2.3): conservative, never unsafe. Compare with
``image_equal(a, b, ignore_registration_offsets=True)`` when one side came from a snapshot.
"""

from __future__ import annotations

from typing import Any

from kraft.metadata.image import (
    INITIAL_PRODUCER_IDS,
    METADATA_VERSION_FEATURE,
    BrokerRegistration,
    ControllerRegistration,
    Endpoint,
    MetadataImage,
    TopicImage,
    image_differences,
    image_equal,
)
from kraft.metadata.partition import PartitionRegistration
from kraft.metadata.records import (
    REGISTER_BROKER_RECORD,
    REGISTER_CONTROLLER_RECORD,
    ApiMessageAndVersion,
    MetadataRecordType,
    MetadataVersion,
    encode_record,
    make_record,
    record_version,
)

__all__ = [
    "image_differences",
    "image_equal",
    "image_to_records",
    "snapshot_records_bytes",
]

_T = MetadataRecordType


def image_to_records(image: MetadataImage, *, losses: list[str] | None = None) -> list[ApiMessageAndVersion]:
    """The records that rebuild ``image`` from an empty one, in snapshot order.

    Args:
        losses: if given, receives a description of every non-default value the record versions
            for the image's metadata.version cannot carry (and that were therefore left out).
    """
    lost: list[str] = [] if losses is None else losses
    mv = image.metadata_version
    out: list[ApiMessageAndVersion] = []

    features = image.features
    if METADATA_VERSION_FEATURE in features:
        out.append(_feature(METADATA_VERSION_FEATURE, features[METADATA_VERSION_FEATURE]))
    for name in sorted(features):
        if name != METADATA_VERSION_FEATURE:
            out.append(_feature(name, features[name]))

    # Kafka writes the migration state from 3.4-IV0 on; we also keep a non-default state below it.
    if mv >= MetadataVersion.IBP_3_4_IV0 or image.zk_migration_state != 0:
        out.append(make_record(_T.ZK_MIGRATION_STATE, 0, zk_migration_state=image.zk_migration_state))

    broker_version = record_version(_T.REGISTER_BROKER, mv)
    for broker_id in sorted(image.brokers):
        out.append(_broker_record(image.brokers[broker_id], broker_version, lost))

    for controller_id in sorted(image.controllers):
        out.append(_controller_record(image.controllers[controller_id]))

    partition_version = record_version(_T.PARTITION, mv)
    for name in sorted(image.topics_by_name):
        topic = image.topics_by_name[name]
        out.append(make_record(_T.TOPIC, 0, name=topic.name, topic_id=topic.id))
        out.extend(_partition_records(topic, partition_version, lost))

    for resource_type, resource_name in sorted(image.configs):
        entries = image.configs[(resource_type, resource_name)]
        for key in sorted(entries):
            out.append(
                make_record(
                    _T.CONFIG,
                    0,
                    resource_type=resource_type,
                    resource_name=resource_name,
                    name=key,
                    value=entries[key],
                )
            )

    if image.producer_ids != INITIAL_PRODUCER_IDS:
        broker_id, broker_epoch, next_producer_id = image.producer_ids
        out.append(
            make_record(
                _T.PRODUCER_IDS,
                0,
                broker_id=broker_id,
                broker_epoch=broker_epoch,
                next_producer_id=next_producer_id,
            )
        )

    if not image.scram.is_empty:
        if mv >= MetadataVersion.IBP_3_5_IV2:
            for mechanism, user, credential in image.scram:
                out.append(
                    make_record(
                        _T.USER_SCRAM_CREDENTIAL,
                        0,
                        name=user,
                        mechanism=int(mechanism),
                        salt=credential.salt,
                        stored_key=credential.stored_key,
                        server_key=credential.server_key,
                        iterations=credential.iterations,
                    )
                )
        else:
            lost.append(f"SCRAM credentials of users {image.scram.users()} (metadata.version {mv} < 3.5-IV2)")
    for acl_id in sorted(image.acls):
        acl = image.acls[acl_id]
        out.append(
            make_record(
                _T.ACCESS_CONTROL_ENTRY,
                0,
                id=acl_id,
                resource_type=acl.resource_type,
                resource_name=acl.resource_name,
                pattern_type=acl.pattern_type,
                principal=acl.principal,
                host=acl.host,
                operation=acl.operation,
                permission_type=acl.permission_type,
            )
        )
    return out


def snapshot_records_bytes(image: MetadataImage, *, losses: list[str] | None = None) -> list[bytes]:
    """``image_to_records`` encoded as ApiMessageAndVersion frames (the values of snapshot records)."""
    return [encode_record(r) for r in image_to_records(image, losses=losses)]


def _feature(name: str, level: int) -> ApiMessageAndVersion:
    return make_record(_T.FEATURE_LEVEL, 0, name=name, feature_level=level)


def _endpoints(struct_cls: Any, endpoints: tuple[Endpoint, ...]) -> list[Any]:
    return [
        struct_cls(name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol)
        for e in endpoints
    ]


def _supported(struct_cls: Any, features: tuple[tuple[str, int, int], ...]) -> list[Any]:
    return [
        struct_cls(name=name, min_supported_version=low, max_supported_version=high)
        for name, low, high in features
    ]


def _broker_record(b: BrokerRegistration, version: int, lost: list[str]) -> ApiMessageAndVersion:
    cls = REGISTER_BROKER_RECORD.cls
    fields: dict[str, Any] = {
        "broker_id": b.id,
        "incarnation_id": b.incarnation_id,
        "broker_epoch": b.epoch,
        "end_points": _endpoints(cls.BrokerEndpoint, b.listeners),  # type: ignore[attr-defined]
        "features": _supported(cls.BrokerFeature, b.supported_features),  # type: ignore[attr-defined]
        "rack": b.rack,
        "fenced": b.fenced,
    }
    if version >= 1:
        fields["in_controlled_shutdown"] = b.in_controlled_shutdown
    elif b.in_controlled_shutdown:
        lost.append(f"broker {b.id}: InControlledShutdown (RegisterBrokerRecord v{version})")
    if version >= 2:
        fields["is_migrating_zk_broker"] = b.is_migrating_zk_broker
    elif b.is_migrating_zk_broker:
        lost.append(f"broker {b.id}: IsMigratingZkBroker (RegisterBrokerRecord v{version})")
    if version >= 3:
        fields["log_dirs"] = list(b.directories)
    elif b.directories:
        lost.append(f"broker {b.id}: LogDirs (RegisterBrokerRecord v{version})")
    return make_record(_T.REGISTER_BROKER, version, **fields)


def _controller_record(c: ControllerRegistration) -> ApiMessageAndVersion:
    cls = REGISTER_CONTROLLER_RECORD.cls
    # Kafka leaves controllers out below 3.7-IV0; they cannot be registered there in the first
    # place, so writing whatever the image holds is lossless and never differs in practice.
    return make_record(
        _T.REGISTER_CONTROLLER,
        0,
        controller_id=c.id,
        incarnation_id=c.incarnation_id,
        zk_migration_ready=c.zk_migration_ready,
        end_points=_endpoints(cls.ControllerEndpoint, c.listeners),  # type: ignore[attr-defined]
        features=_supported(cls.ControllerFeature, c.supported_features),  # type: ignore[attr-defined]
    )


def _partition_records(topic: TopicImage, version: int, lost: list[str]) -> list[ApiMessageAndVersion]:
    out: list[ApiMessageAndVersion] = []
    partitions = topic.partitions
    for pid in sorted(partitions):
        p: PartitionRegistration = partitions[pid]
        fields: dict[str, Any] = {
            "partition_id": pid,
            "topic_id": topic.id,
            "replicas": list(p.replicas),
            "isr": list(p.isr),
            "removing_replicas": list(p.removing_replicas),
            "adding_replicas": list(p.adding_replicas),
            "leader": p.leader,
            "leader_recovery_state": p.leader_recovery_state,
            "leader_epoch": p.leader_epoch,
            "partition_epoch": p.partition_epoch,
        }
        if version >= 1:
            fields["directories"] = list(p.directories)
        elif p.directories:
            lost.append(f"{topic.name}-{pid}: directories (PartitionRecord v{version})")
        if version >= 2:
            # Tagged and nullable: writers set them only when non-empty (spec 1.4).
            if p.elr:
                fields["eligible_leader_replicas"] = list(p.elr)
            if p.last_known_elr:
                fields["last_known_elr"] = list(p.last_known_elr)
        elif p.elr or p.last_known_elr:
            lost.append(f"{topic.name}-{pid}: ELR/LastKnownElr (PartitionRecord v{version})")
        out.append(make_record(_T.PARTITION, version, **fields))
    return out
