"""The C record decoder (``kraft.records._native_decode``) is an optimisation only: on every batch it
accepts, its columns equal what the checked Python decoder returns; on everything else (record
headers, a value starting with the byte the caller keeps for Python, values that do not fit the
columns, bytes the checked decoder rejects) it declines and leaves its builder as it was.

These tests need no pyarrow: the builder's buffers are read with ``struct``.
"""

from __future__ import annotations

import mmap
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from batch_mutations import corrupt_body, split_batch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraft.common.errors import CorruptRecordError, MalformedMessageError
from kraft.records import _native_decode
from kraft.records.batch import (
    HEADER_SIZE,
    MIN_RECORD_SIZE,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    Header,
    SimpleRecord,
    TimestampType,
    _decode_records_checked,
    build_batch,
    decode_batch,
)
from kraft.records.control import ControlType, build_control_batch, leader_change_message

# _native_decode is a plain import, not importorskip: the suite must fail where the extension was
# not built.
ColumnBuilder = _native_decode.ColumnBuilder
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
NO_BYTE = -1

Row = tuple[int, int, int, int, bytes | None, bytes | None]  # offset, epoch, base, ts µs, key, value


def add(
    builder: ColumnBuilder,
    header: BatchHeader,
    data: bytes | bytearray | memoryview | mmap.mmap,
    start: int = 0,
    end: int | None = None,
    *,
    row_offset: int | None = None,
    python_byte: int = NO_BYTE,
) -> bool:
    lat = header.max_timestamp if header.timestamp_type is TimestampType.LOG_APPEND_TIME else None
    return builder.add_batch(
        data,
        start,
        len(data) if end is None else end,
        header.base_offset,
        header.partition_leader_epoch,
        header.records_count,
        header.base_timestamp,
        lat,
        row_offset,
        python_byte,
    )


def _binary(rows: int, validity: bytes | None, offsets: bytes, data: bytes) -> list[bytes | None]:
    ends = struct.unpack(f"<{rows + 1}i", offsets)
    assert ends[0] == 0 and ends[-1] == len(data)
    return [
        None if validity is not None and not validity[i // 8] >> (i % 8) & 1 else data[ends[i] : ends[i + 1]]
        for i in range(rows)
    ]


def taken(builder: ColumnBuilder) -> list[Row]:
    """The builder's rows, read back from its Arrow buffers."""
    n, offset, epoch, base, ts, k_valid, k_offsets, k_data, v_valid, v_offsets, v_data = builder.take()
    assert len(builder) == 0
    keys = _binary(n, k_valid, k_offsets, k_data)
    values = _binary(n, v_valid, v_offsets, v_data)
    # A validity buffer only comes with nulls.
    assert (k_valid is None) == (None not in keys) and (v_valid is None) == (None not in values)
    return list(
        zip(
            struct.unpack(f"<{n}q", offset),
            struct.unpack(f"<{n}i", epoch),
            struct.unpack(f"<{n}q", base),
            struct.unpack(f"<{n}q", ts),
            keys,
            values,
        )
    )


def native_rows(header: BatchHeader, body: bytes, **kwargs: int | None) -> list[Row] | None:
    builder = ColumnBuilder()
    if not add(builder, header, body, **kwargs):  # type: ignore[arg-type]
        assert len(builder) == 0
        return None
    return taken(builder)


def python_rows(header: BatchHeader, body: bytes, row_offset: int | None = None) -> list[Row] | None:
    """What read_unit's Python path puts in these columns, or None where it raises (corrupt
    records) or where the values do not fit the int64 columns (pyarrow refuses them)."""
    try:
        records = _decode_records_checked(header, body)
    except (CorruptRecordError, MalformedMessageError):
        return None
    rows = [
        (
            r.offset if row_offset is None else row_offset,
            header.partition_leader_epoch,
            header.base_offset,
            r.timestamp * 1000,
            r.key,
            r.value,
        )
        for r in records
    ]
    if any(not INT64_MIN <= x <= INT64_MAX for row in rows for x in (row[0], row[3])):
        return None
    return rows


def with_header(header: BatchHeader, **changes: int) -> BatchHeader:
    return header._replace(**changes)


def varint(n: int, pad: int = 0) -> bytes:
    """Zigzag varint of ``n``, with ``pad`` redundant continuation groups (still a valid varint for
    the checked decoder as long as it stays within its 5 or 10 bytes)."""
    u = (n << 1) ^ (n >> 63)
    u &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = u & 0x7F
        u >>= 7
        if u == 0 and pad == 0:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)
        if u == 0:
            pad -= 1
            if pad == 0:
                out.append(0)
                return bytes(out)


