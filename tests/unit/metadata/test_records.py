"""``kraft.metadata.records``: schemas against Kafka's, round trips, hostile input, versions by MV.

``KAFKA`` below is Kafka's JSON record schemas (``metadata/src/main/resources/common/metadata``,
apache/kafka 1eb76443, Oct 2024, plus ClearElrRecord.json from 4.0) written out as Python data:
for every field its name, type, versions, nullableVersions, taggedVersions, tag and default exactly
as the JSON spells them (``None`` where the JSON has no such key). The Kafka files themselves are
not copied into this repository.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraft.common.errors import CorruptRecordError
from kraft.common.uuids import ZERO_UUID
from kraft.metadata.records import (
    IGNORED_RECORD_TYPES,
    LATEST_METADATA_VERSION,
    RELEASE_VERSIONS,
    SCHEMAS,
    ApiMessageAndVersion,
    MetadataRecordType,
    MetadataVersion,
    UnmodelledRecordError,
    decode_record,
    encode_record,
    make_record,
    parse_release_version,
    record_to_json,
    record_version,
)
from kraft.protocol.schema import ArrayType, Field, FieldType, StructType, snake_case

T = MetadataRecordType
MV = MetadataVersion


# ---------------------------------------------------------------------------------------------------
# Kafka's declarations, as data


@dataclass(frozen=True)
class K:
    """One field of a Kafka JSON schema; ``None`` = the key is absent from the JSON."""

    name: str
    type: str
    versions: str
    nullable_versions: str | None = None
    tagged_versions: str | None = None
    tag: int | None = None
    default: str | None = None
    fields: tuple[K, ...] = ()


@dataclass(frozen=True)
class KRecord:
    api_key: int
    name: str
    valid_versions: str
    fields: tuple[K, ...] = field(default=())
    flexible_versions: str = "0+"


def _endpoint_fields() -> tuple[K, ...]:
    return (
        K("Name", "string", "0+"),
        K("Host", "string", "0+"),
        K("Port", "uint16", "0+"),
        K("SecurityProtocol", "int16", "0+"),
    )


def _feature_fields() -> tuple[K, ...]:
    return (
        K("Name", "string", "0+"),
        K("MinSupportedVersion", "int16", "0+"),
        K("MaxSupportedVersion", "int16", "0+"),
    )


KAFKA: tuple[KRecord, ...] = (
    KRecord(0, "RegisterBrokerRecord", "0-3", (
        K("BrokerId", "int32", "0+"),
        K("IsMigratingZkBroker", "bool", "2+", default="false"),
        K("IncarnationId", "uuid", "0+"),
        K("BrokerEpoch", "int64", "0+"),
        K("EndPoints", "[]BrokerEndpoint", "0+", fields=_endpoint_fields()),
        K("Features", "[]BrokerFeature", "0+", fields=_feature_fields()),
        K("Rack", "string", "0+", nullable_versions="0+"),
        K("Fenced", "bool", "0+", default="true"),
        K("InControlledShutdown", "bool", "1+", default="false"),
        K("LogDirs", "[]uuid", "3+", tagged_versions="3+", tag=0),
    )),
    KRecord(1, "UnregisterBrokerRecord", "0", (
        K("BrokerId", "int32", "0+"),
        K("BrokerEpoch", "int64", "0+"),
    )),
    KRecord(2, "TopicRecord", "0", (
        K("Name", "string", "0+"),
        K("TopicId", "uuid", "0+"),
    )),
    KRecord(3, "PartitionRecord", "0-2", (
        K("PartitionId", "int32", "0+", default="-1"),
        K("TopicId", "uuid", "0+"),
        K("Replicas", "[]int32", "0+"),
        K("Isr", "[]int32", "0+"),
        K("RemovingReplicas", "[]int32", "0+"),
        K("AddingReplicas", "[]int32", "0+"),
        K("Leader", "int32", "0+", default="-1"),
        K("LeaderRecoveryState", "int8", "0+", tagged_versions="0+", tag=0, default="0"),
        K("LeaderEpoch", "int32", "0+", default="-1"),
        K("PartitionEpoch", "int32", "0+", default="-1"),
        K("Directories", "[]uuid", "1+"),
        K("EligibleLeaderReplicas", "[]int32", "2+", nullable_versions="2+", tagged_versions="2+", tag=1,
          default="null"),
        K("LastKnownElr", "[]int32", "2+", nullable_versions="2+", tagged_versions="2+", tag=2,
          default="null"),
    )),
    KRecord(4, "ConfigRecord", "0", (
        K("ResourceType", "int8", "0+"),
        K("ResourceName", "string", "0+"),
        K("Name", "string", "0+"),
        K("Value", "string", "0+", nullable_versions="0+"),
    )),
    KRecord(5, "PartitionChangeRecord", "0-2", (
        K("PartitionId", "int32", "0+", default="-1"),
        K("TopicId", "uuid", "0+"),
        K("Isr", "[]int32", "0+", nullable_versions="0+", tagged_versions="0+", tag=0, default="null"),
        K("Leader", "int32", "0+", tagged_versions="0+", tag=1, default="-2"),
        K("Replicas", "[]int32", "0+", nullable_versions="0+", tagged_versions="0+", tag=2, default="null"),
        K("RemovingReplicas", "[]int32", "0+", nullable_versions="0+", tagged_versions="0+", tag=3,
          default="null"),
        K("AddingReplicas", "[]int32", "0+", nullable_versions="0+", tagged_versions="0+", tag=4,
          default="null"),
        K("LeaderRecoveryState", "int8", "0+", tagged_versions="0+", tag=5, default="-1"),
        K("Directories", "[]uuid", "1+", nullable_versions="1+", tagged_versions="1+", tag=8, default="null"),
        K("EligibleLeaderReplicas", "[]int32", "2+", nullable_versions="2+", tagged_versions="2+", tag=6,
          default="null"),
        K("LastKnownElr", "[]int32", "2+", nullable_versions="2+", tagged_versions="2+", tag=7,
          default="null"),
    )),
    KRecord(7, "FenceBrokerRecord", "0", (
        K("Id", "int32", "0+"),
        K("Epoch", "int64", "0+"),
    )),
    KRecord(8, "UnfenceBrokerRecord", "0", (
        K("Id", "int32", "0+"),
        K("Epoch", "int64", "0+"),
    )),
    KRecord(9, "RemoveTopicRecord", "0", (
        K("TopicId", "uuid", "0+"),
    )),
    KRecord(12, "FeatureLevelRecord", "0", (
        K("Name", "string", "0+"),
        K("FeatureLevel", "int16", "0+"),
    )),
    KRecord(15, "ProducerIdsRecord", "0", (
        K("BrokerId", "int32", "0+"),
        K("BrokerEpoch", "int64", "0+", default="-1"),
        K("NextProducerId", "int64", "0+"),
    )),
    KRecord(17, "BrokerRegistrationChangeRecord", "0-2", (
        K("BrokerId", "int32", "0+"),
        K("BrokerEpoch", "int64", "0+"),
        K("Fenced", "int8", "0+", tagged_versions="0+", tag=0),
        K("InControlledShutdown", "int8", "1+", tagged_versions="1+", tag=1),
        K("LogDirs", "[]uuid", "2+", tagged_versions="2+", tag=2),
    )),
    # Kafka 4.x metadata/src/main/resources/common/metadata/UserScramCredentialRecord.json
    KRecord(11, "UserScramCredentialRecord", "0", (
        K("Name", "string", "0+"),
        K("Mechanism", "int8", "0+"),
        K("Salt", "bytes", "0+"),
        K("StoredKey", "bytes", "0+"),
        K("ServerKey", "bytes", "0+"),
        K("Iterations", "int32", "0+"),
    )),
    KRecord(20, "NoOpRecord", "0"),
    KRecord(21, "ZkMigrationStateRecord", "0", (
        K("ZkMigrationState", "int8", "0+"),
    )),
    KRecord(22, "RemoveUserScramCredentialRecord", "0", (
        K("Name", "string", "0+"),
        K("Mechanism", "int8", "0+"),
    )),
    KRecord(18, "AccessControlEntryRecord", "0", (
        K("Id", "uuid", "0+"),
        K("ResourceType", "int8", "0+"),
        K("ResourceName", "string", "0+"),
        K("PatternType", "int8", "0+"),
        K("Principal", "string", "0+"),
        K("Host", "string", "0+"),
        K("Operation", "int8", "0+"),
        K("PermissionType", "int8", "0+"),
    )),
    KRecord(19, "RemoveAccessControlEntryRecord", "0", (
        K("Id", "uuid", "0+"),
    )),
    KRecord(23, "BeginTransactionRecord", "0", (
        K("Name", "string", "0+", nullable_versions="0+", tagged_versions="0+", tag=0, default="null"),
    )),
    KRecord(24, "EndTransactionRecord", "0"),
    KRecord(25, "AbortTransactionRecord", "0", (
        K("Reason", "string", "0+", nullable_versions="0+", tagged_versions="0+", tag=0, default="null"),
    )),
    KRecord(27, "RegisterControllerRecord", "0", (
        K("ControllerId", "int32", "0+"),
        K("IncarnationId", "uuid", "0+"),
        K("ZkMigrationReady", "bool", "0+"),
        K("EndPoints", "[]ControllerEndpoint", "0+", fields=_endpoint_fields()),
        K("Features", "[]ControllerFeature", "0+", fields=_feature_fields()),
    )),
    KRecord(28, "ClearElrRecord", "0", (
        K("TopicName", "string", "0+"),
    )),
)

# Kafka's keys of the record types kraft reads past (MetadataRecordType in Kafka's generator).
KAFKA_IGNORED = {
    10: "DelegationTokenRecord",
    14: "ClientQuotaRecord",
    26: "RemoveDelegationTokenRecord",
}


def kafka_default(k: K) -> Any:
    """The value Kafka's message generator gives a field that is not set (its ``fieldDefault``)."""
    d = k.default
    if d == "null":
        return None
    if k.type.startswith("[]"):
        return []
    if k.type == "string":
        return d or ""
    if k.type == "bytes":
        return b""
    if k.type == "bool":
        return d == "true"
    if k.type == "uuid":
        return ZERO_UUID
    return int(d or "0")


