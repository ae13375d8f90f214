"""Control records: the non-data records of a KRaft log and snapshot (spec §7, §12).

A control batch has attribute bit 5 set, and every record in it is a control record whose key is
``int16 version (0)`` + ``int16 type`` and whose value is the type's message:

======  ===============  ===========================================================
type    name             value (all written at version 0)
======  ===============  ===========================================================
0, 1    ABORT, COMMIT    EndTxnMarker {Version int16, CoordinatorEpoch int32}, classic
2       LEADER_CHANGE    LeaderChangeMessage, versions 0-1, flexible
3       SNAPSHOT_HEADER  SnapshotHeaderRecord {Version, LastContainedLogTimestamp}, flexible
4       SNAPSHOT_FOOTER  SnapshotFooterRecord {Version}, flexible
5       KRAFT_VERSION    KRaftVersionRecord {Version, KRaftVersion}, flexible
6       KRAFT_VOTERS     VotersRecord (KIP-853), flexible
======  ===============  ===========================================================

Every message is described once, as data, with ``kraft.protocol.schema``; values are that module's
generated struct objects (``LEADER_CHANGE_MESSAGE(leader_id=1, ...)``). As in Kafka's
``ControlRecordUtils``, values are read at the version this build writes (0), not at the message's
own ``Version`` field; unlike Kafka, bytes left over after the message are treated as corruption.

Unknown type ids are legal (Kafka's ``UNKNOWN``: a newer writer's record that readers ignore):
``control_type_of`` returns ``None`` for them. Malformed keys or values raise
``CorruptRecordError``; misuse by our own caller (a message of the wrong type) raises ``ValueError``.
"""

from __future__ import annotations

import base64
import enum
import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from kraft.common.errors import CorruptRecordError, MalformedMessageError
from kraft.common.uuids import ZERO_UUID, uuid_to_base64
from kraft.protocol.primitives import Reader
from kraft.protocol.schema import INT16, INT32, INT64, STRING, UINT16, UUID, StructType, StructValue, array, f
from kraft.protocol.schema import struct as msg
from kraft.records.batch import Record, RecordBatch, SimpleRecord, build_batch

CONTROL_KEY_VERSION = 0
CONTROL_KEY_SIZE = 4
_KEY = struct.Struct(">hh")


class ControlType(enum.IntEnum):
    """Kafka's ``ControlRecordType`` ids (its UNKNOWN is ``None`` here)."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


# ---------------------------------------------------------------------------------------------------
# Message schemas (clients/src/main/resources/common/message/*.json; EndTxnMarker is a classic,
# non-flexible struct from EndTransactionMarker.java)

END_TXN_MARKER = msg("EndTxnMarker", [
    f("Version", INT16, "0+"),
    f("CoordinatorEpoch", INT32, "0+"),
])

_VOTER = msg("Voter", [
    f("VoterId", INT32, "0+"),
    f("VoterDirectoryId", UUID, "1+"),  # KIP-853
])

LEADER_CHANGE_MESSAGE = msg("LeaderChangeMessage", [
    f("Version", INT16, "0+"),
    f("LeaderId", INT32, "0+"),
    f("Voters", array(_VOTER), "0+"),
    f("GrantingVoters", array(_VOTER), "0+"),
])

SNAPSHOT_HEADER_RECORD = msg("SnapshotHeaderRecord", [
    f("Version", INT16, "0+"),
    f("LastContainedLogTimestamp", INT64, "0+"),
])

SNAPSHOT_FOOTER_RECORD = msg("SnapshotFooterRecord", [
    f("Version", INT16, "0+"),
])

KRAFT_VERSION_RECORD = msg("KRaftVersionRecord", [
    f("Version", INT16, "0+"),
    f("KRaftVersion", INT16, "0+"),
])

VOTERS_RECORD = msg("VotersRecord", [
    f("Version", INT16, "0+"),
    f("Voters", array(msg("Voter", [
        f("VoterId", INT32, "0+"),
        f("VoterDirectoryId", UUID, "0+"),
        f("Endpoints", array(msg("Endpoint", [
            f("Name", STRING, "0+"),
            f("Host", STRING, "0+"),
            f("Port", UINT16, "0+"),
        ])), "0+"),
        f("KRaftVersionFeature", msg("KRaftVersionFeature", [
            f("MinSupportedVersion", INT16, "0+"),
            f("MaxSupportedVersion", INT16, "0+"),
        ]), "0+"),
    ])), "0+"),
])


@dataclass(frozen=True, slots=True)
class ControlMessageSpec:
    """How one control type's value is written: schema, version written, flexible or classic."""

    schema: StructType
    version: int
    max_version: int
    flexible: bool
    display_name: str  # the word kafka-dump-log prints before the value