def record(
    ts_delta: int, offset_delta: int, key: bytes | None, value: bytes | None, pad: int = 0, headers: int = 0
) -> bytes:
    body = bytes([0]) + varint(ts_delta, pad) + varint(offset_delta, pad)
    body += varint(-1, pad) if key is None else varint(len(key), pad) + key
    body += varint(-1, pad) if value is None else varint(len(value), pad) + value
    body += varint(headers, pad)
    for i in range(headers):
        body += varint(1) + b"h" + varint(1) + bytes([i])
    return varint(len(body), pad) + body


def header_for(count: int, body: bytes, **fields: int) -> BatchHeader:
    values = dict(
        base_offset=0,
        batch_length=HEADER_SIZE - 12 + len(body),
        partition_leader_epoch=3,
        magic=2,
        crc=0,
        attributes=0,
        last_offset_delta=max(count - 1, 0),
        base_timestamp=1_700_000_000_000,
        max_timestamp=1_700_000_000_000,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        records_count=count,
    )
    values.update(fields)
    return BatchHeader(**values)


# ------------------------------------------------------------------------------------------------


def test_the_extension_is_built_and_agrees_on_the_smallest_record() -> None:
    assert _native_decode.MIN_RECORD_SIZE == MIN_RECORD_SIZE
    assert len(ColumnBuilder()) == 0


_plain_records = st.lists(
    st.builds(
        SimpleRecord,
        key=st.none() | st.binary(max_size=200),
        value=st.none() | st.binary(max_size=300),
        timestamp=st.none() | st.integers(min_value=-(2**40), max_value=2**45),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    _plain_records,
    st.integers(min_value=0, max_value=2**62),
    st.integers(min_value=-1, max_value=2**31 - 1),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**45),
)
def test_columns_equal_the_checked_decoder_on_valid_batches(
    records: list[SimpleRecord], base_offset: int, epoch: int, log_append_time: bool, max_ts: int
) -> None:
    header, body = split_batch(
        build_batch(records, base_offset=base_offset, partition_leader_epoch=epoch, timestamp_ms=7)
    )
    if log_append_time:
        header = with_header(header, attributes=TIMESTAMP_TYPE_MASK, max_timestamp=max_ts)
    want = python_rows(header, body)
    assert want is not None
    got = native_rows(header, body, python_byte=NO_BYTE)
    assert got == want  # a plain batch must never be declined
    if log_append_time:
        assert {row[3] for row in got} == {max_ts * 1000}


# Mostly values whose microseconds fit int64, some anywhere in int64 (which overflow the columns).
_small_or_any_int64 = st.integers(min_value=-(2**52), max_value=2**52) | st.integers(
    min_value=INT64_MIN, max_value=INT64_MAX
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            _small_or_any_int64,  # timestamp delta, up to 10-byte varlongs
            st.integers(min_value=-(2**31), max_value=2**31 - 1),  # offset delta
            st.none() | st.binary(max_size=150),
            st.none() | st.binary(max_size=150),
            st.integers(min_value=0, max_value=3),  # redundant varint groups
        ),
        min_size=1,
        max_size=20,
    ),
    _small_or_any_int64,
    _small_or_any_int64,
)
def test_large_and_redundant_varints_and_int64_edges(
    records: list[tuple[int, int, bytes | None, bytes | None, int]], base_offset: int, base_ts: int
) -> None:
    # Padding can push a varint past its 5 or 10 bytes: the checked decoder rejects it, and so
    # must the C one (by declining).
    body = b"".join(record(ts, od, k, v, pad) for ts, od, k, v, pad in records)
    header = header_for(len(records), body, base_offset=base_offset, base_timestamp=base_ts)
    want = python_rows(header, body)
    got = native_rows(header, body)
    assert got == want  # None on both sides where Python raises or the values overflow int64
    want_snapshot = python_rows(header, body, row_offset=41)
    assert native_rows(header, body, row_offset=41) == want_snapshot


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_plain_records, st.data())
def test_declines_or_agrees_on_corrupted_bodies_and_leaves_the_builder_as_it_was(
    records: list[SimpleRecord], data: st.DataObject
) -> None:
    header, body = split_batch(build_batch(records))
    corrupt = corrupt_body(body, data, min_flips=0, max_flips=4, max_tail=4)
    count = data.draw(st.sampled_from([header.records_count, 0, header.records_count + 1, 2**31 - 1]))
    header = with_header(header, records_count=max(count, 0))
    want = python_rows(header, corrupt)

    # The body inside a larger buffer: what lies outside [start, end) must never be read.
    prefix, suffix = data.draw(st.binary(max_size=8)), data.draw(st.binary(max_size=8))
    buffer = prefix + corrupt + suffix
    # No nulls in the good rows: a declined batch's null must not leave a validity buffer behind.
    good_header, good_body = split_batch(
        build_batch([SimpleRecord(key=b"k", value=b"before")], base_offset=9)
    )
    builder = ColumnBuilder()
    assert add(builder, good_header, good_body)
    before = python_rows(good_header, good_body)
    assert before is not None
    accepted = add(builder, header, buffer, len(prefix), len(prefix) + len(corrupt))
    assert accepted == (want is not None)
    assert add(builder, good_header, good_body)
    assert taken(builder) == before + (want or []) + before


