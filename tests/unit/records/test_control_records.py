"""Control records: keys, the golden LeaderChangeMessage, every message type, malformed input."""

from __future__ import annotations

import struct
import uuid

import pytest

from kraft.common.errors import CorruptRecordError
from kraft.common.uuids import uuid_to_base64
from kraft.records.batch import CONTROL_FLAG, Record, SimpleRecord, build_batch, decode_batch
from kraft.records.control import (
    CONTROL_MESSAGES,
    LEADER_CHANGE_MESSAGE,
    ControlType,
    VoterEndpoint,
    VoterInfo,
    build_control_batch,
    build_control_batch_of,
    control_key,
    control_records,
    control_type_id,
    control_type_of,
    decode_control_record,
    decode_control_value,
    encode_control_value,
    end_txn_marker,
    kraft_version_record,
    leader_change_message,
    snapshot_footer_record,
    snapshot_header_record,
    to_kafka_json,
    voter_infos,
    voters_record,
)

# spec §7: leader 1, voters {1,2,3}, granting {1,2}, LeaderChangeMessage v0.
GOLDEN_LEADER_CHANGE = bytes.fromhex("00000000000104000000010000000002000000000300030000000100000000020000")


def record(key: bytes | None, value: bytes | None = b"", offset: int = 0) -> Record:
    return Record(offset=offset, timestamp=0, key=key, value=value)