def type_name(t: FieldType | StructType) -> str:
    return t.name


def check_fields(where: str, ours: tuple[Field, ...], theirs: tuple[K, ...]) -> None:
    assert [f.name for f in ours] == [snake_case(k.name) for k in theirs], where
    for f, k in zip(ours, theirs):
        at = f"{where}.{k.name}"
        assert type_name(f.type) == k.type, at
        assert str(f.versions) == k.versions, at
        assert str(f.nullable) == (k.nullable_versions or "none"), at
        assert str(f.tagged) == (k.tagged_versions or "none"), at
        assert f.tag == k.tag, at
        default = f.default_value()
        if isinstance(f.type, ArrayType) and isinstance(f.type.element, StructType):
            assert default == [] and k.fields, at
            check_fields(at, f.type.element.fields, k.fields)
        else:
            assert not k.fields, at
            assert default == kafka_default(k) and type(default) is type(kafka_default(k)), at


@pytest.mark.parametrize("kafka", KAFKA, ids=lambda r: r.name)
def test_schema_matches_kafka_field_by_field(kafka: KRecord) -> None:
    record_type = MetadataRecordType(kafka.api_key)
    schema = SCHEMAS[record_type]
    assert schema.type is record_type
    assert schema.struct.struct_name == kafka.name == record_type.record_name
    assert str(schema.versions) == kafka.valid_versions
    check_fields(kafka.name, schema.struct.fields, kafka.fields)


