"""SimLog and SimStore bind their read calls straight to what they wrap: replacing it rebinds them."""

from __future__ import annotations

import random

from kraft.raft.log import MemoryLog
from kraft.raft.store import ElectionState, MemoryElectionStore
from kraft.records.batch import SimpleRecord, build_batch
from kraft.sim.disk import Disk, SimLog, SimStore


def test_reads_follow_the_wrapped_log_after_it_is_replaced() -> None:
    disk = Disk(random.Random(1))
    log = SimLog(MemoryLog(), disk)
    log.append_as_leader(bytes(build_batch([SimpleRecord(value=b"a"), SimpleRecord(value=b"b")])), 1)
    assert log.end_offset() == 2 and log.last_fetched_epoch() == 1
    assert log.read(0, 1 << 20) == log.inner.read(0, 1 << 20) != b""
    log.inner = MemoryLog()  # a wiped disk
    assert log.end_offset() == 0 and log.last_fetched_epoch() == 0 and log.read(0, 100) == b""
    assert log.batches_from(0) == []
    log.flush()
    assert disk.fsyncs == 1  # writes still go through the wrapper and are billed


def test_store_reads_follow_the_wrapped_store_after_it_is_replaced() -> None:
    disk = Disk(random.Random(1))
    store = SimStore(MemoryElectionStore(), disk)
    store.write(ElectionState(epoch=3))
    assert store.read() == ElectionState(epoch=3) and disk.fsyncs == 1
    store.inner = MemoryElectionStore()
    assert store.read() is None


def test_batches_from_are_the_batches_an_unbounded_read_concatenates() -> None:
    log = SimLog(MemoryLog(), Disk(random.Random(1)))
    for values in ([b"a", b"b"], [b"c"], [b"d", b"e", b"f"]):
        log.append_as_leader(bytes(build_batch([SimpleRecord(value=v) for v in values])), 1)
    for offset in range(log.end_offset() + 1):
        batches = log.batches_from(offset)
        assert b"".join(batches) == log.read(offset, 1 << 40)
        assert len(batches) == {0: 3, 1: 3, 2: 2, 3: 1, 4: 1, 5: 1, 6: 0}[offset]
