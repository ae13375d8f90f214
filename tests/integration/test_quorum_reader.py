"""``QuorumReader`` against real voters: it reads the committed log record for record as the
nodes' files hold it, and a read carries on through a leader killed with -9 mid-way."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import LocalCluster

from kraft.records.batch import iter_batches
from kraft.tools.quorum_reader import LogChunk, QuorumReader

pytestmark = pytest.mark.slow

APPEND = ["--throughput", "500", "--record-size", "64", "--report-interval-s", "5"]


def _data_records(chunks: list[LogChunk]) -> list[tuple[int, int, bytes]]:
    """(offset, epoch, value) of the data records, as ``LocalCluster.records`` reads the files."""
    out = []
    for chunk in chunks:
        for batch in iter_batches(chunk.records):
            if not batch.is_control:
                out += [
                    (r.offset, batch.partition_leader_epoch, r.value or b"")
                    for r in batch.records
                    if chunk.start <= r.offset < chunk.end
                ]
    return out


def test_reads_the_committed_log_through_a_leader_kill_9(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3)
    cluster.start_all(tool_args=APPEND)
    before = cluster.wait_for_leader()
    bootstrap = ",".join(str(a) for a in cluster.bootstrap())
    with QuorumReader(bootstrap, timeout_s=20, max_fetch_bytes=4096) as reader:
        first = cluster.wait_for(
            "1000 committed offsets",
            lambda: h if (h := reader.high_watermark().high_watermark) >= 1000 else None,
        )
        assert first <= cluster.describe().high_watermark
        chunks: list[LogChunk] = []
        # Read up to the first high watermark a chunk at a time, killing the leader half-way.
        for chunk in reader.read(0, first):
            assert isinstance(chunk, LogChunk)
            chunks.append(chunk)
            if len(chunks) == 3:
                cluster.kill(before.leader_id)
        survivors = [i for i in cluster.ids if i != before.leader_id]
        after = cluster.wait_for_leader(among=survivors, min_epoch=before.leader_epoch + 1)
        # Then on, with the new leader, past records of its own epoch.
        target = cluster.describe(survivors).high_watermark + 200
        cluster.wait_for(
            "the new leader to commit", lambda: reader.high_watermark().high_watermark >= target or None
        )
        for chunk in reader.read(first, target):
            assert isinstance(chunk, LogChunk)
            chunks.append(chunk)
        assert reader.leader_id == after.leader_id
    offsets = [r.offset for c in chunks for _, r in c.iter_records()]
    assert offsets == list(range(target))
    assert {c.leader_id for c in chunks[:3]} == {before.leader_id}
    assert {c.leader_id for c in chunks[3:]} == {after.leader_id}
    cluster.stop_all()
    assert _data_records(chunks) == cluster.records(after.leader_id, target)