def test_every_declared_record_type_is_checked_against_kafka() -> None:
    assert {int(t) for t in SCHEMAS} == {r.api_key for r in KAFKA} == {int(t) for t in MetadataRecordType}


def test_ignored_types_are_exactly_kafkas_acl_scram_quota_and_token_records() -> None:
    assert set(IGNORED_RECORD_TYPES) == set(KAFKA_IGNORED)
    assert not set(IGNORED_RECORD_TYPES) & {int(t) for t in MetadataRecordType}


@pytest.mark.parametrize(
    ("record_type", "upper"),
    [
        (T.PARTITION_CHANGE, "PARTITION_CHANGE_RECORD"),
        (T.REGISTER_BROKER, "REGISTER_BROKER_RECORD"),
        (T.ZK_MIGRATION_STATE, "ZK_MIGRATION_STATE_RECORD"),
        (T.NO_OP, "NO_OP_RECORD"),
        (T.CLEAR_ELR, "CLEAR_ELR_RECORD"),
    ],
)
def test_upper_names_are_kafkas_metadata_record_type_names(
    record_type: MetadataRecordType, upper: str
) -> None:
    assert record_type.upper_name == upper


# ---------------------------------------------------------------------------------------------------
# Hypothesis round trips

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _scalar(t: FieldType) -> st.SearchStrategy[Any]:
    if t.name == "bool":
        return st.booleans()
    if t.name in _INT_RANGES:
        lo, hi = _INT_RANGES[t.name]
        return st.one_of(st.integers(max(lo, -3), 3), st.integers(lo, hi))
    if t.name == "uuid":
        return st.one_of(st.just(ZERO_UUID), st.integers(0, 2**128 - 1).map(lambda n: uuid.UUID(int=n)))
    if t.name == "string":
        return st.text(max_size=10)
    if t.name == "bytes":
        return st.binary(max_size=10)
    raise AssertionError(f"no strategy for {t.name}")