def test_leader_change_message_matches_the_spec_golden_bytes() -> None:
    message = leader_change_message(1, {3, 1, 2}, {2, 1})
    assert encode_control_value(ControlType.LEADER_CHANGE, message) == GOLDEN_LEADER_CHANGE
    decoded = decode_control_value(ControlType.LEADER_CHANGE, GOLDEN_LEADER_CHANGE)
    assert decoded == message
    assert to_kafka_json(decoded) == {
        "version": 0,
        "leaderId": 1,
        "voters": [{"voterId": i, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA"} for i in (1, 2, 3)],
        "grantingVoters": [{"voterId": i, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA"} for i in (1, 2)],
    }


def test_control_key_is_version_zero_and_type() -> None:
    assert control_key(ControlType.LEADER_CHANGE) == b"\x00\x00\x00\x02"
    assert control_key(ControlType.KRAFT_VOTERS) == b"\x00\x00\x00\x06"
    assert [t.value for t in ControlType] == [0, 1, 2, 3, 4, 5, 6]


def test_leader_change_batch_is_a_control_batch_with_one_record() -> None:
    built = build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(1, [1, 2, 3], [1, 2]),
        base_offset=10,
        partition_leader_epoch=4,
        timestamp_ms=1234,
    )
    batch = decode_batch(built)
    assert batch.header.attributes == CONTROL_FLAG
    assert (batch.base_offset, batch.partition_leader_epoch, batch.header.max_timestamp) == (10, 4, 1234)
    (rec,) = batch.records
    assert rec.key == b"\x00\x00\x00\x02" and rec.value == GOLDEN_LEADER_CHANGE and rec.timestamp == 1234
    kind, value = decode_control_record(rec)
    assert kind is ControlType.LEADER_CHANGE
    assert value.leader_id == 1  # type: ignore[attr-defined]
    assert [v.voter_id for v in value.granting_voters] == [1, 2]  # type: ignore[attr-defined]


def test_snapshot_header_batch_holds_header_kraft_version_and_voters() -> None:
    dir1, dir2 = uuid.UUID(int=1), uuid.UUID(int=2)
    voters = [
        VoterInfo(
            voter_id=2, directory_id=dir2, endpoints=(VoterEndpoint(name="CONTROLLER", host="b", port=9094),)
        ),
        VoterInfo(
            voter_id=1,
            directory_id=dir1,
            endpoints=(VoterEndpoint(name="CONTROLLER", host="a", port=9093),),
            min_supported_version=0,
            max_supported_version=1,
        ),
    ]
    built = build_control_batch_of(
        [
            (ControlType.SNAPSHOT_HEADER, snapshot_header_record(777)),
            (ControlType.KRAFT_VERSION, kraft_version_record(1)),
            (ControlType.KRAFT_VOTERS, voters_record(voters)),
        ],
        base_offset=0,
        partition_leader_epoch=3,
        timestamp_ms=5,
    )
    entries = control_records(decode_batch(built))
    assert [k for k, _ in entries] == [
        ControlType.SNAPSHOT_HEADER,
        ControlType.KRAFT_VERSION,
        ControlType.KRAFT_VOTERS,
    ]
    assert to_kafka_json(entries[0][1]) == {"version": 0, "lastContainedLogTimestamp": 777}
    assert to_kafka_json(entries[1][1]) == {"version": 0, "kRaftVersion": 1}
    assert voter_infos(entries[2][1]) == sorted(voters, key=lambda v: v.voter_id)
    assert to_kafka_json(entries[2][1])["voters"][0] == {
        "voterId": 1,
        "voterDirectoryId": uuid_to_base64(dir1),
        "endpoints": [{"name": "CONTROLLER", "host": "a", "port": 9093}],
        "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
    }


def test_snapshot_footer_and_kraft_version_bytes() -> None:
    # Flexible v0: int16 version, then an empty tagged-field section.
    assert encode_control_value(ControlType.SNAPSHOT_FOOTER, snapshot_footer_record()) == b"\x00\x00\x00"
    assert encode_control_value(ControlType.KRAFT_VERSION, kraft_version_record(1)) == b"\x00\x00\x00\x01\x00"
    assert (
        encode_control_value(ControlType.SNAPSHOT_HEADER, snapshot_header_record(1))
        == b"\x00\x00" + struct.pack(">q", 1) + b"\x00"
    )


def test_voters_record_bytes_are_compact_and_flexible() -> None:
    did = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
    value = encode_control_value(
        ControlType.KRAFT_VOTERS,
        voters_record(
            [VoterInfo(voter_id=1, directory_id=did, endpoints=(VoterEndpoint(name="C", host="h", port=1),))]
        ),
    )
    expected = (
        b"\x00\x00"  # Version
        + b"\x02"  # 1 voter
        + b"\x00\x00\x00\x01"
        + did.bytes
        + b"\x02"  # 1 endpoint
        + b"\x02C"
        + b"\x02h"
        + b"\x00\x01"
        + b"\x00"  # name, host, port, tags
        + b"\x00\x00\x00\x01\x00"  # KRaftVersionFeature 0..1 + tags
        + b"\x00"  # voter tags
        + b"\x00"  # record tags
    )
    assert value == expected


def test_end_txn_markers_are_classic_structs() -> None:
    assert encode_control_value(ControlType.COMMIT, end_txn_marker(7)) == b"\x00\x00\x00\x00\x00\x07"
    kind, value = decode_control_record(record(control_key(ControlType.ABORT), b"\x00\x00\x00\x00\x00\x09"))
    assert kind is ControlType.ABORT and value.coordinator_epoch == 9  # type: ignore[attr-defined]


def test_leader_change_v1_carries_directory_ids_but_v0_cannot() -> None:
    did = uuid.UUID(int=99)
    message = leader_change_message(1, [(1, did)], [(1, did)])
    with pytest.raises(ValueError, match="voter_directory_id"):
        encode_control_value(ControlType.LEADER_CHANGE, message)
    v1 = LEADER_CHANGE_MESSAGE.encode(message, 1, True)
    assert decode_control_value(ControlType.LEADER_CHANGE, v1, version=1) == message


def test_unknown_type_ids_are_none_and_not_decodable() -> None:
    rec = record(b"\x00\x00\x00\x63")
    assert control_type_id(rec) == 99
    assert control_type_of(rec) is None
    with pytest.raises(CorruptRecordError, match="unknown type 99"):
        decode_control_record(rec)


def test_unknown_types_are_skipped_by_control_records() -> None:
    built = build_batch(
        [
            SimpleRecord(key=b"\x00\x00\x00\x63", value=b"future"),
            SimpleRecord(key=control_key(ControlType.SNAPSHOT_FOOTER), value=b"\x00\x00\x00"),
        ],
        is_control=True,
    )
    assert [k for k, _ in control_records(decode_batch(built))] == [ControlType.SNAPSHOT_FOOTER]
    with pytest.raises(ValueError, match="not a control batch"):
        control_records(decode_batch(build_batch([SimpleRecord(value=b"x")])))


@pytest.mark.parametrize(
    ("key", "match"),
    [(None, "null key"), (b"\x00\x00\x02", "3 bytes key"), (b"\xff\xff\x00\x02", "negative key version")],
)
def test_malformed_keys_are_corrupt(key: bytes | None, match: str) -> None:
    with pytest.raises(CorruptRecordError, match=match):
        control_type_of(record(key))


def test_newer_key_versions_are_read_as_version_zero() -> None:
    assert control_type_of(record(b"\x00\x01\x00\x03extra")) is ControlType.SNAPSHOT_HEADER


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, "null value"),
        (GOLDEN_LEADER_CHANGE[:-1], "LeaderChangeMessage"),
        (GOLDEN_LEADER_CHANGE + b"\x00", "1 unexpected bytes"),
        (b"\x00\x00\x00\x00\x00\x01\x7f", "elements claimed"),
    ],
)
def test_malformed_values_are_corrupt(value: bytes | None, match: str) -> None:
    with pytest.raises(CorruptRecordError, match=match):
        decode_control_record(record(control_key(ControlType.LEADER_CHANGE), value, offset=5))


def test_a_message_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a SnapshotHeaderRecord"):
        build_control_batch(
            ControlType.SNAPSHOT_HEADER,
            snapshot_footer_record(),
            base_offset=0,
            partition_leader_epoch=0,
            timestamp_ms=0,
        )
    with pytest.raises(ValueError, match="at least one record"):
        build_control_batch_of([], base_offset=0, partition_leader_epoch=0, timestamp_ms=0)


def test_every_control_type_round_trips() -> None:
    samples = {
        ControlType.ABORT: end_txn_marker(1),
        ControlType.COMMIT: end_txn_marker(2),
        ControlType.LEADER_CHANGE: leader_change_message(3, [3, 4], [3]),
        ControlType.SNAPSHOT_HEADER: snapshot_header_record(-1),
        ControlType.SNAPSHOT_FOOTER: snapshot_footer_record(),
        ControlType.KRAFT_VERSION: kraft_version_record(0),
        ControlType.KRAFT_VOTERS: voters_record([]),
    }
    assert set(samples) == set(CONTROL_MESSAGES)
    for kind, message in samples.items():
        rec = record(control_key(kind), encode_control_value(kind, message))
        assert decode_control_record(rec) == (kind, message)
