"""The opt-in decoded-batch memo returns exactly what decoding returns, and stays bounded."""

from __future__ import annotations

import pytest

from kraft.common.errors import CorruptRecordError
from kraft.raft.listener import CommittedBatch, CommittedBatchCache
from kraft.records.batch import SimpleRecord, build_batch, decode_batch


def _raw(base_offset: int, *values: bytes, epoch: int = 1) -> bytes:
    return bytes(
        build_batch(
            [SimpleRecord(value=v) for v in values], base_offset=base_offset, partition_leader_epoch=epoch
        )
    )


def test_a_cached_batch_equals_a_fresh_decode_and_is_decoded_once() -> None:
    cache = CommittedBatchCache()
    raw = _raw(10, b"a", b"b")
    first = cache.decode(raw)
    assert first == CommittedBatch.from_batch(decode_batch(raw))
    assert cache.decode(bytes(bytearray(raw))) is first  # equal bytes from another log: a hit
    assert (cache.hits, cache.misses) == (1, 1)
    # Same records at another offset or epoch are another batch.
    assert cache.decode(_raw(12, b"a", b"b")).base_offset == 12
    assert cache.decode(_raw(10, b"a", b"b", epoch=2)).epoch == 2
    assert cache.misses == 3


def test_the_cache_is_bounded_and_skips_large_batches() -> None:
    cache = CommittedBatchCache(max_entries=2, max_batch_bytes=200)
    a, b, c = _raw(0, b"a"), _raw(1, b"b"), _raw(2, b"c")
    for raw in (a, b, c):
        cache.decode(raw)
    cache.decode(a)  # evicted (oldest): decoded again
    assert cache.misses == 4
    big = _raw(3, b"x" * 500)
    cache.decode(big)
    cache.decode(big)
    assert cache.misses == 6 and cache.hits == 0


def test_a_corrupt_batch_raises_and_is_not_cached() -> None:
    cache = CommittedBatchCache()
    raw = bytearray(_raw(0, b"a"))
    raw[-1] ^= 0xFF
    for _ in range(2):
        with pytest.raises(CorruptRecordError):
            cache.decode(bytes(raw))
    assert cache.misses == 2