def _strategy(t: FieldType | StructType, version: int) -> st.SearchStrategy[Any]:
    if isinstance(t, StructType):
        return struct_values(t, version)
    if isinstance(t, ArrayType):
        return st.lists(_strategy(t.element, version), max_size=2 if isinstance(t.element, StructType) else 5)
    return _scalar(t)


def struct_values(struct: StructType, version: int) -> st.SearchStrategy[Any]:
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for f in struct.fields:
        if version not in f.versions:
            continue  # absent in this version: keeps its default so that encoding succeeds
        s = _strategy(f.type, version)
        if version in f.nullable:
            s = st.one_of(st.none(), s)
        if version in f.tagged:
            s = st.one_of(st.builds(f.default_value), s)
        parts[f.name] = s
    return st.fixed_dictionaries(parts).map(lambda kw: struct.cls(**kw))


EVERY_VERSION = [(t, v) for t, s in SCHEMAS.items() for v in range(s.versions.low, s.versions.high + 1)]


def records_at(record_type: MetadataRecordType, version: int) -> st.SearchStrategy[ApiMessageAndVersion]:
    return struct_values(SCHEMAS[record_type].struct, version).map(
        lambda data: ApiMessageAndVersion(record_type, version, data)
    )


@pytest.mark.parametrize(("record_type", "version"), EVERY_VERSION, ids=lambda x: str(x))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decode_of_encode_is_the_record_at_every_version(
    record_type: MetadataRecordType, version: int, data: st.DataObject
) -> None:
    record = data.draw(records_at(record_type, version))
    encoded = encode_record(record)
    decoded = decode_record(encoded)
    assert decoded == record
    assert encode_record(decoded) == encoded  # and bytes -> record -> the same bytes


@pytest.mark.parametrize(("record_type", "version"), EVERY_VERSION, ids=lambda x: str(x))
def test_default_record_round_trips_at_every_version(record_type: MetadataRecordType, version: int) -> None:
    record = make_record(record_type, version)
    assert decode_record(encode_record(record)) == record


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80), st.sampled_from(EVERY_VERSION))
def test_arbitrary_bodies_decode_and_reencode_exactly_or_fail_as_corrupt(
    body: bytes, type_and_version: tuple[MetadataRecordType, int]
) -> None:
    record_type, version = type_and_version
    data = bytes((1, int(record_type), version)) + body
    try:
        record = decode_record(data)
    except CorruptRecordError:
        return
    assert encode_record(record) == data


# ---------------------------------------------------------------------------------------------------
# Bad input: CorruptRecordError and nothing else


