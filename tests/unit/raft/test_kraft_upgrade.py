"""A static quorum (kraft.version 0, ``controller.quorum.voters``) upgraded to dynamic voters
(kraft.version 1), as Kafka 4.1 does it (KAFKA-16538): the leader writes a KRaftVersion record
and a VotersRecord of the static voters with the directory ids their fetches carried."""

from __future__ import annotations

import pytest
from clusters import RaftCluster

from kraft.common.errors import KraftError, NotLeaderError
from kraft.raft import reconfig
from kraft.raft.node import RaftNode
from kraft.raft.types import ReplicaKey
from kraft.raft.voters import KRAFT_VERSION_0, KRAFT_VERSION_1


def leader_with_a_commit(c: RaftCluster) -> RaftNode:
    leader = c.elected_leader()
    last = leader.schedule_append(leader.epoch, [b"before"])
    c.run_until(lambda: all((raft.high_watermark or 0) > last for raft in c.nodes.values()))
    return leader


def test_the_upgrade_writes_the_voters_with_their_directories_and_every_node_follows() -> None:
    c = RaftCluster([1, 2, 3])
    leader = leader_with_a_commit(c)
    assert all(n.kraft_version == KRAFT_VERSION_0 for n in c.nodes.values())
    assert reconfig.upgrade_kraft_version(leader, 1, validate_only=True, now_ms=c.now_ms) is None
    assert leader.kraft_version == KRAFT_VERSION_0  # validation appends nothing
    offset = reconfig.upgrade_kraft_version(leader, 1, validate_only=False, now_ms=c.now_ms)
    assert offset is not None
    c.run_until(lambda: all((n.high_watermark or 0) > offset for n in c.nodes.values()))
    want = {ReplicaKey(n, c.directory_id(n)) for n in (1, 2, 3)}
    for node in c.nodes.values():
        assert node.kraft_version == KRAFT_VERSION_1
        assert set(node.voter_set.keys()) == want
        assert node.voter_history.in_log()
    # Again: nothing to do. Back: refused.
    assert reconfig.upgrade_kraft_version(leader, 1, validate_only=False, now_ms=c.now_ms) is None
    with pytest.raises(KraftError, match="cannot be downgraded"):
        reconfig.upgrade_kraft_version(leader, 0, validate_only=False, now_ms=c.now_ms)
    # The records still count after a restart, over the static voters of the configuration.
    follower = next(n for n in c.nodes if n != leader.node_id)
    c.crash(follower)
    c.restart(follower)
    assert c.nodes[follower].kraft_version == KRAFT_VERSION_1
    assert set(c.nodes[follower].voter_set.keys()) == want
    # Records written after the upgrade still commit, on every node.
    new_leader = c.leader()
    assert new_leader is not None
    last = new_leader.schedule_append(new_leader.epoch, [b"after"])
    c.run_until(lambda: all((n.high_watermark or 0) > last for n in c.nodes.values()))
    assert c.listeners[follower].values()[-1:] == [b"after"]


def test_the_upgrade_waits_for_every_voters_directory_id() -> None:
    c = RaftCluster([1, 2, 3])
    c.crash(3)  # never fetches: the leader has not seen its directory id
    leader = leader_with_a_commit(c)
    with pytest.raises(KraftError, match=r"voters \[3\] are not known yet"):
        reconfig.upgrade_kraft_version(leader, 1, validate_only=False, now_ms=c.now_ms)
    assert leader.kraft_version == KRAFT_VERSION_0
    c.restart(3)
    c.run_until(lambda: (c.nodes[3].high_watermark or 0) > 0)
    assert reconfig.upgrade_kraft_version(leader, 1, validate_only=False, now_ms=c.now_ms) is not None


def test_only_the_leader_upgrades_and_only_to_a_known_level() -> None:
    c = RaftCluster([1, 2, 3])
    leader = leader_with_a_commit(c)
    follower = next(n for n in c.nodes.values() if n is not leader)
    with pytest.raises(NotLeaderError):
        reconfig.upgrade_kraft_version(follower, 1, validate_only=False, now_ms=c.now_ms)
    with pytest.raises(KraftError, match="not supported"):
        reconfig.upgrade_kraft_version(leader, 2, validate_only=False, now_ms=c.now_ms)
