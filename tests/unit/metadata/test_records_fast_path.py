"""The PartitionRecord and PartitionChangeRecord fast paths give what the generic codec gives."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.common.errors import CorruptRecordError
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
    """The record's body as the schema codec reads it (the type and version from the frame)."""
    from kraft.protocol.primitives import Reader

    reader = Reader(data)
    reader.unsigned_varint()
    record_type = MetadataRecordType(reader.unsigned_varint())
    version = reader.unsigned_varint()
    return rec.SCHEMAS[record_type].struct.decode(reader, version, True)


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


maybe_ids = st.one_of(st.none(), ids)


@settings(max_examples=400, deadline=None)
@given(
    version=st.integers(0, 2),
    pid=st.integers(-(2**31), 2**31 - 1),
    topic=uuids,
    isr=maybe_ids,
    leader=st.one_of(st.just(-2), st.integers(-(2**31), 2**31 - 1)),
    replicas=maybe_ids,
    removing=maybe_ids,
    adding=maybe_ids,
    lrs=st.sampled_from([-1, -1, 0, 1, 127, -128]),
    directories=st.one_of(st.none(), st.lists(uuids, max_size=130)),
    elr=maybe_ids,
    lke=maybe_ids,
)
def test_partition_change_fast_decoder_agrees_with_the_generic_one(
    version: int,
    pid: int,
    topic: uuid.UUID,
    isr: list[int] | None,
    leader: int,
    replicas: list[int] | None,
    removing: list[int] | None,
    adding: list[int] | None,
    lrs: int,
    directories: list[uuid.UUID] | None,
    elr: list[int] | None,
    lke: list[int] | None,
) -> None:
    fields: dict[str, object] = dict(
        partition_id=pid,
        topic_id=topic,
        isr=isr,
        leader=leader,
        replicas=replicas,
        removing_replicas=removing,
        adding_replicas=adding,
        leader_recovery_state=lrs,
    )
    if version >= 1:
        fields["directories"] = directories
    if version >= 2:
        fields["eligible_leader_replicas"] = elr
        fields["last_known_elr"] = lke
    record = make_record(MetadataRecordType.PARTITION_CHANGE, version, **fields)
    data = encode_record(record)
    decoded = decode_record(data)
    assert decoded == record
    assert decoded.data == generic_decode(data)
    assert encode_record(decoded) == data
    # Every prefix and every extension is corruption, whichever path reads it.
    for cut in (len(data) - 1, len(data) // 2, 23):
        with pytest.raises(CorruptRecordError):
            decode_record(data[:cut])
    with pytest.raises(CorruptRecordError):
        decode_record(data + b"\x00")


def test_the_partition_change_fast_path_is_taken_for_shutdown_and_election_records() -> None:
    for fields in (
        dict(isr=[4, 5], leader=4, eligible_leader_replicas=[6], last_known_elr=[]),  # controlled shutdown
        dict(isr=[5]),  # an ISR shrink
        dict(leader=-1, isr=[], eligible_leader_replicas=[4, 5]),  # last ISR member fenced
        dict(leader=5, leader_recovery_state=1),  # unclean election
    ):
        record = make_record(
            MetadataRecordType.PARTITION_CHANGE, 2, partition_id=3, topic_id=uuid.UUID(int=9), **fields
        )
        data = encode_record(record)
        fast = rec._decode_partition_change_fast(data, 3, 2)
        assert fast is not None
        assert fast == generic_decode(data)


def test_partition_change_fast_path_leaves_the_unusual_to_the_generic_decoder() -> None:
    # An unknown tag (kept as unknown by the generic decoder) and a v0 record carrying a v2 tag.
    unknown = make_record(
        MetadataRecordType.PARTITION_CHANGE, 2, partition_id=1, topic_id=uuid.UUID(int=1), isr=[1]
    )
    data = bytearray(encode_record(unknown))
    body = 3 + 20
    assert data[body] == 1  # one tagged field: tag 0 (isr)
    data[body] = 2
    data += bytes((9, 1, 0x55))  # tag 9, one byte
    assert rec._decode_partition_change_fast(bytes(data), 3, 2) is None
    decoded = decode_record(bytes(data))
    assert decoded.data._unknown_tags == [(9, b"\x55")]
    elr_in_v0 = make_record(
        MetadataRecordType.PARTITION_CHANGE,
        2,
        partition_id=1,
        topic_id=uuid.UUID(int=1),
        eligible_leader_replicas=[2],
    )
    v0 = bytearray(encode_record(elr_in_v0))
    v0[2] = 0
    assert rec._decode_partition_change_fast(bytes(v0), 3, 0) is None
    assert decode_record(bytes(v0)).data.eligible_leader_replicas is None
