"""Metadata record schemas, described once as data, and their ApiMessageAndVersion framing.

Every record of ``__cluster_metadata`` (spec 1.3, 1.4) is a flexible message from version 0,
declared here with ``kraft.protocol.schema`` exactly as Kafka's JSON schemas
(``metadata/src/main/resources/common/metadata/*.json``) declare it: names, versions, nullability,
tags and defaults. A record's value in a batch is framed as (spec 1.2)::

    uvarint frame version (always 1) | uvarint record type | uvarint record version | body

``decode_record`` accepts every listed version of every known type and refuses anything else with
``CorruptRecordError`` (unknown frame version, unknown type, version out of range, trailing bytes):
replay must never silently skip a record it cannot read. Record types that this project does not
model (quotas, tokens: keys 10, 14, 26) raise ``UnmodelledRecordError``
(a ``CorruptRecordError`` carrying the raw ``UnmodelledRecord``): tools show them, the image skips them.
SCRAM credentials (keys 11 and 22) are modelled; their salts and keys never appear in JSON
(``record_to_json`` prints ``[hidden]``, ``SENSITIVE_FIELDS``).

Writers pick versions by metadata.version (``record_version``): spec 1.5.

No I/O here: this module is shared by the controller, the brokers, the tools and the Spark source.
"""

from __future__ import annotations

import enum
import struct as _struct
import uuid as _uuid
from dataclasses import dataclass
from typing import Any

from kraft.common.errors import CorruptRecordError, MalformedMessageError
from kraft.common.fast_init import speed_up_inits
from kraft.protocol.primitives import Reader, Writer, shared_uuid
from kraft.protocol.schema import (
    BOOL,
    BYTES,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UUID,
    StructType,
    Versions,
    array,
    f,
    struct,
)

FRAME_VERSION = 1


class MetadataRecordType(enum.IntEnum):
    """Kafka's ``MetadataRecordType`` api keys (spec 1.3)."""

    REGISTER_BROKER = 0
    UNREGISTER_BROKER = 1
    TOPIC = 2
    PARTITION = 3
    CONFIG = 4
    PARTITION_CHANGE = 5
    FENCE_BROKER = 7
    UNFENCE_BROKER = 8
    REMOVE_TOPIC = 9
    USER_SCRAM_CREDENTIAL = 11
    FEATURE_LEVEL = 12
    PRODUCER_IDS = 15
    BROKER_REGISTRATION_CHANGE = 17
    ACCESS_CONTROL_ENTRY = 18
    REMOVE_ACCESS_CONTROL_ENTRY = 19
    NO_OP = 20
    ZK_MIGRATION_STATE = 21
    REMOVE_USER_SCRAM_CREDENTIAL = 22
    BEGIN_TRANSACTION = 23
    END_TRANSACTION = 24
    ABORT_TRANSACTION = 25
    REGISTER_CONTROLLER = 27
    CLEAR_ELR = 28

    @property
    def record_name(self) -> str:
        """Kafka's message name, e.g. ``PartitionChangeRecord``."""
        return SCHEMAS[self].struct.struct_name

    @property
    def upper_name(self) -> str:
        """The name ``kafka-dump-log`` prints, e.g. ``PARTITION_CHANGE_RECORD``."""
        return f"{self.name}_RECORD"


# Keys of record types this project reads past without modelling (quotas, delegation tokens).
IGNORED_RECORD_TYPES = frozenset({10, 14, 26})
# Kafka's MetadataRecordType names of the record types kraft reads past (tools print them).
UNMODELLED_RECORD_NAMES: dict[int, str] = {
    10: "DELEGATION_TOKEN_RECORD",
    14: "CLIENT_QUOTA_RECORD",
    26: "REMOVE_DELEGATION_TOKEN_RECORD",
}


# Modelled record types whose payloads bulk exports (the Spark sources) withhold, exactly as they
# withhold the unmodelled ones: SCRAM credentials are secrets, and the JVM payload decoder has no
# ``bytes`` type to print them as ``[hidden]`` the way ``record_to_json`` does for dump-log.
PAYLOAD_WITHHELD_RECORD_TYPES = frozenset({11, 22})


