"""``QuorumTail`` against real voters: the observer delivers the committed log record for record as
the nodes' files hold it, and carries on through a leader killed with -9 mid-way."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from local_cluster import LocalCluster

from kraft.client.quorum_tail import LogChunk, QuorumTail
from kraft.records.batch import iter_batches

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


def _log_chunks(chunks: list[object]) -> list[LogChunk]:
    assert all(isinstance(c, LogChunk) for c in chunks), chunks  # no snapshot in this log
    return [c for c in chunks if isinstance(c, LogChunk)]


def test_tails_the_committed_log_through_a_leader_kill_9(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3)
    cluster.start_all(tool_args=APPEND)
    before = cluster.wait_for_leader()
    bootstrap = ",".join(str(a) for a in cluster.bootstrap())
    with QuorumTail(bootstrap, timeout_s=20, max_fetch_bytes=4096) as tail:
        assert tail.wait_for_leader() >= 0
        first = tail.wait_for(1000)
        assert tail.leader.leader_id == before.leader_id
        # Never above what the leader has committed.
        assert first <= tail.leader_high_watermark <= cluster.describe().high_watermark
        chunks = _log_chunks(tail.read(0, first))
        cluster.kill(before.leader_id)
        survivors = [i for i in cluster.ids if i != before.leader_id]
        after = cluster.wait_for_leader(among=survivors, min_epoch=before.leader_epoch + 1)
        # Then on, with the new leader, past records of its own epoch.
        # (A new leader reports no high watermark, -1, until a majority has fetched from it.)
        known = cluster.wait_for(
            "the new leader's high watermark",
            lambda: h if (h := cluster.describe(survivors).high_watermark) >= first else None,
        )
        target = known + 200
        tail.wait_for(target)
        assert tail.leader == type(tail.leader)(after.leader_id, after.leader_epoch)
        tail.release(first)
        chunks += _log_chunks(tail.read(first, target))
        # What the consumer released is gone; what it kept is not.
        assert tail.buffer.floor == first
        assert tail.snapshots_loaded == 0
    offsets = [r.offset for c in chunks for _, r in c.iter_records()]
    assert offsets == list(range(target))
    cluster.stop_all()
    records = _data_records(chunks)
    assert {epoch for _, epoch, _ in records} >= {before.leader_epoch, after.leader_epoch}
    assert records == cluster.records(after.leader_id, target)
