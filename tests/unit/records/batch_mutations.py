"""Helpers shared by the record decoder tests: a batch split into header and body, and a
hypothesis-drawn corruption of a body (byte flips, a cut, random trailing bytes)."""

from __future__ import annotations

from hypothesis import strategies as st

from kraft.records.batch import HEADER_SIZE, BatchHeader, read_batch_header


def split_batch(batch: bytes) -> tuple[BatchHeader, bytes]:
    header = read_batch_header(batch)
    assert header is not None
    return header, batch[HEADER_SIZE:]


def corrupt_body(body: bytes, data: st.DataObject, *, min_flips: int, max_flips: int, max_tail: int) -> bytes:
    """``body`` with ``min_flips..max_flips`` bytes overwritten, cut at a drawn length, and up to
    ``max_tail`` drawn bytes appended."""
    mutated = bytearray(body)
    for _ in range(data.draw(st.integers(min_value=min_flips, max_value=max_flips))):
        if not mutated:
            break
        i = data.draw(st.integers(min_value=0, max_value=len(mutated) - 1))
        mutated[i] = data.draw(st.integers(min_value=0, max_value=255))
    cut = data.draw(st.integers(min_value=0, max_value=len(mutated)))
    return bytes(mutated[:cut]) + data.draw(st.binary(max_size=max_tail))
