"""The PartitionRecord fast paths give exactly what the generic schema codec gives."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.metadata import records as rec
from kraft.metadata.records import MetadataRecordType, decode_record, encode_record, make_record

ids = st.lists(st.integers(-(2**31), 2**31 - 1), max_size=140)
uuids = st.builds(lambda n: uuid.UUID(int=n), st.integers(0, 2**128 - 1))


def generic_encode(r: rec.ApiMessageAndVersion) -> bytes:
    from kraft.protocol.primitives import Writer

    w = Writer()
    w.unsigned_varint(1)
    w.unsigned_varint(int(r.type))
    w.unsigned_varint(r.version)
    rec.SCHEMAS[r.type].struct.encode(r.data, r.version, True, w)
    return w.getvalue()


def generic_decode(data: bytes) -> object:
    from kraft.protocol.primitives import Reader

    reader = Reader(data)
    reader.unsigned_varint()
    reader.unsigned_varint()
    version = reader.unsigned_varint()
    return rec.SCHEMAS[MetadataRecordType.PARTITION].struct.decode(reader, version, True)


@settings(max_examples=300, deadline=None)
@given(
    version=st.integers(0, 2),
    pid=st.integers(-(2**31), 2**31 - 1),
    topic=uuids,
    replicas=ids,
    isr=ids,
    removing=ids,
    adding=ids,
    leader=st.integers(-(2**31), 2**31 - 1),
    lrs=st.sampled_from([0, 0, 0, 1]),
    epochs=st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1)),
    directories=st.lists(uuids, max_size=130),
    elr=st.one_of(st.none(), ids),
    lke=st.one_of(st.none(), ids),
)
def test_fast_and_generic_codecs_agree(
    version: int,
    pid: int,
    topic: uuid.UUID,
    replicas: list[int],
    isr: list[int],
    removing: list[int],
    adding: list[int],
    leader: int,
    lrs: int,
    epochs: tuple[int, int],
    directories: list[uuid.UUID],
    elr: list[int] | None,
    lke: list[int] | None,
) -> None:
    fields = dict(
        partition_id=pid,
        topic_id=topic,
        replicas=replicas,
        isr=isr,
        removing_replicas=removing,
        adding_replicas=adding,
        leader=leader,
        leader_recovery_state=lrs,
        leader_epoch=epochs[0],
        partition_epoch=epochs[1],
    )
    if version >= 1:
        fields["directories"] = directories
    if version >= 2:
        fields["eligible_leader_replicas"] = elr
        fields["last_known_elr"] = lke
    record = make_record(MetadataRecordType.PARTITION, version, **fields)
    data = encode_record(record)
    assert data == generic_encode(record)
    decoded = decode_record(data)
    assert decoded == record
    assert decoded.data == generic_decode(data)
    assert encode_record(decoded) == data


def test_the_fast_path_is_taken_for_a_typical_record() -> None:
    record = make_record(
        MetadataRecordType.PARTITION,
        partition_id=0,
        topic_id=uuid.UUID(int=7),
        replicas=[1, 2, 3],
        isr=[1, 2, 3],
        leader=1,
        leader_epoch=0,
        partition_epoch=0,
        directories=[uuid.UUID(int=1)] * 3,
    )
    assert rec._encode_partition_record_fast(record) is not None
    data = encode_record(record)
    assert rec._decode_partition_record_fast(data, 3, 2) is not None


def test_truncated_fast_path_input_is_corruption_not_a_crash() -> None:
    record = make_record(
        MetadataRecordType.PARTITION,
        partition_id=0,
        topic_id=uuid.UUID(int=7),
        replicas=[1, 2],
        isr=[1],
        leader=1,
        leader_epoch=0,
        partition_epoch=0,
        directories=[uuid.UUID(int=1)] * 2,
    )
    data = encode_record(record)
    import pytest

    from kraft.common.errors import CorruptRecordError

    for cut in range(len(data)):
        with pytest.raises(CorruptRecordError):
            decode_record(data[:cut])
    with pytest.raises(CorruptRecordError):
        decode_record(data + b"\x00")
