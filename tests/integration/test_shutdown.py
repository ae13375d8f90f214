"""Stopping real processes: the whole cluster at once, and DescribeQuorum forwarded by a follower."""

from __future__ import annotations

import os
import signal
import statistics
import time
from collections.abc import Callable
from typing import Any

import pytest
from local_cluster import LocalCluster, voters_reached

from kraft.client.connection import Connection
from kraft.protocol.messages import describe_quorum

pytestmark = pytest.mark.slow

SHUTDOWN_TIMEOUT_S = 5.0  # kraft_server.DEFAULT_SHUTDOWN_TIMEOUT_MS


def test_sigterm_to_every_node_at_once_stops_the_cluster_well_within_the_shutdown_timeout(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    """``kraft cluster down``: followers stop at once (they know the leader); the resigned leader
    must notice that nobody is left to succeed it instead of waiting out its shutdown timeout."""
    cluster = local_cluster(3)
    cluster.start_all()
    first = cluster.wait_for_leader()
    leader = first.leader_id
    # Every follower fetching: the state `kraft cluster down` usually meets.
    cluster.wait_for("every voter to have fetched", voters_reached(cluster, 0))
    started = time.monotonic()
    for proc in cluster.procs.values():
        os.kill(proc.pid, signal.SIGTERM)
    codes = {i: proc.wait(timeout=SHUTDOWN_TIMEOUT_S + 10) for i, proc in cluster.procs.items()}
    elapsed = time.monotonic() - started
    assert codes == {i: 0 for i in cluster.ids}, cluster.log_tails()
    # Waiting out the leader's shutdown timeout would take over 5 s; a clean stop takes well under
    # 1 s here, and slow machines get the rest of the margin.
    assert elapsed < 4.0, f"stopping the whole cluster took {elapsed:.2f} s\n{cluster.log_tails()}"
    assert "stopped" in cluster.log(leader)


def test_describe_quorum_through_a_follower_does_not_wait_for_its_long_polled_fetch(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    """With the default 500 ms fetch max wait the follower's Fetch is parked at the leader nearly all
    the time; the forwarded DescribeQuorum must not queue behind it."""
    cluster = local_cluster(3)
    cluster.start_all()
    leader = cluster.wait_for_leader().leader_id
    follower = next(i for i in cluster.ids if i != leader)
    # A leader needs only a majority: the follower asked may still be starting, or not know the
    # leader yet (it would answer NOT_LEADER_OR_FOLLOWER). Once it has fetched, it follows.
    cluster.wait_for("every voter to have fetched", voters_reached(cluster, 0))

    topic_cls: Any = describe_quorum.REQUEST.cls.TopicData  # type: ignore[attr-defined]
    request = describe_quorum.REQUEST(
        topics=[
            topic_cls(
                topic_name="__cluster_metadata", partitions=[topic_cls.PartitionData(partition_index=0)]
            )
        ]
    )
    times = []
    with Connection(cluster.address(follower), timeout_s=5.0) as conn:
        version = conn.version_for(describe_quorum.API)
        assert version is not None
        for _ in range(8):
            started = time.monotonic()
            response = conn.send(describe_quorum.API, version, request)
            times.append(time.monotonic() - started)
            partition = response.topics[0].partitions[0]
            assert (response.error_code, partition.error_code, partition.leader_id) == (0, 0, leader)
    # The first one also opens the follower's connection to the leader.
    assert statistics.median(times[1:]) < 0.25, f"forwarded DescribeQuorum round trips (s): {times}"
