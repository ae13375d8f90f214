"""Unclean recovery in the quorum controller, driven through heartbeats (through the wire codec).

Each test brings one partition (replicas 1, 2, 3; min ISR 2) to KIP-966's dead end: both followers
left the ISR into the ELR and restarted uncleanly (out of the ELR), then the leader was fenced and
restarted uncleanly too (out of the ELR, and forgotten as last known leader). ISR, ELR and
LastKnownElr are empty and the partition is leaderless; the brokers then report their logs.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from clusters import ControllerCluster

from kraft.controller.quorum_controller import ControllerConfig
from kraft.metadata.partition import LeaderRecoveryState, PartitionRegistration
from kraft.metadata.replica_log_info import ReplicaLogInfo


@dataclass
class DeadEnd:
    cluster: ControllerCluster
    topic_id: uuid.UUID
    epochs: dict[int, int]  # broker id -> current broker epoch
    leader_epoch: int  # the leaderless partition's

    def partition(self) -> PartitionRegistration:
        p = self.cluster.image().partition(self.topic_id, 0)
        assert p is not None
        return p

    def report(self, broker: int, log_end: int, *, last_epoch: int = 0) -> None:
        info = ReplicaLogInfo(
            topic_id=self.topic_id,
            partition=0,
            partition_epoch=self.partition().partition_epoch,
            last_epoch=last_epoch,
            log_end_offset=log_end,
        )
        answer = self.cluster.heartbeat(broker, self.epochs[broker], replica_log_info=[info])
        assert answer.error_code == 0


def dead_end(config: ControllerConfig | None = None) -> DeadEnd:
    c = ControllerCluster(
        1, config=config or ControllerConfig(max_idle_interval_ms=0, verify_leader_replay=True)
    )
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 1, 3, configs={"min.insync.replicas": "2"})
    t = c.image().topics_by_name["t"]
    p = t.partitions[0]
    leader = p.leader
    followers = [b for b in p.replicas if b != leader]
    r = c.alter_partition(
        leader,
        epochs[leader],
        t.id,
        0,
        [leader],
        leader_epoch=p.leader_epoch,
        partition_epoch=p.partition_epoch,
    )
    assert r.topics[0].partitions[0].error_code == 0
    for b in followers:  # they stop (fenced: still ELR), then restart uncleanly: out of the ELR
        assert c.heartbeat(b, epochs[b], want_fence=True).is_fenced
        epochs[b] = c.register(b, incarnation=uuid.UUID(int=500 + b), previous_epoch=-1).broker_epoch
        assert not c.heartbeat(b, epochs[b]).is_fenced
    assert c.heartbeat(leader, epochs[leader], want_fence=True).is_fenced
    epochs[leader] = c.register(leader, incarnation=uuid.UUID(int=600), previous_epoch=-1).broker_epoch
    end = DeadEnd(c, t.id, epochs, leader_epoch=0)
    p = end.partition()
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (-1, (), (), ())
    end.leader_epoch = p.leader_epoch
    return end


def test_balanced_waits_for_every_replica_then_elects_the_longest_log() -> None:
    d = dead_end()
    first, second, third = d.partition().replicas  # the longest log is the last replica's
    d.report(third, 300)
    d.report(second, 120)
    assert d.partition().leader == -1  # one replica has not reported: its log may be the longest
    d.report(first, 90)
    p = d.partition()
    assert p.leader == third
    assert p.isr == (third,) and p.elr == () and p.last_known_elr == ()
    assert p.leader_recovery_state == LeaderRecoveryState.RECOVERING
    assert p.leader_epoch == d.leader_epoch + 1
    metrics = d.cluster.wait_active().metrics
    assert metrics.unclean_recovery_elections == 1
    assert metrics.unclean_elections == 1


def test_a_later_leader_epoch_wins_over_a_longer_log() -> None:
    d = dead_end()
    first, second, third = d.partition().replicas
    d.report(first, 300, last_epoch=0)
    d.report(second, 120, last_epoch=1)
    d.report(third, 90, last_epoch=0)
    assert d.partition().leader == second


def test_after_the_timeout_balanced_elects_from_the_reports_it_has() -> None:
    config = ControllerConfig(
        max_idle_interval_ms=0, verify_leader_replay=True, unclean_recovery_timeout_ms=2_000
    )
    d = dead_end(config)
    _, second, third = d.partition().replicas  # the first never reports
    d.report(second, 120)
    d.report(third, 300)
    d.cluster.run_for(1_500)
    assert d.partition().leader == -1
    d.cluster.run_for(1_000)  # 2 s after the first report: the controller's timer fires
    assert d.partition().leader == third


def test_with_the_manager_disabled_the_partition_waits_for_an_operator() -> None:
    config = ControllerConfig(
        max_idle_interval_ms=0, verify_leader_replay=True, unclean_recovery_manager_enabled=False
    )
    d = dead_end(config)
    for broker, end in ((1, 90), (2, 300), (3, 120)):
        d.report(broker, end)
    d.cluster.run_for(1_000)
    assert d.partition().leader == -1
    assert d.cluster.wait_active().metrics.unclean_recovery_elections == 0


def test_a_report_for_an_old_partition_epoch_does_not_count() -> None:
    d = dead_end()
    first, second, third = d.partition().replicas
    stale = d.partition().partition_epoch - 1
    info = ReplicaLogInfo(
        topic_id=d.topic_id, partition=0, partition_epoch=stale, last_epoch=0, log_end_offset=999
    )
    d.cluster.heartbeat(first, d.epochs[first], replica_log_info=[info])
    d.report(second, 120)
    d.report(third, 300)
    assert d.partition().leader == -1  # the first replica's stale report is as good as none
    d.report(first, 90)
    assert d.partition().leader == third
