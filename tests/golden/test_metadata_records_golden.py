"""Golden metadata records: hand-assembled, annotated ApiMessageAndVersion frames (tests/golden/metadata).

Each ``.hex`` file holds one record value as it sits in a batch: ``# key: value`` metadata lines
(``type`` = api key, ``version``, any number of ``source`` lines, ``expect: path = literal`` checks
on the decoded data), then lines of ``hex bytes ; annotation``. The bytes were laid out field by
field from Kafka's JSON schemas with small independent primitive encoders (not kraft's schema
codec), so decoding them checks field order, types and tags, and ``encode(decode(b)) == b`` checks
the writer. One vector per record type at its newest version, with every tagged field present.

Also here: the worked bytes of spec 1.2 and the ``kafka-dump-log`` payload layout of spec 8.3.
"""

from __future__ import annotations

import ast
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from kraft.metadata.records import (
    SCHEMAS,
    MetadataRecordType,
    decode_record,
    encode_record,
    make_record,
    record_to_json,
)

VECTORS = sorted((Path(__file__).parent / "metadata").glob("*.hex"))
T = MetadataRecordType


def _parse(path: Path) -> tuple[dict[str, str], list[str], bytes]:
    meta: dict[str, str] = {}
    expects: list[str] = []
    hex_parts: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            m = re.match(r"#\s*(\w+):\s*(.*)$", line)
            if m and m.group(1) == "expect":
                expects.append(m.group(2))
            elif m and m.group(1) != "source":
                meta[m.group(1)] = m.group(2).strip()
            continue
        hex_parts.append(line.split(";", 1)[0].replace(" ", ""))
    return meta, expects, bytes.fromhex("".join(hex_parts))


def _resolve(data: Any, path: str) -> Any:
    obj = data
    for token in re.findall(r"[A-Za-z_]\w*|\[\d+\]", path):
        obj = obj[int(token[1:-1])] if token.startswith("[") else getattr(obj, token)
    return obj


def test_every_record_type_has_a_vector_at_its_newest_version() -> None:
    covered = {(int(_parse(p)[0]["type"]), int(_parse(p)[0]["version"])) for p in VECTORS}
    assert {(int(t), s.versions.high) for t, s in SCHEMAS.items()} <= covered


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_golden_record_decodes_to_the_annotated_values_and_reencodes_to_the_same_bytes(path: Path) -> None:
    meta, expects, data = _parse(path)
    record = decode_record(data)
    assert (int(record.type), record.version) == (int(meta["type"]), int(meta["version"]))
    assert encode_record(record) == data
    for expect in expects:
        lhs, rhs = expect.split(" = ", 1)
        assert _resolve(record.data, lhs.strip()) == ast.literal_eval(rhs.strip()), expect


def test_golden_uuids_decode_to_the_annotated_values() -> None:
    (path,) = [p for p in VECTORS if p.stem == "partition_change_record_v2"]
    record = decode_record(_parse(path)[2])
    assert record.data.topic_id == uuid.UUID(int=0xAB)
    assert record.data.directories == [uuid.UUID(int=0xD1 + i) for i in range(4)]
    (path,) = [p for p in VECTORS if p.stem == "topic_record_v0"]
    record = decode_record(_parse(path)[2])
    assert record.data.topic_id == uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")
    for name in ("access_control_entry_record_v0", "remove_access_control_entry_record_v0"):
        _, _, raw = _parse(Path(__file__).parent / "metadata" / f"{name}.hex")
        assert decode_record(raw).data.id == uuid.UUID(int=0xAC)


# ---------------------------------------------------------------------------------------------------
# Spec 1.2 worked bytes

TOPIC_ID = uuid.UUID("3d1f8f3e-5a0b-4c1e-9d2b-6a7c8e9f0a1b")


def test_spec_no_op_record_bytes() -> None:
    record = make_record(T.NO_OP)
    assert encode_record(record) == bytes.fromhex("01 14 00 00")
    assert decode_record(bytes.fromhex("01140000")) == record


def test_spec_topic_record_bytes() -> None:
    record = make_record(T.TOPIC, name="foo", topic_id=TOPIC_ID)
    expected = bytes.fromhex("01 02 00") + bytes.fromhex("04 66 6f 6f") + TOPIC_ID.bytes + b"\x00"
    assert encode_record(record) == expected
    assert decode_record(expected) == record


def test_spec_partition_change_record_v2_bytes() -> None:
    record = make_record(
        T.PARTITION_CHANGE,
        2,
        partition_id=0,
        topic_id=TOPIC_ID,
        isr=[1],
        leader=1,
        eligible_leader_replicas=[2, 3],
    )
    expected = (
        bytes.fromhex("01 05 02")  # frame 1, PartitionChangeRecord (5), version 2
        + bytes.fromhex("00000000")  # PartitionId 0
        + TOPIC_ID.bytes  # TopicId
        + bytes.fromhex("03")  # three tagged fields
        + bytes.fromhex("00 05 02 00000001")  # tag 0 Isr, 5 bytes: [1]
        + bytes.fromhex("01 04 00000001")  # tag 1 Leader, 4 bytes: 1
        + bytes.fromhex("06 09 03 00000002 00000003")  # tag 6 ELR, 9 bytes: [2, 3]
    )
    assert encode_record(record) == expected
    assert decode_record(expected) == record


def test_spec_dump_log_payload_layout() -> None:
    """Spec 8.3: UPPER_SNAKE type, camelCase fields, tagged fields at their default left out."""
    record = make_record(
        T.PARTITION_CHANGE,
        2,
        partition_id=0,
        topic_id=uuid.UUID(int=1),
        isr=[2],
        leader=2,
        eligible_leader_replicas=[0, 3],
    )
    assert record_to_json(record) == {
        "type": "PARTITION_CHANGE_RECORD",
        "version": 2,
        "data": {
            "partitionId": 0,
            "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
            "isr": [2],
            "leader": 2,
            "eligibleLeaderReplicas": [0, 3],
        },
    }
