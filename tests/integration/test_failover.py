"""Failover with real processes: kill -9 of the leader, and a leader frozen by SIGSTOP."""

from __future__ import annotations

import re
import signal
from collections.abc import Callable

import pytest
from local_cluster import LocalCluster, hw_at_least, voters_reached

from kraft.client.quorum_info import QuorumInfo

pytestmark = pytest.mark.slow

APPEND = ["--throughput", "200", "--record-size", "64", "--report-interval-s", "1"]


def test_kill_9_of_the_leader_elects_a_new_one_and_loses_nothing_committed(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3)
    cluster.start_all(tool_args=APPEND)
    first = cluster.wait_for_leader()
    committed = cluster.wait_for("200 committed offsets", hw_at_least(cluster, 200)).high_watermark
    old = first.leader_id
    survivors = [i for i in cluster.ids if i != old]
    # The high watermark needs only a majority: survivors[0] may still lack the last batches
    # below it (or not have fetched at all), so wait until it holds the committed prefix.
    cluster.wait_for(
        f"node {survivors[0]} to hold the committed prefix",
        voters_reached(cluster, committed, [survivors[0]]),
    )
    before = cluster.records(survivors[0], committed)

    cluster.kill(old)  # SIGKILL: no resignation, no flush
    second = cluster.wait_for_leader(among=survivors, min_epoch=first.leader_epoch + 1)
    assert second.leader_id != old
    # The new leader keeps committing past what the old one had committed.
    cluster.wait_for("progress under the new leader", hw_at_least(cluster, committed + 100, survivors))

    cluster.start(old, tool_args=APPEND)
    info = cluster.wait_for(
        "the old leader to catch up", voters_reached(cluster, committed + 100, ask=survivors)
    )
    cluster.stop_all()
    # Nothing committed before the kill was lost or changed, on any node.
    for node_id in cluster.ids:
        assert cluster.records(node_id, committed) == before, f"node {node_id} diverged below {committed}"
    assert info.leader_epoch >= second.leader_epoch


def test_a_frozen_leader_is_replaced_and_steps_down_after_it_resumes(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    first = cluster.wait_for_leader()
    old = first.leader_id
    survivors = [i for i in cluster.ids if i != old]

    cluster.pause(old)  # SIGSTOP: sockets stay open, the process just stops answering
    try:
        second = cluster.wait_for_leader(among=survivors, min_epoch=first.leader_epoch + 1, ask=survivors)
        log_before_resume = len(cluster.log(old))
    finally:
        cluster.resume(old)

    # After SIGCONT the old leader learns the new epoch and follows; the quorum keeps the new
    # leader and the old one catches up.
    def old_leader_follows() -> QuorumInfo | None:
        info = cluster.describe(survivors)
        voter = next(v for v in info.voters if v.replica_id == old)
        caught_up = voter.log_end_offset >= info.high_watermark > 0
        return info if info.leader_id != old and caught_up else None

    info = cluster.wait_for("the old leader to follow the new one", old_leader_follows)
    assert info.leader_epoch >= second.leader_epoch
    # Asked directly, the old leader names the new leader (it forwards to it).
    direct = cluster.describe([old])
    assert direct.leader_id != old
    assert direct.leader_epoch >= second.leader_epoch
    assert cluster.is_running(old)
    # Its log shows it leaving leadership after the pause, and never leading again.
    resumed_log = cluster.log(old)[log_before_resume:]
    assert re.search(r"leader -> (resigned|follower|unattached|prospective)", resumed_log), (
        cluster.log_tails()
    )
    assert "-> leader" not in resumed_log, resumed_log


def test_graceful_stop_of_the_leader_hands_over_quickly(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    first = cluster.wait_for_leader()
    survivors = [i for i in cluster.ids if i != first.leader_id]
    cluster.kill(first.leader_id, signal.SIGTERM)
    assert cluster.procs[first.leader_id].returncode == 0, cluster.log(first.leader_id)
    second = cluster.wait_for_leader(among=survivors, min_epoch=first.leader_epoch + 1, timeout_s=10)
    assert second.leader_id in survivors
