"""A real third-party client against real processes: kafka-python 3.0.12's admin client and its
command line describe our quorum exactly as the leader sees it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from local_cluster import STEADY_LEADER, LocalCluster

from kraft.cli import cluster_processes as processes
from kraft.client.quorum_info import QuorumInfo

kafka_admin = pytest.importorskip("kafka.admin")
kafka_errors = pytest.importorskip("kafka.errors")

pytestmark = pytest.mark.slow


def describe_with_kafka_python(
    cluster: LocalCluster, node_id: int, timeout_ms: int = 10_000
) -> dict[str, Any]:
    address = cluster.address(node_id)
    admin = kafka_admin.KafkaAdminClient(
        bootstrap_servers=f"{address.host}:{address.port}",
        request_timeout_ms=timeout_ms,
    )
    try:
        result: dict[str, Any] = admin.describe_metadata_quorum()
        return result
    finally:
        admin.close()


def the_partition(result: dict[str, Any]) -> dict[str, Any]:
    (topic,) = result["topics"]
    assert topic["topic_name"] == "__cluster_metadata"
    (partition,) = topic["partitions"]
    partition_data: dict[str, Any] = partition
    return partition_data


def everyone_fetched(cluster: LocalCluster) -> Callable[[], QuorumInfo | None]:
    """A high watermark past 0 (or an elected leader) needs only a majority: the third voter may
    still be starting, not knowing the leader (its last fetch is then Kafka's -1). This waits until
    every voter has fetched and caught up."""

    def probe() -> QuorumInfo | None:
        info = cluster.describe()
        fetched = all(
            v.last_fetch_timestamp_ms is not None and v.last_caught_up_timestamp_ms is not None
            for v in info.voters
        )
        return info if info.high_watermark > 0 and fetched else None

    return probe


def test_describe_metadata_quorum_from_leader_and_follower(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3, overrides=STEADY_LEADER)
    cluster.start_all()
    ours = cluster.wait_for_leader()
    cluster.wait_for("every voter to fetch the committed epoch start", everyone_fetched(cluster))
    follower = next(i for i in cluster.ids if i != ours.leader_id)
    for asked in (ours.leader_id, follower):
        started_ms = time.time() * 1000
        partition = the_partition(describe_with_kafka_python(cluster, asked))
        # What our own tool reads from the leader, fetched right after.
        again = cluster.describe()
        assert partition["error"] is None
        assert partition["leader_id"] == ours.leader_id == again.leader_id
        assert partition["leader_epoch"] == ours.leader_epoch == again.leader_epoch
        assert 0 < partition["high_watermark"] <= again.high_watermark
        voters = {v["replica_id"]: v for v in partition["current_voters"]}
        assert sorted(voters) == cluster.ids
        for voter in voters.values():
            assert (
                voter["log_end_offset"] >= partition["high_watermark"]
                or voter["replica_id"] != ours.leader_id
            )
            # KIP-836 times are real wall-clock instants from the last seconds.
            assert started_ms - 30_000 < voter["last_fetch_timestamp"] <= time.time() * 1000 + 1_000
            assert voter["last_caught_up_timestamp"] > 0
        assert voters[ours.leader_id]["log_end_offset"] >= partition["high_watermark"]
        assert partition["observers"] == []


def test_kafka_python_command_line_describe_quorum(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    ours = cluster.wait_for_leader()
    # The follower asked (and any voter kafka-python then picks) must know the leader already.
    cluster.wait_for("every voter to follow the leader", everyone_fetched(cluster))
    follower = next(i for i in cluster.ids if i != ours.leader_id)
    address = cluster.address(follower)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafka.admin",
            "-b",
            f"{address.host}:{address.port}",
            "cluster",
            "describe-quorum",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=processes.child_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = ast.literal_eval(done.stdout.strip())
    partition = the_partition(printed)
    assert partition["leader_id"] == ours.leader_id
    assert partition["leader_epoch"] == ours.leader_epoch
    assert sorted(v["replica_id"] for v in partition["current_voters"]) == cluster.ids


def test_during_an_election_answers_are_retriable_errors_never_a_wrong_leader(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    first = cluster.wait_for_leader()
    old = first.leader_id
    survivors = [i for i in cluster.ids if i != old]
    cluster.kill(old)
    errors: list[str] = []
    answers: list[tuple[int, int]] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            partition = the_partition(describe_with_kafka_python(cluster, survivors[0], timeout_ms=2_000))
        except kafka_errors.KafkaError as e:
            assert e.retriable or isinstance(e, kafka_errors.KafkaTimeoutError), f"non-retriable: {e!r}"
            errors.append(type(e).__name__)
            continue
        if partition["error"] is not None:
            # A partition-level error (kafka-python returns it instead of raising): retriable.
            # It reports it as text, "[Error 6] NotLeaderForPartitionError: ...".
            match = re.match(r"\[Error (-?\d+)\]", str(partition["error"]))
            assert match, partition
            error_class = kafka_errors.for_code(int(match.group(1)))
            assert error_class.retriable, f"non-retriable partition error: {partition}"
            # (Its LeaderId is only a hint: until their fetch timeout expires, followers still
            # name the dead leader. Only successful answers must name a live one.)
            errors.append(error_class.__name__)
            continue
        # Never the dead leader, never a stale epoch.
        assert partition["leader_id"] != old, partition
        assert partition["leader_epoch"] > first.leader_epoch, partition
        answers.append((partition["leader_id"], partition["leader_epoch"]))
        if len(answers) >= 2:
            break
    assert answers, f"no answer within 20 s; errors seen: {errors}"
    assert all(leader in survivors for leader, _ in answers)