def sample_records() -> list[ApiMessageAndVersion]:
    u = uuid.UUID(int=0xAB)
    return [
        make_record(T.NO_OP),
        make_record(T.TOPIC, name="foo", topic_id=u),
        make_record(T.PARTITION, partition_id=0, topic_id=u, replicas=[1, 2], isr=[1], directories=[u, u]),
        make_record(T.PARTITION, partition_id=1, topic_id=u, replicas=[1], isr=[], leader_recovery_state=1,
                    directories=[u], eligible_leader_replicas=[1], last_known_elr=[]),
        make_record(T.PARTITION_CHANGE, partition_id=0, topic_id=u, isr=[1], leader=1, directories=[u]),
        make_record(T.CONFIG, resource_type=2, resource_name="t", name="k", value=None),
        make_record(T.BEGIN_TRANSACTION, name="Bootstrap records"),
        make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=25),
    ]


@pytest.mark.parametrize("frame", [0, 2, 127, 300])
def test_unknown_frame_version_is_corrupt(frame: int) -> None:
    from kraft.protocol.primitives import Writer

    w = Writer()
    w.unsigned_varint(frame)
    with pytest.raises(CorruptRecordError, match="frame version"):
        decode_record(w.getvalue() + bytes.fromhex("1400 00"))


@pytest.mark.parametrize("type_id", [6, 13, 16, 29, 200, 0x7FFF])
def test_unknown_record_type_is_corrupt(type_id: int) -> None:
    from kraft.protocol.primitives import Writer

    w = Writer()
    w.unsigned_varint(1)
    w.unsigned_varint(type_id)
    w.unsigned_varint(0)
    with pytest.raises(CorruptRecordError, match=f"unknown metadata record type {type_id}") as e:
        decode_record(w.getvalue() + b"\x00")
    assert not isinstance(e.value, UnmodelledRecordError)


def test_type_or_version_beyond_int16_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError, match="int16"):
        decode_record(bytes.fromhex("01 80 80 02 00 00"))  # type 32768
    with pytest.raises(CorruptRecordError, match="int16"):
        decode_record(bytes.fromhex("01 14 80 80 02 00"))  # version 32768


@pytest.mark.parametrize(("record_type", "version"), [(t, s.versions.high + 1) for t, s in SCHEMAS.items()]
                         + [(T.PARTITION, 3), (T.PARTITION, 100), (T.PARTITION_CHANGE, 3)])
def test_version_out_of_range_is_corrupt(record_type: MetadataRecordType, version: int) -> None:
    # The body is a valid body of the newest version, so only the version number is wrong.
    newest = make_record(record_type)
    if record_type is T.PARTITION:
        newest = sample_records()[2]
    body = encode_record(newest)[3:]
    with pytest.raises(CorruptRecordError, match="not supported"):
        decode_record(bytes((1, int(record_type), version)) + body)


def test_version_out_of_range_is_refused_by_the_writer_too() -> None:
    good = sample_records()[2]
    with pytest.raises(ValueError, match="no version 3"):
        encode_record(ApiMessageAndVersion(T.PARTITION, 3, good.data))
    with pytest.raises(ValueError, match="no version 1"):
        make_record(T.TOPIC, 1)


@pytest.mark.parametrize("record", sample_records(), ids=repr)
def test_every_truncation_is_corrupt(record: ApiMessageAndVersion) -> None:
    data = encode_record(record)
    for n in range(len(data)):
        with pytest.raises(CorruptRecordError):
            decode_record(data[:n])


@pytest.mark.parametrize("record", sample_records(), ids=repr)
def test_trailing_bytes_are_corrupt(record: ApiMessageAndVersion) -> None:
    data = encode_record(record)
    for extra in (b"\x00", b"\x01\x02\x03", b"\xff" * 20):
        with pytest.raises(CorruptRecordError):
            decode_record(data + extra)


def test_trailing_bytes_error_names_the_record() -> None:
    with pytest.raises(CorruptRecordError, match="TopicRecord v0: 1 trailing byte"):
        decode_record(encode_record(sample_records()[1]) + b"\x00")