def test_records_with_headers_are_left_to_python() -> None:
    with_headers = [
        SimpleRecord(value=b"a"),
        SimpleRecord(value=b"b", headers=(Header(key="h", value=None),)),
    ]
    header, body = split_batch(build_batch(with_headers))
    assert python_rows(header, body) is not None
    assert native_rows(header, body) is None


def test_a_value_starting_with_the_python_byte_is_left_to_python() -> None:
    header, body = split_batch(build_batch([SimpleRecord(value=b"plain"), SimpleRecord(value=b"\x01meta")]))
    assert native_rows(header, body, python_byte=1) is None
    header, body = split_batch(build_batch([SimpleRecord(value=b"\x01")]))
    assert native_rows(header, body, python_byte=1) is None
    assert native_rows(header, body, python_byte=NO_BYTE) == python_rows(header, body)
    # A null or empty value is not a metadata record.
    header, body = split_batch(build_batch([SimpleRecord(value=None), SimpleRecord(key=b"\x01", value=b"")]))
    assert native_rows(header, body, python_byte=1) == python_rows(header, body)


def test_control_batches_decode_like_any_batch_when_asked() -> None:
    # read_unit never hands control batches to C (their payload is decoded in Python), but the
    # decoder itself judges records only: a LeaderChange record has a key and no headers.
    batch = build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(1, [1, 2, 3], [1]),
        base_offset=4,
        partition_leader_epoch=2,
        timestamp_ms=1_700_000_000_000,
    )
    header, body = split_batch(batch)
    assert native_rows(header, body) == python_rows(header, body)