class ConfigResourceType(enum.IntEnum):
    """ConfigRecord.ResourceType (Kafka's ``ConfigResource.Type``)."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class SecurityProtocol(enum.IntEnum):
    PLAINTEXT = 0
    SSL = 1
    SASL_PLAINTEXT = 2
    SASL_SSL = 3


# Reserved directory ids (spec 1.4).
MIGRATING_DIR_ID_INT = 0
UNASSIGNED_DIR_ID_INT = 1
LOST_DIR_ID_INT = 2


@dataclass(frozen=True, slots=True)
class RecordSchema:
    type: MetadataRecordType
    versions: Versions
    struct: StructType


def _endpoint(name: str) -> StructType:
    return struct(name, [
        f("Name", STRING, "0+"),
        f("Host", STRING, "0+"),
        f("Port", UINT16, "0+"),
        f("SecurityProtocol", INT16, "0+"),
    ])


def _feature(name: str) -> StructType:
    return struct(name, [
        f("Name", STRING, "0+"),
        f("MinSupportedVersion", INT16, "0+"),
        f("MaxSupportedVersion", INT16, "0+"),
    ])


REGISTER_BROKER_RECORD = struct("RegisterBrokerRecord", [
    f("BrokerId", INT32, "0+"),
    f("IsMigratingZkBroker", BOOL, "2+", default=False),
    f("IncarnationId", UUID, "0+"),
    f("BrokerEpoch", INT64, "0+"),
    f("EndPoints", array(_endpoint("BrokerEndpoint")), "0+"),
    f("Features", array(_feature("BrokerFeature")), "0+"),
    f("Rack", STRING, "0+", nullable="0+"),
    f("Fenced", BOOL, "0+", default=True),
    f("InControlledShutdown", BOOL, "1+", default=False),
    f("LogDirs", array(UUID), "3+", tag=0, tagged="3+"),
])

UNREGISTER_BROKER_RECORD = struct("UnregisterBrokerRecord", [
    f("BrokerId", INT32, "0+"),
    f("BrokerEpoch", INT64, "0+"),
])

TOPIC_RECORD = struct("TopicRecord", [
    f("Name", STRING, "0+"),
    f("TopicId", UUID, "0+"),
])

PARTITION_RECORD = struct("PartitionRecord", [
    f("PartitionId", INT32, "0+", default=-1),
    f("TopicId", UUID, "0+"),
    f("Replicas", array(INT32), "0+"),
    f("Isr", array(INT32), "0+"),
    f("RemovingReplicas", array(INT32), "0+"),
    f("AddingReplicas", array(INT32), "0+"),
    f("Leader", INT32, "0+", default=-1),
    f("LeaderRecoveryState", INT8, "0+", tag=0, tagged="0+", default=0),
    f("LeaderEpoch", INT32, "0+", default=-1),
    f("PartitionEpoch", INT32, "0+", default=-1),
    f("Directories", array(UUID), "1+"),
    f("EligibleLeaderReplicas", array(INT32), "2+", nullable="2+", tag=1, tagged="2+", default=None),
    f("LastKnownElr", array(INT32), "2+", nullable="2+", tag=2, tagged="2+", default=None),
])

CONFIG_RECORD = struct("ConfigRecord", [
    f("ResourceType", INT8, "0+"),
    f("ResourceName", STRING, "0+"),
    f("Name", STRING, "0+"),
    f("Value", STRING, "0+", nullable="0+"),
])

PARTITION_CHANGE_RECORD = struct("PartitionChangeRecord", [
    f("PartitionId", INT32, "0+", default=-1),
    f("TopicId", UUID, "0+"),
    f("Isr", array(INT32), "0+", nullable="0+", tag=0, tagged="0+", default=None),
    f("Leader", INT32, "0+", tag=1, tagged="0+", default=-2),
    f("Replicas", array(INT32), "0+", nullable="0+", tag=2, tagged="0+", default=None),
    f("RemovingReplicas", array(INT32), "0+", nullable="0+", tag=3, tagged="0+", default=None),
    f("AddingReplicas", array(INT32), "0+", nullable="0+", tag=4, tagged="0+", default=None),
    f("LeaderRecoveryState", INT8, "0+", tag=5, tagged="0+", default=-1),
    f("Directories", array(UUID), "1+", nullable="1+", tag=8, tagged="1+", default=None),
    f("EligibleLeaderReplicas", array(INT32), "2+", nullable="2+", tag=6, tagged="2+", default=None),
    f("LastKnownElr", array(INT32), "2+", nullable="2+", tag=7, tagged="2+", default=None),
])

FENCE_BROKER_RECORD = struct("FenceBrokerRecord", [
    f("Id", INT32, "0+"),
    f("Epoch", INT64, "0+"),
])

UNFENCE_BROKER_RECORD = struct("UnfenceBrokerRecord", [
    f("Id", INT32, "0+"),
    f("Epoch", INT64, "0+"),
])

REMOVE_TOPIC_RECORD = struct("RemoveTopicRecord", [
    f("TopicId", UUID, "0+"),
])

FEATURE_LEVEL_RECORD = struct("FeatureLevelRecord", [
    f("Name", STRING, "0+"),
    f("FeatureLevel", INT16, "0+"),
])

PRODUCER_IDS_RECORD = struct("ProducerIdsRecord", [
    f("BrokerId", INT32, "0+"),
    f("BrokerEpoch", INT64, "0+", default=-1),
    f("NextProducerId", INT64, "0+"),
])

BROKER_REGISTRATION_CHANGE_RECORD = struct("BrokerRegistrationChangeRecord", [
    f("BrokerId", INT32, "0+"),
    f("BrokerEpoch", INT64, "0+"),
    f("Fenced", INT8, "0+", tag=0, tagged="0+", default=0),
    f("InControlledShutdown", INT8, "1+", tag=1, tagged="1+", default=0),
    f("LogDirs", array(UUID), "2+", tag=2, tagged="2+"),
])

NO_OP_RECORD = struct("NoOpRecord", [])

ZK_MIGRATION_STATE_RECORD = struct("ZkMigrationStateRecord", [
    f("ZkMigrationState", INT8, "0+"),
])

BEGIN_TRANSACTION_RECORD = struct("BeginTransactionRecord", [
    f("Name", STRING, "0+", nullable="0+", tag=0, tagged="0+", default=None),
])

END_TRANSACTION_RECORD = struct("EndTransactionRecord", [])

ABORT_TRANSACTION_RECORD = struct("AbortTransactionRecord", [
    f("Reason", STRING, "0+", nullable="0+", tag=0, tagged="0+", default=None),
])

REGISTER_CONTROLLER_RECORD = struct("RegisterControllerRecord", [
    f("ControllerId", INT32, "0+"),
    f("IncarnationId", UUID, "0+"),
    f("ZkMigrationReady", BOOL, "0+"),
    f("EndPoints", array(_endpoint("ControllerEndpoint")), "0+"),
    f("Features", array(_feature("ControllerFeature")), "0+"),
])

# ACLs (Kafka's AccessControlEntryRecord / RemoveAccessControlEntryRecord): the enum codes are
# kraft.security.acls's; the id is the controller's, from its injected random generator.
ACCESS_CONTROL_ENTRY_RECORD = struct("AccessControlEntryRecord", [
    f("Id", UUID, "0+"),
    f("ResourceType", INT8, "0+"),
    f("ResourceName", STRING, "0+"),
    f("PatternType", INT8, "0+"),
    f("Principal", STRING, "0+"),
    f("Host", STRING, "0+"),
    f("Operation", INT8, "0+"),
    f("PermissionType", INT8, "0+"),
])

REMOVE_ACCESS_CONTROL_ENTRY_RECORD = struct("RemoveAccessControlEntryRecord", [
    f("Id", UUID, "0+"),
])

CLEAR_ELR_RECORD = struct("ClearElrRecord", [
    f("TopicName", STRING, "0+"),
])

# Kafka's UserScramCredentialRecord (key 11): what the server stores, never the password.
USER_SCRAM_CREDENTIAL_RECORD = struct("UserScramCredentialRecord", [
    f("Name", STRING, "0+"),
    f("Mechanism", INT8, "0+"),
    f("Salt", BYTES, "0+"),
    f("StoredKey", BYTES, "0+"),
    f("ServerKey", BYTES, "0+"),
    f("Iterations", INT32, "0+"),
])

REMOVE_USER_SCRAM_CREDENTIAL_RECORD = struct("RemoveUserScramCredentialRecord", [
    f("Name", STRING, "0+"),
    f("Mechanism", INT8, "0+"),
])

_T = MetadataRecordType
SCHEMAS: dict[MetadataRecordType, RecordSchema] = {
    s.type: s
    for s in (
        RecordSchema(_T.REGISTER_BROKER, Versions(0, 3), REGISTER_BROKER_RECORD),
        RecordSchema(_T.UNREGISTER_BROKER, Versions(0, 0), UNREGISTER_BROKER_RECORD),
        RecordSchema(_T.TOPIC, Versions(0, 0), TOPIC_RECORD),
        RecordSchema(_T.PARTITION, Versions(0, 2), PARTITION_RECORD),
        RecordSchema(_T.CONFIG, Versions(0, 0), CONFIG_RECORD),
        RecordSchema(_T.PARTITION_CHANGE, Versions(0, 2), PARTITION_CHANGE_RECORD),
        RecordSchema(_T.FENCE_BROKER, Versions(0, 0), FENCE_BROKER_RECORD),
        RecordSchema(_T.UNFENCE_BROKER, Versions(0, 0), UNFENCE_BROKER_RECORD),
        RecordSchema(_T.REMOVE_TOPIC, Versions(0, 0), REMOVE_TOPIC_RECORD),
        RecordSchema(_T.USER_SCRAM_CREDENTIAL, Versions(0, 0), USER_SCRAM_CREDENTIAL_RECORD),
        RecordSchema(_T.FEATURE_LEVEL, Versions(0, 0), FEATURE_LEVEL_RECORD),
        RecordSchema(_T.PRODUCER_IDS, Versions(0, 0), PRODUCER_IDS_RECORD),
        RecordSchema(_T.BROKER_REGISTRATION_CHANGE, Versions(0, 2), BROKER_REGISTRATION_CHANGE_RECORD),
        RecordSchema(_T.ACCESS_CONTROL_ENTRY, Versions(0, 0), ACCESS_CONTROL_ENTRY_RECORD),
        RecordSchema(_T.REMOVE_ACCESS_CONTROL_ENTRY, Versions(0, 0), REMOVE_ACCESS_CONTROL_ENTRY_RECORD),
        RecordSchema(_T.NO_OP, Versions(0, 0), NO_OP_RECORD),
        RecordSchema(_T.ZK_MIGRATION_STATE, Versions(0, 0), ZK_MIGRATION_STATE_RECORD),
        RecordSchema(
            _T.REMOVE_USER_SCRAM_CREDENTIAL, Versions(0, 0), REMOVE_USER_SCRAM_CREDENTIAL_RECORD
        ),
        RecordSchema(_T.BEGIN_TRANSACTION, Versions(0, 0), BEGIN_TRANSACTION_RECORD),
        RecordSchema(_T.END_TRANSACTION, Versions(0, 0), END_TRANSACTION_RECORD),
        RecordSchema(_T.ABORT_TRANSACTION, Versions(0, 0), ABORT_TRANSACTION_RECORD),
        RecordSchema(_T.REGISTER_CONTROLLER, Versions(0, 0), REGISTER_CONTROLLER_RECORD),
        RecordSchema(_T.CLEAR_ELR, Versions(0, 0), CLEAR_ELR_RECORD),
    )
}


# ---------------------------------------------------------------------------------------------------
# metadata.version (spec 1.5)

class MetadataVersion(enum.IntEnum):
    """The metadata.version feature levels that change what the controller writes."""

    IBP_3_0_IV1 = 1  # the minimum KRaft level
    IBP_3_1_IV0 = 2
    IBP_3_2_IV0 = 3  # leader recovery state honoured
    IBP_3_3_IV0 = 4  # the minimum level a cluster can be bootstrapped at (Kafka's BootstrapMetadata)
    IBP_3_3_IV1 = 5  # NoOpRecord
    IBP_3_3_IV2 = 6  # BrokerRegistrationChangeRecord replaces Fence/Unfence
    IBP_3_3_IV3 = 7  # InControlledShutdown, RegisterBrokerRecord v1
    IBP_3_4_IV0 = 8  # RegisterBrokerRecord v2
    IBP_3_5_IV0 = 9
    IBP_3_5_IV1 = 10
    IBP_3_5_IV2 = 11  # SCRAM credentials in the metadata log (Kafka's isScramSupported)
    IBP_3_6_IV0 = 12  # ISR shrink stops bumping the leader epoch
    IBP_3_6_IV1 = 13  # metadata transactions
    IBP_3_6_IV2 = 14
    IBP_3_7_IV0 = 15  # controller registration
    IBP_3_7_IV1 = 16
    IBP_3_7_IV2 = 17  # directories: RegisterBrokerRecord v3, Partition(Change)Record v1
    IBP_3_7_IV3 = 18
    IBP_3_7_IV4 = 19
    IBP_3_8_IV0 = 20
    IBP_3_9_IV0 = 21
    IBP_4_0_IV0 = 22
    IBP_4_0_IV1 = 23  # ELR: Partition(Change)Record v2
    IBP_4_0_IV2 = 24  # needed by eligible.leader.replicas.version=1
    IBP_4_0_IV3 = 25  # the last 4.0 level

    @property
    def release(self) -> str:
        """``3.7-IV2`` for IBP_3_7_IV2."""
        _, major, minor, iv = self.name.split("_")
        return f"{major}.{minor}-{iv}"


MINIMUM_KRAFT_METADATA_VERSION = MetadataVersion.IBP_3_0_IV1
LATEST_METADATA_VERSION = MetadataVersion.IBP_4_0_IV3

# Releases the storage tool accepts for --release-version (the last level of each release line).
RELEASE_VERSIONS: dict[str, MetadataVersion] = {
    "3.0": MetadataVersion.IBP_3_0_IV1,
    "3.1": MetadataVersion.IBP_3_1_IV0,
    "3.2": MetadataVersion.IBP_3_2_IV0,
    "3.3": MetadataVersion.IBP_3_3_IV3,
    "3.4": MetadataVersion.IBP_3_4_IV0,
    "3.5": MetadataVersion.IBP_3_5_IV2,
    "3.6": MetadataVersion.IBP_3_6_IV2,
    "3.7": MetadataVersion.IBP_3_7_IV4,
    "3.8": MetadataVersion.IBP_3_8_IV0,
    "3.9": MetadataVersion.IBP_3_9_IV0,
    "4.0": MetadataVersion.IBP_4_0_IV3,
}


def parse_release_version(text: str) -> MetadataVersion:
    """``4.0``, ``3.7-IV2`` or a bare level number.

    Raises:
        ValueError: with a message that lists what is accepted.
    """
    text = text.strip()
    if text in RELEASE_VERSIONS:
        return RELEASE_VERSIONS[text]
    for mv in MetadataVersion:
        if mv.release == text:
            return mv
    if text.isdigit() and int(text) in {m.value for m in MetadataVersion}:
        return MetadataVersion(int(text))
    known = ", ".join(list(RELEASE_VERSIONS) + [m.release for m in MetadataVersion])
    raise ValueError(f"unknown metadata.version {text!r}; known: {known}")


def record_version(record_type: MetadataRecordType, metadata_version: int) -> int:
    """The version a controller at ``metadata_version`` writes ``record_type`` in (spec 1.5)."""
    if record_type is MetadataRecordType.REGISTER_BROKER:
        if metadata_version >= MetadataVersion.IBP_3_7_IV2:
            return 3
        if metadata_version >= MetadataVersion.IBP_3_4_IV0:
            return 2
        if metadata_version >= MetadataVersion.IBP_3_3_IV3:
            return 1
        return 0
    if record_type in (MetadataRecordType.PARTITION, MetadataRecordType.PARTITION_CHANGE):
        if metadata_version >= MetadataVersion.IBP_4_0_IV1:
            return 2
        if metadata_version >= MetadataVersion.IBP_3_7_IV2:
            return 1
        return 0
    if record_type is MetadataRecordType.BROKER_REGISTRATION_CHANGE:
        if metadata_version >= MetadataVersion.IBP_3_7_IV2:
            return 2
        if metadata_version >= MetadataVersion.IBP_3_3_IV3:
            return 1
        return 0
    return 0


# ---------------------------------------------------------------------------------------------------
# ApiMessageAndVersion


@dataclass(frozen=True, slots=True)
class ApiMessageAndVersion:
    """One metadata record: its type, the schema version it is (to be) written in, and its data.

    ``data`` is the generated struct value of ``SCHEMAS[type].struct`` (snake_case fields). Treat
    it as immutable once built: images and the controller share it.
    """

    type: MetadataRecordType
    version: int
    data: Any

    def __repr__(self) -> str:
        if self.type in SENSITIVE_FIELDS:  # a SCRAM salt and keys never reach a log line
            return f"{self.type.record_name}(v{self.version}, {record_to_json(self)['data']})"
        return f"{self.type.record_name}(v{self.version}, {self.data!r})"


@dataclass(frozen=True, slots=True)
class UnmodelledRecord:
    """A record of a known Kafka type this project does not model (SCRAM, quotas, tokens)."""

    type: int
    version: int
    body: bytes


def make_record(
    record_type: MetadataRecordType, version: int | None = None, **fields: Any
) -> ApiMessageAndVersion:
    """Build a record of ``record_type`` (newest version unless given) from snake_case fields.

    Raises:
        ValueError: the version is not valid for the type.
    """
    schema = SCHEMAS[record_type]
    v = schema.versions.high if version is None else version
    if v not in schema.versions:
        raise ValueError(f"{record_type.record_name} has no version {v} (valid: {schema.versions})")
    return ApiMessageAndVersion(record_type, v, schema.struct(**fields))


def encode_record(record: ApiMessageAndVersion) -> bytes:
    """The ApiMessageAndVersion frame of ``record`` (the value of one record in a batch).

    Raises:
        ValueError: a field set that its version cannot carry (as Kafka's serializer refuses).
    """
    schema = SCHEMAS[record.type]
    if record.version not in schema.versions:
        raise ValueError(f"{record.type.record_name} has no version {record.version}")
    if record.type is MetadataRecordType.PARTITION:
        fast = _encode_partition_record_fast(record)
        if fast is not None:
            return fast
    w = Writer()
    w.unsigned_varint(FRAME_VERSION)
    w.unsigned_varint(int(record.type))
    w.unsigned_varint(record.version)
    schema.struct.encode(record.data, record.version, True, w)
    return w.getvalue()


def decode_record(value: bytes | bytearray | memoryview) -> ApiMessageAndVersion:
    """Decode one ApiMessageAndVersion frame; the body must consume ``value`` exactly.

    Raises:
        CorruptRecordError: anything but a whole, known record of a listed version. Records of
            the ignored types (``IGNORED_RECORD_TYPES``) raise ``UnmodelledRecordError``.
    """
    r = Reader(value)
    try:
        frame = r.unsigned_varint("frame version")
        if frame != FRAME_VERSION:
            raise CorruptRecordError(f"metadata record frame version {frame}; only {FRAME_VERSION} is valid")
        type_id = r.unsigned_varint("record type")
        version = r.unsigned_varint("record version")
        if type_id > 0x7FFF or version > 0x7FFF:
            raise CorruptRecordError(f"metadata record type {type_id} version {version} do not fit int16")
        try:
            record_type = MetadataRecordType(type_id)
        except ValueError:
            if type_id in IGNORED_RECORD_TYPES:
                skipped = UnmodelledRecord(type_id, version, bytes(r.raw(r.remaining)))
                raise UnmodelledRecordError(skipped) from None
            raise CorruptRecordError(f"unknown metadata record type {type_id}") from None
        schema = SCHEMAS[record_type]
        if version not in schema.versions:
            raise CorruptRecordError(
                f"{record_type.record_name} version {version} is not supported (valid: {schema.versions})"
            )
        if record_type is MetadataRecordType.PARTITION and version >= 1:
            fast = _decode_partition_record_fast(value, r.pos, version)
            if fast is not None:
                return ApiMessageAndVersion(record_type, version, fast)
        elif record_type is MetadataRecordType.PARTITION_CHANGE:
            fast = _decode_partition_change_fast(value, r.pos, version)
            if fast is not None:
                return ApiMessageAndVersion(record_type, version, fast)
        data = schema.struct.decode(r, version, True)
    except MalformedMessageError as e:
        raise CorruptRecordError(f"malformed metadata record: {e}") from None
    if r.remaining:
        raise CorruptRecordError(
            f"{record_type.record_name} v{version}: {r.remaining} trailing byte(s) after the record"
        )
    return ApiMessageAndVersion(record_type, version, data)


class UnmodelledRecordError(CorruptRecordError):
    """A record of a type this project reads past (``IGNORED_RECORD_TYPES``); not corruption."""

    def __init__(self, record: UnmodelledRecord) -> None:
        super().__init__(f"metadata record type {record.type} is not modelled by kraft")
        self.record = record


# Fields no tool prints: a SCRAM salt and keys are enough to attack the credential offline.
SENSITIVE_FIELDS: dict[MetadataRecordType, frozenset[str]] = {
    MetadataRecordType.USER_SCRAM_CREDENTIAL: frozenset({"salt", "stored_key", "server_key"}),
}
HIDDEN = "[hidden]"


def record_to_json(record: ApiMessageAndVersion) -> dict[str, Any]:
    """``{"type": "TOPIC_RECORD", "version": 0, "data": {...}}`` as ``kafka-dump-log`` prints it:
    camelCase field names, tagged fields at their default omitted, uuids in Kafka's base64 form.

    The fields of ``SENSITIVE_FIELDS`` print as ``"[hidden]"`` (Kafka prints SCRAM salts and keys
    in base64; kraft never shows them)."""
    schema = SCHEMAS[record.type]
    data = _struct_json(schema.struct, record.data, record.version)
    hidden = SENSITIVE_FIELDS.get(record.type)
    if hidden:
        for name in hidden:
            if _camel(name) in data:
                data[_camel(name)] = HIDDEN
    return {
        "type": record.type.upper_name,
        "version": record.version,
        "data": data,
    }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


# (attribute, JSON name, type, tagged default or _NOT_TAGGED) per present field, by (struct, version):
# computed once, since tools and the Spark source turn millions of records into JSON.
_NOT_TAGGED: Any = object()
_JSON_PLANS: dict[tuple[int, int], tuple[StructType, tuple[tuple[str, str, Any, Any], ...]]] = {}


def _json_plan(schema: StructType, version: int) -> tuple[tuple[str, str, Any, Any], ...]:
    cached = _JSON_PLANS.get((id(schema), version))
    if cached is not None and cached[0] is schema:
        return cached[1]
    plan = tuple(
        (
            field.name,
            _camel(field.name),
            field.type,
            field.default_value() if version in field.tagged else _NOT_TAGGED,
        )
        for field in schema.fields
        if version in field.versions
    )
    _JSON_PLANS[(id(schema), version)] = (schema, plan)
    return plan


def _struct_json(schema: StructType, value: Any, version: int) -> dict[str, Any]:
    from kraft.common.uuids import uuid_to_base64

    out: dict[str, Any] = {}
    for name, json_name, ftype, tagged_default in _json_plan(schema, version):
        v = getattr(value, name)
        if tagged_default is not _NOT_TAGGED and v == tagged_default:
            continue
        out[json_name] = _json_value(ftype, v, version, uuid_to_base64)
    return out


def _json_value(ftype: Any, v: Any, version: int, uuid_text: Any) -> Any:
    if v is None:
        return None
    if isinstance(ftype, StructType):
        return _struct_json(ftype, v, version)
    element = getattr(ftype, "element", None)
    if element is not None:
        return [_json_value(element, x, version, uuid_text) for x in v]
    if isinstance(v, _uuid.UUID):
        return uuid_text(v)
    return v


# ---------------------------------------------------------------------------------------------------
# Fast paths for the records written by the thousand: PartitionRecord v1-v2 with no tagged field
# set and short lists (a topic creation), and the decoding of PartitionChangeRecord (a controlled
# shutdown, a broker's fencing, elections: one per partition, replayed by every node; the generic
# decoder spends 16 us on a typical one, this path 5). Anything else returns None and takes the
# generic codec above; tests/unit/metadata/test_records_fast_path.py checks both give the same
# bytes and values.

_I32 = _struct.Struct(">i")
_HEAD = _struct.Struct(">i16s")
_TAIL = _struct.Struct(">iii")
_MAX_FAST_LIST = 126  # a list whose length + 1 fits one varint byte


def _encode_partition_record_fast(record: ApiMessageAndVersion) -> bytes | None:
    d = record.data
    version = record.version
    if (
        version < 1
        or d.leader_recovery_state != 0
        or d.eligible_leader_replicas is not None
        or d.last_known_elr is not None
        or d._unknown_tags
    ):
        return None
    lists = (d.replicas, d.isr, d.removing_replicas, d.adding_replicas)
    if any(v is None or len(v) > _MAX_FAST_LIST for v in lists) or d.directories is None:
        return None
    if len(d.directories) > _MAX_FAST_LIST:
        return None
    try:
        out = [bytes((FRAME_VERSION, int(MetadataRecordType.PARTITION), version)),
               _HEAD.pack(d.partition_id, d.topic_id.bytes)]
        for v in lists:
            out.append(bytes((len(v) + 1,)))
            out.append(_struct.pack(f">{len(v)}i", *v))
        out.append(_TAIL.pack(d.leader, d.leader_epoch, d.partition_epoch))
        out.append(bytes((len(d.directories) + 1,)))
        out.append(b"".join(u.bytes for u in d.directories))
        out.append(b"\x00")  # no tagged fields
    except (_struct.error, AttributeError, TypeError):
        return None  # let the generic codec report what is wrong
    return b"".join(out)


def _decode_partition_record_fast(
    value: bytes | bytearray | memoryview, pos: int, version: int
) -> Any | None:
    data = bytes(value) if not isinstance(value, bytes) else value
    end = len(data)
    try:
        partition_id, topic_raw = _HEAD.unpack_from(data, pos)
        pos += 20
        lists: list[list[int]] = []
        for _ in range(4):
            n = data[pos] - 1
            if n < 0 or n > _MAX_FAST_LIST:
                return None
            pos += 1
            lists.append(list(_struct.unpack_from(f">{n}i", data, pos)))
            pos += 4 * n
        leader, leader_epoch, partition_epoch = _TAIL.unpack_from(data, pos)
        pos += 12
        n = data[pos] - 1
        if n < 0 or n > _MAX_FAST_LIST:
            return None
        pos += 1
        if pos + 16 * n + 1 != end or data[pos + 16 * n] != 0:
            return None  # tagged fields present (or trailing bytes): the generic path decides
        directories = [shared_uuid(data[pos + 16 * i : pos + 16 * i + 16]) for i in range(n)]
    except (IndexError, _struct.error):
        return None
    obj = _new_partition_struct(PARTITION_RECORD, partition_id, topic_raw)
    put = object.__setattr__
    put(obj, "replicas", lists[0])
    put(obj, "isr", lists[1])
    put(obj, "removing_replicas", lists[2])
    put(obj, "adding_replicas", lists[3])
    put(obj, "leader", leader)
    put(obj, "leader_recovery_state", 0)
    put(obj, "leader_epoch", leader_epoch)
    put(obj, "partition_epoch", partition_epoch)
    put(obj, "directories", directories)
    put(obj, "eligible_leader_replicas", None)
    put(obj, "last_known_elr", None)
    return obj


def _new_partition_struct(schema: StructType, partition_id: int, topic_raw: bytes) -> Any:
    """A value of ``schema`` (PartitionRecord or PartitionChangeRecord) without running its init,
    with its partition id, topic id and no unknown tags; the caller sets every other field."""
    cls = schema.cls
    obj = cls.__new__(cls)
    object.__setattr__(obj, "partition_id", partition_id)
    object.__setattr__(obj, "topic_id", shared_uuid(topic_raw))
    object.__setattr__(obj, "_unknown_tags", [])
    return obj


# PartitionChangeRecord's tagged fields, read from its schema: tag -> (attribute, kind, first
# version), and each attribute's default. Kinds: "ints" a compact nullable INT32 array, "uuids" one
# of UUIDs, "i32" an INT32, "i8" an INT8 (a tagged field of another type would fail here, at import).
_FAST_KINDS = {"[]int32": "ints", "[]uuid": "uuids", "int32": "i32", "int8": "i8"}
_CHANGE_TAGS: dict[int, tuple[str, str, int]] = {
    fl.tag: (name, _FAST_KINDS[fl.type.name], fl.tagged.low)
    for name, _, fl in PARTITION_CHANGE_RECORD.init_plan
    if fl.tag is not None
}
_CHANGE_DEFAULTS: tuple[tuple[str, Any], ...] = tuple(
    (name, fl.default) for name, _, fl in PARTITION_CHANGE_RECORD.init_plan if fl.tag is not None
)


def _decode_partition_change_fast(
    value: bytes | bytearray | memoryview, pos: int, version: int
) -> Any | None:
    """PartitionChangeRecord v0-v2 whose tag count, tags, sizes and list lengths each fit one
    varint byte (all that kraft and Kafka write for fewer than 127 replicas); None otherwise."""
    data = bytes(value) if not isinstance(value, bytes) else value
    end = len(data)
    try:
        partition_id, topic_raw = _HEAD.unpack_from(data, pos)
        pos += 20
        count = data[pos]
        pos += 1
        if count > 0x7F:
            return None
        fields: dict[str, Any] = {}
        last_tag = -1
        for _ in range(count):
            tag, size = data[pos], data[pos + 1]
            pos += 2
            known = _CHANGE_TAGS.get(tag)
            if tag <= last_tag or size > 0x7F or known is None or version < known[2]:
                return None  # out of order, a long field or an unknown tag: the generic path says
            last_tag = tag
            name, kind, _ = known
            payload_end = pos + size
            if payload_end > end:
                return None
            if kind == "ints" or kind == "uuids":
                width = 4 if kind == "ints" else 16
                n = data[pos] - 1
                if n > _MAX_FAST_LIST or size != 1 + width * max(n, 0):
                    return None
                if n < 0:
                    fields[name] = None
                elif kind == "ints":
                    fields[name] = list(_struct.unpack_from(f">{n}i", data, pos + 1))
                else:
                    fields[name] = [
                        shared_uuid(data[pos + 1 + 16 * i : pos + 17 + 16 * i]) for i in range(n)
                    ]
            elif kind == "i32":
                if size != 4:
                    return None
                fields[name] = _I32.unpack_from(data, pos)[0]
            else:
                if size != 1:
                    return None
                b = data[pos]
                fields[name] = b - 256 if b > 0x7F else b
            pos = payload_end
        if pos != end:
            return None
    except (IndexError, _struct.error):
        return None
    obj = _new_partition_struct(PARTITION_CHANGE_RECORD, partition_id, topic_raw)
    for name, default in _CHANGE_DEFAULTS:
        object.__setattr__(obj, name, fields.get(name, default))
    return obj


# Built for every metadata record decoded or written: see kraft.common.fast_init.
speed_up_inits(ApiMessageAndVersion)