CONTROL_MESSAGES: Mapping[ControlType, ControlMessageSpec] = {
    ControlType.ABORT: ControlMessageSpec(END_TXN_MARKER, 0, 0, False, "endTxnMarker"),
    ControlType.COMMIT: ControlMessageSpec(END_TXN_MARKER, 0, 0, False, "endTxnMarker"),
    ControlType.LEADER_CHANGE: ControlMessageSpec(LEADER_CHANGE_MESSAGE, 0, 1, True, "LeaderChange"),
    ControlType.SNAPSHOT_HEADER: ControlMessageSpec(SNAPSHOT_HEADER_RECORD, 0, 0, True, "SnapshotHeader"),
    ControlType.SNAPSHOT_FOOTER: ControlMessageSpec(SNAPSHOT_FOOTER_RECORD, 0, 0, True, "SnapshotFooter"),
    ControlType.KRAFT_VERSION: ControlMessageSpec(KRAFT_VERSION_RECORD, 0, 0, True, "KRaftVersion"),
    ControlType.KRAFT_VOTERS: ControlMessageSpec(VOTERS_RECORD, 0, 0, True, "KRaftVoters"),
}


# ---------------------------------------------------------------------------------------------------
# Keys and values


def control_key(kind: ControlType) -> bytes:
    return _KEY.pack(CONTROL_KEY_VERSION, int(kind))


def control_type_id(record: Record) -> int:
    """The raw type id of a control record's key (Kafka's ``ControlRecordType.parseTypeId``).

    Raises:
        CorruptRecordError: the key is null, under 4 bytes, or has a negative key version.
    """
    key = record.key
    if key is None or len(key) < CONTROL_KEY_SIZE:
        size = "null" if key is None else f"{len(key)} bytes"
        raise CorruptRecordError(
            f"control record at offset {record.offset} has a {size} key; "
            f"at least {CONTROL_KEY_SIZE} bytes needed"
        )
    version, type_id = _KEY.unpack_from(key)
    if version < 0:
        raise CorruptRecordError(
            f"control record at offset {record.offset} has negative key version {version}"
        )
    # A newer key version must stay compatible with version 0 (ControlRecordType's contract), so
    # its first four bytes are still read as version + type.
    return int(type_id)


def control_type_of(record: Record) -> ControlType | None:
    """The control type of a record from a control batch; ``None`` for type ids this build does not
    know (a newer writer's record, to be ignored).

    Raises:
        CorruptRecordError: the key is malformed (see ``control_type_id``).
    """
    type_id = control_type_id(record)
    try:
        return ControlType(type_id)
    except ValueError:
        return None


def encode_control_value(kind: ControlType, message: StructValue) -> bytes:
    """Serialize ``message`` as the value of a ``kind`` control record.

    Raises:
        ValueError: ``message`` is not the schema ``kind`` uses, or does not fit its version.
    """
    spec = CONTROL_MESSAGES[kind]
    if getattr(message, "_schema", None) is not spec.schema:
        raise ValueError(
            f"a {kind.name} control record needs a {spec.schema.name}, got {type(message).__name__}"
        )
    encoded: bytes = spec.schema.encode(message, spec.version, spec.flexible)
    return encoded


