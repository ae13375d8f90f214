"""Real controller processes on loopback: election, replication, recovery and hostile input."""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable

import pytest
from local_cluster import STEADY_LEADER, LocalCluster, hw_at_least, voters_reached

from kraft.client.quorum_info import QuorumInfo

pytestmark = pytest.mark.slow

APPEND = ["--throughput", "200", "--record-size", "64", "--report-interval-s", "1"]


def test_leader_is_elected_and_high_watermark_advances(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    info = cluster.wait_for_leader()
    assert info.leader_epoch >= 1
    assert sorted(v.replica_id for v in info.voters) == [1, 2, 3]
    # The new leader's LeaderChange record commits: HW > 0 and every voter reaches it.
    info = cluster.wait_for("the epoch-start record to commit everywhere", _all_caught_up(cluster))
    assert info.high_watermark >= 1
    # Every node, asked directly, reports the same leader (followers forward DescribeQuorum).
    for node_id in cluster.ids:
        assert cluster.describe([node_id]).leader_id == info.leader_id


def _all_caught_up(cluster: LocalCluster) -> Callable[[], QuorumInfo | None]:
    def probe() -> QuorumInfo | None:
        info = cluster.describe()
        if info.high_watermark > 0 and all(v.log_end_offset >= info.high_watermark for v in info.voters):
            return info
        return None

    return probe


@pytest.mark.parametrize("driver", ["loop", "thread"])
def test_appended_records_are_identical_on_every_node(
    local_cluster: Callable[..., LocalCluster], driver: str
) -> None:
    # raft.driver: the core on the event loop (the default) or on its own thread.
    cluster = local_cluster(3, {"raft.driver": driver})
    cluster.start_all(tool_args=APPEND)
    cluster.wait_for_leader()
    info = cluster.wait_for("300 committed offsets", hw_at_least(cluster, 300))
    hw = info.high_watermark
    cluster.wait_for("every voter to hold the committed prefix", voters_reached(cluster, hw))
    cluster.stop_all()
    logs = {i: cluster.records(i, hw) for i in cluster.ids}
    assert len(logs[1]) >= 250  # control records take a few offsets; the rest are ours
    assert logs[1] == logs[2] == logs[3]
    offsets = [o for o, _, _ in logs[1]]
    assert offsets == sorted(set(offsets))


def test_restart_after_a_torn_segment_tail_recovers(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3)
    cluster.start_all(tool_args=APPEND)
    leader = cluster.wait_for_leader().leader_id
    cluster.wait_for("100 committed offsets", hw_at_least(cluster, 100))
    victim = next(i for i in cluster.ids if i != leader)
    # 100 committed offsets need only a majority: the victim may not have fetched anything yet
    # (an empty segment has no last batch to tear).
    cluster.wait_for(f"node {victim} to hold 100 offsets", voters_reached(cluster, 100, [victim]))
    cluster.kill(victim)
    segment = cluster.segment_files(victim)[-1]
    data = segment.read_bytes()
    # Cut the last batch in half: a crash mid-write.
    last_batch_start = _last_batch_position(data)
    cut = last_batch_start + max(1, (len(data) - last_batch_start) // 2)
    segment.write_bytes(data[:cut])
    kept = cluster.records(victim, 1 << 62)
    cluster.start(victim, tool_args=APPEND)
    # The node truncates the torn batch, rejoins and catches up past where it was.
    target = cluster.describe().high_watermark + 50
    info = cluster.wait_for("the restarted node to catch up", voters_reached(cluster, target, [victim]))
    assert cluster.is_running(victim)
    cluster.stop_all()
    after = cluster.records(victim, info.high_watermark)
    assert after[: len(kept)] == kept
    log = cluster.log(victim)
    assert "torn tail" in log  # recovery said what it cut
    assert "CRITICAL" not in log


def _last_batch_position(data: bytes) -> int:
    pos = last = 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        if pos + 12 + length > len(data):
            break
        last = pos
        pos += 12 + length
    return last


def test_node_with_a_wrong_cluster_id_is_refused(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3)
    cluster.format(3, cluster_id="AAAAAAAAAAAAAAAAAAAAAg")  # a different cluster
    cluster.start(1)
    cluster.start(2)
    cluster.start(3)
    info = cluster.wait_for_leader(among=[1, 2], ask=[1, 2])
    cluster.wait_for("the two good nodes to commit", _hw_positive(cluster, [1, 2]))
    # Node 3 never joins: it is not granted votes or fetches, and it says why.
    cluster.wait_for(
        "node 3 to log the cluster id mismatch",
        lambda: (
            True
            if "INCONSISTENT_CLUSTER_ID" in cluster.log(3) or "cluster id" in cluster.log(3).lower()
            else None
        ),
    )
    info = cluster.describe([1, 2])
    voter3 = next(v for v in info.voters if v.replica_id == 3)
    assert voter3.log_end_offset <= 0
    assert info.leader_id in (1, 2)


def _hw_positive(cluster: LocalCluster, ask: list[int]) -> Callable[[], QuorumInfo | None]:
    def probe() -> QuorumInfo | None:
        info = cluster.describe(ask)
        return info if info.high_watermark > 0 else None

    return probe


def test_garbage_and_oversize_frames_leave_the_quorum_serving(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3, overrides={"socket.request.max.bytes": "1048576", **STEADY_LEADER})
    cluster.start_all()
    info = cluster.wait_for_leader()
    target = cluster.address(info.leader_id)
    payloads = [
        b"\x00\x00\x00\x10" + b"\xff" * 16,  # a frame whose header is nonsense
        struct.pack(">i", 1 << 30),  # a size far above socket.request.max.bytes
        struct.pack(">i", -5),  # a negative size
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",  # the wrong protocol altogether
        struct.pack(">ihhi", 10, 55, 99, 1) + b"\x00\x00",  # DescribeQuorum v99
    ]
    for payload in payloads:
        with socket.create_connection((target.host, target.port), timeout=5) as s:
            s.sendall(payload)
            s.settimeout(5)
            try:
                while s.recv(65536):
                    pass  # the server answers or closes; either way it must not hang or die
            except (TimeoutError, ConnectionResetError):
                pass
    for node_id in cluster.ids:
        assert cluster.is_running(node_id), cluster.log_tails()
    after = cluster.describe()
    assert after.leader_id == info.leader_id
    assert after.leader_epoch == info.leader_epoch
