"""iter_batch_headers is next_batch_size then read_batch_header at each position, fused: the same
headers, the same stop at a partial batch and the same errors, on valid and damaged data."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.common.errors import CorruptRecordError
from kraft.records.batch import (
    BatchHeader,
    SimpleRecord,
    build_batch,
    iter_batch_headers,
    next_batch_size,
    read_batch_header,
)


def _reference(data: bytes) -> Iterator[tuple[int, BatchHeader]]:
    pos = 0
    while (size := next_batch_size(data, pos)) is not None:
        header = read_batch_header(data, pos)
        assert header is not None
        yield pos, header
        pos += size


def _outcome(it: Iterator[tuple[int, BatchHeader]]) -> tuple[list[tuple[int, BatchHeader]], str | None]:
    seen: list[tuple[int, BatchHeader]] = []
    try:
        for item in it:
            seen.append(item)
    except CorruptRecordError as e:
        return seen, str(e)
    return seen, None


@settings(max_examples=300, deadline=None)
@given(
    counts=st.lists(st.integers(1, 4), min_size=0, max_size=4),
    cut=st.integers(0, 400),
    damage=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=3),
)
def test_the_fused_iteration_matches_the_two_steps(
    counts: list[int], cut: int, damage: list[tuple[int, int]]
) -> None:
    data = bytearray()
    offset = 0
    for count in counts:
        data += build_batch([SimpleRecord(value=b"v%d" % i) for i in range(count)], base_offset=offset)
        offset += count
    for at, byte in damage:  # bytes of the headers too: lengths, magic, counts
        if at < len(data):
            data[at] = byte
    data = data[: len(data) - min(cut, len(data)) // 3] if cut % 2 else data
    assert _outcome(iter_batch_headers(bytes(data))) == _outcome(_reference(bytes(data)))


def test_a_magic_above_127_is_reported_unsigned_as_before() -> None:
    data = bytearray(build_batch([SimpleRecord(value=b"x")]))
    data[16] = 0xFF
    assert _outcome(iter_batch_headers(bytes(data)))[1] == _outcome(_reference(bytes(data)))[1]
    assert "magic 255" in (_outcome(iter_batch_headers(bytes(data)))[1] or "")