def test_invalid_utf8_and_lying_lengths_are_corrupt() -> None:
    with pytest.raises(CorruptRecordError, match="UTF-8"):
        decode_record(bytes.fromhex("01 02 00 03 ff fe") + bytes(16) + b"\x00")
    with pytest.raises(CorruptRecordError):
        decode_record(bytes.fromhex("01 03 02 00000000") + bytes(16) + bytes.fromhex("ff ff ff ff 0f"))
    # A tagged field whose payload is longer than its value, and tags out of order.
    with pytest.raises(CorruptRecordError, match="trailing"):
        decode_record(bytes.fromhex("01 05 00 00000000") + bytes(16) + bytes.fromhex("01 01 05 ffffffff 00"))
    with pytest.raises(CorruptRecordError, match="out of order"):
        # tag 1 (Leader) before tag 0 (Isr)
        decode_record(
            bytes.fromhex("01 05 00 00000000") + bytes(16)
            + bytes.fromhex("02 01 04 00000001 00 05 02 00000001")
        )


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_corrupt_record_error_only(data: bytes) -> None:
    with contextlib.suppress(CorruptRecordError):
        decode_record(data)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sample_records()), st.data())
def test_flipped_bytes_decode_or_raise_corrupt_record_error_only(
    record: ApiMessageAndVersion, data: st.DataObject
) -> None:
    raw = bytearray(encode_record(record))
    i = data.draw(st.integers(0, len(raw) - 1))
    raw[i] = data.draw(st.integers(0, 255))
    with contextlib.suppress(CorruptRecordError):
        decode_record(bytes(raw))


@pytest.mark.parametrize("type_id", sorted(IGNORED_RECORD_TYPES))
def test_ignored_types_raise_unmodelled_record_error_with_the_raw_body(type_id: int) -> None:
    body = b"\x05opaque"
    with pytest.raises(UnmodelledRecordError) as e:
        decode_record(bytes((1, type_id, 2)) + body)
    assert isinstance(e.value, CorruptRecordError)  # callers that only stop on corruption still stop
    assert (e.value.record.type, e.value.record.version, e.value.record.body) == (type_id, 2, body)
    assert "not modelled" in str(e.value)


# ---------------------------------------------------------------------------------------------------
# JSON (kafka-dump-log --cluster-metadata-decoder)


def test_record_to_json_omits_only_tagged_fields_at_their_default() -> None:
    u = uuid.UUID(int=1)
    change = make_record(T.PARTITION_CHANGE, partition_id=3, topic_id=u, leader=-1, last_known_elr=[])
    assert record_to_json(change)["data"] == {
        "partitionId": 3, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "leader": -1, "lastKnownElr": [],
    }
    config = make_record(T.CONFIG, resource_type=4, resource_name="", name="x", value=None)
    assert record_to_json(config) == {
        "type": "CONFIG_RECORD", "version": 0,
        "data": {"resourceType": 4, "resourceName": "", "name": "x", "value": None},
    }
    assert record_to_json(make_record(T.NO_OP)) == {"type": "NO_OP_RECORD", "version": 0, "data": {}}


def test_record_to_json_writes_only_the_fields_of_the_records_version() -> None:
    u = uuid.UUID(int=1)
    v0 = make_record(T.PARTITION, 0, partition_id=0, topic_id=u, replicas=[1], isr=[1], leader=1)
    assert "directories" not in record_to_json(v0)["data"]
    v1 = make_record(
        T.PARTITION, 1, partition_id=0, topic_id=u, replicas=[1], isr=[1], leader=1, directories=[u]
    )
    assert record_to_json(v1)["data"]["directories"] == ["AAAAAAAAAAAAAAAAAAAAAQ"]


def test_record_to_json_of_nested_structs() -> None:
    cls: Any = type(make_record(T.REGISTER_CONTROLLER).data)
    record = make_record(
        T.REGISTER_CONTROLLER, controller_id=1, incarnation_id=uuid.UUID(int=2), zk_migration_ready=False,
        end_points=[cls.ControllerEndpoint(name="C", host="h", port=9093, security_protocol=0)],
        features=[
            cls.ControllerFeature(name="kraft.version", min_supported_version=0, max_supported_version=1)
        ],
    )
    data = record_to_json(record)["data"]
    assert data["endPoints"] == [{"name": "C", "host": "h", "port": 9093, "securityProtocol": 0}]
    assert data["features"] == [{"name": "kraft.version", "minSupportedVersion": 0, "maxSupportedVersion": 1}]


# ---------------------------------------------------------------------------------------------------
# Versions by metadata.version (spec 1.5) and release versions


