"""kraft test-raft-server's workload (with a fake node) and the write statistics."""

from __future__ import annotations

import io
import json
import time

import pytest

from kraft.cli.test_raft_server import Workload
from kraft.cli.write_stats import Throttler, WriteStats, percentile
from kraft.common.errors import NotLeaderError
from kraft.raft.listener import CommittedBatch
from kraft.raft.types import LeaderAndEpoch


class FakeNode:
    """The node's raft part as the workload uses it (``node.raft.schedule_append``); it is its own
    raft part."""

    def __init__(self) -> None:
        self.next_offset = 10
        self.appends: list[tuple[int, list[bytes]]] = []
        self.leader_epoch: int | None = 3

    @property
    def raft(self) -> FakeNode:
        return self

    def schedule_append(self, epoch: int, records: list[bytes]) -> int:
        if epoch != self.leader_epoch:
            raise NotLeaderError(f"not leader of epoch {epoch}")
        self.appends.append((epoch, records))
        self.next_offset += len(records)
        return self.next_offset - 1


def committed(base: int, last: int, epoch: int = 3, control: bool = False) -> CommittedBatch:
    return CommittedBatch(
        base, last, epoch, 0, () if control else tuple(b"x" for _ in range(last - base + 1)), control
    )


def workload(rate: float = 1000.0, max_in_flight: int = 20_000) -> tuple[Workload, io.StringIO]:
    out = io.StringIO()
    return Workload(7, rate, 16, out, True, 3600.0, max_in_flight), out


def test_appends_only_while_leader_and_at_the_configured_rate() -> None:
    w, _ = workload(rate=1000.0)
    node = FakeNode()
    w.tick(node, 0)
    assert node.appends == []  # not leader yet
    started = time.perf_counter()
    w.handle_leader_change(LeaderAndEpoch(7, 3))
    time.sleep(0.02)
    w.tick(node, 0)
    elapsed_s = time.perf_counter() - started
    appended = sum(len(r) for _, r in node.appends)
    # 1000/s over what really elapsed (at least the 20 ms slept; more on a loaded machine).
    assert 10 <= appended <= 1000 * elapsed_s + 2
    assert all(len(r) == 16 for _, recs in node.appends for r in recs)
    assert node.appends[0][1][0].startswith(b"7:3:1:")


def test_commit_latency_is_recorded_per_record_even_when_batches_split_an_append() -> None:
    w, out = workload()
    node = FakeNode()
    w.handle_leader_change(LeaderAndEpoch(7, 3))
    time.sleep(0.01)
    w.tick(node, 0)
    first = 10
    last = node.next_offset - 1
    assert last > first
    w.handle_commit(committed(0, 5, epoch=2))  # an older epoch's batch: ignored
    w.handle_commit(committed(first, first, control=True))
    w.handle_commit(committed(first, first))  # half of our append
    assert w.stats.committed == 1
    w.handle_commit(committed(first + 1, last))
    assert w.stats.committed == last - first + 1
    assert w.in_flight == 0
    events = [json.loads(line)["type"] for line in out.getvalue().splitlines()]
    assert events == ["claimed", "first_commit"]


def test_losing_leadership_stops_appends_and_forgets_pending() -> None:
    w, out = workload()
    node = FakeNode()
    w.handle_leader_change(LeaderAndEpoch(7, 3))
    time.sleep(0.01)
    w.tick(node, 0)
    w.handle_leader_change(LeaderAndEpoch(2, 4))
    assert w.claimed_epoch is None
    assert w.in_flight == 0
    count = len(node.appends)
    time.sleep(0.01)
    w.tick(node, 0)
    assert len(node.appends) == count
    assert json.loads(out.getvalue().splitlines()[-1])["type"] == "resigned"


def test_not_leader_error_from_the_core_is_counted_not_raised() -> None:
    w, _ = workload()
    node = FakeNode()
    node.leader_epoch = None  # the core already knows it lost the epoch
    w.handle_leader_change(LeaderAndEpoch(7, 3))
    time.sleep(0.01)
    w.tick(node, 0)
    assert w.not_leader_errors == 1


def test_in_flight_cap_skips_instead_of_queueing() -> None:
    w, _ = workload(rate=100_000.0, max_in_flight=50)
    node = FakeNode()
    w.handle_leader_change(LeaderAndEpoch(7, 3))
    time.sleep(0.02)
    w.tick(node, 0)
    assert sum(len(r) for _, r in node.appends) == 50
    assert w.skipped > 0


def test_percentiles_use_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 99.9) == 100.0
    assert percentile([], 50) == 0.0


def test_write_stats_windows_reset_but_totals_accumulate() -> None:
    stats = WriteStats(started_s=0.0)
    for latency in (1.0, 2.0, 3.0):
        stats.record(latency, 100)
    window = stats.take_window(1.0)
    assert (window.records, window.bytes, window.records_per_s) == (3, 300, 3.0)
    stats.record(10.0, 100)
    assert stats.take_window(2.0).records == 1
    total = stats.total(2.0)
    assert (total.records, total.latency_max_ms, total.bytes_per_s) == (4, 10.0, 200.0)


def test_throttler_releases_records_on_schedule() -> None:
    t = Throttler(100.0, now_s=0.0)
    assert t.due(0.0) == 0
    assert t.due(0.105) == 10
    assert t.due(0.105) == 0
    assert t.next_due_s() == pytest.approx(0.11)
    with pytest.raises(ValueError, match="rate must be positive"):
        Throttler(0, 0.0)


def test_rejects_non_positive_arguments() -> None:
    from kraft.cli import test_raft_server

    err = io.StringIO()
    code = test_raft_server.main(
        ["--config", "x", "--throughput", "0", "--record-size", "10"], out=io.StringIO(), err=err
    )
    assert code == 2
    assert "must be positive" in err.getvalue()