def test_offsets_and_timestamps_that_overflow_int64_are_left_to_python() -> None:
    header, body = split_batch(build_batch([SimpleRecord(value=b"v")] * 3, timestamp_ms=0))
    assert native_rows(with_header(header, base_offset=INT64_MAX - 2), body) is not None
    assert native_rows(with_header(header, base_offset=INT64_MAX - 1), body) is None
    assert native_rows(with_header(header, base_timestamp=INT64_MAX // 1000), body) is not None
    assert native_rows(with_header(header, base_timestamp=INT64_MAX // 1000 + 1), body) is None
    assert native_rows(with_header(header, base_timestamp=INT64_MIN // 1000 - 1), body) is None
    lat = with_header(header, attributes=TIMESTAMP_TYPE_MASK, max_timestamp=INT64_MAX // 1000 + 1)
    assert native_rows(lat, body) is None
    # A snapshot's row offset replaces the records' own, so theirs cannot overflow.
    assert native_rows(with_header(header, base_offset=INT64_MAX), body, row_offset=5) is not None


def test_an_empty_builder_takes_empty_columns() -> None:
    assert ColumnBuilder().take() == (0, b"", b"", b"", b"", None, b"\0\0\0\0", b"", None, b"\0\0\0\0", b"")
    header, body = split_batch(build_batch([SimpleRecord(value=b"v")]))
    assert native_rows(with_header(header, records_count=0), b"") == []
    assert native_rows(with_header(header, records_count=0), body) is None  # bytes after 0 records


def test_reads_any_buffer_and_refuses_a_window_outside_it(tmp_path: Path) -> None:
    batch = build_batch([SimpleRecord(key=b"k", value=b"v" * 50)] * 4, base_offset=3)
    header, body = split_batch(batch)
    want = python_rows(header, body)
    for data in (batch, bytearray(batch), memoryview(batch)):
        builder = ColumnBuilder()
        assert add(builder, header, data, HEADER_SIZE, len(batch))
        assert taken(builder) == want
    path = tmp_path / "batch"
    path.write_bytes(batch)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        builder = ColumnBuilder()
        assert add(builder, header, mm, HEADER_SIZE, len(batch))
        assert taken(builder) == want
    for start, end in ((-1, 10), (10, 9), (0, len(batch) + 1)):
        with pytest.raises(ValueError, match="outside a buffer"):
            add(ColumnBuilder(), header, batch, start, end)
    with pytest.raises(TypeError):
        ColumnBuilder().add_batch(batch, 0)  # type: ignore[call-arg]


def test_the_columns_are_decode_batch_records_on_a_many_record_batch() -> None:
    records = [
        SimpleRecord(
            key=None if i % 7 == 0 else str(i).encode(),
            value=None if i % 11 == 0 else b"x" * (i % 300),
            timestamp=1_000_000 - i * 13,  # negative deltas
        )
        for i in range(5000)
    ]
    batch = build_batch(records, base_offset=10**12, partition_leader_epoch=9)
    header, body = split_batch(batch)
    got = native_rows(header, body)
    assert got == [
        (r.offset, 9, 10**12, r.timestamp * 1000, r.key, r.value) for r in decode_batch(batch).records
    ]


@pytest.mark.parametrize(
    ("field", "encoded", "accepted"),
    [
        # timestampDelta (varlong, at most 10 bytes, within 64 bits)
        ("timestamp", b"\xff" * 9 + b"\x01", True),
        ("timestamp", b"\xff" * 9 + b"\x02", False),
        ("timestamp", b"\x80" * 9 + b"\x00", True),
        ("timestamp", b"\x80" * 10 + b"\x00", False),
        # offsetDelta (varint, at most 5 bytes, within 32 bits)
        ("offset", b"\xff" * 4 + b"\x0f", True),
        ("offset", b"\xff" * 4 + b"\x10", False),
        ("offset", b"\x80" * 4 + b"\x00", True),
        ("offset", b"\x80" * 5 + b"\x00", False),
        ("offset", b"\x80" * 4, False),  # runs into the key length
    ],
)
def test_varints_at_their_limits(field: str, encoded: bytes, accepted: bool) -> None:
    ts = encoded if field == "timestamp" else b"\x00"
    od = encoded if field == "offset" else b"\x00"
    inner = b"\x00" + ts + od + varint(-1) + varint(2) + b"ab" + varint(0)
    body = varint(len(inner)) + inner
    # LogAppendTime: the delta is decoded but not used, so any 64-bit value fits the column.
    header = header_for(1, body, attributes=TIMESTAMP_TYPE_MASK, max_timestamp=5)
    want = python_rows(header, body)
    assert (want is not None) == accepted
    assert native_rows(header, body) == want


GUARDED_FUZZ = """
import ctypes, mmap, random, sys
from kraft.records._native_decode import ColumnBuilder
from kraft.records.batch import HEADER_SIZE, SimpleRecord, build_batch, read_batch_header

PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
region = mmap.mmap(-1, 2 * PAGE)
address = ctypes.addressof(ctypes.c_char.from_buffer(region))
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
assert libc.mprotect(address + PAGE, PAGE, 0) == 0  # PROT_NONE: a read past the body faults
rng = random.Random(7)
accepted = 0
for i in range(int(sys.argv[1])):
    records = [
        SimpleRecord(
            key=None if rng.random() < 0.3 else rng.randbytes(rng.randrange(40)),
            value=None if rng.random() < 0.3 else rng.randbytes(rng.randrange(200)),
            timestamp=rng.randrange(-2**40, 2**40),
        )
        for _ in range(rng.randrange(1, 8))
    ]
    batch = build_batch(records)
    header = read_batch_header(batch)
    body = bytearray(batch[HEADER_SIZE:])
    for _ in range(rng.randrange(4)):
        body[rng.randrange(len(body))] = rng.randrange(256)
    body = body[: rng.randrange(len(body) + 1)]
    start = PAGE - len(body)
    region[start:PAGE] = bytes(body)
    count = rng.choice([header.records_count, header.records_count + 1, 0, 1000])
    accepted += ColumnBuilder().add_batch(
        region, start, PAGE, 0, 0, count, header.base_timestamp, None, None, -1
    )
print(accepted)
"""


def test_never_reads_past_the_end_of_the_records(tmp_path: Path) -> None:
    # The records end where readable memory ends (a PROT_NONE page follows): any read past
    # ``end`` would kill the child process.
    script = tmp_path / "fuzz.py"
    script.write_text(GUARDED_FUZZ)
    done = subprocess.run([sys.executable, str(script), "3000"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 0 < int(done.stdout) < 3000  # some bodies decoded, some declined