def decode_control_value(
    kind: ControlType, value: bytes | memoryview, *, version: int | None = None
) -> StructValue:
    """Parse a control record value of type ``kind`` at ``version`` (default: the version we write).

    Raises:
        CorruptRecordError: the value is truncated, malformed or followed by extra bytes.
    """
    spec = CONTROL_MESSAGES[kind]
    read_version = spec.version if version is None else version
    if not 0 <= read_version <= spec.max_version:
        raise CorruptRecordError(f"{spec.schema.name} version {read_version} is not supported")
    reader = Reader(value)
    try:
        decoded = spec.schema.decode(reader, read_version, spec.flexible)
    except MalformedMessageError as e:
        raise CorruptRecordError(f"invalid {spec.schema.name}: {e}") from None
    if reader.remaining:
        raise CorruptRecordError(f"{spec.schema.name} is followed by {reader.remaining} unexpected bytes")
    return cast(StructValue, decoded)


def decode_control_record(record: Record) -> tuple[ControlType, StructValue]:
    """The type and parsed value of a control record.

    Call ``control_type_of`` first to skip unknown types, which Kafka readers ignore.

    Raises:
        CorruptRecordError: malformed key, unknown type id, or null or malformed value.
    """
    kind = control_type_of(record)
    if kind is None:
        raise CorruptRecordError(
            f"control record at offset {record.offset} has unknown type {control_type_id(record)}"
        )
    if record.value is None:
        raise CorruptRecordError(f"{kind.name} control record at offset {record.offset} has a null value")
    try:
        return kind, decode_control_value(kind, record.value)
    except CorruptRecordError as e:
        raise CorruptRecordError(f"{kind.name} control record at offset {record.offset}: {e}") from None


def control_records(batch: RecordBatch) -> list[tuple[ControlType, StructValue]]:
    """Every known control record of a control batch, in order; unknown types are skipped.

    Raises:
        ValueError: ``batch`` is not a control batch (our caller's mistake).
        CorruptRecordError: a record is malformed.
    """
    if not batch.is_control:
        raise ValueError(f"batch at offset {batch.base_offset} is not a control batch")
    return [decode_control_record(r) for r in batch.records if control_type_of(r) is not None]


# ---------------------------------------------------------------------------------------------------
# Batches


def control_record(
    kind: ControlType, message: StructValue, timestamp_ms: int | None = None
) -> SimpleRecord:
    """One control record of type ``kind`` (its key names the type, its value is ``message``).

    Raises:
        ValueError: ``message`` does not match ``kind``.
    """
    value = encode_control_value(kind, message)
    return SimpleRecord(key=control_key(kind), value=value, timestamp=timestamp_ms)


def build_control_batch_of(
    entries: Sequence[tuple[ControlType, StructValue]],
    *,
    base_offset: int,
    partition_leader_epoch: int,
    timestamp_ms: int,
) -> bytes:
    """One control batch holding one record per entry (a snapshot's header batch carries the
    SnapshotHeaderRecord, KRaftVersionRecord and VotersRecord together, as Kafka writes it).

    Raises:
        ValueError: no entries, or a message that does not match its type.
    """
    if not entries:
        raise ValueError("a control batch needs at least one record")
    records = [control_record(kind, message, timestamp_ms) for kind, message in entries]
    return build_batch(
        records,
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        timestamp_ms=timestamp_ms,
        is_control=True,
    )


def build_control_batch(
    kind: ControlType,
    message: StructValue,
    *,
    base_offset: int,
    partition_leader_epoch: int,
    timestamp_ms: int,
) -> bytes:
    """A control batch with a single ``kind`` record (e.g. the LeaderChangeMessage a new leader writes).

    Raises:
        ValueError: ``message`` does not match ``kind``.
    """
    return build_control_batch_of(
        [(kind, message)],
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        timestamp_ms=timestamp_ms,
    )


# ---------------------------------------------------------------------------------------------------
# Constructors


VoterKey = int | tuple[int, uuid.UUID]


def _voter_entries(voters: Iterable[VoterKey]) -> list[Any]:
    keyed = [(v, ZERO_UUID) if isinstance(v, int) else v for v in voters]
    # Sorted so that output never depends on the iteration order of a set (and matches the id
    # order Kafka's hash sets of small integers produce).
    keyed.sort(key=lambda k: (k[0], k[1].int))
    return [_VOTER(voter_id=vid, voter_directory_id=did) for vid, did in keyed]


