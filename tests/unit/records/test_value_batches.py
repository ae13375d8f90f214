"""The value-only fast paths: ``build_value_batch`` writes the bytes ``build_batch`` writes, and
``decode_batch_values`` (C ``record_values`` or the Python fallback) returns the values that
``decode_batch`` gives, or raises the same error, on every input."""

from __future__ import annotations

import struct

import pytest
from batch_mutations import corrupt_body, split_batch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraft.common.errors import CorruptRecordError
from kraft.protocol.primitives import encode_varint
from kraft.records import _native_decode
from kraft.records import batch as batch_module
from kraft.records.batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    Header,
    SimpleRecord,
    build_batch,
    build_value_batch,
    crc32c,
    decode_batch,
    decode_batch_values,
)
from kraft.records.control import ControlType, build_control_batch, leader_change_message


def values_of(data: bytes, from_offset: int | None) -> tuple[bytes, ...]:
    batch = decode_batch(data)
    if batch.is_control:
        return ()
    start = batch.base_offset if from_offset is None else from_offset
    return tuple(r.value or b"" for r in batch.records if r.offset >= start)


def outcome(fn: object, *args: object) -> object:
    try:
        return fn(*args)  # type: ignore[operator]
    except CorruptRecordError as e:
        return ("error", str(e))


def with_body(batch: bytes, body: bytes) -> bytes:
    """``batch`` with another records body, its length and CRC made right again."""
    out = bytearray(batch[:HEADER_SIZE] + body)
    struct.pack_into(">i", out, 8, len(out) - LOG_OVERHEAD)
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


@pytest.fixture(params=["native", "python"])
def decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(batch_module, "_native_record_values", None)
    else:
        assert batch_module._native_record_values is _native_decode.record_values
    return str(request.param)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=300), min_size=1, max_size=60),
    st.integers(min_value=0, max_value=2**62),
    st.integers(min_value=-1, max_value=2**31 - 1),
    st.integers(min_value=-(2**40), max_value=2**45),
)
def test_value_batches_are_the_bytes_build_batch_writes(
    values: list[bytes], base_offset: int, epoch: int, timestamp_ms: int
) -> None:
    want = build_batch(
        [SimpleRecord(value=v) for v in values],
        base_offset=base_offset,
        partition_leader_epoch=epoch,
        timestamp_ms=timestamp_ms,
    )
    got = build_value_batch(
        values, base_offset=base_offset, partition_leader_epoch=epoch, timestamp_ms=timestamp_ms
    )
    assert got == want


def test_the_small_varint_table_is_encode_varint() -> None:
    assert all(v == encode_varint(i) for i, v in enumerate(batch_module._SMALL_VARINTS))


def test_value_batches_past_the_small_varint_table() -> None:
    # More records than the table of small varints, and values longer than it.
    values = [b"v%d" % i for i in range(20_000)] + [b"x" * 20_000, b""]
    want = build_batch(
        [SimpleRecord(value=v) for v in values], base_offset=5, partition_leader_epoch=2, timestamp_ms=9
    )
    assert build_value_batch(values, base_offset=5, partition_leader_epoch=2, timestamp_ms=9) == want
    with pytest.raises(ValueError):
        build_value_batch([], base_offset=0, partition_leader_epoch=0, timestamp_ms=0)


_records = st.lists(
    st.builds(
        SimpleRecord,
        key=st.none() | st.binary(max_size=50),
        value=st.none() | st.binary(max_size=200),
        headers=st.just(()) | st.just((Header(key="h", value=b"v"),)),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_records, st.integers(min_value=0, max_value=2**40), st.data())
def test_values_equal_decode_batch_on_valid_batches(
    decoder: str, records: list[SimpleRecord], base_offset: int, data: st.DataObject
) -> None:
    raw = build_batch(records, base_offset=base_offset, partition_leader_epoch=3)
    from_offset = data.draw(
        st.none() | st.integers(min_value=base_offset - 2, max_value=base_offset + len(records) + 1)
    )
    header, values = decode_batch_values(raw, 0, from_offset)
    assert header == decode_batch(raw).header
    assert values == values_of(raw, from_offset)


# The decoder fixture only patches a module attribute for the whole test: nothing to reset.
@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(_records, st.data())
def test_corrupt_bodies_give_decode_batch_values_or_its_error(
    decoder: str, records: list[SimpleRecord], data: st.DataObject
) -> None:
    plain = build_batch(records, base_offset=100)
    _, body = split_batch(plain)
    raw = with_body(plain, corrupt_body(body, data, min_flips=0, max_flips=4, max_tail=4))
    want = outcome(values_of, raw, None)
    got = outcome(lambda d: decode_batch_values(d)[1], raw)
    assert got == want


def test_bad_crc_truncation_and_control_batches_take_decode_batch_path(decoder: str) -> None:
    raw = build_batch([SimpleRecord(value=b"a")], base_offset=7)
    flipped = bytearray(raw)
    flipped[-2] ^= 0xFF
    assert outcome(decode_batch_values, bytes(flipped)) == outcome(decode_batch, bytes(flipped))
    assert outcome(decode_batch_values, raw[:-1]) == outcome(decode_batch, raw[:-1])
    assert isinstance(outcome(decode_batch_values, raw[:-1]), tuple)
    control = build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(1, [1, 2, 3], [1]),
        base_offset=3,
        partition_leader_epoch=1,
        timestamp_ms=5,
    )
    header, values = decode_batch_values(control)
    assert header.is_control and values == ()


def test_the_c_function_declines_what_python_must_decode_and_guards_its_window() -> None:
    record_values = _native_decode.record_values
    plain = build_batch([SimpleRecord(value=b"a"), SimpleRecord(value=None)], base_offset=10)
    assert record_values(plain, HEADER_SIZE, len(plain), 10, 2, 0) == (b"a", b"")
    assert record_values(plain, HEADER_SIZE, len(plain), 10, 2, 11) == (b"",)
    # Record headers are left to Python.
    headed = build_batch([SimpleRecord(value=b"a", headers=(Header(key="k", value=b"v"),))])
    assert record_values(headed, HEADER_SIZE, len(headed), 0, 1, 0) is None
    # An offset past int64 is left to Python (which has no such limit).
    assert record_values(plain, HEADER_SIZE, len(plain), 2**63 - 1, 2, 0) is None
    # A records count the body cannot hold.
    assert record_values(plain, HEADER_SIZE, len(plain), 10, 3, 0) is None
    with pytest.raises(ValueError):
        record_values(plain, HEADER_SIZE, len(plain) + 1, 10, 2, 0)