@pytest.mark.parametrize(
    ("record_type", "mv", "expected"),
    [
        (T.REGISTER_BROKER, MV.IBP_3_0_IV1, 0),
        (T.REGISTER_BROKER, MV.IBP_3_3_IV2, 0),
        (T.REGISTER_BROKER, MV.IBP_3_3_IV3, 1),
        (T.REGISTER_BROKER, MV.IBP_3_4_IV0, 2),
        (T.REGISTER_BROKER, MV.IBP_3_7_IV1, 2),
        (T.REGISTER_BROKER, MV.IBP_3_7_IV2, 3),
        (T.REGISTER_BROKER, MV.IBP_4_0_IV3, 3),
        (T.PARTITION, MV.IBP_3_7_IV1, 0),
        (T.PARTITION, MV.IBP_3_7_IV2, 1),
        (T.PARTITION, MV.IBP_4_0_IV0, 1),
        (T.PARTITION, MV.IBP_4_0_IV1, 2),
        (T.PARTITION_CHANGE, MV.IBP_3_0_IV1, 0),
        (T.PARTITION_CHANGE, MV.IBP_3_7_IV2, 1),
        (T.PARTITION_CHANGE, MV.IBP_4_0_IV1, 2),
        (T.PARTITION_CHANGE, MV.IBP_4_0_IV3, 2),
        (T.BROKER_REGISTRATION_CHANGE, MV.IBP_3_3_IV2, 0),
        (T.BROKER_REGISTRATION_CHANGE, MV.IBP_3_3_IV3, 1),
        (T.BROKER_REGISTRATION_CHANGE, MV.IBP_3_7_IV2, 2),
        (T.FEATURE_LEVEL, MV.IBP_4_0_IV3, 0),  # v0 forever
        (T.TOPIC, MV.IBP_4_0_IV3, 0),
    ],
)
def test_record_version_by_metadata_version(record_type: MetadataRecordType, mv: MV, expected: int) -> None:
    assert record_version(record_type, mv) == expected
    assert record_version(record_type, int(mv)) == expected


@pytest.mark.parametrize("record_type", list(T))
def test_record_version_is_always_a_listed_version(record_type: MetadataRecordType) -> None:
    for level in range(1, int(LATEST_METADATA_VERSION) + 1):
        assert record_version(record_type, level) in SCHEMAS[record_type].versions


def test_metadata_versions_are_kafkas_kraft_levels_one_to_twenty_five() -> None:
    assert [int(m) for m in MV] == list(range(1, 26))
    assert MV(4).release == "3.3-IV0" and MV(17).release == "3.7-IV2" and MV(25).release == "4.0-IV3"
    assert LATEST_METADATA_VERSION is MV.IBP_4_0_IV3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4.0", MV.IBP_4_0_IV3),
        ("3.7", MV.IBP_3_7_IV4),  # a release means its last level, as Kafka's fromVersionString
        ("3.3", MV.IBP_3_3_IV3),
        ("3.0", MV.IBP_3_0_IV1),
        ("3.7-IV2", MV.IBP_3_7_IV2),
        ("4.0-IV1", MV.IBP_4_0_IV1),
        ("3.3-IV0", MV.IBP_3_3_IV0),
        ("25", MV.IBP_4_0_IV3),
        ("1", MV.IBP_3_0_IV1),
        (" 3.9 ", MV.IBP_3_9_IV0),
    ],
)
def test_parse_release_version(text: str, expected: MV) -> None:
    assert parse_release_version(text) is expected


@pytest.mark.parametrize("text", ["", "5.0", "2.8", "3.7-IV9", "0", "26", "-1", "latest", "4.0-iv3x"])
def test_parse_release_version_refuses_with_the_list_of_known_versions(text: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_release_version(text)
    message = str(e.value)
    assert f"unknown metadata.version {text.strip()!r}" in message
    assert "known: " in message and "4.0-IV3" in message and "3.7" in message


def test_every_release_maps_to_a_level_of_that_release() -> None:
    for release, mv in RELEASE_VERSIONS.items():
        assert mv.release.startswith(release + "-")
        assert all(m <= mv for m in MV if m.release.startswith(release + "-"))