def leader_change_message(
    leader_id: int, voters: Iterable[VoterKey], granting_voters: Iterable[VoterKey]
) -> StructValue:
    """A LeaderChangeMessage (written at v0, so directory ids must be zero, i.e. plain ids)."""
    return cast(
        StructValue,
        LEADER_CHANGE_MESSAGE(
            version=0,
            leader_id=leader_id,
            voters=_voter_entries(voters),
            granting_voters=_voter_entries(granting_voters),
        ),
    )


def snapshot_header_record(last_contained_log_timestamp_ms: int) -> StructValue:
    message = SNAPSHOT_HEADER_RECORD(version=0, last_contained_log_timestamp=last_contained_log_timestamp_ms)
    return cast(StructValue, message)


def snapshot_footer_record() -> StructValue:
    return cast(StructValue, SNAPSHOT_FOOTER_RECORD(version=0))


def kraft_version_record(kraft_version: int) -> StructValue:
    return cast(StructValue, KRAFT_VERSION_RECORD(version=0, k_raft_version=kraft_version))


def end_txn_marker(coordinator_epoch: int) -> StructValue:
    """Value of an ABORT or COMMIT record (not written by KRaft; here for completeness and tests)."""
    return cast(StructValue, END_TXN_MARKER(version=0, coordinator_epoch=coordinator_epoch))


@dataclass(frozen=True, slots=True, kw_only=True)
class VoterEndpoint:
    name: str  # listener name
    host: str
    port: int


@dataclass(frozen=True, slots=True, kw_only=True)
class VoterInfo:
    """One voter of a VotersRecord: identity, listeners and supported kraft.version range."""

    voter_id: int
    directory_id: uuid.UUID
    endpoints: tuple[VoterEndpoint, ...]
    min_supported_version: int = 0
    max_supported_version: int = 1


def voters_record(voters: Iterable[VoterInfo]) -> StructValue:
    """A VotersRecord (KIP-853); voters in id order, endpoints in the order given."""
    voter_cls = VOTERS_RECORD.cls.Voter  # type: ignore[attr-defined]
    endpoint_cls = voter_cls.Endpoint
    feature_cls = voter_cls.KRaftVersionFeature
    entries = [
        voter_cls(
            voter_id=v.voter_id,
            voter_directory_id=v.directory_id,
            endpoints=[endpoint_cls(name=e.name, host=e.host, port=e.port) for e in v.endpoints],
            k_raft_version_feature=feature_cls(
                min_supported_version=v.min_supported_version, max_supported_version=v.max_supported_version
            ),
        )
        for v in sorted(voters, key=lambda v: (v.voter_id, v.directory_id.int))
    ]
    return cast(StructValue, VOTERS_RECORD(version=0, voters=entries))


def voter_infos(record: StructValue) -> list[VoterInfo]:
    """The voters of a decoded VotersRecord as plain dataclasses."""
    if getattr(record, "_schema", None) is not VOTERS_RECORD:
        raise ValueError(f"expected a VotersRecord, got {type(record).__name__}")
    out: list[VoterInfo] = []
    for v in cast(Any, record).voters:
        out.append(
            VoterInfo(
                voter_id=v.voter_id,
                directory_id=v.voter_directory_id,
                endpoints=tuple(VoterEndpoint(name=e.name, host=e.host, port=e.port) for e in v.endpoints),
                min_supported_version=v.k_raft_version_feature.min_supported_version,
                max_supported_version=v.k_raft_version_feature.max_supported_version,
            )
        )
    return out


# ---------------------------------------------------------------------------------------------------
# Display


def _lower_camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_kafka_json(value: Any) -> Any:
    """A decoded message as Kafka's generated ``*JsonConverter.write`` shapes it: lowerCamelCase
    field names (``kRaftVersion``) and UUIDs in Kafka's base64 form. Nested values are converted too."""
    if isinstance(value, StructValue):
        return {_lower_camel(name): to_kafka_json(getattr(value, name)) for name in value._schema.field_names}
    if isinstance(value, list):
        return [to_kafka_json(v) for v in value]
    if isinstance(value, uuid.UUID):
        return uuid_to_base64(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    return value
