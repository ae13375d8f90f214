"""ACL records in the image: replay (ids unique, no duplicates, removal of known ids) and snapshots."""

from __future__ import annotations

import uuid

import pytest

from kraft.metadata.acls import StandardAcl
from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataLoader, MetadataProvenance, ReplayError
from kraft.metadata.image_snapshot import image_to_records, snapshot_records_bytes
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    decode_record,
    encode_record,
    make_record,
)

_T = MetadataRecordType


def u(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)


def acl_record(
    acl_id: int, name: str = "t", principal: str = "User:alice", op: int = 3
) -> ApiMessageAndVersion:
    return make_record(
        _T.ACCESS_CONTROL_ENTRY,
        id=u(acl_id),
        resource_type=2,
        resource_name=name,
        pattern_type=3,
        principal=principal,
        host="*",
        operation=op,
        permission_type=3,
    )


def remove_record(acl_id: int) -> ApiMessageAndVersion:
    return make_record(_T.REMOVE_ACCESS_CONTROL_ENTRY, id=u(acl_id))


def replay(records: list[ApiMessageAndVersion], image: MetadataImage = MetadataImage.EMPTY) -> MetadataImage:
    delta = MetadataDelta(image)
    for offset, record in enumerate(records):
        delta.replay(record, offset)
    return delta.apply(MetadataProvenance(last_offset=len(records) - 1, last_epoch=1, last_append_ms=0))


def test_acl_records_round_trip_their_bytes() -> None:
    for record in (acl_record(1), remove_record(1)):
        assert decode_record(encode_record(record)) == record


def test_replay_adds_and_removes_acls_by_id() -> None:
    image = replay([acl_record(1), acl_record(2, name="u")])
    assert image.acls == {
        u(1): StandardAcl(2, "t", 3, "User:alice", "*", 3, 3),
        u(2): StandardAcl(2, "u", 3, "User:alice", "*", 3, 3),
    }
    later = replay([remove_record(1)], image)
    assert list(later.acls) == [u(2)]
    assert list(image.acls) == [u(1), u(2)]  # the earlier image is immutable


def test_replay_refuses_to_remove_an_unknown_acl_id_as_kafka_does() -> None:
    with pytest.raises(ReplayError, match="no ACL with id"):
        replay([remove_record(7)])
    with pytest.raises(ReplayError, match="no ACL with id"):
        replay([acl_record(1), remove_record(1), remove_record(1)])


def test_a_removed_acl_may_be_added_again_under_a_new_id() -> None:
    image = replay([acl_record(1), remove_record(1), acl_record(2)])
    assert list(image.acls) == [u(2)]


def test_snapshot_writes_acls_and_loading_it_gives_the_same_image() -> None:
    image = replay([acl_record(3, name="b"), acl_record(1, name="a"), acl_record(2, principal="User:bob")])
    records = image_to_records(image)
    assert [r.data.id for r in records if r.type is _T.ACCESS_CONTROL_ENTRY] == [u(1), u(2), u(3)]
    loader = MetadataLoader()
    loaded = loader.load_snapshot(10, 1, 0, snapshot_records_bytes(image))
    assert loaded.acls == image.acls


def test_acls_count_in_image_equality() -> None:
    a = replay([acl_record(1)])
    b = replay([acl_record(1, principal="User:bob")])
    assert a != b and not a.is_empty
