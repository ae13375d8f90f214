"""The fast record decoder is an optimisation only: on every input it accepts, it returns exactly
what the checked decoder returns; on everything else it declines (``None``) and the checked decoder
decides (same records or the same error)."""

from __future__ import annotations

from batch_mutations import corrupt_body, split_batch
from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.common.errors import CorruptRecordError, MalformedMessageError
from kraft.records.batch import (
    BatchHeader,
    Header,
    SimpleRecord,
    _decode_records_checked,
    _decode_records_fast,
    build_batch,
    decode_batch,
    read_batch_header,
)

_records = st.lists(
    st.builds(
        SimpleRecord,
        key=st.none() | st.binary(max_size=200),
        value=st.none() | st.binary(max_size=300),
        headers=st.lists(
            st.builds(Header, key=st.text(max_size=5), value=st.none() | st.binary(max_size=5)), max_size=2
        ).map(tuple),
        timestamp=st.none() | st.integers(min_value=0, max_value=2**45),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(_records, st.integers(min_value=0, max_value=2**40), st.integers(min_value=-1, max_value=2**31 - 1))
def test_fast_decoder_equals_the_checked_one_on_valid_batches(
    records: list[SimpleRecord], base_offset: int, base_sequence: int
) -> None:
    batch = build_batch(records, base_offset=base_offset, base_sequence=base_sequence, producer_id=1)
    header, body = split_batch(batch)
    checked = _decode_records_checked(header, body)  # type: ignore[arg-type]
    fast = _decode_records_fast(header, body)  # type: ignore[arg-type]
    if all(not r.headers for r in records):
        assert fast is not None  # the common case must take the fast path
    if fast is not None:
        assert fast == checked
    assert decode_batch(batch).records == checked


@settings(max_examples=500, deadline=None)
@given(_records, st.data())
def test_fast_decoder_declines_or_agrees_on_corrupted_bodies(
    records: list[SimpleRecord], data: st.DataObject
) -> None:
    batch = build_batch(records)
    header, body = split_batch(batch)
    body2 = corrupt_body(body, data, min_flips=1, max_flips=3, max_tail=3)
    try:
        checked = _decode_records_checked(header, body2)  # type: ignore[arg-type]
    except (CorruptRecordError, MalformedMessageError):
        checked = None
    fast = _decode_records_fast(header, body2)  # type: ignore[arg-type]
    assert fast is None or fast == checked


def test_read_batch_header_builds_the_same_header_as_the_dataclass() -> None:
    batch = build_batch(
        [SimpleRecord(value=b"v")],
        base_offset=7,
        partition_leader_epoch=3,
        timestamp_ms=11,
        producer_id=5,
        producer_epoch=2,
        base_sequence=9,
    )
    header = read_batch_header(batch)
    assert header is not None
    expected = BatchHeader(
        base_offset=7,
        batch_length=len(batch) - 12,
        partition_leader_epoch=3,
        magic=2,
        crc=header.crc,
        attributes=0,
        last_offset_delta=0,
        base_timestamp=11,
        max_timestamp=11,
        producer_id=5,
        producer_epoch=2,
        base_sequence=9,
        records_count=1,
    )
    assert header == expected
    assert hash(header) == hash(expected)
    assert repr(header) == repr(expected)
